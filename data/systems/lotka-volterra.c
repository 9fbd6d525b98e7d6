/* lotka-volterra.c - predator and prey. */
#define HPC_ODE_PARAMS(X) X(alpha, 1.5) X(beta, 1.0) X(gamma, 3.0) X(delta, 1.0)
#include <hpc_ode.h>

HPC_ODE_RHS(t, x, dxdt, p)
{
    dxdt[0] = p->alpha * x[0] - p->beta * x[0] * x[1];
    dxdt[1] = -p->gamma * x[1] + p->delta * x[0] * x[1];
}

HPC_ODE_SYSTEM(.name = "lotka-volterra", .dim = 2,
               .about = "predator-prey: x' = alpha x - beta x y, y' = -gamma y + delta x y");
