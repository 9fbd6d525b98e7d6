/* sys_cuda.h - a system's GPU kernel: the system file with one lane and
 * erk.h around it, one trajectory per thread.  NVRTC compiles it at run
 * time (cuda.cu), for the method ODE_METHOD; the file is "user.c".
 *
 * The right-hand side reads component i of its trajectory at y[i * st]
 * (the scratch is [block][component][thread]: neighbouring threads touch
 * neighbouring addresses), through hpc_ode.h's hpc_ode_in and
 * hpc_ode_out.  NVRTC gets --fmad=false: every operation rounds as on the
 * CPU, so the GPU gives the CPU's bits but where CUDA's libm (pow, exp)
 * rounds otherwise than glibc's.  Events run on the CPU only.
 */
#define HPC_ODE_LANES 1
#include "user.c"
#include "ode_prob.h"
#include "sys_params.h"

#define ODE_LANES 1
#define ODE_RHS(p, t, y, f, st)                                                                    \
    hpc_ode_user_rhs((t)[0], hpc_ode_in{(y), (long long)(st)}, hpc_ode_out{(f), (long long)(st)}, \
                     (const hpc_ode_params *)(p)->user)
#include "erk.h"

extern "C" __global__ void odegen_kernel(ode_prob_t p, const double *par, double *const *vec, int64_t n,
                                         const double *x0, double *y, ode_stat_t *st, double *scratch,
                                         int64_t stride)
{
    hpc_ode_params u;
    ode_sys_params_set(&u, p.dim, par, vec);
    p.user = &u;
    const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    double *w = scratch + tid; /* lane "tid" of the shared scratch */
    for (int64_t i = tid; i < n; i += step)
        erk_solve(ODE_METHOD, &p, 1, x0 + i * p.dim, y + i * p.nt * p.dim, st + i, NULL, w, stride);
}
