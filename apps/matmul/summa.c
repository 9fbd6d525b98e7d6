/* summa.c - SUMMA: C += A(:, panel) B(panel, :) for each panel of K, the
 * panels of A broadcast along grid rows and those of B along grid columns
 * with libhpc's nonblocking broadcast, on CPU or GPU blocks alike (the
 * block operations come from a table: mm_cpu_ops here, mm_gpu_ops() in
 * gpu.cu; libhpc broadcasts host and device buffers).
 *
 * Double buffering: panel p+1's broadcasts are posted before panel p's
 * GEMM starts, and the GEMM runs in strips of rows with hpc_test() between
 * them - libhpc (like MPI) moves a nonblocking collective forward only
 * inside its calls, so without the polls the next panel would not travel
 * while this one computes.
 *
 * A stop signal (SIGTERM, SIGUSR1, Ctrl-C) is voted on once a panel
 * without a pause (hpc_app_stop_vote: the vote travels while the next
 * panel computes); the loop ends at the panel where every rank learns it.
 * Rank 0 shows the progress line, one update a panel.
 */
#include "config.h"
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "matmul.h"

#define STRIP_ROWS 256   /* GEMM rows between two polls: ~1-10 ms of work */

/* ---- the CPU's block operations ---- */
static void *cpu_alloc(size_t n) { return malloc(n); }
static void cpu_release(void *p) { free(p); }
static int cpu_copy(void *d, const void *s, size_t n) { memcpy(d, s, n); return 0; }
static int cpu_sync(void) { return 0; }
static const char *cpu_why(void) { return "out of memory"; }

static int cpu_pack(void *dst, const void *src, int64_t rows, int64_t kb, int64_t ld, size_t es)
{
    for (int64_t i = 0; i < rows; i++)
        memcpy((char *)dst + (size_t)(i * kb) * es, (const char *)src + (size_t)(i * ld) * es, (size_t)kb * es);
    return 0;
}

static int cpu_gemm(int dtype, int64_t rows, int64_t cols, int64_t kb, const void *a, const void *b, void *c)
{
    if (dtype == MM_F32)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)cols, (int)kb, 1.0f,
                    (const float *)a, (int)kb, (const float *)b, (int)cols, 1.0f, (float *)c, (int)cols);
    else
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)cols, (int)kb, 1.0,
                    (const double *)a, (int)kb, (const double *)b, (int)cols, 1.0, (double *)c, (int)cols);
    return 0;
}

const mm_ops_t mm_cpu_ops = {"cpu", cpu_alloc, cpu_release, cpu_copy, cpu_copy, cpu_pack, cpu_gemm,
                             cpu_sync, cpu_why};

/* ---- the loop ---- */
typedef struct {
    const mm_dist_t *d;
    const mm_opts_t *o;
    const mm_ops_t *ops;
    char *a, *b, *c;         /* my blocks, in the ops' memory */
    char *ap[2], *bp[2];     /* panel buffers (bp may point into b) */
    char *brecv[2];          /* the B panel receive buffers */
    hpc_request_t *req[2][2];
    size_t es;
    hpc_dtype_t dt;
} summa_t;

#define OPS(call) do { if ((call) < 0) return HPC_ERR(HPC_ERR_DATA, "%s: %s", S->ops->name, S->ops->why()); } while (0)

/* Start panel [k0, k1)'s broadcasts into slot s. */
static int post(summa_t *S, int64_t k0, int64_t k1, int s)
{
    const mm_dist_t *d = S->d;
    int64_t kb = k1 - k0;
    int aown = mm_a_owner(d, k0), bown = mm_b_owner(d, k0);
    if (d->c == aown && d->amr > 0)   /* my columns [k0, k1) of A, packed */
        OPS(S->ops->pack(S->ap[s], S->a + (size_t)(k0 - d->ak0) * S->es, d->amr, kb, d->akc, S->es));
    /* my rows [k0, k1) of B are contiguous: the owner sends from its block */
    S->bp[s] = d->r == bown ? S->b + (size_t)((k0 - d->bk0) * d->bnc) * S->es : S->brecv[s];
    S->req[s][0] = S->req[s][1] = NULL;
    if (d->pc > 1)
        HPC_TRY(hpc_ibcast(S->ap[s], (size_t)(d->amr * kb), S->dt, aown, hpc_grid_row_comm(d->grid),
                           S->o->bcast_alg, &S->req[s][0]));
    if (d->pr > 1)
        HPC_TRY(hpc_ibcast(S->bp[s], (size_t)(kb * d->bnc), S->dt, bown, hpc_grid_col_comm(d->grid),
                           S->o->bcast_alg, &S->req[s][1]));
    return 0;
}

/* C += panel of slot s, in strips, moving the other slot's broadcasts */
static int compute(summa_t *S, int64_t kb, int s, double *gemm_s)
{
    const mm_dist_t *d = S->d;
    double t = hpc_wtime();
    for (int64_t i = 0; i < d->amr; i += STRIP_ROWS) {
        int64_t rows = d->amr - i < STRIP_ROWS ? d->amr - i : STRIP_ROWS;
        if (d->bnc > 0 && kb > 0)
            OPS(S->ops->gemm(S->o->dtype, rows, d->bnc, kb, S->ap[s] + (size_t)(i * kb) * S->es, S->bp[s],
                             S->c + (size_t)(i * d->bnc) * S->es));
        for (int j = 0; j < 2; j++) {
            int done;
            if (S->req[1 - s][j]) HPC_TRY(hpc_test(&S->req[1 - s][j], &done));
        }
    }
    *gemm_s += hpc_wtime() - t;
    return 0;
}

/* The algorithm auto runs for the largest panel (for the report). */
static hpc_alg_t report_alg(const summa_t *S)
{
    const mm_dist_t *d = S->d;
    hpc_alg_t alg = S->o->bcast_alg;
    int p = d->pc > 1 ? d->pc : d->pr;
    size_t count = (size_t)((d->pc > 1 ? d->amr : d->bnc) * S->o->nb);
    if (p < 2) return HPC_ALG_COUNT;   /* nothing broadcast */
    if (alg == HPC_ALG_AUTO && hpc_coll_choose(HPC_COLL_BCAST, count, S->dt, p, S->ops != &mm_cpu_ops, &alg) < 0)
        alg = HPC_ALG_AUTO;
    return alg;
}

/* The progress line's own field: "panel 12 of 40" */
typedef struct {
    int64_t panel, panels;
} where_t;

static void progress_fields(void *ctx, char *buf, size_t len)
{
    const where_t *w = ctx;
    snprintf(buf, len, "panel %lld of %lld", (long long)w->panel, (long long)w->panels);
}

static int64_t count_panels(const mm_dist_t *d, int64_t nb)
{
    int64_t n = 0;
    for (int64_t k = 0; k < d->k; k = mm_panel_end(d, k, nb)) n++;
    return n;
}

/* Rank 0's line, counting columns of K (panels differ in width) and
 * showing GFLOP/s */
static hpc_progress_t *progress_start(const summa_t *S, where_t *w)
{
    if (hpc_rank() != 0) return NULL;
    hpc_progress_t *p = hpc_progress_start("matmul", "columns of K", (uint64_t)S->d->k);
    hpc_progress_rate(p, "GFLOP", 2.0 * (double)S->d->m * (double)S->d->n / 1e9);
    hpc_progress_fields(p, progress_fields, w);
    return p;
}

/* Test hook: HPC_MATMUL_TEST_PACE=MS sleeps MS milliseconds a panel, so
 * that a test can signal a run however fast the machine; nothing else
 * reads it. */
static void test_pace(void)
{
    static long ms = -1;
    if (ms < 0) {
        const char *s = getenv("HPC_MATMUL_TEST_PACE");
        ms = s ? atol(s) : 0;
    }
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    if (ms > 0) nanosleep(&ts, NULL);
}

/* A stop agreed at a panel boundary: the broadcasts of the next panel
 * (posted by every rank) complete, then the loop ends. */
static int run(summa_t *S, mm_stats_t *st)
{
    const mm_dist_t *d = S->d;
    int64_t nb = S->o->nb, k0 = 0, k1 = mm_panel_end(d, 0, nb);
    int s = 0;
    where_t w = {0, count_panels(d, nb)};
    hpc_stop_vote_t *vote;
    HPC_TRY(hpc_app_stop_vote_open(hpc_comm_world(), &vote));
    hpc_progress_t *prog = progress_start(S, &w);
    int rc = post(S, 0, k1, 0);
    while (!rc && k0 < d->k) {
        if (hpc_app_stop_vote(vote)) {
            rc = hpc_waitall(2, S->req[s]);
            st->stopped = 1;
            break;
        }
        double t = hpc_wtime();
        if ((rc = hpc_waitall(2, S->req[s])) < 0) break;
        st->wait += hpc_wtime() - t;
        /* the other slot is free once the previous GEMM has finished */
        if (S->ops->sync() < 0) {
            rc = HPC_ERR(HPC_ERR_DATA, "%s: %s", S->ops->name, S->ops->why());
            break;
        }
        int64_t k2 = k1 < d->k ? mm_panel_end(d, k1, nb) : k1;
        if (k1 < d->k && (rc = post(S, k1, k2, 1 - s)) < 0) break;
        if ((rc = compute(S, k1 - k0, s, &st->gemm)) < 0) break;
        test_pace();
        st->panels++;
        st->k_done = k1;
        w.panel = st->panels;
        hpc_progress_update(prog, (uint64_t)k1);
        k0 = k1;
        k1 = k2;
        s = 1 - s;
    }
    hpc_progress_end(prog);
    hpc_app_stop_vote_close(vote);
    st->panels_total = w.panels;
    if (rc < 0) return rc;
    OPS(S->ops->sync());
    return 0;
}

/* The blocks in the ops' memory: the caller's own on the CPU (no copy:
 * a rank holds its blocks and four panels, nothing more), copies on the
 * GPU. */
static int setup(summa_t *S, const void *a, const void *b, void *c)
{
    const mm_dist_t *d = S->d;
    int64_t nb = S->o->nb;
    size_t na = (size_t)(d->amr * d->akc) * S->es, nbb = (size_t)(d->bkr * d->bnc) * S->es;
    size_t nc = (size_t)(d->amr * d->bnc) * S->es;
    int host = S->ops == &mm_cpu_ops;
    S->a = host ? (char *)a : S->ops->alloc(na + S->es);
    S->b = host ? (char *)b : S->ops->alloc(nbb + S->es);
    S->c = host ? (char *)c : S->ops->alloc(nc + S->es);
    for (int i = 0; i < 2; i++) {
        S->ap[i] = S->ops->alloc((size_t)(d->amr * nb + 1) * S->es);
        S->brecv[i] = S->ops->alloc((size_t)(nb * d->bnc + 1) * S->es);
    }
    if (!S->a || !S->b || !S->c || !S->ap[0] || !S->ap[1] || !S->brecv[0] || !S->brecv[1])
        return HPC_ERR(HPC_ERR_NOMEM, "%s memory for the blocks and panels", S->ops->name);
    if (host) {
        memset(S->c, 0, nc);
    } else {
        OPS(S->ops->upload(S->a, a, na));
        OPS(S->ops->upload(S->b, b, nbb));
        memset(c, 0, nc);
        OPS(S->ops->upload(S->c, c, nc));
    }
    return 0;
}

static void teardown(summa_t *S)
{
    int host = S->ops == &mm_cpu_ops;
    char *all[] = {host ? NULL : S->a, host ? NULL : S->b, host ? NULL : S->c, S->ap[0], S->ap[1],
                   S->brecv[0], S->brecv[1]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]) S->ops->release(all[i]);
}

int mm_summa(const mm_dist_t *d, const mm_opts_t *o, const mm_ops_t *ops, const void *a, const void *b,
             void *c, mm_stats_t *st)
{
    summa_t S;
    memset(&S, 0, sizeof S);
    S.d = d;
    S.o = o;
    S.ops = ops;
    S.es = mm_esize(o->dtype);
    S.dt = o->dtype == MM_F32 ? HPC_FLOAT32 : HPC_FLOAT64;
    memset(st, 0, sizeof *st);
    st->alg = report_alg(&S);
    int rc = setup(&S, a, b, c);
    /* one bad rank must not leave the others in a broadcast */
    int bad = rc < 0, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, hpc_comm_world());
    if (any) {
        teardown(&S);
        return rc < 0 ? rc : HPC_ERR(HPC_ERR_NOMEM, "another rank could not set up its blocks");
    }
    MPI_Barrier(hpc_comm_world());
    double t0 = hpc_wtime();
    rc = run(&S, st);
    double mine = hpc_wtime() - t0;
    MPI_Allreduce(&mine, &st->seconds, 1, MPI_DOUBLE, MPI_MAX, hpc_comm_world());
    if (rc == 0 && ops != &mm_cpu_ops && ops->download(c, S.c, (size_t)(d->amr * d->bnc) * S.es) < 0)
        rc = HPC_ERR(HPC_ERR_DATA, "%s", ops->why());
    teardown(&S);
    return rc;
}
