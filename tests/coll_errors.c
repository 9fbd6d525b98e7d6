/* coll_errors.c - argument errors give HPC_ERR_ARG with a message that
 * names what was wrong, on every rank alike (so no rank is left waiting);
 * names parse both ways; auto honours HPC_COLL_TUNING, HPC_COLL_<OP> and
 * the cost model, read once (a setenv is seen only after the test hook
 * re-reads the settings).  Runs at 1 and 2 ranks. */
#include "config.h"
#include "hpc_coll.h"
#include "coll/test_hooks.h"
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, p;
static long nerr;

/* call must fail with code, its message containing every word given */
#define EXPECT_ERR(call, code, ...)                                             \
    do {                                                                        \
        hpc_error_clear();                                                      \
        int e_ = (call);                                                        \
        const char *w_[] = {__VA_ARGS__, NULL};                                 \
        EXPECT(e_ == (code), "%s returned %d, expected %d (%s)", #call, e_, (code), \
               hpc_last_error());                                               \
        for (int i_ = 0; w_[i_]; i_++)                                          \
            EXPECT(strstr(hpc_last_error(), w_[i_]) != NULL, "message '%s' lacks '%s'", \
                   hpc_last_error(), w_[i_]);                                   \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);

    /* --- tuning file --- */
    char path[] = "/tmp/hpc-coll-tune-XXXXXX";
    int fd = -1;
    if (rank == 0) fd = mkstemp(path);
    MPI_Bcast(path, (int)sizeof path, MPI_CHAR, 0, comm);
    if (rank == 0) {
        FILE *f = fdopen(fd, "w");
        fprintf(f, "# test table\nallreduce 1 %d host 0 1K butterfly\nallreduce 1 %d host 1K - tree\n"
                   "bcast 1 %d * 0 - scatter_allgather\n", p, p, p);
        fclose(f);
    }
    MPI_Barrier(comm);
    setenv("HPC_COLL_TUNING", path, 1);
    hpc_coll_test_reload_settings();
    hpc_alg_t a = HPC_ALG_AUTO;
    EXPECT(hpc_coll_choose(HPC_COLL_ALLREDUCE, 8, HPC_FLOAT32, p, 0, &a) == 0 && a == HPC_ALG_BUTTERFLY,
           "tuning file: allreduce 32 B -> %s", hpc_alg_name(a));
    EXPECT(hpc_coll_choose(HPC_COLL_ALLREDUCE, 1 << 20, HPC_FLOAT32, p, 0, &a) == 0 && a == HPC_ALG_TREE,
           "tuning file: allreduce 4 MiB -> %s", hpc_alg_name(a));
    EXPECT(hpc_coll_choose(HPC_COLL_BCAST, 100, HPC_INT64, p, 0, &a) == 0 && a == HPC_ALG_SCATTER_ALLGATHER,
           "tuning file: bcast -> %s", hpc_alg_name(a));
    /* not in the table: the model */
    EXPECT(hpc_coll_choose(HPC_COLL_ALLGATHER, 100, HPC_INT64, p, 0, &a) == 0 && a != HPC_ALG_AUTO &&
           hpc_coll_has_alg(HPC_COLL_ALLGATHER, a), "model: allgather -> %s", hpc_alg_name(a));
    /* the model on 16 ranks of one node: its shared memory, where a flag
     * costs a tenth of a message (0.2 against 2 us) */
    EXPECT(hpc_coll_choose(HPC_COLL_REDUCE_SCATTER, 2, HPC_FLOAT32, 16, 0, &a) == 0 && a == HPC_ALG_SHM,
           "model: tiny reduce_scatter on 16 -> %s", hpc_alg_name(a));
    EXPECT(hpc_coll_choose(HPC_COLL_BARRIER, 0, HPC_INT32, 16, 0, &a) == 0 && a == HPC_ALG_SHM,
           "model: barrier on 16 -> %s", hpc_alg_name(a));
    /* messages only (shared memory priced out): latency-bound small,
     * bandwidth-bound large */
    setenv("HPC_COLL_ALPHA_SHM", "1", 1);
    hpc_coll_test_reload_settings();
    EXPECT(hpc_coll_choose(HPC_COLL_REDUCE_SCATTER, 2, HPC_FLOAT32, 16, 0, &a) == 0 && a == HPC_ALG_BUTTERFLY,
           "model: tiny reduce_scatter on 16 -> %s", hpc_alg_name(a));
    EXPECT(hpc_coll_choose(HPC_COLL_BARRIER, 0, HPC_INT32, 16, 0, &a) == 0 && a == HPC_ALG_BUTTERFLY,
           "model: barrier on 16 -> %s", hpc_alg_name(a));
    EXPECT(hpc_coll_choose(HPC_COLL_BCAST, 1 << 24, HPC_FLOAT32, 16, 0, &a) == 0 &&
           (a == HPC_ALG_SCATTER_ALLGATHER || a == HPC_ALG_RING), "model: 64 MiB bcast on 16 -> %s",
           hpc_alg_name(a));
    unsetenv("HPC_COLL_ALPHA_SHM");
    hpc_coll_test_reload_settings();
    /* hpc_coll_choose knows no nodes: one node, where the shared window
     * moves half the bytes of any message-passing allreduce */
    EXPECT(hpc_coll_choose(HPC_COLL_ALLREDUCE, 1 << 24, HPC_FLOAT32, 16, 0, &a) == 0 &&
           (a == HPC_ALG_RING || a == HPC_ALG_RABENSEIFNER || a == HPC_ALG_SHM),
           "model: 64 MiB allreduce on 16 -> %s",
           hpc_alg_name(a));
    /* running with the tuned choice works */
    float x[4] = {1, 2, 3, 4}, y[4];
    EXPECT(hpc_allreduce(x, y, 4, HPC_FLOAT32, HPC_SUM, comm, HPC_ALG_AUTO) == 0 && y[3] == 4.0f * p,
           "tuned allreduce: %s", hpc_last_error());
    /* a bad line anywhere (a non-finite constant, binary bytes): the whole
     * file is ignored with one warning, auto falls back to the model and
     * still names an algorithm (it used to fail every auto call) */
    hpc_alg_t model = HPC_ALG_AUTO;
    unsetenv("HPC_COLL_TUNING");
    hpc_coll_test_reload_settings();
    EXPECT(hpc_coll_choose(HPC_COLL_ALLREDUCE, 8, HPC_FLOAT32, p, 0, &model) == 0, "model choice");
    const char *bad[] = {"allreduce 1 %d host 0 - tree\nbeta inf\n", "allreduce 1 %d host 0 - tree\nalpha -1\n",
                         "allreduce 1 %d host 0 - tree\n\x7f" "ELF\x02\x01\n",
                         "allreduce %d 0 - tree\n" /* the format of issue 13 */};
    for (int i = 0; i < 4; i++) {
        if (rank == 0) {
            FILE *f = fopen(path, "w");
            fprintf(f, bad[i], p);
            fclose(f);
        }
        MPI_Barrier(comm);
        setenv("HPC_COLL_TUNING", path, 1);
        hpc_coll_test_reload_settings();
        a = HPC_ALG_AUTO;
        EXPECT(hpc_coll_choose(HPC_COLL_ALLREDUCE, 8, HPC_FLOAT32, p, 0, &a) == 0 && a == model,
               "bad tuning file %d: allreduce -> %s, want the model's %s", i, hpc_alg_name(a),
               hpc_alg_name(model));
        EXPECT(hpc_allreduce(x, y, 4, HPC_FLOAT32, HPC_SUM, comm, HPC_ALG_AUTO) == 0 && y[3] == 4.0f * p,
               "allreduce with bad tuning file %d: %s", i, hpc_last_error());
        MPI_Barrier(comm);
    }
    if (rank == 0) unlink(path);
    unsetenv("HPC_COLL_TUNING");
    hpc_coll_test_reload_settings();

    /* --- environment override per collective: read once --- */
    setenv("HPC_COLL_ALLREDUCE", "ring", 1);
    EXPECT(hpc_coll_choose(HPC_COLL_ALLREDUCE, 8, HPC_FLOAT32, p, 0, &a) == 0 && a == model,
           "HPC_COLL_ALLREDUCE set after the first call is not read: %s", hpc_alg_name(a));
    hpc_coll_test_reload_settings();
    EXPECT(hpc_coll_choose(HPC_COLL_ALLREDUCE, 8, HPC_FLOAT32, p, 0, &a) == 0 && a == HPC_ALG_RING,
           "HPC_COLL_ALLREDUCE=ring -> %s", hpc_alg_name(a));
    setenv("HPC_COLL_ALLREDUCE", "bruck", 1);
    hpc_coll_test_reload_settings();
    EXPECT_ERR(hpc_allreduce(x, y, 4, HPC_FLOAT32, HPC_SUM, comm, HPC_ALG_AUTO), HPC_ERR_ARG,
               "HPC_COLL_ALLREDUCE", "bruck");
    setenv("HPC_COLL_ALLREDUCE", "fastest", 1);
    hpc_coll_test_reload_settings();
    EXPECT_ERR(hpc_allreduce(x, y, 4, HPC_FLOAT32, HPC_SUM, comm, HPC_ALG_AUTO), HPC_ERR_ARG,
               "HPC_COLL_ALLREDUCE", "fastest");
    unsetenv("HPC_COLL_ALLREDUCE");
    hpc_coll_test_reload_settings();

    /* --- names --- */
    hpc_dtype_t t;
    hpc_op_t op;
    hpc_coll_t c;
    EXPECT(hpc_dtype_parse("bf16", &t) == 0 && t == HPC_BFLOAT16, "bf16");
    EXPECT(hpc_dtype_parse("Float64", &t) == 0 && t == HPC_FLOAT64, "Float64");
    EXPECT(hpc_op_parse("avg", &op) == 0 && op == HPC_AVG, "avg");
    EXPECT(hpc_alg_parse("scatter-allgather", &a) == 0 && a == HPC_ALG_SCATTER_ALLGATHER, "scatter-allgather");
    EXPECT(hpc_coll_parse("reduce_scatter", &c) == 0 && c == HPC_COLL_REDUCE_SCATTER, "reduce_scatter");
    EXPECT_ERR(hpc_dtype_parse("float8", &t), HPC_ERR_ARG, "float8");
    EXPECT_ERR(hpc_op_parse("xor", &op), HPC_ERR_ARG, "xor");
    EXPECT_ERR(hpc_alg_parse("hypercube", &a), HPC_ERR_ARG, "hypercube");
    EXPECT_ERR(hpc_coll_parse("allscatter", &c), HPC_ERR_ARG, "allscatter");
    for (int k = 0; k < HPC_DTYPE_COUNT; k++)
        EXPECT(hpc_dtype_parse(hpc_dtype_name((hpc_dtype_t)k), &t) == 0 && (int)t == k, "dtype %d", k);
    for (int k = 0; k < HPC_ALG_COUNT; k++)
        EXPECT(hpc_alg_parse(hpc_alg_name((hpc_alg_t)k), &a) == 0 && (int)a == k, "alg %d", k);
    for (int k = 0; k < HPC_COLL_COUNT; k++)
        EXPECT(hpc_coll_parse(hpc_coll_name((hpc_coll_t)k), &c) == 0 && (int)c == k, "coll %d", k);
    EXPECT(hpc_dtype_size(HPC_FLOAT16) == 2 && hpc_dtype_size(HPC_INT64) == 8, "sizes");

    /* --- algorithms that do not exist for an operation --- */
    EXPECT(!hpc_coll_has_alg(HPC_COLL_ALLGATHER, HPC_ALG_RABENSEIFNER), "allgather rabenseifner");
    EXPECT(hpc_coll_has_alg(HPC_COLL_BCAST, HPC_ALG_SCATTER_ALLGATHER), "bcast scatter_allgather");
    int32_t ib[64] = {0}, ob[64];
    EXPECT_ERR(hpc_allgather(ib, ob, 1, HPC_INT32, comm, HPC_ALG_RABENSEIFNER), HPC_ERR_ARG,
               "allgather", "rabenseifner");
    EXPECT_ERR(hpc_barrier(comm, HPC_ALG_RING), HPC_ERR_ARG, "barrier", "ring");
    EXPECT_ERR(hpc_alltoall(ib, ob, 1, HPC_INT32, comm, HPC_ALG_SCATTER_ALLGATHER), HPC_ERR_ARG,
               "alltoall", "scatter_allgather");
    EXPECT_ERR(hpc_allreduce(ib, ob, 1, HPC_INT32, HPC_SUM, comm, HPC_ALG_BRUCK), HPC_ERR_ARG,
               "allreduce", "bruck");
    EXPECT_ERR(hpc_allreduce(ib, ob, 1, HPC_INT32, HPC_SUM, comm, (hpc_alg_t)42), HPC_ERR_ARG, "algorithm");
    EXPECT_ERR(hpc_allreduce(ib, ob, 1, (hpc_dtype_t)17, HPC_SUM, comm, HPC_ALG_RING), HPC_ERR_ARG, "dtype");
    EXPECT_ERR(hpc_allreduce(ib, ob, 1, HPC_INT32, (hpc_op_t)9, comm, HPC_ALG_RING), HPC_ERR_ARG, "op");
    EXPECT_ERR(hpc_allreduce(ib, ob, 4, HPC_INT32, HPC_SUM, comm, HPC_ALG_NCCL), HPC_ERR_ARG, "nccl", "device");

    /* --- buffers --- */
    EXPECT_ERR(hpc_allreduce(NULL, ob, 4, HPC_INT32, HPC_SUM, comm, HPC_ALG_RING), HPC_ERR_ARG,
               "allreduce", "sendbuf", "NULL");
    EXPECT_ERR(hpc_bcast(NULL, 4, HPC_FLOAT64, 0, comm, HPC_ALG_TREE), HPC_ERR_ARG, "bcast", "NULL");
    EXPECT_ERR(hpc_allreduce((char *)ib + 1, ob, 4, HPC_INT32, HPC_SUM, comm, HPC_ALG_RING), HPC_ERR_ARG,
               "misaligned");
    EXPECT_ERR(hpc_allgather(ib, (char *)ob + 2, 4, HPC_FLOAT32, comm, HPC_ALG_RING), HPC_ERR_ARG,
               "recvbuf", "misaligned");
    EXPECT_ERR(hpc_bcast(ib, 4, HPC_INT32, p, comm, HPC_ALG_TREE), HPC_ERR_ARG, "root", "out of range");
    EXPECT_ERR(hpc_reduce(ib, ob, 4, HPC_INT32, HPC_SUM, -1, comm, HPC_ALG_TREE), HPC_ERR_ARG, "root");
    EXPECT_ERR(hpc_scatter(HPC_IN_PLACE, ob, 1, HPC_INT32, 0, comm, HPC_ALG_LINEAR), HPC_ERR_ARG, "IN_PLACE");
    EXPECT_ERR(hpc_allreduce(ib, HPC_IN_PLACE, 1, HPC_INT32, HPC_SUM, comm, HPC_ALG_RING), HPC_ERR_ARG,
               "IN_PLACE");
    /* zero counts need no buffers at all */
    EXPECT(hpc_allreduce(NULL, NULL, 0, HPC_INT32, HPC_SUM, comm, HPC_ALG_RING) == 0, "count 0: %s",
           hpc_last_error());
    EXPECT(hpc_alltoall(NULL, NULL, 0, HPC_BFLOAT16, comm, HPC_ALG_BRUCK) == 0, "count 0: %s", hpc_last_error());
    /* in-place gather is for the root only (checked before any message,
     * so the root, which does not call, is not left waiting) */
    if (p > 1 && rank == 1)
        EXPECT_ERR(hpc_gather(HPC_IN_PLACE, ob, 1, HPC_INT32, 0, comm, HPC_ALG_TREE), HPC_ERR_ARG, "root");
    MPI_Barrier(comm);

    /* --- requests --- */
    hpc_request_t *req = NULL;
    int done = 0;
    EXPECT(hpc_test(&req, &done) == 0 && done, "NULL request tests done");
    EXPECT(hpc_wait(&req) == 0, "NULL request waits");
    EXPECT_ERR(hpc_icoll(NULL, comm, &req), HPC_ERR_ARG, "NULL");
    EXPECT_ERR(hpc_iallreduce(ib, ob, 1, HPC_INT32, HPC_SUM, comm, HPC_ALG_RING, NULL), HPC_ERR_ARG, "NULL");
    EXPECT_ERR(hpc_barrier(MPI_COMM_NULL, HPC_ALG_AUTO), HPC_ERR_ARG, "MPI_COMM_NULL");

    nerr = test_failures;
    long tot = 0;
    MPI_Reduce(&nerr, &tot, 1, MPI_LONG, MPI_SUM, 0, comm);
    if (rank == 0) printf("coll_errors: %d ranks, %ld failures\n", p, tot);
    MPI_Finalize();
    return rank == 0 && tot ? 1 : 0;
}
