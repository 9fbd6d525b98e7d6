/* coll_selftest.c - hpc_coll_selftest() passes (what hpc-info --selftest
 * runs), host buffers, plus device buffers where there is a GPU. */
#include "config.h"
#include "hpc_coll.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    hpc_selftest_t res = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int e = hpc_coll_selftest(MPI_COMM_WORLD, 1, getenv("COLL_VERBOSE") != NULL, &res);
    if (e < 0) fprintf(stderr, "rank %d: selftest: %s\n", rank, hpc_last_error());
    /* every collective has several algorithms, each tried with several
     * types, blocking and not: far more than 100 cases, or rows went missing */
    if (e == 0 && res.cases < 100) fprintf(stderr, "rank %d: only %d cases\n", rank, res.cases);
    MPI_Finalize();
    return e < 0 || res.failed != 0 || res.cases < 100;
}
