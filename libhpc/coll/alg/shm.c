/* alg/shm.c - allreduce through one MPI-3 shared-memory window per
 * communicator, for ranks on one node.
 *
 * Through MPI point-to-point every byte is copied twice (into the MPI
 * library's shared queue and out of it); here each rank copies its input
 * once into its slot of the window, reduces its 1/p share of the chunk
 * straight from every rank's slot into a shared result, and copies the
 * result out: one copy in, one out, and the reduction reads memory the
 * peers just wrote (still in the shared cache).  The vector goes in
 * chunks of one slot (HPC_COLL_SEGMENT x 4, at least 256 KiB) so that
 * all of it stays in cache; two flag barriers per chunk.
 *
 * It runs as the external step of an ordinary schedule: the step's test
 * advances it without blocking (every rank polls the peers' flags), so
 * blocking and nonblocking calls work alike.  Calls on one communicator
 * take the window in the order they were started (a ticket, the same on
 * every rank, as calls start in the same order everywhere).
 *
 * The window is made at the first blocking such call (collective over
 * the communicator, which every rank reaches at the same call) and freed
 * with the communicator.  Making it blocks until every rank of the node
 * is there, which is safe only inside a blocking call: nonblocking calls
 * on two communicators may start in different orders on different ranks,
 * and ranks each making another communicator's window would wait for
 * each other forever.  So a nonblocking call on a communicator that has
 * no window yet runs the hierarchical allreduce (on one node: a tree in
 * it) - every rank alike, since a call is blocking on every rank or on
 * none (MPI's rule; hpckit's too) and the window comes at the same call
 * everywhere.  Ranks on more than one node (real, or HPC_NODE_SPLIT) run
 * the hierarchical allreduce too.
 */
#include "config.h"
#include "hpc.h"
#include "../coll_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define FLAG_STRIDE 64      /* one flag per cache line */

struct coll_shm {
    MPI_Win win;
    char *base;             /* flags, then the result, then p slots */
    size_t slot;            /* bytes per slot */
    int p;
    uint64_t tickets, turn; /* calls that took / released the window */
    uint64_t epoch;         /* barriers passed (the same on every rank) */
};

typedef struct {
    const char *in;
    char *out;
    size_t n, off;          /* elements, and done so far */
    int phase;              /* 0 waits for its turn, 1 copy in, 2 reduce, 3 copy out */
    uint64_t ticket, wait;  /* its turn; the epoch its barrier waits for */
} shm_call_t;

static _Atomic uint64_t *flag(coll_shm_t *w, int i)
{
    return (_Atomic uint64_t *)(void *)(w->base + (size_t)i * FLAG_STRIDE);
}

static char *result(coll_shm_t *w)
{
    return w->base + (size_t)w->p * FLAG_STRIDE;
}

static char *slot(coll_shm_t *w, int i)
{
    return result(w) + w->slot * (size_t)(i + 1);
}

static void shm_fini(coll_comm_t *cc)
{
    coll_shm_t *w = cc->shm;
    if (!w) return;
    MPI_Win_free(&w->win);
    free(w);
    cc->shm = NULL;
}

/* cc's window, made on first use (collective over cc) */
static int shm_window(coll_comm_t *cc, coll_shm_t **out)
{
    if (cc->shm) {
        *out = cc->shm;
        return 0;
    }
    coll_shm_t *w = calloc(1, sizeof *w);
    if (!w) return HPC_ERR(HPC_ERR_NOMEM, "shared window state");
    size_t seg = coll_segment() * 4;
    w->slot = seg < ((size_t)256 << 10) ? (size_t)256 << 10 : seg;
    w->p = cc->size;
    size_t bytes = (size_t)w->p * FLAG_STRIDE + w->slot * (size_t)(w->p + 1);
    MPI_Aint sz;
    int du;
    /* rank 0 holds it all (one contiguous piece); the others map it */
    int e = MPI_Win_allocate_shared(cc->rank == 0 ? (MPI_Aint)bytes : 0, 1, MPI_INFO_NULL,
                                    cc->topo.node, &w->base, &w->win);
    if (e == MPI_SUCCESS) e = MPI_Win_shared_query(w->win, 0, &sz, &du, &w->base);
    if (e != MPI_SUCCESS) {
        free(w);
        return hpc_error_mpi(e, __FILE__, __LINE__, "MPI_Win_allocate_shared");
    }
    if (cc->rank == 0) memset(w->base, 0, (size_t)w->p * FLAG_STRIDE);
    MPI_Barrier(cc->topo.node);     /* the flags are zero before anyone looks */
    cc->shm = w;
    cc->hook[COLL_HOOK_SHM].fini = shm_fini;
    *out = w;
    return 0;
}

static void arrive(coll_shm_t *w, int me, shm_call_t *c)
{
    c->wait = ++w->epoch;
    atomic_store_explicit(flag(w, me), c->wait, memory_order_release);
}

static int everyone(coll_shm_t *w, uint64_t epoch)
{
    for (int i = 0; i < w->p; i++)
        if (atomic_load_explicit(flag(w, i), memory_order_acquire) < epoch) return 0;
    return 1;
}

/* This chunk: elements from c->off, at most one slot's worth. */
static size_t chunk(const coll_shm_t *w, const shm_call_t *c, size_t es)
{
    size_t m = w->slot / es, left = c->n - c->off;
    return left < m ? left : m;
}

/* Advance the call as far as the peers allow. */
static int shm_test(hpc_request_t *r, coll_ext_t *x, int *done)
{
    coll_shm_t *w = r->cc->shm;
    shm_call_t *c = x->state;
    int me = r->cc->rank, p = w->p;
    size_t es = hpc_dtype_size(r->dt);
    hpc_op_t op = r->op == HPC_AVG ? HPC_SUM : r->op;
    *done = 0;
    for (;;) {
        size_t len = chunk(w, c, es);
        if (c->phase == 0) {
            if (w->turn != c->ticket) return 0;
            c->phase = 1;
        } else if (c->phase == 1) {
            memcpy(slot(w, me), c->in + c->off * es, len * es);
            arrive(w, me, c);
            c->phase = 2;
        } else if (c->phase == 2) {
            if (!everyone(w, c->wait)) return 0;
            size_t lo = len * (size_t)me / (size_t)p, hi = len * (size_t)(me + 1) / (size_t)p;
            char *res = result(w) + lo * es;
            if (hi > lo) {
                coll_reduce_host(r->dt, op, res, slot(w, 0) + lo * es, slot(w, 1) + lo * es, hi - lo);
                for (int i = 2; i < p; i++) coll_reduce_host(r->dt, op, res, res, slot(w, i) + lo * es, hi - lo);
            }
            arrive(w, me, c);
            c->phase = 3;
        } else {
            if (!everyone(w, c->wait)) return 0;
            memcpy(c->out + c->off * es, result(w), len * es);
            c->off += len;
            c->phase = 1;
            if (c->off >= c->n) {
                w->turn++;
                *done = 1;
                return 0;
            }
        }
    }
}

static int shm_post(hpc_request_t *r, coll_ext_t *x)
{
    (void)r; (void)x;
    return 0;
}

int coll_allreduce_shm(coll_build_t *b)
{
    coll_comm_t *cc = b->r->cc;
    if (cc->topo.nnodes > 1 || b->map || b->dev || (!cc->shm && !b->r->blocking && !cc->sim))
        return coll_allreduce_hier(b);
    if (b->count == 0) return 0;
    coll_shm_t *w = NULL;
    shm_call_t *c = NULL;
    HPC_TRY(shm_window(cc, &w));
    HPC_TRY(coll_tmp_kind(b->r, sizeof *c, 0, (void **)&c));
    *c = (shm_call_t){.in = b->sbuf, .out = b->rbuf, .n = b->count, .ticket = w->tickets++};
    b->r->ext.post = shm_post;
    b->r->ext.test = shm_test;
    b->r->ext.state = c;
    HPC_TRY(coll_ext_step(b->s));
    return coll_round(b->s);
}
