/* coll_mix.c - many overlapping nonblocking collectives of mixed kinds
 * (issue 13: an allgather forced to bruck hung at 5 ranks in such a mix).
 *
 * For every (collective, algorithm) of the registry but nccl, one batch:
 * NCALLS nonblocking calls of every kind in turn (barrier, bcast, reduce,
 * allreduce, gather, allgather, scatter, reduce_scatter, alltoall) with a
 * few int64 elements each, started in one order and completed with
 * hpc_waitall (even ranks) or by polling in reverse (odd ranks).  Calls of
 * the collective under test run its algorithm; the others run auto, or -
 * in a second batch - the same algorithm where they have it.  Every result
 * is checked against answers known in closed form; every third call runs
 * in place where the collective has it.  Half the batches run
 * on a communicator in reverse rank order.  HPC_TIMEOUT (set by the test
 * unless the caller did) turns a hang into a failure that names the call.
 * COLL_ONLY=allgather[,bruck] (or all,hier) restricts the batches;
 * COLL_MIX_CALLS=N and COLL_MIX_JITTER=US (random pauses between starts)
 * are for stress runs.
 */
#include "config.h"
#include "hpc_coll.h"
#include "testlib.h"
#include "coll_testlib.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAXCALLS = 256, MAXN = 7 };
static int NCALLS = 27;   /* COLL_MIX_CALLS overrides */

static int rank, p;
static int jitter;    /* COLL_MIX_JITTER=US: random pauses up to US between starts */

typedef struct {
    hpc_coll_t c;
    hpc_alg_t alg;
    size_t n;
    int root, call;
    hpc_op_t op;
    int64_t *in, *out;
    hpc_request_t *req;
} mcall_t;

/* rank r's input element j of call k: distinct per rank, call and slot */
static int64_t x(int r, int k, size_t j)
{
    return (int64_t)(r + 1) * 1009 + (int64_t)k * 131 + (int64_t)j * 7 - 500;
}

static int64_t combine(hpc_op_t op, int64_t a, int64_t b)
{
    return op == HPC_MAX ? (a > b ? a : b) : a + b;
}

static int64_t reduced(hpc_op_t op, int k, size_t j)
{
    int64_t acc = x(0, k, j);
    for (int r = 1; r < p; r++) acc = combine(op, acc, x(r, k, j));
    return acc;
}

/* Elements rank me must find in out[j] after call m, or 0 if out[j] is
 * not written (*want unset). */
static int expect(const mcall_t *m, int me, size_t j, int64_t *want)
{
    size_t n = m->n, blk = j / (n ? n : 1), e = j % (n ? n : 1);
    switch (m->c) {
    case HPC_COLL_BCAST: *want = x(m->root, m->call, j); return 1;
    case HPC_COLL_REDUCE:
        if (me != m->root) return 0;
        *want = reduced(m->op, m->call, j);
        return 1;
    case HPC_COLL_ALLREDUCE: *want = reduced(m->op, m->call, j); return 1;
    case HPC_COLL_GATHER:
        if (me != m->root) return 0;
        *want = x((int)blk, m->call, e);
        return 1;
    case HPC_COLL_ALLGATHER: *want = x((int)blk, m->call, e); return 1;
    case HPC_COLL_SCATTER: *want = x(m->root, m->call, (size_t)me * n + j); return 1;
    case HPC_COLL_REDUCE_SCATTER: *want = reduced(m->op, m->call, (size_t)me * n + j); return 1;
    case HPC_COLL_ALLTOALL: *want = x((int)blk, m->call, (size_t)me * n + e); return 1;
    default: return 0;
    }
}

static size_t out_len(const mcall_t *m)
{
    switch (m->c) {
    case HPC_COLL_GATHER: case HPC_COLL_ALLGATHER: case HPC_COLL_ALLTOALL:
        return (size_t)p * m->n;
    case HPC_COLL_BCAST: case HPC_COLL_REDUCE: case HPC_COLL_ALLREDUCE: return m->n;
    case HPC_COLL_SCATTER: case HPC_COLL_REDUCE_SCATTER: return m->n;
    default: return 0;
    }
}

static size_t in_len(const mcall_t *m)
{
    switch (m->c) {
    case HPC_COLL_SCATTER: case HPC_COLL_REDUCE_SCATTER: case HPC_COLL_ALLTOALL:
        return (size_t)p * m->n;
    default: return m->n;
    }
}

/* Does call m take HPC_IN_PLACE at rank me (scatter's is left out: its
 * result stays in the send buffer)? */
static int in_place(const mcall_t *m, int me)
{
    switch (m->c) {
    case HPC_COLL_ALLREDUCE: case HPC_COLL_REDUCE: case HPC_COLL_ALLGATHER:
    case HPC_COLL_REDUCE_SCATTER: case HPC_COLL_ALLTOALL:
        return 1;
    case HPC_COLL_GATHER: return me == m->root;
    default: return 0;
    }
}

/* Call k of a batch: kind k mod 9; the one under test runs alg. */
static int start(mcall_t *m, int k, hpc_coll_t test, hpc_alg_t alg, int all_alg, MPI_Comm comm)
{
    m->c = (hpc_coll_t)(k % HPC_COLL_COUNT);
    m->alg = m->c == test || (all_alg && hpc_coll_has_alg(m->c, alg)) ? alg : HPC_ALG_AUTO;
    m->n = 1 + (size_t)(k * 5 + 3) % MAXN;
    m->root = k % p;
    m->call = k;
    m->op = k % 2 ? HPC_MAX : HPC_SUM;
    int me = 0;
    MPI_Comm_rank(comm, &me);
    size_t ni = in_len(m), no = out_len(m), nbuf = (ni > no ? ni : no) + 1;
    m->in = malloc((ni + 1) * sizeof *m->in);
    m->out = malloc(nbuf * sizeof *m->out);
    for (size_t j = 0; j < ni; j++) m->in[j] = x(me, k, j);
    for (size_t j = 0; j < nbuf; j++) m->out[j] = -77;
    hpc_coll_args_t a = {.coll = m->c, .sendbuf = m->in, .recvbuf = m->out, .count = m->n,
                         .dtype = HPC_INT64, .op = m->op, .root = m->root, .alg = m->alg};
    if (m->c == HPC_COLL_BCAST) {
        a.sendbuf = NULL;
        if (me == m->root) memcpy(m->out, m->in, m->n * sizeof *m->in);
    } else if (k % 3 == 1 && in_place(m, me)) {
        /* the input where in place wants it */
        size_t at = m->c == HPC_COLL_ALLGATHER || m->c == HPC_COLL_GATHER ? (size_t)me * m->n : 0;
        memcpy(m->out + at, m->in, ni * sizeof *m->in);
        a.sendbuf = HPC_IN_PLACE;
    }
    int e = hpc_icoll(&a, comm, &m->req);
    EXPECT(e == 0, "start %s/%s: %s", hpc_coll_name(m->c), hpc_alg_name(m->alg), hpc_last_error());
    return e;
}

static void check(const mcall_t *m, int me)
{
    size_t no = out_len(m);
    for (size_t j = 0; j < no; j++) {
        int64_t want = 0;
        if (!expect(m, me, j, &want)) break;
        if (m->out[j] != want) {
            EXPECT(0, "call %d %s/%s n=%zu root=%d: element %zu is %lld, expected %lld", m->call,
                   hpc_coll_name(m->c), hpc_alg_name(m->alg), m->n, m->root, j,
                   (long long)m->out[j], (long long)want);
            return;
        }
    }
    size_t nbuf = in_len(m) > no ? in_len(m) : no;
    EXPECT(m->out[nbuf] == -77, "call %d %s/%s wrote past its buffer", m->call,
           hpc_coll_name(m->c), hpc_alg_name(m->alg));
}

static void batch(hpc_coll_t test, hpc_alg_t alg, int all_alg, MPI_Comm comm)
{
    mcall_t m[MAXCALLS];
    hpc_request_t *reqs[MAXCALLS];
    int me = 0;
    MPI_Comm_rank(comm, &me);
    memset(m, 0, sizeof m);
    for (int k = 0; k < NCALLS; k++) {
        if (jitter) usleep((useconds_t)(rand() % jitter));   /* ranks out of step */
        start(&m[k], k, test, alg, all_alg, comm);
        reqs[k] = m[k].req;
    }
    if (rank % 2 == 0 || getenv("COLL_MIX_WAITALL")) {
        int e = hpc_waitall(NCALLS, reqs);
        EXPECT(e == 0, "waitall (%s/%s): %s", hpc_coll_name(test), hpc_alg_name(alg), hpc_last_error());
    } else {
        for (int left = NCALLS; left > 0;)
            for (int k = NCALLS - 1; k >= 0; k--) {
                int done = 0;
                if (!reqs[k]) continue;
                int e = hpc_test(&reqs[k], &done);
                EXPECT(e == 0, "test: %s", hpc_last_error());
                if (e) reqs[k] = NULL;
                if (done || e) left--;
            }
    }
    for (int k = 0; k < NCALLS; k++) {
        check(&m[k], me);
        free(m[k].in);
        free(m[k].out);
    }
}

static int wanted(hpc_coll_t c, hpc_alg_t a)
{
    const char *only = getenv("COLL_ONLY");
    if (!only || !*only) return 1;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", only);
    char *comma = strchr(buf, ',');
    if (comma) *comma++ = 0;
    if (strcmp(buf, "all") != 0 && strcmp(buf, hpc_coll_name(c)) != 0) return 0;
    return !comma || strcmp(comma, hpc_alg_name(a)) == 0;
}

int main(int argc, char **argv)
{
    if (!getenv("HPC_TIMEOUT")) setenv("HPC_TIMEOUT", "30", 1);
    if (getenv("COLL_MIX_CALLS")) NCALLS = atoi(getenv("COLL_MIX_CALLS"));
    if (NCALLS < 1 || NCALLS > MAXCALLS) NCALLS = 27;
    if (getenv("COLL_MIX_JITTER")) jitter = atoi(getenv("COLL_MIX_JITTER"));
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    srand((unsigned)rank * 7919u + 1u);
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, p - rank, &rev);
    int nb = 0;
    for (int c = 0; c < HPC_COLL_COUNT; c++) {
        hpc_alg_t algs[HPC_ALG_COUNT];
        int n = hpc_coll_algs((hpc_coll_t)c, algs, HPC_ALG_COUNT);
        for (int i = 0; i < n; i++) {
            if (algs[i] == HPC_ALG_NCCL || !wanted((hpc_coll_t)c, algs[i])) continue;
            for (int all = 0; all < 2; all++, nb++)
                batch((hpc_coll_t)c, algs[i], all, nb % 2 ? rev : MPI_COMM_WORLD);
        }
    }
    MPI_Comm_free(&rev);
    long mine = test_failures, tot = 0;
    MPI_Reduce(&mine, &tot, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("coll_mix: %d ranks, %d batches of %d calls, %ld failures\n", p, nb, NCALLS, tot);
    t_finalize();
    return rank == 0 && tot ? 1 : 0;
}
