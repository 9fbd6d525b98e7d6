/* pmpi_conform.c - a plain MPI program (no hpckit header, linked with MPI
 * only) that uses what MPI allows of datatypes in collectives, checked
 * against known answers.  tests/pmpi_conform.sh runs it with and without
 * LD_PRELOAD=libhpc-mpi.so, at 1-7 ranks, with each algorithm forced.
 *
 * Cases (on MPI_COMM_WORLD, and the first and the MPI_DOUBLE_INT ones on
 * a reversed communicator too):
 *  - signatures that match with different datatypes: every rank of a
 *    bcast, gather, scatter, allgather or alltoall (blocking and
 *    nonblocking) passes its own one of six ways to say "12 doubles":
 *    12 MPI_DOUBLE, 12 of a duplicate, one contiguous type, one vector
 *    (stride 2), one indexed type, 12 of a resized type (extent 3
 *    doubles); MPI_IN_PLACE at the root only (gather, scatter) and on
 *    every rank (allgather, alltoall); the gaps of strided buffers must
 *    stay untouched;
 *  - zero counts: 0 elements of named and derived types, and a type of no
 *    data (contiguous of 0) with a non-zero count on some ranks;
 *  - pair types (MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT, MPI_2INT,
 *    MPI_FLOAT_INT, MPI_LONG_DOUBLE_INT): bcast, gather, scatter,
 *    allgather, alltoall, and MINLOC/MAXLOC in allreduce, reduce and
 *    reduce_scatter_block; MPI_DOUBLE_INT against a struct type of the
 *    same signature on other ranks;
 *  - reductions with MPI_IN_PLACE at the root only, and of 0 elements;
 *  - many nonblocking calls at once on four duplicated communicators,
 *    started in another order of communicators on every rank (MPI allows
 *    that: only the order on each communicator must agree), completed by
 *    a mix of MPI_Waitall, Testsome, Waitsome, Waitany, Testany, Testall,
 *    Wait and Test drawn from a generator seeded by the rank, so every
 *    rank completes them in another order; some with duplicates of their
 *    datatypes that the program frees while the calls run;
 *  - a communicator made by MPI_Comm_idup (its state attached where its
 *    request completes);
 *  - MPI_BOTTOM with a struct type of absolute addresses (MPI_Get_address)
 *    on odd ranks against 12 MPI_DOUBLE on the others: bcast (as root and
 *    not), scatter's receive side, gather's and allgather's send side,
 *    blocking and nonblocking (once: the MPICH build aborted, MPI_Unpack
 *    refusing a NULL buffer).
 */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi_check.h"

/* ---- six ways to hold a block of 12 doubles -------------------------- */
enum { NB = 12, NREP = 6 };
static const int idx_len[3] = {3, 4, 5}, idx_disp[3] = {0, 4, 10};
typedef struct {
    const char *name;
    MPI_Datatype t;
    int count;      /* of t per block */
    int span;       /* doubles a block spans in memory (count * extent) */
} rep_t;
static rep_t reps[NREP];
static MPI_Datatype t_empty;   /* contiguous(0, MPI_DOUBLE): no data */

/* where element j of a block lies, in doubles from the block's start */
static int pos(const rep_t *r, int j)
{
    if (!strcmp(r->name, "vector")) return 2 * j;
    if (!strcmp(r->name, "resized")) return 3 * j;
    if (!strcmp(r->name, "indexed")) {
        for (int b = 0, first = 0; b < 3; first += idx_len[b++])
            if (j < first + idx_len[b]) return idx_disp[b] + j - first;
    }
    return j;
}

static void make_reps(void)
{
    MPI_Datatype t;
    reps[0] = (rep_t){"double", MPI_DOUBLE, NB, NB};
    MPI_Type_dup(MPI_DOUBLE, &t);
    reps[1] = (rep_t){"dup", t, NB, NB};
    MPI_Type_contiguous(NB, MPI_DOUBLE, &t);
    reps[2] = (rep_t){"contiguous", t, 1, NB};
    MPI_Type_vector(NB, 1, 2, MPI_DOUBLE, &t);
    reps[3] = (rep_t){"vector", t, 1, 2 * NB - 1};
    MPI_Type_indexed(3, idx_len, idx_disp, MPI_DOUBLE, &t);
    reps[4] = (rep_t){"indexed", t, 1, 15};
    MPI_Type_create_resized(MPI_DOUBLE, 0, 3 * (MPI_Aint)sizeof(double), &t);
    reps[5] = (rep_t){"resized", t, NB, 3 * NB};
    for (int i = 1; i < NREP; i++) MPI_Type_commit(&reps[i].t);
    MPI_Type_contiguous(0, MPI_DOUBLE, &t_empty);
    MPI_Type_commit(&t_empty);
}

static void free_reps(void)
{
    for (int i = 1; i < NREP; i++) MPI_Type_free(&reps[i].t);
    MPI_Type_free(&t_empty);
}

/* element j of block b from rank r in call k: exact in a double */
static double val(int r, int b, int j, int k)
{
    return 1e6 * (k % 50) + r * 10000.0 + b * 100.0 + j;
}

enum { BCAST, GATHER, SCATTER, ALLGATHER, ALLTOALL, NMOVE };
static const char *mname[NMOVE] = {"bcast", "gather", "scatter", "allgather", "alltoall"};

/* one data-movement call: its arguments on this rank and its buffers */
typedef struct {
    int coll, root, inplace, k, me, p;
    const rep_t *sr, *rr;       /* this rank's send and receive ways */
    double *s, *r;              /* blocks of sr->span, rr->span doubles */
    int ns, nr;                 /* blocks in s, r */
} mv_t;

static double *blocks(const rep_t *rp, int n)
{
    size_t len = (size_t)rp->span * (size_t)(n ? n : 1);
    double *b = malloc(len * sizeof *b);
    for (size_t i = 0; i < len; i++) b[i] = -1;
    return b;
}

static void put_block(double *buf, const rep_t *rp, int blk, int r, int b, int k)
{
    for (int j = 0; j < NB; j++) buf[(size_t)blk * (size_t)rp->span + (size_t)pos(rp, j)] = val(r, b, j, k);
}

/* block blk of buf holds rank r's block b of call k, and its gaps -1 */
static void check_block(const mv_t *m, const double *buf, const rep_t *rp, int blk, int r, int b, const char *what)
{
    const double *x = buf + (size_t)blk * (size_t)rp->span;
    int data[64] = {0};
    for (int j = 0; j < NB; j++) {
        data[pos(rp, j)] = 1;
        CHECK(x[pos(rp, j)] == val(r, b, j, m->k), "%s #%d (%s, %d ranks, root %d%s): %s block %d [%d] = %.0f, expected %.0f",
              mname[m->coll], m->k, rp->name, m->p, m->root, m->inplace ? ", in place" : "", what, blk, j,
              x[pos(rp, j)], val(r, b, j, m->k));
    }
    for (int i = 0; i < rp->span; i++)
        CHECK(data[i] || x[i] == -1, "%s #%d (%s): %s block %d: the gap at %d was written (%.0f)", mname[m->coll], m->k,
              rp->name, what, blk, i, x[i]);
}

static void mv_prepare(mv_t *m, int coll, int k, MPI_Comm comm)
{
    memset(m, 0, sizeof *m);
    MPI_Comm_rank(comm, &m->me);
    MPI_Comm_size(comm, &m->p);
    int me = m->me, p = m->p;
    m->coll = coll;
    m->k = k;
    m->root = (k * 5 + coll) % p;
    m->sr = &reps[(me + 2 * k + coll) % NREP];
    m->rr = &reps[(me * 5 + k) % NREP];
    int isroot = me == m->root;
    switch (coll) {
    case BCAST:
        m->nr = 1;
        m->r = blocks(m->rr, 1);
        if (isroot) put_block(m->r, m->rr, 0, me, 0, k);
        break;
    case GATHER:
        m->inplace = isroot && k % 3 == 0;
        m->ns = 1;
        m->s = blocks(m->sr, 1);
        put_block(m->s, m->sr, 0, me, 0, k);
        m->nr = isroot ? p : 0;
        m->r = blocks(m->rr, m->nr);
        if (m->inplace) put_block(m->r, m->rr, me, me, 0, k);
        break;
    case SCATTER:
        m->inplace = isroot && k % 3 == 0;
        m->ns = isroot ? p : 0;
        m->s = blocks(m->sr, m->ns);
        for (int b = 0; isroot && b < p; b++) put_block(m->s, m->sr, b, me, b, k);
        m->nr = 1;
        m->r = blocks(m->rr, 1);
        break;
    case ALLGATHER:
        m->inplace = k % 4 == 1;
        m->ns = 1;
        m->s = blocks(m->sr, 1);
        put_block(m->s, m->sr, 0, me, 0, k);
        m->nr = p;
        m->r = blocks(m->rr, p);
        if (m->inplace) put_block(m->r, m->rr, me, me, 0, k);
        break;
    default:
        m->inplace = k % 4 == 1;
        m->ns = p;
        m->s = blocks(m->sr, p);
        for (int b = 0; b < p; b++) put_block(m->s, m->sr, b, me, b, k);
        m->nr = p;
        m->r = blocks(m->rr, p);
        for (int b = 0; m->inplace && b < p; b++) put_block(m->r, m->rr, b, me, b, k);
    }
}

/* start m: blocking (R NULL) or nonblocking */
static void mv_start(mv_t *m, MPI_Comm comm, MPI_Request *R)
{
    const rep_t *sr = m->sr, *rr = m->rr;
    void *s = m->inplace && m->coll != SCATTER ? MPI_IN_PLACE : m->s;
    void *r = m->inplace && m->coll == SCATTER ? MPI_IN_PLACE : m->r;
    switch (m->coll) {
    case BCAST:
        if (R) MPI_Ibcast(m->r, rr->count, rr->t, m->root, comm, R);
        else MPI_Bcast(m->r, rr->count, rr->t, m->root, comm);
        break;
    case GATHER:
        if (R) MPI_Igather(s, sr->count, sr->t, r, rr->count, rr->t, m->root, comm, R);
        else MPI_Gather(s, sr->count, sr->t, r, rr->count, rr->t, m->root, comm);
        break;
    case SCATTER:
        if (R) MPI_Iscatter(s, sr->count, sr->t, r, rr->count, rr->t, m->root, comm, R);
        else MPI_Scatter(s, sr->count, sr->t, r, rr->count, rr->t, m->root, comm);
        break;
    case ALLGATHER:
        if (R) MPI_Iallgather(s, sr->count, sr->t, r, rr->count, rr->t, comm, R);
        else MPI_Allgather(s, sr->count, sr->t, r, rr->count, rr->t, comm);
        break;
    default:
        if (R) MPI_Ialltoall(s, sr->count, sr->t, r, rr->count, rr->t, comm, R);
        else MPI_Alltoall(s, sr->count, sr->t, r, rr->count, rr->t, comm);
    }
}

static void mv_check(mv_t *m)
{
    int me = m->me, root = m->root;
    switch (m->coll) {
    case BCAST: check_block(m, m->r, m->rr, 0, root, 0, "buf"); break;
    case GATHER:
        for (int b = 0; me == root && b < m->p; b++) check_block(m, m->r, m->rr, b, b, 0, "recvbuf");
        break;
    case SCATTER:
        if (m->inplace) check_block(m, m->s, m->sr, me, me, me, "sendbuf (in place)");
        else check_block(m, m->r, m->rr, 0, root, me, "recvbuf");
        break;
    case ALLGATHER:
        for (int b = 0; b < m->p; b++) check_block(m, m->r, m->rr, b, b, 0, "recvbuf");
        break;
    default:
        for (int b = 0; b < m->p; b++) check_block(m, m->r, m->rr, b, b, me, "recvbuf");
    }
    free(m->s);
    free(m->r);
}

static void movement(MPI_Comm comm, int k0)
{
    for (int k = k0; k < k0 + NREP; k++)
        for (int c = 0; c < NMOVE; c++) {
            mv_t m;
            MPI_Request rq;
            mv_prepare(&m, c, k, comm);
            if (k % 2) {
                mv_start(&m, comm, &rq);
                MPI_Wait(&rq, MPI_STATUS_IGNORE);
            } else {
                mv_start(&m, comm, NULL);
            }
            mv_check(&m);
        }
}

/* ---- zero counts ------------------------------------------------------ */
/* empty: 3 of a type with no data on every rank (MPICH's own collectives
 * mix up a count of 0 on some ranks with an empty type on others, so the
 * two are not mixed in one call); else 0 of a named or derived type, a
 * different one on every rank */
static void zero_counts(MPI_Comm comm, int empty)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    double s[64], r[64];
    for (int i = 0; i < 64; i++) s[i] = r[i] = -1;
    MPI_Datatype t = empty ? t_empty : reps[me % NREP].t;
    int n = empty ? 3 : 0, root = p - 1;
    MPI_Bcast(r, n, t, root, comm);
    MPI_Gather(me == root ? MPI_IN_PLACE : s, n, t, r, n, t, root, comm);
    MPI_Scatter(s, n, t, r, n, t, 0, comm);
    MPI_Allgather(s, n, t, r, n, t, comm);
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DOUBLE, r, n, t, comm);
    MPI_Request rq[3];
    MPI_Status st[3];   /* (GCC misreads MPICH's MPI_STATUSES_IGNORE) */
    MPI_Ibcast(r, n, t, 0, comm, &rq[0]);
    MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DOUBLE, r, n, t, comm, &rq[1]);
    MPI_Ialltoall(s, n, t, r, n, t, comm, &rq[2]);
    MPI_Waitall(3, rq, st);
    MPI_Allreduce(s, r, 0, MPI_DOUBLE, MPI_SUM, comm);
    MPI_Reduce(s, r, 0, MPI_DOUBLE_INT, MPI_MINLOC, 0, comm);
    MPI_Reduce_scatter_block(s, r, 0, MPI_INT, MPI_SUM, comm);
    for (int i = 0; i < 64; i++)
        CHECK(s[i] == -1 && r[i] == -1, "zero counts%s: [%d] written (%g, %g)", empty ? " (empty type)" : "", i, s[i],
              r[i]);
}

/* ---- pair types ------------------------------------------------------- */
/* value and location of rank r's element j in call k: small, with ties */
static int pv(int r, int j, int k) { return (r * 7 + j * 3 + k) % 5; }

static void expect_loc(int p, int j, int k, int max, int *v, int *loc)
{
    *v = pv(0, j, k);
    *loc = 0;
    for (int r = 1; r < p; r++) {
        int x = pv(r, j, k);
        if (max ? x > *v : x < *v) *v = x, *loc = r;    /* ties: the lowest location stays */
    }
}

/* Every pair type the same way: T its C struct, MT its MPI type, ALT a
 * type of the same signature odd ranks pass for data movement (or MT). */
#define PAIR_TEST(NAME, VT, MT)                                                                        \
    typedef struct { VT v; int i; } NAME##_t;                                                          \
    static void NAME##_fill(NAME##_t *x, int n, int r, int b, int k)                                   \
    {                                                                                                  \
        for (int j = 0; j < n; j++) x[j].v = (VT)(r * 100 + b * 10 + j + k % 7), x[j].i = r * 1000 + b + j; \
    }                                                                                                  \
    static int NAME##_bad(const NAME##_t *x, int n, int r, int b, int k)                               \
    {                                                                                                  \
        for (int j = 0; j < n; j++)                                                                    \
            if (x[j].v != (VT)(r * 100 + b * 10 + j + k % 7) || x[j].i != r * 1000 + b + j) return j + 1; \
        return 0;                                                                                      \
    }                                                                                                  \
    static void NAME##_test(MPI_Comm comm, int k, MPI_Datatype alt)                                    \
    {                                                                                                  \
        int me, p, bad;                                                                                \
        MPI_Comm_rank(comm, &me);                                                                      \
        MPI_Comm_size(comm, &p);                                                                       \
        enum { N = 5 };                                                                                \
        MPI_Datatype t = me % 2 ? alt : MT;                                                            \
        NAME##_t *a = calloc((size_t)(N * p), sizeof *a), *b = calloc((size_t)(N * p), sizeof *b);   \
        int root = k % p;                                                                              \
        /* bcast */                                                                                    \
        if (me == root) NAME##_fill(b, N, root, 0, k);                                                 \
        else memset(b, 0xff, N * sizeof *b);                                                           \
        MPI_Bcast(b, N, t, root, comm);                                                                \
        CHECK(!(bad = NAME##_bad(b, N, root, 0, k)), #MT " bcast: v[%d] = {%g, %d}", bad - 1,          \
              (double)b[bad ? bad - 1 : 0].v, b[bad ? bad - 1 : 0].i);                                  \
        /* gather (in place at the root on odd k) and allgather */                                     \
        int ip = me == root && k % 2;                                                                  \
        NAME##_fill(a, N, me, 0, k);                                                                   \
        memset(b, 0xff, (size_t)(N * p) * sizeof *b);                                                  \
        if (ip) NAME##_fill(b + N * me, N, me, 0, k);                                                  \
        MPI_Gather(ip ? MPI_IN_PLACE : a, N, t, b, N, t, root, comm);                                  \
        for (int r = 0; me == root && r < p; r++)                                                      \
            CHECK(!(bad = NAME##_bad(b + N * r, N, r, 0, k)), #MT " gather: block %d [%d]", r, bad - 1); \
        memset(b, 0xff, (size_t)(N * p) * sizeof *b);                                                  \
        MPI_Allgather(a, N, t, b, N, t, comm);                                                         \
        for (int r = 0; r < p; r++)                                                                    \
            CHECK(!(bad = NAME##_bad(b + N * r, N, r, 0, k)), #MT " allgather: block %d [%d]", r, bad - 1); \
        /* scatter and alltoall: block b of rank r */                                                  \
        for (int d = 0; d < p; d++) NAME##_fill(a + N * d, N, me, d, k);                               \
        memset(b, 0xff, (size_t)(N * p) * sizeof *b);                                                 \
        MPI_Scatter(a, N, t, b, N, t, root, comm);                                                     \
        CHECK(!(bad = NAME##_bad(b, N, root, me, k)), #MT " scatter [%d]", bad - 1);                   \
        MPI_Alltoall(a, N, t, b, N, t, comm);                                                          \
        for (int r = 0; r < p; r++)                                                                    \
            CHECK(!(bad = NAME##_bad(b + N * r, N, r, me, k)), #MT " alltoall: block %d [%d]", r, bad - 1); \
        /* MINLOC / MAXLOC: allreduce (in place on odd k), reduce, reduce_scatter_block */            \
        for (int mx = 0; mx < 2; mx++) {                                                               \
            MPI_Op op = mx ? MPI_MAXLOC : MPI_MINLOC;                                                  \
            for (int j = 0; j < N * p; j++) a[j].v = (VT)pv(me, j, k + mx), a[j].i = me;               \
            if (k % 2) memcpy(b, a, (size_t)(N * p) * sizeof *b);                                      \
            MPI_Allreduce(k % 2 ? MPI_IN_PLACE : a, b, N, MT, op, comm);                               \
            for (int j = 0; j < N; j++) {                                                              \
                int v, loc;                                                                            \
                expect_loc(p, j, k + mx, mx, &v, &loc);                                                \
                CHECK(b[j].v == (VT)v && b[j].i == loc, #MT " allreduce %s [%d] = {%g, %d}, expected {%d, %d}", \
                      mx ? "maxloc" : "minloc", j, (double)b[j].v, b[j].i, v, loc);                    \
            }                                                                                          \
            memset(b, 0, (size_t)(N * p) * sizeof *b);                                                 \
            MPI_Reduce(a, b, N, MT, op, root, comm);                                                   \
            for (int j = 0; me == root && j < N; j++) {                                                \
                int v, loc;                                                                            \
                expect_loc(p, j, k + mx, mx, &v, &loc);                                                \
                CHECK(b[j].v == (VT)v && b[j].i == loc, #MT " reduce %s [%d]", mx ? "maxloc" : "minloc", j); \
            }                                                                                          \
            MPI_Reduce_scatter_block(a, b, 2, MT, op, comm);                                           \
            for (int j = 0; j < 2; j++) {                                                              \
                int v, loc;                                                                            \
                expect_loc(p, 2 * me + j, k + mx, mx, &v, &loc);                                       \
                CHECK(b[j].v == (VT)v && b[j].i == loc, #MT " reduce_scatter_block %s [%d]",             \
                      mx ? "maxloc" : "minloc", j);                                                    \
            }                                                                                          \
        }                                                                                              \
        free(a);                                                                                       \
        free(b);                                                                                       \
    }
PAIR_TEST(dint, double, MPI_DOUBLE_INT)
PAIR_TEST(lint, long, MPI_LONG_INT)
PAIR_TEST(sint, short, MPI_SHORT_INT)
PAIR_TEST(iint, int, MPI_2INT)
PAIR_TEST(fint, float, MPI_FLOAT_INT)
PAIR_TEST(ldint, long double, MPI_LONG_DOUBLE_INT)

/* every pair type (all), or MPI_DOUBLE_INT against a struct type only */
static void pairs(MPI_Comm comm, int k, int all)
{
    /* a struct type with MPI_DOUBLE_INT's signature, resized to the struct */
    MPI_Datatype st, di;
    int len[2] = {1, 1};
    MPI_Aint disp[2] = {offsetof(dint_t, v), offsetof(dint_t, i)};
    MPI_Datatype tys[2] = {MPI_DOUBLE, MPI_INT};
    MPI_Type_create_struct(2, len, disp, tys, &st);
    MPI_Type_create_resized(st, 0, sizeof(dint_t), &di);
    MPI_Type_commit(&di);
    dint_test(comm, k, di);
    if (all) {
        iint_test(comm, k + 3, MPI_2INT);
        lint_test(comm, k + 1, MPI_LONG_INT);
        sint_test(comm, k + 2, MPI_SHORT_INT);
        fint_test(comm, k + 4, MPI_FLOAT_INT);
        ldint_test(comm, k + 5, MPI_LONG_DOUBLE_INT);
    }
    MPI_Type_free(&di);
    MPI_Type_free(&st);
}

/* ---- reductions --------------------------------------------------------
 * (MPI's predefined ops take predefined types only: MPICH refuses MPI_SUM
 * on a duplicate or contiguous type, so those are not tried) */
static void reductions(MPI_Comm comm, int k)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    int x[3 * 8], y[3 * 8];
    /* in place at the root only; 6 ints, then 0 */
    int root = k % p;
    for (int n = 6; n >= 0; n -= 6) {
        for (int j = 0; j < 6; j++) x[j] = (me + 1) * (j + 1), y[j] = me == root ? x[j] : -1;
        MPI_Reduce(me == root ? MPI_IN_PLACE : x, y, n, MPI_INT, MPI_SUM, root, comm);
        for (int j = 0; me == root && j < 6; j++)
            CHECK(y[j] == (n ? p * (p + 1) / 2 * (j + 1) : x[j]), "reduce in place n=%d [%d] = %d", n, j, y[j]);
    }
    for (int j = 0; j < 3 * p; j++) x[j] = me + j;
    MPI_Reduce_scatter_block(x, y, 3, MPI_INT, MPI_SUM, comm);
    for (int j = 0; j < 3; j++)
        CHECK(y[j] == p * (p - 1) / 2 + p * (3 * me + j), "reduce_scatter_block [%d] = %d", j, y[j]);
}

/* ---- MPI_BOTTOM and absolute addresses ---------------------------------- */
/* 12 doubles in two pieces of a struct, described by their addresses */
typedef struct {
    double a[4];
    int pad;
    double b[8];
} split12_t;

static MPI_Datatype absolute_type(split12_t *x)
{
    MPI_Datatype t;
    int len[2] = {4, 8};
    MPI_Aint disp[2];
    MPI_Datatype tys[2] = {MPI_DOUBLE, MPI_DOUBLE};
    MPI_Get_address(x->a, &disp[0]);
    MPI_Get_address(x->b, &disp[1]);
    MPI_Type_create_struct(2, len, disp, tys, &t);
    MPI_Type_commit(&t);
    return t;
}

static double *split_at(split12_t *x, int j) { return j < 4 ? &x->a[j] : &x->b[j - 4]; }

static void bottom(MPI_Comm comm, int k0)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    int odd = me % 2;
    split12_t x;
    MPI_Datatype at = absolute_type(&x);
    double *plain = malloc((size_t)(NB * p) * sizeof *plain);
    for (int k = k0; k < k0 + 4; k++) {
        int root = k % p, nb = k % 2;
        MPI_Request rq;
        /* bcast: odd ranks' block is x, at MPI_BOTTOM */
        for (int j = 0; j < NB; j++) {
            *split_at(&x, j) = me == root ? val(root, 0, j, k) : -1;
            plain[j] = me == root ? val(root, 0, j, k) : -1;
        }
        x.pad = 77;
        void *buf = odd ? MPI_BOTTOM : (void *)plain;
        MPI_Datatype t = odd ? at : MPI_DOUBLE;
        int n = odd ? 1 : NB;
        if (nb) MPI_Ibcast(buf, n, t, root, comm, &rq), MPI_Wait(&rq, MPI_STATUS_IGNORE);
        else MPI_Bcast(buf, n, t, root, comm);
        for (int j = 0; j < NB; j++)
            CHECK((odd ? *split_at(&x, j) : plain[j]) == val(root, 0, j, k), "MPI_BOTTOM bcast #%d [%d]", k, j);
        CHECK(x.pad == 77, "MPI_BOTTOM bcast #%d: the gap was written", k);
        /* scatter: the receive side */
        double *all = malloc((size_t)(NB * p) * sizeof *all);
        for (int b = 0; me == root && b < p; b++)
            for (int j = 0; j < NB; j++) all[b * NB + j] = val(root, b, j, k);
        for (int j = 0; j < NB; j++) *split_at(&x, j) = plain[j] = -1;
        if (nb) MPI_Iscatter(all, NB, MPI_DOUBLE, buf, n, t, root, comm, &rq), MPI_Wait(&rq, MPI_STATUS_IGNORE);
        else MPI_Scatter(all, NB, MPI_DOUBLE, buf, n, t, root, comm);
        for (int j = 0; j < NB; j++)
            CHECK((odd ? *split_at(&x, j) : plain[j]) == val(root, me, j, k), "MPI_BOTTOM scatter #%d [%d]", k, j);
        /* gather and allgather: the send side */
        for (int j = 0; j < NB; j++) *split_at(&x, j) = plain[j] = val(me, 0, j, k);
        for (int i = 0; i < NB * p; i++) all[i] = -1;
        if (nb) MPI_Igather(buf, n, t, all, NB, MPI_DOUBLE, root, comm, &rq), MPI_Wait(&rq, MPI_STATUS_IGNORE);
        else MPI_Gather(buf, n, t, all, NB, MPI_DOUBLE, root, comm);
        for (int b = 0; me == root && b < p; b++)
            for (int j = 0; j < NB; j++) CHECK(all[b * NB + j] == val(b, 0, j, k), "MPI_BOTTOM gather #%d %d[%d]", k, b, j);
        for (int i = 0; i < NB * p; i++) all[i] = -1;
        MPI_Allgather(buf, n, t, all, NB, MPI_DOUBLE, comm);
        for (int b = 0; b < p; b++)
            for (int j = 0; j < NB; j++) CHECK(all[b * NB + j] == val(b, 0, j, k), "MPI_BOTTOM allgather #%d %d[%d]", k, b, j);
        free(all);
    }
    free(plain);
    MPI_Type_free(&at);
}

/* ---- many nonblocking calls on duplicated communicators ----------------- */
enum { NCOMM = 4, PER = 5, ROUNDS = 2 };
typedef struct {
    int kind;          /* 0..NMOVE-1: data movement; NMOVE: allreduce; +1: minloc; +2: barrier;
                        * +3: data movement with duplicates of its types, freed while it runs */
    mv_t m;
    rep_t own_s, own_r;
    double a[NB], b[NB];
    struct { double v; int i; } pa[4], pb[4];
} nb_t;

static void nb_start(nb_t *c, int kind, int k, MPI_Comm comm, MPI_Request *R)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    if (kind < NMOVE) {
        mv_prepare(&c->m, kind, k, comm);
        mv_start(&c->m, comm, R);
    } else if (kind == NMOVE) {
        for (int j = 0; j < NB; j++) c->a[j] = me * j + k, c->b[j] = -1;
        MPI_Iallreduce(c->a, c->b, NB, MPI_DOUBLE, MPI_SUM, comm, R);
    } else if (kind == NMOVE + 1) {
        for (int j = 0; j < 4; j++) c->pa[j].v = pv(me, j, k), c->pa[j].i = me;
        MPI_Iallreduce(c->pa, c->pb, 4, MPI_DOUBLE_INT, MPI_MINLOC, comm, R);
    } else if (kind == NMOVE + 2) {
        MPI_Ibarrier(comm, R);
    } else {
        /* MPI lets a program free a type while a call that uses it runs */
        mv_prepare(&c->m, k % NMOVE, k, comm);
        c->own_s = *c->m.sr;
        c->own_r = *c->m.rr;
        MPI_Type_dup(c->m.sr->t, &c->own_s.t);
        MPI_Type_dup(c->m.rr->t, &c->own_r.t);
        c->m.sr = &c->own_s;
        c->m.rr = &c->own_r;
        mv_start(&c->m, comm, R);
        MPI_Type_free(&c->own_s.t);
        MPI_Type_free(&c->own_r.t);
        kind = k % NMOVE;
    }
    c->kind = kind;
    c->m.k = k;
    c->m.p = p;
}

static void nb_check(nb_t *c)
{
    int p = c->m.p, k = c->m.k;
    if (c->kind < NMOVE) {
        mv_check(&c->m);
    } else if (c->kind == NMOVE) {
        for (int j = 0; j < NB; j++)
            CHECK(c->b[j] == j * p * (p - 1) / 2.0 + (double)p * k, "iallreduce #%d [%d] = %g", k, j, c->b[j]);
    } else if (c->kind == NMOVE + 1) {
        for (int j = 0; j < 4; j++) {
            int v, loc;
            expect_loc(p, j, k, 0, &v, &loc);
            CHECK(c->pb[j].v == v && c->pb[j].i == loc, "iallreduce minloc #%d [%d]", k, j);
        }
    }
}

/* a small generator of our own (xorshift32): the same draws everywhere */
static unsigned draw(unsigned *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* complete all n, by a mix of the completion calls drawn from *seed */
static void complete(MPI_Request *rq, int n, unsigned *seed)
{
    int idx[NCOMM * PER], out, flag, left = n;
    MPI_Status st[NCOMM * PER];
    while (left > 0) {
        int how = (int)(draw(seed) % 8), i = (int)(draw(seed) % (unsigned)n);
        switch (how) {
        case 0: MPI_Waitall(n, rq, st); break;
        case 1: MPI_Testsome(n, rq, &out, idx, st); break;
        case 2: MPI_Waitsome(n, rq, &out, idx, st); break;
        case 3: MPI_Waitany(n, rq, &out, MPI_STATUS_IGNORE); break;
        case 4: MPI_Testany(n, rq, &out, &flag, MPI_STATUS_IGNORE); break;
        case 5: MPI_Testall(n, rq, &flag, st); break;
        case 6: MPI_Wait(&rq[i], MPI_STATUS_IGNORE); break;
        default: MPI_Test(&rq[i], &flag, MPI_STATUS_IGNORE);
        }
        left = 0;
        for (int j = 0; j < n; j++) left += rq[j] != MPI_REQUEST_NULL;
    }
}

static void storm(void)
{
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm comm[NCOMM];
    for (int c = 0; c < NCOMM; c++) MPI_Comm_dup(MPI_COMM_WORLD, &comm[c]);
    unsigned seed = 12345u + 7919u * (unsigned)me;
    static nb_t calls[NCOMM * PER];
    MPI_Request rq[NCOMM * PER];
    for (int round = 0; round < ROUNDS; round++) {
        /* communicators in another order on every rank, each one's calls
         * in the same order everywhere */
        for (int ci = 0; ci < NCOMM; ci++) {
            int c = (ci + me) % NCOMM;
            for (int i = 0; i < PER; i++) {
                int slot = c * PER + i, k = 100 + round * 50 + slot;
                nb_start(&calls[slot], (slot + round) % (NMOVE + 4), k, comm[c], &rq[slot]);
            }
        }
        complete(rq, NCOMM * PER, &seed);
        for (int s = 0; s < NCOMM * PER; s++) nb_check(&calls[s]);
    }
    for (int c = 0; c < NCOMM; c++) MPI_Comm_free(&comm[c]);
}

int main(int argc, char **argv)
{
    int p;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    make_reps();
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, p - wrank, &rev);
    MPI_Comm comms[2] = {MPI_COMM_WORLD, rev};
    /* one case only: pmpi_conform movement|zero|pairs|reductions|bottom|storm|idup */
    const char *only = argc > 1 ? argv[1] : "";
#define CASE(name) (!*only || !strcmp(only, name))
    for (int c = 0; c < 2; c++) {
        if (CASE("movement")) movement(comms[c], c * 20);
        if (CASE("zero") && c == 0) {
            zero_counts(comms[c], 0);
            zero_counts(comms[c], 1);
        }
        if (CASE("pairs")) pairs(comms[c], c * 3, c == 0);
        if (CASE("reductions")) reductions(comms[c], c);
        if (CASE("bottom")) bottom(comms[c], 60 + 10 * c);
    }
    if (CASE("storm")) storm();
    if (CASE("idup")) {
        /* a communicator made without blocking: its state attached at MPI_Wait */
        MPI_Comm idc;
        MPI_Request rq;
        MPI_Comm_idup(MPI_COMM_WORLD, &idc, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        reductions(idc, 7);
        movement(idc, 40);
        MPI_Comm_free(&idc);
    }
    MPI_Comm_free(&rev);
    free_reps();
    int tot = 0;
    MPI_Allreduce(&nerr, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) printf("pmpi_conform: %d ranks, %d failures\n", p, tot);
    MPI_Finalize();
    return tot ? 1 : 0;
}
