/* alg/shm.c - collectives through shared memory among the ranks of one
 * node: allreduce, reduce, bcast, allgather, gather, scatter,
 * reduce_scatter and barrier, with no barrier per chunk.
 *
 * The node's segment (shmseg.c, made when the communicator was set up)
 * gives every rank a control line of three counters, monotone over all
 * the calls on the segment and counted in chunks: `in` (chunks whose
 * input this rank has made available), `red` (chunks it has worked on,
 * i.e. read the others' inputs of) and `out` (chunks whose result it has
 * taken).  A rank waits only for the counters its next step needs, so
 * the ranks run up to `depth` chunks apart and every chunk's copy in,
 * reduction and copy out overlap with the neighbouring chunks' (a
 * pipeline, not a barrier per chunk).  Two ways to move the data, the
 * same on every rank of a call:
 *
 *  - through the segment: each rank copies its chunk into its slot; for
 *    a reduction each rank reduces its 1/m slice of the chunk from all
 *    slots into the shared result ring, and everybody copies the result
 *    out (reduce-scatter style: the reduction work is split across the
 *    node's ranks).  A slot is refilled only when every rank has read it
 *    (all `red` past it), a ring entry only when every rank has taken it
 *    (all `out` past it).
 *  - single copy, where the kernel allows it (the segment's CMA probe)
 *    and the message is at least HPC_COLL_SINGLE_COPY bytes: each rank
 *    publishes its buffers' addresses and reads the others' straight from
 *    their memory with process_vm_readv - allreduce reads its slice of
 *    every other input (one system call per mate and chunk), reduces it
 *    with its own into the segment, which then holds each chunk's whole
 *    result (its data area as a ring of entries of 4 slots' worth per
 *    rank, at most 2 MiB), and every rank copies the chunk out; bcast, scatter, gather and
 *    allgather are one copy from the source's buffer into the
 *    destination's.  A call then ends only when every rank has read what
 *    it needed from this rank's buffers.
 *    Allreduce's way through memory: each rank reads its input's slice
 *    and its slices of the others' (n bytes) and writes its result (n),
 *    the reduced chunks passing through the cached segment - not through
 *    the others' results, whose lines would be read for ownership and
 *    read back (2.5 n on 2 ranks, and two system calls per chunk: the
 *    design before issue 29).  A result the node's caches cannot keep is
 *    copied out with streaming stores (no read for ownership: 2 n, not
 *    3 n, through memory).
 *
 * Calls take the segment one at a time, in the order they started (a
 * ticket, the same on every rank since calls start in the same order on
 * every rank): nonblocking and hierarchical calls may have several in
 * flight.  A call is one external step of an ordinary schedule (hier's
 * in-node phases too): its test advances it as far as the counters allow
 * and never blocks, so blocking and nonblocking calls work alike.  A
 * small blocking call on a communicator of one node runs here directly,
 * without a request or schedule (coll_shm_inline: the path for small
 * messages).
 *
 * A rank waiting on a node mate's counter looks, every 0.1 s without
 * progress, whether the mate is still alive and its own launcher still
 * there (shmseg.c); if not it says so and ends the job.  HPC_TIMEOUT's
 * watchdog covers the waits like any other (request.c).
 *
 * The builders see the node's ranks as a map (hier's in-node phases:
 * b->map lists one node's ranks, its leader first) or the whole
 * communicator of one node (b->map NULL).  Where there is no segment (a
 * node of one rank, none could be made, the simulator) or the buffers are
 * on the GPU, coll_shm_usable says no and selection takes the registry's
 * next row (coll_row_for): the hierarchical algorithm, which on one node
 * is its in-node phase over point-to-point (gather, scatter: tree).
 */
#include "config.h"
#include "hpc.h"
#include "../coll_internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

enum { K_ALLREDUCE, K_REDUCE, K_BCAST, K_SCATTER, K_ALLGATHER, K_GATHER, K_REDUCE_SCATTER, K_BARRIER };
enum { C_IN, C_RED, C_OUT };

typedef struct shm_call {
    coll_seg_t *s;
    coll_comm_t *cc;
    int kind, cma;
    int stream;             /* allreduce's result copied out with streaming stores */
    int me, m, root;        /* node indices (root: rooted kinds) */
    const int *pos;         /* pos[i]: node rank i's place in the call's rank order; NULL = i */
    const char *in;
    char *out;
    size_t n;               /* elements: the vector, or one block */
    size_t es;
    hpc_dtype_t dt;
    hpc_op_t op;
    size_t cn;              /* elements per chunk (per piece: reduce_scatter) */
    uint64_t nch;           /* chunks */
    uint64_t ticket, base;  /* its turn; chunks of the calls before it */
    uint64_t f, d, o;       /* chunks filled, worked on, taken out */
    int started;
    char *tmp;              /* single copy: slices read from mates, an accumulator */
    unsigned idle;          /* advances without progress */
    double t_moved;         /* stuck since (0: moving; liveness checks) */
} shm_call_t;

/* ---- counters ------------------------------------------------------ */
static _Atomic uint64_t *ctr(const coll_seg_t *s, int i, int which)
{
    coll_seg_line_t *l = coll_seg_line(s, i);
    return which == C_IN ? &l->in : which == C_RED ? &l->red : &l->out;
}

static void publish(shm_call_t *c, int which, uint64_t v)
{
    atomic_store_explicit(ctr(c->s, c->me, which), v, memory_order_release);
}

static int one_at(const shm_call_t *c, int i, int which, uint64_t v)
{
    return atomic_load_explicit(ctr(c->s, i, which), memory_order_acquire) >= v;
}

/* Every rank's counter at least v (the lowest seen is kept: counters
 * only grow). */
static int all_at(shm_call_t *c, int which, uint64_t v)
{
    coll_seg_t *s = c->s;
    if (s->seen[which] >= v) return 1;
    uint64_t lo = UINT64_MAX;
    for (int i = 0; i < s->m; i++) {
        uint64_t x = atomic_load_explicit(ctr(s, i, which), memory_order_acquire);
        if (x < lo) lo = x;
    }
    s->seen[which] = lo;
    return lo >= v;
}

/* ---- helpers ------------------------------------------------------- */
static size_t chunk_len(const shm_call_t *c, uint64_t k)
{
    size_t lo = (size_t)k * c->cn, left = c->n - lo;
    return left < c->cn ? left : c->cn;
}

static int place(const shm_call_t *c, int i)
{
    return c->pos ? c->pos[i] : i;
}

/* my slice [*lo, *hi) of len elements */
static void slice(const shm_call_t *c, int i, size_t len, size_t *lo, size_t *hi)
{
    *lo = len * (size_t)i / (size_t)c->m;
    *hi = len * (size_t)(i + 1) / (size_t)c->m;
}

static void red(const shm_call_t *c, void *dst, const void *a, const void *b, size_t n)
{
    if (n) coll_reduce_host(c->dt, c->op, dst, a, b, n);
}

/* chunk k of the input may go into this rank's slot: every rank has read
 * the slot's previous chunk */
static int slot_free(shm_call_t *c, uint64_t g)
{
    return g < (uint64_t)c->s->depth || all_at(c, C_RED, g + 1 - (uint64_t)c->s->depth);
}

static int ring_free(shm_call_t *c, uint64_t g)
{
    return g < (uint64_t)c->s->depth || all_at(c, C_OUT, g + 1 - (uint64_t)c->s->depth);
}

/* single copy's allreduce: the segment's data area (its ring and slots,
 * unused by single copy) as depth entries of a chunk's result each */
static char *cma_entry(const shm_call_t *c, uint64_t g)
{
    return coll_seg_ring(c->s, 0) + (size_t)(g % (uint64_t)c->s->depth) * c->s->entry;
}

/* ---- through the segment ------------------------------------------- */
/* fill: this rank's input of chunk k into its slot; 1 done, 0 not yet */
static int seg_fill(shm_call_t *c, uint64_t k)
{
    uint64_t g = c->base + k;
    char *slot = coll_seg_slot(c->s, c->me, g);
    size_t len = chunk_len(c, k), es = c->es;
    switch (c->kind) {
    case K_BCAST: case K_SCATTER:
        if (c->me != c->root) return 1;
        /* fall through */
    case K_ALLREDUCE: case K_REDUCE: case K_ALLGATHER: case K_GATHER:
        if (!slot_free(c, g)) return 0;
        memcpy(slot, c->in + (size_t)k * c->cn * es, len * es);
        return 1;
    case K_REDUCE_SCATTER:
        if (!slot_free(c, g)) return 0;
        for (int j = 0; j < c->m; j++)
            memcpy(slot + (size_t)j * c->cn * es, c->in + ((size_t)place(c, j) * c->n + (size_t)k * c->cn) * es,
                   len * es);
        return 1;
    default:
        return 1;
    }
}

/* window [wlo, whi) of the root's vector this rank takes (bcast: all) */
static void window(const shm_call_t *c, size_t *wlo, size_t *whi)
{
    if (c->kind == K_SCATTER) {
        size_t blk = c->n / (size_t)c->m;
        *wlo = (size_t)place(c, c->me) * blk;
        *whi = *wlo + blk;
    } else {
        *wlo = 0;
        *whi = c->n;
    }
}

/* the part of chunk k [lo, lo+len) inside this rank's window: from src
 * (the chunk's start) into the output */
static void take_window(const shm_call_t *c, uint64_t k, const char *src)
{
    size_t lo = (size_t)k * c->cn, hi = lo + chunk_len(c, k), wlo, whi;
    window(c, &wlo, &whi);
    size_t a = lo > wlo ? lo : wlo, b = hi < whi ? hi : whi;
    if (b > a && c->out + (a - wlo) * c->es != src + (a - lo) * c->es)
        memcpy(c->out + (a - wlo) * c->es, src + (a - lo) * c->es, (b - a) * c->es);
}

/* work: read the chunk's inputs (reduce a slice, or copy them out) */
static int seg_work(shm_call_t *c, uint64_t k)
{
    uint64_t g = c->base + k;
    size_t len = chunk_len(c, k), es = c->es, lo, hi;
    coll_seg_t *s = c->s;
    switch (c->kind) {
    case K_ALLREDUCE: case K_REDUCE: {
        if (!all_at(c, C_IN, g + 1) || !ring_free(c, g)) return 0;
        slice(c, c->me, len, &lo, &hi);
        char *res = coll_seg_ring(s, g) + lo * es;
        red(c, res, coll_seg_slot(s, 0, g) + lo * es, coll_seg_slot(s, 1, g) + lo * es, hi - lo);
        for (int j = 2; j < c->m; j++) red(c, res, res, coll_seg_slot(s, j, g) + lo * es, hi - lo);
        return 1;
    }
    case K_BCAST: case K_SCATTER:
        if (c->me == c->root) {
            take_window(c, k, c->in + (size_t)k * c->cn * es);
            return 1;
        }
        if (!one_at(c, c->root, C_IN, g + 1)) return 0;
        take_window(c, k, coll_seg_slot(s, c->root, g));
        return 1;
    case K_ALLGATHER: case K_GATHER:
        if (c->kind == K_GATHER && c->me != c->root) return 1;
        if (!all_at(c, C_IN, g + 1)) return 0;
        for (int j = 0; j < c->m; j++) {
            char *dst = c->out + ((size_t)place(c, j) * c->n + (size_t)k * c->cn) * es;
            const char *src = j == c->me ? c->in + (size_t)k * c->cn * es : coll_seg_slot(s, j, g);
            if (dst != src) memcpy(dst, src, len * es);
        }
        return 1;
    case K_REDUCE_SCATTER: {
        if (!all_at(c, C_IN, g + 1)) return 0;
        size_t off = (size_t)c->me * c->cn * es;
        char *dst = c->out + (size_t)k * c->cn * es;
        red(c, dst, coll_seg_slot(s, 0, g) + off, coll_seg_slot(s, 1, g) + off, len);
        for (int j = 2; j < c->m; j++) red(c, dst, dst, coll_seg_slot(s, j, g) + off, len);
        return 1;
    }
    default:   /* barrier */
        return all_at(c, C_IN, g + 1);
    }
}

/* A result the node's caches cannot keep (the inputs and results of every
 * rank together at least twice the last-level cache) is written with
 * streaming stores: its lines are not read for ownership first, a third
 * of allreduce's traffic through memory.  Smaller ones stay cached for
 * the caller, who reads its result next. */
static int streams(const shm_call_t *c)
{
    return (double)c->m * (double)c->n * (double)c->es >= (double)hpc_llc_bytes();
}

/* dst = src, bytes, by streaming stores where c streams (fenced: the
 * caller's next read, and the chunk's counter, come after them) */
static void take_copy(const shm_call_t *c, char *dst, const char *src, size_t bytes)
{
#if defined(__x86_64__)
    if (c->stream) {
        size_t head = (16 - ((uintptr_t)dst & 15)) & 15, i;
        if (head > bytes) head = bytes;
        memcpy(dst, src, head);
        for (i = head; i + 64 <= bytes; i += 64)
            for (int j = 0; j < 64; j += 16)
                _mm_stream_si128((__m128i *)(void *)(dst + i + j),
                                 _mm_loadu_si128((const __m128i *)(const void *)(src + i + j)));
        memcpy(dst + i, src + i, bytes - i);
        _mm_sfence();
        return;
    }
#endif
    memcpy(dst, src, bytes);
}

/* take: the reduced chunk out of the ring (allreduce; reduce's root) */
static int seg_take(shm_call_t *c, uint64_t k)
{
    uint64_t g = c->base + k;
    if (c->kind == K_REDUCE && c->me != c->root) return 1;
    if (!all_at(c, C_RED, g + 1)) return 0;
    take_copy(c, c->out + (size_t)k * c->cn * c->es, coll_seg_ring(c->s, g), chunk_len(c, k) * c->es);
    return 1;
}

/* ---- single copy --------------------------------------------------- */
/* dst = (first ? own : dst) op (node rank j's elements at remote address
 * src), n elements, read through c->tmp */
static int cma_reduce_from(shm_call_t *c, int j, uint64_t src, char *dst, const char *own, size_t n, int first)
{
    if (!n) return 0;
    HPC_TRY(coll_seg_read(c->s, j, c->tmp, src, n * c->es));
    red(c, dst, first ? own : dst, c->tmp, n);
    return 0;
}

static int cma_work(shm_call_t *c, uint64_t k, int *did)
{
    const coll_seg_t *s = c->s;
    uint64_t end = c->base + c->nch;
    size_t len = chunk_len(c, k), es = c->es, lo, hi;
    *did = 0;
    if (!all_at(c, C_IN, end)) return 0;     /* every rank's addresses are there */
    switch (c->kind) {
    case K_ALLREDUCE: {
        /* my slice of chunk k, reduced from every input into the chunk's
         * entry once every rank has copied out what it held before */
        if (!ring_free(c, c->base + k)) return 0;
        slice(c, c->me, len, &lo, &hi);
        size_t at = ((size_t)k * c->cn + lo) * es;
        char *res = cma_entry(c, c->base + k) + lo * es;
        int first = 1;
        for (int j = 0; j < c->m; j++) {
            if (j == c->me) continue;
            HPC_TRY(cma_reduce_from(c, j, coll_seg_line(s, j)->sbuf + at, res, c->in + at, hi - lo, first));
            first = 0;
        }
        if (first) memcpy(res, c->in + at, (hi - lo) * es);
        break;
    }
    case K_REDUCE: {
        slice(c, c->me, len, &lo, &hi);
        size_t at = ((size_t)k * c->cn + lo) * es;
        int mine = c->me == c->root;
        /* my slice: into my result (the root), else an accumulator
         * written to the root's result */
        char *acc = mine ? c->out + at : c->tmp + (c->cn / (size_t)c->m + 1) * es;
        int first = 1;
        for (int j = 0; j < c->m; j++) {
            if (j == c->me) continue;
            HPC_TRY(cma_reduce_from(c, j, coll_seg_line(s, j)->sbuf + at, acc, c->in + at, hi - lo, first));
            first = 0;
        }
        if (!mine && hi > lo) HPC_TRY(coll_seg_write(s, c->root, coll_seg_line(s, c->root)->rbuf + at, acc, (hi - lo) * es));
        break;
    }
    case K_BCAST: case K_SCATTER: {
        size_t wlo, whi;
        window(c, &wlo, &whi);
        if (c->me == c->root) {
            if (c->out != c->in + wlo * es) memcpy(c->out, c->in + wlo * es, (whi - wlo) * es);
        } else {
            HPC_TRY(coll_seg_read(s, c->root, c->out, coll_seg_line(s, c->root)->sbuf + wlo * es, (whi - wlo) * es));
        }
        break;
    }
    case K_ALLGATHER: case K_GATHER:
        if (c->kind == K_GATHER && c->me != c->root) break;
        for (int j = 0; j < c->m; j++) {
            char *dst = c->out + (size_t)place(c, j) * c->n * es;
            if (j != c->me) HPC_TRY(coll_seg_read(s, j, dst, coll_seg_line(s, j)->sbuf, c->n * es));
            else if (dst != c->in) memcpy(dst, c->in, c->n * es);
        }
        break;
    case K_REDUCE_SCATTER: {
        size_t at = ((size_t)place(c, c->me) * c->n + (size_t)k * c->cn) * es;
        char *dst = c->out + (size_t)k * c->cn * es;
        int first = 1;
        for (int j = 0; j < c->m; j++) {
            if (j == c->me) continue;
            HPC_TRY(cma_reduce_from(c, j, coll_seg_line(s, j)->sbuf + at, dst, c->in + at, len, first));
            first = 0;
        }
        break;
    }
    default:
        break;
    }
    *did = 1;
    return 0;
}

/* allreduce: chunk k's result, whole, out of its entry once every rank
 * has reduced its slice there */
static int cma_take(shm_call_t *c, uint64_t k)
{
    uint64_t g = c->base + k;
    if (!all_at(c, C_RED, g + 1)) return 0;
    take_copy(c, c->out + (size_t)k * c->cn * c->es, cma_entry(c, g), chunk_len(c, k) * c->es);
    return 1;
}

/* ---- the call ------------------------------------------------------ */
static int has_take(const shm_call_t *c)
{
    return c->kind == K_ALLREDUCE || (c->kind == K_REDUCE && !c->cma);
}

/* its turn has come: where its chunks start; single copy: publish */
static void start(shm_call_t *c)
{
    coll_seg_t *s = c->s;
    c->base = s->base_chunk;
    c->started = 1;
    if (!c->cma) return;
    coll_seg_line_t *l = coll_seg_line(s, c->me);
    l->sbuf = (uint64_t)(uintptr_t)c->in;
    l->rbuf = (uint64_t)(uintptr_t)c->out;
    c->f = c->nch;
    publish(c, C_IN, c->base + c->nch);
}

/* A node mate or the launcher is gone: say so, end the job (r: the call). */
static void mate_died(shm_call_t *c, int who, const hpc_request_t *r)
{
    char what[64];
    snprintf(what, sizeof what, "%s #%llu", hpc_coll_name(r->coll), (unsigned long long)r->seq);
    if (who < 0) {
        fprintf(stderr, "hpc: rank %d: %s (alg shm): this rank's launcher (parent pid %lld) has gone; "
                "ending\n", c->cc->rank, what, (long long)c->s->ppid);
        coll_abort_all();
        _exit(1);
    }
    const coll_topo_t *t = &c->cc->topo;
    int rank = t->members[t->first[t->node_of[c->cc->rank]] + who];
    fprintf(stderr, "hpc: rank %d: %s (alg shm): rank %d of this node (pid %lld) has died inside the "
            "shared-memory collective; ending the job\n",
            c->cc->rank, what, rank, (long long)coll_seg_line(c->s, who)->pid);
    coll_abort_all();
    hpc_abort(1);
}

/* A single copy failed with e: where the mate it read has died, that is
 * what the job hears (a mate that is exiting has lost its memory a moment
 * before it shows as gone: a second's grace). */
static int cma_failed(shm_call_t *c, int e, const hpc_request_t *r)
{
    int who;
    for (int i = 0; i < 100; i++) {
        if (coll_seg_dead(c->s, &who)) mate_died(c, who, r);
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return e;
}

/* One step of the pipeline, if the counters allow it: *moved 1, else 0. */
static int step(shm_call_t *c, int *moved, const hpc_request_t *r)
{
    int did = 0, e;
    *moved = 0;
    if (c->f < c->nch && seg_fill(c, c->f)) {
        publish(c, C_IN, c->base + ++c->f);
        *moved = 1;
    }
    if (c->d < c->f) {
        if (c->cma && (e = cma_work(c, c->d, &did)) < 0) return cma_failed(c, e, r);
        if (!c->cma) did = seg_work(c, c->d);
        if (did) {
            uint64_t v = c->base + ++c->d;
            publish(c, C_RED, v);
            if (!has_take(c)) publish(c, C_OUT, c->base + ++c->o);
            *moved = 1;
        }
    }
    if (has_take(c) && c->o < c->d) {
        did = c->cma ? cma_take(c, c->o) : seg_take(c, c->o);
        if (did) {
            publish(c, C_OUT, c->base + ++c->o);
            *moved = 1;
        }
    }
    return 0;
}

/* Advance c as far as it goes; *done at its end.  r: the call, for messages. */
static int advance(shm_call_t *c, int *done, const hpc_request_t *r)
{
    coll_seg_t *s = c->s;
    *done = 0;
    if (!c->started) {
        if (s->turn != c->ticket) return 0;
        start(c);
    }
    int moved = 1, any = 0;
    while (moved) {
        HPC_TRY(step(c, &moved, r));
        any |= moved;
    }
    /* single copy: the others may still read this rank's buffers */
    if (c->o == c->nch && (!c->cma || all_at(c, C_OUT, c->base + c->nch))) {
        s->turn++;
        s->base_chunk = c->base + c->nch;
        *done = 1;
        return 0;
    }
    if (any) {
        c->idle = 0;
        c->t_moved = 0;
        return 0;
    }
    /* stuck: every 0.1 s, are the node mates and the launcher alive?
     * (the clock is read only every 256 turns without progress) */
    if (++c->idle % 256) return 0;
    double now = coll_now();
    if (c->t_moved == 0 || now - c->t_moved < 0.1) {
        if (c->t_moved == 0) c->t_moved = now;
        return 0;
    }
    c->t_moved = now;
    int who;
    if (coll_seg_dead(s, &who)) mate_died(c, who, r);
    return 0;
}

/* ---- as a step of a schedule -------------------------------------- */
static int shm_post(hpc_request_t *r, coll_ext_t *x)
{
    (void)r; (void)x;
    return 0;
}

static int shm_test(hpc_request_t *r, coll_ext_t *x, int *done)
{
    return advance(x->state, done, r);
}

/* what the watchdog says it waits for */
static void shm_describe(hpc_request_t *r, coll_ext_t *x, char *buf, size_t len)
{
    (void)r;
    const shm_call_t *c = x->state;
    if (!c->started) {
        snprintf(buf, len, "none: shared-memory call %llu waits for call %llu on this node's segment",
                 (unsigned long long)c->ticket, (unsigned long long)c->s->turn);
        return;
    }
    const coll_topo_t *t = &c->cc->topo;
    const int *mem = t->members + t->first[t->node_of[c->cc->rank]];
    size_t k = (size_t)snprintf(buf, len, "on this node (shared memory, chunk %llu of %llu):",
                                (unsigned long long)(c->o + 1), (unsigned long long)c->nch);
    for (int i = 0; i < c->m && k < len; i++) {
        const coll_seg_line_t *l = coll_seg_line(c->s, i);
        uint64_t need = c->base + c->o + 1;
        if (i == c->me || (atomic_load(&l->in) >= need && atomic_load(&l->red) >= need)) continue;
        k += (size_t)snprintf(buf + k, len - k, " %d", mem[i]);
    }
}

/* ---- building a call ----------------------------------------------- */
/* May shm run b here: a segment, host memory, one node (b->map: the ranks
 * of this rank's node, in any order; NULL: the communicator is one
 * node)?  Also what the hierarchical algorithms ask before they pick it
 * for a phase. */
int coll_shm_usable(const coll_build_t *b)
{
    coll_comm_t *cc = b->r->cc;
    if (!cc->seg || b->dev || cc->sim) return 0;
    return b->map ? b->p == cc->seg->m : cc->topo.nnodes == 1;
}

/* Single copy for n elements of es bytes (the same choice on every rank:
 * the probe was agreed, n is the call's). */
static int use_cma(const coll_seg_t *s, size_t bytes)
{
    return s->cma && bytes >= coll_settings()->single_copy;
}

/* c for kind on b's node (cc's): node indices, chunks, ticket */
static void call_init(shm_call_t *c, coll_comm_t *cc, const coll_build_t *b, int kind, coll_seg_t *s)
{
    memset(c, 0, sizeof *c);
    c->s = s;
    c->cc = cc;
    c->kind = kind;
    c->m = s->m;
    c->me = s->me;
    c->in = b->sbuf;
    c->out = b->rbuf;
    c->n = b->count;
    c->es = b->es;
    c->dt = b->dt;
    c->op = b->op;
    c->root = 0;
    size_t bytes = b->count * b->es;
    c->cma = kind != K_BARRIER && use_cma(s, bytes);
    /* single copy reads 4 slots' worth at once (a system call each):
     * reduce a slice of that size from each rank; allreduce's chunk is
     * an entry of the segment's data area (4 chunks' worth per rank) */
    size_t read = 4 * s->chunk;
    switch (kind) {
    case K_BARRIER: c->n = 1; c->cn = 1; break;
    case K_ALLREDUCE: c->cn = (c->cma ? s->entry : s->chunk) / c->es; break;
    case K_REDUCE: c->cn = (c->cma ? read * (size_t)c->m : s->chunk) / c->es; break;
    case K_REDUCE_SCATTER: c->cn = c->cma ? read / c->es : s->chunk / ((size_t)c->m * c->es); break;
    case K_SCATTER: c->n = b->count * (size_t)c->m; /* the root's vector */
        /* fall through */
    default:
        /* single copy moves whole blocks at once */
        c->cn = c->cma ? c->n : s->chunk / c->es;
        break;
    }
    if (c->cn == 0) c->cn = 1;
    c->nch = (c->n + c->cn - 1) / c->cn;
    c->stream = kind == K_ALLREDUCE && streams(c);
    c->ticket = s->tickets++;
}

/* Node indices of b's ranks where b->map lists them: pos[node index] =
 * place in b's order, and the root's node index. */
static int map_ranks(const coll_build_t *b, shm_call_t *c, int *pos)
{
    const coll_topo_t *t = &b->r->cc->topo;
    const int *mem = t->members + t->first[t->node_of[b->r->cc->rank]];
    for (int i = 0; i < b->p; i++) {
        int L = -1;
        for (int j = 0; j < c->m && L < 0; j++)
            if (mem[j] == b->map[i]) L = j;
        if (L < 0) return HPC_ERR(HPC_ERR_STATE, "shm: rank %d is not on this node", b->map[i]);
        pos[L] = i;
        if (i == b->root) c->root = L;
    }
    c->pos = pos;
    return 0;
}

static int build(coll_build_t *b, int kind)
{
    coll_comm_t *cc = b->r->cc;
    shm_call_t *c = NULL;
    coll_ext_t *x = NULL;
    int *pos = NULL;
    HPC_TRY(coll_tmp_kind(b->r, sizeof *c, 0, (void **)&c));
    HPC_TRY(coll_tmp_kind(b->r, sizeof *x, 0, (void **)&x));
    call_init(c, cc, b, kind, cc->seg);
    if (b->map) {
        HPC_TRY(coll_tmp_kind(b->r, (size_t)c->m * sizeof *pos, 0, (void **)&pos));
        HPC_TRY(map_ranks(b, c, pos));
    } else {
        c->root = b->root;
    }
    /* single copy's reads land here: a slice (and reduce's accumulator),
     * or a chunk of a block (reduce_scatter) */
    size_t tmp = kind == K_REDUCE_SCATTER ? c->cn : 2 * (c->cn / (size_t)c->m + 1);
    if (c->cma && kind != K_BARRIER) HPC_TRY(coll_tmp_kind(b->r, tmp * c->es, 0, (void **)&c->tmp));
    memset(x, 0, sizeof *x);
    x->post = shm_post;
    x->test = shm_test;
    x->describe = shm_describe;
    x->state = c;
    HPC_TRY(coll_ext_step_x(b->s, x));
    return coll_round(b->s);
}

int coll_allreduce_shm(coll_build_t *b)
{
    return b->count ? build(b, K_ALLREDUCE) : 0;
}

int coll_reduce_shm(coll_build_t *b)
{
    return b->count ? build(b, K_REDUCE) : 0;
}

int coll_bcast_shm(coll_build_t *b)
{
    if (!b->count) return 0;
    coll_build_t c = *b;
    c.sbuf = b->rbuf;    /* the root's buffer is the input */
    return build(&c, K_BCAST);
}

int coll_allgather_shm(coll_build_t *b)
{
    return b->count ? build(b, K_ALLGATHER) : 0;
}

int coll_gather_shm(coll_build_t *b)
{
    return b->count ? build(b, K_GATHER) : 0;
}

int coll_scatter_shm(coll_build_t *b)
{
    return b->count ? build(b, K_SCATTER) : 0;
}

int coll_reduce_scatter_shm(coll_build_t *b)
{
    return b->count ? build(b, K_REDUCE_SCATTER) : 0;
}

int coll_barrier_shm(coll_build_t *b)
{
    return build(b, K_BARRIER);
}

/* ---- what it moves through memory (hpc-collbench --membw) ----------- */
/* Per rank, for an allreduce of n bytes on m ranks, counting the buffers
 * that grow with n (its own and its mates' inputs and results) and not
 * the segment or single copy's staging, which are a few chunks, reused,
 * and stay in cache: it reads n - its input (through the segment), or its
 * input's slice and its slices of the others' (single copy) - and writes
 * its result, n.  2 n either way; what differs is what passes through the
 * caches: through the segment every byte is copied in, reduced and copied
 * out chunk by chunk between the cores, by single copy the kernel reads
 * the mates' slices and the input is not copied in. */
int hpc_coll_shm_traffic(MPI_Comm comm, hpc_coll_t c, size_t count, hpc_dtype_t dt, double *read,
                         double *written, const char **path)
{
    coll_comm_t *cc;
    HPC_TRY(coll_get_comm(comm, &cc));
    coll_seg_t *s = cc->seg;
    if (c != HPC_COLL_ALLREDUCE)
        return HPC_ERR(HPC_ERR_UNSUPPORTED, "the memory traffic of shm's %s is not modelled", hpc_coll_name(c));
    if (!s || cc->topo.nnodes != 1 || s->m != cc->size)
        return HPC_ERR(HPC_ERR_UNSUPPORTED, "shm does not run on this communicator (%s)",
                       !s ? "no shared segment" : "several nodes");
    double n = (double)count * (double)hpc_dtype_size(dt);
    *read = n;
    *written = n;
    if (path) *path = use_cma(s, count * hpc_dtype_size(dt)) ? "single copy" : "through the segment";
    return 0;
}

/* ---- small blocking calls, without a request ----------------------- */
int coll_shm_inline(coll_comm_t *cc, const hpc_coll_args_t *a, int *ran)
{
    *ran = 0;
    coll_seg_t *s = cc->seg;
    int kind;
    switch (a->coll) {
    case HPC_COLL_ALLREDUCE: kind = K_ALLREDUCE; break;
    case HPC_COLL_BCAST: kind = K_BCAST; break;
    case HPC_COLL_REDUCE: kind = K_REDUCE; break;
    case HPC_COLL_BARRIER: kind = K_BARRIER; break;
    case HPC_COLL_ALLGATHER: kind = K_ALLGATHER; break;
    case HPC_COLL_GATHER: kind = K_GATHER; break;
    case HPC_COLL_SCATTER: kind = K_SCATTER; break;
    case HPC_COLL_REDUCE_SCATTER: kind = K_REDUCE_SCATTER; break;
    default: return 0;
    }
    size_t es = hpc_dtype_size(a->dtype), bytes = a->count * es;
    /* one node, its segment, through the segment (single copy needs the
     * request's scratch) */
    if (!s || cc->topo.nnodes != 1 || s->m != cc->size || use_cma(s, bytes) ||
        (kind != K_BARRIER && a->count == 0))
        return 0;
    /* in place as the builders see it (build.c's run_builder): the
     * rank's own block of the output is its input; reduce_scatter's
     * inputs would be overwritten, so it takes the request's copy */
    char *rb = a->recvbuf == HPC_IN_PLACE ? NULL : a->recvbuf;
    const char *sb = a->sendbuf == HPC_IN_PLACE ? NULL : a->sendbuf;
    char *own = rb ? rb + (size_t)cc->rank * bytes : NULL;
    switch (kind) {
    case K_BCAST: sb = rb; break;
    case K_ALLREDUCE: case K_REDUCE: if (!sb) sb = rb; break;
    case K_ALLGATHER: if (!sb) sb = own; break;
    case K_GATHER: if (!sb && cc->rank == a->root) sb = own; break;
    case K_SCATTER: if (!rb && cc->rank == a->root && sb) rb = (char *)sb + (size_t)cc->rank * bytes; break;
    case K_REDUCE_SCATTER: if (!sb || !rb || sb == rb) return 0; break;
    default: break;
    }
    coll_build_t b = {.rank = cc->rank, .p = cc->size, .root = a->root, .sbuf = sb, .rbuf = rb,
                      .count = a->count, .es = es, .dt = a->dtype,
                      .op = a->op == HPC_AVG ? HPC_SUM : a->op};
    shm_call_t c;
    call_init(&c, cc, &b, kind, s);
    c.root = a->root;
    uint64_t seq = cc->seq++;
    /* a request only for the messages of a call that has to wait (the
     * watchdog's, the stall check's, a dead mate's) */
    hpc_request_t r;
    int done = 0, spins = 0;
    for (;;) {
        HPC_TRY(advance(&c, &done, &r));
        if (done) break;
        if (!spins) {
            r = (hpc_request_t){.cc = cc, .seq = seq, .coll = a->coll, .alg = HPC_ALG_SHM, .dt = a->dtype,
                                .op = a->op, .count = a->count, .root = a->root, .blocking = 1};
            r.ext.describe = shm_describe;
            r.ext.state = &c;
            r.t0 = r.t_round = coll_now();
        }
        coll_request_wait_tick(&r, ++spins);
    }
    if (a->op == HPC_AVG && rb && (kind == K_ALLREDUCE || kind == K_REDUCE_SCATTER || cc->rank == a->root))
        coll_scale_host(a->dtype, rb, a->count, cc->size);
    *ran = 1;
    return 0;
}
