/* fake_gpu.h - a stand-in for libhpc's GPU module (gpu_ops.h), for unit
 * tests of the device logic on machines without a GPU (issue 23: error
 * mapping, NCCL's in-progress handling, deferred frees, the stream gates).
 *
 * Not a model of CUDA: only the calls libhpc makes, each doing the least
 * that lets the logic around it run, and each logged (fake.log) so a test
 * can check what libhpc asked for and in which order:
 *  - "device" memory is host memory the fake hands out, which
 *    is_device_ptr recognises: a collective on it really moves data, with
 *    MPI on the host; copies and kernels (sum, prod, min, max, the AVG
 *    division) run at once on the host;
 *  - events are done at once, except those recorded on the legacy stream
 *    while fake.hold_legacy is set, and those behind a stream-wait kernel
 *    that has not run (fake_run_kernels runs the ones whose flag is set);
 *    a stream marked broken fails every event recorded on it;
 *  - NCCL is a stub of a nonblocking communicator: init and every group
 *    are in progress for fake.init_polls / fake.group_polls looks at
 *    ncclCommGetAsyncError, and until then a call on the communicator is
 *    refused with ncclInvalidArgument (counted in fake.refused), as NCCL
 *    does; its collectives move data only on one rank (a copy);
 *  - the runtime's own statuses: device_count returns fake.count_status
 *    and fake.ndev, driver_version fake.driver.
 * Include it once; install with fake_install() before hpc_init.
 */
#ifndef FAKE_GPU_H
#define FAKE_GPU_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "gpu_ops.h"
#include "hpc_testing.h"

enum { FAKE_LAUNCH_FAILURE = 719 };   /* cudaErrorLaunchFailure */

typedef struct { int recorded, legacy, waiter; void *stream; } fake_ev_t;
typedef struct { int broken; } fake_stream_t;

static struct {
    int count_status, ndev, driver, runtime;
    char log[1 << 16];
    size_t loglen;
    struct { char *p; size_t n; } dev[512];
    int ndevmem, frees, host_frees;
    int hold_legacy;
    struct { volatile unsigned *flag, *ack; void *stream; int done; } w[256];
    int nw;
    int nccl, init_polls, group_polls, in_progress, depth, group_calls, refused, ncalls;
    /* contexts: set_device makes one (as cudaSetDevice does since CUDA
     * 12); set_status fails it (46: cudaErrorDevicesUnavailable, a GPU in
     * exclusive-process mode held by another process); is_device_ptr
     * counts its queries */
    int ctx, set_calls, set_status, ptr_queries;
} fake = {.count_status = GPU_OK, .ndev = 1, .driver = 13000, .runtime = 13000, .nccl = 1};

static void fake_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (fake.loglen < sizeof fake.log - 128) {
        int n = vsnprintf(fake.log + fake.loglen, sizeof fake.log - fake.loglen, fmt, ap);
        if (n > 0) fake.loglen += (size_t)n;
        fake.log[fake.loglen++] = ' ';
        fake.log[fake.loglen] = '\0';
    }
    va_end(ap);
}

/* ---- the runtime ---- */
static const char *f_error_string(int s)
{
    return s == GPU_ERR_NO_DEVICE ? "no CUDA-capable device is detected"
           : s == GPU_ERR_INSUFFICIENT_DRIVER ? "CUDA driver version is insufficient for CUDA runtime version"
           : s == GPU_ERR_NOT_READY ? "device not ready" : "fake error";
}
static const char *f_error_name(int s)
{
    return s == GPU_ERR_NO_DEVICE ? "cudaErrorNoDevice"
           : s == GPU_ERR_INSUFFICIENT_DRIVER ? "cudaErrorInsufficientDriver"
           : s == GPU_ERR_NOT_READY ? "cudaErrorNotReady" : "cudaErrorFake";
}
static int f_runtime_version(int *v) { *v = fake.runtime; return 0; }
static int f_driver_version(int *v) { *v = fake.driver; return 0; }
static int f_device_count(int *n) { *n = fake.count_status == GPU_OK ? fake.ndev : 0; return fake.count_status; }
static int f_set_device(int d)
{
    fake_log("set_device(%d)", d);
    fake.set_calls++;
    if (fake.set_status) return fake.set_status;
    fake.ctx = 1;
    return 0;
}
static int f_context_active(int *yes) { *yes = fake.ctx; return 0; }
static int f_get_device(int *d) { *d = 0; return 0; }
static int f_device_info(int dev, char *name, size_t len, size_t *mem)
{
    snprintf(name, len, "Fake GPU %d", dev);
    *mem = (size_t)1 << 34;
    return 0;
}
static int f_pci_bus_id(int dev, char *buf, int len)
{
    int r = 0, up = 0;
    MPI_Initialized(&up);                /* one GPU per rank: by MPI's rank, or */
    if (up) MPI_Comm_rank(MPI_COMM_WORLD, &r);
    else {                               /* the launcher's (hpc_init binds before MPI_Init) */
        const char *v = getenv("PMI_RANK") ? getenv("PMI_RANK") : getenv("OMPI_COMM_WORLD_RANK");
        if (v) r = atoi(v);
    }
    snprintf(buf, (size_t)len, "0000:%02x:%02x.0", r, dev);
    return 0;
}
static int f_is_device_ptr(const void *p, int *yes)
{
    *yes = 0;
    fake.ptr_queries++;
    for (int i = 0; i < fake.ndevmem; i++)
        if ((const char *)p >= fake.dev[i].p && (const char *)p < fake.dev[i].p + fake.dev[i].n) *yes = 1;
    return 0;
}
static int f_last_error(void) { return 0; }
static int f_malloc(void **p, size_t n)
{
    if (fake.ndevmem == 512 || !(*p = calloc(1, n ? n : 1))) return 2;   /* cudaErrorMemoryAllocation */
    fake.dev[fake.ndevmem].p = *p;
    fake.dev[fake.ndevmem++].n = n ? n : 1;
    fake.ctx = 1;                        /* memory lives in a context */
    fake_log("malloc");
    return 0;
}
static int f_free(void *p)
{
    for (int i = 0; i < fake.ndevmem; i++)
        if (fake.dev[i].p == p) fake.dev[i] = fake.dev[--fake.ndevmem];
    fake.frees++;
    fake_log("free");
    free(p);
    return 0;
}
static int f_malloc_host(void **p, size_t n)
{
    fake.ctx = 1;
    fake_log("malloc_host");
    *p = calloc(1, n ? n : 1);
    return *p ? 0 : 2;
}
static int f_malloc_async(void **p, size_t n, void *s)
{
    (void)s;
    int e = f_malloc(p, n);
    fake_log("malloc_async");
    return e;
}
static int f_free_host(void *p) { fake.host_frees++; fake_log("free_host"); free(p); return 0; }
static int f_host_alloc_mapped(void **h, void **d, size_t n)
{
    fake.ctx = 1;
    *h = *d = calloc(1, n);
    return *h ? 0 : 2;
}
static int f_memcpy(void *dst, const void *src, size_t n) { memmove(dst, src, n); return 0; }
static int f_memcpy_async(void *dst, const void *src, size_t n, void *s)
{
    fake_log("copy(%p)", s);
    memmove(dst, src, n);
    return 0;
}
static int f_memset(void *p, int v, size_t n) { memset(p, v, n); return 0; }
static int f_stream_create(void **s, int nonblocking)
{
    fake.ctx = 1;
    *s = calloc(1, sizeof(fake_stream_t));
    fake_log("stream_create(%p,%s)", *s, nonblocking ? "nonblocking" : "blocking");
    return 0;
}
static int f_stream_destroy(void *s) { free(s); return 0; }
static int f_stream_sync(void *s) { (void)s; return 0; }
static int f_stream_wait_event(void *s, void *ev)
{
    fake_log("wait(%p,%s)", s, ((fake_ev_t *)ev)->legacy ? "legacy" : "event");
    return 0;
}
static int f_event_create(void **ev) { *ev = calloc(1, sizeof(fake_ev_t)); return 0; }
static int f_event_record(void *e, void *s)
{
    fake_ev_t *ev = e;
    ev->recorded = 1;
    ev->legacy = s == NULL;
    ev->stream = s;
    /* behind a stream-wait kernel that has not run yet */
    ev->waiter = -1;
    for (int i = 0; i < fake.nw; i++)
        if (fake.w[i].stream == s && s && !fake.w[i].done) ev->waiter = i;
    fake_log("record(%s)", s ? "stream" : "legacy");
    return 0;
}
static int f_event_query(void *e)
{
    fake_ev_t *ev = e;
    if (!ev->recorded) return 0;
    if (ev->stream && ((fake_stream_t *)ev->stream)->broken) return FAKE_LAUNCH_FAILURE;
    if (ev->legacy && fake.hold_legacy) return GPU_ERR_NOT_READY;
    if (ev->waiter >= 0 && !fake.w[ev->waiter].done) return GPU_ERR_NOT_READY;
    return 0;
}
static int f_event_destroy(void *e) { free(e); return 0; }
static int f_device_sync(void) { return 0; }

#define FAKE_RED(T)                                                                   \
    do {                                                                              \
        T *d = dst;                                                                   \
        const T *x = a, *y = b;                                                       \
        for (size_t i = 0; i < n; i++)                                                \
            d[i] = op == 1 ? x[i] * y[i] : op == 2 ? (y[i] < x[i] ? y[i] : x[i])      \
                 : op == 3 ? (y[i] > x[i] ? y[i] : x[i]) : x[i] + y[i];               \
    } while (0)
static int f_reduce(void *s, int dt, int op, void *dst, const void *a, const void *b, size_t n)
{
    fake_log("reduce(%p)", s);
    switch (dt) {
    case 0: FAKE_RED(int32_t); break;
    case 1: FAKE_RED(int64_t); break;
    case 2: FAKE_RED(float); break;
    case 3: FAKE_RED(double); break;
    default: return GPU_ERR_INVALID_VALUE;
    }
    return 0;
}
static int f_scale(void *s, int dt, void *buf, size_t n, int div)
{
    fake_log("scale(%p)", s);
    for (size_t i = 0; i < n; i++) {
        if (dt == 2) ((float *)buf)[i] /= (float)div;
        else if (dt == 3) ((double *)buf)[i] /= div;
        else return GPU_ERR_INVALID_VALUE;
    }
    return 0;
}
static int f_wait_flag(void *s, volatile unsigned *flag, volatile unsigned *ack)
{
    if (fake.nw == 256) return GPU_ERR_INVALID_VALUE;
    fake.w[fake.nw].flag = flag;
    fake.w[fake.nw].ack = ack;
    fake.w[fake.nw].stream = s;
    fake.w[fake.nw++].done = 0;
    fake_log("wait_flag(%p)", s);
    return 0;
}
/* the stream-wait kernels whose flag the host has set run to their end */
static inline int fake_run_kernels(void)
{
    int n = 0;
    for (int i = 0; i < fake.nw; i++)
        if (!fake.w[i].done && *fake.w[i].flag) {
            *fake.w[i].ack = 1;
            fake.w[i].done = 1;
            n++;
        }
    return n;
}

/* ---- the NCCL stub ---- */
static int f_nc_version(int *v) { *v = 22703; return 0; }
static const char *f_nc_error_string(int s) { return s == HPC_NCCL_INVALID_ARGUMENT ? "invalid argument (stub)" : "stub error"; }
static const char *f_nc_last_error(void *c) { (void)c; return ""; }
static int f_nc_unique_id(void *id) { memset(id, 7, HPC_NCCL_ID_BYTES); return 0; }
static int f_nc_init(void **c, int n, const void *id, int r)
{
    (void)id;
    *c = calloc(1, 8);
    fake.in_progress = fake.init_polls;
    fake_log("nccl_init(%d/%d)", r, n);
    return fake.in_progress ? HPC_NCCL_IN_PROGRESS : 0;
}
static int f_nc_async_error(void *c, int *st)
{
    (void)c;
    if (fake.in_progress > 0) {
        fake.in_progress--;
        *st = HPC_NCCL_IN_PROGRESS;
    } else {
        *st = 0;
    }
    return 0;
}
static int f_nc_finalize(void *c) { (void)c; return 0; }
static int f_nc_destroy(void *c) { free(c); return 0; }
static int f_nc_abort(void *c) { free(c); return 0; }
/* NCCL refuses any call on a communicator whose last one is in progress */
static int nc_busy(const char *what)
{
    if (fake.in_progress <= 0) return 0;
    fake.refused++;
    fake_log("REFUSED:%s", what);
    return HPC_NCCL_INVALID_ARGUMENT;
}
static int f_nc_group_start(void)
{
    int e = nc_busy("group_start");
    if (!e && fake.depth++ == 0) fake.group_calls = 0;
    return e;
}
static int f_nc_group_end(void)
{
    if (fake.depth <= 0) return HPC_NCCL_INVALID_ARGUMENT;
    if (--fake.depth || !fake.group_calls) return 0;
    fake.in_progress = fake.group_polls;
    fake_log("group_end(%s)", fake.in_progress ? "in progress" : "done");
    return fake.in_progress ? HPC_NCCL_IN_PROGRESS : 0;
}
static int nc_call(const char *what, const void *s, void *r, size_t bytes, void *stream)
{
    int e = nc_busy(what);
    if (e) return e;
    fake.group_calls++;
    fake.ncalls++;
    fake_log("%s#%d(%p)", what, fake.ncalls, stream);
    if (r && s && r != s && bytes) memmove(r, s, bytes);   /* one rank: the data stays */
    return 0;
}
static size_t fake_es(int dt) { return dt == 0 || dt == 2 ? 4 : dt == 1 || dt == 3 ? 8 : 2; }
static int f_nc_allreduce(const void *s, void *r, size_t n, int dt, int op, void *c, void *st)
{
    (void)op; (void)c;
    return nc_call("allreduce", s, r, n * fake_es(dt), st);
}
static int f_nc_bcast(const void *s, void *r, size_t n, int dt, int root, void *c, void *st)
{
    (void)root; (void)c;
    return nc_call("bcast", s, r, n * fake_es(dt), st);
}
static int f_nc_reduce(const void *s, void *r, size_t n, int dt, int op, int root, void *c, void *st)
{
    (void)op; (void)root; (void)c;
    return nc_call("reduce", s, r, n * fake_es(dt), st);
}
static int f_nc_allgather(const void *s, void *r, size_t n, int dt, void *c, void *st)
{
    (void)c;
    return nc_call("allgather", s, r, n * fake_es(dt), st);
}
static int f_nc_reduce_scatter(const void *s, void *r, size_t n, int dt, int op, void *c, void *st)
{
    (void)op; (void)c;
    return nc_call("reduce_scatter", s, r, n * fake_es(dt), st);
}
static int f_nc_send(const void *b, size_t n, int dt, int peer, void *c, void *st)
{
    (void)n; (void)dt; (void)peer; (void)c;
    return nc_call("send", b, NULL, 0, st);
}
static int f_nc_recv(void *b, size_t n, int dt, int peer, void *c, void *st)
{
    (void)n; (void)dt; (void)peer; (void)c;
    return nc_call("recv", NULL, b, 0, st);
}

static hpc_gpu_ops_t fake_ops = {
    .version = HPC_GPU_OPS_VERSION,
    .error_string = f_error_string, .error_name = f_error_name,
    .runtime_version = f_runtime_version, .driver_version = f_driver_version,
    .device_count = f_device_count, .set_device = f_set_device, .get_device = f_get_device,
    .device_info = f_device_info, .pci_bus_id = f_pci_bus_id, .is_device_ptr = f_is_device_ptr,
    .last_error = f_last_error, .malloc = f_malloc, .free = f_free, .malloc_host = f_malloc_host,
    .free_host = f_free_host, .host_alloc_mapped = f_host_alloc_mapped, .memcpy = f_memcpy,
    .memcpy_async = f_memcpy_async, .memset = f_memset, .stream_create = f_stream_create,
    .stream_destroy = f_stream_destroy, .stream_sync = f_stream_sync,
    .stream_wait_event = f_stream_wait_event, .event_create = f_event_create,
    .event_record = f_event_record, .event_query = f_event_query, .event_destroy = f_event_destroy,
    .device_sync = f_device_sync, .reduce = f_reduce, .scale = f_scale, .wait_flag = f_wait_flag,
    .context_active = f_context_active, .malloc_async = f_malloc_async,
};

/* Put the fake behind libhpc (with the NCCL stub if fake.nccl). */
static void fake_install(void)
{
    if (fake.nccl) {
        fake_ops.nccl_version = f_nc_version;
        fake_ops.nccl_error_string = f_nc_error_string;
        fake_ops.nccl_last_error = f_nc_last_error;
        fake_ops.nccl_unique_id = f_nc_unique_id;
        fake_ops.nccl_init = f_nc_init;
        fake_ops.nccl_async_error = f_nc_async_error;
        fake_ops.nccl_finalize = f_nc_finalize;
        fake_ops.nccl_destroy = f_nc_destroy;
        fake_ops.nccl_abort = f_nc_abort;
        fake_ops.nccl_group_start = f_nc_group_start;
        fake_ops.nccl_group_end = f_nc_group_end;
        fake_ops.nccl_allreduce = f_nc_allreduce;
        fake_ops.nccl_bcast = f_nc_bcast;
        fake_ops.nccl_reduce = f_nc_reduce;
        fake_ops.nccl_allgather = f_nc_allgather;
        fake_ops.nccl_reduce_scatter = f_nc_reduce_scatter;
        fake_ops.nccl_send = f_nc_send;
        fake_ops.nccl_recv = f_nc_recv;
    }
    hpc_gpu_ops_set(&fake_ops, 1);
    hpc_gpu_count_reset();
}

#endif /* FAKE_GPU_H */
