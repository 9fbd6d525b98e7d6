/* solver.c - the CPU engine: dp45.h compiled with 8 SIMD lanes.
 *
 * Why 8 lanes: eight trajectories advance in lockstep, so every loop over
 * lanes is two AVX2 vectors (four SSE2 vectors) wide whatever the system's
 * dimension; the sine in the right-hand side is ode_sin(), which
 * vectorises.  Measured on the classic example (AMD EPYC, one core): 8
 * lanes ~85k traj/s with AVX2, 4 lanes ~70k.
 *
 * Why target_clones: the binary stays portable (x86-64 baseline) and still
 * runs AVX2 code where the CPU has it; the clone is picked once at load.
 * Every lane operation is a plain IEEE operation without contraction
 * (-std=c11 keeps -ffp-contract off), so both clones - and the one-lane
 * CUDA build - give bit-identical results.
 *
 * Why the optimize pragma: the engine needs -O3's loop vectoriser; the
 * build's CFLAGS (-O2 by default) come after per-program flags and would
 * override them, so the level is set here, for this file only.
 */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__OPTIMIZE_SIZE__)
#pragma GCC optimize("O3")
#endif
#include "config.h"
#include "hpc.h"

#include <stdio.h>

#include "odegen.h"
#define ODE_LANES 8
#define ODE_POLL() hpc_workq_poll()
#include "dp45.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
#define ODE_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define ODE_CLONES
#endif

size_t ode_cpu_scratch(int dim)
{
    return (size_t)ODE_SCRATCH_BLOCKS * (size_t)dim * ODE_LANES;
}

ODE_CLONES
void ode_solve_cpu(const ode_prob_t *p, int64_t n, const double *x0, double *yout,
                   ode_stat_t *stat, double *scratch)
{
    dp45_solve(p, n, x0, yout, stat, scratch, ODE_LANES);
}
