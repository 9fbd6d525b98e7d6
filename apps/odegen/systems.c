/* systems.c - the registry of systems, and the data that is drawn from
 * the seed (initial conditions, kuramoto's natural frequencies).
 *
 * Adding a system: one X(...) line in ode_prob.h, one rhs_NAME() in
 * ode_rhs.h, one entry here (and a line in docs/odegen.md).
 */
#include "config.h"
#include "hpc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "odegen.h"

static const ode_system_info_t systems[] = {
    {"decay-sin", ODE_SYS_DECAY_SIN, 10, 1, 0, 0, {NULL}, {0},
     "dx_i/dt = -x_i t - x_i^2 + sin(x_i), any dim (the classic example)"},
    {"lorenz", ODE_SYS_LORENZ, 3, 3, 3, 3, {"sigma", "rho", "beta"}, {10.0, 28.0, 8.0 / 3},
     "Lorenz 1963: x' = sigma (y - x), y' = x (rho - z) - y, z' = x y - beta z"},
    {"vanderpol", ODE_SYS_VANDERPOL, 2, 2, 2, 1, {"mu"}, {1.0},
     "Van der Pol: x' = v, v' = mu (1 - x^2) v - x"},
    {"lotka-volterra", ODE_SYS_LOTKA_VOLTERRA, 2, 2, 2, 4,
     {"alpha", "beta", "gamma", "delta"}, {1.5, 1.0, 3.0, 1.0},
     "predator-prey: x' = alpha x - beta x y, y' = -gamma y + delta x y"},
    {"kuramoto", ODE_SYS_KURAMOTO, 10, 2, 4096, 3, {"K", "omega_mean", "omega_std"},
     {1.0, 0.0, 1.0},
     "theta_i' = omega_i + K/N sum_j sin(theta_j - theta_i), omega_i ~ N from the seed"},
};

int ode_system_count(void)
{
    return (int)(sizeof systems / sizeof systems[0]);
}

const ode_system_info_t *ode_system_at(int i)
{
    return i >= 0 && i < ode_system_count() ? &systems[i] : NULL;
}

const ode_system_info_t *ode_system_find(const char *name)
{
    for (int i = 0; i < ode_system_count(); i++)
        if (strcmp(systems[i].name, name) == 0)
            return &systems[i];
    return NULL;
}

/* numpy.linspace(t0, t1, nt), operation for operation, so that the Python
 * reference can pass the same grid to solve_ivp. */
void ode_tgrid(double t0, double t1, int nt, double *t)
{
    double delta = t1 - t0;
    double step = delta / (nt - 1);
    for (int k = 0; k < nt; k++)
        t[k] = (step == 0 ? (double)k / (nt - 1) * delta : (double)k * step) + t0;
    t[nt - 1] = t1;
}

/* Trajectory i draws its dim components, in order, from the stream
 * (seed, i): any rank computes the same x0 for the same trajectory. */
void ode_x0(const ode_opts_t *o, int64_t first, int64_t n, double *x0)
{
    for (int64_t k = 0; k < n; k++) {
        hpc_rng_t r;
        /* keyed by the trajectory's global index: a shard draws what one
         * big run draws for the same rows */
        hpc_rng_init(&r, o->seed, (uint64_t)(o->first + first + k));
        double *x = x0 + k * o->dim;
        for (int i = 0; i < o->dim; i++) {
            if (o->x0_dist == ODE_X0_NORMAL)
                x[i] = o->x0_a + o->x0_b * hpc_rng_normal(&r);
            else
                x[i] = o->x0_a + (o->x0_b - o->x0_a) * hpc_rng_uniform(&r);
        }
    }
}

/* Stream index reserved for per-run parameters: no trajectory has it. */
#define ODE_STREAM_PARAMS UINT64_MAX

double *ode_system_vec(const ode_opts_t *o)
{
    if (o->sys->sys != ODE_SYS_KURAMOTO)
        return NULL;
    double *omega = malloc((size_t)o->dim * sizeof *omega);
    if (!omega)
        return NULL;
    hpc_rng_t r;
    hpc_rng_init(&r, o->seed, ODE_STREAM_PARAMS);
    for (int i = 0; i < o->dim; i++)
        omega[i] = o->par[1] + o->par[2] * hpc_rng_normal(&r);
    return omega;
}

void ode_make_prob(const ode_opts_t *o, const double *tgrid, const double *vec, ode_prob_t *p)
{
    memset(p, 0, sizeof *p);
    p->sys = o->sys->sys;
    p->dim = o->dim;
    for (int i = 0; i < ODE_MAXPAR; i++)
        p->par[i] = o->par[i];
    p->vec = vec;
    p->t0 = o->t0;
    p->t1 = o->t1;
    p->tgrid = tgrid;
    p->nt = o->nt;
    p->rtol = o->rtol;
    p->atol = o->atol;
    p->max_step = o->max_step;
    p->first_step = o->first_step;
    p->max_steps = o->max_steps;
}
