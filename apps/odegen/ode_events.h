/* ode_events.h - events as scipy's solve_ivp handles them, for every
 * engine (the explicit lanes, erk.h; the implicit methods, implicit.c):
 * which events a step crossed (find_active_events), where (brentq on the
 * step's interpolant, as solve_event_equation calls it), which of them
 * count when a terminal one ends the step (handle_events), and where they
 * are recorded (ode_evout_t).  The engine gives the interpolant as a
 * function: g_e at time t, with the state there written to x[dim].
 * Plain C, CPU only (includes hpc_ode.h's types through the system).
 */
#ifndef ODE_EVENTS_H
#define ODE_EVENTS_H

#include <float.h>
#include <math.h>
#include "ode_prob.h"

/* event e at time t on the step's interpolant; the state there into x */
typedef double (*ode_event_fn)(void *ctx, int e, double t, double *x);

/* find_active_events: a zero of g_e between g (step start) and gnew (step
 * end), in its direction; how many */
static inline int ode_events_active(const ode_prob_t *p, const double *g, const double *gnew, int *active)
{
    const hpc_ode_event *ev = (const hpc_ode_event *)p->events;
    int n = 0;
    for (int e = 0; e < p->nev; e++) {
        int up = g[e] <= 0 && gnew[e] >= 0, down = g[e] >= 0 && gnew[e] <= 0;
        int dir = ev[e].direction;
        active[e] = (up && dir > 0) || (down && dir < 0) || ((up || down) && dir == 0);
        n += active[e];
    }
    return n;
}

/* scipy.optimize.brentq (scipy/optimize/Zeros/brentq.c) on g_e over
 * [xa, xb], xtol = rtol = 4 eps, at most 100 iterations */
static inline double ode_brentq(ode_event_fn f, void *ctx, int e, double xa, double xb, double *x)
{
    const double xtol = 4 * DBL_EPSILON, rtol = 4 * DBL_EPSILON;
    double xpre = xa, xcur = xb, xblk = 0., fblk = 0., spre = 0., scur = 0.;
    double fpre = f(ctx, e, xpre, x), fcur = f(ctx, e, xcur, x);
    if (fpre == 0)
        return xpre;
    if (fcur == 0)
        return xcur;
    if (signbit(fpre) == signbit(fcur))
        return xcur; /* scipy raises; the step's end is the best we know */
    for (int it = 0; it < 100; it++) {
        if (fpre != 0 && fcur != 0 && signbit(fpre) != signbit(fcur)) {
            xblk = xpre;
            fblk = fpre;
            spre = scur = xcur - xpre;
        }
        if (fabs(fblk) < fabs(fcur)) {
            xpre = xcur;
            xcur = xblk;
            xblk = xpre;
            fpre = fcur;
            fcur = fblk;
            fblk = fpre;
        }
        double delta = (xtol + rtol * fabs(xcur)) / 2;
        double sbis = (xblk - xcur) / 2;
        if (fcur == 0 || fabs(sbis) < delta)
            return xcur;
        if (fabs(spre) > delta && fabs(fcur) < fabs(fpre)) {
            double stry;
            if (xpre == xblk) {
                stry = -fcur * (xcur - xpre) / (fcur - fpre); /* interpolate */
            } else {
                double dpre = (fpre - fcur) / (xpre - xcur); /* extrapolate */
                double dblk = (fblk - fcur) / (xblk - xcur);
                stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre));
            }
            double lim = 3 * fabs(sbis) - delta;
            if (2 * fabs(stry) < (fabs(spre) < lim ? fabs(spre) : lim)) {
                spre = scur; /* good short step */
                scur = stry;
            } else {
                spre = sbis; /* bisect */
                scur = sbis;
            }
        } else {
            spre = sbis;
            scur = sbis;
        }
        xpre = xcur;
        fpre = fcur;
        if (fabs(scur) > delta)
            xcur += scur;
        else
            xcur += (sbis > 0 ? delta : -delta);
        fcur = f(ctx, e, xcur, x);
    }
    return xcur;
}

/* handle_events for one trajectory (traj, a row of ev) and the step [t_old,
 * t_new]: locate the active events, keep those up to the first terminal
 * one in time order, record them (time and state on the interpolant, x
 * the scratch for a state).  1 with the terminal zero in *tend, else 0. */
static inline int ode_events_handle(const ode_prob_t *p, ode_event_fn f, void *ctx, const int *active, double t_old,
                                    double t_new, int64_t traj, ode_evout_t *ev, double *x, double *tend)
{
    const hpc_ode_event *evs = (const hpc_ode_event *)p->events;
    const int D = p->dim, M = p->max_events;
    double root[HPC_ODE_MAX_EVENTS];
    int idx[HPC_ODE_MAX_EVENTS], n = 0, terminal = 0, stop = 0;
    for (int e = 0; e < p->nev; e++)
        if (active[e]) {
            root[n] = ode_brentq(f, ctx, e, t_old, t_new, x);
            idx[n++] = e;
            terminal |= evs[e].terminal;
        }
    if (terminal) {
        /* np.argsort(roots) (stable for equal roots: ties keep event order) */
        for (int a = 1; a < n; a++)
            for (int b = a; b > 0 && root[b] < root[b - 1]; b--) {
                double tr = root[b];
                int ti = idx[b];
                root[b] = root[b - 1];
                idx[b] = idx[b - 1];
                root[b - 1] = tr;
                idx[b - 1] = ti;
            }
        int k = 0;
        while (!evs[idx[k]].terminal)
            k++;
        n = k + 1;
        stop = 1;
        *tend = root[k];
    }
    for (int a = 0; a < n; a++) {
        int e = idx[a];
        int32_t c = ev->count[traj * p->nev + e]++;
        if (c >= M)
            continue;
        int64_t slot = (traj * p->nev + e) * M + c;
        ev->t[slot] = root[a];
        f(ctx, e, root[a], x);
        for (int i = 0; i < D; i++)
            ev->y[slot * D + i] = x[i];
    }
    return stop;
}

#endif
