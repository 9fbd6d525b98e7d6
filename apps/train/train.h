/* train.h - hpc-train: data-parallel, sharded and pipeline-parallel
 * training of a multi-layer perceptron.
 *
 * The pieces, each in its own file:
 *   options.c   the option table and the checks between options
 *   data.c      the training data: /X,/Y files or hpc-odegen flow maps
 *   stats.c     normalisation statistics (the same for any rank count)
 *   loader.c    a rank's slice of each global batch, by shuffle window
 *   model.c     the network: the layout of a range of its layers in flat
 *               buffers, initialisation, forward and backward over the
 *               layers of layer.c
 *   layer.c     one linear layer with its activation
 *   act.c loss.c lr_schedule.c   activations, losses, learning-rate schedules
 *   optim.c opt_kernels.h optim_predict.c   the optimisers: one table
 *               row each (the hyperparameters it takes, its state arrays,
 *               its step's constants, its weight prediction), their
 *               element rules shared by the CPU and the GPU
 *   cpu.c cuda.cu  the two devices behind dev.h
 *   hold.c      what a rank holds of each array (checkpoints, start)
 *   batch.c     a step's rows on the device, what its loss is over
 *   dp.c zero.c the gradient synchronisation (gsync_ops_t): buckets
 *               allreduced during backward; ZeRO's reduce-scatter,
 *               update of a rank's blocks and gather
 *   strat_common.c  what the strategies share, below them
 *   strat_dp.c  data parallelism (--parallel dp)
 *   strat_shard.c   sharded data parallelism (--shard optim|grads|params)
 *   pipe.c pipe_run.c pipe_sched.c pipe_stale.c pipe_predict.c
 *   timeline.c  pipeline parallelism (--parallel pipe|hybrid; pipe.h)
 *   strategy.c  which strategy the options ask for; which options
 *               belong to which strategies (one table)
 *   loop.c      the training loop: steps, evaluation, stop, NaN; it
 *               calls a strategy, which never calls it
 *   checkpoint.c metrics.c   what the run leaves in RUNDIR
 */
#ifndef TRAIN_H
#define TRAIN_H

#include "hpc_app_h5.h"
#include "hpc_coll.h"
#include "dev.h"

#define TRAIN_PROG "hpc-train"
#define TRAIN_MAXL 32          /* linear layers at most */
#define OPT_MAXSTATES 2        /* optimiser state arrays per parameter */

typedef enum { SCHED_CONSTANT = 0, SCHED_COSINE } sched_kind_t;
enum { DEV_CPU = 0, DEV_CUDA = 1 };
/* --parallel; --shard; --weight-prediction */
enum { PAR_DP = 0, PAR_PIPE, PAR_HYBRID };
enum { SHARD_NONE = 0, SHARD_OPTIM, SHARD_GRADS, SHARD_PARAMS };
enum { PREDICT_NONE = 0, PREDICT_MSNAG, PREDICT_AGGMSNAG };

struct optim_kind;

typedef struct {
    /* model */
    int nlayers;                       /* linear layers (sizes: nlayers + 1) */
    int64_t size[TRAIN_MAXL + 1];
    int layers_given;                  /* else: inputs, 64, 64, outputs */
    act_t act;                         /* the choices' index, as int */
    loss_kind_t loss;
    uint64_t seed;
    /* data */
    const char *data;
    int target_delta, preload;
    int no_normalize, normalize;       /* normalize: derived */
    double val_fraction;
    /* training */
    int64_t epochs, steps, batch, accum, eval_every, log_every;
    int optim_choice;                  /* --optim: the row's index */
    const struct optim_kind *optim;    /* derived: that row of optim.c's table */
    double lr, momentum, beta1, beta2, eps, clip, min_lr;
    double weight_decay;               /* < 0: the row's default (derived) */
    int nesterov, betas_given;
    sched_kind_t sched;
    int64_t warmup;
    /* parallel and device */
    double bucket_mb;
    hpc_alg_t alg;
    int64_t check_sync;
    int device;
    int shard;                         /* SHARD_*: ZeRO-1/2/3 over the replicas */
    size_t mem_budget;                 /* bytes a rank may hold (0: no limit) */
    /* pipeline parallelism (pipe.c): S stages of contiguous layers, M
     * micro-batches a step; partition[s] layers on stage s (npart 0:
     * balanced by parameters and FLOPs); pipe_sched: a row of
     * pipe_sched.c's table */
    int parallel, pipe_sched;
    int64_t stages, micro;
    int npart;
    int64_t partition[TRAIN_MAXL];
    int stash, predict, gap_aware, gap_just_lost, recompute;   /* gap_aware: also set by gap_just_lost */
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
/* The options: the option table's destinations (options.c) */
extern train_opts_t train_opts;
/* Before hpc_app_start: the option strings that the tables give (the
 * optimisers, the pipeline schedules). */
void train_opts_prepare(void);
/* After hpc_app_start: the parsed options (train_opts) completed with
 * what follows from them and checked against each other; HPC_ERR_ARG
 * with a one-line cause (hpc_last_cause). */
int train_opts_finish(train_opts_t *o);
/* Once the data is known: layer sizes against it, the rank count, the
 * derived entries of the options key.  HPC_ERR_ARG with the cause. */
int train_opts_fit(train_opts_t *o, int64_t nin, int64_t nout, int64_t ntrain, int nranks,
                   int64_t total_steps);
/* "11,256,256,10" */
void train_layers_str(const train_opts_t *o, char *buf, size_t len);

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
    uint64_t digest;            /* a hash of every sample's values (stats_compute) */
} data_t;

/* Collective.  Open and check --data; the split; 0, or an HPC_ERR_* with
 * the cause (every rank reaches the same verdict, but where a read
 * failed, only the ranks it failed on hold the cause and fail). */
int data_open(data_t *d, const train_opts_t *o, int64_t nclasses);
void data_close(data_t *d);
/* Independent.  Samples ids[0..n) (0..nsamples-1: train first, then
 * validation) into X [n, nin] and Y [n, ydim], normalised. */
int data_read(const data_t *d, size_t n, const int64_t *ids, float *X, float *Y);
/* The same before normalisation, in double (labels as doubles). */
int data_read_raw(const data_t *d, size_t n, const int64_t *ids, double *X, double *Y);
/* Collective.  Means and standard deviations over the training samples,
 * computed in fixed chunks and combined in chunk order (Chan's formula),
 * so they are the same bits for any rank count; cross-entropy labels are
 * checked against the classes on the way, every value (validation too)
 * against NaN and infinity, and d->digest set (the data's fingerprint).  0, or an HPC_ERR_* with the
 * cause (a failed read: on the ranks it failed on only). */
int stats_compute(data_t *d);

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
/* Collective.  0, or an HPC_ERR_* with the cause. */
int loader_open(loader_t *l, const data_t *d, const train_opts_t *o, int rank, int nranks);
/* The bytes loader_open will hold, without opening anything */
size_t loader_bytes(const data_t *d, const train_opts_t *o, int rank, int nranks);
/* Independent.  This rank's rows of micro-batch mb (0-based within the
 * epoch) of epoch e: positions [mb*B + rank_lo, +rank_n) of the epoch's
 * permutation (seed, e) of the training samples. */
int loader_batch(loader_t *l, int64_t epoch, int64_t mb, const float **x, const float **y);
void loader_close(loader_t *l);

/* ---- the network (model.c, layer.c) ---- */
/* A flat buffer (parameters, gradients, optimiser states) holds layers
 * [lo, hi) of the network (all of them, or a pipeline stage's): a pad of
 * MODEL_PAD floats (slot 0 of the gradient buffer carries the loss sum
 * to the other ranks with the first bucket), then the layers from the
 * last to the first (the order backward finishes them: buckets are
 * contiguous), each weight [out, in] and bias [out] at a 64-byte
 * boundary.  The layers are grouped in units (contiguous in the buffer),
 * each padded to a multiple of 16 x shards floats, so that a sharded
 * strategy cuts every unit into shards equal blocks (libhpc's
 * reduce_scatter and allgather take equal blocks); with shards 1 the
 * padding is none. */
#define MODEL_PAD 16
typedef struct {
    int nl;                           /* layers of the whole network */
    int64_t size[TRAIN_MAXL + 1];
    act_t act;                        /* between layers; none after the last */
    int lo, hi;                       /* the layers laid out */
    size_t w[TRAIN_MAXL], b[TRAIN_MAXL];   /* offsets in floats, layers [lo, hi) */
    size_t n;                         /* floats in a flat buffer */
    size_t nparams;                   /* weights and biases alone */
    /* units, in buffer order (the last layers first): layers
     * [ulo[u], uhi[u]) at floats [uoff[u], uoff[u] + ulen[u]); a rank's
     * block of unit u (shards > 1) is stored at uat[u] of its shard
     * buffer, of shard_n floats */
    int nunits, shards;
    int ulo[TRAIN_MAXL], uhi[TRAIN_MAXL], unit_of[TRAIN_MAXL];
    size_t uoff[TRAIN_MAXL], ulen[TRAIN_MAXL], uat[TRAIN_MAXL];
    size_t shard_n, unit_most;        /* floats of a shard; of the largest unit */
} model_t;

/* The whole network, no sharding (the data-parallel layout) */
void model_layout(model_t *m, int nl, const int64_t *size, act_t act);
/* Layers [lo, hi); a unit takes consecutive layers (from the last) while
 * they fit unit_cap floats (a layer is never split; 0: a unit a layer) */
void model_layout_part(model_t *m, int nl, const int64_t *size, act_t act, int lo, int hi, double unit_cap,
                       int shards);
/* This rank's block of unit u: floats [*at, *at + *len) of the layout */
void model_block(const model_t *m, int u, int rank, size_t *at, size_t *len);
/* PyTorch's nn.Linear default: weight and bias U(-1/sqrt(in), 1/sqrt(in))
 * (kaiming_uniform_ with a = sqrt(5)), layer l from the stream (seed,
 * MODEL_STREAM + l), the weight row by row, then the bias. */
#define MODEL_STREAM 0x6d6f64656c000000ULL   /* "model" */
void model_init_layer(const model_t *m, uint64_t seed, int l, float *w, float *b);
/* Every layer of m into its flat buffer p (zeros between) */
void model_init(const model_t *m, uint64_t seed, float *p);

/* Where each layer's weight and bias are (device): a flat buffer's, or
 * gathered ones; the same for gradients. */
typedef struct {
    float *w[TRAIN_MAXL], *b[TRAIN_MAXL];
} wts_t;
/* The layers of m in the flat buffer p */
void model_wts(const model_t *m, float *p, wts_t *out);

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
/* Layers [lo, hi) only (a pipeline stage): what = ACTS_OUT: a[lo+1..hi]
 * (and GELU's keep), ACTS_GRAD: the two gradient buffers (as wide as the
 * widest size of the range), or both. */
enum { ACTS_OUT = 1, ACTS_GRAD = 2 };
int acts_alloc(acts_t *w, const model_t *m, const train_dev_t *dev, int rows, int lo, int hi, int what);
/* What acts_alloc would take, in bytes */
size_t acts_bytes(const model_t *m, int rows, int lo, int hi, int what);
void acts_free(acts_t *w, const train_dev_t *dev);

/* Called when layer l's gradients are complete (backward runs from the
 * last layer to the first); it may point g at other buffers for the
 * layers still to come. */
typedef void (*layer_done_fn)(void *ctx, int l);
/* Layers [lo, hi) with a0 the input of layer lo */
void model_forward(const model_t *m, const train_dev_t *dev, const wts_t *p, acts_t *w, int rows, int lo,
                   int hi);
/* The model's output after a forward of the last layer */
float *model_output(const model_t *m, acts_t *w);
/* Layers hi-1 down to lo, dL/d(output of layer hi-1) in w->d[0];
 * gradients into g (beta 0: overwrite, 1: accumulate); returns the buffer
 * (w->d[0] or w->d[1]) that holds dL/d(input of layer lo), or NULL when
 * lo is 0 (nobody needs it). */
float *model_backward(const model_t *m, const train_dev_t *dev, const wts_t *p, wts_t *g, acts_t *w, int rows,
                      float beta, int lo, int hi, layer_done_fn done, void *ctx);

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

/* ---- optimisers (optim.c: one row each) and schedules (lr_schedule.c) ---- */
typedef struct optim_s optim_t;
/* The weights D updates ahead with every future gradient taken as 0
 * (weight prediction, optim_predict.c): the row's formula over n floats, lr[k]
 * the learning rate of the k-th update ahead (k = 0..D-1), t the updates
 * done; gacc: the gradient summed so far towards the next one (aggmsnag),
 * or NULL. */
typedef struct {
    size_t n;
    float *out;
    const float *w, *gacc;
    const float *state[OPT_MAXSTATES];
    const double *lr;
    int D;
    int64_t t;
} wp_args_t;
typedef struct optim_kind {
    const char *name;                   /* --optim; the checkpoint's 'optimizer' */
    int kernel;                         /* its element rule (opt_kernels.h) */
    double weight_decay;                /* the default of --weight-decay */
    /* the hyperparameters it takes, by option name (optim_check
     * refuses the others where given) */
    const char *takes;
    /* the state arrays it keeps with these options, torch.optim's names
     * (the checkpoint's /optim/<name>) */
    int (*nstates)(const train_opts_t *o);
    const char *state[OPT_MAXSTATES];
    /* step t's constants (lr the step's rate), as PyTorch computes them */
    void (*constants)(const optim_t *o, double lr, int64_t t, opt_step_t *h);
    /* weight prediction from its momentum, or NULL: none */
    void (*predict)(const optim_t *o, const wp_args_t *a);
} optim_kind_t;
/* the rows' predictions (optim_predict.c) */
void wp_predict_sgd_row(const optim_t *o, const wp_args_t *a);
void wp_predict_adam_row(const optim_t *o, const wp_args_t *a);
void wp_predict_adamw_row(const optim_t *o, const wp_args_t *a);
/* The formulas behind them (docs/train.md), double inside, float out:
 * the weights D updates ahead from momentum v (SGD) or m, v (Adam),
 * lr[k-1] the rate of the k-th; gacc NULL: msnag, else aggmsnag with
 * that summed gradient. */
typedef struct {
    const double *lr;        /* the D updates' rates */
    double beta1, beta2, eps, wd;
    int decoupled;           /* AdamW */
    int64_t t;               /* updates done */
} wp_adam_t;
void wp_predict_sgd(size_t n, float *out, const float *w, const float *v, const float *gacc, const double *lr,
                    double mu, int D);
void wp_predict_adam(size_t n, float *out, const float *w, const float *m, const float *v, const float *gacc,
                     const wp_adam_t *h, int D);
/* The learning rates of the D updates after done (the k-th ahead in
 * lr[k-1]): update u belongs to loop step u / per_step (pipe_predict.c,
 * the stale pipeline's) */
void wp_horizon(const train_opts_t *o, int64_t done, int64_t per_step, int64_t total, int D, double *lr);
/* The table, ending with a row whose name is NULL */
extern const optim_kind_t optim_kinds[];
const optim_kind_t *optim_find(const char *name);
/* The hyperparameters given that --optim's row does not take refused;
 * HPC_ERR_ARG with the cause */
int optim_check(const train_opts_t *o);

struct optim_s {
    const optim_kind_t *kind;
    int nstates;
    float *state[OPT_MAXSTATES];        /* device buffers of n floats */
    size_t n;
    double lr0, momentum, beta1, beta2, eps, wd, clip;
    int nesterov;
};
/* State buffers of n floats (zeros) */
int optim_open(optim_t *o, const train_opts_t *opts, const train_dev_t *dev, size_t n);
void optim_close(optim_t *o, const train_dev_t *dev);
/* Step t (1-based) with learning rate lr over n floats of p and g, the
 * states from float s_at of theirs. */
void optim_update(const optim_t *o, const train_dev_t *dev, size_t n, float *p, const float *g, size_t s_at,
                  double lr, int64_t t);
/* --clip over the floats [lo, hi) of g, the sum of squares also summed
 * over parts (the other stages, shards; MPI_COMM_NULL: none): the
 * global norm, NaN without clipping. */
double optim_clip(const optim_t *o, const train_dev_t *dev, float *g, size_t lo, size_t hi, MPI_Comm parts,
                  MPI_Comm parts2);
/* Both over the floats [MODEL_PAD, n) of one flat buffer (the whole
 * layout): the norm before clipping (NaN without clipping) */
double optim_step(const optim_t *o, const train_dev_t *dev, float *p, float *g, size_t n, double lr, int64_t t);
/* Learning rate of step t (0-based) of total. */
double sched_lr(const train_opts_t *o, int64_t t, int64_t total);

/* ---- what a rank holds (hold.c) ---- */
/* One flat buffer of a strategy: the layers [m->lo, m->hi) at m's
 * offsets, or (sharded) this rank's blocks of m's units one after the
 * other.  writes: this rank's copy is the one written to checkpoints
 * (replicas hold the same; one writes). */
typedef struct {
    const model_t *m;
    float *buf;                       /* device */
    int sharded, rank;
    int writes;
} hold_t;
/* Layer l's weight (bias 0) or bias: the run of its elements this rank
 * holds, [*first, *first + *count) in row-major order, and where it is on
 * the device; NULL (count 0) if none. */
float *hold_piece(const hold_t *h, int l, int bias, size_t *first, size_t *count);
/* A fresh start: this rank draws the elements it holds from the stream
 * of their layer (model_init_layer), the same values as one rank's */
int hold_init(const hold_t *h, const train_dev_t *dev, uint64_t seed);

/* ---- gradient synchronisation: what makes the gradient each rank
 * computed the one it updates with.  One table, two implementations:
 * dp.c's buckets (allreduced during backward) and zero.c's shards
 * (reduce-scattered during backward, the parameters gathered after the
 * update).  A strategy calls them around its backwards; the pipeline
 * holds either for its replicas. ---- */
typedef struct {
    const char *name;
    /* before a backward: arm = 1 if its gradient is reduced now (the
     * step's last, or with zero's grads and params every one), first = 1
     * if it is the step's first (what the step spent starts over; zero's
     * shard of the gradient too) */
    void (*begin)(void *ctx, int arm, int first);
    /* layer l's gradient is done: start what is complete */
    layer_done_fn layer_done;
    /* every reduction of the step complete; 0 or a libhpc error */
    int (*finish)(void *ctx);
    /* --clip over what this rank updates (its sum of squares summed over
     * the replicas where each holds a part, then over parts: the other
     * stages, or MPI_COMM_NULL) and the optimiser's update of it (zero:
     * then the parameters gathered): the norm, NaN without clipping */
    double (*update)(void *ctx, const optim_t *opt, double lr, int64_t t, MPI_Comm parts);
    /* s spent in collective calls since the last begin(first); s the
     * step's collectives take done blocking (measured at the start; 0 on
     * one rank) */
    double (*exposed)(const void *ctx);
    double (*blocking)(const void *ctx);
    /* what it holds; ctx NULL: nothing */
    void (*close)(void *ctx);
} gsync_ops_t;
typedef struct {
    const gsync_ops_t *ops;
    void *ctx;
} gsync_t;

/* dp.c: the buckets */
typedef struct {
    MPI_Comm comm;
    int size;
    hpc_alg_t alg;
    int nb;                          /* buckets */
    size_t *off, *count;             /* in floats, of the gradient buffer */
    int *last_layer;                 /* the bucket is ready when this layer is */
    hpc_request_t **req;
    float *g, *p;                    /* the gradient; the parameters (update) */
    size_t n;                        /* floats of both: the layout's */
    const train_dev_t *dev;
    int armed;                       /* this backward's gradients are reduced */
    double exposed, calib;           /* s in collective calls this step; one
                                        blocking reduction of all buckets */
    void (*sync_compute)(void);      /* the device's: backward is done (GPU) */
} dp_t;
/* Collective.  Buckets of bucket_mb over the layers of m's layout; g the
 * gradient, p the parameters (m's layout, on dev) */
int dp_open(dp_t *dp, const model_t *m, const train_dev_t *dev, float *p, float *g, double bucket_mb,
            hpc_alg_t alg, MPI_Comm comm);
/* dp behind the table (dp stays the caller's) */
gsync_t dp_gsync(dp_t *dp);
/* Before backward: arm = 1 on the last micro-step of a step (DDP's
 * no_sync for the others). */
void dp_begin(dp_t *dp, int arm);
/* Layer l's gradients are done: start the buckets that are complete and
 * advance those in flight (libhpc progresses them only inside its calls). */
void dp_layer_done(void *dp, int l);
/* Wait for every bucket; 0 or a libhpc error. */
int dp_finish(dp_t *dp);
void dp_close(dp_t *dp);

/* zero.c: ZeRO.  Collective over comm (of lay->shards ranks).  level
 * SHARD_*; p: the parameters in lay's layout (SHARD_PARAMS: this rank's
 * shard); g: the whole gradient (SHARD_OPTIM; backward writes it) or
 * NULL; gw: where backward writes each layer's gradient (for grads and
 * params: pointed at the unit's staging buffer as backward reaches it);
 * accum: micro-steps a step.  *out is set even where it fails (close it). */
int zero_open(gsync_t *out, const model_t *lay, const train_dev_t *dev, int level, float *p, float *g, wts_t *gw,
              MPI_Comm comm, int accum);
/* The bytes zero_open allocates (the gradient's shard, the staging) */
double zero_bytes(const model_t *lay, int level, int accum);

/* ---- strategies (strategy.c and one file each) ---- */
typedef struct train train_t;
/* What a rank holds, in bytes: its model state (parameters, gradients,
 * optimiser state and what the strategy adds: stashed weights, gather
 * and staging buffers), its activations (and messages), its data */
typedef struct {
    double model, acts, data;
} train_mem_t;

/* How the ranks share the work and the model.  The loop calls these; a
 * strategy uses the pieces above, never the loop. */
typedef struct strategy {
    const char *name;
    /* the checks that need only the command line, or NULL: none
     * (strategy_check has refused the options of the others first);
     * HPC_ERR_ARG with the cause */
    int (*check)(const train_opts_t *o);
    /* against the layers and ranks (sets derived options); HPC_ERR_ARG
     * with the cause */
    int (*fit)(train_opts_t *o, int nranks);
    /* this rank's data-parallel part of each batch: *part of *parts */
    void (*replica)(const train_opts_t *o, int rank, int nranks, int *part, int *parts);
    /* what this rank will hold, before anything is allocated (t->model,
     * t->data and the options are set) */
    void (*need)(const train_t *t, train_mem_t *out);
    /* collective: buffers, communicators; t->hold, t->eval_rows, t->validates */
    int (*open)(train_t *t);
    /* one optimiser step; 0, or -1 if the loss is not finite */
    int (*step)(train_t *t);
    /* collective: the stop signal, agreed, after this step (dp: the vote
     * of the step before, so a step later) */
    int (*stop)(train_t *t);
    /* collective: the network's output for rows inputs x (device), on the
     * ranks that compute losses (t->validates; else NULL) */
    const float *(*eval)(train_t *t, const float *x, int rows);
    /* collective: every replica holds the same parameters */
    int (*in_sync)(train_t *t, int *same);
    /* collective: what the summary adds ("; ..."), then the end of a run */
    void (*summary)(train_t *t, char *buf, size_t len);
    void (*finish)(train_t *t);
    void (*close)(train_t *t);
} strategy_t;
extern const strategy_t strategy_dp, strategy_shard, strategy_pipe;
/* The strategy of the options */
const strategy_t *strategy_of(const train_opts_t *o);
/* The options that belong to other strategies (or schedules) refused
 * where given (one table), then the strategy's own check; HPC_ERR_ARG
 * with the cause */
int strategy_check(const train_opts_t *o);
/* "--parallel dp --shard grads", "--parallel pipe --pipe-schedule 1f1b":
 * for messages */
void strategy_describe(const train_opts_t *o, char *buf, size_t len);

/* ---- what the strategies share (strat_common.c, below them) ---- */
/* The stop a strategy without its own agrees on: a signal seen by any
 * rank, agreed over all of them after the step */
int strategy_stop_agreed(train_t *t);
/* Every rank a data-parallel replica: the fit (a sample each) and its
 * slice of the batch (part rank of nranks) */
int strat_fit_replicas(train_opts_t *o, int nranks);
void strat_replica_each(const train_opts_t *o, int rank, int nranks, int *part, int *parts);
/* hpc_all_same of a device buffer of n floats over comm */
int train_buffers_same(const train_t *t, const float *buf, size_t n, MPI_Comm comm, int *same);
/* A collective failed on this rank (the others wait inside theirs):
 * "what: cause", exit 1 by MPI_Abort */
void train_coll_fatal(const char *what);

/* ---- the run ---- */
struct train {
    const train_opts_t *o;
    const strategy_t *strat;
    void *s;                      /* the strategy's own state */
    const train_dev_t *dev;
    data_t data;
    loader_t loader;
    model_t model;                /* the whole network, unsharded */
    optim_t opt;                  /* its states in the strategy's layout */
    hold_t hold[1 + OPT_MAXSTATES];   /* parameters, then each state */
    int part, parts;              /* this rank's slice of the batches */
    int validates;                /* this rank computes validation losses */
    int eval_rows;                /* the most rows eval takes at once */
    float *xdev, *ydev;           /* --device cuda: a batch on the GPU */
    hpc_run_t *run;
    int argc;
    char **argv;
    int64_t step, total, steps_per_epoch;
    int64_t saved_step;           /* the checkpoint on disk: its step, or -1 */
    double train_loss, val_loss, grad_norm;
    double val_mse;               /* validation MSE in the target's units */
    double val_acc;               /* cross-entropy: validation accuracy */
    train_mem_t mem;              /* what the strategy holds (its need) */
    /* the step's seconds in collective calls (not hidden) and what they
     * would take blocking (strategies set them) */
    double step_comm, step_blocking;
    /* this run's totals, for the summary and metrics */
    double t_run, t_comm, comm_possible, comm_hidden;   /* comm_hidden: the steps' hidden seconds (loop.c) */
    int64_t samples, steps_run;
};

/* batch.c: what PyTorch's mean divides a step's loss sum by */
double train_loss_terms(const train_t *t);
/* 1 when the losses are over normalised targets (MSE, normalised): the
 * summary, progress line, metrics and plot say so */
int train_loss_normalised(const train_t *t);
/* rows inputs and targets (host) on the device: themselves on the CPU */
void train_to_device(train_t *t, const float **x, const float **y, int rows);
/* device buffers for a batch of rows on the GPU (nothing on the CPU); -1 */
int train_batch_alloc(train_t *t, int rows);
size_t train_batch_bytes(const train_t *t, int rows);

/* loop.c: run to the last step, or to a stop agreed by every rank:
 * checkpoint, then HPC_EXIT_STOPPED.  A non-finite loss ends the job
 * (exit 1) with the last checkpoint kept. */
int train_loop(train_t *t);
/* Validation loss over every rank's block (collective); NaN if none.
 * *mse_data: the MSE in the target's units (MSE runs; else NaN);
 * *accuracy: the share of samples whose largest output is their label
 * (cross-entropy; else NaN). */
double train_validate(train_t *t, double *mse_data, double *accuracy);

/* Collective.  RUNDIR/checkpoint.h5 (atomically replaced). */
int ckpt_save(train_t *t);
/* Collective.  Parameters, optimiser state, step and normalisation from
 * RUNDIR/checkpoint.h5 (same options key); an HPC_ERR_* with the cause
 * ("--resume: ..."). */
int ckpt_load(train_t *t);
/* Collective.  --init-from: the parameters alone from FILE's /model/<i>/
 * (a checkpoint, or a PyTorch state_dict written as docs/train.md shows),
 * checked against the layers.  An HPC_ERR_* with the cause
 * ("--init-from FILE: ..."). */
int ckpt_init_from(train_t *t);

/* metrics.csv: step,epoch,lr,train_loss_normalized,val_loss_normalized,
 * val_mse_data,samples_per_s,comm_share,comm_hidden,val_accuracy (the
 * schema data/schemas/metrics.json); rows of a resumed run's past kept */
int metrics_open(train_t *t, int64_t keep_upto);
/* val_loss, val_mse, val_acc NaN: not evaluated at this step (empty fields) */
void metrics_row(train_t *t, double lr, double val_loss, double val_mse, double val_acc, double samples_per_s,
                 double comm_share, double hidden);
/* loss.png from metrics.csv (rank 0; nothing if gnuplot is missing) */
void metrics_plot(train_t *t);

#endif /* TRAIN_H */
