/* ode_cuda.h - the GPU engine's interface.  The engine (cuda.cu) is the
 * module hpckit/hpc-odegen-cuda.so, whose odegen_cuda_open, _solve and
 * _close have the signatures below; the program's ode_cuda_* (cuda_load.c)
 * open it at the first ode_cuda_open.  No MPI or HDF5 here: nvcc
 * includes it. */
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
/* Set up the GPU for problems like p and batches of up to nmax
 * trajectories.  0 or -1 with a reason in err.  Collective: every rank
 * must have a GPU and the module, or all exit 2 with one line. */
int ode_cuda_open(const ode_prob_t *p, int64_t nmax, ode_cuda_t **out, char *err, size_t errlen);
int ode_cuda_solve(ode_cuda_t *c, int64_t n, const double *x0, double *yout, ode_stat_t *stat,
                   char *err, size_t errlen);
void ode_cuda_close(ode_cuda_t *c);

#ifdef __cplusplus
}
#endif
#endif /* ODE_CUDA_H */
