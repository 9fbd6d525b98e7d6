/* coll_device.c - collectives on CUDA device buffers: every collective
 * with every algorithm, NCCL included, blocking and nonblocking, through
 * the self-test's device pass.  Skips (77) where no GPU is listed or the
 * build has no CUDA; a GPU listed that libhpc does not see on some rank
 * is a failure (test_gpu_verdict). */
#include "config.h"
#include "hpc_coll.h"

#include <stdio.h>
#include <stdlib.h>
#include "testlib.h"

int main(int argc, char **argv)
{
    int listed = test_gpus_listed();     /* before MPI: it may fork nvidia-smi */
    /* hpc_init binds each rank's GPU (local rank % devices) */
    HPC_CHECK(hpc_init(&argc, &argv));
    MPI_Comm comm = hpc_comm_world();
    int rank = hpc_rank(), verdict = test_gpu_verdict(listed, TEST_CUDA_BUILT, hpc_gpu_count());
    int worst = 0;
    hpc_selftest_t res = {0};
    /* a failure anywhere (1) beats a skip (77) beats running (0) */
    int key = verdict == 1 ? 2 : verdict == 77 ? 1 : 0;
    MPI_Allreduce(&key, &worst, 1, MPI_INT, MPI_MAX, comm);
    if (verdict == 1 || (verdict == 77 && rank == 0)) {
        const char *no = hpc_gpu_unavailable();
        printf("rank %d: %s: %s\n", rank, verdict == 1 ? "FAIL: a GPU is listed, libhpc sees none" : "SKIP: no GPU",
               no ? no : "?");
    }
    if (worst) {
        hpc_finalize();
        return worst == 2 ? 1 : 77;
    }
    int e = hpc_coll_selftest(comm, 1, 1, &res);
    if (e < 0) fprintf(stderr, "rank %d: %s\n", rank, hpc_last_error());
    if (e == 0 && !res.device) fprintf(stderr, "rank %d: device buffers were not tested\n", rank);
    hpc_finalize();
    return e < 0 || res.failed != 0 || !res.device;
}
