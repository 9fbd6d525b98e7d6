/* sys_params.h - a system's parameter block (its hpc_ode_params) from
 * the values hpc-odegen holds in the file's order: the scalars par[],
 * the vectors vec[].  For sys_host.h and the GPU's sys_cuda.h. */
#ifndef ODE_SYS_PARAMS_H
#define ODE_SYS_PARAMS_H

#define ODE_SYS_PFILL(name, def) u->name = par[k++];
#define ODE_SYS_VFILL(name, len) u->name = vec[k++];

HPC_ODE_FN void ode_sys_params_set(hpc_ode_params *u, int dim, const double *par, double *const *vec)
{
    int k = 0;
    u->dim = dim;
    HPC_ODE_PARAMS(ODE_SYS_PFILL)
    k = 0;
    HPC_ODE_VECTORS(ODE_SYS_VFILL)
    (void)k;
    (void)par;
    (void)vec;
}

#endif
