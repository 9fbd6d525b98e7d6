/* cvode_direct.c - the yardstick for hpc-odegen's --method BDF: the same
 * Robertson problem integrated by SUNDIALS CVODE called directly, as a
 * C programmer who knows CVODE would write it (the "against CVODE
 * used directly, goal >= 0.9x").  A benchmark, not a test:
 * apps/odegen/bench.sh runs it (METHOD=BDF).
 *
 *   cvode_direct FILE.h5
 *
 * FILE.h5 is an hpc-odegen output of tests/odegen_systems/robertson.c with
 * --method BDF; from it come the rate constants, rtol, atol, t0, t1, the
 * output times and every trajectory's initial state, so both integrate
 * the same problems.  The same set-up as implicit.c: BDF, the dense
 * matrix and LU, the analytic Jacobian, no step limit, the stop time t1,
 * one CVODE instance re-initialised per trajectory.  The difference is
 * the driving: CV_NORMAL to each output time (CVODE interpolates) instead
 * of hpc-odegen's CV_ONE_STEP plus CVodeGetDky (which events need), and
 * the right-hand side and Jacobian written inline, column-major, instead
 * of through the system file's functions.
 *
 * Prints one line: "cvode-direct N traj in S s: R traj/s; M of the N
 * trajectories the same bits as FILE's /y, max difference D tolerances".
 * The comparison makes sure the two did the same work (same steps give
 * the same bits).
 */
#include "config.h"
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

typedef struct {
    double k1, k2, k3;
} rob_t;

static int rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *data)
{
    (void)t;
    const rob_t *k = data;
    const double *x = N_VGetArrayPointer(y);
    double *f = N_VGetArrayPointer(ydot);
    double r1 = k->k1 * x[0], r2 = k->k2 * x[1] * x[2], r3 = k->k3 * x[1] * x[1];
    f[0] = -r1 + r2;
    f[1] = r1 - r2 - r3;
    f[2] = r3;
    return 0;
}

static int jac(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *data, N_Vector t1, N_Vector t2,
               N_Vector t3)
{
    (void)t, (void)fy, (void)t1, (void)t2, (void)t3;
    const rob_t *k = data;
    const double *x = N_VGetArrayPointer(y);
    double *c0 = SUNDenseMatrix_Column(J, 0), *c1 = SUNDenseMatrix_Column(J, 1), *c2 = SUNDenseMatrix_Column(J, 2);
    c0[0] = -k->k1, c0[1] = k->k1, c0[2] = 0;
    c1[0] = k->k2 * x[2], c1[1] = -k->k2 * x[2] - 2 * k->k3 * x[1], c1[2] = 2 * k->k3 * x[1];
    c2[0] = k->k2 * x[1], c2[1] = -k->k2 * x[1], c2[2] = 0;
    return 0;
}

static double attr(hid_t f, const char *name)
{
    double v = NAN;
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    if (a < 0 || H5Aread(a, H5T_NATIVE_DOUBLE, &v) < 0) {
        fprintf(stderr, "cvode_direct: no attribute %s\n", name);
        exit(1);
    }
    H5Aclose(a);
    return v;
}

/* the dataset NAME as doubles; its dimensions into dims[3] (1 where absent) */
static double *read_all(hid_t f, const char *name, hsize_t dims[3])
{
    hid_t d = H5Dopen(f, name, H5P_DEFAULT);
    if (d < 0) {
        fprintf(stderr, "cvode_direct: no dataset %s\n", name);
        exit(1);
    }
    hid_t s = H5Dget_space(d);
    dims[0] = dims[1] = dims[2] = 1;
    H5Sget_simple_extent_dims(s, dims, NULL);
    double *v = malloc(dims[0] * dims[1] * dims[2] * sizeof *v);
    if (!v || H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) exit(1);
    H5Sclose(s);
    H5Dclose(d);
    return v;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cvode_direct FILE.h5 (hpc-odegen -m BDF --system-file robertson.c)\n");
        return 2;
    }
    hid_t f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return 1;
    rob_t k = {attr(f, "param_k1"), attr(f, "param_k2"), attr(f, "param_k3")};
    double rtol = attr(f, "rtol"), atol = attr(f, "atol"), t0 = attr(f, "t0"), t1 = attr(f, "t1");
    hsize_t dt[3], dx[3], dy[3];
    double *tgrid = read_all(f, "t", dt), *x0 = read_all(f, "x0", dx), *yfile = read_all(f, "y", dy);
    H5Fclose(f);
    const int nt = (int)dt[0], D = 3;
    const long n = (long)dx[0];
    if (dx[1] != 3 || dy[1] != dt[0]) {
        fprintf(stderr, "cvode_direct: %s is not a Robertson file\n", argv[1]);
        return 1;
    }
    double *y = malloc((size_t)n * nt * D * sizeof *y);

    SUNContext ctx;
    SUNContext_Create(NULL, &ctx);
    N_Vector v = N_VNew_Serial(D, ctx);
    SUNMatrix A = SUNDenseMatrix(D, D, ctx);
    SUNLinearSolver LS = SUNLinSol_Dense(v, A, ctx);
    void *mem = CVodeCreate(CV_BDF, ctx);
    int flag = CVodeInit(mem, rhs, t0, v);
    flag |= CVodeSetUserData(mem, &k);
    flag |= CVodeSStolerances(mem, rtol, atol);
    flag |= CVodeSetLinearSolver(mem, LS, A);
    flag |= CVodeSetJacFn(mem, jac);
    flag |= CVodeSetMaxNumSteps(mem, -1);
    if (flag) return 1;

    double start = now();
    long failed = 0;
    for (long i = 0; i < n; i++) {
        double *yi = y + (size_t)i * nt * D, *s = N_VGetArrayPointer(v), t = t0;
        memcpy(s, x0 + i * D, D * sizeof *s);
        memcpy(yi, s, D * sizeof *s);
        CVodeReInit(mem, t0, v);
        CVodeSetStopTime(mem, t1);
        /* CVODE estimates the first step from the distance to the first
         * tout (cvHin); hpc-odegen's first call asks for t1 (one step at a
         * time), so the first step here goes towards t1 too: the same
         * steps, hence the same bits, and the same work timed */
        if (CVode(mem, t1, v, &t, CV_ONE_STEP) < 0) failed++;
        for (int j = 1; j < nt; j++) {
            if (CVode(mem, tgrid[j], v, &t, CV_NORMAL) < 0) {
                failed++;
                break;
            }
            memcpy(yi + j * D, s, D * sizeof *s);
        }
    }
    double secs = now() - start;

    long same = 0;
    double worst = 0;
    for (long i = 0; i < n; i++) {
        const double *a = y + (size_t)i * nt * D, *b = yfile + (size_t)i * nt * D;
        same += memcmp(a, b, (size_t)nt * D * sizeof *a) == 0;
        for (int m = 0; m < nt * D; m++) {
            double e = fabs(a[m] - b[m]) / (atol + rtol * fabs(b[m]));
            if (!(e <= worst)) worst = e;
        }
    }
    printf("cvode-direct %ld traj in %.4f s: %.0f traj/s; %ld of the %ld trajectories the same bits as %s's /y, "
           "max difference %.3g tolerances%s\n",
           n, secs, n / secs, same, n, argv[1], worst, failed ? " (some failed)" : "");
    CVodeFree(&mem);
    SUNLinSolFree(LS);
    SUNMatDestroy(A);
    N_VDestroy(v);
    SUNContext_Free(&ctx);
    free(y), free(yfile), free(x0), free(tgrid);
    return failed ? 1 : 0;
}
