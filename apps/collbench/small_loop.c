/* small_loop.c - N calls of an 8-byte allreduce (sum of one double) and
 * of an 8-byte bcast, nothing else: the per-call path of a collective,
 * for instruction counts under callgrind (docs/collectives.md, "Small
 * messages").  Built twice: mpi_small_loop is a plain MPI program (MPI's
 * own collectives, or libhpc-mpi.so's under LD_PRELOAD); hpc_small_loop
 * calls hpc_allreduce and hpc_bcast (auto).
 *
 *   mpiexec -n 2 valgrind --tool=callgrind --toggle-collect=loop_allreduce \
 *       --toggle-collect=loop_bcast ./mpi_small_loop 10000
 *
 * The loops are functions of their own (never inlined) so that callgrind
 * can count inside them alone; a barrier before each keeps set-up out.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef SMALL_LOOP_HPC
#include "hpc_coll.h"
#endif

__attribute__((noinline)) static double loop_allreduce(long n, MPI_Comm comm)
{
    double x = 1, y = 0, sum = 0;
    for (long i = 0; i < n; i++) {
#ifdef SMALL_LOOP_HPC
        if (hpc_allreduce(&x, &y, 1, HPC_FLOAT64, HPC_SUM, comm, HPC_ALG_AUTO) < 0) MPI_Abort(comm, 1);
#else
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm);
#endif
        sum += y;
    }
    return sum;
}

__attribute__((noinline)) static double loop_bcast(long n, MPI_Comm comm)
{
    double x = 0, sum = 0;
    for (long i = 0; i < n; i++) {
        x = (double)i;
#ifdef SMALL_LOOP_HPC
        if (hpc_bcast(&x, 1, HPC_FLOAT64, 0, comm, HPC_ALG_AUTO) < 0) MPI_Abort(comm, 1);
#else
        MPI_Bcast(&x, 1, MPI_DOUBLE, 0, comm);
#endif
        sum += x;
    }
    return sum;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    long n = argc > 1 ? atol(argv[1]) : 10000;
#ifdef SMALL_LOOP_HPC
    /* (as the drop-in does in MPI_Init: the communicator's set-up is not
     * a call's cost) */
    if (hpc_coll_setup(MPI_COMM_WORLD) < 0) MPI_Abort(MPI_COMM_WORLD, 1);
#endif
    MPI_Barrier(MPI_COMM_WORLD);
    double a = loop_allreduce(n, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double b = loop_bcast(n, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    /* every allreduce gave p; every bcast gave i */
    int ok = a == (double)n * p && b == (double)n * (n - 1) / 2;
    if (rank == 0) printf("small_loop: %d ranks, %ld calls each: %s\n", p, n, ok ? "right" : "WRONG");
    MPI_Finalize();
    return ok ? 0 : 1;
}
