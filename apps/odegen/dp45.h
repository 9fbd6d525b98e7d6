/* dp45.h - Dormand-Prince 5(4), step for step as scipy's solve_ivp RK45.
 *
 * One engine, written once, compiled twice: by the C compiler with
 * ODE_LANES = 8 (solver.c: eight trajectories advance in SIMD lockstep,
 * each lane with its own t, h and step decisions; a lane that finishes is
 * refilled with the next trajectory at once), and by nvcc with ODE_LANES =
 * 1 (kernel.cu: one trajectory per thread).  Every lane does exactly the
 * arithmetic scipy does for one trajectory, in the same order, so a
 * trajectory's result does not depend on its lane or its neighbours - the
 * basis of bit-identical output for any rank count.
 *
 * What is copied from scipy 1.10 (scipy/integrate/_ivp/rk.py, common.py):
 *  - tableau C, A, B, E and the dense-output matrix P of class RK45;
 *  - select_initial_step (Hairer, Norsett, Wanner II.4) with order 4;
 *  - step control of RungeKutta._step_impl: min_step = 10 ulp(t), clamp to
 *    max_step, shrink the last step onto t1, RMS error norm with scale
 *    atol + max(|y|, |y_new|) rtol, accept if norm < 1 with factor
 *    min(10, 0.9 norm^-1/5) (not above 1 right after a rejection), else
 *    shrink by max(0.2, 0.9 norm^-1/5);
 *  - output on the grid by RkDenseOutput: Q = K^T P, y = y_old + h Q p(x)
 *    with p = (x, x^2, x^3, x^4), x = (t - t_old) / h, for every grid time
 *    in (t_old, t_new] (and t0 on the first step), as solve_ivp(t_eval=).
 * Python's min/max on NaN are kept (min(10, nan) = 10, max(0.2, nan) =
 * 0.2).  Beyond scipy: a lane stops with ODE_NONFINITE when its state is
 * not finite (scipy would loop or shrink to underflow), ODE_MAX_STEPS
 * after max_steps attempts; grid rows not reached are NaN.
 *
 * The includer defines ODE_LANES, and provides ODE_FN/ODE_RESTRICT (from
 * ode_sin.h).  Plain C and CUDA C++.
 */
#ifndef ODE_DP45_H
#define ODE_DP45_H

#include <float.h>
#include "ode_rhs.h"

#ifndef ODE_POLL
#define ODE_POLL() ((void)0)   /* hook for the CPU build: MPI progress */
#endif

/* Scratch: ODE_SCRATCH_BLOCKS blocks of [dim][st] doubles per lane set. */
enum {
    DP_K = 0,         /* K[0..6]: stages; K[0] = f(t, y), K[6] = f(t+h, y_new) */
    DP_Y = 7,         /* y at t */
    DP_YNEW = 8,      /* y at t + h */
    DP_YTMP = 9,      /* stage argument / dense output */
    DP_Q = 10,        /* Q[0..3] = K^T P */
    DP_IY0 = 14,      /* initial conditions of the ready group */
    DP_IF0 = 15,      /* f(t0, y0) of the ready group */
    DP_IY1 = 16,      /* select_initial_step's probe point */
    DP_IF1 = 17,      /* f at that point */
    ODE_SCRATCH_BLOCKS = 18
};

/* Per-lane scalars of the lane set being integrated. */
typedef struct {
    double t[ODE_LANES];      /* current time */
    double tnew[ODE_LANES];   /* end of the attempted step */
    double h[ODE_LANES];      /* attempted step, tnew - t */
    double habs[ODE_LANES];   /* step size for the next attempt */
    double minstep[ODE_LANES];/* 10 ulp(t) */
    double err[ODE_LANES];    /* RMS error norm of the last attempt */
    double ts[ODE_LANES];     /* stage time */
    int64_t traj[ODE_LANES];  /* trajectory in the lane, -1 = empty */
    int gi[ODE_LANES];        /* next grid index to output */
    int rej[ODE_LANES];       /* this step had a rejection */
    int acc[ODE_LANES];       /* last attempt accepted */
    int32_t nsteps[ODE_LANES], nfev[ODE_LANES], nrej[ODE_LANES];
    /* the ready group: trajectories initialised, waiting for a lane */
    int64_t rtraj[ODE_LANES];
    double rh[ODE_LANES];
    int32_t rnfev[ODE_LANES];
    int rbad[ODE_LANES];
    int rn, rpos;
} dp_lanes_t;

/* The tableau of scipy's RK45 (the same rational constants, rounded once). */
#define DP_C2 (1.0 / 5)
#define DP_C3 (3.0 / 10)
#define DP_C4 (4.0 / 5)
#define DP_C5 (8.0 / 9)
#define DP_A21 (1.0 / 5)
#define DP_A31 (3.0 / 40)
#define DP_A32 (9.0 / 40)
#define DP_A41 (44.0 / 45)
#define DP_A42 (-56.0 / 15)
#define DP_A43 (32.0 / 9)
#define DP_A51 (19372.0 / 6561)
#define DP_A52 (-25360.0 / 2187)
#define DP_A53 (64448.0 / 6561)
#define DP_A54 (-212.0 / 729)
#define DP_A61 (9017.0 / 3168)
#define DP_A62 (-355.0 / 33)
#define DP_A63 (46732.0 / 5247)
#define DP_A64 (49.0 / 176)
#define DP_A65 (-5103.0 / 18656)
#define DP_B1 (35.0 / 384)
#define DP_B3 (500.0 / 1113)
#define DP_B4 (125.0 / 192)
#define DP_B5 (-2187.0 / 6784)
#define DP_B6 (11.0 / 84)
#define DP_E1 (-71.0 / 57600)
#define DP_E3 (71.0 / 16695)
#define DP_E4 (-71.0 / 1920)
#define DP_E5 (17253.0 / 339200)
#define DP_E6 (-22.0 / 525)
#define DP_E7 (1.0 / 40)

#define DP_SAFETY 0.9
#define DP_MIN_FACTOR 0.2
#define DP_MAX_FACTOR 10.0
#define DP_ERR_EXP (-1.0 / 5)   /* -1 / (error_estimator_order + 1) */

/* Loop over components i and lanes l (lanes innermost: that loop is the
 * one that vectorises); DP_IX is the element's index in a [dim][st] block. */
#define DP_LOOP for (int i = 0; i < D; i++) for (int l = 0; l < ODE_LANES; l++)
#define DP_IX (i * st + l)   /* 64-bit: st is ode_ix_t */

ODE_FN double dp_min_step(double t)
{
    return 10.0 * fabs(nextafter(t, HUGE_VAL) - t);
}

ODE_FN int dp_finite(double x)
{
    return fabs(x) <= DBL_MAX;   /* false for Inf and NaN, vectorises */
}

/* ---------------------------------------------------------------- */
/* Initialisation of a group of up to ODE_LANES trajectories: f0 and  */
/* select_initial_step, vectorised over the group.                    */
/* ---------------------------------------------------------------- */
ODE_FN void dp_init_group(const ode_prob_t *p, int64_t first, int64_t count,
                          const double *x0, double *w, ode_ix_t st, dp_lanes_t *L)
{
    const int D = p->dim;
    double *iy = w + DP_IY0 * D * st, *if0 = w + DP_IF0 * D * st;
    double *iy1 = w + DP_IY1 * D * st, *if1 = w + DP_IF1 * D * st;
    double d0[ODE_LANES], d1[ODE_LANES], d2[ODE_LANES], h0[ODE_LANES];
    int bad[ODE_LANES];

    for (int l = 0; l < ODE_LANES; l++) {
        L->ts[l] = p->t0;
        d0[l] = d1[l] = d2[l] = 0.0;
        bad[l] = 0;
    }
    for (int i = 0; i < D; i++)
        for (int l = 0; l < ODE_LANES; l++)   /* empty slots get 0: harmless */
            iy[i * st + l] = l < count ? x0[(first + l) * D + i] : 0.0;
    ode_rhs(p, L->ts, iy, if0, st);

    for (int i = 0; i < D; i++)
        for (int l = 0; l < ODE_LANES; l++) {
            double y = iy[i * st + l], f = if0[i * st + l];
            double scale = p->atol + fabs(y) * p->rtol;
            double a = y / scale, b = f / scale;
            d0[l] += a * a;
            d1[l] += b * b;
            bad[l] |= !dp_finite(y) | !dp_finite(f);
        }
    const double rd = sqrt((double)D);   /* x.size ** 0.5 */
    for (int l = 0; l < ODE_LANES; l++) {
        d0[l] = sqrt(d0[l]) / rd;
        d1[l] = sqrt(d1[l]) / rd;
        h0[l] = (d0[l] < 1e-5 || d1[l] < 1e-5) ? 1e-6 : 0.01 * d0[l] / d1[l];
        L->ts[l] = p->t0 + h0[l];
    }
    int nfev = 1;
    if (p->first_step > 0) {
        for (int l = 0; l < ODE_LANES; l++)
            L->rh[l] = p->first_step;
    } else {
        nfev = 2;
        for (int i = 0; i < D; i++)
            for (int l = 0; l < ODE_LANES; l++)
                iy1[i * st + l] = iy[i * st + l] + h0[l] * if0[i * st + l];
        ode_rhs(p, L->ts, iy1, if1, st);
        for (int i = 0; i < D; i++)
            for (int l = 0; l < ODE_LANES; l++) {
                double scale = p->atol + fabs(iy[i * st + l]) * p->rtol;
                double c = (if1[i * st + l] - if0[i * st + l]) / scale;
                d2[l] += c * c;
            }
        for (int l = 0; l < ODE_LANES; l++) {
            double dd2 = sqrt(d2[l]) / rd / h0[l];
            double h1;
            if (d1[l] <= 1e-15 && dd2 <= 1e-15) {
                double m = h0[l] * 1e-3;
                h1 = m > 1e-6 ? m : 1e-6;              /* max(1e-6, h0*1e-3) */
            } else {
                double m = dd2 > d1[l] ? dd2 : d1[l];  /* Python max(d1, d2) */
                h1 = pow(0.01 / m, 1.0 / 5);
            }
            double h100 = 100 * h0[l];
            L->rh[l] = h1 < h100 ? h1 : h100;          /* Python min(100 h0, h1) */
        }
    }
    for (int l = 0; l < ODE_LANES; l++) {
        L->rtraj[l] = first + l;
        L->rnfev[l] = nfev;
        L->rbad[l] = bad[l] || !(L->rh[l] > 0 && L->rh[l] <= DBL_MAX);
    }
    L->rn = (int)count;
    L->rpos = 0;
}

/* ---------------------------------------------------------------- */
/* Lane bookkeeping                                                  */
/* ---------------------------------------------------------------- */

/* A lane is done: store its counters, NaN the grid rows not reached and
 * park the lane on harmless values (zeros) so idle arithmetic stays cheap. */
ODE_FN void dp_finish(const ode_prob_t *p, int l, int status, double *w, ode_ix_t st,
                      dp_lanes_t *L, double *yout, ode_stat_t *stat)
{
    const int D = p->dim;
    int64_t k = L->traj[l];
    stat[k].nsteps = L->nsteps[l];
    stat[k].nfev = L->nfev[l];
    stat[k].nrejected = L->nrej[l];
    stat[k].status = (int8_t)status;
    for (int g = L->gi[l]; g < p->nt; g++)
        for (int i = 0; i < D; i++)
            yout[(k * p->nt + g) * D + i] = NAN;
    for (int i = 0; i < D; i++) {
        w[DP_Y * D * st + i * st + l] = 0.0;
        for (int s = 0; s < 7; s++)
            w[(DP_K + s) * D * st + i * st + l] = 0.0;
    }
    L->traj[l] = -1;
    L->t[l] = L->h[l] = 0.0;
}

/* Start a new step in lane l (top of scipy's _step_impl). */
ODE_FN void dp_start_step(const ode_prob_t *p, int l, dp_lanes_t *L)
{
    double ms = dp_min_step(L->t[l]);
    L->minstep[l] = ms;
    if (L->habs[l] > p->max_step)
        L->habs[l] = p->max_step;
    else if (L->habs[l] < ms)
        L->habs[l] = ms;
    L->rej[l] = 0;
}

/* Set up the next attempt in lane l; 0 if the lane had to stop. */
ODE_FN int dp_prepare(const ode_prob_t *p, int l, double *w, ode_ix_t st, dp_lanes_t *L,
                      double *yout, ode_stat_t *stat)
{
    if (L->habs[l] < L->minstep[l]) {
        int why = dp_finite(L->err[l]) ? ODE_STEP_UNDERFLOW : ODE_NONFINITE;
        dp_finish(p, l, why, w, st, L, yout, stat);
        return 0;
    }
    if (p->max_steps > 0 && (int64_t)L->nsteps[l] + L->nrej[l] >= p->max_steps) {
        dp_finish(p, l, ODE_MAX_STEPS, w, st, L, yout, stat);
        return 0;
    }
    double t = L->t[l];
    double tnew = t + L->habs[l];
    if (tnew - p->t1 > 0)
        tnew = p->t1;
    L->tnew[l] = tnew;
    L->h[l] = tnew - t;
    L->habs[l] = fabs(L->h[l]);
    return 1;
}

/* Put the next ready trajectory into empty lane l; 0 if none is left. */
ODE_FN int dp_refill(const ode_prob_t *p, int l, int64_t *next, int64_t end,
                     const double *x0, double *w, ode_ix_t st, dp_lanes_t *L,
                     double *yout, ode_stat_t *stat)
{
    const int D = p->dim;
    for (;;) {
        if (L->rpos == L->rn) {
            if (*next >= end)
                return 0;
            int64_t cnt = end - *next < ODE_LANES ? end - *next : ODE_LANES;
            dp_init_group(p, *next, cnt, x0, w, st, L);
            *next += cnt;
        }
        int r = L->rpos++;
        for (int i = 0; i < D; i++) {
            w[DP_Y * D * st + i * st + l] = w[DP_IY0 * D * st + i * st + r];
            w[DP_K * D * st + i * st + l] = w[DP_IF0 * D * st + i * st + r];
        }
        L->traj[l] = L->rtraj[r];
        L->t[l] = p->t0;
        L->habs[l] = L->rh[r];
        L->nfev[l] = L->rnfev[r];
        L->nsteps[l] = L->nrej[l] = 0;
        L->gi[l] = 0;
        L->err[l] = 0.0;
        if (L->rbad[r]) {
            dp_finish(p, l, ODE_NONFINITE, w, st, L, yout, stat);
            continue;
        }
        dp_start_step(p, l, L);
        if (dp_prepare(p, l, w, st, L, yout, stat))
            return 1;
    }
}

/* ---------------------------------------------------------------- */
/* One attempted step in every lane (idle lanes compute on zeros).   */
/* ---------------------------------------------------------------- */
ODE_FN void dp_attempt(const ode_prob_t *p, double *w, ode_ix_t st, dp_lanes_t *L)
{
    const int D = p->dim;
    const ode_ix_t n = D * st;
    double *K0 = w, *K1 = w + n, *K2 = w + 2 * n, *K3 = w + 3 * n, *K4 = w + 4 * n,
           *K5 = w + 5 * n, *K6 = w + 6 * n;
    double *y = w + DP_Y * n, *yn = w + DP_YNEW * n, *yt = w + DP_YTMP * n;
    const double *h = L->h, *t = L->t;
    double ss[ODE_LANES];

#define DP_STAGE(c) for (int l = 0; l < ODE_LANES; l++) L->ts[l] = t[l] + (c) * h[l]
    DP_LOOP yt[DP_IX] = y[DP_IX] + (K0[DP_IX] * DP_A21) * h[l];
    DP_STAGE(DP_C2);
    ode_rhs(p, L->ts, yt, K1, st);
    DP_LOOP yt[DP_IX] = y[DP_IX] + (K0[DP_IX] * DP_A31 + K1[DP_IX] * DP_A32) * h[l];
    DP_STAGE(DP_C3);
    ode_rhs(p, L->ts, yt, K2, st);
    DP_LOOP yt[DP_IX] = y[DP_IX] + (K0[DP_IX] * DP_A41 + K1[DP_IX] * DP_A42
                                    + K2[DP_IX] * DP_A43) * h[l];
    DP_STAGE(DP_C4);
    ode_rhs(p, L->ts, yt, K3, st);
    DP_LOOP yt[DP_IX] = y[DP_IX] + (K0[DP_IX] * DP_A51 + K1[DP_IX] * DP_A52
                                    + K2[DP_IX] * DP_A53 + K3[DP_IX] * DP_A54) * h[l];
    DP_STAGE(DP_C5);
    ode_rhs(p, L->ts, yt, K4, st);
    DP_LOOP yt[DP_IX] = y[DP_IX] + (K0[DP_IX] * DP_A61 + K1[DP_IX] * DP_A62
                                    + K2[DP_IX] * DP_A63 + K3[DP_IX] * DP_A64
                                    + K4[DP_IX] * DP_A65) * h[l];
    DP_STAGE(1.0);
    ode_rhs(p, L->ts, yt, K5, st);
    DP_LOOP yn[DP_IX] = y[DP_IX] + h[l] * (K0[DP_IX] * DP_B1 + K2[DP_IX] * DP_B3
                                           + K3[DP_IX] * DP_B4 + K4[DP_IX] * DP_B5
                                           + K5[DP_IX] * DP_B6);
    for (int l = 0; l < ODE_LANES; l++)
        L->ts[l] = t[l] + h[l];
    ode_rhs(p, L->ts, yn, K6, st);

    for (int l = 0; l < ODE_LANES; l++)
        ss[l] = 0.0;
    DP_LOOP {
        double e = (K0[DP_IX] * DP_E1 + K2[DP_IX] * DP_E3 + K3[DP_IX] * DP_E4
                    + K4[DP_IX] * DP_E5 + K5[DP_IX] * DP_E6 + K6[DP_IX] * DP_E7) * h[l];
        double a = fabs(y[DP_IX]), b = fabs(yn[DP_IX]);
        double scale = p->atol + (a > b ? a : b) * p->rtol;
        double r = e / scale;
        ss[l] += r * r;
    }
    const double rd = sqrt((double)D);
    for (int l = 0; l < ODE_LANES; l++)
        L->err[l] = sqrt(ss[l]) / rd;
#undef DP_STAGE
}

/* Dense output of the accepted lanes at every grid time they passed. */
ODE_FN void dp_dense(const ode_prob_t *p, double *w, ode_ix_t st, dp_lanes_t *L,
                     double *yout)
{
    const int D = p->dim;
    const ode_ix_t n = D * st;
    const double *K = w, *y = w + DP_Y * n;
    double *Q = w + DP_Q * n, *yt = w + DP_YTMP * n;
    double x[ODE_LANES], p2[ODE_LANES], p3[ODE_LANES], p4[ODE_LANES];
    int pend[ODE_LANES], any = 0;

    for (int l = 0; l < ODE_LANES; l++)
        any |= L->acc[l] && L->gi[l] < p->nt && p->tgrid[L->gi[l]] <= L->tnew[l];
    if (!any)
        return;
    /* Q = K^T P (row 1 of P is zero; P[0][0] = 1, P[j][0] = 0 else) */
    const double P[7][4] = {
        {1, -8048581381.0 / 2820520608, 8663915743.0 / 2820520608, -12715105075.0 / 11282082432},
        {0, 0, 0, 0},
        {0, 131558114200.0 / 32700410799, -68118460800.0 / 10900136933, 87487479700.0 / 32700410799},
        {0, -1754552775.0 / 470086768, 14199869525.0 / 1410260304, -10690763975.0 / 1880347072},
        {0, 127303824393.0 / 49829197408, -318862633887.0 / 49829197408, 701980252875.0 / 199316789632},
        {0, -282668133.0 / 205662961, 2019193451.0 / 616988883, -1453857185.0 / 822651844},
        {0, 40617522.0 / 29380423, -110615467.0 / 29380423, 69997945.0 / 29380423}};
    DP_LOOP Q[DP_IX] = K[DP_IX];
    for (int k = 1; k < 4; k++)
        DP_LOOP Q[k * n + DP_IX] = K[DP_IX] * P[0][k] + K[2 * n + DP_IX] * P[2][k]
            + K[3 * n + DP_IX] * P[3][k] + K[4 * n + DP_IX] * P[4][k]
            + K[5 * n + DP_IX] * P[5][k] + K[6 * n + DP_IX] * P[6][k];

    for (;;) {
        any = 0;
        for (int l = 0; l < ODE_LANES; l++) {
            int g = L->gi[l];
            pend[l] = L->acc[l] && g < p->nt && p->tgrid[g] <= L->tnew[l];
            double tg = pend[l] ? p->tgrid[g] : L->t[l];
            double hl = pend[l] ? L->h[l] : 1.0;
            x[l] = (tg - L->t[l]) / hl;
            p2[l] = x[l] * x[l];
            p3[l] = p2[l] * x[l];
            p4[l] = p3[l] * x[l];
            any |= pend[l];
        }
        if (!any)
            break;
        DP_LOOP yt[DP_IX] = L->h[l] * (Q[DP_IX] * x[l] + Q[n + DP_IX] * p2[l]
                                       + Q[2 * n + DP_IX] * p3[l] + Q[3 * n + DP_IX] * p4[l])
                            + y[DP_IX];
        for (int l = 0; l < ODE_LANES; l++) {
            if (!pend[l])
                continue;
            double *o = yout + (L->traj[l] * p->nt + L->gi[l]) * D;
            for (int i = 0; i < D; i++)
                o[i] = yt[DP_IX];
            L->gi[l]++;
        }
    }
}

/* ---------------------------------------------------------------- */
/* Integrate n trajectories: x0 is [n][dim], yout is                 */
/* [n][nt][dim], stat is [n].  w: ODE_SCRATCH_BLOCKS*dim*st doubles,  */
/* lane l of block b, component i at w[b*dim*st + i*st + l].           */
/* ---------------------------------------------------------------- */
ODE_FN void dp45_solve(const ode_prob_t *p, int64_t n, const double *x0,
                       double *yout, ode_stat_t *stat, double *w, ode_ix_t st)
{
    const int D = p->dim;
    const ode_ix_t nn = D * st;
    dp_lanes_t L;
    int64_t next = 0, end = n;
    int nact = 0;

    L.rn = L.rpos = 0;
    for (int l = 0; l < ODE_LANES; l++) {
        L.traj[l] = -1;
        L.t[l] = L.h[l] = 0.0;
        L.acc[l] = 0;
        for (int i = 0; i < D; i++) {
            w[DP_Y * nn + i * st + l] = 0.0;
            for (int s = 0; s < 7; s++)
                w[(DP_K + s) * nn + i * st + l] = 0.0;
        }
    }
    for (int l = 0; l < ODE_LANES; l++)
        nact += dp_refill(p, l, &next, end, x0, w, st, &L, yout, stat);

    unsigned iter = 0;
    while (nact > 0) {
        if ((++iter & 63) == 0)
            ODE_POLL();
        dp_attempt(p, w, st, &L);

        /* step-size control, lane by lane (scipy's _step_impl) */
        for (int l = 0; l < ODE_LANES; l++) {
            L.acc[l] = 0;
            if (L.traj[l] < 0)
                continue;
            double en = L.err[l];
            L.nfev[l] += 6;
            if (en < 1) {
                double factor = DP_MAX_FACTOR;
                if (en != 0) {
                    double v = DP_SAFETY * pow(en, DP_ERR_EXP);
                    factor = v < DP_MAX_FACTOR ? v : DP_MAX_FACTOR;
                }
                if (L.rej[l] && factor > 1)
                    factor = 1;
                L.habs[l] *= factor;
                L.acc[l] = 1;
            } else {
                double v = DP_SAFETY * pow(en, DP_ERR_EXP);
                L.habs[l] *= v > DP_MIN_FACTOR ? v : DP_MIN_FACTOR;
                L.rej[l] = 1;
                L.nrej[l]++;
            }
        }

        dp_dense(p, w, st, &L, yout);

        /* accepted lanes move on: y = y_new, f = f_new */
        int bad[ODE_LANES];
        for (int l = 0; l < ODE_LANES; l++)
            bad[l] = 0;
        {
            double *K0 = w, *K6 = w + 6 * nn, *y = w + DP_Y * nn, *yn = w + DP_YNEW * nn;
            DP_LOOP {
                if (L.acc[l]) {
                    y[DP_IX] = yn[DP_IX];
                    K0[DP_IX] = K6[DP_IX];
                }
                bad[l] |= !dp_finite(yn[DP_IX]) | !dp_finite(K6[DP_IX]);
            }
        }

        for (int l = 0; l < ODE_LANES; l++) {
            if (L.traj[l] < 0)
                continue;
            if (L.acc[l]) {
                L.t[l] = L.tnew[l];
                L.nsteps[l]++;
                if (L.t[l] - p->t1 >= 0) {
                    dp_finish(p, l, ODE_OK, w, st, &L, yout, stat);
                    nact--;
                    nact += dp_refill(p, l, &next, end, x0, w, st, &L, yout, stat);
                    continue;
                }
                if (bad[l]) {
                    dp_finish(p, l, ODE_NONFINITE, w, st, &L, yout, stat);
                    nact--;
                    nact += dp_refill(p, l, &next, end, x0, w, st, &L, yout, stat);
                    continue;
                }
                dp_start_step(p, l, &L);
            }
            if (!dp_prepare(p, l, w, st, &L, yout, stat)) {
                nact--;
                nact += dp_refill(p, l, &next, end, x0, w, st, &L, yout, stat);
            }
        }
    }
}
#undef DP_LOOP
#undef DP_IX

#endif /* ODE_DP45_H */
