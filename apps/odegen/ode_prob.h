/* ode_prob.h - the problem description shared by the engines (CPU lanes,
 * the GPU kernel, the implicit methods) and the front end.  Plain C, also
 * valid CUDA C++; no system header under NVRTC.
 *
 * The explicit engine works on ODE_LANES trajectories at once ("lanes"),
 * stored structure-of-arrays: component i of lane l lives at a[i*st + l].
 * On the CPU ODE_LANES is 8 and st == 8, so loops over lanes vectorise
 * (and component i of the 8 lanes is one hpc_real of the system's
 * right-hand side); the CUDA kernel uses one lane per thread and st = the
 * number of threads, so the same accesses coalesce.
 */
#ifndef ODE_PROB_H
#define ODE_PROB_H

#if defined(__CUDACC_RTC__)
typedef long long int64_t;
typedef int int32_t;
typedef signed char int8_t;
typedef unsigned long long uint64_t;
#else
#include <stdint.h>
#endif

/* Indices into the [dim][st] arrays: 64-bit.  On the GPU st is the thread
 * count (up to 65,536), so the scratch's blocks * dim * st elements pass
 * 2^31 above dim ~ 1,700 (tests/odegen_layout checks this on the CPU). */
typedef int64_t ode_ix_t;

/* The methods (--method).  The explicit ones run in the lane engine
 * (erk.h), step for step as scipy's; the implicit ones through SUNDIALS
 * (implicit.c). */
enum {
    ODE_RK45 = 0,  /* Dormand-Prince 5(4), scipy's RK45 (the default) */
    ODE_RK23 = 1,  /* Bogacki-Shampine 3(2), scipy's RK23 */
    ODE_DOP853 = 2,/* Dormand-Prince 8(5,3), scipy's DOP853 */
    ODE_NEXPLICIT = 3,
    ODE_BDF = 3,   /* CVODE's variable-order BDF (1-5), Newton, dense LU */
    ODE_ESDIRK = 4,/* ARKODE's ESDIRK 4(3), 6 stages, L-stable, Newton, dense LU */
    ODE_NMETHODS = 5
};

/* Per-trajectory status codes, as stored in /stats/status (int8). */
enum {
    ODE_EVENT = 1,          /* a terminal event ended it (scipy's status 1) */
    ODE_OK = 0,             /* reached t1 */
    ODE_STEP_UNDERFLOW = -1,/* step size fell below 10 ulp(t) (scipy: "Required
                               step size is less than spacing between numbers");
                               for the implicit methods: the solver gave up (error
                               test or Newton failed repeatedly at the smallest step) */
    ODE_NONFINITE = -2,     /* state or derivative became Inf/NaN */
    ODE_MAX_STEPS = -3,     /* --max-steps step attempts used up before t1 */
    ODE_MISSING = -127,     /* fill value of a joined file: the shard that holds the
                               row is absent (read without its shard files) */
    ODE_NOT_RUN = -128      /* fill value: chunk not computed yet (only in .partial) */
};

typedef struct {
    int dim;                   /* D */
    int method;                /* ODE_RK45, ... */
    const void *user;          /* the system's parameters (its hpc_ode_params) */
    double t0, t1;             /* t1 > t0 */
    const double *tgrid;       /* output times, nt of them, ascending, in [t0, t1] */
    int nt;
    double rtol, atol;
    double max_step;           /* INFINITY = none */
    double first_step;         /* 0 = scipy's select_initial_step */
    int64_t max_steps;         /* step attempts per trajectory, 0 = unlimited */
    /* events (CPU): the system's hpc_ode_event table, how many, and how
     * many occurrences of each are kept per trajectory */
    const void *events;
    int nev;
    int max_events;
    void (*poll)(void);        /* called now and then by the CPU engine (MPI progress), or NULL */
} ode_prob_t;

/* Per-trajectory counters, as in scipy: nsteps = accepted steps, nfev =
 * right-hand side evaluations, nrejected = rejected step attempts. */
typedef struct {
    int32_t nsteps, nfev, nrejected;
    int8_t status;
} ode_stat_t;

/* Where the events of a batch go: for trajectory k of the batch and event
 * e, count[k nev + e] occurrences (all of them, also those beyond
 * max_events), the first max_events of them at t[(k nev + e) max_events +
 * m] and their states at y[((k nev + e) max_events + m) dim + i].  The
 * caller fills count with 0, t and y with NaN. */
typedef struct {
    int32_t *count;
    double *t, *y;
} ode_evout_t;

#endif /* ODE_PROB_H */
