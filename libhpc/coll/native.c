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
#include "colls.h"

#include <limits.h>
#include <stdlib.h>
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

/* Elements one MPI call may carry (an int); the tests lower it. */
size_t coll_max_count = INT_MAX;
long coll_native_splits;        /* calls split or given a big type (tests) */

/* A request slot for one more nonblocking call of x. */
static int more_req(coll_ext_t *x, MPI_Request **q)
{
    if (x->nmreq == x->mcap) {
        int cap = x->mcap ? 2 * x->mcap : 4;
        MPI_Request *n = realloc(x->mreqs, (size_t)cap * sizeof *n);
        if (!n) return HPC_ERR(HPC_ERR_NOMEM, "%d MPI requests", cap);
        x->mreqs = n;
        x->mcap = cap;
    }
    *q = &x->mreqs[x->nmreq++];
    **q = MPI_REQUEST_NULL;
    return 0;
}

/* Each shape's MPI call (colls.h): the same shape as hpckit's, one count
 * and type per side for data movement */
#define MPIARGS_NONE(R) comm R
#define MPIARGS_BUF_ROOT(R) rb, n, t, root, comm R
#define MPIARGS_RED_ROOT(R) sb, rb, n, t, op, root, comm R
#define MPIARGS_RED(R) sb, rb, n, t, op, comm R
#define MPIARGS_MOVE_ROOT(R) sb, n, t, rb, n, t, root, comm R
#define MPIARGS_MOVE(R) sb, n, t, rb, n, t, comm R
#define WITH_REQ , q

/* One MPI collective coll of n (an int) elements of t, blocking or not. */
static int call(hpc_request_t *r, coll_ext_t *x, hpc_coll_t coll, const void *sb, void *rb, int n,
                MPI_Datatype t, MPI_Op op, int root)
{
    MPI_Comm comm = r->cc->comm;
    MPI_Request *q = NULL;
    int blk = x->blocking;
    if (!blk) HPC_TRY(more_req(x, &q));
    switch (coll) {
#define CASE(name, E, SIG, SEND, RECV, ALIAS, BUS, MPI, IMPI, ...)                                       \
    case HPC_COLL_##E:                                                                                 \
        if (blk) HPC_MPI(MPI_##MPI(MPIARGS_##SIG()));                                                  \
        else HPC_MPI(MPI_##IMPI(MPIARGS_##SIG(WITH_REQ)));                                             \
        break;
        COLL_TABLE(CASE)
#undef CASE
    default:
        return HPC_ERR(HPC_ERR_ARG, "native: unknown collective");
    }
    return 0;
}

/* One datatype of count elements of base, for counts beyond an int: a
 * contiguous run of coll_max_count-element chunks, plus the rest. */
static int big_type(MPI_Datatype base, size_t count, size_t es, MPI_Datatype *out)
{
    size_t k = coll_max_count, q = count / k, rest = count % k;
    if (q > (size_t)INT_MAX) return HPC_ERR(HPC_ERR_ARG, "native: count %zu too large", count);
    MPI_Datatype chunk, body, tail, whole;
    HPC_MPI(MPI_Type_contiguous((int)k, base, &chunk));
    HPC_MPI(MPI_Type_contiguous((int)q, chunk, &body));
    MPI_Type_free(&chunk);
    if (rest) {
        HPC_MPI(MPI_Type_contiguous((int)rest, base, &tail));
        int lens[2] = {1, 1};
        MPI_Aint disp[2] = {0, (MPI_Aint)(q * k * es)};
        MPI_Datatype parts[2] = {body, tail};
        HPC_MPI(MPI_Type_create_struct(2, lens, disp, parts, &whole));
        MPI_Type_free(&body);
        MPI_Type_free(&tail);
    } else {
        whole = body;
    }
    /* exactly count elements long, whatever padding the struct got */
    HPC_MPI(MPI_Type_create_resized(whole, 0, (MPI_Aint)(count * es), out));
    MPI_Type_free(&whole);
    HPC_MPI(MPI_Type_commit(out));
    return 0;
}

static const void *at(const void *p, size_t bytes)
{
    return p == NULL || p == MPI_IN_PLACE ? p : (const char *)p + bytes;
}

/* reduce, allreduce: one call per chunk of at most coll_max_count
 * elements (MPI's reduction ops take no derived datatypes) */
static int split_reduce(hpc_request_t *r, coll_ext_t *x, const void *sb, void *rb, size_t es,
                        MPI_Datatype t, MPI_Op op)
{
    for (size_t o = 0; o < r->count; o += coll_max_count) {
        size_t c = r->count - o < coll_max_count ? r->count - o : coll_max_count;
        HPC_TRY(call(r, x, r->coll, at(sb, o * es), (void *)at(rb, o * es), (int)c, t, op, r->root));
    }
    return 0;
}

/* reduce_scatter: block i reduced to rank i, in chunks; in place, each
 * rank's result lands in its own block (moved to block 0 afterwards by
 * a step of the schedule, coll_native) */
static int split_rs(hpc_request_t *r, coll_ext_t *x, const void *sb, void *rb, size_t es,
                    MPI_Datatype t, MPI_Op op)
{
    int inplace = sb == MPI_IN_PLACE, rank = r->cc->rank;
    size_t n = r->count;
    for (int i = 0; i < r->cc->size; i++) {
        const char *in = inplace ? (const char *)rb + (size_t)i * n * es : (const char *)sb + (size_t)i * n * es;
        char *out = i != rank ? NULL : inplace ? (char *)rb + (size_t)i * n * es : rb;
        for (size_t o = 0; o < n; o += coll_max_count) {
            size_t c = n - o < coll_max_count ? n - o : coll_max_count;
            const void *s = i == rank && inplace ? MPI_IN_PLACE : in + o * es;
            HPC_TRY(call(r, x, HPC_COLL_REDUCE, s, out ? out + o * es : NULL, (int)c, t, op, i));
        }
    }
    return 0;
}

/* MPI's in-place conventions from ours (aliasing is in place too). */
static int native_post(hpc_request_t *r, coll_ext_t *x)
{
    coll_comm_t *cc = r->cc;
    int rank = cc->rank, isroot = rank == r->root;
    size_t n = r->count, es = hpc_dtype_size(r->dt);
    MPI_Datatype t = r->coll == HPC_COLL_BARRIER ? MPI_BYTE : coll_mpi_dtype(r->dt);
    MPI_Op op = MPI_SUM;
    if (hpc_coll_reduces(r->coll)) HPC_TRY(coll_mpi_op(r->dt, r->op, &op));
    const void *sb = r->sendbuf;
    void *rb = r->recvbuf;
    char *rbc = rb == MPI_IN_PLACE ? NULL : rb;
    x->nmreq = 0;
    int side = coll_aliased(r->coll, sb, rbc, isroot, (size_t)rank * n * es);
    if (side == 1) sb = MPI_IN_PLACE;
    if (side == 2) rb = MPI_IN_PLACE;
    /* MPI: only the root of a reduce says in place */
    if (r->coll == HPC_COLL_REDUCE && sb == MPI_IN_PLACE && !isroot) sb = rb;
    if (n <= coll_max_count) return call(r, x, r->coll, sb, rb, (int)n, t, op, r->root);
    /* more than an int of elements */
    coll_native_splits++;
    if (r->coll == HPC_COLL_REDUCE || r->coll == HPC_COLL_ALLREDUCE)
        return split_reduce(r, x, sb, rb, es, t, op);
    if (r->coll == HPC_COLL_REDUCE_SCATTER) return split_rs(r, x, sb, rb, es, t, op);
    MPI_Datatype big;
    HPC_TRY(big_type(t, n, es, &big));
    int e = call(r, x, r->coll, sb, rb, 1, big, op, r->root);
    MPI_Type_free(&big);      /* calls in flight keep what they need */
    return e;
}

static int native_test(hpc_request_t *r, coll_ext_t *x, int *done)
{
    (void)r;
    int flag = 1;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
    if (x->nmreq) HPC_MPI(MPI_Testall(x->nmreq, x->mreqs, &flag, MPI_STATUSES_IGNORE));
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    *done = flag;
    return 0;
}

int coll_native(coll_build_t *b)
{
    hpc_request_t *r = b->r;
    r->ext.post = native_post;
    r->ext.test = native_test;
    HPC_TRY(coll_ext_step(&r->s));
    HPC_TRY(coll_round(&r->s));
    int rank = r->cc->rank, isroot = rank == r->root;
    const void *sb = r->sendbuf;
    if (r->coll == HPC_COLL_REDUCE_SCATTER && r->count > coll_max_count && rank &&
        (sb == HPC_IN_PLACE || sb == r->recvbuf)) {
        /* split in place (split_rs): the result is in this rank's block */
        size_t bytes = r->count * hpc_dtype_size(r->dt);
        char *rb = r->recvbuf;
        HPC_TRY(coll_copy_k(&r->s, rb, rb + (size_t)rank * bytes, bytes, r->dev));
        HPC_TRY(coll_round(&r->s));
    }
    if (r->op == HPC_AVG && hpc_coll_reduces(r->coll) && (r->coll != HPC_COLL_REDUCE || isroot)) {
        HPC_TRY(coll_scale(&r->s, r->recvbuf, r->count, r->cc->size, r->dev));
        HPC_TRY(coll_round(&r->s));
    }
    return 0;
}
