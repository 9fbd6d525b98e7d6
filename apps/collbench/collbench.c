/* hpc-collbench - time hpckit's collectives side by side with the MPI
 * library's own and NCCL's, in the style of nccl-tests and the OSU
 * benchmarks: one row per message size, one column group per algorithm.
 *
 * time  = median over iterations of one rank's time for the call (ranks
 *         line up on a barrier before each iteration; iterations of the
 *         algorithms interleave), then the maximum over ranks;
 * algbw = size / time;  busbw = algbw * factor, nccl-tests' factors:
 *         allreduce 2(p-1)/p; reduce_scatter, allgather, alltoall, gather,
 *         scatter (p-1)/p; bcast, reduce 1.
 * size  = bytes of the whole message as nccl-tests counts it: the vector
 *         for bcast/reduce/allreduce, all p blocks for the others.
 */
#include "config.h"
#include "hpc_app.h"
#include "model.h"
#include "hpc_coll.h"
#include "coll/colls.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    hpc_coll_t coll;
    hpc_alg_t algs[HPC_ALG_COUNT];
    int nalg;
    size_t minb, maxb;
    double factor;
    hpc_dtype_t dt;
    hpc_op_t op;
    int64_t root, warmup, iters;
    int device, inplace, nb, check, membw;
    const char *csv, *plot, *tune;
    int algs_given, coll_given;
    int simulate;
    int64_t sim_ranks, sim_nodes;
} opts_t;

static opts_t o = {.coll = HPC_COLL_ALLREDUCE, .minb = 8, .maxb = 32u << 20, .factor = 2,
                   .dt = HPC_FLOAT32, .op = HPC_SUM, .root = 0, .warmup = 3, .iters = 20,
                   .sim_ranks = 4096, .sim_nodes = 512};

static int take_coll(const char *v, void *dest)
{
    (void)dest;
    o.coll_given = 1;
    if (hpc_coll_parse(v, &o.coll) == 0) return 0;
    return HPC_ERR(HPC_ERR_ARG, "unknown collective (barrier, bcast, reduce, allreduce, gather, allgather, "
                   "scatter, reduce_scatter, alltoall)");
}

static int take_algs(const char *v, void *dest)
{
    (void)dest;
    o.nalg = 0;
    o.algs_given = 1;
    for (const char *p = v; *p;) {
        size_t n = strcspn(p, ",");
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)n, p);
        hpc_alg_t a;
        if (hpc_alg_parse(name, &a) < 0) {
            char all[256];
            return HPC_ERR(HPC_ERR_ARG, "unknown algorithm '%s' (%s)", name,
                           hpc_coll_alg_names(HPC_COLL_COUNT, all, sizeof all));
        }
        if (o.nalg < HPC_ALG_COUNT) o.algs[o.nalg++] = a;
        p += n + (p[n] == ',');
    }
    return o.nalg ? 0 : HPC_ERR(HPC_ERR_ARG, "no algorithm named");
}

static int take_dtype(const char *v, void *dest)
{
    (void)dest;
    if (hpc_dtype_parse(v, &o.dt) == 0) return 0;
    return HPC_ERR(HPC_ERR_ARG, "unknown dtype (int32, int64, float32, float64, float16, bfloat16)");
}

static int take_op(const char *v, void *dest)
{
    (void)dest;
    if (hpc_op_parse(v, &o.op) == 0) return 0;
    return HPC_ERR(HPC_ERR_ARG, "unknown reduction (sum, prod, min, max, avg)");
}

static const hpc_opt_t options[] = {
    HPC_CALL("coll", 'c', NULL, "OP", take_coll, 0,
             "collective: barrier, bcast, reduce, allreduce, gather, allgather, scatter, "
             "reduce_scatter, alltoall (default allreduce; with --tune and no -c: all of them)"),
    HPC_CALL("algs", 'a', NULL, "A[,A...]", take_algs, 0,
             "algorithms to compare, of those the collective has (below); auto = what auto picks "
             "(default: all of them, nccl for device memory only)"),
    HPC_SIZE("minbytes", 'b', &o.minb, "SIZE", 0, "smallest message, bytes, K/M/G suffixes (default 8)"),
    HPC_SIZE("maxbytes", 'e', &o.maxb, "SIZE", 0, "largest message (default 32M)"),
    HPC_DOUBLE("factor", 'f', &o.factor, "F", 1, 1e6, HPC_OPT_BOUNDS | HPC_OPT_GT,
               "size multiplier from one row to the next (default 2)"),
    HPC_CALL("dtype", 'd', NULL, "T", take_dtype, 0,
             "int32, int64, float32, float64, float16, bfloat16 (default float32)"),
    HPC_CALL("op", 'o', NULL, "OP", take_op, 0, "sum, prod, min, max, avg (default sum)"),
    HPC_INT("root", 'r', &o.root, "R", 0, 1 << 30, 0, "root of bcast, reduce, gather, scatter (default 0)"),
    HPC_INT("warmup", 'w', &o.warmup, "N", 0, 1000000, 0, "untimed iterations per size (default 3)"),
    HPC_INT("iters", 'n', &o.iters, "N", 1, 1000000, 0, "timed iterations per size (default 20)"),
    HPC_CHOICE("mem", 0, &o.device, "host|cuda", 0, "host or cuda buffers (default host)"),
    HPC_FLAG("inplace", 0, &o.inplace, 0, "in-place form (HPC_IN_PLACE)"),
    HPC_FLAG("nonblocking", 0, &o.nb, 0, "time start + hpc_wait instead of the blocking call"),
    HPC_FLAG("check", 0, &o.check, 0, "check every result; #wrong counts wrong elements"),
    HPC_STRING("csv", 0, &o.csv, "FILE", 0,
               "also write the rows as CSV (checked first, written whole at the end)"),
    HPC_STRING("plot", 0, &o.plot, "FILE.png", 0,
               "bus bandwidth against size, one line per algorithm (needs gnuplot)"),
    HPC_STRING("tune", 0, &o.tune, "FILE", 0,
               "measure the cost model's constants, then write them and the fastest algorithm per "
               "size range to FILE, as rows keyed by the job's nodes, ranks per node and memory kind "
               "(on several nodes also the tables of one node and of one rank per node, which hier's "
               "phases choose from); written whole at the end, an existing FILE is kept if the run "
               "fails; use it with HPC_COLL_TUNING=FILE. Under Open MPI's mpirun write --tune=FILE: "
               "mpirun takes '--tune FILE' anywhere on its command line as its own parameter file"),
    HPC_FLAG("simulate", 0, &o.simulate, 0,
             "predict the table for --ranks on --nodes from the real schedules and the cost model, "
             "without MPI traffic (any number of ranks to run it; rank 0 prints)"),
    HPC_INT("ranks", 0, &o.sim_ranks, "N", 1, 1 << 20, 0, "--simulate: ranks (default 4096)"),
    HPC_INT("nodes", 0, &o.sim_nodes, "K", 1, 1 << 20, 0,
            "--simulate: nodes, blocks of N/K consecutive ranks (default 512)"),
    HPC_FLAG("membw", 0, &o.membw, 0,
             "first measure the memory copy bandwidth of one core and of the node's ranks copying at "
             "once, and give every algorithm more columns: xmem, its busbw over one core's copy, "
             "xnat, native's time over its own, and for allreduce on one node xbnd, its busbw over "
             "the bound that shm's memory traffic and the ranks' copy rate set (each row's bound, "
             "GB/s, after its count)"),
    HPC_OPTS_END};

/* The algorithm lists come from libhpc's registry, never from here. */
static void help_more(FILE *out)
{
    char mine[256];
    fprintf(out, "\nAlgorithms per collective (and auto, for every one):\n");
    for (int c = 0; c < HPC_COLL_COUNT; c++)
        fprintf(out, "  %-15s %s\n", hpc_coll_name((hpc_coll_t)c), hpc_coll_alg_names((hpc_coll_t)c, mine, sizeof mine));
}

static const hpc_app_t app = {
    .name = "hpc-collbench",
    .usage = "hpc-collbench [OPTIONS]\nhpc-mpiexec -n N hpc-collbench -c allreduce -b 8 -e 64M -f 4 --check",
    .about = "Time hpckit's collectives - its own algorithms, the MPI library's own (native) and "
             "NCCL's - side by side, one row per message size.",
    .opts = options,
    .help_more = help_more,
    .epilog =
        "Columns: size (bytes of the whole message, as nccl-tests counts it), count\n"
        "(elements per call argument), then per algorithm: time in microseconds\n"
        "(median over iterations, maximum over ranks; the algorithms' iterations\n"
        "interleave, so load from elsewhere hits all alike), algbw = size/time, busbw =\n"
        "algbw times nccl-tests' factor (allreduce 2(p-1)/p; allgather,\n"
        "reduce_scatter, alltoall, gather, scatter (p-1)/p; bcast, reduce 1) in GB/s,\n"
        "and #wrong (wrong elements with --check, else N/A).\n"
        "\n"
        "Environment: HPC_COLL_SEGMENT, HPC_COLL_SINGLE_COPY, HPC_COLL_TUNING, HPC_DEBUG=coll,\n"
        "HPC_TIMEOUT (see the guide).\n"
        "Sizes are checked against the memory available on every node before anything is\n"
        "allocated. With HPC_TIMEOUT set, a rank that stops ends the job within the\n"
        "timeout wherever the others wait.\n"
        "Exit status: 0 success, 1 wrong results or failure, 2 bad usage.\n"
        "\nExamples:\n"
        "  # allreduce from 8 bytes to 64 MiB, every algorithm, results checked\n"
        "  hpc-mpiexec -n 2 hpc-collbench -c allreduce -b 8 -e 64M -f 4 --check\n"
        "  # bcast, three algorithms, the rows also as CSV\n"
        "  hpc-mpiexec -n 4 hpc-collbench -c bcast -a native,tree --csv bcast.csv\n"
        "  # a tuning table for auto (then HPC_COLL_TUNING=tuning.txt)\n"
        "  hpc-mpiexec -n 8 hpc-collbench --tune=tuning.txt\n"
        "  # the table of a job this machine cannot run, from the cost model\n"
        "  hpc-collbench --simulate --ranks 4096 --nodes 512\n",
    .guide = "collectives.md"};

static int rank, nranks;   /* in the communicator being measured */
static int lead;           /* this rank prints and writes the tables (world rank 0) */
static double membw_gbs;   /* --membw: one core's memcpy, GB/s (0: not measured) */

/* ---- buffers: device ones through libhpc (no CUDA runtime linked) --- */
static void *buf_alloc(size_t bytes, int dev)
{
    void *p = NULL;
    if (bytes == 0) bytes = 64;
    if (dev) return hpc_coll_dev_alloc(bytes, &p) == 0 ? p : NULL;
    if (posix_memalign(&p, 4096, bytes)) return NULL;
    memset(p, 0, bytes);
    return p;
}

static void buf_free(void *p, int dev)
{
    if (dev) hpc_coll_dev_free(p);
    else free(p);
}

static void to_buf(void *dst, const void *src, size_t bytes, int dev)
{
    if (dev) HPC_CHECK(hpc_coll_dev_memcpy(dst, src, bytes));
    else memcpy(dst, src, bytes);
}

static void from_buf(void *dst, const void *src, size_t bytes, int dev)
{
    if (dev) HPC_CHECK(hpc_coll_dev_memcpy(dst, src, bytes));
    else memcpy(dst, src, bytes);
}

/* ---- element values for --check: libhpc's known answers ----------- */
static double val(hpc_op_t op, int r, size_t j)
{
    return hpc_coll_check_value(op, r, j);
}

/* Fill the input of a (in send buffer, or receive buffer in place). */
static void fill(const opts_t *o, const hpc_coll_args_t *a, void *hs, void *hr, size_t sc, size_t rcap)
{
    size_t n = a->count, es = hpc_dtype_size(a->dtype);
    (void)es;
    for (size_t j = 0; j < sc; j++) hpc_dtype_set(a->dtype, hs, j, val(o->op, rank, j));
    for (size_t j = 0; j < rcap; j++) hpc_dtype_set(a->dtype, hr, j, -7);
    if (a->coll == HPC_COLL_BCAST && rank == a->root)
        for (size_t j = 0; j < n; j++) hpc_dtype_set(a->dtype, hr, j, val(o->op, rank, j));
    if (!o->inplace) return;
    switch (a->coll) {
    case HPC_COLL_ALLREDUCE: case HPC_COLL_REDUCE: case HPC_COLL_REDUCE_SCATTER: case HPC_COLL_ALLTOALL:
        for (size_t j = 0; j < sc; j++) hpc_dtype_set(a->dtype, hr, j, val(o->op, rank, j));
        break;
    case HPC_COLL_ALLGATHER: case HPC_COLL_GATHER:
        for (size_t j = 0; j < n; j++) hpc_dtype_set(a->dtype, hr, (size_t)rank * n + j, val(o->op, rank, j));
        break;
    default: break;
    }
}

/* Wrong elements of this rank's result. */
static long verify(const opts_t *o, const hpc_coll_args_t *a, const void *hr, const void *hs)
{
    size_t n = a->count, sc, rc;
    long bad = 0;
    /* a scatter's root in place keeps its own block where it was */
    if (a->coll == HPC_COLL_SCATTER && rank == a->root && o->inplace) {
        for (size_t j = 0; j < n; j++)
            bad += hpc_dtype_get(a->dtype, hs, (size_t)rank * n + j) != val(o->op, rank, (size_t)rank * n + j);
        return bad;
    }
    hpc_coll_buf_counts(a, rank, nranks, &sc, &rc);
    for (size_t i = 0; i < rc; i++) {
        double want = hpc_coll_check_expected(a, rank, nranks, i);
        if (!isnan(want) && hpc_dtype_get(a->dtype, hr, i) != want) bad++;
    }
    return bad;
}

/* ---- sizes and factors --------------------------------------------- */
/* A call's message of `size` bytes is this many times its count: the
 * larger of its send and receive buffers, as a root holds them (colls.h) */
static size_t blocks(hpc_coll_t c)
{
    size_t p = (size_t)nranks, s, r;
    switch (c) {
#define CASE(name, E, SIG, SEND, RECV, ...)                                                            \
    case HPC_COLL_##E:                                                                                 \
        s = COLL_CNT_OF(SEND, 1, p, 1);                                                                \
        r = COLL_CNT_OF(RECV, 1, p, 1);                                                                \
        return s > r ? s : r;
        COLL_TABLE(CASE)
#undef CASE
    default: return 0;
    }
}

/* elements per call argument for a message of `size` bytes */
static size_t count_for(hpc_coll_t c, size_t size, size_t es)
{
    size_t k = blocks(c);
    return k ? size / es / k : 0;
}

static size_t size_for(hpc_coll_t c, size_t count, size_t es)
{
    return count * es * blocks(c);
}

/* busbw = algbw * this: nccl-tests' factors, in colls.h's rows */
static double bus_factor(hpc_coll_t c)
{
    double p = nranks;
    switch (c) {
#define CASE(name, E, SIG, SEND, RECV, ALIAS, BUS, ...) case HPC_COLL_##E: return BUS;
        COLL_TABLE(CASE)
#undef CASE
    default: return (p - 1) / p;
    }
}

/* ---- one measurement ----------------------------------------------- */
typedef struct { double us, algbw, busbw; long wrong; int ok; } res_t;

static int run_once(const opts_t *o, hpc_coll_args_t *a, MPI_Comm comm)
{
    if (o->nb) {
        hpc_request_t *r = NULL;
        int e = hpc_icoll(a, comm, &r);
        if (e < 0) return e;
        return hpc_wait(&r);
    }
    return hpc_coll(a, comm);
}

/* One row: every algorithm at one size.  Iterations interleave the
 * algorithms (it 0: a, b, c; it 1: a, b, c; ...) so that noise from other
 * work on the node spreads over all of them alike instead of hitting
 * whichever happened to run at the wrong moment. */
static void measure_row(const opts_t *o, hpc_coll_t coll, const hpc_alg_t *algs, int nalg,
                        size_t count, MPI_Comm comm, res_t *res)
{
    size_t es = hpc_dtype_size(o->dt);
    hpc_coll_args_t a = {.coll = coll, .count = count, .dtype = o->dt, .op = o->op, .root = (int)o->root};
    size_t scap = (size_t)nranks * count, rcap = (size_t)nranks * count;   /* every rank allocates both */
    void *s = buf_alloc(scap * es, o->device), *r = buf_alloc(rcap * es, o->device);
    void *hs = calloc(scap + 1, es), *hr = calloc(rcap + 1, es);
    double *t = calloc((size_t)(o->iters + 1) * (size_t)nalg, sizeof *t);
    int ok = s && r && hs && hr && t, all = 0;
    /* (over this communicator: the --tune tables of a node and of the
     * leaders run on some ranks only; the memory was checked before) */
    HPC_CHECK(hpc_allreduce(&ok, &all, 1, HPC_INT32, HPC_MIN, comm, HPC_ALG_NATIVE));
    if (!ok) hpc_app_fatal(HPC_EXIT_DATA, "out of %s memory for %zu-byte buffers", o->device ? "device" : "host",
                           scap * es);
    if (!all) hpc_app_fatal(HPC_EXIT_DATA, "another rank is out of memory for %zu-byte buffers", scap * es);
    a.sendbuf = s;
    a.recvbuf = r;
    if (o->inplace) {
        if (coll == HPC_COLL_SCATTER) {
            if (rank == o->root) a.recvbuf = HPC_IN_PLACE;
        } else if (coll != HPC_COLL_GATHER || rank == o->root) {
            a.sendbuf = HPC_IN_PLACE;
        }
    }
    fill(o, &a, hs, hr, scap, rcap);
    to_buf(s, hs, scap * es, o->device);
    to_buf(r, hr, rcap * es, o->device);
    for (int k = 0; k < nalg; k++) {
        res[k] = (res_t){0, 0, 0, -1, 1};
        a.alg = algs[k];
        int e = 0;
        for (int i = 0; i < o->warmup && e == 0; i++) e = run_once(o, &a, comm);
        int eall = 0;
        HPC_CHECK(hpc_allreduce(&e, &eall, 1, HPC_INT32, HPC_MIN, comm, HPC_ALG_NATIVE));
        if (eall < 0) {
            /* the same argument error on every rank: say it once, mark N/A */
            if (lead && e < 0) fprintf(stderr, "%s: %s with %s: %s\n", hpc_app_name(),
                                            hpc_coll_name(coll), hpc_alg_name(algs[k]), hpc_last_cause());
            hpc_error_clear();
            res[k].ok = 0;
        }
    }
    for (int i = 0; i < o->iters; i++)
        for (int k = 0; k < nalg; k++) {
            if (!res[k].ok) continue;
            a.alg = algs[k];
            HPC_CHECK(hpc_barrier(comm, HPC_ALG_NATIVE));
            double t0 = MPI_Wtime();
            int e = run_once(o, &a, comm);
            t[(size_t)k * (size_t)o->iters + (size_t)i] = MPI_Wtime() - t0;
            if (e < 0) hpc_abort_on_error(e, __FILE__, __LINE__, hpc_alg_name(algs[k]));
        }
    size_t size = size_for(coll, count, es);
    for (int k = 0; k < nalg; k++) {
        if (!res[k].ok) continue;
        double med = hpc_median(t + (size_t)k * (size_t)o->iters, (size_t)o->iters), mx = 0;
        HPC_CHECK(hpc_allreduce(&med, &mx, 1, HPC_FLOAT64, HPC_MAX, comm, HPC_ALG_NATIVE));
        res[k].us = mx * 1e6;
        res[k].algbw = mx > 0 ? (double)size / mx / 1e9 : 0;
        res[k].busbw = res[k].algbw * bus_factor(coll);
        if (o->check) {
            a.alg = algs[k];
            fill(o, &a, hs, hr, scap, rcap);
            to_buf(s, hs, scap * es, o->device);
            to_buf(r, hr, rcap * es, o->device);
            int64_t bad = 0, tot = 0;
            if (run_once(o, &a, comm) < 0) {
                bad = (int64_t)rcap + 1;
            } else {
                from_buf(hr, r, rcap * es, o->device);
                from_buf(hs, s, scap * es, o->device);
                bad = verify(o, &a, hr, hs);
            }
            HPC_CHECK(hpc_allreduce(&bad, &tot, 1, HPC_INT64, HPC_SUM, comm, HPC_ALG_NATIVE));
            res[k].wrong = tot;
        }
    }
    buf_free(s, o->device);
    buf_free(r, o->device);
    free(hs);
    free(hr);
    free(t);
}

/* ---- memory bandwidth: one core, and the node's ranks at once ------- */
/* bytes one copy moves: 64 MiB, or more where the last-level cache would
 * hold that much (an Intel Xeon of 2024 has 300 MiB of L3): twice the L3,
 * shared out among the ranks copying at once */
static size_t copy_bytes(int copiers)
{
    size_t b = (size_t)64 << 20, want = 2 * hpc_llc_bytes() / (size_t)copiers;
    if (want > b) b = (want + 4095) & ~(size_t)4095;
    return b;
}

/* The best of 8 memcpy's of bytes on this rank, seconds; with sync, the
 * node's ranks start each copy together (barrier) */
static double copy_best(char *a, char *b, size_t bytes, MPI_Comm sync)
{
    double best = 1e30;
    for (int i = 0; i < 8; i++) {
        if (sync != MPI_COMM_NULL) MPI_Barrier(sync);
        double t0 = MPI_Wtime();
        memcpy(b, a, bytes);
        double dt = MPI_Wtime() - t0;
        if (dt < best) best = dt;
        a[i] = b[bytes - 1 - i];      /* keep the copies live */
    }
    return best;
}

/* One core alone (rank 0, the others waiting), then every rank of each
 * node at once, each its own buffers: what the node's ranks - the cores
 * an allreduce runs on - copy together, and so each of them while all
 * copy (membw_rank_gbs, the bound's rate).  Bytes copied per second: a
 * copy reads and writes each byte once. */
static double membw_rank_gbs;
static void membw(MPI_Comm comm)
{
    MPI_Comm node = hpc_comm_node();
    int q = 1, ok = 1, all = 0;
    MPI_Comm_size(node, &q);
    size_t one = copy_bytes(1), each = copy_bytes(q), mine = rank == 0 && one > each ? one : each;
    char *a = NULL, *b = NULL;
    if (posix_memalign((void **)&a, 4096, mine) || posix_memalign((void **)&b, 4096, mine)) ok = 0;
    HPC_CHECK(hpc_allreduce(&ok, &all, 1, HPC_INT32, HPC_MIN, comm, HPC_ALG_NATIVE));
    if (!all) hpc_app_fatal(HPC_EXIT_DATA, "--membw: out of memory for two %zu MiB buffers", mine >> 20);
    memset(a, 1, mine);
    memset(b, 2, mine);
    HPC_CHECK(hpc_barrier(comm, HPC_ALG_NATIVE));
    if (rank == 0) membw_gbs = (double)one / copy_best(a, b, one, MPI_COMM_NULL) / 1e9;
    HPC_CHECK(hpc_barrier(comm, HPC_ALG_NATIVE));
    /* every rank of a node at once: the node's total over the slowest */
    double t = copy_best(a, b, each, node), slowest = t;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, node);
    double together = (double)q * (double)each / slowest / 1e9;
    membw_rank_gbs = together / q;
    free(a);
    free(b);
    HPC_CHECK(hpc_bcast(&membw_gbs, 1, HPC_FLOAT64, 0, comm, HPC_ALG_NATIVE));
    HPC_CHECK(hpc_bcast(&membw_rank_gbs, 1, HPC_FLOAT64, 0, comm, HPC_ALG_NATIVE));
    HPC_CHECK(hpc_bcast(&together, 1, HPC_FLOAT64, 0, comm, HPC_ALG_NATIVE));
    if (rank == 0) {
        printf("# membw: one core copies %.2f GB/s (memcpy of %zu MiB, best of 8, bytes copied per second)\n",
               membw_gbs, one >> 20);
        printf("# membw: the node's %d rank%s copying at once: %.2f GB/s together, %.2f GB/s each (%.2fx one "
               "core; %zu MiB each)\n", q, q > 1 ? "s" : "", together, membw_rank_gbs, membw_rank_gbs / membw_gbs,
               each >> 20);
        fflush(stdout);
    }
}

/* --membw's bound for a row of coll: the busbw shm's allreduce reaches if
 * every byte it must read and write (hpc_coll_shm_traffic) moves at the
 * rate each rank copies while the node's ranks all copy (a copy reads and
 * writes a byte: 2 bytes of traffic per byte copied); 0 where there is
 * none (another collective, several nodes).  *path: shm's path. */
static double bound_gbs(hpc_coll_t coll, size_t count, const char **path)
{
    double rd, wr;
    if (membw_rank_gbs <= 0 || coll != HPC_COLL_ALLREDUCE ||
        hpc_coll_shm_traffic(hpc_comm_world(), coll, count, o.dt, &rd, &wr, path) < 0) {
        hpc_error_clear();
        return 0;
    }
    double bytes = (double)count * (double)hpc_dtype_size(o.dt), secs = (rd + wr) / (2 * membw_rank_gbs * 1e9);
    return secs > 0 ? bytes / secs / 1e9 * bus_factor(coll) : 0;
}

/* ---- output -------------------------------------------------------- */
typedef struct {
    size_t size, count;
    double bound;           /* --membw, allreduce on one node: bound_gbs, else 0 */
    const char *path;       /* shm's path at this size */
    res_t r[HPC_ALG_COUNT];
} row_t;

/* With --membw, more columns per algorithm: xmem, its busbw against one
 * core's memcpy, xnat, native's time against its (above 1: faster than
 * the MPI library), and for allreduce on one node xbnd, its busbw against
 * the bound of shm's traffic (bound_gbs; the row's bound after count). */
static int ratios(void)
{
    return membw_gbs > 0;
}

/* the bound's columns: allreduce with --membw where shm runs on the job
 * (its own table; not --tune's tables of a node or of the leaders).
 * Collective over the job's communicator (its first use may set it up). */
static int bounded(hpc_coll_t coll, int main_table)
{
    const char *path;
    return main_table && ratios() && bound_gbs(coll, 1 << 20, &path) > 0;
}

static void print_header(const opts_t *o, hpc_coll_t coll, const hpc_alg_t *algs, int nalg, const char *where,
                         int bd)
{
    printf("# hpc-collbench %s: %s %s%s%s, %d ranks%s, %s memory, %s, %s, %d iters (%d warmup)\n",
           hpc_version(), hpc_coll_name(coll), hpc_dtype_name(o->dt), hpc_coll_reduces(coll) ? " " : "",
           hpc_coll_reduces(coll) ? hpc_op_name(o->op) : "", nranks, where, o->device ? "cuda" : "host",
           o->inplace ? "in-place" : "out-of-place", o->nb ? "nonblocking" : "blocking", (int)o->iters, (int)o->warmup);
    int r = ratios();
    if (r)
        printf("# xmem = busbw / one core's memcpy (%.2f GB/s); xnat = native's time / this time\n", membw_gbs);
    if (bd) {
        printf("# bound = the busbw of shm's allreduce if every byte it reads and writes of the buffers (per "
               "rank, of n bytes: reads n, writes n) moved at %.2f GB/s, each rank's copy while the node's ranks "
               "copy at once; xbnd = busbw / bound\n", membw_rank_gbs);
    }
    int w = 33 + (r ? 14 : 0) + (bd ? 7 : 0);
    printf("#%12s %11s%s", "", "", bd ? "        " : "");
    for (int i = 0; i < nalg; i++) printf("  %-*s", w, hpc_alg_name(algs[i]));
    printf("\n#%12s %11s%s", "size", "count", bd ? "   bound" : "");
    for (int i = 0; i < nalg; i++) {
        printf("  %9s %7s %7s %6s", "time", "algbw", "busbw", "#wrong");
        if (r) printf(" %6s %6s", "xmem", "xnat");
        if (bd) printf(" %6s", "xbnd");
    }
    printf("\n#%12s %11s%s", "(B)", "(elements)", bd ? "  (GB/s)" : "");
    for (int i = 0; i < nalg; i++) {
        printf("  %9s %7s %7s %6s", "(us)", "(GB/s)", "(GB/s)", "");
        if (r) printf(" %6s %6s", "", "");
        if (bd) printf(" %6s", "");
    }
    printf("\n");
    fflush(stdout);     /* a log shows what runs before its first row */
}

static void print_row(const row_t *w, const hpc_alg_t *algs, int nalg, int bd)
{
    int nat = -1;
    for (int i = 0; i < nalg; i++)
        if (algs[i] == HPC_ALG_NATIVE && w->r[i].ok) nat = i;
    printf(" %12zu %11zu", w->size, w->count);
    if (bd) printf(" %7.2f", w->bound);
    for (int i = 0; i < nalg; i++) {
        const res_t *r = &w->r[i];
        if (!r->ok) {
            printf("  %9s %7s %7s %6s", "N/A", "N/A", "N/A", "N/A");
            if (ratios()) printf(" %6s %6s", "N/A", "N/A");
            if (bd) printf(" %6s", "N/A");
            continue;
        }
        char wr[24];
        if (r->wrong < 0) snprintf(wr, sizeof wr, "N/A");
        else snprintf(wr, sizeof wr, "%ld", r->wrong);
        printf("  %9.2f %7.2f %7.2f %6s", r->us, r->algbw, r->busbw, wr);
        if (!ratios()) continue;
        char xn[24] = "N/A";
        if (nat >= 0 && r->us > 0) snprintf(xn, sizeof xn, "%.2f", w->r[nat].us / r->us);
        printf(" %6.2f %6s", r->busbw / membw_gbs, xn);
        if (bd) printf(" %6.2f", w->bound > 0 ? r->busbw / w->bound : 0);
    }
    printf("\n");
    fflush(stdout);
}

static int plot(const opts_t *o, hpc_coll_t coll, const hpc_alg_t *algs, int nalg, const row_t *rows, int nrows)
{
    char dat[] = "/tmp/hpc-collbench-XXXXXX";
    int fd = mkstemp(dat);
    if (fd < 0) return HPC_ERR(HPC_ERR_IO, "no temporary file for the plot data");
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        remove(dat);
        return HPC_ERR(HPC_ERR_IO, "no temporary file for the plot data");
    }
    for (int i = 0; i < nrows; i++) {
        fprintf(f, "%zu", rows[i].size);
        for (int k = 0; k < nalg; k++)
            if (rows[i].r[k].ok) fprintf(f, " %g", rows[i].r[k].busbw);
            else fprintf(f, " NaN");
        fprintf(f, "\n");
    }
    if ((ferror(f) | fclose(f)) != 0) {
        remove(dat);
        return HPC_ERR(HPC_ERR_IO, "cannot write the plot data to %s", dat);
    }
    char script[4096];
    int n = snprintf(script, sizeof script,
                     "set title 'hpc-collbench %s %s%s%s, %d ranks, %s memory'\n"
                     "set logscale x 2\nset format x '%%.0b%%BB'\n"
                     "set xlabel 'message size'\nset ylabel 'bus bandwidth (GB/s)'\n"
                     "set key top left\nset grid\nplot ",
                     hpc_coll_name(coll), hpc_dtype_name(o->dt), hpc_coll_reduces(coll) ? " " : "",
                     hpc_coll_reduces(coll) ? hpc_op_name(o->op) : "", nranks, o->device ? "cuda" : "host");
    for (int k = 0; k < nalg && n < (int)sizeof script; k++)
        n += snprintf(script + n, sizeof script - n, "%s'%s' using 1:%d with linespoints title '%s'",
                      k ? ", " : "", dat, k + 2, hpc_alg_name(algs[k]));
    int rc = hpc_plot(o->plot, script, NULL);
    remove(dat);
    return rc;
}

/* Collective: rank 0 draws --plot, every rank fails alike if it could not. */
static void draw(const opts_t *o, hpc_coll_t coll, const hpc_alg_t *algs, int nalg, const row_t *rows,
                 int nrows, const char *label)
{
    int rc = 0;
    if (rank == 0 && o->plot) {
        rc = plot(o, coll, algs, nalg, rows, nrows);
        if (rc == 0) printf("# %s: %s\n", label, o->plot);
        else if (rc > 0) rc = HPC_ERR(HPC_ERR_IO, "gnuplot is not installed");
    }
    hpc_app_agree_rc(rc, HPC_EXIT_DATA, "--plot");
}

/* ---- one collective: all sizes, all algorithms ----------------------- */
/* The communicator a table is measured on, as the tuning file keys it. */
typedef struct {
    MPI_Comm comm;
    int nodes, ppn;         /* its nodes, the ranks of its largest */
    const char *where;      /* for the header: "" (the job), " in one node", ... */
    int main;               /* the job's own table: CSV, plot, summary */
} shape_t;

/* Tuning rows from a table: the fastest measured algorithm per size,
 * merged into ranges of call bytes (count * element size, what auto
 * sees), keyed by the shape it was measured on. */
static void tune_rows(const opts_t *o, FILE *tune, hpc_coll_t coll, const hpc_alg_t *algs, int nalg,
                      const row_t *rows, int nrows, const shape_t *sh)
{
    size_t es = hpc_dtype_size(o->dt);
    const char *mem = o->device ? "cuda" : "host";
    hpc_alg_t prev = HPC_ALG_AUTO;
    size_t lo = 0;
    for (int i = 0; i < nrows; i++) {
        int best = -1;
        for (int k = 0; k < nalg; k++)
            if (rows[i].r[k].ok && algs[k] != HPC_ALG_AUTO && algs[k] != HPC_ALG_NCCL &&
                (best < 0 || rows[i].r[k].us < rows[i].r[best].us)) best = k;
        if (best < 0) continue;
        size_t cb = rows[i].count * es;
        if (i > 0 && algs[best] != prev) {
            /* boundary halfway (geometrically) between the two sizes */
            size_t pb = rows[i - 1].count * es, mid = (size_t)sqrt((double)pb * (double)cb);
            if (mid <= lo) mid = lo + 1;
            fprintf(tune, "%s %d %d %s %zu %zu %s\n", hpc_coll_name(coll), sh->nodes, sh->ppn, mem, lo, mid,
                    hpc_alg_name(prev));
            lo = mid;
        }
        prev = algs[best];
    }
    if (prev != HPC_ALG_AUTO)
        fprintf(tune, "%s %d %d %s %zu - %s\n", hpc_coll_name(coll), sh->nodes, sh->ppn, mem, lo, hpc_alg_name(prev));
}

/* The summary: the largest size, best own algorithm against native (and
 * one core's memcpy). */
static void summary(const opts_t *o, hpc_coll_t coll, const hpc_alg_t *algs, int nalg, const row_t *w, long wrong)
{
    int best = -1, nat = -1;
    for (int k = 0; k < nalg; k++) {
        if (!w->r[k].ok) continue;
        if (algs[k] == HPC_ALG_NATIVE) nat = k;
        else if (algs[k] != HPC_ALG_NCCL && (best < 0 || w->r[k].us < w->r[best].us)) best = k;
    }
    if (best < 0) return;
    if (coll == HPC_COLL_BARRIER)
        printf("# summary: barrier: best own %s %.2f us", hpc_alg_name(algs[best]), w->r[best].us);
    else
        printf("# summary: %s at %zu B: best own %s %.2f GB/s busbw (%.2f us)", hpc_coll_name(coll), w->size,
               hpc_alg_name(algs[best]), w->r[best].busbw, w->r[best].us);
    if (nat >= 0)
        printf(", native %.2f %s, %.2fx", coll == HPC_COLL_BARRIER ? w->r[nat].us : w->r[nat].busbw,
               coll == HPC_COLL_BARRIER ? "us" : "GB/s", w->r[nat].us / w->r[best].us);
    if (ratios() && coll != HPC_COLL_BARRIER) printf(", %.2fx memcpy", w->r[best].busbw / membw_gbs);
    if (w->bound > 0)
        printf(", %.2f of the bound (%.2f GB/s, shm %s)", w->r[best].busbw / w->bound, w->bound, w->path);
    printf("%s\n", o->check ? (wrong ? ", WRONG RESULTS" : ", all results checked") : "");
}

/* Every size and algorithm of coll on sh's communicator (this rank in
 * it); the lead rank prints, and keeps the CSV and tuning rows. */
static int bench(const opts_t *o, hpc_coll_t coll, const shape_t *sh, FILE *csv, FILE *tune)
{
    MPI_Comm comm = sh->comm;
    hpc_alg_t algs[HPC_ALG_COUNT];
    int nalg = 0;
    if (o->algs_given) {
        for (int i = 0; i < o->nalg; i++) algs[nalg++] = o->algs[i];
    } else {
        hpc_alg_t has[HPC_ALG_COUNT];
        int nhas = hpc_coll_algs(coll, has, HPC_ALG_COUNT);
        for (int k = 0; k < nhas; k++)
            if (has[k] != HPC_ALG_NCCL || (o->device && hpc_have_nccl())) algs[nalg++] = has[k];
    }
    size_t es = hpc_dtype_size(o->dt);
    row_t *rows = NULL;
    int nrows = 0, cap = 0;
    long wrong = 0;
    int bd = bounded(coll, sh->main);
    if (lead) print_header(o, coll, algs, nalg, sh->where, bd);
    size_t last = (size_t)-1;
    for (double sz = (double)o->minb; sz <= (double)o->maxb * 1.0000001; sz *= o->factor) {
        size_t count = count_for(coll, (size_t)sz, es);
        if (coll != HPC_COLL_BARRIER && count == 0) count = 1;
        if (count == last) continue;
        last = count;
        if (nrows == cap) {
            cap = cap ? 2 * cap : 32;
            if (!(rows = realloc(rows, (size_t)cap * sizeof *rows))) hpc_app_fatal(HPC_EXIT_DATA, "out of memory");
        }
        row_t *w = &rows[nrows++];
        memset(w, 0, sizeof *w);
        w->count = count;
        w->size = size_for(coll, count, es);
        if (bd) w->bound = bound_gbs(coll, count, &w->path);
        measure_row(o, coll, algs, nalg, count, comm, w->r);
        for (int k = 0; k < nalg; k++)
            if (w->r[k].wrong > 0) wrong += w->r[k].wrong;
        if (lead) {
            print_row(w, algs, nalg, bd);
            if (csv && sh->main)
                for (int k = 0; k < nalg; k++)
                    if (w->r[k].ok)
                        fprintf(csv, "%s,%s,%s,%s,%d,%s,%s,%zu,%zu,%.3f,%.4f,%.4f,%ld\n", hpc_coll_name(coll),
                                hpc_alg_name(algs[k]), hpc_dtype_name(o->dt),
                                hpc_coll_reduces(coll) ? hpc_op_name(o->op) : "", nranks,
                                o->device ? "cuda" : "host", o->inplace ? "inplace" : "outofplace",
                                w->size, w->count, w->r[k].us, w->r[k].algbw, w->r[k].busbw, w->r[k].wrong);
        }
        if (coll == HPC_COLL_BARRIER) break;
        if (o->factor <= 1) break;
    }
    if (lead && nrows) summary(o, coll, algs, nalg, &rows[nrows - 1], wrong);
    if (lead && tune && nrows) tune_rows(o, tune, coll, algs, nalg, rows, nrows, sh);
    if (sh->main) draw(o, coll, algs, nalg, rows, nrows, "plot");
    free(rows);
    return wrong ? 1 : 0;
}

/* The job's shape: its nodes (HPC_NODE_SPLIT's too), ranks of the largest. */
static void job_shape(shape_t *sh, MPI_Comm comm)
{
    int q = 0, ppn = 0;
    MPI_Comm_size(hpc_comm_node(), &q);
    HPC_CHECK(hpc_allreduce(&q, &ppn, 1, HPC_INT32, HPC_MAX, comm, HPC_ALG_NATIVE));
    *sh = (shape_t){.comm = comm, .nodes = hpc_node_count(), .ppn = ppn, .where = "", .main = 1};
}

/* coll on the job, and for --tune on several nodes also inside one node
 * (every node at once; rank 0's is kept) and among one rank per node:
 * the tables hier's in-node and leaders' phases choose from. */
static int bench_all(const opts_t *o, hpc_coll_t coll, const shape_t *job, FILE *csv, FILE *tune)
{
    int fails = bench(o, coll, job, csv, tune);
    if (!o->tune || job->nodes < 2) return fails;
    {
        int save_rank = rank, save_n = nranks, all = 0;
        shape_t node = {.comm = hpc_comm_node(), .nodes = 1, .where = " in one node (hier's in-node phase)"};
        MPI_Comm_rank(node.comm, &rank);
        MPI_Comm_size(node.comm, &nranks);
        node.ppn = nranks;
        if (lead) printf("\n");
        if (nranks > 1) fails |= bench(o, coll, &node, NULL, tune);
        MPI_Comm lc = hpc_comm_leaders();
        if (lc != MPI_COMM_NULL) {
            shape_t lead_sh = {.comm = lc, .nodes = job->nodes, .ppn = 1,
                               .where = ", one per node (hier's leaders' phase)"};
            MPI_Comm_rank(lc, &rank);
            MPI_Comm_size(lc, &nranks);
            if (lead) printf("\n");
            fails |= bench(o, coll, &lead_sh, NULL, tune);
        }
        rank = save_rank;
        nranks = save_n;
        /* every rank leaves with the same verdict */
        HPC_CHECK(hpc_allreduce(&fails, &all, 1, HPC_INT32, HPC_MAX, job->comm, HPC_ALG_NATIVE));
        fails = all;
    }
    return fails;
}

/* Host bytes one rank allocates for the largest row of coll (measure_row:
 * send and receive buffers of nranks * count elements, twice for host
 * memory - the buffers and their reference copies). */
static double row_bytes(hpc_coll_t coll, size_t size)
{
    size_t es = hpc_dtype_size(o.dt), count = count_for(coll, size, es);
    return (o.device ? 2.0 : 4.0) * (double)nranks * (double)(count ? count : 1) * (double)es;
}

/* A path rank 0 will write at the end: checked now, before the work. */
static void check_output(const char *opt, const char *path)
{
    int rc = rank == 0 && path ? hpc_file_check(path) : 0;
    char what[64];
    snprintf(what, sizeof what, "--%s", opt);
    hpc_app_agree_rc(rc, HPC_EXIT_DATA, what);
}

/* Sizes, the plot's name and gnuplot, and the paths of the outputs: for
 * measured and simulated runs alike. */
static void check_sizes_and_outputs(void)
{
    if (o.minb > o.maxb) hpc_app_exit(HPC_EXIT_USAGE, "-b %zu is larger than -e %zu", o.minb, o.maxb);
    /* sizes times ranks and element sizes must stay far from overflow */
    if (o.maxb > ((size_t)1 << 50))
        hpc_app_exit(HPC_EXIT_USAGE, "-e %zu: larger than the largest message this benchmark takes (1P)", o.maxb);
    size_t L = o.plot ? strlen(o.plot) : 0;
    if (o.plot && (L < 5 || strcmp(o.plot + L - 4, ".png")))
        hpc_app_exit(HPC_EXIT_USAGE, "--plot: '%s' must name a .png file", o.plot);
    if (o.plot && !*hpc_gnuplot()) hpc_app_exit(HPC_EXIT_DATA, "--plot: gnuplot is not installed");
    check_output("plot", o.plot);
    check_output("csv", o.csv);
    check_output("tune", o.tune);
}

/* What only makes sense once all options are in. */
static void check_options(void)
{
    check_sizes_and_outputs();
    if (o.root >= nranks)
        hpc_app_exit(HPC_EXIT_USAGE, "--root %lld: must be a rank from 0 to %d", (long long)o.root,
                     nranks - 1);
    char has[256];
    for (int i = 0; o.algs_given && i < o.nalg; i++)
        if (!hpc_coll_has_alg(o.coll, o.algs[i]))
            hpc_app_exit(HPC_EXIT_USAGE, "-a: %s has no algorithm '%s' (it has %s)", hpc_coll_name(o.coll),
                         hpc_alg_name(o.algs[i]), hpc_coll_alg_names(o.coll, has, sizeof has));
    if (o.device) {
        /* what this node lacks (the CUDA module, a library it needs, a
         * device): a request it cannot serve, one line, exit 2 */
        const char *no = hpc_gpu_unavailable();
        hpc_app_agree(no ? HPC_EXIT_USAGE : 0, "--mem cuda: rank %d (%s): %s", rank, hpc_hostname(), no);
    }
    double need = 0;
    for (int c = 0; c < HPC_COLL_COUNT; c++)
        if (c == (int)o.coll || (o.tune && !o.coll_given && c != HPC_COLL_BARRIER)) {
            double b = row_bytes((hpc_coll_t)c, o.maxb);
            if (b > need) need = b;
        }
    char what[64];
    snprintf(what, sizeof what, "-e %zu", o.maxb);
    if (o.membw) {   /* its copies come first, their buffers freed after */
        int q = 1;
        MPI_Comm_size(hpc_comm_node(), &q);
        size_t one = copy_bytes(1), each = copy_bytes(q);
        double mb = 2.0 * (double)(one > each ? one : each);
        if (mb > need) {
            need = mb;
            snprintf(what, sizeof what, "--membw");
        }
    }
    hpc_app_need_memory(need, what);
}

/* Rank 0: the rows gathered in memory become the file at path, whole
 * (hpc_file: nothing is left behind by a run that fails before this). */
static int write_whole(const char *path, const char *text, size_t len)
{
    hpc_file_t *f;
    HPC_TRY(hpc_file_open(path, &f));
    if (len && fwrite(text, 1, len, hpc_file_stream(f)) != len) {
        hpc_file_discard(f);
        return HPC_ERR(HPC_ERR_IO, "cannot write '%s'", path);
    }
    return hpc_file_commit(f);
}

/* Rank 0 with path set: a table gathered in memory (for save), starting
 * with header; else NULL. */
static FILE *table_open(const char *path, char **text, size_t *len, const char *header)
{
    FILE *f = NULL;
    if (rank == 0 && path && !(f = open_memstream(text, len))) hpc_app_fatal(HPC_EXIT_DATA, "out of memory");
    if (f) fputs(header, f);
    return f;
}

static const char csv_header[] =
    "coll,alg,dtype,op,nranks,mem,placement,size_bytes,count,time_us,algbw_GBs,busbw_GBs,wrong\n";

/* The CSV and tuning tables: written at the end, or not at all. */
static void save(const char *opt, const char *path, FILE *mem, char **text, size_t *len)
{
    int rc = 0;
    if (rank == 0 && path) {
        fclose(mem);
        rc = write_whole(path, *text, *len);
        free(*text);
    }
    char what[64];
    snprintf(what, sizeof what, "--%s", opt);
    hpc_app_agree_rc(rc, HPC_EXIT_DATA, what);
}

/* --simulate's table, kept for --plot */
typedef struct { row_t *rows; int n, cap; } sim_rows_t;

static void sim_cell(void *ctx, size_t size, size_t count, int k, double us, double algbw, double busbw, int ok)
{
    sim_rows_t *t = ctx;
    if (k == 0) {
        if (t->n == t->cap) {
            t->cap = t->cap ? 2 * t->cap : 32;
            if (!(t->rows = realloc(t->rows, (size_t)t->cap * sizeof *t->rows)))
                hpc_app_fatal(HPC_EXIT_DATA, "out of memory");
        }
        t->rows[t->n++] = (row_t){.size = size, .count = count};
    }
    t->rows[t->n - 1].r[k] = (res_t){.us = us, .algbw = algbw, .busbw = busbw, .wrong = -1, .ok = ok};
}

/* --simulate (sim_table.c): no buffers, no measurement */
static int simulate_main(void)
{
    if (o.sim_nodes > o.sim_ranks)
        hpc_app_exit(HPC_EXIT_USAGE, "--nodes %lld: more nodes than --ranks %lld", (long long)o.sim_nodes,
                     (long long)o.sim_ranks);
    if (o.tune) hpc_app_exit(HPC_EXIT_USAGE, "--simulate: --tune is for measured runs");
    check_sizes_and_outputs();
    hpc_alg_t algs[HPC_ALG_COUNT];
    int nalg = 0;
    sim_rows_t table = {0};
    sim_opts_t s = {.coll = o.coll, .algs = o.algs, .nalg = o.algs_given ? o.nalg : 0, .minb = o.minb,
                    .maxb = o.maxb, .factor = o.factor, .dt = o.dt, .ranks = (int)o.sim_ranks,
                    .nodes = (int)o.sim_nodes, .cell = sim_cell, .ctx = &table, .algs_out = algs,
                    .nalg_out = &nalg};
    char *text = NULL;
    size_t len = 0;
    FILE *csv = table_open(o.csv, &text, &len, csv_header);
    simulate_run(&s, csv);
    save("csv", o.csv, csv, &text, &len);
    nranks = (int)o.sim_ranks;      /* the plot's title: the simulated job */
    draw(&o, o.coll, algs, nalg, table.rows, table.n, "plot (predicted)");
    free(table.rows);
    return hpc_app_finish();
}

int main(int argc, char **argv)
{
    hpc_app_start(&app, &argc, &argv);
    MPI_Comm comm = hpc_comm_world();
    rank = hpc_rank();
    nranks = hpc_size();
    lead = rank == 0;
    if (o.simulate) return simulate_main();
    check_options();
    /* rank 0 gathers the tables in memory; they are written at the end */
    char *csv_text = NULL, *tune_text = NULL;
    size_t csv_len = 0, tune_len = 0;
    FILE *csv = table_open(o.csv, &csv_text, &csv_len, csv_header);
    FILE *tune = table_open(o.tune, &tune_text, &tune_len, "");
    if (tune)
        fprintf(tune, "# hpc-collbench --tune: fastest algorithm per size on %d ranks, %d node(s) (%s memory, %s).\n"
                      "# COLLECTIVE NODES PPN MEM MIN_BYTES MAX_BYTES ALG, bytes = count * element size\n",
                nranks, hpc_node_count(), o.device ? "cuda" : "host", hpc_dtype_name(o.dt));

    if (o.membw) membw(comm);
    if (o.tune) model_measure(comm, tune);   /* the model's constants, both link classes */
    shape_t job;
    job_shape(&job, comm);
    int fails = 0;
    if (o.tune && !o.coll_given) {
        for (int c = HPC_COLL_BCAST; c < HPC_COLL_COUNT; c++) {
            fails |= bench_all(&o, (hpc_coll_t)c, &job, csv, tune);
            if (lead) printf("\n");
        }
    } else {
        fails = bench_all(&o, o.coll, &job, csv, tune);
    }
    save("csv", o.csv, csv, &csv_text, &csv_len);
    /* a table from wrong results would send auto to a broken algorithm */
    hpc_app_agree(fails && o.tune ? HPC_EXIT_DATA : 0, "--tune %s: not written: wrong results", o.tune);
    save("tune", o.tune, tune, &tune_text, &tune_len);
    if (rank == 0 && o.tune) printf("# tuning table: %s (use it with HPC_COLL_TUNING=%s)\n", o.tune, o.tune);
    int rc = hpc_app_finish();
    return fails ? HPC_EXIT_DATA : rc;
}
