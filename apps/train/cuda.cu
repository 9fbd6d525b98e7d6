/* cuda.cu - the GPU device of hpc-train: the table of dev.h with cuBLAS
 * GEMMs and small CUDA kernels, everything on the legacy default stream,
 * which libhpc's collectives wait for before they reduce a device buffer
 * (an event; NCCL runs on a non-blocking stream of its own, so a bucket's
 * allreduce overlaps the rest of backward, which does not wait for it).
 *
 * The kernels compute what the CPU's compute, in the same order where it
 * matters (the bias gradient sums rows in order; sums of losses and
 * squares are per-row or per-block partials in double added on the host
 * in order), so a run on the GPU follows the CPU run's losses closely
 * (tests/train_cuda.sh: within 1e-4 over 100 steps).  local.mk compiles
 * it with --fmad=false, so elementwise operations round as on the CPU.
 * No MPI header here: errors go to the fatal function the program passes
 * (cpu.c's train_dev_fatal).  This file is a module of its own,
 * hpckit/hpc-train-cuda.so, opened for --device cuda only (cuda_load.c),
 * so that hpc-train needs no CUDA runtime to start.
 *
 * cuBLAS is opened with dlopen when --device cuda asks for it, not
 * linked: loading libcublas costs every process about 200 MiB of resident
 * memory (its relocations), CPU runs included.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include "dev.h"
#include "act_math.h"
#include "hpc_dl.h"

#define THREADS 256
#define STR_(x) #x
#define STR(x) STR_(x)

static cublasHandle_t blas;
static void (*fatal)(const char *msg);    /* the program's train_dev_fatal */
/* the three cuBLAS calls, from libcublas.so.<major> */
static struct {
    decltype(&cublasCreate_v2) create;
    decltype(&cublasSetMathMode) math;
    decltype(&cublasSgemm_v2) sgemm;
} cb;

/* NULL, or why libcublas cannot be used */
static const char *blas_open(void)
{
    static char why[256];
    static const char *const names[] = {"cublasCreate_v2", "cublasSetMathMode", "cublasSgemm_v2"};
    void *fns[3];
    if (hpc_dlsyms_here("libcublas.so." STR(CUBLAS_VER_MAJOR), names, fns, 3, why, sizeof why) < 0) return why;
    cb.create = (decltype(cb.create))fns[0];
    cb.math = (decltype(cb.math))fns[1];
    cb.sgemm = (decltype(cb.sgemm))fns[2];
    return NULL;
}

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        char msg[256];
        snprintf(msg, sizeof msg, "CUDA: %s: %s", what, cudaGetErrorString(e));
        fatal(msg);
    }
}

static void check_blas(cublasStatus_t s, const char *what)
{
    if (s != CUBLAS_STATUS_SUCCESS) {
        char msg[256];
        snprintf(msg, sizeof msg, "cuBLAS: %s: status %d", what, (int)s);
        fatal(msg);
    }
}

static unsigned blocks(size_t n)
{
    size_t b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b ? (b < 65535 ? b : 65535) : 1);
}

/* ---- memory ---- */

static void *g_alloc(size_t bytes)
{
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 4) != cudaSuccess) return NULL;
    check(cudaMemset(p, 0, bytes ? bytes : 4), "cudaMemset");
    return p;
}

static void g_release(void *p)
{
    cudaFree(p);
}

static void g_to_dev(void *dst, const void *src, size_t bytes)
{
    check(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy to the device");
}

static void g_to_host(void *dst, const void *src, size_t bytes)
{
    check(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy to the host");
}

/* Scratch on the device for partial sums, grown as needed */
static double *scratch(size_t n)
{
    static double *buf;
    static size_t cap;
    if (n > cap) {
        cudaFree(buf);
        buf = NULL;
        cap = 0;
        check(cudaMalloc((void **)&buf, n * sizeof(double)), "cudaMalloc (scratch)");
        cap = n;
    }
    return buf;
}

/* ---- GEMMs: row-major products as column-major ones of the transposes ---- */

static void gemm_nt(int m, int n, int k, const float *A, const float *B, float *C)
{
    const float one = 1.0f, zero = 0.0f;
    check_blas(cb.sgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, B, k, A, k, &zero, C, n), "gemm_nt");
}

static void gemm_tn(int m, int n, int k, const float *A, const float *B, float beta, float *C)
{
    const float one = 1.0f;
    check_blas(cb.sgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, n, m, k, &one, B, n, A, m, &beta, C, n), "gemm_tn");
}

static void gemm_nn(int m, int n, int k, const float *A, const float *B, float *C)
{
    const float one = 1.0f, zero = 0.0f;
    check_blas(cb.sgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, n, A, k, &zero, C, n), "gemm_nn");
}

/* ---- activations: the CPU's formulas ---- */

__global__ void k_bias_act(int act, size_t total, int n, const float *b, float *z, float *keep)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
        float v = z[i] + b[i % n];
        if (act == ACT_TANH) v = act_tanh(v);
        else if (act == ACT_RELU) v = v > 0.0f ? v : 0.0f;
        else if (act == ACT_GELU) {
            keep[i] = v;
            v = act_gelu(v);
        }
        z[i] = v;
    }
}

__global__ void k_act_grad(int act, size_t total, const float *a, const float *keep, float *d)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
        if (act == ACT_TANH) d[i] = d[i] * (1.0f - a[i] * a[i]);
        else if (act == ACT_RELU) d[i] = a[i] > 0.0f ? d[i] : 0.0f;
        else if (act == ACT_GELU) d[i] *= act_gelu_grad(keep[i]);
    }
}

/* one thread per column, rows in order: the CPU's sum */
__global__ void k_colsum(int m, int n, const float *d, float *db, float beta)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    float s = beta != 0.0f ? db[j] : 0.0f;
    for (int i = 0; i < m; i++) s += d[(size_t)i * n + j];
    db[j] = s;
}

static void bias_act(act_t act, int m, int n, const float *b, float *z, float *keep)
{
    size_t total = (size_t)m * n;
    k_bias_act<<<blocks(total), THREADS>>>((int)act, total, n, b, z, keep);
    check(cudaGetLastError(), "bias_act");
}

static void act_back(act_t act, int m, int n, const float *a, const float *keep, float *d, float *db, float beta)
{
    size_t total = (size_t)m * n;
    if (act != ACT_NONE) k_act_grad<<<blocks(total), THREADS>>>((int)act, total, a, keep, d);
    k_colsum<<<(n + THREADS - 1) / THREADS, THREADS>>>(m, n, d, db, beta);
    check(cudaGetLastError(), "act_back");
}

/* ---- losses: a partial per row, added on the host in row order ---- */

__global__ void k_mse(int m, int n, const float *yhat, const float *y, float scale, float *dy, double *part)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    double s = 0;
    for (int j = 0; j < n; j++) {
        size_t k = (size_t)i * n + j;
        float r = yhat[k] - y[k];
        s += (double)r * r;
        if (dy) dy[k] = 2.0f * r * scale;
    }
    part[i] = s;
}

__global__ void k_ce(int m, int n, const float *z, const float *y, float scale, float *dy, double *part)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    part[i] = ce_row(n, z + (size_t)i * n, (int)y[i], scale, dy ? dy + (size_t)i * n : NULL);
}

static double loss(loss_kind_t kind, int m, int n, const float *yhat, const float *y, float scale, float *dy)
{
    if (m <= 0) return 0;
    double *part = scratch((size_t)m);
    unsigned nb = (unsigned)((m + THREADS - 1) / THREADS);
    if (kind == LOSS_CE) k_ce<<<nb, THREADS>>>(m, n, yhat, y, scale, dy, part);
    else k_mse<<<nb, THREADS>>>(m, n, yhat, y, scale, dy, part);
    check(cudaGetLastError(), "loss");
    double *h = (double *)malloc((size_t)m * sizeof *h), s = 0;
    if (!h) fatal("out of memory for the loss");
    g_to_host(h, part, (size_t)m * sizeof *h);
    for (int i = 0; i < m; i++) s += h[i];
    free(h);
    return s;
}

/* ---- norms, scaling, optimisers ---- */

__global__ void k_sumsq(size_t n, const float *x, double *part)
{
    __shared__ double sh[THREADS];
    double s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        s += (double)x[i] * x[i];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int w = THREADS / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}

static double sumsq(size_t n, const float *x)
{
    unsigned nb = blocks(n) < 1024 ? blocks(n) : 1024;
    double *part = scratch(nb), h[1024], s = 0;
    k_sumsq<<<nb, THREADS>>>(n, x, part);
    check(cudaGetLastError(), "sumsq");
    g_to_host(h, part, nb * sizeof(double));
    for (unsigned b = 0; b < nb; b++) s += h[b];
    return s;
}

__global__ void k_scale(size_t n, float *x, float s)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] *= s;
}

static void scale(size_t n, float *x, float s)
{
    k_scale<<<blocks(n), THREADS>>>(n, x, s);
    check(cudaGetLastError(), "scale");
}

/* the optimisers: a kernel for each rule of opt_kernels.h */
#define CUDA_OPT(name)                                                                                          \
    __global__ void k_opt_##name(size_t n, float *p, const float *g, float *s0, float *s1, opt_step_t h)      \
    {                                                                                                         \
        for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) \
            opt_##name##_elem(i, p, g, s0, s1, h);                                                            \
    }                                                                                                         \
    static void opt_##name(size_t n, float *p, const float *g, float *s0, float *s1, const opt_step_t *h)     \
    {                                                                                                         \
        k_opt_##name<<<blocks(n), THREADS>>>(n, p, g, s0, s1, *h);                                            \
        check(cudaGetLastError(), "optimiser " #name);                                                        \
    }
OPT_KERNELS(CUDA_OPT)

__global__ void k_add(size_t n, float *y, const float *x)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] += x[i];
}

static void add(size_t n, float *y, const float *x)
{
    k_add<<<blocks(n), THREADS>>>(n, y, x);
    check(cudaGetLastError(), "add");
}

static void zero(size_t n, float *x)
{
    check(cudaMemsetAsync(x, 0, n * sizeof *x, 0), "cudaMemsetAsync");
}

static void sync(void)
{
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

/* the legacy stream only: libhpc's NCCL and copies run on non-blocking
 * streams, which this does not wait for */
static void sync_compute(void)
{
    check(cudaStreamSynchronize(0), "cudaStreamSynchronize (legacy stream)");
}

static train_dev_t gpu;

/* The reason of the last failure of train_cuda_open: the program makes
 * it its error (cuda_load.c; no MPI header here for hpc.h's HPC_ERR). */
static char open_why[512] = "no error";

extern "C" HPC_DL_EXPORT const char *train_cuda_why(void)
{
    return open_why;
}

/* The module's entry point: the GPU device, or -1 (the GPU fails), -2
 * (cuBLAS cannot be loaded: a missing library, which the program reports
 * as it reports a missing module) with the reason in train_cuda_why().
 * fatal ends the job on a failure later. */
extern "C" HPC_DL_EXPORT int train_cuda_open(void (*fatal_fn)(const char *), const train_dev_t **out)
{
    int dev = -1;
    fatal = fatal_fn;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess || (e = cudaFree(0)) != cudaSuccess) {
        snprintf(open_why, sizeof open_why, "--device cuda: GPU %d cannot be used (%s)", dev, cudaGetErrorString(e));
        return -1;
    }
    const char *why = blas ? NULL : blas_open();
    if (why) {
        snprintf(open_why, sizeof open_why, "--device cuda: cannot load cuBLAS (%s)", why);
        return -2;
    }
    if (!blas && cb.create(&blas) != CUBLAS_STATUS_SUCCESS) {
        snprintf(open_why, sizeof open_why, "--device cuda: cuBLAS cannot start on GPU %d", dev);
        return -1;
    }
    /* the CPU's arithmetic: no TF32 tensor cores for float32 GEMMs */
    cublasStatus_t st = cb.math(blas, CUBLAS_DEFAULT_MATH);
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(open_why, sizeof open_why, "--device cuda: cuBLAS refuses its default math mode (status %d)", (int)st);
        return -1;
    }
    gpu.name = "cuda";
    gpu.alloc = g_alloc;
    gpu.release = g_release;
    gpu.to_dev = g_to_dev;
    gpu.to_host = g_to_host;
    gpu.gemm_nt = gemm_nt;
    gpu.gemm_tn = gemm_tn;
    gpu.gemm_nn = gemm_nn;
    gpu.bias_act = bias_act;
    gpu.act_back = act_back;
    gpu.loss = loss;
    gpu.sumsq = sumsq;
    gpu.scale = scale;
    gpu.add = add;
    gpu.zero = zero;
#define CUDA_OPT_ENTRY(name) gpu.opt[OPT_K_##name] = opt_##name;
    OPT_KERNELS(CUDA_OPT_ENTRY)
    gpu.sync = sync;
    gpu.sync_compute = sync_compute;
    *out = &gpu;
    return 0;
}
