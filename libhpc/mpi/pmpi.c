/* pmpi.c - libhpc-mpi.so: hpckit's collectives under unmodified MPI
 * programs, through the MPI profiling interface.
 *
 *   LD_PRELOAD=libhpc-mpi.so mpiexec -n 8 ./their_program
 *
 * It defines MPI_Allreduce, MPI_Bcast, MPI_Reduce, MPI_Allgather,
 * MPI_Gather, MPI_Scatter, MPI_Reduce_scatter_block, MPI_Alltoall,
 * MPI_Barrier and their MPI_I* forms.  A call is served by libhpc (auto:
 * cost model, HPC_COLL_<OP>, tuning file) when it can be served exactly:
 * an intracommunicator, predefined (named) datatypes, and for reductions
 * a type and op libhpc has (int, int32_t, long, long long, int64_t, float,
 * double; sum, prod, min, max); data movement takes any named type whose
 * block is a whole number of 2-, 4- or 8-byte elements.  Everything else
 * goes to PMPI_*, unchanged.  Every rank decides from arguments MPI
 * requires to agree (types, counts, ops, root), never from addresses, so
 * all ranks take the same path; buffers libhpc would find misaligned go
 * through aligned copies instead.
 *
 * Nonblocking calls return a generalized request (MPI_Grequest_start)
 * that completes when libhpc's request does; MPI_Wait/Test and their
 * all/any/some forms are wrapped so that they advance libhpc's requests
 * (MPI has no hook for that).  libhpc's own MPI calls (it uses MPI's
 * collectives inside, e.g. "native" and communicator setup) pass straight
 * through: a depth counter marks that we are inside libhpc.
 *
 * HPC_MPI_VERBOSE=1: at MPI_Finalize, rank 0 prints how many calls of each
 * collective hpckit served and how many fell through (all ranks summed).
 */
#include "config.h"
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hpc_coll.h"

static int depth;                 /* > 0: inside libhpc, pass everything on */
static long served[HPC_COLL_COUNT], fell[HPC_COLL_COUNT];

/* ---- types and ops -------------------------------------------------- */
static int named(MPI_Datatype t)
{
    int ni, na, nd, comb;
    if (t == MPI_DATATYPE_NULL) return 0;
    if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS) return 0;
    return comb == MPI_COMBINER_NAMED;
}

/* libhpc's dtype for reducing MPI type t, or -1 */
static int red_dtype(MPI_Datatype t)
{
    int sz = 0;
    if (t == MPI_FLOAT) return HPC_FLOAT32;
    if (t == MPI_DOUBLE) return HPC_FLOAT64;
    if (t == MPI_INT32_T) return HPC_INT32;
    if (t == MPI_INT64_T) return HPC_INT64;
    if (t == MPI_INT || t == MPI_LONG || t == MPI_LONG_LONG) {
        PMPI_Type_size(t, &sz);
        return sz == 4 ? HPC_INT32 : sz == 8 ? HPC_INT64 : -1;
    }
    return -1;
}

static int red_op(MPI_Op op)
{
    if (op == MPI_SUM) return HPC_SUM;
    if (op == MPI_PROD) return HPC_PROD;
    if (op == MPI_MIN) return HPC_MIN;
    if (op == MPI_MAX) return HPC_MAX;
    return -1;
}

/* Data movement: count of type t as libhpc elements (*dt, *n); 0 if not. */
static int move_dtype(MPI_Datatype t, int count, hpc_dtype_t *dt, size_t *n)
{
    int sz = 0;
    if (count < 0 || !named(t) || PMPI_Type_size(t, &sz) != MPI_SUCCESS || sz <= 0) return 0;
    size_t bytes = (size_t)sz * (size_t)count;
    static const struct { size_t es; hpc_dtype_t dt; } k[] = {
        {8, HPC_INT64}, {4, HPC_INT32}, {2, HPC_FLOAT16}};
    for (int i = 0; i < 3; i++)
        if (bytes % k[i].es == 0 && (size_t)sz % k[i].es == 0) {
            *dt = k[i].dt;
            *n = bytes / k[i].es;
            return 1;
        }
    /* (a block of 1-byte types: only a whole number of 8/4/2 bytes) */
    for (int i = 0; sz == 1 && i < 3; i++)
        if (bytes % k[i].es == 0) {
            *dt = k[i].dt;
            *n = bytes / k[i].es;
            return 1;
        }
    return 0;
}

static int intra(MPI_Comm comm)
{
    int inter = 1;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return 0;
    return !inter;
}

/* ---- one served call ------------------------------------------------- */
typedef struct pcall {
    struct pcall *next;
    hpc_coll_args_t a;
    hpc_request_t *req;
    MPI_Request greq;
    void *tsend, *trecv;    /* aligned copies of misaligned buffers */
    void *urecv;            /* the caller's recvbuf, copied out to at the end */
    size_t outbytes;
} pcall_t;

static pcall_t *pending;      /* nonblocking calls in flight */

static int misaligned(const void *p, size_t es)
{
    return p && p != MPI_IN_PLACE && (uintptr_t)p % es;
}

/* Bytes of recvbuf that hold input (in place, bcast) or output here. */
static size_t recv_bytes(const hpc_coll_args_t *a, int rank, int p, size_t es)
{
    size_t sc, rc;
    hpc_coll_buf_counts(a, rank, p, &sc, &rc);
    if (a->sendbuf == MPI_IN_PLACE && (a->coll == HPC_COLL_REDUCE || a->coll == HPC_COLL_REDUCE_SCATTER))
        rc = a->coll == HPC_COLL_REDUCE ? a->count : a->count * (size_t)p;
    return rc * es;
}

/* Give libhpc aligned buffers: copies of the misaligned ones. */
static int align_bufs(pcall_t *c, MPI_Comm comm)
{
    int rank, p;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &p);
    size_t es = hpc_dtype_size(c->a.dtype), sc, rc;
    hpc_coll_buf_counts(&c->a, rank, p, &sc, &rc);
    if (misaligned(c->a.sendbuf, es) && sc) {
        if (!(c->tsend = malloc(sc * es))) return -1;
        memcpy(c->tsend, c->a.sendbuf, sc * es);
        c->a.sendbuf = c->tsend;
    }
    size_t rb = recv_bytes(&c->a, rank, p, es);
    if (misaligned(c->a.recvbuf, es) && rb) {
        if (!(c->trecv = malloc(rb))) return -1;
        memcpy(c->trecv, c->a.recvbuf, rb);      /* input, where it lives there */
        c->urecv = c->a.recvbuf;
        c->outbytes = rb;
        c->a.recvbuf = c->trecv;
    }
    return 0;
}

static void pcall_end(pcall_t *c)
{
    if (c->urecv) memcpy(c->urecv, c->trecv, c->outbytes);
    free(c->tsend);
    free(c->trecv);
    free(c);
}

static int fail(MPI_Comm comm, const char *what)
{
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "hpc-mpi: rank %d: %s: %s\n", rank, what, hpc_last_error());
    PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);   /* fatal unless the program said otherwise */
    return MPI_ERR_OTHER;
}

/* ---- generalized requests -------------------------------------------- */
static int gq_query(void *extra, MPI_Status *st)
{
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int gq_free(void *extra) { (void)extra; return MPI_SUCCESS; }
static int gq_cancel(void *extra, int complete) { (void)extra; (void)complete; return MPI_SUCCESS; }

/* Advance every call in flight; complete the MPI requests of those done. */
static void progress(void)
{
    depth++;
    for (pcall_t **q = &pending; *q;) {
        pcall_t *c = *q;
        int done = 0;
        if (hpc_test(&c->req, &done) < 0) {
            int rank = -1;
            PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
            fprintf(stderr, "hpc-mpi: rank %d: %s: %s\n", rank, hpc_coll_name(c->a.coll), hpc_last_error());
            PMPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (!done) {
            q = &c->next;
            continue;
        }
        *q = c->next;
        MPI_Request g = c->greq;
        pcall_end(c);
        MPI_Grequest_complete(g);
    }
    depth--;
}

/* Run a on comm through libhpc: blocking (req NULL) or as *req. */
static int serve(const hpc_coll_args_t *a, MPI_Comm comm, MPI_Request *req)
{
    pcall_t *c = calloc(1, sizeof *c);
    if (!c) return fail(comm, "out of memory");
    c->a = *a;
    served[a->coll]++;
    depth++;
    int e = align_bufs(c, comm);
    if (e == 0) e = req ? hpc_icoll(&c->a, comm, &c->req) : hpc_coll(&c->a, comm);
    depth--;
    if (e < 0) {
        pcall_end(c);
        return fail(comm, hpc_coll_name(a->coll));
    }
    if (!req) {
        pcall_end(c);
        return MPI_SUCCESS;
    }
    PMPI_Grequest_start(gq_query, gq_free, gq_cancel, NULL, &c->greq);
    *req = c->greq;
    c->next = pending;
    pending = c;
    progress();            /* it may be done already (one rank, empty) */
    return MPI_SUCCESS;
}

static hpc_coll_args_t args(hpc_coll_t c, const void *s, void *r, size_t n, hpc_dtype_t t, int op, int root)
{
    return (hpc_coll_args_t){.coll = c, .sendbuf = s, .recvbuf = r, .count = n, .dtype = t,
                             .op = (hpc_op_t)op, .root = root, .alg = HPC_ALG_AUTO};
}

/* ---- the collectives -------------------------------------------------
 * Each one: decide, then serve or pass through; R is NULL for the
 * blocking form. */
static int do_reduction(hpc_coll_t c, const void *s, void *r, int count, MPI_Datatype t, MPI_Op op,
                        int root, MPI_Comm comm, MPI_Request *R)
{
    int dt = red_dtype(t), o = red_op(op);
    if (depth || count < 0 || dt < 0 || o < 0 || !intra(comm)) return -1;
    hpc_coll_args_t a = args(c, s, r, (size_t)count, (hpc_dtype_t)dt, o, root);
    return serve(&a, comm, R);
}

#define PASS(coll, call)                                                       \
    do {                                                                       \
        if (!depth) fell[coll]++;                                              \
        return call;                                                           \
    } while (0)

static int allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm, MPI_Request *R)
{
    int e = do_reduction(HPC_COLL_ALLREDUCE, s, r, n, t, op, 0, comm, R);
    if (e >= 0) return e;
    if (R) PASS(HPC_COLL_ALLREDUCE, PMPI_Iallreduce(s, r, n, t, op, comm, R));
    PASS(HPC_COLL_ALLREDUCE, PMPI_Allreduce(s, r, n, t, op, comm));
}
int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    return allreduce(s, r, n, t, op, comm, NULL);
}
int MPI_Iallreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm, MPI_Request *R)
{
    return allreduce(s, r, n, t, op, comm, R);
}

static int reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm,
                  MPI_Request *R)
{
    int e = do_reduction(HPC_COLL_REDUCE, s, r, n, t, op, root, comm, R);
    if (e >= 0) return e;
    if (R) PASS(HPC_COLL_REDUCE, PMPI_Ireduce(s, r, n, t, op, root, comm, R));
    PASS(HPC_COLL_REDUCE, PMPI_Reduce(s, r, n, t, op, root, comm));
}
int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm)
{
    return reduce(s, r, n, t, op, root, comm, NULL);
}
int MPI_Ireduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request *R)
{
    return reduce(s, r, n, t, op, root, comm, R);
}

static int reduce_scatter_block(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                                MPI_Request *R)
{
    int e = do_reduction(HPC_COLL_REDUCE_SCATTER, s, r, n, t, op, 0, comm, R);
    if (e >= 0) return e;
    if (R) PASS(HPC_COLL_REDUCE_SCATTER, PMPI_Ireduce_scatter_block(s, r, n, t, op, comm, R));
    PASS(HPC_COLL_REDUCE_SCATTER, PMPI_Reduce_scatter_block(s, r, n, t, op, comm));
}
int MPI_Reduce_scatter_block(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter_block(s, r, n, t, op, comm, NULL);
}
int MPI_Ireduce_scatter_block(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                              MPI_Request *R)
{
    return reduce_scatter_block(s, r, n, t, op, comm, R);
}

static int bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request *R)
{
    hpc_dtype_t dt;
    size_t cnt;
    if (!depth && intra(comm) && move_dtype(t, n, &dt, &cnt)) {
        hpc_coll_args_t a = args(HPC_COLL_BCAST, NULL, buf, cnt, dt, HPC_SUM, root);
        return serve(&a, comm, R);
    }
    if (R) PASS(HPC_COLL_BCAST, PMPI_Ibcast(buf, n, t, root, comm, R));
    PASS(HPC_COLL_BCAST, PMPI_Bcast(buf, n, t, root, comm));
}
int MPI_Bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm)
{
    return bcast(buf, n, t, root, comm, NULL);
}
int MPI_Ibcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request *R)
{
    return bcast(buf, n, t, root, comm, R);
}

static int barrier(MPI_Comm comm, MPI_Request *R)
{
    if (!depth && intra(comm)) {
        hpc_coll_args_t a = args(HPC_COLL_BARRIER, NULL, NULL, 0, HPC_INT32, HPC_SUM, 0);
        return serve(&a, comm, R);
    }
    if (R) PASS(HPC_COLL_BARRIER, PMPI_Ibarrier(comm, R));
    PASS(HPC_COLL_BARRIER, PMPI_Barrier(comm));
}
int MPI_Barrier(MPI_Comm comm) { return barrier(comm, NULL); }
int MPI_Ibarrier(MPI_Comm comm, MPI_Request *R) { return barrier(comm, R); }

/* Send and receive blocks of one size (which side counts: significant).
 * use_send/use_recv: whether this rank's send / receive arguments are
 * significant (root-only ones are not elsewhere; MPI_IN_PLACE's are not). */
static int block(MPI_Datatype st, int sn, MPI_Datatype rt, int rn, int use_send, int use_recv,
                 hpc_dtype_t *dt, size_t *n)
{
    hpc_dtype_t d1 = HPC_INT32, d2 = HPC_INT32;
    size_t n1 = 0, n2 = 0;
    if (use_send && !move_dtype(st, sn, &d1, &n1)) return 0;
    if (use_recv && !move_dtype(rt, rn, &d2, &n2)) return 0;
    if (use_send && use_recv && (d1 != d2 || n1 != n2)) return 0;
    *dt = use_send ? d1 : d2;
    *n = use_send ? n1 : n2;
    return use_send || use_recv;
}

static int rank_of(MPI_Comm comm)
{
    int r = -1;
    PMPI_Comm_rank(comm, &r);
    return r;
}

static int allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                     MPI_Comm comm, MPI_Request *R)
{
    hpc_dtype_t dt;
    size_t n;
    if (!depth && intra(comm) && block(st, sn, rt, rn, s != MPI_IN_PLACE, 1, &dt, &n)) {
        hpc_coll_args_t a = args(HPC_COLL_ALLGATHER, s, r, n, dt, HPC_SUM, 0);
        return serve(&a, comm, R);
    }
    if (R) PASS(HPC_COLL_ALLGATHER, PMPI_Iallgather(s, sn, st, r, rn, rt, comm, R));
    PASS(HPC_COLL_ALLGATHER, PMPI_Allgather(s, sn, st, r, rn, rt, comm));
}
int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm comm)
{
    return allgather(s, sn, st, r, rn, rt, comm, NULL);
}
int MPI_Iallgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                   MPI_Comm comm, MPI_Request *R)
{
    return allgather(s, sn, st, r, rn, rt, comm, R);
}

static int alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                    MPI_Comm comm, MPI_Request *R)
{
    hpc_dtype_t dt;
    size_t n;
    if (!depth && intra(comm) && block(st, sn, rt, rn, s != MPI_IN_PLACE, 1, &dt, &n)) {
        hpc_coll_args_t a = args(HPC_COLL_ALLTOALL, s, r, n, dt, HPC_SUM, 0);
        return serve(&a, comm, R);
    }
    if (R) PASS(HPC_COLL_ALLTOALL, PMPI_Ialltoall(s, sn, st, r, rn, rt, comm, R));
    PASS(HPC_COLL_ALLTOALL, PMPI_Alltoall(s, sn, st, r, rn, rt, comm));
}
int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm comm)
{
    return alltoall(s, sn, st, r, rn, rt, comm, NULL);
}
int MPI_Ialltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                  MPI_Comm comm, MPI_Request *R)
{
    return alltoall(s, sn, st, r, rn, rt, comm, R);
}

static int gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
                  MPI_Comm comm, MPI_Request *R)
{
    hpc_dtype_t dt;
    size_t n;
    int isroot = intra(comm) && rank_of(comm) == root;
    if (!depth && intra(comm) && block(st, sn, rt, rn, s != MPI_IN_PLACE, isroot, &dt, &n)) {
        hpc_coll_args_t a = args(HPC_COLL_GATHER, s, r, n, dt, HPC_SUM, root);
        return serve(&a, comm, R);
    }
    if (R) PASS(HPC_COLL_GATHER, PMPI_Igather(s, sn, st, r, rn, rt, root, comm, R));
    PASS(HPC_COLL_GATHER, PMPI_Gather(s, sn, st, r, rn, rt, root, comm));
}
int MPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
               MPI_Comm comm)
{
    return gather(s, sn, st, r, rn, rt, root, comm, NULL);
}
int MPI_Igather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
                MPI_Comm comm, MPI_Request *R)
{
    return gather(s, sn, st, r, rn, rt, root, comm, R);
}

static int scatter(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
                   MPI_Comm comm, MPI_Request *R)
{
    hpc_dtype_t dt;
    size_t n;
    int isroot = intra(comm) && rank_of(comm) == root;
    if (!depth && intra(comm) && block(st, sn, rt, rn, isroot, r != MPI_IN_PLACE, &dt, &n)) {
        hpc_coll_args_t a = args(HPC_COLL_SCATTER, s, r, n, dt, HPC_SUM, root);
        return serve(&a, comm, R);
    }
    if (R) PASS(HPC_COLL_SCATTER, PMPI_Iscatter(s, sn, st, r, rn, rt, root, comm, R));
    PASS(HPC_COLL_SCATTER, PMPI_Scatter(s, sn, st, r, rn, rt, root, comm));
}
int MPI_Scatter(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
                MPI_Comm comm)
{
    return scatter(s, sn, st, r, rn, rt, root, comm, NULL);
}
int MPI_Iscatter(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
                 MPI_Comm comm, MPI_Request *R)
{
    return scatter(s, sn, st, r, rn, rt, root, comm, R);
}

/* ---- completion: advance libhpc's calls, then ask MPI ---------------- */
int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
    if (!pending || depth) return PMPI_Wait(req, st);
    for (;;) {
        int flag = 0;
        progress();
        int e = PMPI_Test(req, &flag, st);
        if (e != MPI_SUCCESS || flag) return e;
    }
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
    if (pending && !depth) progress();
    return PMPI_Test(req, flag, st);
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    if (!pending || depth) return PMPI_Waitall(n, reqs, sts);
    for (;;) {
        int flag = 0;
        progress();
        int e = PMPI_Testall(n, reqs, &flag, sts);
        if (e != MPI_SUCCESS || flag) return e;
    }
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    if (pending && !depth) progress();
    return PMPI_Testall(n, reqs, flag, sts);
}

int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
    if (!pending || depth) return PMPI_Waitany(n, reqs, idx, st);
    for (;;) {
        int flag = 0;
        progress();
        int e = PMPI_Testany(n, reqs, idx, &flag, st);
        if (e != MPI_SUCCESS || flag) return e;
    }
}

int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st)
{
    if (pending && !depth) progress();
    return PMPI_Testany(n, reqs, idx, flag, st);
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *out, int idx[], MPI_Status sts[])
{
    if (!pending || depth) return PMPI_Waitsome(n, reqs, out, idx, sts);
    for (;;) {
        progress();
        int e = PMPI_Testsome(n, reqs, out, idx, sts);
        if (e != MPI_SUCCESS || *out != 0) return e;
    }
}

int MPI_Testsome(int n, MPI_Request reqs[], int *out, int idx[], MPI_Status sts[])
{
    if (pending && !depth) progress();
    return PMPI_Testsome(n, reqs, out, idx, sts);
}

/* ---- the count, at the end ------------------------------------------- */
int MPI_Finalize(void)
{
    while (pending) progress();     /* requests the program never waited for */
    const char *v = getenv("HPC_MPI_VERBOSE");
    if (v && *v && strcmp(v, "0") != 0) {
        long tot[2 * HPC_COLL_COUNT], mine[2 * HPC_COLL_COUNT];
        for (int c = 0; c < HPC_COLL_COUNT; c++) {
            mine[c] = served[c];
            mine[HPC_COLL_COUNT + c] = fell[c];
        }
        depth++;
        PMPI_Reduce(mine, tot, 2 * HPC_COLL_COUNT, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        depth--;
        if (rank_of(MPI_COMM_WORLD) == 0) {
            long s = 0, f = 0;
            char per[512] = "";
            size_t k = 0;
            for (int c = 0; c < HPC_COLL_COUNT; c++) {
                s += tot[c];
                f += tot[HPC_COLL_COUNT + c];
                if ((tot[c] || tot[HPC_COLL_COUNT + c]) && k < sizeof per)
                    k += (size_t)snprintf(per + k, sizeof per - k, " %s %ld/%ld", hpc_coll_name((hpc_coll_t)c),
                                          tot[c], tot[HPC_COLL_COUNT + c]);
            }
            fprintf(stderr, "hpc-mpi: hpckit served %ld collective calls, %ld fell through to MPI "
                    "(all ranks; served/fell:%s)\n", s, f, per);
        }
    }
    depth++;               /* libhpc's cleanup inside MPI_Finalize is MPI's */
    return PMPI_Finalize();
}
