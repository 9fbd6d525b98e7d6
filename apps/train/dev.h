/* dev.h - where hpc-train computes: one table of kernels with two
 * implementations, the CPU's (OpenBLAS sgemm and C loops: cpu.c, act.c,
 * loss.c, optim.c) and the GPU's (cuBLAS and CUDA kernels: cuda.cu).  The
 * layers, the optimisers and the training loop call through the table and
 * never touch the numbers themselves, so the same code trains on either.
 *
 * Matrices are row-major float32 [rows, cols], as PyTorch lays them out
 * (nn.Linear's weight is [out, in]).  No MPI or HDF5 here: nvcc includes
 * this header.
 */
#ifndef TRAIN_DEV_H
#define TRAIN_DEV_H

#include <stddef.h>
#include <stdint.h>
#include "opt_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The hot elementwise loops: one build for every x86-64 that runs the
 * widest vectors the CPU has (the same results: no fused multiply-add in
 * ISO C, each element on its own). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && !defined(__CUDACC__)
#define TRAIN_HOT __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TRAIN_HOT
#endif

typedef enum { ACT_NONE = -1, ACT_TANH = 0, ACT_RELU, ACT_GELU } act_t;
typedef enum { LOSS_MSE = 0, LOSS_CE } loss_kind_t;

typedef struct train_dev {
    const char *name;                                  /* "cpu", "cuda" */
    void *(*alloc)(size_t bytes);                      /* zeroed; NULL if none */
    void (*release)(void *p);
    void (*to_dev)(void *dst, const void *src, size_t bytes);
    void (*to_host)(void *dst, const void *src, size_t bytes);
    /* C[m,n] = A[m,k] B[n,k]^T                  (forward: Z = X W^T) */
    void (*gemm_nt)(int m, int n, int k, const float *A, const float *B, float *C);
    /* C[m,n] = A[k,m]^T B[k,n] + beta C        (weight gradient) */
    void (*gemm_tn)(int m, int n, int k, const float *A, const float *B, float beta, float *C);
    /* C[m,n] = A[m,k] B[k,n]                    (input gradient) */
    void (*gemm_nn)(int m, int n, int k, const float *A, const float *B, float *C);
    /* z[m,n] = act(z + b), in place; keep (GELU only) gets z + b */
    void (*bias_act)(act_t act, int m, int n, const float *b, float *z, float *keep);
    /* d[m,n] *= act'(.) in place (a: the layer's output, keep: its input
     * for GELU), then db[n] = column sums of d + beta db */
    void (*act_back)(act_t act, int m, int n, const float *a, const float *keep, float *d,
                     float *db, float beta);
    /* Sum of the loss over m rows; dy (if not NULL) = scale * dloss/dyhat.
     * MSE: y [m,n]; cross-entropy: y [m] class indices held as floats. */
    double (*loss)(loss_kind_t kind, int m, int n, const float *yhat, const float *y, float scale,
                   float *dy);
    double (*sumsq)(size_t n, const float *x);
    void (*scale)(size_t n, float *x, float s);
    /* y[i] += x[i]; x[0..n) = 0 */
    void (*add)(size_t n, float *y, const float *x);
    void (*zero)(size_t n, float *x);
    /* the optimisers' rules, by opt_kernels.h's index */
    opt_kernel_fn opt[OPT_NKERNELS];
    void (*sync)(void);                                /* work queued so far is done */
    /* the work this table queued (on the GPU: the legacy default stream)
     * is done - not libhpc's collectives, which run on streams of their
     * own; NULL where nothing is queued (the CPU) */
    void (*sync_compute)(void);
} train_dev_t;

const train_dev_t *train_dev_cpu(void);
/* The GPU this rank is bound to (the module hpckit/hpc-train-cuda.so,
 * cuda.cu, opened by cuda_load.c), or NULL with the reason recorded
 * (hpc_last_cause).
 * Collective: without a GPU, the module or cuBLAS on some rank, every
 * rank exits 2 with one line. */
#define TRAIN_CUDA_MODULE "hpc-train-cuda"
const train_dev_t *train_dev_cuda(void);

/* A device call failed: one line and the job ends (cpu.c: hpc_app_fatal;
 * a rank cannot go on, and the others may be inside a collective). */
void train_dev_fatal(const char *msg);

/* CPU kernels (act.c, loss.c, optim.c), also for the tests; the
 * optimisers' by opt_kernels.h's index */
void cpu_bias_act(act_t act, int m, int n, const float *b, float *z, float *keep);
void cpu_act_back(act_t act, int m, int n, const float *a, const float *keep, float *d, float *db,
                  float beta);
double cpu_loss(loss_kind_t kind, int m, int n, const float *yhat, const float *y, float scale,
                float *dy);
#define OPT_CPU_DECL(name) \
    void cpu_opt_##name(size_t n, float *p, const float *g, float *s0, float *s1, const opt_step_t *h);
OPT_KERNELS(OPT_CPU_DECL)
float cpu_tanh(float x);

#ifdef __cplusplus
}
#endif
#endif /* TRAIN_DEV_H */
