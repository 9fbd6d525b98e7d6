/* ode_prob.h - the problem description shared by the CPU solver, the CUDA
 * kernel and the front end.  Plain C, also valid CUDA C++.
 *
 * The solver works on ODE_LANES trajectories at once ("lanes"), stored
 * structure-of-arrays: component i of lane l lives at a[i*ODE_ST + l].
 * On the CPU ODE_LANES is a compile-time constant and ODE_ST == ODE_LANES,
 * so loops over lanes vectorise; the CUDA kernel uses one lane per thread
 * and ODE_ST = the number of threads, so the same accesses coalesce.
 */
#ifndef ODE_PROB_H
#define ODE_PROB_H

#include <stdint.h>

#define ODE_MAXPAR 4

/* Indices into the [dim][st] arrays: 64-bit.  On the GPU st is the thread
 * count (up to 65,536), so the scratch's 18 * dim * st elements pass 2^31
 * above dim ~ 1,800 (tests/odegen_layout checks this on the CPU). */
typedef int64_t ode_ix_t;

/* The systems, as an X-macro list: X(ENUM, name).  Adding a system is one
 * line here, one rhs_NAME() in ode_rhs.h and one entry in systems.c. */
#define ODE_SYSTEM_LIST(X) \
    X(DECAY_SIN, decay_sin)   \
    X(LORENZ, lorenz)         \
    X(VANDERPOL, vanderpol)   \
    X(LOTKA_VOLTERRA, lotka_volterra) \
    X(KURAMOTO, kuramoto)

enum {
#define ODE_X_ENUM(E, n) ODE_SYS_##E,
    ODE_SYSTEM_LIST(ODE_X_ENUM)
#undef ODE_X_ENUM
    ODE_NSYS
};

/* Per-trajectory status codes, as stored in /stats/status (int8). */
enum {
    ODE_OK = 0,             /* reached t1 */
    ODE_STEP_UNDERFLOW = -1,/* step size fell below 10 ulp(t) (scipy: "Required
                               step size is less than spacing between numbers") */
    ODE_NONFINITE = -2,     /* state or derivative became Inf/NaN */
    ODE_MAX_STEPS = -3,     /* --max-steps step attempts used up before t1 */
    ODE_MISSING = -127,     /* fill value of a joined file: the shard that holds the
                               row is absent (read without its shard files) */
    ODE_NOT_RUN = -128      /* fill value: chunk not computed yet (only in .partial) */
};

typedef struct {
    int sys;                   /* ODE_SYS_* */
    int dim;                   /* D */
    double par[ODE_MAXPAR];    /* system parameters, in the registry's order */
    const double *vec;         /* per-run vector parameter (kuramoto: omega[D]) or NULL */
    double t0, t1;             /* t1 > t0 */
    const double *tgrid;       /* output times, nt of them, tgrid[0]=t0, tgrid[nt-1]=t1 */
    int nt;
    double rtol, atol;
    double max_step;           /* INFINITY = none */
    double first_step;         /* 0 = scipy's select_initial_step */
    int64_t max_steps;         /* step attempts per trajectory, 0 = unlimited */
} ode_prob_t;

/* Per-trajectory counters, as in scipy: nsteps = accepted steps, nfev =
 * right-hand side evaluations, nrejected = rejected step attempts. */
typedef struct {
    int32_t nsteps, nfev, nrejected;
    int8_t status;
} ode_stat_t;

#endif /* ODE_PROB_H */
