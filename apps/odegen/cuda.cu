/* cuda.cu - the GPU engine of hpc-odegen: dp45.h with one trajectory per
 * thread, in float64.
 *
 * The kernel runs exactly the engine the CPU runs (same source, one lane
 * instead of eight), and the scratch is laid out [block][component][thread]
 * so that neighbouring threads touch neighbouring addresses.  local.mk
 * compiles this file with --fmad=false: without contraction every
 * operation rounds as on the CPU, so results match the CPU bit for bit
 * except where CUDA's pow() (used once per step for the step-size factor)
 * rounds differently from glibc's; the test bound is 1e-12 relative.
 *
 * No MPI header here (nvcc does not know its include path); the
 * interface is ode_cuda.h.  The batch is copied to the device, integrated, and copied back; the
 * caller writes it to HDF5 in chunks as on the CPU.
 *
 * This file is a module of its own, hpckit/hpc-odegen-cuda.so, opened
 * for --device cuda only (cuda_load.c), so that hpc-odegen needs no CUDA
 * runtime to start: its three functions are the module's exports.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#define ODE_LANES 1
#include "dp45.h"

#include "ode_cuda.h"
#include "hpc_dl.h"

struct ode_cuda {
    ode_prob_t prob;          /* device copy of the pointers inside */
    double *d_tgrid, *d_vec;
    double *d_x0, *d_y, *d_scratch;
    ode_stat_t *d_st;
    int64_t nmax;
    int threads;              /* threads per launch = scratch stride */
};

__global__ void odegen_kernel(ode_prob_t p, int64_t n, const double *x0, double *y,
                              ode_stat_t *st, double *scratch, int stride)
{
    const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    double *w = scratch + tid;   /* lane "tid" of the shared scratch */
    for (int64_t i = tid; i < n; i += step)
        dp45_solve(&p, 1, x0 + i * p.dim, y + i * p.nt * p.dim, st + i, w, stride);
}

extern "C" HPC_DL_EXPORT void odegen_cuda_close(ode_cuda_t *c);

/* The reason of the last failure: the program makes it its error
 * (cuda_load.c; no MPI header here for hpc.h's HPC_ERR). */
static char why[512] = "no error";

extern "C" HPC_DL_EXPORT const char *odegen_cuda_why(void)
{
    return why;
}

static int cuda_fail(cudaError_t e, const char *what)
{
    snprintf(why, sizeof why, "--device cuda: %s: %s", what, cudaGetErrorString(e));
    return -1;
}

#define CU(call, what)                                      \
    do {                                                    \
        cudaError_t e_ = (call);                            \
        if (e_ != cudaSuccess) {                            \
            odegen_cuda_close(c);                           \
            return cuda_fail(e_, what);                      \
        }                                                   \
    } while (0)

extern "C" HPC_DL_EXPORT int odegen_cuda_open(const ode_prob_t *p, int64_t nmax, ode_cuda_t **out)
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        snprintf(why, sizeof why, "--device cuda: no usable GPU (%s)",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices visible");
        return -1;
    }
    ode_cuda_t *c = (ode_cuda_t *)calloc(1, sizeof *c);
    if (!c) {
        snprintf(why, sizeof why, "out of memory");
        return -1;
    }
    c->prob = *p;
    c->nmax = nmax;
    int64_t t = nmax < 65536 ? nmax : 65536;
    c->threads = (int)((t + 127) / 128 * 128);   /* whole blocks */
    size_t D = (size_t)p->dim, NT = (size_t)p->nt;
    CU(cudaMalloc(&c->d_tgrid, NT * sizeof(double)), "cudaMalloc");
    CU(cudaMemcpy(c->d_tgrid, p->tgrid, NT * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
    c->prob.tgrid = c->d_tgrid;
    if (p->vec) {
        CU(cudaMalloc(&c->d_vec, D * sizeof(double)), "cudaMalloc");
        CU(cudaMemcpy(c->d_vec, p->vec, D * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
        c->prob.vec = c->d_vec;
    }
    CU(cudaMalloc(&c->d_x0, (size_t)nmax * D * sizeof(double)), "cudaMalloc x0");
    CU(cudaMalloc(&c->d_y, (size_t)nmax * NT * D * sizeof(double)), "cudaMalloc y");
    CU(cudaMalloc(&c->d_st, (size_t)nmax * sizeof(ode_stat_t)), "cudaMalloc stats");
    CU(cudaMalloc(&c->d_scratch, (size_t)ODE_SCRATCH_BLOCKS * D * c->threads * sizeof(double)),
       "cudaMalloc scratch");
    *out = c;
    return 0;
}

extern "C" HPC_DL_EXPORT int odegen_cuda_solve(ode_cuda_t *c, int64_t n, const double *x0, double *yout,
                              ode_stat_t *stat)
{
    size_t D = (size_t)c->prob.dim, NT = (size_t)c->prob.nt;
    if (n > c->nmax) {
        snprintf(why, sizeof why, "--device cuda: batch of %lld > %lld", (long long)n,
                 (long long)c->nmax);
        return -1;
    }
    cudaError_t e;
    if ((e = cudaMemcpy(c->d_x0, x0, (size_t)n * D * sizeof(double), cudaMemcpyHostToDevice)))
        return cuda_fail(e, "copy x0");
    const int block = 128;
    int threads = (int)(n < c->threads ? n : c->threads);
    int grid = (threads + block - 1) / block;
    /* grid * block <= c->threads: the scratch has a lane for every thread */
    odegen_kernel<<<grid, block>>>(c->prob, n, c->d_x0, c->d_y, c->d_st, c->d_scratch,
                                   c->threads);
    if ((e = cudaGetLastError()) || (e = cudaDeviceSynchronize()))
        return cuda_fail(e, "odegen_kernel");
    if ((e = cudaMemcpy(yout, c->d_y, (size_t)n * NT * D * sizeof(double), cudaMemcpyDeviceToHost)))
        return cuda_fail(e, "copy y");
    if ((e = cudaMemcpy(stat, c->d_st, (size_t)n * sizeof(ode_stat_t), cudaMemcpyDeviceToHost)))
        return cuda_fail(e, "copy stats");
    return 0;
}

extern "C" HPC_DL_EXPORT void odegen_cuda_close(ode_cuda_t *c)
{
    if (!c)
        return;
    cudaFree(c->d_tgrid);
    cudaFree(c->d_vec);
    cudaFree(c->d_x0);
    cudaFree(c->d_y);
    cudaFree(c->d_st);
    cudaFree(c->d_scratch);
    free(c);
}
