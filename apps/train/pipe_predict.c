/* pipe_predict.c - the stale pipeline's side of its mitigations
 * (pipe_stale.c says when they apply), alone so that tests/pipe_unit.c
 * checks them against a serial reference; the optimisers' own
 * prediction formulas are optim_predict.c's:
 *
 *   the horizon of weight prediction: lr_k, the learning rate the
 *   schedule gives the k-th update ahead (wp_horizon: under a warm-up or
 *   a cosine it changes over the horizon; an update belongs to the loop
 *   step of its --step-every group)
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

