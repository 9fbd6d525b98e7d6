/* test_ckpt - checkpoints and replica checks (hpc_app.h) at 1 to 4 ranks:
 * rank 0's arrays are what every rank reads back; while a checkpoint is
 * written only PATH.partial exists and the previous PATH stays intact
 * until commit; a commit that one rank fails leaves the previous
 * checkpoint as it was; another options key, a wrong shape, a truncated
 * or missing file are refused with HPC_ERR_DATA / HPC_ERR_IO; arrays
 * written each by another rank (hpc_ckpt_put_from) read back as that
 * rank's; arrays of 1, 2 and 3 dims written in uneven runs of their
 * elements, one a rank (some empty; hpc_ckpt_put_part), read back whole
 * and in runs of another split (hpc_ckpt_get_part); and hpc_all_same tells a replica from one that drifted by one
 * bit. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hpc_app_h5.h"
#include "testlib.h"

static int rank, size;
static char path[512], partial[600];
static const char *key = "layers=3,4;lr=0.001";

static int exists(const char *p)
{
    int e = access(p, F_OK) == 0;
    MPI_Bcast(&e, 1, MPI_INT, 0, hpc_comm_world());   /* rank 0's view */
    return e;
}

/* version v of the data; ranks other than 0 hold garbage, never written */
static void fill(float w[12], double b[5], int v)
{
    for (int i = 0; i < 12; i++) w[i] = rank == 0 ? 0.5f * i + v : -1.0f;
    for (int i = 0; i < 5; i++) b[i] = rank == 0 ? 1e-3 * i - v : -2.0;
}

static int write_version(int v, int ok_here)
{
    float w[12];
    double b[5];
    fill(w, b, v);
    char *argv[] = {"test_ckpt", "--x"};
    hpc_ckpt_t *c;
    int rc = hpc_ckpt_begin(path, hpc_comm_world(), key, 2, argv, &c);
    EXPECT(rc == 0, "begin: %s", hpc_last_error());
    if (rc) return rc;
    EXPECT(exists(partial), "no .partial while writing");
    hsize_t dw[2] = {3, 4}, db[1] = {5};
    EXPECT(hpc_ckpt_put(c, "model/0/weight", H5T_NATIVE_FLOAT, 2, dw, w) == 0, "put: %s", hpc_last_error());
    EXPECT(hpc_ckpt_put(c, "model/0/bias", H5T_NATIVE_DOUBLE, 1, db, b) == 0, "put: %s", hpc_last_error());
    EXPECT(hpc_h5_attr_set_int64(hpc_ckpt_id(c), "step", 100 + v) == 0, "attr");
    return hpc_ckpt_commit(c, ok_here);
}

/* read back: every rank gets rank 0's version v */
static void check(int v)
{
    hpc_ckpt_t *c;
    EXPECT(hpc_ckpt_open(path, hpc_comm_world(), key, &c) == 0, "open: %s", hpc_last_error());
    float w[12];
    double b[5];
    hsize_t dw[2] = {3, 4}, db[1] = {5};
    EXPECT(hpc_ckpt_get(c, "model/0/weight", H5T_NATIVE_FLOAT, 2, dw, w) == 0, "get: %s", hpc_last_error());
    EXPECT(hpc_ckpt_get(c, "model/0/bias", H5T_NATIVE_DOUBLE, 1, db, b) == 0, "get: %s", hpc_last_error());
    for (int i = 0; i < 12; i++) EXPECT(w[i] == 0.5f * i + v, "w[%d] = %g (version %d)", i, w[i], v);
    for (int i = 0; i < 5; i++) EXPECT(b[i] == 1e-3 * i - v, "b[%d] = %g (version %d)", i, b[i], v);
    int64_t step = 0;
    EXPECT(hpc_h5_attr_get_int64(hpc_ckpt_id(c), "step", &step) == 0 && step == 100 + v, "step %lld",
           (long long)step);
    hsize_t wrong[2] = {4, 3};
    EXPECT(hpc_ckpt_get(c, "model/0/weight", H5T_NATIVE_FLOAT, 2, wrong, w) == HPC_ERR_DATA, "wrong shape");
    EXPECT(hpc_ckpt_get(c, "model/1/weight", H5T_NATIVE_FLOAT, 2, dw, w) == HPC_ERR_DATA, "missing array");
    EXPECT(hpc_ckpt_close(c) == 0, "close");
}

static void refusals(void)
{
    hpc_ckpt_t *c = NULL;
    int rc = hpc_ckpt_open(path, hpc_comm_world(), "layers=3,5;lr=0.001", &c);
    EXPECT(rc == HPC_ERR_DATA && strstr(hpc_last_cause(), "layers: 3,4 in the file, 3,5 now"),
           "other key: %d %s", rc, hpc_last_cause());
    char cut[600];
    snprintf(cut, sizeof cut, "%s.cut", path);
    if (rank == 0) {   /* the first half of a good checkpoint */
        FILE *in = fopen(path, "rb"), *out = fopen(cut, "wb");
        char buf[65536];
        size_t n = in ? fread(buf, 1, sizeof buf, in) : 0;
        if (out) fwrite(buf, 1, n / 2, out);
        if (in) fclose(in);
        if (out) fclose(out);
    }
    MPI_Barrier(hpc_comm_world());
    rc = hpc_ckpt_open(cut, hpc_comm_world(), NULL, &c);
    EXPECT(rc == HPC_ERR_DATA, "truncated file: %d %s", rc, hpc_last_cause());
    snprintf(cut, sizeof cut, "%s.none", path);
    EXPECT(!hpc_ckpt_exists(cut, hpc_comm_world()), "exists");
    EXPECT(hpc_ckpt_open(cut, hpc_comm_world(), NULL, &c) == HPC_ERR_IO, "missing file");
    if (rank == 0) unlink(cut);
    snprintf(cut, sizeof cut, "%s.cut", path);
    if (rank == 0) unlink(cut);
}

/* every rank writes one array of the checkpoint (hpc_ckpt_put_from):
 * each reads back every rank's */
static void parts(void)
{
    char name[64], p2[600];
    snprintf(p2, sizeof p2, "%s.parts", path);
    hpc_ckpt_t *c;
    EXPECT(hpc_ckpt_begin(p2, hpc_comm_world(), key, 0, NULL, &c) == 0, "begin: %s", hpc_last_error());
    hsize_t n[1] = {3};
    for (int r = 0; r < size; r++) {
        double mine[3] = {rank * 10.0, rank * 10.0 + 1, rank == r ? 7.0 : -1.0};
        snprintf(name, sizeof name, "part/%d", r);
        EXPECT(hpc_ckpt_put_from(c, name, H5T_NATIVE_DOUBLE, 1, n, mine, r) == 0, "put_from: %s",
               hpc_last_error());
    }
    EXPECT(hpc_ckpt_commit(c, 1) == 0, "commit: %s", hpc_last_error());
    EXPECT(hpc_ckpt_open(p2, hpc_comm_world(), key, &c) == 0, "open: %s", hpc_last_error());
    for (int r = 0; r < size; r++) {
        double got[3] = {0};
        snprintf(name, sizeof name, "part/%d", r);
        EXPECT(hpc_ckpt_get(c, name, H5T_NATIVE_DOUBLE, 1, n, got) == 0, "get: %s", hpc_last_error());
        EXPECT(got[0] == r * 10.0 && got[1] == r * 10.0 + 1 && got[2] == 7.0, "part %d: %g %g %g", r, got[0],
               got[1], got[2]);
    }
    EXPECT(hpc_ckpt_close(c) == 0, "close");
    MPI_Barrier(hpc_comm_world());
    if (rank == 0) unlink(p2);
}

/* the run of n elements rank r takes in split k: [cut(r), cut(r + 1)),
 * uneven cut points from a formula; split 1 leaves rank 0's run empty */
static size_t cut(int k, int j, size_t n)
{
    if (j <= 0 || (k == 1 && j == 1 && size > 1)) return 0;
    if (j >= size) return n;
    return n * (size_t)(j * j + k) / (size_t)(size * size + k);
}

static void run_of(int k, int r, size_t n, size_t *first, size_t *count)
{
    *first = cut(k, r, n);
    *count = cut(k, r + 1, n) - *first;
}

static void runs(void)
{
    char p3[600];
    snprintf(p3, sizeof p3, "%s.runs", path);
    const hsize_t shape[3][3] = {{61, 0, 0}, {7, 9, 0}, {3, 4, 5}};
    enum { MOST = 64 };
    hpc_ckpt_t *c;
    EXPECT(hpc_ckpt_begin(p3, hpc_comm_world(), key, 0, NULL, &c) == 0, "begin: %s", hpc_last_error());
    for (int nd = 1; nd <= 3; nd++) {
        char name[32];
        size_t n = 1, first, count;
        for (int i = 0; i < nd; i++) n *= shape[nd - 1][i];
        run_of(1, rank, n, &first, &count);
        float mine[MOST];
        for (size_t i = 0; i < count; i++) mine[i] = (float)(first + i) + 0.25f * nd;
        snprintf(name, sizeof name, "runs/%d", nd);
        EXPECT(hpc_ckpt_put_part(c, name, H5T_NATIVE_FLOAT, nd, shape[nd - 1], mine, first, count) == 0,
               "put_part %dD: %s", nd, hpc_last_error());
    }
    EXPECT(hpc_ckpt_commit(c, 1) == 0, "commit: %s", hpc_last_error());
    EXPECT(hpc_ckpt_open(p3, hpc_comm_world(), key, &c) == 0, "open: %s", hpc_last_error());
    for (int nd = 1; nd <= 3; nd++) {
        char name[32];
        size_t n = 1, first, count;
        for (int i = 0; i < nd; i++) n *= shape[nd - 1][i];
        float all[MOST], part[MOST];
        snprintf(name, sizeof name, "runs/%d", nd);
        EXPECT(hpc_ckpt_get(c, name, H5T_NATIVE_FLOAT, nd, shape[nd - 1], all) == 0, "get: %s", hpc_last_error());
        for (size_t i = 0; i < n; i++)
            EXPECT(all[i] == (float)i + 0.25f * nd, "%dD element %zu: %g", nd, i, all[i]);
        run_of(2, rank, n, &first, &count);
        EXPECT(hpc_ckpt_get_part(c, name, H5T_NATIVE_FLOAT, nd, shape[nd - 1], part, first, count) == 0,
               "get_part: %s", hpc_last_error());
        for (size_t i = 0; i < count; i++)
            EXPECT(part[i] == all[first + i], "%dD run %zu+%zu: %g", nd, first, i, part[i]);
    }
    size_t bad = 61;
    float one;
    EXPECT(hpc_ckpt_get_part(c, "runs/1", H5T_NATIVE_FLOAT, 1, shape[0], &one, bad, 1) == HPC_ERR_ARG,
           "a run beyond the array");
    hpc_error_clear();
    EXPECT(hpc_ckpt_close(c) == 0, "close");
    MPI_Barrier(hpc_comm_world());
    if (rank == 0) unlink(p3);
}

static void replicas(void)
{
    unsigned char buf[1001];
    for (int i = 0; i < 1001; i++) buf[i] = (unsigned char)(i * 7);
    int same = -1;
    EXPECT(hpc_all_same(buf, sizeof buf, hpc_comm_world(), &same) == 0 && same == 1, "equal replicas");
    if (rank == size - 1) buf[size > 1 ? 1000 : 0] ^= 1;   /* one bit, the tail byte */
    EXPECT(hpc_all_same(buf, sizeof buf, hpc_comm_world(), &same) == 0 && same == (size == 1),
           "one bit on rank %d: same = %d", size - 1, same);
    if (rank == size - 1) buf[8] ^= 0x80;                  /* a bit in a word */
    EXPECT(hpc_all_same(buf, sizeof buf - 1, hpc_comm_world(), &same) == 0 && same == (size == 1),
           "a word's bit: same = %d", same);
}

int main(int argc, char **argv)
{
    if (hpc_init(&argc, &argv)) {
        fprintf(stderr, "%s\n", hpc_last_error());
        return 1;
    }
    rank = hpc_rank();
    size = hpc_size();
    int id = rank == 0 ? (int)getpid() : 0;
    MPI_Bcast(&id, 1, MPI_INT, 0, hpc_comm_world());
    snprintf(path, sizeof path, "%s/hpc_test_ckpt_%d_np%d.h5", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             id, size);
    snprintf(partial, sizeof partial, "%s.partial", path);
    EXPECT(!hpc_ckpt_exists(path, hpc_comm_world()), "exists before");
    EXPECT(write_version(1, 1) == 0, "commit: %s", hpc_last_error());
    EXPECT(exists(path) && !exists(partial), "after commit: PATH only");
    check(1);
    EXPECT(write_version(2, 1) == 0, "second commit: %s", hpc_last_error());
    check(2);
    /* one rank fails: the previous checkpoint is still the valid one */
    EXPECT(write_version(3, rank != size - 1) == HPC_ERR_IO, "a failed commit succeeded");
    check(2);
    refusals();
    parts();
    runs();
    replicas();
    MPI_Barrier(hpc_comm_world());
    if (rank == 0) {
        unlink(path);
        unlink(partial);
    }
    int errs = test_failures, total = 0;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, hpc_comm_world());
    if (rank == 0 && !total) printf("test_ckpt: all checks passed on %d ranks\n", size);
    hpc_finalize();
    return rank == 0 ? total != 0 : 0;
}
