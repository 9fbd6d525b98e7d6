/* brusselator.c - a test system for the implicit method: the 1-D
 * Brusselator reaction-diffusion problem (Hairer & Wanner, Solving ODEs
 * II, IV.1), u and v on N interior points of [0, 1] with u = 1, v = 3 at
 * both ends, diffusion alpha; dim = 2 N (default 100), interleaved
 * (u_i at 2i, v_i at 2i + 1).  Stiff from the diffusion (eigenvalues to
 * -4 alpha (N + 1)^2).  The initial u is 1 + a sin(2 pi x) with the
 * amplitude a from the uniform draw; v starts at 3.  No Jacobian: the
 * implicit method differences f.  tests/odegen_stiff.py has its twin. */
#define HPC_ODE_PARAMS(X) X(A, 1.0) X(B, 3.0) X(alpha, 0.02)
#include <hpc_ode.h>

HPC_ODE_RHS(t, x, dxdt, p)
{
    const int n = p->dim / 2;
    const double c = p->alpha * (n + 1) * (n + 1);
    for (int i = 0; i < n; i++) {
        hpc_real u = x[2 * i], v = x[2 * i + 1];
        hpc_real ul = i > 0 ? x[2 * i - 2] : hpc_const(1.0), ur = i < n - 1 ? x[2 * i + 2] : hpc_const(1.0);
        hpc_real vl = i > 0 ? x[2 * i - 1] : hpc_const(3.0), vr = i < n - 1 ? x[2 * i + 3] : hpc_const(3.0);
        hpc_real uuv = u * u * v;
        dxdt[2 * i] = p->A + uuv - (p->B + 1) * u + c * (ul - 2 * u + ur);
        dxdt[2 * i + 1] = p->B * u - uuv + c * (vl - 2 * v + vr);
    }
}

static void start(double *x, const hpc_ode_params *p, hpc_ode_rng *rng)
{
    (void)rng;
    const int n = p->dim / 2;
    double a = x[0];
    for (int i = 0; i < n; i++) {
        x[2 * i] = 1 + a * sin(2 * 3.141592653589793 * (i + 1) / (n + 1));
        x[2 * i + 1] = 3;
    }
}

HPC_ODE_SYSTEM(.name = "test-brusselator", .dim = 100, .dim_min = 4, .dim_max = HPC_ODE_ANY, .x0 = start,
               .about = "the 1-D Brusselator, reaction and diffusion (a test)");
