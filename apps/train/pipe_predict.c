/* pipe_predict.c - the formulas of the stale pipeline's mitigations
 * (pipe_stale.c says when they apply), alone so that tests/pipe_unit.c
 * checks them against a serial reference:
 *
 *   weight prediction (DANA, Hakimi et al. 2019; msnag), D updates ahead
 *   with every future gradient taken as 0, lr_k the learning rate the
 *   schedule gives the k-th update ahead (wp_horizon: under a warm-up or
 *   a cosine it changes over the horizon):
 *     SGD (momentum mu, PyTorch's v = mu v + g, w -= lr v):
 *       w^ = w - sum_{k=1..D} lr_k mu^k v
 *     Adam: m_k = beta1 m_{k-1} + (1 - beta1) g_k with g_k = wd w_{k-1}
 *       (L2 decay; 0 for AdamW, which decays w_k *= 1 - lr_k wd instead),
 *       w_k = w_{k-1} - lr_k / (1 - beta1^(t+k)) m_k / (sqrt(v) /
 *       sqrt(1 - beta2^(t+k)) + eps), the second moment v held
 *   aggmsnag: the same, but the first of the D steps also takes the
 *     gradient summed so far towards the next update (--step-every):
 *     SGD: w^ = w - (mu v + g) sum_{k=1..D} lr_k mu^(k-1)
 *   gap-aware (Barkai et al., ICLR 2020): g /= 1 + |w - w_ref| / C, C the
 *     running root mean square of each parameter's step
 *     (C^2 = decay C^2 + (1 - decay) (w_new - w_old)^2) plus 1e-8.
 */
#include "config.h"
#include <math.h>
#include "pipe.h"

#define GA_EPS 1e-8f

void wp_horizon(const train_opts_t *o, int64_t done, int64_t per_step, int64_t total, int D, double *lr)
{
    /* update u (0-based) belongs to loop step u / per_step, whose rate
     * every update of that step takes */
    for (int k = 0; k < D; k++) lr[k] = sched_lr(o, (done + k) / per_step, total);
}

void wp_predict_sgd(size_t n, float *out, const float *w, const float *v, const float *gacc, const double *lr,
                    double mu, int D)
{
    /* msnag: D steps of velocity mu^k v; aggmsnag: the first velocity is
     * mu v + g (the summed gradient), then mu^(k-1) of it */
    double from1 = 0, from0 = 0, pk = 1;
    for (int k = 1; k <= D; k++) from0 += lr[k - 1] * pk, from1 += lr[k - 1] * (pk *= mu);
    for (size_t i = 0; i < n; i++)
        out[i] = (float)(gacc ? w[i] - from0 * (mu * v[i] + gacc[i]) : w[i] - from1 * v[i]);
}

void wp_predict_adam(size_t n, float *out, const float *w, const float *m, const float *v, const float *gacc,
                     const wp_adam_t *h, int D)
{
    /* the bias corrections of the D steps ahead, once for all elements */
    enum { MOST = 64 };
    double step[MOST], bc2[MOST];
    D = D < MOST ? D : MOST;
    for (int k = 1; k <= D; k++) {
        step[k - 1] = h->lr[k - 1] / (1 - pow(h->beta1, (double)(h->t + k)));
        bc2[k - 1] = sqrt(1 - pow(h->beta2, (double)(h->t + k)));
    }
    for (size_t i = 0; i < n; i++) {
        double wi = w[i], mi = m[i], sv = sqrt(v[i]);
        for (int k = 1; k <= D; k++) {
            /* future gradients 0: m decays; the summed one (aggmsnag) and
             * L2 decay enter as in Adam's step */
            double g = (k == 1 && gacc ? gacc[i] : 0) + (h->decoupled ? 0 : h->wd * wi);
            mi = h->beta1 * mi + (1 - h->beta1) * g;
            if (h->decoupled) wi *= 1 - h->lr[k - 1] * h->wd;
            wi -= step[k - 1] * mi / (sv / bc2[k - 1] + h->eps);
        }
        out[i] = (float)wi;
    }
}

/* the optimisers' rows (optim.c) */
void wp_predict_sgd_row(const optim_t *o, const wp_args_t *a)
{
    wp_predict_sgd(a->n, a->out, a->w, a->state[0], a->gacc, a->lr, o->momentum, a->D);
}

static void adam_row(const optim_t *o, const wp_args_t *a, int decoupled)
{
    wp_adam_t h = {a->lr, o->beta1, o->beta2, o->eps, o->wd, decoupled, a->t};
    wp_predict_adam(a->n, a->out, a->w, a->state[0], a->state[1], a->gacc, &h, a->D);
}

void wp_predict_adam_row(const optim_t *o, const wp_args_t *a)
{
    adam_row(o, a, 0);
}

void wp_predict_adamw_row(const optim_t *o, const wp_args_t *a)
{
    adam_row(o, a, 1);
}

void ga_penalise(size_t n, float *g, const float *w, const float *ref, const float *avg_sq)
{
    for (size_t i = 0; i < n; i++) {
        float c = sqrtf(avg_sq[i]) + GA_EPS;
        g[i] = g[i] / (1.0f + fabsf(w[i] - ref[i]) / c);
    }
}

void ga_track(size_t n, float *avg_sq, const float *w_new, const float *w_old, double decay)
{
    for (size_t i = 0; i < n; i++) {
        float d = w_new[i] - w_old[i];
        avg_sq[i] = (float)(decay * avg_sq[i] + (1 - decay) * (double)d * d);
    }
}

