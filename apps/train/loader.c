/* loader.c - a rank's rows of each global batch.
 *
 * Epoch e visits the training samples in the order of the permutation
 * (seed, e) (hpc_perm_at: the same on every rank, O(1) memory); global
 * micro-batch mb is positions [mb B, mb B + B) of it, and this rank's
 * slice is the contiguous block hpc_block_range(B, ranks, rank) of those
 * positions - uneven when B is not a multiple of the rank count - so the
 * sequence of global batches is the same for any number of ranks (unlike
 * DistributedSampler, which deals samples round-robin).
 *
 * Without --preload a rank reads only its own samples: a window of the
 * next micro-batches at a time (about 4 MiB), in one hpc_h5_read_rows_at
 * call, independent of the other ranks.  With --preload every rank holds
 * the whole training set and copies its rows out of it.  Its block of the
 * validation set is read once.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "train.h"

#define WINDOW_BYTES (4u << 20)
#define PRELOAD_CHUNK 65536

static int read_range(const data_t *d, int64_t first, int64_t n, float *x, float *y)
{
    int64_t *ids = malloc((size_t)(n > 0 ? n : 1) * sizeof *ids);
    if (!ids) return HPC_ERR(HPC_ERR_NOMEM, "%lld sample ids", (long long)n);
    for (int64_t i = 0; i < n; i++) ids[i] = first + i;
    int rc = data_read(d, (size_t)n, ids, x, y);
    free(ids);
    return rc;
}

static int preload(loader_t *l)
{
    const data_t *d = l->d;
    l->all_x = malloc((size_t)d->ntrain * d->nin * sizeof(float));
    l->all_y = malloc((size_t)d->ntrain * d->ydim * sizeof(float));
    if (!l->all_x || !l->all_y) return HPC_ERR(HPC_ERR_NOMEM, "--preload of %lld samples", (long long)d->ntrain);
    l->bytes += (size_t)d->ntrain * (d->nin + d->ydim) * sizeof(float);
    for (int64_t s = 0; s < d->ntrain; s += PRELOAD_CHUNK) {
        int64_t n = d->ntrain - s < PRELOAD_CHUNK ? d->ntrain - s : PRELOAD_CHUNK;
        HPC_TRY(read_range(d, s, n, l->all_x + s * d->nin, l->all_y + s * d->ydim));
    }
    return 0;
}

/* Micro-batches a window holds: as many as fit WINDOW_BYTES, one at
 * least, at most an epoch's */
static int64_t window_cap(const data_t *d, const train_opts_t *o, int64_t per_epoch, int nranks)
{
    size_t row = (size_t)(d->nin + d->ydim) * sizeof(float);
    int64_t most = (o->batch + nranks - 1) / nranks;
    int64_t cap = (int64_t)(WINDOW_BYTES / (row * most));
    /* test hook: HPC_TRAIN_TEST_WINDOW=K micro-batches a window, so a small
     * test crosses windows and epochs */
    int64_t k;
    if (hpc_app_test_hook("HPC_TRAIN_TEST_WINDOW", 1, &k) == 1 && k > 0) cap = k;
    if (cap < 1 || o->preload) cap = 1;
    if (cap > per_epoch) cap = per_epoch > 0 ? per_epoch : 1;
    return cap;
}

size_t loader_bytes(const data_t *d, const train_opts_t *o, int rank, int nranks)
{
    int64_t lo, n, vlo, vn, per_epoch = d->ntrain / (o->batch * o->accum) * o->accum;
    hpc_block_range(o->batch, nranks, rank, &lo, &n);
    hpc_block_range(d->nval, nranks, rank, &vlo, &vn);
    size_t row = (size_t)(d->nin + d->ydim) * sizeof(float);
    size_t bytes = (size_t)(window_cap(d, o, per_epoch, nranks) * n + vn) * row;
    return bytes + (o->preload ? (size_t)d->ntrain * row : 0);
}

int loader_open(loader_t *l, const data_t *d, const train_opts_t *o, int rank, int nranks)
{
    memset(l, 0, sizeof *l);
    l->d = d;
    l->batch = o->batch;
    l->seed = o->seed;
    l->preload = o->preload;
    l->per_epoch = d->ntrain / (o->batch * o->accum) * o->accum;
    l->w_epoch = -1;
    hpc_block_range(o->batch, nranks, rank, &l->rank_lo, &l->rank_n);
    size_t row = (size_t)(d->nin + d->ydim) * sizeof(float);
    l->w_cap = window_cap(d, o, l->per_epoch, nranks);
    l->wx = malloc((size_t)(l->w_cap * l->rank_n * d->nin + 1) * sizeof(float));
    l->wy = malloc((size_t)(l->w_cap * l->rank_n * d->ydim + 1) * sizeof(float));
    hpc_block_range(d->nval, nranks, rank, &l->val_lo, &l->val_n);
    l->val_x = malloc((size_t)(l->val_n * d->nin + 1) * sizeof(float));
    l->val_y = malloc((size_t)(l->val_n * d->ydim + 1) * sizeof(float));
    l->bytes += (size_t)(l->w_cap * l->rank_n + l->val_n) * row;
    int rc = l->wx && l->wy && l->val_x && l->val_y ? 0 : HPC_ERR(HPC_ERR_NOMEM, "batch buffers");
    if (!rc) rc = read_range(d, d->ntrain + l->val_lo, l->val_n, l->val_x, l->val_y);
    if (!rc && l->preload) rc = preload(l);
    if (rc) return HPC_ERR(rc, "reading %s: %s", hpc_h5_path(d->f), hpc_last_cause());
    return 0;
}

/* Sample ids of micro-batches [first, first + count) of epoch e, this
 * rank's slices one after the other. */
static void window_ids(const loader_t *l, int64_t e, int64_t first, int64_t count, int64_t *ids)
{
    hpc_perm_t p;
    hpc_perm_init(&p, l->seed, (uint64_t)e, (uint64_t)l->d->ntrain);
    for (int64_t m = 0; m < count; m++)
        for (int64_t j = 0; j < l->rank_n; j++)
            ids[m * l->rank_n + j] =
                (int64_t)hpc_perm_at(&p, (uint64_t)((first + m) * l->batch + l->rank_lo + j));
}

static int gather(loader_t *l, const int64_t *ids)
{
    const data_t *d = l->d;
    for (int64_t j = 0; j < l->rank_n; j++) {
        memcpy(l->wx + j * d->nin, l->all_x + ids[j] * d->nin, (size_t)d->nin * sizeof(float));
        memcpy(l->wy + j * d->ydim, l->all_y + ids[j] * d->ydim, (size_t)d->ydim * sizeof(float));
    }
    return 0;
}

int loader_batch(loader_t *l, int64_t epoch, int64_t mb, const float **x, const float **y)
{
    const data_t *d = l->d;
    if (l->w_epoch != epoch || mb < l->w_first || mb >= l->w_first + l->w_count) {
        int64_t count = l->per_epoch - mb < l->w_cap ? l->per_epoch - mb : l->w_cap;
        int64_t *ids = malloc((size_t)(count * l->rank_n + 1) * sizeof *ids);
        if (!ids) return HPC_ERR(HPC_ERR_NOMEM, "sample ids");
        window_ids(l, epoch, mb, count, ids);
        int rc = l->preload ? gather(l, ids) : data_read(d, (size_t)(count * l->rank_n), ids, l->wx, l->wy);
        free(ids);
        if (rc) return rc;
        l->w_epoch = epoch;
        l->w_first = mb;
        l->w_count = count;
    }
    int64_t off = (mb - l->w_first) * l->rank_n;
    *x = l->wx + off * d->nin;
    *y = l->wy + off * d->ydim;
    return 0;
}

void loader_close(loader_t *l)
{
    free(l->all_x);
    free(l->all_y);
    free(l->wx);
    free(l->wy);
    free(l->val_x);
    free(l->val_y);
    memset(l, 0, sizeof *l);
}
