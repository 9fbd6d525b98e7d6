/* mpi_allreduce.c - an MPI program that knows nothing of hpckit: it sums
 * 1M doubles over the ranks with MPI_Allreduce and checks the result.
 * Started with libhpc-mpi.so preloaded, its MPI_Allreduce runs hpckit's
 * collectives instead of the MPI library's, unchanged and unrebuilt:
 *   LD_PRELOAD=PREFIX/lib/libhpc-mpi.so HPC_MPI_VERBOSE=1 hpc-mpiexec -n 4 ./mpi_allreduce */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int n = 1 << 20;
    double *x = malloc(n * sizeof *x), *sum = malloc(n * sizeof *sum);
    if (!x || !sum) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < n; i++) x[i] = rank + 1;
    MPI_Allreduce(x, sum, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    int wrong = 0;
    for (int i = 0; i < n; i++) wrong += sum[i] != size * (size + 1) / 2.0;
    if (rank == 0) printf("MPI_Allreduce of %d doubles over %d ranks: %s\n", n, size, wrong ? "WRONG" : "correct");
    free(x);
    free(sum);
    MPI_Finalize();
    return wrong != 0;
}
