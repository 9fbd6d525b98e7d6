/* odegen_lane1.h - a system's engine as the GPU runs it (erk.h with one
 * lane, the scratch at any stride), built for the CPU so that the tests
 * can check on a machine without a GPU that the GPU's code path gives the
 * 8-lane CPU engine's bits.  The GPU reads component i of a thread's
 * trajectory at y[i * st] through hpc_ode_in; C has no such proxy, so here
 * the right-hand side sees the trajectory gathered.  Included by
 * odegen_lane1_NAME.c with ODE_SYS_FILE and ODE_LANE1_NAME set. */
#include "config.h"
#include <stdlib.h>

#define HPC_ODE_LANES 1
#include ODE_SYS_FILE
#include "ode_prob.h"
#include "sys_params.h"

static void lane1_rhs(const ode_prob_t *p, const double *t, const double *y, double *f, ode_ix_t st)
{
    static double x[8192], dx[8192];
    for (int i = 0; i < p->dim; i++) x[i] = y[i * st];
    hpc_ode_user_rhs(t[0], x, dx, (const hpc_ode_params *)p->user);
    for (int i = 0; i < p->dim; i++) f[i * st] = dx[i];
}

#define ODE_LANES 1
#define ODE_RHS(p, t, y, f, st) lane1_rhs(p, t, y, f, st)
#define ODE_EVENT_G(p, e, t, x) \
    (((const hpc_ode_event *)(p)->events)[e].g((t), (x), (const hpc_ode_params *)(p)->user))
#include "erk.h"

/* One trajectory as GPU thread `lane` of `stride` threads computes it:
 * its scratch at base + lane, stride apart (the kernel's layout). */
void ODE_LANE1_NAME(const ode_prob_t *p, const double *x0, double *yout, ode_stat_t *stat, ode_evout_t *ev,
                    double *base, ode_ix_t stride, ode_ix_t lane);
void ODE_LANE1_NAME(const ode_prob_t *p, const double *x0, double *yout, ode_stat_t *stat, ode_evout_t *ev,
                    double *base, ode_ix_t stride, ode_ix_t lane)
{
    if (p->method == ODE_RK23)
        erk_solve(ODE_RK23, p, 1, x0, yout, stat, ev, base + lane, stride);
    else if (p->method == ODE_DOP853)
        erk_solve(ODE_DOP853, p, 1, x0, yout, stat, ev, base + lane, stride);
    else
        erk_solve(ODE_RK45, p, 1, x0, yout, stat, ev, base + lane, stride);
}
