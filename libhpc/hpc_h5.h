/* hpc_h5.h - parallel HDF5 helpers: the one right way to write in parallel.
 *
 * Create is collective and writes PATH.partial (the writer holds PATH.lock,
 * so a second run cannot write the same output); every rank writes its own
 * part of a dataset with MPI-IO; hpc_h5_finish() agrees across ranks that
 * all succeeded and only then rank 0 makes the data durable (fsync) and
 * renames PATH.partial to PATH.  A failed run never leaves a file under
 * the final name.
 *
 * HDF5's own error printing is off inside these calls only (the caller's
 * HDF5 calls print as they would); its error stack is translated into one
 * libhpc error instead.  Every collective call here is called by all ranks
 * of the file's communicator.
 */
#ifndef HPC_H5_H
#define HPC_H5_H

#include <hdf5.h>
#include <hpc.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hpc_h5file hpc_h5file_t;

enum { HPC_H5_FAIL_IF_EXISTS = 0, HPC_H5_OVERWRITE = 1, HPC_H5_SETUP = 2 };

/* Collective.  Creates PATH.partial (truncating any old .partial no live
 * run holds).  With HPC_H5_FAIL_IF_EXISTS an existing PATH is an
 * HPC_ERR_IO error; a PATH that is not a regular file (a device, a
 * folder) is refused even with HPC_H5_OVERWRITE. */
HPC_EXPORT int hpc_h5_create(const char *path, MPI_Comm comm, int flags, hpc_h5file_t **out);
/* Collective.  The same, with bytes of disk reserved for the file first
 * (fallocate beyond its end: HDF5's later writes into them cannot find
 * the disk full, which HDF5 1.10 does not survive cleanly).  No room:
 * HPC_ERR_IO "no room for 'PATH.partial': it needs N MiB, its folder has
 * M MiB free (No space left on device)", nothing left behind, HDF5 never
 * involved.  The blocks beyond the end are given back by hpc_h5_finish. */
HPC_EXPORT int hpc_h5_create_reserved(const char *path, MPI_Comm comm, int flags, double bytes,
                                      hpc_h5file_t **out);
/* With HPC_H5_SETUP in flags, the file is created as PATH.setup instead,
 * and becomes PATH.partial at hpc_h5_setup_done: a resumable output lays
 * out its datasets under that name, so that a PATH.partial always holds
 * a complete layout, and a PATH.setup (a run killed while laying out)
 * provably holds no data. */
/* Collective.  PATH.setup -> PATH.partial once the layout is on disk
 * (HDF5's metadata flushed by the caller): the file synced, renamed,
 * its folder synced.  A no-op for a file not created with HPC_H5_SETUP. */
HPC_EXPORT int hpc_h5_setup_done(hpc_h5file_t *f);
/* Collective.  Reserve bytes for a file being written (PATH.partial,
 * resumed): the same reservation for what is still to be written. */
HPC_EXPORT int hpc_h5_reserve(hpc_h5file_t *f, double bytes);
/* Collective.  Opens an existing file: PATH itself, or PATH.partial when
 * partial != 0 (to resume it: then writable, and locked as by create),
 * read-only or read-write.
 *
 * Read-only, a file that holds virtual datasets (hpc-odegen --join's
 * output) is opened by every rank with the serial (sec2) driver, which
 * reads them (HDF5 1.10's MPI-IO driver cannot); every reader below works
 * on it unchanged, each rank reading its own part.  Rank 0 first checks
 * that every source file they map is where HDF5 looks for it (relative
 * names: in the file's folder) and holds the mapped dataset: a missing
 * one is HPC_ERR_DATA naming it, on every rank, never fill values read
 * as data. */
HPC_EXPORT int hpc_h5_open(const char *path, MPI_Comm comm, int partial, int writable,
                           hpc_h5file_t **out);
HPC_EXPORT hid_t hpc_h5_id(const hpc_h5file_t *f);
HPC_EXPORT const char *hpc_h5_path(const hpc_h5file_t *f);   /* the name open */
HPC_EXPORT MPI_Comm hpc_h5_comm(const hpc_h5file_t *f);
/* The driver the file is open with: "mpio" or "sec2" (see hpc_h5_open). */
HPC_EXPORT const char *hpc_h5_driver(const hpc_h5file_t *f);
/* Collective.  ok = this rank's verdict.  Closes the file; for a file
 * being written as PATH.partial (created, or opened partial), if every rank
 * said ok, rank 0 syncs it to disk and renames it to PATH.  Otherwise the
 * .partial stays (resumable) and HPC_ERR_IO is returned on every rank.
 * Frees f in all cases. */
HPC_EXPORT int hpc_h5_finish(hpc_h5file_t *f, int ok);
/* Collective.  Close without the rename (read-only files, or abandoning). */
HPC_EXPORT int hpc_h5_close(hpc_h5file_t *f);
/* Independent.  Make the raw data this rank wrote so far durable (the
 * caller then records that it is done): fdatasync of the file. */
HPC_EXPORT int hpc_h5_sync_data(hpc_h5file_t *f);

/* Raw rows (libhpc/h5_raw.c): a contiguous dataset allocated early (fill
 * written or never to be written) has a fixed place in the file, and its
 * rows can be written there with pwrite - no HDF5 or MPI call, so from
 * any thread, at the cost of a system call.  memtype must be the file's
 * type byte for byte (H5Tequal), else HPC_ERR_ARG; open and close are
 * local and call HDF5 (main thread); write and sync return 0 or -errno
 * and touch no libhpc error state (safe in a thread of one's own). */
typedef struct hpc_h5_raw hpc_h5_raw_t;
HPC_EXPORT int hpc_h5_raw_open(hpc_h5file_t *f, hid_t dset, hid_t memtype, hpc_h5_raw_t **out);
HPC_EXPORT int hpc_h5_raw_write_rows(hpc_h5_raw_t *r, hsize_t row0, hsize_t nrows, const void *buf);
HPC_EXPORT int hpc_h5_raw_sync(hpc_h5_raw_t *r);
HPC_EXPORT const char *hpc_h5_raw_name(const hpc_h5_raw_t *r);
HPC_EXPORT void hpc_h5_raw_close(hpc_h5_raw_t *r);

/* Collective.  Create dataset NAME (intermediate groups created) of type
 * type with ndims dims; chunk may be NULL (contiguous).  flags:
 * HPC_H5_ALLOC_EARLY allocates the whole dataset now (its size is final
 * and a later write never extends the file); with it, fill (a value of
 * type, or NULL for none) is written at allocation, or with
 * HPC_H5_FILL_NEVER too only declared as the fill value (what readers
 * such as netCDF report; no write pass over the dataset). */
enum { HPC_H5_ALLOC_EARLY = 1, HPC_H5_FILL_NEVER = 2 };
HPC_EXPORT int hpc_h5_dataset_create(hpc_h5file_t *f, const char *name, hid_t type, int ndims,
                                     const hsize_t *dims, const hsize_t *chunk, int flags,
                                     const void *fill, hid_t *out);
/* Open a dataset, checking rank and (where expect_dims != NULL) every dim
 * (0 in expect_dims = any).  Missing or wrong shape -> HPC_ERR_DATA
 * naming it. */
HPC_EXPORT int hpc_h5_dataset_open(hpc_h5file_t *f, const char *name, int ndims,
                                   const hsize_t *expect_dims, hid_t *out);
/* Shape and element type of an open dataset: ndims (<= 8) and dims;
 * the type class (H5T_INTEGER, H5T_FLOAT, ...) and size in bytes. */
HPC_EXPORT int hpc_h5_dataset_shape(hid_t dset, int *ndims, hsize_t dims[8]);
HPC_EXPORT int hpc_h5_dataset_type(hid_t dset, H5T_class_t *cls, size_t *size);
/* HPC_ERR_DATA naming the dataset unless its elements are of class cls
 * and size bytes (size 0 = any size of that class). */
HPC_EXPORT int hpc_h5_dataset_check_type(hid_t dset, const char *name, H5T_class_t cls,
                                         size_t size);

/* Collective.  Write / read rows [row0, row0+nrows) along dim 0 (all of
 * the other dims) from/into buf of type memtype.  A rank with nothing to
 * do passes nrows = 0 and still calls. */
HPC_EXPORT int hpc_h5_write_rows(hid_t dset, hid_t memtype, hsize_t row0, hsize_t nrows, const void *buf);
HPC_EXPORT int hpc_h5_read_rows(hid_t dset, hid_t memtype, hsize_t row0, hsize_t nrows, void *buf);
/* Independent (non-collective) variants, for dynamic work distribution. */
HPC_EXPORT int hpc_h5_write_rows_indep(hid_t dset, hid_t memtype, hsize_t row0, hsize_t nrows,
                                       const void *buf);
HPC_EXPORT int hpc_h5_read_rows_indep(hid_t dset, hid_t memtype, hsize_t row0, hsize_t nrows,
                                      void *buf);
/* Independent (each rank its own list, any number of calls).  Read n
 * rows at arbitrary positions (a rank's samples of a shuffled dataset):
 * row j is the block at the index tuple at[j*nsel .. j*nsel+nsel-1] over
 * the first nsel dims, with all of the remaining dims - nsel = 1 on
 * [N, F]: row i, F values; nsel = 2 on [N, T, D]: the D values at (i, t).
 * Any order, repeats allowed; buf gets the rows in the order asked, each
 * prod(remaining dims) elements of memtype.  Each distinct row is read
 * once; dense rows by sieving their span, sparse ones in unions of
 * blocks (runs of neighbours as one). */
HPC_EXPORT int hpc_h5_read_rows_at(hid_t dset, hid_t memtype, int nsel, size_t n, const hsize_t *at,
                                   void *buf);
/* Collective.  A rank's 2D block of a 2D dataset: rows [r0, r0+nr), columns
 * [c0, c0+nc), row-major in buf (nr x nc elements of memtype; HDF5
 * converts between float types).  nr or nc = 0: the rank still calls. */
HPC_EXPORT int hpc_h5_read_block(hid_t dset, hid_t memtype, hsize_t r0, hsize_t c0, hsize_t nr,
                                 hsize_t nc, void *buf);
HPC_EXPORT int hpc_h5_write_block(hid_t dset, hid_t memtype, hsize_t r0, hsize_t c0, hsize_t nr,
                                  hsize_t nc, const void *buf);

/* Attributes on obj (file id, group or dataset).  Writes are collective
 * (every rank passes the same value); reads are local. */
HPC_EXPORT int hpc_h5_attr_set_string(hid_t obj, const char *name, const char *value);
HPC_EXPORT int hpc_h5_attr_set_double(hid_t obj, const char *name, double value);
HPC_EXPORT int hpc_h5_attr_set_int64(hid_t obj, const char *name, int64_t value);
HPC_EXPORT int hpc_h5_attr_set_doubles(hid_t obj, const char *name, const double *v, size_t n);
HPC_EXPORT int hpc_h5_attr_set_int64s(hid_t obj, const char *name, const int64_t *v, size_t n);
/* Reads: a missing attribute is HPC_ERR_DATA.  The string is malloc'd. */
HPC_EXPORT int hpc_h5_attr_get_string(hid_t obj, const char *name, char **out);
HPC_EXPORT int hpc_h5_attr_get_double(hid_t obj, const char *name, double *out);
HPC_EXPORT int hpc_h5_attr_get_int64(hid_t obj, const char *name, int64_t *out);
/* Collective over f's communicator.  Attributes every hpckit output
 * carries: program, command line, hpckit version, rank count (of f's
 * communicator), creation time (rank 0's clock). */
HPC_EXPORT int hpc_h5_provenance(hpc_h5file_t *f, hid_t obj, const char *program, int argc,
                                 char **argv);

/* Dimension scales (HDF5's H5DS API: netCDF and xarray show them as named
 * dimensions with coordinates).  Collective on a file being written:
 * every rank makes the same calls.  scale_set makes dataset scale a
 * scale called name; scale_attach attaches it to dimension dim of dset
 * (the extents must agree).  describe sets the "long_name" and "units"
 * attributes (NULL: that one not). */
HPC_EXPORT int hpc_h5_scale_set(hid_t scale, const char *name);
HPC_EXPORT int hpc_h5_scale_attach(hid_t dset, hid_t scale, unsigned dim);
HPC_EXPORT int hpc_h5_describe(hid_t obj, const char *long_name, const char *units);
/* Collective.  Dataset name [n] int64 holding base, base + 1, ..., base +
 * n - 1 (each rank writes a block): the values of an index dimension,
 * to be made its scale. */
HPC_EXPORT int hpc_h5_index(hpc_h5file_t *f, const char *name, int64_t n, int64_t base, hid_t *out);

/* Translate the current HDF5 error stack into HPC_ERR_HDF5. */
HPC_EXPORT int hpc_error_hdf5(const char *file, int line, const char *call);
#define HPC_H5(call)                                                       \
    do {                                                                   \
        if ((call) < 0) return hpc_error_hdf5(__FILE__, __LINE__, #call);  \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif /* HPC_H5_H */
