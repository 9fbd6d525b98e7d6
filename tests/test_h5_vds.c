/* test_h5_vds - a file of virtual datasets (as hpc-odegen --join writes:
 * rows of two source files, named relative to the file's folder) read
 * through libhpc at 1 to 4 ranks: hpc_h5_open picks the serial driver for
 * it and MPI-IO for a plain file (hpc_h5_driver); every reader - rows
 * collective with a rank reading none, rows independent, rows at shuffled
 * positions, 2D blocks - gets exactly the values of the sources, as from
 * the plain file with the same data; a source moved away, replaced by a
 * file without the dataset, by a smaller one or by text is refused on
 * every rank with HPC_ERR_DATA naming it (HDF5 itself would read fill
 * values), and the file opens again once it is back. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "hpc_h5.h"
#include "testlib.h"

enum { N = 11, F = 3, T = 4, D = 2, SPLIT = 5 };   /* rows [0, SPLIT) in src0, the rest in src1 */
static int rank, size;
static char dir[512], vds[600], plain[600], src[2][600], away[600];

static double mval(hsize_t i, hsize_t f) { return 100.0 * i + f + 0.5; }
static double yval(hsize_t i, hsize_t t, hsize_t d) { return 1000.0 * i + 10.0 * t + d; }

/* serial HDF5, rank 0: a file with m [rows, F] and y [rows, T, D] from row r0 */
static void write_source(const char *path, hsize_t r0, hsize_t rows)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dm[2] = {rows, F}, dy[3] = {rows, T, D};
    double m[N * F], y[N * T * D];
    for (hsize_t i = 0; i < rows; i++)
        for (hsize_t k = 0; k < F; k++) m[i * F + k] = mval(r0 + i, k);
    for (hsize_t i = 0; i < rows; i++)
        for (hsize_t t = 0; t < T; t++)
            for (hsize_t d = 0; d < D; d++) y[(i * T + t) * D + d] = yval(r0 + i, t, d);
    hid_t sm = H5Screate_simple(2, dm, NULL), sy = H5Screate_simple(3, dy, NULL);
    hid_t a = H5Dcreate2(f, "m", H5T_IEEE_F64LE, sm, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t b = H5Dcreate2(f, "y", H5T_IEEE_F64LE, sy, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    EXPECT(H5Dwrite(a, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, m) >= 0, "write m of %s", path);
    EXPECT(H5Dwrite(b, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, y) >= 0, "write y of %s", path);
    H5Dclose(a), H5Dclose(b), H5Sclose(sm), H5Sclose(sy), H5Fclose(f);
}

/* name [N, rest...] virtual over the two sources (relative names) */
static void virtual_dset(hid_t f, const char *name, int nd, const hsize_t *rest)
{
    hsize_t dims[3] = {N, rest[0], nd > 2 ? rest[1] : 0}, start[3] = {0, 0, 0};
    hid_t vspace = H5Screate_simple(nd, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    for (int s = 0; s < 2; s++) {
        hsize_t count[3] = {s ? N - SPLIT : SPLIT, dims[1], dims[2]};
        start[0] = s ? SPLIT : 0;
        hid_t sspace = H5Screate_simple(nd, count, NULL);
        H5Sselect_hyperslab(vspace, H5S_SELECT_SET, start, NULL, count, NULL);
        H5Pset_virtual(dcpl, vspace, strrchr(src[s], '/') + 1, name, sspace);
        H5Sclose(sspace);
    }
    hid_t d = H5Dcreate2(f, name, H5T_IEEE_F64LE, vspace, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    EXPECT(d >= 0, "virtual %s", name);
    H5Dclose(d), H5Pclose(dcpl), H5Sclose(vspace);
}

static void make_files(void)
{
    if (rank != 0) return;
    mkdir(dir, 0755);
    write_source(src[0], 0, SPLIT);
    write_source(src[1], SPLIT, N - SPLIT);
    write_source(plain, 0, N);
    hid_t f = H5Fcreate(vds, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t rm[1] = {F}, ry[2] = {T, D};
    virtual_dset(f, "m", 2, rm);
    virtual_dset(f, "y", 3, ry);
    H5Fclose(f);
}

/* every reader on path: exactly the values written */
static void read_all(const char *path, const char *driver)
{
    hpc_h5file_t *f;
    int rc = hpc_h5_open(path, hpc_comm_world(), 0, 0, &f);
    EXPECT(rc == 0, "open %s: %s", path, hpc_last_error());
    if (rc) return;
    EXPECT(!strcmp(hpc_h5_driver(f), driver), "%s opened with %s, expected %s", path, hpc_h5_driver(f), driver);
    hid_t m, y;
    hsize_t want[2] = {N, F};
    EXPECT(hpc_h5_dataset_open(f, "m", 2, want, &m) == 0, "m: %s", hpc_last_error());
    EXPECT(hpc_h5_dataset_open(f, "y", 3, NULL, &y) == 0, "y: %s", hpc_last_error());
    double buf[N * T * D];
    /* collective rows: rank 1 reads none, the others a block across the split */
    hsize_t r0 = (hsize_t)rank * 2 % N, n = rank == 1 ? 0 : (N - r0 < 6 ? N - r0 : 6);
    EXPECT(hpc_h5_read_rows(m, H5T_NATIVE_DOUBLE, r0, n, buf) == 0, "rows: %s", hpc_last_error());
    for (hsize_t i = 0; i < n * F; i++)
        EXPECT(buf[i] == mval(r0 + i / F, i % F), "%s rows: element %llu = %g", path, (unsigned long long)i, buf[i]);
    /* independent: only even ranks, all rows */
    if (rank % 2 == 0) {
        EXPECT(hpc_h5_read_rows_indep(y, H5T_NATIVE_DOUBLE, 0, N, buf) == 0, "indep: %s", hpc_last_error());
        for (hsize_t i = 0; i < N * T * D; i++)
            EXPECT(buf[i] == yval(i / (T * D), i / D % T, i % D), "%s indep: element %llu", path,
                   (unsigned long long)i);
    }
    /* (i, t) pairs shuffled with a repeat, on both sides of the split */
    const hsize_t at[12] = {9, 3, 1, 0, 4, 3, 5, 0, 9, 3, (hsize_t)rank % N, 2};
    EXPECT(hpc_h5_read_rows_at(y, H5T_NATIVE_DOUBLE, 2, 6, at, buf) == 0, "at: %s", hpc_last_error());
    for (int j = 0; j < 6; j++)
        for (hsize_t d = 0; d < D; d++)
            EXPECT(buf[j * D + d] == yval(at[2 * j], at[2 * j + 1], d), "%s at: row %d", path, j);
    /* a 2D block per rank, the last rank's empty */
    hsize_t b0 = (hsize_t)rank, nb = rank == size - 1 && size > 1 ? 0 : N - (hsize_t)rank, c0 = 1, nc = F - 1;
    EXPECT(hpc_h5_read_block(m, H5T_NATIVE_DOUBLE, b0, c0, nb, nc, buf) == 0, "block: %s", hpc_last_error());
    for (hsize_t i = 0; i < nb * nc; i++)
        EXPECT(buf[i] == mval(b0 + i / nc, c0 + i % nc), "%s block: element %llu", path, (unsigned long long)i);
    H5Dclose(m);
    H5Dclose(y);
    EXPECT(hpc_h5_close(f) == 0, "close: %s", hpc_last_error());
}

/* the open is refused on every rank, naming what */
static void refused(const char *what, const char *needle)
{
    hpc_h5file_t *f;
    int rc = hpc_h5_open(vds, hpc_comm_world(), 0, 0, &f);
    EXPECT(rc == HPC_ERR_DATA, "%s: open gave %d (%s)", what, rc, rc ? hpc_last_error() : "opened");
    if (rc == 0) hpc_h5_close(f);
    EXPECT(strstr(hpc_last_error(), needle) != NULL, "%s: message '%s' lacks '%s'", what, hpc_last_error(), needle);
    EXPECT(strstr(hpc_last_error(), "src1.h5") != NULL, "%s: message '%s' does not name the source", what,
           hpc_last_error());
}

static void broken_sources(void)
{
    MPI_Comm w = hpc_comm_world();
    MPI_Barrier(w);   /* every rank done reading before rank 0 moves a source */
    if (rank == 0) rename(src[1], away);
    MPI_Barrier(w);
    refused("a source moved away", "missing");
    if (rank == 0) {   /* the right name, the wrong content */
        hid_t f = H5Fcreate(src[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        H5Fclose(f);
    }
    MPI_Barrier(w);
    refused("a source without the dataset", "no dataset");
    if (rank == 0) write_source(src[1], SPLIT, N - SPLIT - 1);
    MPI_Barrier(w);
    refused("a smaller source", "smaller");
    if (rank == 0) {
        FILE *t = fopen(src[1], "w");
        fputs("not hdf5\n", t);
        fclose(t);
    }
    MPI_Barrier(w);
    refused("a source that is not HDF5", "not a readable HDF5 file");
    if (rank == 0) rename(away, src[1]);
    MPI_Barrier(w);
    read_all(vds, "sec2");
}

int main(int argc, char **argv)
{
    if (hpc_init(&argc, &argv)) {
        fprintf(stderr, "%s\n", hpc_last_error());
        return 1;
    }
    MPI_Comm world = hpc_comm_world();
    rank = hpc_rank();
    size = hpc_size();
    int id = rank == 0 ? (int)getpid() : 0;
    MPI_Bcast(&id, 1, MPI_INT, 0, world);
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(dir, sizeof dir, "%s/hpc_test_h5_vds_%d_np%d", tmp, id, size);
    snprintf(vds, sizeof vds, "%s/joined.h5", dir);
    snprintf(plain, sizeof plain, "%s/plain.h5", dir);
    snprintf(src[0], sizeof src[0], "%s/src0.h5", dir);
    snprintf(src[1], sizeof src[1], "%s/src1.h5", dir);
    snprintf(away, sizeof away, "%s/src1.h5.away", dir);
    make_files();
    MPI_Barrier(world);
    read_all(plain, "mpio");
    read_all(vds, "sec2");
    broken_sources();
    MPI_Barrier(world);
    if (rank == 0) {
        const char *all[] = {vds, plain, src[0], src[1], away};
        for (int i = 0; i < 5; i++) unlink(all[i]);
        rmdir(dir);
    }
    int errs = test_failures, total = 0;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, world);
    hpc_finalize();
    return rank == 0 ? total != 0 : 0;
}
