/* implicit.c - the implicit methods (BDF, SDIRK) through SUNDIALS. */
#include "config.h"
#include "hpc_app.h"
#include "odegen.h"

int ode_implicit_available(void)
{
    return 0;
}

int ode_implicit_solve(const ode_sys_t *sys, const ode_prob_t *p, int64_t n, const double *x0, double *yout,
                       ode_stat_t *stat, ode_evout_t *ev)
{
    (void)sys, (void)p, (void)n, (void)x0, (void)yout, (void)stat, (void)ev;
    return HPC_ERR(HPC_ERR_UNSUPPORTED, "no implicit methods in this build");
}
