/* stats.c - normalisation statistics over the training samples, the same
 * bits for any number of ranks.
 *
 * The training samples are cut into fixed chunks (by sample index, never
 * by rank); each rank takes a block of chunks and computes each chunk's
 * count, mean and sum of squared deviations (two passes over the chunk in
 * memory); one allreduce puts every chunk's numbers on every rank (each
 * entry has one contributor, the others add zeros: exact); every rank
 * then combines the chunks in chunk order with Chan's formula.  The same
 * pass refuses NaN and infinite values, in the validation samples too
 * (chunks of their own, checked but not counted): a NaN there would
 * drop the validation loss from every report without a word.  It also
 * hashes every chunk's raw values (hpc_hash64), and the chunks' hashes
 * in chunk order give the data's digest (d->digest): every value of
 * every sample, the same for any rank count, for --resume to tell an
 * edit anywhere in the file.  Returns -1 where this rank failed
 * (the caller's hpc_app_agree ends every rank), or on every rank for bad
 * values.  std is the population standard
 * deviation; a constant feature keeps std 1 (no scaling).
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "train.h"

#define STATS_CHUNKS 1024            /* at most, unless memory says fewer */
#define STATS_CHUNK_BYTES (32u << 20) /* a chunk's raw values at most */

typedef struct {
    int64_t chunk, nchunks;          /* samples per chunk, chunks of training samples */
    int64_t nall;                    /* and of the validation samples after them */
    int nf;                          /* features: inputs, then MSE targets */
    double *part;                    /* [nchunks][1 + 2 nf]: n, means, M2s */
    uint64_t *sum;                   /* [nall]: each chunk's hash (this rank's, 0 elsewhere) */
} stats_t;

/* mean and M2 of column c of the chunk's values v [n, stride] */
static void column(const double *v, int64_t n, int stride, int c, double *mean, double *m2)
{
    double s = 0, q = 0;
    for (int64_t i = 0; i < n; i++) s += v[i * stride + c];
    *mean = s / (double)n;
    for (int64_t i = 0; i < n; i++) {
        double e = v[i * stride + c] - *mean;
        q += e * e;
    }
    *m2 = q;
}

/* Chunk k into part (k >= nchunks: validation, only checked); -1 with
 * the sample of a non-finite value in *badrow */
static int chunk_stats(const data_t *d, stats_t *s, int64_t k, double *X, double *Y, int64_t *ids,
                       int64_t *badrow)
{
    int val = k >= s->nchunks;
    int64_t first = val ? d->ntrain + (k - s->nchunks) * s->chunk : k * s->chunk;
    int64_t end = val ? d->nsamples : d->ntrain, n = end - first < s->chunk ? end - first : s->chunk;
    for (int64_t i = 0; i < n; i++) ids[i] = first + i;
    HPC_TRY(data_read_raw(d, (size_t)n, ids, X, Y));
    s->sum[k] = hpc_hash64(Y, (size_t)n * (size_t)d->ydim * sizeof *Y,
                           hpc_hash64(X, (size_t)(n * d->nin) * sizeof *X, (uint64_t)k));
    int ny = d->loss == LOSS_CE ? 0 : d->ydim;
    for (int64_t i = 0; i < n; i++) {
        int finite = 1;
        for (int64_t c = 0; c < d->nin; c++) finite &= isfinite(X[i * d->nin + c]) != 0;
        for (int c = 0; c < ny; c++) finite &= isfinite(Y[i * d->ydim + c]) != 0;
        if (!finite) {
            *badrow = first + i;
            return -1;
        }
    }
    if (val) return 0;
    double *p = s->part + k * (1 + 2 * s->nf);
    p[0] = (double)n;
    for (int c = 0; c < s->nf; c++) {
        int in = c < d->nin;
        column(in ? X : Y, n, in ? (int)d->nin : d->ydim, in ? c : c - (int)d->nin, &p[1 + c],
               &p[1 + s->nf + c]);
    }
    return 0;
}

/* Chan, Golub, LeVeque: chunks in order into mean and std */
static void combine(const data_t *d, const stats_t *s)
{
    for (int c = 0; c < s->nf; c++) {
        double n = 0, mean = 0, m2 = 0;
        for (int64_t k = 0; k < s->nchunks; k++) {
            const double *p = s->part + k * (1 + 2 * s->nf);
            double nk = p[0], delta = p[1 + c] - mean, tot = n + nk;
            mean += delta * nk / tot;
            m2 += p[1 + s->nf + c] + delta * delta * n * nk / tot;
            n = tot;
        }
        double sd = sqrt(m2 / n);
        if (!(sd > 0) || !isfinite(sd)) sd = 1;
        if (c < d->nin) {
            d->x_mean[c] = mean;
            d->x_std[c] = sd;
        } else {
            d->y_mean[c - d->nin] = mean;
            d->y_std[c - d->nin] = sd;
        }
    }
}

static void layout(const data_t *d, stats_t *s)
{
    s->nf = (int)d->nin + (d->loss == LOSS_CE ? 0 : d->ydim);
    double row = (double)(d->nin + d->ydim) * sizeof(double);
    int64_t cap = (int64_t)(STATS_CHUNK_BYTES / row) > 0 ? (int64_t)(STATS_CHUNK_BYTES / row) : 1;
    s->chunk = (d->ntrain + STATS_CHUNKS - 1) / STATS_CHUNKS;
    if (s->chunk > cap) s->chunk = cap;
    s->nchunks = (d->ntrain + s->chunk - 1) / s->chunk;
    s->nall = s->nchunks + (d->nsamples - d->ntrain + s->chunk - 1) / s->chunk;
}

/* "training sample 12", "validation sample 60 (row 60 of /X)",
 * "validation sample 45 (trajectory row 5 of /y, step 3)" */
static void name_sample(const data_t *d, int64_t i, char *buf, size_t len)
{
    const char *split = i < d->ntrain ? "training" : "validation";
    if (d->kind == DATA_ODE)
        snprintf(buf, len, "%s sample %lld (row %lld of /y, time step %lld)", split, (long long)i,
                 (long long)d->traj[i / (d->nt - 1)], (long long)(i % (d->nt - 1)));
    else
        snprintf(buf, len, "%s sample %lld (row %lld of /X, /Y)", split, (long long)i, (long long)i);
}

int stats_compute(data_t *d)
{
    stats_t s;
    layout(d, &s);
    int64_t k0, nk, badrow = -1;
    hpc_block_range(s.nall, hpc_size(), hpc_rank(), &k0, &nk);
    size_t per = (size_t)(1 + 2 * s.nf);
    s.part = calloc((size_t)s.nchunks * per, sizeof *s.part);
    s.sum = calloc((size_t)s.nall, sizeof *s.sum);
    double *all = calloc((size_t)s.nchunks * per, sizeof *all);
    double *X = malloc((size_t)(s.chunk * d->nin + 1) * sizeof *X);
    double *Y = malloc((size_t)(s.chunk * d->ydim + 1) * sizeof *Y);
    int64_t *ids = malloc((size_t)s.chunk * sizeof *ids);
    int rc = s.part && s.sum && all && X && Y && ids ? 0 : HPC_ERR(HPC_ERR_NOMEM, "statistics buffers");
    for (int64_t k = k0; !rc && k < k0 + nk; k++) rc = chunk_stats(d, &s, k, X, Y, ids, &badrow);
    /* the verdict first: a rank that failed takes no further part */
    int64_t mine[2] = {rc < 0 && badrow < 0, badrow < 0 ? INT64_MAX : badrow}, got[2];
    MPI_Allreduce(&mine[0], &got[0], 1, MPI_INT64_T, MPI_MAX, hpc_comm_world());
    MPI_Allreduce(&mine[1], &got[1], 1, MPI_INT64_T, MPI_MIN, hpc_comm_world());
    int ret = 0;
    if (got[0]) {   /* the ranks that failed say why; hpc_app_agree ends all */
        if (mine[0]) ret = HPC_ERR(rc, "reading %s: %s", hpc_h5_path(d->f), hpc_last_cause());
    } else if (got[1] != INT64_MAX) {
        char what[160];
        name_sample(d, got[1], what, sizeof what);
        ret = HPC_ERR(HPC_ERR_DATA, "%s: %s holds NaN or infinite values", hpc_h5_path(d->f), what);
    } else {
        MPI_Allreduce(s.part, all, (int)(s.nchunks * per), MPI_DOUBLE, MPI_SUM, hpc_comm_world());
        free(s.part);
        s.part = all;
        all = NULL;
        combine(d, &s);
        /* one contributor per chunk: the XOR is that rank's hash */
        MPI_Allreduce(MPI_IN_PLACE, s.sum, (int)s.nall, MPI_UINT64_T, MPI_BXOR, hpc_comm_world());
        int64_t shape[3] = {d->nsamples, d->nin, d->ydim};
        d->digest = hpc_hash64(s.sum, (size_t)s.nall * sizeof *s.sum, hpc_hash64(shape, sizeof shape, 0));
    }
    free(s.part);
    free(s.sum);
    free(all);
    free(X);
    free(Y);
    free(ids);
    if (ret == 0) hpc_error_clear();    /* a NaN row's record, reported above */
    return ret;
}
