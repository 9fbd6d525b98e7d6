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
 *    completes.  The slots live in one pinned slab for the process.  A
 *    slot is free again once an event recorded after its kernel has
 *    happened - or failed, so a kernel that never ran (its stream broke)
 *    does not keep it busy for ever.  While any slot is busy, device and
 *    pinned frees wait (device.c): they would synchronise the device,
 *    which waits for the kernel, which waits for the host.
 * Everything goes through the GPU module (gpu_ops.h); without it there is
 * nothing to wait for, and these say so.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"
#include "internal.h"
#include "gpu_ops.h"

#include <string.h>

#define gpu coll_gpu

int coll_dev_event_record(void *stream, void **ev)
{
    const hpc_gpu_ops_t *g = gpu();
    if (!g) return HPC_ERR(HPC_ERR_NOGPU, "a CUDA event: %s", hpc_gpu_unavailable());
    if (!*ev) {
        void *e = NULL;
        HPC_CUDA(g->event_create(&e));
        *ev = e;
    }
    HPC_CUDA(g->event_record(*ev, stream));
    return 0;
}

int coll_dev_event_done(void *ev, int *done)
{
    const hpc_gpu_ops_t *g = gpu();
    *done = 1;
    if (!g || !ev) return 0;
    int e = g->event_query(ev);
    *done = e == GPU_OK;
    if (e == GPU_OK || e == GPU_ERR_NOT_READY) return 0;
    char text[256];
    return HPC_ERR(HPC_ERR_CUDA, "device work of a collective: %s", hpc_gpu_status_text(e, text, sizeof text));
}

void coll_dev_event_free(void *ev)
{
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    if (ev && g) g->event_destroy(ev);
}

int coll_dev_stream_wait_event(void *stream, void *ev)
{
    const hpc_gpu_ops_t *g = gpu();
    if (!g) return HPC_ERR(HPC_ERR_NOGPU, "a CUDA stream: %s", hpc_gpu_unavailable());
    HPC_CUDA(g->stream_wait_event(stream, ev));
    return 0;
}

void coll_dev_stream_sync(void *stream)
{
    const hpc_gpu_ops_t *g = gpu();
    if (g && g->stream_sync(stream) != GPU_OK) g->last_error();
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
static void *slot_ev[NSLOT];    /* recorded after each slot's kernel */
static int nbusy;

/* Is slot i's kernel over (it ran to its end, or its stream failed)? */
static int slot_over(const hpc_gpu_ops_t *g, int i)
{
    if (slab[i].ack) return 1;
    if (!slab[i].flag) return 0;    /* the host has not let it go yet */
    /* released, not acknowledged: the kernel may not have run at all */
    int e = slot_ev[i] ? g->event_query(slot_ev[i]) : GPU_OK;
    if (e == GPU_ERR_NOT_READY) return 0;
    if (e != GPU_OK) g->last_error();
    return 1;
}

static void reclaim(const hpc_gpu_ops_t *g)
{
    for (int i = 0; slab && i < NSLOT && nbusy > 0; i++)
        if (slab[i].busy && slot_over(g, i)) {
            slab[i].busy = 0;
            nbusy--;
        }
}

int coll_dev_flags_busy(void)
{
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    if (nbusy && g) reclaim(g);
    return nbusy;
}

int coll_dev_flag_wait(void *stream, int *slot)
{
    const hpc_gpu_ops_t *g = gpu();
    if (!g) return HPC_ERR(HPC_ERR_NOGPU, "a CUDA stream: %s", hpc_gpu_unavailable());
    HPC_TRY(coll_dev_alloc_ready());
    if (!slab) {
        void *h = NULL, *d = NULL;
        HPC_CUDA(g->host_alloc_mapped(&h, &d, NSLOT * sizeof(slot_t)));
        memset(h, 0, NSLOT * sizeof(slot_t));
        slab = h;
        slab_dev = d;
    }
    reclaim(g);
    int i = 0;
    while (i < NSLOT && slab[i].busy) i++;
    if (i == NSLOT) return HPC_ERR(HPC_ERR_STATE, "all %d stream-wait flags are in use", NSLOT);
    if (!slot_ev[i]) HPC_CUDA(g->event_create(&slot_ev[i]));
    slot_t *s = &slab[i];
    s->flag = 0;
    s->ack = 0;
    int e = g->wait_flag(stream, &slab_dev[i].flag, &slab_dev[i].ack);
    if (e == GPU_OK) e = g->event_record(slot_ev[i], stream);
    if (e != GPU_OK) {
        /* the kernel may be queued: release it, keep the slot until over */
        s->flag = 1;
        s->busy = 1;
        nbusy++;
        char text[256];
        return HPC_ERR(HPC_ERR_CUDA, "stream wait kernel: %s", hpc_gpu_status_text(e, text, sizeof text));
    }
    s->busy = 1;
    nbusy++;
    *slot = i;
    return 0;
}

void coll_dev_flag_set(int slot)
{
    if (!slab || slot < 0 || slot >= NSLOT) return;
    __atomic_store_n(&slab[slot].flag, 1u, __ATOMIC_RELEASE);
}
