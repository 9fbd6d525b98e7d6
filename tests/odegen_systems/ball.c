/* ball.c - a test system for events: a ball thrown up with quadratic air
 * drag.  The ground (height 0, falling) ends the trajectory; the apex
 * (velocity 0, falling) is recorded on the way.  Heights start in [1, 3),
 * velocities in [5, 10) (the x0 hook stretches the uniform draws).
 * tests/odegen_ref.py has its twin, events and all. */
#define HPC_ODE_PARAMS(X) X(g, 9.81) X(drag, 0.1)
#include <hpc_ode.h>

HPC_ODE_RHS(t, x, dxdt, p)
{
    dxdt[0] = x[1];
    dxdt[1] = -p->g - p->drag * x[1] * hpc_fabs(x[1]);
}

static double ground(double t, const double *x, const hpc_ode_params *p)
{
    (void)t, (void)p;
    return x[0];
}

static double apex(double t, const double *x, const hpc_ode_params *p)
{
    (void)t, (void)p;
    return x[1];
}

static void start(double *x, const hpc_ode_params *p, hpc_ode_rng *rng)
{
    (void)p, (void)rng;
    x[0] = 1 + 2 * x[0];
    x[1] = 5 + 5 * x[1];
}

HPC_ODE_SYSTEM(.name = "test-ball", .dim = 2, .x0 = start, .about = "a ball thrown up, with drag (a test)",
               .events = {{"ground", ground, .terminal = 1, .direction = -1}, {"apex", apex, .direction = -1}});
