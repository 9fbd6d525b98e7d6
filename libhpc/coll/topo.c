/* topo.c - the nodes of a communicator, derived once when its state is
 * made (comm.c) and kept with it: for every rank of the communicator its
 * node (real nodes cut by HPC_NODE_SPLIT, node.c), so that the
 * hierarchical schedules (alg/hier.c) address any rank's node mates and
 * leader over the communicator itself.  No communicator is kept for it:
 * each costs MPI a context id (MPICH has 2048 in all), so the node
 * communicator lives only through the set-up (comm.c frees it).
 */
#include "config.h"
#include "internal.h"
#include "coll_internal.h"

#include <stdlib.h>
#include <string.h>

int coll_topo_alloc(coll_topo_t *t, int p)
{
    t->node_of = malloc((size_t)p * sizeof *t->node_of);
    t->first = malloc((size_t)(p + 1) * sizeof *t->first);
    t->members = malloc((size_t)p * sizeof *t->members);
    if (t->node_of && t->first && t->members) return 0;
    coll_topo_free(t);
    return HPC_ERR(HPC_ERR_NOMEM, "node map of %d ranks", p);
}

/* Nodes numbered by their lowest rank; members listed node by node. */
static int topo_map(coll_topo_t *t, const int *leader, int p)
{
    HPC_TRY(coll_topo_alloc(t, p));
    t->nnodes = 0;
    for (int r = 0; r < p; r++)
        if (leader[r] == r) t->node_of[r] = t->nnodes++;
    for (int r = 0; r < p; r++) t->node_of[r] = t->node_of[leader[r]];
    int k = 0;
    for (int n = 0; n < t->nnodes; n++) {
        t->first[n] = k;
        for (int r = 0; r < p; r++)
            if (t->node_of[r] == n) t->members[k++] = r;
    }
    t->first[t->nnodes] = k;
    return 0;
}

int coll_topo_init(coll_topo_t *t, MPI_Comm comm, int rank, int p, MPI_Comm *node)
{
    *node = MPI_COMM_NULL;
    HPC_TRY(hpc_comm_split_node(comm, node));
    int lrank = 0, mine = rank;
    HPC_MPI(MPI_Comm_rank(*node, &lrank));
    HPC_MPI(MPI_Comm_size(*node, &t->local_size));
    t->local_rank = lrank;
    /* the node's lowest rank is its rank 0 (the split keeps comm's order) */
    HPC_MPI(MPI_Bcast(&mine, 1, MPI_INT, 0, *node));
    int *leader = malloc((size_t)p * sizeof *leader);
    if (!leader) return HPC_ERR(HPC_ERR_NOMEM, "node map of %d ranks", p);
    int e = MPI_Allgather(&mine, 1, MPI_INT, leader, 1, MPI_INT, comm);
    int rc = e == MPI_SUCCESS ? topo_map(t, leader, p) : hpc_error_mpi(e, __FILE__, __LINE__, "MPI_Allgather");
    free(leader);
    return rc;
}

int coll_topo_copy(coll_topo_t *dst, const coll_topo_t *src, int p)
{
    *dst = *src;
    HPC_TRY(coll_topo_alloc(dst, p));
    memcpy(dst->node_of, src->node_of, (size_t)p * sizeof *dst->node_of);
    memcpy(dst->first, src->first, (size_t)(src->nnodes + 1) * sizeof *dst->first);
    memcpy(dst->members, src->members, (size_t)p * sizeof *dst->members);
    return 0;
}

void coll_topo_free(coll_topo_t *t)
{
    free(t->node_of);
    free(t->first);
    free(t->members);
    t->node_of = t->first = t->members = NULL;
}
