/* coll_selftest.c - hpc_coll_selftest() passes (what hpc-info --selftest
 * runs), host buffers, plus device buffers where there is a GPU. */
#include "config.h"
#include "hpc_coll.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nfail = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int e = hpc_coll_selftest(MPI_COMM_WORLD, 1, getenv("COLL_VERBOSE") != NULL, &nfail);
    if (e < 0) fprintf(stderr, "rank %d: selftest: %s\n", rank, hpc_last_error());
    MPI_Finalize();
    return e < 0 || nfail != 0;
}
