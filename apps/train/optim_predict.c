/* optim_predict.c - each optimiser's weight prediction (its row's
 * predict, optim.c), the formulas of the stale pipeline's
 * --weight-prediction (pipe_stale.c says when they apply; pipe_predict.c
 * gives the horizon's learning rates), alone so that tests/pipe_unit.c
 * checks them against a serial reference:
 *
 *   weight prediction (DANA, Hakimi et al. 2019; msnag), D updates ahead
 *   with every future gradient taken as 0, lr_k the learning rate the
 *   schedule gives the k-th update ahead:
 *     SGD (momentum mu, PyTorch's v = mu v + g, w -= lr v):
 *       w^ = w - sum_{k=1..D} lr_k mu^k v
 *     Adam: m_k = beta1 m_{k-1} + (1 - beta1) g_k with g_k = wd w_{k-1}
 *       (L2 decay; 0 for AdamW, which decays w_k *= 1 - lr_k wd instead),
 *       w_k = w_{k-1} - lr_k / (1 - beta1^(t+k)) m_k / (sqrt(v) /
 *       sqrt(1 - beta2^(t+k)) + eps), the second moment v held
 *   aggmsnag: the same, but the first of the D steps also takes the
 *     gradient summed so far towards the next update (--step-every):
 *     SGD: w^ = w - (mu v + g) sum_{k=1..D} lr_k mu^(k-1)
 */
#include "config.h"
#include <math.h>
#include "train.h"

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
