/* odegen_unit.c - unit tests of hpc-odegen's engine (no files, one rank).
 *
 *  - hpc_sin (hpc_ode.h's sine, and its cosine): error against libm's (1
 *    ulp up to |x| = 1000, 2 ulp up to 8.2e5), exact at signed zeros and
 *    tiny arguments, out-of-range arguments flagged;
 *  - for every built-in system and every explicit method, the 8-lane CPU
 *    engine and the 1-lane engine the GPU runs give the same bits, and a
 *    trajectory's result does not depend on its neighbours (split
 *    batches, reversed order): the ground for bit-identical files on any
 *    rank count;
 *  - every status code is produced, and rows after a failure are NaN;
 *  - the time grid is numpy.linspace's.
 */
#include "config.h"
#include "hpc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "odegen.h"
#include "hpc_ode.h"
#include "testlib.h"

typedef void (*lane1_fn)(const ode_prob_t *p, const double *x0, double *yout, ode_stat_t *stat, ode_evout_t *ev,
                         double *base, ode_ix_t stride, ode_ix_t lane);
#define LANE1(id) void ode_lane1_##id(const ode_prob_t *, const double *, double *, ode_stat_t *, ode_evout_t *, \
                                      double *, ode_ix_t, ode_ix_t);
LANE1(decay_sin)
LANE1(lorenz)
LANE1(vanderpol)
LANE1(lotka_volterra)
LANE1(kuramoto)

static int64_t ordered(double x)
{
    int64_t i;
    memcpy(&i, &x, sizeof i);
    return i < 0 ? INT64_MIN - i : i;
}

static void test_sin(void)
{
    const double range[] = {1, 3.2, 10, 1000, 823549.6};
    const int64_t bound[] = {1, 1, 1, 1, 2};
    hpc_rng_t r;
    hpc_rng_init(&r, 7, 0);
    for (int k = 0; k < 5; k++) {
        int64_t worst = 0, worst_cos = 0;
        for (int i = 0; i < 200000; i++) {
            double x = (2 * hpc_rng_uniform(&r) - 1) * range[k];
            int64_t d = llabs(ordered(hpc_sin(x)) - ordered(sin(x)));
            int64_t c = llabs(ordered(hpc_cos(x)) - ordered(cos(x)));
            if (d > worst) worst = d;
            if (c > worst_cos) worst_cos = c;
        }
        EXPECT(worst <= bound[k], "hpc_sin: %lld ulp for |x| < %g (bound %lld)", (long long)worst, range[k],
               (long long)bound[k]);
        EXPECT(worst_cos <= bound[k], "hpc_cos: %lld ulp for |x| < %g (bound %lld)", (long long)worst_cos, range[k],
               (long long)bound[k]);
    }
    EXPECT(hpc_ode_bits(hpc_sin(0.0)) == hpc_ode_bits(0.0), "sin(+0)");
    EXPECT(hpc_ode_bits(hpc_sin(-0.0)) == hpc_ode_bits(-0.0), "sin(-0)");
    EXPECT(hpc_sin(1e-300) == 1e-300, "sin(tiny)");
    EXPECT(hpc_sin(0x1p-30) == sin(0x1p-30), "sin(2^-30)");
    EXPECT(hpc_cos(0.0) == 1.0 && hpc_cos(1e-300) == 1.0, "cos(0)");
    EXPECT(hpc_sin(1e6) == sin(1e6) && isnan(hpc_sin(INFINITY)) && isnan(hpc_sin(NAN)),
           "out-of-range arguments go to libm");
    EXPECT(!hpc_ode_sin_fast_ok(INFINITY) && !hpc_ode_sin_fast_ok(NAN) && !hpc_ode_sin_fast_ok(1e6),
           "out-of-range arguments are flagged");
    EXPECT(hpc_ode_sin_fast_ok(-823549.0), "in-range argument");
}

typedef struct {
    ode_opts_t o;
    ode_prob_t p;
    double tg[64];
    lane1_fn lane1;
} prob_t;

/* A built-in system with parameters par (NULL: its defaults) */
static void make(prob_t *q, const char *name, lane1_fn lane1, int dim, double rtol, const double *par)
{
    memset(q, 0, sizeof *q);
    q->o.sys = ode_system_find(name);
    q->o.dim = dim;
    for (int k = 0; k < q->o.sys->npar; k++) q->o.par[k] = par ? par[k] : q->o.sys->par_default[k];
    for (int k = 0; k < q->o.sys->nvec; k++) {
        q->o.vec_len[k] = q->o.sys->vec_len(k, dim);
        q->o.vec[k] = malloc((size_t)q->o.vec_len[k] * sizeof(double));
        for (int64_t i = 0; i < q->o.vec_len[k]; i++) q->o.vec[k][i] = 0.3 * (double)i - 1;
    }
    if (ode_params_setup(&q->o) < 0) EXPECT(0, "%s: %s", name, hpc_last_cause());
    q->o.t0 = 0;
    q->o.t1 = 10;
    q->o.nt = 41;
    ode_tgrid(0, 10, 41, q->tg);
    q->o.rtol = rtol;
    q->o.atol = rtol * 1e-3;
    q->o.max_step = INFINITY;
    q->o.max_events = 4;
    ode_make_prob(&q->o, q->tg, &q->p);
    q->lane1 = lane1;
}

static void unmake(prob_t *q)
{
    for (int k = 0; k < q->o.sys->nvec; k++) free(q->o.vec[k]);
    free(q->o.user);
}

static double *scratch(const ode_sys_t *s, int method, int dim)
{
    size_t n = s->scratch(method, dim);
    return aligned_alloc(64, (n * sizeof(double) + 63) / 64 * 64);
}

/* Solve n trajectories three ways and compare the bits. */
static void test_lanes(const char *what, prob_t *q, int64_t n)
{
    const ode_prob_t *p = &q->p;
    const ode_sys_t *s = q->o.sys;
    size_t D = (size_t)p->dim, ny = (size_t)n * p->nt * D;
    double *x0 = malloc(n * D * sizeof *x0), *rx0 = malloc(n * D * sizeof *rx0);
    double *ya = malloc(ny * 8), *yb = malloc(ny * 8), *yc = malloc(ny * 8);
    ode_stat_t *sa = calloc(n, sizeof *sa), *sb = calloc(n, sizeof *sb), *sc = calloc(n, sizeof *sc);
    double *w = scratch(s, p->method, p->dim), *w1 = malloc(s->scratch(p->method, p->dim) * 8);
    hpc_rng_t r;
    hpc_rng_init(&r, 11, (uint64_t)D);
    for (size_t i = 0; i < n * D; i++) x0[i] = 1.2 * hpc_rng_uniform(&r);
    for (int64_t i = 0; i < n; i++) /* the same problems in reverse order */
        memcpy(rx0 + (n - 1 - i) * D, x0 + i * D, D * 8);

    s->solve(p, n, x0, ya, sa, NULL, w);
    for (int64_t i = 0; i < n; i++) q->lane1(p, x0 + i * D, yb + i * p->nt * D, sb + i, NULL, w1, 1, 0);
    int64_t h = n / 3; /* split batches, other neighbours */
    s->solve(p, n - h, rx0, yc, sc, NULL, w);
    s->solve(p, h, rx0 + (n - h) * D, yc + (n - h) * p->nt * D, sc + (n - h), NULL, w);

    int same_lane = memcmp(ya, yb, ny * 8) == 0, same_stats = 1, same_order = 1;
    for (int64_t i = 0; i < n; i++) {
        const ode_stat_t *a = &sa[i], *b = &sb[i], *c = &sc[n - 1 - i];
        same_stats &= a->nsteps == b->nsteps && a->nfev == b->nfev && a->nrejected == b->nrejected &&
                      a->status == b->status;
        same_order &= a->nsteps == c->nsteps && a->nfev == c->nfev && a->status == c->status &&
                      memcmp(ya + i * p->nt * D, yc + (n - 1 - i) * p->nt * D, p->nt * D * 8) == 0;
    }
    EXPECT(same_lane && same_stats, "%s %s: 8-lane and 1-lane (GPU) engines differ", what,
           ode_method_name(p->method));
    EXPECT(same_order, "%s %s: a trajectory's result depends on its neighbours", what, ode_method_name(p->method));
    EXPECT(sa[0].status == ODE_OK && sa[0].nsteps > 0, "%s %s: first trajectory failed (%d)", what,
           ode_method_name(p->method), sa[0].status);
    free(x0); free(rx0); free(ya); free(yb); free(yc); free(sa); free(sb); free(sc); free(w); free(w1);
}

static void test_methods(const char *what, prob_t *q, int64_t n)
{
    for (int m = 0; m < ODE_NEXPLICIT; m++) {
        q->p.method = m;
        test_lanes(what, q, n);
    }
    q->p.method = ODE_RK45;
}

static int8_t solve_one(prob_t *q, double x, int64_t max_steps, int *nan_tail)
{
    double x0[2] = {x, x}, y[41 * 2];
    ode_stat_t st;
    double *w = scratch(q->o.sys, q->p.method, q->p.dim);
    q->p.max_steps = max_steps;
    q->o.sys->solve(&q->p, 1, x0, y, &st, NULL, w);
    free(w);
    *nan_tail = isnan(y[40 * q->p.dim]);
    return st.status;
}

static void test_status(void)
{
    prob_t q;
    int nan_tail;
    make(&q, "decay-sin", ode_lane1_decay_sin, 2, 1e-3, NULL);
    EXPECT(solve_one(&q, 0.5, 0, &nan_tail) == ODE_OK && !nan_tail, "ok");
    /* x' ~ -x^2 from x0 = -5: blow-up at t ~ 0.2, steps shrink to 10 ulp */
    EXPECT(solve_one(&q, -5, 0, &nan_tail) == ODE_STEP_UNDERFLOW && nan_tail, "underflow");
    /* f(x0) = -(1e200)^2 = -inf */
    EXPECT(solve_one(&q, -1e200, 0, &nan_tail) == ODE_NONFINITE && nan_tail, "non-finite");
    EXPECT(solve_one(&q, 0.5, 5, &nan_tail) == ODE_MAX_STEPS && nan_tail, "max steps");
    unmake(&q);
}

static void test_grid(void)
{
    double t[101];
    ode_tgrid(0, 10, 101, t);
    EXPECT(t[0] == 0 && t[100] == 10 && t[1] == 0.1 && t[37] == 37 * 0.1, "linspace(0, 10, 101)");
    ode_tgrid(-1, 2, 2, t);
    EXPECT(t[0] == -1 && t[1] == 2, "linspace(-1, 2, 2)");
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    prob_t q;
    const double vdp[1] = {3}, kur[3] = {1.5, 0, 1};
    test_sin();
    test_grid();
    make(&q, "decay-sin", ode_lane1_decay_sin, 10, 1e-3, NULL);
    test_methods("decay-sin", &q, 61);
    unmake(&q);
    make(&q, "decay-sin", ode_lane1_decay_sin, 3, 1e-8, NULL);
    test_methods("decay-sin tight", &q, 29);
    unmake(&q);
    make(&q, "lorenz", ode_lane1_lorenz, 3, 1e-6, NULL);
    test_methods("lorenz", &q, 27);
    unmake(&q);
    make(&q, "vanderpol", ode_lane1_vanderpol, 2, 1e-4, vdp);
    test_methods("vanderpol", &q, 33);
    unmake(&q);
    make(&q, "lotka-volterra", ode_lane1_lotka_volterra, 2, 1e-5, NULL);
    q.p.first_step = 0.01;
    q.p.max_step = 0.5;
    test_methods("lotka-volterra (first/max step)", &q, 19);
    unmake(&q);
    make(&q, "kuramoto", ode_lane1_kuramoto, 7, 1e-3, kur);
    test_methods("kuramoto", &q, 17);
    unmake(&q);
    test_status();
    if (test_failures)
        fprintf(stderr, "odegen_unit: %d failure(s)\n", test_failures);
    else
        printf("odegen_unit: all checks passed\n");
    return test_result();
}
