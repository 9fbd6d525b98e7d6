/* h5_raw.c - rows written straight into an HDF5 file's bytes.
 *
 * A dataset allocated early with the contiguous layout has a fixed place
 * in the file: row r starts at H5Dget_offset() + r * (bytes per row).
 * Once that place is known, rows can be written with pwrite(2): no HDF5
 * and no MPI call, so from any thread (hpc-odegen's writer thread), and
 * without HDF5's cost per call.  HDF5 never writes those bytes itself:
 * such a dataset has no filters and, allocated with HPC_H5_FILL_NEVER or
 * after its fill was written, nothing pending; the file's metadata, which
 * HDF5 writes at close, lies elsewhere.  The bytes are the file's own
 * type: a memory type that differs from it (another size or byte order)
 * is refused, and the caller converts.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hpc_h5.h"
#include "internal.h"

struct hpc_h5_raw {
    int fd;                 /* this handle's own descriptor, write-only */
    off_t base;             /* the dataset's first byte in the file */
    size_t row_bytes;
    hsize_t rows;
    char name[128];         /* for messages */
    char path[4096];
};

/* Where dset lies and how long its rows are; HDF5's printing off.  0, or
 * a reason why it cannot be written raw. */
static const char *layout_of(hid_t dset, hid_t memtype, haddr_t *addr, size_t *row_bytes, hsize_t *rows)
{
    const char *why = NULL;
    hid_t dcpl = H5Dget_create_plist(dset), ftype = H5Dget_type(dset), space = H5Dget_space(dset);
    hsize_t dims[8];
    int nd = space < 0 ? -1 : H5Sget_simple_extent_ndims(space);
    if (dcpl < 0 || ftype < 0 || nd < 1 || nd > 8) why = "not a dataset of rows";
    else if (H5Pget_layout(dcpl) != H5D_CONTIGUOUS) why = "not contiguous";
    else if (H5Tequal(ftype, memtype) <= 0) why = "its type in the file differs from the memory type";
    else if ((*addr = H5Dget_offset(dset)) == HADDR_UNDEF) why = "not allocated";
    if (!why) {
        H5Sget_simple_extent_dims(space, dims, NULL);
        size_t b = H5Tget_size(ftype);
        for (int i = 1; i < nd; i++) b *= (size_t)dims[i];
        *row_bytes = b;
        *rows = dims[0];
    }
    if (space >= 0) H5Sclose(space);
    if (ftype >= 0) H5Tclose(ftype);
    if (dcpl >= 0) H5Pclose(dcpl);
    return why;
}

int hpc_h5_raw_open(hpc_h5file_t *f, hid_t dset, hid_t memtype, hpc_h5_raw_t **out)
{
    if (!f || !out) return HPC_ERR(HPC_ERR_ARG, "NULL file or handle");
    H5E_auto2_t fn;
    void *data;
    H5Eget_auto2(H5E_DEFAULT, &fn, &data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    char name[128] = "?";
    H5Iget_name(dset, name, sizeof name);
    haddr_t addr = HADDR_UNDEF;
    size_t row_bytes = 0;
    hsize_t rows = 0;
    const char *why = layout_of(dset, memtype, &addr, &row_bytes, &rows);
    H5Eclear2(H5E_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, fn, data);
    if (why) return HPC_ERR(HPC_ERR_ARG, "dataset '%s' cannot be written raw: %s", name, why);
    hpc_h5_raw_t *r = calloc(1, sizeof *r);
    if (!r) return HPC_ERR(HPC_ERR_NOMEM, "raw handle");
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->path, sizeof r->path, "%s", hpc_h5_path(f));
    r->base = (off_t)addr;
    r->row_bytes = row_bytes;
    r->rows = rows;
    r->fd = open(r->path, O_WRONLY | O_CLOEXEC);
    if (r->fd < 0) {
        int rc = HPC_ERR(HPC_ERR_IO, "cannot open '%s' for writing: %s", r->path, strerror(errno));
        free(r);
        return rc;
    }
    *out = r;
    return 0;
}

/* Thread-safe for distinct rows (pwrite); no libhpc error state is
 * touched: -errno on failure, for the caller to report from its thread. */
int hpc_h5_raw_write_rows(hpc_h5_raw_t *r, hsize_t row0, hsize_t nrows, const void *buf)
{
    if (row0 > r->rows || nrows > r->rows - row0) return -ERANGE;
    const char *p = buf;
    size_t left = (size_t)nrows * r->row_bytes;
    off_t at = r->base + (off_t)(row0 * r->row_bytes);
    while (left > 0) {
        ssize_t w = pwrite(r->fd, p, left, at);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -errno;
        if (w == 0) return -EIO;
        p += w, at += w, left -= (size_t)w;
    }
    return 0;
}

int hpc_h5_raw_sync(hpc_h5_raw_t *r)
{
    return fdatasync(r->fd) == 0 ? 0 : -errno;
}

const char *hpc_h5_raw_name(const hpc_h5_raw_t *r)
{
    return r->name;
}

void hpc_h5_raw_close(hpc_h5_raw_t *r)
{
    if (!r) return;
    close(r->fd);
    free(r);
}
