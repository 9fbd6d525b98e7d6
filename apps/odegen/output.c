/* output.c - the HDF5 file of hpc-odegen: layout, attributes, resume.
 *
 * Layout (N trajectories, NT times, D dims):
 *   /t [NT]  /x0 [N,D]  /y [N,NT,D] float64, /y chunked [chunk,NT,D]
 *   /stats/nsteps /stats/nfev /stats/nrejected [N] int32
 *   /stats/status [N] int8 (fill -128 = not computed yet)
 *   /stats/done [nchunks] uint8: 1 once a chunk's data is on disk
 *
 * Restart safety: every dataset is created, allocated (early, no fill
 * writes for /y) and the metadata flushed before any trajectory is
 * computed.  After that the run only writes raw data into allocated
 * space, so a rank killed at any moment leaves a file whose metadata is
 * intact; a chunk's done byte is written after its data, so done = 1
 * means the data is there.  --resume recomputes the chunks with done = 0.
 */
#include "config.h"
#include "hpc.h"
#include "hpc_h5.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "odegen.h"

struct ode_out {
    hpc_h5file_t *f;
    hid_t t, x0, y, nsteps, nfev, nrej, status, done;
    const ode_opts_t *o;
    int argc;
    char **argv;
    int complete;        /* --resume found a finished file: nothing to do */
    int64_t runs;        /* 1 + number of resumes */
};

const char *ode_status_legend(void)
{
    return "0 ok (reached t1), -1 step size underflow (below 10 ulp of t, scipy's "
           "'Required step size is less than spacing between numbers'), -2 non-finite "
           "state or derivative (Inf/NaN), -3 --max-steps attempts used up, "
           "-128 not computed (only in a .partial file)";
}

/* The cause of the last libhpc error, first line only: the one-line
 * messages of hpc_die_data() must not carry the "from file:line" frames. */
const char *ode_cause(void)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%s", hpc_last_error());
    buf[strcspn(buf, "\n")] = '\0';
    return buf;
}

/* ---- the options that shape the data, as one comparable string ---- */
static void options_key(const ode_opts_t *o, char *buf, size_t len)
{
    size_t k = 0;
#define KEY(...) k += (size_t)snprintf(buf + k, k < len ? len - k : 0, __VA_ARGS__)
    KEY("system=%s;dim=%d;", o->sys->name, o->dim);
    for (int i = 0; i < o->sys->npar; i++)
        KEY("%s=%.17g;", o->sys->par_name[i], o->par[i]);
    KEY("n=%lld;t0=%.17g;t1=%.17g;nt=%d;rtol=%.17g;atol=%.17g;", (long long)o->n, o->t0,
        o->t1, o->nt, o->rtol, o->atol);
    KEY("max_step=%.17g;first_step=%.17g;max_steps=%lld;", o->max_step, o->first_step,
        (long long)o->max_steps);
    if (o->x0_dist == ODE_X0_NORMAL)
        KEY("x0=normal(%.17g,%.17g);", o->x0_a, o->x0_b);
    else
        KEY("x0=uniform(%.17g,%.17g);", o->x0_a, o->x0_b);
    KEY("seed=%llu;chunk=%lld;device=%s;version=%s", (unsigned long long)o->seed,
        (long long)o->chunk, o->device == ODE_DEV_CUDA ? "cuda" : "cpu", hpc_version());
#undef KEY
}

/* Name the first field where two keys differ: "rtol: 0.001 in the file, 1e-06 now". */
static void key_diff(const char *file, const char *now, char *out, size_t len)
{
    char a[2048], b[2048];
    snprintf(a, sizeof a, "%s", file);
    snprintf(b, sizeof b, "%s", now);
    char *sa, *sb;
    char *fa = strtok_r(a, ";", &sa), *fb = strtok_r(b, ";", &sb);
    while (fa && fb && strcmp(fa, fb) == 0) {
        fa = strtok_r(NULL, ";", &sa);
        fb = strtok_r(NULL, ";", &sb);
    }
    if (!fa || !fb) {
        snprintf(out, len, "%s", fa ? fa : fb ? fb : "?");
        return;
    }
    char *ea = strchr(fa, '='), *eb = strchr(fb, '=');
    if (ea && eb && ea - fa == eb - fb && strncmp(fa, fb, (size_t)(ea - fa)) == 0)
        snprintf(out, len, "%.*s: %s in the file, %s now", (int)(ea - fa), fa, ea + 1, eb + 1);
    else
        snprintf(out, len, "%s in the file, %s now", fa, fb);
}

/* ---- small HDF5 helpers ---- */
static int attr_replace_string(hid_t obj, const char *name, const char *v)
{
    if (H5Aexists(obj, name) > 0)
        H5Adelete(obj, name);
    return hpc_h5_attr_set_string(obj, name, v);
}

static int attr_replace_double(hid_t obj, const char *name, double v)
{
    if (H5Aexists(obj, name) > 0)
        H5Adelete(obj, name);
    return hpc_h5_attr_set_double(obj, name, v);
}

static int attr_replace_int64(hid_t obj, const char *name, int64_t v)
{
    if (H5Aexists(obj, name) > 0)
        H5Adelete(obj, name);
    return hpc_h5_attr_set_int64(obj, name, v);
}

/* Create a dataset with early allocation (needed for independent writes
 * in parallel, and so that no metadata changes later) and, optionally, a
 * fill value; fill == NULL means never write fill values (for /y that
 * would be a second full write of the file). */
static hid_t make_dset(hid_t file, const char *name, hid_t type, int nd, const hsize_t *dims,
                       const hsize_t *chunk, const void *fill)
{
    hid_t space = H5Screate_simple(nd, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    hid_t d = -1;
    if (space < 0 || dcpl < 0 || lcpl < 0)
        goto out;
    H5Pset_create_intermediate_group(lcpl, 1);
    if (chunk)
        H5Pset_chunk(dcpl, nd, chunk);
    H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
    if (fill) {
        H5Pset_fill_value(dcpl, type, fill);
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_ALLOC);
    } else {
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
    }
    d = H5Dcreate2(file, name, type, space, lcpl, dcpl, H5P_DEFAULT);
out:
    if (lcpl >= 0) H5Pclose(lcpl);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (space >= 0) H5Sclose(space);
    return d;
}

static int write_attrs(ode_out_t *w, const double *vec)
{
    const ode_opts_t *o = w->o;
    hid_t fid = hpc_h5_id(w->f);
    char key[2048], params[512] = "";
    options_key(o, key, sizeof key);
    for (int i = 0; i < o->sys->npar; i++) {
        char one[96], an[64];
        snprintf(one, sizeof one, "%s%s=%.17g", i ? "," : "", o->sys->par_name[i], o->par[i]);
        strncat(params, one, sizeof params - strlen(params) - 1);
        snprintf(an, sizeof an, "param_%s", o->sys->par_name[i]);
        HPC_TRY(hpc_h5_attr_set_double(fid, an, o->par[i]));
    }
    HPC_TRY(hpc_h5_attr_set_string(fid, "system", o->sys->name));
    HPC_TRY(hpc_h5_attr_set_string(fid, "params", params));
    HPC_TRY(hpc_h5_attr_set_int64(fid, "dim", o->dim));
    HPC_TRY(hpc_h5_attr_set_int64(fid, "n", o->n));
    HPC_TRY(hpc_h5_attr_set_double(fid, "t0", o->t0));
    HPC_TRY(hpc_h5_attr_set_double(fid, "t1", o->t1));
    HPC_TRY(hpc_h5_attr_set_int64(fid, "nt", o->nt));
    HPC_TRY(hpc_h5_attr_set_double(fid, "rtol", o->rtol));
    HPC_TRY(hpc_h5_attr_set_double(fid, "atol", o->atol));
    HPC_TRY(hpc_h5_attr_set_double(fid, "max_step", o->max_step));
    HPC_TRY(hpc_h5_attr_set_double(fid, "first_step", o->first_step));
    HPC_TRY(hpc_h5_attr_set_int64(fid, "max_steps", o->max_steps));
    HPC_TRY(hpc_h5_attr_set_int64(fid, "seed", (int64_t)o->seed));
    if (o->x0_dist == ODE_X0_NORMAL) {
        HPC_TRY(hpc_h5_attr_set_string(fid, "x0_distribution", "normal"));
        HPC_TRY(hpc_h5_attr_set_double(fid, "x0_mean", o->x0_a));
        HPC_TRY(hpc_h5_attr_set_double(fid, "x0_std", o->x0_b));
    } else {
        HPC_TRY(hpc_h5_attr_set_string(fid, "x0_distribution", "uniform"));
        HPC_TRY(hpc_h5_attr_set_double(fid, "x0_low", o->x0_a));
        HPC_TRY(hpc_h5_attr_set_double(fid, "x0_high", o->x0_b));
    }
    if (vec)
        HPC_TRY(hpc_h5_attr_set_doubles(fid, "omega", vec, (size_t)o->dim));
    HPC_TRY(hpc_h5_attr_set_int64(fid, "chunk", o->chunk));
    HPC_TRY(hpc_h5_attr_set_string(fid, "device", o->device == ODE_DEV_CUDA ? "cuda" : "cpu"));
    HPC_TRY(hpc_h5_attr_set_string(fid, "method",
        "RK45 (Dormand-Prince 5(4)), step for step as scipy.integrate.solve_ivp"));
    HPC_TRY(hpc_h5_attr_set_string(fid, "options", key));
    HPC_TRY(hpc_h5_attr_set_string(w->status, "legend", ode_status_legend()));
    return 0;
}

static int create_layout(ode_out_t *w, const double *tgrid, const double *vec, int64_t nchunks)
{
    const ode_opts_t *o = w->o;
    hid_t fid = hpc_h5_id(w->f);
    hsize_t n = (hsize_t)o->n, nt = (hsize_t)o->nt, d = (hsize_t)o->dim;
    hsize_t dt[1] = {nt}, dx0[2] = {n, d}, dy[3] = {n, nt, d}, dn[1] = {n};
    hsize_t cy[3] = {(hsize_t)o->chunk, nt, d}, dd[1] = {(hsize_t)nchunks};
    const int8_t not_run = ODE_NOT_RUN;
    const uint8_t zero = 0;

    w->t = make_dset(fid, "t", H5T_IEEE_F64LE, 1, dt, NULL, NULL);
    w->x0 = make_dset(fid, "x0", H5T_IEEE_F64LE, 2, dx0, NULL, NULL);
    w->y = make_dset(fid, "y", H5T_IEEE_F64LE, 3, dy, cy, NULL);
    w->nsteps = make_dset(fid, "stats/nsteps", H5T_STD_I32LE, 1, dn, NULL, NULL);
    w->nfev = make_dset(fid, "stats/nfev", H5T_STD_I32LE, 1, dn, NULL, NULL);
    w->nrej = make_dset(fid, "stats/nrejected", H5T_STD_I32LE, 1, dn, NULL, NULL);
    w->status = make_dset(fid, "stats/status", H5T_STD_I8LE, 1, dn, NULL, &not_run);
    w->done = make_dset(fid, "stats/done", H5T_STD_U8LE, 1, dd, NULL, &zero);
    if (w->t < 0 || w->x0 < 0 || w->y < 0 || w->nsteps < 0 || w->nfev < 0 || w->nrej < 0 ||
        w->status < 0 || w->done < 0)
        return hpc_error_hdf5(__FILE__, __LINE__, "H5Dcreate2 (odegen layout)");
    HPC_TRY(hpc_h5_write_rows(w->t, H5T_NATIVE_DOUBLE, 0,
                              hpc_env()->rank == 0 ? nt : 0, tgrid));
    HPC_TRY(write_attrs(w, vec));
    HPC_TRY(hpc_h5_attr_provenance(fid, ODEGEN_PROG, w->argc, w->argv));
    /* metadata on disk now: from here on only raw data is written */
    if (H5Fflush(fid, H5F_SCOPE_GLOBAL) < 0)
        return hpc_error_hdf5(__FILE__, __LINE__, "H5Fflush");
    return 0;
}

static int open_layout(ode_out_t *w, int64_t nchunks)
{
    const ode_opts_t *o = w->o;
    hsize_t n = (hsize_t)o->n, nt = (hsize_t)o->nt, d = (hsize_t)o->dim;
    hsize_t dt[1] = {nt}, dx0[2] = {n, d}, dy[3] = {n, nt, d}, dn[1] = {n};
    hsize_t dd[1] = {(hsize_t)nchunks};
    HPC_TRY(hpc_h5_dataset_open(w->f, "t", 1, dt, &w->t));
    HPC_TRY(hpc_h5_dataset_open(w->f, "x0", 2, dx0, &w->x0));
    HPC_TRY(hpc_h5_dataset_open(w->f, "y", 3, dy, &w->y));
    HPC_TRY(hpc_h5_dataset_open(w->f, "stats/nsteps", 1, dn, &w->nsteps));
    HPC_TRY(hpc_h5_dataset_open(w->f, "stats/nfev", 1, dn, &w->nfev));
    HPC_TRY(hpc_h5_dataset_open(w->f, "stats/nrejected", 1, dn, &w->nrej));
    HPC_TRY(hpc_h5_dataset_open(w->f, "stats/status", 1, dn, &w->status));
    HPC_TRY(hpc_h5_dataset_open(w->f, "stats/done", 1, dd, &w->done));
    return 0;
}

static int exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* Rank 0 looks at the file system once; every rank gets the same answer. */
static void probe(const char *out, int st[3], MPI_Comm comm)
{
    char partial[4096];
    snprintf(partial, sizeof partial, "%s.partial", out);
    if (hpc_env()->rank == 0) {
        char dirbuf[4096];
        snprintf(dirbuf, sizeof dirbuf, "%s", out);
        st[0] = exists(out);
        st[1] = exists(partial);
        st[2] = access(dirname(dirbuf), W_OK) == 0 ? 0 : errno;
    }
    MPI_Bcast(st, 3, MPI_INT, 0, comm);
}

/* Read the options key of an existing file and compare.  0 same, -1 not. */
static int same_options(hpc_h5file_t *f, const ode_opts_t *o, char *err, size_t len,
                        const char *shown)
{
    char now[2048], *was = NULL;
    options_key(o, now, sizeof now);
    if (hpc_h5_attr_get_string(hpc_h5_id(f), "options", &was) < 0) {
        snprintf(err, len, "--resume: %s is not an hpc-odegen output (no 'options' attribute)",
                 shown);
        return -1;
    }
    int same = strcmp(was, now) == 0;
    if (!same) {
        char diff[512];
        key_diff(was, now, diff, sizeof diff);
        snprintf(err, len, "--resume: %s was written with different options (%s)", shown, diff);
    }
    free(was);
    return same ? 0 : -1;
}

static void free_out(ode_out_t *w)
{
    hid_t *ds[] = {&w->t, &w->x0, &w->y, &w->nsteps, &w->nfev, &w->nrej, &w->status, &w->done};
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++)
        if (*ds[i] > 0)
            H5Dclose(*ds[i]);
    free(w);
}

int ode_out_open(const ode_opts_t *o, int argc, char **argv, const double *tgrid,
                 const double *vec, ode_out_t **out, ode_layout_t *lay, char *err,
                 size_t errlen, int *exit_code)
{
    MPI_Comm comm = hpc_env()->world;
    int st[3] = {0, 0, 0};
    ode_out_t *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        *exit_code = 1;
        return -1;
    }
    w->o = o;
    w->argc = argc;
    w->argv = argv;
    w->runs = 1;
    lay->chunk = o->chunk;
    lay->nchunks = (o->n + o->chunk - 1) / o->chunk;
    lay->ndone = 0;
    lay->done = calloc((size_t)lay->nchunks, 1);
    *exit_code = 1;
    probe(o->out, st, comm);

    if (st[2] != 0) {
        snprintf(err, errlen, "cannot write %s: its directory is not writable (%s)", o->out,
                 strerror(st[2]));
        goto fail;
    }
    if (o->resume && (st[1] || st[0])) {
        /* continue the .partial, or confirm that the final file is done */
        int partial = st[1];
        char shown[4200];
        snprintf(shown, sizeof shown, "%s%s", o->out, partial ? ".partial" : "");
        if (hpc_h5_open(o->out, comm, partial, partial, &w->f) < 0) {
            snprintf(err, errlen, "--resume: cannot open %s (use --force to start over): %s",
                     shown, ode_cause());
            goto fail;
        }
        if (same_options(w->f, o, err, errlen, shown) < 0 || open_layout(w, lay->nchunks) < 0) {
            if (!err[0] || strncmp(err, "--resume", 8) != 0)
                snprintf(err, errlen, "--resume: %s has the wrong layout: %s", shown,
                         ode_cause());
            hpc_h5_close(w->f);
            goto fail;
        }
        if (hpc_h5_read_rows(w->done, H5T_NATIVE_UINT8, 0, (hsize_t)lay->nchunks, lay->done) < 0) {
            snprintf(err, errlen, "--resume: cannot read %s /stats/done: %s", shown,
                     ode_cause());
            hpc_h5_close(w->f);
            goto fail;
        }
        for (int64_t c = 0; c < lay->nchunks; c++)
            lay->ndone += lay->done[c] != 0;
        int64_t runs = 1;
        if (hpc_h5_attr_get_int64(hpc_h5_id(w->f), "runs", &runs) == 0)
            w->runs = runs + 1;
        w->complete = !partial;
        *out = w;
        return 0;
    }
    if (st[0] && !o->force) {
        snprintf(err, errlen, "%s exists (use --force to overwrite it, or --resume to "
                 "continue an interrupted run)", o->out);
        goto fail;
    }
    if (hpc_h5_create(o->out, comm, o->force ? HPC_H5_OVERWRITE : HPC_H5_FAIL_IF_EXISTS,
                      &w->f) < 0) {
        snprintf(err, errlen, "cannot create %s.partial: %s", o->out, ode_cause());
        goto fail;
    }
    if (create_layout(w, tgrid, vec, lay->nchunks) < 0) {
        snprintf(err, errlen, "cannot write %s.partial: %s", o->out, ode_cause());
        hpc_h5_finish(w->f, 0);
        goto fail;
    }
    *out = w;
    return 0;
fail:
    free(lay->done);
    lay->done = NULL;
    free_out(w);
    return -1;
}

int ode_out_is_complete(const ode_out_t *w)
{
    return w->complete;
}

int ode_out_write_chunk(ode_out_t *w, int64_t chunk, int64_t first, int64_t n,
                        const double *x0, const double *y, const ode_stat_t *st)
{
    int32_t *v = malloc((size_t)n * sizeof *v);
    int8_t *s = malloc((size_t)n);
    const uint8_t one = 1;
    int rc = 0;
    if (!v || !s) {
        rc = HPC_ERR(HPC_ERR_NOMEM, "chunk stats");
        goto out;
    }
    hsize_t r0 = (hsize_t)first, nr = (hsize_t)n;
#define W(call) do { if ((rc = (call)) < 0) { hpc_error_push(rc, __FILE__, __LINE__, __func__); goto out; } } while (0)
    W(hpc_h5_write_rows_indep(w->x0, H5T_NATIVE_DOUBLE, r0, nr, x0));
    W(hpc_h5_write_rows_indep(w->y, H5T_NATIVE_DOUBLE, r0, nr, y));
    for (int64_t i = 0; i < n; i++) v[i] = st[i].nsteps;
    W(hpc_h5_write_rows_indep(w->nsteps, H5T_NATIVE_INT32, r0, nr, v));
    for (int64_t i = 0; i < n; i++) v[i] = st[i].nfev;
    W(hpc_h5_write_rows_indep(w->nfev, H5T_NATIVE_INT32, r0, nr, v));
    for (int64_t i = 0; i < n; i++) v[i] = st[i].nrejected;
    W(hpc_h5_write_rows_indep(w->nrej, H5T_NATIVE_INT32, r0, nr, v));
    for (int64_t i = 0; i < n; i++) s[i] = st[i].status;
    W(hpc_h5_write_rows_indep(w->status, H5T_NATIVE_INT8, r0, nr, s));
    /* last: the chunk counts as done only once its data is written */
    W(hpc_h5_write_rows_indep(w->done, H5T_NATIVE_UINT8, (hsize_t)chunk, 1, &one));
#undef W
out:
    free(v);
    free(s);
    return rc;
}

int ode_out_totals(ode_out_t *w, int64_t *failed, int64_t *steps, int64_t fails_by[4])
{
    const hpc_env_t *e = hpc_env();
    const int64_t n = w->o->n, slice = 1 << 20;
    int64_t lo = n * e->rank / e->size, hi = n * (e->rank + 1) / e->size;
    int64_t most = (n + e->size - 1) / e->size;
    int64_t loc[6] = {0, 0, 0, 0, 0, 0};
    int32_t *ns = malloc((size_t)slice * sizeof *ns);
    int8_t *stt = malloc((size_t)slice);
    if (!ns || !stt) {
        free(ns);
        free(stt);
        return HPC_ERR(HPC_ERR_NOMEM, "totals");
    }
    /* the same number of collective reads on every rank */
    for (int64_t off = 0; off < most; off += slice) {
        int64_t a = lo + off, b = a + slice < hi ? a + slice : hi;
        hsize_t cnt = b > a ? (hsize_t)(b - a) : 0;
        int rc1 = hpc_h5_read_rows(w->nsteps, H5T_NATIVE_INT32, cnt ? (hsize_t)a : 0, cnt, ns);
        int rc2 = hpc_h5_read_rows(w->status, H5T_NATIVE_INT8, cnt ? (hsize_t)a : 0, cnt, stt);
        if (rc1 < 0 || rc2 < 0) {
            free(ns);
            free(stt);
            return rc1 < 0 ? rc1 : rc2;
        }
        for (hsize_t i = 0; i < cnt; i++) {
            loc[0] += ns[i];
            if (stt[i] != ODE_OK) {
                loc[1]++;
                if (stt[i] >= -3 && stt[i] <= -1)
                    loc[1 - stt[i]]++;
            }
        }
    }
    free(ns);
    free(stt);
    int64_t tot[6];
    HPC_MPI(MPI_Allreduce(loc, tot, 6, MPI_INT64_T, MPI_SUM, e->world));
    *steps = tot[0];
    *failed = tot[1];
    for (int k = 0; k < 3; k++)
        fails_by[k] = tot[2 + k];
    fails_by[3] = tot[1] - tot[2] - tot[3] - tot[4];
    return 0;
}

int ode_out_finish(ode_out_t *w, double wall, int ok)
{
    hid_t fid = hpc_h5_id(w->f);
    int rc = 0;
    const char *out = w->o->out;
    if (w->complete) {
        hpc_h5file_t *f = w->f;
        free_out(w);            /* closes the datasets first */
        return hpc_h5_close(f);
    }
    if (ok) {
        /* the attributes that legitimately differ between equal runs */
        char *cmd = hpc_cmdline(w->argc, w->argv);
        if (attr_replace_double(fid, "wall_time", wall) < 0 ||
            attr_replace_int64(fid, "ranks", hpc_env()->size) < 0 ||
            attr_replace_int64(fid, "runs", w->runs) < 0 ||
            (w->runs > 1 && attr_replace_string(fid, "resume_command_line", cmd ? cmd : "") < 0))
            ok = 0;
        free(cmd);
    }
    hid_t *ds[] = {&w->t, &w->x0, &w->y, &w->nsteps, &w->nfev, &w->nrej, &w->status, &w->done};
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
        H5Dclose(*ds[i]);
        *ds[i] = -1;
    }
    rc = hpc_h5_finish(w->f, ok);
    free(w);
    /* a reopened .partial may not be renamed by the helper: do it here */
    if (rc == 0 && ok && hpc_env()->rank == 0) {
        char partial[4200];
        snprintf(partial, sizeof partial, "%s.partial", out);
        if (exists(partial) && rename(partial, out) != 0)
            rc = HPC_ERR(HPC_ERR_IO, "rename %s -> %s: %s", partial, out, strerror(errno));
    }
    int all = rc;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, hpc_env()->world);
    return all;
}
