/* strat_dp.c - data parallelism (--parallel dp), as PyTorch's
 * DistributedDataParallel: every rank holds the whole model, its
 * gradients and optimiser state, takes its slice of each global batch
 * (loader.c), and the gradients are averaged by bucket allreduces that
 * overlap backward (dp.c).
 *
 * A step: --accum micro-steps, each forward, loss and backward over this
 * rank's slice of a global batch, gradients summed in place (beta 1) and
 * reduced only on the last micro-step; the step's loss rides in the pad
 * of the first bucket; then the optimiser steps.  The buckets are the
 * step's only collective: the stop vote travels while the next step
 * computes (hpc_app_stop_vote), so a signal stops every rank after the
 * step that follows the one it came in, at the same step on every rank
 * (a blocking agreement after each step lined the ranks up once more
 * per step: issue 29).
 *
 * Memory per rank: 4 N (2 + k) bytes of model state (N floats of the
 * layout: parameters, gradients and k optimiser states), activations of
 * its slice of the batch.
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "train.h"

typedef struct {
    float *p, *g;
    wts_t pw, gw;
    dp_t dp;
    acts_t acts;
    hpc_stop_vote_t *vote;   /* the stop, agreed a step late */
} dps_t;

static dps_t *ddp_state(const train_t *t)
{
    return (dps_t *)t->s;
}

static void ddp_need(const train_t *t, train_mem_t *out)
{
    const model_t *m = &t->model;
    int rows = (int)t->loader.rank_n;
    out->model = (double)m->n * sizeof(float) * (2 + t->o->optim->nstates(t->o));
    out->acts = (double)(acts_bytes(m, rows, 0, m->nl, ACTS_OUT | ACTS_GRAD) + train_batch_bytes(t, rows));
}

static int ddp_open(train_t *t)
{
    const train_dev_t *dev = t->dev;
    dps_t *s = calloc(1, sizeof *s);
    if (!s) return HPC_ERR(HPC_ERR_NOMEM, "data parallelism");
    t->s = s;
    const model_t *m = &t->model;
    int rows = (int)t->loader.rank_n;
    s->p = dev->alloc(m->n * sizeof(float));
    s->g = dev->alloc(m->n * sizeof(float));
    if (!s->p || !s->g || optim_open(&t->opt, t->o, dev, m->n) < 0 ||
        acts_alloc(&s->acts, m, dev, rows, 0, m->nl, ACTS_OUT | ACTS_GRAD) < 0 || train_batch_alloc(t, rows) < 0)
        return HPC_ERR(HPC_ERR_NOMEM, "out of %s memory for the model", dev->name);
    model_wts(m, s->p, &s->pw);
    model_wts(m, s->g, &s->gw);
    t->hold[0] = (hold_t){m, s->p, 0, 0, hpc_rank() == 0};
    for (int k = 0; k < t->opt.nstates; k++) t->hold[1 + k] = (hold_t){m, t->opt.state[k], 0, 0, hpc_rank() == 0};
    t->eval_rows = rows;
    t->validates = 1;
    HPC_TRY(dp_open(&s->dp, m, dev, s->p, s->g, t->o->bucket_mb, t->o->alg, hpc_comm_world()));
    HPC_TRY(hpc_app_stop_vote_open(hpc_comm_world(), &s->vote));
    /* dp_finish waits for backward on the GPU before it times the wait */
    s->dp.sync_compute = t->dev->sync_compute;
    return 0;
}

static void ddp_micro_step(train_t *t, int64_t epoch, int64_t mb, int k, double *lsum)
{
    dps_t *s = ddp_state(t);
    const float *x, *y;
    int rows = (int)t->loader.rank_n;
    if (loader_batch(&t->loader, epoch, mb, &x, &y) < 0)
        hpc_app_fatal(HPC_EXIT_DATA, "reading the batch: %s", hpc_last_cause());
    train_to_device(t, &x, &y, rows);
    s->acts.a0 = x;
    model_forward(&t->model, t->dev, &s->pw, &s->acts, rows, 0, t->model.nl);
    *lsum += t->dev->loss(t->o->loss, rows, (int)t->data.nout, model_output(&t->model, &s->acts), y,
                          (float)(1.0 / train_loss_terms(t)), s->acts.d[0]);
    int last = k == t->o->accum - 1;
    dp_begin(&s->dp, last);
    if (last && s->dp.size > 1) {   /* the loss rides in slot 0 with bucket 0 */
        float l = (float)*lsum;
        t->dev->to_dev(s->g, &l, sizeof l);
    }
    model_backward(&t->model, t->dev, &s->pw, &s->gw, &s->acts, rows, k ? 1.0f : 0.0f, 0, t->model.nl,
                   dp_layer_done, &s->dp);
}

static int ddp_step(train_t *t)
{
    dps_t *s = ddp_state(t);
    int64_t epoch = t->step / t->steps_per_epoch;
    int64_t mb = (t->step % t->steps_per_epoch) * t->o->accum;
    double lsum = 0;
    s->dp.exposed = 0;
    for (int k = 0; k < t->o->accum; k++) ddp_micro_step(t, epoch, mb + k, k, &lsum);
    if (dp_finish(&s->dp) < 0) hpc_app_fatal(HPC_EXIT_DATA, "gradient allreduce: %s", hpc_last_cause());
    if (s->dp.size > 1) {
        float l;
        t->dev->to_host(&l, s->g, sizeof l);
        lsum = l;
    }
    t->step_comm = s->dp.exposed;
    t->step_blocking = s->dp.calib;
    t->train_loss = lsum / train_loss_terms(t);
    if (!isfinite(t->train_loss)) return -1;
    double lr = sched_lr(t->o, t->step, t->total);
    t->grad_norm = optim_step(&t->opt, t->dev, s->p, s->g, t->model.n, lr, t->step + 1);
    return 0;
}

/* the vote of the step before, and this step's sent.  The test hook
 * HPC_TRAIN_TEST_BLOCKING_STOP=1 agrees after every step instead, as
 * before issue 29 (for benchmarks that compare the two in one run). */
static int ddp_stop(train_t *t)
{
    static int64_t blocking = -1;
    if (blocking < 0 && hpc_app_test_hook("HPC_TRAIN_TEST_BLOCKING_STOP", 1, &blocking) != 1) blocking = 0;
    return blocking ? strategy_stop_agreed(t) : hpc_app_stop_vote(ddp_state(t)->vote);
}

static const float *ddp_eval(train_t *t, const float *x, int rows)
{
    dps_t *s = ddp_state(t);
    s->acts.a0 = x;
    model_forward(&t->model, t->dev, &s->pw, &s->acts, rows, 0, t->model.nl);
    return model_output(&t->model, &s->acts);
}

static int ddp_in_sync(train_t *t, int *same)
{
    return train_buffers_same(t, ddp_state(t)->p, t->model.n, hpc_comm_world(), same);
}

static void ddp_summary(train_t *t, char *buf, size_t len)
{
    (void)t;
    if (len) buf[0] = 0;
}

static void ddp_finish(train_t *t)
{
    (void)t;
}

static void ddp_close(train_t *t)
{
    dps_t *s = ddp_state(t);
    if (!s) return;
    hpc_app_stop_vote_close(s->vote);   /* the last step's, in flight */
    dp_close(&s->dp);
    acts_free(&s->acts, t->dev);
    if (s->p) t->dev->release(s->p);
    if (s->g) t->dev->release(s->g);
    free(s);
    t->s = NULL;
}

/* dp takes every option that is not another strategy's (strategy.c) */
const strategy_t strategy_dp = {"dp",        NULL,        strat_fit_replicas, strat_replica_each, ddp_need,
                                ddp_open,    ddp_step,    ddp_stop,           ddp_eval,           ddp_in_sync,
                                ddp_summary, ddp_finish,  ddp_close};
