/* coll_shm_moves.c - shm's allreduce by single copy (issue 29.2): one
 * system call per node mate and chunk, a chunk being 4 slots' worth per
 * rank (at most 2 MiB), its result kept in the segment for every rank to
 * copy out - not two calls per chunk, the second reading the mates'
 * results back (the design before, which read the results' lines twice
 * through memory).  Counted with the test hook on an 8 MiB float32
 * allreduce, out of place and in place; then single-copy calls and calls
 * through the segment in flight together (nonblocking, interleaved), the
 * entries wrapping around many times, and a 64 MiB result (beyond the
 * caches: streamed out), every result checked exactly.
 * Skips (77) where the kernel refuses single copy. */
#include "config.h"
#include "hpc_coll.h"
#include "coll/test_hooks.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, p;

/* x[i] = (rank + 1) * (i % 1000): sums exact in float32 */
static void fill(float *x, size_t n, int salt)
{
    for (size_t i = 0; i < n; i++) x[i] = (float)((rank + 1) * (int)((i + (size_t)salt) % 1000));
}

static long wrong(const float *y, size_t n, int salt)
{
    long bad = 0;
    double f = (double)p * (p + 1) / 2;
    for (size_t i = 0; i < n; i++) bad += y[i] != (float)(f * (double)((i + (size_t)salt) % 1000));
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int ranks = 0, cma = 0;
    if (hpc_coll_test_segment(MPI_COMM_WORLD, &ranks, &cma) < 0 || ranks != p || !cma) {
        if (rank == 0) printf("SKIP: %s\n", ranks != p ? "no shared segment over every rank" : "the kernel refuses single copy here");
        MPI_Finalize();
        return 77;
    }
    size_t n = (size_t)8 << 20 >> 2, bytes = n * sizeof(float);
    float *x = malloc(bytes), *y = malloc(bytes);
    if (!x || !y) MPI_Abort(MPI_COMM_WORLD, 1);
    /* a chunk: 4 slots of 64 KiB (HPC_COLL_SEGMENT's default 128K, at most
     * 64K) per rank, at most 2 MiB; one read per mate and chunk */
    size_t entry = (size_t)4 * (size_t)p * 65536, cap = (size_t)2 << 20;
    if (entry > cap) entry = cap;
    long want = (long)(p - 1) * (long)((bytes + entry - 1) / entry);
    for (int inplace = 0; inplace < 2; inplace++) {
        fill(inplace ? y : x, n, inplace);
        long before = hpc_coll_test_cma_moves();
        int e = hpc_allreduce(inplace ? HPC_IN_PLACE : x, y, n, HPC_FLOAT32, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_SHM);
        long moves = hpc_coll_test_cma_moves() - before;
        EXPECT(e == 0, "rank %d: allreduce: %s", rank, hpc_last_error());
        EXPECT(wrong(y, n, inplace) == 0, "rank %d: %s: %ld wrong elements", rank, inplace ? "in place" : "out of place",
               wrong(y, n, inplace));
        EXPECT(moves == want, "rank %d: %s, 8 MiB on %d ranks: %ld single copies, want %ld (one per mate and "
               "chunk of %zu bytes)", rank, inplace ? "in place" : "out of place", p, moves, want, entry);
    }
    /* a result the caches cannot keep (64 MiB a rank: beyond a Zen CCX's
     * 32 MiB of L3, written with streaming stores), in and out of place */
    size_t big = (size_t)64 << 20 >> 2;
    float *bx = malloc(big * sizeof(float)), *by = malloc(big * sizeof(float));
    if (!bx || !by) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int inplace = 0; inplace < 2; inplace++) {
        fill(inplace ? by : bx, big, 7 + inplace);
        EXPECT(hpc_allreduce(inplace ? HPC_IN_PLACE : bx, by, big, HPC_FLOAT32, HPC_SUM, MPI_COMM_WORLD,
                             HPC_ALG_SHM) == 0, "rank %d: 64 MiB allreduce: %s", rank, hpc_last_error());
        EXPECT(wrong(by, big, 7 + inplace) == 0, "rank %d: 64 MiB %s: %ld wrong elements", rank,
               inplace ? "in place" : "out of place", wrong(by, big, 7 + inplace));
    }
    free(bx);
    free(by);
    /* large (single copy) and small (through the segment) calls in flight
     * together: a call's entries overlap the slots and the ring of the
     * calls around it */
    enum { K = 12 };
    size_t m = (size_t)3 << 20 >> 2;
    float *in[K], *out[K];
    hpc_request_t *r[K];
    for (int k = 0; k < K; k++) {
        size_t c = k % 2 ? 1000 + (size_t)k : m;
        in[k] = malloc(c * sizeof(float));
        out[k] = malloc(c * sizeof(float));
        if (!in[k] || !out[k]) MPI_Abort(MPI_COMM_WORLD, 1);
        fill(in[k], c, k);
        EXPECT(hpc_iallreduce(in[k], out[k], c, HPC_FLOAT32, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_SHM, &r[k]) == 0,
               "rank %d: iallreduce %d: %s", rank, k, hpc_last_error());
    }
    EXPECT(hpc_waitall(K, r) == 0, "rank %d: waitall: %s", rank, hpc_last_error());
    for (int k = 0; k < K; k++) {
        size_t c = k % 2 ? 1000 + (size_t)k : m;
        EXPECT(wrong(out[k], c, k) == 0, "rank %d: call %d of the mix (%zu elements): %ld wrong", rank, k, c,
               wrong(out[k], c, k));
        free(in[k]);
        free(out[k]);
    }
    int bad = test_failures, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !any) printf("coll_shm_moves: %d ranks: 8 MiB in %ld single copies per rank; the mix checked\n", p, want);
    free(x);
    free(y);
    MPI_Finalize();
    return any ? 1 : 0;
}
