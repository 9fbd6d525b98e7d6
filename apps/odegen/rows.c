/* rows.c - the rows of finished chunks into the file, overlapped with the
 * solver.
 *
 * main.c solves one batch of chunks while the app kit's writer thread
 * (hpc_out_writer_start) writes the one before: put_batch() below runs in
 * that thread, turns each chunk into the file's types (float32 for
 * --dtype float32, int32 counts, int8 statuses) and writes its rows raw
 * (hpc_h5_raw_*: no HDF5 or MPI call, so the main thread keeps both),
 * giving the kit one checksum per chunk over exactly the bytes written.
 * The kit syncs the data every --sync-every seconds and flags the chunks
 * before as done; after a kill, --resume re-reads a chunk written but not
 * flagged (verify_chunk: the same checksum over the rows read back) and
 * keeps it where they match.
 *
 * A .partial made by an older hpc-odegen (/y chunked) cannot be written
 * raw: its chunks are written through HDF5 in the main thread, each synced
 * and flagged at once, as then.
 */
#include "config.h"
#include "hpc_app_h5.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "out_internal.h"

static hid_t float_type(const ode_opts_t *o)
{
    return o->dtype == ODE_F32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
}

int ode_rows_open(ode_out_t *w)
{
    const ode_opts_t *o = w->o;
    hid_t d[ODE_NROWS] = {w->x0, w->y, w->nsteps, w->nfev, w->nrej, w->status};
    hid_t mt[ODE_NROWS] = {float_type(o), float_type(o), H5T_NATIVE_INT32, H5T_NATIVE_INT32,
                           H5T_NATIVE_INT32, H5T_NATIVE_INT8};
    int ok = 1;
    for (int i = 0; ok && i < ODE_NROWS; i++) ok = hpc_h5_raw_open(hpc_out_file(w->out), d[i], mt[i], &w->raw[i]) == 0;
    for (int e = 0; ok && e < w->nev; e++)
        for (int k = 0; ok && k < ODE_EVROWS; k++) {
            hid_t t = k == 0 ? H5T_NATIVE_INT32 : k == 2 ? float_type(o) : H5T_NATIVE_DOUBLE;
            ok = hpc_h5_raw_open(hpc_out_file(w->out), w->evd[e][k], t, &w->evraw[e][k]) == 0;
        }
    hpc_error_clear();
    if (ok) {
        size_t rows = (size_t)o->chunk;
        w->ibuf = malloc(rows * sizeof *w->ibuf);
        w->sbuf = malloc(rows);
        if (o->dtype == ODE_F32) {
            w->xbuf = malloc(rows * o->dim * sizeof(float));
            w->ybuf = malloc(rows * o->nt * o->dim * sizeof(float));
        }
        if (w->nev) {
            w->evbuf = malloc(rows * o->max_events * o->dim * sizeof(double));
            w->evfbuf = malloc(rows * o->max_events * o->dim * sizeof(float));
        }
        ok = w->ibuf && w->sbuf && (o->dtype != ODE_F32 || (w->xbuf && w->ybuf)) &&
             (!w->nev || (w->evbuf && w->evfbuf));
        if (!ok) return HPC_ERR(HPC_ERR_NOMEM, "the writer's buffers for %lld trajectories", (long long)o->chunk);
        HPC_TRY(hpc_out_writer_start(w->out, o->sync_every));
        return 0;
    }
    ode_rows_close(w);   /* an older layout: written through HDF5 */
    return 0;
}

void ode_rows_close(ode_out_t *w)
{
    for (int i = 0; i < ODE_NROWS; i++) {
        hpc_h5_raw_close(w->raw[i]);
        w->raw[i] = NULL;
    }
    for (int e = 0; e < w->nev; e++)
        for (int k = 0; k < ODE_EVROWS; k++) {
            hpc_h5_raw_close(w->evraw[e][k]);
            w->evraw[e][k] = NULL;
        }
    free(w->evbuf);
    free(w->evfbuf);
    w->evbuf = NULL;
    w->evfbuf = NULL;
    free(w->xbuf);
    free(w->ybuf);
    free(w->ibuf);
    free(w->sbuf);
    w->xbuf = w->ybuf = NULL;
    w->ibuf = NULL;
    w->sbuf = NULL;
}

/* The checksum of a chunk's rows as they are in the file: x0, y, the three
 * counts, the statuses, chained. */
static uint64_t chunk_sum(const void *x0, const void *y, const int32_t *counts[3], const int8_t *st, size_t n,
                          const ode_opts_t *o)
{
    size_t es = o->dtype == ODE_F32 ? 4 : 8;
    uint64_t h = hpc_hash64(x0, n * o->dim * es, 0);
    h = hpc_hash64(y, n * o->nt * o->dim * es, h);
    for (int k = 0; k < 3; k++) h = hpc_hash64(counts[k], n * sizeof(int32_t), h);
    return hpc_hash64(st, n, h);
}

static const void *as_file_floats(const ode_opts_t *o, const double *v, size_t n, void *buf)
{
    if (o->dtype != ODE_F32) return v;
    float *f = buf;
    for (size_t i = 0; i < n; i++) f[i] = (float)v[i];
    return f;
}

/* the checksum of one event's rows, chained to h */
static uint64_t event_sum(const ode_opts_t *o, const int32_t *count, const double *t, const void *y, size_t n,
                          uint64_t h)
{
    size_t M = (size_t)o->max_events, es = o->dtype == ODE_F32 ? 4 : 8;
    h = hpc_hash64(count, n * sizeof(int32_t), h);
    h = hpc_hash64(t, n * M * sizeof(double), h);
    return hpc_hash64(y, n * M * (size_t)o->dim * es, h);
}

/* the events of a chunk (writer thread), the batch's rows from k0, as
 * events/NAME/count, t, y hold them: 0 or -errno; the checksum chained
 * in event_sum's order */
static int put_events(ode_out_t *w, const ode_evout_t *ev, int64_t k0, hsize_t r0, size_t n, uint64_t *h)
{
    const ode_opts_t *o = w->o;
    size_t M = (size_t)o->max_events, D = (size_t)o->dim, nev = (size_t)w->nev, es = o->dtype == ODE_F32 ? 4 : 8;
    int rc = 0;
    for (int e = 0; !rc && e < w->nev; e++) {
        size_t row = (size_t)k0 * nev + (size_t)e; /* trajectory k0's row of event e */
        for (size_t i = 0; i < n; i++) w->ibuf[i] = ev->count[row + i * nev];
        rc = hpc_h5_raw_write_rows(w->evraw[e][0], r0, n, w->ibuf);
        *h = hpc_hash64(w->ibuf, n * sizeof(int32_t), *h);
        for (size_t i = 0; i < n; i++) memcpy(w->evbuf + i * M, ev->t + (row + i * nev) * M, M * sizeof(double));
        if (!rc) rc = hpc_h5_raw_write_rows(w->evraw[e][1], r0, n, w->evbuf);
        *h = hpc_hash64(w->evbuf, n * M * sizeof(double), *h);
        for (size_t i = 0; i < n; i++)
            memcpy(w->evbuf + i * M * D, ev->y + (row + i * nev) * M * D, M * D * sizeof(double));
        const void *yf = as_file_floats(o, w->evbuf, n * M * D, w->evfbuf);
        if (!rc) rc = hpc_h5_raw_write_rows(w->evraw[e][2], r0, n, yf);
        *h = hpc_hash64(yf, n * M * D * es, *h);
    }
    return rc;
}

/* one chunk (writer thread): 0 or -errno */
static int put_chunk(ode_out_t *w, int64_t first, int64_t cnt, const double *x0, const double *y,
                     const ode_stat_t *st, const ode_evout_t *ev, int64_t k0, uint64_t *sum)
{
    const ode_opts_t *o = w->o;
    size_t n = (size_t)cnt;
    hsize_t r0 = (hsize_t)first, nr = (hsize_t)cnt;
    const void *xf = as_file_floats(o, x0, n * o->dim, w->xbuf);
    const void *yf = as_file_floats(o, y, n * o->nt * o->dim, w->ybuf);
    int rc = hpc_h5_raw_write_rows(w->raw[0], r0, nr, xf);
    if (!rc) rc = hpc_h5_raw_write_rows(w->raw[1], r0, nr, yf);
    uint64_t h = hpc_hash64(xf, n * o->dim * (o->dtype == ODE_F32 ? 4 : 8), 0);
    h = hpc_hash64(yf, n * o->nt * o->dim * (o->dtype == ODE_F32 ? 4 : 8), h);
    for (int k = 0; !rc && k < 3; k++) {
        for (size_t i = 0; i < n; i++)
            w->ibuf[i] = k == 0 ? st[i].nsteps : k == 1 ? st[i].nfev : st[i].nrejected;
        h = hpc_hash64(w->ibuf, n * sizeof(int32_t), h);
        rc = hpc_h5_raw_write_rows(w->raw[2 + k], r0, nr, w->ibuf);
    }
    for (size_t i = 0; i < n; i++) w->sbuf[i] = st[i].status;
    if (!rc) rc = hpc_h5_raw_write_rows(w->raw[5], r0, nr, w->sbuf);
    h = hpc_hash64(w->sbuf, n, h);
    if (!rc && w->nev) rc = put_events(w, ev, k0, r0, n, &h);
    *sum = h;
    return rc;
}

static int64_t chunk_rows(const ode_opts_t *o, int64_t c)
{
    int64_t first = c * o->chunk;
    return o->n - first < o->chunk ? o->n - first : o->chunk;
}

/* the kit's write function: every chunk of the batch (writer thread) */
static int put_batch(void *arg, uint64_t *sums)
{
    const ode_rows_t *b = arg;
    const ode_opts_t *o = b->w->o;
    int64_t off = 0;
    for (int k = 0; k < b->nchunks; k++) {
        int64_t cnt = chunk_rows(o, b->chunks[k]);
        int rc = put_chunk(b->w, b->chunks[k] * o->chunk, cnt, b->x0 + off * o->dim, b->y + off * o->nt * o->dim,
                           b->st + off, b->ev, off, &sums[k]);
        if (rc) return rc;
        off += cnt;
    }
    return 0;
}

/* An older layout: each chunk through HDF5, synced and flagged at once. */
static int write_chunk_h5(ode_out_t *w, int64_t chunk, int64_t first, int64_t n, const double *x0,
                          const double *y, const ode_stat_t *st)
{
    hsize_t r0 = (hsize_t)first, nr = (hsize_t)n;
    HPC_TRY(hpc_h5_write_rows_indep(w->x0, H5T_NATIVE_DOUBLE, r0, nr, x0));
    HPC_TRY(hpc_h5_write_rows_indep(w->y, H5T_NATIVE_DOUBLE, r0, nr, y));
    int32_t *v = malloc((size_t)n * sizeof *v);
    int8_t *s = malloc((size_t)n);
    int rc = v && s ? 0 : HPC_ERR(HPC_ERR_NOMEM, "chunk stats");
    hid_t d[3] = {w->nsteps, w->nfev, w->nrej};
    for (int k = 0; !rc && k < 3; k++) {
        for (int64_t i = 0; i < n; i++) v[i] = k == 0 ? st[i].nsteps : k == 1 ? st[i].nfev : st[i].nrejected;
        rc = hpc_h5_write_rows_indep(d[k], H5T_NATIVE_INT32, r0, nr, v);
    }
    for (int64_t i = 0; !rc && i < n; i++) s[i] = st[i].status;
    if (!rc) rc = hpc_h5_write_rows_indep(w->status, H5T_NATIVE_INT8, r0, nr, s);
    free(v);
    free(s);
    /* last: the chunk counts as done only once its data is on disk */
    if (!rc) rc = hpc_out_part_done(w->out, chunk);
    return rc;
}

int ode_out_put(ode_rows_t *b)
{
    ode_out_t *w = b->w;
    if (w->raw[0]) return hpc_out_submit(w->out, b->chunks, b->nchunks, put_batch, b);
    const ode_opts_t *o = w->o;
    int64_t off = 0;
    for (int k = 0; k < b->nchunks; k++) {
        int64_t cnt = chunk_rows(o, b->chunks[k]);
        HPC_TRY(write_chunk_h5(w, b->chunks[k], b->chunks[k] * o->chunk, cnt, b->x0 + off * o->dim,
                               b->y + off * o->nt * o->dim, b->st + off));
        off += cnt;
    }
    return 0;
}

int ode_out_drain(ode_out_t *w)
{
    return hpc_out_drain(w->out);
}

/* The kit's verify function: a chunk's rows read back, in the file's
 * types, and their checksum as put_chunk made it (main thread). */
static int verify_chunk(void *arg, int64_t chunk, uint64_t *sum)
{
    ode_out_t *w = arg;
    const ode_opts_t *o = w->o;
    size_t n = (size_t)chunk_rows(o, chunk), es = o->dtype == ODE_F32 ? 4 : 8;
    hsize_t r0 = (hsize_t)(chunk * o->chunk), nr = (hsize_t)n;
    void *x0 = malloc(n * o->dim * es), *y = malloc(n * o->nt * o->dim * es);
    int32_t *c = malloc(3 * n * sizeof *c);
    int8_t *st = malloc(n);
    int rc = x0 && y && c && st ? 0 : HPC_ERR(HPC_ERR_NOMEM, "checking chunk %lld", (long long)chunk);
    hid_t d[3] = {w->nsteps, w->nfev, w->nrej};
    if (!rc) rc = hpc_h5_read_rows_indep(w->x0, float_type(o), r0, nr, x0);
    if (!rc) rc = hpc_h5_read_rows_indep(w->y, float_type(o), r0, nr, y);
    for (int k = 0; !rc && k < 3; k++) rc = hpc_h5_read_rows_indep(d[k], H5T_NATIVE_INT32, r0, nr, c + k * n);
    if (!rc) rc = hpc_h5_read_rows_indep(w->status, H5T_NATIVE_INT8, r0, nr, st);
    if (!rc) *sum = chunk_sum(x0, y, (const int32_t *[3]){c, c + n, c + 2 * n}, st, n, o);
    free(x0);
    free(y);
    free(c);
    free(st);
    /* the events' rows, read back and hashed as put_events made them */
    size_t M = (size_t)o->max_events;
    int32_t *ec = w->nev ? malloc(n * sizeof *ec) : NULL;
    double *et = w->nev ? malloc(n * M * sizeof *et) : NULL;
    void *ey = w->nev ? malloc(n * M * o->dim * es) : NULL;
    if (w->nev && !rc && (!ec || !et || !ey)) rc = HPC_ERR(HPC_ERR_NOMEM, "checking chunk %lld", (long long)chunk);
    for (int e = 0; !rc && e < w->nev; e++) {
        rc = hpc_h5_read_rows_indep(w->evd[e][0], H5T_NATIVE_INT32, r0, nr, ec);
        if (!rc) rc = hpc_h5_read_rows_indep(w->evd[e][1], H5T_NATIVE_DOUBLE, r0, nr, et);
        if (!rc) rc = hpc_h5_read_rows_indep(w->evd[e][2], float_type(o), r0, nr, ey);
        if (!rc) *sum = event_sum(o, ec, et, ey, n, *sum);
    }
    free(ec);
    free(et);
    free(ey);
    return rc;
}

int ode_out_recover(ode_out_t *w, int64_t *recovered)
{
    return hpc_out_recover(w->out, verify_chunk, w, recovered);
}
