/* train.h - hpc-train: data- and pipeline-parallel training of a
 * multi-layer perceptron.
 *
 * The pieces, each in its own file, so that another parallel strategy
 * (pipeline stages over the same layers) can reuse the rest:
 *   options.c   the option table and the checks between options
 *   data.c      the training data: /X,/Y files or hpc-odegen flow maps
 *   stats.c     normalisation statistics (the same for any rank count)
 *   loader.c    a rank's slice of each global batch, by shuffle window
 *   model.c     the network: parameter layout, initialisation, forward
 *               and backward over the layers of layer.c
 *   layer.c     one linear layer with its activation
 *   act.c loss.c optim.c sched.c   activations, losses, optimisers,
 *               learning-rate schedules
 *   cpu.c cuda.cu  the two devices behind dev.h
 *   dp.c        data parallelism: gradient buckets allreduced during
 *               backward
 *   pipe.c pipe_sched.c pipe_stale.c pipe_wp.c timeline.c   pipeline
 *               parallelism: stages over the same layers (pipe.h)
 *   loop.c      the training loop: steps, evaluation, stop, NaN
 *   checkpoint.c metrics.c   what the run leaves in RUNDIR
 */
#ifndef TRAIN_H
#define TRAIN_H

#include "hpc_app.h"
#include "hpc_coll.h"
#include "dev.h"

#define TRAIN_PROG "hpc-train"
#define TRAIN_MAXL 32          /* linear layers at most */

typedef enum { OPT_SGD = 0, OPT_ADAM, OPT_ADAMW } opt_kind_t;
typedef enum { SCHED_CONSTANT = 0, SCHED_COSINE } sched_kind_t;
enum { DEV_CPU = 0, DEV_CUDA = 1 };
/* --parallel; --pipe-schedule; --weight-prediction */
enum { PAR_DP = 0, PAR_PIPE, PAR_HYBRID };
enum { PIPE_SEQ = 0, PIPE_GPIPE, PIPE_1F1B, PIPE_STALE };
enum { PREDICT_NONE = 0, PREDICT_MSNAG, PREDICT_AGGMSNAG };

typedef struct {
    /* model */
    int nlayers;                       /* linear layers (sizes: nlayers + 1) */
    int64_t size[TRAIN_MAXL + 1];
    int layers_given;                  /* else: inputs, 64, 64, outputs */
    act_t act;
    loss_kind_t loss;
    uint64_t seed;
    /* data */
    const char *data;
    int target_delta, preload, normalize;
    double val_fraction;
    /* training */
    int64_t epochs, steps, batch, accum, eval_every, log_every;
    opt_kind_t optim;
    double lr, momentum, beta1, beta2, eps, weight_decay, clip, min_lr;
    int nesterov;
    sched_kind_t sched;
    int64_t warmup;
    /* parallel and device */
    double bucket_mb;
    hpc_alg_t alg;
    int64_t check_sync;
    int device;
    /* pipeline parallelism (pipe.c): S stages of contiguous layers, M
     * micro-batches a step; partition[s] layers on stage s (npart 0:
     * balanced by parameters and FLOPs) */
    int parallel, stages, micro, pipe_sched;
    int npart;
    int64_t partition[TRAIN_MAXL];
    int stash, predict, gap_aware, gap_just_lost, recompute;
    int64_t step_every;
    /* --init-from: initial weights from this file (checkpoint layout) */
    const char *init_from;
    /* output */
    const char *out;
    int resume, force;
    int data_changed_ok;               /* --resume on data other than the checkpoint's */
    int64_t ckpt_every;
} train_opts_t;

extern const hpc_app_t train_app;
/* After hpc_app_start: the parsed options, checked against each other;
 * -1 with a one-line reason. */
int train_opts_finish(train_opts_t *o, char *err, size_t len);
/* Once the data is known: layer sizes against it, the rank count, the
 * derived entries of the options key.  -1 with a reason. */
int train_opts_fit(train_opts_t *o, int64_t nin, int64_t nout, int64_t ntrain, int nranks,
                   int64_t total_steps, char *err, size_t len);

/* ---- data (data.c, stats.c) ---- */
enum { DATA_XY = 0, DATA_ODE = 1 };
typedef struct {
    hpc_h5file_t *f;
    int kind;
    hid_t x, y;                 /* XY: /X and /Y; ODE: y = /y */
    int64_t nin, nout;          /* features in and out of the model */
    int ydim;                   /* floats per target: nout (MSE), 1 (labels) */
    int64_t nsamples, ntrain, nval;
    int64_t val_row;            /* validation: the samples of rows >= this of
                                   /X (of /y's usable trajectories) */
    loss_kind_t loss;
    int64_t nclasses;           /* cross-entropy: labels are < nclasses */
    /* ODE files: flow-map pairs (x(t_k), t_k) -> x(t_k+1) of the
     * trajectories with status 0 */
    int64_t nt, dim, ntraj;     /* ntraj: usable trajectories */
    int64_t *traj;              /* their indices in the file */
    double *t;                  /* the time grid */
    int delta;                  /* target x(t_k+1) - x(t_k) */
    /* normalisation x' = (x - mean) / std; identity when off */
    double *x_mean, *x_std, *y_mean, *y_std;
    const char *describe;       /* one line: what a sample is */
} data_t;

/* Collective.  Open and check --data; the split; 0, or -1 with a reason
 * (every rank reaches the same verdict). */
int data_open(data_t *d, const train_opts_t *o, int64_t nclasses, char *err, size_t len);
void data_close(data_t *d);
/* Independent.  Samples ids[0..n) (0..nsamples-1: train first, then
 * validation) into X [n, nin] and Y [n, ydim], normalised. */
int data_read(const data_t *d, size_t n, const int64_t *ids, float *X, float *Y);
/* The same before normalisation, in double (labels as doubles). */
int data_read_raw(const data_t *d, size_t n, const int64_t *ids, double *X, double *Y);
/* Collective.  Means and standard deviations over the training samples,
 * computed in fixed chunks and combined in chunk order (Chan's formula),
 * so they are the same bits for any rank count; cross-entropy labels are
 * checked against the classes on the way.  0, or -1 with a reason. */
int stats_compute(data_t *d, char *err, size_t len);

/* ---- batches (loader.c) ---- */
typedef struct {
    const data_t *d;
    int64_t batch, rank_lo, rank_n;  /* global batch; this rank's slice */
    uint64_t seed;
    int preload;
    float *all_x, *all_y;            /* --preload: the training set */
    float *wx, *wy;                  /* the window of batches being served */
    int64_t w_epoch, w_first, w_count, w_cap;
    int64_t per_epoch;               /* micro-batches per epoch */
    float *val_x, *val_y;            /* this rank's block of validation */
    int64_t val_lo, val_n;
    size_t bytes;                    /* what it holds, for the memory report */
} loader_t;
/* Collective.  0, or -1 with a reason. */
int loader_open(loader_t *l, const data_t *d, const train_opts_t *o, int rank, int nranks, char *err,
                size_t len);
/* Independent.  This rank's rows of micro-batch mb (0-based within the
 * epoch) of epoch e: positions [mb*B + rank_lo, +rank_n) of the epoch's
 * permutation (seed, e) of the training samples. */
int loader_batch(loader_t *l, int64_t epoch, int64_t mb, const float **x, const float **y);
void loader_close(loader_t *l);

/* ---- the network (model.c, layer.c) ---- */
/* Every flat buffer (parameters, gradients, optimiser states) has this
 * layout: a pad of MODEL_PAD floats (slot 0 of the gradient buffer
 * carries the loss sum to the other ranks with the first bucket), then
 * the layers from the last to the first (the order backward finishes
 * them: buckets are contiguous), each weight [out, in] and bias [out]
 * at 64-byte boundaries. */
#define MODEL_PAD 16
typedef struct {
    int nl;
    int64_t size[TRAIN_MAXL + 1];
    act_t act;                        /* between layers; none after the last */
    size_t w[TRAIN_MAXL], b[TRAIN_MAXL];   /* offsets in floats */
    size_t n;                         /* floats in a flat buffer */
    size_t nparams;                   /* weights and biases alone */
} model_t;

void model_layout(model_t *m, int nl, const int64_t *size, act_t act);
/* PyTorch's nn.Linear default: weight and bias U(-1/sqrt(in), 1/sqrt(in))
 * (kaiming_uniform_ with a = sqrt(5)), layer l from the stream (seed,
 * MODEL_STREAM + l), the weight row by row, then the bias. */
#define MODEL_STREAM 0x6d6f64656c000000ULL   /* "model" */
void model_init(const model_t *m, uint64_t seed, float *p);

/* Activations of one micro-batch on the device: a[0] is the input (set by
 * the caller), a[l] layer l's output; keep[l] GELU's inputs; two gradient
 * buffers for backward. */
typedef struct {
    const float *a0;
    float *a[TRAIN_MAXL + 1], *keep[TRAIN_MAXL + 1], *d[2];
    int rows;
    int lo;                       /* the first layer: it reads a0 */
    size_t bytes;
} acts_t;
int acts_alloc(acts_t *w, const model_t *m, const train_dev_t *dev, int rows);
/* Layers [lo, hi) only (a pipeline stage): what = ACTS_OUT: a[lo+1..hi]
 * (and GELU's keep), ACTS_GRAD: the two gradient buffers (as wide as the
 * widest size of the range), or both. */
enum { ACTS_OUT = 1, ACTS_GRAD = 2 };
int acts_alloc_range(acts_t *w, const model_t *m, const train_dev_t *dev, int rows, int lo, int hi,
                     int what);
void acts_free(acts_t *w, const train_dev_t *dev);

/* Called when layer l's gradients are complete (backward runs from the
 * last layer to the first). */
typedef void (*layer_done_fn)(void *ctx, int l);
void model_forward(const model_t *m, const train_dev_t *dev, const float *p, acts_t *w, int rows);
/* Layers [lo, hi) with a0 the input of layer lo */
void model_forward_range(const model_t *m, const train_dev_t *dev, const float *p, acts_t *w, int rows,
                         int lo, int hi);
/* The model's output after model_forward */
float *model_output(const model_t *m, acts_t *w);
/* Gradients into g (beta 0: overwrite, 1: accumulate) from dy = d loss /
 * d output, which is in w->d[0] (the loss wrote it there). */
void model_backward(const model_t *m, const train_dev_t *dev, const float *p, float *g, acts_t *w,
                    int rows, float beta, layer_done_fn done, void *ctx);
/* Layers hi-1 down to lo, dL/d(output of layer hi-1) in w->d[0]; returns
 * the buffer (w->d[0] or w->d[1]) that holds dL/d(input of layer lo), or
 * NULL when lo is 0 (nobody needs it). */
float *model_backward_range(const model_t *m, const train_dev_t *dev, const float *p, float *g, acts_t *w,
                            int rows, float beta, int lo, int hi, layer_done_fn done, void *ctx);

void layer_forward(const train_dev_t *dev, int rows, int in, int out, const float *W, const float *b,
                   act_t act, const float *x, float *y, float *keep);
/* Backward in two halves, so that the gradients of a layer can be sent
 * while the layer below is computed: d is dL/dy on entry and dL/dz after
 * the first half; the second gives dx = dL/dz W. */
void layer_backward_params(const train_dev_t *dev, int rows, int in, int out, act_t act,
                           const float *x, const float *y, const float *keep, float *d, float *dW,
                           float *db, float beta);
void layer_backward_input(const train_dev_t *dev, int rows, int in, int out, const float *W,
                          const float *d, float *dx);

/* ---- optimisers and schedules (optim.c, sched.c) ---- */
typedef struct {
    opt_kind_t kind;
    int nstates;                       /* 0, 1 (momentum) or 2 (Adam) */
    float *state[2];                   /* device buffers in the model layout */
    const char *names[2];              /* as PyTorch's state_dict calls them */
    double lr0, momentum, beta1, beta2, eps, wd, clip;
    int nesterov;
} optim_t;
int optim_open(optim_t *o, const train_opts_t *opts, const train_dev_t *dev, size_t n);
void optim_close(optim_t *o, const train_dev_t *dev);
/* Step t (1-based) with learning rate lr over the parameters in
 * [MODEL_PAD, n).  Returns the gradient's global norm before clipping
 * (NaN without clipping: it is not computed). */
double optim_step(optim_t *o, const train_dev_t *dev, float *p, float *g, size_t n, double lr,
                  int64_t t);
/* --clip over the floats [lo, hi) of g, the sum of squares also summed
 * over parts (the other stages of a pipeline; MPI_COMM_NULL: none):
 * the global norm, NaN without clipping. */
double optim_clip(optim_t *o, const train_dev_t *dev, float *g, size_t lo, size_t hi, MPI_Comm parts);
/* The step over the floats [lo, hi) of the buffers only (a pipeline
 * stage's layers), without clipping. */
void optim_step_range(optim_t *o, const train_dev_t *dev, float *p, float *g, size_t lo, size_t hi, double lr,
                      int64_t t);
/* Learning rate of step t (0-based) of total. */
double sched_lr(const train_opts_t *o, int64_t t, int64_t total);

/* ---- data parallelism (dp.c) ---- */
typedef struct {
    MPI_Comm comm;
    int size;
    hpc_alg_t alg;
    int nb;                          /* buckets */
    size_t *off, *count;             /* in floats, of the gradient buffer */
    int *last_layer;                 /* the bucket is ready when this layer is */
    hpc_request_t **req;
    float *g;
    int armed;                       /* this backward's gradients are reduced */
    double exposed, calib;           /* s in collective calls this step; one
                                        blocking reduction of all buckets */
} dp_t;
/* Collective.  Buckets of bucket_mb over layers [lo, hi) of the layout of
 * m (all of them: 0, m->nl; a pipeline stage: its own). */
int dp_open(dp_t *dp, const model_t *m, int lo, int hi, float *g, double bucket_mb, hpc_alg_t alg,
            MPI_Comm comm);
/* Before backward: arm = 1 on the last micro-step of a step (DDP's
 * no_sync for the others). */
void dp_begin(dp_t *dp, int arm);
/* Layer l's gradients are done: start the buckets that are complete and
 * advance those in flight (libhpc progresses them only inside its calls). */
void dp_layer_done(void *dp, int l);
/* Wait for every bucket; 0 or a libhpc error. */
int dp_finish(dp_t *dp);
void dp_close(dp_t *dp);

/* ---- the run (loop.c, checkpoint.c, metrics.c, main.c) ---- */
typedef struct {
    const train_opts_t *o;
    const train_dev_t *dev;
    data_t data;
    loader_t loader;
    model_t model;
    optim_t opt;
    dp_t dp;
    acts_t acts;
    float *p, *g;                 /* parameters, gradients (device) */
    float *host;                  /* a host copy of a flat buffer */
    float *xdev, *ydev;           /* --device cuda: the batch on the GPU */
    struct pipe *pipe;            /* --parallel pipe/hybrid (pipe.c), else NULL */
    int validates;                /* this rank computes validation losses */
    hpc_run_t *run;
    int argc;
    char **argv;
    int64_t step, total, steps_per_epoch;
    int64_t saved_step;           /* the checkpoint on disk: its step, or -1 */
    double train_loss, val_loss, grad_norm;
    double val_mse;               /* validation MSE in the target's units */
    /* this run's totals, for the summary and metrics */
    double t_run, t_comm, comm_possible;
    int64_t samples, steps_run;
} train_t;

/* What PyTorch's mean divides a step's loss sum by */
double train_loss_terms(const train_t *t);
/* 1 when the losses are over normalised targets (MSE, normalised): the
 * summary, progress line, metrics and plot say so */
int train_loss_normalised(const train_t *t);
/* Run to the last step, or to a stop agreed by every rank: checkpoint,
 * then HPC_EXIT_STOPPED.  A non-finite loss ends the job (exit 1) with the
 * last checkpoint kept. */
int train_loop(train_t *t);
/* Validation loss over every rank's block (collective); NaN if none.
 * *mse_data: the MSE in the target's units (MSE runs; else NaN). */
double train_validate(train_t *t, double *mse_data);

/* Collective.  RUNDIR/checkpoint.h5 (atomically replaced). */
int ckpt_save(train_t *t);
/* Collective.  Parameters, optimiser state, step and normalisation from
 * RUNDIR/checkpoint.h5 (same options key); -1 with a reason. */
int ckpt_load(train_t *t, char *err, size_t len);
/* Collective.  --init-from: the parameters alone from FILE's /model/<i>/
 * (a checkpoint, or a PyTorch state_dict written as docs/train.md shows),
 * checked against the layers; into t->host.  -1 with a reason. */
int ckpt_init_from(train_t *t, char *err, size_t len);

/* metrics.csv: step,epoch,lr,train_loss_normalized,val_loss_normalized,
 * val_mse_data,samples_per_s,comm_share,comm_hidden; rows of a resumed
 * run's past kept */
int metrics_open(train_t *t, int64_t keep_upto);
/* val_loss, val_mse NaN: not evaluated at this step (empty fields) */
void metrics_row(train_t *t, double lr, double val_loss, double val_mse, double samples_per_s,
                 double comm_share, double hidden);
/* loss.png from metrics.csv (rank 0; nothing if gnuplot is missing) */
void metrics_plot(train_t *t);

/* ---- pipeline parallelism (pipe.c; docs/train.md) ---- */
/* The checks that need only the command line; -1 with a reason */
int pipe_opts_check(const train_opts_t *o, char *err, size_t len);
/* Against the layers and ranks (sets --stages' default); -1 with a reason */
int pipe_opts_fit(train_opts_t *o, int nranks, char *err, size_t len);
/* Which data-parallel slice of each batch this rank's replica takes */
void pipe_replica(const train_opts_t *o, int rank, int nranks, int *replica, int *replicas);
/* Collective, after the model, loader and optimiser exist: the stage's
 * communicators, layers and buffers; opens t->dp over the replicas. */
int pipe_open(train_t *t);
/* One optimiser step of the schedule; 0, or -1 if the loss is not finite */
int pipe_step(train_t *t);
/* Collective: the stop signal, agreed (the stale schedule agrees at the
 * start of a step and drains its pipeline in it) */
int pipe_stop_agreed(train_t *t);
/* Collective: every rank holds the whole model's parameters (and with
 * with_state the optimiser's state); a no-op without a pipeline */
int pipe_gather(train_t *t, int with_state);
/* The rank that writes layer l's arrays into a checkpoint: 0, or the
 * stage of the first pipeline that holds it */
int pipe_layer_writer(const train_t *t, int l);
/* "; pipeline ...": bubble, utilisation, peak activations (collective) */
void pipe_summary(train_t *t, char *buf, size_t len);
/* Collective (the RUNDIR/timeline files) and frees */
void pipe_finish(train_t *t);
void pipe_close(train_t *t);

#endif /* TRAIN_H */
