/* main.c - hpc-train: start through the app kit, open the data, check
 * that what every rank will hold fits --mem-budget (its strategy's
 * formula) before anything is allocated or the run folder is made, open
 * the run folder and the strategy, start afresh (normalisation statistics, PyTorch's
 * initialisation: each rank draws the layers it holds from their
 * streams, checked) or resume from the checkpoint, train (loop.c), and
 * say how it went in one line.
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "train.h"

/* Each rank draws the layers it holds from their streams (the same
 * values for any strategy and rank count), or reads them from
 * --init-from. */
static void fresh_model(train_t *t)
{
    if (t->o->init_from)
        hpc_app_agree_rc(ckpt_init_from(t), HPC_EXIT_DATA, NULL);
    else
        hpc_app_agree_rc(hold_init(&t->hold[0], t->dev, t->o->seed), HPC_EXIT_DATA, "the initial weights");
}

static void same_start(train_t *t)
{
    int same = 0;
    HPC_CHECK(t->strat->in_sync(t, &same));
    if (!same) hpc_app_exit(HPC_EXIT_DATA, "the ranks start from different parameters");
}

/* The data, checked against its kind's schema (data/schemas: one line,
 * exit 1, before anything is allocated) and against the options */
static void open_data(train_t *t, train_opts_t *o)
{
    hpc_app_check_input("--data", o->data, NULL, o->loss == LOSS_CE ? "train-labels" : "train-xy|odegen|odegen-joined");
    if (o->init_from) hpc_app_check_input("--init-from", o->init_from, NULL, "model|checkpoint");
    int64_t classes = o->loss == LOSS_CE && o->layers_given ? o->size[o->nlayers] : 0;
    hpc_app_agree_rc(data_open(&t->data, o, classes), HPC_EXIT_DATA, NULL);
    const data_t *d = &t->data;
    t->steps_per_epoch = d->ntrain / (o->batch * o->accum);
    t->total = o->steps ? o->steps : o->epochs * t->steps_per_epoch;
    if (train_opts_fit(o, d->nin, d->nout, d->ntrain, hpc_size(), t->total) < 0)
        hpc_app_exit(HPC_EXIT_USAGE, "%s", hpc_last_cause());
}

/* What every rank will hold, from its strategy's formula (the summary
 * reports it), against --mem-budget: one line and exit 1 before anything
 * large is allocated or the run folder is made */
static void check_memory(train_t *t)
{
    const train_opts_t *o = t->o;
    train_mem_t m = {0, 0, 0};
    t->strat->need(t, &m);
    m.data = (double)loader_bytes(&t->data, o, t->part, t->parts);
    t->mem = m;
    /* the host memory, asked of every node before any of it is allocated
     * and before the run folder exists (a mistyped --layers must not map
     * gigabytes first): on the GPU, the data and a host copy of the model */
    double mine = m.model + m.acts + m.data;
    double host = t->dev == train_dev_cpu() ? mine : m.data + (double)t->model.n * sizeof(float);
    char what[256];
    snprintf(what, sizeof what, "a model of %zu parameters (%d layers) on %lld rows a rank%s", t->model.nparams,
             t->model.nl, (long long)t->loader.rank_n, o->preload ? " with --preload" : "");
    hpc_app_need_memory(host, what);
    if (!o->mem_budget) return;
    char layers[TRAIN_MAXL * 9 + 16], how[160], sz[5][32];
    train_layers_str(o, layers, sizeof layers);
    strategy_describe(o, how, sizeof how);
    hpc_format_bytes((double)o->mem_budget, sz[4], sizeof sz[4]);
    hpc_format_bytes(mine, sz[0], sizeof sz[0]);
    hpc_format_bytes(m.model, sz[1], sizeof sz[1]);
    hpc_format_bytes(m.acts, sz[2], sizeof sz[2]);
    hpc_format_bytes(m.data, sz[3], sizeof sz[3]);
    hpc_app_agree(mine > (double)o->mem_budget ? HPC_EXIT_DATA : 0,
                  "--mem-budget %s: rank %d would hold %s (model state %s, activations %s, data %s) for "
                  "--layers %s with --optim %s and %s on %d rank%s", sz[4], hpc_rank(), sz[0], sz[1], sz[2],
                  sz[3], layers, o->optim->name, how, hpc_size(), hpc_size() > 1 ? "s" : "");
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
    if (o->resume) hpc_app_check_input("--resume", path, NULL, "checkpoint");
    if (!o->resume && have && !o->force)
        hpc_app_exit(HPC_EXIT_DATA, "%s exists: continue it with --resume, or start over with --force", path);
}

/* The data checked (NaN, infinity) and its digest taken on every start,
 * fresh or resumed: a file edited since the first run is refused as
 * a fresh start would refuse it.  Then, fresh: the statistics and the
 * initial weights; resumed: the checkpoint's (its normalisation wins). */
static void start(train_t *t)
{
    hpc_app_agree_rc(stats_compute(&t->data), HPC_EXIT_DATA, NULL);
    if (t->o->resume) {
        hpc_app_agree_rc(ckpt_load(t), HPC_EXIT_DATA, NULL);
        if (hpc_rank() == 0 && !hpc_app_quiet())
            printf("%s: resuming %s/checkpoint.h5 at step %lld of %lld\n", TRAIN_PROG, t->o->out,
                   (long long)t->step, (long long)t->total);
        return;
    }
    if (!t->o->normalize) {   /* checked, but the identity */
        for (int64_t i = 0; i < t->data.nin; i++) t->data.x_mean[i] = 0, t->data.x_std[i] = 1;
        for (int i = 0; i < t->data.ydim; i++) t->data.y_mean[i] = 0, t->data.y_std[i] = 1;
    }
    fresh_model(t);
    t->val_loss = NAN;
    t->val_mse = NAN;
    t->val_acc = NAN;
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
    else if (isfinite(t->val_acc))
        snprintf(buf + n, len - n, ", val accuracy %.2f%%", 100 * t->val_acc);
}

static void summary(train_t *t)
{
    double rate = t->t_run > 0 ? t->samples / t->t_run : 0, rss = peak_rss();
    double share = t->t_run > 0 ? t->t_comm / t->t_run : 0;
    double hidden = t->comm_possible > 0 ? t->comm_hidden / t->comm_possible : 0;   /* as metrics.csv's rows */
    /* the most any rank holds of each */
    double mine[3] = {t->mem.data, t->mem.model, t->mem.acts}, most[3] = {0, 0, 0};
    MPI_Allreduce(mine, most, 3, MPI_DOUBLE, MPI_MAX, hpc_comm_world());
    char r[32], mem[32], db[32], mb[32], ab[32], loss[160], strat[1024] = "";
    t->strat->summary(t, strat, sizeof strat);
    hpc_format_count(rate, r, sizeof r);
    hpc_format_bytes(rss, mem, sizeof mem);
    hpc_format_bytes(most[0], db, sizeof db);
    hpc_format_bytes(most[1], mb, sizeof mb);
    hpc_format_bytes(most[2], ab, sizeof ab);
    losses(t, loss, sizeof loss);
    /* the kernel a CPU figure was made with, so that it is never compared
     * across machines without it */
    char dev[96];
    snprintf(dev, sizeof dev, "%s%s%s", t->dev->name, *hpc_blas_kernel() && t->o->device != DEV_CUDA ? ", BLAS " : "",
             t->o->device != DEV_CUDA ? hpc_blas_kernel() : "");
    hpc_app_summary("%lld steps (epoch %.2f) in %.2f s, %s samples/s on %d rank%s (%s); %s; "
                    "communication %.1f%% of the time, %.0f%% hidden; peak memory %s per rank (data %s, "
                    "model+grads+optimizer %s, activations %s)%s; %s/checkpoint.h5",
                    (long long)t->step, (double)t->step / (double)t->steps_per_epoch, t->t_run, r, hpc_size(),
                    hpc_size() > 1 ? "s" : "", dev, loss, 100 * share,
                    100 * hidden, mem, db, mb, ab, strat, t->o->out);
}

int main(int argc, char **argv)
{
    train_opts_t *o = &train_opts;
    train_opts_prepare();
    hpc_app_start(&train_app, &argc, &argv);
    if (train_opts_finish(o) < 0) hpc_app_exit(HPC_EXIT_USAGE, "%s", hpc_last_cause());
    train_t t;
    memset(&t, 0, sizeof t);
    t.o = o;
    t.strat = strategy_of(o);
    t.saved_step = -1;
    t.validates = 1;
    t.argc = argc;
    t.argv = argv;
    t.dev = o->device == DEV_CUDA ? train_dev_cuda() : train_dev_cpu();
    hpc_app_agree(t.dev ? 0 : HPC_EXIT_DATA, "%s", hpc_last_cause());
    open_data(&t, o);
    model_layout(&t.model, o->nlayers, o->size, o->act);
    /* the slice of each batch: a rank's (dp), or its replica's (pipeline) */
    t.strat->replica(o, hpc_rank(), hpc_size(), &t.part, &t.parts);
    hpc_block_range(o->batch, t.parts, t.part, &t.loader.rank_lo, &t.loader.rank_n);
    check_memory(&t);
    open_run(&t);
    hpc_app_agree_rc(t.strat->open(&t), HPC_EXIT_DATA, t.strat->name);
    start(&t);
    hpc_app_agree_rc(loader_open(&t.loader, &t.data, o, t.part, t.parts), HPC_EXIT_DATA, NULL);
    same_start(&t);
    hpc_app_agree_rc(metrics_open(&t, o->resume ? t.step : -1), HPC_EXIT_DATA, "metrics.csv");

    if (o->resume && t.step >= t.total) {
        if (hpc_rank() == 0 && !hpc_app_quiet())
            printf("%s: %s/checkpoint.h5 is at step %lld of %lld: nothing to do\n", TRAIN_PROG, o->out,
                   (long long)t.step, (long long)t.total);
    } else if (t.total == 0) {   /* no step: the initial model, for inspection */
        hpc_app_agree_rc(ckpt_save(&t), HPC_EXIT_DATA, "writing the checkpoint");
        summary(&t);
    } else {
        if (train_loop(&t) == HPC_EXIT_STOPPED)
            hpc_app_exit(HPC_EXIT_STOPPED, "%s after step %lld of %lld; %s/checkpoint.h5 is written: "
                         "continue with --resume", hpc_app_stop_why(), (long long)t.step, (long long)t.total,
                         o->out);
        metrics_plot(&t);
        t.strat->finish(&t);
        summary(&t);
    }
    t.strat->close(&t);
    loader_close(&t.loader);
    optim_close(&t.opt, t.dev);
    if (t.xdev) t.dev->release(t.xdev);
    if (t.ydev) t.dev->release(t.ydev);
    hpc_run_close(t.run);
    data_close(&t.data);
    return hpc_app_finish();
}
