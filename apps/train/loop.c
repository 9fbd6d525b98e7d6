/* loop.c - the training loop, whatever the parallel strategy underneath
 * (train.h's strategy_t: the loop calls it, it never calls the loop).
 *
 * A step is the strategy's: it leaves the step's loss, the same on every
 * rank, which is checked here (a NaN or infinity ends the job with the
 * last checkpoint kept).  After a step: the metrics row, validation, the
 * replica check, the stop signal (agreed by all ranks: the strategy
 * says how), the checkpoint.
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
 *                              interrupt a run however fast the machine)
 *   HPC_TRAIN_TEST_LAG=R:S:MS  rank R sleeps MS ms as step S starts: the
 *                              others wait for it in that step's gradient
 *                              allreduce (communication not hidden) */
typedef struct {
    int stop_rank, desync_rank, lag_rank;
    long long stop_step, desync_step, lag_step;
    long pace_ms, lag_ms;
} hooks_t;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) continue;
}

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
    int64_t lag[3];
    h->lag_rank = -1;
    h->lag_step = -1;
    h->lag_ms = 0;
    if (hpc_app_test_hook("HPC_TRAIN_TEST_LAG", 3, lag) == 3) {
        h->lag_rank = (int)lag[0];
        h->lag_step = lag[1];
        h->lag_ms = (long)lag[2];
    }
}

static void hooks_before_step(const hooks_t *h, const train_t *t)
{
    if (h->lag_rank == hpc_rank() && t->step + 1 == h->lag_step) sleep_ms(h->lag_ms);
}

static void hooks_after_step(const hooks_t *h, train_t *t)
{
    if (h->stop_rank == hpc_rank() && t->step == h->stop_step) hpc_app_stop_raise();
    size_t first, count;
    float *w0 = hold_piece(&t->hold[0], 0, 0, &first, &count);
    if (h->desync_rank == hpc_rank() && t->step == h->desync_step && w0 && first == 0) {
        float v;   /* the first weight of layer 0, where this rank holds it */
        t->dev->to_host(&v, w0, sizeof v);
        v += 1e-3f;
        t->dev->to_dev(w0, &v, sizeof v);
    }
    if (h->pace_ms > 0) sleep_ms(h->pace_ms);   /* the whole pause, even when a signal comes */
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

/* Every rank runs as many chunks as the rank with the most (eval may be
 * collective: gathered layers, pipeline messages), some of them empty. */
static int64_t eval_chunks(const train_t *t)
{
    int64_t mine = (t->loader.val_n + t->eval_rows - 1) / t->eval_rows, most = mine;
    MPI_Allreduce(&mine, &most, 1, MPI_INT64_T, MPI_MAX, hpc_comm_world());
    return most;
}

/* Cross-entropy: the rows whose largest output is their label (the
 * first of equal ones, as torch.argmax) */
static double correct(const train_t *t, const float *out_dev, const float *y, int rows, float *buf)
{
    const int64_t k = t->data.nout;
    double right = 0;
    t->dev->to_host(buf, out_dev, (size_t)rows * k * sizeof(float));
    for (int r = 0; r < rows; r++) {
        int64_t best = 0;
        for (int64_t c = 1; c < k; c++)
            if (buf[r * k + c] > buf[r * k + best]) best = c;
        right += (double)best == (double)y[r];
    }
    return right;
}

double train_validate(train_t *t, double *mse_data, double *accuracy)
{
    const loader_t *l = &t->loader;
    const data_t *d = &t->data;
    double sum[2] = {0, 0}, all[2] = {0, 0};
    int mse = t->o->loss == LOSS_MSE;
    float *buf = malloc(((size_t)t->eval_rows * d->nout + 1) * sizeof *buf);
    if (!buf) hpc_app_fatal(HPC_EXIT_DATA, "out of memory for the validation outputs");
    int64_t chunks = eval_chunks(t);
    for (int64_t c = 0; c < chunks; c++) {
        int64_t s = c * t->eval_rows, left = l->val_n - s;
        int rows = (int)(left <= 0 ? 0 : left < t->eval_rows ? left : t->eval_rows);
        const float *x = rows ? l->val_x + s * d->nin : l->val_x, *y = rows ? l->val_y + s * d->ydim : l->val_y;
        const float *yhost = y;
        if (rows) train_to_device(t, &x, NULL, rows);
        const float *out = t->strat->eval(t, x, rows);
        if (!out || !rows) continue;
        train_to_device(t, NULL, &y, rows);
        sum[0] += t->dev->loss(t->o->loss, rows, (int)d->nout, out, y, 0, NULL);
        sum[1] += mse ? data_sq_error(t, out, yhost, rows, buf) : correct(t, out, yhost, rows, buf);
    }
    free(buf);
    MPI_Allreduce(sum, all, 2, MPI_DOUBLE, MPI_SUM, hpc_comm_world());
    double terms = (double)d->nval * (mse ? (double)d->nout : 1.0);
    *mse_data = d->nval && mse ? all[1] / terms : NAN;
    *accuracy = d->nval && !mse ? all[1] / (double)d->nval : NAN;
    return d->nval ? all[0] / terms : NAN;
}

static void check_sync(train_t *t)
{
    int same = 1;
    if (t->strat->in_sync(t, &same) < 0) hpc_app_fatal(HPC_EXIT_DATA, "--check-sync: %s", hpc_last_cause());
    if (!same)
        hpc_app_exit(HPC_EXIT_DATA, "the parameters differ between ranks after step %lld (--check-sync)",
                     (long long)t->step);
}

/* Since the previous row: samples, seconds, seconds in collectives, what
 * they would have taken without overlap, and of that what was hidden. */
typedef struct {
    int64_t samples;
    double wall, comm, possible, hidden;
} window_t;

/* What a step hid of its communication: its blocking time less what it
 * spent in collective calls, none where it spent more (waiting for a late
 * rank is not negative overlap).  Counted per step, so that the rows of
 * metrics.csv and the summary's total say the same: the total is the
 * rows' mean weighted by their blocking time, not a ratio that one slow
 * step takes below zero. */
static double step_hidden(const train_t *t)
{
    double h = t->step_blocking - t->step_comm;
    return h > 0 ? h : 0;
}

static void after_step(train_t *t, window_t *w, const hooks_t *h, hpc_progress_t *prog, int *stop)
{
    const train_opts_t *o = t->o;
    int evaluate = t->step % t->steps_per_epoch == 0 || t->step == t->total ||
                   (o->eval_every && t->step % o->eval_every == 0);
    double mse_data = NAN, acc = NAN, val = evaluate ? train_validate(t, &mse_data, &acc) : NAN;
    if (evaluate) {
        t->val_loss = val;
        t->val_mse = mse_data;
        t->val_acc = acc;
    }
    if (t->step % o->log_every == 0 || evaluate) {
        double share = w->wall > 0 ? w->comm / w->wall : 0;
        double hidden = w->possible > 0 ? w->hidden / w->possible : 0;
        metrics_row(t, sched_lr(o, t->step - 1, t->total), val, mse_data, acc, w->wall > 0 ? w->samples / w->wall : 0,
                    share, hidden);
        *w = (window_t){0, 0, 0, 0, 0};
    }
    if (o->check_sync && t->step % o->check_sync == 0) check_sync(t);
    hooks_after_step(h, t);
    *stop = t->strat->stop(t);
    /* a stop agreed at the last step (a vote a step late) finds the run
     * done: it ends as finished, on every rank alike */
    if (*stop && t->step >= t->total) *stop = 0;
    if (*stop) hpc_info("stop agreed after step %lld", (long long)t->step);
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
    window_t w = {0, 0, 0, 0, 0};
    int stop = 0;
    double t0 = hpc_wtime();
    while (t->step < t->total && !stop) {
        double s0 = hpc_wtime();
        t->step_comm = t->step_blocking = 0;
        hooks_before_step(&h, t);
        if (t->strat->step(t) < 0) {
            char kept[160] = "none was written";
            if (t->saved_step >= 0) snprintf(kept, sizeof kept, "the one of step %lld is kept", (long long)t->saved_step);
            hpc_progress_end(prog);
            hpc_app_exit(HPC_EXIT_DATA, "the loss became %s at step %lld; stopped without a checkpoint of it "
                         "(%s/checkpoint.h5: %s)", isnan(t->train_loss) ? "NaN" : "infinite",
                         (long long)t->step + 1, o->out, kept);
        }
        t->step++;
        double dt = hpc_wtime() - s0;
        w.samples += o->batch * o->accum;
        w.wall += dt;
        w.comm += t->step_comm;
        w.possible += t->step_blocking;
        w.hidden += step_hidden(t);
        t->t_comm += t->step_comm;
        t->comm_possible += t->step_blocking;
        t->comm_hidden += step_hidden(t);
        t->steps_run++;
        t->samples += o->batch * o->accum;
        after_step(t, &w, &h, prog, &stop);
    }
    t->t_run = hpc_wtime() - t0;
    hpc_progress_end(prog);
    return stop ? HPC_EXIT_STOPPED : HPC_EXIT_OK;
}
