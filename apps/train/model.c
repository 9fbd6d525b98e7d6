/* model.c - the multi-layer perceptron: where a range of its layers lives
 * in a flat buffer, their initialisation, and forward and backward over
 * them (layer.c).  The same code serves every strategy: data parallelism
 * lays out all the layers, a pipeline stage its own, a sharded strategy
 * all of them in units padded so that each cuts into equal blocks; the
 * forward and backward take where each layer's weights and gradients are
 * (wts_t), so that gathered or staged layers need no copy.
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "train.h"

#define ALIGN_FLOATS 16   /* 64 bytes: each array starts on a cache line */

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

/* Floats of layer l's arrays, each rounded to a cache line */
static size_t layer_floats(const int64_t *size, int l)
{
    size_t in = (size_t)size[l], out = (size_t)size[l + 1];
    return round_up(in * out, ALIGN_FLOATS) + round_up(out, ALIGN_FLOATS);
}

void model_layout(model_t *m, int nl, const int64_t *size, act_t act)
{
    model_layout_part(m, nl, size, act, 0, nl, 0, 1);
}

void model_layout_part(model_t *m, int nl, const int64_t *size, act_t act, int lo, int hi, double unit_cap,
                       int shards)
{
    memset(m, 0, sizeof *m);
    m->nl = nl;
    m->act = act;
    m->lo = lo;
    m->hi = hi;
    m->shards = shards;
    memcpy(m->size, size, (size_t)(nl + 1) * sizeof *size);
    size_t off = MODEL_PAD, at = 0;
    for (int l = hi - 1; l >= lo; l--) {   /* the last layer first */
        int u = m->nunits;
        /* a new unit, unless this layer still fits the open one */
        int fits = u > 0 && unit_cap > 0 && (double)(off - m->uoff[u - 1] + layer_floats(size, l)) <= unit_cap;
        if (!fits) {
            if (u > 0) off = m->uoff[u - 1] + m->ulen[u - 1];
            m->uoff[u] = off;
            m->uhi[u] = l + 1;
            m->nunits++;
        } else {
            u--;
        }
        size_t in = (size_t)size[l], out = (size_t)size[l + 1];
        m->w[l] = off;
        m->b[l] = off + round_up(in * out, ALIGN_FLOATS);
        off = m->b[l] + round_up(out, ALIGN_FLOATS);
        m->nparams += in * out + out;
        m->ulo[u] = l;
        m->unit_of[l] = u;
        m->ulen[u] = round_up(off - m->uoff[u], (size_t)ALIGN_FLOATS * (size_t)shards);
    }
    for (int u = 0; u < m->nunits; u++) {
        m->uat[u] = at;
        at += m->ulen[u] / (size_t)shards;
        if (m->ulen[u] > m->unit_most) m->unit_most = m->ulen[u];
    }
    m->shard_n = at;
    m->n = m->nunits ? m->uoff[m->nunits - 1] + m->ulen[m->nunits - 1] : MODEL_PAD;
}

void model_block(const model_t *m, int u, int rank, size_t *at, size_t *len)
{
    *len = m->ulen[u] / (size_t)m->shards;
    *at = m->uoff[u] + (size_t)rank * *len;
}

void model_init_layer(const model_t *m, uint64_t seed, int l, float *w, float *b)
{
    size_t in = (size_t)m->size[l], out = (size_t)m->size[l + 1];
    /* kaiming_uniform_(a=sqrt(5)): gain sqrt(2 / (1 + 5)), bound
     * gain sqrt(3 / fan_in) = 1 / sqrt(fan_in); the bias the same */
    double bound = 1.0 / sqrt((double)in);
    hpc_rng_t r;
    hpc_rng_init(&r, seed, MODEL_STREAM + (uint64_t)l);
    for (size_t i = 0; i < in * out; i++) w[i] = (float)((2 * hpc_rng_uniform(&r) - 1) * bound);
    for (size_t i = 0; i < out; i++) b[i] = (float)((2 * hpc_rng_uniform(&r) - 1) * bound);
}

void model_init(const model_t *m, uint64_t seed, float *p)
{
    memset(p, 0, m->n * sizeof *p);
    for (int l = m->lo; l < m->hi; l++) model_init_layer(m, seed, l, p + m->w[l], p + m->b[l]);
}

void model_wts(const model_t *m, float *p, wts_t *out)
{
    memset(out, 0, sizeof *out);
    for (int l = m->lo; l < m->hi; l++) {
        out->w[l] = p + m->w[l];
        out->b[l] = p + m->b[l];
    }
}

size_t acts_bytes(const model_t *m, int rows, int lo, int hi, int what)
{
    size_t bytes = 0;
    int64_t widest = 0;
    for (int l = lo; l <= hi; l++) widest = m->size[l] > widest ? m->size[l] : widest;
    for (int l = lo + 1; l <= hi && (what & ACTS_OUT); l++)
        bytes += (size_t)rows * m->size[l] * sizeof(float) * (m->act == ACT_GELU && l < m->nl ? 2 : 1);
    if (what & ACTS_GRAD) bytes += 2 * (size_t)rows * widest * sizeof(float);
    return bytes;
}

int acts_alloc(acts_t *w, const model_t *m, const train_dev_t *dev, int rows, int lo, int hi, int what)
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

void model_forward(const model_t *m, const train_dev_t *dev, const wts_t *p, acts_t *w, int rows, int lo, int hi)
{
    for (int l = lo; l < hi; l++)
        layer_forward(dev, rows, (int)m->size[l], (int)m->size[l + 1], p->w[l], p->b[l],
                      l == m->nl - 1 ? ACT_NONE : m->act, layer_in(w, l), w->a[l + 1], w->keep[l + 1]);
}

float *model_output(const model_t *m, acts_t *w)
{
    return w->a[m->nl];
}

float *model_backward(const model_t *m, const train_dev_t *dev, const wts_t *p, wts_t *g, acts_t *w, int rows,
                      float beta, int lo, int hi, layer_done_fn done, void *ctx)
{
    int cur = 0;   /* w->d[cur] holds dL/d(output of layer l) */
    for (int l = hi - 1; l >= lo; l--) {
        int in = (int)m->size[l], out = (int)m->size[l + 1];
        layer_backward_params(dev, rows, in, out, l == m->nl - 1 ? ACT_NONE : m->act, layer_in(w, l),
                              w->a[l + 1], w->keep[l + 1], w->d[cur], g->w[l], g->b[l], beta);
        if (done) done(ctx, l);
        if (l > 0) {   /* the input gradient: for the layer below, or the stage before */
            layer_backward_input(dev, rows, in, out, p->w[l], w->d[cur], w->d[1 - cur]);
            cur = 1 - cur;
        }
    }
    return lo > 0 ? w->d[cur] : NULL;
}
