/* coll_shm_kill.c - a rank killed inside a shared-memory collective ends
 * the job: the others, waiting on its flags, see it is gone and end the
 * job themselves (alg/shm.c, shmseg.c) - no process is left spinning.
 *
 *   coll_shm_kill DIR    (run by tests/coll_shm.sh, which kill -9s rank 1)
 *   coll_shm_kill --probe    prints whether single copy works here
 *
 * Each rank is a child of the process the launcher started: that parent
 * only waits, and where its child was killed by a signal it lingers for a
 * minute, so the launcher does not see the death (as srun without
 * --kill-on-bad-exit would not end the job) - only libhpc's own check can
 * end the job in seconds.  Every rank writes DIR/pid.RANK once it is in
 * the loop of shared-memory allreduces (blocking ones of 1 MiB and of 8
 * bytes, and nonblocking ones), which runs for at most a minute.
 */
#include "config.h"
#include "hpc_coll.h"
#include "coll/test_hooks.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* --probe: whether single copy works between this node's ranks */
static int probe(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int ranks = 0, cma = 0, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (hpc_coll_test_segment(MPI_COMM_WORLD, &ranks, &cma) < 0) MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank == 0) printf("%s\n", !ranks ? "no shared segment" : cma ? "yes" : "no (the kernel refuses it)");
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--probe")) return probe(argc, argv);
    if (argc != 2) {
        fprintf(stderr, "usage: coll_shm_kill DIR | --probe\n");
        return 2;
    }
    pid_t child = fork();
    if (child < 0) return 1;
    if (child > 0) {
        int st = 0;
        while (waitpid(child, &st, 0) < 0) {
        }
        if (WIFSIGNALED(st)) {
            sleep(60);
            return 1;
        }
        return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    }
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    size_t n = (size_t)1 << 17;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    if (!x || !y) MPI_Abort(MPI_COMM_WORLD, 1);
    for (size_t i = 0; i < n; i++) x[i] = 1;
    if (hpc_allreduce(x, y, n, HPC_FLOAT64, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_SHM) < 0 || y[n - 1] != p) {
        fprintf(stderr, "rank %d: first allreduce: %s\n", rank, hpc_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/pid.%d", argv[1], rank);
    FILE *f = fopen(path, "w");
    if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
    double t0 = MPI_Wtime();
    for (long it = 0; MPI_Wtime() - t0 < 60; it++) {
        hpc_request_t *r = NULL;
        int e = it % 3 == 0 ? hpc_allreduce(x, y, n, HPC_FLOAT64, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_SHM)
              : it % 3 == 1 ? hpc_allreduce(x, y, 1, HPC_FLOAT64, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_SHM)
                            : hpc_iallreduce(x, y, 64, HPC_FLOAT64, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_SHM, &r);
        if (e == 0 && r) e = hpc_wait(&r);
        if (e < 0) {
            fprintf(stderr, "rank %d: %s\n", rank, hpc_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    printf("coll_shm_kill: rank %d: a minute went by and no rank died\n", rank);
    MPI_Finalize();
    return 0;
}
