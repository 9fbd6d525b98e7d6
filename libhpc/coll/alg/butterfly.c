/* alg/butterfly.c - recursive doubling / halving, Rabenseifner, Bruck
 * and the dissemination barrier.
 *
 * Rank counts that are not powers of two are folded the standard way
 * (Thakur, Rabenseifner & Gropp 2005): with pof2 the largest power of two
 * <= p and rem = p - pof2, each even rank below 2*rem hands its data to the
 * odd rank above it and sits out; the pof2 remaining ranks run the
 * butterfly as "new ranks" and the odd ranks hand the result back.
 * New rank nr stands for old ranks lo(nr) .. lo(nr+1)-1 with
 * lo(nr) = 2nr below rem and nr + rem above, so a range of new ranks is a
 * contiguous range of old ranks: that is what makes allgather and
 * reduce_scatter work on blocks that stay contiguous.
 */
#include "config.h"
#include "hpc.h"
#include "../coll_internal.h"

#define MOD(a, p) ((((a) % (p)) + (p)) % (p))

typedef struct {
    int pof2, rem;
    int nr;           /* new rank, -1 when folded out */
} fold_t;

static fold_t fold_of(int rank, int p)
{
    fold_t f;
    f.pof2 = 1;
    while (f.pof2 * 2 <= p) f.pof2 *= 2;
    f.rem = p - f.pof2;
    if (rank < 2 * f.rem) f.nr = (rank & 1) ? rank / 2 : -1;
    else f.nr = rank - f.rem;
    return f;
}

static int old_rank(const fold_t *f, int nr)
{
    return nr < f->rem ? 2 * nr + 1 : nr + f->rem;
}

/* pipeline segment in elements */
static size_t seg_elems(const coll_build_t *b)
{
    return b->seg / b->es ? b->seg / b->es : 1;
}

/* first old rank a new rank stands for */
static int old_lo(const fold_t *f, int nr)
{
    return nr < f->rem ? 2 * nr : nr + f->rem;
}

/* ---- barrier: dissemination (works for any p, log2 rounds) -------- */
int coll_barrier_butterfly(coll_build_t *b)
{
    char *tok = NULL;
    HPC_TRY(coll_tmp_kind(b->r, 2, 0, (void **)&tok));
    for (int k = 1; k < b->p; k <<= 1) {
        HPC_TRY(coll_send(b, (b->rank + k) % b->p, tok, 1));
        HPC_TRY(coll_recv(b, MOD(b->rank - k, b->p), tok + 1, 1));
        HPC_TRY(coll_round(b->s));
    }
    return 0;
}

/* ---- allreduce: recursive doubling -------------------------------- */
int coll_allreduce_butterfly(coll_build_t *b)
{
    fold_t f = fold_of(b->rank, b->p);
    size_t n = b->count, bytes = n * b->es;
    char *tmp = NULL;
    if (f.nr < 0) {                        /* folded out: give, then take */
        HPC_TRY(coll_send(b, b->rank + 1, b->sbuf, bytes));
        HPC_TRY(coll_round(b->s));
        HPC_TRY(coll_recv(b, b->rank + 1, b->rbuf, bytes));
        return coll_round(b->s);
    }
    HPC_TRY(coll_tmp(b->r, bytes, (void **)&tmp));
    if (b->rank < 2 * f.rem) {
        HPC_TRY(coll_recv(b, b->rank - 1, tmp, bytes));
        HPC_TRY(coll_reduce(b, b->rbuf, b->sbuf, tmp, n));
    } else {
        HPC_TRY(coll_copy(b, b->rbuf, b->sbuf, bytes));
    }
    HPC_TRY(coll_round(b->s));
    for (int mask = 1; mask < f.pof2; mask <<= 1) {
        int peer = old_rank(&f, f.nr ^ mask);
        HPC_TRY(coll_send(b, peer, b->rbuf, bytes));
        HPC_TRY(coll_recv(b, peer, tmp, bytes));
        HPC_TRY(coll_reduce(b, b->rbuf, b->rbuf, tmp, n));
        HPC_TRY(coll_round(b->s));
    }
    if (b->rank < 2 * f.rem) {
        HPC_TRY(coll_send(b, b->rank - 1, b->rbuf, bytes));
        HPC_TRY(coll_round(b->s));
    }
    return 0;
}

/* Recursive halving over new ranks on a vector whose block for new rank i
 * spans elements off[i] .. off[i+1]: at distance d (pof2/2 down to 1) the
 * pair nr, nr^d shares a range of 2d blocks, each keeps its half and sends
 * the other; out[kept] = cur[kept] (op) incoming.  After it, out holds the
 * fully reduced block nr.  cur is the input of the first step; tmp holds
 * COLL_INFLIGHT segments. */
static int halving(coll_build_t *b, const fold_t *f, const size_t *off, const char *cur,
                   char *out, char *tmp, size_t segn)
{
    size_t es = b->es;
    int nr = f->nr;
    for (int d = f->pof2 / 2; d >= 1; d >>= 1) {
        int lo = nr & ~(2 * d - 1), keep = nr & d ? lo + d : lo, give = nr & d ? lo : lo + d;
        int peer = old_rank(f, nr ^ d);
        size_t ko = off[keep], kn = off[keep + d] - ko, go = off[give], gn = off[give + d] - go;
        /* in segments, each reduced the moment it arrives (still in cache) */
        for (size_t a = 0, k = 0; a < gn || a < kn; a += segn, k++) {
            if (a < gn) HPC_TRY(coll_send(b, peer, cur + (go + a) * es, (gn - a < segn ? gn - a : segn) * es));
            if (a < kn)
                HPC_TRY(coll_recv_reduce(b, peer, tmp + (k % COLL_INFLIGHT) * segn * es,
                                         kn - a < segn ? kn - a : segn, out + (ko + a) * es, cur + (ko + a) * es));
            if (k % COLL_INFLIGHT == COLL_INFLIGHT - 1) HPC_TRY(coll_round(b->s));
        }
        HPC_TRY(coll_round(b->s));
        cur = out;
    }
    return 0;
}

/* Recursive doubling allgather over new ranks: at distance d (1 up to
 * pof2/2) nr has blocks [lo, lo+d) and swaps them for the partner's. */
static int doubling(coll_build_t *b, const fold_t *f, const size_t *off, char *buf)
{
    size_t es = b->es;
    int nr = f->nr;
    for (int d = 1; d < f->pof2; d <<= 1) {
        int lo = nr & ~(d - 1), plo = lo ^ d;
        int peer = old_rank(f, nr ^ d);
        HPC_TRY(coll_send(b, peer, buf + off[lo] * es, (off[lo + d] - off[lo]) * es));
        HPC_TRY(coll_recv(b, peer, buf + off[plo] * es, (off[plo + d] - off[plo]) * es));
        HPC_TRY(coll_round(b->s));
    }
    return 0;
}

/* Block offsets of n elements over pof2 new ranks, nearly equal. */
static int even_offsets(coll_build_t *b, int pof2, size_t n, size_t **out)
{
    size_t *off = NULL;
    HPC_TRY(coll_tmp_kind(b->r, (size_t)(pof2 + 1) * sizeof *off, 0, (void **)&off));
    for (int i = 0; i <= pof2; i++)
        off[i] = (size_t)i * (n / (size_t)pof2) + ((size_t)i < n % (size_t)pof2 ? (size_t)i : n % (size_t)pof2);
    *out = off;
    return 0;
}

/* Fold in: old even ranks below 2*rem send everything; the odd neighbour
 * makes dst = in (op) theirs.  Returns what the butterfly starts from. */
static int fold_in(coll_build_t *b, const fold_t *f, const char *in, char *dst, size_t n,
                   char *tmp, const char **cur)
{
    size_t bytes = n * b->es;
    *cur = in;
    if (b->rank >= 2 * f->rem) return 0;
    if (f->nr < 0) {
        HPC_TRY(coll_send(b, b->rank + 1, in, bytes));
    } else {
        HPC_TRY(coll_recv(b, b->rank - 1, tmp, bytes));
        HPC_TRY(coll_reduce(b, dst, in, tmp, n));
        *cur = dst;
    }
    return coll_round(b->s);
}

/* ---- allreduce: Rabenseifner = halving reduce-scatter + doubling ---- */
int coll_allreduce_rabenseifner(coll_build_t *b)
{
    fold_t f = fold_of(b->rank, b->p);
    size_t n = b->count, bytes = n * b->es;
    if (f.nr < 0) {                        /* folded out: give, then take */
        HPC_TRY(coll_send(b, b->rank + 1, b->sbuf, bytes));
        HPC_TRY(coll_round(b->s));
        HPC_TRY(coll_recv(b, b->rank + 1, b->rbuf, bytes));
        return coll_round(b->s);
    }
    size_t *off = NULL;
    char *tmp = NULL;
    const char *cur = NULL;
    HPC_TRY(even_offsets(b, f.pof2, n, &off));
    /* scratch: the fold's whole vector, or the segments in flight */
    size_t segn = seg_elems(b);
    size_t need = (size_t)COLL_INFLIGHT * segn * b->es;
    HPC_TRY(coll_tmp(b->r, b->rank < 2 * f.rem && bytes > need ? bytes : need, (void **)&tmp));
    HPC_TRY(fold_in(b, &f, b->sbuf, b->rbuf, n, tmp, &cur));
    if (f.pof2 == 1) {
        HPC_TRY(coll_copy(b, b->rbuf, cur, bytes));
    } else {
        HPC_TRY(halving(b, &f, off, cur, b->rbuf, tmp, segn));
        HPC_TRY(doubling(b, &f, off, b->rbuf));
    }
    if (b->rank < 2 * f.rem) {
        HPC_TRY(coll_send(b, b->rank - 1, b->rbuf, bytes));
        HPC_TRY(coll_round(b->s));
    }
    return 0;
}

/* ---- reduce: Rabenseifner = halving reduce-scatter + gather --------- */
int coll_reduce_rabenseifner(coll_build_t *b)
{
    fold_t f = fold_of(b->rank, b->p);
    size_t n = b->count, bytes = n * b->es, es = b->es;
    int isroot = b->rank == b->root;
    size_t *off = NULL;
    HPC_TRY(even_offsets(b, f.pof2, n, &off));
    if (f.nr >= 0) {
        char *tmp = NULL, *acc = isroot ? b->rbuf : NULL;
        const char *cur = NULL;
        if (!acc) HPC_TRY(coll_tmp(b->r, bytes, (void **)&acc));
        size_t need = (size_t)COLL_INFLIGHT * seg_elems(b) * b->es;
        HPC_TRY(coll_tmp(b->r, bytes > need ? bytes : need, (void **)&tmp));
        HPC_TRY(fold_in(b, &f, b->sbuf, acc, n, tmp, &cur));
        if (f.pof2 == 1) HPC_TRY(coll_copy(b, acc, cur, bytes));
        else HPC_TRY(halving(b, &f, off, cur, acc, tmp, seg_elems(b)));
        HPC_TRY(coll_round(b->s));
        /* gather: every new rank's block straight to the root */
        if (!isroot) HPC_TRY(coll_send(b, b->root, acc + off[f.nr] * es, (off[f.nr + 1] - off[f.nr]) * es));
    } else {
        HPC_TRY(coll_send(b, b->rank + 1, b->sbuf, bytes));
        HPC_TRY(coll_round(b->s));
    }
    if (isroot)
        for (int nr = 0; nr < f.pof2; nr++)
            if (old_rank(&f, nr) != b->rank)
                HPC_TRY(coll_recv(b, old_rank(&f, nr), b->rbuf + off[nr] * es, (off[nr + 1] - off[nr]) * es));
    return coll_round(b->s);
}

/* ---- reduce_scatter: recursive halving on rank blocks --------------- */
int coll_reduce_scatter_butterfly(coll_build_t *b)
{
    fold_t f = fold_of(b->rank, b->p);
    int p = b->p;
    size_t n = b->count, es = b->es, all = n * (size_t)p;
    if (f.nr < 0) {
        HPC_TRY(coll_send(b, b->rank + 1, b->sbuf, all * es));
        HPC_TRY(coll_round(b->s));
        HPC_TRY(coll_recv(b, b->rank + 1, b->rbuf, n * es));
        return coll_round(b->s);
    }
    /* new rank i's block: the old ranks it stands for */
    size_t *off = NULL;
    HPC_TRY(coll_tmp_kind(b->r, (size_t)(f.pof2 + 1) * sizeof *off, 0, (void **)&off));
    for (int i = 0; i <= f.pof2; i++) off[i] = (size_t)(i < f.pof2 ? old_lo(&f, i) : p) * n;
    char *acc = NULL, *tmp = NULL;
    const char *cur = NULL;
    size_t need = (size_t)COLL_INFLIGHT * seg_elems(b) * es;
    HPC_TRY(coll_tmp(b->r, all * es, (void **)&acc));
    HPC_TRY(coll_tmp(b->r, all * es > need ? all * es : need, (void **)&tmp));
    HPC_TRY(fold_in(b, &f, b->sbuf, acc, all, tmp, &cur));
    if (f.pof2 > 1) HPC_TRY(halving(b, &f, off, cur, acc, tmp, seg_elems(b)));
    else if (cur != acc) HPC_TRY(coll_copy(b, acc, cur, all * es));
    HPC_TRY(coll_round(b->s));
    /* acc holds reduced blocks of old ranks lo(nr)..; hand out the fold */
    if (b->rank < 2 * f.rem) HPC_TRY(coll_send(b, b->rank - 1, acc + (size_t)(b->rank - 1) * n * es, n * es));
    HPC_TRY(coll_copy(b, b->rbuf, acc + (size_t)b->rank * n * es, n * es));
    return coll_round(b->s);
}

/* ---- allgather: recursive doubling ---------------------------------- */
int coll_allgather_butterfly(coll_build_t *b)
{
    fold_t f = fold_of(b->rank, b->p);
    int p = b->p;
    size_t n = b->count, es = b->es;
    if (f.nr < 0) {
        HPC_TRY(coll_send(b, b->rank + 1, b->sbuf, n * es));
        HPC_TRY(coll_round(b->s));
        HPC_TRY(coll_recv(b, b->rank + 1, b->rbuf, (size_t)p * n * es));
        return coll_round(b->s);
    }
    size_t *off = NULL;
    HPC_TRY(coll_tmp_kind(b->r, (size_t)(f.pof2 + 1) * sizeof *off, 0, (void **)&off));
    for (int i = 0; i <= f.pof2; i++) off[i] = (size_t)(i < f.pof2 ? old_lo(&f, i) : p) * n;
    if (b->rank < 2 * f.rem)
        HPC_TRY(coll_recv(b, b->rank - 1, b->rbuf + (size_t)(b->rank - 1) * n * es, n * es));
    HPC_TRY(coll_copy(b, b->rbuf + (size_t)b->rank * n * es, b->sbuf, n * es));
    HPC_TRY(coll_round(b->s));
    HPC_TRY(doubling(b, &f, off, b->rbuf));
    if (b->rank < 2 * f.rem) {
        HPC_TRY(coll_send(b, b->rank - 1, b->rbuf, (size_t)p * n * es));
        HPC_TRY(coll_round(b->s));
    }
    return 0;
}

/* ---- allgather: Bruck (ceil(log2 p) rounds for any p) ---------------- */
int coll_allgather_bruck(coll_build_t *b)
{
    int p = b->p, r = b->rank;
    size_t bytes = b->count * b->es;
    char *t = NULL;
    HPC_TRY(coll_tmp(b->r, (size_t)p * bytes, (void **)&t));
    /* t[i] = block of rank r+i */
    HPC_TRY(coll_copy(b, t, b->sbuf, bytes));
    HPC_TRY(coll_round(b->s));
    for (int k = 1; k < p; k <<= 1) {
        int cnt = k < p - k ? k : p - k;
        HPC_TRY(coll_send(b, MOD(r - k, p), t, (size_t)cnt * bytes));
        HPC_TRY(coll_recv(b, (r + k) % p, t + (size_t)k * bytes, (size_t)cnt * bytes));
        HPC_TRY(coll_round(b->s));
    }
    HPC_TRY(coll_copy(b, b->rbuf + (size_t)r * bytes, t, (size_t)(p - r) * bytes));
    HPC_TRY(coll_copy(b, b->rbuf, t + (size_t)(p - r) * bytes, (size_t)r * bytes));
    return coll_round(b->s);
}

/* ---- alltoall: Bruck ------------------------------------------------ */
int coll_alltoall_bruck(coll_build_t *b)
{
    int p = b->p, r = b->rank;
    size_t bytes = b->count * b->es;
    char *t = NULL, *pk = NULL, *up = NULL;
    HPC_TRY(coll_tmp(b->r, (size_t)p * bytes, (void **)&t));
    HPC_TRY(coll_tmp(b->r, (size_t)p * bytes, (void **)&pk));
    HPC_TRY(coll_tmp(b->r, (size_t)p * bytes, (void **)&up));
    /* phase 1: t[i] = data for rank r+i */
    HPC_TRY(coll_copy(b, t, b->sbuf + (size_t)r * bytes, (size_t)(p - r) * bytes));
    HPC_TRY(coll_copy(b, t + (size_t)(p - r) * bytes, b->sbuf, (size_t)r * bytes));
    /* phase 2: at step k, blocks whose index has bit k travel k ranks on;
     * packing for a step happens in the previous round's local steps */
    for (int k = 1; k < p; k <<= 1) {
        int nb = 0;
        for (int i = 1; i < p; i++)
            if (i & k) HPC_TRY(coll_copy(b, pk + (size_t)nb++ * bytes, t + (size_t)i * bytes, bytes));
        HPC_TRY(coll_round(b->s));
        HPC_TRY(coll_send(b, (r + k) % p, pk, (size_t)nb * bytes));
        HPC_TRY(coll_recv(b, MOD(r - k, p), up, (size_t)nb * bytes));
        for (int i = 1, j = 0; i < p; i++)
            if (i & k) HPC_TRY(coll_copy(b, t + (size_t)i * bytes, up + (size_t)j++ * bytes, bytes));
    }
    /* phase 3: t[i] came from rank r-i */
    for (int i = 0; i < p; i++)
        HPC_TRY(coll_copy(b, b->rbuf + (size_t)MOD(r - i, p) * bytes, t + (size_t)i * bytes, bytes));
    return coll_round(b->s);
}
