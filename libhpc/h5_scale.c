/* h5_scale.c - dimension scales (HDF5's H5DS, what netCDF and xarray
 * read as named dimensions and coordinates), descriptions and provenance.
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <hdf5_hl.h>
#include "hpc_h5.h"
#include "internal.h"
#include "h5_internal.h"

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
