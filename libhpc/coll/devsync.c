/* devsync.c - how requests and CUDA streams wait for each other without
 * blocking the host.
 *
 *  - A request waits for the GPU with events it polls (cudaEventQuery):
 *    a stream-ordered call's input is ready when an event recorded on the
 *    caller's stream at the call has happened; a round's device work is
 *    done when the event recorded after it has.
 *  - A stream waits for a request: NCCL's work is on a stream already, so
 *    the stream waits for its event (cudaStreamWaitEvent).  A request the
 *    host progresses (MPI, our schedules) has no such event, so a
 *    one-thread kernel on the stream spins (sleeping between looks) on a
 *    flag in mapped pinned memory that the host sets when the request
 *    completes, and acknowledges it so the slot can be used again.  The
 *    slots live in one pinned slab for the process.
 * Without CUDA there is nothing to wait for, and these say so.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"
#include "internal.h"

#ifdef HPC_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <string.h>

int coll_dev_event_record(void *stream, void **ev)
{
    if (!*ev) {
        cudaEvent_t e;
        HPC_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        *ev = e;
    }
    HPC_CUDA(cudaEventRecord((cudaEvent_t)*ev, (cudaStream_t)stream));
    return 0;
}

int coll_dev_event_done(void *ev, int *done)
{
    cudaError_t e = cudaEventQuery((cudaEvent_t)ev);
    *done = e == cudaSuccess;
    if (e == cudaSuccess || e == cudaErrorNotReady) return 0;
    return HPC_ERR(HPC_ERR_CUDA, "device work of a collective: %s", cudaGetErrorString(e));
}

void coll_dev_event_free(void *ev)
{
    if (ev) cudaEventDestroy((cudaEvent_t)ev);
}

int coll_dev_stream_wait_event(void *stream, void *ev)
{
    HPC_CUDA(cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)ev, 0));
    return 0;
}

void coll_dev_stream_sync(void *stream)
{
    if (cudaStreamSynchronize((cudaStream_t)stream) != cudaSuccess) cudaGetLastError();
}

/* ---- flags the host sets ------------------------------------------- */
enum { NSLOT = 256 };
typedef struct {
    volatile unsigned flag;     /* host: 1 when the request has completed */
    volatile unsigned ack;      /* device: 1 once the waiting kernel saw it */
    unsigned busy;              /* host: slot in use */
    unsigned pad;
} slot_t;
static slot_t *slab;            /* host view (mapped, pinned) */
static slot_t *slab_dev;        /* device view */

int coll_dev_flag_wait(void *stream, int *slot)
{
    if (!slab) {
        void *h = NULL, *d = NULL;
        HPC_CUDA(cudaHostAlloc(&h, NSLOT * sizeof(slot_t), cudaHostAllocMapped | cudaHostAllocPortable));
        memset(h, 0, NSLOT * sizeof(slot_t));
        if (cudaHostGetDevicePointer(&d, h, 0) != cudaSuccess) {
            cudaFreeHost(h);
            return HPC_ERR(HPC_ERR_CUDA, "pinned flags are not mapped into the device");
        }
        slab = h;
        slab_dev = d;
    }
    int free_slot = -1;
    for (int i = 0; i < NSLOT; i++) {
        if (slab[i].busy && slab[i].ack) slab[i].busy = 0;   /* its kernel is gone */
        if (!slab[i].busy && free_slot < 0) free_slot = i;
    }
    if (free_slot < 0) return HPC_ERR(HPC_ERR_STATE, "all %d stream-wait flags are in use", NSLOT);
    slot_t *s = &slab[free_slot];
    s->flag = 0;
    s->ack = 0;
    s->busy = 1;
    int e = coll_cuda_wait_flag(stream, &slab_dev[free_slot].flag, &slab_dev[free_slot].ack);
    if (e != cudaSuccess) {
        s->busy = 0;
        return HPC_ERR(HPC_ERR_CUDA, "stream wait kernel: %s", cudaGetErrorString((cudaError_t)e));
    }
    *slot = free_slot;
    return 0;
}

void coll_dev_flag_set(int slot)
{
    if (!slab || slot < 0 || slot >= NSLOT) return;
    __atomic_store_n(&slab[slot].flag, 1u, __ATOMIC_RELEASE);
}

#else /* no CUDA */

int coll_dev_event_record(void *stream, void **ev)
{
    (void)stream; (void)ev;
    return HPC_ERR(HPC_ERR_NOGPU, "CUDA event in a build without CUDA");
}
int coll_dev_event_done(void *ev, int *done)
{
    (void)ev;
    *done = 1;
    return 0;
}
void coll_dev_event_free(void *ev)
{
    (void)ev;
}
int coll_dev_stream_wait_event(void *stream, void *ev)
{
    (void)stream; (void)ev;
    return HPC_ERR(HPC_ERR_NOGPU, "CUDA stream in a build without CUDA");
}
int coll_dev_flag_wait(void *stream, int *slot)
{
    (void)stream; (void)slot;
    return HPC_ERR(HPC_ERR_NOGPU, "CUDA stream in a build without CUDA");
}
void coll_dev_flag_set(int slot)
{
    (void)slot;
}
void coll_dev_stream_sync(void *stream)
{
    (void)stream;
}
#endif
