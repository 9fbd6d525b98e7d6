/* cpu.c - the CPU device: host memory (64-byte aligned), OpenBLAS sgemm
 * in row-major form, and the kernels of act.c, loss.c and optim.c (the
 * optimisers' loops, one for each rule of opt_kernels.h).  The
 * BLAS threads are libhpc's choice (the cores a rank owns).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <cblas.h>
#include "hpc_app.h"
#include "dev.h"

static void *cpu_alloc(size_t bytes)
{
    size_t n = (bytes + 63) / 64 * 64;
    void *p = aligned_alloc(64, n ? n : 64);
    if (p) memset(p, 0, n ? n : 64);
    return p;
}

static void cpu_copy(void *dst, const void *src, size_t bytes)
{
    if (dst != src) memcpy(dst, src, bytes);
}

static void gemm_nt(int m, int n, int k, const float *A, const float *B, float *C)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, A, k, B, k, 0.0f, C, n);
}

static void gemm_tn(int m, int n, int k, const float *A, const float *B, float beta, float *C)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, k, 1.0f, A, m, B, n, beta, C, n);
}

static void gemm_nn(int m, int n, int k, const float *A, const float *B, float *C)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, A, k, B, n, 0.0f, C, n);
}

/* in double and in order: the gradient norm does not depend on the
 * vector width */
static double sumsq(size_t n, const float *x)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)x[i] * x[i];
    return s;
}

static void scale(size_t n, float *x, float s)
{
    for (size_t i = 0; i < n; i++) x[i] *= s;
}

static void add(size_t n, float *y, const float *x)
{
    for (size_t i = 0; i < n; i++) y[i] += x[i];
}

static void zero(size_t n, float *x)
{
    memset(x, 0, n * sizeof *x);
}

static void nothing(void)
{
}

#define CPU_OPT(name) cpu_opt_##name,
static const train_dev_t cpu = {
    .name = "cpu",
    .alloc = cpu_alloc,
    .release = free,
    .to_dev = cpu_copy,
    .to_host = cpu_copy,
    .gemm_nt = gemm_nt,
    .gemm_tn = gemm_tn,
    .gemm_nn = gemm_nn,
    .bias_act = cpu_bias_act,
    .act_back = cpu_act_back,
    .loss = cpu_loss,
    .sumsq = sumsq,
    .scale = scale,
    .add = add,
    .zero = zero,
    .opt = {OPT_KERNELS(CPU_OPT)},
    .sync = nothing,
};

const train_dev_t *train_dev_cpu(void)
{
    return &cpu;
}

void train_dev_fatal(const char *msg)
{
    hpc_app_fatal(HPC_EXIT_DATA, "%s", msg);
}
