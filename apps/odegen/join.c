/* join.c - --join N: the shards of a job array made one file.
 *
 * sbatch --array=0-7 batch/odegen.sh --out ode.h5 ... runs hpc-odegen
 * --shard I/8 --out ode.h5 in each task, which writes
 * ode-shard000I-of0008.h5 (ode_shard_name); every shard draws the initial
 * conditions of its own global trajectory indices, so the union is one big
 * run's data.  --join 8 --out ode.h5 checks that all eight are complete
 * and were made with the same options, then writes ode.h5 whose
 * per-trajectory datasets are HDF5 virtual datasets over the shards' rows
 * (relative file names: the folder may be moved as a whole).  Any HDF5
 * reader (h5py, h5dump; libhpc's readers through the serial driver, see
 * hpc_h5_open) sees one /y.  Where a shard is absent, the virtual
 * datasets read as their fill values, chosen so that nothing missing
 * looks valid: NaN for /x0 and /y, status -127 (missing), -1 for the
 * counts and /traj; libhpc's readers refuse such a file outright.  The
 * dimension scales are made anew in OUT (a scale's references cannot
 * point into another file).  Rank 0 does the work; the others hear the
 * verdict.
 */
#include "config.h"
#include "hpc_app_h5.h"

#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "odegen.h"

/* the datasets that hold one row per trajectory, and what a row of an
 * absent shard reads as */
static const struct {
    const char *name;
    double fill;          /* converted to the dataset's type */
} ROWS[] = {{"x0", NAN}, {"y", NAN}, {"traj", -1}, {"stats/nsteps", -1}, {"stats/nfev", -1},
            {"stats/nrejected", -1}, {"stats/status", ODE_MISSING}};
#define NROWS (int)(sizeof ROWS / sizeof ROWS[0])

void ode_shard_name(const char *out, int64_t i, int64_t n, char *buf, size_t len)
{
    size_t l = strlen(out);
    int h5 = l > 3 && !strcmp(out + l - 3, ".h5");
    snprintf(buf, len, "%.*s-shard%04lld-of%04lld%s", (int)(h5 ? l - 3 : l), out, (long long)i, (long long)n,
             h5 ? ".h5" : "");
}

/* the options key less the fields that differ between shards */
static void strip_key(const char *key, char *buf, size_t len)
{
    size_t k = 0;
    for (const char *p = key; *p && k + 1 < len;) {
        size_t w = strcspn(p, ";");
        if (strncmp(p, "shard=", 6) && strncmp(p, "chunk=", 6))
            k += (size_t)snprintf(buf + k, len - k, "%s%.*s", k ? ";" : "", (int)w, p);
        p += w + (p[w] == ';');
    }
    if (k < len) buf[k] = '\0';
}

typedef struct {
    int64_t n_total, rows;      /* all trajectories; what this shard holds */
    int64_t first;              /* its first trajectory */
    char key[4096];             /* its options, less shard and chunk */
} shard_t;

/* Shard i of n at path: its counts and key into *s; HPC_ERR_DATA (or the
 * open's code) with the cause where it is not that shard. */
static int read_shard(const char *path, int64_t i, int64_t n, shard_t *s)
{
    char partial[4200];
    snprintf(partial, sizeof partial, "%s.partial", path);
    if (access(path, R_OK) != 0) {
        int part = access(partial, F_OK) == 0;
        return HPC_ERR(HPC_ERR_DATA, "shard %lld of %lld is %s (%.900s%s)", (long long)i, (long long)n,
                       part ? "not complete" : "missing", path, part ? ".partial exists" : "");
    }
    hpc_h5file_t *f;
    int rc = hpc_h5_open(path, MPI_COMM_SELF, 0, 0, &f);
    if (rc < 0) return HPC_ERR(rc, "shard %lld: %s", (long long)i, hpc_last_cause());
    hid_t id = hpc_h5_id(f);
    int64_t si = -1, sn = -1;
    char *key = NULL;
    rc = hpc_h5_attr_get_int64(id, "shard", &si) | hpc_h5_attr_get_int64(id, "shards", &sn) |
         hpc_h5_attr_get_int64(id, "first", &s->first) | hpc_h5_attr_get_int64(id, "n", &s->rows) |
         hpc_h5_attr_get_int64(id, "n_total", &s->n_total) | hpc_h5_attr_get_string(id, "options", &key);
    hpc_h5_close(f);
    if (rc < 0 || si != i || sn != n) {
        free(key);
        return HPC_ERR(HPC_ERR_DATA, "%s is not shard %lld of %lld of an hpc-odegen run (made without --shard "
                       "%lld/%lld?)", path, (long long)i, (long long)n, (long long)i, (long long)n);
    }
    strip_key(key, s->key, sizeof s->key);
    free(key);
    return 0;
}

/* the dimension scales' own attributes: object references into the
 * shard (never valid in another file) and the scale marks, made anew */
static int scale_attr(const char *name)
{
    return !strcmp(name, "DIMENSION_LIST") || !strcmp(name, "REFERENCE_LIST") || !strcmp(name, "CLASS") ||
           !strcmp(name, "NAME");
}

/* every attribute of object src onto object dst, but the scales' */
static herr_t copy_attrs(hid_t src, hid_t dst)
{
    H5O_info_t oi;
    herr_t e = H5Oget_info2(src, &oi, H5O_INFO_NUM_ATTRS);
    for (hsize_t i = 0; e >= 0 && i < oi.num_attrs; i++) {
        hid_t a = H5Aopen_by_idx(src, ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT, H5P_DEFAULT);
        char name[256];
        H5Aget_name(a, sizeof name, name);
        if (scale_attr(name)) {
            H5Aclose(a);
            continue;
        }
        hid_t t = H5Aget_type(a), sp = H5Aget_space(a), mt = H5Tget_native_type(t, H5T_DIR_DEFAULT);
        hssize_t np = H5Sget_simple_extent_npoints(sp);
        void *buf = calloc(1, H5Tget_size(mt) * (size_t)(np > 0 ? np : 1) + 16);
        e = buf && H5Aread(a, mt, buf) >= 0 ? 0 : -1;
        hid_t b = e < 0 ? -1 : H5Acreate2(dst, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
        if (b >= 0) e = H5Awrite(b, mt, buf), H5Aclose(b);
        if (H5Tis_variable_str(t) > 0) H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, buf);
        free(buf), H5Tclose(mt), H5Sclose(sp), H5Tclose(t), H5Aclose(a);
    }
    return e;
}

/* /name over every shard's rows, as one virtual dataset */
static int virtual_rows(hid_t file, const char *name, double fill, const shard_t *sh, int64_t n,
                        const char *const *files)
{
    hid_t src = H5Fopen(files[0], H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d0 = src < 0 ? -1 : H5Dopen2(src, name, H5P_DEFAULT);
    hid_t type = d0 < 0 ? -1 : H5Dget_type(d0), sp0 = d0 < 0 ? -1 : H5Dget_space(d0);
    hsize_t dims[3] = {0, 0, 0}, start[3] = {0, 0, 0};
    int nd = sp0 < 0 ? -1 : H5Sget_simple_extent_dims(sp0, dims, NULL);
    if (nd < 1) {
        if (d0 >= 0) H5Dclose(d0);
        if (src >= 0) H5Fclose(src);
        return HPC_ERR(HPC_ERR_HDF5, "cannot read /%s of %s", name, files[0]);
    }
    dims[0] = (hsize_t)sh[0].n_total;
    hid_t vspace = H5Screate_simple(nd, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    herr_t e = H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fill);
    for (int64_t i = 0; i < n && e >= 0; i++) {
        hsize_t count[3] = {(hsize_t)sh[i].rows, dims[1], dims[2]};
        hid_t sspace = H5Screate_simple(nd, count, NULL);
        start[0] = (hsize_t)sh[i].first;
        char base[4096];
        snprintf(base, sizeof base, "%s", files[i]);
        e = H5Sselect_hyperslab(vspace, H5S_SELECT_SET, start, NULL, count, NULL);
        /* relative to the joined file's folder: the folder may move */
        if (e >= 0) e = H5Pset_virtual(dcpl, vspace, basename(base), name, sspace);
        H5Sclose(sspace);
    }
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), full = H5Screate_simple(nd, dims, NULL);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t d = e < 0 ? -1 : H5Dcreate2(file, name, type, full, lcpl, dcpl, H5P_DEFAULT);
    int rc = d < 0 || copy_attrs(d0, d) < 0 ? hpc_error_hdf5(__FILE__, __LINE__, "H5Dcreate2 (virtual)") : 0;
    if (d >= 0) H5Dclose(d);
    H5Dclose(d0);
    H5Fclose(src);
    H5Sclose(full), H5Pclose(lcpl), H5Pclose(dcpl), H5Sclose(vspace), H5Sclose(sp0), H5Tclose(type);
    return rc;
}

/* dataset name of src copied into dst, its attributes but the scales' */
static herr_t copy_small(hid_t src, hid_t dst, const char *name)
{
    hid_t ocpl = H5Pcreate(H5P_OBJECT_COPY);
    herr_t e = ocpl < 0 ? -1 : H5Pset_copy_object(ocpl, H5O_COPY_WITHOUT_ATTR_FLAG);
    if (e >= 0) e = H5Ocopy(src, name, dst, name, ocpl, H5P_DEFAULT);
    if (ocpl >= 0) H5Pclose(ocpl);
    hid_t s = e < 0 ? -1 : H5Dopen2(src, name, H5P_DEFAULT), d = e < 0 ? -1 : H5Dopen2(dst, name, H5P_DEFAULT);
    if (s < 0 || d < 0 || copy_attrs(s, d) < 0) e = -1;
    if (s >= 0) H5Dclose(s);
    if (d >= 0) H5Dclose(d);
    return e;
}

/* copy /t, /component and the root attributes of shard 0, then fix n and
 * the shard fields */
static int copy_common(hid_t file, const char *shard0, int64_t n_total, int64_t n)
{
    hid_t src = H5Fopen(shard0, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (src < 0) return hpc_error_hdf5(__FILE__, __LINE__, "H5Fopen");
    herr_t e = copy_small(src, file, "t");
    if (e >= 0) e = copy_small(src, file, "component");
    if (e >= 0) e = copy_attrs(src, file);
    H5Fclose(src);
    if (e < 0) return hpc_error_hdf5(__FILE__, __LINE__, "copying shard 0's attributes");
    HPC_TRY(hpc_h5_attr_set_int64(file, "n", n_total));
    HPC_TRY(hpc_h5_attr_set_int64(file, "first", 0));
    HPC_TRY(hpc_h5_attr_set_int64(file, "shard", 0));
    HPC_TRY(hpc_h5_attr_set_int64(file, "shards", 1));
    HPC_TRY(hpc_h5_attr_set_int64(file, "joined_shards", n));
    return 0;
}

/* the joined file's scales, as a single run's */
static int scales(hid_t file)
{
    const char *names[9] = {"traj", "t", "component", "x0", "y", "stats/nsteps", "stats/nfev", "stats/nrejected",
                            "stats/status"};
    hid_t d[9];
    int k = 0;
    while (k < 9 && (d[k] = H5Dopen2(file, names[k], H5P_DEFAULT)) >= 0) k++;
    int rc = k < 9 ? hpc_error_hdf5(__FILE__, __LINE__, "H5Dopen2") : ode_scales(d[0], d[1], d[2], d[3], d[4], d + 5);
    while (k > 0) H5Dclose(d[--k]);
    return rc;
}

/* What OUT will take, at most: shard 0's /t and /component copied (twice
 * over, for HDF5's own slack), a generous 1 KiB per mapping of each
 * virtual dataset (a file name, a dataset name and two selections; the
 * events' three datasets per event too),
 * and the root's attributes and metadata.  Reserved before HDF5 writes a
 * byte, as every other output: on a full disk HDF5 1.10 crashes inside
 * its own calls (hpc_h5_create_reserved); what is not used is given back
 * at the end. */
static double join_bytes(const char *shard0, int64_t n)
{
    double small = 0;
    hid_t src = H5Fopen(shard0, H5F_ACC_RDONLY, H5P_DEFAULT);
    for (int k = 0; src >= 0 && k < 2; k++) {
        hid_t d = H5Dopen2(src, k ? "component" : "t", H5P_DEFAULT);
        if (d >= 0) small += (double)H5Dget_storage_size(d) + 4096;
        if (d >= 0) H5Dclose(d);
    }
    if (src >= 0) H5Fclose(src);
    H5Eclear2(H5E_DEFAULT);
    return 262144.0 + 2 * small + (double)n * (NROWS + 3 * ODE_MAXEV) * 1024.0;
}

/* the events' datasets of shard 0 (events/NAME/count, t, y), as virtual
 * datasets over every shard's rows, with their scales: traj, the copied
 * events/occurrence, component */
static herr_t event_name(hid_t g, const char *name, const H5L_info_t *info, void *arg)
{
    (void)g, (void)info;
    char (*names)[200] = arg;
    int k = 0;
    while (k < ODE_MAXEV && names[k][0]) k++;
    if (k < ODE_MAXEV && strcmp(name, "occurrence")) snprintf(names[k], sizeof names[k], "%s", name);
    return 0;
}

static int virtual_events(hid_t file, const shard_t *sh, int64_t n, const char *const *files)
{
    char names[ODE_MAXEV][200];
    memset(names, 0, sizeof names);
    hid_t src = H5Fopen(files[0], H5F_ACC_RDONLY, H5P_DEFAULT);
    if (src < 0) return hpc_error_hdf5(__FILE__, __LINE__, "H5Fopen");
    herr_t e = 0;
    if (H5Lexists(src, "events", H5P_DEFAULT) > 0) {
        e = H5Literate_by_name(src, "events", H5_INDEX_NAME, H5_ITER_INC, NULL, event_name, names, H5P_DEFAULT);
        hid_t g = e < 0 ? -1 : H5Gcreate2(file, "events", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        e = g < 0 ? -1 : H5Gclose(g);
        if (e >= 0) e = copy_small(src, file, "events/occurrence");
    }
    H5Fclose(src);
    if (e < 0) return hpc_error_hdf5(__FILE__, __LINE__, "the events of shard 0");
    if (!names[0][0]) return 0;
    const char *sets[3] = {"count", "t", "y"};
    const double fill[3] = {-1, NAN, NAN};
    hid_t traj = H5Dopen2(file, "traj", H5P_DEFAULT), comp = H5Dopen2(file, "component", H5P_DEFAULT);
    hid_t occ = H5Dopen2(file, "events/occurrence", H5P_DEFAULT);
    int rc = traj < 0 || comp < 0 || occ < 0 ? hpc_error_hdf5(__FILE__, __LINE__, "H5Dopen2") : 0;
    if (!rc) rc = hpc_h5_scale_set(occ, "occurrence");
    for (int k = 0; !rc && k < ODE_MAXEV && names[k][0]; k++)
        for (int j = 0; !rc && j < 3; j++) {
            char path[512];
            snprintf(path, sizeof path, "events/%.199s/%s", names[k], sets[j]);
            rc = virtual_rows(file, path, fill[j], sh, n, files);
            hid_t d = rc ? -1 : H5Dopen2(file, path, H5P_DEFAULT);
            if (!rc && d < 0) rc = hpc_error_hdf5(__FILE__, __LINE__, "H5Dopen2");
            if (!rc) rc = hpc_h5_scale_attach(d, traj, 0);
            if (!rc && j) rc = hpc_h5_scale_attach(d, occ, 1);
            if (!rc && j == 2) rc = hpc_h5_scale_attach(d, comp, 2);
            if (d >= 0) H5Dclose(d);
        }
    if (traj >= 0) H5Dclose(traj);
    if (comp >= 0) H5Dclose(comp);
    if (occ >= 0) H5Dclose(occ);
    return rc;
}

/* rank 0: check the shards, write OUT (finished only if whole); 0 or an
 * HPC_ERR_* with the cause */
static int join(const ode_opts_t *o, int argc, char **argv)
{
    int64_t n = o->join;
    shard_t *sh = calloc((size_t)n, sizeof *sh);
    char **files = calloc((size_t)n, sizeof *files);
    hpc_h5file_t *f = NULL;
    int rc = 0;
    if (!sh || !files) HPC_ERR_GOTO(rc, out, HPC_ERR_NOMEM, "out of memory for %lld shards", (long long)n);
    for (int64_t i = 0; i < n; i++) {
        if (!(files[i] = malloc(4200))) HPC_ERR_GOTO(rc, out, HPC_ERR_NOMEM, "out of memory");
        ode_shard_name(o->out, i, n, files[i], 4200);
        HPC_TRY_GOTO(read_shard(files[i], i, n, &sh[i]), rc, out);
        if (i > 0 && (strcmp(sh[i].key, sh[0].key) || sh[i].n_total != sh[0].n_total))
            HPC_ERR_GOTO(rc, out, HPC_ERR_DATA, "shard %lld was made with other options than shard 0", (long long)i);
        if (sh[i].first != (i ? sh[i - 1].first + sh[i - 1].rows : 0))
            HPC_ERR_GOTO(rc, out, HPC_ERR_DATA, "shard %lld does not start where shard %lld ends", (long long)i,
                         (long long)i - 1);
    }
    if (sh[n - 1].first + sh[n - 1].rows != sh[0].n_total)
        HPC_ERR_GOTO(rc, out, HPC_ERR_DATA, "the shards hold %lld of %lld trajectories",
                     (long long)(sh[n - 1].first + sh[n - 1].rows), (long long)sh[0].n_total);
    HPC_TRY_GOTO(hpc_h5_create_reserved(o->out, MPI_COMM_SELF, o->force ? HPC_H5_OVERWRITE : HPC_H5_FAIL_IF_EXISTS,
                                        join_bytes(files[0], n), &f),
                 rc, out);
    rc = copy_common(hpc_h5_id(f), files[0], sh[0].n_total, n);
    for (int k = 0; rc == 0 && k < NROWS; k++)
        rc = virtual_rows(hpc_h5_id(f), ROWS[k].name, ROWS[k].fill, sh, n, (const char *const *)files);
    if (rc == 0) rc = scales(hpc_h5_id(f));
    if (rc == 0) rc = virtual_events(hpc_h5_id(f), sh, n, (const char *const *)files);
    if (rc == 0) rc = hpc_h5_provenance(f, hpc_h5_id(f), ODEGEN_PROG, argc, argv);
    if (rc < 0) rc = HPC_ERR(rc, "writing %s: %s", o->out, hpc_last_cause());
out:
    if (f) {
        int fin = hpc_h5_finish(f, rc == 0);
        if (fin < 0 && rc == 0) rc = fin;
    }
    for (int64_t i = 0; files && i < n; i++) free(files[i]);
    free(files);
    free(sh);
    return rc;
}

void ode_join(const ode_opts_t *o, int argc, char **argv)
{
    int rc = hpc_rank() == 0 ? join(o, argc, argv) : 0;
    hpc_app_agree_rc(rc, HPC_EXIT_DATA, "--join");
    char shard0[4200];
    ode_shard_name(o->out, 0, o->join, shard0, sizeof shard0);
    hpc_app_summary("%s: %lld shards joined (%s ... ) as virtual datasets", o->out, (long long)o->join, shard0);
}
