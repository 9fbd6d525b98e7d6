/* coll_internal.h - private to the collectives (libhpc/coll/).
 *
 * A collective call becomes a request holding a schedule: a list of rounds,
 * each a set of communication steps (isend/irecv, or one "external"
 * operation such as a native MPI_I* call or an NCCL launch) that are posted
 * together, followed by local steps (reduce, copy, scale) that run once all
 * of the round's communication has completed.  The same schedule is run to
 * the end by a blocking call or advanced one round at a time by hpc_test().
 *
 * Layering: each file uses only what the files below it declare, so there
 * are no cycles.  Where a lower file must undo what a higher one set up (a
 * communicator's NCCL state, its streams, its requests, its beacons), the
 * higher one leaves a hook in the lower one's struct (coll_comm_t.hook).
 *
 *   test_hooks.c   views of the insides for the tests (test_hooks.h)
 *   api.c          public entry points: argument checks, start of a call
 *   selftest.c     hpc_coll_selftest: every registry row, checked
 *   simulate.c     hpc_coll_simulate: schedules of many ranks, played
 *                  against the cost model without MPI
 *   select.c       auto: HPC_COLL_<OP>, the tuning file, the cost model
 *   build.c        a call becomes a schedule: in place, staging, stream gate, AVG
 *   registry.c     the one table of algorithms (registry.h), and all that
 *                  is derived from it: parsers, lists, costs, the usable
 *                  column and the row that runs where one cannot
 *   alg_name.c     an algorithm's name (from the rows' text only: what
 *                  reports a request's algorithm needs no builder)
 *   alg/tree.c alg/ring.c alg/butterfly.c   own algorithms (builders)
 *   alg/shm.c      shared memory on one node: the node's segment, per-chunk
 *                  flags, single copy (CMA) where the kernel allows it
 *   alg/hier.c     node-aware ones: flat builders as sub-schedules over a
 *                  node's ranks and over the leaders (which flat one each
 *                  phase runs, select.c's model says, through b->phase,
 *                  which build.c hands down: no upward call)
 *   native.c nccl.c                         backends (builders)
 *   nccl_comm.c    NCCL communicators: probe, nonblocking setup, abort
 *   request.c      requests in flight, progress, watchdog, stalls,
 *                  test/wait/free, stream waits
 *   call_check.c       HPC_DEBUG=coll: ranks compare their calls
 *   stall_check.c     ranks that run one call with different algorithms
 *   schedule.c        schedules: steps and rounds, built and advanced
 *   comm.c         per-communicator state, scratch pool, cleanup and abort hooks
 *   shmseg.c       its shared segment on the node, made at set-up: the
 *                  CMA probe, node mates' pids (liveness)
 *   topo.c         a communicator's nodes (HPC_NODE_SPLIT too) and leaders
 *   devsync.c      events requests poll, flags streams wait on
 *   device.c       CUDA memory, streams, kernels, through the GPU module
 *                  (../gpu_ops.h; the kernels are cuda.cu, in the module)
 *   reduce.c       host reductions
 *   settings_cache.c     the HPC_* environment
 *   types.c        dtype/op/collective names, parsers, sizes, conversions
 */
#ifndef HPC_COLL_INTERNAL_H
#define HPC_COLL_INTERNAL_H

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include "hpc_coll.h"
#include "internal.h"
#include "settings_rows.h"

struct coll_comm;
/* What a file hangs on a communicator's state and how to undo it: comm.c
 * calls every fini, in this order, when the communicator is freed. */
enum { COLL_HOOK_REQUESTS, COLL_HOOK_BEACONS, COLL_HOOK_NCCL, COLL_HOOK_DEVICE, COLL_NHOOKS };
typedef struct {
    void (*fini)(struct coll_comm *cc);
    void (*abort)(struct coll_comm *cc);    /* the job ends: stop now (coll_abort_all) */
} coll_hook_t;
typedef struct coll_beacon_out coll_beacon_out_t;   /* stall_check.c */
typedef struct coll_seg coll_seg_t;                 /* shmseg.c */
#define COLL_BEACONS_KEPT 16

/* A scratch buffer kept for reuse: kind 0 host, 1 pinned host, 2 device. */
#define COLL_POOL_SLOTS 6
typedef struct {
    void *p;
    size_t size;
    int kind;
    double last;            /* coll_now() when it was given back */
} coll_pooled_t;

/* The nodes of a communicator (topo.c): ranks numbered as in it. */
typedef struct {
    int local_rank, local_size;   /* in this node (HPC_NODE_SPLIT's fake nodes too) */
    int nnodes;
    int *node_of;           /* node of each rank, nodes numbered by lowest rank */
    int *first, *members;   /* node n's ranks: members[first[n] .. first[n+1]-1] */
} coll_topo_t;

/* auto's choices on a communicator, kept (select.c): a call of the same
 * collective and size asks the model and the tuning file only once. */
#define COLL_SEL_CACHE 16
typedef struct {
    uint64_t key;           /* collective and memory kind; 0 = empty */
    uint64_t bytes;
    unsigned gen;           /* the settings' generation it was made under */
    hpc_alg_t alg;
} coll_sel_t;

/* Per-communicator state, cached as an attribute on the user's comm. */
typedef struct coll_comm {
    struct coll_comm *next; /* all cached states, freed at MPI_Finalize */
    MPI_Comm user;          /* the communicator this state hangs on */
    MPI_Comm comm;          /* private duplicate: our traffic never matches the user's */
    MPI_Request dup_req;    /* comm still being made (MPI_Comm_idup), else MPI_REQUEST_NULL */
    int off;                /* not set up: MPI serves it (hpc_coll_refuse) */
    int rank, size;
    uint64_t seq;           /* collectives started on this comm (same on every rank) */
    int tag_ub;
    void *nccl;             /* ncclComm_t, created on first use (nccl_comm.c) */
    int nccl_state;         /* 0 not probed, 1 usable, 2 ready, <0 refused or broken */
    void *nccl_ids;         /* the probe's exchange in flight (nccl_probereq), or NULL */
    MPI_Request nccl_probereq;
    int nccl_setup;         /* setting up: 0 no, 1 unique id in flight, 2 NCCL init */
    uint64_t nccl_posted;   /* NCCL calls started on cc (their tickets) */
    uint64_t nccl_launched; /* of those, whose group is in: the next ticket's turn */
    unsigned char nccl_id[128];     /* ncclUniqueId */
    MPI_Request nccl_idreq;
    char nccl_why[256];     /* why NCCL was refused */
    void *stream;           /* cudaStream_t of this comm's device work */
    void *nbstream;         /* and of stream-ordered calls (both non-blocking) */
    void *legacy_ev;        /* recorded on the legacy stream: stream waits for it */
    int yield;              /* more ranks on this node than cores: yield when idle */
    coll_pooled_t pool[COLL_POOL_SLOTS];   /* scratch kept for reuse (comm.c) */
    size_t pool_bytes;
    coll_beacon_out_t *bout;                /* beacons sent (stall_check.c) */
    unsigned char bin[COLL_BEACONS_KEPT][48];   /* the latest beacons received */
    unsigned nbin;
    uint64_t bout_seen;     /* calls / 64 when beacons were last taken in */
    coll_hook_t hook[COLL_NHOOKS];
    coll_topo_t topo;       /* its nodes (topo.c) */
    coll_seg_t *seg;        /* its shared segment on this node (shmseg.c), or NULL */
    coll_sel_t sel[COLL_SEL_CACHE];   /* auto's recent choices (select.c) */
    int sim;                /* made up by simulate.c: build schedules, touch no data */
} coll_comm_t;

enum {
    ST_SEND, ST_RECV,       /* point-to-point, bytes */
    ST_EXT,                 /* an external operation (native MPI, NCCL) */
    ST_REDUCE,              /* dst = a (op) b, elements */
    ST_COPY,                /* dst = a, bytes (any memory kinds) */
    ST_SCALE,               /* dst /= n_div (AVG), elements */
    ST_GATE                 /* the round waits for the call's input (stream-ordered) */
};

typedef struct coll_step {
    int kind;
    int peer;               /* SEND/RECV */
    size_t n;               /* bytes (SEND/RECV/COPY) or elements (REDUCE/SCALE) */
    void *dst;
    const void *a, *b;
    int dev;                /* local steps: 1 = operands in device memory */
    int div;                /* SCALE: divisor */
    /* RECV with a reduction on arrival: rdst = ra (op) dst, rn elements,
     * run as soon as this message is in (while it is still in cache), not
     * after the whole round */
    void *rdst;
    const void *ra;
    size_t rn;
    struct coll_ext *x;     /* EXT: its operation (NULL: the request's own, r->ext) */
} coll_step_t;

typedef struct hpc_request hpc_request_t;
/* External operation: post starts it, test polls it (*done = 1 at the end). */
typedef struct coll_ext {
    int (*post)(hpc_request_t *r, struct coll_ext *x);
    int (*test)(hpc_request_t *r, struct coll_ext *x, int *done);
    /* what it waits for, for the watchdog's line (NULL: nothing to say) */
    void (*describe)(hpc_request_t *r, struct coll_ext *x, char *buf, size_t len);
    int done;               /* test said so (a round may hold several) */
    int blocking;           /* post may block (native blocking call) */
    MPI_Request *mreqs;     /* native: the calls in flight */
    int nmreq, mcap;
    void *event;            /* NCCL: cudaEvent_t recorded after its work */
    int stage;              /* NCCL: 0 waits for the communicator, 1 launching, 2 launched */
    uint64_t ticket;        /* NCCL: its place among the calls on its communicator */
    void *state;            /* shared memory (alg/shm.c): where the call stands */
} coll_ext_t;

typedef struct coll_sched {
    coll_step_t *steps;
    int nsteps, cap;
    int *rend;              /* rend[i]: first step after round i */
    int nrounds, rcap;
    int cur, posted;        /* progress: current round, its comm posted */
    MPI_Request *reqs;
    int *reqstep;           /* step index of reqs[i] (watchdog report) */
    int *idx;               /* MPI_Testsome output */
    int nreq, reqcap;
    int nleft;              /* requests of the round not yet complete */
    int arrival;            /* the round has reductions on arrival */
    int dev_pending;        /* device work queued in this round */
    int fence;              /* the fence event marks device work not yet seen done */
} coll_sched_t;

struct hpc_request {
    struct hpc_request *prev, *next;   /* list of requests in flight */
    coll_comm_t *cc;
    uint64_t seq;
    int tag;
    hpc_coll_t coll;
    hpc_alg_t alg;
    hpc_dtype_t dt;
    hpc_op_t op;
    size_t count;
    int root;
    int dev;                /* local steps run on the GPU */
    int blocking;
    coll_sched_t s;
    coll_ext_t ext;
    /* the call's arguments (external ops read them) */
    const void *sendbuf;    /* NULL = in place */
    void *recvbuf;
    /* scratch allocations, freed at completion */
    void *tmp[16];          /* (hierarchical calls nest several builders) */
    int tmpkind[16];        /* 0 malloc, 1 pinned host, 2 device */
    size_t tmpsz[16];
    int ntmp;
    double t0;
    int completed;          /* finished (successfully or not) */
    int detached;           /* hpc_request_free: freed when it completes */
    int automatic;          /* the algorithm is auto's choice */
    /* stalls (request.c) and what they found (stall_check.c) */
    int stall_round;        /* the round t_round belongs to */
    double t_round, t_check, mismatch_t;
    int beaconed;
    int err;                /* its error code when it failed */
    /* device work (devsync.c) */
    int streamed;           /* stream-ordered call (hpc_icoll_stream) */
    void *ustream;          /* its caller's cudaStream_t */
    void *lstream;          /* the stream of r's own device steps */
    void *ready_ev;         /* recorded on ustream at the call: input ready */
    void *fence_ev;         /* after a round's device work */
    int flag[4], nflag;     /* streams waiting for r (hpc_request_stream_wait) */
    int enqueued;           /* NCCL: its work is on its stream (ext.event recorded) */
};

/* Segments of one step in flight at a time in the reduce-on-arrival
 * loops: enough to keep messages moving, few enough that the scratch
 * buffer (COLL_INFLIGHT segments) stays in cache. */
#define COLL_INFLIGHT 4

/* Argument bundle for the schedule builders (alg/). */
typedef struct coll_build {
    hpc_request_t *r;
    coll_sched_t *s;
    int rank, p, root;
    const char *sbuf;       /* input; == rbuf when in place */
    char *rbuf;
    size_t count, es;       /* elements, element size */
    hpc_dtype_t dt;
    hpc_op_t op;            /* AVG is built as SUM, scaled by the caller */
    int dev;                /* buffers in device memory (CUDA-aware path) */
    size_t seg;             /* pipeline segment, bytes */
    /* a sub-schedule over some of the ranks (alg/hier.c): rank and p
     * and every peer the builder names are indices into map, which gives
     * the communicator's rank; NULL = the whole communicator */
    const int *map;
    /* how hier's phases find their rows (alg/hier.c), handed down by
     * whoever builds (coll_select_phase, coll_row): the builders are rows
     * of the registry, so calling selection or the registry directly
     * would make a loop registry -> hier -> select -> registry */
    const struct coll_row *(*phase)(hpc_coll_t c, size_t bytes, int nnodes, int ppn, int shm, int cma);
    const struct coll_row *(*row_of)(hpc_coll_t c, hpc_alg_t a);
} coll_build_t;

/* types.c */
int coll_name_eq(const char *a, const char *b);   /* case-insensitive, '-' == '_' */
int coll_rooted(hpc_coll_t c);
int coll_aliased(hpc_coll_t c, const void *sb, const void *rb, int isroot, size_t off);
float coll_half_to_float(uint16_t h);
uint16_t coll_float_to_half(float f);
float coll_bf16_to_float(uint16_t h);
uint16_t coll_float_to_bf16(float f);

/* settings_cache.c: the HPC_* environment, read on first use: a field per
 * row of settings_rows.h (its name, its setting's type), and what is derived */
typedef struct {
    COLL_SETTINGS(COLL_SETTING_FIELD)
    int debug;              /* HPC_DEBUG names coll */
    char force[HPC_COLL_COUNT][64];       /* HPC_COLL_<OP> as written ("auto": none) */
    unsigned generation;    /* bumped by every reload */
} coll_settings_t;
const coll_settings_t *coll_settings(void);
/* HPC_COLL_<OP>'s name ("HPC_COLL_ALLREDUCE", ...), from colls.h's row */
const char *coll_force_var(hpc_coll_t c);
void coll_settings_reload(void);
size_t coll_segment(void);
int coll_debug_enabled(void);

/* reduce.c: host math */
void coll_reduce_host(hpc_dtype_t dt, hpc_op_t op, void *dst, const void *a,
                      const void *b, size_t n);
void coll_scale_host(hpc_dtype_t dt, void *buf, size_t n, int div);

/* device.c, through the GPU module (gpu_ops.h): streams take cudaStream_t
 * as void *; without a module or GPU, HPC_ERR_NOGPU naming what is missing */
int coll_is_device_ptr(const void *p);
/* The GPU table for device work, this rank's GPU made current on the
 * calling thread first (device.c); NULL where no GPU can be used. */
const struct hpc_gpu_ops *coll_gpu(void);
/* cc's stream for calls without one, or for stream-ordered calls (both
 * non-blocking) */
int coll_dev_stream(coll_comm_t *cc, int nonblocking, void **out);
/* cc's plain stream waits for what the legacy default stream holds now */
int coll_dev_legacy_gate(coll_comm_t *cc);
int coll_dev_reduce(void *stream, hpc_dtype_t dt, hpc_op_t op, void *dst,
                    const void *a, const void *b, size_t n);
int coll_dev_scale(void *stream, hpc_dtype_t dt, void *buf, size_t n, int div);
int coll_dev_copy(void *stream, void *dst, const void *src, size_t bytes);
int coll_dev_alloc(size_t bytes, int kind, void **out);
/* kept back while a stream-wait kernel runs (devsync.c), freed later by
 * coll_dev_free_deferred (request progress) */
void coll_dev_free(void *p, int kind);
void coll_dev_free_deferred(void);
int coll_dev_frees_pending(void);
int coll_dev_memcpy(void *dst, const void *src, size_t bytes);
int coll_dev_count(void);

/* devsync.c: events polled by requests, flags streams wait on */
int coll_dev_event_record(void *stream, void **ev);    /* creates *ev if NULL */
int coll_dev_event_done(void *ev, int *done);
void coll_dev_event_free(void *ev);
int coll_dev_stream_wait_event(void *stream, void *ev);
void coll_dev_stream_sync(void *stream);   /* error paths only: blocks */
/* a kernel on stream waits until coll_dev_flag_set(*slot) */
int coll_dev_flag_wait(void *stream, int *slot);
void coll_dev_flag_set(int slot);
/* flag slots whose kernel may still run (frees wait while any is) */
int coll_dev_flags_busy(void);
/* Make what allocations need while a stream-wait kernel spins (a stream
 * for cudaMallocAsync): before the first kernel waits. */
int coll_dev_alloc_ready(void);
/* that stream (NULL before coll_dev_alloc_ready or without the allocator) */
void *coll_dev_alloc_stream(void);

/* shmseg.c: a communicator's segment on its node.  Each rank's control
 * line: counters of chunks over all the calls on the segment (alg/shm.c),
 * the addresses a single-copy call reads from, its pid. */
#define COLL_SEG_LINE 64
typedef struct {
    _Atomic uint64_t in;    /* chunks whose input it has made available */
    _Atomic uint64_t red;   /* chunks it has worked on (read the inputs of) */
    _Atomic uint64_t out;   /* chunks it has taken its result of */
    uint64_t sbuf, rbuf;    /* single copy: this call's buffers, in its memory */
    int64_t pid;
} coll_seg_line_t;
struct coll_seg {
    char *base;             /* lines, result ring, slots (shmseg.c) */
    size_t bytes, chunk;    /* the whole; one slot or ring entry */
    int m, me;              /* node ranks, this one's index */
    int depth;              /* slots per rank, entries of the ring */
    size_t entry;           /* single copy's allreduce: bytes of a chunk's result
                             * (the data area seen as depth entries of it) */
    int cma;                /* single copy works between every pair (agreed) */
    int pids;               /* node mates' pids are seen here (liveness) */
    int64_t ppid;           /* this rank's parent at set-up (its launcher) */
    /* calls take the segment in the order they start (the same on every
     * rank): tickets given, calls done, chunks of the calls done */
    uint64_t tickets, turn, base_chunk;
    uint64_t seen[3];       /* lowest in, red, out over the ranks, last looked */
};
/* made at set-up, collective over cc's node communicator (cc->seg NULL
 * where it cannot be made on every rank of the node); freed locally */
int coll_seg_init(coll_comm_t *cc, MPI_Comm node);
void coll_seg_free(coll_comm_t *cc);
/* rank i's line; chunk g's result entry; rank i's slot for chunk g
 * (lines, then the ring, then every rank's slots) */
static inline coll_seg_line_t *coll_seg_line(const coll_seg_t *s, int i)
{
    return (coll_seg_line_t *)(void *)(s->base + (size_t)i * COLL_SEG_LINE);
}
static inline char *coll_seg_ring(const coll_seg_t *s, uint64_t g)
{
    return s->base + (size_t)s->m * COLL_SEG_LINE + (size_t)(g % (uint64_t)s->depth) * s->chunk;
}
static inline char *coll_seg_slot(const coll_seg_t *s, int i, uint64_t g)
{
    return s->base + (size_t)s->m * COLL_SEG_LINE + (size_t)s->depth * s->chunk +
           ((size_t)i * (size_t)s->depth + (size_t)(g % (uint64_t)s->depth)) * s->chunk;
}
/* 1 if a node mate (*who, node index) or this rank's launcher (*who -1) is gone */
int coll_seg_dead(const coll_seg_t *s, int *who);
/* single copy: bytes at src in node rank i's memory into dst here */
int coll_seg_read(const coll_seg_t *s, int i, void *dst, uint64_t src, size_t bytes);
/* single copies (coll_seg_read and _write calls) this process asked for */
long coll_seg_moves(void);
/* and the other way: bytes at src here into dst in node rank i's memory */
int coll_seg_write(const coll_seg_t *s, int i, uint64_t dst, const void *src, size_t bytes);

/* topo.c: derive t for comm (collective), with *node the node's
 * communicator for the rest of the set-up (the caller frees it); a copy
 * for a communicator of the same group; free it */
int coll_topo_init(coll_topo_t *t, MPI_Comm comm, int rank, int p, MPI_Comm *node);
int coll_topo_copy(coll_topo_t *dst, const coll_topo_t *src, int p);
/* t's three arrays for p ranks, uninitialised (freed again on failure) */
int coll_topo_alloc(coll_topo_t *t, int p);
void coll_topo_free(coll_topo_t *t);

/* comm.c */
int coll_get_comm(MPI_Comm comm, coll_comm_t **out);
/* The job is ending (hpc_abort): every communicator's abort hooks (NCCL's
 * ncclCommAbort), so no GPU work waits for peers that are gone. */
void coll_abort_all(void);
/* fn runs once at MPI_Finalize, before MPI goes away */
int coll_at_mpi_finalize(void (*fn)(void));
/* Scratch memory of r's kind (host or device), freed with r. */
int coll_tmp(hpc_request_t *r, size_t bytes, void **out);
int coll_tmp_kind(hpc_request_t *r, size_t bytes, int kind, void **out);
/* give r's scratch buffers back (to cc's pool, or freed) */
void coll_tmp_release(hpc_request_t *r);
void coll_pool_free(coll_comm_t *cc);

/* schedule.c */
extern size_t coll_max_message;     /* bytes per message (1 GiB; tests lower it) */
extern long coll_pieces;            /* extra messages from cutting steps */
void coll_sched_init(coll_sched_t *s);
void coll_sched_free(coll_sched_t *s);
int coll_send(coll_build_t *b, int peer, const void *buf, size_t bytes);
int coll_recv(coll_build_t *b, int peer, void *buf, size_t bytes);
/* receive into buf, then at once dst = x (op) buf over n elements */
int coll_recv_reduce(coll_build_t *b, int peer, void *buf, size_t n, void *dst, const void *x);
int coll_reduce(coll_build_t *b, void *dst, const void *x, const void *y, size_t n);
int coll_copy(coll_build_t *b, void *dst, const void *src, size_t bytes);
int coll_copy_k(coll_sched_t *s, void *dst, const void *src, size_t bytes, int dev);
int coll_scale(coll_sched_t *s, void *buf, size_t n, int div, int dev);
int coll_ext_step(coll_sched_t *s);   /* r->ext */
int coll_ext_step_x(coll_sched_t *s, coll_ext_t *x);   /* x, kept by the builder (scratch) */
coll_ext_t *coll_step_ext(hpc_request_t *r, const coll_step_t *st);
int coll_gate_step(coll_sched_t *s);   /* a round that waits for r->ready_ev */
int coll_round(coll_sched_t *s);   /* close the current round */
/* Advance r one or more rounds without blocking; *done at the end. */
int coll_sched_progress(hpc_request_t *r, int *done);

/* stall_check.c: the tag of call seq's messages under alg */
int coll_tag(const coll_comm_t *cc, uint64_t seq, hpc_alg_t alg);
/* r is stalled: does some rank run it with another algorithm?  If so, one
 * line and the job ends. */
void coll_mismatch_check(hpc_request_t *r, double now);
/* at every call: now and then, take in beacons nobody asked for */
void coll_mismatch_tick(coll_comm_t *cc);

/* call_check.c: the call about to start on cc (HPC_DEBUG=coll) */
int coll_desync_check(coll_comm_t *cc, const hpc_coll_args_t *a, hpc_alg_t alg);

/* request.c */
void coll_request_free(hpc_request_t *r);
int coll_requests_in_flight(void);       /* how many */
/* one turn of a blocking call's wait outside a schedule (r: a request
 * made up for the watchdog's line, no schedule) */
void coll_request_wait_tick(hpc_request_t *r, int spins);
/* run r to its end (blocking; r freed) or return it in flight in *out */
int coll_request_run(hpc_request_t *r, int blocking, hpc_request_t **out);

/* native MPI (native.c) */
extern size_t coll_max_count;       /* elements per MPI call (INT_MAX; tests lower it) */
extern long coll_native_splits;     /* calls beyond it, split or with a big type */
MPI_Datatype coll_mpi_dtype(hpc_dtype_t dt);
int coll_mpi_op(hpc_dtype_t dt, hpc_op_t op, MPI_Op *out);

/* NCCL communicators (nccl_comm.c) */
/* may NCCL run on cc?  Collective, once per communicator: started
 * (nonblocking) at its first call whose algorithm is auto or nccl */
int coll_nccl_probe(coll_comm_t *cc);
/* 1: the probe said yes (waiting for its answer if need be) */
int coll_nccl_ready(coll_comm_t *cc);
/* advance cc's setup; *ready (and *nc, an ncclComm_t) once it can work */
int coll_nccl_setup(coll_comm_t *cc, void **nc, int *ready);
/* result (ncclResult_t; < 0: the error recorded) failed what: abort cc's
 * NCCL, HPC_ERR_NCCL */
int coll_nccl_broken(coll_comm_t *cc, int result, const char *what);

/* algorithms (alg/) and backends (native.c, nccl.c): one builder per
 * row of the registry, declared from it */
typedef int (*coll_builder_fn)(coll_build_t *b);
#include "registry.h"

/* Seconds on the coarse monotonic clock (a few milliseconds apart): all
 * the watchdog, the stall check, a dead node mate's check and the pool's
 * idle time need.  Not MPI_Wtime: a small call's loop reads the clock on
 * every turn, and where the fine clock cannot be read in user space (a
 * VM without a stable TSC) each read is a system call - a third of an
 * 8-byte allgather's time under the drop-in, measured with perf. */
static inline double coll_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
#define COLL_ROW_PROTO(C_, A_, FN_, MEM_, BE_, COST_) int coll_##FN_(coll_build_t *b);
COLL_REGISTRY(COLL_ROW_PROTO)
#undef COLL_ROW_PROTO

/* pipelined shapes shared by tree and ring (alg/tree.c): broadcast
 * down / reduce up a tree given by parent and children (real ranks,
 * parent -1 at the root), in segments of seg bytes (0 = one message) */
int coll_tree_bcast(coll_build_t *b, char *buf, size_t bytes, int parent,
                    const int *child, int nchild, size_t seg);
int coll_tree_reduce(coll_build_t *b, const char *in, char *acc, size_t n, int parent,
                     const int *child, int nchild, size_t seg);

/* registry.c: the rows (registry.h) */
enum { COLL_MEM_HOST = 1, COLL_MEM_DEV = 2, COLL_MEM_ANY = 3 };
enum { COLL_BE_P2P, COLL_BE_MPI, COLL_BE_NCCL };
#define COLL_UNMODELLED INFINITY
/* What the cost formulas see (select.c fills it in). */
typedef struct {
    double A, B, G;         /* alpha s/message, beta s/byte sent, gamma s/byte reduced */
    double n;               /* bytes per rank (one block where the call has blocks) */
    double P, L, f;         /* ranks, ceil(log2 P), (P-1)/P */
    double pof2;            /* largest power of two <= P */
    double fold;            /* folding P - pof2 ranks in and out; 0 for a power of two */
    double segs;            /* pipeline segments of n (at least 1) */
    /* two link classes (hierarchical rows): nodes, and alpha/beta between
     * nodes; 0 = not set: one node, the intra-node constants */
    double N, AI, BI;
    /* shared memory on a node: alpha of a flag handed to another core,
     * beta of one core's copy, chunk bytes, this call by single copy
     * (coll_cost_fill makes SC so from cma: single copy works there) */
    double AS, BS, C, SC;
    int cma;
} coll_cost_in_t;
/* the derived inputs (L, f, pof2, fold, segs, C, SC) from A, B, G, n, P, cma */
void coll_cost_fill(coll_cost_in_t *m);
typedef struct coll_row {
    hpc_coll_t coll;
    hpc_alg_t alg;
    const char *name;       /* the enum constant, upper case */
    coll_builder_fn build;
    /* may build run b here (NULL: always)?  Where not, coll_row_for
     * moves to the collective's next row */
    int (*usable)(const coll_build_t *b);
    double (*cost)(const coll_cost_in_t *m);
    unsigned mem;           /* COLL_MEM_*: buffers it takes */
    int backend;            /* COLL_BE_* */
} coll_row_t;
const coll_row_t *coll_rows(int *n);
const coll_row_t *coll_row(hpc_coll_t c, hpc_alg_t a);    /* NULL: no such row */
/* HPC_ERR_ARG: "WHATc has no algorithm 'a' (it has ...)" */
int coll_alg_missing(hpc_coll_t c, hpc_alg_t a, const char *what);

/* build.c: r's schedule for the call a */
int coll_build(hpc_request_t *r, const hpc_coll_args_t *a);

/* selftest.c: every row, or row only_row alone; *ncases run, *nfail failed */
int coll_selftest(MPI_Comm comm, int include_device, int verbose, int only_row, hpc_selftest_t *res);

/* select.c: what auto runs for c with bytes per rank on p ranks (one node) */
int coll_select(hpc_coll_t c, size_t bytes, int p, int dev, hpc_alg_t *out);
/* ... on a communicator of this shape (the tuning file's key) */
typedef struct {
    int p;                  /* ranks */
    int nnodes, ppn;        /* nodes, ranks of the largest */
    int dev;                /* device memory */
    int cma;                /* single copy works (one node only) */
} coll_shape_t;
int coll_select_shape(hpc_coll_t c, size_t bytes, const coll_shape_t *sh, hpc_alg_t *out);
/* ... on cc (its shape), kept in cc->sel for the next such call */
int coll_select_comm(coll_comm_t *cc, hpc_coll_t c, size_t bytes, int dev, hpc_alg_t *out);
/* hier's phases: c's algorithm in one node of ppn ranks (nnodes 1; shm:
 * the node has its segment, cma: single copy there) or among nnodes
 * leaders (ppn 1) - an own flat row a sub-schedule can run */
const coll_row_t *coll_select_phase(hpc_coll_t c, size_t bytes, int nnodes, int ppn, int shm, int cma);
double coll_model_cost(const coll_row_t *row, size_t bytes, int p);
/* the same on p ranks over nnodes nodes (the hierarchical rows weigh
 * intra- and inter-node links) */
double coll_model_cost_nodes(const coll_row_t *row, size_t bytes, int p, int nnodes);
/* the model's constants now (settings, tuning file) */
void coll_model_constants(double *a, double *b, double *g, double *ai, double *bi);

/* alg/shm.c: may shm run b (its segment, host memory, one node)? */
int coll_shm_usable(const coll_build_t *b);
/* *use: the row that builds b for row - row itself where it is usable
 * there, else the next row of its collective (the one before it where it
 * is the last): shm's rows without a segment run hier (gather, scatter:
 * tree).  An error where b was narrowed to a map for row (a phase that
 * chose it must have found it usable). */
int coll_row_for(const coll_row_t *row, const coll_build_t *b, const coll_row_t **use);
/* a small blocking call on a communicator of one node, run at once
 * without a request (*ran 0: not such a call, nothing done) */
int coll_shm_inline(coll_comm_t *cc, const hpc_coll_args_t *a, int *ran);

#endif /* HPC_COLL_INTERNAL_H */
