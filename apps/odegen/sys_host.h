/* sys_host.h - a system's description and hooks: the system file with one
 * lane (hpc_real is a double), made into an ode_sys_t (ode_sys.h) that
 * hpc-odegen reads.  One of the two translation units of a compiled
 * system (sys_lanes.h is the other: the explicit engines); the includer
 * defines ODE_SYS and ODE_SYS_FILE, and ODE_SYS_VISIBLE for a shared
 * object (its descriptor is then the one symbol it exports).
 */
#define HPC_ODE_LANES 1
#include ODE_SYS_FILE

#include "ode_sys.h"
#include "sys_params.h"

#define ODE_SYS_CAT2(a, b, c) a##b##c
#define ODE_SYS_CAT(a, b, c) ODE_SYS_CAT2(a, b, c)
#define ODE_SYS_SYM(x) ODE_SYS_CAT(ode_sys_, ODE_SYS, _##x)

unsigned ODE_SYS_SYM(methods)(void);
size_t ODE_SYS_SYM(scratch)(int method, int dim);
void ODE_SYS_SYM(solve)(const ode_prob_t *p, int64_t n, const double *x0, double *yout, ode_stat_t *stat,
                        ode_evout_t *ev, double *w);

#define ODE_SYS_PNAME(name, def) #name,
#define ODE_SYS_PDEF(name, def) (double)(def),
#define ODE_SYS_VNAME(name, len) #name,
#define ODE_SYS_VLEN(name, len) if (k == i++) return (int64_t)(len);

static const char *const ode_sys_par_name[] = {HPC_ODE_PARAMS(ODE_SYS_PNAME) NULL};
static const double ode_sys_par_default[] = {HPC_ODE_PARAMS(ODE_SYS_PDEF) 0};
static const char *const ode_sys_vec_name[] = {HPC_ODE_VECTORS(ODE_SYS_VNAME) NULL};

static int64_t ode_sys_vec_len(int k, int dim)
{
    int i = 0;
    (void)dim;
    HPC_ODE_VECTORS(ODE_SYS_VLEN)
    (void)i;
    (void)k;
    return -1;
}

static void ode_sys_params_fill(void *user, int dim, const double *par, double *const *vec)
{
    ode_sys_params_set((hpc_ode_params *)user, dim, par, vec);
}

static void ode_sys_setup(void *user, struct hpc_ode_rng *rng)
{
    hpc_ode_user_info.setup((hpc_ode_params *)user, rng);
}

static void ode_sys_x0(const void *user, double *x, struct hpc_ode_rng *rng)
{
    hpc_ode_user_info.x0(x, (const hpc_ode_params *)user, rng);
}

static void ode_sys_jac(const void *user, double t, const double *x, double *J)
{
    hpc_ode_user_info.jac(t, x, J, (const hpc_ode_params *)user);
}

static void ode_sys_rhs(const void *user, double t, const double *x, double *f)
{
    hpc_ode_user_rhs(t, x, f, (const hpc_ode_params *)user);
}

static int ode_sys_nev(void)
{
    int n = 0;
    while (n < HPC_ODE_MAX_EVENTS && hpc_ode_user_info.events[n].g)
        n++;
    return n;
}

#ifndef ODE_SYS_NAME
#define ODE_SYS_NAME ""
#endif

/* The description, filled at the first call (a static initializer cannot
 * read the file's hpc_ode_user_info).  In a shared object, the one
 * exported symbol. */
#ifdef ODE_SYS_VISIBLE
__attribute__((visibility("default")))
#endif
const ode_sys_t *ODE_SYS_SYM(get)(void);
const ode_sys_t *ODE_SYS_SYM(get)(void)
{
    static ode_sys_t d;
    const hpc_ode_info *in = &hpc_ode_user_info;
    d.abi = ODE_SYS_ABI;
    d.name = in->name ? in->name : ODE_SYS_NAME;
    d.about = in->about ? in->about : "";
    d.dim = in->dim;
    d.dim_min = in->dim_min ? in->dim_min : in->dim;
    d.dim_max = in->dim_max == HPC_ODE_ANY ? 0 : in->dim_max ? in->dim_max : in->dim;
    d.npar = (int)(sizeof ode_sys_par_name / sizeof ode_sys_par_name[0]) - 1;
    d.par_name = ode_sys_par_name;
    d.par_default = ode_sys_par_default;
    d.nvec = (int)(sizeof ode_sys_vec_name / sizeof ode_sys_vec_name[0]) - 1;
    d.vec_name = ode_sys_vec_name;
    d.vec_len = ode_sys_vec_len;
    d.nev = ode_sys_nev();
    d.events = in->events;
    d.params_size = sizeof(hpc_ode_params);
    d.params_fill = ode_sys_params_fill;
    d.setup = in->setup ? ode_sys_setup : NULL;
    d.x0 = in->x0 ? ode_sys_x0 : NULL;
    d.jac = in->jac ? ode_sys_jac : NULL;
    d.rhs = ode_sys_rhs;
    d.methods = ODE_SYS_SYM(methods)();
    d.scratch = ODE_SYS_SYM(scratch);
    d.solve = ODE_SYS_SYM(solve);
    return &d;
}
