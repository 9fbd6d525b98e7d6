/* coll_ops.c - every collective x algorithm x dtype x op x in/out-of-place
 * x blocking/nonblocking, against the MPI library's own collective.
 *
 * Per (collective, algorithm) one batch of cases: the blocking ones run
 * one by one; the nonblocking ones are all started at once (dozens of
 * requests in flight on one communicator), a blocking barrier runs while
 * they are in flight, and then even ranks wait for them in order while odd
 * ranks poll them with hpc_test in reverse order.  Counts cycle through 0,
 * 1, fewer than the rank count, odd, and a few segments' worth; roots
 * through 0, p-1 and p/2.  The reference is MPI's collective on the same
 * data (MPI_Allreduce in double / int64 for reductions, MPI_Allgather of
 * the inputs for data movement), integers, min and max must
 * match exactly, floating-point sums within (p-1) u sum|x| + u |ref|, the
 * classic bound for any order of p-1 roundings (u of the element type).
 * Half of the collectives run on a communicator whose rank order is the
 * reverse of MPI_COMM_WORLD's.
 *
 * At 3 and 7 ranks HPC_COLL_SEGMENT=64, so segmented pipelines are tested.
 * Built as coll_split (-DCOLL_SPLIT), the limits meant for messages over
 * 2 GiB are lowered to 24-byte messages and 5-element MPI calls, so every
 * case runs with its steps cut into pieces and native's calls split or
 * given a big datatype - and the test checks that this happened.
 * Environment: COLL_ONLY=allreduce[,ring] restricts to one collective
 * (and algorithm; all,hier: that algorithm of every collective), COLL_VERBOSE=1 prints each batch.
 */
#include "config.h"
#include "hpc_coll.h"
#include "coll_testlib.h"
#include "coll/test_hooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    hpc_coll_args_t a;
    int inplace, nb, id;
    size_t sc, rc, ralloc;      /* logical send / receive elements, recvbuf size */
    void *in;                   /* this rank's logical input (sc elements) */
    void *rbuf;                 /* receive buffer (or in-place buffer) */
    void *sbuf;                 /* out-of-place send buffer */
    double *ref, *sabs;         /* reductions: expected, sum |x| */
    unsigned char *bref;        /* data movement: expected bytes */
    hpc_request_t *req;
} tcase_t;

static int rank, p;
static long nerr, ncases;
static int verbose;

#define FAIL(c, ...)                                                           \
    do {                                                                       \
        if (nerr++ < 20) {                                                     \
            fprintf(stderr, "rank %d: %s/%s %s %s%s%s n=%zu root=%d %s %s: ", rank, \
                    hpc_coll_name((c)->a.coll), hpc_alg_name((c)->a.alg),      \
                    hpc_dtype_name((c)->a.dtype),                              \
                    hpc_coll_reduces((c)->a.coll) ? hpc_op_name((c)->a.op) : "", "", "", \
                    (c)->a.count, (c)->a.root, (c)->inplace ? "in-place" : "out-of-place", \
                    (c)->nb ? "nonblocking" : "blocking");                     \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
        }                                                                      \
    } while (0)

static MPI_Op mpi_op(hpc_op_t op)
{
    switch (op) {
    case HPC_PROD: return MPI_PROD;
    case HPC_MIN: return MPI_MIN;
    case HPC_MAX: return MPI_MAX;
    default: return MPI_SUM;
    }
}

static int is_int(hpc_dtype_t t)
{
    return t == HPC_INT32 || t == HPC_INT64;
}

/* Set up one case: inputs, buffers, and the reference from MPI. */
static void setup(tcase_t *c)
{
    hpc_coll_args_t *a = &c->a;
    size_t n = a->count, es = hpc_dtype_size(a->dtype), pn = (size_t)p * n;
    int root = rank == a->root;
    hpc_coll_buf_counts(a, rank, p, &c->sc, &c->rc);
    if (a->coll == HPC_COLL_BCAST) c->sc = root ? n : 0;
    c->in = calloc(c->sc + 1, es);
    for (size_t j = 0; j < c->sc; j++)
        t_put(a->dtype, c->in, j, t_gen((uint64_t)c->id, rank, j, a->dtype, a->op));

    /* receive / in-place buffer */
    c->ralloc = c->rc;
    if (c->inplace) {
        switch (a->coll) {
        case HPC_COLL_REDUCE: c->ralloc = n; break;
        case HPC_COLL_REDUCE_SCATTER: c->ralloc = pn; break;
        default: break;
        }
    }
    c->rbuf = calloc(c->ralloc + 1, es);
    memset(c->rbuf, 0x5a, (c->ralloc + 1) * es);     /* poison */
    c->sbuf = calloc(c->sc + 1, es);
    memcpy(c->sbuf, c->in, c->sc * es);
    a->sendbuf = c->sbuf;
    a->recvbuf = c->ralloc ? c->rbuf : NULL;
    int alias = c->id & 1;    /* in place by HPC_IN_PLACE or by aliasing */
    char *rb = c->rbuf, *sb = c->sbuf;
    if (a->coll == HPC_COLL_BCAST) {
        a->sendbuf = NULL;
        if (root) memcpy(rb, c->in, n * es);
    } else if (c->inplace) {
        switch (a->coll) {
        case HPC_COLL_ALLREDUCE: case HPC_COLL_REDUCE: case HPC_COLL_REDUCE_SCATTER:
        case HPC_COLL_ALLTOALL:
            memcpy(rb, c->in, c->sc * es);
            a->sendbuf = alias ? rb : HPC_IN_PLACE;
            break;
        case HPC_COLL_ALLGATHER:
            memcpy(rb + (size_t)rank * n * es, c->in, n * es);
            a->sendbuf = alias ? rb + (size_t)rank * n * es : HPC_IN_PLACE;
            break;
        case HPC_COLL_GATHER:
            if (root) {
                memcpy(rb + (size_t)rank * n * es, c->in, n * es);
                a->sendbuf = alias ? rb + (size_t)rank * n * es : HPC_IN_PLACE;
            }
            break;
        case HPC_COLL_SCATTER:
            if (root) a->recvbuf = alias ? sb + (size_t)rank * n * es : HPC_IN_PLACE;
            break;
        default: break;
        }
    }

}

/* References for a whole batch from as few MPI calls as possible (each MPI
 * call costs milliseconds on an oversubscribed node): reductions by one
 * MPI_Allreduce per (integer or float, op) over all cases' inputs
 * concatenated, in int64 or double; data movement by one MPI_Allgather of
 * every rank's inputs, from which each case's expected bytes are cut. */
/* Does case t belong to reference batch (ints, k)?  k < 4: its op is
 * ops[k] (avg is checked as a sum); k == 4: the float sums, for sum |x|. */
static int in_batch(const tcase_t *t, int ints, int k, const hpc_op_t *ops)
{
    hpc_op_t op = t->a.op == HPC_AVG ? HPC_SUM : t->a.op;
    if (is_int(t->a.dtype) != ints) return 0;
    if (k < 4) return op == ops[k];
    return !ints && op == HPC_SUM;
}

static void make_refs(tcase_t *cs, int nc, MPI_Comm comm)
{
    hpc_coll_t coll = cs[0].a.coll;
    if (coll == HPC_COLL_BARRIER) return;
    if (hpc_coll_reduces(coll)) {
        for (int c = 0; c < nc; c++) {
            size_t L = coll == HPC_COLL_REDUCE_SCATTER ? (size_t)p * cs[c].a.count : cs[c].a.count;
            cs[c].ref = calloc(L + 1, sizeof(double));
            cs[c].sabs = calloc(L + 1, sizeof(double));
        }
        hpc_op_t ops[4] = {HPC_SUM, HPC_PROD, HPC_MIN, HPC_MAX};
        for (int ints = 0; ints < 2; ints++)
            for (int k = 0; k < 5; k++) {      /* k == 4: sum |x| of float sums */
                size_t tot = 0;
                for (int pass = 0; pass < 2; pass++) {
                    double *d = NULL, *dr = NULL;
                    int64_t *iv = NULL, *ir = NULL;
                    if (pass == 1) {
                        if (!tot) break;
                        d = calloc(tot, sizeof *d); dr = calloc(tot, sizeof *dr);
                        iv = calloc(tot, sizeof *iv); ir = calloc(tot, sizeof *ir);
                    }
                    size_t o = 0;
                    for (int c = 0; c < nc; c++) {
                        tcase_t *t = &cs[c];
                        if (!in_batch(t, ints, k, ops)) continue;
                        size_t L = t->sc;
                        for (size_t j = 0; pass == 1 && j < L; j++) {
                            double v = t_get(t->a.dtype, t->in, j);
                            d[o + j] = k == 4 ? fabs(v) : v;
                            iv[o + j] = (int64_t)v;
                        }
                        o += L;
                    }
                    if (pass == 0) {
                        tot = o;
                        continue;
                    }
                    MPI_Op mop = k == 4 ? MPI_SUM : mpi_op(ops[k]);
                    if (ints) MPI_Allreduce(iv, ir, (int)tot, MPI_INT64_T, mop, comm);
                    else MPI_Allreduce(d, dr, (int)tot, MPI_DOUBLE, mop, comm);
                    o = 0;
                    for (int c = 0; c < nc; c++) {
                        tcase_t *t = &cs[c];
                        if (!in_batch(t, ints, k, ops)) continue;
                        for (size_t j = 0; j < t->sc; j++) {
                            if (k == 4) {
                                t->sabs[j] = dr[o + j];
                                continue;
                            }
                            double v = ints ? (double)(t->a.op == HPC_AVG ? ir[o + j] / p : ir[o + j])
                                            : (t->a.op == HPC_AVG ? dr[o + j] / p : dr[o + j]);
                            t->ref[j] = v;
                        }
                        o += t->sc;
                    }
                    free(d); free(dr); free(iv); free(ir);
                }
            }
        return;
    }
    size_t es, tot = 0;
    size_t *off = calloc((size_t)nc, sizeof *off), *slot = calloc((size_t)nc, sizeof *slot);
    for (int c = 0; c < nc; c++) {
        es = hpc_dtype_size(cs[c].a.dtype);
        size_t n = cs[c].a.count;
        slot[c] = (coll == HPC_COLL_SCATTER || coll == HPC_COLL_ALLTOALL ? (size_t)p * n : n) * es;
        off[c] = tot;
        tot += slot[c];
    }
    unsigned char *mine = calloc(tot + 1, 1), *all = calloc((size_t)p * tot + 1, 1);
    for (int c = 0; c < nc; c++)
        memcpy(mine + off[c], cs[c].in, cs[c].sc * hpc_dtype_size(cs[c].a.dtype));
    MPI_Allgather(mine, (int)tot, MPI_BYTE, all, (int)tot, MPI_BYTE, comm);
    for (int c = 0; c < nc; c++) {
        tcase_t *t = &cs[c];
        size_t n = t->a.count, bytes = n * hpc_dtype_size(t->a.dtype);
        t->bref = calloc((size_t)p * bytes + 1, 1);
        const unsigned char *from = all + off[c];
        switch (coll) {
        case HPC_COLL_BCAST:
            memcpy(t->bref, from + (size_t)t->a.root * tot, bytes);
            break;
        case HPC_COLL_GATHER: case HPC_COLL_ALLGATHER:
            for (int r = 0; r < p; r++) memcpy(t->bref + (size_t)r * bytes, from + (size_t)r * tot, bytes);
            break;
        case HPC_COLL_SCATTER:
            memcpy(t->bref, from + (size_t)t->a.root * tot + (size_t)rank * bytes, bytes);
            break;
        case HPC_COLL_ALLTOALL:
            for (int r = 0; r < p; r++)
                memcpy(t->bref + (size_t)r * bytes, from + (size_t)r * tot + (size_t)rank * bytes, bytes);
            break;
        default: break;
        }
    }
    free(mine); free(all); free(off); free(slot);
}

static void check(tcase_t *c)
{
    hpc_coll_args_t *a = &c->a;
    size_t n = a->count, es = hpc_dtype_size(a->dtype);
    int root = rank == a->root;
    ncases++;
    /* out of place, the send buffer is input only */
    if (!c->inplace && c->sc && memcmp(c->sbuf, c->in, c->sc * es))
        FAIL(c, "sendbuf was modified");
    if (a->coll == HPC_COLL_BARRIER) return;
    if (hpc_coll_reduces(a->coll)) {
        if (a->coll == HPC_COLL_REDUCE && !root) {
            if (c->inplace && memcmp(c->rbuf, c->in, n * es)) FAIL(c, "non-root in-place input modified");
            return;
        }
        size_t off = a->coll == HPC_COLL_REDUCE_SCATTER ? (size_t)rank * n : 0;
        double u = t_unit(a->dtype);
        long bad = 0;
        for (size_t i = 0; i < n; i++) {
            double want = c->ref[off + i], got = t_get(a->dtype, c->rbuf, i), tol = 0;
            if (!is_int(a->dtype) && (a->op == HPC_SUM || a->op == HPC_AVG))
                tol = 1.01 * u * ((p - 1) * c->sabs[off + i] + fabs(want)) +
                      4.0 * p * 0x1p-53 * c->sabs[off + i];
            else if (!is_int(a->dtype) && a->op == HPC_PROD)
                tol = 1.01 * (p + 1) * (u + 0x1p-53) * fabs(want);
            if (!(fabs(got - want) <= tol)) {
                if (!bad)
                    FAIL(c, "element %zu = %.17g, MPI says %.17g (tolerance %.3g)", i, got, want, tol);
                bad++;
            }
        }
        return;
    }
    switch (a->coll) {
    case HPC_COLL_BCAST: case HPC_COLL_SCATTER:
        if (a->coll == HPC_COLL_SCATTER && root && c->inplace) {
            if (memcmp((char *)c->sbuf + (size_t)rank * n * es, c->bref, n * es))
                FAIL(c, "in-place root block changed");
        } else if (memcmp(c->rbuf, c->bref, n * es)) {
            FAIL(c, "received data differs from MPI's");
        }
        break;
    case HPC_COLL_GATHER:
        if (root && memcmp(c->rbuf, c->bref, (size_t)p * n * es)) FAIL(c, "gathered data differs from MPI's");
        break;
    case HPC_COLL_ALLGATHER: case HPC_COLL_ALLTOALL:
        if (memcmp(c->rbuf, c->bref, (size_t)p * n * es)) FAIL(c, "received data differs from MPI's");
        break;
    default: break;
    }
}

static void release(tcase_t *c)
{
    free(c->in); free(c->rbuf); free(c->sbuf); free(c->ref); free(c->sabs); free(c->bref);
}

static int next_id;

static void run_batch(hpc_coll_t coll, hpc_alg_t alg, MPI_Comm comm)
{
    size_t counts[] = {0, 1, (size_t)(p > 1 ? p - 1 : 2), 7, 33, 2};
    int roots[] = {0, p - 1, p / 2};
    int nop = hpc_coll_reduces(coll) ? HPC_OP_COUNT : 1;
    int ndt = coll == HPC_COLL_BARRIER ? 1 : HPC_DTYPE_COUNT;
    int nip = coll == HPC_COLL_BARRIER || coll == HPC_COLL_BCAST ? 1 : 2;
    int max = ndt * nop * nip * 2, nc = 0;
    tcase_t *cs = calloc((size_t)max, sizeof *cs);
    for (int dt = 0; dt < ndt; dt++)
        for (int op = 0; op < nop; op++)
            for (int ip = 0; ip < nip; ip++)
                for (int nb = 0; nb < 2; nb++) {
                    tcase_t *c = &cs[nc++];
                    c->id = next_id++;
                    c->inplace = ip;
                    c->nb = nb;
                    c->a.coll = coll;
                    c->a.alg = alg;
                    c->a.dtype = (hpc_dtype_t)dt;
                    c->a.op = (hpc_op_t)op;
                    c->a.count = coll == HPC_COLL_BARRIER ? 0 : counts[(unsigned)c->id % 6];
                    c->a.root = roots[(unsigned)c->id % 3];
                    setup(c);
                }
    make_refs(cs, nc, comm);
    /* blocking, one by one */
    for (int i = 0; i < nc; i++) {
        if (cs[i].nb) continue;
        int e = hpc_coll(&cs[i].a, comm);
        if (e < 0) FAIL(&cs[i], "failed: %s", hpc_last_error());
        else check(&cs[i]);
    }
    /* nonblocking, all in flight at once */
    for (int i = 0; i < nc; i++) {
        if (!cs[i].nb) continue;
        int e = hpc_icoll(&cs[i].a, comm, &cs[i].req);
        if (e < 0) FAIL(&cs[i], "start failed: %s", hpc_last_error());
    }
    if (hpc_barrier(comm, HPC_ALG_AUTO) < 0) fprintf(stderr, "rank %d: barrier: %s\n", rank, hpc_last_error());
    if (rank % 2 == 0) {
        for (int i = 0; i < nc; i++) {
            if (!cs[i].nb || !cs[i].req) continue;
            if (hpc_wait(&cs[i].req) < 0) FAIL(&cs[i], "wait failed: %s", hpc_last_error());
        }
    } else {
        int left = 1;
        while (left) {
            left = 0;
            for (int i = nc - 1; i >= 0; i--) {
                if (!cs[i].nb || !cs[i].req) continue;
                int done = 0;
                if (hpc_test(&cs[i].req, &done) < 0) FAIL(&cs[i], "test failed: %s", hpc_last_error());
                else if (!done) left = 1;
            }
        }
    }
    for (int i = 0; i < nc; i++)
        if (cs[i].nb) check(&cs[i]);
    for (int i = 0; i < nc; i++) release(&cs[i]);
    free(cs);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    verbose = getenv("COLL_VERBOSE") != NULL;
    /* at 3 and 7 ranks, 64-byte pipeline segments: the segmented paths of
     * ring, tree and halving then run with many segments even for the
     * tiny counts used here */
    if (p == 3 || p == 7) setenv("HPC_COLL_SEGMENT", "64", 0);
#ifdef COLL_SPLIT
    hpc_coll_test_limits(24, 5);
#endif
    const char *only = getenv("COLL_ONLY");
    char oc[64] = "", oa[64] = "";
    if (only) sscanf(only, "%63[^,],%63s", oc, oa);
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, p - 1 - rank, &rev);
    double t0 = MPI_Wtime();
    for (int c = 0; c < HPC_COLL_COUNT; c++) {
        if (*oc && strcmp(oc, "all") && strcmp(oc, hpc_coll_name((hpc_coll_t)c))) continue;
        for (int a = 0; a < HPC_ALG_COUNT; a++) {
            if (a == HPC_ALG_NCCL || !hpc_coll_has_alg((hpc_coll_t)c, (hpc_alg_t)a)) continue;
            if (*oa && strcmp(oa, hpc_alg_name((hpc_alg_t)a))) continue;
            MPI_Comm comm = (c + a) % 2 ? rev : MPI_COMM_WORLD;
            int rk;
            MPI_Comm_rank(comm, &rk);
            int save = rank;
            rank = rk;                      /* rank within the comm in use */
            double t = MPI_Wtime();
            run_batch((hpc_coll_t)c, (hpc_alg_t)a, comm);
            rank = save;
            if (verbose && rank == 0)
                printf("%-15s %-18s %6.2f s\n", hpc_coll_name((hpc_coll_t)c), hpc_alg_name((hpc_alg_t)a),
                       MPI_Wtime() - t);
        }
    }
#ifdef COLL_SPLIT
    long pieces = 0, native = 0;
    hpc_coll_test_split_counts(&pieces, &native);
    if (p > 1 && (pieces == 0 || native == 0)) {
        fprintf(stderr, "rank %d: nothing was split (%ld pieces, %ld native calls)\n", rank, pieces, native);
        nerr++;
    }
#endif
    long tot = 0, totc = 0;
    MPI_Reduce(&nerr, &tot, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&ncases, &totc, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d ranks: %ld checks, %ld failures, %.1f s\n",
#ifdef COLL_SPLIT
               "coll_split",
#else
               "coll_ops",
#endif
               p, totc, tot, MPI_Wtime() - t0);
    MPI_Comm_free(&rev);
    t_finalize();
    return rank == 0 && tot ? 1 : 0;
}
