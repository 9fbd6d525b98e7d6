/* pmpi_probe.c - a plain MPI program (no hpckit header, linked with MPI
 * only) with the probes that found the drop-in's defects of issue 32;
 * tests/pmpi.sh runs each with and without LD_PRELOAD=libhpc-mpi.so.
 *
 *   pmpi_probe idup    communicators made by MPI_Comm_idup, their requests
 *                      completed by Waitall, Wait, Testany and Waitsome,
 *                      one completed only after a barrier on another
 *                      communicator; then the first calls on two of them
 *                      started in another order on odd ranks (MPI allows
 *                      it: only each communicator's order must agree;
 *                      once: a hang, each rank in a hidden set-up of
 *                      another communicator), checked against known
 *                      answers
 *   pmpi_probe window  a window of 20 nonblocking allreduces kept full for
 *                      2000 calls, completed by MPI_Testany (nonblocking3's
 *                      pattern); pmpi.sh runs it with ring forced (so
 *                      that libhpc serves them) and reads the drop-in's
 *                      passes over its calls in flight (once: every one of
 *                      them advanced each time each was tested, n squared
 *                      per completion call)
 *   pmpi_probe small [ITERS [NAME]]  a benchmark, not a test: microseconds per
 *                      call of each data-movement collective and the
 *                      reductions at 8 bytes a rank (the best of 5
 *                      rounds of ITERS calls, default 20000), and of
 *                      nonblocking ones started and waited for one at a
 *                      time; run it with and without the drop-in, on a
 *                      quiet machine
 *   pmpi_probe comms   MPI_Comm_dup until MPI says no (errors returned),
 *                      at most 4096; prints "comms N"; a collective on
 *                      the last one made still works (once: 510 under the
 *                      drop-in against 2046 plain with MPICH, and the
 *                      job aborted by the drop-in's own failed duplicate)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi_check.h"

static int wsize;

/* two communicators made by MPI_Comm_idup, completed the way way asks */
static void make_two(MPI_Comm *a, MPI_Comm *b, int way)
{
    MPI_Request r[2];
    MPI_Status st[2];
    int flag = 0, idx, out, got[2];
    MPI_Comm_idup(MPI_COMM_WORLD, a, &r[0]);
    MPI_Comm_idup(MPI_COMM_WORLD, b, &r[1]);
    switch (way) {
    case 0: MPI_Waitall(2, r, st); break;
    case 1:
        MPI_Wait(&r[1], MPI_STATUS_IGNORE);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        break;
    case 2:
        for (int left = 2; left > 0;) {
            MPI_Testany(2, r, &idx, &flag, MPI_STATUS_IGNORE);
            if (flag && idx != MPI_UNDEFINED) left--;
        }
        break;
    default:
        /* the requests completed late: another communicator's barrier
         * first, which every rank must reach */
        MPI_Barrier(MPI_COMM_WORLD);
        for (int left = 2; left > 0; left -= out == MPI_UNDEFINED ? 0 : out)
            MPI_Waitsome(2, r, &out, got, st);
    }
}

static void idup(void)
{
    for (int way = 0; way < 4; way++) {
        MPI_Comm a, b;
        make_two(&a, &b, way);
        /* the first calls on a and b, in another order on odd ranks */
        long x[8], sum[8], y[8];
        for (int j = 0; j < 8; j++) x[j] = wrank * 10 + j, sum[j] = -1, y[j] = wrank == 1 % wsize ? 100 + j : -1;
        MPI_Request r[2];
        if (wrank % 2) {
            MPI_Ibcast(y, 8, MPI_LONG, 1 % wsize, b, &r[1]);
            MPI_Iallreduce(x, sum, 8, MPI_LONG, MPI_SUM, a, &r[0]);
        } else {
            MPI_Iallreduce(x, sum, 8, MPI_LONG, MPI_SUM, a, &r[0]);
            MPI_Ibcast(y, 8, MPI_LONG, 1 % wsize, b, &r[1]);
        }
        MPI_Status st[2];
        MPI_Waitall(2, r, st);
        for (int j = 0; j < 8; j++) {
            CHECK(sum[j] == 10L * wsize * (wsize - 1) / 2 + (long)wsize * j, "idup way %d: allreduce [%d] = %ld", way,
                  j, sum[j]);
            CHECK(y[j] == 100 + j, "idup way %d: bcast [%d] = %ld", way, j, y[j]);
        }
        /* blocking calls on both, in one order */
        long one = 1, n = 0;
        MPI_Allreduce(&one, &n, 1, MPI_LONG, MPI_SUM, b);
        CHECK(n == wsize, "idup way %d: blocking allreduce on b: %ld", way, n);
        MPI_Barrier(a);
        MPI_Comm_free(&a);
        MPI_Comm_free(&b);
    }
}

enum { MAXCOMMS = 4096 };

static void comms(void)
{
    MPI_Comm *c = malloc(MAXCOMMS * sizeof *c);
    int n = 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    while (n < MAXCOMMS && MPI_Comm_dup(MPI_COMM_WORLD, &c[n]) == MPI_SUCCESS) n++;
    /* every rank made as many */
    int lo = n, hi = n;
    MPI_Allreduce(&n, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&n, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lo == hi, "ranks made %d to %d communicators", lo, hi);
    if (n > 0) {
        int one = 1, sum = 0;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c[n - 1]);
        CHECK(sum == wsize, "allreduce on the last communicator: %d", sum);
    }
    for (int i = n - 1; i >= 0; i--) MPI_Comm_free(&c[i]);
    free(c);
    if (wrank == 0) printf("comms %d\n", n);
}

/* ---- window: nonblocking calls kept in flight --------------------------- */
enum { WIN = 20, WCALLS = 2000 };

static void window(void)
{
    MPI_Request q[WIN];
    long x[WIN][4], y[WIN][4];
    int started = 0, done = 0, tests = 0;
    for (int i = 0; i < WIN; i++, started++) {
        for (int j = 0; j < 4; j++) x[i][j] = started + j;
        MPI_Iallreduce(x[i], y[i], 4, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &q[i]);
    }
    int tag[WIN];
    for (int i = 0; i < WIN; i++) tag[i] = i;
    while (done < WCALLS) {
        int idx, flag = 0;
        MPI_Testany(WIN, q, &idx, &flag, MPI_STATUS_IGNORE);
        tests++;
        if (!flag || idx == MPI_UNDEFINED) continue;
        for (int j = 0; j < 4; j++)
            CHECK(y[idx][j] == (long)wsize * (tag[idx] + j), "window: call %d [%d] = %ld", tag[idx], j, y[idx][j]);
        done++;
        if (started < WCALLS) {
            tag[idx] = started;
            for (int j = 0; j < 4; j++) x[idx][j] = started + j;
            MPI_Iallreduce(x[idx], y[idx], 4, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &q[idx]);
            started++;
        }
    }
    if (wrank == 0) printf("window: %d calls, %d MPI_Testany on rank 0\n", done, tests);
}

/* ---- small: microseconds per call at 8 bytes ---------------------------- */
enum { NSMALL = 7 };
static const char *small_name[NSMALL] = {"bcast", "allgather", "alltoall", "reduce_scatter_block", "allreduce",
                                          "reduce", "barrier"};

static void small_call(int k, int nb, long *s, long *r)
{
    MPI_Request q;
    MPI_Comm w = MPI_COMM_WORLD;
    switch (k) {
    case 0: nb ? MPI_Ibcast(r, 1, MPI_LONG, 0, w, &q) : MPI_Bcast(r, 1, MPI_LONG, 0, w); break;
    case 1: nb ? MPI_Iallgather(s, 1, MPI_LONG, r, 1, MPI_LONG, w, &q) : MPI_Allgather(s, 1, MPI_LONG, r, 1, MPI_LONG, w); break;
    case 2: nb ? MPI_Ialltoall(s, 1, MPI_LONG, r, 1, MPI_LONG, w, &q) : MPI_Alltoall(s, 1, MPI_LONG, r, 1, MPI_LONG, w); break;
    case 3:
        nb ? MPI_Ireduce_scatter_block(s, r, 1, MPI_LONG, MPI_SUM, w, &q)
           : MPI_Reduce_scatter_block(s, r, 1, MPI_LONG, MPI_SUM, w);
        break;
    case 4: nb ? MPI_Iallreduce(s, r, 1, MPI_LONG, MPI_SUM, w, &q) : MPI_Allreduce(s, r, 1, MPI_LONG, MPI_SUM, w); break;
    case 5: nb ? MPI_Ireduce(s, r, 1, MPI_LONG, MPI_SUM, 0, w, &q) : MPI_Reduce(s, r, 1, MPI_LONG, MPI_SUM, 0, w); break;
    default: nb ? MPI_Ibarrier(w, &q) : MPI_Barrier(w);
    }
    if (nb) MPI_Wait(&q, MPI_STATUS_IGNORE);
}

static void small(int iters, const char *only)
{
    long *s = calloc((size_t)wsize, sizeof *s), *r = calloc((size_t)wsize, sizeof *r);
    for (int nb = 0; nb < 2; nb++)
        for (int k = 0; k < NSMALL; k++) {
            if (only && strcmp(only, small_name[k])) continue;
            double best = 1e30;
            for (int rep = 0; rep < 5; rep++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                for (int i = 0; i < iters; i++) small_call(k, nb, s, r);
                double t = (MPI_Wtime() - t0) / iters, most = t;
                MPI_Allreduce(&t, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                if (most < best) best = most;
            }
            if (wrank == 0) printf("small %s%s %.3f us\n", nb ? "i" : "", small_name[k], best * 1e6);
        }
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "idup")) idup();
    else if (!strcmp(what, "comms")) comms();
    else if (!strcmp(what, "window")) window();
    else if (!strcmp(what, "small")) small(argc > 2 ? atoi(argv[2]) : 20000, argc > 3 ? argv[3] : NULL);
    else {
        if (wrank == 0) fprintf(stderr, "usage: pmpi_probe idup|window|comms|small [ITERS [NAME]]\n");
        MPI_Finalize();
        return 2;
    }
    int tot = 0;
    MPI_Allreduce(&nerr, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) printf("pmpi_probe %s: %d ranks, %d failures\n", what, wsize, tot);
    MPI_Finalize();
    return tot ? 1 : 0;
}
