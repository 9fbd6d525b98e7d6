/* test_h5_at - hpc_h5_read_rows_at at 1 to 4 ranks: every rank reads its
 * own list of rows - shuffled, with repeats and runs of neighbours, some
 * ranks none - of a [N, F] matrix (nsel 1, with float64 -> float32
 * conversion) and of an [N, T, D] array (nsel 2: the D values at (i, t);
 * nsel 1: whole [T, D] slabs), and gets exactly the values the file holds,
 * in the order asked; an index beyond the data is refused. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hpc_h5.h"
#include "testlib.h"

enum { N = 53, F = 3, T = 7, D = 2 };
static int rank, size;

static double val2(hsize_t i, hsize_t f) { return 1000.0 * i + f + 0.25; }
static double val3(hsize_t i, hsize_t t, hsize_t d) { return 10000.0 * i + 10.0 * t + d; }

static void make(const char *path, MPI_Comm comm)
{
    hpc_h5file_t *f;
    EXPECT(hpc_h5_create(path, comm, HPC_H5_OVERWRITE, &f) == 0, "create: %s", hpc_last_error());
    hsize_t d2[2] = {N, F}, d3[3] = {N, T, D}, c3[3] = {4, T, D};
    hid_t a, b;
    EXPECT(hpc_h5_dataset_create(f, "m", H5T_NATIVE_DOUBLE, 2, d2, NULL, 0, NULL, &a) == 0, "m");
    EXPECT(hpc_h5_dataset_create(f, "y", H5T_NATIVE_DOUBLE, 3, d3, c3, 0, NULL, &b) == 0, "y");
    static double m[N * F], y[N * T * D];
    for (hsize_t i = 0; i < N; i++)
        for (hsize_t k = 0; k < F; k++) m[i * F + k] = val2(i, k);
    for (hsize_t i = 0; i < N; i++)
        for (hsize_t t = 0; t < T; t++)
            for (hsize_t d = 0; d < D; d++) y[(i * T + t) * D + d] = val3(i, t, d);
    hsize_t mine = rank == 0 ? N : 0;
    EXPECT(hpc_h5_write_rows(a, H5T_NATIVE_DOUBLE, 0, mine, m) == 0, "write m");
    EXPECT(hpc_h5_write_rows(b, H5T_NATIVE_DOUBLE, 0, mine, y) == 0, "write y");
    H5Dclose(a);
    H5Dclose(b);
    EXPECT(hpc_h5_finish(f, 1) == 0, "finish: %s", hpc_last_error());
}

/* this rank's list: rank 1 asks for nothing; others a shuffled mix of
 * runs (i, i+1, ...) and repeats */
static size_t my_list(hsize_t *at, int nsel)
{
    if (rank == 1) return 0;
    size_t n = 0;
    for (int k = 0; k < 40; k++) {
        hsize_t i = (hsize_t)((k * 17 + rank * 5) % N), t = (hsize_t)((k * 3 + rank) % (T - 1));
        at[n * nsel] = i;
        if (nsel == 2) at[n * nsel + 1] = t;
        n++;
        if (k % 3 == 0) {   /* its neighbour: one run */
            at[n * nsel] = nsel == 2 ? i : (i + 1) % N;
            if (nsel == 2) at[n * nsel + 1] = t + 1;
            n++;
        }
        if (k % 5 == 0) {   /* a repeat of the first row */
            memcpy(at + n * nsel, at, nsel * sizeof *at);
            n++;
        }
    }
    return n;
}

static void check(const char *path, MPI_Comm comm)
{
    hpc_h5file_t *f;
    EXPECT(hpc_h5_open(path, comm, 0, 0, &f) == 0, "open: %s", hpc_last_error());
    hid_t m, y;
    EXPECT(hpc_h5_dataset_open(f, "m", 2, NULL, &m) == 0, "m");
    EXPECT(hpc_h5_dataset_open(f, "y", 3, NULL, &y) == 0, "y");
    static hsize_t at[400];
    static float mf[400 * F];
    static double yd[400 * T * D];

    size_t n = my_list(at, 1);
    EXPECT(hpc_h5_read_rows_at(m, H5T_NATIVE_FLOAT, 1, n, at, mf) == 0, "rows of m: %s", hpc_last_error());
    for (size_t j = 0; j < n; j++)
        for (int k = 0; k < F; k++)
            EXPECT(mf[j * F + k] == (float)val2(at[j], k), "m row %zu (%llu) col %d: %g", j,
                   (unsigned long long)at[j], k, mf[j * F + k]);

    n = my_list(at, 2);
    EXPECT(hpc_h5_read_rows_at(y, H5T_NATIVE_DOUBLE, 2, n, at, yd) == 0, "(i,t) of y: %s", hpc_last_error());
    for (size_t j = 0; j < n; j++)
        for (int d = 0; d < D; d++)
            EXPECT(yd[j * D + d] == val3(at[2 * j], at[2 * j + 1], d), "y (%llu,%llu) d %d: %g",
                   (unsigned long long)at[2 * j], (unsigned long long)at[2 * j + 1], d, yd[j * D + d]);

    n = my_list(at, 1);
    EXPECT(hpc_h5_read_rows_at(y, H5T_NATIVE_DOUBLE, 1, n, at, yd) == 0, "slabs of y: %s", hpc_last_error());
    for (size_t j = 0; j < n; j++)
        for (int t = 0; t < T; t++)
            for (int d = 0; d < D; d++)
                EXPECT(yd[(j * T + t) * D + d] == val3(at[j], t, d), "slab %zu", j);

    /* every rank passes the bad index: it is refused before any I/O */
    at[0] = N;
    EXPECT(hpc_h5_read_rows_at(m, H5T_NATIVE_FLOAT, 1, 1, at, mf) == HPC_ERR_ARG, "index beyond N");
    at[0] = 0;
    EXPECT(hpc_h5_read_rows_at(m, H5T_NATIVE_FLOAT, 3, 1, at, mf) == HPC_ERR_ARG, "nsel > rank");
    H5Dclose(m);
    H5Dclose(y);
    EXPECT(hpc_h5_close(f) == 0, "close");
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
    char path[512];
    int id = rank == 0 ? (int)getpid() : 0;
    MPI_Bcast(&id, 1, MPI_INT, 0, world);
    snprintf(path, sizeof path, "%s/hpc_test_h5_at_%d_np%d.h5", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             id, size);
    make(path, world);
    check(path, world);
    MPI_Barrier(world);
    if (rank == 0) unlink(path);
    int errs = test_failures, total = 0;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, world);
    if (rank == 0 && !total) printf("test_h5_at: all checks passed on %d ranks\n", size);
    hpc_finalize();
    return rank == 0 ? total != 0 : 0;
}
