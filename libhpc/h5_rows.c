/* h5_rows.c - reading and writing rows and 2D blocks of a dataset,
 * collectively or independently (independent where the file is open with
 * the serial driver), and rows at any list of positions (sieved reads).
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hpc_h5.h"
#include "internal.h"
#include "h5_internal.h"

/* A transfer property list for dset in mode (collective only where its
 * file is open through MPI-IO). */
static hid_t xfer_plist(hid_t dset, H5FD_mpio_xfer_t mode)
{
    if (mode == H5FD_MPIO_COLLECTIVE && h5_serial_file_of(dset)) mode = H5FD_MPIO_INDEPENDENT;
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (dxpl >= 0 && H5Pset_dxpl_mpio(dxpl, mode) < 0) {
        H5Pclose(dxpl);
        return H5I_INVALID_HID;
    }
    return dxpl;
}

/* Read or write a hyperslab: the first nsel dims from start/count, the
 * rest whole.  A rank with an empty selection still takes part. */
static int slab_io(hid_t dset, hid_t memtype, int nsel, const hsize_t *start0, const hsize_t *count0,
                   void *buf, int write, H5FD_mpio_xfer_t mode)
{
    hsize_t dims[8], start[8] = {0}, count[8];
    int nd;
    HPC_TRY(hpc_h5_dataset_shape(dset, &nd, dims));
    if (nd < nsel) return HPC_ERR(HPC_ERR_DATA, "dataset of rank %d, want >= %d", nd, nsel);
    memcpy(count, dims, sizeof(hsize_t) * nd);
    int empty = 0;
    for (int i = 0; i < nsel; i++) {
        if (start0[i] + count0[i] > dims[i])
            return HPC_ERR(HPC_ERR_ARG, "dim %d: %llu..%llu beyond %llu", i,
                           (unsigned long long)start0[i], (unsigned long long)(start0[i] + count0[i]),
                           (unsigned long long)dims[i]);
        start[i] = start0[i];
        count[i] = count0[i];
        empty |= count0[i] == 0;
    }
    hid_t fspace = H5Dget_space(dset);
    hid_t mspace = H5Screate_simple(nd, count, NULL);
    hid_t dxpl = xfer_plist(dset, mode);
    herr_t e = fspace < 0 || mspace < 0 || dxpl < 0 ? -1 : 0;
    if (e >= 0 && empty) {
        e = H5Sselect_none(fspace);
        if (e >= 0) e = H5Sselect_none(mspace);
    } else if (e >= 0) {
        e = H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
    }
    if (e >= 0)
        e = write ? H5Dwrite(dset, memtype, mspace, fspace, dxpl, buf)
                  : H5Dread(dset, memtype, mspace, fspace, dxpl, buf);
    int rc = e < 0 ? hpc_error_hdf5(__FILE__, __LINE__, write ? "H5Dwrite" : "H5Dread") : 0;
    if (dxpl >= 0) H5Pclose(dxpl);
    if (mspace >= 0) H5Sclose(mspace);
    if (fspace >= 0) H5Sclose(fspace);
    return rc;
}

static int rows_io(hid_t d, hid_t t, hsize_t r0, hsize_t n, void *buf, int write, H5FD_mpio_xfer_t mode)
{
    QUIET;
    HPC_TRY(slab_io(d, t, 1, &r0, &n, buf, write, mode));
    return 0;
}

int hpc_h5_write_rows(hid_t d, hid_t t, hsize_t r0, hsize_t n, const void *buf)
{
    return rows_io(d, t, r0, n, (void *)buf, 1, H5FD_MPIO_COLLECTIVE);
}

int hpc_h5_read_rows(hid_t d, hid_t t, hsize_t r0, hsize_t n, void *buf)
{
    return rows_io(d, t, r0, n, buf, 0, H5FD_MPIO_COLLECTIVE);
}

int hpc_h5_write_rows_indep(hid_t d, hid_t t, hsize_t r0, hsize_t n, const void *buf)
{
    return rows_io(d, t, r0, n, (void *)buf, 1, H5FD_MPIO_INDEPENDENT);
}

int hpc_h5_read_rows_indep(hid_t d, hid_t t, hsize_t r0, hsize_t n, void *buf)
{
    return rows_io(d, t, r0, n, buf, 0, H5FD_MPIO_INDEPENDENT);
}

/* ---- rows at a list of positions ----
 *
 * HDF5 1.10 builds a union of hyperslabs in time quadratic in the number
 * of blocks (16,000 random rows: 0.3 s of selection for 27 ms of reading)
 * and reads point selections no faster, so the rows are read in one of
 * two ways: where they are dense (their span of dim-0 rows is at most
 * AT_SIEVE times the bytes asked for), the span itself in slabs of at most
 * AT_SLAB bytes, picking the rows out (data sieving); elsewhere unions of
 * at most AT_BATCH blocks per read, where the union is still cheap
 * (1.5 us a row, measured). */
#define AT_SIEVE 16
#define AT_SLAB (8u << 20)
#define AT_BATCH 128

/* qsort's comparison sees the tuples through these (one thread reads) */
static _Thread_local const hsize_t *at_tuples;
static _Thread_local int at_nsel;

static int at_cmp(const void *a, const void *b)
{
    const hsize_t *x = at_tuples + *(const size_t *)a * at_nsel;
    const hsize_t *y = at_tuples + *(const size_t *)b * at_nsel;
    for (int i = 0; i < at_nsel; i++)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
}

/* 1 if tuple b is tuple a's next neighbour along the last selected dim */
static int at_next(const hsize_t *a, const hsize_t *b, int nsel)
{
    for (int i = 0; i < nsel - 1; i++)
        if (a[i] != b[i]) return 0;
    return b[nsel - 1] == a[nsel - 1] + 1;
}

/* A run of neighbouring distinct rows: its first tuple, its length, and
 * where it goes in the buffer of distinct rows. */
typedef struct {
    const hsize_t *first;
    hsize_t len, row;
} at_run_t;

/* Distinct rows of the sorted order[], as runs; uniq[j] = the distinct
 * row of tuple j.  Returns the number of runs; *rows the distinct rows. */
static size_t at_runs(int nsel, size_t n, const hsize_t *at, const size_t *order, size_t *uniq,
                      at_run_t *runs, hsize_t *rows)
{
    size_t nr = 0;
    hsize_t row = 0;
    for (size_t k = 0; k < n;) {
        const hsize_t *last = at + order[k] * nsel;
        runs[nr] = (at_run_t){last, 1, row};
        uniq[order[k]] = (size_t)row;
        size_t e = k + 1;
        for (; e < n; e++) {
            const hsize_t *t = at + order[e] * nsel;
            if (at_cmp(&order[e], &order[e - 1]) == 0) {   /* a repeat */
                uniq[order[e]] = (size_t)(row + runs[nr].len - 1);
                continue;
            }
            if (!at_next(last, t, nsel)) break;
            uniq[order[e]] = (size_t)(row + runs[nr].len++);
            last = t;
        }
        row += runs[nr++].len;
        k = e;
    }
    *rows = row;
    return nr;
}

typedef struct {
    hid_t dset, memtype, dxpl;
    int nd, nsel;
    hsize_t dims[8];
    size_t rest, es;           /* elements per row, bytes per element */
} at_io_t;

/* Runs [r0, r1) with one union each, into tmp at their rows. */
static int at_read_exact(const at_io_t *io, const at_run_t *runs, size_t r0, size_t r1, char *tmp)
{
    hsize_t start[8] = {0}, count[8], nrows = 0;
    hid_t fs = H5Dget_space(io->dset);
    herr_t e = fs < 0 ? -1 : H5Sselect_none(fs);
    for (size_t r = r0; e >= 0 && r < r1; r++) {
        for (int i = 0; i < io->nd; i++) {
            start[i] = i < io->nsel ? runs[r].first[i] : 0;
            count[i] = i < io->nsel - 1 ? 1 : i == io->nsel - 1 ? runs[r].len : io->dims[i];
        }
        e = H5Sselect_hyperslab(fs, H5S_SELECT_OR, start, NULL, count, NULL);
        nrows += runs[r].len;
    }
    hsize_t melems = nrows * io->rest;
    hid_t ms = e < 0 ? H5I_INVALID_HID : H5Screate_simple(1, &melems, NULL);
    if (ms < 0 || H5Dread(io->dset, io->memtype, ms, fs, io->dxpl, tmp + runs[r0].row * io->rest * io->es) < 0)
        e = -1;
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    return e < 0 ? hpc_error_hdf5(__FILE__, __LINE__, "H5Dread") : 0;
}

/* Row index of tuple t among the rows of dim-0 index t[0] */
static hsize_t at_inner(const at_io_t *io, const hsize_t *t)
{
    hsize_t l = 0;
    for (int i = 1; i < io->nsel; i++) l = l * io->dims[i] + t[i];
    return l;
}

/* The dim-0 indices a run covers: [first[0], at_end0) (with nsel 1 a
 * run is len dim-0 rows; otherwise it lies within one) */
static hsize_t at_end0(const at_io_t *io, const at_run_t *r)
{
    return r->first[0] + (io->nsel == 1 ? r->len : 1);
}

/* Copy the part of run r inside the slab of dim-0 rows [lo, hi). */
static void at_copy(const at_io_t *io, const at_run_t *r, hsize_t lo, hsize_t hi, size_t per0,
                    const char *slab, char *tmp)
{
    size_t rb = io->rest * io->es;
    if (io->nsel > 1) {
        size_t off = ((r->first[0] - lo) * per0 + at_inner(io, r->first)) * rb;
        memcpy(tmp + r->row * rb, slab + off, r->len * rb);
        return;
    }
    hsize_t a = r->first[0] > lo ? r->first[0] : lo, b = at_end0(io, r) < hi ? at_end0(io, r) : hi;
    memcpy(tmp + (r->row + (a - r->first[0])) * rb, slab + (a - lo) * rb, (b - a) * rb);
}

/* Dense runs: read their span of dim-0 rows in slabs, copy the runs out. */
static int at_read_sieve(const at_io_t *io, const at_run_t *runs, size_t nr, char *tmp)
{
    size_t row_bytes = io->rest * io->es, per0 = 1;   /* rows per dim-0 index */
    for (int i = 1; i < io->nsel; i++) per0 *= io->dims[i];
    hsize_t step = AT_SLAB / (per0 * row_bytes) ? AT_SLAB / (per0 * row_bytes) : 1;
    hsize_t end = at_end0(io, &runs[nr - 1]);
    char *slab = malloc(step * per0 * row_bytes);
    if (!slab) return HPC_ERR(HPC_ERR_NOMEM, "a sieve slab of %zu bytes", (size_t)(step * per0 * row_bytes));
    int rc = 0;
    hsize_t pos = 0;   /* dim-0 rows below pos are read */
    for (size_t r = 0; r < nr && !rc;) {
        hsize_t lo = runs[r].first[0] > pos ? runs[r].first[0] : pos;
        hsize_t hi = lo + step < end ? lo + step : end;
        rc = rows_io(io->dset, io->memtype, lo, hi - lo, slab, 0, H5FD_MPIO_INDEPENDENT);
        for (; !rc && r < nr && runs[r].first[0] < hi; r++) {
            at_copy(io, &runs[r], lo, hi, per0, slab, tmp);
            if (at_end0(io, &runs[r]) > hi) break;   /* it goes on in the next slab */
        }
        pos = hi;
    }
    free(slab);
    return rc;
}

static int at_check(int nd, const hsize_t *dims, int nsel, size_t n, const hsize_t *at)
{
    if (nsel < 1 || nsel > nd) return HPC_ERR(HPC_ERR_ARG, "%d index dims of a rank-%d dataset", nsel, nd);
    for (size_t j = 0; j < n; j++)
        for (int i = 0; i < nsel; i++)
            if (at[j * nsel + i] >= dims[i])
                return HPC_ERR(HPC_ERR_ARG, "row %zu: index %llu of dim %d beyond %llu", j,
                               (unsigned long long)at[j * nsel + i], i, (unsigned long long)dims[i]);
    return 0;
}

/* Sieve or exact, into tmp (the distinct rows in sorted order). */
static int at_read(const at_io_t *io, const at_run_t *runs, size_t nr, hsize_t rows, char *tmp)
{
    double per0 = 1;
    for (int i = 1; i < io->nsel; i++) per0 *= (double)io->dims[i];
    double span = nr ? (double)(at_end0(io, &runs[nr - 1]) - runs[0].first[0]) * per0 : 0;
    if (nr && span <= AT_SIEVE * (double)rows) return at_read_sieve(io, runs, nr, tmp);
    for (size_t r = 0; r < nr; r += AT_BATCH)
        HPC_TRY(at_read_exact(io, runs, r, r + AT_BATCH < nr ? r + AT_BATCH : nr, tmp));
    return 0;
}

int hpc_h5_read_rows_at(hid_t dset, hid_t memtype, int nsel, size_t n, const hsize_t *at, void *buf)
{
    QUIET;
    at_io_t io = {.dset = dset, .memtype = memtype, .nsel = nsel, .rest = 1, .es = H5Tget_size(memtype)};
    HPC_TRY(hpc_h5_dataset_shape(dset, &io.nd, io.dims));
    HPC_TRY(at_check(io.nd, io.dims, nsel, n, at));
    if (n == 0) return 0;
    for (int i = nsel; i < io.nd; i++) io.rest *= io.dims[i];
    size_t *order = malloc(n * sizeof *order), *uniq = malloc(n * sizeof *uniq);
    at_run_t *runs = malloc(n * sizeof *runs);
    char *tmp = malloc(n * io.rest * io.es + 1);
    io.dxpl = xfer_plist(dset, H5FD_MPIO_INDEPENDENT);
    int rc = 0;
    if (!order || !uniq || !runs || !tmp) {
        rc = HPC_ERR(HPC_ERR_NOMEM, "%zu rows of %zu bytes", n, io.rest * io.es);
    } else if (io.dxpl < 0) {
        rc = hpc_error_hdf5(__FILE__, __LINE__, "H5Pcreate (transfer)");
    } else {
        for (size_t j = 0; j < n; j++) order[j] = j;
        at_tuples = at;
        at_nsel = nsel;
        qsort(order, n, sizeof *order, at_cmp);
        hsize_t rows;
        size_t nr = at_runs(nsel, n, at, order, uniq, runs, &rows);
        rc = at_read(&io, runs, nr, rows, tmp);
        size_t rb = io.rest * io.es;
        for (size_t j = 0; !rc && j < n; j++) memcpy((char *)buf + j * rb, tmp + uniq[j] * rb, rb);
    }
    if (io.dxpl >= 0) H5Pclose(io.dxpl);
    free(order);
    free(uniq);
    free(runs);
    free(tmp);
    return rc;
}

static int block_io(hid_t d, hid_t t, hsize_t r0, hsize_t c0, hsize_t nr, hsize_t nc, void *buf,
                    int write)
{
    QUIET;
    const hsize_t start[2] = {r0, c0}, count[2] = {nr, nc};
    int nd;
    hsize_t dims[8];
    HPC_TRY(hpc_h5_dataset_shape(d, &nd, dims));
    if (nd != 2) return HPC_ERR(HPC_ERR_DATA, "dataset of rank %d, expected a 2D matrix", nd);
    HPC_TRY(slab_io(d, t, 2, start, count, buf, write, H5FD_MPIO_COLLECTIVE));
    return 0;
}

int hpc_h5_read_block(hid_t d, hid_t t, hsize_t r0, hsize_t c0, hsize_t nr, hsize_t nc, void *buf)
{
    return block_io(d, t, r0, c0, nr, nc, buf, 0);
}

int hpc_h5_write_block(hid_t d, hid_t t, hsize_t r0, hsize_t c0, hsize_t nr, hsize_t nc,
                       const void *buf)
{
    return block_io(d, t, r0, c0, nr, nc, (void *)buf, 1);
}
