/* strat_shard.c - sharded data parallelism (--shard optim|grads|params:
 * ZeRO stages 1, 2 and 3 of Rajbhandari et al., SC 2020; params is
 * PyTorch FSDP's full shard), the strategy: the data-parallel ranks'
 * micro-steps around zero.c, which reduce-scatters the gradient, updates
 * each rank's blocks and gathers the parameters (the layout and its
 * units: zero.c's header).  Units are buckets of --bucket-mb for optim
 * and grads, one layer each for params.
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
 *           buffer reused as soon as the layer is done (this file).
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

typedef struct {
    int level;
    model_t lay;
    float *p, *g;               /* optim: both whole; grads: p whole; params: p the shard */
    wts_t pw, gw;
    gsync_t sync;               /* zero.c */
    acts_t acts;
    /* params: two buffers of gathered units */
    float *gath[2];
    int gunit[2];
    hpc_request_t *greq[2];
    double lsum;                /* the loss, allreduced while backward runs */
    hpc_request_t *lreq;
    double gather_s;            /* s waiting for gathers, this step */
} shs_t;

static shs_t *shard_state(const train_t *t)
{
    return (shs_t *)t->s;
}

static void shard_layout(const train_opts_t *o, const model_t *m, int D, model_t *lay)
{
    double cap = o->shard == SHARD_PARAMS ? 0 : o->bucket_mb * 1048576.0 / sizeof(float);
    model_layout_part(lay, m->nl, m->size, m->act, 0, m->nl, cap, D);
}

static void shard_need(const train_t *t, train_mem_t *out)
{
    model_t lay;
    int level = t->o->shard, rows = (int)t->loader.rank_n;
    shard_layout(t->o, &t->model, hpc_size(), &lay);
    double n = (double)lay.n, sh = (double)lay.shard_n, f = sizeof(float);
    double params = level == SHARD_PARAMS ? sh + 2.0 * (double)lay.unit_most : n;
    double grads = level == SHARD_OPTIM ? n : 0;
    out->model = f * (params + grads + t->o->optim->nstates(t->o) * sh) + zero_bytes(&lay, level, (int)t->o->accum);
    out->acts = (double)(acts_bytes(&t->model, rows, 0, t->model.nl, ACTS_OUT | ACTS_GRAD) +
                         train_batch_bytes(t, rows));
}

static int shard_open(train_t *t)
{
    const train_dev_t *dev = t->dev;
    shs_t *s = calloc(1, sizeof *s);
    if (!s) return HPC_ERR(HPC_ERR_NOMEM, "sharding");
    t->s = s;
    s->level = t->o->shard;
    shard_layout(t->o, &t->model, hpc_size(), &s->lay);
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
    return zero_open(&s->sync, m, dev, s->level, s->p, s->g, &s->gw, hpc_comm_world(), (int)t->o->accum);
}

/* ---- params: the gathered layers ---- */

/* Start gathering unit u into the buffer that does not hold keep */
static void shard_prefetch(shs_t *s, int u, int keep)
{
    const model_t *m = &s->lay;
    if (s->gunit[0] == u || s->gunit[1] == u) return;
    int j = s->gunit[0] == keep ? 1 : 0;
    if (s->greq[j] && hpc_wait(&s->greq[j]) < 0) train_coll_fatal("parameter allgather");
    s->gunit[j] = u;
    size_t blk = m->ulen[u] / (size_t)m->shards;
    if (hpc_iallgather(s->p + m->uat[u], s->gath[j], blk, HPC_FLOAT32, hpc_comm_world(), HPC_ALG_AUTO,
                       &s->greq[j]) < 0)
        train_coll_fatal("parameter allgather");
}

/* Unit u's parameters, gathered (waited for); where they are in pw */
static int shard_gathered(shs_t *s, int u)
{
    const model_t *m = &s->lay;
    double t0 = hpc_wtime();
    shard_prefetch(s, u, -1);
    int j = s->gunit[0] == u ? 0 : 1;
    if (s->greq[j] && hpc_wait(&s->greq[j]) < 0) train_coll_fatal("parameter allgather");
    for (int l = m->ulo[u]; l < m->uhi[u]; l++) {
        s->pw.w[l] = s->gath[j] + (m->w[l] - m->uoff[u]);
        s->pw.b[l] = s->gath[j] + (m->b[l] - m->uoff[u]);
    }
    s->gather_s += hpc_wtime() - t0;
    return u;
}

/* The forward of every layer, each gathered just before it, the next
 * one's gather started before it computes */
static void shard_forward(train_t *t, shs_t *s, int rows)
{
    const model_t *m = &s->lay;
    if (s->level != SHARD_PARAMS) {
        model_forward(&t->model, t->dev, &s->pw, &s->acts, rows, 0, m->nl);
        return;
    }
    for (int l = 0; l < m->nl; l++) {
        int u = shard_gathered(s, m->unit_of[l]);
        if (l + 1 < m->nl) shard_prefetch(s, m->unit_of[l + 1], u);
        if (rows) model_forward(&t->model, t->dev, &s->pw, &s->acts, rows, l, l + 1);
    }
}

/* The backward of every layer, each gathered again (but the last, which
 * forward left gathered, and the first, whose input gradient nobody
 * needs) */
static void shard_backward(train_t *t, shs_t *s, int rows, float beta)
{
    const model_t *m = &s->lay;
    if (s->level != SHARD_PARAMS) {
        model_backward(&t->model, t->dev, &s->pw, &s->gw, &s->acts, rows, beta, 0, m->nl, s->sync.ops->layer_done,
                       s->sync.ctx);
        return;
    }
    for (int l = m->nl - 1; l >= 0; l--) {
        if (l > 0) {
            int u = shard_gathered(s, m->unit_of[l]);
            if (l - 1 > 0) shard_prefetch(s, m->unit_of[l - 1], u);
        }
        if (model_backward(&t->model, t->dev, &s->pw, &s->gw, &s->acts, rows, beta, l, l + 1,
                           s->sync.ops->layer_done, s->sync.ctx)) {   /* its input gradient, in d[1]: the next layer's output gradient */
            float *d = s->acts.d[0];
            s->acts.d[0] = s->acts.d[1];
            s->acts.d[1] = d;
        }
    }
}

static void shard_micro_step(train_t *t, int64_t epoch, int64_t mb, int k)
{
    shs_t *s = shard_state(t);
    const float *x, *y;
    int rows = (int)t->loader.rank_n, last = k == t->o->accum - 1;
    if (loader_batch(&t->loader, epoch, mb, &x, &y) < 0)
        hpc_app_fatal(HPC_EXIT_DATA, "reading the batch: %s", hpc_last_cause());
    train_to_device(t, &x, &y, rows);
    s->acts.a0 = x;
    shard_forward(t, s, rows);
    s->lsum += t->dev->loss(t->o->loss, rows, (int)t->data.nout, model_output(&t->model, &s->acts), y,
                            (float)(1.0 / train_loss_terms(t)), s->acts.d[0]);
    if (last && hpc_iallreduce(HPC_IN_PLACE, &s->lsum, 1, HPC_FLOAT64, HPC_SUM, hpc_comm_world(), HPC_ALG_AUTO,
                               &s->lreq) < 0)
        train_coll_fatal("the loss");
    /* optim: micro-steps sum in place, the last reduces; grads and
     * params: each reduces into the shard */
    int optim = s->level == SHARD_OPTIM;
    s->sync.ops->begin(s->sync.ctx, optim ? last : 1, k == 0);
    shard_backward(t, s, rows, optim && k ? 1.0f : 0.0f);
    if (s->sync.ops->finish(s->sync.ctx) < 0) train_coll_fatal("gradient reduce-scatter");
}

static int shard_step(train_t *t)
{
    shs_t *s = shard_state(t);
    int64_t epoch = t->step / t->steps_per_epoch;
    int64_t mb = (t->step % t->steps_per_epoch) * t->o->accum;
    s->lsum = 0;
    s->gather_s = 0;
    for (int k = 0; k < t->o->accum; k++) shard_micro_step(t, epoch, mb + k, k);
    double t0 = hpc_wtime();
    if (hpc_wait(&s->lreq) < 0) train_coll_fatal("the loss");
    t->train_loss = s->lsum / train_loss_terms(t);
    t->step_comm = hpc_wtime() - t0;
    if (!isfinite(t->train_loss)) return -1;
    double lr = sched_lr(t->o, t->step, t->total);
    t->grad_norm = s->sync.ops->update(s->sync.ctx, &t->opt, lr, t->step + 1, MPI_COMM_NULL);
    t->step_comm += s->sync.ops->exposed(s->sync.ctx) + s->gather_s;
    t->step_blocking = s->sync.ops->blocking(s->sync.ctx);
    for (int j = 0; j < 2; j++) {   /* what was gathered is the old parameters */
        if (s->greq[j] && hpc_wait(&s->greq[j]) < 0) train_coll_fatal("parameter allgather");
        s->gunit[j] = -1;
    }
    return 0;
}

static const float *shard_eval(train_t *t, const float *x, int rows)
{
    shs_t *s = shard_state(t);
    s->acts.a0 = x;
    shard_forward(t, s, rows);
    return rows ? model_output(&t->model, &s->acts) : NULL;
}

static int shard_in_sync(train_t *t, int *same)
{
    shs_t *s = shard_state(t);
    *same = 1;   /* params: no two ranks hold the same parameters */
    if (s->level == SHARD_PARAMS) return 0;
    return train_buffers_same(t, s->p, s->lay.n, hpc_comm_world(), same);
}

static void shard_summary(train_t *t, char *buf, size_t len)
{
    static const char *name[] = {"", "optim (ZeRO-1)", "grads (ZeRO-2)", "params (ZeRO-3)"};
    shs_t *s = shard_state(t);
    /* what this rank allocated for the optimiser against dp's whole */
    char mine[32], whole[32];
    hpc_format_bytes(4.0 * t->opt.nstates * (double)t->opt.n, mine, sizeof mine);
    hpc_format_bytes(4.0 * t->opt.nstates * (double)t->model.n, whole, sizeof whole);
    snprintf(buf, len, "; sharded %s over %d rank%s: optimiser state %s a rank (unsharded %s)", name[s->level],
             hpc_size(), hpc_size() > 1 ? "s" : "", mine, whole);
}

static void shard_finish(train_t *t)
{
    (void)t;
}

static void shard_close(train_t *t)
{
    shs_t *s = shard_state(t);
    if (!s) return;
    if (s->sync.ops) s->sync.ops->close(s->sync.ctx);
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

/* the data-parallel ranks' options, fit and slices, as dp's */
const strategy_t strategy_shard = {"shard",        NULL,          strat_fit_replicas, strat_replica_each,
                                   shard_need,     shard_open,    shard_step,         strategy_stop_agreed,
                                   shard_eval,     shard_in_sync, shard_summary,      shard_finish,
                                   shard_close};
