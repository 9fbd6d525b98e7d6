/* mm_ops.h - the block operations of hpc-matmul's SUMMA loop (summa.c), on
 * the CPU (summa.c) or the GPU (gpu.cu).  Plain C, no MPI: gpu.cu includes
 * it too.
 *
 * Memory, copies in and out, packing columns [k0, k0+kb) of a rows x ld
 * block into a rows x kb panel, C (rows x cols) += A (rows x kb) B (kb x
 * cols) - asynchronous on the GPU - and waiting for it.  0, or -1 with a
 * reason from why().
 */
#ifndef MM_OPS_H
#define MM_OPS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *name;
    void *(*alloc)(size_t bytes);
    void (*release)(void *p);
    int (*upload)(void *dst, const void *src, size_t bytes);
    int (*download)(void *dst, const void *src, size_t bytes);
    int (*pack)(void *dst, const void *src, int64_t rows, int64_t kb, int64_t ld, size_t es);
    int (*gemm)(int dtype, int64_t rows, int64_t cols, int64_t kb, const void *a, const void *b, void *c);
    int (*sync)(void);
    const char *(*why)(void);
} mm_ops_t;

/* The GPU's operations: gpu.cu, the module hpckit/hpc-matmul-cuda.so,
 * whose matmul_cuda_ops() this is, opened by gpu_load.c.  Collective:
 * without a GPU, the module or cuBLAS on some rank, every rank exits 2
 * with one line.  dtype: 0 float64, 1 float32. */
#define MM_CUDA_MODULE "hpc-matmul-cuda"
const mm_ops_t *mm_gpu_ops(void);

#endif
