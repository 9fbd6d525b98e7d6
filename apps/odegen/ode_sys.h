/* ode_sys.h - a compiled system, as hpc-odegen sees it: what a system
 * file (hpc_ode.h) becomes once sys_host.h and sys_lanes.h have compiled
 * it, into hpc-odegen itself (the built-ins) or into a shared object of
 * its own (--system-file, --system-lib).  The shared object exports one
 * symbol, ode_sys_user_get, a function that returns it; ODE_SYS_ABI changes whenever
 * this struct, ode_prob_t or the meaning of a field does, and a shared
 * object of another ABI is refused.  Plain C.
 */
#ifndef ODE_SYS_H
#define ODE_SYS_H

#include <stddef.h>
#include "ode_prob.h"

#define ODE_SYS_ABI 1
/* the symbol a shared object exports */
#define ODE_SYS_EXPORT "ode_sys_user_get"
typedef const struct ode_sys *(*ode_sys_get_fn)(void);

struct hpc_ode_rng;

typedef struct ode_sys {
    int abi;                        /* ODE_SYS_ABI */
    const char *name, *about;       /* about may be "" */
    int dim, dim_min, dim_max;      /* dim_max 0: no bound */
    int npar;                       /* scalar parameters, in the file's order */
    const char *const *par_name;
    const double *par_default;
    int nvec;                       /* vector parameters */
    const char *const *vec_name;
    int64_t (*vec_len)(int k, int dim);
    int nev;                        /* events: hpc_ode_event[nev] (hpc_ode.h) */
    const void *events;
    /* the parameters as the system's own functions take them: a block of
     * params_size bytes, filled from the values in the file's order */
    size_t params_size;
    void (*params_fill)(void *user, int dim, const double *par, double *const *vec);
    /* hooks, NULL where the file has none; one trajectory, plain doubles */
    void (*setup)(void *user, struct hpc_ode_rng *rng);
    void (*x0)(const void *user, double *x, struct hpc_ode_rng *rng);
    void (*jac)(const void *user, double t, const double *x, double *J);
    /* f(t, x) of one trajectory (implicit methods) */
    void (*rhs)(const void *user, double t, const double *x, double *f);
    /* the explicit methods in 8 SIMD lanes (erk.h): which were compiled
     * (bit m: method m), doubles of scratch, and n trajectories x0[n][dim]
     * -> yout[n][nt][dim], stat[n], events */
    unsigned methods;
    size_t (*scratch)(int method, int dim);
    void (*solve)(const ode_prob_t *p, int64_t n, const double *x0, double *yout, ode_stat_t *stat,
                  ode_evout_t *ev, double *scratch);
} ode_sys_t;

#endif /* ODE_SYS_H */
