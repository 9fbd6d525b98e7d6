/* nccl.c - NCCL for device buffers.
 *
 * One NCCL communicator per hpckit communicator, created on first use (the
 * unique id from rank 0 broadcast over MPI) and cached with it.  Before
 * that, ranks compare (host, GPU PCI bus id): NCCL with two ranks on one
 * GPU hangs or fails obscurely, so it is refused with a message naming the
 * ranks and the GPU.  Operations are enqueued on the communicator's stream;
 * completion is a CUDA event that hpc_test polls.  Gather, scatter and
 * alltoall are grouped send/recv (NCCL has no such collectives), barrier a
 * one-element allreduce; AVG is SUM followed by the averaging kernel.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"
#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef HPC_HAVE_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>

#define NCCL_TRY(call)                                                        \
    do {                                                                      \
        ncclResult_t ne_ = (call);                                            \
        if (ne_ != ncclSuccess)                                               \
            return HPC_ERR(HPC_ERR_NCCL, "%s: %s", #call, ncclGetErrorString(ne_)); \
    } while (0)

typedef struct { char host[64]; char bus[32]; } gpu_id_t;

static void nccl_comm_free(coll_comm_t *cc)
{
    if (cc->nccl_state == 1 && cc->nccl) ncclCommDestroy((ncclComm_t)cc->nccl);
    cc->nccl = NULL;
    cc->nccl_state = 0;
}

static int nccl_comm(coll_comm_t *cc, ncclComm_t *out)
{
    if (cc->nccl_state == 1) {
        *out = (ncclComm_t)cc->nccl;
        return 0;
    }
    if (cc->nccl_state < 0) return HPC_ERR(cc->nccl_state, "%s", cc->nccl_why);
    /* one GPU per rank, or refuse (every rank reaches the same verdict) */
    gpu_id_t me, *all = NULL;
    memset(&me, 0, sizeof me);
    gethostname(me.host, sizeof me.host - 1);
    int dev = -1;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetPCIBusId(me.bus, (int)sizeof me.bus, dev) != cudaSuccess) {
        cudaGetLastError();
        snprintf(me.bus, sizeof me.bus, "none");
    }
    all = malloc((size_t)cc->size * sizeof *all);
    if (!all) return HPC_ERR(HPC_ERR_NOMEM, "NCCL setup");
    int e = MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, cc->comm);
    if (e != MPI_SUCCESS) {
        free(all);
        return hpc_error_mpi(e, __FILE__, __LINE__, "MPI_Allgather (NCCL setup)");
    }
    for (int i = 0; i < cc->size && cc->nccl_state == 0; i++) {
        if (!strcmp(all[i].bus, "none")) {
            cc->nccl_state = HPC_ERR_NOGPU;
            snprintf(cc->nccl_why, sizeof cc->nccl_why, "nccl: rank %d on %s has no GPU", i, all[i].host);
        }
        for (int j = i + 1; j < cc->size && cc->nccl_state == 0; j++)
            if (!strcmp(all[i].host, all[j].host) && !strcmp(all[i].bus, all[j].bus)) {
                cc->nccl_state = HPC_ERR_UNSUPPORTED;
                snprintf(cc->nccl_why, sizeof cc->nccl_why,
                         "nccl: ranks %d and %d share GPU %s on %s; NCCL needs one GPU per rank "
                         "(fewer ranks per node, or HPC_GPU_BIND / CUDA_VISIBLE_DEVICES)",
                         i, j, all[i].bus, all[i].host);
            }
    }
    free(all);
    if (cc->nccl_state < 0) return HPC_ERR(cc->nccl_state, "%s", cc->nccl_why);
    ncclUniqueId id;
    if (cc->rank == 0) NCCL_TRY(ncclGetUniqueId(&id));
    HPC_MPI(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, cc->comm));
    ncclComm_t nc;
    NCCL_TRY(ncclCommInitRank(&nc, cc->size, id, cc->rank));
    cc->nccl = nc;
    cc->nccl_state = 1;
    cc->hook[COLL_HOOK_NCCL].fini = nccl_comm_free;
    *out = nc;
    return 0;
}

int coll_nccl_ready(coll_comm_t *cc)
{
    ncclComm_t nc;
    if (nccl_comm(cc, &nc) < 0) {
        hpc_error_clear();
        return 0;
    }
    return 1;
}

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

static int nccl_post(hpc_request_t *r, coll_ext_t *x)
{
    coll_comm_t *cc = r->cc;
    ncclComm_t nc = NULL;
    HPC_TRY(nccl_comm(cc, &nc));
    void *sv = NULL;
    HPC_TRY(coll_dev_stream(cc, &sv));
    cudaStream_t s = (cudaStream_t)sv;
    int p = cc->size, rank = cc->rank, root = r->root;
    size_t n = r->count, es = hpc_dtype_size(r->dt), bytes = n * es;
    ncclDataType_t t = nccl_type(r->dt);
    ncclRedOp_t op = nccl_op(r->op);
    char *rb = r->recvbuf == HPC_IN_PLACE ? NULL : r->recvbuf;
    const char *sb = r->sendbuf == HPC_IN_PLACE ? NULL : r->sendbuf;
    switch (r->coll) {
    case HPC_COLL_BARRIER: {
        void *tok = NULL;
        HPC_TRY(coll_tmp_kind(r, 64, 2, &tok));
        NCCL_TRY(ncclAllReduce(tok, tok, 1, ncclInt32, ncclSum, nc, s));
    } break;
    case HPC_COLL_BCAST:
        NCCL_TRY(ncclBroadcast(rb, rb, n, t, root, nc, s));
        break;
    case HPC_COLL_REDUCE:
        NCCL_TRY(ncclReduce(sb ? sb : rb, rb, n, t, op, root, nc, s));
        break;
    case HPC_COLL_ALLREDUCE:
        NCCL_TRY(ncclAllReduce(sb ? sb : rb, rb, n, t, op, nc, s));
        break;
    case HPC_COLL_ALLGATHER:
        NCCL_TRY(ncclAllGather(sb ? sb : rb + (size_t)rank * bytes, rb, n, t, nc, s));
        break;
    case HPC_COLL_REDUCE_SCATTER:
        if (sb && sb != rb) {
            NCCL_TRY(ncclReduceScatter(sb, rb, n, t, op, nc, s));
        } else {
            /* ours: input in recvbuf, result to block 0; NCCL's in place
             * leaves it in block rank */
            NCCL_TRY(ncclReduceScatter(rb, rb + (size_t)rank * bytes, n, t, op, nc, s));
            if (rank) HPC_CUDA(cudaMemcpyAsync(rb, rb + (size_t)rank * bytes, bytes,
                                               cudaMemcpyDeviceToDevice, s));
        }
        break;
    case HPC_COLL_GATHER:
        if (!sb) sb = rb + (size_t)rank * bytes;
        NCCL_TRY(ncclGroupStart());
        if (rank != root) {
            NCCL_TRY(ncclSend(sb, n, t, root, nc, s));
        } else {
            for (int i = 0; i < p; i++)
                if (i != root) NCCL_TRY(ncclRecv(rb + (size_t)i * bytes, n, t, i, nc, s));
        }
        NCCL_TRY(ncclGroupEnd());
        if (rank == root && sb != rb + (size_t)rank * bytes && bytes)
            HPC_CUDA(cudaMemcpyAsync(rb + (size_t)rank * bytes, sb, bytes, cudaMemcpyDeviceToDevice, s));
        break;
    case HPC_COLL_SCATTER:
        if (rank == root && !rb) rb = (char *)sb + (size_t)rank * bytes;
        NCCL_TRY(ncclGroupStart());
        if (rank != root) {
            NCCL_TRY(ncclRecv(rb, n, t, root, nc, s));
        } else {
            for (int i = 0; i < p; i++)
                if (i != root) NCCL_TRY(ncclSend(sb + (size_t)i * bytes, n, t, i, nc, s));
        }
        NCCL_TRY(ncclGroupEnd());
        if (rank == root && rb != sb + (size_t)rank * bytes && bytes)
            HPC_CUDA(cudaMemcpyAsync(rb, sb + (size_t)rank * bytes, bytes, cudaMemcpyDeviceToDevice, s));
        break;
    case HPC_COLL_ALLTOALL:
        if (!sb || sb == rb) {
            void *t2 = NULL;
            HPC_TRY(coll_tmp_kind(r, (size_t)p * bytes + 1, 2, &t2));
            if (bytes) HPC_CUDA(cudaMemcpyAsync(t2, rb, (size_t)p * bytes, cudaMemcpyDeviceToDevice, s));
            sb = t2;
        }
        NCCL_TRY(ncclGroupStart());
        for (int i = 0; i < p; i++) {
            if (i == rank) continue;
            NCCL_TRY(ncclSend(sb + (size_t)i * bytes, n, t, i, nc, s));
            NCCL_TRY(ncclRecv(rb + (size_t)i * bytes, n, t, i, nc, s));
        }
        NCCL_TRY(ncclGroupEnd());
        if (bytes)
            HPC_CUDA(cudaMemcpyAsync(rb + (size_t)rank * bytes, sb + (size_t)rank * bytes, bytes,
                                     cudaMemcpyDeviceToDevice, s));
        break;
    default:
        return HPC_ERR(HPC_ERR_ARG, "nccl: unknown collective");
    }
    if (r->op == HPC_AVG && hpc_coll_reduces(r->coll) && (r->coll != HPC_COLL_REDUCE || rank == root)) {
        int e = coll_cuda_scale(s, (int)r->dt, rb, n, p);
        if (e != cudaSuccess)
            return HPC_ERR(HPC_ERR_CUDA, "average kernel: %s", cudaGetErrorString((cudaError_t)e));
    }
    cudaEvent_t ev;
    HPC_CUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    x->event = ev;
    HPC_CUDA(cudaEventRecord(ev, s));
    return 0;
}

static int nccl_test(hpc_request_t *r, coll_ext_t *x, int *done)
{
    (void)r;
    *done = 0;
    cudaError_t e = cudaEventQuery((cudaEvent_t)x->event);
    if (e == cudaErrorNotReady) return 0;
    cudaEventDestroy((cudaEvent_t)x->event);
    x->event = NULL;
    if (e != cudaSuccess) return HPC_ERR(HPC_ERR_CUDA, "NCCL operation: %s", cudaGetErrorString(e));
    ncclResult_t ar;
    if (r->cc->nccl && ncclCommGetAsyncError((ncclComm_t)r->cc->nccl, &ar) == ncclSuccess && ar != ncclSuccess)
        return HPC_ERR(HPC_ERR_NCCL, "NCCL: %s", ncclGetErrorString(ar));
    *done = 1;
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

int coll_nccl_ready(coll_comm_t *cc)
{
    (void)cc;
    return 0;
}

int coll_nccl(coll_build_t *b)
{
    hpc_request_t *r = b->r;
    return HPC_ERR(HPC_ERR_UNSUPPORTED, "%s: algorithm 'nccl': this build has no NCCL",
                   hpc_coll_name(r->coll));
}
#endif
