/* dgemm_bench - one process's OpenBLAS GEMM with T threads, the baseline
 * apps/matmul/bench.sh puts beside hpc-matmul.  Not installed.
 *
 *   dgemm_bench N T [REPS [float32]]
 *
 * Prints one line: dgemm N threads T: median seconds, GFLOP/s.
 */
#include "config.h"
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hpc.h"

int main(int argc, char **argv)
{
    int64_t v[3] = {0, 0, 3};
    for (int i = 1; i < argc && i < 4; i++)
        if (hpc_parse_int64(argv[i], &v[i - 1]) < 0 || v[i - 1] < 1 || v[i - 1] > 1000000) argc = 0;
    if (argc < 3) {
        fprintf(stderr, "usage: dgemm_bench N THREADS [REPS [float32]] (positive integers)\n");
        return 2;
    }
    int n = (int)v[0], th = (int)v[1], reps = (int)v[2];
    int f32 = argc > 4 && !strcmp(argv[4], "float32");
    size_t es = f32 ? 4 : 8, nn = (size_t)n * n;
    char *a = malloc(nn * es), *b = malloc(nn * es), *c = malloc(nn * es);
    double *t = malloc(sizeof(double) * (size_t)reps);
    if (!a || !b || !c || !t) return 1;
    for (size_t i = 0; i < nn; i++) {
        if (f32) ((float *)a)[i] = 0.5f, ((float *)b)[i] = 0.25f;
        else ((double *)a)[i] = 0.5, ((double *)b)[i] = 0.25;
    }
    openblas_set_num_threads(th);
    for (int i = 0; i < reps; i++) {
        double t0 = hpc_wtime();
        if (f32)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, (float *)a, n, (float *)b, n,
                        0.0f, (float *)c, n);
        else
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, (double *)a, n, (double *)b, n,
                        0.0, (double *)c, n);
        t[i] = hpc_wtime() - t0;
    }
    double med = hpc_median(t, (size_t)reps);
    printf("%s %d threads %d: %.4f s, %.2f GFLOP/s\n", f32 ? "sgemm" : "dgemm", n, th, med,
           2.0 * n * n * (double)n / med / 1e9);
    free(a), free(b), free(c), free(t);
    return 0;
}
