/* test_h5 - parallel HDF5 helpers: uneven row splits written collectively
 * and read back, attributes, the atomic finish (.partial renamed only when
 * every rank succeeded), and the errors for bad paths and shapes. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hpc_h5.h"
#include "testlib.h"

#define NROWS 7   /* fewer rows than ranks*2: some ranks write 1 row, some 2 */
#define NCOLS 3

static int rank, size;
static char path[512], partial[600];

static int exists(const char *p) { return access(p, F_OK) == 0; }

static void my_rows(hsize_t *r0, hsize_t *n)
{
    hsize_t base = NROWS / size, extra = NROWS % size;
    *n = base + ((hsize_t)rank < extra);
    *r0 = rank * base + ((hsize_t)rank < extra ? (hsize_t)rank : extra);
}

static void write_file(MPI_Comm comm)
{
    hpc_h5file_t *f;
    int rc = hpc_h5_create(path, comm, HPC_H5_FAIL_IF_EXISTS, &f);
    EXPECT(rc == 0, "create: %s", hpc_last_error());
    if (rc) return;
    EXPECT(exists(partial) && !exists(path), "while writing only .partial exists");
    hsize_t dims[2] = {NROWS, NCOLS}, chunk[2] = {2, NCOLS}, r0, n;
    hid_t d;
    EXPECT(hpc_h5_dataset_create(f, "/grp/data", H5T_NATIVE_DOUBLE, 2, dims, chunk, &d) == 0, "dset: %s",
           hpc_last_error());
    my_rows(&r0, &n);
    double buf[NROWS * NCOLS];
    for (hsize_t i = 0; i < n * NCOLS; i++) buf[i] = 100.0 * (r0 + i / NCOLS) + i % NCOLS;
    EXPECT(hpc_h5_write_rows(d, H5T_NATIVE_DOUBLE, r0, n, buf) == 0, "write: %s", hpc_last_error());
    H5Dclose(d);
    hid_t id = hpc_h5_id(f);
    EXPECT(hpc_h5_attr_set_string(id, "system", "lorenz") == 0, "attr");
    EXPECT(hpc_h5_attr_set_double(id, "rtol", 1e-3) == 0, "attr");
    EXPECT(hpc_h5_attr_set_int64(id, "seed", 1234567890123LL) == 0, "attr");
    double p[3] = {10, 28, 8.0 / 3};
    EXPECT(hpc_h5_attr_set_doubles(id, "params", p, 3) == 0, "attr");
    char *argv[] = {"test_h5", "--flag", "x"};
    EXPECT(hpc_h5_attr_provenance(id, "test_h5", 3, argv) == 0, "provenance: %s", hpc_last_error());
    EXPECT(hpc_h5_finish(f, 1) == 0, "finish: %s", hpc_last_error());
    EXPECT(exists(path) && !exists(partial), "after finish: final name only");
}

static void read_back(MPI_Comm comm)
{
    hpc_h5file_t *f;
    int rc = hpc_h5_open(path, comm, 0, 0, &f);
    EXPECT(rc == 0, "open: %s", hpc_last_error());
    if (rc) return;
    hid_t d;
    hsize_t want[2] = {NROWS, 0}, wrong[2] = {NROWS + 1, NCOLS};
    EXPECT(hpc_h5_dataset_open(f, "/grp/data", 2, wrong, &d) == HPC_ERR_DATA, "wrong shape accepted");
    EXPECT(hpc_h5_dataset_open(f, "/nope", 2, NULL, &d) == HPC_ERR_DATA, "missing dataset accepted");
    EXPECT(strstr(hpc_last_error(), "no dataset '/nope'") != NULL, "message %s", hpc_last_error());
    EXPECT(hpc_h5_dataset_open(f, "/grp/data", 2, want, &d) == 0, "open dset: %s", hpc_last_error());
    /* every rank reads all rows: another split than the writer's */
    double buf[NROWS * NCOLS];
    EXPECT(hpc_h5_read_rows(d, H5T_NATIVE_DOUBLE, 0, NROWS, buf) == 0, "read: %s", hpc_last_error());
    for (int i = 0; i < NROWS * NCOLS; i++)
        EXPECT(buf[i] == 100.0 * (i / NCOLS) + i % NCOLS, "element %d = %g", i, buf[i]);
    EXPECT(hpc_h5_read_rows(d, H5T_NATIVE_DOUBLE, 5, NROWS, buf) == HPC_ERR_ARG, "rows beyond end");
    H5Dclose(d);
    hid_t id = hpc_h5_id(f);
    char *s = NULL;
    double x;
    int64_t i64;
    EXPECT(hpc_h5_attr_get_string(id, "system", &s) == 0 && s && !strcmp(s, "lorenz"), "string attr");
    free(s);
    EXPECT(hpc_h5_attr_get_string(id, "command_line", &s) == 0 && s && !strcmp(s, "test_h5 --flag x"),
           "command line attr '%s'", s ? s : "");
    free(s);
    EXPECT(hpc_h5_attr_get_double(id, "rtol", &x) == 0 && x == 1e-3, "double attr");
    EXPECT(hpc_h5_attr_get_int64(id, "seed", &i64) == 0 && i64 == 1234567890123LL, "int64 attr");
    EXPECT(hpc_h5_attr_get_int64(id, "ranks", &i64) == 0 && i64 == size, "ranks attr %lld", (long long)i64);
    EXPECT(hpc_h5_attr_get_double(id, "missing", &x) == HPC_ERR_DATA, "missing attr");
    EXPECT(hpc_h5_close(f) == 0, "close");
}

static void failures(MPI_Comm comm)
{
    hpc_h5file_t *f;
    /* never overwrite without being told */
    EXPECT(hpc_h5_create(path, comm, HPC_H5_FAIL_IF_EXISTS, &f) == HPC_ERR_IO, "overwrote");
    EXPECT(strstr(hpc_last_error(), "exists") != NULL, "message %s", hpc_last_error());
    /* one rank fails: the old complete file stays, the new one is .partial */
    if (rank == 0) unlink(path);
    MPI_Barrier(comm);
    EXPECT(hpc_h5_create(path, comm, HPC_H5_OVERWRITE, &f) == 0, "create: %s", hpc_last_error());
    EXPECT(hpc_h5_finish(f, rank != size - 1) == HPC_ERR_IO, "finish succeeded with a failed rank");
    EXPECT(!exists(path) && exists(partial), "failed run left the final name");
    /* unreadable, missing, and not-HDF5 inputs */
    EXPECT(hpc_h5_open("/nonexistent/dir/x.h5", comm, 0, 0, &f) == HPC_ERR_IO, "missing file");
    EXPECT(strstr(hpc_last_error(), "No such file") != NULL, "message %s", hpc_last_error());
    EXPECT(hpc_h5_create("/nonexistent/dir/x.h5", comm, HPC_H5_OVERWRITE, &f) == HPC_ERR_HDF5,
           "create in a missing directory");
    char junk[600];
    snprintf(junk, sizeof junk, "%s.junk", path);
    if (rank == 0) {
        FILE *j = fopen(junk, "w");
        fputs("not hdf5\n", j);
        fclose(j);
    }
    MPI_Barrier(comm);
    EXPECT(hpc_h5_open(junk, comm, 0, 0, &f) == HPC_ERR_HDF5, "text file opened as HDF5");
    MPI_Barrier(comm);
    if (rank == 0) {
        unlink(junk);
        unlink(partial);
    }
}

int main(int argc, char **argv)
{
    if (hpc_init(&argc, &argv)) {
        fprintf(stderr, "%s\n", hpc_last_error());
        return 1;
    }
    const hpc_env_t *e = hpc_env();
    rank = e->rank;
    size = e->size;
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    int id = 0;
    if (rank == 0) id = (int)getpid();
    MPI_Bcast(&id, 1, MPI_INT, 0, e->world);
    snprintf(path, sizeof path, "%s/hpc_test_h5_%d_np%d.h5", dir, id, size);
    snprintf(partial, sizeof partial, "%s.partial", path);
    write_file(e->world);
    read_back(e->world);
    failures(e->world);
    MPI_Barrier(e->world);
    if (rank == 0) unlink(path);
    int errs = test_failures, total = 0;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, e->world);
    hpc_finalize();
    return rank == 0 ? total != 0 : 0;
}
