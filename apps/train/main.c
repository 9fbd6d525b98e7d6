/* main.c - hpc-train: start through the app kit, open the data and the
 * run folder, start afresh (normalisation statistics, PyTorch's
 * initialisation on rank 0, broadcast, checked) or resume from the
 * checkpoint, train (loop.c), and say how it went in one line.
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "train.h"

/* Buffers of the model on the device; 0 or -1 */
static int buffers(train_t *t)
{
    const train_dev_t *dev = t->dev;
    size_t bytes = t->model.n * sizeof(float);
    int rows = (int)t->loader.rank_n;
    t->p = dev->alloc(bytes);
    t->g = dev->alloc(bytes);
    t->host = calloc(1, bytes);
    if (!t->p || !t->g || !t->host) return -1;
    if (optim_open(&t->opt, t->o, dev, t->model.n) < 0) return -1;
    if (acts_alloc(&t->acts, &t->model, dev, rows) < 0) return -1;
    if (dev != train_dev_cpu()) {
        t->xdev = dev->alloc((size_t)rows * t->data.nin * sizeof(float));
        t->ydev = dev->alloc((size_t)rows * t->data.ydim * sizeof(float));
        if (!t->xdev || !t->ydev) return -1;
    }
    return 0;
}

/* Rank 0 draws the initial weights, every rank gets its copy; or every
 * rank reads them from --init-from. */
static void fresh_model(train_t *t)
{
    if (t->o->init_from) {
        char err[1024] = "";
        int rc = ckpt_init_from(t, err, sizeof err);
        hpc_app_agree(rc ? HPC_EXIT_DATA : 0, "%s", err);
    } else {
        if (hpc_rank() == 0) model_init(&t->model, t->o->seed, t->host);
        HPC_CHECK(hpc_bcast(t->host, t->model.n, HPC_FLOAT32, 0, hpc_comm_world(), HPC_ALG_AUTO));
    }
    t->dev->to_dev(t->p, t->host, t->model.n * sizeof(float));
}

static void same_start(train_t *t)
{
    int same = 0;
    t->dev->to_host(t->host, t->p, t->model.n * sizeof(float));
    HPC_CHECK(hpc_all_same(t->host, t->model.n * sizeof(float), hpc_comm_world(), &same));
    if (!same) hpc_app_exit(HPC_EXIT_DATA, "the ranks start from different parameters");
}

/* The data, checked against the options */
static void open_data(train_t *t, train_opts_t *o)
{
    char err[1024] = "";
    int64_t classes = o->loss == LOSS_CE && o->layers_given ? o->size[o->nlayers] : 0;
    int rc = data_open(&t->data, o, classes, err, sizeof err);
    hpc_app_agree(rc ? HPC_EXIT_DATA : 0, "%s", err);
    const data_t *d = &t->data;
    t->steps_per_epoch = d->ntrain / (o->batch * o->accum);
    t->total = o->steps ? o->steps : o->epochs * t->steps_per_epoch;
    if (train_opts_fit(o, d->nin, d->nout, d->ntrain, hpc_size(), t->total, err, sizeof err) < 0)
        hpc_app_exit(HPC_EXIT_USAGE, "%s", err);
}

/* The run folder, and whether there is a checkpoint to continue */
static void open_run(train_t *t)
{
    const train_opts_t *o = t->o;
    char path[4096];
    hpc_app_agree_rc(hpc_run_open(o->out, hpc_comm_world(), &t->run), HPC_EXIT_DATA, "--out");
    hpc_app_agree_rc(hpc_run_path(t->run, "checkpoint.h5", path, sizeof path), HPC_EXIT_USAGE, "--out");
    int have = hpc_ckpt_exists(path, hpc_comm_world());
    if (o->resume && !have) hpc_app_exit(HPC_EXIT_DATA, "--resume: there is no %s to continue", path);
    if (!o->resume && have && !o->force)
        hpc_app_exit(HPC_EXIT_DATA, "%s exists: continue it with --resume, or start over with --force", path);
}

/* The host memory a rank will hold, asked of every node before any of it
 * is allocated and before the run folder exists (a mistyped --layers
 * must not map gigabytes first): the model's buffers (a host copy; on the
 * CPU also the parameters, gradients and optimiser states), activations
 * and their gradients for the rank's rows, its block of validation,
 * --preload's training set and the loader's window (4 MiB at most).  A
 * pipeline's stages allocate more in pipe_open (counted there, when it
 * fails). */
static void check_memory(const train_t *t, const train_opts_t *o, int parts)
{
    const model_t *m = &t->model;
    const data_t *d = &t->data;
    const double f = sizeof(float), rows = (double)t->loader.rank_n;
    int cpu = t->dev == train_dev_cpu(), nstates = o->optim != OPT_SGD ? 2 : o->momentum != 0;
    double model = (double)m->n * f * (1 + (cpu ? 2 + nstates : 0)), acts = 0, widest = 0;
    for (int l = 0; l <= m->nl; l++) {
        if (l > 0) acts += rows * (double)m->size[l] * (o->act == ACT_GELU && l < m->nl ? 2 : 1);
        if ((double)m->size[l] > widest) widest = (double)m->size[l];
    }
    acts = cpu ? (acts + 2 * rows * widest) * f : 0;
    double row = (double)(d->nin + d->ydim) * f;
    double data = (double)((d->nval + parts - 1) / parts) * row + (o->preload ? (double)d->ntrain * row : 0) +
                  4.0 * 1048576;
    char what[256];
    snprintf(what, sizeof what, "a model of %zu parameters (%d layers) on %lld rows a rank%s", m->nparams,
             m->nl, (long long)t->loader.rank_n, o->preload ? " with --preload" : "");
    hpc_app_need_memory(model + acts + data, what);
}

/* Fresh: statistics (they also refuse NaN in the data) and initial weights */
static void start(train_t *t)
{
    char err[1024] = "";
    if (t->o->resume) {
        int rc = ckpt_load(t, err, sizeof err);
        hpc_app_agree(rc ? HPC_EXIT_DATA : 0, "%s", err);
        if (hpc_rank() == 0 && !hpc_app_quiet())
            printf("%s: resuming %s/checkpoint.h5 at step %lld of %lld\n", TRAIN_PROG, t->o->out,
                   (long long)t->step, (long long)t->total);
        return;
    }
    int rc = stats_compute(&t->data, err, sizeof err);
    hpc_app_agree(rc ? HPC_EXIT_DATA : 0, "%s", err);
    if (!t->o->normalize) {   /* checked, but the identity */
        for (int64_t i = 0; i < t->data.nin; i++) t->data.x_mean[i] = 0, t->data.x_std[i] = 1;
        for (int i = 0; i < t->data.ydim; i++) t->data.y_mean[i] = 0, t->data.y_std[i] = 1;
    }
    fresh_model(t);
    t->val_loss = NAN;
    t->val_mse = NAN;
    t->train_loss = NAN;
}

static double peak_rss(void)
{
    struct rusage ru;
    double mine = getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss * 1024.0 : 0, top = mine;
    MPI_Allreduce(&mine, &top, 1, MPI_DOUBLE, MPI_MAX, hpc_comm_world());
    return top;
}

/* "train loss 0.0012, val loss 0.0015 (normalised targets), val MSE
 * 0.034 (data units)": which values the losses are over */
static void losses(const train_t *t, char *buf, size_t len)
{
    const char *space = train_loss_normalised(t) ? "normalised targets"
                        : t->o->loss == LOSS_CE ? "cross-entropy" : "data units";
    int n = snprintf(buf, len, "train loss %.4g", t->train_loss);
    if (isfinite(t->val_loss)) n += snprintf(buf + n, len - n, ", val loss %.4g", t->val_loss);
    n += snprintf(buf + n, len - n, " (%s)", space);
    if (train_loss_normalised(t) && isfinite(t->val_mse))
        snprintf(buf + n, len - n, ", val MSE %.4g (data units)", t->val_mse);
}

static void summary(train_t *t)
{
    double rate = t->t_run > 0 ? t->samples / t->t_run : 0, rss = peak_rss();
    double share = t->t_run > 0 ? t->t_comm / t->t_run : 0;
    double hidden = t->comm_possible > 0 ? 1 - t->t_comm / t->comm_possible : 0;
    double data_b = (double)t->loader.bytes, model_b = (double)t->model.n * 4 * (2 + t->opt.nstates);
    char r[32], mem[32], db[32], mb[32], ab[32], loss[160], pipe[1024] = "";
    if (t->pipe) pipe_summary(t, pipe, sizeof pipe);
    hpc_format_count(rate, r, sizeof r);
    hpc_format_bytes(rss, mem, sizeof mem);
    hpc_format_bytes(data_b, db, sizeof db);
    hpc_format_bytes(model_b, mb, sizeof mb);
    hpc_format_bytes((double)t->acts.bytes, ab, sizeof ab);
    losses(t, loss, sizeof loss);
    hpc_app_summary("%lld steps (epoch %.2f) in %.2f s, %s samples/s on %d rank%s (%s); %s; "
                    "communication %.1f%% of the time, %.0f%% hidden; peak memory %s per rank (data %s, "
                    "model+grads+optimizer %s, activations %s)%s; %s/checkpoint.h5",
                    (long long)t->step, (double)t->step / (double)t->steps_per_epoch, t->t_run, r, hpc_size(),
                    hpc_size() > 1 ? "s" : "", t->dev->name, loss, 100 * share,
                    100 * (hidden < 0 ? 0 : hidden), mem, db, mb, ab, pipe, t->o->out);
}

int main(int argc, char **argv)
{
    char err[1024] = "";
    train_opts_t o;
    hpc_app_start(&train_app, &argc, &argv);
    if (train_opts_finish(&o, err, sizeof err) < 0) hpc_app_exit(HPC_EXIT_USAGE, "%s", err);
    train_t t;
    memset(&t, 0, sizeof t);
    t.o = &o;
    t.saved_step = -1;
    t.validates = 1;
    t.argc = argc;
    t.argv = argv;
    t.dev = o.device == DEV_CUDA ? train_dev_cuda(err, sizeof err) : train_dev_cpu();
    hpc_app_agree(t.dev ? 0 : HPC_EXIT_DATA, "%s", err);
    open_data(&t, &o);
    model_layout(&t.model, o.nlayers, o.size, o.act);
    /* the slice of each batch: a rank's (dp), or its replica's (pipeline) */
    int part = hpc_rank(), parts = hpc_size();
    if (o.parallel != PAR_DP) pipe_replica(&o, hpc_rank(), hpc_size(), &part, &parts);
    hpc_block_range(o.batch, parts, part, &t.loader.rank_lo, &t.loader.rank_n);
    check_memory(&t, &o, parts);
    open_run(&t);
    hpc_app_agree(buffers(&t) ? HPC_EXIT_DATA : 0, "out of %s memory for the model", t.dev->name);
    start(&t);
    int rc = loader_open(&t.loader, &t.data, &o, part, parts, err, sizeof err);
    hpc_app_agree(rc ? HPC_EXIT_DATA : 0, "%s", err);
    if (o.parallel != PAR_DP)
        hpc_app_agree_rc(pipe_open(&t), HPC_EXIT_DATA, "pipeline");
    else
        HPC_CHECK(dp_open(&t.dp, &t.model, 0, t.model.nl, t.g, o.bucket_mb, o.alg, hpc_comm_world()));
    same_start(&t);
    hpc_app_agree_rc(metrics_open(&t, o.resume ? t.step : -1), HPC_EXIT_DATA, "metrics.csv");

    if (o.resume && t.step >= t.total) {
        if (hpc_rank() == 0 && !hpc_app_quiet())
            printf("%s: %s/checkpoint.h5 is at step %lld of %lld: nothing to do\n", TRAIN_PROG, o.out,
                   (long long)t.step, (long long)t.total);
    } else if (t.total == 0) {   /* no step: the initial model, for inspection */
        hpc_app_agree_rc(ckpt_save(&t), HPC_EXIT_DATA, "writing the checkpoint");
        summary(&t);
    } else {
        if (train_loop(&t) == HPC_EXIT_STOPPED)
            hpc_app_exit(HPC_EXIT_STOPPED, "%s after step %lld of %lld; %s/checkpoint.h5 is written: "
                         "continue with --resume", hpc_app_stop_why(), (long long)t.step, (long long)t.total,
                         o.out);
        metrics_plot(&t);
        if (t.pipe) pipe_finish(&t);
        summary(&t);
    }
    pipe_close(&t);
    dp_close(&t.dp);
    loader_close(&t.loader);
    acts_free(&t.acts, t.dev);
    optim_close(&t.opt, t.dev);
    t.dev->release(t.p);
    t.dev->release(t.g);
    if (t.xdev) t.dev->release(t.xdev);
    if (t.ydev) t.dev->release(t.ydev);
    free(t.host);
    hpc_run_close(t.run);
    data_close(&t.data);
    return hpc_app_finish();
}
