/* optim.c - optimisers as PyTorch 1.13 computes them (torch.optim, the
 * single-tensor path), operation by operation in float32:
 *
 *   SGD:   d = g + wd p;  with momentum: buf = mu buf + d (buf starts at
 *          0, so the first step gives buf = d, as PyTorch's clone);
 *          d = nesterov ? d + mu buf : buf;  p = p - lr d
 *   Adam:  g = g + wd p (AdamW instead: p = p (1 - lr wd));
 *          m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2;
 *          p = p - (lr / (1 - beta1^t)) m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
 *
 * Before the step, clip_grad_norm_: the global norm of the gradient, and
 * if C / (norm + 1e-6) < 1 every gradient times that.  The state lives in
 * flat buffers with the model's layout (model.c), on the device.
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "train.h"

/* Branch-free loops (they vectorise): a weight decay of 0 adds 0 * p, a
 * factor of 1 multiplies by 1 - both exact, so the results are those of
 * the rules above to the bit. */
TRAIN_HOT void cpu_sgd(size_t n, float *p, const float *g, float *buf, const opt_step_t *h)
{
    const float lr = h->lr, mu = h->momentum, wd = h->weight_decay;
    if (!buf) {
        for (size_t i = 0; i < n; i++) p[i] = p[i] + -lr * (g[i] + wd * p[i]);
        return;
    }
    const int nesterov = h->nesterov;
    for (size_t i = 0; i < n; i++) {
        float d = g[i] + wd * p[i];
        buf[i] = buf[i] * mu + d;
        d = nesterov ? d + mu * buf[i] : buf[i];
        p[i] = p[i] + -lr * d;
    }
}

TRAIN_HOT void cpu_adam(size_t n, float *p, const float *g, float *m, float *v, const opt_step_t *h)
{
    const float b1 = h->beta1, b2 = h->beta2, c1 = h->c1, c2 = h->c2, eps = h->eps;
    const float wd = h->decoupled ? 0.0f : h->weight_decay, decay = h->decoupled ? h->decay : 1.0f;
    const float bc2 = h->bc2_sqrt, step = -h->step_size;
    for (size_t i = 0; i < n; i++) {
        p[i] = p[i] * decay;
        float gi = g[i] + wd * p[i];
        m[i] = m[i] * b1 + c1 * gi;
        v[i] = v[i] * b2 + c2 * (gi * gi);
        float denom = sqrtf(v[i]) / bc2 + eps;
        p[i] = p[i] + step * (m[i] / denom);
    }
}

int optim_open(optim_t *o, const train_opts_t *opts, const train_dev_t *dev, size_t n)
{
    memset(o, 0, sizeof *o);
    o->kind = opts->optim;
    o->lr0 = opts->lr;
    o->momentum = opts->momentum;
    o->nesterov = opts->nesterov;
    o->beta1 = opts->beta1;
    o->beta2 = opts->beta2;
    o->eps = opts->eps;
    o->wd = opts->weight_decay;
    o->clip = opts->clip;
    if (o->kind == OPT_SGD && o->momentum != 0) {
        o->nstates = 1;
        o->names[0] = "momentum_buffer";
    } else if (o->kind != OPT_SGD) {
        o->nstates = 2;
        o->names[0] = "exp_avg";
        o->names[1] = "exp_avg_sq";
    }
    for (int k = 0; k < o->nstates; k++)
        if (!(o->state[k] = dev->alloc(n * sizeof(float)))) return -1;
    return 0;
}

void optim_close(optim_t *o, const train_dev_t *dev)
{
    for (int k = 0; k < o->nstates; k++)
        if (o->state[k]) dev->release(o->state[k]);
    memset(o, 0, sizeof *o);
}

double optim_step(optim_t *o, const train_dev_t *dev, float *p, float *g, size_t n, double lr, int64_t t)
{
    double norm = optim_clip(o, dev, g, MODEL_PAD, n, MPI_COMM_NULL);
    optim_step_range(o, dev, p, g, MODEL_PAD, n, lr, t);
    return norm;
}

double optim_clip(optim_t *o, const train_dev_t *dev, float *g, size_t lo, size_t hi, MPI_Comm parts)
{
    /* the norm costs a pass over the gradient: only for clipping */
    if (o->clip <= 0) return NAN;
    double sum = dev->sumsq(hi - lo, g + lo), all = sum;
    if (parts != MPI_COMM_NULL) MPI_Allreduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, parts);
    double norm = sqrt(all);
    /* as clip_grad_norm_: the coefficient in float, clamped to 1 */
    float coef = (float)(o->clip / (norm + 1e-6));
    if (coef < 1.0f) dev->scale(hi - lo, g + lo, coef);
    return norm;
}

void optim_step_range(optim_t *o, const train_dev_t *dev, float *p, float *g, size_t lo, size_t hi, double lr,
                      int64_t t)
{
    float *pp = p + lo, *gg = g + lo;
    size_t nn = hi - lo;
    opt_step_t h = {.lr = (float)lr, .momentum = (float)o->momentum, .weight_decay = (float)o->wd,
                    .nesterov = o->nesterov, .beta1 = (float)o->beta1, .beta2 = (float)o->beta2,
                    .eps = (float)o->eps, .decoupled = o->kind == OPT_ADAMW};
    if (o->kind == OPT_SGD) {
        dev->sgd(nn, pp, gg, o->nstates ? o->state[0] + lo : NULL, &h);
    } else {
        /* the bias corrections in double, as Python's floats */
        h.c1 = (float)(1 - o->beta1);
        h.c2 = (float)(1 - o->beta2);
        h.decay = (float)(1 - lr * o->wd);
        h.step_size = (float)(lr / (1 - pow(o->beta1, (double)t)));
        h.bc2_sqrt = (float)sqrt(1 - pow(o->beta2, (double)t));
        dev->adam(nn, pp, gg, o->state[0] + lo, o->state[1] + lo, &h);
    }
}
