/* pipe.c - pipeline parallelism, the strategy: the layers split into S
 * stages on consecutive ranks, each global batch into M micro-batches
 * that flow through them (--parallel pipe), and D data-parallel replicas
 * of such a pipeline (--parallel hybrid: D x S ranks, rank r is stage
 * r % S of replica r / S).
 *
 * A stage holds its own layers only: their parameters, gradients and
 * optimiser state in a layout of layers [lo, hi) (model.c), its stashed
 * versions and predicted weights (pipe_stale.c), its activations.  It
 * initialises its layers from their streams and writes them to the one
 * checkpoint itself (hold.c), so no rank ever needs the whole model.
 * With replicas, each stage's gradients are allreduced over the replicas
 * by dp.c during the step's last backward, or with --shard optim
 * reduce-scattered and the optimiser state divided among the replicas
 * (zero.c): either behind the gradient-synchronisation table (gsync_t).
 *
 * This file: the options, the plan (partition, layout, what a stage
 * holds), opening and closing, the replica check and the summary; the
 * run of a step is pipe_run.c's.
 */
#include "config.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "pipe.h"

/* ---- options ---- */

static int pipe_check(const train_opts_t *o)
{
    /* the options of other strategies and schedules: strategy.c's table */
    const pipe_sched_t *row = &pipe_scheds[o->pipe_sched];
    if (o->parallel == PAR_HYBRID && !o->stages)
        return HPC_ERR(HPC_ERR_ARG, "--parallel hybrid needs --stages S (replicas: the ranks / S)");
    if (o->parallel == PAR_HYBRID && row->async)
        return HPC_ERR(HPC_ERR_ARG, "--pipe-schedule %s is not for --parallel hybrid (its stages step alone)", row->name);
    if (row->async && o->clip > 0)
        return HPC_ERR(HPC_ERR_ARG, "--clip is not for --pipe-schedule %s (its stages step alone: no global norm)", row->name);
    if (o->predict && (!o->optim->predict || o->optim->nstates(o) == 0))
        return HPC_ERR(HPC_ERR_ARG, "--weight-prediction needs momentum: --optim adam/adamw or --momentum");
    if (o->shard && o->parallel == PAR_PIPE)
        return HPC_ERR(HPC_ERR_ARG, "--shard divides among data-parallel replicas, and --parallel pipe has none "
                 "(--parallel hybrid --shard optim)");
    if (o->shard > SHARD_OPTIM)
        return HPC_ERR(HPC_ERR_ARG, "--shard %s is not for pipelines (each micro-batch's backward adds to the stage's "
                 "gradient, which a stage must hold whole; --shard optim composes)",
                 o->shard == SHARD_GRADS ? "grads" : "params");
    return 0;
}

static int pipe_fit(train_opts_t *o, int nranks)
{
    if (!o->stages) o->stages = nranks;
    int S = o->stages;
    if (S > o->nlayers)
        return HPC_ERR(HPC_ERR_ARG, "--stages %d is more than the %d layers: every stage needs a layer", S, o->nlayers);
    if (S > nranks)
        return HPC_ERR(HPC_ERR_ARG, "--stages %d is more than the %d ranks", S, nranks);
    if (o->parallel == PAR_PIPE && S != nranks)
        return HPC_ERR(HPC_ERR_ARG, "--parallel pipe: --stages %d on %d ranks (one stage a rank; replicas: "
                 "--parallel hybrid)", S, nranks);
    if (nranks % S)
        return HPC_ERR(HPC_ERR_ARG, "--parallel hybrid: D x S must be the %d ranks, but %d is not a multiple of "
                 "--stages %d", nranks, nranks, S);
    if (o->npart) {
        int64_t sum = 0;
        for (int i = 0; i < o->npart; i++) sum += o->partition[i];
        if (o->npart != S || sum != o->nlayers)
            return HPC_ERR(HPC_ERR_ARG, "--partition: %d stages of %lld layers, but --stages is %d and the model has "
                     "%d layers", o->npart, (long long)sum, S, o->nlayers);
    }
    int replicas = nranks / S;
    if (o->batch < (int64_t)replicas * o->micro)
        return HPC_ERR(HPC_ERR_ARG, "--batch %lld is smaller than %d replica%s x --micro %d: every micro-batch needs "
                 "a sample", (long long)o->batch, replicas, replicas > 1 ? "s" : "", (int)o->micro);
    return 0;
}

static void pipe_replica(const train_opts_t *o, int rank, int nranks, int *part, int *parts)
{
    *parts = nranks / o->stages;
    *part = rank / o->stages;
}

/* ---- the plan: what stage s of a replica holds ---- */

typedef struct {
    int S, D, s, d, lo, hi, M, rows_most, nslots;
    int first[TRAIN_MAXL + 1];
    model_t lay;
    size_t in, out, wide;        /* floats of a micro-batch's input, output, widest */
} plan_t;

static void pipe_partition(const train_t *t, int S, int *first)
{
    if (t->o->npart) {
        first[0] = 0;
        for (int s = 0; s < S; s++) first[s + 1] = first[s] + (int)t->o->partition[s];
    } else {
        pipe_partition_balanced(&t->model, S, first);
    }
}

static void pipe_plan(const train_t *t, int rank, plan_t *p)
{
    const train_opts_t *o = t->o;
    const model_t *m = &t->model;
    memset(p, 0, sizeof *p);
    p->S = o->stages;
    p->D = hpc_size() / p->S;
    p->s = rank % p->S;
    p->d = rank / p->S;
    pipe_partition(t, p->S, p->first);
    p->lo = p->first[p->s];
    p->hi = p->first[p->s + 1];
    p->M = o->micro;
    /* --shard optim: units of --bucket-mb, padded for the replicas */
    double cap = o->bucket_mb * 1048576.0 / sizeof(float);
    model_layout_part(&p->lay, m->nl, m->size, m->act, p->lo, p->hi, cap, o->shard ? p->D : 1);
    int64_t lo, n;
    hpc_block_range(t->loader.rank_n, p->M, 0, &lo, &n);
    p->rows_most = (int)n;
    int most = pipe_alive_most(o->pipe_sched, p->S, p->s, p->M);
    p->nslots = most + 1 < p->M ? most + 1 : p->M;
    /* the stale stream runs the next step's first forwards before this
     * step's backwards: min(S-s-1, M) ahead and the one in flight, which
     * with fewer micro-batches than stages ahead (--micro 1) is more
     * than one step's M */
    int ahead = p->S - p->s - 1 < p->M ? p->S - p->s - 1 : p->M;
    if (pipe_scheds[o->pipe_sched].async && p->nslots < ahead + 1) p->nslots = ahead + 1;
    p->in = (size_t)p->rows_most * m->size[p->lo];
    p->out = (size_t)p->rows_most * m->size[p->hi];
    int64_t w = 0;
    for (int l = p->lo; l <= p->hi; l++) w = m->size[l] > w ? m->size[l] : w;
    p->wide = (size_t)p->rows_most * w;
}

static void pipe_need(const train_t *t, train_mem_t *out)
{
    const train_opts_t *o = t->o;
    plan_t p;
    pipe_plan(t, hpc_rank(), &p);
    const model_t *m = &p.lay;
    int rec = o->recompute, gpu = o->device != DEV_CPU, last = p.s == p.S - 1;
    double f = sizeof(float), ns = o->optim->nstates(o);
    double model = f * (2.0 * m->n + ns * (o->shard ? m->shard_n : m->n));
    if (o->shard) model += zero_bytes(m, SHARD_OPTIM, 1);
    if (pipe_scheds[o->pipe_sched].async) model += stale_bytes(o, m, p.nslots, gpu);
    double acts = (double)p.nslots * ((rec ? 0 : acts_bytes(&t->model, p.rows_most, p.lo, p.hi, ACTS_OUT)) +
                                      f * p.in * (gpu ? 2 : 1) + (last ? 0 : f * p.out));
    acts += acts_bytes(&t->model, p.rows_most, p.lo, p.hi, ACTS_GRAD | (rec ? ACTS_OUT : 0));
    acts += f * PIPE_RING * ((last ? 0 : p.wide + PIPE_EXTRA) + (p.s ? p.in + PIPE_EXTRA : 0));
    acts += acts_bytes(&t->model, p.rows_most, p.lo, p.hi, ACTS_OUT) + f * (p.in * (gpu ? 2 : 1) + p.out);
    out->model = model;
    out->acts = acts + (double)train_batch_bytes(t, p.rows_most);
}

/* ---- set-up ---- */

static int msg_alloc(pipe_msg_t *m, const train_dev_t *dev, size_t floats, int need_dev)
{
    m->req = MPI_REQUEST_NULL;
    m->host = calloc(floats ? floats : 1, sizeof(float));
    m->dev = need_dev && dev != train_dev_cpu() ? dev->alloc(floats * sizeof(float)) : m->host;
    return m->host && m->dev ? 0 : -1;
}

static void msg_free(pipe_msg_t *m, const train_dev_t *dev)
{
    if (m->host && m->dev && m->dev != m->host) dev->release(m->dev);
    free(m->host);
    m->dev = m->host = NULL;
}

/* The slots (one per micro-batch that can be alive, and one more so
 * that the next input's receive is posted early), message buffers, the
 * validation's activations */
static int pipe_buffers(pipeline_t *pp, const train_t *t, const plan_t *p)
{
    const model_t *m = &t->model;
    const train_dev_t *dev = t->dev;
    int rows = pp->rows_most, rec = t->o->recompute, last = pp->s == pp->S - 1;
    pp->nslots = p->nslots;
    pp->slot = calloc((size_t)pp->nslots, sizeof *pp->slot);
    if (!pp->slot) return -1;
    /* the gradient buffers of every backward; --recompute: the activations too */
    int what = ACTS_GRAD | (rec ? ACTS_OUT : 0);
    if (acts_alloc(&pp->work, m, dev, rows, pp->lo, pp->hi, what) < 0) return -1;
    pp->scratch[0] = pp->work.d[0];   /* acts_for points d[] elsewhere at times */
    pp->scratch[1] = pp->work.d[1];
    for (int k = 0; k < pp->nslots; k++) {
        pipe_slot_t *sl = &pp->slot[k];
        sl->mb = -1;
        if (!rec && acts_alloc(&sl->acts, m, dev, rows, pp->lo, pp->hi, ACTS_OUT) < 0) return -1;
        sl->acts.lo = pp->lo;
        if (msg_alloc(&sl->in, dev, p->in, 1) < 0) return -1;   /* stage 0: a copy of the data */
        if (!last && msg_alloc(&sl->out, dev, p->out, 0) < 0) return -1;
        sl->in.req = sl->out.req = MPI_REQUEST_NULL;   /* also where nothing is sent */
    }
    pp->slot_bytes = (rec ? 0 : pp->slot[0].acts.bytes) + p->in * sizeof(float);
    for (int k = 0; k < PIPE_RING; k++) {
        if (!last && msg_alloc(&pp->grad[k], dev, p->wide + PIPE_EXTRA, 0) < 0) return -1;
        if (pp->s > 0 && msg_alloc(&pp->dx[k], dev, p->in + PIPE_EXTRA, 0) < 0) return -1;
        pp->grad[k].req = pp->dx[k].req = MPI_REQUEST_NULL;
    }
    if (acts_alloc(&pp->eval, m, dev, rows, pp->lo, pp->hi, ACTS_OUT) < 0) return -1;
    if (msg_alloc(&pp->eval_in, dev, p->in, 1) < 0 || msg_alloc(&pp->eval_out, dev, p->out, 0) < 0) return -1;
    return 0;
}

static void pipe_recorder(pipeline_t *pp)
{
    /* the timeline: a few steps after the first (which pays the page
     * faults), at most 4096 operations of a stage */
    pp->rec_steps = 3;
    pp->caprec = 2 * pp->M * pp->rec_steps < 4096 ? 2 * pp->M * pp->rec_steps : 4096;
    pp->rec = calloc((size_t)pp->caprec, sizeof *pp->rec);
}

/* The stage's parameters, gradients and optimiser state, and what a
 * checkpoint and a fresh start see of them */
static int pipe_model_state(pipeline_t *pp, train_t *t)
{
    const train_dev_t *dev = t->dev;
    const model_t *m = &pp->lay;
    int writes = pp->d == 0, shard = t->o->shard != SHARD_NONE;
    pp->p = dev->alloc(m->n * sizeof(float));
    pp->g = dev->alloc(m->n * sizeof(float));
    if (!pp->p || !pp->g || optim_open(&t->opt, t->o, dev, shard ? m->shard_n : m->n) < 0) return -1;
    model_wts(m, pp->p, &pp->pw);
    model_wts(m, pp->g, &pp->gw);
    t->hold[0] = (hold_t){m, pp->p, 0, 0, writes};
    for (int k = 0; k < t->opt.nstates; k++)   /* sharded: every replica its blocks */
        t->hold[1 + k] = (hold_t){m, t->opt.state[k], shard, pp->d, shard ? 1 : writes};
    return 0;
}

/* the stage's communicators: rows of the grid are replicas, columns stages */
static int pipe_comms(pipeline_t *pp)
{
    hpc_grid_t *grid;
    HPC_TRY(hpc_grid_create(hpc_comm_world(), pp->D, pp->S, &grid));
    MPI_Comm_dup(hpc_grid_row_comm(grid), &pp->pipe_comm);
    MPI_Comm_dup(hpc_grid_col_comm(grid), &pp->rep_comm);
    int s = hpc_grid_col(grid), d = hpc_grid_row(grid);
    hpc_grid_free(grid);
    if (s != pp->s || d != pp->d) return HPC_ERR(HPC_ERR_MISMATCH, "stage %d of replica %d, the grid says %d of %d",
                                                 pp->s, pp->d, s, d);
    pp->prev = pp->s > 0 ? pp->s - 1 : MPI_PROC_NULL;
    pp->next = pp->s < pp->S - 1 ? pp->s + 1 : MPI_PROC_NULL;
    return 0;
}

static int pipe_open(train_t *t)
{
    const train_opts_t *o = t->o;
    pipeline_t *pp = calloc(1, sizeof *pp);
    if (!pp) return HPC_ERR(HPC_ERR_NOMEM, "pipeline");
    t->s = pp;
    plan_t p;
    pipe_plan(t, hpc_rank(), &p);
    pp->o = o;
    pp->S = p.S;
    pp->D = p.D;
    pp->s = p.s;
    pp->d = p.d;
    pp->M = p.M;
    pp->sched = o->pipe_sched;
    pp->row = &pipe_scheds[o->pipe_sched];
    pp->bubble_replay = NAN;
    memcpy(pp->first, p.first, sizeof pp->first);
    pp->lo = p.lo;
    pp->hi = p.hi;
    pp->lay = p.lay;
    pp->rows_most = p.rows_most;
    HPC_TRY(pipe_comms(pp));
    pp->ops = calloc((size_t)3 * pp->M + 1, sizeof *pp->ops);
    if (!pp->ops) return HPC_ERR(HPC_ERR_NOMEM, "pipeline schedule");
    pp->fresh = 1;
    if (pipe_model_state(pp, t) < 0 || pipe_buffers(pp, t, &p) < 0 || train_batch_alloc(t, pp->rows_most) < 0)
        return HPC_ERR(HPC_ERR_NOMEM, "out of %s memory for the pipeline stage", t->dev->name);
    pipe_recorder(pp);
    pipe_dump_open(pp, t);
    if (pp->row->async) {
        HPC_TRY(stale_open(pp, t));
        HPC_TRY(hpc_app_stop_vote_open(hpc_comm_world(), &pp->vote));
    }
    t->validates = pp->s == pp->S - 1;
    t->eval_rows = pp->rows_most;
    if (o->shard)
        return zero_open(&pp->sync, &pp->lay, t->dev, SHARD_OPTIM, pp->p, pp->g, &pp->gw, pp->rep_comm, 1);
    pp->sync = dp_gsync(&pp->dp);
    return dp_open(&pp->dp, &pp->lay, t->dev, pp->p, pp->g, o->bucket_mb, o->alg, pp->rep_comm);
}

static void pipe_close(train_t *t)
{
    pipeline_t *pp = t->s;
    if (!pp) return;
    if (pp->vote) hpc_app_stop_vote_close(pp->vote);
    if (pp->row->async) stale_close(pp, t);
    for (int k = 0; k < pp->nslots && pp->slot; k++) {
        pp->slot[k].acts.d[0] = pp->slot[k].acts.d[1] = NULL;   /* the scratch's, freed below */
        acts_free(&pp->slot[k].acts, t->dev);
        msg_free(&pp->slot[k].in, t->dev);
        msg_free(&pp->slot[k].out, t->dev);
    }
    for (int k = 0; k < PIPE_RING; k++) {
        msg_free(&pp->grad[k], t->dev);
        msg_free(&pp->dx[k], t->dev);
    }
    msg_free(&pp->eval_in, t->dev);
    msg_free(&pp->eval_out, t->dev);
    acts_free(&pp->eval, t->dev);
    pp->work.d[0] = pp->scratch[0];
    pp->work.d[1] = pp->scratch[1];
    acts_free(&pp->work, t->dev);
    if (pp->sync.ops) pp->sync.ops->close(pp->sync.ctx);
    if (pp->p) t->dev->release(pp->p);
    if (pp->g) t->dev->release(pp->g);
    if (pp->pipe_comm != MPI_COMM_NULL && pp->pipe_comm) MPI_Comm_free(&pp->pipe_comm);
    if (pp->rep_comm != MPI_COMM_NULL && pp->rep_comm) MPI_Comm_free(&pp->rep_comm);
    free(pp->slot);
    free(pp->ops);
    free(pp->rec);
    free(pp->dump_buf);
    if (pp->dump) fclose(pp->dump);
    free(pp);
    t->s = NULL;
}

/* ---- the replica check ---- */

static int pipe_in_sync(train_t *t, int *same)
{
    pipeline_t *pp = t->s;
    /* each stage against its replicas (the stages hold other layers) */
    int mine = 1;
    HPC_TRY(train_buffers_same(t, pp->p, pp->lay.n, pp->rep_comm, &mine));
    MPI_Allreduce(&mine, same, 1, MPI_INT, MPI_MIN, hpc_comm_world());
    return 0;
}

/* ---- what the summary says ---- */

/* Append to buf[k..len) what fmt says; the new end (at most len) */
static size_t summary_put(char *buf, size_t len, size_t k, const char *fmt, ...)
{
    if (k >= len) return len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + k, len - k, fmt, ap);
    va_end(ap);
    return n < 0 || k + (size_t)n >= len ? len : k + (size_t)n;
}

/* " 1.0 MiB/2.0 MiB/...", appended */
static size_t summary_put_bytes(char *buf, size_t len, size_t k, const double *v, int n)
{
    for (int s = 0; s < n; s++) {
        char b[32];
        hpc_format_bytes(v[s], b, sizeof b);
        k = summary_put(buf, len, k, "%s%s", s ? "/" : " ", b);
    }
    return k;
}

static double peak_rss(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss * 1024.0 : 0;
}

static void pipe_summary(train_t *t, char *buf, size_t len)
{
    pipeline_t *pp = t->s;
    int S = pp->S;
    enum { BUSY = 0, PEAK = TRAIN_MAXL, GPIPE = 2 * TRAIN_MAXL, MODEL = 3 * TRAIN_MAXL, RSS = 4 * TRAIN_MAXL,
           UPD = 5 * TRAIN_MAXL, N = 6 * TRAIN_MAXL };
    double mine[N] = {0}, all[N] = {0}, span = pp->span, most = 0;
    mine[BUSY + pp->s] = pp->busy;
    mine[PEAK + pp->s] = (double)pp->alive_peak * (double)pp->slot_bytes + (double)pp->work.bytes;
    /* what gpipe holds instead: every micro-batch of the step */
    mine[GPIPE + pp->s] = (double)pp->M * (double)pp->slot_bytes + (double)pp->work.bytes;
    mine[MODEL + pp->s] = t->mem.model;
    mine[RSS + pp->s] = peak_rss();
    mine[UPD + pp->s] = pp->upd;
    /* replica 0 speaks for the others; the span is the slowest stage's */
    if (pp->d != 0) memset(mine, 0, sizeof mine);
    MPI_Allreduce(mine, all, N, MPI_DOUBLE, MPI_SUM, hpc_comm_world());
    MPI_Allreduce(&span, &most, 1, MPI_DOUBLE, MPI_MAX, hpc_comm_world());
    double used = 0;
    for (int s = 0; s < S; s++) used += most > 0 ? all[BUSY + s] / most : 0;
    char reps[64] = "";
    if (pp->D > 1)
        snprintf(reps, sizeof reps, " x %d replicas%s", pp->D, t->o->shard ? " (optimiser state sharded)" : "");
    char replayed[64] = "";
    if (isfinite(pp->bubble_replay))
        snprintf(replayed, sizeof replayed, ", %.1f%% replayed", 100 * pp->bubble_replay);
    size_t k = summary_put(buf, len, 0, "; pipeline %s, %d stage%s%s, %d micro-batches: bubble %.1f%% (theory %.1f%%%s), "
                   "utilisation", pp->row->name, S, S > 1 ? "s" : "", reps, pp->M, 100 * (1 - used / S),
                   100 * pipe_bubble_theory(pp->sched, S, pp->M), replayed);
    for (int s = 0; s < S; s++)
        k = summary_put(buf, len, k, "%s%.0f%%", s ? "/" : " ", most > 0 ? 100 * all[BUSY + s] / most : 0);
    /* the stale schedule steps inside the stream, once a --step-every:
     * the share of the wall clock that is not F or B but is not idle */
    for (int s = 0; pp->row->async && s < S; s++)
        k = summary_put(buf, len, k, "%s%.1f%%", s ? "/" : " (optimiser steps ", most > 0 ? 100 * all[UPD + s] / most : 0);
    if (pp->row->async) k = summary_put(buf, len, k, ")");
    k = summary_put_bytes(buf, len, summary_put(buf, len, k, ", model state"), all + MODEL, S);
    k = summary_put_bytes(buf, len, summary_put(buf, len, k, ", peak activations"), all + PEAK, S);
    if (strcmp(pp->row->name, "gpipe"))
        k = summary_put(buf, len, summary_put_bytes(buf, len, summary_put(buf, len, k, " (gpipe"), all + GPIPE, S), ")");
    summary_put_bytes(buf, len, summary_put(buf, len, k, ", peak RSS"), all + RSS, S);
}

static void pipe_finish(train_t *t)
{
    timeline_write(t->s, t);
}

const strategy_t strategy_pipe = {"pipe",       pipe_check,   pipe_fit,     pipe_replica, pipe_need,
                                  pipe_open,    pipe_step,    pipe_stop,    pipe_eval,    pipe_in_sync,
                                  pipe_summary, pipe_finish,  pipe_close};
