/* h5.c - parallel HDF5 helpers.
 *
 * Files are written as PATH.partial through the MPI-IO driver and renamed
 * to PATH by rank 0 only once every rank reports success and the data is
 * on disk, so a crashed or failed job never leaves a file under the final
 * name that looks complete.  The writer of PATH.partial holds an flock on
 * PATH.lock (released by the kernel if the process dies), so two runs
 * never write one output.  HDF5's own error printing is silenced inside
 * these functions only; its error stack becomes one libhpc error.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <hdf5_hl.h>
#include "hpc_h5.h"
#include "internal.h"

struct hpc_h5file {
    hid_t id;
    MPI_Comm comm;
    int rank;
    int writing;          /* PATH.partial being written: rename on finish */
    int serial;           /* opened with the serial (sec2) driver, not MPI-IO */
    int lockfd;           /* rank 0's hold on PATH.lock, -1 = none */
    int datafd;           /* for hpc_h5_sync_data, opened on first use */
    int reserved;         /* disk reserved beyond the end: trimmed on finish */
    int setup;            /* open as PATH.setup until hpc_h5_setup_done */
    char *path;           /* final name */
    char *open_path;      /* the name actually open (.partial or not) */
    char *lock_path;
};

/* ---- HDF5 error printing: off inside libhpc, as it was outside ---- */

static _Thread_local int quiet_depth;
static H5E_auto2_t user_fn;
static void *user_data;

static herr_t print_unless_quiet(hid_t stack, void *data)
{
    (void)data;
    if (quiet_depth > 0 || !user_fn) return 0;
    return user_fn(stack, user_data);
}

int hpc_h5_quiet_begin(void)
{
    static int installed;
    if (!installed) {
        /* chain to whatever printed before (HDF5's default printer) */
        H5Eget_auto2(H5E_DEFAULT, &user_fn, &user_data);
        H5Eset_auto2(H5E_DEFAULT, print_unless_quiet, NULL);
        installed = 1;
    }
    return ++quiet_depth;
}

void hpc_h5_quiet_end(int *unused)
{
    (void)unused;
    quiet_depth--;
}

/* First statement of every public function that calls HDF5. */
#define QUIET HPC_H5_QUIET

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
    QUIET;
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
/* an existing non-regular file (a device, a folder) is never replaced */
static int probe_regular(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && !S_ISREG(st.st_mode) ? EINVAL : 0;
}
/* the same for our own name (PATH.partial): a link there is replaced */
static int probe_own(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode) ? EINVAL : 0;
}

/* The files open with the serial driver (see choose_driver), by id: a
 * collective transfer on their datasets is made independent - HDF5
 * refuses MPI-IO collective settings there ("collective access for
 * MPI-based drivers only"), and each rank reads its own part anyway.
 * (Asking a file for its driver, H5Fget_access_plist, duplicates an
 * MPI-IO file's communicator: collective, so not possible inside an
 * independent read.) */
static hid_t *serial_ids;
static size_t nserial, capserial;

static int serial_add(hid_t id)
{
    if (nserial == capserial) {
        size_t cap = capserial ? 2 * capserial : 8;
        hid_t *p = realloc(serial_ids, cap * sizeof *p);
        if (!p) return HPC_ERR(HPC_ERR_NOMEM, "file table");
        serial_ids = p;
        capserial = cap;
    }
    serial_ids[nserial++] = id;
    return 0;
}

static void serial_del(hid_t id)
{
    for (size_t i = 0; i < nserial; i++)
        if (serial_ids[i] == id) {
            serial_ids[i] = serial_ids[--nserial];
            return;
        }
}

static void file_free(hpc_h5file_t *f)
{
    if (!f) return;
    if (f->serial) serial_del(f->id);
    if (f->datafd >= 0) close(f->datafd);
    hpc_lock_release(f->lock_path, f->lockfd);
    if (f->comm != MPI_COMM_NULL) MPI_Comm_free(&f->comm);
    free(f->path);
    free(f->open_path);
    free(f->lock_path);
    free(f);
}

static int file_new(const char *path, MPI_Comm comm, int writing, const char *suffix, hpc_h5file_t **out)
{
    if (!path || !*path) return HPC_ERR(HPC_ERR_ARG, "empty file name");
    hpc_h5file_t *f = calloc(1, sizeof *f);
    if (!f) return HPC_ERR(HPC_ERR_NOMEM, "file handle");
    f->id = H5I_INVALID_HID;
    f->comm = MPI_COMM_NULL;
    f->lockfd = f->datafd = -1;
    f->writing = writing;
    f->path = strdup(path);
    f->open_path = cat(path, suffix);
    f->lock_path = cat(path, ".lock");
    int rc = MPI_Comm_dup(comm, &f->comm);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(f->comm, &f->rank);
    if (rc != MPI_SUCCESS) {
        file_free(f);
        return hpc_error_mpi(rc, __FILE__, __LINE__, "MPI_Comm_dup");
    }
    if (!f->path || !f->open_path || !f->lock_path) {
        file_free(f);
        return HPC_ERR(HPC_ERR_NOMEM, "file name");
    }
    *out = f;
    return 0;
}

/* Rank 0 takes PATH.lock for the writer (all ranks learn the verdict;
 * lock.c). */
static int lock_take(hpc_h5file_t *f)
{
    char why[512] = "";
    if (f->rank == 0) {
        char who[128];
        int err = hpc_lock_take(f->lock_path, &f->lockfd, who, sizeof who);
        if (err == EWOULDBLOCK)
            snprintf(why, sizeof why, "another run (pid and host: %s) is writing '%s'", who[0] ? who : "?",
                     f->open_path);
        else if (err)
            snprintf(why, sizeof why, "cannot create '%s': %s", f->lock_path, strerror(err));
    }
    MPI_Bcast(why, sizeof why, MPI_CHAR, 0, f->comm);
    if (why[0]) return HPC_ERR(HPC_ERR_IO, "%s", why);
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

/* Each rank on its own: the serial driver (read-only files only). */
static hid_t serial_fapl(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fapl_sec2(fapl) < 0) {
        H5Pclose(fapl);
        return H5I_INVALID_HID;
    }
    return fapl;
}

/* A read-only file: MPI-IO, unless it holds virtual datasets (a joined
 * job-array file), which HDF5 1.10's MPI-IO driver cannot read ("parallel
 * reads not supported on virtual datasets"): then every rank opens it
 * with the serial driver and reads its part through the mapping
 * (independent reads of the source files).  Rank 0 looks (and checks
 * that every source is there: a missing one would read as fill values),
 * every rank hears the answer. */
static int choose_driver(hpc_h5file_t *f)
{
    char why[1024] = "";
    int vds = f->rank == 0 ? hpc_h5_vds_probe(f->open_path) : 0;
    MPI_Bcast(&vds, 1, MPI_INT, 0, f->comm);
    if (vds < 0) {
        /* rank 0's cause, for every rank's record */
        if (f->rank == 0) snprintf(why, sizeof why, "%s", hpc_last_cause());
        MPI_Bcast(why, sizeof why, MPI_CHAR, 0, f->comm);
        if (f->rank == 0) return hpc_error_push(vds, __FILE__, __LINE__, __func__);
        return HPC_ERR(vds, "%s", why);
    }
    f->serial = vds > 0;
    return 0;
}

/* "cannot create 'X.partial': <HDF5's reason>" on top of the stack */
static int fail_file(hpc_h5file_t *f, const char *what, const char *call)
{
    int rc = hpc_error_hdf5(__FILE__, __LINE__, call);
    const char *c = hpc_last_cause();
    const char *reason = strstr(c, ": ") ? strstr(c, ": ") + 2 : c;
    char r[512];
    snprintf(r, sizeof r, "%s", reason);
    hpc_error_set(rc, __FILE__, __LINE__, __func__, "cannot %s '%s': %s", what, f->open_path, r);
    file_free(f);
    return rc;
}

/* Rank 0 reserves bytes for f's open name (h5_reserve.c), every rank
 * hears the errno */
static int reserve_agreed(hpc_h5file_t *f, double bytes, int create)
{
    int err = f->rank == 0 ? hpc_reserve_path(f->open_path, bytes, create) : 0;
    MPI_Bcast(&err, 1, MPI_INT, 0, f->comm);
    if (!err) f->reserved = 1;
    return err;
}

/* fsync of a file, then of its folder (so the rename is durable too) */
static int sync_path(const char *path, int dir)
{
    char *copy = strdup(path);
    if (!copy) return ENOMEM;
    int fd = open(dir ? dirname(copy) : path, O_RDONLY | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
    int err = fd < 0 ? errno : 0;
    if (fd >= 0 && fsync(fd) != 0 && errno != EINVAL) err = errno;
    if (fd >= 0) close(fd);
    free(copy);
    return err;
}

int hpc_h5_create(const char *path, MPI_Comm comm, int flags, hpc_h5file_t **out)
{
    return hpc_h5_create_reserved(path, comm, flags, 0, out);
}

int hpc_h5_create_reserved(const char *path, MPI_Comm comm, int flags, double bytes, hpc_h5file_t **out)
{
    QUIET;
    hpc_h5file_t *f;
    HPC_TRY(file_new(path, comm, 1, flags & HPC_H5_SETUP ? ".setup" : ".partial", &f));
    f->setup = (flags & HPC_H5_SETUP) != 0;
    int rc = 0;
    if (agreed_errno(f->comm, f->rank, probe_regular, path) ||
        agreed_errno(f->comm, f->rank, probe_own, f->open_path))
        rc = HPC_ERR(HPC_ERR_IO, "'%s' exists and is not a regular file (not replacing it)", path);
    else if (!(flags & HPC_H5_OVERWRITE) && agreed_errno(f->comm, f->rank, probe_exists, path))
        rc = HPC_ERR(HPC_ERR_IO, "'%s' exists (not overwriting it)", path);
    if (rc == 0) rc = lock_take(f);
    /* the .partial is ours under the lock: a link there is removed, so
     * that HDF5 never writes through it */
    struct stat st;
    if (rc == 0 && f->rank == 0 && lstat(f->open_path, &st) == 0 && S_ISLNK(st.st_mode)) unlink(f->open_path);
    /* the space first, while a failure costs nothing: HDF5 is not yet
     * involved (see h5_reserve.c) */
    int err = rc == 0 && bytes > 0 ? reserve_agreed(f, bytes, 1) : 0;
    if (err) {
        rc = hpc_reserve_error(f->open_path, bytes, err);
        if (f->rank == 0) unlink(f->open_path);
    }
    if (rc) {
        file_free(f);
        return rc;
    }
    hid_t fapl = mpio_fapl(f->comm);
    if (fapl >= 0) f->id = H5Fcreate(f->open_path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (fapl >= 0) H5Pclose(fapl);
    if (fapl < 0 || f->id < 0) return fail_file(f, "create", "H5Fcreate");
    /* H5Fcreate's truncation may have given the blocks back: again, now
     * for the file HDF5 holds (only a writer racing us can fail it) */
    if (bytes > 0 && (err = reserve_agreed(f, bytes, 0)) != 0) {
        rc = hpc_reserve_error(f->open_path, bytes, err);
        hpc_h5_finish(f, 0);
        return rc;
    }
    *out = f;
    return 0;
}

int hpc_h5_setup_done(hpc_h5file_t *f)
{
    if (!f) return HPC_ERR(HPC_ERR_ARG, "NULL file");
    if (!f->setup) return 0;
    char *partial = cat(f->path, ".partial");
    if (!partial) return HPC_ERR(HPC_ERR_NOMEM, "file name");
    /* the layout on disk before the name says so: a crash in between
     * leaves a .setup, which is started afresh (it holds no data) */
    int err = 0;
    if (f->rank == 0) err = sync_path(f->open_path, 0);
    if (f->rank == 0 && !err && rename(f->open_path, partial) != 0) err = errno;
    if (f->rank == 0 && !err) err = sync_path(partial, 1);
    MPI_Bcast(&err, 1, MPI_INT, 0, f->comm);
    if (err) {
        int rc = HPC_ERR(HPC_ERR_IO, "'%s' -> '%s': %s", f->open_path, partial, strerror(err));
        free(partial);
        return rc;
    }
    free(f->open_path);
    f->open_path = partial;   /* the open descriptors follow the rename */
    f->setup = 0;
    return 0;
}

int hpc_h5_reserve(hpc_h5file_t *f, double bytes)
{
    if (!f) return HPC_ERR(HPC_ERR_ARG, "NULL file");
    if (!f->writing || bytes <= 0) return 0;
    int err = reserve_agreed(f, bytes, 0);
    return err ? hpc_reserve_error(f->open_path, bytes, err) : 0;
}

int hpc_h5_open(const char *path, MPI_Comm comm, int partial, int writable, hpc_h5file_t **out)
{
    QUIET;
    hpc_h5file_t *f;
    /* a .partial opened for writing is resumed: renamed on finish;
     * read-only, it is only looked at and never becomes PATH */
    HPC_TRY(file_new(path, comm, partial && writable, partial ? ".partial" : "", &f));
    int err = agreed_errno(f->comm, f->rank, probe_readable, f->open_path);
    if (!err && agreed_errno(f->comm, f->rank, probe_regular, f->open_path)) err = EINVAL;
    if (err) {
        int rc = HPC_ERR(HPC_ERR_IO, "cannot open '%s': %s", f->open_path,
                         err == EINVAL ? "not a regular file" : strerror(err));
        file_free(f);
        return rc;
    }
    if (f->writing) {
        int rc = lock_take(f);
        if (rc) {
            file_free(f);
            return rc;
        }
    }
    if (!writable) {
        int rc = choose_driver(f);
        if (rc) {
            file_free(f);
            return rc;
        }
    }
    hid_t fapl = f->serial ? serial_fapl() : mpio_fapl(f->comm);
    if (fapl >= 0) f->id = H5Fopen(f->open_path, writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl);
    if (fapl >= 0) H5Pclose(fapl);
    if (f->id < 0) {
        hpc_error_hdf5(__FILE__, __LINE__, "H5Fopen");
        int rc = HPC_ERR(HPC_ERR_HDF5, "cannot open '%s' as HDF5 (not an HDF5 file, or damaged)", f->open_path);
        f->serial = 0;
        file_free(f);
        return rc;
    }
    if (f->serial) {
        int rc = serial_add(f->id);
        if (rc) {
            H5Fclose(f->id);
            f->serial = 0;
            file_free(f);
            return rc;
        }
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

MPI_Comm hpc_h5_comm(const hpc_h5file_t *f)
{
    return f ? f->comm : MPI_COMM_NULL;
}

const char *hpc_h5_driver(const hpc_h5file_t *f)
{
    return !f ? NULL : f->serial ? "sec2" : "mpio";
}

int hpc_h5_close(hpc_h5file_t *f)
{
    QUIET;
    if (!f) return 0;
    herr_t e = H5Fclose(f->id);
    file_free(f);
    if (e < 0) return hpc_error_hdf5(__FILE__, __LINE__, "H5Fclose");
    return 0;
}

int hpc_h5_sync_data(hpc_h5file_t *f)
{
    if (!f) return HPC_ERR(HPC_ERR_ARG, "NULL file");
    if (f->datafd < 0) f->datafd = open(f->open_path, O_RDONLY | O_CLOEXEC);
    if (f->datafd < 0 || fdatasync(f->datafd) != 0)
        return HPC_ERR(HPC_ERR_IO, "syncing '%s': %s", f->open_path, strerror(errno));
    return 0;
}

int hpc_h5_finish(hpc_h5file_t *f, int ok)
{
    QUIET;
    if (!f) return HPC_ERR(HPC_ERR_ARG, "NULL file");
    int closed = H5Fclose(f->id) >= 0;
    if (!closed) hpc_error_hdf5(__FILE__, __LINE__, "H5Fclose");
    int mine = ok && closed, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, f->comm);
    int err = 0;
    if (all && f->writing) {
        /* the data first, then the name: a crash in between leaves a
         * .partial, never a final name over data still in the cache */
        if (f->rank == 0 && f->reserved) err = hpc_reserve_trim(f->open_path);
        if (f->rank == 0 && !err) err = sync_path(f->open_path, 0);
        if (f->rank == 0 && !err && rename(f->open_path, f->path) != 0) err = errno;
        if (f->rank == 0 && !err) err = sync_path(f->path, 1);
        MPI_Bcast(&err, 1, MPI_INT, 0, f->comm);
    }
    if (!all && f->writing && f->reserved && f->rank == 0) hpc_reserve_trim(f->open_path);
    /* a layout never completed holds nothing worth keeping */
    if (!all && f->setup && f->rank == 0) unlink(f->open_path);
    int rc = 0;
    if (!all)
        rc = HPC_ERR(HPC_ERR_IO, "not every rank succeeded: '%s' not completed%s", f->path,
                     f->writing && !f->setup ? " (partial output kept as .partial)" : "");
    else if (err)
        rc = HPC_ERR(HPC_ERR_IO, "completing '%s' -> '%s': %s", f->open_path, f->path, strerror(err));
    file_free(f);
    return rc;
}

int hpc_h5_dataset_create(hpc_h5file_t *f, const char *name, hid_t type, int ndims,
                          const hsize_t *dims, const hsize_t *chunk, int flags, const void *fill,
                          hid_t *out)
{
    QUIET;
    if (!f || !name || ndims < 1 || ndims > 8 || !dims)
        return HPC_ERR(HPC_ERR_ARG, "bad dataset arguments for '%s'", name ? name : "(null)");
    hid_t space = H5Screate_simple(ndims, dims, NULL);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t d = H5I_INVALID_HID;
    herr_t e = space < 0 || lcpl < 0 || dcpl < 0 ? -1 : H5Pset_create_intermediate_group(lcpl, 1);
    if (e >= 0 && chunk) e = H5Pset_chunk(dcpl, ndims, chunk);
    if (e >= 0 && (flags & HPC_H5_ALLOC_EARLY)) {
        e = H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
        if (e >= 0 && fill) e = H5Pset_fill_value(dcpl, type, fill);
        /* HPC_H5_FILL_NEVER: the fill value is declared (readers see it) but
         * not written: no pass over the whole dataset at allocation */
        int write_fill = fill && !(flags & HPC_H5_FILL_NEVER);
        if (e >= 0) e = H5Pset_fill_time(dcpl, write_fill ? H5D_FILL_TIME_ALLOC : H5D_FILL_TIME_NEVER);
    }
    if (e >= 0) d = H5Dcreate2(f->id, name, type, space, lcpl, dcpl, H5P_DEFAULT);
    int rc = d < 0 ? hpc_error_hdf5(__FILE__, __LINE__, "H5Dcreate2") : 0;
    if (dcpl >= 0) H5Pclose(dcpl);
    if (lcpl >= 0) H5Pclose(lcpl);
    if (space >= 0) H5Sclose(space);
    if (rc) return hpc_error_set(rc, __FILE__, __LINE__, __func__, "cannot create dataset '%s' in '%s'",
                                 name, f->open_path);
    *out = d;
    return 0;
}

int hpc_h5_dataset_shape(hid_t dset, int *ndims, hsize_t dims[8])
{
    QUIET;
    hid_t space = H5Dget_space(dset);
    if (space < 0) return hpc_error_hdf5(__FILE__, __LINE__, "H5Dget_space");
    int nd = H5Sget_simple_extent_ndims(space);
    if (nd >= 0 && nd <= 8) H5Sget_simple_extent_dims(space, dims, NULL);
    H5Sclose(space);
    if (nd < 0 || nd > 8) return HPC_ERR(HPC_ERR_DATA, "dataset of rank %d", nd);
    *ndims = nd;
    return 0;
}

int hpc_h5_dataset_type(hid_t dset, H5T_class_t *cls, size_t *size)
{
    QUIET;
    hid_t t = H5Dget_type(dset);
    if (t < 0) return hpc_error_hdf5(__FILE__, __LINE__, "H5Dget_type");
    *cls = H5Tget_class(t);
    *size = H5Tget_size(t);
    H5Tclose(t);
    return 0;
}

static const char *class_name(H5T_class_t c)
{
    switch (c) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "float";
    case H5T_STRING: return "string";
    case H5T_COMPOUND: return "compound";
    case H5T_ENUM: return "enum";
    default: return "other";
    }
}

int hpc_h5_dataset_check_type(hid_t dset, const char *name, H5T_class_t cls, size_t size)
{
    H5T_class_t c;
    size_t sz;
    HPC_TRY(hpc_h5_dataset_type(dset, &c, &sz));
    if (c == cls && (!size || sz == size)) return 0;
    if (size)
        return HPC_ERR(HPC_ERR_DATA, "dataset '%s' holds %zu-byte %s values, expected %zu-byte %s", name, sz,
                       class_name(c), size, class_name(cls));
    return HPC_ERR(HPC_ERR_DATA, "dataset '%s' holds %zu-byte %s values, expected %s values", name, sz,
                   class_name(c), class_name(cls));
}

int hpc_h5_dataset_open(hpc_h5file_t *f, const char *name, int ndims, const hsize_t *expect, hid_t *out)
{
    QUIET;
    if (!f || !name) return HPC_ERR(HPC_ERR_ARG, "NULL file or name");
    /* H5Lexists fails (rather than saying 0) when a parent group is missing */
    if (H5Lexists(f->id, name, H5P_DEFAULT) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return HPC_ERR(HPC_ERR_DATA, "'%s' has no dataset '%s'", f->open_path, name);
    }
    H5O_info_t oi;
    if (H5Oget_info_by_name2(f->id, name, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0 ||
        oi.type != H5O_TYPE_DATASET) {
        H5Eclear2(H5E_DEFAULT);
        return HPC_ERR(HPC_ERR_DATA, "'%s' in '%s' is not a dataset", name, f->open_path);
    }
    hid_t d = H5Dopen2(f->id, name, H5P_DEFAULT);
    if (d < 0) return hpc_error_hdf5(__FILE__, __LINE__, "H5Dopen2");
    hsize_t dims[8];
    int nd = -1;
    int bad = hpc_h5_dataset_shape(d, &nd, dims) < 0 || nd != ndims;
    for (int i = 0; !bad && expect && i < nd; i++) bad = expect[i] && expect[i] != dims[i];
    if (bad) {
        H5Dclose(d);
        char shape[160] = "";
        for (int i = 0; i < nd && i < 8; i++)
            snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%llu", i ? " x " : "",
                     (unsigned long long)dims[i]);
        return HPC_ERR(HPC_ERR_DATA, "dataset '%s' in '%s' has the wrong shape (%s; expected %d dims)",
                       name, f->open_path, nd > 0 ? shape : "scalar", ndims);
    }
    *out = d;
    return 0;
}

static int serial_file_of(hid_t obj)
{
    if (!nserial) return 0;
    hid_t fid = H5Iget_file_id(obj);   /* the file's own id, one more reference */
    int found = 0;
    for (size_t i = 0; fid >= 0 && i < nserial; i++) found |= serial_ids[i] == fid;
    if (fid >= 0) H5Idec_ref(fid);
    return found;
}

/* A transfer property list for dset in mode (collective only where its
 * file is open through MPI-IO). */
static hid_t xfer_plist(hid_t dset, H5FD_mpio_xfer_t mode)
{
    if (mode == H5FD_MPIO_COLLECTIVE && serial_file_of(dset)) mode = H5FD_MPIO_INDEPENDENT;
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

/* ---- attributes ---- */

static int attr_write(hid_t obj, const char *name, hid_t type, hid_t space, const void *buf)
{
    QUIET;
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

static int attr_vector(hid_t obj, const char *name, hid_t type, const void *v, size_t n)
{
    hsize_t dim = n;
    hid_t s = H5Screate_simple(1, &dim, NULL);
    int rc = attr_write(obj, name, type, s, v);
    H5Sclose(s);
    return rc;
}

int hpc_h5_attr_set_doubles(hid_t obj, const char *name, const double *v, size_t n)
{
    return attr_vector(obj, name, H5T_NATIVE_DOUBLE, v, n);
}

int hpc_h5_attr_set_int64s(hid_t obj, const char *name, const int64_t *v, size_t n)
{
    return attr_vector(obj, name, H5T_NATIVE_INT64, v, n);
}

static int attr_read(hid_t obj, const char *name, hid_t memtype, void *buf)
{
    QUIET;
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

/* ---- dimension scales (HDF5's H5DS, what netCDF and xarray read as
 * named dimensions and coordinates) ---- */

int hpc_h5_scale_set(hid_t scale, const char *name)
{
    QUIET;
    if (H5DSset_scale(scale, name) < 0) return hpc_error_hdf5(__FILE__, __LINE__, "H5DSset_scale");
    return 0;
}

int hpc_h5_scale_attach(hid_t dset, hid_t scale, unsigned dim)
{
    QUIET;
    if (H5DSattach_scale(dset, scale, dim) < 0) return hpc_error_hdf5(__FILE__, __LINE__, "H5DSattach_scale");
    return 0;
}

int hpc_h5_index(hpc_h5file_t *f, const char *name, int64_t n, int64_t base, hid_t *out)
{
    if (!f || n < 1) return HPC_ERR(HPC_ERR_ARG, "index '%s' of %lld elements", name ? name : "(null)", (long long)n);
    hid_t d;
    hsize_t dim = (hsize_t)n;
    HPC_TRY(hpc_h5_dataset_create(f, name, H5T_STD_I64LE, 1, &dim, NULL, HPC_H5_ALLOC_EARLY, NULL, &d));
    /* each rank a block, in slices: the same number of collective writes
     * on every rank */
    const int64_t slice = 1 << 20;
    int size = 1;
    MPI_Comm_size(f->comm, &size);
    int64_t lo = n * f->rank / size, hi = n * (f->rank + 1) / size, most = (n + size - 1) / size;
    int64_t *v = malloc((size_t)(most < slice ? most : slice) * sizeof *v);
    int have = v != NULL, all = 0;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, f->comm);   /* nobody left in a collective write */
    int rc = all ? 0 : HPC_ERR(HPC_ERR_NOMEM, "index '%s' of %lld elements", name, (long long)n);
    for (int64_t off = 0; !rc && off < most; off += slice) {
        int64_t a = lo + off < hi ? lo + off : hi, b = a + slice < hi ? a + slice : hi;
        for (int64_t i = a; i < b; i++) v[i - a] = base + i;
        rc = hpc_h5_write_rows(d, H5T_NATIVE_INT64, (hsize_t)a, (hsize_t)(b - a), v);
    }
    free(v);
    if (rc) {
        H5Dclose(d);
        return rc;
    }
    *out = d;
    return 0;
}

int hpc_h5_describe(hid_t obj, const char *long_name, const char *units)
{
    if (long_name) HPC_TRY(hpc_h5_attr_set_string(obj, "long_name", long_name));
    if (units) HPC_TRY(hpc_h5_attr_set_string(obj, "units", units));
    return 0;
}

int hpc_h5_provenance(hpc_h5file_t *f, hid_t obj, const char *program, int argc, char **argv)
{
    if (!f) return HPC_ERR(HPC_ERR_ARG, "NULL file");
    char when[64] = "";
    int size = 1;
    MPI_Comm_size(f->comm, &size);
    if (f->rank == 0) {
        time_t t = time(NULL);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    }
    /* attribute writes are collective: every rank must pass rank 0's time */
    MPI_Bcast(when, sizeof when, MPI_CHAR, 0, f->comm);
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
