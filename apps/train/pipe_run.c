/* pipe_run.c - a pipeline stage's step: the schedule's operations
 * (pipe_sched.c) over its micro-batches, the messages between stages,
 * the update; and the pipelined forward of validation.
 *
 * Activations go forward and their gradients back with nonblocking
 * point-to-point messages: receives are posted ahead (as many as there
 * are free slots and gradient buffers) and sends are waited for only
 * when their buffer is needed again, so messages travel while the stage
 * computes.  Messages go through host buffers (on a GPU: copied to and
 * from the device).  The last stage computes the loss at each
 * micro-batch's backward, and the running sum of the step's loss rides
 * at the end of every gradient message, so each stage knows the step's
 * loss when its last backward is done: no collective lines the stages
 * up (with replicas, one allreduce of a double over the stage's
 * replicas adds theirs).
 *
 * An asynchronous schedule (stale) runs the next step's first forwards
 * ahead instead of draining (drains()), and agrees on a stop through a
 * vote that travels for a step (hpc_app_stop_vote), so its stages are
 * never lined up between checkpoints.
 */
#include "config.h"
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pipe.h"

#define TAG_ACT 0
#define TAG_GRAD 1
#define TAG_EVAL 16384

/* The tag of micro-batch k's message: unique among the few in flight */
static int tag(int64_t k, int kind)
{
    return (int)(k % 8192) * 2 + kind;
}

/* ---- test hook ---- */

/* HPC_TRAIN_TEST_PIPE_DUMP=DIR (asynchronous schedules only): each stage
 * appends to DIR/stage<s>.bin, for every backward: int32 step,
 * micro-batch, lo, hi, rows; then float32 per layer lo..hi-1 (weight
 * [out, in], bias [out]): the weights its forward used, those its
 * backward used, the gradient it computed; then the rows' inputs (first
 * stage) and targets (last).  tests/train_pipe_replay.py recomputes the
 * gradients from them. */
void pipe_dump_open(pipeline_t *pp, const train_t *t)
{
    const char *dir = getenv("HPC_TRAIN_TEST_PIPE_DUMP");
    char path[4096];
    if (!dir || !pp->row->async || pp->d != 0) return;
    snprintf(path, sizeof path, "%s/stage%d.bin", dir, pp->s);
    size_t rows = (size_t)pp->rows_most * (size_t)(t->data.nin + t->data.ydim);
    pp->dump_buf = malloc((pp->lay.n > rows ? pp->lay.n : rows) * sizeof(float));
    pp->dump = pp->dump_buf ? fopen(path, "wb") : NULL;
}

static void dump_layers(pipeline_t *pp, train_t *t, const float *buf)
{
    const model_t *m = &pp->lay;
    for (int l = pp->lo; l < pp->hi; l++) {
        size_t nw = (size_t)(m->size[l] * m->size[l + 1]), nb = (size_t)m->size[l + 1];
        t->dev->to_host(pp->dump_buf, buf + m->w[l], nw * sizeof(float));
        t->dev->to_host(pp->dump_buf + nw, buf + m->b[l], nb * sizeof(float));
        fwrite(pp->dump_buf, sizeof(float), nw + nb, pp->dump);
    }
}

static void dump_backward(pipeline_t *pp, train_t *t, pipe_slot_t *sl, const float *pb, int rows)
{
    int32_t head[5] = {(int32_t)(sl->mb / pp->M), (int32_t)(sl->mb % pp->M), pp->lo, pp->hi, rows};
    fwrite(head, sizeof head, 1, pp->dump);
    dump_layers(pp, t, sl->stash);
    dump_layers(pp, t, pb);
    dump_layers(pp, t, pp->g);
    size_t nx = (size_t)rows * t->data.nin, ny = (size_t)rows * t->data.ydim;
    if (pp->s == 0) t->dev->to_host(pp->dump_buf, sl->in.dev, nx * sizeof(float));
    if (pp->s == 0) fwrite(pp->dump_buf, sizeof(float), nx, pp->dump);
    if (pp->s == pp->S - 1) t->dev->to_host(pp->dump_buf, pp->y, ny * sizeof(float));
    if (pp->s == pp->S - 1) fwrite(pp->dump_buf, sizeof(float), ny, pp->dump);
    fflush(pp->dump);
}

/* ---- messages ---- */

/* Micro-batch k (counted from the run's start; k mod M of its step):
 * its rows and the first of them in the replica's slice of the batch */
static int mb_rows(const pipeline_t *pp, const train_t *t, int64_t k, int64_t *first)
{
    int64_t lo, n;
    hpc_block_range(t->loader.rank_n, pp->M, (int)(k % pp->M), &lo, &n);
    if (first) *first = lo;
    return (int)n;
}

static void mpi_ok(int rc, const char *what)
{
    /* only this rank knows; its neighbours wait in theirs */
    if (rc != MPI_SUCCESS) hpc_app_fatal(HPC_EXIT_DATA, "pipeline: %s failed (MPI error %d)", what, rc);
}

static pipe_slot_t *free_slot(pipeline_t *pp)
{
    for (int k = 0; k < pp->nslots; k++)
        if (pp->slot[k].mb < 0) return &pp->slot[k];
    return NULL;
}

static pipe_slot_t *slot_of(pipeline_t *pp, int64_t mb)
{
    for (int k = 0; k < pp->nslots; k++)
        if (pp->slot[k].mb == mb) return &pp->slot[k];
    return NULL;
}

/* Post the receives of the next inputs, one per free slot */
static void post_inputs(pipeline_t *pp, const train_t *t)
{
    pipe_slot_t *sl;
    while (pp->s > 0 && pp->act_next < pp->limit && (sl = free_slot(pp))) {
        int n = mb_rows(pp, t, pp->act_next, NULL) * (int)t->model.size[pp->lo];
        sl->mb = pp->act_next++;
        sl->posted = 1;
        mpi_ok(MPI_Irecv(sl->in.host, n, MPI_FLOAT, pp->prev, tag(sl->mb, TAG_ACT), pp->pipe_comm, &sl->in.req),
               "receiving activations");
    }
}

/* Post the receives of the next gradients (and the loss sum after
 * them), one per free ring buffer */
static void post_grads(pipeline_t *pp, const train_t *t, int64_t consumed)
{
    while (pp->s < pp->S - 1 && pp->grad_next < pp->limit && pp->grad_next < consumed + PIPE_RING) {
        pipe_msg_t *g = &pp->grad[pp->grad_next % PIPE_RING];
        int n = mb_rows(pp, t, pp->grad_next, NULL) * (int)t->model.size[pp->hi] + PIPE_EXTRA;
        mpi_ok(MPI_Irecv(g->host, n, MPI_FLOAT, pp->next, tag(pp->grad_next, TAG_GRAD), pp->pipe_comm, &g->req),
               "receiving gradients");
        pp->grad_next++;
    }
}

/* MPI_Wait spins; a stage waiting for its neighbour gives its core away
 * between tests instead, so that oversubscribed ranks (more stages than
 * cores) run the stage that has work */
static void wait_msg(pipe_msg_t *m, const char *what)
{
    int done = 0;
    while (!done) {
        mpi_ok(MPI_Test(&m->req, &done, MPI_STATUS_IGNORE), what);
        if (!done) sched_yield();
    }
}

/* Copy n floats of the device buffer src out and send them; with
 * extra, the loss sum so far after them */
static void send_msg(pipeline_t *pp, const train_t *t, pipe_msg_t *m, const float *src, int n, int to, int tag,
                     int extra)
{
    wait_msg(m, "sending");
    t->dev->to_host(m->host, src, (size_t)n * sizeof(float));
    if (extra) memcpy(m->host + n, &pp->lsum, sizeof pp->lsum);
    mpi_ok(MPI_Isend(m->host, n + (extra ? PIPE_EXTRA : 0), MPI_FLOAT, to, tag, pp->pipe_comm, &m->req), "sending");
}

/* ---- one micro-batch forward and backward ---- */

static acts_t *acts_for(pipeline_t *pp, pipe_slot_t *sl)
{
    acts_t *a = pp->o->recompute ? &pp->work : &sl->acts;
    a->a0 = sl->in.dev;
    a->d[0] = pp->scratch[0];
    a->d[1] = pp->scratch[1];
    return a;
}

/* The rows of micro-batch k: inputs (x) or targets (y), on the host */
static const float *rows_of(pipeline_t *pp, train_t *t, int64_t k, int targets)
{
    int64_t step = k / pp->M, first;
    const float *x, *y;
    if (loader_batch(&t->loader, step / t->steps_per_epoch, step % t->steps_per_epoch, &x, &y) < 0)
        hpc_app_fatal(HPC_EXIT_DATA, "reading the batch: %s", hpc_last_cause());
    mb_rows(pp, t, k, &first);
    return targets ? y + first * t->data.ydim : x + first * t->data.nin;
}

/* The layers of a flat buffer of the stage's layout (pp->p, a stash, the
 * predicted weights) */
static const wts_t *weights(pipeline_t *pp, const float *flat, wts_t *w)
{
    if (flat == pp->p) return &pp->pw;
    model_wts(&pp->lay, (float *)flat, w);
    return w;
}

static void stage_forward(pipeline_t *pp, train_t *t, int64_t mb)
{
    int rows = mb_rows(pp, t, mb, NULL);
    size_t in = (size_t)rows * t->model.size[pp->lo] * sizeof(float);
    pipe_slot_t *sl = pp->s > 0 ? slot_of(pp, mb) : free_slot(pp);
    if (!sl) hpc_app_fatal(HPC_EXIT_DATA, "pipeline: no slot for micro-batch %lld (a bug)", (long long)mb);
    sl->mb = mb;
    if (pp->s > 0) {
        wait_msg(&sl->in, "receiving activations");
        if (sl->in.dev != sl->in.host) t->dev->to_dev(sl->in.dev, sl->in.host, in);
    } else {   /* a copy: the loader may serve the next step before this backward */
        t->dev->to_dev(sl->in.dev, rows_of(pp, t, mb, 0), in);
    }
    double t0 = hpc_wtime();
    wts_t w;
    const float *p = pp->row->async ? stale_forward_weights(pp, t, sl) : pp->p;
    acts_t *a = acts_for(pp, sl);
    model_forward(&t->model, t->dev, weights(pp, p, &w), a, rows, pp->lo, pp->hi);
    if (pp->s < pp->S - 1)
        send_msg(pp, t, &sl->out, a->a[pp->hi], rows * (int)t->model.size[pp->hi], pp->next, tag(mb, TAG_ACT), 0);
    else
        t->dev->sync();
    timeline_record(pp, t, 'F', (int)(mb - pp->base), t0, hpc_wtime());
    if (++pp->alive > pp->alive_peak) pp->alive_peak = pp->alive;
}

/* dL/d(stage output) into a->d[0]: the loss on the last stage, else the
 * gradient the next stage sent (and the loss sum after it).  Returns the
 * seconds spent waiting. */
static double output_grad(pipeline_t *pp, train_t *t, acts_t *a, int64_t mb, int rows)
{
    const model_t *m = &t->model;
    if (pp->s == pp->S - 1) {
        const float *y = rows_of(pp, t, mb, 1);
        train_to_device(t, NULL, &y, rows);
        pp->y = y;
        pp->lsum += t->dev->loss(t->o->loss, rows, (int)t->data.nout, a->a[m->nl], y,
                                 (float)(1.0 / train_loss_terms(t)), a->d[0]);
        return 0;
    }
    pipe_msg_t *g = &pp->grad[mb % PIPE_RING];
    double t0 = hpc_wtime();
    wait_msg(g, "receiving gradients");
    double waited = hpc_wtime() - t0;
    size_t n = (size_t)rows * m->size[pp->hi];
    memcpy(&pp->lsum, g->host + n, sizeof pp->lsum);
    if (t->dev == train_dev_cpu())
        a->d[0] = g->host;   /* the received buffer is as wide as the stage's widest */
    else
        t->dev->to_dev(a->d[0], g->host, n * sizeof(float));
    return waited;
}

static void stage_backward(pipeline_t *pp, train_t *t, int64_t mb, int last)
{
    int rows = mb_rows(pp, t, mb, NULL);
    pipe_slot_t *sl = slot_of(pp, mb);
    if (!sl) hpc_app_fatal(HPC_EXIT_DATA, "pipeline: micro-batch %lld has no activations (a bug)", (long long)mb);
    acts_t *a = acts_for(pp, sl);
    wts_t w;
    const float *pf = pp->row->async ? stale_backward_weights(pp, t, sl) : pp->p;
    const wts_t *pw = weights(pp, pf, &w);
    double t0 = hpc_wtime();
    if (t->o->recompute) model_forward(&t->model, t->dev, pw, a, rows, pp->lo, pp->hi);
    t0 += output_grad(pp, t, a, mb, rows);   /* waiting is not work */
    const gsync_t *gs = &pp->sync;
    gs->ops->begin(gs->ctx, last, pp->backs == 0);
    float beta = pp->backs ? 1.0f : 0.0f;
    float *dx = model_backward(&t->model, t->dev, pw, &pp->gw, a, rows, beta, pp->lo, pp->hi, gs->ops->layer_done,
                               gs->ctx);
    pp->backs++;
    if (dx) {
        pipe_msg_t *m = &pp->dx[pp->dx_next++ % PIPE_RING];
        send_msg(pp, t, m, dx, rows * (int)t->model.size[pp->lo], pp->prev, tag(mb, TAG_GRAD), 1);
    } else {
        t->dev->sync();
    }
    timeline_record(pp, t, 'B', (int)(mb - pp->base), t0, hpc_wtime());
    if (pp->dump) dump_backward(pp, t, sl, pf, rows);
    if (pp->row->async) stale_after_backward(pp, t, sl, last);
    wait_msg(&sl->out, "sending activations");
    sl->mb = -1;
    sl->posted = 0;
    pp->alive--;
    post_grads(pp, t, mb + 1);
    post_inputs(pp, t);
}

/* ---- the step ---- */

/* The dx sends of this step have been received (the stage before did all
 * its backwards); activations sent ahead to the next step are waited
 * for only when their slot is needed again, unless the pipeline drains */
static void wait_sends(pipeline_t *pp, int drain)
{
    for (int k = 0; k < PIPE_RING; k++) wait_msg(&pp->dx[k], "sending gradients");
    for (int k = 0; drain && k < pp->nslots; k++) wait_msg(&pp->slot[k].out, "sending activations");
}

/* The flushed schedules drain every step.  An asynchronous one runs the
 * next step's first forwards ahead and drains only where the run needs
 * all stages in step: before a checkpoint (so that a resumed run
 * continues the uninterrupted one), at the end, and when a stop was
 * agreed (the vote of the step before: the run stops after this one). */
static int drains(pipeline_t *pp, train_t *t)
{
    if (!pp->row->async) return 1;
    int64_t next = t->step + 1, every = t->o->ckpt_every;
    pp->stop = hpc_app_stop_vote(pp->vote);
    return pp->stop || next >= t->total || (every && next % every == 0);
}

static void run_ops(pipeline_t *pp, train_t *t, int drain)
{
    pp->nops = pipe_schedule_step(pp->sched, pp->S, pp->s, pp->M, pp->fresh, !drain, pp->ops);
    if (pp->fresh) pp->act_next = pp->grad_next = pp->base;
    post_inputs(pp, t);
    post_grads(pp, t, pp->base);
    for (int k = 0; k < pp->nops; k++) {
        int last = k == pp->nops - 1;   /* every step ends with its last backward */
        int64_t mb = pp->base + pp->ops[k].mb;
        if (pp->ops[k].kind == 'F') stage_forward(pp, t, mb);
        else stage_backward(pp, t, mb, last);
    }
    pp->fresh = drain;
}

/* The flushed schedules' update: the stage's gradient (reduced over the
 * replicas), clipped to the norm over every stage */
static void stage_update(pipeline_t *pp, train_t *t)
{
    double lr = sched_lr(t->o, t->step, t->total);
    t->grad_norm = pp->sync.ops->update(pp->sync.ctx, &t->opt, lr, t->step + 1, pp->pipe_comm);
}

int pipe_step(train_t *t)
{
    pipeline_t *pp = t->s;
    pp->lsum = 0;
    pp->backs = 0;
    pp->base = t->step * pp->M;
    if (pp->row->async) stale_step_begin(pp, t);
    if (t->steps_run == 1 && !pp->rec_t0) {   /* the timeline starts after the first step */
        MPI_Barrier(pp->pipe_comm);
        pp->rec_t0 = hpc_wtime();
    }
    int drain = drains(pp, t);
    pp->limit = drain ? pp->base + pp->M : pp->base + 2 * pp->M;
    double s0 = hpc_wtime();
    run_ops(pp, t, drain);
    pp->span += hpc_wtime() - s0;
    wait_sends(pp, drain);
    const gsync_t *gs = &pp->sync;
    int rc = gs->ops->finish(gs->ctx);
    if (rc < 0) hpc_app_fatal(HPC_EXIT_DATA, "gradient reduction: %s", hpc_last_cause());
    /* the step's loss came with the last gradient; the replicas add theirs */
    double all = pp->lsum;
    if (pp->D > 1) MPI_Allreduce(&pp->lsum, &all, 1, MPI_DOUBLE, MPI_SUM, pp->rep_comm);
    t->train_loss = all / train_loss_terms(t);
    t->step_comm = gs->ops->exposed(gs->ctx);
    t->step_blocking = gs->ops->blocking(gs->ctx);
    if (!isfinite(t->train_loss)) return -1;
    if (!pp->row->async) stage_update(pp, t);
    return 0;
}

int pipe_stop(train_t *t)
{
    pipeline_t *pp = t->s;
    /* asynchronous: voted at the start of the step, which drained for it */
    if (pp->row->async) return pp->stop;
    return strategy_stop_agreed(t);
}

/* ---- validation: a forward through the stages ---- */

const float *pipe_eval(train_t *t, const float *x, int rows)
{
    pipeline_t *pp = t->s;
    const model_t *m = &t->model;
    acts_t *a = &pp->eval;
    int in = rows * (int)m->size[pp->lo], out = rows * (int)m->size[pp->hi];
    a->a0 = x;
    if (pp->s > 0) {   /* the stage before's outputs */
        mpi_ok(MPI_Recv(pp->eval_in.host, in, MPI_FLOAT, pp->prev, TAG_EVAL, pp->pipe_comm, MPI_STATUS_IGNORE),
               "receiving validation activations");
        if (pp->eval_in.dev != pp->eval_in.host)
            t->dev->to_dev(pp->eval_in.dev, pp->eval_in.host, (size_t)in * sizeof(float));
        a->a0 = pp->eval_in.dev;
    }
    if (rows) model_forward(m, t->dev, &pp->pw, a, rows, pp->lo, pp->hi);
    if (pp->s == pp->S - 1) return rows ? model_output(m, a) : NULL;
    if (rows) t->dev->to_host(pp->eval_out.host, a->a[pp->hi], (size_t)out * sizeof(float));
    mpi_ok(MPI_Send(pp->eval_out.host, out, MPI_FLOAT, pp->next, TAG_EVAL, pp->pipe_comm),
           "sending validation activations");
    return NULL;
}
