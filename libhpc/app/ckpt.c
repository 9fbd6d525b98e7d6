/* ckpt.c - checkpoints: named arrays and attributes in one HDF5 file that
 * is replaced atomically.
 *
 * A new checkpoint is written as PATH.partial (hpc_h5_create: the lock,
 * collective metadata) and becomes PATH only in hpc_ckpt_commit, after
 * every rank succeeded and the data is on disk (hpc_h5_finish: fsync,
 * rename, fsync of the folder).  Until then the previous PATH stays the
 * valid one, so a job killed while writing resumes from the last complete
 * checkpoint.  What a checkpoint holds is usually the same on every rank
 * (a replicated model): rank 0's buffers are written, the other ranks take
 * part in the collective calls with empty selections.  Reads give every
 * rank the whole array.  State that ranks hold in pieces (a sharded
 * optimiser: each rank a contiguous run of every array's elements in
 * row-major order) is written and read piece by piece (hpc_ckpt_put_part,
 * hpc_ckpt_get_part), the file the same as if one rank had written it.
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "app_h5_internal.h"

/* HDF5's metadata beyond what the caller counts: the superblock, the
 * root's attributes and provenance, the groups' heaps */
#define HPC_CKPT_SLACK (64.0 * 1024)

struct hpc_ckpt {
    hpc_h5file_t *f;
    int rank;
};

int hpc_ckpt_exists(const char *path, MPI_Comm comm)
{
    int rank, there = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) there = access(path, F_OK) == 0;
    MPI_Bcast(&there, 1, MPI_INT, 0, comm);
    return there;
}

int hpc_ckpt_begin(const char *path, MPI_Comm comm, const char *key, int argc, char **argv,
                   hpc_ckpt_t **out)
{
    return hpc_ckpt_begin_sized(path, comm, key, argc, argv, 0, out);
}

int hpc_ckpt_begin_sized(const char *path, MPI_Comm comm, const char *key, int argc, char **argv,
                         double bytes, hpc_ckpt_t **out)
{
    hpc_ckpt_t *c = calloc(1, sizeof *c);
    if (!c) return HPC_ERR(HPC_ERR_NOMEM, "checkpoint");
    MPI_Comm_rank(comm, &c->rank);
    /* the disk for it first: a full disk is then one clean error, with
     * the previous checkpoint untouched (HPC_CKPT_SLACK: HDF5's own) */
    int rc = hpc_h5_create_reserved(path, comm, HPC_H5_OVERWRITE, bytes > 0 ? bytes + HPC_CKPT_SLACK : 0,
                                    &c->f);
    if (rc < 0) {
        free(c);
        return hpc_error_push(rc, __FILE__, __LINE__, __func__);
    }
    hid_t id = hpc_h5_id(c->f);
    rc = hpc_h5_attr_set_string(id, "options", key ? key : "");
    if (!rc) rc = hpc_h5_provenance(c->f, id, hpc_app_name(), argc, argv);
    if (rc < 0) {
        hpc_h5_finish(c->f, 0);
        free(c);
        return hpc_error_push(rc, __FILE__, __LINE__, __func__);
    }
    *out = c;
    return 0;
}

hid_t hpc_ckpt_id(const hpc_ckpt_t *c)
{
    return c ? hpc_h5_id(c->f) : H5I_INVALID_HID;
}

int hpc_ckpt_put(hpc_ckpt_t *c, const char *name, hid_t memtype, int ndims, const hsize_t *dims,
                 const void *data)
{
    return hpc_ckpt_put_from(c, name, memtype, ndims, dims, data, 0);
}

int hpc_ckpt_put_from(hpc_ckpt_t *c, const char *name, hid_t memtype, int ndims, const hsize_t *dims,
                      const void *data, int writer)
{
    if (!c || !name || ndims < 1 || ndims > 8 || !dims || writer < 0)
        return HPC_ERR(HPC_ERR_ARG, "bad checkpoint array '%s'", name ? name : "(null)");
    hid_t d;
    HPC_TRY(hpc_h5_dataset_create(c->f, name, memtype, ndims, dims, NULL, 0, NULL, &d));
    int rc = hpc_h5_write_rows(d, memtype, 0, c->rank == writer ? dims[0] : 0, data);
    H5Dclose(d);
    if (rc < 0) return hpc_error_push(rc, __FILE__, __LINE__, __func__);
    return 0;
}

/* Add to space's selection the elements [lo, hi) of the row-major
 * sub-array at start[0..depth) (its dims: dims[depth..nd)): whole rows as
 * one hyperslab, a partial first and last row by recursion, so a run of
 * elements is at most 2 nd - 1 hyperslabs. */
static herr_t select_run(hid_t space, int nd, const hsize_t *dims, hsize_t *start, int depth, hsize_t lo,
                         hsize_t hi)
{
    hsize_t inner = 1, count[8];
    for (int i = depth + 1; i < nd; i++) inner *= dims[i];
    hsize_t r0 = lo / inner, r1 = hi / inner;
    if (depth < nd - 1 && (lo % inner || r0 == r1)) {   /* a partial first row */
        hsize_t end = r0 == r1 || (r0 + 1) * inner > hi ? hi : (r0 + 1) * inner;
        start[depth] = r0;
        if (select_run(space, nd, dims, start, depth + 1, lo - r0 * inner, end - r0 * inner) < 0) return -1;
        if (end == hi) return 0;
        lo = end;
        r0++;
    }
    if (depth < nd - 1 && hi % inner) {   /* a partial last row */
        start[depth] = r1;
        if (select_run(space, nd, dims, start, depth + 1, 0, hi - r1 * inner) < 0) return -1;
        hi = r1 * inner;
    }
    if (hi <= lo) return 0;
    for (int i = 0; i < nd; i++) count[i] = i < depth ? 1 : dims[i];
    start[depth] = lo / inner;
    count[depth] = (hi - lo) / inner;
    for (int i = depth + 1; i < nd; i++) start[i] = 0;
    return H5Sselect_hyperslab(space, H5S_SELECT_OR, start, NULL, count, NULL);
}

/* Write or read this rank's run [first, first + count) of a dataset's
 * elements, collectively (an empty run still takes part). */
static int run_io(hid_t d, hid_t memtype, int nd, const hsize_t *dims, hsize_t first, hsize_t count, void *data,
                  int write)
{
    hsize_t total = 1, start[8] = {0}, n = count ? count : 1;
    for (int i = 0; i < nd; i++) total *= dims[i];
    if (first > total || count > total - first)
        return HPC_ERR(HPC_ERR_ARG, "elements %llu..%llu of an array of %llu", (unsigned long long)first,
                       (unsigned long long)(first + count), (unsigned long long)total);
    hid_t fspace = H5Dget_space(d), mspace = H5Screate_simple(1, &n, NULL), dxpl = H5Pcreate(H5P_DATASET_XFER);
    herr_t e = fspace < 0 || mspace < 0 || dxpl < 0 ? -1 : H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    if (e >= 0) e = H5Sselect_none(fspace);
    if (e >= 0 && count) e = select_run(fspace, nd, dims, start, 0, first, first + count);
    if (e >= 0 && !count) e = H5Sselect_none(mspace);
    if (e >= 0)
        e = write ? H5Dwrite(d, memtype, mspace, fspace, dxpl, data) : H5Dread(d, memtype, mspace, fspace, dxpl, data);
    int rc = e < 0 ? hpc_error_hdf5(__FILE__, __LINE__, write ? "H5Dwrite" : "H5Dread") : 0;
    if (dxpl >= 0) H5Pclose(dxpl);
    if (mspace >= 0) H5Sclose(mspace);
    if (fspace >= 0) H5Sclose(fspace);
    return rc;
}

int hpc_ckpt_put_part(hpc_ckpt_t *c, const char *name, hid_t memtype, int ndims, const hsize_t *dims,
                      const void *data, size_t first, size_t count)
{
    if (!c || !name || ndims < 1 || ndims > 8 || !dims || (count && !data))
        return HPC_ERR(HPC_ERR_ARG, "bad checkpoint array '%s'", name ? name : "(null)");
    hid_t d;
    HPC_TRY(hpc_h5_dataset_create(c->f, name, memtype, ndims, dims, NULL, 0, NULL, &d));
    float dummy;   /* HDF5 wants a buffer even for an empty selection */
    int rc = run_io(d, memtype, ndims, dims, first, count, count ? (void *)data : &dummy, 1);
    H5Dclose(d);
    if (rc < 0) return hpc_error_push(rc, __FILE__, __LINE__, __func__);
    return 0;
}

int hpc_ckpt_commit(hpc_ckpt_t *c, int ok)
{
    if (!c) return HPC_ERR(HPC_ERR_ARG, "NULL checkpoint");
    int rc = hpc_h5_finish(c->f, ok);
    free(c);
    if (rc < 0) return hpc_error_push(rc, __FILE__, __LINE__, __func__);
    return 0;
}

/* The file's options key against ours: HPC_ERR_DATA naming the first
 * difference. */
static int same_key(hpc_ckpt_t *c, const char *path, const char *key)
{
    char *was = NULL;
    if (hpc_h5_attr_get_string(hpc_h5_id(c->f), "options", &was) < 0)
        return HPC_ERR(HPC_ERR_DATA, "%s is not a checkpoint (no 'options' attribute)", path);
    char diff[512] = "";
    int same = !strcmp(was, key);
    if (!same) hpc_app_key_diff(was, key, diff, sizeof diff);
    free(was);
    if (!same) return HPC_ERR(HPC_ERR_DATA, "%s was written with different options (%s)", path, diff);
    return 0;
}

int hpc_ckpt_open(const char *path, MPI_Comm comm, const char *key, hpc_ckpt_t **out)
{
    if (!path || !*path) return HPC_ERR(HPC_ERR_ARG, "empty checkpoint name");
    if (!hpc_ckpt_exists(path, comm)) return HPC_ERR(HPC_ERR_IO, "no checkpoint %s", path);
    hpc_ckpt_t *c = calloc(1, sizeof *c);
    if (!c) return HPC_ERR(HPC_ERR_NOMEM, "checkpoint");
    MPI_Comm_rank(comm, &c->rank);
    int rc = hpc_h5_open(path, comm, 0, 0, &c->f);
    if (rc < 0) {
        free(c);
        return HPC_ERR(HPC_ERR_DATA, "checkpoint %s cannot be read (damaged or truncated?)", path);
    }
    if (key && (rc = same_key(c, path, key)) < 0) {
        hpc_h5_close(c->f);
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int hpc_ckpt_get(hpc_ckpt_t *c, const char *name, hid_t memtype, int ndims, const hsize_t *dims,
                 void *data)
{
    if (!c || !name || ndims < 1 || ndims > 8 || !dims)
        return HPC_ERR(HPC_ERR_ARG, "bad checkpoint array '%s'", name ? name : "(null)");
    hid_t d;
    HPC_TRY(hpc_h5_dataset_open(c->f, name, ndims, dims, &d));
    H5T_class_t want = H5Tget_class(memtype);
    int rc = hpc_h5_dataset_check_type(d, name, want, 0);
    if (!rc) rc = hpc_h5_read_rows(d, memtype, 0, dims[0], data);
    H5Dclose(d);
    if (rc < 0) return hpc_error_push(rc, __FILE__, __LINE__, __func__);
    return 0;
}

int hpc_ckpt_get_part(hpc_ckpt_t *c, const char *name, hid_t memtype, int ndims, const hsize_t *dims,
                      void *data, size_t first, size_t count)
{
    if (!c || !name || ndims < 1 || ndims > 8 || !dims || (count && !data))
        return HPC_ERR(HPC_ERR_ARG, "bad checkpoint array '%s'", name ? name : "(null)");
    hid_t d;
    HPC_TRY(hpc_h5_dataset_open(c->f, name, ndims, dims, &d));
    float dummy;
    int rc = hpc_h5_dataset_check_type(d, name, H5Tget_class(memtype), 0);
    if (!rc) rc = run_io(d, memtype, ndims, dims, first, count, count ? data : &dummy, 0);
    H5Dclose(d);
    if (rc < 0) return hpc_error_push(rc, __FILE__, __LINE__, __func__);
    return 0;
}

int hpc_ckpt_close(hpc_ckpt_t *c)
{
    if (!c) return 0;
    int rc = hpc_h5_close(c->f);
    free(c);
    if (rc < 0) return hpc_error_push(rc, __FILE__, __LINE__, __func__);
    return 0;
}
