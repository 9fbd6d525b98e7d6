/* test_h5_at - hpc_h5_read_rows_at at 1 to 4 ranks: every rank reads its
 * own list of rows - shuffled, with repeats and runs of neighbours, some
 * ranks none - of a [N, F] matrix (nsel 1, with float64 -> float32
 * conversion) and of an [N, T, D] array (nsel 2: the D values at (i, t);
 * nsel 1: whole [T, D] slabs), all dense enough to be sieved, and a few
 * rows far apart in a long matrix (read exactly, by one rank alone: the
 * call is independent), and gets exactly the values the file holds, in
 * the order asked; a run of rows longer than one sieve slab (8 MiB) is
 * read across slabs; an index beyond the data is refused. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hpc_h5.h"
#include "testlib.h"

enum { N = 53, F = 3, T = 7, D = 2, LONG = 30000, WIDE = 60000, WROWS = 40 };
static int rank, size;

static double val2(hsize_t i, hsize_t f) { return 1000.0 * i + f + 0.25; }
static double val3(hsize_t i, hsize_t t, hsize_t d) { return 10000.0 * i + 10.0 * t + d; }

static void make(const char *path, MPI_Comm comm)
{
    hpc_h5file_t *f;
    EXPECT(hpc_h5_create(path, comm, HPC_H5_OVERWRITE, &f) == 0, "create: %s", hpc_last_error());
    hsize_t d2[2] = {N, F}, d3[3] = {N, T, D}, c3[3] = {4, T, D};
    hid_t a, b, c;
    EXPECT(hpc_h5_dataset_create(f, "m", H5T_NATIVE_DOUBLE, 2, d2, NULL, 0, NULL, &a) == 0, "m");
    hsize_t dl[2] = {LONG, 2}, cl[2] = {1000, 2};
    EXPECT(hpc_h5_dataset_create(f, "long", H5T_NATIVE_INT32, 2, dl, cl, 0, NULL, &c) == 0, "long");
    static int32_t l[LONG * 2];
    for (int i = 0; i < LONG * 2; i++) l[i] = i;
    EXPECT(hpc_h5_write_rows(c, H5T_NATIVE_INT32, 0, rank == 0 ? LONG : 0, l) == 0, "write long");
    H5Dclose(c);
    hsize_t dw[2] = {WROWS, WIDE};   /* 9.6 MB: more than one sieve slab */
    EXPECT(hpc_h5_dataset_create(f, "wide", H5T_NATIVE_INT32, 2, dw, NULL, 0, NULL, &c) == 0, "wide");
    int32_t *w = malloc(sizeof *w * WROWS * WIDE);
    for (int i = 0; i < WROWS * WIDE; i++) w[i] = i;
    EXPECT(hpc_h5_write_rows(c, H5T_NATIVE_INT32, 0, rank == 0 ? WROWS : 0, w) == 0, "write wide");
    free(w);
    H5Dclose(c);
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

    /* sparse rows, rank 0 alone (the others are already at the barrier) */
    hid_t lg;
    EXPECT(hpc_h5_dataset_open(f, "long", 2, NULL, &lg) == 0, "long");
    if (rank == 0) {
        int32_t got[2 * 12];
        hsize_t far[12];
        for (int j = 0; j < 12; j++) far[j] = (hsize_t)((j * 7919 + 13) % LONG);
        far[11] = far[3];
        EXPECT(hpc_h5_read_rows_at(lg, H5T_NATIVE_INT32, 1, 12, far, got) == 0, "sparse: %s", hpc_last_error());
        for (int j = 0; j < 12; j++)
            EXPECT(got[2 * j] == (int32_t)(2 * far[j]) && got[2 * j + 1] == (int32_t)(2 * far[j] + 1),
                   "sparse row %llu: %d %d", (unsigned long long)far[j], got[2 * j], got[2 * j + 1]);
    }
    MPI_Barrier(comm);
    H5Dclose(lg);

    /* every row of the wide matrix, and row 5 again: one run over two slabs */
    hid_t wd;
    EXPECT(hpc_h5_dataset_open(f, "wide", 2, NULL, &wd) == 0, "wide");
    int32_t *w = malloc(sizeof *w * (WROWS + 1) * WIDE);
    hsize_t all[WROWS + 1];
    for (int j = 0; j < WROWS; j++) all[j] = (hsize_t)(WROWS - 1 - j);
    all[WROWS] = 5;
    EXPECT(hpc_h5_read_rows_at(wd, H5T_NATIVE_INT32, 1, WROWS + 1, all, w) == 0, "wide: %s", hpc_last_error());
    for (int j = 0; j <= WROWS; j++)
        EXPECT(w[(size_t)j * WIDE] == (int32_t)(all[j] * WIDE) &&
                   w[(size_t)j * WIDE + WIDE - 1] == (int32_t)(all[j] * WIDE + WIDE - 1),
               "wide row %llu", (unsigned long long)all[j]);
    free(w);
    H5Dclose(wd);

    /* the bad index is refused before any I/O */
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
