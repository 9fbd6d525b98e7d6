/* coll_wrap.c - int32/int64 sums and products that overflow wrap around
 * (two's complement), with every algorithm of allreduce, reduce and
 * reduce_scatter, against answers known in closed form or computed here
 * in unsigned arithmetic (independent of the library and of MPI):
 *   sum of p copies of INT_MAX = p (2^(w-1) - 1) mod 2^w = -p (p even) or
 *   2^(w-1) - p (p odd); and INT_MAX - j + rank, summed likewise;
 *   product of p copies of 3^19 (int32) or 3^39 (int64) = 3^(19p) mod
 *   2^32, 3^(39p) mod 2^64.
 * Runs at 2 and 3 ranks (even and odd: the closed forms differ).
 */
#include "config.h"
#include "hpc_coll.h"
#include "testlib.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { N = 6 };   /* elements: a few, so the segmented paths run too */

static int rank, p;

/* The value of unsigned u as the signed number it stands for mod 2^w. */
static int64_t as_signed(uint64_t u, int w)
{
    if (w == 32) u &= 0xffffffffu;
    uint64_t half = (uint64_t)1 << (w - 1);
    if (u < half) return (int64_t)u;
    return (int64_t)(u - half) - (int64_t)(half - 1) - 1;   /* u - 2^w */
}

/* rank r's element j, as the unsigned bits of a w-bit integer */
static uint64_t input(int r, int j, int w, hpc_op_t op)
{
    uint64_t max = (w == 32 ? 0x7fffffffu : 0x7fffffffffffffffu);
    if (op == HPC_PROD) return j % 2 ? (w == 32 ? 1162261467u : 4052555153018976267u) : (uint64_t)(r + 2);
    return j % 2 ? max : max - (uint64_t)j + (uint64_t)r;   /* INT_MAX, or near it */
}

static int64_t expected(int j, int w, hpc_op_t op)
{
    uint64_t acc = op == HPC_PROD ? 1 : 0;
    for (int r = 0; r < p; r++) {
        uint64_t v = input(r, j, w, op);
        acc = op == HPC_PROD ? acc * v : acc + v;       /* wraps mod 2^64 */
        if (w == 32) acc &= 0xffffffffu;                /* and so mod 2^32 */
    }
    return as_signed(acc, w);
}

static void put(hpc_dtype_t t, void *buf, int j, uint64_t bits)
{
    if (t == HPC_INT32) {
        uint32_t u = (uint32_t)bits;
        memcpy((int32_t *)buf + j, &u, 4);
    } else {
        memcpy((int64_t *)buf + j, &bits, 8);
    }
}

static int64_t get(hpc_dtype_t t, const void *buf, int j)
{
    return t == HPC_INT32 ? ((const int32_t *)buf)[j] : ((const int64_t *)buf)[j];
}

static void run(hpc_coll_t c, hpc_alg_t alg, hpc_dtype_t t, hpc_op_t op)
{
    int w = t == HPC_INT32 ? 32 : 64;
    int64_t in[N * 8], out[N * 8];
    int nin = c == HPC_COLL_REDUCE_SCATTER ? N * p : N;
    for (int j = 0; j < nin; j++) put(t, in, j, input(rank, j, w, op));
    memset(out, 0x5a, sizeof out);
    hpc_coll_args_t a = {.coll = c, .sendbuf = in, .recvbuf = out, .count = N, .dtype = t,
                         .op = op, .root = p - 1, .alg = alg};
    int e = hpc_coll(&a, MPI_COMM_WORLD);
    EXPECT(e == 0, "%s %s: %s", hpc_coll_name(c), hpc_alg_name(alg), hpc_last_error());
    if (e || (c == HPC_COLL_REDUCE && rank != p - 1)) return;
    int off = c == HPC_COLL_REDUCE_SCATTER ? rank * N : 0;
    for (int j = 0; j < N; j++) {
        int64_t want = expected(off + j, w, op), got = get(t, out, j);
        EXPECT(got == want, "%s %s %s %s element %d: %lld, expected %lld", hpc_coll_name(c),
               hpc_alg_name(alg), hpc_dtype_name(t), hpc_op_name(op), j, (long long)got,
               (long long)want);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    /* the closed forms: p copies of INT32_MAX */
    EXPECT(expected(1, 32, HPC_SUM) == (p % 2 ? (int64_t)INT32_MAX + 1 - p : -p),
           "closed form, int32: %lld", (long long)expected(1, 32, HPC_SUM));
    EXPECT(expected(1, 64, HPC_SUM) == (p % 2 ? INT64_MAX - p + 1 : -p), "closed form, int64: %lld",
           (long long)expected(1, 64, HPC_SUM));
    hpc_coll_t colls[] = {HPC_COLL_ALLREDUCE, HPC_COLL_REDUCE, HPC_COLL_REDUCE_SCATTER};
    int ncase = 0;
    for (size_t k = 0; k < sizeof colls / sizeof colls[0]; k++) {
        hpc_alg_t algs[HPC_ALG_COUNT];
        int n = hpc_coll_algs(colls[k], algs, HPC_ALG_COUNT);
        for (int i = 0; i < n; i++) {
            if (algs[i] == HPC_ALG_NCCL) continue;   /* device buffers only */
            for (int t = HPC_INT32; t <= HPC_INT64; t++)
                for (int op = HPC_SUM; op <= HPC_PROD; op++, ncase++)
                    run(colls[k], algs[i], (hpc_dtype_t)t, (hpc_op_t)op);
        }
    }
    long mine = test_failures, tot = 0;
    MPI_Reduce(&mine, &tot, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("coll_wrap: %d ranks, %d cases, %ld failures\n", p, ncase, tot);
    MPI_Finalize();
    return rank == 0 && tot ? 1 : 0;
}
