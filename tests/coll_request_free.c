/* coll_request_free.c - hpc_request_free (MPI_Request_free semantics):
 *  - a freed request still completes in the background, advanced by other
 *    collectives, with the right result, and leaves the requests in flight;
 *  - ranks may free or wait for the same collective as they please;
 *  - freeing a request that has completed already, and NULL, work;
 *  - freed requests in flight when their communicator is freed are
 *    completed first (the result is there after MPI_Comm_free).
 * Runs at 2 and 3 ranks. */
#include "config.h"
#include "hpc_coll.h"
#include "coll/test_hooks.h"
#include "testlib.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 5000 };     /* several segments at HPC_COLL_SEGMENT=4K: many rounds */
static int rank, p;

/* Collectives until no rank has requests in flight.  Ours, not MPI's:
 * only calls into libhpc advance the requests in flight (a rank sitting
 * in MPI_Allreduce would starve a peer waiting for its freed request).
 * Returns how many it took. */
static int settle(MPI_Comm comm)
{
    int rounds = 0;
    for (;;) {
        int32_t mine = hpc_coll_test_in_flight(), most = 0;
        EXPECT(hpc_allreduce(&mine, &most, 1, HPC_INT32, HPC_MAX, comm, HPC_ALG_BUTTERFLY) == 0, "%s",
               hpc_last_error());
        if (!most || rounds == 100000) return rounds;
        rounds++;
    }
}

static void fill(double *x, int r, int n)
{
    for (int i = 0; i < n; i++) x[i] = r * 1000 + i;
}

/* sum over ranks of fill(), element i */
static double sum(int i)
{
    return 1000.0 * p * (p - 1) / 2 + (double)p * i;
}

int main(int argc, char **argv)
{
    setenv("HPC_COLL_SEGMENT", "4K", 1);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm comm = MPI_COMM_WORLD;
    static double x[N], y[N], z[N], bx[N];
    hpc_request_t *req = NULL;

    /* NULL and the NULL request */
    EXPECT(hpc_request_free(NULL) == HPC_ERR_ARG, "NULL pointer");
    EXPECT(hpc_request_free(&req) == 0 && req == NULL, "NULL request");

    /* a freed allreduce completes while other collectives run */
    fill(x, rank, N);
    memset(y, 0, sizeof y);
    EXPECT(hpc_iallreduce(x, y, N, HPC_FLOAT64, HPC_SUM, comm, HPC_ALG_RING, &req) == 0, "%s",
           hpc_last_error());
    EXPECT(hpc_request_free(&req) == 0 && req == NULL, "free in flight");
    int rounds = settle(comm);
    EXPECT(hpc_coll_test_in_flight() == 0, "the freed request is still in flight after %d barriers", rounds);
    long bad = 0;
    for (int i = 0; i < N; i++) bad += y[i] != sum(i);
    EXPECT(bad == 0, "freed allreduce: %ld wrong elements", bad);

    /* the same collective freed on some ranks, waited for on others */
    fill(bx, rank == 0 ? 7 : -1, N);
    EXPECT(hpc_ibcast(bx, N, HPC_FLOAT64, 0, comm, HPC_ALG_TREE, &req) == 0, "%s", hpc_last_error());
    if (rank % 2) {
        EXPECT(hpc_wait(&req) == 0, "%s", hpc_last_error());
    } else {
        EXPECT(hpc_request_free(&req) == 0, "free");
    }
    settle(comm);
    bad = 0;
    for (int i = 0; i < N; i++) bad += bx[i] != 7000 + i;
    EXPECT(bad == 0, "bcast freed on even ranks: %ld wrong elements", bad);

    /* freeing what has completed already (count 0 completes at once) */
    EXPECT(hpc_iallreduce(NULL, NULL, 0, HPC_FLOAT64, HPC_SUM, comm, HPC_ALG_RING, &req) == 0, "start");
    EXPECT(hpc_request_free(&req) == 0 && req == NULL, "free completed");
    EXPECT(hpc_coll_test_in_flight() == 0, "completed request in flight");

    /* freed requests are finished before their communicator goes */
    MPI_Comm dup;
    MPI_Comm_dup(comm, &dup);
    fill(x, rank, N);
    memset(z, 0, sizeof z);
    hpc_request_t *r2[2];
    EXPECT(hpc_iallreduce(x, z, N, HPC_FLOAT64, HPC_SUM, dup, HPC_ALG_RABENSEIFNER, &r2[0]) == 0, "start");
    EXPECT(hpc_ibarrier(dup, HPC_ALG_TREE, &r2[1]) == 0, "start");
    EXPECT(hpc_request_free(&r2[0]) == 0 && hpc_request_free(&r2[1]) == 0, "free");
    MPI_Comm_free(&dup);
    EXPECT(hpc_coll_test_in_flight() == 0, "requests of a freed communicator in flight");
    bad = 0;
    for (int i = 0; i < N; i++) bad += z[i] != sum(i);
    EXPECT(bad == 0, "allreduce freed, then its communicator: %ld wrong elements", bad);

    long mine = test_failures, tot = 0;
    MPI_Reduce(&mine, &tot, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("coll_request_free: %d ranks, %ld failures\n", p, tot);
    MPI_Finalize();
    return rank == 0 && tot ? 1 : 0;
}
