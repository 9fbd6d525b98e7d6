/* coll_device.c - collectives on CUDA device buffers: every collective
 * with every algorithm, NCCL included, blocking and nonblocking, through
 * the self-test's device pass.  Skips (77) without a GPU on every rank. */
#include "config.h"
#include "hpc_coll.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    /* hpc_init binds each rank's GPU (local rank % devices) */
    HPC_CHECK(hpc_init(&argc, &argv));
    MPI_Comm comm = hpc_comm_world();
    int rank = hpc_rank(), have = hpc_have_cuda() && hpc_gpu_count() > 0, all = 0;
    hpc_selftest_t res = {0};
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, comm);
    if (!all) {
        if (rank == 0) printf("SKIP: no GPU (built with CUDA: %s)\n", hpc_have_cuda() ? "yes" : "no");
        hpc_finalize();
        return 77;
    }
    int e = hpc_coll_selftest(comm, 1, 1, &res);
    if (e < 0) fprintf(stderr, "rank %d: %s\n", rank, hpc_last_error());
    if (e == 0 && !res.device) fprintf(stderr, "rank %d: device buffers were not tested\n", rank);
    hpc_finalize();
    return e < 0 || res.failed != 0 || !res.device;
}
