/* nccl.c - the NCCL backend: one external step per call.
 *
 * A call waits for its communicator (nccl_comm.c), enqueues NCCL's work
 * as one group on its stream - the caller's for a stream-ordered call,
 * else the communicator's - and records an event after it, which test
 * polls, together with NCCL's asynchronous errors.  With a nonblocking
 * communicator the group itself may still be in progress when ncclGroupEnd
 * returns: what follows NCCL on the stream (copies, the AVG kernel, the
 * event) is enqueued once NCCL says it is in.  Gather, scatter and
 * alltoall are grouped send/recv (NCCL has no such collectives), barrier
 * a one-element allreduce; AVG is SUM followed by the averaging kernel.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"
#include "internal.h"

#include <string.h>

#ifdef HPC_HAVE_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>

enum { WAIT_COMM = 0, LAUNCHING = 1, LAUNCHED = 2 };   /* coll_ext_t.stage */

/* inside ncclGroupStart/End: a call NCCL refuses ends the group too */
#define NCCL_TRY(call)                                                        \
    do {                                                                      \
        ncclResult_t ne_ = (call);                                            \
        if (ne_ != ncclSuccess) {                                             \
            ncclGroupEnd();                                                   \
            return HPC_ERR(HPC_ERR_NCCL, "%s: %s", #call, ncclGetErrorString(ne_)); \
        }                                                                     \
    } while (0)

static ncclDataType_t nccl_type(hpc_dtype_t t)
{
    switch (t) {
    case HPC_INT32: return ncclInt32;
    case HPC_INT64: return ncclInt64;
    case HPC_FLOAT32: return ncclFloat32;
    case HPC_FLOAT64: return ncclFloat64;
    case HPC_FLOAT16: return ncclFloat16;
    default: return ncclBfloat16;
    }
}

static ncclRedOp_t nccl_op(hpc_op_t op)
{
    switch (op) {
    case HPC_PROD: return ncclProd;
    case HPC_MIN: return ncclMin;
    case HPC_MAX: return ncclMax;
    default: return ncclSum;    /* SUM, and AVG before the averaging kernel */
    }
}

static int stream_of(hpc_request_t *r, cudaStream_t *s)
{
    void *sv = r->ustream;
    if (!r->streamed) HPC_TRY(coll_dev_stream(r->cc, 0, &sv));
    *s = (cudaStream_t)sv;
    return 0;
}

/* The NCCL calls of r, between ncclGroupStart and ncclGroupEnd, and what
 * has to be on the stream before them. */
static int enqueue(hpc_request_t *r, ncclComm_t nc, cudaStream_t s)
{
    coll_comm_t *cc = r->cc;
    int p = cc->size, rank = cc->rank, root = r->root;
    size_t n = r->count, bytes = n * hpc_dtype_size(r->dt);
    ncclDataType_t t = nccl_type(r->dt);
    ncclRedOp_t op = nccl_op(r->op);
    char *rb = r->recvbuf == HPC_IN_PLACE ? NULL : r->recvbuf;
    const char *sb = r->sendbuf == HPC_IN_PLACE ? NULL : r->sendbuf;
    if (r->coll == HPC_COLL_BARRIER) {
        /* a one-element allreduce of a token */
        void *tok = NULL;
        HPC_TRY(coll_tmp_kind(r, 64, 2, &tok));
        r->recvbuf = tok;
    }
    if (r->coll == HPC_COLL_ALLTOALL && (!sb || sb == rb) && bytes) {
        /* in place: the inputs are overwritten by other blocks' outputs */
        void *t2 = NULL;
        HPC_TRY(coll_tmp_kind(r, (size_t)p * bytes, 2, &t2));
        HPC_CUDA(cudaMemcpyAsync(t2, rb, (size_t)p * bytes, cudaMemcpyDeviceToDevice, s));
        r->sendbuf = t2;
        sb = t2;
    }
    if (ncclGroupStart() != ncclSuccess) return HPC_ERR(HPC_ERR_NCCL, "ncclGroupStart failed");
    switch (r->coll) {
    case HPC_COLL_BARRIER:
        NCCL_TRY(ncclAllReduce(r->recvbuf, r->recvbuf, 1, ncclInt32, ncclSum, nc, s));
        break;
    case HPC_COLL_BCAST: NCCL_TRY(ncclBroadcast(rb, rb, n, t, root, nc, s)); break;
    case HPC_COLL_REDUCE: NCCL_TRY(ncclReduce(sb ? sb : rb, rb, n, t, op, root, nc, s)); break;
    case HPC_COLL_ALLREDUCE: NCCL_TRY(ncclAllReduce(sb ? sb : rb, rb, n, t, op, nc, s)); break;
    case HPC_COLL_ALLGATHER:
        NCCL_TRY(ncclAllGather(sb ? sb : rb + (size_t)rank * bytes, rb, n, t, nc, s));
        break;
    case HPC_COLL_REDUCE_SCATTER:
        /* ours in place: input in recvbuf, result to block 0; NCCL's in
         * place leaves it in block rank (moved in finish_launch) */
        if (sb && sb != rb) NCCL_TRY(ncclReduceScatter(sb, rb, n, t, op, nc, s));
        else NCCL_TRY(ncclReduceScatter(rb, rb + (size_t)rank * bytes, n, t, op, nc, s));
        break;
    case HPC_COLL_GATHER:
        if (!sb) sb = rb + (size_t)rank * bytes;
        if (rank != root) NCCL_TRY(ncclSend(sb, n, t, root, nc, s));
        for (int i = 0; rank == root && i < p; i++)
            if (i != root) NCCL_TRY(ncclRecv(rb + (size_t)i * bytes, n, t, i, nc, s));
        break;
    case HPC_COLL_SCATTER:
        if (rank == root && !rb) rb = (char *)sb + (size_t)rank * bytes;
        if (rank != root) NCCL_TRY(ncclRecv(rb, n, t, root, nc, s));
        for (int i = 0; rank == root && i < p; i++)
            if (i != root) NCCL_TRY(ncclSend(sb + (size_t)i * bytes, n, t, i, nc, s));
        break;
    case HPC_COLL_ALLTOALL:
        for (int i = 0; i < p; i++) {
            if (i == rank) continue;
            NCCL_TRY(ncclSend(sb + (size_t)i * bytes, n, t, i, nc, s));
            NCCL_TRY(ncclRecv(rb + (size_t)i * bytes, n, t, i, nc, s));
        }
        break;
    default:
        ncclGroupEnd();
        return HPC_ERR(HPC_ERR_ARG, "nccl: unknown collective");
    }
    ncclResult_t e = ncclGroupEnd();
    if (e != ncclSuccess && e != ncclInProgress) return coll_nccl_broken(cc, e, "enqueueing a collective");
    r->ext.stage = LAUNCHING;
    return 0;
}

/* NCCL's work is on the stream: what follows it, then the event. */
static int finish_launch(hpc_request_t *r, cudaStream_t s)
{
    int p = r->cc->size, rank = r->cc->rank, root = r->root;
    size_t n = r->count, bytes = n * hpc_dtype_size(r->dt);
    char *rb = r->recvbuf == HPC_IN_PLACE ? NULL : r->recvbuf;
    const char *sb = r->sendbuf == HPC_IN_PLACE ? NULL : r->sendbuf;
    if (bytes) {
        if (r->coll == HPC_COLL_REDUCE_SCATTER && (!sb || sb == rb) && rank)
            HPC_CUDA(cudaMemcpyAsync(rb, rb + (size_t)rank * bytes, bytes, cudaMemcpyDeviceToDevice, s));
        if (r->coll == HPC_COLL_GATHER && rank == root && sb && sb != rb + (size_t)rank * bytes)
            HPC_CUDA(cudaMemcpyAsync(rb + (size_t)rank * bytes, sb, bytes, cudaMemcpyDeviceToDevice, s));
        if (r->coll == HPC_COLL_SCATTER && rank == root && rb && rb != sb + (size_t)rank * bytes)
            HPC_CUDA(cudaMemcpyAsync(rb, sb + (size_t)rank * bytes, bytes, cudaMemcpyDeviceToDevice, s));
        if (r->coll == HPC_COLL_ALLTOALL)
            HPC_CUDA(cudaMemcpyAsync(rb + (size_t)rank * bytes, sb + (size_t)rank * bytes, bytes,
                                     cudaMemcpyDeviceToDevice, s));
    }
    if (r->op == HPC_AVG && hpc_coll_reduces(r->coll) && (r->coll != HPC_COLL_REDUCE || rank == root))
        HPC_TRY(coll_dev_scale(s, r->dt, rb, n, p));
    HPC_TRY(coll_dev_event_record(s, &r->ext.event));
    r->ext.stage = LAUNCHED;
    r->enqueued = 1;
    return 0;
}

/* As far as r can go now: communicator, launch, the rest of the stream. */
static int advance(hpc_request_t *r, coll_ext_t *x)
{
    cudaStream_t s = NULL;
    HPC_TRY(stream_of(r, &s));
    if (x->stage == WAIT_COMM) {
        void *nc = NULL;
        int ready = 0;
        HPC_TRY(coll_nccl_setup(r->cc, &nc, &ready));
        if (!ready) return 0;
        HPC_TRY(enqueue(r, (ncclComm_t)nc, s));
    }
    if (x->stage == LAUNCHING) {
        ncclResult_t st = ncclSuccess;
        ncclCommGetAsyncError((ncclComm_t)r->cc->nccl, &st);
        if (st == ncclInProgress) return 0;
        if (st != ncclSuccess) return coll_nccl_broken(r->cc, st, "enqueueing a collective");
        HPC_TRY(finish_launch(r, s));
    }
    return 0;
}

static int nccl_post(hpc_request_t *r, coll_ext_t *x)
{
    x->stage = WAIT_COMM;
    return advance(r, x);
}

static int nccl_test(hpc_request_t *r, coll_ext_t *x, int *done)
{
    *done = 0;
    if (x->stage != LAUNCHED) return advance(r, x);
    /* a peer that died or failed: an error, not a wait without end */
    ncclResult_t st = ncclSuccess;
    if (r->cc->nccl) ncclCommGetAsyncError((ncclComm_t)r->cc->nccl, &st);
    if (st != ncclSuccess && st != ncclInProgress) return coll_nccl_broken(r->cc, st, "asynchronous error");
    HPC_TRY(coll_dev_event_done(x->event, done));
    return 0;
}

int coll_nccl(coll_build_t *b)
{
    hpc_request_t *r = b->r;
    r->ext.post = nccl_post;
    r->ext.test = nccl_test;
    HPC_TRY(coll_ext_step(&r->s));
    return coll_round(&r->s);
}

#else

int coll_nccl(coll_build_t *b)
{
    return HPC_ERR(HPC_ERR_UNSUPPORTED, "%s: algorithm 'nccl': this build has no NCCL",
                   hpc_coll_name(b->r->coll));
}
#endif
