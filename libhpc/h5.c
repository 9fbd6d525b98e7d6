/* h5.c - parallel HDF5 helpers.
 *
 * Files are written as PATH.partial through the MPI-IO driver and renamed
 * to PATH by rank 0 only once every rank reports success, so a crashed or
 * failed job never leaves a file under the final name that looks complete.
 * HDF5's own error printing is turned off; its error stack is translated
 * into one libhpc error instead.
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "hpc_h5.h"
#include "internal.h"

struct hpc_h5file {
    hid_t id;
    MPI_Comm comm;
    int rank;
    int created;          /* from hpc_h5_create: rename on finish */
    char *path;           /* final name */
    char *open_path;      /* the name actually open (.partial or not) */
};

static void quiet(void)
{
    static int done;
    if (!done) H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    done = 1;
}

typedef struct { char api[128]; char detail[512]; int n; } walk_t;

static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    walk_t *w = data;
    if (n == 0) snprintf(w->api, sizeof w->api, "%s", e->func_name ? e->func_name : "?");
    /* walking downward, the last frame is the most specific cause */
    snprintf(w->detail, sizeof w->detail, "%s", e->desc ? e->desc : "");
    w->n++;
    return 0;
}

int hpc_error_hdf5(const char *file, int line, const char *call)
{
    walk_t w;
    memset(&w, 0, sizeof w);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, &w);
    H5Eclear2(H5E_DEFAULT);
    if (!w.n) return hpc_error_set(HPC_ERR_HDF5, file, line, call, "HDF5 call failed");
    return hpc_error_set(HPC_ERR_HDF5, file, line, call, "%s: %s", w.api, w.detail);
}

static char *cat(const char *a, const char *b)
{
    char *s = malloc(strlen(a) + strlen(b) + 1);
    if (s) strcat(strcpy(s, a), b);
    return s;
}

/* Rank 0 looks at the file system and everybody hears the answer, so all
 * ranks take the same branch. */
static int agreed_errno(MPI_Comm comm, int rank, int (*probe)(const char *), const char *path)
{
    int err = 0;
    if (rank == 0) err = probe(path);
    MPI_Bcast(&err, 1, MPI_INT, 0, comm);
    return err;
}

static int probe_exists(const char *p) { return access(p, F_OK) == 0 ? EEXIST : 0; }
static int probe_readable(const char *p) { return access(p, R_OK) == 0 ? 0 : errno; }

static void file_free(hpc_h5file_t *f)
{
    if (!f) return;
    if (f->comm != MPI_COMM_NULL) MPI_Comm_free(&f->comm);
    free(f->path);
    free(f->open_path);
    free(f);
}

static int file_new(const char *path, MPI_Comm comm, int created, const char *suffix, hpc_h5file_t **out)
{
    quiet();
    if (!path || !*path) return HPC_ERR(HPC_ERR_ARG, "empty file name");
    hpc_h5file_t *f = calloc(1, sizeof *f);
    if (!f) return HPC_ERR(HPC_ERR_NOMEM, "file handle");
    f->id = H5I_INVALID_HID;
    f->comm = MPI_COMM_NULL;
    f->created = created;
    f->path = strdup(path);
    f->open_path = cat(path, suffix);
    int rc = MPI_Comm_dup(comm, &f->comm);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(f->comm, &f->rank);
    if (rc != MPI_SUCCESS) {
        file_free(f);
        return hpc_error_mpi(rc, __FILE__, __LINE__, "MPI_Comm_dup");
    }
    if (!f->path || !f->open_path) {
        file_free(f);
        return HPC_ERR(HPC_ERR_NOMEM, "file name");
    }
    *out = f;
    return 0;
}

static hid_t mpio_fapl(MPI_Comm comm)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0) return fapl;
    if (H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL) < 0 ||
        /* metadata reads/writes collective: no metadata storms at scale */
        H5Pset_all_coll_metadata_ops(fapl, 1) < 0 || H5Pset_coll_metadata_write(fapl, 1) < 0) {
        H5Pclose(fapl);
        return H5I_INVALID_HID;
    }
    return fapl;
}

int hpc_h5_create(const char *path, MPI_Comm comm, int flags, hpc_h5file_t **out)
{
    hpc_h5file_t *f;
    HPC_TRY(file_new(path, comm, 1, ".partial", &f));
    if (!(flags & HPC_H5_OVERWRITE) && agreed_errno(f->comm, f->rank, probe_exists, path)) {
        file_free(f);
        return HPC_ERR(HPC_ERR_IO, "'%s' exists (not overwriting it)", path);
    }
    hid_t fapl = mpio_fapl(f->comm);
    if (fapl >= 0) f->id = H5Fcreate(f->open_path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (fapl < 0 || f->id < 0) {
        int rc = hpc_error_hdf5(__FILE__, __LINE__, "H5Fcreate");
        hpc_error_set(rc, __FILE__, __LINE__, __func__, "cannot create '%s': %s", f->open_path,
                      strchr(hpc_last_error(), ':') ? strchr(hpc_last_error(), ':') + 2 : "");
        if (fapl >= 0) H5Pclose(fapl);
        file_free(f);
        return rc;
    }
    H5Pclose(fapl);
    *out = f;
    return 0;
}

int hpc_h5_open(const char *path, MPI_Comm comm, int partial, int writable, hpc_h5file_t **out)
{
    hpc_h5file_t *f;
    HPC_TRY(file_new(path, comm, partial, partial ? ".partial" : "", &f));
    int err = agreed_errno(f->comm, f->rank, probe_readable, f->open_path);
    if (err) {
        int rc = HPC_ERR(HPC_ERR_IO, "cannot open '%s': %s", f->open_path, strerror(err));
        file_free(f);
        return rc;
    }
    hid_t fapl = mpio_fapl(f->comm);
    if (fapl >= 0) f->id = H5Fopen(f->open_path, writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl);
    if (fapl >= 0) H5Pclose(fapl);
    if (f->id < 0) {
        hpc_error_hdf5(__FILE__, __LINE__, "H5Fopen");
        int rc = HPC_ERR(HPC_ERR_HDF5, "cannot open '%s' as HDF5 (not an HDF5 file, or damaged)", f->open_path);
        file_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

hid_t hpc_h5_id(const hpc_h5file_t *f)
{
    return f ? f->id : H5I_INVALID_HID;
}

const char *hpc_h5_path(const hpc_h5file_t *f)
{
    return f ? f->open_path : NULL;
}

int hpc_h5_close(hpc_h5file_t *f)
{
    if (!f) return 0;
    herr_t e = H5Fclose(f->id);
    file_free(f);
    if (e < 0) return hpc_error_hdf5(__FILE__, __LINE__, "H5Fclose");
    return 0;
}

int hpc_h5_finish(hpc_h5file_t *f, int ok)
{
    if (!f) return HPC_ERR(HPC_ERR_ARG, "NULL file");
    int closed = H5Fclose(f->id) >= 0;
    if (!closed) hpc_error_hdf5(__FILE__, __LINE__, "H5Fclose");
    int mine = ok && closed, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, f->comm);
    int err = 0;
    if (all && f->created) {
        if (f->rank == 0 && rename(f->open_path, f->path) != 0) err = errno;
        MPI_Bcast(&err, 1, MPI_INT, 0, f->comm);
    }
    int rc = 0;
    if (!all)
        rc = HPC_ERR(HPC_ERR_IO, "not every rank succeeded: '%s' not completed%s", f->path,
                     f->created ? " (partial output kept as .partial)" : "");
    else if (err)
        rc = HPC_ERR(HPC_ERR_IO, "rename '%s' -> '%s': %s", f->open_path, f->path, strerror(err));
    file_free(f);
    return rc;
}

int hpc_h5_dataset_create(hpc_h5file_t *f, const char *name, hid_t type, int ndims,
                          const hsize_t *dims, const hsize_t *chunk, hid_t *out)
{
    if (!f || !name || ndims < 1 || ndims > 8 || !dims)
        return HPC_ERR(HPC_ERR_ARG, "bad dataset arguments for '%s'", name ? name : "(null)");
    hid_t space = H5Screate_simple(ndims, dims, NULL);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t d = H5I_INVALID_HID;
    if (space >= 0 && lcpl >= 0 && dcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) >= 0 &&
        (!chunk || H5Pset_chunk(dcpl, ndims, chunk) >= 0))
        d = H5Dcreate2(f->id, name, type, space, lcpl, dcpl, H5P_DEFAULT);
    int rc = d < 0 ? hpc_error_hdf5(__FILE__, __LINE__, "H5Dcreate2") : 0;
    if (dcpl >= 0) H5Pclose(dcpl);
    if (lcpl >= 0) H5Pclose(lcpl);
    if (space >= 0) H5Sclose(space);
    if (rc) return hpc_error_set(rc, __FILE__, __LINE__, __func__, "cannot create dataset '%s' in '%s'",
                                 name, f->open_path);
    *out = d;
    return 0;
}

int hpc_h5_dataset_open(hpc_h5file_t *f, const char *name, int ndims, const hsize_t *expect, hid_t *out)
{
    if (!f || !name) return HPC_ERR(HPC_ERR_ARG, "NULL file or name");
    if (H5Lexists(f->id, name, H5P_DEFAULT) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return HPC_ERR(HPC_ERR_DATA, "'%s' has no dataset '%s'", f->open_path, name);
    }
    hid_t d = H5Dopen2(f->id, name, H5P_DEFAULT);
    if (d < 0) return hpc_error_hdf5(__FILE__, __LINE__, "H5Dopen2");
    hid_t space = H5Dget_space(d);
    hsize_t dims[8];
    int nd = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    if (nd >= 0 && nd <= 8) H5Sget_simple_extent_dims(space, dims, NULL);
    if (space >= 0) H5Sclose(space);
    int bad = nd != ndims;
    for (int i = 0; !bad && expect && i < nd; i++) bad = expect[i] && expect[i] != dims[i];
    if (bad) {
        H5Dclose(d);
        return HPC_ERR(HPC_ERR_DATA, "dataset '%s' in '%s' has the wrong shape (%d dims)", name,
                       f->open_path, nd);
    }
    *out = d;
    return 0;
}

static int rows_io(hid_t dset, hid_t memtype, hsize_t row0, hsize_t nrows, void *buf, int write,
                   H5FD_mpio_xfer_t mode)
{
    hid_t fspace = H5Dget_space(dset);
    if (fspace < 0) return hpc_error_hdf5(__FILE__, __LINE__, "H5Dget_space");
    hsize_t dims[8], start[8] = {0}, count[8];
    int nd = H5Sget_simple_extent_ndims(fspace);
    if (nd < 1 || nd > 8) {
        H5Sclose(fspace);
        return HPC_ERR(HPC_ERR_DATA, "dataset of rank %d", nd);
    }
    H5Sget_simple_extent_dims(fspace, dims, NULL);
    if (row0 + nrows > dims[0]) {
        H5Sclose(fspace);
        return HPC_ERR(HPC_ERR_ARG, "rows %llu..%llu beyond %llu rows", (unsigned long long)row0,
                       (unsigned long long)(row0 + nrows), (unsigned long long)dims[0]);
    }
    memcpy(count, dims, sizeof(hsize_t) * nd);
    start[0] = row0;
    count[0] = nrows;
    hid_t mspace = H5Screate_simple(nd, count, NULL);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    herr_t e = mspace < 0 || dxpl < 0 ? -1 : H5Pset_dxpl_mpio(dxpl, mode);
    if (e >= 0 && nrows == 0) {
        /* still take part in the collective call, with nothing selected */
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
    H5Sclose(fspace);
    return rc;
}

int hpc_h5_write_rows(hid_t d, hid_t t, hsize_t r0, hsize_t n, const void *buf)
{
    HPC_TRY(rows_io(d, t, r0, n, (void *)buf, 1, H5FD_MPIO_COLLECTIVE));
    return 0;
}

int hpc_h5_read_rows(hid_t d, hid_t t, hsize_t r0, hsize_t n, void *buf)
{
    HPC_TRY(rows_io(d, t, r0, n, buf, 0, H5FD_MPIO_COLLECTIVE));
    return 0;
}

int hpc_h5_write_rows_indep(hid_t d, hid_t t, hsize_t r0, hsize_t n, const void *buf)
{
    HPC_TRY(rows_io(d, t, r0, n, (void *)buf, 1, H5FD_MPIO_INDEPENDENT));
    return 0;
}

int hpc_h5_read_rows_indep(hid_t d, hid_t t, hsize_t r0, hsize_t n, void *buf)
{
    HPC_TRY(rows_io(d, t, r0, n, buf, 0, H5FD_MPIO_INDEPENDENT));
    return 0;
}

/* ---- attributes ---- */

static int attr_write(hid_t obj, const char *name, hid_t type, hid_t space, const void *buf)
{
    if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0)
        return hpc_error_hdf5(__FILE__, __LINE__, "H5Adelete");
    hid_t a = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    herr_t e = a < 0 ? -1 : H5Awrite(a, type, buf);
    int rc = e < 0 ? hpc_error_hdf5(__FILE__, __LINE__, "H5Awrite") : 0;
    if (a >= 0) H5Aclose(a);
    if (rc) hpc_error_set(rc, __FILE__, __LINE__, __func__, "cannot write attribute '%s'", name);
    return rc;
}

static hid_t vlstr_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

int hpc_h5_attr_set_string(hid_t obj, const char *name, const char *value)
{
    hid_t t = vlstr_type(), s = H5Screate(H5S_SCALAR);
    int rc = attr_write(obj, name, t, s, &value);
    H5Sclose(s);
    H5Tclose(t);
    return rc;
}

static int attr_scalar(hid_t obj, const char *name, hid_t type, const void *v)
{
    hid_t s = H5Screate(H5S_SCALAR);
    int rc = attr_write(obj, name, type, s, v);
    H5Sclose(s);
    return rc;
}

int hpc_h5_attr_set_double(hid_t obj, const char *name, double v)
{
    return attr_scalar(obj, name, H5T_NATIVE_DOUBLE, &v);
}

int hpc_h5_attr_set_int64(hid_t obj, const char *name, int64_t v)
{
    return attr_scalar(obj, name, H5T_NATIVE_INT64, &v);
}

int hpc_h5_attr_set_doubles(hid_t obj, const char *name, const double *v, size_t n)
{
    hsize_t dim = n;
    hid_t s = H5Screate_simple(1, &dim, NULL);
    int rc = attr_write(obj, name, H5T_NATIVE_DOUBLE, s, v);
    H5Sclose(s);
    return rc;
}

static int attr_read(hid_t obj, const char *name, hid_t memtype, void *buf)
{
    if (H5Aexists(obj, name) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return HPC_ERR(HPC_ERR_DATA, "attribute '%s' is missing", name);
    }
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    herr_t e = a < 0 ? -1 : H5Aread(a, memtype, buf);
    if (a >= 0) H5Aclose(a);
    if (e < 0) {
        hpc_error_hdf5(__FILE__, __LINE__, "H5Aread");
        return HPC_ERR(HPC_ERR_DATA, "attribute '%s' cannot be read as the expected type", name);
    }
    return 0;
}

int hpc_h5_attr_get_string(hid_t obj, const char *name, char **out)
{
    hid_t t = vlstr_type();
    char *v = NULL;
    int rc = attr_read(obj, name, t, &v);
    H5Tclose(t);
    if (rc) return rc;
    char *copy = strdup(v ? v : "");
    H5free_memory(v);
    if (!copy) return HPC_ERR(HPC_ERR_NOMEM, "attribute '%s'", name);
    *out = copy;
    return 0;
}

int hpc_h5_attr_get_double(hid_t obj, const char *name, double *out)
{
    double v;
    HPC_TRY(attr_read(obj, name, H5T_NATIVE_DOUBLE, &v));
    *out = v;
    return 0;
}

int hpc_h5_attr_get_int64(hid_t obj, const char *name, int64_t *out)
{
    int64_t v;
    HPC_TRY(attr_read(obj, name, H5T_NATIVE_INT64, &v));
    *out = v;
    return 0;
}

int hpc_h5_attr_provenance(hid_t obj, const char *program, int argc, char **argv)
{
    char when[64] = "";
    int size = 1;
    const hpc_env_t *e = hpc_env();
    MPI_Comm comm = e ? e->world : MPI_COMM_WORLD;
    MPI_Comm_size(comm, &size);
    if (hpc_rank_hint() <= 0) {
        time_t t = time(NULL);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    }
    /* attribute writes are collective: every rank must pass rank 0's time */
    MPI_Bcast(when, sizeof when, MPI_CHAR, 0, comm);
    char *cmd = hpc_cmdline(argc, argv);
    if (!cmd) return HPC_ERR(HPC_ERR_NOMEM, "command line");
    int rc = hpc_h5_attr_set_string(obj, "program", program);
    if (!rc) rc = hpc_h5_attr_set_string(obj, "command_line", cmd);
    if (!rc) rc = hpc_h5_attr_set_string(obj, "hpckit_version", hpc_version());
    if (!rc) rc = hpc_h5_attr_set_int64(obj, "ranks", size);
    if (!rc) rc = hpc_h5_attr_set_string(obj, "created", when);
    free(cmd);
    if (rc) return hpc_error_push(rc, __FILE__, __LINE__, __func__);
    return 0;
}
