/* verify_nf.c - NaN and infinity in A or B: found, and checked exactly.
 *
 * By default hpc-matmul refuses inputs that hold them (main.c, with
 * mm_first_nonfinite: the matrix and the first bad index); with
 * --allow-nonfinite it multiplies them, and --verify must then say
 * whether C is right where they went.  A non-finite A(i,k) makes all of
 * row i of C non-finite (times a finite nonzero: an infinity; times 0 or
 * NaN: NaN), and a non-finite B(k,j) all of column j.  Freivalds' check
 * (verify.c) skips those rows and columns - a NaN would swallow its sums
 * and pass anything - and they are computed here directly: the rows of A
 * that hold non-finite values, gathered whole, times this rank's block of
 * B, the partial sums over K added along the grid column; the columns of
 * B likewise times the blocks of A, added along the grid row.  A sum of
 * IEEE values keeps its class in any order (NaN absorbs, +Inf + -Inf is
 * NaN, an infinity plus a finite value stays that infinity), so the
 * reference's class is exact, and C must match it: NaN where it is NaN,
 * the same infinity where it is infinite.  The cost is a dot product of K
 * for each element of those rows and columns, in batches of NF_BATCH.
 */
#include "config.h"
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "matmul.h"

#define NF_BATCH 64

static double get(int dtype, const void *p, int64_t i)
{
    return dtype == MM_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

/* Every rank's verdict on its allocations: 0 if all succeeded, else -1 */
static int all_ok(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, hpc_comm_world());
    return all ? 0 : -1;
}

/* The smallest of every rank's idx (INT64_MAX: none) and the value its
 * owner holds for it */
static int64_t first_of_all(int64_t idx, double *values, int nvalues)
{
    int64_t low = INT64_MAX;
    MPI_Allreduce(&idx, &low, 1, MPI_INT64_T, MPI_MIN, hpc_comm_world());
    if (low == INT64_MAX) return low;
    int me = idx == low ? hpc_rank() : hpc_size(), owner = 0;
    MPI_Allreduce(&me, &owner, 1, MPI_INT, MPI_MIN, hpc_comm_world());
    MPI_Bcast(values, nvalues, MPI_DOUBLE, owner, hpc_comm_world());
    return low;
}

int mm_first_nonfinite(const mm_dist_t *d, int dtype, const void *blk, int which, int64_t *row,
                       int64_t *col, double *value)
{
    int64_t r0 = which ? d->bk0 : d->am0, nr = which ? d->bkr : d->amr;
    int64_t c0 = which ? d->bn0 : d->ak0, nc = which ? d->bnc : d->akc, cols = which ? d->n : d->k;
    int64_t mine = INT64_MAX;
    double v = 0;
    for (int64_t i = 0; i < nr && mine == INT64_MAX; i++)
        for (int64_t j = 0; j < nc; j++)
            if (!isfinite(get(dtype, blk, i * nc + j))) {
                mine = (r0 + i) * cols + c0 + j;
                v = get(dtype, blk, i * nc + j);
                break;
            }
    int64_t low = first_of_all(mine, &v, 1);
    *row = *col = -1;
    if (low != INT64_MAX) {
        *row = low / cols;
        *col = low % cols;
        *value = v;
    }
    return 0;
}

int mm_nonfinite_masks(const mm_dist_t *d, int dtype, const void *a, const void *b, uint8_t **rowbad,
                       uint8_t **colbad)
{
    uint8_t *r = calloc((size_t)d->m, 1), *c = calloc((size_t)d->n, 1);
    if (all_ok(r && c) < 0) {
        free(r);
        free(c);
        return -1;
    }
    for (int64_t i = 0; i < d->amr; i++)
        for (int64_t j = 0; j < d->akc && !r[d->am0 + i]; j++)
            if (!isfinite(get(dtype, a, i * d->akc + j))) r[d->am0 + i] = 1;
    for (int64_t i = 0; i < d->bkr; i++)
        for (int64_t j = 0; j < d->bnc; j++)
            if (!isfinite(get(dtype, b, i * d->bnc + j))) c[d->bn0 + j] = 1;
    MPI_Allreduce(MPI_IN_PLACE, r, (int)d->m, MPI_UNSIGNED_CHAR, MPI_MAX, hpc_comm_world());
    MPI_Allreduce(MPI_IN_PLACE, c, (int)d->n, MPI_UNSIGNED_CHAR, MPI_MAX, hpc_comm_world());
    *rowbad = r;
    *colbad = c;
    return 0;
}

/* The class of a value: NaN, +Inf and -Inf are each their own; C must
 * have the reference's (a finite reference cannot occur in these rows and
 * columns: then C must be finite too) */
static int same_class(double got, double want)
{
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return isfinite(got);
}

typedef struct {
    const mm_dist_t *d;
    int dtype;
    const void *c;
    int64_t first;           /* my first mismatch, as i * n + j (INT64_MAX: none) */
    double got, want;
} cmp_t;

static void compare(cmp_t *x, int64_t i, int64_t j, double want)
{
    const mm_dist_t *d = x->d;
    double got = get(x->dtype, x->c, (i - d->am0) * d->bnc + (j - d->bn0));
    int64_t at = i * d->n + j;
    if (!same_class(got, want) && at < x->first) {
        x->first = at;
        x->got = got;
        x->want = want;
    }
}

/* Rows rows[0..t) of A B on my block of C: the rows gathered whole on
 * every rank (each element has one owner, the others add zeros), times my
 * rows of B, summed along my grid column */
static void rows_batch(cmp_t *x, const void *a, const void *b, const int64_t *rows, int t, double *arow,
                       double *part)
{
    const mm_dist_t *d = x->d;
    memset(arow, 0, sizeof *arow * (size_t)(t * d->k));
    for (int s = 0; s < t; s++)
        if (rows[s] >= d->am0 && rows[s] < d->am0 + d->amr)
            for (int64_t kk = 0; kk < d->akc; kk++)
                arow[s * d->k + d->ak0 + kk] = get(x->dtype, a, (rows[s] - d->am0) * d->akc + kk);
    MPI_Allreduce(MPI_IN_PLACE, arow, (int)(t * d->k), MPI_DOUBLE, MPI_SUM, hpc_comm_world());
    memset(part, 0, sizeof *part * (size_t)(t * d->bnc));
    for (int s = 0; s < t; s++)
        for (int64_t kk = 0; kk < d->bkr; kk++) {
            double av = arow[s * d->k + d->bk0 + kk];
            for (int64_t j = 0; j < d->bnc; j++) part[s * d->bnc + j] += av * get(x->dtype, b, kk * d->bnc + j);
        }
    MPI_Allreduce(MPI_IN_PLACE, part, (int)(t * d->bnc), MPI_DOUBLE, MPI_SUM, hpc_grid_col_comm(d->grid));
    for (int s = 0; s < t; s++)
        if (rows[s] >= d->am0 && rows[s] < d->am0 + d->amr)
            for (int64_t j = 0; j < d->bnc; j++) compare(x, rows[s], d->bn0 + j, part[s * d->bnc + j]);
}

/* Columns cols[0..t) of A B on my block: the columns of B gathered whole,
 * times my columns of A, summed along my grid row */
static void cols_batch(cmp_t *x, const void *a, const void *b, const int64_t *cols, int t, double *bcol,
                       double *part)
{
    const mm_dist_t *d = x->d;
    memset(bcol, 0, sizeof *bcol * (size_t)(t * d->k));
    for (int s = 0; s < t; s++)
        if (cols[s] >= d->bn0 && cols[s] < d->bn0 + d->bnc)
            for (int64_t kk = 0; kk < d->bkr; kk++)
                bcol[(d->bk0 + kk) * t + s] = get(x->dtype, b, kk * d->bnc + (cols[s] - d->bn0));
    MPI_Allreduce(MPI_IN_PLACE, bcol, (int)(t * d->k), MPI_DOUBLE, MPI_SUM, hpc_comm_world());
    memset(part, 0, sizeof *part * (size_t)(t * d->amr));
    for (int64_t i = 0; i < d->amr; i++)
        for (int64_t kk = 0; kk < d->akc; kk++) {
            double av = get(x->dtype, a, i * d->akc + kk);
            for (int s = 0; s < t; s++) part[i * t + s] += av * bcol[(d->ak0 + kk) * t + s];
        }
    MPI_Allreduce(MPI_IN_PLACE, part, (int)(t * d->amr), MPI_DOUBLE, MPI_SUM, hpc_grid_row_comm(d->grid));
    for (int s = 0; s < t; s++)
        if (cols[s] >= d->bn0 && cols[s] < d->bn0 + d->bnc)
            for (int64_t i = 0; i < d->amr; i++) compare(x, d->am0 + i, cols[s], part[i * t + s]);
}

/* Rows or columns per batch: NF_BATCH, fewer where a buffer would pass
 * INT_MAX elements (an MPI count); the same on every rank */
static int batch(const mm_dist_t *d)
{
    int64_t big = d->m > d->n ? d->m : d->n;
    if (d->k > big) big = d->k;
    int64_t b = INT_MAX / big;
    return b < 1 ? 1 : b > NF_BATCH ? NF_BATCH : (int)b;
}

double mm_verify_nf_bytes(const mm_dist_t *d)
{
    double b = batch(d);
    return (double)(d->m + d->n) * (1 + sizeof(int64_t)) + b * (2.0 * d->k + d->bnc + d->amr) * sizeof(double);
}

/* The indices i < n with mask[i], into list; how many */
static int64_t listed(const uint8_t *mask, int64_t n, int64_t *list)
{
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++)
        if (mask[i]) list[c++] = i;
    return c;
}

int mm_verify_nonfinite(const mm_dist_t *d, int dtype, const void *a, const void *b, const void *c,
                        const uint8_t *rowbad, const uint8_t *colbad, mm_check_t *out)
{
    int64_t *rows = malloc(sizeof *rows * (size_t)(d->m + 1)), *cols = malloc(sizeof *cols * (size_t)(d->n + 1));
    int nb = batch(d);
    double *full = malloc(sizeof *full * (size_t)(nb * d->k + 1));
    int64_t wide = d->bnc > d->amr ? d->bnc : d->amr;
    double *part = malloc(sizeof *part * (size_t)(nb * wide + 1));
    int rc = all_ok(rows && cols && full && part);
    cmp_t x = {d, dtype, c, INT64_MAX, 0, 0};
    if (rc == 0) {
        out->nf_rows = listed(rowbad, d->m, rows);
        out->nf_cols = listed(colbad, d->n, cols);
        for (int64_t s = 0; s < out->nf_rows; s += nb)
            rows_batch(&x, a, b, rows + s, (int)(out->nf_rows - s < nb ? out->nf_rows - s : nb), full, part);
        for (int64_t s = 0; s < out->nf_cols; s += nb)
            cols_batch(&x, a, b, cols + s, (int)(out->nf_cols - s < nb ? out->nf_cols - s : nb), full, part);
        double v[2] = {x.got, x.want};
        int64_t low = first_of_all(x.first, v, 2);
        if (low != INT64_MAX) {
            out->pass = 0;
            out->bad_i = low / d->n;
            out->bad_j = low % d->n;
            out->bad_got = v[0];
            out->bad_want = v[1];
        }
    }
    free(rows);
    free(cols);
    free(full);
    free(part);
    return rc;
}
