/* odegen_layout.c - hpc-odegen's GPU scratch layout, computed on the CPU
 * with the GPU's stride (issue 23.6).  The kernel (cuda.cu) gives thread
 * `tid` of `threads` (up to 65,536) the scratch elements
 *   scratch[(block * dim + i) * threads + tid],  block < 19 (RK45),
 * so its offsets pass 2^31 above dim ~ 1,800.  This runs the very engine
 * the kernel runs (erk.h with one lane, odegen_lane1.h) as the last
 * thread of 65,536 on a 2,000-dimensional problem, in a scratch of the
 * kernel's size (about 19 GB of address space, reserved, not committed:
 * only the pages this one lane touches become memory), and compares its
 * bits with the 8-lane CPU engine's: an index that wrapped around in 32
 * bits would land outside the scratch (a crash) or on another element.
 */
#include "config.h"
#include "hpc.h"

#include <math.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "odegen.h"
#include "testlib.h"

void ode_lane1_decay_sin(const ode_prob_t *p, const double *x0, double *yout, ode_stat_t *stat, ode_evout_t *ev,
                         double *base, ode_ix_t stride, ode_ix_t lane);

int main(void)
{
    const int D = 2000, threads = 65536, nt = 11;
    const int blocks = 19;   /* erk_blocks(RK45) of erk.h: the CPU engine's scratch is blocks x dim x lanes */
    const ode_sys_t *sys = ode_system_find("decay-sin");
    EXPECT(sys->scratch(ODE_RK45, D) == (size_t)blocks * D * 8, "RK45's scratch blocks are no longer %d", blocks);
    /* the layout's largest offset does not fit in 32 bits */
    int64_t last = ((int64_t)(blocks - 1) * D + (D - 1)) * threads + (threads - 1);
    EXPECT(last > INT32_MAX, "the test does not reach past 2^31 (%lld)", (long long)last);
    size_t bytes = (size_t)blocks * D * threads * sizeof(double);
    double *scratch = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (scratch == MAP_FAILED) {
        printf("SKIP: cannot reserve %.1f GB of address space for the GPU's scratch layout\n", bytes / 1e9);
        return 77;
    }
    double tg[11];
    ode_tgrid(0, 2, nt, tg);
    ode_prob_t p;
    memset(&p, 0, sizeof p);
    p.dim = D;
    p.method = ODE_RK45;
    void *user = malloc(sys->params_size); /* decay-sin's parameters: the dimension */
    sys->params_fill(user, D, NULL, NULL);
    p.user = user;
    p.t0 = 0;
    p.t1 = 2;
    p.nt = nt;
    p.tgrid = tg;
    p.rtol = 1e-3;
    p.atol = 1e-6;
    p.max_step = INFINITY;
    double *x0 = malloc(sizeof(double) * D), *ya = malloc(sizeof(double) * nt * D), *yb = malloc(sizeof(double) * nt * D);
    double *w = aligned_alloc(64, sys->scratch(ODE_RK45, D) * sizeof(double));
    ode_stat_t sa, sb;
    hpc_rng_t r;
    hpc_rng_init(&r, 23, 6);
    for (int i = 0; i < D; i++) x0[i] = 1.2 * hpc_rng_uniform(&r);
    sys->solve(&p, 1, x0, ya, &sa, NULL, w);
    ode_lane1_decay_sin(&p, x0, yb, &sb, NULL, scratch, threads, threads - 1);
    EXPECT(sa.status == ODE_OK && sa.nsteps > 0, "the CPU engine failed (status %d)", sa.status);
    EXPECT(sa.nsteps == sb.nsteps && sa.nfev == sb.nfev && sa.nrejected == sb.nrejected && sa.status == sb.status,
           "lane %d of %d: %d steps, %d evaluations, status %d; the CPU: %d, %d, %d", threads - 1, threads,
           sb.nsteps, sb.nfev, sb.status, sa.nsteps, sa.nfev, sa.status);
    EXPECT(memcmp(ya, yb, sizeof(double) * nt * D) == 0, "lane %d of %d: the trajectory differs from the CPU's",
           threads - 1, threads);
    munmap(scratch, bytes);
    free(x0); free(ya); free(yb); free(w); free(user);
    if (!test_failures)
        printf("odegen_layout: dim %d as thread %d of %d (offsets up to %lld): the CPU's bits, %d steps\n", D,
               threads - 1, threads, (long long)last, sa.nsteps);
    return test_result();
}
