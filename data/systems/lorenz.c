/* lorenz.c - Lorenz 1963, the butterfly: parameters sigma, rho, beta. */
#define HPC_ODE_PARAMS(X) X(sigma, 10.0) X(rho, 28.0) X(beta, 8.0 / 3)
#include <hpc_ode.h>

HPC_ODE_RHS(t, x, dxdt, p)
{
    dxdt[0] = p->sigma * (x[1] - x[0]);
    dxdt[1] = x[0] * (p->rho - x[2]) - x[1];
    dxdt[2] = x[0] * x[1] - p->beta * x[2];
}

HPC_ODE_SYSTEM(.name = "lorenz", .dim = 3,
               .about = "Lorenz 1963: x' = sigma (y - x), y' = x (rho - z) - y, z' = x y - beta z");
