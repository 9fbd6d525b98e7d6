/* output.c - the HDF5 file of hpc-odegen: its layout and attributes.
 *
 * Layout (N trajectories, NT times, D dims):
 *   /t [NT]  /x0 [N,D]  /y [N,NT,D] float64 (--dtype float32: float32),
 *   contiguous, so that rows.c writes them raw from its thread
 *   /traj [N] int64 (global trajectory index)  /component [D] int64
 *   /stats/nsteps /stats/nfev /stats/nrejected [N] int32
 *   /stats/status [N] int8 (fill -128 = not computed yet)
 *   /stats/done [nchunks] uint8: 1 once a chunk's data is on disk
 *   /stats/written [nchunks] uint64: a chunk's checksum once written
 *   /stats/chunk [nchunks] int64: the chunk index, done's scale
 *
 * /traj, /t and /component are dimension scales attached to the
 * dimensions of the others, so netCDF and xarray see dimensions traj, t,
 * component with coordinates (not phony_dim_*); /stats/done is the run's
 * bookkeeping, marked "internal" by the kit (kept: --resume of a
 * finished file reads it), with its own scale chunk.
 *
 * The kit's resumable output (hpc_out) does the rest: the options key,
 * the done flags, the lock, resume, the atomic finish.  Every dataset is
 * created with early allocation (no fill writes for /y: its NaN fill is
 * declared, not written) and the scales attached before any trajectory
 * is computed, so afterwards only raw data is written.
 */
#include "config.h"
#include "hpc_app_h5.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "odegen.h"

#include "out_internal.h"
#include "hpc_ode.h"

#define NDATA 7    /* the datasets written by the run; then the indices */
#define NDSETS 9

int ode_scales(hid_t traj, hid_t t, hid_t component, hid_t x0, hid_t y, const hid_t stats[4])
{
    HPC_TRY(hpc_h5_scale_set(traj, "traj"));
    HPC_TRY(hpc_h5_scale_set(t, "t"));
    HPC_TRY(hpc_h5_scale_set(component, "component"));
    HPC_TRY(hpc_h5_scale_attach(x0, traj, 0));
    HPC_TRY(hpc_h5_scale_attach(x0, component, 1));
    HPC_TRY(hpc_h5_scale_attach(y, traj, 0));
    HPC_TRY(hpc_h5_scale_attach(y, t, 1));
    HPC_TRY(hpc_h5_scale_attach(y, component, 2));
    for (int i = 0; i < 4; i++) HPC_TRY(hpc_h5_scale_attach(stats[i], traj, 0));
    return 0;
}

const char *ode_status_legend(void)
{
    return "1 ended by a terminal event, 0 ok (reached t1), -1 step size underflow (below 10 ulp of t, scipy's "
           "'Required step size is less than spacing between numbers'), -2 non-finite "
           "state or derivative (Inf/NaN), -3 --max-steps attempts used up, "
           "-127 missing (a joined file read without the shard that holds it), "
           "-128 not computed (only in a .partial file)";
}

/* /stats/status as CF flags: flag_values (in the variable's own type,
 * int8, as CF asks) and flag_meanings, one word each, in the same order;
 * the legend above says more, as its comment */
static int status_flags(hid_t status)
{
    static const int8_t codes[] = {ODE_OK, ODE_EVENT, ODE_STEP_UNDERFLOW, ODE_NONFINITE, ODE_MAX_STEPS,
                                   ODE_MISSING, ODE_NOT_RUN};
    hsize_t n = sizeof codes;
    hid_t s = H5Screate_simple(1, &n, NULL);
    hid_t a = s < 0 ? -1 : H5Acreate2(status, "flag_values", H5T_STD_I8LE, s, H5P_DEFAULT, H5P_DEFAULT);
    herr_t e = a < 0 ? -1 : H5Awrite(a, H5T_NATIVE_INT8, codes);
    if (a >= 0) H5Aclose(a);
    if (s >= 0) H5Sclose(s);
    if (e < 0) return hpc_error_hdf5(__FILE__, __LINE__, "flag_values");
    HPC_TRY(hpc_h5_attr_set_string(status, "flag_meanings",
                                   "ok terminal_event step_size_underflow non_finite max_steps_used_up missing "
                                   "not_computed"));
    return hpc_h5_attr_set_string(status, "comment", ode_status_legend());
}

/* the system: its name, parameters, and where it came from with its
 * source, so that the dataset can be made again from the file alone */
static int system_attrs(const ode_opts_t *o, hid_t fid)
{
    char params[4096] = "";
    for (int i = 0; i < o->sys->npar; i++) {
        char one[160], an[160];
        snprintf(one, sizeof one, "%s%s=%.17g", i ? "," : "", o->sys->par_name[i], o->par[i]);
        strncat(params, one, sizeof params - strlen(params) - 1);
        snprintf(an, sizeof an, "param_%s", o->sys->par_name[i]);
        HPC_TRY(hpc_h5_attr_set_double(fid, an, o->par[i]));
    }
    for (int k = 0; k < o->sys->nvec; k++) {
        char an[160];
        snprintf(an, sizeof an, "param_%s", o->sys->vec_name[k]);
        HPC_TRY(hpc_h5_attr_set_doubles(fid, an, o->vec[k], (size_t)o->vec_len[k]));
    }
    HPC_TRY(hpc_h5_attr_set_string(fid, "system", o->sys->name));
    HPC_TRY(hpc_h5_attr_set_string(fid, "system_about", o->sys->about));
    HPC_TRY(hpc_h5_attr_set_string(fid, "system_file", o->sys_path ? o->sys_path : "built-in"));
    /* an attribute in the object header: HDF5's default format holds
     * at most 64 KiB there, so a longer source keeps its first 60000 bytes
     * (system_sha256 names the whole file) */
    const char *src = o->sys_source ? o->sys_source : "";
    char *cut = strlen(src) > 60000 ? strndup(src, 60000) : NULL;
    int rc = hpc_h5_attr_set_string(fid, "system_source", cut ? cut : src);
    free(cut);
    HPC_TRY(rc);
    HPC_TRY(hpc_h5_attr_set_string(fid, "system_sha256", o->sys_sha256));
    HPC_TRY(hpc_h5_attr_set_string(fid, "params", params));
    return 0;
}

static int write_attrs(ode_out_t *w, hid_t fid)
{
    const ode_opts_t *o = w->o;
    HPC_TRY(system_attrs(o, fid));
    HPC_TRY(hpc_h5_attr_set_int64(fid, "dim", o->dim));
    HPC_TRY(hpc_h5_attr_set_int64(fid, "n", o->n));
    /* a shard of a job array (--shard I/N) holds rows [first, first + n) of
     * n_total; a whole run is shard 0 of 1 */
    HPC_TRY(hpc_h5_attr_set_int64(fid, "n_total", o->n_total));
    HPC_TRY(hpc_h5_attr_set_int64(fid, "first", o->first));
    HPC_TRY(hpc_h5_attr_set_int64(fid, "shard", o->shard));
    HPC_TRY(hpc_h5_attr_set_int64(fid, "shards", o->shards));
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
    HPC_TRY(hpc_h5_attr_set_string(fid, "t_eval", o->t_eval ? o->t_eval : ""));
    HPC_TRY(hpc_h5_attr_set_int64(fid, "chunk", o->chunk));
    HPC_TRY(hpc_h5_attr_set_string(fid, "device", o->device == ODE_DEV_CUDA ? "cuda" : "cpu"));
    HPC_TRY(hpc_h5_attr_set_string(fid, "method", ode_method_name(o->method)));
    HPC_TRY(hpc_h5_attr_set_string(fid, "method_about", ode_method_about(o->method)));
    /* CF: the conventions, what the file holds; the rest of the metadata
     * (program, command line, version, time) is the provenance's */
    HPC_TRY(hpc_h5_attr_set_string(fid, "Conventions", "CF-1.10"));
    char title[256];
    snprintf(title, sizeof title, "trajectories of the %s ODE system (hpc-odegen, %s)", o->sys->name,
             ode_method_name(o->method));
    HPC_TRY(hpc_h5_attr_set_string(fid, "title", title));
    HPC_TRY(status_flags(w->status));
    return 0;
}

/* the datasets: name, HDF5 type, rank, dims (filled in by dims_of),
 * long_name and CF units: the systems are dimensionless, so time, states
 * and counts are "1"; the indices and the status flags have none */
typedef struct {
    const char *name;
    hid_t type;
    H5T_class_t cls;
    size_t size;
    int nd;
    const char *long_name, *units;
} dset_t;

static void dsets(const ode_opts_t *o, dset_t d[NDSETS])
{
    hid_t ft = o->dtype == ODE_F32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
    size_t fs = o->dtype == ODE_F32 ? 4 : 8;
    const dset_t all[NDSETS] = {
        {"t", H5T_IEEE_F64LE, H5T_FLOAT, 8, 1, "time", "1"},
        {"x0", ft, H5T_FLOAT, fs, 2, "initial state x(t0)", "1"},
        {"y", ft, H5T_FLOAT, fs, 3, "state x(t) on the output grid (NaN after a failure)", "1"},
        {"stats/nsteps", H5T_STD_I32LE, H5T_INTEGER, 4, 1, "accepted steps", "1"},
        {"stats/nfev", H5T_STD_I32LE, H5T_INTEGER, 4, 1, "right-hand side evaluations", "1"},
        {"stats/nrejected", H5T_STD_I32LE, H5T_INTEGER, 4, 1, "rejected step attempts", "1"},
        {"stats/status", H5T_STD_I8LE, H5T_INTEGER, 1, 1, "integration status (flag_values, flag_meanings)", NULL},
        {"traj", H5T_STD_I64LE, H5T_INTEGER, 8, 1,
         "trajectory index (its initial state is drawn from the stream (seed, index))", NULL},
        {"component", H5T_STD_I64LE, H5T_INTEGER, 8, 1, "state component", NULL}};
    memcpy(d, all, sizeof all);
}

static hid_t *handle(ode_out_t *w, int i)
{
    hid_t *h[NDSETS] = {&w->t, &w->x0, &w->y, &w->nsteps, &w->nfev, &w->nrej, &w->status, &w->traj, &w->component};
    return h[i];
}

static void dims_of(const ode_opts_t *o, int i, hsize_t dims[3])
{
    hsize_t n = (hsize_t)o->n, nt = (hsize_t)o->nt, d = (hsize_t)o->dim;
    const hsize_t all[NDSETS][3] = {{nt}, {n, d}, {n, nt, d}, {n}, {n}, {n}, {n}, {n}, {d}};
    memcpy(dims, all[i], sizeof all[i]);
}

/* The events' datasets, event e's dataset k (count, t, y): its path, type
 * and shape */
static const char *const evsets[ODE_EVROWS] = {"count", "t", "y"};

static void ev_path(const ode_opts_t *o, int e, int k, char *buf, size_t len)
{
    snprintf(buf, len, "events/%s/%s", ((const hpc_ode_event *)o->sys->events)[e].name, evsets[k]);
}

static void ev_shape(const ode_opts_t *o, int k, hid_t *type, H5T_class_t *cls, size_t *size, int *nd,
                     hsize_t dims[3])
{
    hsize_t n = (hsize_t)o->n, m = (hsize_t)o->max_events, d = (hsize_t)o->dim;
    const hsize_t all[ODE_EVROWS][3] = {{n}, {n, m}, {n, m, d}};
    memcpy(dims, all[k], sizeof all[k]);
    *nd = k + 1;
    int f32 = k == 2 && o->dtype == ODE_F32;
    *type = k == 0 ? H5T_STD_I32LE : f32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
    *cls = k == 0 ? H5T_INTEGER : H5T_FLOAT;
    *size = k == 0 ? 4 : f32 ? 4 : 8;
}

static int create_events(ode_out_t *w)
{
    const ode_opts_t *o = w->o;
    hpc_h5file_t *f = hpc_out_file(w->out);
    const hpc_ode_event *ev = o->sys->events;
    const char *long_name[ODE_EVROWS] = {"occurrences of the event (all: more than max_events are counted too)",
                                         "times of the first max_events occurrences (NaN: fewer)",
                                         "states at them (NaN: fewer)"};
    if (!w->nev) return 0;
    hid_t occ;
    HPC_TRY(hpc_h5_index(f, "events/occurrence", o->max_events, 0, &occ));
    int rc = hpc_h5_describe(occ, "occurrence of an event, in time order", NULL);
    if (!rc) rc = hpc_h5_scale_set(occ, "occurrence");
    for (int e = 0; !rc && e < w->nev; e++) {
        for (int k = 0; !rc && k < ODE_EVROWS; k++) {
            char path[512];
            hid_t type;
            H5T_class_t cls;
            size_t size;
            int nd;
            hsize_t dims[3];
            const double nan = NAN;
            ev_path(o, e, k, path, sizeof path);
            ev_shape(o, k, &type, &cls, &size, &nd, dims);
            rc = hpc_h5_dataset_create(f, path, type, nd, dims, NULL,
                                       HPC_H5_ALLOC_EARLY | (k ? HPC_H5_FILL_NEVER : 0), k ? &nan : NULL,
                                       &w->evd[e][k]);
            if (!rc) rc = hpc_h5_describe(w->evd[e][k], long_name[k], NULL);
            if (!rc) rc = hpc_h5_scale_attach(w->evd[e][k], w->traj, 0);
            if (!rc && k) rc = hpc_h5_scale_attach(w->evd[e][k], occ, 1);
            if (!rc && k == 2) rc = hpc_h5_scale_attach(w->evd[e][k], w->component, 2);
        }
        if (!rc) rc = hpc_h5_attr_set_int64(w->evd[e][0], "terminal", ev[e].terminal);
        if (!rc) rc = hpc_h5_attr_set_int64(w->evd[e][0], "direction", ev[e].direction);
    }
    H5Dclose(occ);
    return rc;
}

static int open_events(ode_out_t *w)
{
    for (int e = 0; e < w->nev; e++)
        for (int k = 0; k < ODE_EVROWS; k++) {
            char path[512];
            hid_t type;
            H5T_class_t cls;
            size_t size;
            int nd;
            hsize_t dims[3];
            ev_path(w->o, e, k, path, sizeof path);
            ev_shape(w->o, k, &type, &cls, &size, &nd, dims);
            HPC_TRY(hpc_h5_dataset_open(hpc_out_file(w->out), path, nd, dims, &w->evd[e][k]));
            HPC_TRY(hpc_h5_dataset_check_type(w->evd[e][k], path, cls, size));
        }
    return 0;
}

/* /stats/chunk, the scale of the kit's done flags and checksums (a named dimension for
 * xarray: h5netcdf refuses a group with an unnamed one) */
static int chunk_scale(ode_out_t *w)
{
    hpc_h5file_t *f = hpc_out_file(w->out);
    hsize_t n = (hsize_t)((w->o->n + w->o->chunk - 1) / w->o->chunk);
    hid_t c, done;
    HPC_TRY(hpc_h5_index(f, "stats/chunk", (int64_t)n, 0, &c));
    int rc = hpc_h5_describe(c, "work chunk: trajectories [c K, (c+1) K) of this file, K the root attribute "
                                  "chunk", NULL);
    if (!rc) rc = hpc_h5_scale_set(c, "chunk");
    /* the kit's two: the done flags and the written parts' checksums */
    const char *kit[2] = {"stats/done", "stats/written"};
    for (int i = 0; i < 2 && !rc; i++)
        if (!(rc = hpc_h5_dataset_open(f, kit[i], 1, &n, &done))) {
            rc = hpc_h5_scale_attach(done, c, 0);
            H5Dclose(done);
        }
    H5Dclose(c);
    return rc;
}

/* the coordinates' values, the dimension scales, long_name everywhere */
static int write_coords(ode_out_t *w, const double *tgrid)
{
    const ode_opts_t *o = w->o;
    hpc_h5file_t *f = hpc_out_file(w->out);
    HPC_TRY(hpc_h5_write_rows(w->t, H5T_NATIVE_DOUBLE, 0, hpc_rank() == 0 ? (hsize_t)o->nt : 0, tgrid));
    HPC_TRY(hpc_h5_index(f, "traj", o->n, o->first, &w->traj));
    HPC_TRY(hpc_h5_index(f, "component", o->dim, 0, &w->component));
    HPC_TRY(ode_scales(w->traj, w->t, w->component, w->x0, w->y, (hid_t[]){w->nsteps, w->nfev, w->nrej, w->status}));
    dset_t d[NDSETS];
    dsets(w->o, d);
    for (int i = 0; i < NDSETS; i++) HPC_TRY(hpc_h5_describe(*handle(w, i), d[i].long_name, d[i].units));
    return 0;
}

static int create_layout(ode_out_t *w, const double *tgrid, int argc, char **argv)
{
    const ode_opts_t *o = w->o;
    hpc_h5file_t *f = hpc_out_file(w->out);
    const int8_t not_run = ODE_NOT_RUN;
    const double nan = NAN;
    dset_t d[NDSETS];
    dsets(w->o, d);
    for (int i = 0; i < NDATA; i++) {
        hsize_t dims[3];
        dims_of(o, i, dims);
        /* x0 and y declare NaN as their fill (missing never reads as a
         * value) without writing it: every row is written once computed,
         * and a .partial's rows not yet computed have status -128 */
        const void *fill = i == 6 ? (const void *)&not_run : i == 1 || i == 2 ? (const void *)&nan : NULL;
        int flags = HPC_H5_ALLOC_EARLY | (i == 1 || i == 2 ? HPC_H5_FILL_NEVER : 0);
        HPC_TRY(hpc_h5_dataset_create(f, d[i].name, d[i].type, d[i].nd, dims, NULL, flags, fill, handle(w, i)));
    }
    HPC_TRY(write_coords(w, tgrid));
    HPC_TRY(create_events(w));
    HPC_TRY(chunk_scale(w));
    HPC_TRY(write_attrs(w, hpc_h5_id(f)));
    HPC_TRY(hpc_out_ready(w->out, argc, argv));
    return 0;
}

/* A resumed file: every dataset there, with the right shape and type. */
static int open_layout(ode_out_t *w)
{
    hpc_h5file_t *f = hpc_out_file(w->out);
    dset_t d[NDSETS];
    dsets(w->o, d);
    for (int i = 0; i < NDSETS; i++) {
        hsize_t dims[3];
        dims_of(w->o, i, dims);
        HPC_TRY(hpc_h5_dataset_open(f, d[i].name, d[i].nd, dims, handle(w, i)));
        HPC_TRY(hpc_h5_dataset_check_type(*handle(w, i), d[i].name, d[i].cls, d[i].size));
    }
    return open_events(w);
}

static void close_datasets(ode_out_t *w)
{
    for (int i = 0; i < NDSETS; i++)
        if (*handle(w, i) >= 0) {
            H5Dclose(*handle(w, i));
            *handle(w, i) = H5I_INVALID_HID;
        }
    for (int e = 0; e < w->nev; e++)
        for (int k = 0; k < ODE_EVROWS; k++)
            if (w->evd[e][k] >= 0) {
                H5Dclose(w->evd[e][k]);
                w->evd[e][k] = H5I_INVALID_HID;
            }
}

ode_out_t *ode_out_open(const ode_opts_t *o, int argc, char **argv, const double *tgrid)
{
    ode_out_t *w = calloc(1, sizeof *w);
    if (!w) hpc_app_fatal(HPC_EXIT_DATA, "out of memory");
    w->o = o;
    w->nev = o->sys->nev;
    for (int i = 0; i < NDSETS; i++) *handle(w, i) = H5I_INVALID_HID;
    for (int e = 0; e < ODE_MAXEV; e++)
        for (int k = 0; k < ODE_EVROWS; k++) w->evd[e][k] = H5I_INVALID_HID;
    int64_t nchunks = (o->n + o->chunk - 1) / o->chunk;
    /* what the finished file will take: the data, and a little metadata */
    double es = o->dtype == ODE_F32 ? 4 : 8;
    double evbytes = (double)o->sys->nev * (4 + (double)o->max_events * (8 + o->dim * es));
    double bytes = (double)o->n * ((double)o->nt * o->dim * es + o->dim * es + 21 + evbytes) + (double)nchunks * 17 +
                   65536;
    int mode = o->resume ? HPC_OUT_RESUME : o->force ? HPC_OUT_FORCE : HPC_OUT_NEW;
    int rc = hpc_out_open(o->out, hpc_comm_world(), mode, hpc_app_key(), nchunks, "stats/done", bytes,
                          &w->out);
    hpc_app_agree_rc(rc, HPC_EXIT_DATA, NULL);
    int st = hpc_out_state(w->out);
    if (st == HPC_OUT_CREATED) {
        rc = create_layout(w, tgrid, argc, argv);
        hpc_app_agree_rc(rc, HPC_EXIT_DATA, "cannot write the output");
    } else if (st == HPC_OUT_RESUMED) {
        rc = open_layout(w);
        hpc_app_agree_rc(rc, HPC_EXIT_DATA, "--resume: the file does not have hpc-odegen's layout");
    }
    if (st != HPC_OUT_COMPLETE) hpc_app_agree_rc(ode_rows_open(w), HPC_EXIT_DATA, "the writer");
    return w;
}

int ode_out_complete(const ode_out_t *w)
{
    return hpc_out_state(w->out) == HPC_OUT_COMPLETE;
}

const uint8_t *ode_out_done(const ode_out_t *w, int64_t *nchunks, int64_t *ndone)
{
    *nchunks = (w->o->n + w->o->chunk - 1) / w->o->chunk;
    *ndone = hpc_out_ndone(w->out);
    return hpc_out_done(w->out);
}

int ode_out_totals(ode_out_t *w, int64_t *failed, int64_t *steps, int64_t fails_by[4], int64_t *stopped)
{
    const int64_t n = w->o->n, slice = 1 << 20;
    int rank = hpc_rank(), size = hpc_size();
    int64_t lo = n * rank / size, hi = n * (rank + 1) / size;
    int64_t most = (n + size - 1) / size;
    int64_t loc[7] = {0, 0, 0, 0, 0, 0, 0};
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
            if (stt[i] < ODE_OK) {
                loc[1]++;
                if (stt[i] >= -3 && stt[i] <= -1)
                    loc[1 - stt[i]]++;
            }
            loc[6] += stt[i] == ODE_EVENT;
        }
    }
    free(ns);
    free(stt);
    int64_t tot[7];
    HPC_MPI(MPI_Allreduce(loc, tot, 7, MPI_INT64_T, MPI_SUM, hpc_comm_world()));
    *stopped = tot[6];
    *steps = tot[0];
    *failed = tot[1];
    for (int k = 0; k < 3; k++)
        fails_by[k] = tot[2 + k];
    fails_by[3] = tot[1] - tot[2] - tot[3] - tot[4];
    return 0;
}

int ode_out_finish(ode_out_t *w, double wall, int ok, int argc, char **argv)
{
    if (ode_out_drain(w) < 0) ok = 0;
    close_datasets(w);
    int rc = hpc_out_finish(w->out, ok, wall, argc, argv);
    ode_rows_close(w);
    free(w);
    return rc;
}
