/* systems.c - the built-in systems, and the data that is drawn from the
 * seed or set per run: initial conditions, vector parameters, the
 * parameter block the system's functions read.
 *
 * The built-ins are the files in data/systems, compiled into hpc-odegen
 * by builtin/NAME_lanes.c and NAME_host.c exactly as --system-file
 * compiles a user's file at run time (sys_lanes.h, sys_host.h); their
 * text is carried too (odegen_texts.c) and recorded in every output.
 * Adding a built-in: the file in data/systems, the two stubs in builtin/,
 * a line in the table below and in the lists of apps/odegen/local.mk.
 */
#include "config.h"
#include "hpc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "odegen.h"
#include "hpc_ode.h"
#include "ode_texts.h"

#define ODE_BUILTIN(id) const ode_sys_t *ode_sys_##id##_get(void);
ODE_BUILTIN(decay_sin)
ODE_BUILTIN(lorenz)
ODE_BUILTIN(vanderpol)
ODE_BUILTIN(lotka_volterra)
ODE_BUILTIN(kuramoto)

static const struct {
    const char *file;                  /* in data/systems, and its text in ode_texts */
    const ode_sys_t *(*get)(void);
} builtins[] = {
    {"decay-sin.c", ode_sys_decay_sin_get},
    {"lorenz.c", ode_sys_lorenz_get},
    {"vanderpol.c", ode_sys_vanderpol_get},
    {"lotka-volterra.c", ode_sys_lotka_volterra_get},
    {"kuramoto.c", ode_sys_kuramoto_get},
};

int ode_system_count(void)
{
    return (int)(sizeof builtins / sizeof builtins[0]);
}

const ode_sys_t *ode_system_at(int i)
{
    return i >= 0 && i < ode_system_count() ? builtins[i].get() : NULL;
}

const ode_sys_t *ode_system_find(const char *name)
{
    for (int i = 0; i < ode_system_count(); i++)
        if (strcmp(ode_system_at(i)->name, name) == 0)
            return ode_system_at(i);
    return NULL;
}

const char *ode_system_source(const ode_sys_t *s)
{
    for (int i = 0; i < ode_system_count(); i++)
        if (ode_system_at(i) == s)
            return ode_text(builtins[i].file);
    return NULL;
}

const char *ode_text(const char *name)
{
    for (int i = 0; i < ode_ntexts; i++)
        if (strcmp(ode_texts[i].name, name) == 0)
            return ode_texts[i].text;
    return NULL;
}

/* the methods: scipy's names (--method takes them in any case) */
static const char *const methods[ODE_NMETHODS] = {"RK45", "RK23", "DOP853", "BDF", "ESDIRK"};
static const char *const method_about[ODE_NMETHODS] = {
    "RK45 (Dormand-Prince 5(4)), step for step as scipy.integrate.solve_ivp",
    "RK23 (Bogacki-Shampine 3(2)), step for step as scipy.integrate.solve_ivp",
    "DOP853 (Dormand-Prince 8(5,3)), step for step as scipy.integrate.solve_ivp",
    "BDF (variable order 1-5, Newton iteration, dense LU), SUNDIALS CVODE",
    "ESDIRK (Kennedy-Carpenter ESDIRK4(3)6L[2]SA: order 4, 6 stages, L-stable, stiffly accurate; Newton "
    "iteration, dense LU), SUNDIALS ARKODE"};

const char *ode_method_name(int m)
{
    return m >= 0 && m < ODE_NMETHODS ? methods[m] : "?";
}

const char *ode_method_about(int m)
{
    return m >= 0 && m < ODE_NMETHODS ? method_about[m] : "?";
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

/* the system's hooks draw through hpc_ode_rng: Philox underneath */
static double rng_uniform(void *r)
{
    return hpc_rng_uniform((hpc_rng_t *)r);
}

static double rng_normal(void *r)
{
    return hpc_rng_normal((hpc_rng_t *)r);
}

/* Trajectory i draws its dim components, in order, from the stream
 * (seed, i): any rank computes the same x0 for the same trajectory.  A
 * system's x0 hook then sees those draws and continues the stream. */
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
        if (o->sys->x0) {
            hpc_ode_rng hr = {rng_uniform, rng_normal, &r};
            o->sys->x0(o->user, x, &hr);
        }
    }
}

/* Stream index reserved for per-run parameters: no trajectory has it. */
#define ODE_STREAM_PARAMS UINT64_MAX

int ode_params_setup(ode_opts_t *o)
{
    const ode_sys_t *s = o->sys;
    o->user = calloc(1, s->params_size ? s->params_size : 1);
    if (!o->user) return HPC_ERR(HPC_ERR_NOMEM, "the system's parameters");
    s->params_fill(o->user, o->dim, o->par, o->vec);
    if (s->setup) {
        hpc_rng_t r;
        hpc_rng_init(&r, o->seed, ODE_STREAM_PARAMS);
        hpc_ode_rng hr = {rng_uniform, rng_normal, &r};
        s->setup(o->user, &hr);
    }
    for (int k = 0; k < s->nvec; k++)
        for (int64_t i = 0; i < o->vec_len[k]; i++)
            if (isnan(o->vec[k][i]))
                return HPC_ERR(HPC_ERR_ARG, "--param %s: system %s needs this vector of %lld numbers "
                               "(--param %s=@FILE or %s=V1,V2,...)", s->vec_name[k], s->name,
                               (long long)o->vec_len[k], s->vec_name[k], s->vec_name[k]);
    return 0;
}

void ode_make_prob(const ode_opts_t *o, const double *tgrid, ode_prob_t *p)
{
    memset(p, 0, sizeof *p);
    p->dim = o->dim;
    p->method = o->method;
    p->user = o->user;
    p->t0 = o->t0;
    p->t1 = o->t1;
    p->tgrid = tgrid;
    p->nt = o->nt;
    p->rtol = o->rtol;
    p->atol = o->atol;
    p->max_step = o->max_step;
    p->first_step = o->first_step;
    p->max_steps = o->max_steps;
    p->events = o->sys->events;
    p->nev = o->sys->nev;
    p->max_events = o->max_events;
}
