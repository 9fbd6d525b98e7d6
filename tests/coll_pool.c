/* coll_pool.c - the scratch pool shrinks: with HPC_COLL_POOL_MAX=64K and
 * HPC_COLL_POOL_IDLE=0.5 it keeps what a small collective used, never
 * more than the cap (a larger scratch buffer is freed, not kept), and
 * frees what sat unused for longer than the idle time at its next use.
 * Results are checked too.  Runs at 2 ranks. */
#include "config.h"
#include "hpc_coll.h"
#include "coll/test_hooks.h"
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int rank, p;

static void allreduce(size_t n)
{
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) x[i] = (float)(i % 7);
    EXPECT(hpc_allreduce(x, y, n, HPC_FLOAT32, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_RING) == 0, "%s",
           hpc_last_error());
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += y[i] != (float)(p * (int)(i % 7));
    EXPECT(bad == 0, "allreduce of %zu: %zu wrong", n, bad);
    free(x);
    free(y);
}

int main(int argc, char **argv)
{
    /* read on first use: set before the first collective */
    setenv("HPC_COLL_POOL_MAX", "64K", 1);
    setenv("HPC_COLL_POOL_IDLE", "0.5", 1);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const size_t cap = 64 * 1024;

    allreduce(4096);      /* ring: 4 segments of 2048 floats = 32 KiB of scratch */
    size_t small = hpc_coll_test_pool_bytes(MPI_COMM_WORLD);
    EXPECT(small > 0 && small <= cap, "after a 16 KiB allreduce the pool holds %zu bytes", small);
    allreduce(1 << 20);   /* 512 KiB of scratch: more than the cap, not kept */
    size_t big = hpc_coll_test_pool_bytes(MPI_COMM_WORLD);
    EXPECT(big <= cap, "after a 4 MiB allreduce the pool holds %zu bytes (cap %zu)", big, cap);
    allreduce(4096);      /* reuses what is there */
    EXPECT(hpc_coll_test_pool_bytes(MPI_COMM_WORLD) <= cap, "cap");

    usleep(800 * 1000);   /* longer than HPC_COLL_POOL_IDLE */
    EXPECT(hpc_barrier(MPI_COMM_WORLD, HPC_ALG_LINEAR) == 0, "%s", hpc_last_error());
    size_t after = hpc_coll_test_pool_bytes(MPI_COMM_WORLD);
    EXPECT(after < small && after <= 64, "after an idle time the pool holds %zu bytes (was %zu)", after, small);

    long mine = test_failures, tot = 0;
    MPI_Reduce(&mine, &tot, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("coll_pool: %d ranks, pool %zu -> %zu -> %zu bytes, %ld failures\n", p, small, big, after, tot);
    MPI_Finalize();
    return rank == 0 && tot ? 1 : 0;
}
