/* module.c - the GPU module, PREFIX/lib/hpckit/libhpc-cuda.so: every call
 * libhpc makes into the CUDA runtime and NCCL, as the table of
 * gpu_ops.h.  It links the CUDA runtime; NCCL, which is not part of the
 * CUDA toolkit, it opens itself (HPC_NCCL_LIBRARY, found through this
 * module's RUNPATH too), so a node with CUDA but no NCCL runs everything
 * but the NCCL rows on its GPU, and nccl_why says why they are missing.  libhpc-core opens it with dlopen (gpu_ops.c), so that
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
#include <stdlib.h>
#include <cuda.h>               /* types only: CUresult, CUdevice (no libcuda link) */
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
static int dmalloc_async(void **p, size_t n, void *s) { return cudaMallocAsync(p, n, (cudaStream_t)s); }
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

/* ---- whether a context exists (without making one) ----------------- */
typedef CUresult (*primary_state_fn)(CUdevice dev, unsigned int *flags, int *active);

static int context_active(int *yes)
{
    static primary_state_fn state;
    static int looked;
    if (!looked) {
        enum cudaDriverEntryPointQueryResult q;
        void *fn = NULL;
        if (cudaGetDriverEntryPointByVersion("cuDevicePrimaryCtxGetState", &fn, 12000, cudaEnableDefault, &q) ==
                cudaSuccess && q == cudaDriverEntryPointSuccess)
            state = (primary_state_fn)fn;
        cudaGetLastError();
        looked = 1;
    }
    if (!state) return GPU_ERR_INVALID_VALUE;   /* cannot tell */
    int n = 0;
    *yes = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) return cudaGetLastError();
    for (int d = 0; d < n && !*yes; d++) {
        unsigned int flags = 0;
        int active = 0;
        if (state(d, &flags, &active) == CUDA_SUCCESS && active) *yes = 1;
    }
    return 0;
}

/* ---- NCCL, opened at run time ---------------------------------------- */
static char nccl_missing[512] = "this hpckit was built without NCCL";
static const char *nccl_why(void) { return nccl_missing; }

#ifdef HPC_HAVE_NCCL
_Static_assert(HPC_NCCL_IN_PROGRESS == (int)ncclInProgress, "ncclInProgress");
_Static_assert(HPC_NCCL_INVALID_ARGUMENT == (int)ncclInvalidArgument, "ncclInvalidArgument");
_Static_assert(HPC_NCCL_ID_BYTES == sizeof(ncclUniqueId), "ncclUniqueId");

/* NCCL's calls, from the library HPC_NCCL_LIBRARY names (libnccl.so.<major>
 * by default), in the order of nccl_names */
static struct {
    __typeof__(&ncclGetVersion) GetVersion;
    __typeof__(&ncclGetErrorString) GetErrorString;
    __typeof__(&ncclGetLastError) GetLastError;
    __typeof__(&ncclGetUniqueId) GetUniqueId;
    __typeof__(&ncclCommInitRankConfig) CommInitRankConfig;
    __typeof__(&ncclCommGetAsyncError) CommGetAsyncError;
    __typeof__(&ncclCommFinalize) CommFinalize;
    __typeof__(&ncclCommDestroy) CommDestroy;
    __typeof__(&ncclCommAbort) CommAbort;
    __typeof__(&ncclGroupStart) GroupStart;
    __typeof__(&ncclGroupEnd) GroupEnd;
    __typeof__(&ncclAllReduce) AllReduce;
    __typeof__(&ncclBroadcast) Broadcast;
    __typeof__(&ncclReduce) Reduce;
    __typeof__(&ncclAllGather) AllGather;
    __typeof__(&ncclReduceScatter) ReduceScatter;
    __typeof__(&ncclSend) Send;
    __typeof__(&ncclRecv) Recv;
} nc;
static const char *const nccl_names[] = {
    "ncclGetVersion", "ncclGetErrorString", "ncclGetLastError", "ncclGetUniqueId", "ncclCommInitRankConfig",
    "ncclCommGetAsyncError", "ncclCommFinalize", "ncclCommDestroy", "ncclCommAbort", "ncclGroupStart",
    "ncclGroupEnd", "ncclAllReduce", "ncclBroadcast", "ncclReduce", "ncclAllGather", "ncclReduceScatter",
    "ncclSend", "ncclRecv"};
_Static_assert(sizeof nc == sizeof nccl_names / sizeof *nccl_names * sizeof(void *), "one name per call");

#define STR_(x) #x
#define STR(x) STR_(x)

/* 0 with nc filled, or -1 with nccl_missing saying why */
static int nccl_open(void)
{
    const char *lib = getenv("HPC_NCCL_LIBRARY");
    char why[400];
    void *fns[sizeof nccl_names / sizeof *nccl_names];
    if (!lib || !*lib) lib = "libnccl.so." STR(NCCL_MAJOR);
    if (hpc_dlsyms_here(lib, nccl_names, fns, (int)(sizeof fns / sizeof *fns), why, sizeof why) < 0) {
        snprintf(nccl_missing, sizeof nccl_missing, "NCCL cannot be loaded: %s", why);
        return -1;
    }
    memcpy(&nc, fns, sizeof nc);
    nccl_missing[0] = '\0';
    return 0;
}

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

static int nc_version(int *v) { return nc.GetVersion(v); }
static const char *nc_error_string(int s) { return nc.GetErrorString((ncclResult_t)s); }
static const char *nc_last_error(void *c) { return nc.GetLastError((ncclComm_t)c); }
static int nc_unique_id(void *id) { return nc.GetUniqueId((ncclUniqueId *)id); }

static int nc_init(void **out, int nranks, const void *id, int rank)
{
    ncclUniqueId u;
    memcpy(&u, id, sizeof u);
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    ncclComm_t c = NULL;
    ncclResult_t e = nc.CommInitRankConfig(&c, nranks, u, rank, &cfg);
    *out = c;
    return e;
}

static int nc_async_error(void *c, int *st)
{
    ncclResult_t r = ncclSuccess;
    ncclResult_t e = nc.CommGetAsyncError((ncclComm_t)c, &r);
    *st = r;
    return e;
}

static int nc_finalize(void *c) { return nc.CommFinalize((ncclComm_t)c); }
static int nc_destroy(void *c) { return nc.CommDestroy((ncclComm_t)c); }
static int nc_abort(void *c) { return nc.CommAbort((ncclComm_t)c); }
static int nc_group_start(void) { return nc.GroupStart(); }
static int nc_group_end(void) { return nc.GroupEnd(); }

static int nc_allreduce(const void *s, void *r, size_t n, int dt, int op, void *c, void *st)
{
    return nc.AllReduce(s, r, n, type(dt), redop(op), (ncclComm_t)c, (cudaStream_t)st);
}

static int nc_bcast(const void *s, void *r, size_t n, int dt, int root, void *c, void *st)
{
    return nc.Broadcast(s, r, n, type(dt), root, (ncclComm_t)c, (cudaStream_t)st);
}

static int nc_reduce(const void *s, void *r, size_t n, int dt, int op, int root, void *c, void *st)
{
    return nc.Reduce(s, r, n, type(dt), redop(op), root, (ncclComm_t)c, (cudaStream_t)st);
}

static int nc_allgather(const void *s, void *r, size_t n, int dt, void *c, void *st)
{
    return nc.AllGather(s, r, n, type(dt), (ncclComm_t)c, (cudaStream_t)st);
}

static int nc_reduce_scatter(const void *s, void *r, size_t n, int dt, int op, void *c, void *st)
{
    return nc.ReduceScatter(s, r, n, type(dt), redop(op), (ncclComm_t)c, (cudaStream_t)st);
}

static int nc_send(const void *b, size_t n, int dt, int peer, void *c, void *st)
{
    return nc.Send(b, n, type(dt), peer, (ncclComm_t)c, (cudaStream_t)st);
}

static int nc_recv(void *b, size_t n, int dt, int peer, void *c, void *st)
{
    return nc.Recv(b, n, type(dt), peer, (ncclComm_t)c, (cudaStream_t)st);
}
#endif

static hpc_gpu_ops_t ops = {
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
    .context_active = context_active,
    .malloc_async = dmalloc_async,
    .nccl_why = nccl_why,
};

/* the NCCL entries, where NCCL loads (once: the table is handed out once) */
static void fill_nccl(void)
{
#ifdef HPC_HAVE_NCCL
    if (nccl_open() < 0) return;
    ops.nccl_version = nc_version;
    ops.nccl_error_string = nc_error_string;
    ops.nccl_last_error = nc_last_error;
    ops.nccl_unique_id = nc_unique_id;
    ops.nccl_init = nc_init;
    ops.nccl_async_error = nc_async_error;
    ops.nccl_finalize = nc_finalize;
    ops.nccl_destroy = nc_destroy;
    ops.nccl_abort = nc_abort;
    ops.nccl_group_start = nc_group_start;
    ops.nccl_group_end = nc_group_end;
    ops.nccl_allreduce = nc_allreduce;
    ops.nccl_bcast = nc_bcast;
    ops.nccl_reduce = nc_reduce;
    ops.nccl_allgather = nc_allgather;
    ops.nccl_reduce_scatter = nc_reduce_scatter;
    ops.nccl_send = nc_send;
    ops.nccl_recv = nc_recv;
#endif
}

HPC_DL_EXPORT const hpc_gpu_ops_t *hpc_gpu_module_ops(int version)
{
    static int filled;
    if (version != HPC_GPU_OPS_VERSION) return NULL;
    if (!filled) fill_nccl();
    filled = 1;
    return &ops;
}
