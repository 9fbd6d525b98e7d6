/* pmpi.c - libhpc-mpi.so: hpckit's collectives under unmodified MPI
 * programs, through the MPI profiling interface.
 *
 *   LD_PRELOAD=libhpc-mpi.so mpiexec -n 8 ./their_program
 *
 * It defines MPI_Allreduce, MPI_Bcast, MPI_Reduce, MPI_Allgather,
 * MPI_Gather, MPI_Scatter, MPI_Reduce_scatter_block, MPI_Alltoall,
 * MPI_Barrier and their MPI_I* forms: the pair each row of the
 * collectives' table names (coll/colls.h), by the row's shape.  Whether libhpc serves a call
 * (auto: cost model, HPC_COLL_<OP>, tuning file) or MPI does (PMPI_*,
 * unchanged) must come out alike on every rank of the call - a rank in
 * libhpc and another in MPI wait for each other forever - so it is
 * decided only from what MPI requires to agree:
 *  - data movement (bcast, gather, scatter, allgather, alltoall) from the
 *    number of bytes of data per block, which matching type signatures
 *    make equal on every rank whatever the datatypes: every datatype is
 *    served, as bytes (datatype.c: dense buffers as they are, others
 *    packed and unpacked), except an odd number of bytes (libhpc has no
 *    1-byte element), which MPI serves on every rank;
 *  - reductions from the type and op, which MPI requires to be the same
 *    on every rank: a type libhpc reduces (int, int32_t, long, long long,
 *    int64_t, float, double, or a duplicate or contiguous run of one) and
 *    sum, prod, min or max; everything else (MINLOC/MAXLOC on pair types,
 *    unsigned, MPI_BAND, user ops) goes to MPI;
 *  - never from addresses: buffers libhpc would find misaligned go
 *    through aligned copies instead;
 *  - and where libhpc cannot win, MPI's own: under auto, a call below
 *    HPC_MPI_SMALL bytes on one node that libhpc would run as a flat
 *    point-to-point schedule, or nonblocking (hpc_coll_prefers_mpi: MPI's
 *    collective on the same transport, without the drop-in's request and
 *    generalized request), is given to MPI - the collective, its bytes,
 *    its form and the communicator's nodes are the same on every rank.
 * Intercommunicators go to MPI.  libhpc's state for a communicator is set
 * up where every rank is at once (setup.c), never as a hidden collective
 * inside a call.
 *
 * Nonblocking calls return a generalized request (MPI_Grequest_start)
 * that completes when libhpc's request does (after unpacking);
 * MPI_Wait/Test and their all/any/some forms, MPI_Request_get_status and
 * MPI_Request_free are wrapped so that they advance libhpc's requests
 * (MPI has no hook for that).  libhpc's own MPI calls (it uses MPI's
 * collectives inside, e.g. "native" and communicator setup) pass straight
 * through: a depth counter marks that we are inside libhpc.
 *
 * HPC_MPI_VERBOSE=1: at MPI_Finalize, rank 0 prints how many calls of each
 * collective hpckit served, gave to MPI's own by auto's choice, and how
 * many fell through (all ranks summed), and how often it advanced its
 * calls in flight.
 */
#include "config.h"
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"   /* the quiet end of MPI (finalize.c), hpc_coll_progress, hpc_test_done */
#include "pmpi.h"
#include "coll/colls.h"

/* calls served by libhpc, given to MPI's own by auto's choice (and the
 * call being decided was: pm_gave), passed to MPI because libhpc cannot
 * serve them (types, ops, odd byte counts, intercommunicators) */
static long served[HPC_COLL_COUNT], given[HPC_COLL_COUNT], fell[HPC_COLL_COUNT];
static int pm_gave;
static long advances;             /* progress(): the drop-in's points that advance calls in flight */

static int red_op(MPI_Op op)
{
    if (op == MPI_SUM) return HPC_SUM;
    if (op == MPI_PROD) return HPC_PROD;
    if (op == MPI_MIN) return HPC_MIN;
    if (op == MPI_MAX) return HPC_MAX;
    return -1;
}

/* Data movement: blocks of `bytes` bytes as libhpc elements, the largest
 * of 8, 4, 2 bytes that divides it (bytes is the same on every rank, so
 * is the choice); 0 for an odd number of bytes. */
static int move_elems(size_t bytes, hpc_dtype_t *dt, size_t *n)
{
    static const struct { size_t es; hpc_dtype_t dt; } k[] = {{8, HPC_INT64}, {4, HPC_INT32}, {2, HPC_FLOAT16}};
    for (int i = 0; i < 3; i++)
        if (bytes % k[i].es == 0) {
            *dt = k[i].dt;
            *n = bytes / k[i].es;
            return 1;
        }
    return 0;
}

static int rank_of(MPI_Comm comm)
{
    int r = -1;
    PMPI_Comm_rank(comm, &r);
    return r;
}

static int size_of(MPI_Comm comm)
{
    int p = 0;
    PMPI_Comm_size(comm, &p);
    return p;
}

/* ---- one served call ------------------------------------------------- */
typedef struct pcall {
    struct pcall *next;
    int heap;               /* a nonblocking call's, malloc'ed (a blocking one's is on the stack) */
    hpc_coll_args_t a;
    hpc_request_t *req;
    MPI_Request greq;
    int freed;              /* the program let go of greq (MPI_Request_free) */
    pm_view_t vs, vr;       /* the caller's send and receive buffers, packed where need be */
    void *tsend, *trecv;    /* aligned copies of misaligned buffers */
    void *urecv;            /* the buffer trecv stands for, copied out to at the end */
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
    size_t es = hpc_dtype_size(c->a.dtype), sc, rc;
    if (!misaligned(c->a.sendbuf, es) && !misaligned(c->a.recvbuf, es)) return 0;
    int rank = rank_of(comm), p = size_of(comm);
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

/* The call is over (done: it succeeded): results to the caller's
 * buffers, everything freed; 0, or -1 with *why. */
static int pcall_end(pcall_t *c, int done, const char **why)
{
    if (c->urecv && done) memcpy(c->urecv, c->trecv, c->outbytes);
    if (!done) c->vs.out = c->vr.out = 0;
    int e = pm_view_end(&c->vr, why);
    if (pm_view_end(&c->vs, why) < 0) e = -1;
    free(c->tsend);
    free(c->trecv);
    if (c->heap) free(c);
    return e;
}

/* Say what failed, from this rank, and hand the error to comm's error
 * handler (fatal unless the program said otherwise). */
static int fail_as(MPI_Comm comm, int code, const char *what, const char *why)
{
    fprintf(stderr, "hpc-mpi: rank %d: %s: %s\n", rank_of(MPI_COMM_WORLD), what, why);
    PMPI_Comm_call_errhandler(comm, code);
    return code;
}

static int fail(MPI_Comm comm, const char *what, const char *why)
{
    return fail_as(comm, MPI_ERR_OTHER, what, why);
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

/* A call in flight failed: no caller to hand the error to (its wait may
 * be for another request), so the job ends. */
static void die(hpc_coll_t coll, const char *why)
{
    fprintf(stderr, "hpc-mpi: rank %d: %s: %s\n", rank_of(MPI_COMM_WORLD), hpc_coll_name(coll), why);
    PMPI_Abort(MPI_COMM_WORLD, 1);
}

/* Advance every call in flight (once: each hpc_test would advance them
 * all again, a window of n calls n squared times - nonblocking3 ran at
 * half speed); complete the MPI requests of those done. */
static void progress(void)
{
    pm_depth++;
    advances++;
    hpc_coll_progress();
    for (pcall_t **q = &pending; *q;) {
        pcall_t *c = *q;
        int done = 0;
        if (hpc_test_done(&c->req, &done) < 0) die(c->a.coll, hpc_last_error());
        if (!done) {
            q = &c->next;
            continue;
        }
        *q = c->next;
        MPI_Request g = c->greq;
        int freed = c->freed;
        const char *why = NULL;
        hpc_coll_t coll = c->a.coll;
        if (pcall_end(c, 1, &why) < 0) die(coll, why);
        PMPI_Grequest_complete(g);
        if (freed) PMPI_Request_free(&g);
    }
    pm_depth--;
}

/* Run c on comm through libhpc: blocking (R NULL) or as *R (c then
 * moves to the heap: it outlives the call). */
static int serve(pcall_t *c, MPI_Comm comm, MPI_Request *R)
{
    const char *what = hpc_coll_name(c->a.coll), *why = NULL;
    served[c->a.coll]++;
    if (R) {
        pcall_t *h = malloc(sizeof *h);
        if (!h) {
            const char *ignored;
            pcall_end(c, 0, &ignored);
            return fail(comm, what, "out of memory");
        }
        *h = *c;
        h->heap = 1;
        c = h;
    }
    pm_depth++;
    int e = align_bufs(c, comm);
    if (e < 0) why = "out of memory for an aligned copy";
    else if ((e = R ? hpc_icoll(&c->a, comm, &c->req) : hpc_coll(&c->a, comm)) < 0) why = hpc_last_error();
    pm_depth--;
    if (e < 0) {
        const char *ignored;
        pcall_end(c, 0, &ignored);
        return fail(comm, what, why);
    }
    if (!R) {
        if (pcall_end(c, 1, &why) < 0) return fail(comm, what, why);
        if (pending) progress();
        return MPI_SUCCESS;
    }
    PMPI_Grequest_start(gq_query, gq_free, gq_cancel, NULL, &c->greq);
    *R = c->greq;
    c->next = pending;
    pending = c;
    progress();            /* it may be done already (one rank, empty) */
    return MPI_SUCCESS;
}

/* A call's state in *c (the caller's stack; serve moves a nonblocking
 * one to the heap). */
static pcall_t *pcall_new(pcall_t *c, hpc_coll_t coll, const void *s, void *r, size_t n, hpc_dtype_t t, int op,
                          int root)
{
    memset(c, 0, sizeof *c);
    c->a = (hpc_coll_args_t){.coll = coll, .sendbuf = s, .recvbuf = r, .count = n, .dtype = t,
                             .op = (hpc_op_t)op, .root = root, .alg = HPC_ALG_AUTO};
    return c;
}

/* May libhpc serve a call on comm?  1 yes, 0 no (MPI serves it), -1 the
 * communicator's set-up failed (said; *err for the caller).  Calls in
 * flight are advanced first: a request the program freed has no wait of
 * its own to advance it. */
static int ours(MPI_Comm comm, int *err)
{
    if (pm_depth) return 0;
    if (pending) progress();
    return pm_ready(comm, err, 0);
}

/* ---- the collectives -------------------------------------------------
 * Each one: decide, then serve or pass through; R is NULL for the
 * blocking form. */
#define PASS(coll, call)                                                       \
    do {                                                                       \
        if (!pm_depth) {                                                       \
            if (pm_gave) given[coll]++;                                        \
            else fell[coll]++;                                                 \
        }                                                                      \
        pm_gave = 0;                                                           \
        return call;                                                           \
    } while (0)

/* 1 where auto gives a call libhpc could serve to MPI's own collective
 * (below HPC_MPI_SMALL on one node, a flat schedule or a nonblocking call:
 * hpc_coll_prefers_mpi): then PASS counts it as given */
static int give(hpc_coll_t coll, MPI_Comm comm, size_t bytes, const MPI_Request *R)
{
    static double small = -1;      /* HPC_MPI_SMALL, read once */
    if (small < 0) small = hpc_setting_double("HPC_MPI_SMALL");
    if ((double)bytes >= small) return pm_gave = 0;
    pm_depth++;
    pm_gave = hpc_coll_prefers_mpi(comm, coll, bytes, R != NULL);
    pm_depth--;
    return pm_gave;
}

/* 1 served (*ret: its result), 0 for MPI */
static int reduction(hpc_coll_t coll, const void *s, void *r, int count, MPI_Datatype t, MPI_Op op, int root,
                     MPI_Comm comm, MPI_Request *R, int *ret)
{
    hpc_dtype_t dt;
    size_t n;
    int o = red_op(op), ok = ours(comm, ret);
    if (ok < 0) return 1;
    if (!ok || o < 0 || !pm_red_type(t, count, &dt, &n)) return 0;
    if (give(coll, comm, n * hpc_dtype_size(dt), R)) return 0;
    pcall_t pc;
    *ret = serve(pcall_new(&pc, coll, s, r, n, dt, o, root), comm, R);
    return 1;
}

/* ---- data movement ---------------------------------------------------
 * One call's buffers as bytes.  Each rank knows the bytes per block from
 * its significant arguments (the root's receive side in gather, the
 * root's send side in scatter, ...); MPI requires them equal everywhere. */
typedef struct {
    hpc_coll_t coll;
    int root, me, p;        /* root: rooted collectives; else 0 */
    size_t bytes;           /* per block */
    hpc_dtype_t dt;
    size_t n;               /* libhpc elements per block */
} move_t;

/* 1: served as m, 0: MPI serves it, -1: *err returned now.  R: the
 * nonblocking form's request (NULL: blocking). */
static int move_plan(move_t *m, hpc_coll_t coll, int root, MPI_Datatype t, int count, MPI_Comm comm,
                     const MPI_Request *R, int *err)
{
    int ok = ours(comm, err);
    if (ok <= 0) return ok;
    m->coll = coll;
    m->root = root;
    m->me = rank_of(comm);
    m->p = size_of(comm);
    if (count < 0 || root < 0 || root >= m->p || pm_bytes(t, (size_t)count, &m->bytes) < 0) return 0;
    return move_elems(m->bytes, &m->dt, &m->n) && !give(coll, comm, m->bytes, R);
}

/* A rank's other significant side must carry the same bytes (an
 * erroneous program otherwise: MPI would report truncation). */
static int same_bytes(const move_t *m, MPI_Datatype t, int count, MPI_Comm comm, int *err)
{
    size_t b = 0;
    if (count >= 0 && pm_bytes(t, (size_t)count, &b) == 0 && b == m->bytes) return 1;
    char why[160];
    snprintf(why, sizeof why, "this rank's send and receive arguments hold different numbers of bytes (%zu, %zu)",
             count >= 0 && pm_bytes(t, (size_t)count, &b) == 0 ? b : (size_t)0, m->bytes);
    *err = fail_as(comm, MPI_ERR_TRUNCATE, hpc_coll_name(m->coll), why);
    return 0;
}

/* Set up view v (n elements of t at buf, how) into *lib; else say why. */
static int view(pcall_t *c, pm_view_t *v, const void *buf, size_t n, MPI_Datatype t, int how, void **lib,
                MPI_Comm comm, int *err)
{
    const char *why = NULL;
    if (pm_view(v, buf, n, t, how, lib, &why) == 0) return 0;
    *err = fail(comm, hpc_coll_name(c->a.coll), why);
    return -1;
}

/* Serve c, or end it on an error already reported (*err). */
static int go(pcall_t *c, int ok, MPI_Comm comm, MPI_Request *R, int err)
{
    if (ok < 0) {
        const char *ignored;
        pcall_end(c, 0, &ignored);
        return err;
    }
    return serve(c, comm, R);
}

/* bcast: the root's buffer is the input */
static int bcast(hpc_coll_t coll, void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request *R,
                 int *err)
{
    move_t m;
    int ok = move_plan(&m, coll, root, t, n, comm, R, err);
    if (ok <= 0) return ok;
    pcall_t pc, *c = pcall_new(&pc, coll, NULL, NULL, m.n, m.dt, HPC_SUM, root);
    ok = view(c, &c->vr, buf, (size_t)n, t, m.me == root ? PM_IN : PM_OUT, &c->a.recvbuf, comm, err);
    *err = go(c, ok, comm, R, *err);
    return 1;
}

/* gather and scatter, one path: the root's side of p blocks (gather's
 * receive side, scatter's send side) decides at the root, the side of
 * one block elsewhere; in place (MPI_IN_PLACE) is the root's one-block
 * side */
static int rooted(hpc_coll_t coll, const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                  int root, MPI_Comm comm, MPI_Request *R, int *err)
{
    int gather = coll == HPC_COLL_GATHER;
    int many_n = gather ? rn : sn, one_n = gather ? sn : rn;
    MPI_Datatype many_t = gather ? rt : st, one_t = gather ? st : rt;
    move_t m;
    int ok = ours(comm, err);
    if (ok <= 0) return ok;
    int isroot = rank_of(comm) == root;
    ok = isroot ? move_plan(&m, coll, root, many_t, many_n, comm, R, err)
                : move_plan(&m, coll, root, one_t, one_n, comm, R, err);
    if (ok <= 0) return ok;
    int inplace = isroot && (gather ? s : r) == MPI_IN_PLACE;
    if (isroot && !inplace && !same_bytes(&m, one_t, one_n, comm, err)) return -1;
    pcall_t pc, *c = pcall_new(&pc, coll, s, r, m.n, m.dt, HPC_SUM, root);
    size_t all = (size_t)m.p * (size_t)many_n;
    /* the send side, then the receive side: p blocks at the root, one
     * block elsewhere (none for the root in place) */
    if (gather ? !inplace : isroot)
        ok = view(c, &c->vs, s, gather ? (size_t)sn : all, st, PM_IN, (void **)&c->a.sendbuf, comm, err);
    if (ok >= 0 && (gather ? isroot : !inplace))
        ok = view(c, &c->vr, r, gather ? all : (size_t)rn, rt, PM_OUT, &c->a.recvbuf, comm, err);
    const char *why;
    if (ok >= 0 && inplace && gather && pm_view_pack(&c->vr, (size_t)m.me * (size_t)rn, (size_t)rn, &why) < 0)
        ok = -1, *err = fail(comm, "gather", why);
    *err = go(c, ok, comm, R, *err);
    return 1;
}

/* allgather and alltoall: the receive side decides on every rank; in
 * place, the input lives in the receive buffer (one block of it for
 * allgather, all of it for alltoall) */
static int all_to(hpc_coll_t coll, const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                  MPI_Comm comm, MPI_Request *R, int *err)
{
    move_t m;
    int ok = move_plan(&m, coll, 0, rt, rn, comm, R, err);
    if (ok <= 0) return ok;
    int inplace = s == MPI_IN_PLACE, a2a = coll == HPC_COLL_ALLTOALL;
    if (!inplace && !same_bytes(&m, st, sn, comm, err)) return -1;
    pcall_t pc, *c = pcall_new(&pc, coll, s, r, m.n, m.dt, HPC_SUM, 0);
    size_t all = (size_t)m.p * (size_t)rn;
    if (!inplace) ok = view(c, &c->vs, s, a2a ? (size_t)m.p * (size_t)sn : (size_t)sn, st, PM_IN,
                            (void **)&c->a.sendbuf, comm, err);
    if (ok >= 0)
        ok = view(c, &c->vr, r, all, rt, inplace && a2a ? PM_IN | PM_OUT : PM_OUT, &c->a.recvbuf, comm, err);
    const char *why;
    if (ok >= 0 && inplace && !a2a && pm_view_pack(&c->vr, (size_t)m.me * (size_t)rn, (size_t)rn, &why) < 0)
        ok = -1, *err = fail(comm, hpc_coll_name(coll), why);
    *err = go(c, ok, comm, R, *err);
    return ok < 0 ? -1 : 1;
}

/* ---- the wrappers: one pair per row of colls.h ----------------------
 * Each shape's MPI arguments and the part that decides and serves (1
 * served, *e its result; 0 MPI serves it) */
static int reduction_to_all(hpc_coll_t coll, const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
                            MPI_Comm comm, MPI_Request *R, int *e)
{
    return reduction(coll, s, r, n, t, op, 0, comm, R, e);
}

static int barrier(hpc_coll_t coll, MPI_Comm comm, MPI_Request *R, int *e)
{
    int ok = ours(comm, e);
    if (ok < 0) return 1;
    if (!ok || give(coll, comm, 0, R)) return 0;
    pcall_t pc;
    *e = serve(pcall_new(&pc, coll, NULL, NULL, 0, HPC_INT32, HPC_SUM, 0), comm, R);
    return 1;
}

#define PARAMS_NONE MPI_Comm comm
#define PARAMS_BUF_ROOT void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm
#define PARAMS_RED_ROOT const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm
#define PARAMS_RED const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm
#define PARAMS_MOVE_ROOT                                                                               \
    const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root, MPI_Comm comm
#define PARAMS_MOVE const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm comm
#define ARGS_NONE comm
#define ARGS_BUF_ROOT buf, n, t, root, comm
#define ARGS_RED_ROOT s, r, n, t, op, root, comm
#define ARGS_RED s, r, n, t, op, comm
#define ARGS_MOVE_ROOT s, sn, st, r, rn, rt, root, comm
#define ARGS_MOVE s, sn, st, r, rn, rt, comm
#define SERVE_NONE barrier
#define SERVE_BUF_ROOT bcast
#define SERVE_RED_ROOT reduction
#define SERVE_RED reduction_to_all
#define SERVE_MOVE_ROOT rooted
#define SERVE_MOVE all_to

#define DROPIN(name, E, SIG, SEND, RECV, ALIAS, BUS, MPI, IMPI, STREAM)                                \
    static int name##_call(PARAMS_##SIG, MPI_Request *R)                                               \
    {                                                                                                  \
        int e = MPI_SUCCESS;                                                                           \
        if (SERVE_##SIG(HPC_COLL_##E, ARGS_##SIG, R, &e)) return e;                                    \
        if (R) PASS(HPC_COLL_##E, PMPI_##IMPI(ARGS_##SIG, R));                                         \
        PASS(HPC_COLL_##E, PMPI_##MPI(ARGS_##SIG));                                                    \
    }                                                                                                  \
    int MPI_##MPI(PARAMS_##SIG) { return name##_call(ARGS_##SIG, NULL); }                              \
    int MPI_##IMPI(PARAMS_##SIG, MPI_Request *R) { return name##_call(ARGS_##SIG, R); }
COLL_TABLE(DROPIN)
#undef DROPIN

/* ---- completion: advance libhpc's calls, then ask MPI ----------------
 * Each also tells setup.c which MPI_Comm_idup requests it completed (the
 * handles before the call against after: pm_idup_check). */
enum { SNAP = 64 };

/* The handles before the call, where an idup may be among them */
static MPI_Request *snap_take(int n, const MPI_Request *reqs, MPI_Request *small)
{
    if (!pm_nidup || pm_depth || n <= 0) return NULL;
    MPI_Request *b = n <= SNAP ? small : malloc((size_t)n * sizeof *b);
    if (b) memcpy(b, reqs, (size_t)n * sizeof *b);
    return b;
}

static int snap_check(int e, int n, MPI_Request *b, const MPI_Request *reqs, MPI_Request *small)
{
    if (!b) return e;
    pm_idup_check(n, b, reqs);
    if (b != small) free(b);
    return e;
}

static int wait1(MPI_Request *req, MPI_Status *st)
{
    if (!pending || pm_depth) return PMPI_Wait(req, st);
    for (;;) {
        int flag = 0;
        progress();
        int e = PMPI_Test(req, &flag, st);
        if (e != MPI_SUCCESS || flag) return e;
    }
}

int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
    MPI_Request small[1], *b = snap_take(1, req, small);
    return snap_check(wait1(req, st), 1, b, req, small);
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
    MPI_Request small[1], *b = snap_take(1, req, small);
    if (pending && !pm_depth) progress();
    return snap_check(PMPI_Test(req, flag, st), 1, b, req, small);
}

static int waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    if (!pending || pm_depth) return PMPI_Waitall(n, reqs, sts);
    for (;;) {
        int flag = 0;
        progress();
        int e = PMPI_Testall(n, reqs, &flag, sts);
        if (e != MPI_SUCCESS || flag) return e;
    }
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    MPI_Request small[SNAP], *b = snap_take(n, reqs, small);
    return snap_check(waitall(n, reqs, sts), n, b, reqs, small);
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    MPI_Request small[SNAP], *b = snap_take(n, reqs, small);
    if (pending && !pm_depth) progress();
    return snap_check(PMPI_Testall(n, reqs, flag, sts), n, b, reqs, small);
}

static int waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
    if (!pending || pm_depth) return PMPI_Waitany(n, reqs, idx, st);
    for (;;) {
        int flag = 0;
        progress();
        int e = PMPI_Testany(n, reqs, idx, &flag, st);
        if (e != MPI_SUCCESS || flag) return e;
    }
}

int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
    MPI_Request small[SNAP], *b = snap_take(n, reqs, small);
    return snap_check(waitany(n, reqs, idx, st), n, b, reqs, small);
}

int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st)
{
    MPI_Request small[SNAP], *b = snap_take(n, reqs, small);
    if (pending && !pm_depth) progress();
    return snap_check(PMPI_Testany(n, reqs, idx, flag, st), n, b, reqs, small);
}

static int waitsome(int n, MPI_Request reqs[], int *out, int idx[], MPI_Status sts[])
{
    if (!pending || pm_depth) return PMPI_Waitsome(n, reqs, out, idx, sts);
    for (;;) {
        progress();
        int e = PMPI_Testsome(n, reqs, out, idx, sts);
        if (e != MPI_SUCCESS || *out != 0) return e;
    }
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *out, int idx[], MPI_Status sts[])
{
    MPI_Request small[SNAP], *b = snap_take(n, reqs, small);
    return snap_check(waitsome(n, reqs, out, idx, sts), n, b, reqs, small);
}

int MPI_Testsome(int n, MPI_Request reqs[], int *out, int idx[], MPI_Status sts[])
{
    MPI_Request small[SNAP], *b = snap_take(n, reqs, small);
    if (pending && !pm_depth) progress();
    return snap_check(PMPI_Testsome(n, reqs, out, idx, sts), n, b, reqs, small);
}

int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *st)
{
    if (pending && !pm_depth) progress();
    return PMPI_Request_get_status(req, flag, st);
}

/* Letting go of a served call's request: it still runs to its end (and
 * unpacks there), advanced by the next call of this library; its request
 * is freed then. */
int MPI_Request_free(MPI_Request *req)
{
    if (pm_nidup && !pm_depth && req) pm_idup_forget(*req);
    for (pcall_t *c = pm_depth || !req ? NULL : pending; c; c = c->next)
        if (c->greq == *req && !c->freed) {
            c->freed = 1;
            *req = MPI_REQUEST_NULL;
            progress();
            return MPI_SUCCESS;
        }
    return PMPI_Request_free(req);
}

/* ---- the count, at the end ------------------------------------------- */
int MPI_Finalize(void)
{
    while (pending) progress();     /* requests the program never waited for */
    if (hpc_setting_flag("HPC_MPI_VERBOSE") == 1) {
        enum { N = HPC_COLL_COUNT };
        long tot[3 * N + 2], mine[3 * N + 2];
        for (int c = 0; c < N; c++) {
            mine[c] = served[c];
            mine[N + c] = given[c];
            mine[2 * N + c] = fell[c];
        }
        mine[3 * N] = advances;
        mine[3 * N + 1] = (long)hpc_coll_passes();
        pm_depth++;
        PMPI_Reduce(mine, tot, 3 * N + 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        pm_depth--;
        if (rank_of(MPI_COMM_WORLD) == 0) {
            long s = 0, g = 0, f = 0;
            char per[768] = "";
            size_t k = 0;
            for (int c = 0; c < N; c++) {
                s += tot[c];
                g += tot[N + c];
                f += tot[2 * N + c];
                if ((tot[c] || tot[N + c] || tot[2 * N + c]) && k < sizeof per)
                    k += (size_t)snprintf(per + k, sizeof per - k, " %s %ld/%ld/%ld", hpc_coll_name((hpc_coll_t)c),
                                          tot[c], tot[N + c], tot[2 * N + c]);
            }
            fprintf(stderr, "hpc-mpi: hpckit served %ld collective calls, gave %ld to MPI's own by auto's choice, "
                    "%ld fell through to MPI (all ranks; served/given/fell:%s); %ld passes over its calls in "
                    "flight at %ld points that advance them\n", s, g, f, per, tot[3 * N + 1], tot[3 * N]);
        }
    }
    pm_depth++;               /* libhpc's cleanup inside MPI_Finalize is MPI's */
    /* where MPI_Finalize hangs (MPICH < 4.2 ch4:ucx across nodes), the
     * program's HDF5 files are closed, a barrier, and MPI is left to the
     * process's exit (libhpc/finalize.c) */
    if (hpc_finalize_is_quiet()) return hpc_finalize_quiet() < 0 ? MPI_ERR_OTHER : MPI_SUCCESS;
    return PMPI_Finalize();
}

/* After a quiet end MPI is finalized as far as the program may know. */
int MPI_Finalized(int *flag)
{
    if (hpc_finalize_was_quiet()) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    return PMPI_Finalized(flag);
}
