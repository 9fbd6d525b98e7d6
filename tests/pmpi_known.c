/* pmpi_known.c - a plain MPI program (no hpckit header) that checks the
 * collectives libhpc-mpi.so takes over against known answers: many types
 * (served ones, a derived one served as bytes, and ones that fall
 * through: unsigned reductions, MPI_BAND, odd byte counts), ops, counts
 * (0 to 1000), roots, in place, MPI_COMM_WORLD, a reversed and a split
 * communicator, and nonblocking mixes completed with MPI_Waitall,
 * MPI_Wait, MPI_Test polling and MPI_Waitany.  tests/pmpi.sh runs it
 * with and without LD_PRELOAD.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi_check.h"

typedef struct { MPI_Datatype t; const char *name; int size, isfloat, isunsigned; } ty_t;

static ty_t types[] = {
    {0, "int", sizeof(int), 0, 0},        {0, "long", sizeof(long), 0, 0},
    {0, "long long", 8, 0, 0},            {0, "int64_t", 8, 0, 0},
    {0, "float", 4, 1, 0},                {0, "double", 8, 1, 0},
    {0, "unsigned", 4, 0, 1},             {0, "short", 2, 0, 0},
};
enum { NTY = 8 };

static void put(const ty_t *t, void *b, size_t j, long v)
{
    switch (t->size) {
    case 2: ((short *)b)[j] = (short)v; break;
    case 4:
        if (t->isfloat) ((float *)b)[j] = (float)v;
        else ((int32_t *)b)[j] = (int32_t)v;
        break;
    default:
        if (t->isfloat) ((double *)b)[j] = (double)v;
        else ((int64_t *)b)[j] = v;
    }
}

static long get(const ty_t *t, const void *b, size_t j)
{
    switch (t->size) {
    case 2: return ((const short *)b)[j];
    case 4: return t->isfloat ? (long)((const float *)b)[j] : t->isunsigned ? (long)((const uint32_t *)b)[j] : ((const int32_t *)b)[j];
    default: return t->isfloat ? (long)((const double *)b)[j] : (long)((const int64_t *)b)[j];
    }
}

/* rank r's element j in call k: small, exact in every type; prod: 1 or 2 */
static long val(int r, size_t j, int k, MPI_Op op)
{
    if (op == MPI_PROD) return 1 + (long)((r + j + (size_t)k) % 2);
    return (long)(r + 1) * 3 + (long)((j * 7 + (size_t)k) % 11);
}

static long fold(MPI_Op op, size_t j, int k, int p)
{
    long acc = val(0, j, k, op);
    for (int r = 1; r < p; r++) {
        long v = val(r, j, k, op);
        if (op == MPI_SUM) acc += v;
        else if (op == MPI_PROD) acc *= v;
        else if (op == MPI_MIN) acc = v < acc ? v : acc;
        else if (op == MPI_MAX) acc = v > acc ? v : acc;
        else acc &= v;
    }
    return acc;
}

static void *fill(const ty_t *t, size_t n, int r, int k, MPI_Op op)
{
    char *b = malloc(n * (size_t)t->size + 16);
    for (size_t j = 0; j < n; j++) put(t, b, j, val(r, j, k, op));
    return b;
}

/* ---- reductions ----------------------------------------------------- */
static void reductions(MPI_Comm comm, int k)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_BAND};
    size_t counts[] = {0, 1, 3, 17, 1000};
    for (int ti = 0; ti < NTY; ti++)
        for (int oi = 0; oi < 5; oi++) {
            const ty_t *t = &types[ti];
            MPI_Op op = ops[oi];
            if (t->isfloat && op == MPI_BAND) continue;
            for (int ci = 0; ci < 5; ci++, k++) {
                size_t n = counts[ci];
                int root = k % p, inplace = k % 3 == 0;
                void *in = fill(t, n * (size_t)p, me, k, op), *out = calloc(n * (size_t)p + 2, (size_t)t->size);
                /* allreduce */
                if (inplace) memcpy(out, in, n * (size_t)t->size);
                MPI_Allreduce(inplace ? MPI_IN_PLACE : in, out, (int)n, t->t, op, comm);
                for (size_t j = 0; j < n; j++)
                    CHECK(get(t, out, j) == fold(op, j, k, p), "allreduce %s n=%zu [%zu] %ld != %ld", t->name, n, j,
                          get(t, out, j), fold(op, j, k, p));
                /* reduce */
                memset(out, 0, n * (size_t)t->size);
                /* (MPICH 4.0.2's own MPI_Reduce crashes in place at a root other
                 * than 0 with 1000 elements: in place only at root 0) */
                int ip = inplace && me == root && root == 0;
                if (ip) memcpy(out, in, n * (size_t)t->size);
                MPI_Reduce(ip ? MPI_IN_PLACE : in, out, (int)n, t->t, op, root, comm);
                for (size_t j = 0; me == root && j < n; j++)
                    CHECK(get(t, out, j) == fold(op, j, k, p), "reduce %s n=%zu root=%d [%zu]", t->name, n, root, j);
                /* reduce_scatter_block: block me of rank r's p*n elements */
                char *rs = fill(t, n * (size_t)p, me, k, op);
                void *rout = calloc(n + 1, (size_t)t->size);
                if (inplace) MPI_Reduce_scatter_block(MPI_IN_PLACE, rs, (int)n, t->t, op, comm);
                else MPI_Reduce_scatter_block(rs, rout, (int)n, t->t, op, comm);
                for (size_t j = 0; j < n; j++) {
                    long want = fold(op, (size_t)me * n + j, k, p);
                    CHECK(get(t, inplace ? (void *)rs : rout, j) == want, "reduce_scatter %s n=%zu [%zu]", t->name, n, j);
                }
                free(rs);
                free(rout);
                free(in);
                free(out);
            }
        }
}

/* ---- data movement --------------------------------------------------- */
static void movement(MPI_Comm comm, int k)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    MPI_Datatype contig;
    MPI_Type_contiguous(2, MPI_INT, &contig);   /* derived: served as bytes */
    MPI_Type_commit(&contig);
    ty_t all[NTY + 2];
    memcpy(all, types, sizeof types);
    all[NTY] = (ty_t){MPI_CHAR, "char", 1, 0, 0};
    all[NTY + 1] = (ty_t){contig, "contig", 8, 0, 0};
    size_t counts[] = {0, 1, 4, 13, 256};
    for (int ti = 0; ti < NTY + 2; ti++)
        for (int ci = 0; ci < 5; ci++, k++) {
            const ty_t *t = &all[ti];
            size_t n = counts[ci], es = (size_t)t->size, pn = n * (size_t)p;
            int root = (k * 5) % p, inplace = k % 2;
            /* chars carry val % 100 (fits), contig: pairs of ints */
            size_t per = ti == NTY + 1 ? 2 : 1;   /* ints per element */
            ty_t v = ti == NTY + 1 ? types[0] : *t;
            if (ti == NTY) v = (ty_t){MPI_CHAR, "char", 1, 0, 0};
#define PUT(b, j, x) (ti == NTY ? (void)(((char *)(b))[j] = (char)((x) % 100)) : put(&v, b, j, x))
#define GET(b, j) (ti == NTY ? (long)((char *)(b))[j] : get(&v, b, j))
#define VAL(r, j) (ti == NTY ? val(r, j, k, MPI_SUM) % 100 : val(r, j, k, MPI_SUM))
            char *in = malloc(pn * es + 8), *out = malloc(pn * es + 8);
            for (size_t j = 0; j < pn * per; j++) PUT(in, j, val(me, j, k, MPI_SUM));
            /* bcast */
            for (size_t j = 0; j < n * per; j++) PUT(out, j, me == root ? val(me, j, k, MPI_SUM) : -1);
            MPI_Bcast(out, (int)n, t->t, root, comm);
            for (size_t j = 0; j < n * per; j++) CHECK(GET(out, j) == VAL(root, j), "bcast %s n=%zu", t->name, n);
            /* allgather: block r = rank r's first n elements */
            if (inplace)
                for (size_t j = 0; j < n * per; j++) PUT(out, (size_t)me * n * per + j, val(me, j, k, MPI_SUM));
            MPI_Allgather(inplace ? MPI_IN_PLACE : in, (int)n, t->t, out, (int)n, t->t, comm);
            for (size_t j = 0; j < pn * per; j++)
                CHECK(GET(out, j) == VAL((int)(j / (n * per)), j % (n * per)), "allgather %s n=%zu [%zu]", t->name, n, j);
            /* gather */
            int ip = inplace && me == root;
            if (ip)
                for (size_t j = 0; j < n * per; j++) PUT(out, (size_t)me * n * per + j, val(me, j, k, MPI_SUM));
            MPI_Gather(ip ? MPI_IN_PLACE : in, (int)n, t->t, out, (int)n, t->t, root, comm);
            for (size_t j = 0; me == root && j < pn * per; j++)
                CHECK(GET(out, j) == VAL((int)(j / (n * per)), j % (n * per)), "gather %s n=%zu", t->name, n);
            /* scatter: rank r gets the root's block r */
            MPI_Scatter(in, (int)n, t->t, ip ? MPI_IN_PLACE : out, (int)n, t->t, root, comm);
            for (size_t j = 0; !ip && j < n * per; j++)
                CHECK(GET(out, j) == VAL(root, (size_t)me * n * per + j), "scatter %s n=%zu", t->name, n);
            /* alltoall: block r from rank r's block me */
            MPI_Alltoall(in, (int)n, t->t, out, (int)n, t->t, comm);
            for (size_t j = 0; j < pn * per; j++) {
                int from = (int)(j / (n * per));
                CHECK(GET(out, j) == VAL(from, (size_t)me * n * per + j % (n * per)), "alltoall %s n=%zu", t->name, n);
            }
            free(in);
            free(out);
        }
    MPI_Type_free(&contig);
}

/* ---- nonblocking mixes ------------------------------------------------ */
static void mix(MPI_Comm comm, int how)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    enum { N = 12, C = 9 };
    MPI_Request rq[N];
    MPI_Status st[N];   /* (GCC misreads MPICH's MPI_STATUSES_IGNORE) */
    long a[N][C * 8], b[N][C * 8];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < C * 8; j++) a[i][j] = val(me, (size_t)j, i, MPI_SUM), b[i][j] = -1;
    for (int i = 0; i < N; i++) {
        switch (i % 4) {
        case 0: MPI_Iallreduce(a[i], b[i], C, MPI_LONG, MPI_SUM, comm, &rq[i]); break;
        case 1:
            if (me == i % p) memcpy(b[i], a[i], sizeof a[i]);
            MPI_Ibcast(b[i], C, MPI_LONG, i % p, comm, &rq[i]);
            break;
        case 2: MPI_Iallgather(a[i], 1, MPI_LONG, b[i], 1, MPI_LONG, comm, &rq[i]); break;
        default: MPI_Ibarrier(comm, &rq[i]); break;
        }
    }
    if (how == 0) {
        MPI_Waitall(N, rq, st);
    } else if (how == 1) {
        for (int i = N - 1; i >= 0; i--) MPI_Wait(&rq[i], MPI_STATUS_IGNORE);
    } else if (how == 2) {
        for (int left = N; left;)
            for (int i = 0; i < N; i++) {
                int f = 0;
                if (rq[i] == MPI_REQUEST_NULL) continue;
                MPI_Test(&rq[i], &f, MPI_STATUS_IGNORE);
                left -= f;
            }
    } else {
        for (int i = 0; i < N; i++) {
            int idx;
            MPI_Waitany(N, rq, &idx, MPI_STATUS_IGNORE);
        }
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < C; j++) {
            long want = i % 4 == 0 ? fold(MPI_SUM, (size_t)j, i, p) : i % 4 == 1 ? val(i % p, (size_t)j, i, MPI_SUM)
                      : i % 4 == 2 && j < p ? val(j, 0, i, MPI_SUM) : -1;
            if (i % 4 == 3 || (i % 4 == 2 && j >= p)) continue;
            CHECK(b[i][j] == want, "mix %d call %d [%d]: %ld != %ld", how, i, j, b[i][j], want);
        }
}

int main(int argc, char **argv)
{
    int p;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    types[0].t = MPI_INT; types[1].t = MPI_LONG; types[2].t = MPI_LONG_LONG; types[3].t = MPI_INT64_T;
    types[4].t = MPI_FLOAT; types[5].t = MPI_DOUBLE; types[6].t = MPI_UNSIGNED; types[7].t = MPI_SHORT;
    MPI_Comm rev, half;
    MPI_Comm_split(MPI_COMM_WORLD, 0, p - wrank, &rev);
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &half);
    MPI_Comm comms[] = {MPI_COMM_WORLD, rev, half};
    for (int c = 0; c < 3; c++) {
        reductions(comms[c], c * 1000);
        movement(comms[c], c * 1000 + 500);
        for (int how = 0; how < 4; how++) mix(comms[c], how);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&half);
    int tot = 0;
    MPI_Allreduce(&nerr, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) printf("pmpi_known: %d ranks, %d failures\n", p, tot);
    MPI_Finalize();
    return tot ? 1 : 0;
}
