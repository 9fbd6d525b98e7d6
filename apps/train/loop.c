/* loop.c - the training loop, whatever the parallel strategy underneath.
 *
 * A step: --accum micro-steps, each forward, loss and backward over this
 * rank's slice of a global batch, gradients summed in place (beta 1) and
 * reduced only on the last micro-step (dp.c); then the loss of the step,
 * the same on every rank, is checked (a NaN or infinity ends the job with
 * the last checkpoint kept), and the optimiser steps.  After a step: the
 * metrics row, validation, the replica check, the stop signal (agreed by
 * all ranks, once a step), the checkpoint.
 */
#include "config.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "train.h"

/* Test hooks, read once; nothing else uses them:
 *   HPC_TRAIN_TEST_STOP=R:S    rank R acts as if a signal came after step S
 *   HPC_TRAIN_TEST_DESYNC=R:S  rank R nudges a parameter after step S
 *   HPC_TRAIN_TEST_PACE=MS     sleep MS ms a step (so that a test can
 *                              interrupt a run however fast the machine) */
typedef struct {
    int stop_rank, desync_rank;
    long long stop_step, desync_step;
    long pace_ms;
} hooks_t;

static void hooks_read(hooks_t *h)
{
    int64_t v[2];
    h->stop_rank = h->desync_rank = -1;
    h->stop_step = h->desync_step = -1;
    if (hpc_app_test_hook("HPC_TRAIN_TEST_STOP", 2, v) == 2) {
        h->stop_rank = (int)v[0];
        h->stop_step = v[1];
    }
    if (hpc_app_test_hook("HPC_TRAIN_TEST_DESYNC", 2, v) == 2) {
        h->desync_rank = (int)v[0];
        h->desync_step = v[1];
    }
    h->pace_ms = hpc_app_test_hook("HPC_TRAIN_TEST_PACE", 1, v) == 1 ? (long)v[0] : 0;
}

static void hooks_after_step(const hooks_t *h, train_t *t)
{
    if (h->stop_rank == hpc_rank() && t->step == h->stop_step) hpc_app_stop_raise();
    if (h->desync_rank == hpc_rank() && t->step == h->desync_step) {
        float v;
        t->dev->to_host(&v, t->p + t->model.w[0], sizeof v);
        v += 1e-3f;
        t->dev->to_dev(t->p + t->model.w[0], &v, sizeof v);
    }
    if (h->pace_ms > 0) {   /* the whole pause, even when a signal comes */
        struct timespec ts = {h->pace_ms / 1000, (h->pace_ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR) continue;
    }
}

double train_loss_terms(const train_t *t)
{
    double n = (double)t->o->batch * (double)t->o->accum;
    return t->o->loss == LOSS_MSE ? n * (double)t->data.nout : n;
}

int train_loss_normalised(const train_t *t)
{
    return t->o->loss == LOSS_MSE && t->o->normalize;
}

/* This rank's rows on the device: the loader's buffer itself on the CPU,
 * a copy on the GPU. */
static void to_device(train_t *t, const float **x, const float **y, int rows)
{
    if (t->dev == train_dev_cpu()) return;
    t->dev->to_dev(t->xdev, *x, (size_t)rows * t->data.nin * sizeof(float));
    t->dev->to_dev(t->ydev, *y, (size_t)rows * t->data.ydim * sizeof(float));
    *x = t->xdev;
    *y = t->ydev;
}

static void micro_step(train_t *t, int64_t epoch, int64_t mb, int k, double *lsum)
{
    const float *x, *y;
    int rows = (int)t->loader.rank_n;
    if (loader_batch(&t->loader, epoch, mb, &x, &y) < 0)
        hpc_app_fatal(HPC_EXIT_DATA, "reading the batch: %s", hpc_last_cause());
    to_device(t, &x, &y, rows);
    t->acts.a0 = x;
    model_forward(&t->model, t->dev, t->p, &t->acts, rows);
    *lsum += t->dev->loss(t->o->loss, rows, (int)t->data.nout, model_output(&t->model, &t->acts), y,
                          (float)(1.0 / train_loss_terms(t)), t->acts.d[0]);
    int last = k == t->o->accum - 1;
    dp_begin(&t->dp, last);
    if (last && t->dp.size > 1) {   /* the loss rides in slot 0 with bucket 0 */
        float l = (float)*lsum;
        t->dev->to_dev(t->g, &l, sizeof l);
    }
    model_backward(&t->model, t->dev, t->p, t->g, &t->acts, rows, k ? 1.0f : 0.0f, dp_layer_done, &t->dp);
}

/* One optimiser step; 0, or -1 if the loss is not finite (nothing applied) */
static int one_step(train_t *t)
{
    if (t->pipe) return pipe_step(t);
    int64_t epoch = t->step / t->steps_per_epoch;
    int64_t mb = (t->step % t->steps_per_epoch) * t->o->accum;
    double lsum = 0;
    t->dp.exposed = 0;
    for (int k = 0; k < t->o->accum; k++) micro_step(t, epoch, mb + k, k, &lsum);
    if (dp_finish(&t->dp) < 0) hpc_app_fatal(HPC_EXIT_DATA, "gradient allreduce: %s", hpc_last_cause());
    if (t->dp.size > 1) {
        float l;
        t->dev->to_host(&l, t->g, sizeof l);
        lsum = l;
    }
    t->train_loss = lsum / train_loss_terms(t);
    if (!isfinite(t->train_loss)) return -1;
    double lr = sched_lr(t->o, t->step, t->total);
    t->grad_norm = optim_step(&t->opt, t->dev, t->p, t->g, t->model.n, lr, t->step + 1);
    t->step++;
    return 0;
}

/* Squared errors in the target's units: the model predicts (y - mean) /
 * std, so each output's error is its normalised error times std. */
static double data_sq_error(const train_t *t, const float *out_dev, const float *y, int rows, float *buf)
{
    const data_t *d = &t->data;
    double sum = 0;
    t->dev->to_host(buf, out_dev, (size_t)rows * d->nout * sizeof(float));
    for (int r = 0; r < rows; r++)
        for (int64_t c = 0; c < d->nout; c++) {
            double e = ((double)buf[r * d->nout + c] - (double)y[r * d->ydim + c]) * d->y_std[c];
            sum += e * e;
        }
    return sum;
}

double train_validate(train_t *t, double *mse_data)
{
    const loader_t *l = &t->loader;
    const data_t *d = &t->data;
    double sum[2] = {0, 0}, all[2] = {0, 0};
    int mse = t->o->loss == LOSS_MSE;
    float *buf = mse ? malloc(((size_t)t->acts.rows * d->nout + 1) * sizeof *buf) : NULL;
    if (mse && !buf) hpc_app_fatal(HPC_EXIT_DATA, "out of memory for the validation outputs");
    /* a pipeline validates the whole model on its first stages */
    if (pipe_gather(t, 0) < 0) hpc_app_fatal(HPC_EXIT_DATA, "gathering the model: %s", hpc_last_cause());
    for (int64_t s = 0; t->validates && s < l->val_n; s += t->acts.rows) {
        int rows = (int)(l->val_n - s < t->acts.rows ? l->val_n - s : t->acts.rows);
        const float *x = l->val_x + s * d->nin, *y = l->val_y + s * d->ydim, *yhost = y;
        to_device(t, &x, &y, rows);
        t->acts.a0 = x;
        model_forward(&t->model, t->dev, t->p, &t->acts, rows);
        const float *out = model_output(&t->model, &t->acts);
        sum[0] += t->dev->loss(t->o->loss, rows, (int)d->nout, out, y, 0, NULL);
        if (mse) sum[1] += data_sq_error(t, out, yhost, rows, buf);
    }
    free(buf);
    MPI_Allreduce(sum, all, 2, MPI_DOUBLE, MPI_SUM, hpc_comm_world());
    double terms = (double)d->nval * (mse ? (double)d->nout : 1.0);
    *mse_data = d->nval && mse ? all[1] / terms : NAN;
    return d->nval ? all[0] / terms : NAN;
}

static void check_sync(train_t *t)
{
    int same = 1;
    if (pipe_gather(t, 0) < 0) hpc_app_fatal(HPC_EXIT_DATA, "gathering the model: %s", hpc_last_cause());
    t->dev->to_host(t->host, t->p, t->model.n * sizeof(float));
    if (hpc_all_same(t->host, t->model.n * sizeof(float), hpc_comm_world(), &same) < 0)
        hpc_app_fatal(HPC_EXIT_DATA, "--check-sync: %s", hpc_last_cause());
    if (!same)
        hpc_app_exit(HPC_EXIT_DATA, "the parameters differ between ranks after step %lld (--check-sync)",
                     (long long)t->step);
}

/* Since the previous row: samples, seconds, seconds in collectives and
 * what they would have taken without overlap. */
typedef struct {
    int64_t samples;
    double wall, comm, possible;
} window_t;

static void after_step(train_t *t, window_t *w, const hooks_t *h, hpc_progress_t *prog, int *stop)
{
    const train_opts_t *o = t->o;
    int evaluate = t->step % t->steps_per_epoch == 0 || t->step == t->total ||
                   (o->eval_every && t->step % o->eval_every == 0);
    double mse_data = NAN, val = evaluate ? train_validate(t, &mse_data) : NAN;
    if (evaluate) {
        t->val_loss = val;
        t->val_mse = mse_data;
    }
    if (t->step % o->log_every == 0 || evaluate) {
        double share = w->wall > 0 ? w->comm / w->wall : 0;
        double hidden = w->possible > 0 ? 1 - w->comm / w->possible : 0;
        metrics_row(t, sched_lr(o, t->step - 1, t->total), val, mse_data, w->wall > 0 ? w->samples / w->wall : 0,
                    share, hidden < 0 ? 0 : hidden);
        *w = (window_t){0, 0, 0, 0};
    }
    if (o->check_sync && t->step % o->check_sync == 0) check_sync(t);
    hooks_after_step(h, t);
    *stop = t->pipe ? pipe_stop_agreed(t) : hpc_app_stop_agreed(hpc_comm_world());
    if (*stop || (o->ckpt_every && t->step % o->ckpt_every == 0) || t->step == t->total) {
        int rc = ckpt_save(t);
        if (rc < 0) hpc_app_exit(HPC_EXIT_DATA, "writing the checkpoint: %s", hpc_last_cause());
    }
    hpc_progress_update(prog, (uint64_t)t->step);
}

/* The progress line's own fields: "epoch 3.20/10, normalised loss
 * 0.0123, lr 0.001, val 0.0146" (drawn at most once in a while) */
static void progress_fields(void *ctx, char *buf, size_t len)
{
    const train_t *t = ctx;
    char val[64] = "";
    if (isfinite(t->val_loss)) snprintf(val, sizeof val, ", val %.4g", t->val_loss);
    snprintf(buf, len, "epoch %.2f/%.4g, %s %.4g, lr %.3g%s", (double)t->step / (double)t->steps_per_epoch,
             (double)t->total / (double)t->steps_per_epoch, train_loss_normalised(t) ? "normalised loss" : "loss",
             t->train_loss,
             sched_lr(t->o, t->step > 0 ? t->step - 1 : 0, t->total), val);
}

static hpc_progress_t *progress_start(train_t *t)
{
    if (hpc_rank() != 0) return NULL;
    hpc_progress_t *p = hpc_progress_start("train", "steps", (uint64_t)t->total);
    hpc_progress_from(p, (uint64_t)t->step);
    hpc_progress_rate(p, "samples", (double)t->o->batch * (double)t->o->accum);
    hpc_progress_fields(p, progress_fields, t);
    return p;
}

int train_loop(train_t *t)
{
    const train_opts_t *o = t->o;
    hooks_t h;
    hooks_read(&h);
    hpc_progress_t *prog = progress_start(t);
    window_t w = {0, 0, 0, 0};
    int stop = 0;
    double t0 = hpc_wtime();
    while (t->step < t->total && !stop) {
        double s0 = hpc_wtime();
        if (one_step(t) < 0) {
            char kept[160] = "none was written";
            if (t->saved_step >= 0) snprintf(kept, sizeof kept, "the one of step %lld is kept", (long long)t->saved_step);
            hpc_progress_end(prog);
            hpc_app_exit(HPC_EXIT_DATA, "the loss became %s at step %lld; stopped without a checkpoint of it "
                         "(%s/checkpoint.h5: %s)", isnan(t->train_loss) ? "NaN" : "infinite",
                         (long long)t->step + 1, o->out, kept);
        }
        double dt = hpc_wtime() - s0;
        w.samples += o->batch * o->accum;
        w.wall += dt;
        w.comm += t->dp.exposed;
        w.possible += t->dp.calib;
        t->t_comm += t->dp.exposed;
        t->comm_possible += t->dp.calib;
        t->steps_run++;
        t->samples += o->batch * o->accum;
        after_step(t, &w, &h, prog, &stop);
    }
    t->t_run = hpc_wtime() - t0;
    hpc_progress_end(prog);
    return stop ? HPC_EXIT_STOPPED : HPC_EXIT_OK;
}
