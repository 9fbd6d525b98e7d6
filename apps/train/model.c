/* model.c - the multi-layer perceptron: where its parameters live in the
 * flat buffers, their initialisation, and forward and backward over its
 * layers (layer.c).  The same code serves any strategy that runs a range
 * of layers on a device; the data-parallel one runs them all.
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "train.h"

#define ALIGN_FLOATS 16   /* 64 bytes: each array starts on a cache line */

static size_t aligned(size_t n)
{
    return (n + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS;
}

void model_layout(model_t *m, int nl, const int64_t *size, act_t act)
{
    memset(m, 0, sizeof *m);
    m->nl = nl;
    m->act = act;
    memcpy(m->size, size, (size_t)(nl + 1) * sizeof *size);
    size_t off = MODEL_PAD;
    for (int l = nl - 1; l >= 0; l--) {   /* the last layer first */
        size_t in = (size_t)size[l], out = (size_t)size[l + 1];
        m->w[l] = off;
        off = aligned(off + in * out);
        m->b[l] = off;
        off = aligned(off + out);
        m->nparams += in * out + out;
    }
    m->n = off;
}

void model_init(const model_t *m, uint64_t seed, float *p)
{
    memset(p, 0, m->n * sizeof *p);
    for (int l = 0; l < m->nl; l++) {
        size_t in = (size_t)m->size[l], out = (size_t)m->size[l + 1];
        /* kaiming_uniform_(a=sqrt(5)): gain sqrt(2 / (1 + 5)), bound
         * gain sqrt(3 / fan_in) = 1 / sqrt(fan_in); the bias the same */
        double bound = 1.0 / sqrt((double)in);
        hpc_rng_t r;
        hpc_rng_init(&r, seed, MODEL_STREAM + (uint64_t)l);
        for (size_t i = 0; i < in * out; i++) p[m->w[l] + i] = (float)((2 * hpc_rng_uniform(&r) - 1) * bound);
        for (size_t i = 0; i < out; i++) p[m->b[l] + i] = (float)((2 * hpc_rng_uniform(&r) - 1) * bound);
    }
}

int acts_alloc(acts_t *w, const model_t *m, const train_dev_t *dev, int rows)
{
    return acts_alloc_range(w, m, dev, rows, 0, m->nl, ACTS_OUT | ACTS_GRAD);
}

int acts_alloc_range(acts_t *w, const model_t *m, const train_dev_t *dev, int rows, int lo, int hi,
                     int what)
{
    memset(w, 0, sizeof *w);
    w->rows = rows;
    w->lo = lo;
    int64_t widest = 0;
    for (int l = lo; l <= hi; l++) widest = m->size[l] > widest ? m->size[l] : widest;
    int ok = 1;
    for (int l = lo + 1; l <= hi && (what & ACTS_OUT); l++) {
        size_t bytes = (size_t)rows * m->size[l] * sizeof(float);
        ok &= (w->a[l] = dev->alloc(bytes)) != NULL;
        w->bytes += bytes;
        if (m->act == ACT_GELU && l < m->nl) {
            ok &= (w->keep[l] = dev->alloc(bytes)) != NULL;
            w->bytes += bytes;
        }
    }
    for (int k = 0; k < 2 && (what & ACTS_GRAD); k++) {
        ok &= (w->d[k] = dev->alloc((size_t)rows * widest * sizeof(float))) != NULL;
        w->bytes += (size_t)rows * widest * sizeof(float);
    }
    return ok ? 0 : -1;
}

void acts_free(acts_t *w, const train_dev_t *dev)
{
    for (int l = 0; l <= TRAIN_MAXL; l++) {
        if (w->a[l]) dev->release(w->a[l]);
        if (w->keep[l]) dev->release(w->keep[l]);
    }
    for (int k = 0; k < 2; k++)
        if (w->d[k]) dev->release(w->d[k]);
    memset(w, 0, sizeof *w);
}

/* the first layer of the range reads a0 (the data, or what the stage
 * before sent) */
static const float *layer_in(const acts_t *w, int l)
{
    return l == w->lo ? w->a0 : w->a[l];
}

void model_forward(const model_t *m, const train_dev_t *dev, const float *p, acts_t *w, int rows)
{
    model_forward_range(m, dev, p, w, rows, 0, m->nl);
}

void model_forward_range(const model_t *m, const train_dev_t *dev, const float *p, acts_t *w, int rows,
                         int lo, int hi)
{
    for (int l = lo; l < hi; l++)
        layer_forward(dev, rows, (int)m->size[l], (int)m->size[l + 1], p + m->w[l], p + m->b[l],
                      l == m->nl - 1 ? ACT_NONE : m->act, layer_in(w, l), w->a[l + 1], w->keep[l + 1]);
}

float *model_output(const model_t *m, acts_t *w)
{
    return w->a[m->nl];
}

void model_backward(const model_t *m, const train_dev_t *dev, const float *p, float *g, acts_t *w,
                    int rows, float beta, layer_done_fn done, void *ctx)
{
    model_backward_range(m, dev, p, g, w, rows, beta, 0, m->nl, done, ctx);
}

float *model_backward_range(const model_t *m, const train_dev_t *dev, const float *p, float *g, acts_t *w,
                            int rows, float beta, int lo, int hi, layer_done_fn done, void *ctx)
{
    int cur = 0;   /* w->d[cur] holds dL/d(output of layer l) */
    for (int l = hi - 1; l >= lo; l--) {
        int in = (int)m->size[l], out = (int)m->size[l + 1];
        layer_backward_params(dev, rows, in, out, l == m->nl - 1 ? ACT_NONE : m->act, layer_in(w, l),
                              w->a[l + 1], w->keep[l + 1], w->d[cur], g + m->w[l], g + m->b[l], beta);
        if (done) done(ctx, l);
        if (l > 0) {   /* the input gradient: for the layer below, or the stage before */
            layer_backward_input(dev, rows, in, out, p + m->w[l], w->d[cur], w->d[1 - cur]);
            cur = 1 - cur;
        }
    }
    return lo > 0 ? w->d[cur] : NULL;
}
