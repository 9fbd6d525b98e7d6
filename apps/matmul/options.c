/* options.c - hpc-matmul's option table and the checks across options. */
#include "config.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "matmul.h"

static mm_opts_t a = {.seed = 0, .nb = 0, .bcast_alg = HPC_ALG_AUTO};
static int64_t dims[3];

/* FILE:/dataset -> a path */
static int take_path(const char *v, void *dest)
{
    mm_path_t *p = dest;
    const char *colon = strrchr(v, ':');
    if (!colon || colon == v || colon[1] != '/' || !colon[2]) return HPC_ERR(HPC_ERR_ARG, "expected FILE.h5:/dataset");
    free(p->file);
    free(p->dset);
    p->file = strndup(v, (size_t)(colon - v));
    p->dset = strdup(colon + 1);
    return 0;
}

/* "A,B[,C]" or "AxB": positive integers up to INT_MAX (BLAS dimensions) */
static int take_ints(const char *v, const char *seps, int64_t *out, int n)
{
    const char *p = v;
    for (int i = 0; i < n; i++) {
        size_t w = strcspn(p, seps);
        char *one = strndup(p, w);
        int ok = one && hpc_parse_int64(one, &out[i]) == 0 && out[i] >= 1 && out[i] <= INT_MAX;
        free(one);
        hpc_error_clear();
        if (!ok || (i + 1 < n && !p[w]) || (i + 1 == n && p[w]))
            return HPC_ERR(HPC_ERR_ARG, "expected %d integers from 1 to %d separated by '%c'", n, INT_MAX, seps[0]);
        p += w + 1;
    }
    return 0;
}

static int take_gen(const char *v, void *dest)
{
    (void)dest;
    a.gen = 1;
    return take_ints(v, ",", dims, 3);
}

static int take_grid(const char *v, void *dest)
{
    (void)dest;
    int64_t g[2];
    HPC_TRY(take_ints(v, "x", g, 2));
    a.prows = g[0];
    a.pcols = g[1];
    return 0;
}

static int take_alg(const char *v, void *dest)
{
    (void)dest;
    if (hpc_alg_parse(v, &a.bcast_alg) == 0 && hpc_coll_has_alg(HPC_COLL_BCAST, a.bcast_alg)) return 0;
    return HPC_ERR(HPC_ERR_ARG, "not a broadcast algorithm (auto, native, linear, tree, ring, "
                   "scatter_allgather, nccl)");
}

static const hpc_opt_t options[] = {
    HPC_SECTION("Inputs (one of):"),
    HPC_CALL("a", 0, &a.a, "FILE:/DSET", take_path, 0, "matrix A (M x K), a 2D float32 or float64 dataset"),
    HPC_CALL("b", 0, &a.b, "FILE:/DSET", take_path, 0, "matrix B (K x N)"),
    HPC_CALL("gen", 0, NULL, "M,N,K", take_gen, 0,
             "random A and B, uniform in [-1, 1) from the counter-based RNG keyed by (seed, "
             "matrix, row, column): the same matrices for any rank count and grid"),
    HPC_INT("seed", 0, &a.seed, "S", 0, INT64_MAX, 0, "seed of --gen (default 0)"),
    HPC_SECTION("Output:"),
    HPC_CALL("out", 'o', &a.out, "FILE:/DSET", take_path, 0,
             "write C there (written as FILE.partial, renamed when every rank is done); without "
             "--out the product is computed, reported and dropped"),
    HPC_FLAG("force", 0, &a.force, 0, "overwrite an existing FILE"),
    HPC_FLAG("save-inputs", 0, &a.save_inputs, 0, "with --gen: also write A and B beside C (as /A, /B of FILE)"),
    HPC_SECTION("Algorithm:"),
    HPC_CALL("grid", 0, NULL, "PRxPC", take_grid, 0,
             "process grid, PR x PC = ranks (default: the most nearly square, PR <= PC; 1 x P for a prime P)"),
    HPC_INT("nb", 0, &a.nb, "NB", 1, 1 << 20, 0, "panel width (default 256; smaller for small K)"),
    HPC_CALL("bcast-alg", 0, NULL, "NAME", take_alg, 0, "algorithm of the panel broadcasts (default auto)"),
    HPC_CHOICE("dtype", 0, &a.dtype, "float64|float32", 0, "element type of the product (default float64)"),
    HPC_CHOICE("device", 0, &a.device, "cpu|cuda", 0,
               "where to multiply: OpenBLAS on the CPU, or cuBLAS with blocks on the GPU (default cpu)"),
    HPC_FLAG("share-gpu", 0, &a.share_gpu, 0, "with --device cuda: allow several ranks on one GPU"),
    HPC_FLAG("allow-nonfinite", 0, &a.allow_nonfinite, 0,
             "multiply inputs that hold NaN or infinity (refused by default, naming the first); "
             "--verify then compares the rows and columns of C they reach exactly"),
    HPC_SECTION("Checks and report:"),
    HPC_FLAG("verify", 0, &a.verify, 0,
             "Freivalds' check: |A(Bx) - Cx| against a rigorous rounding bound for 3 random x "
             "(rows and columns that NaN or infinity reach: computed directly, compared exactly); "
             "exit 1 if it fails"),
    HPC_FLAG("baseline", 0, &a.baseline, 0,
             "also time one process's GEMM of the whole product with the threads of all ranks, "
             "for the efficiency figure (needs A, B and C in one rank's memory)"),
    HPC_OPTS_END};

const hpc_app_t mm_app = {
    .name = MATMUL_PROG,
    .usage = "hpc-matmul --gen M,N,K [OPTIONS]\n"
             "hpc-matmul --a FILE:/A --b FILE:/B --out FILE:/C [OPTIONS]\n"
             "hpc-mpiexec -n RANKS hpc-matmul ...",
    .about = "C = A B for matrices too big or too slow for one node: the blocks of A, B and C "
             "are spread over a 2D grid of ranks and multiplied with SUMMA - panels of A "
             "broadcast along grid rows and of B along grid columns with libhpc's nonblocking "
             "collectives, the next panel in flight while the local GEMM of this one runs "
             "(OpenBLAS, or cuBLAS).  Each rank reads and writes only its own blocks, so no "
             "rank ever holds a whole matrix.  Any M, N, K and any rank count.",
    .opts = options,
    .epilog = "Report: time, GFLOP/s (2 M N K / time), the grid and panel width, the\n"
              "broadcast algorithm, the share of the time spent waiting for panels, peak\n"
              "memory per rank, and with --baseline the efficiency against one process's\n"
              "GEMM.  Output attributes: shapes, grid, nb, dtype, the inputs, hpckit\n"
              "version, command line, wall time; with --verify its residual, bound,\n"
              "largest difference and the number of rows and columns checked exactly.\n"
              "The output's /row, /column (and /inner with --save-inputs) are HDF5\n"
              "dimension scales of C (and A, B): xarray and netCDF see named dimensions.\n"
              "An input of HDF5 virtual datasets (such as hpc-odegen --join's) is read as\n"
              "a plain one; one whose source files are missing is refused, naming them.\n"
              "\n"
              "Exit status: 0 success; 1 bad data or I/O (a missing file or dataset, a\n"
              "dataset that is not a 2D float matrix, an empty one, NaN or infinity in an\n"
              "input without --allow-nonfinite, inner dimensions that disagree, an\n"
              "existing output without --force, more memory than a node has available,\n"
              "--verify failed); 2 bad option or value, or --device cuda where a rank\n"
              "lacks a GPU, the CUDA module or cuBLAS (the line names what is missing); 75\n"
              "stopped by SIGUSR1, SIGTERM or Ctrl-C at a panel every rank agreed on, with\n"
              "nothing written (no partial product is kept: run it again); a second Ctrl-C\n"
              "aborts at once.\n"
              "\n"
              "Environment: HPC_PROGRESS=SECONDS: a progress line every SECONDS where\n"
              "neither stderr nor the launcher's is a terminal (default 60; 0: none).\n"
        "\nExamples:\n"
        "  # random 8192 x 8192 matrices, the product checked\n"
        "  hpc-mpiexec -n 4 hpc-matmul --gen 8192,8192,8192 --verify\n"
        "  # your own matrices (h5py writes them so)\n"
        "  hpc-mpiexec -n 6 hpc-matmul --a in.h5:/A --b in.h5:/B --out c.h5:/C\n"
        "  # cuBLAS, a GPU per rank\n"
        "  hpc-mpiexec -n 2 hpc-matmul --gen 4096,4096,4096 --device cuda\n",
    .guide = "matmul.md"};

size_t mm_esize(int dtype)
{
    return dtype == MM_F32 ? 4 : 8;
}

/* the same file, whether it exists yet or not */
static int same_file(const char *x, const char *y)
{
    struct stat sx, sy;
    if (stat(x, &sx) == 0 && stat(y, &sy) == 0) return sx.st_dev == sy.st_dev && sx.st_ino == sy.st_ino;
    return strcmp(x, y) == 0;
}

/* a name the output file uses itself (or a group above it) */
static int taken(const char *dset, int inputs)
{
    const char *names[5] = {"/row", "/column", "/inner", "/A", "/B"};
    for (int i = 0; i < (inputs ? 5 : 3); i++) {
        size_t l = strlen(names[i]);
        if (!strncmp(dset, names[i], l) && (dset[l] == '\0' || dset[l] == '/')) return 1;
    }
    return 0;
}

int mm_opts_finish(mm_opts_t *o)
{
    *o = a;
    if (o->gen && (o->a.file || o->b.file)) return HPC_ERR(HPC_ERR_ARG, "--gen and --a/--b exclude each other");
    if (!o->gen && !(o->a.file && o->b.file))
        return HPC_ERR(HPC_ERR_ARG, "give --a FILE:/A and --b FILE:/B, or --gen M,N,K (see --help)");
    if (o->save_inputs && !(o->gen && o->out.file))
        return HPC_ERR(HPC_ERR_ARG, "--save-inputs needs --gen and --out");
    if (o->out.file && ((o->a.file && same_file(o->out.file, o->a.file)) ||
                        (o->b.file && same_file(o->out.file, o->b.file))))
        return HPC_ERR(HPC_ERR_ARG, "--out names an input file: write the product to another file");
    if (o->out.file && taken(o->out.dset, o->save_inputs))
        return HPC_ERR(HPC_ERR_ARG, "--out FILE:/DSET: /row, /column and /inner (and /A, /B with --save-inputs) "
                                    "are the output's dimension scales and inputs: name C otherwise");
    if (o->share_gpu && o->device != MM_CUDA) return HPC_ERR(HPC_ERR_ARG, "--share-gpu needs --device cuda");
    if (o->gen) {
        o->m = dims[0];
        o->n = dims[1];
        o->k = dims[2];
    }
    return 0;
}
