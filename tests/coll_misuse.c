/* coll_misuse.c - programs that misuse collectives on purpose, for
 * coll_misuse.sh: "desync" (ranks disagree on the count, or call different
 * collectives), "timeout" (rank 1 never joins), "algmix" (auto runs
 * another algorithm on the last rank, as host memory among device memory
 * would make it: HPC_COLL_ALLREDUCE differs), "kindmix" (it does: rank 0
 * passes host memory, the others device memory, so auto sends them to
 * NCCL and rank 0 to an own algorithm; needs a GPU per rank and NCCL,
 * else it says "kindmix: skipped"), "outofstep" (the last rank makes one
 * call more than the others), "ok" (correct calls under
 * HPC_DEBUG=coll, including nonblocking ones in flight). */
#include "config.h"
#include "hpc_coll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* rank 0 host memory, the others device memory, auto: 0 if it could not
 * be set up (no GPU on every rank, or NCCL refused), else it hangs - or
 * rather, ends with the mismatch line */
static int kindmix(int rank)
{
    int gpu = hpc_gpu_count() > 0, all = 0;
    MPI_Allreduce(&gpu, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all || !hpc_have_nccl() || hpc_barrier(MPI_COMM_WORLD, HPC_ALG_NCCL) < 0) {
        if (rank == 0) printf("kindmix: skipped (needs a GPU per rank and NCCL)\n");
        return 0;
    }
    static float host[1 << 16];
    void *buf = host;
    if (rank != 0 && hpc_coll_dev_alloc(sizeof host, &buf) < 0) return -1;
    return hpc_allreduce(HPC_IN_PLACE, buf, 1 << 16, HPC_FLOAT32, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_AUTO);
}
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const char *mode = argc > 1 ? argv[1] : "ok";
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8];
    int e = 0;
    if (!strcmp(mode, "desync")) {
        /* a few good calls, then rank 1 passes another count */
        for (int i = 0; i < 3; i++) e |= hpc_allreduce(x, y, 8, HPC_FLOAT32, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_RING);
        e |= hpc_allreduce(x, y, rank == 1 ? 7 : 8, HPC_FLOAT32, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_RING);
    } else if (!strcmp(mode, "desync-op")) {
        if (rank == p - 1) e |= hpc_bcast(x, 8, HPC_FLOAT32, 0, MPI_COMM_WORLD, HPC_ALG_TREE);
        else e |= hpc_allreduce(x, y, 8, HPC_FLOAT32, HPC_MAX, MPI_COMM_WORLD, HPC_ALG_TREE);
    } else if (!strcmp(mode, "algmix")) {
        /* settings are read at the first collective: set them before it */
        setenv("HPC_COLL_ALLREDUCE", rank == p - 1 ? "tree" : "ring", 1);
        float big[4096] = {0}, out[4096];
        for (int i = 0; i < 3; i++) e |= hpc_barrier(MPI_COMM_WORLD, HPC_ALG_BUTTERFLY);
        e |= hpc_allreduce(big, out, 4096, HPC_FLOAT32, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_AUTO);
    } else if (!strcmp(mode, "outofstep")) {
        /* the last rank makes a call the others do not: call #3 is a bcast
         * there and an allreduce elsewhere (same algorithm family names
         * would not matter: the calls differ) */
        for (int i = 0; i < 3; i++) e |= hpc_barrier(MPI_COMM_WORLD, HPC_ALG_BUTTERFLY);
        if (rank == p - 1) e |= hpc_bcast(x, 8, HPC_FLOAT32, 0, MPI_COMM_WORLD, HPC_ALG_LINEAR);
        e |= hpc_allreduce(x, y, 8, HPC_FLOAT32, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_RING);
    } else if (!strcmp(mode, "kindmix")) {
        e |= kindmix(rank);
    } else if (!strcmp(mode, "timeout")) {
        e |= hpc_barrier(MPI_COMM_WORLD, HPC_ALG_BUTTERFLY);
        if (rank == 1) sleep(30);        /* never joins; the watchdog ends the job */
        e |= hpc_allreduce(x, y, 8, HPC_FLOAT32, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_RING);
    } else {
        hpc_request_t *r[3];
        e |= hpc_iallreduce(x, y, 8, HPC_FLOAT32, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_BUTTERFLY, &r[0]);
        e |= hpc_ibarrier(MPI_COMM_WORLD, HPC_ALG_TREE, &r[1]);
        e |= hpc_ibcast(x, 8, HPC_FLOAT32, p - 1, MPI_COMM_WORLD, HPC_ALG_RING, &r[2]);
        e |= hpc_waitall(3, r);
        e |= hpc_allreduce(x, y, 8, HPC_FLOAT32, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_NATIVE);
    }
    if (e < 0) fprintf(stderr, "rank %d: %s\n", rank, hpc_last_error());
    if (rank == 0) printf("coll_misuse %s: finished\n", mode);
    MPI_Finalize();
    return e < 0;
}
