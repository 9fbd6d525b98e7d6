/* sys_lanes.h - a system's explicit engines: the system file with 8
 * lanes (its right-hand side on hpc_real, 8 trajectories at once) and
 * erk.h's methods around it.  One of the two translation units of a
 * compiled system (sys_host.h is the other); the includer defines
 * ODE_SYS (the system's symbol stem: ode_sys_<ODE_SYS>_...) and
 * ODE_SYS_FILE (the file, as a string).
 *
 * Why -O3 here: the engine needs the loop vectoriser; the build's CFLAGS
 * (-O2 by default) come after per-program flags and would override them,
 * so the level is set for this translation unit only.  Every lane
 * operation is a plain IEEE operation without contraction (the build and
 * the run-time compile pass -ffp-contract=off; NVRTC gets --fmad=false),
 * so the 8 lanes, the instruction-set clones and the GPU give the same
 * bits.  target_clones: the code stays portable (x86-64 baseline) and runs
 * AVX2 where the CPU has it, picked once at load.
 */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__OPTIMIZE_SIZE__)
#pragma GCC optimize("O3")
#endif
#define HPC_ODE_LANES 8
#define HPC_ODE_RHS_ONLY 1
#if defined(__GNUC__)
/* the hooks are sys_host.h's business: here they are not called */
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#include ODE_SYS_FILE

#include <string.h>
#include "ode_sys.h"

#define ODE_SYS_CAT2(a, b, c) a##b##c
#define ODE_SYS_CAT(a, b, c) ODE_SYS_CAT2(a, b, c)
#define ODE_SYS_SYM(x) ODE_SYS_CAT(ode_sys_, ODE_SYS, _##x)

/* the system's right-hand side on the lanes, a group of HPC_ODE_LANES
 * at a time: the group's [dim][HPC_ODE_LANES] block, component i one
 * hpc_real */
#define ODE_LANES 8
#define ODE_GROUP HPC_ODE_LANES
HPC_ODE_FN void ode_rhs_lanes(const ode_prob_t *p, const double *t, const double *y, double *f)
{
    for (int g = 0; g < ODE_LANES / ODE_GROUP; g++) {
        hpc_real tv;
        memcpy(&tv, t + g * ODE_GROUP, sizeof tv);
        hpc_ode_user_rhs(tv, (hpc_ode_in)(y + g * ODE_GROUP * p->dim), (hpc_ode_out)(f + g * ODE_GROUP * p->dim),
                         (const hpc_ode_params *)p->user);
    }
}
#define ODE_RHS(p, t, y, f, st) ode_rhs_lanes(p, t, y, f)
#define ODE_EVENT_G(p, e, t, x) \
    (((const hpc_ode_event *)(p)->events)[e].g((t), (x), (const hpc_ode_params *)(p)->user))
#include "erk.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
#define ODE_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define ODE_CLONES
#endif

/* one entry per method, each the whole engine inlined with the method a
 * constant */
#define ODE_SYS_METHOD(NAME, M)                                                                       \
    ODE_CLONES static void ODE_SYS_CAT(ode_solve_, NAME, )(const ode_prob_t *p, int64_t n,              \
                                                          const double *x0, double *yout,             \
                                                          ode_stat_t *stat, ode_evout_t *ev, double *w) \
    {                                                                                                 \
        erk_solve(M, p, n, x0, yout, stat, ev, w, ODE_GROUP);                                         \
    }
/* ODE_SYS_ONLY: one method (0 RK45, 1 RK23, 2 DOP853) or none (-1): what
 * a --system-file run needs, a third of the compile (or nothing of it, for
 * the implicit methods); without it, all three (built-ins, --compile-to) */
#if !defined(ODE_SYS_ONLY) || ODE_SYS_ONLY == 0
ODE_SYS_METHOD(rk45, ODE_RK45)
#define ODE_SYS_HAS_RK45 1
#else
#define ODE_SYS_HAS_RK45 0
#endif
#if !defined(ODE_SYS_ONLY) || ODE_SYS_ONLY == 1
ODE_SYS_METHOD(rk23, ODE_RK23)
#define ODE_SYS_HAS_RK23 1
#else
#define ODE_SYS_HAS_RK23 0
#endif
#if !defined(ODE_SYS_ONLY) || ODE_SYS_ONLY == 2
ODE_SYS_METHOD(dop853, ODE_DOP853)
#define ODE_SYS_HAS_DOP853 1
#else
#define ODE_SYS_HAS_DOP853 0
#endif

/* the explicit methods compiled: bit m for method m */
unsigned ODE_SYS_SYM(methods)(void);
unsigned ODE_SYS_SYM(methods)(void)
{
    return ODE_SYS_HAS_RK45 << ODE_RK45 | ODE_SYS_HAS_RK23 << ODE_RK23 | ODE_SYS_HAS_DOP853 << ODE_DOP853;
}

size_t ODE_SYS_SYM(scratch)(int method, int dim);
size_t ODE_SYS_SYM(scratch)(int method, int dim)
{
    return (size_t)erk_blocks(method) * (size_t)dim * ODE_LANES;
}

void ODE_SYS_SYM(solve)(const ode_prob_t *p, int64_t n, const double *x0, double *yout, ode_stat_t *stat,
                        ode_evout_t *ev, double *w);
void ODE_SYS_SYM(solve)(const ode_prob_t *p, int64_t n, const double *x0, double *yout, ode_stat_t *stat,
                        ode_evout_t *ev, double *w)
{
    /* the caller checked the method is among methods() */
#if ODE_SYS_HAS_RK23
    if (p->method == ODE_RK23)
        ode_solve_rk23(p, n, x0, yout, stat, ev, w);
#endif
#if ODE_SYS_HAS_DOP853
    if (p->method == ODE_DOP853)
        ode_solve_dop853(p, n, x0, yout, stat, ev, w);
#endif
#if ODE_SYS_HAS_RK45
    if (p->method == ODE_RK45)
        ode_solve_rk45(p, n, x0, yout, stat, ev, w);
#endif
    (void)p, (void)n, (void)x0, (void)yout, (void)stat, (void)ev, (void)w;
}
