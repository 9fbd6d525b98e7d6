/* pipe.h - pipeline parallelism inside hpc-train: the pieces the
 * strategy's files share (pipe.c: options, plan, set-up, summary;
 * pipe_run.c: a stage's step and messages; pipe_sched.c: the schedules;
 * pipe_stale.c, pipe_predict.c: the stale schedule's weights; timeline.c).
 * The rest of hpc-train sees strategy_pipe (train.h) and the schedules'
 * table (options.c: --pipe-schedule's choices; strategy.c: its name and
 * whether it is asynchronous).
 */
#ifndef TRAIN_PIPE_H
#define TRAIN_PIPE_H

#include "train.h"

#define PIPE_RING 4          /* gradient messages in flight per stage */
#define PIPE_EXTRA 2         /* floats after a gradient message: the loss sum so far (a double) */

typedef struct {
    char kind;               /* 'F' or 'B' */
    int mb;                  /* micro-batch of the step (>= M: of the next step) */
} pipe_op_t;

/* The schedules: one row each (pipe_sched.c) */
typedef struct {
    const char *name;        /* --pipe-schedule */
    /* stage s's operations for one step of M micro-batches (2M) */
    int (*ops)(int S, int s, int M, pipe_op_t *ops);
    /* its idle share with equal stages */
    double (*bubble)(int S, int M);
    /* its stages step on their own as gradients come, without a flush
     * (the list's order runs on over the run's stream: pipe_stale.c) */
    int async;
    const char *help;
} pipe_sched_t;
extern const pipe_sched_t pipe_scheds[];   /* ends with a NULL name */
int pipe_sched_find(const char *name);

/* first[s] = the first layer of stage s, first[S] = nl */
void pipe_partition_balanced(const model_t *m, int S, int *first);
/* Stage s's operations for one step of M micro-batches; returns 2M. */
int pipe_schedule(int sched, int S, int s, int M, pipe_op_t *ops);
/* The same for a step of a run: an asynchronous schedule without fresh
 * skips the forwards the step before ran ahead, and with carry runs the
 * next step's first forwards ahead (micro-batches M and on). */
int pipe_schedule_step(int sched, int S, int s, int M, int fresh, int carry, pipe_op_t *ops);
/* The most micro-batches whose activations stage s holds at once */
int pipe_alive_most(int sched, int S, int s, int M);
/* The idle share of a step with equal stages (the row's) */
double pipe_bubble_theory(int sched, int S, int M);

/* One message buffer: host memory for MPI; on the GPU a device copy too
 * (dev == host on the CPU). */
typedef struct {
    float *dev, *host;
    MPI_Request req;
} pipe_msg_t;

/* A micro-batch in flight: its input (received, or the data's rows) and
 * the activations of the stage's layers; with --weight-stashing the
 * stage's weights its forward used. */
typedef struct {
    int64_t mb;              /* micro-batch from the run's start; -1: free */
    int posted;              /* its input's receive is posted */
    acts_t acts;
    pipe_msg_t in, out;
    float *stash;            /* the stage's layout */
    int64_t version;         /* the stage's update count at its forward */
} pipe_slot_t;

/* One recorded operation of the timeline */
typedef struct {
    int step, mb;
    char kind;
    double t0, t1;           /* s since the recording started */
} pipe_rec_t;

typedef struct pipeline {
    const train_opts_t *o;
    int S, s, D, d;          /* stages and mine; replicas and mine */
    int first[TRAIN_MAXL + 1];   /* stage s: layers [first[s], first[s+1]) */
    int lo, hi;              /* my layers [lo, hi) */
    model_t lay;             /* their layout: parameters, gradients, states */
    float *p, *g;            /* my layers' parameters and gradients (device) */
    wts_t pw, gw;            /* where each of my layers' arrays is */
    dp_t dp;                 /* the replicas' gradient allreduce (hybrid) */
    gsync_t sync;            /* it, or --shard optim over the replicas (zero.c) */
    int prev, next;          /* neighbours in pipe_comm, MPI_PROC_NULL at the ends */
    MPI_Comm pipe_comm;      /* my replica's stages (rank = stage) */
    MPI_Comm rep_comm;       /* my stage in every replica (rank = replica) */
    int M, sched, nops;
    const pipe_sched_t *row;
    pipe_op_t *ops;
    int rows_most;           /* rows of the largest micro-batch */
    int nslots;
    pipe_slot_t *slot;
    acts_t work;             /* gradient buffers; --recompute: the activations */
    float *scratch[2];       /* work's gradient buffers as allocated */
    acts_t eval;             /* validation: the stage's outputs */
    pipe_msg_t grad[PIPE_RING], dx[PIPE_RING];
    pipe_msg_t eval_in, eval_out;
    int64_t grad_next;       /* the next micro-batch whose gradient is received */
    int64_t act_next;        /* the next micro-batch whose input is received */
    int dx_next;             /* dx ring */
    /* the step */
    int64_t base, limit;     /* its first micro-batch; none from limit on is started */
    int fresh, stop;         /* the pipeline is empty; a stop was agreed */
    hpc_stop_vote_t *vote;   /* asynchronous schedules: the stop vote, a step late */
    const float *y;          /* the last stage: the targets of its backward */
    double lsum;             /* the step's loss sum so far (messages carry it) */
    int backs;               /* backwards since the last update (stale) */
    int64_t updates;         /* optimiser steps of this stage */
    float *pred;             /* --weight-prediction: the forward's weights */
    float *gap_avg;          /* --gap-aware: running mean of step^2 (host) */
    void *stale;             /* pipe_stale.c's own */
    /* measurements */
    int alive, alive_peak;
    size_t slot_bytes;
    double busy, span;       /* s computing F and B; s of the steps */
    double upd;              /* s in the optimiser's steps within the span (stale) */
    double bubble_replay;    /* rank 0: the recorded steps replayed (timeline.c) */
    pipe_rec_t *rec;
    int nrec, caprec, rec_steps;
    double rec_t0;
    float *dump_buf;         /* test hook (pipe.c) */
    FILE *dump;
} pipeline_t;

/* The model state a stage holds beside its layers' parameters,
 * gradients and optimiser state (pipe_stale.c): stashed versions,
 * predicted weights, gap-aware's reference and running mean, scratch */
double stale_bytes(const train_opts_t *o, const model_t *lay, int nslots, int gpu);

/* pipe_run.c: the strategy's step, stop and validation forward; the
 * test hook's file */
int pipe_step(train_t *t);
int pipe_stop(train_t *t);
const float *pipe_eval(train_t *t, const float *x, int rows);
void pipe_dump_open(pipeline_t *pp, const train_t *t);

/* pipe_stale.c: the stale schedule's weights; pipe_predict.c: gap-aware */
/* g /= 1 + |w - ref| / (sqrt(avg_sq) + 1e-8), elementwise */
void ga_penalise(size_t n, float *g, const float *w, const float *ref, const float *avg_sq);
/* avg_sq = decay avg_sq + (1 - decay) (w_new - w_old)^2 */
void ga_track(size_t n, float *avg_sq, const float *w_new, const float *w_old, double decay);
int stale_open(pipeline_t *pp, train_t *t);
void stale_step_begin(pipeline_t *pp, train_t *t);
void stale_close(pipeline_t *pp, train_t *t);
/* the weights micro-batch slot's forward uses (and records them) */
const float *stale_forward_weights(pipeline_t *pp, train_t *t, pipe_slot_t *sl);
/* the weights its backward uses */
const float *stale_backward_weights(pipeline_t *pp, train_t *t, pipe_slot_t *sl);
/* a backward is done: step if --step-every backwards are */
void stale_after_backward(pipeline_t *pp, train_t *t, pipe_slot_t *sl, int last);

/* timeline.c */
void timeline_record(pipeline_t *pp, train_t *t, char kind, int mb, double t0, double t1);
/* Collective: RUNDIR/timeline.csv and timeline.png */
void timeline_write(pipeline_t *pp, train_t *t);

#endif /* TRAIN_PIPE_H */
