/* timer.c - wall clock and min/median/max across ranks. */
#include "config.h"
#include <stdlib.h>
#include <time.h>
#include "internal.h"

double hpc_wtime(void)
{
    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down) return MPI_Wtime();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double hpc_median(double *v, size_t n)
{
    if (n == 0) return 0.0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int hpc_stats_across(double v, MPI_Comm comm, hpc_stats_t *out)
{
    int size;
    HPC_MPI(MPI_Comm_size(comm, &size));
    double *all = malloc(sizeof *all * size);
    if (!all) return HPC_ERR(HPC_ERR_NOMEM, "%d doubles", size);
    int rc = MPI_Allgather(&v, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, comm);
    if (rc != MPI_SUCCESS) {
        free(all);
        return hpc_error_mpi(rc, __FILE__, __LINE__, "MPI_Allgather");
    }
    hpc_stats_t s;
    s.median = hpc_median(all, size);
    s.min = all[0];
    s.max = all[size - 1];
    free(all);
    *out = s;
    return 0;
}
