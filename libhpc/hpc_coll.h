/* hpc_coll.h - collectives over host and device buffers.
 *
 * One API for the MPI library's own collectives ("native"), NCCL (device
 * buffers) and hpckit's own algorithms, each written once as a schedule of
 * rounds (point-to-point sends/receives, then local reduce/copy steps) that
 * runs to the end for a blocking call or is advanced round by round by
 * hpc_test() for a nonblocking one.  Which algorithms each collective has:
 * hpc_coll_algs() / hpc_coll_alg_names() (one table inside, see
 * docs/collectives.md).
 *
 * Conventions (as MPI's, with sizes in elements):
 *  - count is per rank: the whole buffer for bcast/reduce/allreduce, one
 *    rank's block for gather/allgather/scatter/reduce_scatter, one pair's
 *    block for alltoall (buffers of size*count elements where MPI has them).
 *  - In place: pass HPC_IN_PLACE (== MPI_IN_PLACE) where MPI does, or the
 *    same pointer for send and receive data:
 *      allreduce, reduce, alltoall, reduce_scatter: sendbuf (input in recvbuf;
 *        reduce_scatter: recvbuf holds size*count inputs, block 0 gets the result;
 *        reduce at a non-root rank: recvbuf is read, not written);
 *      allgather: sendbuf (this rank's block already at recvbuf + rank*count);
 *      gather at the root: sendbuf; scatter at the root: recvbuf.
 *  - Every rank of comm calls every collective in the same order with the
 *    same count, dtype, op, root and algorithm (HPC_DEBUG=coll checks).
 *    Ranks that end up running one call with different algorithms - auto
 *    chooses by memory kind, so one rank with host memory among ranks with
 *    device memory does that - get one line saying so, not a hang
 *    (HPC_COLL_STALL).
 *  - Buffers may be host or CUDA device memory (detected per call).
 *    Device data written on the legacy default stream is waited for; data
 *    from other streams must be synchronized first (as for CUDA-aware MPI),
 *    or use the stream-ordered forms (hpc_icoll_stream ...).
 *    float16/bfloat16 are reduced with float32 accumulation per step;
 *    int32/int64 sums and products wrap around (two's complement).
 *  - Any count whose buffers fit in memory: messages of 2 GiB or more go
 *    in pieces, MPI calls of more than INT_MAX elements are split.
 *  - comm is any intracommunicator; libhpc talks over a private duplicate
 *    of it (cached on comm, freed with it), so user traffic never matches.
 *    Complete its requests before freeing comm.  Call from one thread (the
 *    MPI_THREAD_FUNNELED model hpc_init sets up).
 *
 * Environment:
 *   HPC_COLL_<OP>=ALG      force the algorithm that auto picks for OP
 *                          (e.g. HPC_COLL_ALLREDUCE=ring; the names OP
 *                          has: hpc_coll_alg_names(), hpc-collbench --help)
 *   HPC_COLL_TUNING=FILE   table written by hpc-collbench --tune
 *   HPC_COLL_SEGMENT=BYTES pipeline segment of ring/tree (default 128K)
 *   HPC_DEBUG=coll         desync check before every collective
 *   HPC_TIMEOUT=SECONDS    watchdog: abort a collective not done in time
 *   HPC_COLL_STALL=SECONDS a call that makes no progress this long (default
 *                          1; 0 = never) looks for ranks that run it with
 *                          another algorithm (e.g. one rank passed host
 *                          memory where the others passed device memory):
 *                          one line naming both, and the job ends
 *   HPC_CUDA_AWARE=0|1     override detection of CUDA-aware MPI
 *   HPC_COLL_YIELD=0|1     yield the core while waiting (default: when the
 *                          node has more ranks than cores)
 *   HPC_COLL_ALPHA/_BETA/_GAMMA  cost model constants (s, s/byte, s/byte)
 *   HPC_COLL_ALPHA_INTER/_BETA_INTER  the same between nodes (5e-6, 4e-10):
 *                          with more than one node, flat algorithms pay
 *                          these and auto weighs the hierarchical ones
 *   HPC_COLL_ALPHA_SHM/_BETA_SHM  a node's shared memory: a flag handed to
 *                          another core, one core's copy per byte (2e-7,
 *                          1.25e-10), what the shm algorithm pays
 *   HPC_COLL_SINGLE_COPY=BYTES|off  shm moves messages of at least BYTES
 *                          (default 64K) by single copy (process_vm_readv)
 *                          where the kernel allows it; 0: every message
 *   HPC_NODE_SPLIT=odd-even|blocks:K  fake nodes for testing on one
 *                          machine (even/odd world ranks; K ranks each)
 *   HPC_COLL_POOL_MAX=BYTES  scratch buffers kept per communicator for
 *                          reuse (default 256M; larger ones are freed)
 *   HPC_COLL_POOL_IDLE=SECONDS  free kept buffers unused this long (10)
 * All are read once, at the first collective, through the settings table
 * (hpc.h: hpc_setting_*; hpc-info --settings lists every HPC_* setting).
 */
#ifndef HPC_COLL_H
#define HPC_COLL_H

#include <stddef.h>
#include <mpi.h>
#include <hpc.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    HPC_INT32 = 0, HPC_INT64, HPC_FLOAT32, HPC_FLOAT64,
    HPC_FLOAT16,     /* IEEE binary16 */
    HPC_BFLOAT16,    /* bfloat16 */
    HPC_DTYPE_COUNT
} hpc_dtype_t;

typedef enum { HPC_SUM = 0, HPC_PROD, HPC_MIN, HPC_MAX, HPC_AVG, HPC_OP_COUNT } hpc_op_t;

typedef enum {
    HPC_ALG_AUTO = 0,         /* cost model, env override, tuning file */
    HPC_ALG_NATIVE,           /* the MPI library's own collective */
    HPC_ALG_NCCL,             /* NCCL (device buffers) */
    HPC_ALG_LINEAR,           /* naive: all to the root, the root to all */
    HPC_ALG_TREE,             /* binomial tree */
    HPC_ALG_RING,             /* ring, pipelined in segments */
    HPC_ALG_BUTTERFLY,        /* recursive doubling / halving, dissemination */
    HPC_ALG_RABENSEIFNER,     /* reduce-scatter (halving) + allgather/gather */
    HPC_ALG_BRUCK,            /* Bruck (allgather, alltoall) */
    HPC_ALG_SCATTER_ALLGATHER,/* van de Geijn broadcast of long messages */
    HPC_ALG_HIER,             /* node-aware: in the node, among node leaders, in the node */
    HPC_ALG_SHM,              /* the node's shared memory, one node (else as hier) */
    HPC_ALG_COUNT
} hpc_alg_t;

typedef enum {
    HPC_COLL_BARRIER = 0, HPC_COLL_BCAST, HPC_COLL_REDUCE, HPC_COLL_ALLREDUCE,
    HPC_COLL_GATHER, HPC_COLL_ALLGATHER, HPC_COLL_SCATTER,
    HPC_COLL_REDUCE_SCATTER, HPC_COLL_ALLTOALL,
    HPC_COLL_COUNT
} hpc_coll_t;

#define HPC_IN_PLACE MPI_IN_PLACE

/* Names <-> enums: "float32" (also "float", "fp32", "f32"), "bfloat16"
 * ("bf16"), "sum", "avg", "ring", "scatter_allgather", "reduce_scatter"...
 * Parsers are case-insensitive and return 0 or HPC_ERR_ARG. */
HPC_EXPORT const char *hpc_dtype_name(hpc_dtype_t t);
HPC_EXPORT const char *hpc_op_name(hpc_op_t op);
HPC_EXPORT const char *hpc_alg_name(hpc_alg_t a);
HPC_EXPORT const char *hpc_coll_name(hpc_coll_t c);
HPC_EXPORT int hpc_dtype_parse(const char *s, hpc_dtype_t *out);
HPC_EXPORT int hpc_op_parse(const char *s, hpc_op_t *out);
HPC_EXPORT int hpc_alg_parse(const char *s, hpc_alg_t *out);
HPC_EXPORT int hpc_coll_parse(const char *s, hpc_coll_t *out);
HPC_EXPORT size_t hpc_dtype_size(hpc_dtype_t t);       /* bytes; 0 for a bad dtype */
/* Element i of a host buffer of type t, as a double (16-bit floats
 * converted), and the reverse (rounded to the type).  For filling and
 * checking buffers of any dtype with one loop. */
HPC_EXPORT double hpc_dtype_get(hpc_dtype_t t, const void *buf, size_t i);
HPC_EXPORT void hpc_dtype_set(hpc_dtype_t t, void *buf, size_t i, double v);
/* 1 if collective c offers algorithm a (AUTO and NATIVE always, NCCL for
 * device buffers; the rest as docs/collectives.md tabulates). */
HPC_EXPORT int hpc_coll_has_alg(hpc_coll_t c, hpc_alg_t a);
/* The algorithms collective c offers, AUTO aside, in enum order (NATIVE
 * and NCCL included): the first max of them into out (NULL with max 0 to
 * count them).  Returns how many c has, or HPC_ERR_ARG for a bad c. */
HPC_EXPORT int hpc_coll_algs(hpc_coll_t c, hpc_alg_t *out, int max);
/* Their names into buf, comma-separated ("native, nccl, linear, tree");
 * c == HPC_COLL_COUNT names every algorithm, "auto" first.  Returns buf
 * (truncated to len - 1 characters). */
HPC_EXPORT const char *hpc_coll_alg_names(hpc_coll_t c, char *buf, size_t len);
/* 1 if c reduces (takes an op). */
HPC_EXPORT int hpc_coll_reduces(hpc_coll_t c);
/* The algorithm AUTO runs for c with count elements of dtype on comm's
 * size (device: buffers in GPU memory).  Local, not collective. */
HPC_EXPORT int hpc_coll_choose(hpc_coll_t c, size_t count, hpc_dtype_t dt, int nranks,
                    int device, hpc_alg_t *out);

/* Set up libhpc's state for comm now: a private duplicate of it and its
 * node layout - collective over comm, as MPI_Comm_dup is.  Optional: the
 * first collective on comm does it otherwise.  Call it where every rank of
 * comm is at once (just after creating comm) when comm's first collective
 * may come in a different order against other communicators' calls on
 * different ranks (nonblocking calls): a set-up inside the first call
 * would then wait for ranks that are waiting in another communicator's.
 * A second call on the same comm is local and cheap.  Intercommunicators:
 * HPC_ERR_ARG. */
HPC_EXPORT int hpc_coll_setup(MPI_Comm comm);

/* ------------------------------------------------------------------ */
/* Blocking collectives: each returns when this rank's part is done and */
/* its buffers may be used again; 0, or a negative HPC_ERR_* code with  */
/* the cause in hpc_last_error().  count, in place, buffers and          */
/* algorithms: the conventions of hpc_coll.h(3).                        */
/* ------------------------------------------------------------------ */
HPC_EXPORT int hpc_barrier(MPI_Comm comm, hpc_alg_t alg);
HPC_EXPORT int hpc_bcast(void *buf, size_t count, hpc_dtype_t dt, int root,
              MPI_Comm comm, hpc_alg_t alg);
HPC_EXPORT int hpc_reduce(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
               hpc_op_t op, int root, MPI_Comm comm, hpc_alg_t alg);
HPC_EXPORT int hpc_allreduce(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                  hpc_op_t op, MPI_Comm comm, hpc_alg_t alg);
HPC_EXPORT int hpc_gather(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
               int root, MPI_Comm comm, hpc_alg_t alg);
HPC_EXPORT int hpc_allgather(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                  MPI_Comm comm, hpc_alg_t alg);
HPC_EXPORT int hpc_scatter(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                int root, MPI_Comm comm, hpc_alg_t alg);
HPC_EXPORT int hpc_reduce_scatter(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                       hpc_op_t op, MPI_Comm comm, hpc_alg_t alg);
HPC_EXPORT int hpc_alltoall(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                 MPI_Comm comm, hpc_alg_t alg);

/* ------------------------------------------------------------------ */
/* Nonblocking collectives: same arguments, request last.  Buffers must */
/* stay untouched until the request completes.  Requests may complete  */
/* in any order; hpc_test/hpc_wait advance every request in flight.     */
/* As in MPI, one call is nonblocking on every rank or on none (a       */
/* blocking call on one rank does not match a nonblocking one).         */
/* ------------------------------------------------------------------ */
typedef struct hpc_request hpc_request_t;

HPC_EXPORT int hpc_ibarrier(MPI_Comm comm, hpc_alg_t alg, hpc_request_t **req);
HPC_EXPORT int hpc_ibcast(void *buf, size_t count, hpc_dtype_t dt, int root,
               MPI_Comm comm, hpc_alg_t alg, hpc_request_t **req);
HPC_EXPORT int hpc_ireduce(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                hpc_op_t op, int root, MPI_Comm comm, hpc_alg_t alg, hpc_request_t **req);
HPC_EXPORT int hpc_iallreduce(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                   hpc_op_t op, MPI_Comm comm, hpc_alg_t alg, hpc_request_t **req);
HPC_EXPORT int hpc_igather(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                int root, MPI_Comm comm, hpc_alg_t alg, hpc_request_t **req);
HPC_EXPORT int hpc_iallgather(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                   MPI_Comm comm, hpc_alg_t alg, hpc_request_t **req);
HPC_EXPORT int hpc_iscatter(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                 int root, MPI_Comm comm, hpc_alg_t alg, hpc_request_t **req);
HPC_EXPORT int hpc_ireduce_scatter(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                        hpc_op_t op, MPI_Comm comm, hpc_alg_t alg, hpc_request_t **req);
HPC_EXPORT int hpc_ialltoall(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                  MPI_Comm comm, hpc_alg_t alg, hpc_request_t **req);

/* Advance *req (and every other request in flight) without blocking.
 * *done = 1 when it has completed: the request is then freed and *req set
 * to NULL.  A failed request is freed too and its error returned. */
HPC_EXPORT int hpc_test(hpc_request_t **req, int *done);
/* Complete *req (freed, *req = NULL).  NULL *req is a no-op. */
HPC_EXPORT int hpc_wait(hpc_request_t **req);
/* Complete all n requests (NULL entries skipped); first error returned. */
HPC_EXPORT int hpc_waitall(int n, hpc_request_t **reqs);
/* Let go of *req without waiting (as MPI_Request_free): *req = NULL (NULL
 * is a no-op).  The operation still completes and is freed then: it is
 * advanced whenever this rank calls hpc_test, hpc_wait or any collective
 * of libhpc (MPI's own calls do not advance it: there is no progress
 * thread), and finished when its communicator is freed.  An error it
 * meets goes to the log (hpc_warn), not to a caller.  Its buffers must
 * stay valid and untouched until it has completed, which the caller must
 * know otherwise (a later collective that needs its result on every rank,
 * hpc_request_stream_wait). */
HPC_EXPORT int hpc_request_free(hpc_request_t **req);

/* ------------------------------------------------------------------ */
/* Generic form (benchmarks, tests): one struct for every collective.   */
/* ------------------------------------------------------------------ */
typedef struct {
    hpc_coll_t coll;
    const void *sendbuf;     /* HPC_IN_PLACE allowed as described above */
    void *recvbuf;
    size_t count;
    hpc_dtype_t dtype;
    hpc_op_t op;             /* reductions only */
    int root;                /* rooted collectives only */
    hpc_alg_t alg;
} hpc_coll_args_t;

HPC_EXPORT int hpc_coll(const hpc_coll_args_t *a, MPI_Comm comm);
HPC_EXPORT int hpc_icoll(const hpc_coll_args_t *a, MPI_Comm comm, hpc_request_t **req);
/* Known answers, for checking results (hpc-info --selftest and
 * hpc-collbench --check use them): input element j of rank's send buffer
 * (a small integer, so every reduction is exact; +-1 for products), and
 * element i of rank's receive buffer after a (NAN: not defined there, as
 * a reduce's result off the root).  Fill the inputs with the first,
 * compare with the second. */
HPC_EXPORT double hpc_coll_check_value(hpc_op_t op, int rank, size_t j);
HPC_EXPORT double hpc_coll_check_expected(const hpc_coll_args_t *a, int rank, int nranks, size_t i);
/* Elements this rank sends / receives for a (what the buffers must hold). */
HPC_EXPORT void hpc_coll_buf_counts(const hpc_coll_args_t *a, int rank, int nranks,
                         size_t *send_count, size_t *recv_count);

/* ------------------------------------------------------------------ */
/* Stream-ordered collectives (device buffers; built here without any   */
/* CUDA header).  The call is ordered after the work already queued on */
/* stream and returns at once with a request: NCCL's work goes on the   */
/* stream itself (no host synchronisation); MPI and hpckit's schedules  */
/* record an event on the stream and their first round waits for it by  */
/* polling, as the requests in flight advance.  Complete the request    */
/* with hpc_test/hpc_wait, or let go of it with hpc_request_free; for   */
/* later work on a stream to wait for it without the host, use          */
/* hpc_request_stream_wait.  stream NULL is the legacy default stream.  */
/* Without a GPU only NULL is accepted, and the call is hpc_icoll's.    */
/* ------------------------------------------------------------------ */
typedef void *hpc_stream_t;   /* a cudaStream_t */

HPC_EXPORT int hpc_icoll_stream(const hpc_coll_args_t *a, MPI_Comm comm, hpc_stream_t stream,
                                hpc_request_t **req);
HPC_EXPORT int hpc_iallreduce_stream(const void *sendbuf, void *recvbuf, size_t count,
                                     hpc_dtype_t dt, hpc_op_t op, MPI_Comm comm, hpc_alg_t alg,
                                     hpc_stream_t stream, hpc_request_t **req);
HPC_EXPORT int hpc_ibcast_stream(void *buf, size_t count, hpc_dtype_t dt, int root, MPI_Comm comm,
                                 hpc_alg_t alg, hpc_stream_t stream, hpc_request_t **req);
HPC_EXPORT int hpc_ireduce_stream(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                                  hpc_op_t op, int root, MPI_Comm comm, hpc_alg_t alg,
                                  hpc_stream_t stream, hpc_request_t **req);
HPC_EXPORT int hpc_iallgather_stream(const void *sendbuf, void *recvbuf, size_t count,
                                     hpc_dtype_t dt, MPI_Comm comm, hpc_alg_t alg,
                                     hpc_stream_t stream, hpc_request_t **req);
HPC_EXPORT int hpc_ireduce_scatter_stream(const void *sendbuf, void *recvbuf, size_t count,
                                          hpc_dtype_t dt, hpc_op_t op, MPI_Comm comm,
                                          hpc_alg_t alg, hpc_stream_t stream,
                                          hpc_request_t **req);
/* Work queued on stream after this waits for req to complete, the host
 * not blocked: NCCL's work, by its event; a request the host progresses
 * (MPI, hpckit's schedules), by a one-thread kernel on the stream that
 * waits until the host has completed it - so this rank must keep calling
 * libhpc (hpc_test, any collective) until then.  On the legacy default
 * stream (NULL) the host waits instead.  req stays the caller's to
 * complete or free; a completed request has nothing left to wait for.
 * While such a kernel may run, do not cudaFree, cudaFreeHost or
 * synchronise the device yourself: that waits for the kernel, which waits
 * for the host - a deadlock (libhpc holds its own frees back until then). */
HPC_EXPORT int hpc_request_stream_wait(hpc_request_t *req, hpc_stream_t stream);

/* ------------------------------------------------------------------ */
/* Self-test (hpc-info --selftest): every collective x every algorithm, */
/* blocking and nonblocking (test-polled), small sizes, several dtypes  */
/* and ops, on host buffers and, with include_device and a GPU on every */
/* rank, device buffers.  Collective over comm.  Rank 0 prints one line */
/* per failed case and a summary line (verbose > 0: every case too;     */
/* verbose < 0: nothing, for callers that report *res themselves).      */
/* *res (every rank): the counts over all ranks.  Returns 0, or an      */
/* error code if the test itself could not run.                         */
/* ------------------------------------------------------------------ */
typedef struct {
    int cases, failed;
    int device;        /* 1 if device buffers were tested */
    double seconds;
} hpc_selftest_t;
HPC_EXPORT int hpc_coll_selftest(MPI_Comm comm, int include_device, int verbose, hpc_selftest_t *res);

/* ------------------------------------------------------------------ */
/* Scale simulator (hpc-collbench --simulate): the predicted seconds of */
/* collective c with algorithm a and count elements of dt per rank on p */
/* ranks over nnodes nodes (blocks of p/nnodes consecutive ranks),      */
/* without MPI traffic: a's real schedule builders run for every rank   */
/* (no buffer is touched) and the schedules are played against each     */
/* other with the cost model's constants (HPC_COLL_ALPHA ... _INTER or  */
/* the tuning file); the result is the critical path.  Contention on a  */
/* node's network link is not modelled.  HPC_ERR_ARG for algorithms     */
/* without a schedule of their own (native, nccl; shm on one node),     */
/* HPC_ERR_NOMEM past 24M steps of all ranks together.  Local; MPI must */
/* be initialised.                                                      */
/* ------------------------------------------------------------------ */
HPC_EXPORT int hpc_coll_simulate(hpc_coll_t c, hpc_alg_t a, size_t count, hpc_dtype_t dt, int p,
                                 int nnodes, double *seconds);

/* The shared-memory allreduce's traffic through memory, per rank, for
 * count elements of dt on comm (hpc-collbench --membw's bound): bytes it
 * reads and writes of the buffers that grow with the message (its own
 * and its node mates' inputs and results; not the segment's few cached
 * chunks), by the path shm takes for that size (*path: "single copy" or
 * "through the segment"; may be NULL).  HPC_ERR_UNSUPPORTED for other
 * collectives, or where shm does not run on comm (several nodes, no
 * segment).  Collective on comm's first use by libhpc, else local. */
HPC_EXPORT int hpc_coll_shm_traffic(MPI_Comm comm, hpc_coll_t c, size_t count, hpc_dtype_t dt, double *read,
                                    double *written, const char **path);

/* Where the machine-dependent pieces stand (for hpc-info): 1/0. */
HPC_EXPORT int hpc_coll_cuda_aware(void);

/* Device buffers for programs that do not link the CUDA runtime
 * themselves (hpc-collbench --mem cuda), through libhpc's GPU module:
 * zeroed device memory of bytes; free; a synchronous copy between any
 * memory kinds.  HPC_ERR_NOGPU, naming what is missing, without a GPU. */
HPC_EXPORT int hpc_coll_dev_alloc(size_t bytes, void **out);
HPC_EXPORT void hpc_coll_dev_free(void *p);
HPC_EXPORT int hpc_coll_dev_memcpy(void *dst, const void *src, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* HPC_COLL_H */
