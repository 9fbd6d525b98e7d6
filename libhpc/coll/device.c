/* device.c - device memory for the collectives: pointer kinds, scratch
 * buffers, copies and the reduction kernels' launches, all on CUDA
 * streams of their communicator, through the GPU module (gpu_ops.h).
 * Without the module every buffer is host memory and the device entry
 * points refuse with HPC_ERR_NOGPU and the reason it is missing.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"
#include "internal.h"
#include "gpu_ops.h"

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

#define gpu coll_gpu

/* HPC_ERR_NOGPU naming what is missing */
#define NO_GPU(what) HPC_ERR(HPC_ERR_NOGPU, "%s: %s", what, hpc_gpu_unavailable())

/* Whether any GPU context exists in this process: without one there is
 * no device memory, and asking the runtime about a pointer would make a
 * context (on device 0 of every rank of a CPU run).  Once one exists it
 * stays (contexts live until exit). */
static int some_context(const hpc_gpu_ops_t *g)
{
    static int seen;
    int yes = 1;
    if (seen || hpc_gpu_active()) return seen = 1;
    if (g->context_active && g->context_active(&yes) != GPU_OK) yes = 1;   /* cannot tell: ask */
    return seen = yes;
}

int coll_is_device_ptr(const void *p)
{
    const hpc_gpu_ops_t *g = p && !hpc_gpu_unavailable() ? hpc_gpu_ops() : NULL;
    int yes = 0;
    if (!g || !some_context(g)) return 0;
    /* the bound device current here, so the query makes no context on
     * device 0 of a thread that has none */
    if (hpc_gpu() >= 0 && hpc_gpu_activate() < 0) return 0;
    if (g->is_device_ptr(p, &yes) != GPU_OK) return 0;
    return yes;
}

static void dev_comm_free(coll_comm_t *cc)
{
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    if (g && cc->stream) g->stream_destroy(cc->stream);
    if (g && cc->nbstream) g->stream_destroy(cc->nbstream);
    if (g && cc->legacy_ev) g->event_destroy(cc->legacy_ev);
    cc->stream = cc->nbstream = cc->legacy_ev = NULL;
}

/* cc's streams for its device work, both non-blocking, so that nothing
 * on the legacy default stream (a training step's next kernels) waits
 * for them.  Calls without a stream still promise legacy default stream
 * semantics - data a caller's kernels wrote there is complete before we
 * copy, reduce or hand it to NCCL - through an event: coll_dev_legacy_gate
 * makes the plain stream wait for the legacy stream at each call.
 * Stream-ordered calls order themselves with events of their own. */
int coll_dev_stream(coll_comm_t *cc, int nonblocking, void **out)
{
    const hpc_gpu_ops_t *g = gpu();
    if (!g) return NO_GPU("a CUDA stream");
    void **sp = nonblocking ? &cc->nbstream : &cc->stream;
    if (!*sp) {
        void *s = NULL;
        HPC_CUDA(g->stream_create(&s, 1));
        *sp = s;
        cc->hook[COLL_HOOK_DEVICE].fini = dev_comm_free;
    }
    *out = *sp;
    return 0;
}

/* The plain stream of cc waits for what the legacy default stream holds
 * now (an event, not a blocking stream: see coll_dev_stream). */
int coll_dev_legacy_gate(coll_comm_t *cc)
{
    const hpc_gpu_ops_t *g = gpu();
    void *s = NULL;
    HPC_TRY(coll_dev_stream(cc, 0, &s));
    if (!cc->legacy_ev) HPC_CUDA(g->event_create(&cc->legacy_ev));
    HPC_CUDA(g->event_record(cc->legacy_ev, NULL));
    HPC_CUDA(g->stream_wait_event(s, cc->legacy_ev));
    return 0;
}

int coll_dev_reduce(void *stream, hpc_dtype_t dt, hpc_op_t op, void *dst, const void *a,
                    const void *b, size_t n)
{
    const hpc_gpu_ops_t *g = gpu();
    if (!g) return NO_GPU("device reduction");
    int e = g->reduce(stream, (int)dt, (int)op, dst, a, b, n);
    char text[256];
    if (e != GPU_OK)
        return HPC_ERR(HPC_ERR_CUDA, "reduction kernel (%s, %s, %zu elements): %s", hpc_dtype_name(dt),
                       hpc_op_name(op), n, hpc_gpu_status_text(e, text, sizeof text));
    return 0;
}

int coll_dev_scale(void *stream, hpc_dtype_t dt, void *buf, size_t n, int div)
{
    const hpc_gpu_ops_t *g = gpu();
    if (!g) return NO_GPU("device scaling");
    int e = g->scale(stream, (int)dt, buf, n, div);
    char text[256];
    if (e != GPU_OK)
        return HPC_ERR(HPC_ERR_CUDA, "average kernel (%s): %s", hpc_dtype_name(dt),
                       hpc_gpu_status_text(e, text, sizeof text));
    return 0;
}

int coll_dev_copy(void *stream, void *dst, const void *src, size_t bytes)
{
    const hpc_gpu_ops_t *g = gpu();
    if (!g) return NO_GPU("device copy");
    HPC_CUDA(g->memcpy_async(dst, src, bytes, stream));
    return 0;
}

/* Device memory while a stream-wait kernel spins: the stream-ordered
 * allocator on a stream of our own (devgpu.c, coll_dev_alloc_stream),
 * then that stream alone is waited for. */
static int alloc_while_busy(const hpc_gpu_ops_t *g, size_t bytes, void **p)
{
    void *alloc_stream = coll_dev_alloc_stream();
    if (!alloc_stream || !g->malloc_async)
        return HPC_ERR(HPC_ERR_UNSUPPORTED, "device memory while a stream waits for a request: "
                       "this CUDA runtime has no stream-ordered allocator");
    HPC_CUDA(g->malloc_async(p, bytes, alloc_stream));
    HPC_CUDA(g->stream_sync(alloc_stream));
    return 0;
}

/* kind 1: pinned host memory, 2: device memory.  While a kernel waits
 * for a flag, pinned memory is refused (the caller takes pageable memory
 * instead: coll_tmp_kind) and device memory comes from alloc_while_busy. */
int coll_dev_alloc(size_t bytes, int kind, void **out)
{
    const hpc_gpu_ops_t *g = gpu();
    if (!g) return NO_GPU("device or pinned memory");
    HPC_TRY(coll_dev_alloc_ready());
    void *p = NULL;
    int busy = coll_dev_flags_busy();
    if (kind == 1 && busy)
        return HPC_ERR(HPC_ERR_STATE, "pinned memory while a stream waits for a request (take pageable memory)");
    if (kind == 1) HPC_CUDA(g->malloc_host(&p, bytes));
    else if (busy) HPC_TRY(alloc_while_busy(g, bytes, &p));
    else HPC_CUDA(g->malloc(&p, bytes));
    *out = p;
    return 0;
}

/* ---- frees that wait for the stream-wait kernels -------------------- */
/* cudaFree and cudaFreeHost synchronise the device.  While a kernel of
 * hpc_request_stream_wait spins on a host flag (devsync.c), that would
 * wait for the kernel, which waits for the host, which is in the free: a
 * deadlock.  So frees are kept back while any flag slot is busy and made
 * once none is (coll_dev_free_deferred, called as requests progress). */
typedef struct { void *p; int kind; } deferred_t;
static deferred_t *deferred;
static int ndeferred, capdeferred;

static void free_now(const hpc_gpu_ops_t *g, void *p, int kind)
{
    if (kind == 1) g->free_host(p);
    else g->free(p);
}

void coll_dev_free_deferred(void)
{
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    if (!ndeferred || !g || coll_dev_flags_busy()) return;
    while (ndeferred > 0) {
        ndeferred--;
        free_now(g, deferred[ndeferred].p, deferred[ndeferred].kind);
    }
}

int coll_dev_frees_pending(void)
{
    return ndeferred;
}

void coll_dev_free(void *p, int kind)
{
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    if (!p || !g) return;
    if (coll_dev_flags_busy()) {
        if (ndeferred == capdeferred) {
            int cap = capdeferred ? 2 * capdeferred : 16;
            deferred_t *d = realloc(deferred, (size_t)cap * sizeof *d);
            if (!d) {
                /* no memory to remember it: keep it for good rather than
                 * risk the deadlock (a leak, and a warning) */
                hpc_warn("a %s buffer is not freed: no memory to defer its free", kind == 1 ? "pinned" : "device");
                return;
            }
            deferred = d;
            capdeferred = cap;
        }
        deferred[ndeferred].p = p;
        deferred[ndeferred].kind = kind;
        ndeferred++;
        return;
    }
    free_now(g, p, kind);
    coll_dev_free_deferred();
}

/* Synchronous copy between any memory kinds (self-test, benchmarks). */
int coll_dev_memcpy(void *dst, const void *src, size_t bytes)
{
    const hpc_gpu_ops_t *g = gpu();
    if (!g) return NO_GPU("device copy");
    HPC_CUDA(g->memcpy(dst, src, bytes));
    return 0;
}

/* 1 if this process can use a device (0 without the module or a GPU);
 * asking makes no context. */
int coll_dev_count(void)
{
    return hpc_gpu_unavailable() ? 0 : 1;
}

/* ---- for programs: device buffers without linking CUDA -------------- */
int hpc_coll_dev_alloc(size_t bytes, void **out)
{
    if (!out) return HPC_ERR(HPC_ERR_ARG, "NULL output");
    void *p = NULL;
    HPC_TRY(coll_dev_alloc(bytes ? bytes : 1, 2, &p));
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    int e = g->memset(p, 0, bytes ? bytes : 1);
    if (e != GPU_OK) {
        g->free(p);
        return hpc_error_cuda(e, __FILE__, __LINE__, "cudaMemset");
    }
    *out = p;
    return 0;
}

void hpc_coll_dev_free(void *p)
{
    coll_dev_free(p, 2);
}

int hpc_coll_dev_memcpy(void *dst, const void *src, size_t bytes)
{
    return coll_dev_memcpy(dst, src, bytes);
}
