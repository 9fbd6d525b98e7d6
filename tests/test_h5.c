/* test_h5 - parallel HDF5 helpers: uneven row splits written collectively
 * and read back, 2D blocks, attributes, provenance on a sub-communicator,
 * the atomic finish (.partial renamed only when every rank succeeded; a
 * .partial opened read-only never is), the writer's lock, non-regular
 * files refused, types checked, HDF5's own printing silenced only inside
 * libhpc, and the errors for bad paths and shapes. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
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
    EXPECT(hpc_h5_dataset_create(f, "/grp/data", H5T_NATIVE_DOUBLE, 2, dims, chunk, 0, NULL, &d) == 0,
           "dset: %s", hpc_last_error());
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
    EXPECT(hpc_h5_provenance(f, id, "test_h5", 3, argv) == 0, "provenance: %s", hpc_last_error());
    EXPECT(hpc_h5_sync_data(f) == 0, "sync: %s", hpc_last_error());
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
    /* types: float64 data is not integer data */
    EXPECT(hpc_h5_dataset_open(f, "/grp/data", 2, want, &d) == 0, "reopen");
    EXPECT(hpc_h5_dataset_check_type(d, "/grp/data", H5T_FLOAT, 8) == 0, "float64 refused");
    EXPECT(hpc_h5_dataset_check_type(d, "/grp/data", H5T_INTEGER, 4) == HPC_ERR_DATA, "int32 accepted");
    EXPECT(strstr(hpc_last_cause(), "8-byte float") != NULL, "type message: %s", hpc_last_cause());
    H5Dclose(d);
    EXPECT(hpc_h5_dataset_open(f, "/grp", 1, NULL, &d) == HPC_ERR_DATA, "a group opened as a dataset");
    EXPECT(hpc_h5_close(f) == 0, "close");
}

/* A 2D dataset written as one block per rank of a 1 x size grid (column
 * blocks) and read back as row blocks: every element where it belongs. */
static void blocks(MPI_Comm comm)
{
    char bpath[600];
    snprintf(bpath, sizeof bpath, "%s.blocks", path);
    hpc_h5file_t *f;
    EXPECT(hpc_h5_create(bpath, comm, HPC_H5_OVERWRITE, &f) == 0, "create: %s", hpc_last_error());
    hsize_t dims[2] = {NROWS, 2 * NCOLS + 1};
    hid_t d;
    EXPECT(hpc_h5_dataset_create(f, "m", H5T_NATIVE_FLOAT, 2, dims, NULL, 0, NULL, &d) == 0, "dset");
    hsize_t c0 = dims[1] * rank / size, nc = dims[1] * (rank + 1) / size - c0;
    double mine[NROWS * (2 * NCOLS + 1)];
    for (hsize_t i = 0; i < NROWS; i++)
        for (hsize_t j = 0; j < nc; j++) mine[i * nc + j] = 10.0 * i + (c0 + j);
    EXPECT(hpc_h5_write_block(d, H5T_NATIVE_DOUBLE, 0, c0, NROWS, nc, mine) == 0, "block write: %s",
           hpc_last_error());
    hsize_t r0, nr;
    my_rows(&r0, &nr);
    float back[NROWS * (2 * NCOLS + 1)];
    EXPECT(hpc_h5_read_block(d, H5T_NATIVE_FLOAT, r0, 1, nr, dims[1] - 1, back) == 0, "block read: %s",
           hpc_last_error());
    for (hsize_t i = 0; i < nr; i++)
        for (hsize_t j = 0; j + 1 < dims[1]; j++)
            EXPECT(back[i * (dims[1] - 1) + j] == 10.0f * (r0 + i) + (j + 1), "block (%llu,%llu) = %g",
                   (unsigned long long)(r0 + i), (unsigned long long)(j + 1), back[i * (dims[1] - 1) + j]);
    EXPECT(hpc_h5_read_block(d, H5T_NATIVE_FLOAT, NROWS, 0, 1, 1, back) == HPC_ERR_ARG, "block beyond end");
    H5Dclose(d);
    EXPECT(hpc_h5_finish(f, 1) == 0, "finish");
    MPI_Barrier(comm);
    if (rank == 0) unlink(bpath);
}

/* The writer holds PATH.lock: a second writer of the same output (another
 * run) is refused; a .partial opened read-only is never renamed. */
static void locking(MPI_Comm comm)
{
    char lpath[600], lpartial[700];
    snprintf(lpath, sizeof lpath, "%s.lock-test", path);
    snprintf(lpartial, sizeof lpartial, "%s.partial", lpath);
    hpc_h5file_t *f, *g;
    EXPECT(hpc_h5_create(lpath, comm, HPC_H5_FAIL_IF_EXISTS, &f) == 0, "create: %s", hpc_last_error());
    EXPECT(hpc_h5_create(lpath, comm, HPC_H5_OVERWRITE, &g) == HPC_ERR_IO, "second writer allowed");
    EXPECT(strstr(hpc_last_cause(), "another run") != NULL, "lock message: %s", hpc_last_cause());
    EXPECT(hpc_h5_open(lpath, comm, 1, 1, &g) == HPC_ERR_IO, "resuming a .partial that is being written");
    EXPECT(hpc_h5_finish(f, 0) == HPC_ERR_IO, "failed finish");
    EXPECT(exists(lpartial), "the .partial went away");
    EXPECT(hpc_h5_open(lpath, comm, 1, 0, &g) == 0, "read-only open of the .partial: %s", hpc_last_error());
    EXPECT(hpc_h5_finish(g, 1) == 0, "finish of a read-only .partial");
    EXPECT(!exists(lpath) && exists(lpartial), "a read-only .partial was renamed");
    MPI_Barrier(comm);
    if (rank == 0) unlink(lpartial);
    /* a device is not an output */
    EXPECT(hpc_h5_create("/dev/null", comm, HPC_H5_OVERWRITE, &f) == HPC_ERR_IO, "/dev/null replaced");
    EXPECT(strstr(hpc_last_cause(), "not a regular file") != NULL, "message %s", hpc_last_cause());
}

/* Provenance on a sub-communicator: records its size, does not touch the
 * ranks outside (it used to broadcast on the world and hang). */
static void subcomm(MPI_Comm comm)
{
    MPI_Comm half;
    MPI_Comm_split(comm, rank % 2, rank, &half);
    int hsize;
    MPI_Comm_size(half, &hsize);
    if (rank % 2 == 0) {
        char spath[600];
        snprintf(spath, sizeof spath, "%s.sub", path);
        hpc_h5file_t *f;
        EXPECT(hpc_h5_create(spath, half, HPC_H5_OVERWRITE, &f) == 0, "create: %s", hpc_last_error());
        char *argv[] = {"test_h5"};
        EXPECT(hpc_h5_provenance(f, hpc_h5_id(f), "test_h5", 1, argv) == 0, "provenance: %s",
               hpc_last_error());
        EXPECT(hpc_h5_finish(f, 1) == 0, "finish");
        EXPECT(hpc_h5_open(spath, half, 0, 0, &f) == 0, "open");
        int64_t r = 0;
        EXPECT(hpc_h5_attr_get_int64(hpc_h5_id(f), "ranks", &r) == 0 && r == hsize,
               "ranks %lld on a %d-rank communicator", (long long)r, hsize);
        hpc_h5_close(f);
        MPI_Barrier(half);
        if (rank == 0) unlink(spath);
    }
    MPI_Comm_free(&half);
    MPI_Barrier(comm);
}

/* HDF5 prints its error stack for the caller's own failing calls, and not
 * for libhpc's (which become one libhpc error). */
static void printing(MPI_Comm comm)
{
    hpc_h5file_t *f;
    if (hpc_h5_open(path, comm, 0, 0, &f) != 0) return;
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.stderr%d", path, rank);
    fflush(stderr);
    int saved = dup(2), fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    hid_t d;
    int ours = hpc_h5_dataset_open(f, "/grp/none", 1, NULL, &d);
    fflush(stderr);
    off_t after_ours = lseek(fd, 0, SEEK_END);
    hid_t theirs = H5Dopen2(hpc_h5_id(f), "/grp/none", H5P_DEFAULT);
    fflush(stderr);
    off_t after_theirs = lseek(fd, 0, SEEK_END);
    dup2(saved, 2);
    close(saved);
    close(fd);
    unlink(tmp);
    EXPECT(ours == HPC_ERR_DATA && after_ours == 0, "libhpc's failing call printed %lld bytes",
           (long long)after_ours);
    EXPECT(theirs < 0 && after_theirs > 0, "the caller's failing HDF5 call printed nothing");
    hpc_h5_close(f);
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
    EXPECT(hpc_h5_create("/nonexistent/dir/x.h5", comm, HPC_H5_OVERWRITE, &f) == HPC_ERR_IO,
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
    MPI_Comm world = hpc_comm_world();
    rank = hpc_rank();
    size = hpc_size();
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    int id = 0;
    if (rank == 0) id = (int)getpid();
    MPI_Bcast(&id, 1, MPI_INT, 0, world);
    snprintf(path, sizeof path, "%s/hpc_test_h5_%d_np%d.h5", dir, id, size);
    snprintf(partial, sizeof partial, "%s.partial", path);
    write_file(world);
    read_back(world);
    printing(world);
    blocks(world);
    locking(world);
    subcomm(world);
    failures(world);
    MPI_Barrier(world);
    if (rank == 0) unlink(path);
    int errs = test_failures, total = 0;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, world);
    hpc_finalize();
    return rank == 0 ? total != 0 : 0;
}
