/* erk.h - explicit Runge-Kutta methods, step for step as scipy's
 * solve_ivp(method='RK23', 'RK45', 'DOP853').
 *
 * One engine, written once, compiled with every system: by the C compiler
 * with ODE_LANES = 8 (sys_lanes.h: eight trajectories advance in SIMD
 * lockstep, each lane with its own t, h and step decisions; a lane that
 * finishes is refilled with the next trajectory at once), and by NVRTC
 * with ODE_LANES = 1 (one trajectory per GPU thread).  Every lane does
 * exactly the arithmetic scipy does for one trajectory, in the same
 * order, so a trajectory's result does not depend on its lane or its
 * neighbours - the basis of bit-identical output for any rank count.
 *
 * The method is the first argument of every function, a constant where
 * the engine is instantiated (erk_solve(ODE_RK45, ...)): after inlining,
 * the tables and loops below fold into straight-line code per method.
 *
 * What is copied from scipy 1.10 (scipy/integrate/_ivp/rk.py, common.py,
 * ivp.py):
 *  - the tableaux (erk_tableaux.h);
 *  - select_initial_step (Hairer, Norsett, Wanner II.4) with the method's
 *    error estimator order;
 *  - rk_step: stage s at y + (sum_j K_j a_sj) h, y_new = y + h sum_j K_j b_j,
 *    f_new = f(t + h, y_new); the sums in tableau order over the non-zero
 *    coefficients (scipy uses numpy.dot; tests/odegen_ref.py --seq does
 *    the same sums as here, and agrees bit for bit);
 *  - step control of RungeKutta._step_impl: min_step = 10 ulp(t), clamp
 *    to max_step, shrink the last step onto t1, accept if the error norm
 *    < 1 with factor min(10, 0.9 norm^(-1/(q+1))) (not above 1 right
 *    after a rejection), else shrink by max(0.2, 0.9 norm^(-1/(q+1)));
 *    the RMS norm with scale atol + max(|y|, |y_new|) rtol, and DOP853's
 *    own norm from its 5th and 3rd order estimates;
 *  - dense output: RkDenseOutput (Q = K^T P, y = y_old + h Q p(x), p =
 *    (x, x^2, ...)) and Dop853DenseOutput (three more stages, F, and the
 *    nested product), x = (t - t_old) / h;
 *  - solve_ivp's loop: output at every grid time in (t_old, t_new] (and
 *    t0 on the first step); DOP853's three dense-output stages are paid
 *    (and counted in nfev) only in a step that outputs or locates an
 *    event, as solve_ivp(t_eval=...) without dense_output does; events
 *    found where g changes sign between steps (find_active_events) and
 *    located by Brent's method on the dense output (brentq, xtol = rtol =
 *    4 eps), a terminal one ending the trajectory at its zero.
 * Python's min/max on NaN are kept (min(10, nan) = 10, max(0.2, nan) =
 * 0.2).  Beyond scipy: a lane stops with ODE_NONFINITE when its state is
 * not finite (scipy would loop or shrink to underflow), ODE_MAX_STEPS
 * after max_steps attempts; grid rows not reached are NaN.
 *
 * The includer defines ODE_LANES and ODE_RHS(p, t, y, f, st) (the
 * system's right-hand side on [dim][st] arrays, t[ODE_LANES]); where
 * events run (not on the GPU), ODE_EVENT_G(p, e, t, x) (event e of the
 * system at one state x[dim]).  Plain C and CUDA C++.
 */
#ifndef ODE_ERK_H
#define ODE_ERK_H

#include "ode_prob.h"
#include "erk_tableaux.h"

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define ODE_FN __host__ __device__ __forceinline__
#ifndef DBL_MAX
#define DBL_MAX 1.7976931348623157e308
#endif
#ifndef DBL_EPSILON
#define DBL_EPSILON 2.220446049250313e-16
#endif
#ifndef HUGE_VAL
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)
#endif
#define ODE_NAN __longlong_as_double(0x7ff8000000000000LL)
#else
#include <float.h>
#include <math.h>
#if defined(__GNUC__)
/* always_inline: the whole engine must be inlined into the entry point,
 * which is compiled once per instruction set (target_clones) */
#define ODE_FN static inline __attribute__((always_inline))
#else
#define ODE_FN static inline
#endif
#define ODE_NAN NAN
#endif

#ifndef ODE_LANES
#error "define ODE_LANES before including erk.h"
#endif
#ifndef ODE_EVENT_G
#define ODE_NO_EVENTS 1
#else
#include "ode_events.h"
#endif

/* ---------------------------------------------------------------- */
/* The methods: sizes and tables                                     */
/* ---------------------------------------------------------------- */
/* stages per attempt (= evaluations of f per attempt, with f_new) */
ODE_FN int erk_stages(int m)
{
    return m == ODE_RK23 ? 3 : m == ODE_RK45 ? 6 : 12;
}
/* scipy's error_estimator_order */
ODE_FN int erk_est_order(int m)
{
    return m == ODE_RK23 ? 2 : m == ODE_RK45 ? 4 : 7;
}
/* K arrays: the stages and f_new (DOP853: and 3 dense-output stages) */
ODE_FN int erk_nk(int m)
{
    return m == ODE_DOP853 ? 16 : erk_stages(m) + 1;
}
/* dense-output arrays: Q's columns (RK23 3, RK45 4), DOP853's F (7) */
ODE_FN int erk_nq(int m)
{
    return m == ODE_RK23 ? 3 : m == ODE_RK45 ? 4 : 7;
}
ODE_FN double erk_c(int m, int s)
{
    return m == ODE_RK23 ? RK23_C[s] : m == ODE_RK45 ? RK45_C[s] : DOP853_C[s];
}
ODE_FN double erk_a(int m, int s, int j)
{
    return m == ODE_RK23 ? RK23_A[s][j] : m == ODE_RK45 ? RK45_A[s][j] : DOP853_A[s][j];
}
ODE_FN double erk_b(int m, int j)
{
    return m == ODE_RK23 ? RK23_B[j] : m == ODE_RK45 ? RK45_B[j] : DOP853_B[j];
}
/* the error estimate's weights (DOP853: E5, its 5th-order one) */
ODE_FN double erk_e(int m, int j)
{
    return m == ODE_RK23 ? RK23_E[j] : m == ODE_RK45 ? RK45_E[j] : DOP853_E5[j];
}
ODE_FN double erk_p(int m, int j, int k)
{
    return m == ODE_RK23 ? RK23_P[j][k] : RK45_P[j][k];
}

/* Scratch blocks of [dim][st] doubles per lane set (ODE_SCRATCH_BLOCKS
 * of the method): K[0..nk-1] (K[0] = f(t, y), K[S] = f(t+h, y_new)),
 * then these, counted from nk: */
enum {
    ERK_Y = 0,    /* y at t */
    ERK_YNEW = 1, /* y at t + h */
    ERK_YTMP = 2, /* stage argument / dense output */
    ERK_Q = 3     /* Q (RK) or F (DOP853): nq blocks; then, after them: */
};
enum {
    ERK_IY0 = 0,  /* initial conditions of the ready group */
    ERK_IF0 = 1,  /* f(t0, y0) of the ready group */
    ERK_IY1 = 2,  /* select_initial_step's probe point */
    ERK_IF1 = 3,  /* f at that point */
    ERK_EV = 4,   /* one lane's state, contiguous, for its event functions */
    ERK_AFTER_Q = 5
};
ODE_FN int erk_blocks(int m)
{
    return erk_nk(m) + ERK_Q + erk_nq(m) + ERK_AFTER_Q;
}
#define ERK_B(m, b) (erk_nk(m) + (b))                      /* Y, YNEW, YTMP, Q */
#define ERK_I(m, b) (erk_nk(m) + ERK_Q + erk_nq(m) + (b))  /* IY0 ... EV */

#ifndef ODE_MAX_EVENTS
#define ODE_MAX_EVENTS 16
#endif

/* Per-lane scalars of the lane set being integrated. */
typedef struct {
    double t[ODE_LANES];      /* current time */
    double tnew[ODE_LANES];   /* end of the attempted step */
    double tend[ODE_LANES];   /* end of the accepted step: tnew, or a terminal event's zero */
    double h[ODE_LANES];      /* attempted step, tnew - t */
    double habs[ODE_LANES];   /* step size for the next attempt */
    double minstep[ODE_LANES];/* 10 ulp(t) */
    double err[ODE_LANES];    /* error norm of the last attempt */
    double ts[ODE_LANES];     /* stage time */
    int64_t traj[ODE_LANES];  /* trajectory in the lane, -1 = empty */
    int gi[ODE_LANES];        /* next grid index to output */
    int rej[ODE_LANES];       /* this step had a rejection */
    int acc[ODE_LANES];       /* last attempt accepted */
    int dense[ODE_LANES];     /* this step's dense output is used (grid or events) */
    int stop[ODE_LANES];      /* a terminal event ends the trajectory at tend */
    int32_t nsteps[ODE_LANES], nfev[ODE_LANES], nrej[ODE_LANES];
    /* the ready group: trajectories initialised, waiting for a lane */
    int64_t rtraj[ODE_LANES];
    double rh[ODE_LANES];
    int32_t rnfev[ODE_LANES];
    int rbad[ODE_LANES];
    int rn, rpos;
#ifndef ODE_NO_EVENTS
    double g[ODE_LANES][ODE_MAX_EVENTS];   /* events at (t, y) */
    double gnew[ODE_LANES][ODE_MAX_EVENTS];/* at (tnew, y_new) */
    int active[ODE_LANES][ODE_MAX_EVENTS]; /* a sign change in the step */
    int nactive[ODE_LANES];
#endif
} erk_lanes_t;

#define ERK_SAFETY 0.9
#define ERK_MIN_FACTOR 0.2
#define ERK_MAX_FACTOR 10.0

/* The lanes come in groups of ODE_GROUP (one hpc_real of the system's
 * right-hand side: 4 doubles, an AVX2 register, on x86-64), each group a
 * [dim][st] block, st = ODE_GROUP; on the GPU one lane, st = the threads.
 * ERK_AT(i, l) is component i of lane l in a block of all lanes (nn =
 * D * st * groups doubles).  ERK_LOOP runs over groups, components and
 * the lanes of a group (innermost: the loop that vectorises, one register
 * wide); ERK_IX is the element's index there. */
#ifndef ODE_GROUP
#define ODE_GROUP ODE_LANES
#endif
#define ERK_GROUPS (ODE_LANES / ODE_GROUP)
#define ERK_AT(i, l) \
    ((ode_ix_t)((l) / ODE_GROUP) * ODE_GROUP * D + (ode_ix_t)(i) * st + (l) % ODE_GROUP) /* 64-bit */
#define ERK_LOOP                                    \
    for (int g_ = 0; g_ < ERK_GROUPS; g_++)         \
        for (int i = 0; i < D; i++)                 \
            for (int l4_ = 0, l = g_ * ODE_GROUP; l4_ < ODE_GROUP; l4_++, l++)
#define ERK_IX ((ode_ix_t)g_ * ODE_GROUP * D + (ode_ix_t)i * st + l4_)

ODE_FN double erk_min_step(double t)
{
    return 10.0 * fabs(nextafter(t, HUGE_VAL) - t);
}

ODE_FN int erk_finite(double x)
{
    return fabs(x) <= DBL_MAX; /* false for Inf and NaN, vectorises */
}

/* out = base + (sum_j<n K_j c_j) * h per lane, the sum over the non-zero
 * c_j in order (scipy: base + np.dot(K[:n].T, c) * h).  hfirst: h * sum,
 * the order of y_new's line (the same product: IEEE multiplication
 * commutes).  c(j) is a constant once the method and stage are. */
#define ERK_COMBO(m, w, n_, cexpr, base, out, hfirst)                                   \
    do {                                                                               \
        ERK_LOOP {                                                                     \
            double acc_ = 0.0;                                                         \
            int first_ = 1;                                                            \
            for (int j = 0; j < (n_); j++) {                                           \
                const double c_ = (cexpr);                                             \
                if (c_ != 0) {                                                         \
                    double term_ = (w)[(ode_ix_t)j * nn + ERK_IX] * c_;                \
                    acc_ = first_ ? term_ : acc_ + term_;                              \
                    first_ = 0;                                                        \
                }                                                                      \
            }                                                                          \
            (out)[ERK_IX] = (base)[ERK_IX] + ((hfirst) ? L->h[l] * acc_ : acc_ * L->h[l]); \
        }                                                                              \
    } while (0)

/* ---------------------------------------------------------------- */
/* Initialisation of a group of up to ODE_LANES trajectories: f0 and  */
/* select_initial_step, vectorised over the group.                    */
/* ---------------------------------------------------------------- */
ODE_FN void erk_init_group(int m, const ode_prob_t *p, int64_t first, int64_t count,
                           const double *x0, double *w, ode_ix_t st, erk_lanes_t *L)
{
    const int D = p->dim;
    const ode_ix_t nn = D * st * ERK_GROUPS;
    double *iy = w + ERK_I(m, ERK_IY0) * nn, *if0 = w + ERK_I(m, ERK_IF0) * nn;
    double *iy1 = w + ERK_I(m, ERK_IY1) * nn, *if1 = w + ERK_I(m, ERK_IF1) * nn;
    double d0[ODE_LANES], d1[ODE_LANES], d2[ODE_LANES], h0[ODE_LANES];
    int bad[ODE_LANES];

    for (int l = 0; l < ODE_LANES; l++) {
        L->ts[l] = p->t0;
        d0[l] = d1[l] = d2[l] = 0.0;
        bad[l] = 0;
    }
    for (int i = 0; i < D; i++)
        for (int l = 0; l < ODE_LANES; l++) /* empty slots get 0: harmless */
            iy[ERK_AT(i, l)] = l < count ? x0[(first + l) * D + i] : 0.0;
    ODE_RHS(p, L->ts, iy, if0, st);

    for (int i = 0; i < D; i++)
        for (int l = 0; l < ODE_LANES; l++) {
            double y = iy[ERK_AT(i, l)], f = if0[ERK_AT(i, l)];
            double scale = p->atol + fabs(y) * p->rtol;
            double a = y / scale, b = f / scale;
            d0[l] += a * a;
            d1[l] += b * b;
            bad[l] |= !erk_finite(y) | !erk_finite(f);
        }
    const double rd = sqrt((double)D); /* x.size ** 0.5 */
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
                iy1[ERK_AT(i, l)] = iy[ERK_AT(i, l)] + h0[l] * if0[ERK_AT(i, l)];
        ODE_RHS(p, L->ts, iy1, if1, st);
        for (int i = 0; i < D; i++)
            for (int l = 0; l < ODE_LANES; l++) {
                double scale = p->atol + fabs(iy[ERK_AT(i, l)]) * p->rtol;
                double c = (if1[ERK_AT(i, l)] - if0[ERK_AT(i, l)]) / scale;
                d2[l] += c * c;
            }
        const double expo = 1.0 / (erk_est_order(m) + 1);
        for (int l = 0; l < ODE_LANES; l++) {
            double dd2 = sqrt(d2[l]) / rd / h0[l];
            double h1;
            if (d1[l] <= 1e-15 && dd2 <= 1e-15) {
                double mm = h0[l] * 1e-3;
                h1 = mm > 1e-6 ? mm : 1e-6;             /* max(1e-6, h0*1e-3) */
            } else {
                double mm = dd2 > d1[l] ? dd2 : d1[l];  /* Python max(d1, d2) */
                h1 = pow(0.01 / mm, expo);
            }
            double h100 = 100 * h0[l];
            L->rh[l] = h1 < h100 ? h1 : h100;           /* Python min(100 h0, h1) */
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
ODE_FN void erk_finish(int m, const ode_prob_t *p, int l, int status, double *w, ode_ix_t st,
                       erk_lanes_t *L, double *yout, ode_stat_t *stat)
{
    const int D = p->dim;
    const ode_ix_t nn = D * st * ERK_GROUPS;
    int64_t k = L->traj[l];
    stat[k].nsteps = L->nsteps[l];
    stat[k].nfev = L->nfev[l];
    stat[k].nrejected = L->nrej[l];
    stat[k].status = (int8_t)status;
    for (int g = L->gi[l]; g < p->nt; g++)
        for (int i = 0; i < D; i++)
            yout[(k * p->nt + g) * D + i] = ODE_NAN;
    for (int i = 0; i < D; i++) {
        w[ERK_B(m, ERK_Y) * nn + ERK_AT(i, l)] = 0.0;
        for (int s = 0; s < erk_nk(m); s++)
            w[s * nn + ERK_AT(i, l)] = 0.0;
    }
    L->traj[l] = -1;
    L->t[l] = L->h[l] = 0.0;
}

/* Start a new step in lane l (top of scipy's _step_impl). */
ODE_FN void erk_start_step(const ode_prob_t *p, int l, erk_lanes_t *L)
{
    double ms = erk_min_step(L->t[l]);
    L->minstep[l] = ms;
    if (L->habs[l] > p->max_step)
        L->habs[l] = p->max_step;
    else if (L->habs[l] < ms)
        L->habs[l] = ms;
    L->rej[l] = 0;
}

/* Set up the next attempt in lane l; 0 if the lane had to stop. */
ODE_FN int erk_prepare(int m, const ode_prob_t *p, int l, double *w, ode_ix_t st, erk_lanes_t *L,
                       double *yout, ode_stat_t *stat)
{
    if (L->habs[l] < L->minstep[l]) {
        int why = erk_finite(L->err[l]) ? ODE_STEP_UNDERFLOW : ODE_NONFINITE;
        erk_finish(m, p, l, why, w, st, L, yout, stat);
        return 0;
    }
    if (p->max_steps > 0 && (int64_t)L->nsteps[l] + L->nrej[l] >= p->max_steps) {
        erk_finish(m, p, l, ODE_MAX_STEPS, w, st, L, yout, stat);
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

#ifndef ODE_NO_EVENTS
/* The system's events at one lane's state (gathered into the contiguous
 * EV block: the event functions take x[dim]). */
ODE_FN void erk_events_at(int m, const ode_prob_t *p, int l, double t, const double *y, double *w,
                          ode_ix_t st, double *g)
{
    const int D = p->dim;
    const ode_ix_t nn = D * st * ERK_GROUPS;
    double *x = w + ERK_I(m, ERK_EV) * nn;
    for (int i = 0; i < D; i++)
        x[i] = y[ERK_AT(i, l)];
    for (int e = 0; e < p->nev; e++)
        g[e] = ODE_EVENT_G(p, e, t, x);
}
#endif

/* Put the next ready trajectory into empty lane l; 0 if none is left. */
ODE_FN int erk_refill(int m, const ode_prob_t *p, int l, int64_t *next, int64_t end,
                      const double *x0, double *w, ode_ix_t st, erk_lanes_t *L,
                      double *yout, ode_stat_t *stat)
{
    const int D = p->dim;
    const ode_ix_t nn = D * st * ERK_GROUPS;
    for (;;) {
        if (L->rpos == L->rn) {
            if (*next >= end)
                return 0;
            int64_t cnt = end - *next < ODE_LANES ? end - *next : ODE_LANES;
            erk_init_group(m, p, *next, cnt, x0, w, st, L);
            *next += cnt;
        }
        int r = L->rpos++;
        for (int i = 0; i < D; i++) {
            w[ERK_B(m, ERK_Y) * nn + ERK_AT(i, l)] = w[ERK_I(m, ERK_IY0) * nn + ERK_AT(i, r)];
            w[ERK_AT(i, l)] = w[ERK_I(m, ERK_IF0) * nn + ERK_AT(i, r)];
        }
        L->traj[l] = L->rtraj[r];
        L->t[l] = p->t0;
        L->habs[l] = L->rh[r];
        L->nfev[l] = L->rnfev[r];
        L->nsteps[l] = L->nrej[l] = 0;
        L->gi[l] = 0;
        L->err[l] = 0.0;
        if (L->rbad[r]) {
            erk_finish(m, p, l, ODE_NONFINITE, w, st, L, yout, stat);
            continue;
        }
#ifndef ODE_NO_EVENTS
        if (p->nev)   /* solve_ivp: g = [event(t0, y0) for event in events] */
            erk_events_at(m, p, l, p->t0, w + ERK_B(m, ERK_Y) * nn, w, st, L->g[l]);
#endif
        erk_start_step(p, l, L);
        if (erk_prepare(m, p, l, w, st, L, yout, stat))
            return 1;
    }
}

/* ---------------------------------------------------------------- */
/* One attempted step in every lane (idle lanes compute on zeros).   */
/* ---------------------------------------------------------------- */
ODE_FN void erk_attempt(int m, const ode_prob_t *p, double *w, ode_ix_t st, erk_lanes_t *L)
{
    const int D = p->dim;
    const ode_ix_t nn = D * st * ERK_GROUPS;
    const int S = erk_stages(m);
    double *y = w + ERK_B(m, ERK_Y) * nn, *yn = w + ERK_B(m, ERK_YNEW) * nn;
    double *yt = w + ERK_B(m, ERK_YTMP) * nn;
    const double *h = L->h, *t = L->t;
    double ss[ODE_LANES];

    /* stage s, written out for every s (a literal: with the method also
     * constant, every coefficient is, and the zero ones drop out) */
#define ERK_STAGE(s)                                                \
    if ((s) < S) {                                                  \
        ERK_COMBO(m, w, (s), erk_a(m, (s), j), y, yt, 0);           \
        for (int l = 0; l < ODE_LANES; l++)                         \
            L->ts[l] = t[l] + erk_c(m, (s)) * h[l];                 \
        ODE_RHS(p, L->ts, yt, w + (s) * nn, st);                    \
    }
    ERK_STAGE(1) ERK_STAGE(2) ERK_STAGE(3) ERK_STAGE(4) ERK_STAGE(5) ERK_STAGE(6)
    ERK_STAGE(7) ERK_STAGE(8) ERK_STAGE(9) ERK_STAGE(10) ERK_STAGE(11)
#undef ERK_STAGE
    ERK_COMBO(m, w, S, erk_b(m, j), y, yn, 1);
    for (int l = 0; l < ODE_LANES; l++)
        L->ts[l] = t[l] + h[l];
    ODE_RHS(p, L->ts, yn, w + S * nn, st);

    for (int l = 0; l < ODE_LANES; l++)
        ss[l] = 0.0;
    if (m != ODE_DOP853) {
        /* scipy: norm(np.dot(K.T, E) * h / scale), the RMS norm */
        ERK_LOOP {
            double e = 0.0;
            int first = 1;
            for (int j = 0; j <= S; j++)
                if (erk_e(m, j) != 0) {
                    double term = w[(ode_ix_t)j * nn + ERK_IX] * erk_e(m, j);
                    e = first ? term : e + term;
                    first = 0;
                }
            e = e * h[l];
            double a = fabs(y[ERK_IX]), b = fabs(yn[ERK_IX]);
            double scale = p->atol + (a > b ? a : b) * p->rtol;
            double r = e / scale;
            ss[l] += r * r;
        }
        const double rd = sqrt((double)D);
        for (int l = 0; l < ODE_LANES; l++)
            L->err[l] = sqrt(ss[l]) / rd;
    } else {
        /* DOP853._estimate_error_norm: err5 = K^T E5 / scale, err3 = K^T
         * E3 / scale, norms squared (numpy's norm, then **2), and
         * |h| n5^2 / sqrt((n5^2 + 0.01 n3^2) n) */
        double s3[ODE_LANES];
        for (int l = 0; l < ODE_LANES; l++)
            s3[l] = 0.0;
        ERK_LOOP {
            double e5 = 0.0, e3 = 0.0;
            int f5 = 1, f3 = 1;
            for (int j = 0; j <= S; j++) {
                if (DOP853_E5[j] != 0) {
                    double term = w[(ode_ix_t)j * nn + ERK_IX] * DOP853_E5[j];
                    e5 = f5 ? term : e5 + term;
                    f5 = 0;
                }
                if (DOP853_E3[j] != 0) {
                    double term = w[(ode_ix_t)j * nn + ERK_IX] * DOP853_E3[j];
                    e3 = f3 ? term : e3 + term;
                    f3 = 0;
                }
            }
            double a = fabs(y[ERK_IX]), b = fabs(yn[ERK_IX]);
            double scale = p->atol + (a > b ? a : b) * p->rtol;
            double r5 = e5 / scale, r3 = e3 / scale;
            ss[l] += r5 * r5;
            s3[l] += r3 * r3;
        }
        for (int l = 0; l < ODE_LANES; l++) {
            double n5 = sqrt(ss[l]), n3 = sqrt(s3[l]);
            double n52 = n5 * n5, n32 = n3 * n3;
            if (n52 == 0 && n32 == 0) {
                L->err[l] = 0.0;
            } else {
                double denom = n52 + 0.01 * n32;
                L->err[l] = fabs(h[l]) * n52 / sqrt(denom * (double)D);
            }
        }
    }
}

/* ---------------------------------------------------------------- */
/* Dense output                                                      */
/* ---------------------------------------------------------------- */
/* The interpolant of this step, for every lane (used where L->dense):
 * Q = K^T P (RK; P[0][0] = 1 and P[j][0] = 0 else, so Q[0] = K[0]), or
 * DOP853's three extra stages and F. */
ODE_FN void erk_dense_prepare(int m, const ode_prob_t *p, double *w, ode_ix_t st, erk_lanes_t *L)
{
    const int D = p->dim;
    const ode_ix_t nn = D * st * ERK_GROUPS;
    const double *K = w, *y = w + ERK_B(m, ERK_Y) * nn, *yn = w + ERK_B(m, ERK_YNEW) * nn;
    double *Q = w + ERK_B(m, ERK_Q) * nn, *yt = w + ERK_B(m, ERK_YTMP) * nn;
    if (m != ODE_DOP853) {
        const int nk = erk_stages(m) + 1, nq = erk_nq(m);
        ERK_LOOP Q[ERK_IX] = K[ERK_IX];
        /* column k written out for each k (a literal, as the stages) */
#define ERK_QCOL(k)                                                                        \
        if ((k) < nq)                                                                      \
            ERK_LOOP {                                                                     \
                double acc = 0.0;                                                          \
                int first = 1;                                                             \
                for (int j = 0; j < nk; j++)                                               \
                    if (erk_p(m, j, (k)) != 0) {                                           \
                        double term = K[(ode_ix_t)j * nn + ERK_IX] * erk_p(m, j, (k));     \
                        acc = first ? term : acc + term;                                   \
                        first = 0;                                                         \
                    }                                                                      \
                Q[(k) * nn + ERK_IX] = acc;                                                \
            }
        ERK_QCOL(1) ERK_QCOL(2) ERK_QCOL(3)
#undef ERK_QCOL
        return;
    }
    /* Dop853: K[13..15] = f(t_old + c h, y_old + (sum_j<s K_j a_sj) h) */
#define ERK_EXTRA(s)                                                \
    {                                                               \
        ERK_COMBO(m, w, (s), DOP853_A[(s)][j], y, yt, 0);           \
        for (int l = 0; l < ODE_LANES; l++)                         \
            L->ts[l] = L->t[l] + DOP853_C[(s)] * L->h[l];           \
        ODE_RHS(p, L->ts, yt, w + (s) * nn, st);                    \
    }
    ERK_EXTRA(13) ERK_EXTRA(14) ERK_EXTRA(15)
#undef ERK_EXTRA
    const double *f_old = K, *f_new = K + 12 * nn;
    ERK_LOOP {
        double h = L->h[l];
        double dy = yn[ERK_IX] - y[ERK_IX];
        Q[ERK_IX] = dy;
        Q[nn + ERK_IX] = h * f_old[ERK_IX] - dy;
        Q[2 * nn + ERK_IX] = 2 * dy - h * (f_new[ERK_IX] + f_old[ERK_IX]);
    }
#define ERK_DROW(r)                                                                        \
    ERK_LOOP {                                                                             \
        double acc = 0.0;                                                                  \
        int first = 1;                                                                     \
        for (int j = 0; j < 16; j++)                                                       \
            if (DOP853_D[(r)][j] != 0) {                                                   \
                double term = K[(ode_ix_t)j * nn + ERK_IX] * DOP853_D[(r)][j];             \
                acc = first ? term : acc + term;                                           \
                first = 0;                                                                 \
            }                                                                              \
        Q[(3 + (r)) * nn + ERK_IX] = L->h[l] * acc;                                        \
    }
    ERK_DROW(0) ERK_DROW(1) ERK_DROW(2) ERK_DROW(3)
#undef ERK_DROW
}

/* The interpolant of lane l at x = (t - t_old) / h, component i (scipy's
 * _call_impl, the same operations for one time or many). */
ODE_FN double erk_dense_value(int m, const double *Q, ode_ix_t nn, ode_ix_t ix, double h, double x,
                              double yold)
{
    if (m != ODE_DOP853) {
        double p2 = x * x, p3 = p2 * x;
        double s = Q[ix] * x + Q[nn + ix] * p2;
        s = s + Q[2 * nn + ix] * p3;
        if (m == ODE_RK45)
            s = s + Q[3 * nn + ix] * (p3 * x);
        return h * s + yold;
    }
    /* for i, f in enumerate(reversed(F)): y += f; y *= x if i even else 1 - x */
    double y = 0.0, x1 = 1 - x;
    for (int k = 6; k >= 0; k--) {
        y += Q[k * nn + ix];
        y *= (6 - k) % 2 == 0 ? x : x1;
    }
    return y + yold;
}

/* Grid output of the accepted lanes: every grid time in (t, tend] (and t0
 * on the first step). */
ODE_FN void erk_grid(int m, const ode_prob_t *p, double *w, ode_ix_t st, erk_lanes_t *L, double *yout)
{
    const int D = p->dim;
    const ode_ix_t nn = D * st * ERK_GROUPS;
    const double *y = w + ERK_B(m, ERK_Y) * nn;
    const double *Q = w + ERK_B(m, ERK_Q) * nn;
    double *yt = w + ERK_B(m, ERK_YTMP) * nn;
    double x[ODE_LANES];
    int pend[ODE_LANES];
    for (;;) {
        int any = 0;
        for (int l = 0; l < ODE_LANES; l++) {
            int g = L->gi[l];
            pend[l] = L->acc[l] && g < p->nt && p->tgrid[g] <= L->tend[l];
            double tg = pend[l] ? p->tgrid[g] : L->t[l];
            double hl = pend[l] ? L->h[l] : 1.0;
            x[l] = (tg - L->t[l]) / hl;
            any |= pend[l];
        }
        if (!any)
            break;
        ERK_LOOP yt[ERK_IX] = erk_dense_value(m, Q, nn, ERK_IX, L->h[l], x[l], y[ERK_IX]);
        for (int l = 0; l < ODE_LANES; l++) {
            if (!pend[l])
                continue;
            double *o = yout + (L->traj[l] * p->nt + L->gi[l]) * D;
            for (int i = 0; i < D; i++)
                o[i] = yt[ERK_AT(i, l)];
            L->gi[l]++;
        }
    }
}

#ifndef ODE_NO_EVENTS
/* ---------------------------------------------------------------- */
/* Events                                                            */
/* ---------------------------------------------------------------- */
/* event e of lane l at time t on the step's interpolant (the state into
 * x): ode_events.h's view of the lanes */
typedef struct {
    int m;
    const ode_prob_t *p;
    int l;
    double *w;
    ode_ix_t st;
    const erk_lanes_t *L;
} erk_event_ctx_t;

static double erk_event_on_dense(void *ctx, int e, double t, double *x)
{
    const erk_event_ctx_t *c = (const erk_event_ctx_t *)ctx;
    const int D = c->p->dim, m = c->m, l = c->l;
    const ode_ix_t st = c->st, nn = D * st * ERK_GROUPS;
    const double *y = c->w + ERK_B(m, ERK_Y) * nn, *Q = c->w + ERK_B(m, ERK_Q) * nn;
    double xx = (t - c->L->t[l]) / c->L->h[l];
    for (int i = 0; i < D; i++)
        x[i] = erk_dense_value(m, Q, nn, ERK_AT(i, l), c->L->h[l], xx, y[ERK_AT(i, l)]);
    return ODE_EVENT_G(c->p, e, t, x);
}

/* handle_events for lane l: the step ends at a terminal event's zero */
ODE_FN void erk_handle_events(int m, const ode_prob_t *p, int l, double *w, ode_ix_t st,
                              erk_lanes_t *L, ode_evout_t *ev)
{
    erk_event_ctx_t c = {m, p, l, w, st, L};
    const ode_ix_t nn = (ode_ix_t)p->dim * st * ERK_GROUPS;
    double *x = w + ERK_I(m, ERK_EV) * nn;
    if (ode_events_handle(p, erk_event_on_dense, &c, L->active[l], L->t[l], L->tnew[l], L->traj[l], ev, x,
                          &L->tend[l]))
        L->stop[l] = 1;
}
#endif

/* ---------------------------------------------------------------- */
/* Integrate n trajectories: x0 is [n][dim], yout is [n][nt][dim],    */
/* stat is [n], ev the events (NULL without).  w: erk_blocks(m) * dim */
/* * st * groups doubles, lane l of block b, component i at           */
/* w[b*nn + ERK_AT(i, l)].                                            */
/* ---------------------------------------------------------------- */
ODE_FN void erk_solve(int m, const ode_prob_t *p, int64_t n, const double *x0, double *yout,
                      ode_stat_t *stat, ode_evout_t *ev, double *w, ode_ix_t st)
{
    const int D = p->dim;
    const ode_ix_t nn = D * st * ERK_GROUPS;
    const int S = erk_stages(m);
    erk_lanes_t L;
    int64_t next = 0, end = n;
    int nact = 0;
    (void)ev;

    L.rn = L.rpos = 0;
    for (int l = 0; l < ODE_LANES; l++) {
        L.traj[l] = -1;
        L.t[l] = L.h[l] = 0.0;
        L.acc[l] = L.dense[l] = L.stop[l] = 0;
        for (int i = 0; i < D; i++) {
            w[ERK_B(m, ERK_Y) * nn + ERK_AT(i, l)] = 0.0;
            for (int s = 0; s < erk_nk(m); s++)
                w[s * nn + ERK_AT(i, l)] = 0.0;
        }
    }
    for (int l = 0; l < ODE_LANES; l++)
        nact += erk_refill(m, p, l, &next, end, x0, w, st, &L, yout, stat);

    unsigned iter = 0;
    while (nact > 0) {
        if ((++iter & 63) == 0 && p->poll)
            p->poll();
        erk_attempt(m, p, w, st, &L);

        /* step-size control, lane by lane (scipy's _step_impl) */
        const double expo = -1.0 / (erk_est_order(m) + 1);
        int anydense = 0;
        for (int l = 0; l < ODE_LANES; l++) {
            L.acc[l] = L.dense[l] = L.stop[l] = 0;
            if (L.traj[l] < 0)
                continue;
            double en = L.err[l];
            L.nfev[l] += S;
            if (en < 1) {
                double factor = ERK_MAX_FACTOR;
                if (en != 0) {
                    double v = ERK_SAFETY * pow(en, expo);
                    factor = v < ERK_MAX_FACTOR ? v : ERK_MAX_FACTOR;
                }
                if (L.rej[l] && factor > 1)
                    factor = 1;
                L.habs[l] *= factor;
                L.acc[l] = 1;
                L.tend[l] = L.tnew[l];
                /* solve_ivp computes the interpolant for output or events */
                L.dense[l] = L.gi[l] < p->nt && p->tgrid[L.gi[l]] <= L.tnew[l];
#ifndef ODE_NO_EVENTS
                if (p->nev) {
                    erk_events_at(m, p, l, L.tnew[l], w + ERK_B(m, ERK_YNEW) * nn, w, st, L.gnew[l]);
                    L.nactive[l] = ode_events_active(p, L.g[l], L.gnew[l], L.active[l]);
                    L.dense[l] |= L.nactive[l] > 0;
                }
#endif
                anydense |= L.dense[l];
            } else {
                double v = ERK_SAFETY * pow(en, expo);
                L.habs[l] *= v > ERK_MIN_FACTOR ? v : ERK_MIN_FACTOR;
                L.rej[l] = 1;
                L.nrej[l]++;
            }
        }

        if (anydense) {
            erk_dense_prepare(m, p, w, st, &L);
            if (m == ODE_DOP853)
                for (int l = 0; l < ODE_LANES; l++)
                    L.nfev[l] += L.dense[l] ? 3 : 0;
#ifndef ODE_NO_EVENTS
            for (int l = 0; l < ODE_LANES; l++)
                if (L.acc[l] && p->nev && L.nactive[l])
                    erk_handle_events(m, p, l, w, st, &L, ev);
#endif
            erk_grid(m, p, w, st, &L, yout);
        }

        /* accepted lanes move on: y = y_new, f = f_new */
        int bad[ODE_LANES];
        for (int l = 0; l < ODE_LANES; l++)
            bad[l] = 0;
        {
            double *K0 = w, *KS = w + S * nn, *y = w + ERK_B(m, ERK_Y) * nn;
            const double *yn = w + ERK_B(m, ERK_YNEW) * nn;
            ERK_LOOP {
                if (L.acc[l]) {
                    y[ERK_IX] = yn[ERK_IX];
                    K0[ERK_IX] = KS[ERK_IX];
                }
                bad[l] |= !erk_finite(yn[ERK_IX]) | !erk_finite(KS[ERK_IX]);
            }
        }

        for (int l = 0; l < ODE_LANES; l++) {
            if (L.traj[l] < 0)
                continue;
            if (L.acc[l]) {
                L.t[l] = L.tnew[l];
                L.nsteps[l]++;
                int done = L.stop[l] ? ODE_EVENT : L.t[l] - p->t1 >= 0 ? ODE_OK : bad[l] ? ODE_NONFINITE : 2;
                if (done != 2) {
                    erk_finish(m, p, l, done, w, st, &L, yout, stat);
                    nact--;
                    nact += erk_refill(m, p, l, &next, end, x0, w, st, &L, yout, stat);
                    continue;
                }
#ifndef ODE_NO_EVENTS
                for (int e = 0; e < p->nev; e++)
                    L.g[l][e] = L.gnew[l][e];
#endif
                erk_start_step(p, l, &L);
            }
            if (!erk_prepare(m, p, l, w, st, &L, yout, stat)) {
                nact--;
                nact += erk_refill(m, p, l, &next, end, x0, w, st, &L, yout, stat);
            }
        }
    }
}
#undef ERK_LOOP
#undef ERK_IX
#undef ERK_AT

#endif /* ODE_ERK_H */
