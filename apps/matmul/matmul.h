/* matmul.h - internal interfaces of hpc-matmul (one module per concern).
 *
 *   options.c   the option table, FILE:/dataset and MxN parsing, checks
 *   dist.c      who owns what: the grid, each rank's blocks of A, B, C
 *   io.c        reading and writing blocks (HDF5), generating them (--gen)
 *   summa.c     the SUMMA loop, double-buffered, over a table of block
 *               operations: the CPU's (OpenBLAS) or the GPU's
 *   gpu.cu      the GPU's operations (CUDA, cuBLAS; no MPI in there)
 *   verify.c    Freivalds' check with a rigorous rounding bound
 *   verify_nf.c NaN and infinity: refused, or checked exactly
 *   main.c      the run: wiring, the report
 *
 * The matrices: C (M x N) = A (M x K) B (K x N), row-major.  On a Pr x Pc
 * grid, rank (r, c) holds rows block r of M and columns block c of K of A,
 * rows block r of K and columns block c of N of B, and rows block r of M
 * and columns block c of N of C (blocks as even as possible,
 * hpc_block_range).  No rank ever holds a whole matrix.
 */
#ifndef MATMUL_H
#define MATMUL_H

#include <stdint.h>
#include "hpc_app_h5.h"
#include "hpc_coll.h"
#include "mm_ops.h"

#define MATMUL_PROG "hpc-matmul"

enum { MM_F64 = 0, MM_F32 = 1 };
enum { MM_CPU = 0, MM_CUDA = 1 };

typedef struct {
    char *file, *dset;       /* FILE:/dataset, split */
} mm_path_t;

typedef struct {
    mm_path_t a, b, out;     /* file NULL when not given */
    int gen;                 /* --gen M,N,K */
    int64_t m, n, k;         /* the shapes (from --gen or the inputs) */
    int64_t seed;
    int save_inputs, verify, baseline, force, dtype, device;
    int64_t prows, pcols;    /* --grid PRxPC, 0 = near square */
    int64_t nb;              /* panel width */
    hpc_alg_t bcast_alg;
    int share_gpu;           /* --share-gpu: allow ranks on one GPU */
    int allow_nonfinite;     /* --allow-nonfinite: multiply NaN and infinity */
} mm_opts_t;

extern const hpc_app_t mm_app;
/* After hpc_app_start: the checks across options, into o.  0 or
 * HPC_ERR_ARG with a one-line cause (hpc_last_cause). */
int mm_opts_finish(mm_opts_t *o);
size_t mm_esize(int dtype);

/* ---- dist.c ---- */
typedef struct {
    hpc_grid_t *grid;
    int pr, pc, r, c;         /* grid shape and my place */
    int64_t m, n, k;
    /* my blocks: A rows [am0, am0+amr) x cols [ak0, ak0+akc); B rows
     * [bk0, bk0+bkr) x cols [bn0, bn0+bnc); C rows = A rows x cols = B cols */
    int64_t am0, amr, ak0, akc;
    int64_t bk0, bkr, bn0, bnc;
} mm_dist_t;

int mm_dist_init(mm_dist_t *d, const mm_opts_t *o);
void mm_dist_free(mm_dist_t *d);
/* The panels of K: the next panel starting at k0 ends at the nb limit or
 * at the end of the A column block or B row block that holds k0, so each
 * panel has one owner along each grid dimension. */
int64_t mm_panel_end(const mm_dist_t *d, int64_t k0, int64_t nb);
int mm_a_owner(const mm_dist_t *d, int64_t k);   /* grid column holding A's column k */
int mm_b_owner(const mm_dist_t *d, int64_t k);   /* grid row holding B's row k */
/* Host memory this rank will allocate for its blocks, SUMMA's panels and
 * (with --verify) the check's vectors, in bytes: asked before any of it
 * is (hpc_app_need_memory). */
double mm_rank_bytes(const mm_dist_t *d, const mm_opts_t *o);

/* ---- verify.c's verdict (declared here: io.c records it) ---- */
typedef struct {
    double residual;          /* max_i |A(Bx) - Cx|_i / bound_i over the vectors */
    double worst_abs;         /* the largest |A(Bx) - Cx|_i */
    int pass;
    double bound;             /* bound_i of the element that gave the residual */
    /* rows of A and columns of B holding NaN or infinity: their rows and
     * columns of C compared exactly (verify_nf.c) */
    int64_t nf_rows, nf_cols;
    int64_t bad_i, bad_j;     /* the first element of those that differs (-1: none) */
    double bad_got, bad_want; /* its value in C, and in A B */
} mm_check_t;
#define MM_VERIFY_VECTORS 3

/* ---- io.c ---- */
/* Fill my blocks of A and B (element values keyed by (seed, matrix,
 * row, column): the same for any grid). */
void mm_gen_blocks(const mm_dist_t *d, int64_t seed, int dtype, void *a, void *b);
/* Element (i, j) of generated matrix `which` (0 = A, 1 = B) in [-1, 1). */
double mm_gen_value(int64_t seed, int which, int64_t i, int64_t j, int64_t cols);
/* Collective.  Shapes of the inputs (and their checks: 2D, float); an
 * HPC_ERR_* with a one-line cause where one is not. */
int mm_input_shapes(const mm_opts_t *o, int64_t *m, int64_t *k, int64_t *k2, int64_t *n);
/* Collective.  Read my blocks of A and B (converted to dtype). */
int mm_read_blocks(const mm_opts_t *o, const mm_dist_t *d, void *a, void *b);
/* Collective.  Write C (and with --save-inputs A and B) to --out, with
 * the dimension scales row, column (and inner) and, with --verify, the
 * check's figures (chk; NULL without). */
int mm_write(const mm_opts_t *o, const mm_dist_t *d, const void *a, const void *b, const void *c,
             int argc, char **argv, double wall, const char *alg, const mm_check_t *chk);

/* ---- summa.c ---- */
typedef struct {
    double seconds;           /* the whole multiply, max over ranks */
    double wait;              /* time this rank waited for panels */
    double gemm;              /* time in the local GEMMs */
    int64_t panels;           /* panels multiplied */
    int64_t panels_total;     /* of the whole product */
    int64_t k_done;           /* columns of K multiplied */
    int stopped;              /* a stop signal was agreed: C is partial */
    hpc_alg_t alg;            /* the broadcast algorithm that ran */
} mm_stats_t;

extern const mm_ops_t mm_cpu_ops;

/* SUMMA with ops on the blocks a, b (host) into c (host); stops early,
 * with st->stopped set, at a panel every rank agreed on after a signal. */
int mm_summa(const mm_dist_t *d, const mm_opts_t *o, const mm_ops_t *ops, const void *a, const void *b,
             void *c, mm_stats_t *st);

/* ---- verify.c ---- */

/* Collective.  Freivalds' check of C = A B (and, where A or B holds NaN
 * or infinity, the exact check of the rows and columns they reach). */
int mm_verify(const mm_dist_t *d, int dtype, const void *a, const void *b, const void *c,
              int64_t seed, mm_check_t *out);
/* Host memory the check allocates on a rank, in bytes */
double mm_verify_bytes(const mm_dist_t *d);

/* ---- verify_nf.c: NaN and infinity ---- */
/* Collective.  The first non-finite element of matrix which (0 = A, 1 =
 * B) in row-major order, the same on every rank: 0 and *row = -1 if there
 * is none; *value is that element. */
int mm_first_nonfinite(const mm_dist_t *d, int dtype, const void *blk, int which, int64_t *row,
                       int64_t *col, double *value);
/* Collective.  rowbad[m]: 1 where row i of A holds a non-finite value;
 * colbad[n]: 1 where column j of B does (malloc'd, the same on every
 * rank).  -1 on every rank if memory ran out. */
int mm_nonfinite_masks(const mm_dist_t *d, int dtype, const void *a, const void *b, uint8_t **rowbad,
                       uint8_t **colbad);
/* Collective.  C's rows rowbad and columns colbad against A B computed
 * directly: the same class everywhere (NaN, +Inf, -Inf).  Sets out's
 * nf_rows, nf_cols and, on a mismatch, pass = 0 and bad_*.  -1 on every
 * rank if memory ran out. */
int mm_verify_nonfinite(const mm_dist_t *d, int dtype, const void *a, const void *b, const void *c,
                        const uint8_t *rowbad, const uint8_t *colbad, mm_check_t *out);
double mm_verify_nf_bytes(const mm_dist_t *d);

#endif /* MATMUL_H */
