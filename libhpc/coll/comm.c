/* comm.c - per-communicator state: a private duplicate of the user's
 * communicator (so our messages never match the user's; the only
 * communicator libhpc keeps for it), cached as an attribute on it and
 * freed with it, or for one made by MPI_Comm_idup begun without blocking
 * when the program starts it (hpc_coll_idup_begin) and attached when the
 * program learns it is made; the scratch-buffer pool; and the
 * hooks through which other files undo what they hung on a communicator
 * (requests in flight, NCCL communicator, CUDA streams), so this file
 * depends on none of them.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

#include <stdlib.h>
#include <unistd.h>

static int coll_keyval = MPI_KEYVAL_INVALID, self_registered;
static coll_comm_t *all_comms;
/* states begun for a communicator made without blocking, not attached yet */
static coll_comm_t *unattached;
/* The communicator of the last call and its state: a program calls
 * collectives on one communicator in a loop, and MPI's attribute lookup is
 * a good part of a small call's path.  Forgotten when that state is freed
 * (the handle may then name a new communicator). */
static MPI_Comm last_user = MPI_COMM_NULL;
static coll_comm_t *last_cc;

/* process-wide cleanups run at MPI_Finalize (MPI types and ops) */
static void (*at_finalize[4])(void);
static int nat_finalize;

int coll_at_mpi_finalize(void (*fn)(void))
{
    for (int i = 0; i < nat_finalize; i++)
        if (at_finalize[i] == fn) return 0;
    if (nat_finalize == (int)(sizeof at_finalize / sizeof at_finalize[0]))
        return HPC_ERR(HPC_ERR_STATE, "too many cleanups registered");
    at_finalize[nat_finalize++] = fn;
    return 0;
}

/* What cc holds, freed (its duplicate waited for first if it is still
 * being made: every rank started it) */
static void comm_release(coll_comm_t *cc)
{
    coll_pool_free(cc);
    coll_seg_free(cc);
    coll_topo_free(&cc->topo);
    if (cc->dup_req != MPI_REQUEST_NULL) MPI_Wait(&cc->dup_req, MPI_STATUS_IGNORE);
    if (cc->comm != MPI_COMM_NULL) MPI_Comm_free(&cc->comm);
    free(cc);
}

static int comm_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm; (void)keyval; (void)extra;
    coll_comm_t *cc = attr;
    if (cc == last_cc) {
        last_cc = NULL;
        last_user = MPI_COMM_NULL;
    }
    for (coll_comm_t **q = &all_comms; *q; q = &(*q)->next)
        if (*q == cc) {
            *q = cc->next;
            break;
        }
    for (int i = 0; i < COLL_NHOOKS; i++)
        if (cc->hook[i].fini) cc->hook[i].fini(cc);
    comm_release(cc);
    return MPI_SUCCESS;
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first: free every
 * cached state (and its duplicate communicator) and our MPI types/ops
 * while MPI still works, so nothing is reported leaked. */
static int self_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm; (void)keyval; (void)attr; (void)extra;
    while (all_comms) {
        coll_comm_t *cc = all_comms;
        if (MPI_Comm_delete_attr(cc->user, coll_keyval) != MPI_SUCCESS && all_comms == cc)
            all_comms = cc->next;    /* its comm is gone; leave it */
    }
    while (unattached) {
        coll_comm_t *cc = unattached;
        unattached = cc->next;
        comm_release(cc);
    }
    while (nat_finalize > 0) at_finalize[--nat_finalize]();
    MPI_Comm_free_keyval(&coll_keyval);
    coll_keyval = MPI_KEYVAL_INVALID;
    self_registered = 0;
    return MPI_SUCCESS;
}

void coll_abort_all(void)
{
    for (coll_comm_t *cc = all_comms; cc; cc = cc->next)
        for (int i = 0; i < COLL_NHOOKS; i++)
            if (cc->hook[i].abort) cc->hook[i].abort(cc);
}

/* The keyval, and the cleanups at MPI_Finalize, once */
static int comm_keyval(void)
{
    if (coll_keyval == MPI_KEYVAL_INVALID)
        HPC_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete, &coll_keyval, NULL));
    if (!self_registered) {
        /* hpc_abort (HPC_CHECK, hpc_app_fatal) stops NCCL's kernels first,
         * so no GPU work waits for peers that are gone */
        static int abort_hooked;
        if (!abort_hooked && hpc_at_abort(coll_abort_all) == 0) abort_hooked = 1;
        int k;
        HPC_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &k, NULL));
        HPC_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, k, NULL));
        MPI_Comm_free_keyval(&k);             /* lives on while attached */
        self_registered = 1;
    }
    return 0;
}

/* comm's state, if it has one (no set-up) */
static coll_comm_t *comm_find(MPI_Comm comm)
{
    void *val = NULL;
    int flag = 0;
    if (last_cc && comm == last_user) return last_cc;
    if (coll_keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL ||
        MPI_Comm_get_attr(comm, coll_keyval, &val, &flag) != MPI_SUCCESS || !flag)
        return NULL;
    return val;
}

/* cc hangs on comm from now on (local) */
static int comm_attach(coll_comm_t *cc, MPI_Comm comm)
{
    HPC_MPI(MPI_Comm_set_attr(comm, coll_keyval, cc));
    cc->user = comm;
    cc->next = all_comms;
    all_comms = cc;
    /* (not the last call's until its duplicate is there: the cache's path
     * does not wait for it) */
    if (cc->dup_req == MPI_REQUEST_NULL) {
        last_user = comm;
        last_cc = cc;
    }
    return 0;
}

/* The set-up of cc for comm, collective over comm: the one duplicate
 * libhpc keeps (all its traffic on comm goes there), the nodes and the
 * shared segment.  The node communicators it takes are freed before it
 * returns: each communicator costs MPI a context id (MPICH has 2048 in
 * all), and a program's communicator costs it one more under libhpc, not
 * three.  On failure nothing is kept. */
static int comm_setup(coll_comm_t *cc, MPI_Comm comm)
{
    int e = MPI_Comm_dup(comm, &cc->comm);
    if (e != MPI_SUCCESS) {
        cc->comm = MPI_COMM_NULL;
        return hpc_error_mpi(e, __FILE__, __LINE__, "MPI_Comm_dup");
    }
    MPI_Comm_rank(cc->comm, &cc->rank);
    MPI_Comm_size(cc->comm, &cc->size);
    /* Oversubscribed node (more ranks than cores): a rank that spins while
     * waiting steals the core its peer needs to send, and every message
     * costs a scheduler time slice.  Then our wait loops yield when idle.
     * HPC_COLL_YIELD=0|1 overrides. */
    MPI_Comm node;
    int nlocal = 1, flag = 0;
    if (MPI_Comm_split_type(cc->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &nlocal);
        MPI_Comm_free(&node);
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int y = coll_settings()->yield;
    cc->yield = y >= 0 ? y : (ncpu > 0 && nlocal > ncpu);
    int *ub = NULL;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    cc->tag_ub = (flag && ub && *ub > 0) ? *ub : 32767;
    /* its nodes, once: every hierarchical call needs them; and its shared
     * segment on the node, made now (where every rank is) rather than
     * inside a call */
    node = MPI_COMM_NULL;
    int te = coll_topo_init(&cc->topo, cc->comm, cc->rank, cc->size, &node);
    if (te == 0) te = coll_seg_init(cc, node);
    if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
    if (te < 0) {
        coll_seg_free(cc);
        coll_topo_free(&cc->topo);
        MPI_Comm_free(&cc->comm);
    }
    return te;
}

int coll_get_comm(MPI_Comm comm, coll_comm_t **out)
{
    int inter = 0;
    if (last_cc && comm == last_user && comm != MPI_COMM_NULL) {
        *out = last_cc;
        return 0;
    }
    if (comm == MPI_COMM_NULL) return HPC_ERR(HPC_ERR_ARG, "communicator is MPI_COMM_NULL");
    int init = 0;
    MPI_Initialized(&init);
    if (!init) return HPC_ERR(HPC_ERR_STATE, "collective called before MPI is initialised");
    HPC_TRY(comm_keyval());
    coll_comm_t *cc = comm_find(comm);
    if (cc) {
        if (cc->off) return HPC_ERR(HPC_ERR_UNSUPPORTED, "libhpc could not set this communicator up");
        /* made without blocking (hpc_coll_idup_begin): its duplicate is
         * there once every rank has started it, which each did when it
         * made the communicator */
        if (cc->dup_req != MPI_REQUEST_NULL) HPC_MPI(MPI_Wait(&cc->dup_req, MPI_STATUS_IGNORE));
        last_user = comm;
        *out = last_cc = cc;
        return 0;
    }
    HPC_MPI(MPI_Comm_test_inter(comm, &inter));
    if (inter) return HPC_ERR(HPC_ERR_ARG, "intercommunicators are not supported");
    if (!(cc = calloc(1, sizeof *cc))) return HPC_ERR(HPC_ERR_NOMEM, "communicator state");
    cc->dup_req = MPI_REQUEST_NULL;
    int e = comm_setup(cc, comm);
    if (e == 0) e = comm_attach(cc, comm);
    if (e < 0) {
        if (cc->comm != MPI_COMM_NULL) {
            coll_seg_free(cc);
            coll_topo_free(&cc->topo);
            MPI_Comm_free(&cc->comm);
        }
        free(cc);
        return e;
    }
    *out = cc;
    return 0;
}

int hpc_coll_setup(MPI_Comm comm)
{
    coll_comm_t *cc = NULL;
    HPC_TRY(coll_get_comm(comm, &cc));
    return 0;
}

int hpc_coll_known(MPI_Comm comm)
{
    return comm_find(comm) != NULL;
}

int hpc_coll_refuse(MPI_Comm comm)
{
    HPC_TRY(comm_keyval());
    if (comm_find(comm)) return 0;
    coll_comm_t *cc = calloc(1, sizeof *cc);
    if (!cc) return HPC_ERR(HPC_ERR_NOMEM, "communicator state");
    cc->comm = MPI_COMM_NULL;
    cc->dup_req = MPI_REQUEST_NULL;
    cc->off = 1;
    int e = comm_attach(cc, comm);
    if (e < 0) free(cc);
    return e;
}

/* ---- communicators made without blocking (MPI_Comm_idup) ------------- */

int hpc_coll_idup_begin(MPI_Comm parent, void **out)
{
    *out = NULL;
    coll_comm_t *pc = comm_find(parent);
    if (!pc || pc->off || pc->sim || pc->dup_req != MPI_REQUEST_NULL) return 0;   /* set up at its first call */
    coll_comm_t *cc = calloc(1, sizeof *cc);
    if (!cc) return HPC_ERR(HPC_ERR_NOMEM, "communicator state");
    cc->rank = pc->rank;
    cc->size = pc->size;
    cc->yield = pc->yield;
    cc->tag_ub = pc->tag_ub;
    cc->comm = MPI_COMM_NULL;
    /* the same group in the same order: the parent's nodes; no shared
     * segment (making one takes a collective over the node) */
    int e = coll_topo_copy(&cc->topo, &pc->topo, pc->size);
    if (e < 0) {
        free(cc);
        return e;
    }
    e = MPI_Comm_idup(pc->comm, &cc->comm, &cc->dup_req);
    if (e != MPI_SUCCESS) {
        coll_topo_free(&cc->topo);
        free(cc);
        return hpc_error_mpi(e, __FILE__, __LINE__, "MPI_Comm_idup");
    }
    cc->next = unattached;
    unattached = cc;
    *out = cc;
    return 0;
}

int hpc_coll_idup_end(void *child, MPI_Comm comm)
{
    coll_comm_t *cc = child;
    if (!cc || comm == MPI_COMM_NULL) return 0;      /* stays unattached until MPI_Finalize */
    for (coll_comm_t **q = &unattached; *q; q = &(*q)->next)
        if (*q == cc) {
            *q = cc->next;
            break;
        }
    HPC_TRY(comm_keyval());
    int e = comm_attach(cc, comm);
    if (e < 0) {
        cc->next = unattached;
        unattached = cc;
    }
    return e;
}

/* ------------------------------------------------------------------ */
/* Scratch buffers                                                      */
/* ------------------------------------------------------------------ */
/* The pool.  A training loop repeats the same collectives, and fresh
 * large buffers cost page faults (host) or milliseconds of cudaMallocHost
 * or cudaMalloc (pinned, device), so a request's scratch buffers go back
 * to its communicator's pool when it completes, and later requests take
 * the smallest pooled buffer of the kind that is big enough.  But the pool
 * must not hold on to memory the program needs:
 *  - per communicator at most COLL_POOL_SLOTS buffers and HPC_COLL_POOL_MAX
 *    bytes (default 256 MiB): a buffer that would pass either evicts the
 *    least recently used ones; one larger than the cap is freed, not kept;
 *  - a buffer unused for HPC_COLL_POOL_IDLE seconds (default 10) is freed
 *    the next time the communicator's pool is used (there is no timer: an
 *    idle communicator keeps its buffers until then);
 *  - all of them go when the communicator is freed, or at MPI_Finalize.
 */
static void tmp_free(void *p, int kind)
{
    if (kind == 0) free(p);
    else coll_dev_free(p, kind);
}

static void evict(coll_comm_t *cc, int i)
{
    tmp_free(cc->pool[i].p, cc->pool[i].kind);
    cc->pool_bytes -= cc->pool[i].size;
    cc->pool[i].p = NULL;
}

/* free what has been idle too long */
static void pool_trim(coll_comm_t *cc, double now)
{
    double idle = coll_settings()->pool_idle;
    for (int i = 0; i < COLL_POOL_SLOTS; i++)
        if (cc->pool[i].p && now - cc->pool[i].last > idle) evict(cc, i);
}

static void pool_put(coll_comm_t *cc, void *p, size_t size, int kind, double now)
{
    size_t cap = coll_settings()->pool_max;
    if (size > cap) {
        tmp_free(p, kind);
        return;
    }
    for (;;) {
        int free_slot = -1, lru = -1;
        for (int i = 0; i < COLL_POOL_SLOTS; i++) {
            if (!cc->pool[i].p) free_slot = i;
            else if (lru < 0 || cc->pool[i].last < cc->pool[lru].last) lru = i;
        }
        if (free_slot >= 0 && cc->pool_bytes + size <= cap) {
            cc->pool[free_slot] = (coll_pooled_t){.p = p, .size = size, .kind = kind, .last = now};
            cc->pool_bytes += size;
            return;
        }
        evict(cc, lru);
    }
}

int coll_tmp_kind(hpc_request_t *r, size_t bytes, int kind, void **out)
{
    if ((size_t)r->ntmp >= sizeof r->tmp / sizeof r->tmp[0])
        return HPC_ERR(HPC_ERR_STATE, "too many scratch buffers in one collective");
    coll_comm_t *cc = r->cc;
    void *p = NULL;
    if (bytes == 0) bytes = 1;
    if (cc->sim && bytes > ((size_t)1 << 20)) {
        /* simulated (simulate.c): big scratch is never touched; only an
         * address is needed, and thousands of ranks' would not fit */
        r->tmp[r->ntmp] = (void *)(uintptr_t)((uint64_t)1 << 46);
        r->tmpkind[r->ntmp] = -1;
        r->tmpsz[r->ntmp++] = bytes;
        *out = r->tmp[r->ntmp - 1];
        return 0;
    }
    pool_trim(cc, coll_now());
    /* the smallest pooled buffer of this kind that is big enough */
    int best = -1;
    for (int i = 0; i < COLL_POOL_SLOTS; i++)
        if (cc->pool[i].p && cc->pool[i].kind == kind && cc->pool[i].size >= bytes &&
            (best < 0 || cc->pool[i].size < cc->pool[best].size)) best = i;
    if (best >= 0) {
        p = cc->pool[best].p;
        bytes = cc->pool[best].size;
        cc->pool[best].p = NULL;
        cc->pool_bytes -= bytes;
    } else if (kind == 0 || (kind == 1 && coll_dev_flags_busy())) {
        /* 64-byte aligned: reduction loops vectorise, device-like alignment.
         * Staging buffers while a stream-wait kernel spins are pageable:
         * cudaMallocHost may synchronise the device (coll_dev_alloc) */
        kind = 0;
        if (posix_memalign(&p, 64, bytes) != 0) p = NULL;
        if (!p) return HPC_ERR(HPC_ERR_NOMEM, "scratch buffer of %zu bytes", bytes);
    } else {
        HPC_TRY(coll_dev_alloc(bytes, kind, &p));
    }
    r->tmp[r->ntmp] = p;
    r->tmpkind[r->ntmp] = kind;
    r->tmpsz[r->ntmp++] = bytes;
    *out = p;
    return 0;
}

void coll_tmp_release(hpc_request_t *r)
{
    coll_comm_t *cc = r->cc;
    if (!r->ntmp) return;
    double now = coll_now();
    pool_trim(cc, now);
    for (int k = 0; k < r->ntmp; k++)
        if (r->tmpkind[k] >= 0) pool_put(cc, r->tmp[k], r->tmpsz[k], r->tmpkind[k], now);
    r->ntmp = 0;
}

void coll_pool_free(coll_comm_t *cc)
{
    for (int i = 0; i < COLL_POOL_SLOTS; i++)
        if (cc->pool[i].p) evict(cc, i);
}

int coll_tmp(hpc_request_t *r, size_t bytes, void **out)
{
    return coll_tmp_kind(r, bytes, r->dev ? 2 : 0, out);
}
