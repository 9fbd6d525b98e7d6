/* dp.c - data parallelism as DistributedDataParallel does it: the
 * gradients in one flat buffer, cut into buckets of about --bucket-mb in
 * reverse layer order (the order backward finishes them); as soon as
 * backward has finished every layer of a bucket, its allreduce (sum)
 * starts nonblocking and backward goes on.  libhpc advances nonblocking
 * collectives only inside its calls, so every finished layer also tests
 * the buckets in flight; the step waits for the rest.  A layer is never
 * split between buckets.  Slot 0 of the buffer (the pad before the last
 * layer) carries the loss sum, so the step's loss travels with the first
 * bucket instead of costing a collective of its own.
 *
 * What it costs: the seconds spent inside the collective calls (start,
 * tests, the final wait) are the communication that was not hidden; one
 * blocking reduction of all buckets, timed at the start, is what it would
 * have cost without overlap.  On the GPU backward is queued, not done,
 * when the step waits: the wait starts once the device's own work is
 * (sync_compute), so that it counts communication alone, as on the CPU.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "train.h"

#define CALIB_ROUNDS 5

/* The layers of m's layout: a pipeline stage reduces its own only */
static int buckets(dp_t *dp, const model_t *m, double bucket_mb)
{
    int lo = m->lo, hi = m->hi;
    size_t cap = (size_t)(bucket_mb * 1048576.0 / sizeof(float));
    dp->off = calloc((size_t)m->nl, sizeof *dp->off);
    dp->count = calloc((size_t)m->nl, sizeof *dp->count);
    dp->last_layer = calloc((size_t)m->nl, sizeof *dp->last_layer);
    dp->req = calloc((size_t)m->nl, sizeof *dp->req);
    if (!dp->off || !dp->count || !dp->last_layer || !dp->req) return HPC_ERR(HPC_ERR_NOMEM, "buckets");
    /* the pad and the last layer open bucket 0 (the pad carries the loss) */
    size_t start = hi == m->nl ? 0 : m->w[hi - 1];
    for (int l = hi - 1; l >= lo; l--) {
        size_t end = l > lo ? m->w[l - 1] : m->n;   /* where layer l's arrays end */
        int fits = dp->nb > 0 && end - dp->off[dp->nb - 1] <= cap;
        if (dp->nb == 0 || !fits) {
            if (dp->nb > 0) start = m->w[l];
            dp->off[dp->nb++] = start;
        }
        dp->count[dp->nb - 1] = end - dp->off[dp->nb - 1];
        dp->last_layer[dp->nb - 1] = l;
    }
    return 0;
}

/* The time of one blocking reduction of every bucket (median of a few)
 * into *secs; the reduction's code where it fails */
static int calibrate(dp_t *dp, double *secs)
{
    double t[CALIB_ROUNDS];
    for (int r = 0; r < CALIB_ROUNDS; r++) {
        MPI_Barrier(dp->comm);
        double t0 = hpc_wtime();
        for (int b = 0; b < dp->nb; b++)
            HPC_TRY(hpc_allreduce(HPC_IN_PLACE, dp->g + dp->off[b], dp->count[b], HPC_FLOAT32, HPC_SUM, dp->comm,
                                  dp->alg));
        t[r] = hpc_wtime() - t0;
    }
    double med = hpc_median(t, CALIB_ROUNDS), all = med;
    MPI_Allreduce(&med, &all, 1, MPI_DOUBLE, MPI_MAX, dp->comm);
    *secs = all;
    return 0;
}

int dp_open(dp_t *dp, const model_t *m, const train_dev_t *dev, float *p, float *g, double bucket_mb,
            hpc_alg_t alg, MPI_Comm comm)
{
    memset(dp, 0, sizeof *dp);
    dp->comm = comm;
    dp->alg = alg;
    dp->g = g;
    dp->p = p;
    dp->n = m->n;
    dp->dev = dev;
    MPI_Comm_size(comm, &dp->size);
    HPC_TRY(buckets(dp, m, bucket_mb));
    /* g is all zeros here: the calibration leaves it so */
    if (dp->size > 1) HPC_TRY(calibrate(dp, &dp->calib));
    return 0;
}

void dp_begin(dp_t *dp, int arm)
{
    dp->armed = arm && dp->size > 1;
}

/* Advance every bucket in flight once */
static int poll(dp_t *dp)
{
    for (int b = 0; b < dp->nb; b++) {
        int done;
        if (dp->req[b]) HPC_TRY(hpc_test(&dp->req[b], &done));
    }
    return 0;
}

void dp_layer_done(void *ctx, int l)
{
    dp_t *dp = ctx;
    if (!dp->armed) return;
    double t0 = hpc_wtime();
    int rc = 0;
    for (int b = 0; b < dp->nb && !rc; b++)
        if (dp->last_layer[b] == l)
            rc = hpc_iallreduce(HPC_IN_PLACE, dp->g + dp->off[b], dp->count[b], HPC_FLOAT32, HPC_SUM, dp->comm,
                                dp->alg, &dp->req[b]);
    if (!rc) rc = poll(dp);
    /* a collective that fails leaves the others inside theirs */
    if (rc) hpc_app_fatal(HPC_EXIT_DATA, "gradient allreduce: %s", hpc_last_cause());
    dp->exposed += hpc_wtime() - t0;
}

int dp_finish(dp_t *dp)
{
    if (!dp->armed) return 0;
    if (dp->sync_compute) dp->sync_compute();
    double t0 = hpc_wtime();
    int rc = hpc_waitall(dp->nb, dp->req);
    dp->exposed += hpc_wtime() - t0;
    dp->armed = 0;
    return rc;
}

void dp_close(dp_t *dp)
{
    free(dp->off);
    free(dp->count);
    free(dp->last_layer);
    free(dp->req);
    memset(dp, 0, sizeof *dp);
}

/* ---- behind the gradient-synchronisation table ---- */

static void gs_begin(void *ctx, int arm, int first)
{
    dp_t *dp = ctx;
    if (first) dp->exposed = 0;
    dp_begin(dp, arm);
}

static int gs_finish(void *ctx)
{
    return dp_finish(ctx);
}

/* every replica holds the whole gradient: the norm over this layout's
 * layers (and parts'), the update of all of them */
static double gs_update(void *ctx, const optim_t *opt, double lr, int64_t t, MPI_Comm parts)
{
    dp_t *dp = ctx;
    double norm = optim_clip(opt, dp->dev, dp->g, MODEL_PAD, dp->n, parts, MPI_COMM_NULL);
    optim_update(opt, dp->dev, dp->n - MODEL_PAD, dp->p + MODEL_PAD, dp->g + MODEL_PAD, MODEL_PAD, lr, t);
    return norm;
}

static double gs_exposed(const void *ctx)
{
    return ((const dp_t *)ctx)->exposed;
}

static double gs_blocking(const void *ctx)
{
    return ((const dp_t *)ctx)->calib;
}

static void gs_close(void *ctx)
{
    if (ctx) dp_close(ctx);
}

static const gsync_ops_t dp_ops = {"dp", gs_begin, dp_layer_done, gs_finish, gs_update, gs_exposed, gs_blocking,
                                   gs_close};

gsync_t dp_gsync(dp_t *dp)
{
    return (gsync_t){&dp_ops, dp};
}
