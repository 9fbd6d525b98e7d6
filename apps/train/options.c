/* options.c - the command line of hpc-train: its option table, the checks
 * that involve several options, and, once the data is known, the checks
 * against it and the options key a checkpoint records (what must not
 * change for --resume to continue the same run bit for bit).
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pipe.h"

/* The choices the tables give: "sgd|adam|adamw", "seq|gpipe|1f1b|stale"
 * (train_opts_prepare) */
static char optim_choices[256], sched_choices[256];

/* The options: the table's destinations are its fields (the defaults
 * here, the rows below); train_opts_finish derives the rest and checks */
train_opts_t train_opts = {.epochs = 10, .batch = 256, .accum = 1, .log_every = 10, .ckpt_every = 1000,
                           .micro = 1, .step_every = 1, .lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8,
                           .weight_decay = -1, .val_fraction = 0.1, .bucket_mb = 25, .alg = HPC_ALG_AUTO};
#define O train_opts

/* "2,1,1": up to max integers in [1, hi] separated by single commas,
 * into out[0..*n); -1 if anything else */
static int int_list(const char *v, int64_t *out, int max, int64_t hi, int *n)
{
    char *copy = strdup(v), *save = NULL;
    *n = 0;
    int ok = copy != NULL;
    for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; ok && tok; tok = strtok_r(NULL, ",", &save)) {
        int64_t k;
        ok = *n < max && hpc_parse_int64(tok, &k) == 0 && k >= 1 && k <= hi;
        if (ok) out[(*n)++] = k;
    }
    free(copy);
    hpc_error_clear();
    return ok && *n > 0 && !strstr(v, ",,") && v[strlen(v) - 1] != ',' ? 0 : -1;
}

/* "11,256,256,10": 2 to TRAIN_MAXL + 1 sizes, each in [1, 2^20] */
static int take_layers(const char *v, void *dest)
{
    train_opts_t *o = dest;
    int n;
    if (int_list(v, o->size, TRAIN_MAXL + 1, 1 << 20, &n) < 0 || n < 2)
        return HPC_ERR(HPC_ERR_ARG, "expected 2 to %d sizes in [1, 1048576] separated by commas (11,256,256,10)",
                 TRAIN_MAXL + 1);
    o->nlayers = n - 1;
    o->layers_given = 1;
    return 0;
}

static int take_betas(const char *v, void *dest)
{
    train_opts_t *o = dest;
    const char *comma = strchr(v, ',');
    char *b1 = comma ? strndup(v, (size_t)(comma - v)) : NULL;
    int ok = b1 && hpc_parse_double(b1, 0, &o->beta1) == 0 && hpc_parse_double(comma + 1, 0, &o->beta2) == 0 &&
             o->beta1 >= 0 && o->beta1 < 1 && o->beta2 >= 0 && o->beta2 < 1;
    free(b1);
    hpc_error_clear();
    if (!ok)
        return HPC_ERR(HPC_ERR_ARG, "expected B1,B2 with 0 <= B1, B2 < 1 (0.9,0.999)");
    o->betas_given = 1;
    return 0;
}

/* "2,1,1": layers per stage, each >= 1 */
static int take_partition(const char *v, void *dest)
{
    train_opts_t *o = dest;
    if (int_list(v, o->partition, TRAIN_MAXL, TRAIN_MAXL, &o->npart) < 0)
        return HPC_ERR(HPC_ERR_ARG, "expected layers per stage, each >= 1, separated by commas (2,1,1)");
    return 0;
}

static int take_alg(const char *v, void *dest)
{
    hpc_alg_t alg;
    if (hpc_alg_parse(v, &alg) < 0 || !hpc_coll_has_alg(HPC_COLL_ALLREDUCE, alg)) {
        hpc_error_clear();
        return HPC_ERR(HPC_ERR_ARG, "not an allreduce algorithm (auto, native, nccl, ring, tree, butterfly, "
                 "rabenseifner, ...)");
    }
    *(hpc_alg_t *)dest = alg;
    return 0;
}

/* HPC_OPT_KEY: what the run's numbers depend on, compared by --resume
 * (train_opts_fit adds the layers, the data's shape and what is resolved
 * later). */
#define K HPC_OPT_KEY
#define POS (HPC_OPT_BOUNDS | HPC_OPT_GT)
static const hpc_opt_t options[] = {
    HPC_SECTION("Model:"),
    HPC_CALL("layers", 'l', &O, "N,N,...", take_layers, 0,
             "layer sizes from the inputs to the outputs (default: inputs,64,64,outputs of the data); "
             "cross-entropy: the last is the number of classes"),
    HPC_CHOICE("act", 0, &O.act, "tanh|relu|gelu", K, "activation between layers (default tanh)"),
    HPC_CHOICE("loss", 0, &O.loss, "mse|cross-entropy", K,
               "loss (default mse); cross-entropy takes integer class labels in /Y"),
    HPC_INT("seed", 0, &O.seed, "S", 0, INT64_MAX, K,
            "initial weights from the stream (S, layer), the shuffle of epoch e from (S, e) (default 0)"),
    HPC_STRING("init-from", 0, &O.init_from, "FILE.h5", 0,
               "initial weights from FILE's /model/<i>/weight and bias (a checkpoint, or a PyTorch "
               "nn.Sequential's state_dict written as docs/train.md shows; shapes checked against "
               "--layers); the rest as a fresh start.  Recorded in the checkpoint: --resume takes the "
               "same --init-from and continues from the checkpoint"),
    HPC_SECTION("Data:"),
    HPC_STRING("data", 'd', &O.data, "FILE.h5", 0,
               "/X [N, in] and /Y [N, out] (float32/64; integer labels [N] for cross-entropy), or an "
               "hpc-odegen file: pairs (x(t_k), t_k) -> x(t_k+1) of its trajectories with status 0"),
    HPC_CHOICE("target", 0, &O.target_delta, "next|delta", K,
               "hpc-odegen files: target x(t_k+1) or x(t_k+1) - x(t_k) (default next)"),
    HPC_DOUBLE("val-fraction", 0, &O.val_fraction, "F", 0, 1, K | HPC_OPT_BOUNDS | HPC_OPT_LT,
               "the last F of the samples (of the trajectories, for hpc-odegen files) for validation "
               "(default 0.1)"),
    HPC_FLAG("no-normalize", 0, &O.no_normalize, K,
             "train on the raw values (default: inputs and MSE targets scaled to mean 0, std 1 over "
             "the training set)"),
    HPC_FLAG("preload", 0, &O.preload, 0,
             "hold the whole training set in memory on every rank (default: each rank reads only "
             "its samples, a window of batches at a time)"),
    HPC_SECTION("Training:"),
    HPC_INT("epochs", 'e', &O.epochs, "E", 0, 1000000000, 0, "passes over the training set (default 10)"),
    HPC_INT("steps", 0, &O.steps, "N", 0, INT64_MAX / 2, 0,
            "optimiser steps instead (default 0: as many as E epochs take)"),
    HPC_INT("batch", 'b', &O.batch, "B", 1, 1 << 30, K,
            "global batch: samples per micro-step over all ranks, each rank a contiguous slice "
            "(default 256)"),
    HPC_INT("accum", 0, &O.accum, "K", 1, 1 << 20, K,
            "micro-steps per optimiser step: gradients of K batches summed, reduced once "
            "(default 1)"),
    HPC_CHOICE("optim", 0, &O.optim_choice, optim_choices, K, "optimiser, as PyTorch's (default adam)"),
    HPC_DOUBLE("lr", 0, &O.lr, "LR", 0, INFINITY, K | POS, "learning rate, > 0 (default 1e-3)"),
    HPC_DOUBLE("momentum", 0, &O.momentum, "M", 0, 1, K | HPC_OPT_BOUNDS | HPC_OPT_LT,
               "SGD momentum (default 0)"),
    HPC_FLAG("nesterov", 0, &O.nesterov, K, "SGD with Nesterov momentum"),
    HPC_CALL("betas", 0, &O, "B1,B2", take_betas, 0, "Adam's betas (default 0.9,0.999)"),
    HPC_DOUBLE("eps", 0, &O.eps, "E", 0, INFINITY, K | POS, "Adam's epsilon (default 1e-8)"),
    HPC_DOUBLE("weight-decay", 0, &O.weight_decay, "W", 0, INFINITY, HPC_OPT_BOUNDS,
               "weight decay (default 0; AdamW 0.01), decoupled for AdamW"),
    HPC_CHOICE("schedule", 0, &O.sched, "constant|cosine", K,
               "learning rate after the warm-up: constant, or a cosine from --lr towards --min-lr "
               "over the remaining steps (default constant)"),
    HPC_INT("warmup", 0, &O.warmup, "W", 0, INT64_MAX / 2, K,
            "linear warm-up over the first W steps: lr (t+1)/W (default 0)"),
    HPC_DOUBLE("min-lr", 0, &O.min_lr, "LR", 0, INFINITY, K | HPC_OPT_BOUNDS,
               "where the cosine ends (default 0)"),
    HPC_DOUBLE("clip", 0, &O.clip, "C", 0, INFINITY, K | HPC_OPT_BOUNDS,
               "clip the gradient to global norm C (clip_grad_norm_; default 0: no clipping)"),
    HPC_INT("eval-every", 0, &O.eval_every, "N", 0, INT64_MAX / 2, 0,
            "validation loss also every N steps (default 0: at the end of each epoch only)"),
    HPC_INT("log-every", 0, &O.log_every, "N", 1, INT64_MAX / 2, 0,
            "a row of RUNDIR/metrics.csv every N steps (default 10)"),
    HPC_SECTION("Parallelism and device:"),
    HPC_DOUBLE("bucket-mb", 0, &O.bucket_mb, "MB", 0, INFINITY, POS,
               "gradient bucket size in MiB, allreduced as soon as backward has finished its layers "
               "(default 25)"),
    HPC_CALL("allreduce-alg", 0, &O.alg, "ALG", take_alg, 0,
             "algorithm of the gradient allreduce (default auto: libhpc's choice)"),
    HPC_INT("check-sync", 0, &O.check_sync, "N", 0, INT64_MAX / 2, 0,
            "every N steps check that every rank holds the same parameters (default 0: only at "
            "the start)"),
    HPC_CHOICE("device", 0, &O.device, "cpu|cuda", 0, "where to compute (default cpu)"),
    HPC_CHOICE("shard", 0, &O.shard, "none|optim|grads|params", 0,
               "sharded data parallelism over the data-parallel ranks (ZeRO, FSDP): optim: each keeps 1/D "
               "of the optimiser state (ZeRO-1); grads: and of the gradient, reduce-scattered during "
               "backward (ZeRO-2); params: and of the parameters, each layer gathered for its forward "
               "and backward (ZeRO-3, FSDP's full shard); the same training as dp (default none)"),
    HPC_SIZE("mem-budget", 0, &O.mem_budget, "BYTES", 0,
             "refuse to start when a rank would hold more model state, activations and data than "
             "BYTES (64M, 2G; default: no limit)"),
    HPC_SECTION("Pipeline parallelism (see the guide):"),
    HPC_CHOICE("parallel", 0, &O.parallel, "dp|pipe|hybrid", 0,
               "dp: every rank the whole model (default); pipe: the layers split into --stages "
               "stages on consecutive ranks, micro-batches flowing through them; hybrid: ranks/S "
               "data-parallel replicas of an S-stage pipeline"),
    HPC_INT("stages", 0, &O.stages, "S", 1, TRAIN_MAXL, 0,
            "pipeline stages (default: the rank count for pipe; required for hybrid)"),
    HPC_CALL("partition", 0, &O, "N,N,...", take_partition, 0,
             "layers per stage, summing to the layer count (default: balanced by parameters and "
             "FLOPs)"),
    HPC_INT("micro", 0, &O.micro, "M", 1, 1 << 20, 0,
            "micro-batches per global batch, each a contiguous block of it (default 1)"),
    HPC_CHOICE("pipe-schedule", 0, &O.pipe_sched, sched_choices, 0,
               "seq: one micro-batch in flight; gpipe: all forwards, all backwards, one update; "
               "1f1b: one forward one backward, the same update as gpipe with at most S "
               "micro-batches alive per stage (default); stale: 1F1B where each stage updates as "
               "soon as its gradient is ready"),
    HPC_FLAG("weight-stashing", 0, &O.stash, 0,
             "stale: a micro-batch's backward uses the weights its forward used"),
    HPC_CHOICE("weight-prediction", 0, &O.predict, "none|msnag|aggmsnag", 0,
               "stale: the forward uses weights predicted from the optimiser's momentum as many "
               "steps ahead as the stage's staleness (Hakimi et al. 2019; default none)"),
    HPC_FLAG("gap-aware", 0, &O.gap_aware, 0,
             "stale: gradients divided by the gap between the weights they were computed on and "
             "the current ones, in units of the running average step (Barkai et al. 2020)"),
    HPC_FLAG("gap-aware-just-lost", 0, &O.gap_just_lost, 0,
             "stale: --gap-aware with the gap to the weights the backward used instead of the "
             "forward's (the same with --weight-stashing)"),
    HPC_FLAG("recompute", 0, &O.recompute, 0,
             "keep only each stage's input per micro-batch; recompute the activations in backward"),
    HPC_INT("step-every", 0, &O.step_every, "K", 1, 1 << 20, 0,
            "stale: a stage steps after every K micro-batch gradients, summed (default 1)"),
    HPC_SECTION("Output:"),
    HPC_STRING("out", 'o', &O.out, "RUNDIR", 0,
               "run folder: checkpoint.h5, metrics.csv, loss.png (created if missing)"),
    HPC_FLAG("resume", 0, &O.resume, 0, "continue from RUNDIR/checkpoint.h5 (same options)"),
    HPC_FLAG("force", 0, &O.force, 0, "start afresh over an existing RUNDIR/checkpoint.h5"),
    HPC_FLAG("data-changed-ok", 0, &O.data_changed_ok, 0,
             "with --resume: continue even if --data is not the data the checkpoint was trained on "
             "(its size or a hash of all its values differ; refused by default)"),
    HPC_INT("ckpt-every", 0, &O.ckpt_every, "N", 0, INT64_MAX / 2, 0,
            "checkpoint every N steps (default 1000; 0: only at the end and when stopped)"),
    HPC_OPTS_END};
#undef K
#undef POS
#undef O

const hpc_app_t train_app = {
    .name = TRAIN_PROG,
    .usage = "hpc-train [OPTIONS] --data FILE.h5 --out RUNDIR\n"
             "hpc-mpiexec -n RANKS hpc-train [OPTIONS] --data FILE.h5 --out RUNDIR",
    .about = "Train a multi-layer perceptron data-parallel, with the semantics of PyTorch's "
             "DistributedDataParallel: every rank holds the model, takes a contiguous slice of "
             "each global batch, and the gradients are averaged by an allreduce that overlaps the "
             "backward pass.  The shuffle is one permutation of the training set per epoch, so the "
             "loss does not depend on the number of ranks beyond float32 rounding.  Reads "
             "hpc-odegen files directly.  --shard divides the optimiser state, gradients and parameters "
             "among the ranks (ZeRO, FSDP).  Or as a pipeline: --parallel pipe splits the layers into "
             "stages on consecutive ranks, each holding only its layers (seq, gpipe, 1f1b or the stale "
             "schedule), hybrid adds data-parallel replicas of it.  Checkpoints survive time limits and "
             "Ctrl-C: SIGUSR1, SIGTERM or a first Ctrl-C finishes the step, writes RUNDIR/checkpoint.h5 and exits 75; --resume continues "
             "bit for bit.",
    .opts = options,
    .epilog =
        "Progress: rank 0 shows the step, epoch, normalised loss, learning rate,\n"
        "samples/s and ETA, redrawn on a terminal (also the launcher's: hpc-mpiexec\n"
        "started by hand), and a line every HPC_PROGRESS seconds (default 60; 0:\n"
        "none) in a log (a Slurm log, srun, output into a file).  Losses are over normalised targets (as the model sees them);\n"
        "the summary and metrics.csv add the validation MSE in the data's units.\n"
        "\n"
        "Memory: before anything is allocated, what every rank will hold (its model\n"
        "state, activations and data, from its strategy's formula: docs/train.md) is\n"
        "checked against --mem-budget; the summary reports the largest of each.\n"
        "\n"
        "Exit status: 0 done; 1 bad data or I/O (missing file or dataset, labels out of\n"
        "range, NaN or infinity in any row, a damaged checkpoint, --resume without one\n"
        "or with other options, an --init-from file that does not fit --layers, more\n"
        "memory than a node has available or than --mem-budget allows (checked before\n"
        "anything is allocated or written), a full disk (the previous checkpoint is\n"
        "kept), the loss became NaN or infinite: the last good checkpoint is kept); 2\n"
        "bad option or value (layer sizes that do not fit the data, a batch smaller\n"
        "than the rank count, stages that do not fit the layers or ranks, a\n"
        "combination of strategies that does not compose, --device cuda where a rank\n"
        "lacks a GPU, the CUDA module or cuBLAS); 75 stopped by SIGUSR1, SIGTERM or\n"
        "Ctrl-C with RUNDIR/checkpoint.h5 written: run again with --resume (a second\n"
        "Ctrl-C aborts at once).  Python: share/hpckit/python/hpckit_torch.py loads a\n"
        "run into PyTorch and writes --init-from files.\n"
        "\nExamples:\n"
        "  # an hpc-odegen file, 2 ranks; after a stop, the same with --resume\n"
        "  hpc-mpiexec -n 2 hpc-train --data ode.h5 --epochs 5 --out run\n"
        "  # your own layers and activation\n"
        "  hpc-mpiexec -n 2 hpc-train --data ode.h5 -l 11,256,10 --act gelu --out r2\n"
        "  # the model state divided among the ranks (ZeRO-3)\n"
        "  hpc-mpiexec -n 4 hpc-train --data ode.h5 --shard params --out run3\n"
        "  # a pipeline of 4 stages, 8 micro-batches a batch\n"
        "  hpc-mpiexec -n 4 hpc-train --data ode.h5 --parallel pipe --micro 8 --out run4\n",
    .guide = "train.md"};

/* "a|b|c" of the names of a table */
static void join(char *buf, size_t len, const char *(*name)(int), int n)
{
    buf[0] = 0;
    for (int k = 0; k < n; k++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", k ? "|" : "", name(k));
}

static const char *optim_name(int k)
{
    return optim_kinds[k].name;
}

static const char *sched_name(int k)
{
    return pipe_scheds[k].name;
}

void train_opts_prepare(void)
{
    int n = 0;
    while (optim_kinds[n].name) n++;
    join(optim_choices, sizeof optim_choices, optim_name, n);
    for (n = 0; pipe_scheds[n].name;) n++;
    join(sched_choices, sizeof sched_choices, sched_name, n);
    /* the defaults as rows of the tables: the options key names them
     * (an unset choice would read as the first row) */
    train_opts.optim_choice = (int)(optim_find("adam") - optim_kinds);
    train_opts.pipe_sched = pipe_sched_find("1f1b");
}

void train_layers_str(const train_opts_t *o, char *buf, size_t len)
{
    buf[0] = 0;
    for (int i = 0; i <= o->nlayers; i++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%lld", i ? "," : "", (long long)o->size[i]);
}

int train_opts_finish(train_opts_t *o)
{
    /* what the others follow from */
    o->optim = &optim_kinds[o->optim_choice];
    o->normalize = !o->no_normalize;
    if (o->weight_decay < 0) o->weight_decay = o->optim->weight_decay;
    o->gap_aware = o->gap_aware || o->gap_just_lost;
    if (!o->data) return HPC_ERR(HPC_ERR_ARG, "--data FILE.h5 is required (see --help)");
    if (!o->out) return HPC_ERR(HPC_ERR_ARG, "--out RUNDIR is required (see --help)");
    if (o->resume && o->force) return HPC_ERR(HPC_ERR_ARG, "--resume and --force exclude each other");
    if (o->data_changed_ok && !o->resume) return HPC_ERR(HPC_ERR_ARG, "--data-changed-ok goes with --resume");
    HPC_TRY(optim_check(o));
    if (o->nesterov && o->momentum == 0) return HPC_ERR(HPC_ERR_ARG, "--nesterov needs --momentum > 0");
    if (o->min_lr > o->lr) return HPC_ERR(HPC_ERR_ARG, "--min-lr must not exceed --lr");
    return strategy_check(o);
}

static void add_key(const train_opts_t *o, int64_t nin, int64_t nout, int64_t ntrain,
                    int64_t total_steps)
{
    char sizes[TRAIN_MAXL * 9 + 16] = "";
    train_layers_str(o, sizes, sizeof sizes);
    hpc_app_key_add("layers=%s;betas=%.17g,%.17g;weight_decay=%.17g", sizes, o->beta1, o->beta2,
                    o->weight_decay);
    hpc_app_key_add("data_in=%lld;data_out=%lld;train_samples=%lld", (long long)nin, (long long)nout,
                    (long long)ntrain);
    /* the cosine's length shapes every step's learning rate */
    if (o->sched == SCHED_COSINE) hpc_app_key_add("cosine_steps=%lld", (long long)total_steps);
    hpc_app_key_add("version=%s", hpc_version());
    /* the initial weights shape the run; a resume reads them from the checkpoint */
    if (o->init_from) hpc_app_key_add("init_from=%s", o->init_from);
}

int train_opts_fit(train_opts_t *o, int64_t nin, int64_t nout, int64_t ntrain, int nranks,
                   int64_t total_steps)
{
    if (!o->layers_given) {
        o->nlayers = 3;
        o->size[0] = nin;
        o->size[1] = o->size[2] = 64;
        o->size[3] = nout;
    }
    if (o->size[0] != nin)
        return HPC_ERR(HPC_ERR_ARG, "--layers: the first size is %lld but the data has %lld inputs",
                 (long long)o->size[0], (long long)nin);
    if (o->loss == LOSS_MSE && o->size[o->nlayers] != nout)
        return HPC_ERR(HPC_ERR_ARG, "--layers: the last size is %lld but the data has %lld targets",
                 (long long)o->size[o->nlayers], (long long)nout);
    if (o->loss == LOSS_CE && o->size[o->nlayers] < 2)
        return HPC_ERR(HPC_ERR_ARG, "--layers: cross-entropy needs at least 2 classes (the last size)");
    HPC_TRY(strategy_of(o)->fit(o, nranks));
    if (o->batch * o->accum > ntrain)
        return HPC_ERR(HPC_ERR_ARG, "--batch %lld x --accum %lld is more than the %lld training samples",
                 (long long)o->batch, (long long)o->accum, (long long)ntrain);
    add_key(o, nin, nout, ntrain, total_steps);
    return 0;
}
