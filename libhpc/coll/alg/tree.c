/* alg/tree.c - linear (naive) and binomial-tree algorithms, and the
 * two pipelined tree shapes they share with the ring family: a segmented
 * broadcast down a tree and a segmented reduction up a tree (a chain is
 * the tree with one child, which is what the ring broadcast/reduce use).
 *
 * Ranks are renumbered relative to the root (vr = rank - root mod p) so the
 * root is always vr 0; binomial tree: the parent of vr clears its lowest
 * set bit, its children are vr + 2^k for 2^k below that bit.
 */
#include "config.h"
#include "hpc.h"
#include "../coll_internal.h"

#include <string.h>

#define REAL(vr, root, p) (((vr) + (root)) % (p))

/* Binomial tree around vr: parent vr (-1 at the root), children vr. */
static void binomial(int vr, int p, int *parent, int *child, int *nchild)
{
    int mask = 1, n = 0;
    *parent = -1;
    while (mask < p) {
        if (vr & mask) {
            *parent = vr - mask;
            break;
        }
        if (vr + mask < p) child[n++] = vr + mask;
        mask <<= 1;
    }
    *nchild = n;
}

/* Number of vr in the subtree rooted at vr. */
static int subtree(int vr, int p)
{
    int low = vr ? (vr & -vr) : p;
    return low < p - vr ? low : p - vr;
}

/* ---- pipelined shapes --------------------------------------------- */

/* Broadcast bytes of buf from parent (-1: this rank has them) to children,
 * in segments: round k receives segment k and forwards segment k-1, so a
 * segment moves down one level per round while the next one arrives. */
int coll_tree_bcast(coll_build_t *b, char *buf, size_t bytes, int parent,
                    const int *child, int nchild, size_t seg)
{
    if (bytes == 0) return 0;
    if (seg == 0 || seg > bytes) seg = bytes;
    size_t nseg = (bytes + seg - 1) / seg;
    for (size_t k = 0; k <= nseg; k++) {
        if (parent >= 0 && k < nseg) {
            size_t off = k * seg, len = bytes - off < seg ? bytes - off : seg;
            HPC_TRY(coll_recv(b, parent, buf + off, len));
        }
        /* the root sends segment k in round k; others forward k-1 */
        size_t sk = parent >= 0 ? k - 1 : k;
        if ((parent >= 0 ? k > 0 : k < nseg)) {
            size_t off = sk * seg, len = bytes - off < seg ? bytes - off : seg;
            for (int c = nchild - 1; c >= 0; c--)   /* largest subtree first */
                HPC_TRY(coll_send(b, child[c], buf + off, len));
        }
        HPC_TRY(coll_round(b->s));
    }
    return 0;
}

/* Reduce n elements of in up the tree: children's partial results arrive
 * segment by segment into scratch and are combined into acc (acc may be in,
 * e.g. in place at the root; at a leaf acc is not used), and acc's segment
 * k-1 goes to the parent while segment k arrives. */
int coll_tree_reduce(coll_build_t *b, const char *in, char *acc, size_t n, int parent,
                     const int *child, int nchild, size_t seg)
{
    size_t es = b->es;
    if (n == 0) return 0;
    size_t segn = seg == 0 ? n : (seg / es ? seg / es : 1);
    if (segn > n) segn = n;
    size_t nseg = (n + segn - 1) / segn;
    char *tmp = NULL;
    if (nchild) HPC_TRY(coll_tmp(b->r, (size_t)nchild * segn * es, (void **)&tmp));
    const char *out = nchild ? acc : in;      /* what goes to the parent */
    for (size_t k = 0; k <= nseg; k++) {
        if (k < nseg && nchild) {
            size_t off = k * segn, len = n - off < segn ? n - off : segn;
            for (int c = 0; c < nchild; c++)
                HPC_TRY(coll_recv(b, child[c], tmp + (size_t)c * segn * es, len * es));
            HPC_TRY(coll_reduce(b, acc + off * es, in + off * es, tmp, len));
            for (int c = 1; c < nchild; c++)
                HPC_TRY(coll_reduce(b, acc + off * es, acc + off * es,
                                    tmp + (size_t)c * segn * es, len));
        }
        if (parent >= 0 && (nchild ? k > 0 : k < nseg)) {
            size_t sk = nchild ? k - 1 : k;
            size_t off = sk * segn, len = n - off < segn ? n - off : segn;
            HPC_TRY(coll_send(b, parent, out + off * es, len * es));
        }
        HPC_TRY(coll_round(b->s));
    }
    return 0;
}

/* ---- barrier ------------------------------------------------------- */

int coll_barrier_linear(coll_build_t *b)
{
    char *tok = NULL;
    HPC_TRY(coll_tmp_kind(b->r, (size_t)b->p, 0, (void **)&tok));
    if (b->rank == 0) {
        for (int i = 1; i < b->p; i++) HPC_TRY(coll_recv(b, i, tok + i, 1));
        HPC_TRY(coll_round(b->s));
        for (int i = 1; i < b->p; i++) HPC_TRY(coll_send(b, i, tok, 1));
    } else {
        HPC_TRY(coll_send(b, 0, tok, 1));
        HPC_TRY(coll_round(b->s));
        HPC_TRY(coll_recv(b, 0, tok, 1));
    }
    return coll_round(b->s);
}

int coll_barrier_tree(coll_build_t *b)
{
    int parent, child[32], nchild;
    char *tok = NULL;
    HPC_TRY(coll_tmp_kind(b->r, 64, 0, (void **)&tok));
    binomial(b->rank, b->p, &parent, child, &nchild);
    /* up: a token from every child, then one to the parent; down: reverse */
    for (int c = 0; c < nchild; c++) HPC_TRY(coll_recv(b, child[c], tok + 1 + c, 1));
    HPC_TRY(coll_round(b->s));
    if (parent >= 0) {
        HPC_TRY(coll_send(b, parent, tok, 1));
        HPC_TRY(coll_round(b->s));
        HPC_TRY(coll_recv(b, parent, tok, 1));
        HPC_TRY(coll_round(b->s));
    }
    for (int c = 0; c < nchild; c++) HPC_TRY(coll_send(b, child[c], tok, 1));
    return coll_round(b->s);
}

/* ---- broadcast ----------------------------------------------------- */

int coll_bcast_linear(coll_build_t *b)
{
    size_t bytes = b->count * b->es;
    if (b->rank == b->root) {
        for (int i = 0; i < b->p; i++)
            if (i != b->root) HPC_TRY(coll_send(b, i, b->rbuf, bytes));
    } else {
        HPC_TRY(coll_recv(b, b->root, b->rbuf, bytes));
    }
    return coll_round(b->s);
}

int coll_bcast_tree(coll_build_t *b)
{
    int p = b->p, vr = (b->rank - b->root + p) % p, parent, child[32], nchild;
    binomial(vr, p, &parent, child, &nchild);
    for (int c = 0; c < nchild; c++) child[c] = REAL(child[c], b->root, p);
    if (parent >= 0) parent = REAL(parent, b->root, p);
    /* segments let the levels overlap (big ones keep the per-message cost
     * low); with one level there is nothing to overlap: one message */
    return coll_tree_bcast(b, b->rbuf, b->count * b->es, parent, child, nchild,
                           p <= 2 ? 0 : 4 * b->seg);
}

/* ---- reduce -------------------------------------------------------- */

int coll_reduce_linear(coll_build_t *b)
{
    size_t n = b->count, bytes = n * b->es;
    if (b->rank != b->root) {
        HPC_TRY(coll_send(b, b->root, b->sbuf, bytes));
        return coll_round(b->s);
    }
    char *tmp = NULL;
    HPC_TRY(coll_tmp(b->r, (size_t)(b->p - 1) * bytes, (void **)&tmp));
    for (int i = 0, j = 0; i < b->p; i++)
        if (i != b->root) HPC_TRY(coll_recv(b, i, tmp + (size_t)j++ * bytes, bytes));
    HPC_TRY(coll_reduce(b, b->rbuf, b->sbuf, tmp, n));
    for (int j = 1; j < b->p - 1; j++)
        HPC_TRY(coll_reduce(b, b->rbuf, b->rbuf, tmp + (size_t)j * bytes, n));
    return coll_round(b->s);
}

int coll_reduce_tree(coll_build_t *b)
{
    int p = b->p, vr = (b->rank - b->root + p) % p, parent, child[32], nchild;
    binomial(vr, p, &parent, child, &nchild);
    for (int c = 0; c < nchild; c++) child[c] = REAL(child[c], b->root, p);
    if (parent >= 0) parent = REAL(parent, b->root, p);
    char *acc = b->rbuf;
    if (parent >= 0 && nchild) HPC_TRY(coll_tmp(b->r, b->count * b->es, (void **)&acc));
    if (parent < 0 && nchild == 0) return coll_copy(b, b->rbuf, b->sbuf, b->count * b->es);
    return coll_tree_reduce(b, b->sbuf, acc, b->count, parent, child, nchild, b->seg);
}

/* ---- allreduce: reduce to rank 0, then broadcast ------------------- */

int coll_allreduce_linear(coll_build_t *b)
{
    coll_build_t c = *b;
    c.root = 0;
    HPC_TRY(coll_reduce_linear(&c));
    HPC_TRY(coll_round(b->s));
    return coll_bcast_linear(&c);
}

int coll_allreduce_tree(coll_build_t *b)
{
    coll_build_t c = *b;
    c.root = 0;
    HPC_TRY(coll_reduce_tree(&c));
    HPC_TRY(coll_round(b->s));
    return coll_bcast_tree(&c);
}

/* ---- gather / scatter ---------------------------------------------- */

int coll_gather_linear(coll_build_t *b)
{
    size_t bytes = b->count * b->es;
    if (b->rank != b->root) {
        HPC_TRY(coll_send(b, b->root, b->sbuf, bytes));
    } else {
        for (int i = 0; i < b->p; i++)
            if (i != b->root) HPC_TRY(coll_recv(b, i, b->rbuf + (size_t)i * bytes, bytes));
        HPC_TRY(coll_copy(b, b->rbuf + (size_t)b->root * bytes, b->sbuf, bytes));
    }
    return coll_round(b->s);
}

int coll_scatter_linear(coll_build_t *b)
{
    size_t bytes = b->count * b->es;
    if (b->rank != b->root) {
        HPC_TRY(coll_recv(b, b->root, b->rbuf, bytes));
    } else {
        for (int i = 0; i < b->p; i++)
            if (i != b->root) HPC_TRY(coll_send(b, i, b->sbuf + (size_t)i * bytes, bytes));
        HPC_TRY(coll_copy(b, b->rbuf, b->sbuf + (size_t)b->root * bytes, bytes));
    }
    return coll_round(b->s);
}

/* Binomial gather: each vr collects its subtree's blocks, in vr order, and
 * passes them up in one message; the root un-rotates vr order into ranks. */
int coll_gather_tree(coll_build_t *b)
{
    int p = b->p, root = b->root, vr = (b->rank - root + p) % p, parent, child[32], nchild;
    size_t bytes = b->count * b->es;
    binomial(vr, p, &parent, child, &nchild);
    char *buf = NULL;
    if (nchild == 0) {
        HPC_TRY(coll_send(b, REAL(parent, root, p), b->sbuf, bytes));
        return coll_round(b->s);
    }
    if (vr == 0 && root == 0) buf = b->rbuf;
    else HPC_TRY(coll_tmp(b->r, (size_t)subtree(vr, p) * bytes, (void **)&buf));
    for (int c = 0; c < nchild; c++)
        HPC_TRY(coll_recv(b, REAL(child[c], root, p), buf + (size_t)(child[c] - vr) * bytes,
                          (size_t)subtree(child[c], p) * bytes));
    HPC_TRY(coll_copy(b, buf, b->sbuf, bytes));
    HPC_TRY(coll_round(b->s));
    if (parent >= 0) {
        HPC_TRY(coll_send(b, REAL(parent, root, p), buf, (size_t)subtree(vr, p) * bytes));
    } else if (root != 0) {
        /* buf[v] belongs to rank v + root */
        HPC_TRY(coll_copy(b, b->rbuf + (size_t)root * bytes, buf, (size_t)(p - root) * bytes));
        HPC_TRY(coll_copy(b, b->rbuf, buf + (size_t)(p - root) * bytes, (size_t)root * bytes));
    }
    return coll_round(b->s);
}

int coll_scatter_tree(coll_build_t *b)
{
    int p = b->p, root = b->root, vr = (b->rank - root + p) % p, parent, child[32], nchild;
    size_t bytes = b->count * b->es;
    binomial(vr, p, &parent, child, &nchild);
    const char *buf = NULL;
    if (vr == 0) {
        if (root == 0) {
            buf = b->sbuf;
        } else {
            char *t = NULL;   /* rotate into vr order */
            HPC_TRY(coll_tmp(b->r, (size_t)p * bytes, (void **)&t));
            HPC_TRY(coll_copy(b, t, b->sbuf + (size_t)root * bytes, (size_t)(p - root) * bytes));
            HPC_TRY(coll_copy(b, t + (size_t)(p - root) * bytes, b->sbuf, (size_t)root * bytes));
            HPC_TRY(coll_round(b->s));
            buf = t;
        }
    } else if (nchild == 0) {
        HPC_TRY(coll_recv(b, REAL(parent, root, p), b->rbuf, bytes));
        return coll_round(b->s);
    } else {
        char *t = NULL;
        HPC_TRY(coll_tmp(b->r, (size_t)subtree(vr, p) * bytes, (void **)&t));
        HPC_TRY(coll_recv(b, REAL(parent, root, p), t, (size_t)subtree(vr, p) * bytes));
        HPC_TRY(coll_round(b->s));
        buf = t;
    }
    for (int c = nchild - 1; c >= 0; c--)
        HPC_TRY(coll_send(b, REAL(child[c], root, p), buf + (size_t)(child[c] - vr) * bytes,
                          (size_t)subtree(child[c], p) * bytes));
    HPC_TRY(coll_copy(b, b->rbuf, buf, bytes));
    return coll_round(b->s);
}

/* ---- naive compositions -------------------------------------------- */

/* allgather: gather to rank 0, broadcast the whole */
int coll_allgather_linear(coll_build_t *b)
{
    coll_build_t c = *b;
    c.root = 0;
    HPC_TRY(coll_gather_linear(&c));
    HPC_TRY(coll_round(b->s));
    c.count = b->count * (size_t)b->p;
    return coll_bcast_linear(&c);
}

/* reduce_scatter: reduce everything to rank 0, scatter the blocks */
int coll_reduce_scatter_linear(coll_build_t *b)
{
    size_t all = b->count * (size_t)b->p, bytes = all * b->es;
    char *t = NULL;
    if (b->rank == 0) HPC_TRY(coll_tmp(b->r, bytes, (void **)&t));
    coll_build_t c = *b;
    c.root = 0;
    c.count = all;
    c.rbuf = t;
    HPC_TRY(coll_reduce_linear(&c));
    HPC_TRY(coll_round(b->s));
    c = *b;
    c.root = 0;
    c.sbuf = t;
    return coll_scatter_linear(&c);
}

/* alltoall: every message posted at once */
int coll_alltoall_linear(coll_build_t *b)
{
    size_t bytes = b->count * b->es;
    for (int i = 0; i < b->p; i++) {
        if (i == b->rank) continue;
        HPC_TRY(coll_recv(b, i, b->rbuf + (size_t)i * bytes, bytes));
        HPC_TRY(coll_send(b, i, b->sbuf + (size_t)i * bytes, bytes));
    }
    HPC_TRY(coll_copy(b, b->rbuf + (size_t)b->rank * bytes, b->sbuf + (size_t)b->rank * bytes, bytes));
    return coll_round(b->s);
}
