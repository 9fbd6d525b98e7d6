/* nccl.c - the NCCL backend: one external step per call.
 *
 * A call waits for its communicator (nccl_comm.c), enqueues NCCL's work
 * as one group on its stream - the caller's for a stream-ordered call,
 * else the communicator's - and records an event after it, which test
 * polls, together with NCCL's asynchronous errors.  With a nonblocking
 * communicator the group itself may still be in progress when ncclGroupEnd
 * returns: what follows NCCL on the stream (copies, the AVG kernel, the
 * event) is enqueued once NCCL says it is in - and until then NCCL
 * refuses any other call on that communicator, so the calls on one
 * communicator go in one at a time, in the order they were made (the
 * same on every rank, as NCCL needs): a ticket per call, and the next
 * ticket's turn comes when the group before it is in.  Gather, scatter
 * and alltoall are grouped send/recv (NCCL has no such collectives),
 * barrier a one-element allreduce; AVG is SUM followed by the averaging
 * kernel.  NCCL is reached through the GPU module (gpu_ops.h).
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"
#include "internal.h"
#include "gpu_ops.h"

#include <string.h>

enum { WAIT_COMM = 0, LAUNCHING = 1, LAUNCHED = 2 };   /* coll_ext_t.stage */

/* inside ncclGroupStart/End: a call NCCL refuses ends the group, and the
 * communicator (its peers may have enqueued theirs) */
#define NCCL_TRY(call)                                                        \
    do {                                                                      \
        int ne_ = (call);                                                     \
        if (ne_ != HPC_NCCL_OK) {                                                 \
            g->nccl_group_end();                                              \
            return coll_nccl_broken(cc, ne_, #call);                          \
        }                                                                     \
    } while (0)

static int stream_of(hpc_request_t *r, void **s)
{
    void *sv = r->ustream;
    if (!r->streamed) HPC_TRY(coll_dev_stream(r->cc, 0, &sv));
    *s = sv;
    return 0;
}

/* What has to be on the stream before NCCL's calls of r. */
static int prepare(hpc_request_t *r, void *s)
{
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    size_t p = (size_t)r->cc->size, bytes = r->count * hpc_dtype_size(r->dt);
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
        HPC_TRY(coll_tmp_kind(r, p * bytes, 2, &t2));
        HPC_CUDA(g->memcpy_async(t2, rb, p * bytes, s));
        r->sendbuf = t2;
    }
    return 0;
}

/* The NCCL calls of r, between ncclGroupStart and ncclGroupEnd. */
static int enqueue(hpc_request_t *r, void *nc, void *s)
{
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    coll_comm_t *cc = r->cc;
    int p = cc->size, rank = cc->rank, root = r->root, t = (int)r->dt, op = (int)r->op;
    size_t n = r->count, bytes = n * hpc_dtype_size(r->dt);
    char *rb = r->recvbuf == HPC_IN_PLACE ? NULL : r->recvbuf;
    const char *sb = r->sendbuf == HPC_IN_PLACE ? NULL : r->sendbuf;
    int e = g->nccl_group_start();
    if (e != HPC_NCCL_OK) return coll_nccl_broken(cc, e, "ncclGroupStart");
    switch (r->coll) {
    case HPC_COLL_BARRIER:
        NCCL_TRY(g->nccl_allreduce(r->recvbuf, r->recvbuf, 1, HPC_INT32, HPC_SUM, nc, s));
        break;
    case HPC_COLL_BCAST: NCCL_TRY(g->nccl_bcast(rb, rb, n, t, root, nc, s)); break;
    case HPC_COLL_REDUCE: NCCL_TRY(g->nccl_reduce(sb ? sb : rb, rb, n, t, op, root, nc, s)); break;
    case HPC_COLL_ALLREDUCE: NCCL_TRY(g->nccl_allreduce(sb ? sb : rb, rb, n, t, op, nc, s)); break;
    case HPC_COLL_ALLGATHER:
        NCCL_TRY(g->nccl_allgather(sb ? sb : rb + (size_t)rank * bytes, rb, n, t, nc, s));
        break;
    case HPC_COLL_REDUCE_SCATTER:
        /* ours in place: input in recvbuf, result to block 0; NCCL's in
         * place leaves it in block rank (moved in finish_launch) */
        if (sb && sb != rb) NCCL_TRY(g->nccl_reduce_scatter(sb, rb, n, t, op, nc, s));
        else NCCL_TRY(g->nccl_reduce_scatter(rb, rb + (size_t)rank * bytes, n, t, op, nc, s));
        break;
    case HPC_COLL_GATHER:
        if (!sb) sb = rb + (size_t)rank * bytes;
        if (rank != root) NCCL_TRY(g->nccl_send(sb, n, t, root, nc, s));
        for (int i = 0; rank == root && i < p; i++)
            if (i != root) NCCL_TRY(g->nccl_recv(rb + (size_t)i * bytes, n, t, i, nc, s));
        break;
    case HPC_COLL_SCATTER:
        if (rank == root && !rb) rb = (char *)sb + (size_t)rank * bytes;
        if (rank != root) NCCL_TRY(g->nccl_recv(rb, n, t, root, nc, s));
        for (int i = 0; rank == root && i < p; i++)
            if (i != root) NCCL_TRY(g->nccl_send(sb + (size_t)i * bytes, n, t, i, nc, s));
        break;
    case HPC_COLL_ALLTOALL:
        for (int i = 0; i < p; i++) {
            if (i == rank) continue;
            NCCL_TRY(g->nccl_send(sb + (size_t)i * bytes, n, t, i, nc, s));
            NCCL_TRY(g->nccl_recv(rb + (size_t)i * bytes, n, t, i, nc, s));
        }
        break;
    default:
        g->nccl_group_end();
        return HPC_ERR(HPC_ERR_ARG, "nccl: unknown collective");
    }
    e = g->nccl_group_end();
    if (e != HPC_NCCL_OK && e != HPC_NCCL_IN_PROGRESS) return coll_nccl_broken(cc, e, "enqueueing a collective");
    r->ext.stage = LAUNCHING;
    return 0;
}

/* NCCL's work is on the stream: what follows it, then the event; the
 * next call on the communicator may go in. */
static int finish_launch(hpc_request_t *r, void *s)
{
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    int p = r->cc->size, rank = r->cc->rank, root = r->root;
    size_t n = r->count, bytes = n * hpc_dtype_size(r->dt);
    char *rb = r->recvbuf == HPC_IN_PLACE ? NULL : r->recvbuf;
    const char *sb = r->sendbuf == HPC_IN_PLACE ? NULL : r->sendbuf;
    r->ext.stage = LAUNCHED;
    r->cc->nccl_launched++;
    if (bytes) {
        if (r->coll == HPC_COLL_REDUCE_SCATTER && (!sb || sb == rb) && rank)
            HPC_CUDA(g->memcpy_async(rb, rb + (size_t)rank * bytes, bytes, s));
        if (r->coll == HPC_COLL_GATHER && rank == root && sb && sb != rb + (size_t)rank * bytes)
            HPC_CUDA(g->memcpy_async(rb + (size_t)rank * bytes, sb, bytes, s));
        if (r->coll == HPC_COLL_SCATTER && rank == root && rb && rb != sb + (size_t)rank * bytes)
            HPC_CUDA(g->memcpy_async(rb, sb + (size_t)rank * bytes, bytes, s));
        if (r->coll == HPC_COLL_ALLTOALL)
            HPC_CUDA(g->memcpy_async(rb + (size_t)rank * bytes, sb + (size_t)rank * bytes, bytes, s));
    }
    if (r->op == HPC_AVG && hpc_coll_reduces(r->coll) && (r->coll != HPC_COLL_REDUCE || rank == root))
        HPC_TRY(coll_dev_scale(s, r->dt, rb, n, p));
    HPC_TRY(coll_dev_event_record(s, &r->ext.event));
    r->enqueued = 1;
    return 0;
}

/* As far as r can go now: communicator, its turn, launch, the rest of
 * the stream. */
static int advance(hpc_request_t *r, coll_ext_t *x)
{
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    coll_comm_t *cc = r->cc;
    void *s = NULL;
    HPC_TRY(stream_of(r, &s));
    if (x->stage == WAIT_COMM) {
        void *nc = NULL;
        int ready = 0;
        HPC_TRY(coll_nccl_setup(cc, &nc, &ready));
        /* an earlier call's group still going in: NCCL takes no other */
        if (!ready || x->ticket != cc->nccl_launched) return 0;
        int e = prepare(r, s);
        if (e == 0) e = enqueue(r, nc, s);
        /* this rank could not enqueue what its peers may have: NCCL on
         * cc cannot be trusted any more */
        if (e < 0) return cc->nccl_state > 0 ? coll_nccl_broken(cc, -1, "enqueueing a collective") : e;
    }
    if (x->stage == LAUNCHING) {
        int st = HPC_NCCL_OK;
        g->nccl_async_error(cc->nccl, &st);
        if (st == HPC_NCCL_IN_PROGRESS) return 0;
        if (st != HPC_NCCL_OK) return coll_nccl_broken(cc, st, "enqueueing a collective");
        HPC_TRY(finish_launch(r, s));
    }
    return 0;
}

static int nccl_post(hpc_request_t *r, coll_ext_t *x)
{
    x->stage = WAIT_COMM;
    x->ticket = r->cc->nccl_posted++;
    return advance(r, x);
}

static int nccl_test(hpc_request_t *r, coll_ext_t *x, int *done)
{
    *done = 0;
    if (x->stage != LAUNCHED) return advance(r, x);
    /* a peer that died or failed: an error, not a wait without end */
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    int st = HPC_NCCL_OK;
    if (r->cc->nccl) g->nccl_async_error(r->cc->nccl, &st);
    if (st != HPC_NCCL_OK && st != HPC_NCCL_IN_PROGRESS) return coll_nccl_broken(r->cc, st, "asynchronous error");
    HPC_TRY(coll_dev_event_done(x->event, done));
    return 0;
}

int coll_nccl(coll_build_t *b)
{
    hpc_request_t *r = b->r;
    if (!hpc_have_nccl())
        return HPC_ERR(HPC_ERR_UNSUPPORTED, "%s: algorithm 'nccl': %s", hpc_coll_name(r->coll),
                       hpc_nccl_unavailable());
    r->ext.post = nccl_post;
    r->ext.test = nccl_test;
    HPC_TRY(coll_ext_step(&r->s));
    return coll_round(&r->s);
}
