/* mpi_allreduce_bench.c - a plain MPI program (no hpckit header, nothing
 * but MPI): MPI_Allreduce of float sums from 1 MiB to 256 MiB, median of
 * 10 timed calls per size, busbw as hpc-collbench counts it.  It is the
 * "unmodified program" for libhpc-mpi.so:
 *
 *   mpiexec -n 2 ./mpi_allreduce_bench                            # the MPI library
 *   LD_PRELOAD=libhpc-mpi.so mpiexec -n 2 ./mpi_allreduce_bench   # hpckit's algorithms
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    size_t maxn = (size_t)64 << 20;   /* 256 MiB of floats */
    float *a = malloc(maxn * sizeof *a), *b = malloc(maxn * sizeof *b);
    if (!a || !b) MPI_Abort(MPI_COMM_WORLD, 1);
    for (size_t i = 0; i < maxn; i++) a[i] = (float)(rank + 1);
    if (rank == 0) printf("# %12s %10s %8s  (MPI_Allreduce float sum, %d ranks, median of 10)\n", "bytes", "us", "busbw", p);
    for (size_t n = (size_t)1 << 18; n <= maxn; n *= 4) {
        double t[10];
        for (int i = 0; i < 12; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Allreduce(a, b, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            double dt = MPI_Wtime() - t0, mx;
            MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (i >= 2) t[i - 2] = mx;   /* two warm-up calls */
        }
        qsort(t, 10, sizeof *t, cmp);
        double med = (t[4] + t[5]) / 2, bytes = (double)n * sizeof(float);
        int ok = b[0] == (float)p * (p + 1) / 2 && b[n - 1] == b[0];
        if (rank == 0)
            printf("  %12.0f %10.1f %8.2f%s\n", bytes, med * 1e6, bytes / med / 1e9 * 2.0 * (p - 1) / p,
                   ok ? "" : "  WRONG");
    }
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
