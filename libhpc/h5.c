/* h5.c - parallel HDF5 helpers: a file's life (create, open, lock,
 * reserve, finish) and HDF5's error printing.  Datasets are h5_dataset.c's,
 * rows and blocks h5_rows.c's, attributes h5_attr.c's, dimension scales
 * and provenance h5_scale.c's.
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
#include "h5_internal.h"

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

int h5_serial_file_of(hid_t obj)
{
    if (!nserial) return 0;
    hid_t fid = H5Iget_file_id(obj);   /* the file's own id, one more reference */
    int found = 0;
    for (size_t i = 0; fid >= 0 && i < nserial; i++) found |= serial_ids[i] == fid;
    if (fid >= 0) H5Idec_ref(fid);
    return found;
}
