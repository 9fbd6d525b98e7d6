/* build.c - a call becomes a schedule: the backend's builder (native.c,
 * nccl.c) or an own algorithm's (alg/), with in place mapped onto the
 * builders' out-of-place view, device buffers staged through pinned host
 * memory when MPI is not CUDA-aware, the first round made to wait for the
 * device input (on the caller's stream, or the legacy default stream), and
 * AVG's division added.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

static int run_builder(hpc_request_t *r, const coll_row_t *row, const hpc_coll_args_t *a,
                       const char *sb, char *rb, int inplace);

/* The builder's view of r, buffers aside. */
static coll_build_t build_args(hpc_request_t *r, const hpc_coll_args_t *a)
{
    return (coll_build_t){.r = r, .s = &r->s, .rank = r->cc->rank, .p = r->cc->size,
                          .root = a->root, .count = a->count, .es = hpc_dtype_size(a->dtype),
                          .dt = a->dtype, .op = a->op == HPC_AVG ? HPC_SUM : a->op,
                          .dev = r->dev, .seg = coll_segment(),
                          .phase = coll_select_phase, .row_of = coll_row};
}

/* Build the schedule of an own algorithm (or of native on staged device
 * memory) into r, staging device buffers through pinned host memory when
 * MPI is not CUDA-aware. */
static int build_own(hpc_request_t *r, const coll_row_t *row, const hpc_coll_args_t *a, int stage)
{
    coll_comm_t *cc = r->cc;
    int p = cc->size, rank = cc->rank;
    size_t es = hpc_dtype_size(a->dtype), n = a->count;
    size_t sc, rc;
    hpc_coll_buf_counts(a, rank, p, &sc, &rc);
    int isroot = rank == a->root;
    const char *sb = a->sendbuf == HPC_IN_PLACE ? NULL : a->sendbuf;
    char *rb = a->recvbuf == HPC_IN_PLACE ? NULL : a->recvbuf;
    int inplace = (a->sendbuf == HPC_IN_PLACE) || (a->recvbuf == HPC_IN_PLACE);
    /* the same pointer for both is in place too */
    if (!inplace && sb && rb) inplace = coll_aliased(a->coll, sb, rb, isroot, (size_t)rank * n * es) != 0;
    /* Staging: host shadows of the user's device buffers. */
    char *urb = rb;
    if (stage) {
        size_t rbytes = rc * es;
        if (inplace && a->coll == HPC_COLL_REDUCE) rbytes = n * es;
        if (inplace && a->coll == HPC_COLL_REDUCE_SCATTER) rbytes = (size_t)p * n * es;
        if (inplace && a->coll == HPC_COLL_SCATTER) rbytes = 0;
        void *hs = NULL, *hr = NULL;
        if (rbytes) {
            HPC_TRY(coll_tmp_kind(r, rbytes, 1, &hr));
            if (inplace && a->coll != HPC_COLL_GATHER && a->coll != HPC_COLL_SCATTER)
                HPC_TRY(coll_copy_k(&r->s, hr, urb, rbytes, 1));
            if (inplace && a->coll == HPC_COLL_GATHER)
                HPC_TRY(coll_copy_k(&r->s, (char *)hr + (size_t)rank * n * es,
                                    urb + (size_t)rank * n * es, n * es, 1));
            if (a->coll == HPC_COLL_BCAST && isroot)
                HPC_TRY(coll_copy_k(&r->s, hr, urb, rbytes, 1));
        }
        if (!inplace && sc && sb) {
            HPC_TRY(coll_tmp_kind(r, sc * es, 1, &hs));
            HPC_TRY(coll_copy_k(&r->s, hs, sb, sc * es, 1));
        } else if (inplace && a->coll == HPC_COLL_SCATTER && sb) {
            HPC_TRY(coll_tmp_kind(r, sc * es, 1, &hs));
            HPC_TRY(coll_copy_k(&r->s, hs, sb, sc * es, 1));
        }
        HPC_TRY(coll_round(&r->s));
        sb = hs;
        rb = hr;
        /* from here on everything runs on host memory */
        r->dev = 0;
    }

    if (row->backend == COLL_BE_MPI) {
        /* staged native: MPI's call on the host shadows, MPI's in place */
        r->sendbuf = inplace && !(a->coll == HPC_COLL_SCATTER) ? HPC_IN_PLACE : sb;
        r->recvbuf = inplace && a->coll == HPC_COLL_SCATTER && isroot ? HPC_IN_PLACE : rb;
        if (a->coll == HPC_COLL_GATHER && !isroot) r->sendbuf = sb;
        coll_build_t b = build_args(r, a);
        HPC_TRY(row->build(&b));
    } else {
        HPC_TRY(run_builder(r, row, a, sb, rb, inplace));
    }
    if (stage && urb && rb) {
        int back = 1;
        if (a->coll == HPC_COLL_REDUCE && !isroot) back = 0;
        if (a->coll == HPC_COLL_GATHER && !isroot) back = 0;
        if (back) HPC_TRY(coll_copy_k(&r->s, urb, rb, rc * es, 1));
        HPC_TRY(coll_round(&r->s));
    }
    return 0;
}

/* Map in place onto the builders' out-of-place view, run the algorithm's
 * builder (a plain copy on one rank) and add the AVG division. */
static int run_builder(hpc_request_t *r, const coll_row_t *row, const hpc_coll_args_t *a,
                       const char *sb, char *rb, int inplace)
{
    int p = r->cc->size, rank = r->cc->rank, isroot = rank == a->root;
    size_t es = hpc_dtype_size(a->dtype), n = a->count;
    coll_build_t b = build_args(r, a);
    /* The builders see out-of-place arguments; in place is mapped here. */
    b.rbuf = rb;
    b.sbuf = sb;
    if (inplace) {
        switch (a->coll) {
        case HPC_COLL_ALLREDUCE: case HPC_COLL_REDUCE: b.sbuf = rb; break;
        case HPC_COLL_ALLGATHER: b.sbuf = rb + (size_t)rank * n * es; break;
        case HPC_COLL_GATHER: b.sbuf = rb + (size_t)rank * n * es; break;
        case HPC_COLL_SCATTER: b.rbuf = (char *)sb + (size_t)rank * n * es; break;
        case HPC_COLL_REDUCE_SCATTER: case HPC_COLL_ALLTOALL: {
            /* inputs are overwritten by outputs of other blocks: copy them */
            void *t = NULL;
            size_t bytes = (size_t)p * n * es;
            HPC_TRY(coll_tmp(r, bytes, &t));
            HPC_TRY(coll_copy_k(&r->s, t, rb, bytes, b.dev));
            HPC_TRY(coll_round(&r->s));
            b.sbuf = t;
        } break;
        default: break;
        }
    }
    if (p == 1) {
        /* one rank: a copy, whatever the algorithm */
        if (a->coll != HPC_COLL_BCAST && a->coll != HPC_COLL_BARRIER)
            HPC_TRY(coll_copy(&b, b.rbuf, b.sbuf, n * es));
        HPC_TRY(coll_round(&r->s));
    } else {
        /* a row that cannot run here (shm without a segment) hands b on */
        const coll_row_t *use;
        HPC_TRY(coll_row_for(row, &b, &use));
        HPC_TRY(use->build(&b));
        HPC_TRY(coll_round(&r->s));
    }
    /* AVG: sum, then divide where the result lives */
    if (a->op == HPC_AVG && hpc_coll_reduces(a->coll) && (a->coll != HPC_COLL_REDUCE || isroot)) {
        HPC_TRY(coll_scale(&r->s, b.rbuf, n, p, b.dev));
        HPC_TRY(coll_round(&r->s));
    }
    return 0;
}

int coll_build(hpc_request_t *r, const hpc_coll_args_t *a)
{
    const coll_row_t *row = coll_row(a->coll, r->alg);
    if (!row) return coll_alg_missing(a->coll, r->alg, NULL);
    /* NCCL takes device memory as it is; MPI and our schedules take it
     * where MPI is CUDA-aware, else through pinned host shadows */
    int stage = r->dev && row->backend != COLL_BE_NCCL && !hpc_coll_cuda_aware();
    /* native blocking = MPI's blocking call, unless requests of ours are in
     * flight: then MPI's nonblocking call, progressed with them; and where
     * auto could have sent other ranks to NCCL, so that a mismatch can be
     * seen (stall_check.c); and with the watchdog on (HPC_TIMEOUT), whose
     * clock only runs while we poll: a blocking MPI call could wait for a
     * stopped rank forever */
    r->ext.blocking = r->blocking && !coll_requests_in_flight() && !(r->automatic && hpc_have_nccl()) &&
                      hpc_coll_timeout() <= 0;
    /* stream-ordered: the first round waits for the input, which the
     * caller's stream is still making (NCCL waits on that stream itself).
     * Without a stream the input is what the legacy default stream holds
     * at the call: NCCL's stream and the staging copies wait for it on
     * the GPU; MPI, handed device pointers where it is CUDA-aware, reads
     * them itself, so the first round waits for it on the host too */
    void *gate_on = r->streamed ? r->ustream : NULL;
    int host_gate = r->streamed ? row->backend != COLL_BE_NCCL : r->dev && !stage && row->backend != COLL_BE_NCCL;
    if (r->dev && !r->streamed && !host_gate) HPC_TRY(coll_dev_legacy_gate(r->cc));
    if (host_gate) {
        HPC_TRY(coll_dev_event_record(gate_on, &r->ready_ev));
        HPC_TRY(coll_gate_step(&r->s));
        HPC_TRY(coll_round(&r->s));
    }
    if (row->backend == COLL_BE_P2P || stage) return build_own(r, row, a, stage);
    coll_build_t b = build_args(r, a);
    return row->build(&b);
}
