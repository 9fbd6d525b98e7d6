/* odegen_lane1.c - the engine as the GPU compiles it (one lane), built
 * for the CPU so that tests/odegen_unit can check that the CUDA code path
 * gives the same bits as the 8-lane CPU engine, on a machine without GPU.
 */
#include "config.h"
#include "hpc.h"

#define ODE_LANES 1
#include "dp45.h"

void ode_solve_lane1(const ode_prob_t *p, int64_t n, const double *x0, double *yout,
                     ode_stat_t *stat, double *scratch);

void ode_solve_lane1(const ode_prob_t *p, int64_t n, const double *x0, double *yout,
                     ode_stat_t *stat, double *scratch)
{
    /* as the kernel does: one trajectory per call, scratch stride 1 */
    for (int64_t i = 0; i < n; i++)
        dp45_solve(p, 1, x0 + i * p->dim, yout + i * p->nt * p->dim, stat + i, scratch, 1);
}

/* One trajectory as GPU thread `lane` of `stride` threads computes it:
 * its scratch at base + lane, stride apart (cuda.cu's layout). */
void ode_solve_lane_at(const ode_prob_t *p, const double *x0, double *yout, ode_stat_t *stat, double *base,
                       ode_ix_t stride, ode_ix_t lane);

void ode_solve_lane_at(const ode_prob_t *p, const double *x0, double *yout, ode_stat_t *stat, double *base,
                       ode_ix_t stride, ode_ix_t lane)
{
    dp45_solve(p, 1, x0, yout, stat, base + lane, stride);
}
