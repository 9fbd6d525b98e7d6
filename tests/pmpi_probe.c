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

static int wrank, wsize, nerr;

#define CHECK(cond, ...)                                                            \
    do {                                                                            \
        if (!(cond) && nerr++ < 20) {                                               \
            fprintf(stderr, "rank %d: %s:%d: ", wrank, __FILE__, __LINE__);         \
            fprintf(stderr, __VA_ARGS__);                                           \
            fputc('\n', stderr);                                                    \
        }                                                                           \
    } while (0)

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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "idup")) idup();
    else if (!strcmp(what, "comms")) comms();
    else {
        if (wrank == 0) fprintf(stderr, "usage: pmpi_probe idup|comms\n");
        MPI_Finalize();
        return 2;
    }
    int tot = 0;
    MPI_Allreduce(&nerr, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) printf("pmpi_probe %s: %d ranks, %d failures\n", what, wsize, tot);
    MPI_Finalize();
    return tot ? 1 : 0;
}
