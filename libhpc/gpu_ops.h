/* gpu_ops.h - the table through which libhpc calls the CUDA runtime and
 * NCCL (internal, not installed).
 *
 * libhpc-core links neither: every CUDA runtime or NCCL call it makes
 * (device queries and binding, device memory, streams, events, the
 * reduction kernels, NCCL) goes through this table, which the GPU module
 * (PREFIX/lib/hpckit/libhpc-cuda.so, libhpc/cuda/module.c with the
 * kernels of libhpc/coll/cuda.cu) fills in.  gpu_ops.c opens the module
 * at hpc_init, or at the first need (the PMPI drop-in has no hpc_init),
 * as hwloc and UCX open their CUDA plugins.  Without it every buffer is
 * host memory and a device path is refused with the reason.
 *
 * No CUDA or NCCL header here: statuses are the runtime's own numbers
 * (cudaError_t, ncclResult_t) as int, 0 = success, and the few that
 * libhpc tells apart are named below (the module checks them against
 * the headers at compile time).  Streams, events and NCCL communicators
 * are void *.
 */
#ifndef HPC_GPU_OPS_H
#define HPC_GPU_OPS_H

#include <stddef.h>

/* bumped when the table changes: a module of another version is refused */
#define HPC_GPU_OPS_VERSION 2
/* the module's one exported function: its table, or NULL for another version */
#define HPC_GPU_MODULE_ENTRY "hpc_gpu_module_ops"
#define HPC_GPU_MODULE_NAME "libhpc-cuda"

enum {
    GPU_OK = 0,
    GPU_ERR_INVALID_VALUE = 1,        /* cudaErrorInvalidValue */
    GPU_ERR_INSUFFICIENT_DRIVER = 35, /* cudaErrorInsufficientDriver: runtime newer than the driver */
    GPU_ERR_NO_DEVICE = 100,          /* cudaErrorNoDevice: the one status that means "no GPU" */
    GPU_ERR_NOT_READY = 600           /* cudaErrorNotReady: event or stream still busy */
};
enum { HPC_NCCL_OK = 0, HPC_NCCL_INVALID_ARGUMENT = 4, HPC_NCCL_IN_PROGRESS = 7 };
enum { HPC_NCCL_ID_BYTES = 128 };

typedef struct hpc_gpu_ops {
    int version;                      /* HPC_GPU_OPS_VERSION */
    /* ---- the CUDA runtime: each returns its cudaError_t ---- */
    const char *(*error_string)(int status);
    const char *(*error_name)(int status);
    int (*runtime_version)(int *v);   /* 13000 = 13.0 */
    int (*driver_version)(int *v);    /* what the installed driver supports */
    int (*device_count)(int *n);
    int (*set_device)(int dev);
    int (*get_device)(int *dev);
    int (*device_info)(int dev, char *name, size_t len, size_t *total_mem);
    int (*pci_bus_id)(int dev, char *buf, int len);
    int (*is_device_ptr)(const void *p, int *yes);   /* managed memory: no */
    int (*last_error)(void);          /* cudaGetLastError: read and clear */
    int (*malloc)(void **p, size_t bytes);
    int (*free)(void *p);
    int (*malloc_host)(void **p, size_t bytes);      /* pinned */
    int (*free_host)(void *p);
    /* pinned, mapped into the device's address space: *host and *dev */
    int (*host_alloc_mapped)(void **host, void **dev, size_t bytes);
    int (*memcpy)(void *dst, const void *src, size_t bytes);   /* any kinds, synchronous */
    int (*memcpy_async)(void *dst, const void *src, size_t bytes, void *stream);
    int (*memset)(void *p, int v, size_t bytes);
    int (*stream_create)(void **s, int nonblocking);
    int (*stream_destroy)(void *s);
    int (*stream_sync)(void *s);
    int (*stream_wait_event)(void *s, void *ev);
    int (*event_create)(void **ev);   /* without timing */
    int (*event_record)(void *ev, void *stream);
    int (*event_query)(void *ev);     /* GPU_OK done, GPU_ERR_NOT_READY not yet */
    int (*event_destroy)(void *ev);
    int (*device_sync)(void);
    /* ---- kernels (coll/cuda.cu); dt, op: hpc_dtype_t, hpc_op_t ---- */
    int (*reduce)(void *stream, int dt, int op, void *dst, const void *a, const void *b, size_t n);
    int (*scale)(void *stream, int dt, void *buf, size_t n, int div);
    /* a one-thread kernel on stream spins until *flag, then sets *ack */
    int (*wait_flag)(void *stream, volatile unsigned *flag, volatile unsigned *ack);
    /* ---- NCCL: each returns its ncclResult_t; all NULL in a module
     * built without NCCL or where NCCL cannot be opened (nccl_why) ---- */
    int (*nccl_version)(int *v);      /* 22703 = 2.27.3 */
    const char *(*nccl_error_string)(int status);
    const char *(*nccl_last_error)(void *comm);
    int (*nccl_unique_id)(void *id);  /* HPC_NCCL_ID_BYTES */
    /* a nonblocking communicator (config.blocking = 0): poll nccl_async_error */
    int (*nccl_init)(void **comm, int nranks, const void *id, int rank);
    int (*nccl_async_error)(void *comm, int *status);
    int (*nccl_finalize)(void *comm);
    int (*nccl_destroy)(void *comm);
    int (*nccl_abort)(void *comm);
    int (*nccl_group_start)(void);
    int (*nccl_group_end)(void);
    int (*nccl_allreduce)(const void *s, void *r, size_t n, int dt, int op, void *comm, void *stream);
    int (*nccl_bcast)(const void *s, void *r, size_t n, int dt, int root, void *comm, void *stream);
    int (*nccl_reduce)(const void *s, void *r, size_t n, int dt, int op, int root, void *comm,
                       void *stream);
    int (*nccl_allgather)(const void *s, void *r, size_t n, int dt, void *comm, void *stream);
    int (*nccl_reduce_scatter)(const void *s, void *r, size_t n, int dt, int op, void *comm,
                               void *stream);
    int (*nccl_send)(const void *b, size_t n, int dt, int peer, void *comm, void *stream);
    int (*nccl_recv)(void *b, size_t n, int dt, int peer, void *comm, void *stream);
    /* ---- version 2 ---- */
    /* *yes = whether any device's primary context is active, without
     * making one (cuDevicePrimaryCtxGetState); may be NULL: unknown */
    int (*context_active)(int *yes);
    /* why the NCCL entries are NULL ("" when NCCL is loaded): NCCL is
     * opened at run time (HPC_NCCL_LIBRARY), not linked, so that a node
     * with CUDA but no NCCL still runs everything else on its GPU */
    const char *(*nccl_why)(void);
    /* cudaMallocAsync: stream-ordered, no device synchronisation */
    int (*malloc_async)(void **p, size_t bytes, void *stream);
} hpc_gpu_ops_t;

typedef const hpc_gpu_ops_t *(*hpc_gpu_module_fn)(int version);

/* ---- gpu_ops.c (libhpc-core) ---- */
/* The table, the module opened on the first call; NULL without one
 * (hpc_gpu_ops_why() says why: the loader's error, or "not installed"). */
const hpc_gpu_ops_t *hpc_gpu_ops(void);
const char *hpc_gpu_ops_why(void);
/* The file the module was opened from ("" if none). */
const char *hpc_gpu_ops_path(void);
/* Tests: with use, ops instead of the module (NULL: none, as without a
 * module); without, the module again.  What was built on the old table
 * (streams, events, NCCL communicators) must be gone by then. */
void hpc_gpu_ops_set(const hpc_gpu_ops_t *ops, int use);

/* A CUDA status as text: "no CUDA-capable device is detected
 * (cudaErrorNoDevice)", or the number where there is no module. */
const char *hpc_gpu_status_text(int status, char *buf, size_t len);

#endif /* HPC_GPU_OPS_H */
