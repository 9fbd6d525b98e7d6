/* shard.c - sharded data parallelism (--shard optim|grads|params: ZeRO
 * stages 1, 2 and 3 of Rajbhandari et al., SC 2020; params is PyTorch
 * FSDP's full shard), over libhpc's reduce_scatter, allgather and
 * nonblocking collectives.
 *
 * The layout (model.c) groups the layers into units - buckets of
 * --bucket-mb for optim and grads, one layer each for params - and pads
 * each unit to a multiple of 16 x D floats: libhpc's reduce_scatter and
 * allgather take equal blocks, so unit u cuts into D blocks of
 * ulen[u] / D floats and rank r owns block r of every unit (its shard:
 * those blocks one after the other).  The padding is zeros and stays
 * zeros (no gradient reaches it, and the optimisers move a zero
 * parameter with zero state by nothing).
 *
 *   optim   (ZeRO-1) every rank holds the parameters and the gradient;
 *           each unit's gradient is reduce-scattered as soon as backward
 *           has finished it (the step's last micro-step: the others sum
 *           in place), each rank updates its blocks with its 1/D of the
 *           optimiser state, and the parameters are all-gathered.
 *   grads   (ZeRO-2) the same, but no rank holds the whole gradient:
 *           backward writes each unit's gradient into one of two staging
 *           buffers, reduce-scattered at once (overlapping the next
 *           unit), every micro-step, into the rank's gradient shard.
 *   params  (ZeRO-3) the parameters live sharded too: each layer's are
 *           all-gathered into one of two buffers just before its forward
 *           and again before its backward, the next layer's gather
 *           started before the current layer computes (prefetch), the
 *           buffer reused as soon as the layer is done.
 *
 * The same training as dp: the same gradients summed in another order
 * (tests/train_shard.sh: every loss within 1e-5 of dp's).  Memory per
 * rank, N floats of the layout, k optimiser states, U the largest unit:
 *   optim   4 N (2 + (1 + k)/D)    grads   4 N (1 + (1 + k)/D) + 8 U
 *   params  4 N (2 + k)/D + 16 U   (dp: 4 N (2 + k))
 * (+ 8 U/D when --accum sums micro-steps into the shard).
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "train.h"

#define ZERO_CALIB 5   /* rounds of the calibration */

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

static void zfatal(const char *what)
{
    /* a collective that fails leaves the other ranks inside theirs */
    hpc_app_fatal(HPC_EXIT_DATA, "%s: %s", what, hpc_last_cause());
}

double zero_bytes(const model_t *lay, int level, int accum)
{
    double f = (double)lay->shard_n;
    if (level != SHARD_OPTIM) f += 2.0 * (double)lay->unit_most;
    if (level != SHARD_OPTIM && accum > 1) f += 2.0 * (double)lay->unit_most / lay->shards;
    return f * sizeof(float);
}

double zero_blocking(const zero_t *z)
{
    return z->blocking;
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

int zero_open(zero_t **out, const model_t *lay, const train_dev_t *dev, int level, float *p, float *g, wts_t *gw,
              MPI_Comm comm, int accum)
{
    zero_t *z = calloc(1, sizeof *z);
    if (!z) return HPC_ERR(HPC_ERR_NOMEM, "sharding");
    *out = z;
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

void zero_close(zero_t *z)
{
    if (!z) return;
    if (z->gs) z->dev->release(z->gs);
    for (int j = 0; j < 2; j++) {
        if (z->stage[j]) z->dev->release(z->stage[j]);
        if (z->tmp[j]) z->dev->release(z->tmp[j]);
    }
    free(z);
}

double zero_exposed(const zero_t *z)
{
    return z->exposed;
}

/* Advance everything in flight once (libhpc progresses it only inside
 * its calls) */
static void poll(zero_t *z)
{
    int n = z->level == SHARD_OPTIM ? z->lay->nunits : 2;
    for (int k = 0; k < n; k++) {
        int done;
        if (z->req[k] && hpc_test(&z->req[k], &done) < 0) zfatal("gradient reduce-scatter");
    }
}

/* Staging slot j's reduction is complete (and its block added) */
static void slot_done(zero_t *z, int j)
{
    if (z->req[j] && hpc_wait(&z->req[j]) < 0) zfatal("gradient reduce-scatter");
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

void zero_begin(zero_t *z, int arm, int first)
{
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
    if (rc < 0) zfatal("gradient reduce-scatter");
}

void zero_layer_done(void *ctx, int l)
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

int zero_finish(zero_t *z)
{
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

double zero_update(zero_t *z, const optim_t *opt, double lr, int64_t t, MPI_Comm parts2)
{
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
            zfatal("parameter allgather");
    if (hpc_waitall(m->nunits, z->req) < 0) zfatal("parameter allgather");
    z->exposed += hpc_wtime() - t0;
    return norm;
}

/* ---- the strategy ---- */

typedef struct {
    int level;
    model_t lay;
    float *p, *g;               /* optim: both whole; grads: p whole; params: p the shard */
    wts_t pw, gw;
    zero_t *z;
    acts_t acts;
    /* params: two buffers of gathered units */
    float *gath[2];
    int gunit[2];
    hpc_request_t *greq[2];
    double lsum;                /* the loss, allreduced while backward runs */
    hpc_request_t *lreq;
    double gather_s;            /* s waiting for gathers, this step */
} shs_t;

static shs_t *st(const train_t *t)
{
    return (shs_t *)t->s;
}

static void layout(const train_opts_t *o, const model_t *m, int D, model_t *lay)
{
    double cap = o->shard == SHARD_PARAMS ? 0 : o->bucket_mb * 1048576.0 / sizeof(float);
    model_layout_part(lay, m->nl, m->size, m->act, 0, m->nl, cap, D);
}

static int check(const train_opts_t *o)
{
    return strategy_dp.check(o);
}

static int fit(train_opts_t *o, int nranks)
{
    return strategy_dp.fit(o, nranks);
}

static void replica(const train_opts_t *o, int rank, int nranks, int *part, int *parts)
{
    strategy_dp.replica(o, rank, nranks, part, parts);
}

static void need(const train_t *t, train_mem_t *out)
{
    model_t lay;
    int level = t->o->shard, rows = (int)t->loader.rank_n;
    layout(t->o, &t->model, hpc_size(), &lay);
    double n = (double)lay.n, sh = (double)lay.shard_n, f = sizeof(float);
    double params = level == SHARD_PARAMS ? sh + 2.0 * (double)lay.unit_most : n;
    double grads = level == SHARD_OPTIM ? n : 0;
    out->model = f * (params + grads + t->o->optim->nstates(t->o) * sh) + zero_bytes(&lay, level, (int)t->o->accum);
    out->acts = (double)(acts_bytes(&t->model, rows, 0, t->model.nl, ACTS_OUT | ACTS_GRAD) +
                         train_batch_bytes(t, rows));
}

static int open_shard(train_t *t)
{
    const train_dev_t *dev = t->dev;
    shs_t *s = calloc(1, sizeof *s);
    if (!s) return HPC_ERR(HPC_ERR_NOMEM, "sharding");
    t->s = s;
    s->level = t->o->shard;
    layout(t->o, &t->model, hpc_size(), &s->lay);
    const model_t *m = &s->lay;
    int rows = (int)t->loader.rank_n, whole = s->level != SHARD_PARAMS, r = hpc_rank();
    size_t np = whole ? m->n : m->shard_n;
    s->p = dev->alloc(np * sizeof(float));
    s->g = s->level == SHARD_OPTIM ? dev->alloc(m->n * sizeof(float)) : NULL;
    for (int j = 0; j < 2 && !whole; j++) {
        s->gath[j] = dev->alloc(m->unit_most * sizeof(float));
        s->gunit[j] = -1;
    }
    int bad = !s->p || (s->level == SHARD_OPTIM && !s->g) || (!whole && (!s->gath[0] || !s->gath[1]));
    if (bad || optim_open(&t->opt, t->o, dev, m->shard_n) < 0 ||
        acts_alloc(&s->acts, &t->model, dev, rows, 0, m->nl, ACTS_OUT | ACTS_GRAD) < 0 ||
        train_batch_alloc(t, rows) < 0)
        return HPC_ERR(HPC_ERR_NOMEM, "out of %s memory for the model", dev->name);
    if (whole) model_wts(m, s->p, &s->pw);
    if (s->g) model_wts(m, s->g, &s->gw);
    t->hold[0] = (hold_t){m, s->p, !whole, r, whole ? r == 0 : 1};
    for (int k = 0; k < t->opt.nstates; k++) t->hold[1 + k] = (hold_t){m, t->opt.state[k], 1, r, 1};
    t->eval_rows = rows;
    t->validates = 1;
    return zero_open(&s->z, m, dev, s->level, s->p, s->g, &s->gw, hpc_comm_world(), (int)t->o->accum);
}

/* ---- params: the gathered layers ---- */

/* Start gathering unit u into the buffer that does not hold keep */
static void prefetch(shs_t *s, int u, int keep)
{
    const model_t *m = &s->lay;
    if (s->gunit[0] == u || s->gunit[1] == u) return;
    int j = s->gunit[0] == keep ? 1 : 0;
    if (s->greq[j] && hpc_wait(&s->greq[j]) < 0) zfatal("parameter allgather");
    s->gunit[j] = u;
    size_t blk = m->ulen[u] / (size_t)m->shards;
    if (hpc_iallgather(s->p + m->uat[u], s->gath[j], blk, HPC_FLOAT32, hpc_comm_world(), HPC_ALG_AUTO,
                       &s->greq[j]) < 0)
        zfatal("parameter allgather");
}

/* Unit u's parameters, gathered (waited for); where they are in pw */
static int gathered(shs_t *s, int u)
{
    const model_t *m = &s->lay;
    double t0 = hpc_wtime();
    prefetch(s, u, -1);
    int j = s->gunit[0] == u ? 0 : 1;
    if (s->greq[j] && hpc_wait(&s->greq[j]) < 0) zfatal("parameter allgather");
    for (int l = m->ulo[u]; l < m->uhi[u]; l++) {
        s->pw.w[l] = s->gath[j] + (m->w[l] - m->uoff[u]);
        s->pw.b[l] = s->gath[j] + (m->b[l] - m->uoff[u]);
    }
    s->gather_s += hpc_wtime() - t0;
    return u;
}

/* The forward of every layer, each gathered just before it, the next
 * one's gather started before it computes */
static void forward(train_t *t, shs_t *s, int rows)
{
    const model_t *m = &s->lay;
    if (s->level != SHARD_PARAMS) {
        model_forward(&t->model, t->dev, &s->pw, &s->acts, rows, 0, m->nl);
        return;
    }
    for (int l = 0; l < m->nl; l++) {
        int u = gathered(s, m->unit_of[l]);
        if (l + 1 < m->nl) prefetch(s, m->unit_of[l + 1], u);
        if (rows) model_forward(&t->model, t->dev, &s->pw, &s->acts, rows, l, l + 1);
    }
}

/* The backward of every layer, each gathered again (but the last, which
 * forward left gathered, and the first, whose input gradient nobody
 * needs) */
static void backward(train_t *t, shs_t *s, int rows, float beta)
{
    const model_t *m = &s->lay;
    if (s->level != SHARD_PARAMS) {
        model_backward(&t->model, t->dev, &s->pw, &s->gw, &s->acts, rows, beta, 0, m->nl, zero_layer_done, s->z);
        return;
    }
    for (int l = m->nl - 1; l >= 0; l--) {
        if (l > 0) {
            int u = gathered(s, m->unit_of[l]);
            if (l - 1 > 0) prefetch(s, m->unit_of[l - 1], u);
        }
        if (model_backward(&t->model, t->dev, &s->pw, &s->gw, &s->acts, rows, beta, l, l + 1, zero_layer_done,
                           s->z)) {   /* its input gradient, in d[1]: the next layer's output gradient */
            float *d = s->acts.d[0];
            s->acts.d[0] = s->acts.d[1];
            s->acts.d[1] = d;
        }
    }
}

static void micro_step(train_t *t, int64_t epoch, int64_t mb, int k)
{
    shs_t *s = st(t);
    const float *x, *y;
    int rows = (int)t->loader.rank_n, last = k == t->o->accum - 1;
    if (loader_batch(&t->loader, epoch, mb, &x, &y) < 0)
        hpc_app_fatal(HPC_EXIT_DATA, "reading the batch: %s", hpc_last_cause());
    train_to_device(t, &x, &y, rows);
    s->acts.a0 = x;
    forward(t, s, rows);
    s->lsum += t->dev->loss(t->o->loss, rows, (int)t->data.nout, model_output(&t->model, &s->acts), y,
                            (float)(1.0 / train_loss_terms(t)), s->acts.d[0]);
    if (last && hpc_iallreduce(HPC_IN_PLACE, &s->lsum, 1, HPC_FLOAT64, HPC_SUM, hpc_comm_world(), HPC_ALG_AUTO,
                               &s->lreq) < 0)
        zfatal("the loss");
    /* optim: micro-steps sum in place, the last reduces; grads and
     * params: each reduces into the shard */
    int optim = s->level == SHARD_OPTIM;
    zero_begin(s->z, optim ? last : 1, k == 0);
    backward(t, s, rows, optim && k ? 1.0f : 0.0f);
    if (zero_finish(s->z) < 0) zfatal("gradient reduce-scatter");
}

static int step(train_t *t)
{
    shs_t *s = st(t);
    int64_t epoch = t->step / t->steps_per_epoch;
    int64_t mb = (t->step % t->steps_per_epoch) * t->o->accum;
    s->lsum = 0;
    s->gather_s = 0;
    for (int k = 0; k < t->o->accum; k++) micro_step(t, epoch, mb + k, k);
    double t0 = hpc_wtime();
    if (hpc_wait(&s->lreq) < 0) zfatal("the loss");
    t->train_loss = s->lsum / train_loss_terms(t);
    t->step_comm = hpc_wtime() - t0;
    if (!isfinite(t->train_loss)) return -1;
    double lr = sched_lr(t->o, t->step, t->total);
    t->grad_norm = zero_update(s->z, &t->opt, lr, t->step + 1, MPI_COMM_NULL);
    t->step_comm += zero_exposed(s->z) + s->gather_s;
    t->step_blocking = zero_blocking(s->z);
    for (int j = 0; j < 2; j++) {   /* what was gathered is the old parameters */
        if (s->greq[j] && hpc_wait(&s->greq[j]) < 0) zfatal("parameter allgather");
        s->gunit[j] = -1;
    }
    return 0;
}

static const float *eval(train_t *t, const float *x, int rows)
{
    shs_t *s = st(t);
    s->acts.a0 = x;
    forward(t, s, rows);
    return rows ? model_output(&t->model, &s->acts) : NULL;
}

static int in_sync(train_t *t, int *same)
{
    shs_t *s = st(t);
    *same = 1;   /* params: no two ranks hold the same parameters */
    if (s->level == SHARD_PARAMS) return 0;
    return train_buffers_same(t, s->p, s->lay.n, hpc_comm_world(), same);
}

static void summary(train_t *t, char *buf, size_t len)
{
    static const char *name[] = {"", "optim (ZeRO-1)", "grads (ZeRO-2)", "params (ZeRO-3)"};
    shs_t *s = st(t);
    /* what this rank allocated for the optimiser against dp's whole */
    char mine[32], whole[32];
    hpc_format_bytes(4.0 * t->opt.nstates * (double)t->opt.n, mine, sizeof mine);
    hpc_format_bytes(4.0 * t->opt.nstates * (double)t->model.n, whole, sizeof whole);
    snprintf(buf, len, "; sharded %s over %d rank%s: optimiser state %s a rank (unsharded %s)", name[s->level],
             hpc_size(), hpc_size() > 1 ? "s" : "", mine, whole);
}

static void finish(train_t *t)
{
    (void)t;
}

static void close_shard(train_t *t)
{
    shs_t *s = st(t);
    if (!s) return;
    zero_close(s->z);
    acts_free(&s->acts, t->dev);
    if (s->p) t->dev->release(s->p);
    if (s->g) t->dev->release(s->g);
    for (int j = 0; j < 2; j++) {
        if (s->greq[j]) hpc_wait(&s->greq[j]);
        if (s->gath[j]) t->dev->release(s->gath[j]);
    }
    free(s);
    t->s = NULL;
}

const strategy_t strategy_shard = {"shard", check, fit, replica, need, open_shard, step, strategy_stop_agreed,
                                   eval, in_sync, summary, finish, close_shard};
