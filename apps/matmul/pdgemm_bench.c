/* pdgemm_bench - ScaLAPACK's pdgemm, block-cyclic on a PR x PC BLACS grid,
 * the baseline apps/matmul/bench.sh puts beside hpc-matmul.  Not
 * installed.
 *
 *   mpiexec -n P pdgemm_bench M N K PR PC NB [REPS]
 *
 * Prints one line: pdgemm M N K PRxPC nb NB: median seconds, GFLOP/s.
 */
#include "config.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "hpc.h"

/* ScaLAPACK / BLACS have no C header in Debian: their Fortran and C
 * entry points, as the libraries export them */
void Cblacs_get(int ctx, int what, int *val);
void Cblacs_gridinit(int *ctx, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctx, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctx);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb, const int *irsrc,
               const int *icsrc, const int *ctx, const int *lld, int *info);
void pdgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k, const double *alpha,
             const double *a, const int *ia, const int *ja, const int *desca, const double *b, const int *ib,
             const int *jb, const int *descb, const double *beta, double *c, const int *ic, const int *jc,
             const int *descc);

/* a local block-cyclic array of a rows x cols matrix, and its descriptor */
static double *local(int rows, int cols, int nb, int ctx, int pr, int pc, int r, int c, int *desc)
{
    int zero = 0, info, lr = numroc_(&rows, &nb, &r, &zero, &pr), lc = numroc_(&cols, &nb, &c, &zero, &pc);
    int lld = lr > 1 ? lr : 1;
    descinit_(desc, &rows, &cols, &nb, &nb, &zero, &zero, &ctx, &lld, &info);
    double *p = malloc(sizeof(double) * ((size_t)lld * (lc > 0 ? lc : 1)));
    for (size_t i = 0; p && i < (size_t)lld * (lc > 0 ? lc : 1); i++) p[i] = 0.5 - (double)(i % 7) / 7;
    return p;
}

int main(int argc, char **argv)
{
    int64_t v[7] = {0, 0, 0, 0, 0, 0, 3};
    int ok = hpc_init(&argc, &argv) == 0 && argc >= 7;
    for (int i = 1; ok && i < argc && i < 8; i++)
        ok = hpc_parse_int64(argv[i], &v[i - 1]) == 0 && v[i - 1] >= 1 && v[i - 1] <= 1000000000;
    if (!ok) {
        fprintf(stderr, "usage: pdgemm_bench M N K PR PC NB [REPS] (positive integers)\n");
        return 2;
    }
    int m = (int)v[0], n = (int)v[1], k = (int)v[2], pr = (int)v[3], pc = (int)v[4];
    int nb = (int)v[5], reps = (int)v[6], ctx, r, c, one = 1;
    if (pr * pc != hpc_size()) {
        if (hpc_rank() == 0) fprintf(stderr, "pdgemm_bench: %dx%d grid on %d ranks\n", pr, pc, hpc_size());
        hpc_finalize();
        return 2;
    }
    Cblacs_get(-1, 0, &ctx);
    Cblacs_gridinit(&ctx, "Row", pr, pc);
    Cblacs_gridinfo(ctx, &pr, &pc, &r, &c);
    int da[9], db[9], dc[9];
    double *a = local(m, k, nb, ctx, pr, pc, r, c, da), *b = local(k, n, nb, ctx, pr, pc, r, c, db);
    double *cc = local(m, n, nb, ctx, pr, pc, r, c, dc), alpha = 1, beta = 0;
    double *t = malloc(sizeof(double) * (size_t)reps);
    for (int i = 0; i < reps; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        pdgemm_("N", "N", &m, &n, &k, &alpha, a, &one, &one, da, b, &one, &one, db, &beta, cc, &one, &one, dc);
        double mine = MPI_Wtime() - t0;
        MPI_Allreduce(&mine, &t[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    double med = hpc_median(t, (size_t)reps);
    if (hpc_rank() == 0)
        printf("pdgemm %d %d %d %dx%d nb %d: %.4f s, %.2f GFLOP/s\n", m, n, k, pr, pc, nb, med,
               2.0 * m * n * k / med / 1e9);
    free(a), free(b), free(cc), free(t);
    Cblacs_gridexit(ctx);
    hpc_finalize();
    return 0;
}
