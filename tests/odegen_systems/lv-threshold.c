/* lv-threshold.c - a test system for events that recur: predator and
 * prey, with the times the prey falls below a threshold and the
 * predators rise above one (neither ends the trajectory). */
#define HPC_ODE_PARAMS(X) X(alpha, 1.5) X(beta, 1.0) X(gamma, 3.0) X(delta, 1.0) X(low, 1.0) X(high, 2.0)
#include <hpc_ode.h>

HPC_ODE_RHS(t, x, dxdt, p)
{
    dxdt[0] = p->alpha * x[0] - p->beta * x[0] * x[1];
    dxdt[1] = -p->gamma * x[1] + p->delta * x[0] * x[1];
}

static double prey_low(double t, const double *x, const hpc_ode_params *p)
{
    (void)t;
    return x[0] - p->low;
}

static double predators_high(double t, const double *x, const hpc_ode_params *p)
{
    (void)t;
    return x[1] - p->high;
}

HPC_ODE_SYSTEM(.name = "test-lv-threshold", .dim = 2, .about = "predator-prey with thresholds (a test)",
               .events = {{"prey_low", prey_low, .direction = -1}, {"predators_high", predators_high, .direction = 1}});
