/* decay-sin.c - the classic example: dx_i/dt = -x_i t - x_i^2 + sin(x_i),
 * in any dimension (scipy's solve_ivp loop in docs/odegen.md).
 *
 * The right-hand side computes 8 trajectories at once on the CPU: t and
 * x[i] are hpc_real (see hpc_ode.h), and hpc_sin is hpckit's sine, which
 * vectorises and gives the same bits on the CPU and the GPU. */
#include <hpc_ode.h>

HPC_ODE_RHS(t, x, dxdt, p)
{
    for (int i = 0; i < p->dim; i++)
        dxdt[i] = (-x[i] * t - x[i] * x[i]) + hpc_sin(x[i]);
}

HPC_ODE_SYSTEM(.name = "decay-sin", .dim = 10, .dim_min = 1, .dim_max = HPC_ODE_ANY,
               .about = "dx_i/dt = -x_i t - x_i^2 + sin(x_i), any dim (the classic example)");
