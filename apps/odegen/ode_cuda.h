/* ode_cuda.h - the GPU engine's interface.  The engine (cuda.cu) is the
 * module hpckit/hpc-odegen-cuda.so, whose odegen_cuda_open, _solve and
 * _close have the signatures below less the error record: they return -1
 * and odegen_cuda_why() the reason (no MPI here, so no hpc.h); the
 * program's ode_cuda_* (cuda_load.c) open it at the first ode_cuda_open
 * and record the reason as an HPC_ERR_CUDA.  No MPI or HDF5 here: nvcc
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
 * trajectories.  0 or HPC_ERR_CUDA with the cause (hpc_last_cause).
 * Collective: every rank must have a GPU and the module, or all exit 2
 * with one line. */
int ode_cuda_open(const ode_prob_t *p, int64_t nmax, ode_cuda_t **out);
int ode_cuda_solve(ode_cuda_t *c, int64_t n, const double *x0, double *yout, ode_stat_t *stat);
void ode_cuda_close(ode_cuda_t *c);

#ifdef __cplusplus
}
#endif
#endif /* ODE_CUDA_H */
