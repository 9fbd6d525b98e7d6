/* verify.c - Freivalds' check of C = A B, distributed, with a bound.
 *
 * For random x: y = A (B x) and z = C x cost O(n^2), not O(n^3).  Each
 * rank multiplies its blocks by its part of the vector into a full-length
 * vector that is zero elsewhere; one allreduce sums the parts.
 *
 * The bound (Higham, Accuracy and Stability of Numerical Algorithms, 3.5):
 * with gamma_n(u) = n u / (1 - n u), the computed C satisfies
 * |C - A B| <= gamma_K(u_C) |A| |B| for any summation order (FMA or not),
 * u_C the unit roundoff of C's type; the check itself, in double (u), adds
 * gamma_N(u) |A||B||x| for B x, gamma_K(u) |A| |Bx| for A (B x) and
 * gamma_N(u) |C||x| for C x.  So, element by element,
 *   |A(Bx) - Cx| <= (gamma_K(u_C) + gamma_K(u)(1 + gamma_N(u)) + gamma_N(u)) w
 *                   + gamma_N(u) |C||x|,   w = |A| (|B| |x|),
 * and w itself is computed with relative error below gamma_{K+N}(u), which
 * one more factor covers.  A pass means every element is within it; one
 * element off by more than ~(K+N) u_C |A||B| (a wrong block, a lost
 * panel, a planted error) fails.
 *
 * NaN and infinity (inputs given with --allow-nonfinite): one in row i of
 * A makes all of row i of C non-finite, one in column j of B all of
 * column j, and would swallow every sum it enters.  The check skips those
 * rows and columns (x_j = 0 is not enough: 0 * NaN is NaN) and
 * verify_nf.c compares them exactly; everywhere else a non-finite
 * difference fails, as does a bound that overflowed: nothing passes
 * unchecked.
 */
#include "config.h"
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "matmul.h"

#define NVEC MM_VERIFY_VECTORS

static double get(int dtype, const void *p, int64_t i)
{
    return dtype == MM_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static double gam(double n, double u)
{
    return n * u / (1.0 - n * u);
}

/* out[r0 + i] = sum_j M[i][j] v[j] and outa[r0 + i] = sum_j |M[i][j]| va[j]
 * over the j with skip[j] == 0 (skip NULL: all) */
static void matvec(int dtype, const void *m, int64_t rows, int64_t cols, const double *v,
                   const double *va, const uint8_t *skip, double *out, double *outa)
{
    for (int64_t i = 0; i < rows; i++) {
        double s = 0, sa = 0;
        for (int64_t j = 0; j < cols; j++) {
            if (skip && skip[j]) continue;
            double e = get(dtype, m, i * cols + j);
            s += e * v[j];
            sa += fabs(e) * va[j];
        }
        out[i] = s;
        outa[i] = sa;
    }
}

double mm_verify_bytes(const mm_dist_t *d)
{
    double len = (double)(d->m > d->k ? d->m : d->k);
    return (2.0 * d->n + 4 * len + 4.0 * d->m) * sizeof(double) + mm_verify_nf_bytes(d);
}

/* One element of the residual: |A(Bx) - Cx|_i against its bound */
static void residual_at(mm_check_t *out, double diff, double bound)
{
    if (!isfinite(diff) || !isfinite(bound)) {   /* NaN or overflow: never a pass */
        out->residual = INFINITY;
        out->bound = bound;
        out->worst_abs = diff;
        return;
    }
    if (diff / bound > out->residual) {
        out->residual = diff / bound;
        out->bound = bound;
    }
    if (diff > out->worst_abs) out->worst_abs = diff;
}

int mm_verify(const mm_dist_t *d, int dtype, const void *a, const void *b, const void *c, int64_t seed,
              mm_check_t *out)
{
    int64_t len = d->m > d->k ? d->m : d->k;
    double *x = calloc((size_t)d->n, sizeof *x), *xa = calloc((size_t)d->n, sizeof *xa);
    double *y = calloc((size_t)len * 2, sizeof *y), *ys = calloc((size_t)len * 2, sizeof *ys);
    double *z = calloc((size_t)d->m * 2, sizeof *z), *zs = calloc((size_t)d->m * 2, sizeof *zs);
    uint8_t *rowbad = NULL, *colbad = NULL;
    int ok = x && xa && y && ys && z && zs && mm_nonfinite_masks(d, dtype, a, b, &rowbad, &colbad) == 0;
    hpc_app_agree(ok ? 0 : HPC_EXIT_DATA, "out of memory for the check's vectors");
    const double u = DBL_EPSILON / 2, uc = dtype == MM_F32 ? FLT_EPSILON / 2 : u;
    const double K = (double)d->k, N = (double)d->n;
    const double gw = (gam(K, uc) + gam(K, u) * (1 + gam(N, u)) + gam(N, u)) * (1 + gam(K + N, u));
    MPI_Comm w = hpc_comm_world();
    memset(out, 0, sizeof *out);
    out->bad_i = out->bad_j = -1;
    for (int v = 0; v < NVEC; v++) {
        for (int64_t j = 0; j < d->n; j++) {
            x[j] = colbad[j] ? 0 : mm_gen_value(seed + 7919 * (v + 1), 0, v, j, d->n);
            xa[j] = fabs(x[j]);
        }
        /* B x and |B||x| over K (rows of my B block) */
        memset(y, 0, sizeof *y * (size_t)len * 2);
        matvec(dtype, b, d->bkr, d->bnc, x + d->bn0, xa + d->bn0, colbad + d->bn0, y + d->bk0, y + len + d->bk0);
        MPI_Allreduce(y, ys, (int)(2 * len), MPI_DOUBLE, MPI_SUM, w);
        /* A (Bx), A|..| into y; C x, |C||x| into z */
        memset(y, 0, sizeof *y * (size_t)len * 2);
        memset(z, 0, sizeof *z * (size_t)d->m * 2);
        double *ab = y, *aba = y + len;
        matvec(dtype, a, d->amr, d->akc, ys + d->ak0, ys + len + d->ak0, NULL, ab + d->am0, aba + d->am0);
        matvec(dtype, c, d->amr, d->bnc, x + d->bn0, xa + d->bn0, colbad + d->bn0, z + d->am0, z + d->m + d->am0);
        MPI_Allreduce(ab, ys, (int)(2 * len), MPI_DOUBLE, MPI_SUM, w);
        MPI_Allreduce(z, zs, (int)(2 * d->m), MPI_DOUBLE, MPI_SUM, w);
        for (int64_t i = 0; i < d->m; i++)
            if (!rowbad[i])
                residual_at(out, fabs(ys[i] - zs[i]), gw * ys[len + i] + gam(N, u) * zs[d->m + i] + DBL_MIN);
    }
    out->pass = out->residual <= 1.0;
    /* the rows and columns Freivalds' check skipped, exactly */
    if (mm_verify_nonfinite(d, dtype, a, b, c, rowbad, colbad, out) < 0) ok = 0;
    hpc_app_agree(ok ? 0 : HPC_EXIT_DATA, "out of memory for the check of the non-finite elements");
    free(rowbad);
    free(colbad);
    free(x);
    free(xa);
    free(y);
    free(ys);
    free(z);
    free(zs);
    return 0;
}
