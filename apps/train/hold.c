/* hold.c - what a rank holds of each array of the network, whatever the
 * strategy: the layers of its layout whole (data parallelism: all of
 * them; a pipeline stage: its own), or its block of every unit of a
 * sharded layout (model.c).  An array (layer l's weight or bias) is then
 * one run of its elements on each rank that holds any of it, so a
 * checkpoint is written and read run by run (hpc_ckpt_put_part) into the
 * same file whatever the strategy, and a fresh start draws each run from
 * its layer's stream: the same values as one rank's.
 */
#include "config.h"
#include <stdlib.h>
#include "train.h"

float *hold_piece(const hold_t *h, int l, int bias, size_t *first, size_t *count)
{
    const model_t *m = h->m;
    *first = *count = 0;
    if (l < m->lo || l >= m->hi) return NULL;
    size_t at = bias ? m->b[l] : m->w[l];
    size_t len = bias ? (size_t)m->size[l + 1] : (size_t)(m->size[l] * m->size[l + 1]);
    if (!h->sharded) {
        *count = len;
        return h->buf + at;
    }
    /* the array's floats of the layout against this rank's block of its unit */
    int u = m->unit_of[l];
    size_t blk, blen;
    model_block(m, u, h->rank, &blk, &blen);
    size_t lo = at > blk ? at : blk, hi = at + len < blk + blen ? at + len : blk + blen;
    if (hi <= lo) return NULL;
    *first = lo - at;
    *count = hi - lo;
    return h->buf + m->uat[u] + (lo - blk);
}

int hold_init(const hold_t *h, const train_dev_t *dev, uint64_t seed)
{
    const model_t *m = h->m;
    size_t most = 0;
    for (int l = m->lo; l < m->hi; l++) {
        size_t n = (size_t)(m->size[l] * m->size[l + 1] + m->size[l + 1]);
        most = n > most ? n : most;
    }
    float *w = malloc((most + 1) * sizeof *w);
    if (!w) return HPC_ERR(HPC_ERR_NOMEM, "initial weights");
    for (int l = m->lo; l < m->hi; l++) {
        size_t nw = (size_t)(m->size[l] * m->size[l + 1]), first[2], count[2];
        float *at[2] = {hold_piece(h, l, 0, &first[0], &count[0]), hold_piece(h, l, 1, &first[1], &count[1])};
        if (!count[0] && !count[1]) continue;
        /* the layer's stream, whole: a run of it cannot be drawn alone */
        model_init_layer(m, seed, l, w, w + nw);
        for (int k = 0; k < 2; k++)
            if (count[k]) dev->to_dev(at[k], w + (k ? nw : 0) + first[k], count[k] * sizeof(float));
    }
    free(w);
    return 0;
}
