/* node.c - which ranks share a node, with a fake split for testing.
 *
 * A node is what MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) says, except
 * where HPC_NODE_SPLIT cuts each real node further, so that one machine
 * can exercise everything node-aware (hierarchical collectives, the node
 * and leader communicators, hpc-info's node column) as several "nodes" -
 * as MPICH's MPIR_CVAR_ODD_EVEN_CLIQUES does for its own:
 *   odd-even   even and odd world ranks are two nodes
 *   blocks:K   world ranks 0..K-1, K..2K-1, ... are nodes (K ranks each,
 *              as a block distribution with K tasks per node places them)
 * The split goes by MPI_COMM_WORLD rank, so every communicator sees the
 * same nodes.  Fake nodes still share memory: a shared window over one
 * works (and is what the shared-memory algorithms use).
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* The fake node of world rank w (0 without a split). */
static int fake_color(const hpc_node_split_t *sp, int w)
{
    switch (sp->mode) {
    case HPC_NODE_SPLIT_ODD_EVEN: return w % 2;
    case HPC_NODE_SPLIT_BLOCKS: return w / sp->k;
    default: return 0;
    }
}

int hpc_comm_split_node(MPI_Comm comm, MPI_Comm *out)
{
    hpc_node_split_t sp;
    HPC_TRY(hpc_node_split_parse(getenv("HPC_NODE_SPLIT"), &sp));
    int rank, w;
    MPI_Comm shared;
    HPC_MPI(MPI_Comm_rank(comm, &rank));
    HPC_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
    if (sp.mode == HPC_NODE_SPLIT_NONE) {
        *out = shared;
        return 0;
    }
    HPC_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &w));
    int e = MPI_Comm_split(shared, fake_color(&sp, w), rank, out);
    MPI_Comm_free(&shared);
    if (e != MPI_SUCCESS) return hpc_error_mpi(e, __FILE__, __LINE__, "MPI_Comm_split (HPC_NODE_SPLIT)");
    return 0;
}
