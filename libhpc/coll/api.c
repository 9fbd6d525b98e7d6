/* api.c - the collectives' public entry points.
 *
 * Every call goes the same way: check the arguments (before any message,
 * on every rank alike), find the communicator's private state (comm.c),
 * resolve the algorithm (select.c), build the request's schedule
 * (build.c), then run it to the end or return it in flight (request.c).
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"
#include "colls.h"

#include <stdlib.h>
#include <string.h>

static int check_buf(const char *what, const void *p, size_t n, size_t es, hpc_coll_t c)
{
    if (n == 0) return 0;
    if (!p) return HPC_ERR(HPC_ERR_ARG, "%s: %s is NULL with %zu elements", hpc_coll_name(c), what, n);
    if ((uintptr_t)p % es)
        return HPC_ERR(HPC_ERR_ARG, "%s: %s %p is misaligned for %zu-byte elements",
                       hpc_coll_name(c), what, p, es);
    return 0;
}


static int validate(const hpc_coll_args_t *a, const coll_comm_t *cc)
{
    if ((unsigned)a->coll >= HPC_COLL_COUNT)
        return HPC_ERR(HPC_ERR_ARG, "unknown collective %d", (int)a->coll);
    const char *cn = hpc_coll_name(a->coll);
    if (a->coll != HPC_COLL_BARRIER && (unsigned)a->dtype >= HPC_DTYPE_COUNT)
        return HPC_ERR(HPC_ERR_ARG, "%s: unknown dtype %d", cn, (int)a->dtype);
    if (hpc_coll_reduces(a->coll) && (unsigned)a->op >= HPC_OP_COUNT)
        return HPC_ERR(HPC_ERR_ARG, "%s: unknown reduction op %d", cn, (int)a->op);
    if ((unsigned)a->alg >= HPC_ALG_COUNT)
        return HPC_ERR(HPC_ERR_ARG, "%s: unknown algorithm %d", cn, (int)a->alg);
    if (!hpc_coll_has_alg(a->coll, a->alg)) return coll_alg_missing(a->coll, a->alg, NULL);
    if (coll_rooted(a->coll) && (a->root < 0 || a->root >= cc->size))
        return HPC_ERR(HPC_ERR_ARG, "%s: root %d out of range for %d ranks", cn, a->root, cc->size);
    if (a->coll == HPC_COLL_BARRIER) return 0;
    size_t es = hpc_dtype_size(a->dtype), sc, rc;
    /* any count whose buffers fit in memory (big ones go in pieces) */
    if (a->count > SIZE_MAX / es / (size_t)cc->size)
        return HPC_ERR(HPC_ERR_ARG, "%s: count %zu too large", cn, a->count);
    hpc_coll_buf_counts(a, cc->rank, cc->size, &sc, &rc);
    int root = cc->rank == a->root;
    int inplace_send = a->sendbuf == HPC_IN_PLACE;
    if (inplace_send && (a->coll == HPC_COLL_SCATTER || (a->coll == HPC_COLL_GATHER && !root)))
        return HPC_ERR(HPC_ERR_ARG, "%s: HPC_IN_PLACE as sendbuf is for %s", cn,
                       a->coll == HPC_COLL_GATHER ? "the root only" : "gather, not scatter (use recvbuf)");
    if (a->recvbuf == HPC_IN_PLACE && !(a->coll == HPC_COLL_SCATTER && root))
        return HPC_ERR(HPC_ERR_ARG, "%s: HPC_IN_PLACE as recvbuf is for the root of scatter only", cn);
    if (!inplace_send && a->coll != HPC_COLL_BCAST)
        HPC_TRY(check_buf("sendbuf", a->sendbuf, sc, es, a->coll));
    if (a->recvbuf != HPC_IN_PLACE) {
        /* in place, the input lives in recvbuf even where no output does */
        size_t need = rc;
        if (inplace_send && a->coll == HPC_COLL_REDUCE) need = a->count;
        HPC_TRY(check_buf(a->coll == HPC_COLL_BCAST ? "buf" : "recvbuf", a->recvbuf, need, es, a->coll));
    }
    return 0;
}

/* Device memory if either buffer is (checked: not one of each). */
static int memory_kind(const hpc_coll_args_t *a, const coll_comm_t *cc, int *dev)
{
    int sdev = a->sendbuf && a->sendbuf != HPC_IN_PLACE && coll_is_device_ptr(a->sendbuf);
    int rdev = a->recvbuf && a->recvbuf != HPC_IN_PLACE && coll_is_device_ptr(a->recvbuf);
    size_t sc, rc;
    hpc_coll_buf_counts(a, cc->rank, cc->size, &sc, &rc);
    if (sc && rc && a->sendbuf && a->recvbuf && a->sendbuf != HPC_IN_PLACE &&
        a->recvbuf != HPC_IN_PLACE && sdev != rdev)
        return HPC_ERR(HPC_ERR_ARG, "%s: sendbuf and recvbuf must both be host or both be device memory",
                       hpc_coll_name(a->coll));
    *dev = sdev || rdev;
    return 0;
}

/* The algorithm to run; *dev may turn to 1 for NCCL on empty buffers. */
static int resolve(const hpc_coll_args_t *a, coll_comm_t *cc, int *dev, hpc_alg_t *out)
{
    /* may NCCL run on cc?  Asked where every rank asks alike: at the
     * first call that auto or nccl could send to NCCL, whatever the
     * memory kind (nccl_comm.c) */
    if (hpc_have_nccl() && (a->alg == HPC_ALG_AUTO || a->alg == HPC_ALG_NCCL))
        HPC_TRY(coll_nccl_probe(cc));
    hpc_alg_t alg = a->alg;
    if (alg == HPC_ALG_AUTO) {
        size_t bytes = a->count * hpc_dtype_size(a->dtype);
        HPC_TRY(coll_select_comm(cc, a->coll, bytes, *dev, &alg));
        /* NCCL refused here (ranks share a GPU): auto falls back to ours,
         * and says so once (rank 0 of the first such communicator) */
        if (alg == HPC_ALG_NCCL && !coll_nccl_ready(cc)) {
            static int told;
            if (!told++ && cc->rank == 0)
                hpc_warn("auto: %s; device collectives use hpckit's own algorithms", cc->nccl_why);
            HPC_TRY(coll_select_comm(cc, a->coll, bytes, 0, &alg));
        }
    }
    if (alg == HPC_ALG_NCCL && !*dev) {
        /* an empty buffer has no memory kind: decide by what NCCL needs */
        if (a->count == 0 || a->coll == HPC_COLL_BARRIER) *dev = hpc_have_nccl();
        if (!*dev)
            return HPC_ERR(HPC_ERR_ARG, "%s: algorithm 'nccl' needs device buffers", hpc_coll_name(a->coll));
    }
    *out = alg;
    return 0;
}

/* A blocking call on one rank, host memory: its result is its input, a
 * copy where not in place - what every algorithm's schedule does there. */
static int one_rank(coll_comm_t *cc, const hpc_coll_args_t *a)
{
    cc->seq++;
    if (a->coll == HPC_COLL_BCAST || a->coll == HPC_COLL_BARRIER || !a->count || a->sendbuf == HPC_IN_PLACE ||
        a->recvbuf == HPC_IN_PLACE || a->sendbuf == a->recvbuf)
        return 0;
    memmove(a->recvbuf, a->sendbuf, a->count * hpc_dtype_size(a->dtype));
    return 0;
}

/* Start the call a: blocking, or return it in flight in *out; stream:
 * stream-ordered on the CUDA stream *stream (NULL: not). */
static int coll_start(const hpc_coll_args_t *a0, MPI_Comm comm, int blocking, hpc_stream_t *stream,
                      hpc_request_t **out)
{
    if (!a0) return HPC_ERR(HPC_ERR_ARG, "NULL arguments");
    hpc_coll_args_t a = *a0;
    coll_comm_t *cc = NULL;
    HPC_TRY(coll_get_comm(comm, &cc));
    if (a.coll == HPC_COLL_BARRIER) {
        a.count = 0;
        a.dtype = HPC_INT32;
        a.root = 0;
    }
    if (!hpc_coll_reduces(a.coll)) a.op = HPC_SUM;
    if (!coll_rooted(a.coll)) a.root = 0;
    HPC_TRY(validate(&a, cc));
    /* no GPU: no stream can hold work, and the legacy one (NULL) is none */
    int streamed = stream && coll_dev_count() > 0;
    if (stream && !streamed && *stream)
        return HPC_ERR(HPC_ERR_NOGPU, "%s: a CUDA stream, but no GPU: %s", hpc_coll_name(a.coll),
                       hpc_gpu_unavailable());
    int dev = 0;
    hpc_alg_t alg = HPC_ALG_AUTO;
    HPC_TRY(memory_kind(&a, cc, &dev));
    HPC_TRY(resolve(&a, cc, &dev, &alg));
    if (coll_debug_enabled()) HPC_TRY(coll_desync_check(cc, &a, alg));
    coll_mismatch_tick(cc);
    if (blocking && cc->size == 1 && !dev && !streamed) return one_rank(cc, &a);
    /* a blocking call on one node's shared memory: at once, no request */
    if (blocking && alg == HPC_ALG_SHM && !dev && !streamed) {
        int ran = 0;
        HPC_TRY(coll_shm_inline(cc, &a, &ran));
        if (ran) return 0;
    }

    hpc_request_t *r = calloc(1, sizeof *r);
    if (!r) return HPC_ERR(HPC_ERR_NOMEM, "request");
    r->cc = cc;
    r->seq = cc->seq++;
    r->tag = coll_tag(cc, r->seq, alg);
    r->automatic = a.alg == HPC_ALG_AUTO;
    r->coll = a.coll;
    r->alg = alg;
    r->dt = a.dtype;
    r->op = a.op;
    r->count = a.count;
    r->root = a.root;
    r->dev = dev;
    r->blocking = blocking;
    r->streamed = streamed;
    r->ustream = streamed ? *stream : NULL;
    r->sendbuf = a.sendbuf;
    r->recvbuf = a.recvbuf;
    r->t0 = r->t_round = coll_now();
    coll_sched_init(&r->s);
    int e = coll_build(r, &a);
    if (e < 0) {
        coll_request_free(r);
        return hpc_error_push(e, __FILE__, __LINE__, __func__);
    }
    HPC_TRY(coll_request_run(r, blocking, out));
    return 0;
}

int hpc_coll(const hpc_coll_args_t *a, MPI_Comm comm)
{
    HPC_TRY(coll_start(a, comm, 1, NULL, NULL));
    return 0;
}

int hpc_icoll(const hpc_coll_args_t *a, MPI_Comm comm, hpc_request_t **req)
{
    if (!req) return HPC_ERR(HPC_ERR_ARG, "NULL request pointer");
    hpc_request_t *r = NULL;
    HPC_TRY(coll_start(a, comm, 0, NULL, &r));
    *req = r;
    return 0;
}

int hpc_icoll_stream(const hpc_coll_args_t *a, MPI_Comm comm, hpc_stream_t stream, hpc_request_t **req)
{
    if (!req) return HPC_ERR(HPC_ERR_ARG, "NULL request pointer");
    hpc_request_t *r = NULL;
    HPC_TRY(coll_start(a, comm, 0, &stream, &r));
    *req = r;
    return 0;
}

/* ------------------------------------------------------------------ */
/* The named entry points: one blocking, one nonblocking and, where the */
/* table says so, one stream-ordered wrapper per row of colls.h, with   */
/* the arguments of its shape (hpc_coll.h declares them)                */
/* ------------------------------------------------------------------ */
/* each shape's parameters up to the algorithm, and its call's fields */
#define PARAMS_NONE MPI_Comm comm, hpc_alg_t alg
#define PARAMS_BUF_ROOT void *buf, size_t count, hpc_dtype_t dt, int root, MPI_Comm comm, hpc_alg_t alg
#define PARAMS_RED_ROOT                                                                                \
    const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt, hpc_op_t op, int root, MPI_Comm comm, \
        hpc_alg_t alg
#define PARAMS_RED                                                                                     \
    const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt, hpc_op_t op, MPI_Comm comm, hpc_alg_t alg
#define PARAMS_MOVE_ROOT                                                                               \
    const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt, int root, MPI_Comm comm, hpc_alg_t alg
#define PARAMS_MOVE const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt, MPI_Comm comm, hpc_alg_t alg
#define ARGS_NONE NULL, NULL, 0, HPC_INT32, HPC_SUM, 0
#define ARGS_BUF_ROOT NULL, buf, count, dt, HPC_SUM, root
#define ARGS_RED_ROOT sendbuf, recvbuf, count, dt, op, root
#define ARGS_RED sendbuf, recvbuf, count, dt, op, 0
#define ARGS_MOVE_ROOT sendbuf, recvbuf, count, dt, HPC_SUM, root
#define ARGS_MOVE sendbuf, recvbuf, count, dt, HPC_SUM, 0

static hpc_coll_args_t args(hpc_coll_t c, const void *s, void *r, size_t n, hpc_dtype_t t, hpc_op_t op, int root,
                            hpc_alg_t alg)
{
    return (hpc_coll_args_t){.coll = c, .sendbuf = s, .recvbuf = r, .count = n, .dtype = t, .op = op,
                             .root = root, .alg = alg};
}

#define WRAP(name, E, SIG, SEND, RECV, ALIAS, BUS, MPI, IMPI, STREAM)                                     \
    int hpc_##name(PARAMS_##SIG)                                                                       \
    {                                                                                                  \
        hpc_coll_args_t a = args(HPC_COLL_##E, ARGS_##SIG, alg);                                       \
        return hpc_coll(&a, comm);                                                                     \
    }                                                                                                  \
    int hpc_i##name(PARAMS_##SIG, hpc_request_t **req)                                                 \
    {                                                                                                  \
        hpc_coll_args_t a = args(HPC_COLL_##E, ARGS_##SIG, alg);                                       \
        return hpc_icoll(&a, comm, req);                                                               \
    }                                                                                                  \
    COLL_IF(STREAM, int hpc_i##name##_stream(PARAMS_##SIG, hpc_stream_t stream, hpc_request_t **req) \
                    {                                                                                  \
                        hpc_coll_args_t a = args(HPC_COLL_##E, ARGS_##SIG, alg);                       \
                        return hpc_icoll_stream(&a, comm, stream, req);                                \
                    })
COLL_TABLE(WRAP)
#undef WRAP
