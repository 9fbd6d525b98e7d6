/* native.c - "native": the MPI library's own collectives.
 *
 * Blocking calls use MPI's blocking collective (its own algorithm choice,
 * which is what users compare against), unless other hpckit requests are
 * in flight: then the nonblocking form is used and progressed together
 * with them, so no rank can sit inside MPI while a peer waits for it to
 * advance one of our schedules.  AVG is SUM followed by a division;
 * float16/bfloat16 use user-defined MPI reductions with float32 arithmetic.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

#include <string.h>

static MPI_Datatype t_half = MPI_DATATYPE_NULL, t_bf16 = MPI_DATATYPE_NULL;
static MPI_Op op16[4] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};

static void red16(hpc_op_t op, void *in, void *inout, int *len, MPI_Datatype *dt)
{
    hpc_dtype_t t = *dt == t_bf16 ? HPC_BFLOAT16 : HPC_FLOAT16;
    coll_reduce_host(t, op, inout, inout, in, (size_t)*len);
}
static void red16_sum(void *in, void *io, int *len, MPI_Datatype *dt) { red16(HPC_SUM, in, io, len, dt); }
static void red16_prod(void *in, void *io, int *len, MPI_Datatype *dt) { red16(HPC_PROD, in, io, len, dt); }
static void red16_min(void *in, void *io, int *len, MPI_Datatype *dt) { red16(HPC_MIN, in, io, len, dt); }
static void red16_max(void *in, void *io, int *len, MPI_Datatype *dt) { red16(HPC_MAX, in, io, len, dt); }

static void native_cleanup(void);

static int init16(void)
{
    if (t_half != MPI_DATATYPE_NULL) return 0;
    HPC_TRY(coll_at_mpi_finalize(native_cleanup));
    HPC_MPI(MPI_Type_contiguous(1, MPI_UINT16_T, &t_half));
    HPC_MPI(MPI_Type_commit(&t_half));
    HPC_MPI(MPI_Type_contiguous(1, MPI_UINT16_T, &t_bf16));
    HPC_MPI(MPI_Type_commit(&t_bf16));
    MPI_User_function *fn[4] = {red16_sum, red16_prod, red16_min, red16_max};
    for (int i = 0; i < 4; i++) HPC_MPI(MPI_Op_create(fn[i], 1, &op16[i]));
    return 0;
}

/* at MPI_Finalize (comm.c): MPI wants derived types and ops freed */
static void native_cleanup(void)
{
    if (t_half == MPI_DATATYPE_NULL) return;
    MPI_Type_free(&t_half);
    MPI_Type_free(&t_bf16);
    for (int i = 0; i < 4; i++) MPI_Op_free(&op16[i]);
}

MPI_Datatype coll_mpi_dtype(hpc_dtype_t dt)
{
    switch (dt) {
    case HPC_INT32: return MPI_INT32_T;
    case HPC_INT64: return MPI_INT64_T;
    case HPC_FLOAT32: return MPI_FLOAT;
    case HPC_FLOAT64: return MPI_DOUBLE;
    case HPC_FLOAT16: init16(); return t_half;
    case HPC_BFLOAT16: init16(); return t_bf16;
    default: return MPI_DATATYPE_NULL;
    }
}

int coll_mpi_op(hpc_dtype_t dt, hpc_op_t op, MPI_Op *out)
{
    int k = op == HPC_AVG ? 0 : (int)op;   /* AVG: SUM, divided afterwards */
    if (dt == HPC_FLOAT16 || dt == HPC_BFLOAT16) {
        HPC_TRY(init16());
        *out = op16[k];
        return 0;
    }
    static const MPI_Op ops[4] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
    *out = ops[k];
    return 0;
}

/* MPI's in-place conventions from ours (aliasing is in place too). */
static int native_post(hpc_request_t *r, coll_ext_t *x)
{
    coll_comm_t *cc = r->cc;
    MPI_Comm comm = cc->comm;
    int p = cc->size, rank = cc->rank, isroot = rank == r->root;
    int n = (int)r->count;
    size_t es = hpc_dtype_size(r->dt);
    MPI_Datatype t = r->coll == HPC_COLL_BARRIER ? MPI_BYTE : coll_mpi_dtype(r->dt);
    MPI_Op op = MPI_SUM;
    if (hpc_coll_reduces(r->coll)) HPC_TRY(coll_mpi_op(r->dt, r->op, &op));
    const void *sb = r->sendbuf;
    void *rb = r->recvbuf;
    char *rbc = rb == MPI_IN_PLACE ? NULL : rb;
    int blk = x->blocking;
    MPI_Request *q = &x->mreq;
    x->mreq = MPI_REQUEST_NULL;
#define CALL(B, NB) do { if (blk) HPC_MPI(B); else HPC_MPI(NB); } while (0)
    switch (r->coll) {
    case HPC_COLL_BARRIER:
        CALL(MPI_Barrier(comm), MPI_Ibarrier(comm, q));
        break;
    case HPC_COLL_BCAST:
        CALL(MPI_Bcast(rb, n, t, r->root, comm), MPI_Ibcast(rb, n, t, r->root, comm, q));
        break;
    case HPC_COLL_REDUCE:
        if (sb == rb) sb = MPI_IN_PLACE;
        if (sb == MPI_IN_PLACE && !isroot) sb = rb;   /* MPI: only the root says so */
        CALL(MPI_Reduce(sb, rb, n, t, op, r->root, comm), MPI_Ireduce(sb, rb, n, t, op, r->root, comm, q));
        break;
    case HPC_COLL_ALLREDUCE:
        if (sb == rb) sb = MPI_IN_PLACE;
        CALL(MPI_Allreduce(sb, rb, n, t, op, comm), MPI_Iallreduce(sb, rb, n, t, op, comm, q));
        break;
    case HPC_COLL_GATHER:
        if (isroot && rbc && sb == rbc + (size_t)rank * (size_t)n * es) sb = MPI_IN_PLACE;
        CALL(MPI_Gather(sb, n, t, rb, n, t, r->root, comm),
             MPI_Igather(sb, n, t, rb, n, t, r->root, comm, q));
        break;
    case HPC_COLL_ALLGATHER:
        if (rbc && sb == rbc + (size_t)rank * (size_t)n * es) sb = MPI_IN_PLACE;
        CALL(MPI_Allgather(sb, n, t, rb, n, t, comm), MPI_Iallgather(sb, n, t, rb, n, t, comm, q));
        break;
    case HPC_COLL_SCATTER:
        if (isroot && sb && rb == (const char *)sb + (size_t)rank * (size_t)n * es) rb = MPI_IN_PLACE;
        CALL(MPI_Scatter(sb, n, t, rb, n, t, r->root, comm),
             MPI_Iscatter(sb, n, t, rb, n, t, r->root, comm, q));
        break;
    case HPC_COLL_REDUCE_SCATTER:
        if (sb == rb) sb = MPI_IN_PLACE;
        CALL(MPI_Reduce_scatter_block(sb, rb, n, t, op, comm),
             MPI_Ireduce_scatter_block(sb, rb, n, t, op, comm, q));
        break;
    case HPC_COLL_ALLTOALL:
        if (sb == rb) sb = MPI_IN_PLACE;
        CALL(MPI_Alltoall(sb, n, t, rb, n, t, comm), MPI_Ialltoall(sb, n, t, rb, n, t, comm, q));
        break;
    default:
        return HPC_ERR(HPC_ERR_ARG, "native: unknown collective");
    }
#undef CALL
    (void)p;
    return 0;
}

static int native_test(hpc_request_t *r, coll_ext_t *x, int *done)
{
    (void)r;
    int flag = 1;
    if (x->mreq != MPI_REQUEST_NULL) HPC_MPI(MPI_Test(&x->mreq, &flag, MPI_STATUS_IGNORE));
    *done = flag;
    return 0;
}

int coll_native(coll_build_t *b)
{
    hpc_request_t *r = b->r;
    r->ext.post = native_post;
    r->ext.test = native_test;
    r->ext.mreq = MPI_REQUEST_NULL;
    HPC_TRY(coll_ext_step(&r->s));
    HPC_TRY(coll_round(&r->s));
    int isroot = r->cc->rank == r->root;
    if (r->op == HPC_AVG && hpc_coll_reduces(r->coll) && (r->coll != HPC_COLL_REDUCE || isroot)) {
        HPC_TRY(coll_scale(&r->s, r->recvbuf, r->count, r->cc->size, r->dev));
        HPC_TRY(coll_round(&r->s));
    }
    return 0;
}
