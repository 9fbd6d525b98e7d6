/* vanderpol.c - the Van der Pol oscillator x'' = mu (1 - x^2) x' - x as
 * a first-order system.  Stiff for large mu; the Jacobian below is for
 * the implicit methods (a file may leave it out). */
#define HPC_ODE_PARAMS(X) X(mu, 1.0)
#include <hpc_ode.h>

HPC_ODE_RHS(t, x, dxdt, p)
{
    dxdt[0] = x[1];
    dxdt[1] = p->mu * (1.0 - x[0] * x[0]) * x[1] - x[0];
}

/* J[i * dim + j] = d f_i / d x_j */
static void jac(double t, const double *x, double *J, const hpc_ode_params *p)
{
    (void)t;
    J[0] = 0.0;
    J[1] = 1.0;
    J[2] = -2.0 * p->mu * x[0] * x[1] - 1.0;
    J[3] = p->mu * (1.0 - x[0] * x[0]);
}

HPC_ODE_SYSTEM(.name = "vanderpol", .dim = 2, .jac = jac,
               .about = "Van der Pol: x' = v, v' = mu (1 - x^2) v - x");
