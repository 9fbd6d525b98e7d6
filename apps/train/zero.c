/* zero.c - ZeRO's gradient synchronisation (Rajbhandari et al., SC
 * 2020), the engine of --shard (strat_shard.c) and of a hybrid
 * pipeline's --shard optim over its replicas (pipe.c): each unit's
 * gradient reduce-scattered as soon as backward has finished it, each
 * rank's blocks updated with its 1/D of the optimiser state, the
 * parameters all-gathered.  Kept apart from the strategies that drive
 * it, as llm.c keeps zero.cuh apart from its loop and optimiser; the
 * strategies reach it through the gradient-synchronisation table
 * (gsync_ops_t, train.h) that dp.c's buckets implement too.
 *
 * The layout (model.c) groups the layers into units and pads each unit
 * to a multiple of 16 x D floats: libhpc's reduce_scatter and allgather
 * take equal blocks, so unit u cuts into D blocks of ulen[u] / D floats
 * and rank r owns block r of every unit (its shard: those blocks one
 * after the other).  The padding is zeros and stays zeros (no gradient
 * reaches it, and the optimisers move a zero parameter with zero state
 * by nothing).
 *
 *   SHARD_OPTIM   backward writes the whole gradient; each unit is
 *                 reduce-scattered when the step's last micro-step has
 *                 finished it (the others sum in place).
 *   SHARD_GRADS, SHARD_PARAMS   backward writes each unit's gradient
 *                 into one of two staging buffers, reduce-scattered at
 *                 once (overlapping the next unit), every micro-step,
 *                 into the rank's gradient shard.
 * The update: --clip over the shard, the optimiser on this rank's
 * blocks, and (but SHARD_PARAMS, whose shard is the parameters) the
 * parameters all-gathered.
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "train.h"

#define ZERO_CALIB 5   /* rounds of the calibration */

static const gsync_ops_t zero_ops;

/* ---- the component: reduce-scatter, update, gather ---- */

struct zero {
    const model_t *lay;
    const train_dev_t *dev;
    int level, D, r;
    MPI_Comm comm;
    float *p, *g, *gs;
    wts_t *gw;
    /* grads, params: two staging buffers of a unit's gradient, and (with
     * --accum) two for its reduced block before it is added */
    float *stage[2], *tmp[2];
    int unit[2], add[2];            /* the unit in slot j; its block to add once reduced */
    hpc_request_t *req[TRAIN_MAXL]; /* optim: per unit; grads, params: per slot (0, 1) */
    int armed, first;
    double exposed;
    double blocking;                /* s of a step's collectives done blocking */
};

typedef struct zero zero_t;

double zero_bytes(const model_t *lay, int level, int accum)
{
    double f = (double)lay->shard_n;
    if (level != SHARD_OPTIM) f += 2.0 * (double)lay->unit_most;
    if (level != SHARD_OPTIM && accum > 1) f += 2.0 * (double)lay->unit_most / lay->shards;
    return f * sizeof(float);
}

/* What a step's collectives take done one after the other, blocking (the
 * median of a few rounds, the slowest rank's): what the overlap is
 * measured against.  A step reduce-scatters every unit once (optim) or
 * every micro-step (grads, params) and gathers every unit once (optim,
 * grads) or, with params, every layer before its forward and all but the
 * first and the last again before its backward, every micro-step.  The
 * buffers are all zeros here and stay so. */
static int calibrate(zero_t *z, int accum)
{
    const model_t *m = z->lay;
    int optim = z->level == SHARD_OPTIM, params = z->level == SHARD_PARAMS;
    double t[ZERO_CALIB];
    for (int r = 0; r < ZERO_CALIB; r++) {
        double rs = 0, ag = 0, back = 0;
        MPI_Barrier(z->comm);
        for (int u = 0; u < m->nunits; u++) {
            size_t blk = m->ulen[u] / (size_t)z->D;
            double t0 = hpc_wtime();
            HPC_TRY(hpc_reduce_scatter(optim ? z->g + m->uoff[u] : z->stage[0], z->gs + m->uat[u], blk,
                                       HPC_FLOAT32, HPC_SUM, z->comm, HPC_ALG_AUTO));
            double t1 = hpc_wtime();
            if (params)
                HPC_TRY(hpc_allgather(z->p + m->uat[u], z->stage[0], blk, HPC_FLOAT32, z->comm, HPC_ALG_AUTO));
            else
                HPC_TRY(hpc_allgather(HPC_IN_PLACE, z->p + m->uoff[u], blk, HPC_FLOAT32, z->comm, HPC_ALG_AUTO));
            double t2 = hpc_wtime();
            rs += t1 - t0;
            ag += t2 - t1;
            /* params: a unit is a layer; backward gathers layers 1..nl-2 again */
            if (params && m->ulo[u] > 0 && m->ulo[u] < m->nl - 1) back += t2 - t1;
        }
        t[r] = optim ? rs + ag : z->level == SHARD_GRADS ? accum * rs + ag : accum * (rs + ag + back);
    }
    double med = hpc_median(t, ZERO_CALIB);
    MPI_Allreduce(&med, &z->blocking, 1, MPI_DOUBLE, MPI_MAX, z->comm);
    return 0;
}

int zero_open(gsync_t *out, const model_t *lay, const train_dev_t *dev, int level, float *p, float *g, wts_t *gw,
              MPI_Comm comm, int accum)
{
    zero_t *z = calloc(1, sizeof *z);
    if (!z) return HPC_ERR(HPC_ERR_NOMEM, "sharding");
    *out = (gsync_t){&zero_ops, z};
    z->lay = lay;
    z->dev = dev;
    z->level = level;
    z->p = p;
    z->g = g;
    z->gw = gw;
    z->comm = comm;
    MPI_Comm_size(comm, &z->D);
    MPI_Comm_rank(comm, &z->r);
    z->unit[0] = z->unit[1] = -1;
    if (!(z->gs = dev->alloc(lay->shard_n * sizeof(float)))) return HPC_ERR(HPC_ERR_NOMEM, "gradient shard");
    for (int j = 0; j < 2 && level != SHARD_OPTIM; j++) {
        if (!(z->stage[j] = dev->alloc(lay->unit_most * sizeof(float))))
            return HPC_ERR(HPC_ERR_NOMEM, "gradient staging");
        if (accum > 1 && !(z->tmp[j] = dev->alloc(lay->unit_most / (size_t)z->D * sizeof(float))))
            return HPC_ERR(HPC_ERR_NOMEM, "gradient staging");
    }
    /* the collectives' set-up now, where every rank is, not inside the
     * first nonblocking call */
    HPC_TRY(hpc_coll_setup(comm));
    return z->D > 1 ? calibrate(z, accum) : 0;
}

static void zero_close(void *ctx)
{
    zero_t *z = ctx;
    if (!z) return;
    if (z->gs) z->dev->release(z->gs);
    for (int j = 0; j < 2; j++) {
        if (z->stage[j]) z->dev->release(z->stage[j]);
        if (z->tmp[j]) z->dev->release(z->tmp[j]);
    }
    free(z);
}

/* Advance everything in flight once (libhpc progresses it only inside
 * its calls) */
static void poll(zero_t *z)
{
    int n = z->level == SHARD_OPTIM ? z->lay->nunits : 2;
    for (int k = 0; k < n; k++) {
        int done;
        if (z->req[k] && hpc_test(&z->req[k], &done) < 0) train_coll_fatal("gradient reduce-scatter");
    }
}

/* Staging slot j's reduction is complete (and its block added) */
static void slot_done(zero_t *z, int j)
{
    if (z->req[j] && hpc_wait(&z->req[j]) < 0) train_coll_fatal("gradient reduce-scatter");
    if (z->add[j]) {
        size_t at, len;
        model_block(z->lay, z->unit[j], 0, &at, &len);
        z->dev->add(len, z->gs + z->lay->uat[z->unit[j]], z->tmp[j]);
        z->add[j] = 0;
    }
}

/* Backward is about to write unit u's gradient: its staging slot, once
 * the unit before in that slot is on its way.  Backward overwrites the
 * arrays; what lies between them and the padding must be zeros again
 * (another unit's gradient was there), or the shard's sum of squares and
 * its padding would take them in. */
static void acquire(zero_t *z, int u)
{
    const model_t *m = z->lay;
    int j = u % 2;
    slot_done(z, j);
    z->unit[j] = u;
    float *b = z->stage[j];
    size_t end = 0;   /* the end of the array before, in the unit */
    for (int l = m->uhi[u] - 1; l >= m->ulo[u]; l--) {
        size_t w = m->w[l] - m->uoff[u], bi = m->b[l] - m->uoff[u];
        if (w > end) z->dev->zero(w - end, b + end);
        end = w + (size_t)(m->size[l] * m->size[l + 1]);
        if (bi > end) z->dev->zero(bi - end, b + end);
        end = bi + (size_t)m->size[l + 1];
        z->gw->w[l] = b + w;
        z->gw->b[l] = b + bi;
    }
    if (m->ulen[u] > end) z->dev->zero(m->ulen[u] - end, b + end);
}

static void zero_begin(void *ctx, int arm, int first)
{
    zero_t *z = ctx;
    z->armed = arm;
    z->first = first;
    if (first) z->exposed = 0;
    if (arm && z->level != SHARD_OPTIM) {
        double t0 = hpc_wtime();
        acquire(z, 0);
        z->exposed += hpc_wtime() - t0;
    }
}

/* Unit u's gradient is complete: its reduce-scatter starts */
static void start_unit(zero_t *z, int u)
{
    const model_t *m = z->lay;
    size_t blk = m->ulen[u] / (size_t)z->D;
    float *into = z->gs + m->uat[u];
    int rc;
    if (z->level == SHARD_OPTIM) {
        rc = hpc_ireduce_scatter(z->g + m->uoff[u], into, blk, HPC_FLOAT32, HPC_SUM, z->comm, HPC_ALG_AUTO,
                                 &z->req[u]);
    } else {
        int j = u % 2;
        z->add[j] = !z->first;   /* later micro-steps add to the shard */
        rc = hpc_ireduce_scatter(z->stage[j], z->first ? into : z->tmp[j], blk, HPC_FLOAT32, HPC_SUM, z->comm,
                                 HPC_ALG_AUTO, &z->req[j]);
    }
    if (rc < 0) train_coll_fatal("gradient reduce-scatter");
}

static void zero_layer_done(void *ctx, int l)
{
    zero_t *z = ctx;
    const model_t *m = z->lay;
    if (!z->armed) return;
    double t0 = hpc_wtime();
    int u = m->unit_of[l];
    if (l == m->ulo[u]) {
        start_unit(z, u);
        /* the next layer down opens the next unit */
        if (z->level != SHARD_OPTIM && u + 1 < m->nunits) acquire(z, u + 1);
    }
    poll(z);
    z->exposed += hpc_wtime() - t0;
}

static int zero_finish(void *ctx)
{
    zero_t *z = ctx;
    if (!z->armed) return 0;
    double t0 = hpc_wtime();
    int rc = 0;
    if (z->level == SHARD_OPTIM) {
        rc = hpc_waitall(z->lay->nunits, z->req);
    } else {
        slot_done(z, 0);
        slot_done(z, 1);
        z->unit[0] = z->unit[1] = -1;
    }
    z->armed = 0;
    z->exposed += hpc_wtime() - t0;
    return rc;
}

static double zero_update(void *ctx, const optim_t *opt, double lr, int64_t t, MPI_Comm parts2)
{
    zero_t *z = ctx;
    const model_t *m = z->lay;
    double norm = optim_clip(opt, z->dev, z->gs, 0, m->shard_n, z->comm, parts2);
    if (z->level == SHARD_PARAMS) {   /* the shard is the parameters' */
        optim_update(opt, z->dev, m->shard_n, z->p, z->gs, 0, lr, t);
        return norm;
    }
    for (int u = 0; u < m->nunits; u++) {
        size_t at, len;
        model_block(m, u, z->r, &at, &len);
        optim_update(opt, z->dev, len, z->p + at, z->gs + m->uat[u], m->uat[u], lr, t);
    }
    double t0 = hpc_wtime();
    for (int u = 0; u < m->nunits; u++)
        if (hpc_iallgather(HPC_IN_PLACE, z->p + m->uoff[u], m->ulen[u] / (size_t)z->D, HPC_FLOAT32, z->comm,
                           HPC_ALG_AUTO, &z->req[u]) < 0)
            train_coll_fatal("parameter allgather");
    if (hpc_waitall(m->nunits, z->req) < 0) train_coll_fatal("parameter allgather");
    z->exposed += hpc_wtime() - t0;
    return norm;
}

static double zero_exposed(const void *ctx)
{
    return ((const zero_t *)ctx)->exposed;
}

static double zero_blocking(const void *ctx)
{
    return ((const zero_t *)ctx)->blocking;
}

static const gsync_ops_t zero_ops = {"zero", zero_begin, zero_layer_done, zero_finish, zero_update,
                                     zero_exposed, zero_blocking, zero_close};
