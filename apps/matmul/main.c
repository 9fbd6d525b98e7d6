/* main.c - hpc-matmul: distributed C = A B with SUMMA over parallel HDF5.
 *
 * The run: options, the shapes (from --gen or the input files), the grid
 * and each rank's blocks, reading or generating them, SUMMA (CPU or GPU),
 * optionally Freivalds' check, writing C, the report.
 */
#include "config.h"
#include <ctype.h>
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include "matmul.h"

/* Shapes from the inputs; inner dimensions must agree.  Collective. */
static void shapes(mm_opts_t *o)
{
    if (o->gen) return;
    /* each against the schema first (data/schemas/matrix.json) */
    hpc_app_check_input("--a", o->a.file, o->a.dset, "matrix");
    hpc_app_check_input("--b", o->b.file, o->b.dset, "matrix");
    int64_t k2 = 0;
    hpc_app_agree_rc(mm_input_shapes(o, &o->m, &o->k, &k2, &o->n), HPC_EXIT_DATA, NULL);
    /* HDF5 reads nothing of a 0-row dataset as "addr overflow" */
    if (o->m == 0 || o->k == 0)
        hpc_app_exit(HPC_EXIT_DATA, "A is empty: %s:%s is %lld x %lld", o->a.file, o->a.dset, (long long)o->m,
                     (long long)o->k);
    if (k2 == 0 || o->n == 0)
        hpc_app_exit(HPC_EXIT_DATA, "B is empty: %s:%s is %lld x %lld", o->b.file, o->b.dset, (long long)k2,
                     (long long)o->n);
    if (o->k != k2)
        hpc_app_exit(HPC_EXIT_DATA, "inner dimensions disagree: A is %lld x %lld, B is %lld x %lld",
                     (long long)o->m, (long long)o->k, (long long)k2, (long long)o->n);
}

/* An output that exists: refused before any work, not after. */
static void check_output(const mm_opts_t *o)
{
    int exists = 0;
    if (o->out.file && !o->force && hpc_rank() == 0) exists = access(o->out.file, F_OK) == 0;
    MPI_Bcast(&exists, 1, MPI_INT, 0, hpc_comm_world());
    if (exists) hpc_app_exit(HPC_EXIT_DATA, "%s exists (use --force to overwrite it)", o->out.file);
}

/* Every node: what its largest rank will allocate, times its ranks,
 * against what the node has available - before any block exists and
 * before any output is created, not as an OOM kill halfway.  --baseline
 * adds the whole product on rank 0. */
static void check_memory(const mm_opts_t *o, const mm_dist_t *d)
{
    double mine = mm_rank_bytes(d, o), most = 0;
    if (o->baseline && hpc_rank() == 0)
        mine += ((double)o->m * o->k + (double)o->k * o->n + (double)o->m * o->n) * (double)mm_esize(o->dtype);
    MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, hpc_comm_node());
    char what[256];
    snprintf(what, sizeof what, "C (%lld x %lld) = A B (inner %lld, %s) on a %dx%d grid", (long long)o->m,
             (long long)o->n, (long long)o->k, o->dtype == MM_F32 ? "float32" : "float64", d->pr, d->pc);
    hpc_app_need_memory(most, what);
}

static void *alloc_block(int64_t rows, int64_t cols, size_t es)
{
    return malloc((size_t)(rows * cols + 1) * es);
}

/* --device cuda: a GPU on every rank, one per rank unless --share-gpu
 * (ranks on one device compete for it, and NCCL refuses them).  Ranks
 * share a GPU when their PCI bus ids match on one node: the device index
 * says nothing (under Slurm's --gpus-per-task=1 every task's GPU is 0). */
static const mm_ops_t *gpu_ops(const mm_opts_t *o)
{
    enum { ID = 64 };
    const mm_ops_t *ops = mm_gpu_ops();
    int dev = hpc_gpu(), n = hpc_local_size(), shared = -1;
    char me[ID] = "", *all = malloc((size_t)n * ID);
    if (!all) hpc_app_fatal(HPC_EXIT_DATA, "out of memory");
    if (dev >= 0) snprintf(me, sizeof me, "%s", hpc_gpu_pci_bus_id());
    MPI_Allgather(me, ID, MPI_CHAR, all, ID, MPI_CHAR, hpc_comm_node());
    for (int i = 0; i < n && shared < 0; i++)
        if (i != hpc_local_rank() && *me && !strcmp(all + (size_t)i * ID, me)) shared = i;
    free(all);
    if (!ops) hpc_app_exit(HPC_EXIT_DATA, "--device cuda: this hpc-matmul was built without CUDA");
    hpc_app_agree(dev < 0 ? HPC_EXIT_DATA : 0, "--device cuda: no GPU on rank %d (%s)", hpc_rank(), hpc_hostname());
    hpc_app_agree(shared >= 0 && !o->share_gpu ? HPC_EXIT_DATA : 0, "--device cuda: rank %d shares GPU %s with "
                  "another rank on %s; run one rank per GPU, or pass --share-gpu", hpc_rank(), me, hpc_hostname());
    return ops;
}

/* Test hook: HPC_MATMUL_TEST_CORRUPT=I,J adds 1 to C(I, J) after the
 * multiply, I,J,V sets it to V (strtod: "0", "nan", "-inf"), so the tests
 * can see --verify catch a wrong element. */
static void test_corrupt(const mm_dist_t *d, int dtype, void *c)
{
    const char *s = getenv("HPC_MATMUL_TEST_CORRUPT");
    if (!s || !*s) return;
    /* I,J by the strict parser; ",V" after them by strtod (nan, -inf) */
    const char *third = strchr(s, ',');
    third = third ? strchr(third + 1, ',') : NULL;
    char ijs[64], *end = NULL;
    snprintf(ijs, sizeof ijs, "%.*s", third ? (int)(third - s) : (int)strlen(s), s);
    int64_t ij[2];
    double v = 1.0;
    int set = third != NULL;
    if (set) v = strtod(third + 1, &end);
    if (hpc_parse_int64s(ijs, ",", ij, 2) < 0 || (set && (end == third + 1 || *end || isspace((unsigned char)third[1])))) {
        char esc[128];
        hpc_app_exit(HPC_EXIT_USAGE, "HPC_MATMUL_TEST_CORRUPT='%s': expected I,J or I,J,VALUE",
                     hpc_escape(s, esc, sizeof esc));
    }
    int64_t i = ij[0], j = ij[1];
    if (i < d->am0 || i >= d->am0 + d->amr || j < d->bn0 || j >= d->bn0 + d->bnc) return;
    int64_t at = (i - d->am0) * d->bnc + (j - d->bn0);
    if (dtype == MM_F32) ((float *)c)[at] = (float)(set ? v : ((float *)c)[at] + v);
    else ((double *)c)[at] = set ? v : ((double *)c)[at] + v;
}

/* Inputs from files that hold NaN or infinity: refused, naming the first
 * (--gen draws from [-1, 1): never), unless --allow-nonfinite */
static void check_finite(const mm_opts_t *o, const mm_dist_t *d, const void *a, const void *b)
{
    if (o->gen || o->allow_nonfinite) return;
    for (int which = 0; which < 2; which++) {
        int64_t i, j;
        double v = 0;
        const mm_path_t *p = which ? &o->b : &o->a;
        mm_first_nonfinite(d, o->dtype, which ? b : a, which, &i, &j, &v);
        if (i >= 0)
            hpc_app_exit(HPC_EXIT_DATA, "%s (%s:%s) holds %s at row %lld, column %lld (the first): refused "
                         "(--allow-nonfinite multiplies it, and --verify then checks NaN and infinity exactly)",
                         which ? "B" : "A", p->file, p->dset, isnan(v) ? "NaN" : v > 0 ? "+inf" : "-inf",
                         (long long)i, (long long)j);
    }
}

/* --baseline: rank 0 multiplies matrices of the whole size with the
 * threads of all ranks while the others wait without spinning. */
static double baseline(const mm_opts_t *o)
{
    double rate = 0;
    int threads = hpc_threads() * hpc_size();
    if (hpc_rank() == 0) {
        size_t es = mm_esize(o->dtype);
        char *a = calloc((size_t)(o->m * o->k), es), *b = calloc((size_t)(o->k * o->n), es);
        char *c = calloc((size_t)(o->m * o->n), es);
        if (a && b && c) {
            for (int64_t i = 0; i < o->m * o->k; i++) if (o->dtype == MM_F32) ((float *)a)[i] = 0.5f; else ((double *)a)[i] = 0.5;
            for (int64_t i = 0; i < o->k * o->n; i++) if (o->dtype == MM_F32) ((float *)b)[i] = 0.25f; else ((double *)b)[i] = 0.25;
            openblas_set_num_threads(threads);
            double t = hpc_wtime();
            if (o->dtype == MM_F32)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)o->m, (int)o->n, (int)o->k, 1.0f,
                            (float *)a, (int)o->k, (float *)b, (int)o->n, 0.0f, (float *)c, (int)o->n);
            else
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)o->m, (int)o->n, (int)o->k, 1.0,
                            (double *)a, (int)o->k, (double *)b, (int)o->n, 0.0, (double *)c, (int)o->n);
            rate = 2.0 * o->m * o->n * o->k / (hpc_wtime() - t) / 1e9;
            openblas_set_num_threads(hpc_threads());
        }
        free(a);
        free(b);
        free(c);
    }
    MPI_Request r;
    int done = 0;
    MPI_Ibarrier(hpc_comm_world(), &r);
    while (!done) {
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        struct timespec ts = {0, 2000000};
        if (!done) nanosleep(&ts, NULL);
    }
    MPI_Bcast(&rate, 1, MPI_DOUBLE, 0, hpc_comm_world());
    return rate;
}

static void report(const mm_opts_t *o, const mm_dist_t *d, const mm_stats_t *st, const mm_check_t *chk,
                   double base)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double rss = (double)ru.ru_maxrss * 1024, rss_max = 0, wait = st->wait / (st->seconds > 0 ? st->seconds : 1);
    double wait_max = 0;
    MPI_Reduce(&rss, &rss_max, 1, MPI_DOUBLE, MPI_MAX, 0, hpc_comm_world());
    MPI_Reduce(&wait, &wait_max, 1, MPI_DOUBLE, MPI_MAX, 0, hpc_comm_world());
    double gf = 2.0 * o->m * o->n * o->k / (st->seconds > 0 ? st->seconds : 1e-30) / 1e9;
    char mem[32], eff[96] = "", ver[160] = "", dev[80];
    /* the CPU kernel a figure was made with: never compared without it */
    snprintf(dev, sizeof dev, "%s%s%s", o->device == MM_CUDA ? "cuda" : "cpu",
             o->device != MM_CUDA && *hpc_blas_kernel() ? ", BLAS " : "", o->device == MM_CUDA ? "" : hpc_blas_kernel());
    hpc_format_bytes(rss_max, mem, sizeof mem);
    if (base > 0) snprintf(eff, sizeof eff, ", %.2fx one process's GEMM (%.1f GFLOP/s, %d threads)", gf / base,
                           base, hpc_threads() * hpc_size());
    if (o->verify) snprintf(ver, sizeof ver, ", verify %s (residual %.3g of the bound)",
                            chk->pass ? "passed" : "FAILED", chk->residual);
    hpc_app_summary("C (%lld x %lld) = A (%lld x %lld) B, %s on a %dx%d grid (nb %lld, %s broadcast, %s), %.3f s, "
                    "%.2f GFLOP/s, waiting for panels %.1f%% (worst rank), peak memory %s per rank%s%s",
                    (long long)o->m, (long long)o->n, (long long)o->m, (long long)o->k,
                    o->dtype == MM_F32 ? "float32" : "float64",
                    d->pr, d->pc, (long long)o->nb, st->alg == HPC_ALG_COUNT ? "no" : hpc_alg_name(st->alg),
                    dev, st->seconds, gf, 100 * wait_max, mem, eff, ver);
}

int main(int argc, char **argv)
{
    mm_opts_t o;
    hpc_app_start(&mm_app, &argc, &argv);
    if (mm_opts_finish(&o) < 0) hpc_app_exit(HPC_EXIT_USAGE, "%s", hpc_last_cause());
    shapes(&o);
    if (o.nb == 0) o.nb = o.k < 256 ? o.k : 256;
    check_output(&o);
    mm_dist_t d;
    int rc = mm_dist_init(&d, &o);
    if (rc < 0) hpc_app_exit(HPC_EXIT_USAGE, "--grid: %s", hpc_last_cause());
    check_memory(&o, &d);

    size_t es = mm_esize(o.dtype);
    void *a = alloc_block(d.amr, d.akc, es), *b = alloc_block(d.bkr, d.bnc, es), *c = alloc_block(d.amr, d.bnc, es);
    hpc_app_agree(a && b && c ? 0 : HPC_EXIT_DATA, "out of memory for this rank's blocks (%lld x %lld, %lld x %lld, "
                  "%lld x %lld elements)", (long long)d.amr, (long long)d.akc, (long long)d.bkr,
                  (long long)d.bnc, (long long)d.amr, (long long)d.bnc);
    if (o.gen) mm_gen_blocks(&d, o.seed, o.dtype, a, b);
    else hpc_app_agree_rc(mm_read_blocks(&o, &d, a, b), HPC_EXIT_DATA, "reading the inputs");
    check_finite(&o, &d, a, b);

    mm_stats_t st;
    const mm_ops_t *ops = o.device == MM_CUDA ? gpu_ops(&o) : &mm_cpu_ops;
    hpc_app_agree_rc(mm_summa(&d, &o, ops, a, b, c, &st), HPC_EXIT_DATA, NULL);
    if (st.stopped)
        hpc_app_exit(HPC_EXIT_STOPPED, "%s after panel %lld of %lld; nothing written (hpc-matmul keeps no "
                     "partial product: run it again)", hpc_app_stop_why(), (long long)st.panels,
                     (long long)st.panels_total);
    test_corrupt(&d, o.dtype, c);

    mm_check_t chk = {0, 0, 1, 0, 0, 0, -1, -1, 0, 0};
    if (o.verify) HPC_CHECK(mm_verify(&d, o.dtype, a, b, c, o.seed, &chk));
    const char *alg = st.alg == HPC_ALG_COUNT ? "none" : hpc_alg_name(st.alg);
    if (o.out.file && chk.pass)
        hpc_app_agree_rc(mm_write(&o, &d, a, b, c, argc, argv, st.seconds, alg, o.verify ? &chk : NULL),
                         HPC_EXIT_DATA, "writing the product");
    double base = o.baseline ? baseline(&o) : 0;
    report(&o, &d, &st, &chk, base);
    free(a);
    free(b);
    free(c);
    mm_dist_free(&d);
    if (!chk.pass && chk.bad_i >= 0)
        hpc_app_exit(HPC_EXIT_DATA, "--verify failed: C(%lld, %lld) is %g where A B gives %g (a row or column "
                     "that NaN or infinity reaches, compared exactly); C was not written", (long long)chk.bad_i,
                     (long long)chk.bad_j, chk.bad_got, chk.bad_want);
    if (!chk.pass) hpc_app_exit(HPC_EXIT_DATA, "--verify failed: |A(Bx) - Cx| is %.3g times its rounding bound "
                                "(largest difference %.3g); C was not written", chk.residual, chk.worst_abs);
    return hpc_app_finish();
}
