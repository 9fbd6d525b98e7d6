/* output.c - resumable outputs: the file a long run writes in parts.
 *
 * PATH.partial carries the run's options key (attribute "options") and one
 * done flag per part.  Crash safety: the app creates all its datasets with
 * early allocation before any part is computed, hpc_out_ready puts that
 * metadata on disk, and afterwards only raw data is written; a part's flag
 * is set only after its data is synced (hpc_out_part_done), so done = 1
 * means the data is on disk, whenever the run is killed.  --resume
 * reopens PATH.partial if its key equals this run's and continues with the
 * parts not done; the final name appears when all are (hpc_h5_finish).
 * Beside the done flags, "written" holds the checksum of each part written
 * by the background writer (writer.c) and not yet known to be on disk.
 *
 * The layout is made under PATH.setup and renamed PATH.partial by
 * hpc_out_ready once it is on disk (hpc_h5_setup_done), before any part
 * is computed: a PATH.setup provably holds no data and is started afresh;
 * a PATH.partial that HDF5 cannot open holds computed parts and is
 * refused, kept as it is for inspection.
 */
#include "config.h"
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "app_h5_internal.h"


/* What rank 0 finds on disk, shared with every rank. */
typedef struct {
    int final, partial, setup; /* PATH, PATH.partial, PATH.setup exist */
    int dir_err;               /* errno of the folder's writability, 0 ok */
    double free_bytes;         /* free space of the folder, -1 unknown */
} look_t;

static void look(const char *path, MPI_Comm comm, look_t *l)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    memset(l, 0, sizeof *l);
    if (rank == 0) {
        char partial[4200], setup[4200], dir[4200];
        snprintf(partial, sizeof partial, "%s.partial", path);
        snprintf(setup, sizeof setup, "%s.setup", path);
        snprintf(dir, sizeof dir, "%s", path);
        l->final = access(path, F_OK) == 0;
        l->partial = access(partial, F_OK) == 0;
        l->setup = access(setup, F_OK) == 0;
        const char *d = dirname(dir);
        l->dir_err = access(d, W_OK | X_OK) == 0 ? 0 : errno;
        struct statvfs vs;
        l->free_bytes = statvfs(d, &vs) == 0 ? (double)vs.f_bavail * vs.f_frsize : -1;
    }
    MPI_Bcast(l, sizeof *l, MPI_BYTE, 0, comm);
}

/* "stats/done" -> "stats/written": the checksums beside the flags */
static void written_name(const char *done, char *buf, size_t len)
{
    const char *slash = strrchr(done, '/');
    snprintf(buf, len, "%.*swritten", slash ? (int)(slash - done + 1) : 0, done);
}

static void out_free(hpc_out_t *o)
{
    if (!o) return;
    if (o->done_d >= 0) H5Dclose(o->done_d);
    if (o->written_d >= 0) H5Dclose(o->written_d);
    free(o->done);
    free(o->path);
    free(o);
}

/* The file's key against ours: HPC_ERR_DATA naming the first difference. */
static int same_key(hpc_out_t *o, const char *key, const char *shown)
{
    char *was = NULL;
    if (hpc_h5_attr_get_string(hpc_h5_id(o->f), "options", &was) < 0)
        return HPC_ERR(HPC_ERR_DATA, "%s is not an output of %s (no 'options' attribute); "
                       "use --force to start over", shown, hpc_app_name());
    int same = !strcmp(was, key);
    char diff[512];
    if (!same) hpc_app_key_diff(was, key, diff, sizeof diff);
    free(was);
    if (!same)
        return HPC_ERR(HPC_ERR_DATA, "%s was written with different options (%s); use --force "
                       "to start over", shown, diff);
    return 0;
}

static int open_done(hpc_out_t *o, const char *done_name)
{
    hsize_t n = (hsize_t)o->nparts;
    HPC_TRY(hpc_h5_dataset_open(o->f, done_name, 1, &n, &o->done_d));
    HPC_TRY(hpc_h5_dataset_check_type(o->done_d, done_name, H5T_INTEGER, 1));
    HPC_TRY(hpc_h5_read_rows(o->done_d, H5T_NATIVE_UINT8, 0, n, o->done));
    for (int64_t i = 0; i < o->nparts; i++) o->ndone += o->done[i] != 0;
    int64_t runs = 1;
    if (hpc_h5_attr_get_int64(hpc_h5_id(o->f), "runs", &runs) == 0) o->runs = runs + 1;
    else hpc_error_clear();
    /* a file from before the checksums were kept has flags only */
    char wname[256];
    written_name(done_name, wname, sizeof wname);
    if (hpc_h5_dataset_open(o->f, wname, 1, &n, &o->written_d) < 0) {
        hpc_error_clear();
        o->written_d = H5I_INVALID_HID;
    }
    return 0;
}

/* An empty .partial (an older hpckit made the layout under that name:
 * killed at once) holds no data; any other that HDF5 cannot open may
 * hold computed parts, whatever its first bytes say. */
static int empty_file(const char *partial)
{
    struct stat st;
    return stat(partial, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0;
}

/* --resume: continue PATH.partial, or confirm PATH is complete.  1: a
 * .partial of an older hpckit left before its set-up was done (empty, or
 * an HDF5 file without the key, which hpc_out_ready writes before any
 * data), which holds no data - the caller starts afresh. */
static int reopen(hpc_out_t *o, const look_t *l, const char *key, const char *done_name, double bytes)
{
    char shown[4300];
    snprintf(shown, sizeof shown, "%s%s", o->path, l->partial ? ".partial" : "");
    int rc = hpc_h5_open(o->path, hpc_comm_world(), l->partial, l->partial, &o->f);
    if (rc == HPC_ERR_HDF5 && l->partial) {
        char part[4200];
        snprintf(part, sizeof part, "%s.partial", o->path);
        /* every rank sees the same file: the same verdict */
        if (empty_file(part)) {
            hpc_error_clear();
            return 1;
        }
        return HPC_ERR(rc, "--resume: %s; it may hold computed parts, so it is kept as it is (start over "
                       "with --force)", hpc_last_cause());
    }
    HPC_TRY(rc);
    if (l->partial && H5Aexists(hpc_h5_id(o->f), "options") <= 0) {
        H5Eclear2(H5E_DEFAULT);
        hpc_h5_close(o->f);
        o->f = NULL;
        return 1;
    }
    rc = same_key(o, key, shown);
    if (rc == 0) rc = open_done(o, done_name);
    /* what is still to come, on disk before it is computed */
    if (rc == 0 && l->partial) rc = hpc_h5_reserve(o->f, bytes);
    if (rc < 0) {
        char why[1024];
        snprintf(why, sizeof why, "%s", hpc_last_cause());
        hpc_h5_close(o->f);
        o->f = NULL;
        return HPC_ERR(rc, "--resume: %s", why);
    }
    o->state = l->partial ? HPC_OUT_RESUMED : HPC_OUT_COMPLETE;
    return 0;
}

static int create(hpc_out_t *o, const look_t *l, int mode, const char *done_name, double bytes)
{
    if (l->final && mode != HPC_OUT_FORCE)
        return HPC_ERR(HPC_ERR_IO, "%s exists (use --force to overwrite it, or --resume to "
                       "continue an interrupted run)", o->path);
    /* the whole file's disk reserved now: another writer filling the
     * disk mid-run cannot take it (hpc_h5_create_reserved) */
    HPC_TRY(hpc_h5_create_reserved(o->path, hpc_comm_world(),
                                   HPC_H5_SETUP | (mode == HPC_OUT_FORCE ? HPC_H5_OVERWRITE : HPC_H5_FAIL_IF_EXISTS),
                                   bytes, &o->f));
    const uint8_t zero = 0;
    hsize_t n = (hsize_t)o->nparts;
    HPC_TRY(hpc_h5_dataset_create(o->f, done_name, H5T_STD_U8LE, 1, &n, NULL, HPC_H5_ALLOC_EARLY,
                                  &zero, &o->done_d));
    /* kept in the finished file (--resume reads it to say "complete", and
     * deleting a dataset would not give its space back), but marked as
     * the run's bookkeeping, not data */
    HPC_TRY(hpc_h5_attr_set_string(o->done_d, "internal",
                                   "resume bookkeeping, not data: 1 once a part's rows are on disk "
                                   "(all 1 in a finished file)"));
    const uint64_t none = 0;
    char wname[256];
    written_name(done_name, wname, sizeof wname);
    HPC_TRY(hpc_h5_dataset_create(o->f, wname, H5T_STD_U64LE, 1, &n, NULL, HPC_H5_ALLOC_EARLY, &none,
                                  &o->written_d));
    HPC_TRY(hpc_h5_attr_set_string(o->written_d, "internal",
                                   "resume bookkeeping, not data: a checksum of each part written and "
                                   "not yet synced (0 = none); --resume keeps a part whose rows match it"));
    o->state = HPC_OUT_CREATED;
    return 0;
}

int hpc_out_open(const char *path, MPI_Comm comm, int mode, const char *key, int64_t nparts,
                 const char *done_dataset, double bytes, hpc_out_t **out)
{
    if (!path || !*path || nparts < 1 || !done_dataset)
        return HPC_ERR(HPC_ERR_ARG, "bad output arguments");
    if (comm != hpc_comm_world())
        return HPC_ERR(HPC_ERR_ARG, "resumable outputs are written by the whole job");
    look_t l;
    look(path, comm, &l);
    char need[32], have[32];
    if (l.dir_err)
        return HPC_ERR(HPC_ERR_IO, "cannot write %s: its folder is not writable (%s)", path,
                       strerror(l.dir_err));
    /* before anything is allocated or written: a size that cannot fit is
     * one line now, not a disk filled for hours */
    if (!(mode == HPC_OUT_RESUME && (l.partial || l.final)) && bytes > 0 && l.free_bytes >= 0 &&
        bytes > l.free_bytes) {
        hpc_format_bytes(bytes, need, sizeof need);
        hpc_format_bytes(l.free_bytes, have, sizeof have);
        return HPC_ERR(HPC_ERR_IO, "%s would need %s but its folder has %s free", path, need, have);
    }
    hpc_out_t *o = calloc(1, sizeof *o);
    if (!o) return HPC_ERR(HPC_ERR_NOMEM, "output");
    o->done_d = o->written_d = H5I_INVALID_HID;
    o->runs = 1;
    o->nparts = nparts;
    o->path = strdup(path);
    o->done = calloc((size_t)nparts, 1);
    if (!o->path || !o->done) {
        out_free(o);
        return HPC_ERR(HPC_ERR_NOMEM, "out of memory for the done flags of %lld parts", (long long)nparts);
    }
    int rc;
    rc = mode == HPC_OUT_RESUME && (l.partial || l.final) ? reopen(o, &l, key ? key : "", done_dataset, bytes) : 2;
    if (rc == 1) {
        hpc_error_clear();
        if (hpc_rank() == 0)
            hpc_warn("%s.partial was left before its set-up was complete (it holds no data): starting afresh", path);
    } else if (rc == 2 && mode == HPC_OUT_RESUME && l.setup && hpc_rank() == 0) {
        hpc_warn("%s.setup was left before its set-up was complete (it holds no data): starting afresh", path);
    }
    if (rc > 0) rc = create(o, &l, mode, done_dataset, bytes);
    if (rc < 0) {
        if (o->f) {
            /* collective, as the error is: every rank took this branch */
            if (o->done_d >= 0) H5Dclose(o->done_d);
            if (o->written_d >= 0) H5Dclose(o->written_d);
            o->done_d = o->written_d = H5I_INVALID_HID;
            hpc_h5_finish(o->f, 0);
        }
        out_free(o);
        return rc;
    }
    *out = o;
    return 0;
}

int hpc_out_state(const hpc_out_t *o) { return o->state; }
hpc_h5file_t *hpc_out_file(const hpc_out_t *o) { return o->f; }
const uint8_t *hpc_out_done(const hpc_out_t *o) { return o->done; }
int64_t hpc_out_ndone(const hpc_out_t *o) { return o->ndone; }

int hpc_out_ready(hpc_out_t *o, int argc, char **argv)
{
    hid_t fid = hpc_h5_id(o->f);
    HPC_TRY(hpc_h5_attr_set_string(fid, "options", hpc_app_key()));
    HPC_TRY(hpc_h5_provenance(o->f, fid, hpc_app_name(), argc, argv));
    /* metadata on disk now: from here on only raw data is written */
    if (H5Fflush(fid, H5F_SCOPE_GLOBAL) < 0) return hpc_error_hdf5(__FILE__, __LINE__, "H5Fflush");
    return hpc_h5_setup_done(o->f);
}

int hpc_out_part_done(hpc_out_t *o, int64_t part)
{
    const uint8_t one = 1;
    if (part < 0 || part >= o->nparts) return HPC_ERR(HPC_ERR_ARG, "part %lld", (long long)part);
    /* the data first: a flag on disk over data still in the page cache
     * would claim a part that a power cut loses */
    HPC_TRY(hpc_h5_sync_data(o->f));
    HPC_TRY(hpc_h5_write_rows_indep(o->done_d, H5T_NATIVE_UINT8, (hsize_t)part, 1, &one));
    o->done[part] = 1;
    return 0;
}

/* Collective.  Parts written by an earlier run and not flagged done: each
 * rank re-reads its share, and a part whose rows match the checksum
 * recorded for it counts as done (after a sync, so the flag still means
 * "on disk"). */
int hpc_out_recover(hpc_out_t *o, hpc_out_verify_fn verify, void *arg, int64_t *recovered)
{
    *recovered = 0;
    if (o->state != HPC_OUT_RESUMED || o->written_d < 0) return 0;
    int rank = hpc_rank(), size = hpc_size();
    MPI_Comm comm = hpc_comm_world();
    uint64_t *sum = malloc((size_t)o->nparts * sizeof *sum);
    uint8_t *ok = calloc((size_t)o->nparts, 1);
    int rc = sum && ok ? 0 : HPC_ERR(HPC_ERR_NOMEM, "recovery of %lld parts", (long long)o->nparts);
    /* collective read: every rank takes this branch alike (even after a
     * failed allocation, with nothing to read) */
    int rrc = hpc_h5_read_rows(o->written_d, H5T_NATIVE_UINT64, 0, rc ? 0 : (hsize_t)o->nparts, sum);
    if (!rc) rc = rrc;
    int64_t k = 0;
    for (int64_t i = 0; !rc && i < o->nparts; i++) {
        if (o->done[i] || !sum[i]) continue;
        uint64_t got = 0;
        if (k++ % size == rank && verify(arg, i, &got) == 0) ok[i] = (got | 1) == sum[i];
        hpc_error_clear();
    }
    int64_t n = 0;
    int bad = rc != 0;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
    if (!bad) {
        MPI_Allreduce(MPI_IN_PLACE, ok, (int)o->nparts, MPI_UINT8_T, MPI_MAX, comm);
        for (int64_t i = 0; i < o->nparts; i++) n += ok[i];
        /* every rank's page cache to disk before the flags say so */
        if (n && hpc_h5_sync_data(o->f) < 0) bad = 1;
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
    }
    for (int64_t i = 0; !bad && i < o->nparts; i++) {
        if (!ok[i]) continue;
        if (rank == 0 && !rc) rc = hpc_h5_write_rows_indep(o->done_d, H5T_NATIVE_UINT8, (hsize_t)i, 1, &ok[i]);
        o->done[i] = 1;
        o->ndone++;
    }
    free(sum);
    free(ok);
    if (bad && !rc) rc = HPC_ERR(HPC_ERR_IO, "recovering the parts written by the last run (on another rank)");
    if (!rc) *recovered = n;
    return rc;
}

int hpc_out_finish(hpc_out_t *o, int ok, double wall, int argc, char **argv)
{
    hpc_h5file_t *f = o->f;
    if (app_out_writer_stop(o) < 0) ok = 0;
    int all = ok;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, hpc_h5_comm(f));
    if (o->state == HPC_OUT_COMPLETE) {
        out_free(o);
        return hpc_h5_close(f);
    }
    int rc = 0;
    if (all) {
        /* what differs between runs that produce the same data */
        hid_t fid = hpc_h5_id(f);
        char *cmd = hpc_cmdline(argc, argv);
        rc = hpc_h5_attr_set_double(fid, "wall_time", wall);
        if (!rc) rc = hpc_h5_attr_set_int64(fid, "ranks", hpc_size());
        if (!rc) rc = hpc_h5_attr_set_int64(fid, "runs", o->runs);
        if (!rc && o->runs > 1) rc = hpc_h5_attr_set_string(fid, "resume_command_line", cmd ? cmd : "");
        free(cmd);
        if (rc) all = 0;
    }
    H5Dclose(o->done_d);
    if (o->written_d >= 0) H5Dclose(o->written_d);
    o->done_d = o->written_d = H5I_INVALID_HID;
    out_free(o);
    int frc = hpc_h5_finish(f, all);
    return rc ? rc : frc;
}
