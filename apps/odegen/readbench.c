/* readbench.c - how fast ranks read an hpc-odegen file's /y, through a
 * chosen HDF5 driver: the figures behind hpc_h5_open's choice of the
 * serial driver for files of virtual datasets (docs/odegen.md, "Job
 * arrays").  A benchmark, not a test: apps/odegen/readbench.sh runs it.
 *
 *   mpiexec -n NP readbench FILE auto|mpio|sec2 block|shuffled [SAMPLES]
 *
 * auto: hpc_h5_open's choice (what the programs do); mpio, sec2: that
 * driver forced (a file of virtual datasets cannot be read with mpio).
 * block: each rank reads its contiguous block of /y's rows in slices of
 * about 8 MiB (collective where the driver is MPI-IO), as a preloading
 * reader does; shuffled: each rank reads SAMPLES/NP pairs of neighbouring
 * grid rows (i, k), (i, k+1) at positions from a random permutation, in
 * windows of 16384 through hpc_h5_read_rows_at, as hpc-train does.
 * Prints one line: "driver mode ranks bytes seconds MB/s" (the slowest
 * rank's time; every rank's bytes).
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hpc_app_h5.h"
#include "hpc_rng.h"

static hid_t open_file(const char *path, const char *driver, hpc_h5file_t **f)
{
    *f = NULL;
    if (!strcmp(driver, "auto")) {
        if (hpc_h5_open(path, hpc_comm_world(), 0, 0, f) < 0) return H5I_INVALID_HID;
        return hpc_h5_id(*f);
    }
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (!strcmp(driver, "mpio")) H5Pset_fapl_mpio(fapl, hpc_comm_world(), MPI_INFO_NULL);
    else H5Pset_fapl_sec2(fapl);
    hid_t id = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    return id;
}

/* each rank its block of rows, in slices, the same number of calls on every rank */
static int read_block(hid_t y, int collective, const hsize_t dims[3], double *seconds, double *bytes)
{
    hsize_t row = dims[1] * dims[2] * sizeof(double), slice = (8u << 20) / row ? (8u << 20) / row : 1;
    int64_t lo, n;
    hpc_block_range((int64_t)dims[0], hpc_size(), hpc_rank(), &lo, &n);
    int64_t most = ((int64_t)dims[0] + hpc_size() - 1) / hpc_size();
    double *buf = malloc(slice * row);
    if (!buf) return -1;
    int rc = 0;
    MPI_Barrier(hpc_comm_world());
    double t = MPI_Wtime();
    for (int64_t off = 0; !rc && off < most; off += (int64_t)slice) {
        hsize_t a = (hsize_t)(lo + (off < n ? off : n)), k = off < n ? (hsize_t)(n - off) : 0;
        if (k > slice) k = slice;
        rc = collective ? hpc_h5_read_rows(y, H5T_NATIVE_DOUBLE, a, k, buf)
                        : hpc_h5_read_rows_indep(y, H5T_NATIVE_DOUBLE, a, k, buf);
    }
    *seconds = MPI_Wtime() - t;
    *bytes = (double)n * (double)row;
    free(buf);
    return rc;
}

/* hpc-train's pattern: pairs of neighbouring grid rows at shuffled positions */
static int read_shuffled(hid_t y, const hsize_t dims[3], int64_t samples, double *seconds, double *bytes)
{
    const int64_t window = 16384, pairs = (int64_t)dims[1] - 1;
    int64_t lo, n;
    hpc_block_range(samples, hpc_size(), hpc_rank(), &lo, &n);
    hsize_t *at = malloc(4 * window * sizeof *at);
    double *buf = malloc(2 * window * dims[2] * sizeof *buf);
    if (!at || !buf) return -1;
    hpc_perm_t p;
    hpc_perm_init(&p, 1, 0, dims[0] * (uint64_t)pairs);
    int rc = 0;
    MPI_Barrier(hpc_comm_world());
    double t = MPI_Wtime();
    for (int64_t s = 0; !rc && s < n; s += window) {
        int64_t k = n - s < window ? n - s : window;
        for (int64_t j = 0; j < k; j++) {
            uint64_t id = hpc_perm_at(&p, (uint64_t)(lo + s + j));
            at[4 * j] = at[4 * j + 2] = id / (uint64_t)pairs;
            at[4 * j + 1] = id % (uint64_t)pairs;
            at[4 * j + 3] = id % (uint64_t)pairs + 1;
        }
        rc = hpc_h5_read_rows_at(y, H5T_NATIVE_DOUBLE, 2, (size_t)(2 * k), at, buf);
    }
    *seconds = MPI_Wtime() - t;
    *bytes = 2.0 * (double)n * (double)dims[2] * sizeof(double);
    free(at);
    free(buf);
    return rc;
}

int main(int argc, char **argv)
{
    if (hpc_init(&argc, &argv)) {
        fprintf(stderr, "readbench: %s\n", hpc_last_error());
        return 1;
    }
    if (argc < 4 || (strcmp(argv[2], "auto") && strcmp(argv[2], "mpio") && strcmp(argv[2], "sec2")) ||
        (strcmp(argv[3], "block") && strcmp(argv[3], "shuffled"))) {
        if (hpc_rank() == 0) fprintf(stderr, "usage: readbench FILE auto|mpio|sec2 block|shuffled [SAMPLES]\n");
        hpc_finalize();
        return 2;
    }
    hpc_h5file_t *f;
    hid_t fid = open_file(argv[1], argv[2], &f), y = fid < 0 ? -1 : H5Dopen2(fid, "y", H5P_DEFAULT);
    hsize_t dims[8];
    int nd = 0, rc = y < 0 || hpc_h5_dataset_shape(y, &nd, dims) < 0 || nd != 3 ? -1 : 0;
    const char *driver = f ? hpc_h5_driver(f) : argv[2];
    double sec = 0, bytes = 0;
    if (!rc && !strcmp(argv[3], "block"))
        rc = read_block(y, !strcmp(driver, "mpio"), dims, &sec, &bytes);
    else if (!rc)
        rc = read_shuffled(y, dims, argc > 4 ? atoll(argv[4]) : 1000000, &sec, &bytes);
    double tmax = 0, total = 0;
    int bad = rc < 0, anybad = 0;
    MPI_Allreduce(&sec, &tmax, 1, MPI_DOUBLE, MPI_MAX, hpc_comm_world());
    MPI_Allreduce(&bytes, &total, 1, MPI_DOUBLE, MPI_SUM, hpc_comm_world());
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, hpc_comm_world());
    if (anybad && rc < 0) fprintf(stderr, "readbench: rank %d: %s\n", hpc_rank(), hpc_last_error());
    if (!anybad && hpc_rank() == 0)
        printf("%s %s %d %.0f %.4f %.1f\n", driver, argv[3], hpc_size(), total, tmax, total / tmax / 1e6);
    if (y >= 0) H5Dclose(y);
    if (f) hpc_h5_close(f);
    else if (fid >= 0) H5Fclose(fid);
    hpc_finalize();
    return anybad;
}
