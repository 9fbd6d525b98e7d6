/* ode_rhs.h - right-hand sides f(t, y) of the registered systems.
 *
 * Each rhs_NAME computes all ODE_LANES lanes: y and f are [dim][st]
 * (component i of lane l at i*st + l), t is [ODE_LANES].  The includer
 * defines ODE_LANES.  Plain C and CUDA C++.
 *
 * The expressions are written in the same operation order as the Python
 * reference (tests/odegen_ref.py), so that results agree with scipy to
 * rounding of the sine only.
 */
#ifndef ODE_RHS_H
#define ODE_RHS_H

#include "ode_prob.h"
#include "ode_sin.h"

#ifndef ODE_LANES
#error "define ODE_LANES before including ode_rhs.h"
#endif

/* dx_i/dt = -x_i t - x_i^2 + sin(x_i), any dim (the classic example). */
ODE_FN void rhs_decay_sin(const ode_prob_t *p, const double *ODE_RESTRICT t,
                          const double *ODE_RESTRICT y, double *ODE_RESTRICT f, ode_ix_t st)
{
    int bad = 0;
    for (int i = 0; i < p->dim; i++)
        for (int l = 0; l < ODE_LANES; l++) {
            double x = y[i * st + l];
            bad |= !ode_sin_fast_ok(x);
            f[i * st + l] = (-x * t[l] - x * x) + ode_sin(x);
        }
    if (bad)   /* rare: huge or non-finite states; redo those with libm */
        for (int i = 0; i < p->dim; i++)
            for (int l = 0; l < ODE_LANES; l++) {
                double x = y[i * st + l];
                if (!ode_sin_fast_ok(x))
                    f[i * st + l] = (-x * t[l] - x * x) + sin(x);
            }
}

/* Lorenz 1963: sigma, rho, beta. */
ODE_FN void rhs_lorenz(const ode_prob_t *p, const double *ODE_RESTRICT t,
                       const double *ODE_RESTRICT y, double *ODE_RESTRICT f, ode_ix_t st)
{
    const double sigma = p->par[0], rho = p->par[1], beta = p->par[2];
    (void)t;
    for (int l = 0; l < ODE_LANES; l++) {
        double a = y[l], b = y[st + l], c = y[2 * st + l];
        f[l] = sigma * (b - a);
        f[st + l] = a * (rho - c) - b;
        f[2 * st + l] = a * b - beta * c;
    }
}

/* Van der Pol oscillator: x'' = mu (1 - x^2) x' - x as a first-order system. */
ODE_FN void rhs_vanderpol(const ode_prob_t *p, const double *ODE_RESTRICT t,
                          const double *ODE_RESTRICT y, double *ODE_RESTRICT f, ode_ix_t st)
{
    const double mu = p->par[0];
    (void)t;
    for (int l = 0; l < ODE_LANES; l++) {
        double a = y[l], b = y[st + l];
        f[l] = b;
        f[st + l] = mu * (1.0 - a * a) * b - a;
    }
}

/* Lotka-Volterra predator-prey: x' = alpha x - beta x y, y' = -gamma y + delta x y. */
ODE_FN void rhs_lotka_volterra(const ode_prob_t *p, const double *ODE_RESTRICT t,
                               const double *ODE_RESTRICT y, double *ODE_RESTRICT f, ode_ix_t st)
{
    const double al = p->par[0], be = p->par[1], ga = p->par[2], de = p->par[3];
    (void)t;
    for (int l = 0; l < ODE_LANES; l++) {
        double a = y[l], b = y[st + l];
        f[l] = al * a - be * a * b;
        f[st + l] = -ga * b + de * a * b;
    }
}

/* Kuramoto oscillators: theta_i' = omega_i + (K/N) sum_j sin(theta_j - theta_i),
 * omega = p->vec (drawn from the seed by the front end). */
ODE_FN void rhs_kuramoto(const ode_prob_t *p, const double *ODE_RESTRICT t,
                         const double *ODE_RESTRICT y, double *ODE_RESTRICT f, ode_ix_t st)
{
    const int n = p->dim;
    const double kn = p->par[0] / n;
    (void)t;
    for (int i = 0; i < n; i++) {
        double acc[ODE_LANES];
        int bad[ODE_LANES];
        for (int l = 0; l < ODE_LANES; l++) {
            acc[l] = 0.0;
            bad[l] = 0;
        }
        for (int j = 0; j < n; j++)
            for (int l = 0; l < ODE_LANES; l++) {
                double d = y[j * st + l] - y[i * st + l];
                bad[l] |= !ode_sin_fast_ok(d);
                acc[l] += ode_sin(d);
            }
        for (int l = 0; l < ODE_LANES; l++) {
            if (bad[l]) {   /* rare: redo this lane with libm's sin */
                acc[l] = 0.0;
                for (int j = 0; j < n; j++)
                    acc[l] += sin(y[j * st + l] - y[i * st + l]);
            }
            f[i * st + l] = p->vec[i] + kn * acc[l];
        }
    }
}

/* Dispatch by system id (a switch, not a function pointer, so that the
 * same code runs in a CUDA kernel). */
ODE_FN void ode_rhs(const ode_prob_t *p, const double *ODE_RESTRICT t,
                    const double *ODE_RESTRICT y, double *ODE_RESTRICT f, ode_ix_t st)
{
    switch (p->sys) {
#define ODE_X_CASE(E, n) case ODE_SYS_##E: rhs_##n(p, t, y, f, st); break;
        ODE_SYSTEM_LIST(ODE_X_CASE)
#undef ODE_X_CASE
    default: break;
    }
}

#endif /* ODE_RHS_H */
