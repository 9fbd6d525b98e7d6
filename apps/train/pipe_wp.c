/* pipe_wp.c - the formulas of the stale pipeline's mitigations
 * (pipe_stale.c says when they apply), alone so that tests/pipe_unit.c
 * checks them against a serial reference:
 *
 *   weight prediction (DANA, Hakimi et al. 2019; msnag), D updates ahead
 *   with every future gradient taken as 0:
 *     SGD (momentum mu, PyTorch's v = mu v + g, w -= lr v):
 *       w^ = w - lr sum_{k=1..D} mu^k v
 *     Adam: m_k = beta1 m_{k-1} + (1 - beta1) g_k with g_k = wd w_{k-1}
 *       (L2 decay; 0 for AdamW, which decays w_k *= 1 - lr wd instead),
 *       w_k = w_{k-1} - lr / (1 - beta1^(t+k)) m_k / (sqrt(v) /
 *       sqrt(1 - beta2^(t+k)) + eps), the second moment v held
 *   aggmsnag: the same, but the first of the D steps also takes the
 *     gradient summed so far towards the next update (--step-every):
 *     SGD: w^ = w - lr (mu v + g) sum_{k=0..D-1} mu^k
 *   gap-aware (Barkai et al., ICLR 2020): g /= 1 + |w - w_ref| / C, C the
 *     running root mean square of each parameter's step
 *     (C^2 = decay C^2 + (1 - decay) (w_new - w_old)^2) plus 1e-8.
 */
#include "config.h"
#include <math.h>
#include "pipe.h"

#define GA_EPS 1e-8f

void wp_predict_sgd(size_t n, float *out, const float *w, const float *v, const float *gacc, double lr,
                    double mu, int D)
{
    /* msnag: D steps of velocity mu^k v; aggmsnag: the first velocity is
     * mu v + g (the summed gradient), then mu^(k-1) of it */
    double from1 = 0, from0 = 0, pk = 1;
    for (int k = 1; k <= D; k++) from0 += pk, from1 += (pk *= mu);
    for (size_t i = 0; i < n; i++)
        out[i] = (float)(gacc ? w[i] - lr * from0 * (mu * v[i] + gacc[i]) : w[i] - lr * from1 * v[i]);
}

void wp_predict_adam(size_t n, float *out, const float *w, const float *m, const float *v, const float *gacc,
                     const wp_adam_t *h, int D)
{
    /* the bias corrections of the D steps ahead, once for all elements */
    enum { MOST = 64 };
    double step[MOST], bc2[MOST];
    D = D < MOST ? D : MOST;
    for (int k = 1; k <= D; k++) {
        step[k - 1] = h->lr / (1 - pow(h->beta1, (double)(h->t + k)));
        bc2[k - 1] = sqrt(1 - pow(h->beta2, (double)(h->t + k)));
    }
    for (size_t i = 0; i < n; i++) {
        double wi = w[i], mi = m[i], sv = sqrt(v[i]);
        for (int k = 1; k <= D; k++) {
            /* future gradients 0: m decays; the summed one (aggmsnag) and
             * L2 decay enter as in Adam's step */
            double g = (k == 1 && gacc ? gacc[i] : 0) + (h->decoupled ? 0 : h->wd * wi);
            mi = h->beta1 * mi + (1 - h->beta1) * g;
            if (h->decoupled) wi *= 1 - h->lr * h->wd;
            wi -= step[k - 1] * mi / (sv / bc2[k - 1] + h->eps);
        }
        out[i] = (float)wi;
    }
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

