/* module.c - the GPU module, PREFIX/lib/hpckit/libhpc-cuda.so: every call
 * libhpc makes into the CUDA runtime and NCCL, as the table of
 * gpu_ops.h.  libhpc-core opens it with dlopen (gpu_ops.c), so that
 * libhpc itself needs no CUDA, NCCL or GPU driver: only this module does.
 *
 * Each entry is the runtime's call with the arguments reshaped (void *
 * handles, hpc_dtype_t/hpc_op_t numbers mapped to NCCL's); the logic
 * that uses them (binding, the collectives' device steps, NCCL's
 * nonblocking set-up) stays in libhpc, where it is tested without a GPU.
 * This file needs nothing of libhpc, only its headers.
 */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include <cuda_runtime_api.h>
#ifdef HPC_HAVE_NCCL
#include <nccl.h>
#endif
#include "gpu_ops.h"
#include "hpc_dl.h"

/* the statuses libhpc names without the headers */
_Static_assert(GPU_ERR_INVALID_VALUE == (int)cudaErrorInvalidValue, "cudaErrorInvalidValue");
_Static_assert(GPU_ERR_INSUFFICIENT_DRIVER == (int)cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver");
_Static_assert(GPU_ERR_NO_DEVICE == (int)cudaErrorNoDevice, "cudaErrorNoDevice");
_Static_assert(GPU_ERR_NOT_READY == (int)cudaErrorNotReady, "cudaErrorNotReady");

/* coll/cuda.cu */
int coll_cuda_reduce(void *stream, int dt, int op, void *dst, const void *a, const void *b, size_t n);
int coll_cuda_scale(void *stream, int dt, void *buf, size_t n, int div);
int coll_cuda_wait_flag(void *stream, volatile unsigned *flag, volatile unsigned *ack);

/* ---- the CUDA runtime ---------------------------------------------- */
static const char *error_string(int s) { return cudaGetErrorString((cudaError_t)s); }
static const char *error_name(int s) { return cudaGetErrorName((cudaError_t)s); }
static int runtime_version(int *v) { return cudaRuntimeGetVersion(v); }
static int driver_version(int *v) { return cudaDriverGetVersion(v); }
static int device_count(int *n) { return cudaGetDeviceCount(n); }
static int set_device(int d) { return cudaSetDevice(d); }
static int get_device(int *d) { return cudaGetDevice(d); }
static int last_error(void) { return cudaGetLastError(); }

static int device_info(int dev, char *name, size_t len, size_t *mem)
{
    struct cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, dev);
    if (e != cudaSuccess) return e;
    snprintf(name, len, "%s", prop.name);
    *mem = prop.totalGlobalMem;
    return 0;
}

static int pci_bus_id(int dev, char *buf, int len)
{
    return cudaDeviceGetPCIBusId(buf, len, dev);
}

static int is_device_ptr(const void *p, int *yes)
{
    struct cudaPointerAttributes at;
    cudaError_t e = cudaPointerGetAttributes(&at, p);
    *yes = 0;
    if (e != cudaSuccess) {
        cudaGetLastError();       /* plain host memory on old runtimes */
        return e;
    }
    /* managed memory is reachable from the host: treat it as host */
    *yes = at.type == cudaMemoryTypeDevice;
    return 0;
}

static int dmalloc(void **p, size_t n) { return cudaMalloc(p, n); }
static int dfree(void *p) { return cudaFree(p); }
static int hmalloc(void **p, size_t n) { return cudaMallocHost(p, n); }
static int hfree(void *p) { return cudaFreeHost(p); }

static int host_alloc_mapped(void **host, void **dev, size_t n)
{
    void *h = NULL, *d = NULL;
    cudaError_t e = cudaHostAlloc(&h, n, cudaHostAllocMapped | cudaHostAllocPortable);
    if (e != cudaSuccess) return e;
    if ((e = cudaHostGetDevicePointer(&d, h, 0)) != cudaSuccess) {
        cudaFreeHost(h);
        return e;
    }
    *host = h;
    *dev = d;
    return 0;
}

static int copy(void *dst, const void *src, size_t n)
{
    return n ? cudaMemcpy(dst, src, n, cudaMemcpyDefault) : 0;
}

static int copy_async(void *dst, const void *src, size_t n, void *s)
{
    return cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, (cudaStream_t)s);
}

static int dmemset(void *p, int v, size_t n) { return cudaMemset(p, v, n); }

static int stream_create(void **out, int nonblocking)
{
    cudaStream_t s;
    cudaError_t e = cudaStreamCreateWithFlags(&s, nonblocking ? cudaStreamNonBlocking : cudaStreamDefault);
    if (e == cudaSuccess) *out = s;
    return e;
}

static int stream_destroy(void *s) { return cudaStreamDestroy((cudaStream_t)s); }
static int stream_sync(void *s) { return cudaStreamSynchronize((cudaStream_t)s); }
static int stream_wait_event(void *s, void *ev) { return cudaStreamWaitEvent((cudaStream_t)s, (cudaEvent_t)ev, 0); }

static int event_create(void **out)
{
    cudaEvent_t ev;
    cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    if (e == cudaSuccess) *out = ev;
    return e;
}

static int event_record(void *ev, void *s) { return cudaEventRecord((cudaEvent_t)ev, (cudaStream_t)s); }
static int event_query(void *ev) { return cudaEventQuery((cudaEvent_t)ev); }
static int event_destroy(void *ev) { return cudaEventDestroy((cudaEvent_t)ev); }
static int device_sync(void) { return cudaDeviceSynchronize(); }

/* ---- NCCL ---------------------------------------------------------- */
#ifdef HPC_HAVE_NCCL
_Static_assert(HPC_NCCL_IN_PROGRESS == (int)ncclInProgress, "ncclInProgress");
_Static_assert(HPC_NCCL_INVALID_ARGUMENT == (int)ncclInvalidArgument, "ncclInvalidArgument");
_Static_assert(HPC_NCCL_ID_BYTES == sizeof(ncclUniqueId), "ncclUniqueId");

/* hpc_dtype_t and hpc_op_t by number (hpc_coll.h: no MPI header here) */
static ncclDataType_t type(int dt)
{
    static const ncclDataType_t t[] = {ncclInt32, ncclInt64, ncclFloat32, ncclFloat64, ncclFloat16,
                                       ncclBfloat16};
    return dt >= 0 && dt < 6 ? t[dt] : ncclNumTypes;
}

static ncclRedOp_t redop(int op)
{
    /* SUM, PROD, MIN, MAX; AVG is SUM followed by libhpc's average kernel */
    static const ncclRedOp_t o[] = {ncclSum, ncclProd, ncclMin, ncclMax, ncclSum};
    return op >= 0 && op < 5 ? o[op] : ncclNumOps;
}

static int nc_version(int *v) { return ncclGetVersion(v); }
static const char *nc_error_string(int s) { return ncclGetErrorString((ncclResult_t)s); }
static const char *nc_last_error(void *c) { return ncclGetLastError((ncclComm_t)c); }
static int nc_unique_id(void *id) { return ncclGetUniqueId((ncclUniqueId *)id); }

static int nc_init(void **out, int nranks, const void *id, int rank)
{
    ncclUniqueId u;
    memcpy(&u, id, sizeof u);
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    ncclComm_t c = NULL;
    ncclResult_t e = ncclCommInitRankConfig(&c, nranks, u, rank, &cfg);
    *out = c;
    return e;
}

static int nc_async_error(void *c, int *st)
{
    ncclResult_t r = ncclSuccess;
    ncclResult_t e = ncclCommGetAsyncError((ncclComm_t)c, &r);
    *st = r;
    return e;
}

static int nc_finalize(void *c) { return ncclCommFinalize((ncclComm_t)c); }
static int nc_destroy(void *c) { return ncclCommDestroy((ncclComm_t)c); }
static int nc_abort(void *c) { return ncclCommAbort((ncclComm_t)c); }
static int nc_group_start(void) { return ncclGroupStart(); }
static int nc_group_end(void) { return ncclGroupEnd(); }

static int nc_allreduce(const void *s, void *r, size_t n, int dt, int op, void *c, void *st)
{
    return ncclAllReduce(s, r, n, type(dt), redop(op), (ncclComm_t)c, (cudaStream_t)st);
}

static int nc_bcast(const void *s, void *r, size_t n, int dt, int root, void *c, void *st)
{
    return ncclBroadcast(s, r, n, type(dt), root, (ncclComm_t)c, (cudaStream_t)st);
}

static int nc_reduce(const void *s, void *r, size_t n, int dt, int op, int root, void *c, void *st)
{
    return ncclReduce(s, r, n, type(dt), redop(op), root, (ncclComm_t)c, (cudaStream_t)st);
}

static int nc_allgather(const void *s, void *r, size_t n, int dt, void *c, void *st)
{
    return ncclAllGather(s, r, n, type(dt), (ncclComm_t)c, (cudaStream_t)st);
}

static int nc_reduce_scatter(const void *s, void *r, size_t n, int dt, int op, void *c, void *st)
{
    return ncclReduceScatter(s, r, n, type(dt), redop(op), (ncclComm_t)c, (cudaStream_t)st);
}

static int nc_send(const void *b, size_t n, int dt, int peer, void *c, void *st)
{
    return ncclSend(b, n, type(dt), peer, (ncclComm_t)c, (cudaStream_t)st);
}

static int nc_recv(void *b, size_t n, int dt, int peer, void *c, void *st)
{
    return ncclRecv(b, n, type(dt), peer, (ncclComm_t)c, (cudaStream_t)st);
}
#endif

static const hpc_gpu_ops_t ops = {
    .version = HPC_GPU_OPS_VERSION,
    .error_string = error_string,
    .error_name = error_name,
    .runtime_version = runtime_version,
    .driver_version = driver_version,
    .device_count = device_count,
    .set_device = set_device,
    .get_device = get_device,
    .device_info = device_info,
    .pci_bus_id = pci_bus_id,
    .is_device_ptr = is_device_ptr,
    .last_error = last_error,
    .malloc = dmalloc,
    .free = dfree,
    .malloc_host = hmalloc,
    .free_host = hfree,
    .host_alloc_mapped = host_alloc_mapped,
    .memcpy = copy,
    .memcpy_async = copy_async,
    .memset = dmemset,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .stream_sync = stream_sync,
    .stream_wait_event = stream_wait_event,
    .event_create = event_create,
    .event_record = event_record,
    .event_query = event_query,
    .event_destroy = event_destroy,
    .device_sync = device_sync,
    .reduce = coll_cuda_reduce,
    .scale = coll_cuda_scale,
    .wait_flag = coll_cuda_wait_flag,
#ifdef HPC_HAVE_NCCL
    .nccl_version = nc_version,
    .nccl_error_string = nc_error_string,
    .nccl_last_error = nc_last_error,
    .nccl_unique_id = nc_unique_id,
    .nccl_init = nc_init,
    .nccl_async_error = nc_async_error,
    .nccl_finalize = nc_finalize,
    .nccl_destroy = nc_destroy,
    .nccl_abort = nc_abort,
    .nccl_group_start = nc_group_start,
    .nccl_group_end = nc_group_end,
    .nccl_allreduce = nc_allreduce,
    .nccl_bcast = nc_bcast,
    .nccl_reduce = nc_reduce,
    .nccl_allgather = nc_allgather,
    .nccl_reduce_scatter = nc_reduce_scatter,
    .nccl_send = nc_send,
    .nccl_recv = nc_recv,
#endif
};

HPC_DL_EXPORT const hpc_gpu_ops_t *hpc_gpu_module_ops(int version)
{
    return version == HPC_GPU_OPS_VERSION ? &ops : NULL;
}
