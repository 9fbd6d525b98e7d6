/* device.c - device memory for the collectives: pointer kinds, scratch
 * buffers, copies and the reduction kernels' launches (cuda.cu), all
 * on one CUDA stream per communicator.  Without CUDA every buffer is host
 * memory and the device entry points report HPC_ERR_NOGPU.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"
#include "internal.h"

#include <stdlib.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>      /* MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support */
#endif

/* Asked of MPI once: it is asked for every call on device memory. */
int hpc_coll_cuda_aware(void)
{
    static int mpi = -1;
    int e = coll_settings()->cuda_aware;
    if (e >= 0) return e;
    if (mpi < 0) {
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40000000
        mpi = MPIX_Query_cuda_support() != 0;
#elif defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
        mpi = MPIX_Query_cuda_support() != 0;
#else
        mpi = 0;
#endif
    }
    return mpi;
}

#ifdef HPC_HAVE_CUDA
#include <cuda_runtime_api.h>


/* Is there any device at all?  Asked once: without a GPU (or driver) every
 * pointer is host memory and cudaPointerGetAttributes is never called. */
static int have_devices(void)
{
    static int n = -1;
    if (n < 0) {
        int c = 0;
        if (cudaGetDeviceCount(&c) != cudaSuccess) {
            cudaGetLastError();
            c = 0;
        }
        n = c;
    }
    return n > 0;
}

int coll_is_device_ptr(const void *p)
{
    if (!p || !have_devices()) return 0;
    struct cudaPointerAttributes at;
    if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
        cudaGetLastError();       /* plain host memory on old runtimes */
        return 0;
    }
    /* managed memory is reachable from the host: treat it as host */
    return at.type == cudaMemoryTypeDevice;
}

static void dev_comm_free(coll_comm_t *cc)
{
    if (cc->stream) cudaStreamDestroy((cudaStream_t)cc->stream);
    if (cc->nbstream) cudaStreamDestroy((cudaStream_t)cc->nbstream);
    cc->stream = cc->nbstream = NULL;
}

/* cc's streams for its device work.  The plain one is a blocking stream
 * (not cudaStreamNonBlocking) on purpose: calls without a stream promise
 * legacy default stream semantics, and work on it waits for the legacy
 * default stream, so data a caller's kernels wrote there is complete
 * before we copy, reduce or hand it to NCCL.  Stream-ordered calls order
 * themselves with events instead and use the non-blocking one, which no
 * work on the legacy stream (a stream waiting for them, say) can hold up. */
int coll_dev_stream(coll_comm_t *cc, int nonblocking, void **out)
{
    void **sp = nonblocking ? &cc->nbstream : &cc->stream;
    if (!*sp) {
        cudaStream_t s;
        if (nonblocking) HPC_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        else HPC_CUDA(cudaStreamCreate(&s));
        *sp = s;
        cc->hook[COLL_HOOK_DEVICE].fini = dev_comm_free;
    }
    *out = *sp;
    return 0;
}

int coll_dev_reduce(void *stream, hpc_dtype_t dt, hpc_op_t op, void *dst, const void *a,
                    const void *b, size_t n)
{
    int e = coll_cuda_reduce(stream, (int)dt, (int)op, dst, a, b, n);
    if (e != cudaSuccess)
        return HPC_ERR(HPC_ERR_CUDA, "reduction kernel (%s, %s, %zu elements): %s",
                       hpc_dtype_name(dt), hpc_op_name(op), n, cudaGetErrorString((cudaError_t)e));
    return 0;
}

int coll_dev_scale(void *stream, hpc_dtype_t dt, void *buf, size_t n, int div)
{
    int e = coll_cuda_scale(stream, (int)dt, buf, n, div);
    if (e != cudaSuccess)
        return HPC_ERR(HPC_ERR_CUDA, "average kernel (%s): %s", hpc_dtype_name(dt),
                       cudaGetErrorString((cudaError_t)e));
    return 0;
}

int coll_dev_copy(void *stream, void *dst, const void *src, size_t bytes)
{
    HPC_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, (cudaStream_t)stream));
    return 0;
}

int coll_dev_alloc(size_t bytes, int kind, void **out)
{
    void *p = NULL;
    if (kind == 1) HPC_CUDA(cudaMallocHost(&p, bytes));
    else HPC_CUDA(cudaMalloc(&p, bytes));
    *out = p;
    return 0;
}

void coll_dev_free(void *p, int kind)
{
    if (kind == 1) cudaFreeHost(p);
    else cudaFree(p);
}

#else /* no CUDA */

int coll_is_device_ptr(const void *p)
{
    (void)p;
    return 0;
}
int coll_dev_stream(coll_comm_t *cc, int nonblocking, void **out)
{
    (void)cc; (void)nonblocking; (void)out;
    return HPC_ERR(HPC_ERR_NOGPU, "CUDA stream in a build without CUDA");
}
int coll_dev_reduce(void *stream, hpc_dtype_t dt, hpc_op_t op, void *dst, const void *a,
                    const void *b, size_t n)
{
    (void)stream; (void)dt; (void)op; (void)dst; (void)a; (void)b; (void)n;
    return HPC_ERR(HPC_ERR_NOGPU, "device reduction in a build without CUDA");
}
int coll_dev_scale(void *stream, hpc_dtype_t dt, void *buf, size_t n, int div)
{
    (void)stream; (void)dt; (void)buf; (void)n; (void)div;
    return HPC_ERR(HPC_ERR_NOGPU, "device scaling in a build without CUDA");
}
int coll_dev_copy(void *stream, void *dst, const void *src, size_t bytes)
{
    (void)stream; (void)dst; (void)src; (void)bytes;
    return HPC_ERR(HPC_ERR_NOGPU, "device copy in a build without CUDA");
}
int coll_dev_alloc(size_t bytes, int kind, void **out)
{
    (void)bytes; (void)kind; (void)out;
    return HPC_ERR(HPC_ERR_NOGPU, "device or pinned memory in a build without CUDA");
}
void coll_dev_free(void *p, int kind)
{
    (void)p; (void)kind;
}
#endif

/* Synchronous copy between any memory kinds (self-test, benchmarks). */
int coll_dev_memcpy(void *dst, const void *src, size_t bytes)
{
#ifdef HPC_HAVE_CUDA
    if (bytes == 0) return 0;
    cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyDefault);
    if (e != cudaSuccess) return HPC_ERR(HPC_ERR_CUDA, "cudaMemcpy: %s", cudaGetErrorString(e));
    return 0;
#else
    (void)dst; (void)src; (void)bytes;
    return HPC_ERR(HPC_ERR_NOGPU, "device copy in a build without CUDA");
#endif
}

/* Number of CUDA devices this process sees (0 without CUDA). */
int coll_dev_count(void)
{
#ifdef HPC_HAVE_CUDA
    return have_devices() ? 1 : 0;
#else
    return 0;
#endif
}
