/* robertson.c - a test system for the implicit method: Robertson's
 * chemical kinetics (scipy's own stiff example; rate constants 0.04, 1e4,
 * 3e7), y1 starting from the uniform draw, y3 = 1 - y1 (the sum is
 * conserved).  tests/odegen_stiff.py has its twin. */
#define HPC_ODE_PARAMS(X) X(k1, 0.04) X(k2, 1e4) X(k3, 3e7)
#include <hpc_ode.h>

HPC_ODE_RHS(t, x, dxdt, p)
{
    hpc_real r1 = p->k1 * x[0], r2 = p->k2 * x[1] * x[2], r3 = p->k3 * x[1] * x[1];
    dxdt[0] = -r1 + r2;
    dxdt[1] = r1 - r2 - r3;
    dxdt[2] = r3;
}

static void jac(double t, const double *x, double *J, const hpc_ode_params *p)
{
    (void)t;
    J[0] = -p->k1;
    J[1] = p->k2 * x[2];
    J[2] = p->k2 * x[1];
    J[3] = p->k1;
    J[4] = -p->k2 * x[2] - 2 * p->k3 * x[1];
    J[5] = -p->k2 * x[1];
    J[6] = 0;
    J[7] = 2 * p->k3 * x[1];
    J[8] = 0;
}

static void start(double *x, const hpc_ode_params *p, hpc_ode_rng *rng)
{
    (void)p, (void)rng;
    x[1] = 0;
    x[2] = 1 - x[0];
}

HPC_ODE_SYSTEM(.name = "test-robertson", .dim = 3, .jac = jac, .x0 = start,
               .about = "Robertson's chemical kinetics (a test)");
