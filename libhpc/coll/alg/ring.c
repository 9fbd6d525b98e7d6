/* alg/ring.c - ring algorithms.
 *
 * allreduce = ring reduce-scatter + ring allgather (Patarasuk & Yuan):
 * each rank sends and receives 2(p-1)/p of the data, the bandwidth optimum.
 * The reduce-scatter phase moves each block in segments, COLL_INFLIGHT at
 * a time; each is reduced the moment it arrives, while still in cache, and
 * the reduction writes out = in (op) incoming directly, so no copy of the
 * input is ever made.  Broadcast and reduce on a ring are the pipelined
 * chain.
 */
#include "config.h"
#include "hpc.h"
#include "../coll_internal.h"

#define MOD(a, p) ((((a) % (p)) + (p)) % (p))

/* n elements in p nearly equal blocks: block i starts at off(i). */
static size_t blk_off(size_t n, int p, int i)
{
    size_t q = n / (size_t)p, r = n % (size_t)p;
    return (size_t)i * q + ((size_t)i < r ? (size_t)i : r);
}
static size_t blk_len(size_t n, int p, int i)
{
    return blk_off(n, p, i + 1) - blk_off(n, p, i);
}

int coll_allreduce_ring(coll_build_t *b)
{
    int p = b->p, r = b->rank, right = (r + 1) % p, left = (r - 1 + p) % p;
    size_t n = b->count, es = b->es;
    size_t segn = b->seg / es ? b->seg / es : 1;
    size_t maxblk = blk_len(n, p, 0);
    if (segn > maxblk) segn = maxblk ? maxblk : 1;
    char *tmp = NULL;
    HPC_TRY(coll_tmp(b->r, (size_t)COLL_INFLIGHT * segn * es, (void **)&tmp));
    const char *in = b->sbuf;
    char *out = b->rbuf;
    /* reduce-scatter: step s sends block r-s (own input at s = 0, else the
     * partial result made at step s-1) and receives block r-s-1 in
     * segments, each reduced as soon as it is in (still in cache), adding
     * this rank's input: out[blk] = in[blk] + incoming. */
    for (int s = 0; s < p - 1; s++) {
        int sb = MOD(r - s, p), rb = MOD(r - s - 1, p);
        const char *src = s == 0 ? in : out;
        size_t so = blk_off(n, p, sb), sl = blk_len(n, p, sb);
        size_t ro = blk_off(n, p, rb), rl = blk_len(n, p, rb);
        for (size_t a = 0, k = 0; a < sl || a < rl; a += segn, k++) {
            if (a < sl) HPC_TRY(coll_send(b, right, src + (so + a) * es, (sl - a < segn ? sl - a : segn) * es));
            if (a < rl)
                HPC_TRY(coll_recv_reduce(b, left, tmp + (k % COLL_INFLIGHT) * segn * es,
                                         rl - a < segn ? rl - a : segn, out + (ro + a) * es, in + (ro + a) * es));
            if (k % COLL_INFLIGHT == COLL_INFLIGHT - 1) HPC_TRY(coll_round(b->s));
        }
        HPC_TRY(coll_round(b->s));
    }
    /* allgather: rank owns block r+1; step s passes block r+1-s along,
     * straight into the output - nothing to reduce, so one message each */
    for (int s = 0; s < p - 1; s++) {
        int sb = MOD(r + 1 - s, p), rb = MOD(r - s, p);
        HPC_TRY(coll_send(b, right, out + blk_off(n, p, sb) * es, blk_len(n, p, sb) * es));
        HPC_TRY(coll_recv(b, left, out + blk_off(n, p, rb) * es, blk_len(n, p, rb) * es));
        HPC_TRY(coll_round(b->s));
    }
    return 0;
}

/* reduce_scatter: p blocks of count elements; rank must end with block r.
 * Step s sends block r-s-1 and receives block r-s-2, so the last step
 * (s = p-2) receives block r.  Partial results alternate between two
 * scratch vectors; the final one is written into recvbuf. */
int coll_reduce_scatter_ring(coll_build_t *b)
{
    int p = b->p, r = b->rank, right = (r + 1) % p, left = (r - 1 + p) % p;
    size_t n = b->count, es = b->es;
    size_t segn = b->seg / es ? b->seg / es : 1;
    if (segn > n) segn = n ? n : 1;
    char *tmp = NULL, *acc[2] = {NULL, NULL};
    HPC_TRY(coll_tmp(b->r, (size_t)COLL_INFLIGHT * segn * es, (void **)&tmp));
    if (p > 2) {
        HPC_TRY(coll_tmp(b->r, n * es, (void **)&acc[0]));
        HPC_TRY(coll_tmp(b->r, n * es, (void **)&acc[1]));
    }
    for (int s = 0; s < p - 1; s++) {
        int sb = MOD(r - s - 1, p), rb = MOD(r - s - 2, p);
        const char *src = s == 0 ? b->sbuf + (size_t)sb * n * es : acc[(s - 1) & 1];
        char *dst = s == p - 2 ? b->rbuf : acc[s & 1];
        for (size_t a = 0, k = 0; a < n; a += segn, k++) {
            size_t len = n - a < segn ? n - a : segn;
            HPC_TRY(coll_send(b, right, src + a * es, len * es));
            HPC_TRY(coll_recv_reduce(b, left, tmp + (k % COLL_INFLIGHT) * segn * es, len, dst + a * es,
                                     b->sbuf + ((size_t)rb * n + a) * es));
            if (k % COLL_INFLIGHT == COLL_INFLIGHT - 1) HPC_TRY(coll_round(b->s));
        }
        HPC_TRY(coll_round(b->s));
    }
    return 0;
}

/* allgather: p-1 steps passing blocks to the right */
int coll_allgather_ring(coll_build_t *b)
{
    int p = b->p, r = b->rank, right = (r + 1) % p, left = (r - 1 + p) % p;
    size_t bytes = b->count * b->es;
    HPC_TRY(coll_copy(b, b->rbuf + (size_t)r * bytes, b->sbuf, bytes));
    for (int s = 0; s < p - 1; s++) {
        int sb = MOD(r - s, p), rb = MOD(r - s - 1, p);
        HPC_TRY(coll_send(b, right, s == 0 ? b->sbuf : b->rbuf + (size_t)sb * bytes, bytes));
        HPC_TRY(coll_recv(b, left, b->rbuf + (size_t)rb * bytes, bytes));
        HPC_TRY(coll_round(b->s));
    }
    return 0;
}

/* broadcast: pipelined chain root -> root+1 -> ... */
int coll_bcast_ring(coll_build_t *b)
{
    int p = b->p, vr = MOD(b->rank - b->root, p);
    int parent = vr ? MOD(b->rank - 1, p) : -1, child = (b->rank + 1) % p;
    return coll_tree_bcast(b, b->rbuf, b->count * b->es, parent, &child, vr < p - 1,
                           p <= 2 ? 0 : b->seg);
}

/* reduce: pipelined chain root+p-1 -> ... -> root+1 -> root */
int coll_reduce_ring(coll_build_t *b)
{
    int p = b->p, vr = MOD(b->rank - b->root, p);
    int parent = vr ? MOD(b->rank - 1, p) : -1, child = (b->rank + 1) % p;
    int nchild = vr < p - 1;
    char *acc = b->rbuf;
    if (vr && nchild) HPC_TRY(coll_tmp(b->r, b->count * b->es, (void **)&acc));
    return coll_tree_reduce(b, b->sbuf, acc, b->count, parent, &child, nchild, b->seg);
}

/* alltoall: pairwise exchange, step s with ranks r+s and r-s */
int coll_alltoall_ring(coll_build_t *b)
{
    int p = b->p, r = b->rank;
    size_t bytes = b->count * b->es;
    HPC_TRY(coll_copy(b, b->rbuf + (size_t)r * bytes, b->sbuf + (size_t)r * bytes, bytes));
    for (int s = 1; s < p; s++) {
        int to = (r + s) % p, from = MOD(r - s, p);
        HPC_TRY(coll_send(b, to, b->sbuf + (size_t)to * bytes, bytes));
        HPC_TRY(coll_recv(b, from, b->rbuf + (size_t)from * bytes, bytes));
        HPC_TRY(coll_round(b->s));
    }
    return 0;
}

/* scatter_allgather broadcast (van de Geijn): binomial scatter of p chunks
 * of the message, then a ring allgather of the chunks.  2(p-1)/p n bytes
 * per rank instead of log(p) n for the tree. */
int coll_bcast_scatter_allgather(coll_build_t *b)
{
    int p = b->p, root = b->root, vr = MOD(b->rank - root, p);
    size_t es = b->es, n = b->count;
    char *buf = b->rbuf;
    /* chunk i (in vr order) = elements blk_off(n,p,i).. */
#define CO(i) (blk_off(n, p, (i)) * es)
    /* scatter: vr receives chunks [vr, vr+sub) from its parent and hands
     * children their ranges */
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            int parent = MOD(vr - mask + root, p);
            int hi = vr + mask < p ? vr + mask : p;
            HPC_TRY(coll_recv(b, parent, buf + CO(vr), CO(hi) - CO(vr)));
            HPC_TRY(coll_round(b->s));
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < p) {
            int c = vr + mask, hi = c + mask < p ? c + mask : p;
            HPC_TRY(coll_send(b, MOD(c + root, p), buf + CO(c), CO(hi) - CO(c)));
        }
    }
    HPC_TRY(coll_round(b->s));
    /* ring allgather of chunks in vr space */
    int right = MOD(b->rank + 1, p), left = MOD(b->rank - 1, p);
    for (int s = 0; s < p - 1; s++) {
        int sc = MOD(vr - s, p), rc = MOD(vr - s - 1, p);
        HPC_TRY(coll_send(b, right, buf + CO(sc), CO(sc + 1) - CO(sc)));
        HPC_TRY(coll_recv(b, left, buf + CO(rc), CO(rc + 1) - CO(rc)));
        HPC_TRY(coll_round(b->s));
    }
#undef CO
    return 0;
}
