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

int mm_input_shapes(const mm_opts_t *o, int64_t *m, int64_t *k, int64_t *k2, int64_t *n)
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
    if (rc < 0) return hpc_error_push(rc, __FILE__, __LINE__, __func__);
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
    if (rc < 0) H5Dclose(d);
    else *out = d;
    return rc;
}

static int attrs(hid_t d, const mm_opts_t *o, const mm_dist_t *dist, double wall, const char *alg)
{
    const int64_t shapes[6] = {dist->m, dist->k, dist->k, dist->n, dist->m, dist->n};
    const int64_t grid[2] = {dist->pr, dist->pc};
    HPC_TRY(hpc_h5_describe(d, "C = A B", NULL));
    HPC_TRY(hpc_h5_attr_set_int64s(d, "shapes", shapes, 6));   /* A M x K, B K x N, C M x N */
    HPC_TRY(hpc_h5_attr_set_int64s(d, "grid", grid, 2));
    HPC_TRY(hpc_h5_attr_set_int64(d, "nb", o->nb));
    HPC_TRY(hpc_h5_attr_set_string(d, "dtype", o->dtype == MM_F32 ? "float32" : "float64"));
    HPC_TRY(hpc_h5_attr_set_string(d, "device", o->device == MM_CUDA ? "cuda" : "cpu"));
    HPC_TRY(hpc_h5_attr_set_string(d, "bcast_alg", alg));
    HPC_TRY(hpc_h5_attr_set_double(d, "wall_time", wall));
    if (o->gen) HPC_TRY(hpc_h5_attr_set_int64(d, "seed", o->seed));
    /* where the inputs came from: files, or --gen */
    HPC_TRY(hpc_h5_attr_set_string(d, "a", o->gen ? "generated (--gen)" : o->a.file));
    HPC_TRY(hpc_h5_attr_set_string(d, "b", o->gen ? "generated (--gen)" : o->b.file));
    if (!o->gen) HPC_TRY(hpc_h5_attr_set_string(d, "a_dataset", o->a.dset));
    if (!o->gen) HPC_TRY(hpc_h5_attr_set_string(d, "b_dataset", o->b.dset));
    return 0;
}

/* --verify's figures (C is written only when it passed) */
static int verify_attrs(hid_t d, const mm_check_t *chk)
{
    HPC_TRY(hpc_h5_attr_set_string(d, "verify", "passed: Freivalds' check, |A(Bx) - Cx| within its rounding "
                                   "bound for every element (docs/matmul.md)"));
    HPC_TRY(hpc_h5_attr_set_int64(d, "verify_vectors", MM_VERIFY_VECTORS));
    HPC_TRY(hpc_h5_attr_set_double(d, "verify_residual", chk->residual));
    HPC_TRY(hpc_h5_attr_set_double(d, "verify_bound", chk->bound));
    HPC_TRY(hpc_h5_attr_set_double(d, "verify_max_abs_diff", chk->worst_abs));
    /* rows of A and columns of B with NaN or infinity (--allow-nonfinite):
     * their rows and columns of C were compared exactly */
    HPC_TRY(hpc_h5_attr_set_int64(d, "verify_nonfinite_rows", chk->nf_rows));
    HPC_TRY(hpc_h5_attr_set_int64(d, "verify_nonfinite_columns", chk->nf_cols));
    return 0;
}

/* a generated input saved beside C: what it is and how to draw it again */
static int input_attrs(hid_t d, const mm_opts_t *o, const char *which)
{
    char what[96];
    snprintf(what, sizeof what, "input %s of C = A B (--save-inputs)", which);
    HPC_TRY(hpc_h5_describe(d, what, NULL));
    HPC_TRY(hpc_h5_attr_set_string(d, "distribution",
                                   "uniform in [-1, 1), element (i, j) from the Philox stream (seed ^ matrix "
                                   "tag, i), word pair j / 2 (hpc-matmul --gen)"));
    HPC_TRY(hpc_h5_attr_set_int64(d, "seed", o->seed));
    HPC_TRY(hpc_h5_attr_set_string(d, "dtype", o->dtype == MM_F32 ? "float32" : "float64"));
    return 0;
}

/* The index scales (netCDF and xarray see named dimensions): row [M],
 * column [N], and with the inputs inner [K]; out[3] = their ids */
static int scales(hpc_h5file_t *f, const mm_dist_t *d, int inner, hid_t out[3])
{
    const char *names[3] = {"row", "column", "inner"};
    const char *what[3] = {"row of C and A", "column of C and B", "the summed dimension: column of A, row of B"};
    const int64_t n[3] = {d->m, d->n, d->k};
    for (int i = 0; i < 3; i++) out[i] = H5I_INVALID_HID;
    for (int i = 0; i < 2 + inner; i++) {
        char path[16];
        snprintf(path, sizeof path, "/%s", names[i]);
        HPC_TRY(hpc_h5_index(f, path, n[i], 0, &out[i]));
        HPC_TRY(hpc_h5_scale_set(out[i], names[i]));
        HPC_TRY(hpc_h5_describe(out[i], what[i], NULL));
    }
    return 0;
}

static int attach(hid_t d, hid_t rows, hid_t cols)
{
    HPC_TRY(hpc_h5_scale_attach(d, rows, 0));
    HPC_TRY(hpc_h5_scale_attach(d, cols, 1));
    return 0;
}

static void close_all(hid_t *ids, int n)
{
    for (int i = 0; i < n; i++)
        if (ids[i] >= 0) H5Dclose(ids[i]);
}

int mm_write(const mm_opts_t *o, const mm_dist_t *d, const void *a, const void *b, const void *c,
             int argc, char **argv, double wall, const char *alg, const mm_check_t *chk)
{
    hpc_h5file_t *f;
    HPC_TRY(hpc_h5_create(o->out.file, hpc_comm_world(), o->force ? HPC_H5_OVERWRITE : HPC_H5_FAIL_IF_EXISTS, &f));
    /* C, A, B, then the scales row, column, inner */
    hid_t id[6] = {H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID,
                   H5I_INVALID_HID};
    int rc = write_one(f, o->out.dset, o->dtype, d->m, d->n, d->am0, d->amr, d->bn0, d->bnc, c, &id[0]);
    if (rc == 0) rc = attrs(id[0], o, d, wall, alg);
    if (rc == 0 && chk) rc = verify_attrs(id[0], chk);
    if (rc == 0) rc = hpc_h5_provenance(f, hpc_h5_id(f), MATMUL_PROG, argc, argv);
    if (rc == 0 && o->save_inputs) {
        rc = write_one(f, "A", o->dtype, d->m, d->k, d->am0, d->amr, d->ak0, d->akc, a, &id[1]);
        if (rc == 0) rc = input_attrs(id[1], o, "A");
        if (rc == 0) rc = write_one(f, "B", o->dtype, d->k, d->n, d->bk0, d->bkr, d->bn0, d->bnc, b, &id[2]);
        if (rc == 0) rc = input_attrs(id[2], o, "B");
    }
    if (rc == 0) rc = scales(f, d, o->save_inputs, id + 3);
    if (rc == 0) rc = attach(id[0], id[3], id[4]);
    if (rc == 0 && o->save_inputs) rc = attach(id[1], id[3], id[5]);
    if (rc == 0 && o->save_inputs) rc = attach(id[2], id[5], id[4]);
    close_all(id, 6);
    int frc = hpc_h5_finish(f, rc == 0);
    return rc < 0 ? rc : frc;
}
