/* finalize_prog - what hpc_finalize leaves behind, for tests/finalize.sh:
 * an HDF5 file written in parallel and never closed, a stdio file never
 * flushed or closed, then hpc_finalize and exit status 3.  Either end of
 * MPI (MPI_Finalize, or the quiet end of HPC_FINALIZE=quiet) must leave
 * both files complete and the status 3.  Rank 0 prints what
 * MPI_Finalized says afterwards. */
#include "config.h"
#include <hdf5.h>
#include <stdio.h>
#include "hpc.h"

int main(int argc, char **argv)
{
    if (argc != 3 || hpc_init(&argc, &argv) < 0) return 2;
    int rank = hpc_rank(), size = hpc_size();
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, hpc_comm_world(), MPI_INFO_NULL);
    hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hsize_t n = (hsize_t)size * 1000, mine = 1000, start = (hsize_t)rank * 1000;
    hid_t space = H5Screate_simple(1, &n, NULL), mem = H5Screate_simple(1, &mine, NULL);
    hid_t d = H5Dcreate2(f, "x", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int v[1000];
    for (int i = 0; i < 1000; i++) v[i] = rank * 1000 + i;
    H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &mine, NULL);
    H5Dwrite(d, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, v);
    /* left open: d, f, fapl, the spaces (hpc_finalize's business now) */
    FILE *t = NULL;
    if (rank == 0) t = fopen(argv[2], "w");
    if (t) fprintf(t, "the last line\n");   /* never flushed by the program */
    if (hpc_finalize() < 0) return 1;
    int down = -1;
    MPI_Finalized(&down);
    if (rank == 0) printf("MPI_Finalized %d\n", down);
    return 3;
}
