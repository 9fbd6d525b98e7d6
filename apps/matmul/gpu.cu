/* gpu.cu - hpc-matmul's block operations on the GPU: device memory,
 * copies, packing a panel of columns (cudaMemcpy2DAsync), and the GEMM
 * (cuBLAS on its own stream, asynchronous: the loop in summa.c moves the
 * next panel's broadcast while it runs, and sync() waits for it before a
 * buffer is reused).  No MPI here.
 *
 * Row-major C = A B is column-major C^T = B^T A^T: cuBLAS gets the
 * operands swapped and no transposes.  cuBLAS is opened at run time, for
 * --device cuda only (hpc_dlsyms_here: from this module, so its RUNPATH,
 * the CUDA runtime's folder, is searched): linked, it would cost every CPU run
 * about 200 MiB of resident memory.  This file is a module of its own,
 * hpckit/hpc-matmul-cuda.so (gpu_load.c opens it), so that hpc-matmul
 * needs no CUDA runtime to start.
 */
#include <cuda_runtime_api.h>
#include <cublas_v2.h>
#include <stdint.h>
#include <stdio.h>

extern "C" {
#include "mm_ops.h"
}
#include "hpc_dl.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* the cuBLAS calls used, from libcublas.so.<major> */
static struct {
    decltype(&cublasCreate_v2) create;
    decltype(&cublasSetStream_v2) set_stream;
    decltype(&cublasSgemm_v2) sgemm;
    decltype(&cublasDgemm_v2) dgemm;
} cb;

static cudaStream_t stream;
static cublasHandle_t handle;
static char why[256] = "no error";

static int check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return 0;
    snprintf(why, sizeof why, "%s: %s", what, cudaGetErrorString(e));
    return -1;
}

static int start(void)
{
    static const char *const names[] = {"cublasCreate_v2", "cublasSetStream_v2", "cublasSgemm_v2",
                                        "cublasDgemm_v2"};
    void *fns[4];
    if (handle) return 0;
    if (hpc_dlsyms_here("libcublas.so." STR(CUBLAS_VER_MAJOR), names, fns, 4, why, sizeof why) < 0) return -1;
    cb.create = (decltype(cb.create))fns[0];
    cb.set_stream = (decltype(cb.set_stream))fns[1];
    cb.sgemm = (decltype(cb.sgemm))fns[2];
    cb.dgemm = (decltype(cb.dgemm))fns[3];
    if (check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream") < 0) return -1;
    if (cb.create(&handle) != CUBLAS_STATUS_SUCCESS || cb.set_stream(handle, stream) != CUBLAS_STATUS_SUCCESS) {
        snprintf(why, sizeof why, "cuBLAS could not start");
        return -1;
    }
    return 0;
}

static void *g_alloc(size_t n)
{
    void *p = NULL;
    if (start() < 0 || check(cudaMalloc(&p, n), "cudaMalloc") < 0) return NULL;
    return p;
}

static void g_release(void *p) { cudaFree(p); }

static int g_upload(void *d, const void *s, size_t n)
{
    return check(cudaMemcpy(d, s, n, cudaMemcpyHostToDevice), "copy to the GPU");
}

static int g_download(void *d, const void *s, size_t n)
{
    return check(cudaMemcpy(d, s, n, cudaMemcpyDeviceToHost), "copy from the GPU");
}

/* the panel must be complete before it is broadcast: wait for the copy */
static int g_pack(void *dst, const void *src, int64_t rows, int64_t kb, int64_t ld, size_t es)
{
    if (check(cudaMemcpy2DAsync(dst, (size_t)kb * es, src, (size_t)ld * es, (size_t)kb * es, (size_t)rows,
                                cudaMemcpyDeviceToDevice, stream), "packing a panel") < 0)
        return -1;
    return check(cudaStreamSynchronize(stream), "packing a panel");
}

static int g_gemm(int dtype, int64_t rows, int64_t cols, int64_t kb, const void *a, const void *b, void *c)
{
    cublasStatus_t e;
    if (dtype == 1) {
        const float one = 1.0f;
        e = cb.sgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)cols, (int)rows, (int)kb, &one, (const float *)b,
                        (int)cols, (const float *)a, (int)kb, &one, (float *)c, (int)cols);
    } else {
        const double one = 1.0;
        e = cb.dgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)cols, (int)rows, (int)kb, &one, (const double *)b,
                        (int)cols, (const double *)a, (int)kb, &one, (double *)c, (int)cols);
    }
    if (e == CUBLAS_STATUS_SUCCESS) return 0;
    snprintf(why, sizeof why, "cuBLAS GEMM failed (status %d)", (int)e);
    return -1;
}

static int g_sync(void) { return check(cudaStreamSynchronize(stream), "GEMM"); }
static const char *g_why(void) { return why; }

static const mm_ops_t ops = {"cuda", g_alloc, g_release, g_upload, g_download, g_pack, g_gemm, g_sync, g_why};

/* The module's exports: the operations, once cuBLAS is open and its
 * stream made, else NULL; and the reason of the last failure (the
 * program records it as its error: no MPI header here for hpc.h's). */
extern "C" HPC_DL_EXPORT const mm_ops_t *matmul_cuda_ops(void)
{
    return start() < 0 ? NULL : &ops;
}

extern "C" HPC_DL_EXPORT const char *matmul_cuda_why(void)
{
    return why;
}
