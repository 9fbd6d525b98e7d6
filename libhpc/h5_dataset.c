/* h5_dataset.c - datasets: create (chunked, filled), open with the shape
 * checked, and their shape and type checked against what a reader needs. */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hpc_h5.h"
#include "internal.h"
#include "h5_internal.h"

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
