/* alg/hier.c - node-aware (hierarchical) algorithms: a phase inside each
 * node, a phase among one leader per node, a phase inside each node again.
 *
 * Every phase is an existing flat builder run as a sub-schedule over some
 * of the ranks (coll_build_t.map: its ranks 0..p-1 are the communicator's
 * ranks map[0..p-1]), so the whole call is still one schedule - blocking or
 * progressed nonblocking like any other, one tag, messages between two
 * ranks in the order both sides build them.  Which flat algorithm a phase
 * runs comes from the same place as auto's choices (select.c: the tuning
 * file's rows for that shape, else the cost model): inside a node, the
 * node's shared memory (alg/shm.c) where the node has its segment, or a
 * tree, ring, ... over MPI point-to-point; among the leaders, the cheapest
 * of the collective's own flat ones for that many nodes under the
 * inter-node constants (ring, Rabenseifner, tree, ...).  Every rank of a
 * node makes the same choice (the same sizes, node and segment), and
 * every leader the same.
 *
 * The nodes are the communicator's (topo.c: real nodes, or HPC_NODE_SPLIT's
 * fake ones).  A node's leader is its lowest rank, except that a rooted
 * collective makes the root its node's leader, so the result never takes
 * an extra hop.  Nodes of unequal size (blocks:3 on 7 ranks, odd-even on
 * 5) are handled by padding every node's part to the largest node's in
 * the leaders' phase of allgather and reduce_scatter.
 */
#include "config.h"
#include "hpc.h"
#include "../coll_internal.h"

#include <string.h>

typedef struct {
    int nnodes, node;       /* nodes, and this rank's */
    int li, m;              /* this rank's index on its node, the node's size */
    int maxm;               /* the largest node's size */
    int *local;             /* this node's ranks, its leader first */
    int *leaders;           /* every node's leader */
    const coll_topo_t *t;
} hier_t;

/* The nodes as this call sees them: root (-1: none) leads its node. */
static int hier_of(coll_build_t *b, int root, hier_t *h)
{
    const coll_topo_t *t = &b->r->cc->topo;
    int *mem = NULL;
    h->t = t;
    h->nnodes = t->nnodes;
    h->node = t->node_of[b->rank];
    h->m = t->first[h->node + 1] - t->first[h->node];
    h->maxm = 0;
    HPC_TRY(coll_tmp_kind(b->r, (size_t)(h->m + h->nnodes) * sizeof *mem, 0, (void **)&mem));
    h->local = mem;
    h->leaders = mem + h->m;
    for (int n = 0; n < h->nnodes; n++) {
        int sz = t->first[n + 1] - t->first[n];
        if (sz > h->maxm) h->maxm = sz;
        h->leaders[n] = root >= 0 && t->node_of[root] == n ? root : t->members[t->first[n]];
    }
    /* this node's ranks, its leader moved to the front */
    const int *mine = t->members + t->first[h->node];
    int lead = h->leaders[h->node], k = 1;
    h->local[0] = lead;
    for (int i = 0; i < h->m; i++)
        if (mine[i] != lead) h->local[k++] = mine[i];
    for (int i = 0; i < h->m; i++)
        if (h->local[i] == b->rank) h->li = i;
    return 0;
}

/* b narrowed to the ranks map[0..p-1], this rank being map[rank]. */
static coll_build_t sub(const coll_build_t *b, const int *map, int rank, int p, int root)
{
    coll_build_t c = *b;
    c.map = map;
    c.rank = rank;
    c.p = p;
    c.root = root;
    return c;
}

/* The leaders' phase: collective coll among the nnodes leaders (c), by
 * the algorithm chosen for N nodes of one rank each. */
static int leaders_run(coll_build_t *c, hpc_coll_t coll, size_t bytes)
{
    const coll_row_t *row = c->phase(coll, bytes, c->p, 1, 0, 0);
    if (!row) return HPC_ERR(HPC_ERR_STATE, "%s: no flat algorithm for the leaders", hpc_coll_name(coll));
    HPC_TRY(row->build(c));
    return coll_round(c->s);
}

/* An in-node phase: collective coll over the node's ranks (c: b narrowed
 * to them, the leader first), by the algorithm chosen for one node of
 * that many ranks - shared memory where the node has its segment. */
static int node_run(coll_build_t *c, hpc_coll_t coll, size_t bytes)
{
    if (c->p < 2) {
        /* a node of one rank: what a tree does there (a copy or nothing;
         * a tree gather would "send" to itself) */
        if (coll == HPC_COLL_GATHER) HPC_TRY(coll_copy(c, c->rbuf, c->sbuf, c->count * c->es));
        else HPC_TRY(c->row_of(coll, HPC_ALG_TREE)->build(c));
        return coll_round(c->s);
    }
    int shm = coll_shm_usable(c);
    const coll_row_t *row = c->phase(coll, bytes, 1, c->p, shm, shm && c->r->cc->seg->cma);
    if (!row) return HPC_ERR(HPC_ERR_STATE, "%s: no algorithm for the node", hpc_coll_name(coll));
    HPC_TRY(row->build(c));
    return coll_round(c->s);
}

/* ---- allreduce: reduce in the node, allreduce among leaders, bcast -- */
int coll_allreduce_hier(coll_build_t *b)
{
    hier_t h;
    HPC_TRY(hier_of(b, -1, &h));
    size_t bytes = b->count * b->es;
    coll_build_t c = sub(b, h.local, h.li, h.m, 0);
    HPC_TRY(node_run(&c, HPC_COLL_REDUCE, bytes));
    if (h.li == 0 && h.nnodes > 1) {
        c = sub(b, h.leaders, h.node, h.nnodes, 0);
        c.sbuf = b->rbuf;    /* in place on the node's sum */
        HPC_TRY(leaders_run(&c, HPC_COLL_ALLREDUCE, bytes));
    }
    c = sub(b, h.local, h.li, h.m, 0);
    return node_run(&c, HPC_COLL_BCAST, bytes);
}

/* ---- reduce: in the node to its leader (the root on the root's node),
 * then among the leaders to the root -------------------------------- */
int coll_reduce_hier(coll_build_t *b)
{
    hier_t h;
    HPC_TRY(hier_of(b, b->root, &h));
    char *acc = b->rbuf;
    if (h.li == 0 && b->rank != b->root) HPC_TRY(coll_tmp(b->r, b->count * b->es, (void **)&acc));
    coll_build_t c = sub(b, h.local, h.li, h.m, 0);
    c.rbuf = acc;
    HPC_TRY(node_run(&c, HPC_COLL_REDUCE, b->count * b->es));
    if (h.li == 0 && h.nnodes > 1) {
        c = sub(b, h.leaders, h.node, h.nnodes, h.t->node_of[b->root]);
        c.sbuf = acc;
        c.rbuf = acc;
        HPC_TRY(leaders_run(&c, HPC_COLL_REDUCE, b->count * b->es));
    }
    return 0;
}

/* ---- bcast: among the leaders from the root, then in each node ------ */
int coll_bcast_hier(coll_build_t *b)
{
    hier_t h;
    HPC_TRY(hier_of(b, b->root, &h));
    if (h.li == 0 && h.nnodes > 1) {
        coll_build_t c = sub(b, h.leaders, h.node, h.nnodes, h.t->node_of[b->root]);
        HPC_TRY(leaders_run(&c, HPC_COLL_BCAST, b->count * b->es));
    }
    coll_build_t c = sub(b, h.local, h.li, h.m, 0);
    return node_run(&c, HPC_COLL_BCAST, b->count * b->es);
}

/* Copies between the communicator's rank order (blocks of bytes) and the
 * leaders' packed order (node by node, maxm blocks each): to_packed 1
 * packs from ranked into packed, 0 unpacks. */
static int repack(coll_build_t *b, const hier_t *h, char *ranked, char *packed, size_t bytes,
                  int to_packed)
{
    const coll_topo_t *t = h->t;
    for (int n = 0; n < h->nnodes; n++)
        for (int i = 0; i < t->first[n + 1] - t->first[n]; i++) {
            char *r = ranked + (size_t)t->members[t->first[n] + i] * bytes;
            char *q = packed + ((size_t)n * (size_t)h->maxm + (size_t)i) * bytes;
            HPC_TRY(to_packed ? coll_copy(b, q, r, bytes) : coll_copy(b, r, q, bytes));
        }
    return coll_round(b->s);
}

/* ---- allgather: gather in the node, allgather among leaders (each
 * node's blocks padded to maxm), bcast the whole in the node --------- */
int coll_allgather_hier(coll_build_t *b)
{
    hier_t h;
    HPC_TRY(hier_of(b, -1, &h));
    size_t bytes = b->count * b->es, node_bytes = (size_t)h.maxm * bytes;
    char *pack = NULL, *all = NULL;
    if (h.li == 0) HPC_TRY(coll_tmp(b->r, node_bytes, (void **)&pack));
    coll_build_t c = sub(b, h.local, h.li, h.m, 0);
    c.rbuf = pack;
    HPC_TRY(node_run(&c, HPC_COLL_GATHER, bytes));
    if (h.li == 0) {
        all = pack;
        if (h.nnodes > 1) {
            HPC_TRY(coll_tmp(b->r, node_bytes * (size_t)h.nnodes, (void **)&all));
            c = sub(b, h.leaders, h.node, h.nnodes, 0);
            c.sbuf = pack;
            c.rbuf = all;
            c.count = b->count * (size_t)h.maxm;
            HPC_TRY(leaders_run(&c, HPC_COLL_ALLGATHER, node_bytes));
        }
        HPC_TRY(repack(b, &h, b->rbuf, all, bytes, 0));
    }
    c = sub(b, h.local, h.li, h.m, 0);
    c.count = b->count * (size_t)b->p;
    return node_run(&c, HPC_COLL_BCAST, c.count * b->es);
}

/* ---- reduce_scatter: reduce the whole vector in the node, reduce_scatter
 * node parts among leaders (padded to maxm blocks), scatter in the node */
int coll_reduce_scatter_hier(coll_build_t *b)
{
    hier_t h;
    HPC_TRY(hier_of(b, -1, &h));
    size_t bytes = b->count * b->es, all = (size_t)b->p * b->count;
    size_t node_bytes = (size_t)h.maxm * bytes;
    char *acc = NULL, *pack = NULL, *part = NULL;
    if (h.li == 0) {
        HPC_TRY(coll_tmp(b->r, all * b->es, (void **)&acc));
        HPC_TRY(coll_tmp(b->r, node_bytes * (size_t)h.nnodes, (void **)&pack));
        /* padding is reduced too: make it harmless numbers (host memory) */
        if (!b->r->cc->sim) memset(pack, 0, node_bytes * (size_t)h.nnodes);
    }
    coll_build_t c = sub(b, h.local, h.li, h.m, 0);
    c.count = all;
    c.rbuf = acc;
    HPC_TRY(node_run(&c, HPC_COLL_REDUCE, all * b->es));
    if (h.li == 0) {
        HPC_TRY(repack(b, &h, acc, pack, bytes, 1));
        part = pack + (size_t)h.node * node_bytes;
        if (h.nnodes > 1) {
            HPC_TRY(coll_tmp(b->r, node_bytes, (void **)&part));
            c = sub(b, h.leaders, h.node, h.nnodes, 0);
            c.sbuf = pack;
            c.rbuf = part;
            c.count = b->count * (size_t)h.maxm;
            HPC_TRY(leaders_run(&c, HPC_COLL_REDUCE_SCATTER, node_bytes));
        }
    }
    /* part holds this node's blocks in member order, which is h.local's
     * (non-rooted: the leader is the node's lowest rank, first anyway) */
    c = sub(b, h.local, h.li, h.m, 0);
    c.sbuf = part;
    return node_run(&c, HPC_COLL_SCATTER, bytes);
}

/* ---- barrier: in to the leader, dissemination among leaders, out ---- */
int coll_barrier_hier(coll_build_t *b)
{
    hier_t h;
    HPC_TRY(hier_of(b, -1, &h));
    coll_build_t c = sub(b, h.local, h.li, h.m, 0);
    if (h.m > 1 && coll_shm_usable(&c)) {
        /* the node's shared memory: all in, the leaders, all out again
         * (the leader comes to the second only after the leaders' phase) */
        HPC_TRY(coll_barrier_shm(&c));
        if (h.li == 0 && h.nnodes > 1) {
            coll_build_t l = sub(b, h.leaders, h.node, h.nnodes, 0);
            HPC_TRY(coll_barrier_butterfly(&l));
            HPC_TRY(coll_round(b->s));
        }
        return coll_barrier_shm(&c);
    }
    char *tok = NULL;
    HPC_TRY(coll_tmp_kind(b->r, (size_t)h.m + 1, 0, (void **)&tok));
    c.es = 1;
    for (int i = 1; i < h.m; i++)
        HPC_TRY(h.li == 0 ? coll_recv(&c, i, tok + i, 1) : i == h.li ? coll_send(&c, 0, tok, 1) : 0);
    HPC_TRY(coll_round(b->s));
    if (h.li == 0 && h.nnodes > 1) {
        coll_build_t l = sub(b, h.leaders, h.node, h.nnodes, 0);
        HPC_TRY(coll_barrier_butterfly(&l));
        HPC_TRY(coll_round(b->s));
    }
    for (int i = 1; i < h.m; i++)
        HPC_TRY(h.li == 0 ? coll_send(&c, i, tok, 1) : i == h.li ? coll_recv(&c, 0, tok, 1) : 0);
    return coll_round(b->s);
}
