/* hpc_h5.h - parallel HDF5 helpers: the one right way to write in parallel.
 *
 * Create is collective and writes PATH.partial; every rank writes its own
 * rows of a dataset with collective MPI-IO; hpc_h5_finish() agrees across
 * ranks that all succeeded and only then rank 0 renames PATH.partial to
 * PATH.  A failed run never leaves a file under the final name.
 */
#ifndef HPC_H5_H
#define HPC_H5_H

#include <hdf5.h>
#include <hpc.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hpc_h5file hpc_h5file_t;

enum { HPC_H5_FAIL_IF_EXISTS = 0, HPC_H5_OVERWRITE = 1 };

/* Collective.  Creates PATH.partial (truncating any old .partial).  With
 * HPC_H5_FAIL_IF_EXISTS an existing PATH is an HPC_ERR_IO error. */
HPC_EXPORT int hpc_h5_create(const char *path, MPI_Comm comm, int flags, hpc_h5file_t **out);
/* Collective.  Opens an existing file (PATH itself, or PATH.partial when
 * partial != 0, e.g. to resume) read-only or read-write. */
HPC_EXPORT int hpc_h5_open(const char *path, MPI_Comm comm, int partial, int writable,
                hpc_h5file_t **out);
HPC_EXPORT hid_t hpc_h5_id(const hpc_h5file_t *f);
HPC_EXPORT const char *hpc_h5_path(const hpc_h5file_t *f);   /* the name being written */
/* Collective.  ok = this rank's verdict.  Closes the file; if every rank
 * said ok, rank 0 renames PATH.partial -> PATH (for files from
 * hpc_h5_create).  Otherwise the .partial stays (resumable) and
 * HPC_ERR_IO is returned on every rank.  Frees f in all cases. */
HPC_EXPORT int hpc_h5_finish(hpc_h5file_t *f, int ok);
/* Close without the rename (read-only files, or abandoning). */
HPC_EXPORT int hpc_h5_close(hpc_h5file_t *f);

/* Collective.  Create dataset NAME (intermediate groups created) of type
 * type with ndims dims; chunk may be NULL (contiguous). */
HPC_EXPORT int hpc_h5_dataset_create(hpc_h5file_t *f, const char *name, hid_t type, int ndims,
                          const hsize_t *dims, const hsize_t *chunk, hid_t *out);
/* Open a dataset, checking rank and (where expect_dims != NULL) every dim
 * (0 in expect_dims = any).  Wrong shape -> HPC_ERR_DATA naming it. */
HPC_EXPORT int hpc_h5_dataset_open(hpc_h5file_t *f, const char *name, int ndims,
                        const hsize_t *expect_dims, hid_t *out);
/* Collective.  Write / read rows [row0, row0+nrows) along dim 0 (all of
 * the other dims) from/into buf of type memtype.  A rank with nothing to
 * do passes nrows = 0 and still calls. */
HPC_EXPORT int hpc_h5_write_rows(hid_t dset, hid_t memtype, hsize_t row0, hsize_t nrows, const void *buf);
HPC_EXPORT int hpc_h5_read_rows(hid_t dset, hid_t memtype, hsize_t row0, hsize_t nrows, void *buf);
/* Independent (non-collective) variants, for dynamic work distribution. */
HPC_EXPORT int hpc_h5_write_rows_indep(hid_t dset, hid_t memtype, hsize_t row0, hsize_t nrows, const void *buf);
HPC_EXPORT int hpc_h5_read_rows_indep(hid_t dset, hid_t memtype, hsize_t row0, hsize_t nrows, void *buf);

/* Attributes on obj (file id, group or dataset).  Writes are collective
 * (every rank passes the same value); reads are local. */
HPC_EXPORT int hpc_h5_attr_set_string(hid_t obj, const char *name, const char *value);
HPC_EXPORT int hpc_h5_attr_set_double(hid_t obj, const char *name, double value);
HPC_EXPORT int hpc_h5_attr_set_int64(hid_t obj, const char *name, int64_t value);
HPC_EXPORT int hpc_h5_attr_set_doubles(hid_t obj, const char *name, const double *v, size_t n);
/* Reads: a missing attribute is HPC_ERR_DATA.  The string is malloc'd. */
HPC_EXPORT int hpc_h5_attr_get_string(hid_t obj, const char *name, char **out);
HPC_EXPORT int hpc_h5_attr_get_double(hid_t obj, const char *name, double *out);
HPC_EXPORT int hpc_h5_attr_get_int64(hid_t obj, const char *name, int64_t *out);
/* Attributes every hpckit output carries: command line, hpckit version,
 * rank count, and the program name. */
HPC_EXPORT int hpc_h5_attr_provenance(hid_t obj, const char *program, int argc, char **argv);

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
