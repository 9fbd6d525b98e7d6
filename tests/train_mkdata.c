/* train_mkdata - small /X,/Y files for hpc-train's tests, good and bad,
 * without Python:
 *
 *   train_mkdata KIND OUT.h5 N
 *
 *   regress    X [N,4] float64 in [-1,1), Y [N,2] = (sin x0 + x1 x2, x3^2 - x0)
 *   regress32  the same in float32
 *   classes    X [N,4], Y [N] int32: 3 classes by the sign of two planes
 *   badlabel   classes, with label 7 in row N/2
 *   negative   classes, with label -1 in row N/3
 *   nan        regress, with a NaN in row N/3
 *   valnan     regress, with an infinity in /Y of the last row (validation)
 *   noy        only /X
 *   mismatch   Y with N-1 rows
 *   xint       X of integers
 * Values from the Philox stream (1, row): the same file every time.
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hpc_h5.h"

static int put(hpc_h5file_t *f, const char *name, hid_t ftype, hid_t mtype, int nd, hsize_t r, hsize_t c,
               const void *buf)
{
    hsize_t dims[2] = {r, c};
    hid_t d;
    if (hpc_h5_dataset_create(f, name, ftype, nd, dims, NULL, 0, NULL, &d) < 0) return -1;
    int rc = hpc_h5_write_rows(d, mtype, 0, r, buf);
    H5Dclose(d);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 4 || hpc_init(&argc, &argv) < 0) {
        fprintf(stderr, "usage: train_mkdata KIND OUT.h5 N\n");
        return 2;
    }
    const char *kind = argv[1];
    hsize_t n = (hsize_t)atoll(argv[3]);
    double *x = malloc(n * 4 * sizeof *x), *y = malloc(n * 2 * sizeof *y);
    int32_t *lab = malloc(n * sizeof *lab);
    for (hsize_t i = 0; i < n; i++) {
        hpc_rng_t r;
        hpc_rng_init(&r, 1, i);
        double *xi = x + 4 * i;
        for (int k = 0; k < 4; k++) xi[k] = 2 * hpc_rng_uniform(&r) - 1;
        y[2 * i] = sin(xi[0]) + xi[1] * xi[2];
        y[2 * i + 1] = xi[3] * xi[3] - xi[0];
        lab[i] = (xi[0] + xi[1] > 0) + (xi[2] - xi[3] > 0.3);
    }
    int classes = !strcmp(kind, "classes") || !strcmp(kind, "badlabel") || !strcmp(kind, "negative");
    if (!strcmp(kind, "badlabel")) lab[n / 2] = 7;
    if (!strcmp(kind, "negative")) lab[n / 3] = -1;
    if (!strcmp(kind, "nan")) x[4 * (n / 3) + 1] = NAN;
    if (!strcmp(kind, "valnan")) y[2 * (n - 1) + 1] = INFINITY;
    hpc_h5file_t *f;
    int rc = hpc_h5_create(argv[2], hpc_comm_world(), HPC_H5_OVERWRITE, &f);
    hid_t xt = !strcmp(kind, "regress32") ? H5T_IEEE_F32LE : !strcmp(kind, "xint") ? H5T_STD_I32LE : H5T_IEEE_F64LE;
    if (!rc) rc = put(f, "X", xt, H5T_NATIVE_DOUBLE, 2, n, 4, x);
    if (!rc && classes) rc = put(f, "Y", H5T_STD_I32LE, H5T_NATIVE_INT32, 1, n, 1, lab);
    else if (!rc && strcmp(kind, "noy"))
        rc = put(f, "Y", xt == H5T_STD_I32LE ? H5T_IEEE_F64LE : xt, H5T_NATIVE_DOUBLE, 2,
                 !strcmp(kind, "mismatch") ? n - 1 : n, 2, y);
    if (!rc) rc = hpc_h5_finish(f, 1);
    if (rc) fprintf(stderr, "train_mkdata: %s\n", hpc_last_error());
    free(x);
    free(y);
    free(lab);
    hpc_finalize();
    return rc ? 1 : 0;
}
