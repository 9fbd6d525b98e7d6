/* pipe.c - pipeline parallelism: the layers split into S stages on
 * consecutive ranks, each global batch into M micro-batches that flow
 * through them (--parallel pipe), and D data-parallel replicas of such a
 * pipeline (--parallel hybrid: D x S ranks, rank r is stage r % S of
 * replica r / S).
 *
 * A stage runs the layers [lo, hi) of the one model layout (model.c), so
 * the parameters, the optimiser and the checkpoint keep the data-parallel
 * layout and code: every rank holds the flat buffers, a stage computes
 * and updates only its own range, and gathers the others' (one allreduce
 * of disjoint ranges) when the whole model is needed - validation,
 * checkpoints, the replica check.
 *
 * A step runs the stage's list of operations (pipe_sched.c); the stale
 * schedule runs the next step's first forwards ahead instead of draining
 * (drains()).  Activations
 * go forward and their gradients back with nonblocking point-to-point
 * messages: receives are posted ahead (as many as there are free slots
 * and gradient buffers) and sends are waited for only when their buffer
 * is needed again, so messages travel while the stage computes.  Messages
 * go through host buffers (on a GPU: copied to and from the device).  The
 * last stage computes the loss at the micro-batch's backward; the step's
 * loss is one allreduce of a double.  With replicas, each stage's
 * gradients are allreduced over the replicas by dp.c during the step's
 * last backward.
 */
#include "config.h"
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pipe.h"

#define TAG_ACT 0
#define TAG_GRAD 1

/* The tag of micro-batch k's message: unique among the few in flight */
static int tag(int64_t k, int kind)
{
    return (int)(k % 16384) * 2 + kind;
}

static const char *sched_name[] = {"seq", "gpipe", "1f1b", "stale"};

/* ---- options ---- */

int pipe_opts_check(const train_opts_t *o, char *err, size_t len)
{
    int pipe = o->parallel != PAR_DP, stale = o->pipe_sched == PIPE_STALE;
    const char *what = o->stash ? "--weight-stashing" : o->predict ? "--weight-prediction"
                     : o->gap_just_lost ? "--gap-aware-just-lost" : o->gap_aware ? "--gap-aware"
                     : o->step_every > 1 ? "--step-every" : NULL;
    if (!pipe && (o->stages || o->npart || o->micro > 1 || o->recompute || what)) {
        snprintf(err, len, "--stages, --partition, --micro, --recompute and the stale options are for "
                 "--parallel pipe or hybrid");
        return -1;
    }
    if (pipe && what && !stale) {
        snprintf(err, len, "%s is for --pipe-schedule stale, not %s", what, sched_name[o->pipe_sched]);
        return -1;
    }
    if (o->parallel == PAR_HYBRID && !o->stages) {
        snprintf(err, len, "--parallel hybrid needs --stages S (replicas: the ranks / S)");
        return -1;
    }
    if (o->parallel == PAR_HYBRID && stale) {
        snprintf(err, len, "--pipe-schedule stale is not for --parallel hybrid (its stages step alone)");
        return -1;
    }
    if (pipe && o->accum > 1) {
        snprintf(err, len, "--accum is for --parallel dp; a pipeline splits the batch with --micro");
        return -1;
    }
    if (stale && o->clip > 0) {
        snprintf(err, len, "--clip is not for --pipe-schedule stale (its stages step alone: no global norm)");
        return -1;
    }
    if (o->predict && o->optim == OPT_SGD && o->momentum == 0) {
        snprintf(err, len, "--weight-prediction needs momentum: --optim adam/adamw or --momentum");
        return -1;
    }
    if (o->predict && o->stash) {
        snprintf(err, len, "--weight-prediction and --weight-stashing exclude each other (the forward "
                 "uses predicted weights, the backward the current ones)");
        return -1;
    }
    return 0;
}

int pipe_opts_fit(train_opts_t *o, int nranks, char *err, size_t len)
{
    if (o->parallel == PAR_DP) return 0;
    if (!o->stages) o->stages = nranks;
    int S = o->stages;
    if (S > o->nlayers) {
        snprintf(err, len, "--stages %d is more than the %d layers: every stage needs a layer", S, o->nlayers);
        return -1;
    }
    if (S > nranks) {
        snprintf(err, len, "--stages %d is more than the %d ranks", S, nranks);
        return -1;
    }
    if (o->parallel == PAR_PIPE && S != nranks) {
        snprintf(err, len, "--parallel pipe: --stages %d on %d ranks (one stage a rank; replicas: "
                 "--parallel hybrid)", S, nranks);
        return -1;
    }
    if (nranks % S) {
        snprintf(err, len, "--parallel hybrid: D x S must be the %d ranks, but %d is not a multiple of "
                 "--stages %d", nranks, nranks, S);
        return -1;
    }
    if (o->npart) {
        int64_t sum = 0;
        for (int i = 0; i < o->npart; i++) sum += o->partition[i];
        if (o->npart != S || sum != o->nlayers) {
            snprintf(err, len, "--partition: %d stages of %lld layers, but --stages is %d and the model has "
                     "%d layers", o->npart, (long long)sum, S, o->nlayers);
            return -1;
        }
    }
    return 0;
}

void pipe_replica(const train_opts_t *o, int rank, int nranks, int *replica, int *replicas)
{
    *replicas = nranks / o->stages;
    *replica = rank / o->stages;
}

/* ---- test hook ---- */

/* HPC_TRAIN_TEST_PIPE_DUMP=DIR (stale only): each stage appends to
 * DIR/stage<s>.bin, for every backward: int32 step, micro-batch, lo, hi,
 * rows; then float32 per layer lo..hi-1 (weight [out, in], bias [out]):
 * the weights its forward used, those its backward used, the gradient it
 * computed; then the rows' inputs (first stage) and targets (last).
 * tests/train_pipe_replay.py recomputes the gradients from them. */
static void dump_open(pipe_t *pp)
{
    const char *dir = getenv("HPC_TRAIN_TEST_PIPE_DUMP");
    char path[4096];
    if (!dir || pp->sched != PIPE_STALE || pp->d != 0) return;
    snprintf(path, sizeof path, "%s/stage%d.bin", dir, pp->s);
    pp->dump = fopen(path, "wb");
}

static void dump_layers(pipe_t *pp, train_t *t, const float *buf)
{
    const model_t *m = &t->model;
    for (int l = pp->lo; l < pp->hi; l++) {
        size_t nw = (size_t)(m->size[l] * m->size[l + 1]), nb = (size_t)m->size[l + 1];
        t->dev->to_host(t->host, buf + m->w[l], nw * sizeof(float));
        t->dev->to_host(t->host + nw, buf + m->b[l], nb * sizeof(float));
        fwrite(t->host, sizeof(float), nw + nb, pp->dump);
    }
}

static void dump_backward(pipe_t *pp, train_t *t, pipe_slot_t *sl, const float *pb, int rows)
{
    int32_t head[5] = {(int32_t)(sl->mb / pp->M), (int32_t)(sl->mb % pp->M), pp->lo, pp->hi, rows};
    fwrite(head, sizeof head, 1, pp->dump);
    dump_layers(pp, t, sl->stash);
    dump_layers(pp, t, pb);
    dump_layers(pp, t, t->g);
    size_t nx = (size_t)rows * t->data.nin, ny = (size_t)rows * t->data.ydim;
    if (pp->s == 0) t->dev->to_host(t->host, sl->in.dev, nx * sizeof(float));
    if (pp->s == 0) fwrite(t->host, sizeof(float), nx, pp->dump);
    if (pp->s == pp->S - 1) t->dev->to_host(t->host, pp->y, ny * sizeof(float));
    if (pp->s == pp->S - 1) fwrite(t->host, sizeof(float), ny, pp->dump);
    fflush(pp->dump);
}

/* ---- set-up ---- */

/* Micro-batch k (counted from the run's start; k mod M of its step):
 * its rows and the first of them in the replica's slice of the batch */
static int mb_rows(const pipe_t *pp, const train_t *t, int64_t k, int64_t *first)
{
    int64_t lo, n;
    hpc_block_range(t->loader.rank_n, pp->M, (int)(k % pp->M), &lo, &n);
    if (first) *first = lo;
    return (int)n;
}

static void partition(pipe_t *pp, const train_t *t)
{
    int first[TRAIN_MAXL + 1];
    if (t->o->npart) {
        first[0] = 0;
        for (int s = 0; s < pp->S; s++) first[s + 1] = first[s] + (int)t->o->partition[s];
    } else {
        pipe_partition_balanced(&t->model, pp->S, first);
    }
    memcpy(pp->first, first, sizeof pp->first);
    pp->lo = first[pp->s];
    pp->hi = first[pp->s + 1];
    pp->r0 = t->model.w[pp->hi - 1];
    pp->r1 = pp->lo > 0 ? t->model.w[pp->lo - 1] : t->model.n;
}

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

static int widest(const pipe_t *pp, const model_t *m)
{
    int64_t w = 0;
    for (int l = pp->lo; l <= pp->hi; l++) w = m->size[l] > w ? m->size[l] : w;
    return (int)w;
}

/* The slots (one per micro-batch that can be alive, and one more so
 * that the next input's receive is posted early) and message buffers */
static int buffers(pipe_t *pp, const train_t *t)
{
    const model_t *m = &t->model;
    const train_dev_t *dev = t->dev;
    int rows = pp->rows_most, rec = t->o->recompute;
    size_t in = (size_t)rows * m->size[pp->lo], out = (size_t)rows * m->size[pp->hi];
    size_t wide = (size_t)rows * widest(pp, m);
    int most = pipe_alive_most(pp->sched, pp->S, pp->s, pp->M);
    pp->nslots = most + 1 < pp->M ? most + 1 : pp->M;
    pp->slot = calloc((size_t)pp->nslots, sizeof *pp->slot);
    if (!pp->slot) return -1;
    /* the gradient buffers of every backward; --recompute: the activations too */
    int what = ACTS_GRAD | (rec ? ACTS_OUT : 0);
    if (acts_alloc_range(&pp->work, m, dev, rows, pp->lo, pp->hi, what) < 0) return -1;
    pp->scratch[0] = pp->work.d[0];   /* acts_for points d[] elsewhere at times */
    pp->scratch[1] = pp->work.d[1];
    for (int k = 0; k < pp->nslots; k++) {
        pipe_slot_t *sl = &pp->slot[k];
        sl->mb = -1;
        if (!rec && acts_alloc_range(&sl->acts, m, dev, rows, pp->lo, pp->hi, ACTS_OUT) < 0) return -1;
        sl->acts.lo = pp->lo;
        if (msg_alloc(&sl->in, dev, in, 1) < 0) return -1;   /* stage 0: a copy of the data */
        if (pp->s < pp->S - 1 && msg_alloc(&sl->out, dev, out, 0) < 0) return -1;
        sl->in.req = sl->out.req = MPI_REQUEST_NULL;   /* also where nothing is sent */
    }
    pp->slot_bytes = (rec ? 0 : pp->slot[0].acts.bytes) + in * sizeof(float);
    for (int k = 0; k < PIPE_RING; k++) {
        if (pp->s < pp->S - 1 && msg_alloc(&pp->grad[k], dev, wide, 0) < 0) return -1;
        if (pp->s > 0 && msg_alloc(&pp->dx[k], dev, in, 0) < 0) return -1;
        pp->grad[k].req = pp->dx[k].req = MPI_REQUEST_NULL;
    }
    return 0;
}

static void recorder(pipe_t *pp)
{
    /* the timeline: a few steps after the first (which pays the page
     * faults), at most 4096 operations of a stage */
    pp->rec_steps = 3;
    pp->caprec = 2 * pp->M * pp->rec_steps < 4096 ? 2 * pp->M * pp->rec_steps : 4096;
    pp->rec = calloc((size_t)pp->caprec, sizeof *pp->rec);
}

int pipe_open(train_t *t)
{
    const train_opts_t *o = t->o;
    pipe_t *pp = calloc(1, sizeof *pp);
    if (!pp) return HPC_ERR(HPC_ERR_NOMEM, "pipeline");
    t->pipe = pp;
    pp->o = o;
    pp->S = o->stages;
    pp->D = hpc_size() / pp->S;
    pp->M = o->micro;
    pp->sched = o->pipe_sched;
    pp->bubble_replay = NAN;
    hpc_grid_t *grid;   /* rows: replicas, columns: stages */
    HPC_TRY(hpc_grid_create(hpc_comm_world(), pp->D, pp->S, &grid));
    MPI_Comm_dup(hpc_grid_row_comm(grid), &pp->pipe_comm);
    MPI_Comm_dup(hpc_grid_col_comm(grid), &pp->rep_comm);
    pp->s = hpc_grid_col(grid);
    pp->d = hpc_grid_row(grid);
    hpc_grid_free(grid);
    pp->prev = pp->s > 0 ? pp->s - 1 : MPI_PROC_NULL;
    pp->next = pp->s < pp->S - 1 ? pp->s + 1 : MPI_PROC_NULL;
    partition(pp, t);
    pp->rows_most = mb_rows(pp, t, 0, NULL);
    pp->ops = calloc((size_t)3 * pp->M + 1, sizeof *pp->ops);
    if (!pp->ops) return HPC_ERR(HPC_ERR_NOMEM, "pipeline schedule");
    pp->fresh = 1;
    if (buffers(pp, t) < 0) return HPC_ERR(HPC_ERR_NOMEM, "pipeline buffers");
    recorder(pp);
    dump_open(pp);
    if (pp->sched == PIPE_STALE) HPC_TRY(stale_open(pp, t));
    t->validates = pp->s == 0;
    return dp_open(&t->dp, &t->model, pp->lo, pp->hi, t->g, o->bucket_mb, o->alg, pp->rep_comm);
}

void pipe_close(train_t *t)
{
    pipe_t *pp = t->pipe;
    if (!pp) return;
    if (pp->sched == PIPE_STALE) stale_close(pp, t);
    for (int k = 0; k < pp->nslots; k++) {
        pp->slot[k].acts.d[0] = pp->slot[k].acts.d[1] = NULL;   /* the scratch's, freed below */
        acts_free(&pp->slot[k].acts, t->dev);
        msg_free(&pp->slot[k].in, t->dev);
        msg_free(&pp->slot[k].out, t->dev);
    }
    for (int k = 0; k < PIPE_RING; k++) {
        msg_free(&pp->grad[k], t->dev);
        msg_free(&pp->dx[k], t->dev);
    }
    pp->work.d[0] = pp->scratch[0];
    pp->work.d[1] = pp->scratch[1];
    acts_free(&pp->work, t->dev);
    MPI_Comm_free(&pp->pipe_comm);
    MPI_Comm_free(&pp->rep_comm);
    free(pp->slot);
    free(pp->ops);
    free(pp->rec);
    if (pp->dump) fclose(pp->dump);
    free(pp);
    t->pipe = NULL;
}

/* ---- messages ---- */

static void mpi_ok(int rc, const char *what)
{
    /* only this rank knows; its neighbours wait in theirs */
    if (rc != MPI_SUCCESS) hpc_app_fatal(HPC_EXIT_DATA, "pipeline: %s failed (MPI error %d)", what, rc);
}

static pipe_slot_t *free_slot(pipe_t *pp)
{
    for (int k = 0; k < pp->nslots; k++)
        if (pp->slot[k].mb < 0) return &pp->slot[k];
    return NULL;
}

static pipe_slot_t *slot_of(pipe_t *pp, int64_t mb)
{
    for (int k = 0; k < pp->nslots; k++)
        if (pp->slot[k].mb == mb) return &pp->slot[k];
    return NULL;
}

/* Post the receives of the next inputs, one per free slot */
static void post_inputs(pipe_t *pp, const train_t *t)
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

/* Post the receives of the next gradients, one per free ring buffer */
static void post_grads(pipe_t *pp, const train_t *t, int64_t consumed)
{
    while (pp->s < pp->S - 1 && pp->grad_next < pp->limit && pp->grad_next < consumed + PIPE_RING) {
        pipe_msg_t *g = &pp->grad[pp->grad_next % PIPE_RING];
        int n = mb_rows(pp, t, pp->grad_next, NULL) * (int)t->model.size[pp->hi];
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

/* Copy n floats of the device buffer src out and send them */
static void send_msg(pipe_t *pp, const train_t *t, pipe_msg_t *m, const float *src, int n, int to, int tag)
{
    wait_msg(m, "sending");
    t->dev->to_host(m->host, src, (size_t)n * sizeof(float));
    mpi_ok(MPI_Isend(m->host, n, MPI_FLOAT, to, tag, pp->pipe_comm, &m->req), "sending");
}

/* ---- one micro-batch forward and backward ---- */

static acts_t *acts_for(pipe_t *pp, pipe_slot_t *sl)
{
    acts_t *a = pp->o->recompute ? &pp->work : &sl->acts;
    a->a0 = sl->in.dev;
    a->d[0] = pp->scratch[0];
    a->d[1] = pp->scratch[1];
    return a;
}

/* The rows of micro-batch k: inputs (x) or targets (y), on the host */
static const float *rows_of(pipe_t *pp, train_t *t, int64_t k, int targets)
{
    int64_t step = k / pp->M, first;
    const float *x, *y;
    if (loader_batch(&t->loader, step / t->steps_per_epoch, step % t->steps_per_epoch, &x, &y) < 0)
        hpc_app_fatal(HPC_EXIT_DATA, "reading the batch: %s", hpc_last_cause());
    mb_rows(pp, t, k, &first);
    return targets ? y + first * t->data.ydim : x + first * t->data.nin;
}

static void forward(pipe_t *pp, train_t *t, int64_t mb)
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
    const float *p = pp->sched == PIPE_STALE ? stale_forward_weights(pp, t, sl) : t->p;
    acts_t *a = acts_for(pp, sl);
    model_forward_range(&t->model, t->dev, p, a, rows, pp->lo, pp->hi);
    if (pp->s < pp->S - 1)
        send_msg(pp, t, &sl->out, a->a[pp->hi], rows * (int)t->model.size[pp->hi], pp->next, tag(mb, TAG_ACT));
    else
        t->dev->sync();
    timeline_record(pp, t, 'F', (int)(mb - pp->base), t0, hpc_wtime());
    if (++pp->alive > pp->alive_peak) pp->alive_peak = pp->alive;
}

/* dL/d(stage output) into a->d[0]: the loss on the last stage, else the
 * gradient the next stage sent.  Returns the seconds spent waiting. */
static double output_grad(pipe_t *pp, train_t *t, acts_t *a, int64_t mb, int rows)
{
    const model_t *m = &t->model;
    if (pp->s == pp->S - 1) {
        const float *y = rows_of(pp, t, mb, 1);
        if (t->dev != train_dev_cpu()) {
            t->dev->to_dev(t->ydev, y, (size_t)rows * t->data.ydim * sizeof(float));
            y = t->ydev;
        }
        pp->y = y;
        pp->lsum += t->dev->loss(t->o->loss, rows, (int)t->data.nout, a->a[m->nl], y,
                                 (float)(1.0 / train_loss_terms(t)), a->d[0]);
        return 0;
    }
    pipe_msg_t *g = &pp->grad[mb % PIPE_RING];
    double t0 = hpc_wtime();
    wait_msg(g, "receiving gradients");
    double waited = hpc_wtime() - t0;
    if (t->dev == train_dev_cpu())
        a->d[0] = g->host;   /* the received buffer is as wide as the stage's widest */
    else
        t->dev->to_dev(a->d[0], g->host, (size_t)rows * m->size[pp->hi] * sizeof(float));
    return waited;
}

static void backward(pipe_t *pp, train_t *t, int64_t mb, int last)
{
    int rows = mb_rows(pp, t, mb, NULL);
    pipe_slot_t *sl = slot_of(pp, mb);
    if (!sl) hpc_app_fatal(HPC_EXIT_DATA, "pipeline: micro-batch %lld has no activations (a bug)", (long long)mb);
    acts_t *a = acts_for(pp, sl);
    const float *pf = pp->sched == PIPE_STALE ? stale_backward_weights(pp, t, sl) : t->p;
    double t0 = hpc_wtime();
    if (t->o->recompute) model_forward_range(&t->model, t->dev, pf, a, rows, pp->lo, pp->hi);
    t0 += output_grad(pp, t, a, mb, rows);   /* waiting is not work */
    dp_begin(&t->dp, last);
    float beta = pp->backs ? 1.0f : 0.0f;
    float *dx = model_backward_range(&t->model, t->dev, pf, t->g, a, rows, beta, pp->lo, pp->hi, dp_layer_done,
                                     &t->dp);
    pp->backs++;
    if (dx) {
        pipe_msg_t *m = &pp->dx[pp->dx_next++ % PIPE_RING];
        send_msg(pp, t, m, dx, rows * (int)t->model.size[pp->lo], pp->prev, tag(mb, TAG_GRAD));
    } else {
        t->dev->sync();
    }
    timeline_record(pp, t, 'B', (int)(mb - pp->base), t0, hpc_wtime());
    if (pp->dump) dump_backward(pp, t, sl, pf, rows);
    if (pp->sched == PIPE_STALE) stale_after_backward(pp, t, sl, last);
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
static void wait_sends(pipe_t *pp, int drain)
{
    for (int k = 0; k < PIPE_RING; k++) wait_msg(&pp->dx[k], "sending gradients");
    for (int k = 0; drain && k < pp->nslots; k++) wait_msg(&pp->slot[k].out, "sending activations");
}

/* The flushed schedules drain every step.  The stale one runs the next
 * step's first forwards ahead and drains only where the run needs all
 * stages in step: before a checkpoint (so that a resumed run continues
 * the uninterrupted one), at the end, and when a stop was agreed (at the
 * start of the step: the run stops after it). */
static int drains(pipe_t *pp, train_t *t)
{
    if (pp->sched != PIPE_STALE) return 1;
    int64_t next = t->step + 1, every = t->o->ckpt_every;
    pp->stop = hpc_app_stop_agreed(hpc_comm_world());
    return pp->stop || next >= t->total || (every && next % every == 0);
}

static void run_ops(pipe_t *pp, train_t *t, int drain)
{
    pp->nops = pipe_schedule_step(pp->sched, pp->S, pp->s, pp->M, pp->fresh, !drain, pp->ops);
    if (pp->fresh) pp->act_next = pp->grad_next = pp->base;
    post_inputs(pp, t);
    post_grads(pp, t, pp->base);
    for (int k = 0; k < pp->nops; k++) {
        int last = k == pp->nops - 1;   /* every step ends with its last backward */
        int64_t mb = pp->base + pp->ops[k].mb;
        if (pp->ops[k].kind == 'F') forward(pp, t, mb);
        else backward(pp, t, mb, last);
    }
    pp->fresh = drain;
}

int pipe_step(train_t *t)
{
    pipe_t *pp = t->pipe;
    pp->lsum = 0;
    pp->backs = 0;
    pp->base = t->step * pp->M;
    if (pp->sched == PIPE_STALE) stale_step_begin(pp, t);
    t->dp.exposed = 0;
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
    if (dp_finish(&t->dp) < 0) hpc_app_fatal(HPC_EXIT_DATA, "gradient allreduce: %s", hpc_last_cause());
    double all = 0;
    MPI_Allreduce(&pp->lsum, &all, 1, MPI_DOUBLE, MPI_SUM, hpc_comm_world());
    t->train_loss = all / train_loss_terms(t);
    if (!isfinite(t->train_loss)) return -1;
    if (pp->sched != PIPE_STALE) {
        double lr = sched_lr(t->o, t->step, t->total);
        /* the norm over every stage's range (the replicas hold the same) */
        t->grad_norm = optim_clip(&t->opt, t->dev, t->g, pp->r0, pp->r1, pp->pipe_comm);
        optim_step_range(&t->opt, t->dev, t->p, t->g, pp->r0, pp->r1, lr, t->step + 1);
    }
    t->step++;
    return 0;
}

int pipe_stop_agreed(train_t *t)
{
    pipe_t *pp = t->pipe;
    /* stale: agreed at the start of the step, which drained for it */
    if (pp && pp->sched == PIPE_STALE) return pp->stop;
    return hpc_app_stop_agreed(hpc_comm_world());
}

/* ---- the whole model on every rank ---- */

static int gather_buffer(pipe_t *pp, train_t *t, float *buf)
{
    size_t n = t->model.n;
    memset(t->host, 0, n * sizeof(float));
    t->dev->to_host(t->host + pp->r0, buf + pp->r0, (pp->r1 - pp->r0) * sizeof(float));
    /* disjoint ranges, zeros elsewhere: the sum is every stage's values */
    HPC_TRY(hpc_allreduce(HPC_IN_PLACE, t->host, n, HPC_FLOAT32, HPC_SUM, pp->pipe_comm, HPC_ALG_AUTO));
    t->dev->to_dev(buf, t->host, n * sizeof(float));
    return 0;
}

int pipe_gather(train_t *t, int with_state)
{
    pipe_t *pp = t->pipe;
    if (!pp || pp->S == 1) return 0;
    HPC_TRY(gather_buffer(pp, t, t->p));
    for (int k = 0; with_state && k < t->opt.nstates; k++) HPC_TRY(gather_buffer(pp, t, t->opt.state[k]));
    return 0;
}

int pipe_layer_writer(const train_t *t, int l)
{
    const pipe_t *pp = t->pipe;
    int s = 0;
    while (pp && l >= pp->first[s + 1]) s++;
    return s;   /* stage s of replica 0 is rank s */
}

/* ---- what the summary says ---- */

/* Append to buf[k..len) what fmt says; the new end (at most len) */
static size_t put(char *buf, size_t len, size_t k, const char *fmt, ...)
{
    if (k >= len) return len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + k, len - k, fmt, ap);
    va_end(ap);
    return n < 0 || k + (size_t)n >= len ? len : k + (size_t)n;
}

/* " 1.0 MiB/2.0 MiB/...", appended */
static size_t put_bytes(char *buf, size_t len, size_t k, const double *v, int n)
{
    for (int s = 0; s < n; s++) {
        char b[32];
        hpc_format_bytes(v[s], b, sizeof b);
        k = put(buf, len, k, "%s%s", s ? "/" : " ", b);
    }
    return k;
}

void pipe_summary(train_t *t, char *buf, size_t len)
{
    pipe_t *pp = t->pipe;
    int S = pp->S;
    enum { BUSY = 0, PEAK = TRAIN_MAXL, GPIPE = 2 * TRAIN_MAXL };
    double mine[3 * TRAIN_MAXL] = {0}, all[3 * TRAIN_MAXL] = {0}, span = pp->span, most = 0;
    mine[BUSY + pp->s] = pp->busy;
    mine[PEAK + pp->s] = (double)pp->alive_peak * (double)pp->slot_bytes + (double)pp->work.bytes;
    /* what gpipe holds instead: every micro-batch of the step */
    mine[GPIPE + pp->s] = (double)pp->M * (double)pp->slot_bytes + (double)pp->work.bytes;
    /* replica 0 speaks for the others; the span is the slowest stage's */
    if (pp->d != 0) memset(mine, 0, sizeof mine);
    MPI_Allreduce(mine, all, 3 * TRAIN_MAXL, MPI_DOUBLE, MPI_SUM, hpc_comm_world());
    MPI_Allreduce(&span, &most, 1, MPI_DOUBLE, MPI_MAX, hpc_comm_world());
    double used = 0;
    for (int s = 0; s < S; s++) used += most > 0 ? all[BUSY + s] / most : 0;
    char reps[48] = "";
    if (pp->D > 1) snprintf(reps, sizeof reps, " x %d replicas", pp->D);
    char replayed[64] = "";
    if (isfinite(pp->bubble_replay))
        snprintf(replayed, sizeof replayed, ", %.1f%% replayed", 100 * pp->bubble_replay);
    size_t k = put(buf, len, 0, "; pipeline %s, %d stage%s%s, %d micro-batches: bubble %.1f%% (theory %.1f%%%s), "
                   "utilisation", sched_name[pp->sched], S, S > 1 ? "s" : "", reps, pp->M, 100 * (1 - used / S),
                   100 * pipe_bubble_theory(pp->sched, S, pp->M), replayed);
    for (int s = 0; s < S; s++)
        k = put(buf, len, k, "%s%.0f%%", s ? "/" : " ", most > 0 ? 100 * all[BUSY + s] / most : 0);
    k = put_bytes(buf, len, put(buf, len, k, ", peak activations"), all + PEAK, S);
    if (pp->sched != PIPE_GPIPE) put(buf, len, put_bytes(buf, len, put(buf, len, k, " (gpipe"), all + GPIPE, S), ")");
}

void pipe_finish(train_t *t)
{
    if (t->pipe) timeline_write(t->pipe, t);
}
