/* io.c - the blocks of A, B and C: generated, read and written.
 *
 * Generated elements are keyed by (seed, matrix, row, column) through the
 * Philox stream of (seed ^ matrix tag, row), two 32-bit words per element:
 * any rank computes any element alone, so the matrices are the same for
 * every grid.  Reading and writing go through libhpc's parallel HDF5, one
 * 2D hyperslab per rank (HDF5 converts float32 <-> float64).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "matmul.h"

static const uint64_t TAG[2] = {0x41414141a0000000ULL, 0x42424242b0000000ULL};

double mm_gen_value(int64_t seed, int which, int64_t i, int64_t j, int64_t cols)
{
    (void)cols;
    philox4x32_ctr_t w = hpc_rng_block((uint64_t)seed ^ TAG[which], (uint64_t)i, (uint64_t)j / 2);
    uint64_t bits = j % 2 ? ((uint64_t)w.v[3] << 32 | w.v[2]) : ((uint64_t)w.v[1] << 32 | w.v[0]);
    return 2.0 * ((double)(bits >> 11) * 0x1.0p-53) - 1.0;
}

static void gen(int64_t seed, int which, int64_t r0, int64_t nr, int64_t c0, int64_t nc, int64_t cols,
                int dtype, void *buf)
{
    for (int64_t i = 0; i < nr; i++)
        for (int64_t j = 0; j < nc; j++) {
            double v = mm_gen_value(seed, which, r0 + i, c0 + j, cols);
            if (dtype == MM_F32) ((float *)buf)[i * nc + j] = (float)v;
            else ((double *)buf)[i * nc + j] = v;
        }
}

void mm_gen_blocks(const mm_dist_t *d, int64_t seed, int dtype, void *a, void *b)
{
    gen(seed, 0, d->am0, d->amr, d->ak0, d->akc, d->k, dtype, a);
    gen(seed, 1, d->bk0, d->bkr, d->bn0, d->bnc, d->n, dtype, b);
}

static hid_t memtype(int dtype)
{
    return dtype == MM_F32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
}

/* Open FILE read-only and DSET in it: 2D, float.  Collective. */
static int open_input(const mm_path_t *p, hpc_h5file_t **f, hid_t *d, int64_t dims2[2])
{
    HPC_TRY(hpc_h5_open(p->file, hpc_comm_world(), 0, 0, f));
    int nd = 0;
    hsize_t dims[8];
    int rc = hpc_h5_dataset_open(*f, p->dset, 2, NULL, d);
    if (rc == HPC_ERR_DATA && strstr(hpc_last_cause(), "wrong shape"))
        rc = HPC_ERR(HPC_ERR_DATA, "%s:%s is not a 2D matrix", p->file, p->dset);
    if (rc == 0) rc = hpc_h5_dataset_check_type(*d, p->dset, H5T_FLOAT, 0);
    if (rc == 0) rc = hpc_h5_dataset_shape(*d, &nd, dims);
    if (rc < 0) {
        char why[1024];
        snprintf(why, sizeof why, "%s", hpc_last_cause());
        if (*d >= 0) H5Dclose(*d);
        hpc_h5_close(*f);
        return HPC_ERR(rc, "%s", why);
    }
    dims2[0] = (int64_t)dims[0];
    dims2[1] = (int64_t)dims[1];
    return 0;
}

int mm_input_shapes(const mm_opts_t *o, int64_t *m, int64_t *k, int64_t *k2, int64_t *n, char *err,
                    size_t len)
{
    hpc_h5file_t *f;
    hid_t d = H5I_INVALID_HID;
    int64_t da[2], db[2];
    int rc = open_input(&o->a, &f, &d, da);
    if (rc == 0) {
        H5Dclose(d);
        hpc_h5_close(f);
        d = H5I_INVALID_HID;
        rc = open_input(&o->b, &f, &d, db);
        if (rc == 0) {
            H5Dclose(d);
            hpc_h5_close(f);
        }
    }
    if (rc < 0) {
        snprintf(err, len, "%s", hpc_last_cause());
        return rc;
    }
    *m = da[0];
    *k = da[1];
    *k2 = db[0];
    *n = db[1];
    return 0;
}

static int read_one(const mm_path_t *p, int dtype, int64_t r0, int64_t nr, int64_t c0, int64_t nc, void *buf)
{
    hpc_h5file_t *f;
    hid_t d = H5I_INVALID_HID;
    int64_t dims[2];
    HPC_TRY(open_input(p, &f, &d, dims));
    int rc = hpc_h5_read_block(d, memtype(dtype), (hsize_t)r0, (hsize_t)c0, (hsize_t)nr, (hsize_t)nc, buf);
    H5Dclose(d);
    int crc = hpc_h5_close(f);
    return rc < 0 ? rc : crc;
}

int mm_read_blocks(const mm_opts_t *o, const mm_dist_t *d, void *a, void *b)
{
    HPC_TRY(read_one(&o->a, o->dtype, d->am0, d->amr, d->ak0, d->akc, a));
    HPC_TRY(read_one(&o->b, o->dtype, d->bk0, d->bkr, d->bn0, d->bnc, b));
    return 0;
}

/* dataset NAME [rows x cols] with my block written into it */
static int write_one(hpc_h5file_t *f, const char *name, int dtype, int64_t rows, int64_t cols,
                     int64_t r0, int64_t nr, int64_t c0, int64_t nc, const void *buf, hid_t *out)
{
    hsize_t dims[2] = {(hsize_t)rows, (hsize_t)cols};
    hid_t t = dtype == MM_F32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE, d;
    HPC_TRY(hpc_h5_dataset_create(f, name, t, 2, dims, NULL, HPC_H5_ALLOC_EARLY, NULL, &d));
    int rc = hpc_h5_write_block(d, memtype(dtype), (hsize_t)r0, (hsize_t)c0, (hsize_t)nr, (hsize_t)nc, buf);
    if (rc < 0 || !out) H5Dclose(d);
    else *out = d;
    return rc;
}

static int attrs(hid_t d, const mm_opts_t *o, const mm_dist_t *dist, double wall, const char *alg)
{
    const int64_t shapes[6] = {dist->m, dist->k, dist->k, dist->n, dist->m, dist->n};
    const int64_t grid[2] = {dist->pr, dist->pc};
    HPC_TRY(hpc_h5_attr_set_int64s(d, "shapes", shapes, 6));   /* A M x K, B K x N, C M x N */
    HPC_TRY(hpc_h5_attr_set_int64s(d, "grid", grid, 2));
    HPC_TRY(hpc_h5_attr_set_int64(d, "nb", o->nb));
    HPC_TRY(hpc_h5_attr_set_string(d, "dtype", o->dtype == MM_F32 ? "float32" : "float64"));
    HPC_TRY(hpc_h5_attr_set_string(d, "device", o->device == MM_CUDA ? "cuda" : "cpu"));
    HPC_TRY(hpc_h5_attr_set_string(d, "bcast_alg", alg));
    HPC_TRY(hpc_h5_attr_set_double(d, "wall_time", wall));
    if (o->gen) HPC_TRY(hpc_h5_attr_set_int64(d, "seed", o->seed));
    return 0;
}

int mm_write(const mm_opts_t *o, const mm_dist_t *d, const void *a, const void *b, const void *c,
             int argc, char **argv, double wall, const char *alg)
{
    hpc_h5file_t *f;
    HPC_TRY(hpc_h5_create(o->out.file, hpc_comm_world(), o->force ? HPC_H5_OVERWRITE : HPC_H5_FAIL_IF_EXISTS, &f));
    hid_t cd = H5I_INVALID_HID;
    int rc = write_one(f, o->out.dset, o->dtype, d->m, d->n, d->am0, d->amr, d->bn0, d->bnc, c, &cd);
    if (rc == 0) rc = attrs(cd, o, d, wall, alg);
    if (rc == 0) rc = hpc_h5_provenance(f, hpc_h5_id(f), MATMUL_PROG, argc, argv);
    if (cd >= 0) H5Dclose(cd);
    if (rc == 0 && o->save_inputs) {
        rc = write_one(f, "A", o->dtype, d->m, d->k, d->am0, d->amr, d->ak0, d->akc, a, NULL);
        if (rc == 0) rc = write_one(f, "B", o->dtype, d->k, d->n, d->bk0, d->bkr, d->bn0, d->bnc, b, NULL);
    }
    int frc = hpc_h5_finish(f, rc == 0);
    return rc < 0 ? rc : frc;
}
