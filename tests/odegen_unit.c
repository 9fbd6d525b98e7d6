/* odegen_unit.c - unit tests of hpc-odegen's engine (no files, one rank).
 *
 *  - ode_sin(): error against libm's sin() (1 ulp up to |x| = 1000, 2 ulp up
 *    to 8.2e5), exact at signed zeros and tiny arguments, out-of-range
 *    arguments flagged;
 *  - the 8-lane CPU engine and the 1-lane engine the CUDA kernel runs give
 *    the same bits, for every system, and a trajectory's result does not
 *    depend on its neighbours (split batches, reversed order): the ground
 *    for bit-identical files on any rank count;
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
#include "ode_sin.h"

void ode_solve_lane1(const ode_prob_t *p, int64_t n, const double *x0, double *yout,
                     ode_stat_t *stat, double *scratch);

static int failures = 0;
#define EXPECT(cond, ...)                                              \
    do {                                                               \
        if (!(cond)) {                                                 \
            failures++;                                                \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);       \
            fprintf(stderr, __VA_ARGS__);                              \
            fprintf(stderr, "\n");                                     \
        }                                                              \
    } while (0)

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
        int64_t worst = 0;
        for (int i = 0; i < 200000; i++) {
            double x = (2 * hpc_rng_uniform(&r) - 1) * range[k];
            int64_t d = llabs(ordered(ode_sin(x)) - ordered(sin(x)));
            if (d > worst) worst = d;
        }
        EXPECT(worst <= bound[k], "ode_sin: %lld ulp for |x| < %g (bound %lld)",
               (long long)worst, range[k], (long long)bound[k]);
    }
    EXPECT(ode_bits(ode_sin(0.0)) == ode_bits(0.0), "sin(+0)");
    EXPECT(ode_bits(ode_sin(-0.0)) == ode_bits(-0.0), "sin(-0)");
    EXPECT(ode_sin(1e-300) == 1e-300, "sin(tiny)");
    EXPECT(ode_sin(0x1p-30) == sin(0x1p-30), "sin(2^-30)");
    EXPECT(!ode_sin_fast_ok(INFINITY) && !ode_sin_fast_ok(NAN) && !ode_sin_fast_ok(1e6),
           "out-of-range arguments are flagged");
    EXPECT(ode_sin_fast_ok(-823549.0), "in-range argument");
}

typedef struct {
    ode_prob_t p;
    double tg[64];
    double omega[8];
} prob_t;

static void make(prob_t *q, int sys, int dim, double rtol, const double *par)
{
    memset(q, 0, sizeof *q);
    q->p.sys = sys;
    q->p.dim = dim;
    for (int i = 0; i < ODE_MAXPAR; i++) q->p.par[i] = par ? par[i] : 0;
    for (int i = 0; i < 8; i++) q->omega[i] = 0.3 * i - 1;
    q->p.vec = q->omega;
    q->p.t0 = 0;
    q->p.t1 = 10;
    q->p.nt = 41;
    ode_tgrid(0, 10, 41, q->tg);
    q->p.tgrid = q->tg;
    q->p.rtol = rtol;
    q->p.atol = rtol * 1e-3;
    q->p.max_step = INFINITY;
}

/* Solve n trajectories three ways and compare the bits. */
static void test_lanes(const char *name, prob_t *q, int64_t n)
{
    const ode_prob_t *p = &q->p;
    size_t D = (size_t)p->dim, ny = (size_t)n * p->nt * D;
    double *x0 = malloc(n * D * sizeof *x0), *rx0 = malloc(n * D * sizeof *rx0);
    double *ya = malloc(ny * 8), *yb = malloc(ny * 8), *yc = malloc(ny * 8);
    ode_stat_t *sa = calloc(n, sizeof *sa), *sb = calloc(n, sizeof *sb),
               *sc = calloc(n, sizeof *sc);
    double *w = malloc(ode_cpu_scratch(p->dim) * 8);
    hpc_rng_t r;
    hpc_rng_init(&r, 11, (uint64_t)p->sys);
    for (size_t i = 0; i < n * D; i++)
        x0[i] = 1.2 * hpc_rng_uniform(&r);
    for (int64_t i = 0; i < n; i++)      /* the same problems in reverse order */
        memcpy(rx0 + (n - 1 - i) * D, x0 + i * D, D * 8);

    ode_solve_cpu(p, n, x0, ya, sa, w);
    ode_solve_lane1(p, n, x0, yb, sb, w);
    int64_t h = n / 3;                   /* split batches, other neighbours */
    ode_solve_cpu(p, n - h, rx0, yc, sc, w);
    ode_solve_cpu(p, h, rx0 + (n - h) * D, yc + (n - h) * p->nt * D, sc + (n - h), w);

    int same_lane = memcmp(ya, yb, ny * 8) == 0, same_stats = 1, same_order = 1;
    for (int64_t i = 0; i < n; i++) {
        const ode_stat_t *a = &sa[i], *b = &sb[i], *c = &sc[n - 1 - i];
        same_stats &= a->nsteps == b->nsteps && a->nfev == b->nfev &&
                      a->nrejected == b->nrejected && a->status == b->status;
        same_order &= a->nsteps == c->nsteps && a->nfev == c->nfev && a->status == c->status &&
                      memcmp(ya + i * p->nt * D, yc + (n - 1 - i) * p->nt * D, p->nt * D * 8) == 0;
    }
    EXPECT(same_lane && same_stats, "%s: 8-lane and 1-lane (CUDA) engines differ", name);
    EXPECT(same_order, "%s: a trajectory's result depends on its neighbours", name);
    EXPECT(sa[0].status == ODE_OK && sa[0].nsteps > 0, "%s: first trajectory failed (%d)", name,
           sa[0].status);
    free(x0); free(rx0); free(ya); free(yb); free(yc); free(sa); free(sb); free(sc); free(w);
}

static int8_t solve_one(prob_t *q, double x, int64_t max_steps, int *nan_tail)
{
    double x0[2] = {x, x}, y[41 * 2];
    ode_stat_t st;
    double *w = malloc(ode_cpu_scratch(q->p.dim) * 8);
    q->p.max_steps = max_steps;
    ode_solve_cpu(&q->p, 1, x0, y, &st, w);
    free(w);
    *nan_tail = isnan(y[40 * q->p.dim]);
    return st.status;
}

static void test_status(void)
{
    prob_t q;
    int nan_tail;
    make(&q, ODE_SYS_DECAY_SIN, 2, 1e-3, NULL);
    EXPECT(solve_one(&q, 0.5, 0, &nan_tail) == ODE_OK && !nan_tail, "ok");
    /* x' ~ -x^2 from x0 = -5: blow-up at t ~ 0.2, steps shrink to 10 ulp */
    EXPECT(solve_one(&q, -5, 0, &nan_tail) == ODE_STEP_UNDERFLOW && nan_tail, "underflow");
    /* f(x0) = -(1e200)^2 = -inf */
    EXPECT(solve_one(&q, -1e200, 0, &nan_tail) == ODE_NONFINITE && nan_tail, "non-finite");
    EXPECT(solve_one(&q, 0.5, 5, &nan_tail) == ODE_MAX_STEPS && nan_tail, "max steps");
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
    const double lor[4] = {10, 28, 8.0 / 3, 0}, vdp[4] = {3, 0, 0, 0},
                 lv[4] = {1.5, 1, 3, 1}, kur[4] = {1.5, 0, 1, 0};
    test_sin();
    test_grid();
    make(&q, ODE_SYS_DECAY_SIN, 10, 1e-3, NULL);
    test_lanes("decay-sin", &q, 61);
    make(&q, ODE_SYS_DECAY_SIN, 3, 1e-8, NULL);
    test_lanes("decay-sin tight", &q, 29);
    make(&q, ODE_SYS_LORENZ, 3, 1e-6, lor);
    test_lanes("lorenz", &q, 27);
    make(&q, ODE_SYS_VANDERPOL, 2, 1e-4, vdp);
    test_lanes("vanderpol", &q, 33);
    make(&q, ODE_SYS_LOTKA_VOLTERRA, 2, 1e-5, lv);
    q.p.first_step = 0.01;
    q.p.max_step = 0.5;
    test_lanes("lotka-volterra (first/max step)", &q, 19);
    make(&q, ODE_SYS_KURAMOTO, 7, 1e-3, kur);
    test_lanes("kuramoto", &q, 17);
    test_status();
    if (failures)
        fprintf(stderr, "odegen_unit: %d failure(s)\n", failures);
    else
        printf("odegen_unit: all checks passed\n");
    return failures ? 1 : 0;
}
