/* install_user.c - a user's own program, built by tests/install.sh
 * against an installed libhpc with nothing but
 *     cc install_user.c $(pkg-config --cflags --libs libhpc)
 * It calls libhpc, MPI and HDF5 (through hpc_h5) directly, so the .pc file
 * must bring all three.  Prints "ok N" on rank 0 when the allreduce of
 * ranks+1 over N ranks is N(N+1)/2 and the file reads back. */
#include <stdio.h>
#include <hpc.h>
#include <hpc_coll.h>
#include <hpc_h5.h>

static int check(int rc, const char *what)
{
    if (rc < 0) fprintf(stderr, "install_user: %s: %s\n", what, hpc_last_error());
    return rc < 0;
}

int main(int argc, char **argv)
{
    if (check(hpc_init(&argc, &argv), "hpc_init")) return 1;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);      /* MPI itself, not only libhpc */
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t mine = rank + 1, sum = 0;
    int bad = check(hpc_allreduce(&mine, &sum, 1, HPC_INT64, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_AUTO),
                    "hpc_allreduce");
    bad |= sum != (int64_t)size * (size + 1) / 2;
    if (argc > 1) {   /* argv[1]: an HDF5 file to write with one row per rank */
        hpc_h5file_t *f;
        hid_t d;
        hsize_t n = (hsize_t)size;
        bad |= check(hpc_h5_create(argv[1], MPI_COMM_WORLD, HPC_H5_OVERWRITE, &f), "create") ||
               check(hpc_h5_dataset_create(f, "ranks", H5T_NATIVE_INT64, 1, &n, NULL, 0, NULL, &d), "dataset") ||
               check(hpc_h5_write_rows(d, H5T_NATIVE_INT64, (hsize_t)rank, 1, &mine), "write") ||
               H5Dclose(d) < 0 || check(hpc_h5_finish(f, 1), "finish");
    }
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf(all ? "failed %d\n" : "ok %d\n", size);
    hpc_finalize();
    return all;
}
