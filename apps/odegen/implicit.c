/* implicit.c - the implicit methods for stiff systems, one trajectory at
 * a time on the CPU: SUNDIALS CVODE's variable-order BDF (orders 1-5,
 * Newton iteration, dense LU; --method BDF) and ARKODE's ARKStep with an
 * ESDIRK table, an implicit Runge-Kutta method (--method ESDIRK).
 *
 * Why CVODE and not a BDF of our own: it is the reference implementation
 * of the method scipy's BDF follows (variable order, quasi-constant step
 * size, NDF/BDF formulas), maintained for decades, and Debian packages it;
 * the issue asks for a library where one does this well.  Its steps are
 * not scipy's (another error estimate and step-size heuristics), so the
 * values agree with scipy's BDF and Radau within the tolerances, not to
 * the bit (tests/odegen_stiff.sh).
 *
 * How it is driven, as solve_ivp drives its solvers: CVODE takes one step
 * at a time (CV_ONE_STEP, never past t1: the stop time), the output times
 * inside the step are read from its interpolating polynomial
 * (CVodeGetDky), and events are found and located on that polynomial by
 * ode_events.h (scipy's find_active_events and brentq), so a terminal
 * event ends the trajectory at its zero and the output times after it are
 * NaN, as with the explicit methods.  One CVODE instance serves the whole
 * batch (CVodeReInit per trajectory, which forgets everything: the first
 * step of each trajectory sets up its own Jacobian), so a trajectory's
 * result does not depend on which trajectories ran before it on the rank.
 *
 * The Jacobian is the system's .jac where its file has one, else CVODE's
 * difference quotients.  Counts: nsteps = CVODE's steps, nfev = its
 * right-hand side evaluations including those of the difference
 * quotients (scipy counts them too), nrejected = error test and Newton
 * convergence failures; --max-steps limits the attempts (steps and
 * rejections), checked between steps: the solvers' own limit
 * (CVodeSetMaxNumSteps) counts the steps of one call, which is one step
 * here, so it never fired.
 *
 * ESDIRK: the issue asks for an implicit Runge-Kutta method (Radau IIA or
 * a Rosenbrock method) besides BDF, from a library where one does it
 * well.  SUNDIALS has no Radau IIA (a fully implicit method: one linear
 * system of 3 dim unknowns per Newton iteration); its implicit
 * Runge-Kutta methods are diagonally implicit (ARKODE), each stage a
 * system of dim unknowns with the same matrix I - h a_ii J, which the
 * dense LU of BDF serves as it is.  The table is Kennedy and Carpenter's
 * ESDIRK4(3)6L[2]SA (ARKODE_ESDIRK436L2SA_6_3_4, 2019): order 4 with an
 * embedded order 3 for the error estimate; L-stable and stiffly accurate
 * like Radau IIA (the last stage is the step's result, so very stiff
 * components are damped, not carried); 6 stages, the first explicit.
 * Measured on tests/odegen_stiff.sh's three problems at their tolerances
 * (right-hand side evaluations for Robertson, van der Pol, Brusselator;
 * worst error in tolerances), against ARKODE's other L-stable tables with
 * the same settings: ESDIRK436L2SA 1982, 7455, 2301 (1.1, 7.1, 8.5);
 * ESDIRK547L2SA (order 5) 3802, 8518, 2223 (0.09, 1.9, 14.6);
 * ARK548L2SA's DIRK (order 5) 2841, 6499, 3122 (0.3, 3.9, 309);
 * SDIRK_5_3_4 (Hairer and Wanner's, ARKODE's default of order 4) 13061,
 * 27592, 3144 (0.03, 0.12, 1.8): the first is the cheapest in all and
 * within the test's bounds everywhere (ARK548's fails the Brusselator).
 * It is driven exactly as CVODE is (one step at a time, the stop time t1,
 * ARKODE's interpolant for the output times and the events, one instance
 * re-initialised per trajectory); nfev = ARKODE's implicit right-hand
 * side evaluations including the difference quotients.
 */
#include "config.h"
#include "hpc_app.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "odegen.h"

#ifdef HAVE_SUNDIALS
#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#ifdef HAVE_ARKODE
#include <arkode/arkode_arkstep.h>
#endif
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include "hpc_ode.h"
#include "ode_events.h"

int ode_implicit_available(int method)
{
#ifdef HAVE_ARKODE
    return method == ODE_BDF || method == ODE_ESDIRK;
#else
    return method == ODE_BDF;
#endif
}

/* what CVODE's callbacks see */
typedef struct {
    const ode_sys_t *sys;
    const ode_prob_t *p;
    int ark;       /* ARKODE's ARKStep (ESDIRK), else CVODE (BDF) */
    void *mem;     /* the CVODE or ARKStep instance */
    N_Vector dky;  /* the interpolant's value */
    double *jrow;  /* the file's row-major Jacobian, dim x dim (set up once) */
    int nonfinite; /* the right-hand side gave Inf or NaN */
} imp_t;

static int imp_rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *data)
{
    imp_t *c = (imp_t *)data;
    const double *x = N_VGetArrayPointer(y);
    double *f = N_VGetArrayPointer(ydot);
    c->sys->rhs(c->p->user, t, x, f);
    for (int i = 0; i < c->p->dim; i++)
        if (!isfinite(f[i])) {
            c->nonfinite = 1;
            return 1; /* recoverable: CVODE tries a smaller step, as scipy's would not */
        }
    return 0;
}

static int imp_jac(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *data, N_Vector t1, N_Vector t2,
                   N_Vector t3)
{
    (void)fy, (void)t1, (void)t2, (void)t3;
    imp_t *c = (imp_t *)data;
    const int D = c->p->dim;
    double *Jr = c->jrow;
    c->sys->jac(c->p->user, t, N_VGetArrayPointer(y), Jr);
    /* the file's J is row-major (J[i * dim + j] = d f_i / d x_j);
     * SUNDIALS' dense matrix is column-major */
    for (int j = 0; j < D; j++) {
        double *col = SUNDenseMatrix_Column(J, j);
        for (int i = 0; i < D; i++) col[i] = Jr[(size_t)i * D + j];
    }
    return 0;
}

/* CVODE reports failures by its return codes, which become statuses;
 * its own messages to stderr would be one per trajectory and rank */
static void imp_quiet(int code, const char *module, const char *fn, char *msg, void *data)
{
    (void)code, (void)module, (void)fn, (void)msg, (void)data;
}

/* the last step's interpolant at t into c->dky */
static void imp_dky(imp_t *c, double t)
{
#ifdef HAVE_ARKODE
    if (c->ark) {
        ARKStepGetDky(c->mem, t, 0, c->dky);
        return;
    }
#endif
    CVodeGetDky(c->mem, t, 0, c->dky);
}

/* the interpolant at t into x (ode_events.h's view of the step) */
static double imp_event_at(void *ctx, int e, double t, double *x)
{
    imp_t *c = (imp_t *)ctx;
    imp_dky(c, t);
    memcpy(x, N_VGetArrayPointer(c->dky), (size_t)c->p->dim * sizeof *x);
    return ((const hpc_ode_event *)c->p->events)[e].g(t, x, (const hpc_ode_params *)c->p->user);
}

static void imp_events_at(const imp_t *c, double t, const double *x, double *g)
{
    const hpc_ode_event *ev = (const hpc_ode_event *)c->p->events;
    for (int e = 0; e < c->p->nev; e++) g[e] = ev[e].g(t, x, (const hpc_ode_params *)c->p->user);
}

static int8_t imp_status(int flag, const imp_t *c)
{
#ifdef HAVE_ARKODE
    if (c->ark) {
        if (c->nonfinite || flag == ARK_RHSFUNC_FAIL || flag == ARK_FIRST_RHSFUNC_ERR ||
            flag == ARK_REPTD_RHSFUNC_ERR || flag == ARK_UNREC_RHSFUNC_ERR)
            return ODE_NONFINITE;
        return flag == ARK_TOO_MUCH_WORK ? ODE_MAX_STEPS : ODE_STEP_UNDERFLOW;
    }
#endif
    if (c->nonfinite || flag == CV_RHSFUNC_FAIL || flag == CV_FIRST_RHSFUNC_ERR || flag == CV_REPTD_RHSFUNC_ERR ||
        flag == CV_UNREC_RHSFUNC_ERR)
        return ODE_NONFINITE;
    if (flag == CV_TOO_MUCH_WORK) return ODE_MAX_STEPS;
    return ODE_STEP_UNDERFLOW; /* the error test or Newton failed at the smallest step */
}

/* a fresh start from v at t0: nothing of the trajectory before is kept */
static void imp_start(imp_t *c, N_Vector v)
{
    const ode_prob_t *p = c->p;
#ifdef HAVE_ARKODE
    if (c->ark) {
        ARKStepReInit(c->mem, NULL, imp_rhs, p->t0, v);
        ARKStepSetStopTime(c->mem, p->t1);
        ARKStepSetInitStep(c->mem, p->first_step);
        ARKStepSetMaxNumSteps(c->mem, -1); /* as CVODE's below */
        return;
    }
#endif
    CVodeReInit(c->mem, p->t0, v);
    CVodeSetStopTime(c->mem, p->t1);
    CVodeSetInitStep(c->mem, p->first_step);
    CVodeSetMaxNumSteps(c->mem, -1); /* its limit is per call, one step here: imp_one counts */
}

/* one step towards t1 (never past it); the solver's flag */
static int imp_step(imp_t *c, N_Vector v, double *t)
{
#ifdef HAVE_ARKODE
    if (c->ark) return ARKStepEvolve(c->mem, c->p->t1, v, t, ARK_ONE_STEP);
#endif
    return CVode(c->mem, c->p->t1, v, t, CV_ONE_STEP);
}

/* the trajectory's steps, evaluations (with the difference quotients')
 * and rejected attempts (error test and Newton failures) */
static void imp_counts(imp_t *c, ode_stat_t *st)
{
    long nst = 0, nfe = 0, nfels = 0, netf = 0, ncfn = 0;
#ifdef HAVE_ARKODE
    if (c->ark) {
        long nfex = 0;
        ARKStepGetNumSteps(c->mem, &nst);
        ARKStepGetNumRhsEvals(c->mem, &nfex, &nfe);
        ARKStepGetNumLinRhsEvals(c->mem, &nfels);
        ARKStepGetNumErrTestFails(c->mem, &netf);
        ARKStepGetNumNonlinSolvConvFails(c->mem, &ncfn);
    } else
#endif
    {
        CVodeGetNumSteps(c->mem, &nst);
        CVodeGetNumRhsEvals(c->mem, &nfe);
        CVodeGetNumLinRhsEvals(c->mem, &nfels);
        CVodeGetNumErrTestFails(c->mem, &netf);
        CVodeGetNumNonlinSolvConvFails(c->mem, &ncfn);
    }
    st->nsteps = (int32_t)nst;
    st->nfev = (int32_t)(nfe + nfels);
    st->nrejected = (int32_t)(netf + ncfn);
}

/* one trajectory: x0[dim] -> y[nt][dim], its counts and events (row k) */
static void imp_one(imp_t *c, N_Vector v, const double *x0, double *y, ode_stat_t *st, ode_evout_t *ev, int64_t k,
                    double *scratch)
{
    const ode_prob_t *p = c->p;
    const int D = p->dim, nev = ev ? p->nev : 0;
    double *g = scratch, *gnew = g + HPC_ODE_MAX_EVENTS, *x = gnew + HPC_ODE_MAX_EVENTS;
    int active[HPC_ODE_MAX_EVENTS];
    double *s = N_VGetArrayPointer(v);
    memcpy(s, x0, (size_t)D * sizeof *s);
    c->nonfinite = 0;
    imp_start(c, v);
    int j = 0;
    while (j < p->nt && p->tgrid[j] <= p->t0) memcpy(y + (size_t)j++ * D, x0, (size_t)D * sizeof *y);
    if (nev) imp_events_at(c, p->t0, x0, g);
    double t = p->t0, tend = p->t1;
    int8_t status = ODE_OK;
    while (j < p->nt) {
        if (p->max_steps > 0) { /* attempts so far, as the explicit engine counts them */
            imp_counts(c, st);
            if ((int64_t)st->nsteps + st->nrejected >= p->max_steps) {
                status = ODE_MAX_STEPS;
                break;
            }
        }
        double told = t;
        int flag = imp_step(c, v, &t);
        if (flag < 0) {
            status = imp_status(flag, c);
            break;
        }
        int stop = 0;
        if (nev) {
            imp_events_at(c, t, s, gnew);
            if (ode_events_active(p, g, gnew, active))
                stop = ode_events_handle(p, imp_event_at, c, active, told, t, k, ev, x, &tend);
            memcpy(g, gnew, (size_t)nev * sizeof *g);
        }
        double upto = stop ? tend : t;
        for (; j < p->nt && p->tgrid[j] <= upto; j++) {
            imp_dky(c, p->tgrid[j]);
            memcpy(y + (size_t)j * D, N_VGetArrayPointer(c->dky), (size_t)D * sizeof *y);
        }
        if (stop) {
            status = ODE_EVENT;
            break;
        }
        if (t >= p->t1) break;
    }
    for (; j < p->nt; j++)
        for (int i = 0; i < D; i++) y[(size_t)j * D + i] = NAN;
    imp_counts(c, st);
    st->status = status;
}

#ifdef HAVE_ARKODE
/* the ARKStep instance for a batch: fully implicit (no explicit part),
 * the ESDIRK table, the tolerances, the dense solver */
static int imp_setup_ark(imp_t *c, SUNContext ctx, N_Vector v, SUNMatrix A, SUNLinearSolver LS)
{
    const ode_prob_t *p = c->p;
    c->mem = ARKStepCreate(NULL, imp_rhs, p->t0, v, ctx);
    if (!c->mem) return HPC_ERR(HPC_ERR_NOMEM, "ARKStepCreate");
    ARKStepSetErrHandlerFn(c->mem, imp_quiet, NULL);
    int f = ARKStepSetTableNum(c->mem, ARKODE_ESDIRK436L2SA_6_3_4, ARKODE_ERK_NONE);
    /* Newton to 1e-4 of the error test (ARKODE's default 0.1 let its
     * error into the embedded estimate: 20x the steps on Robertson), up
     * to 6 iterations per stage */
    if (!f) f = ARKStepSetNonlinConvCoef(c->mem, 1e-4);
    if (!f) f = ARKStepSetMaxNonlinIters(c->mem, 6);
    /* the output times and events on the cubic Hermite interpolant
     * (y and f at both ends of the step): the default degree 5 adds
     * stages inside the step, and is 1e4 tolerances off on Robertson */
    if (!f) f = ARKStepSetInterpolantDegree(c->mem, 3);
    /* each stage's f from its Newton solution, not one more evaluation
     * (exact for the converged stage; 15% fewer evaluations, no larger
     * error on the test problems), and Newton started from the last
     * step's interpolant (ARKODE's maximum-order predictor: 25% fewer) */
    if (!f) f = ARKStepSetDeduceImplicitRhs(c->mem, SUNTRUE);
    if (!f) f = ARKStepSetPredictorMethod(c->mem, 1);
    if (!f) f = ARKStepSetUserData(c->mem, c);
    if (!f) f = ARKStepSStolerances(c->mem, p->rtol, p->atol);
    if (!f) f = ARKStepSetLinearSolver(c->mem, LS, A);
    if (!f && c->sys->jac) f = ARKStepSetJacFn(c->mem, imp_jac);
    if (!f && isfinite(p->max_step)) f = ARKStepSetMaxStep(c->mem, p->max_step);
    if (f) return HPC_ERR(HPC_ERR_UNSUPPORTED, "ARKODE set-up failed (flag %d)", f);
    return 0;
}
#endif

/* the instance for a batch: BDF or ESDIRK, the tolerances, the dense solver */
static int imp_setup(imp_t *c, SUNContext ctx, N_Vector v, SUNMatrix *A, SUNLinearSolver *LS)
{
    const ode_prob_t *p = c->p;
    *A = SUNDenseMatrix(p->dim, p->dim, ctx);
    *LS = *A ? SUNLinSol_Dense(v, *A, ctx) : NULL;
    if (!*LS) return HPC_ERR(HPC_ERR_NOMEM, "SUNDIALS dense matrix of %d x %d", p->dim, p->dim);
#ifdef HAVE_ARKODE
    if (c->ark) return imp_setup_ark(c, ctx, v, *A, *LS);
#endif
    c->mem = CVodeCreate(CV_BDF, ctx);
    if (!c->mem) return HPC_ERR(HPC_ERR_NOMEM, "CVodeCreate");
    CVodeSetErrHandlerFn(c->mem, imp_quiet, NULL);
    int f = CVodeInit(c->mem, imp_rhs, p->t0, v);
    if (!f) f = CVodeSetUserData(c->mem, c);
    if (!f) f = CVodeSStolerances(c->mem, p->rtol, p->atol);
    if (!f) f = CVodeSetLinearSolver(c->mem, *LS, *A);
    if (!f && c->sys->jac) f = CVodeSetJacFn(c->mem, imp_jac);
    if (!f && isfinite(p->max_step)) f = CVodeSetMaxStep(c->mem, p->max_step);
    if (f) return HPC_ERR(HPC_ERR_UNSUPPORTED, "CVODE set-up failed (flag %d)", f);
    return 0;
}

int ode_implicit_solve(const ode_sys_t *sys, const ode_prob_t *p, int64_t n, const double *x0, double *yout,
                       ode_stat_t *stat, ode_evout_t *ev)
{
    if (!ode_implicit_available(p->method))
        return HPC_ERR(HPC_ERR_UNSUPPORTED, "--method %s is not in this build", ode_method_name(p->method));
    SUNContext ctx = NULL;
    if (SUNContext_Create(NULL, &ctx)) return HPC_ERR(HPC_ERR_NOMEM, "SUNContext_Create");
    imp_t c = {.sys = sys, .p = p, .ark = p->method == ODE_ESDIRK};
    SUNMatrix A = NULL;
    SUNLinearSolver LS = NULL;
    N_Vector v = N_VNew_Serial(p->dim, ctx);
    c.dky = N_VNew_Serial(p->dim, ctx);
    double *scratch = malloc((2 * HPC_ODE_MAX_EVENTS + (size_t)p->dim) * sizeof *scratch);
    c.jrow = sys->jac ? malloc((size_t)p->dim * p->dim * sizeof *c.jrow) : NULL;
    int rc = v && c.dky && scratch && (c.jrow || !sys->jac) ? imp_setup(&c, ctx, v, &A, &LS)
                                                            : HPC_ERR(HPC_ERR_NOMEM, "SUNDIALS vectors of %d", p->dim);
    for (int64_t k = 0; !rc && k < n; k++) {
        imp_one(&c, v, x0 + k * p->dim, yout + k * p->nt * p->dim, stat + k, ev, k, scratch);
        if (p->poll) p->poll();
    }
    free(scratch);
    free(c.jrow);
#ifdef HAVE_ARKODE
    if (c.mem && c.ark) ARKStepFree(&c.mem);
#endif
    if (c.mem) CVodeFree(&c.mem);
    if (LS) SUNLinSolFree(LS);
    if (A) SUNMatDestroy(A);
    if (c.dky) N_VDestroy(c.dky);
    if (v) N_VDestroy(v);
    SUNContext_Free(&ctx);
    return rc;
}

#else /* no SUNDIALS */

int ode_implicit_available(int method)
{
    (void)method;
    return 0;
}

int ode_implicit_solve(const ode_sys_t *sys, const ode_prob_t *p, int64_t n, const double *x0, double *yout,
                       ode_stat_t *stat, ode_evout_t *ev)
{
    (void)sys, (void)p, (void)n, (void)x0, (void)yout, (void)stat, (void)ev;
    return HPC_ERR(HPC_ERR_UNSUPPORTED, "no implicit methods in this build");
}
#endif
