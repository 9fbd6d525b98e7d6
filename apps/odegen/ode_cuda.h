/* ode_cuda.h - the GPU engine's interface.
 *
 * The kernel is the system's file with erk.h around it (sys_cuda.h),
 * compiled at run time by NVRTC for the GPU at hand, the same way for a
 * built-in and a user's file, and kept in the compiled systems' cache
 * (cuda_load.c).  The module hpckit/hpc-odegen-cuda.so (cuda.cu) holds
 * every CUDA and NVRTC call: odegen_cuda_* below, which return -1 and
 * odegen_cuda_why() the reason (no MPI there, so no hpc.h); the
 * program's ode_cuda_* (cuda_load.c) open it for --device cuda only and
 * make the reason an HPC_ERR_CUDA.  No MPI or HDF5 here: nvcc includes it.
 */
#ifndef ODE_CUDA_H
#define ODE_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "ode_prob.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ode_cuda ode_cuda_t;
#define ODE_CUDA_MODULE "hpc-odegen-cuda"

/* NVRTC's input: the kernel's main text and the files it includes */
typedef struct {
    const char *main;                 /* "#define ODE_METHOD 0\n#include \"sys_cuda.h\"\n" */
    int nfiles;
    const char *const *names;         /* "erk.h", "user.c", "math.h", ... */
    const char *const *texts;
} ode_cuda_src_t;

/* What the kernel runs on: the problem (host pointers), the system's
 * parameters in the file's order, the compiled kernel. */
typedef struct {
    ode_prob_t prob;
    const double *par;
    int npar;
    double *const *vec;
    const int64_t *vec_len;
    int nvec;
    const void *cubin;
    size_t cubin_len;
    int64_t nmax;                     /* trajectories per batch at most */
    int64_t scratch_per_lane;         /* doubles of erk.h's scratch per trajectory */
} ode_cuda_args_t;

/* The module's own (cuda.cu) */
typedef int (*ode_cuda_arch_fn)(char *arch, int len);
typedef int (*ode_cuda_compile_fn)(const ode_cuda_src_t *src, const char *arch, void **cubin, size_t *len);
typedef int (*ode_cuda_open_fn)(const ode_cuda_args_t *a, ode_cuda_t **out);
typedef int (*ode_cuda_solve_fn)(ode_cuda_t *c, int64_t n, const double *x0, double *yout, ode_stat_t *stat);
typedef void (*ode_cuda_close_fn)(ode_cuda_t *c);
typedef const char *(*ode_cuda_text_fn)(void);

/* The program's ode_cuda_open, _solve and _close: odegen.h. */

#ifdef __cplusplus
}
#endif
#endif /* ODE_CUDA_H */
