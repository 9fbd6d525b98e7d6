/* devgpu.c - what device.c's memory and devsync.c's stream waits both
 * start from: this rank's GPU table for device work, and the stream of
 * the stream-ordered allocator, made before any kernel waits.  Below both
 * files, so that neither needs the other for it (no loop between the files
 * of a layer: tests/layers.sh).
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"
#include "internal.h"
#include "gpu_ops.h"

/* The table for device work, with this rank's GPU current on the
 * calling thread (its context made at this first use: hpc_gpu_activate),
 * else NULL: no device, or the bound one cannot be used.  A rank bound to
 * none (HPC_GPU_BIND=none) works on whatever device its own code made
 * current. */
const hpc_gpu_ops_t *coll_gpu(void)
{
    if (hpc_gpu_unavailable() || (hpc_gpu() >= 0 && hpc_gpu_activate() < 0)) return NULL;
    return hpc_gpu_ops();
}

/* Device memory while a stream-wait kernel spins (coll_dev_flags_busy):
 * cudaMalloc and cudaMallocHost may synchronise the device, so wait for
 * that kernel, which waits for the host - stuck in the allocation.  The
 * stream-ordered allocator does not synchronise: cudaMallocAsync on a
 * stream of our own (non-blocking: it waits for nothing else), then that
 * stream alone is waited for.  The stream is made before any kernel
 * waits (coll_dev_alloc_ready), not while one does. */
static void *alloc_stream;

void *coll_dev_alloc_stream(void)
{
    return alloc_stream;
}

int coll_dev_alloc_ready(void)
{
    const hpc_gpu_ops_t *g = coll_gpu();
    if (!g) return HPC_ERR(HPC_ERR_NOGPU, "device memory: %s", hpc_gpu_unavailable());
    if (!alloc_stream && g->malloc_async) HPC_CUDA(g->stream_create(&alloc_stream, 1));
    return 0;
}
