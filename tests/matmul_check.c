/* matmul_check - the serial reference for hpc-matmul's tests: reads whole
 * A, B and C (small sizes), multiplies A B with OpenBLAS in double, and
 * checks every element of C against it within the rounding bound
 *   |C - A B| <= (gamma_K(u_C) + gamma_K(u)) |A| |B| + tiny
 * (u_C the unit roundoff of C's type, u of double: both products may sum
 * in any order).  Prints the worst ratio to the bound; exit 0 if all are
 * within it, 1 if not, 2 on bad arguments.
 *
 *   matmul_check FILE:/A FILE:/B FILE:/C
 */
#include "config.h"
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hpc_h5.h"

/* the whole dataset as doubles; its dims and element size */
static double *load(const char *arg, hsize_t dims[2], size_t *es)
{
    char file[1024];
    const char *colon = strrchr(arg, ':');
    if (!colon) return NULL;
    snprintf(file, sizeof file, "%.*s", (int)(colon - arg), arg);
    hpc_h5file_t *f;
    hid_t d;
    int nd;
    hsize_t all[8];
    H5T_class_t cls;
    if (hpc_h5_open(file, MPI_COMM_SELF, 0, 0, &f) < 0) return NULL;
    double *buf = NULL;
    if (hpc_h5_dataset_open(f, colon + 1, 2, NULL, &d) == 0) {
        if (hpc_h5_dataset_shape(d, &nd, all) == 0 && hpc_h5_dataset_type(d, &cls, es) == 0) {
            dims[0] = all[0];
            dims[1] = all[1];
            buf = malloc(sizeof(double) * (all[0] * all[1] + 1));
            if (buf && hpc_h5_read_rows(d, H5T_NATIVE_DOUBLE, 0, all[0], buf) < 0) {
                free(buf);
                buf = NULL;
            }
        }
        H5Dclose(d);
    }
    hpc_h5_close(f);
    return buf;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: matmul_check FILE:/A FILE:/B FILE:/C\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    hsize_t da[2], db[2], dc[2];
    size_t ea, eb, ec;
    double *a = load(argv[1], da, &ea), *b = load(argv[2], db, &eb), *c = load(argv[3], dc, &ec);
    if (!a || !b || !c || da[1] != db[0] || dc[0] != da[0] || dc[1] != db[1]) {
        fprintf(stderr, "matmul_check: cannot read the matrices, or their shapes do not match: %s\n",
                hpc_last_error());
        MPI_Finalize();
        return 2;
    }
    int m = (int)da[0], k = (int)da[1], n = (int)db[1];
    double *ref = calloc((size_t)m * n + 1, sizeof *ref), *aa = malloc(sizeof(double) * ((size_t)m * k + 1));
    double *ab = malloc(sizeof(double) * ((size_t)k * n + 1)), *mag = calloc((size_t)m * n + 1, sizeof *mag);
    for (size_t i = 0; i < (size_t)m * k; i++) aa[i] = fabs(a[i]);
    for (size_t i = 0; i < (size_t)k * n; i++) ab[i] = fabs(b[i]);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, k, b, n, 0.0, ref, n);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, aa, k, ab, n, 0.0, mag, n);
    double u = DBL_EPSILON / 2, uc = ec == 4 ? FLT_EPSILON / 2 : u, worst = 0;
    /* float32 C: A and B may also have been rounded to float32 on reading */
    double g = k * uc / (1 - k * uc) + (k + 1) * u / (1 - (k + 1) * u) + (ec == 4 ? 2.1 * uc : 0);
    long bad = 0;
    for (size_t i = 0; i < (size_t)m * n; i++) {
        double r = fabs(c[i] - ref[i]) / (g * mag[i] + DBL_MIN);
        if (r > worst) worst = r;
        bad += !(r <= 1.0);
    }
    printf("matmul_check: %d x %d x %d (%s C), %ld elements outside the bound, worst %.3g of it\n", m, k, n,
           ec == 4 ? "float32" : "float64", bad, worst);
    free(a), free(b), free(c), free(ref), free(aa), free(ab), free(mag);
    MPI_Finalize();
    return bad ? 1 : 0;
}
