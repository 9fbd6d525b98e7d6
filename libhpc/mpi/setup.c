/* setup.c - libhpc's state for the program's communicators
 * (libhpc-mpi.so).
 *
 * libhpc keeps a private duplicate of every communicator it serves calls
 * on (the one communicator it keeps for it: each costs MPI a context id,
 * and MPICH has 2048), and its node layout: made by collective calls over it
 * (hpc_coll_setup).  Made inside a collective call, that is a hidden
 * collective, and it deadlocks wherever the ranks do not all make it at
 * the same point: a rank setting up comm A inside its first call on A
 * waits for ranks that are inside their first call on comm B (nonblocking
 * calls on two communicators may start in different orders on different
 * ranks - MPI allows it), or inside MPI itself.  So it is made where every
 * rank of the communicator is at once: in MPI_Init for MPI_COMM_WORLD, and
 * on return from the call that makes a communicator (MPI_Comm_dup,
 * MPI_Comm_split, ...), whose ranks all made that call.  A communicator
 * made otherwise (MPI_Comm_idup, MPI-4's constructors, one made before
 * this library was loaded) is set up at the first collective call on it
 * - of any kind, served or not, before the call decides which - the first
 * point there every rank reaches in the same order on that communicator.
 *
 * Where MPI refuses the set-up on every rank (no context id left for the
 * duplicate), the communicator is left to MPI, with one line from its
 * rank 0, once: the program goes on.
 */
#include "config.h"
#include "pmpi.h"
#include "internal.h"   /* hpc_startup_watch, hpc_coll_refuse */

#include <stdio.h>

static int intra(MPI_Comm comm)
{
    int inter = 1;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return 0;
    return !inter;
}

/* MPI refused libhpc's set-up of comm (an MPI call failed: on every rank
 * alike, as MPI's communicator calls agree): MPI serves its calls; one
 * line from its rank 0, once a process */
static void refused(MPI_Comm comm)
{
    static int said;
    int rank = -1, wrank = -1;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    if (rank == 0 && !said++) {
        char cause[320];
        snprintf(cause, sizeof cause, "%s", hpc_last_cause());
        for (char *c = cause; *c; c++)
            if (*c == '\n' || *c == '\t') *c = ' ';
        fprintf(stderr, "hpc-mpi: rank %d: MPI refused libhpc's duplicate of a new communicator, so MPI serves its "
                "collectives: under libhpc-mpi.so each communicator costs MPI one more context id (MPICH has 2048 "
                "in all): free communicators no longer needed (%s)\n", wrank, cause);
    }
    hpc_error_clear();
    pm_depth++;
    hpc_coll_refuse(comm);
    pm_depth--;
    hpc_error_clear();
}

int pm_ready(MPI_Comm comm, int *err)
{
    if (pm_depth || comm == MPI_COMM_NULL) return 0;
    /* set up already (the common case, cheap), or now; asked only then
     * whether it is an intercommunicator, which libhpc refuses */
    pm_depth++;
    int e = hpc_coll_setup(comm);
    pm_depth--;
    if (e == 0) return 1;
    if (e == HPC_ERR_UNSUPPORTED || !intra(comm)) {   /* refused before, or an intercommunicator */
        hpc_error_clear();
        return 0;
    }
    if (e == HPC_ERR_MPI) {
        refused(comm);
        return 0;
    }
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "hpc-mpi: rank %d: setting up a communicator: %s\n", rank, hpc_last_error());
    *err = MPI_ERR_OTHER;
    PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);   /* fatal unless the program said otherwise */
    return -1;
}

/* At MPI_Init: the HPC_* settings that are not (a typo) or are invalid
 * (their default is used: the program is not ours to stop), once, from
 * world rank 0. */
static int init_done(int e)
{
    int r = -1;
    if (e == MPI_SUCCESS && PMPI_Comm_rank(MPI_COMM_WORLD, &r) == MPI_SUCCESS && r == 0) hpc_settings_warn();
    return e;
}

/* After a call that made *out (MPI_COMM_NULL on ranks outside it). */
static int made(int e, MPI_Comm *out)
{
    int err = e;
    if (e == MPI_SUCCESS && out && !pm_depth && pm_ready(*out, &err) < 0) return err;
    return e;
}

/* HPC_TIMEOUT covers the start-up too (startup.c): armed before MPI is
 * up, disarmed once MPI_COMM_WORLD is set up */
static int init_end(int e)
{
    hpc_startup_done();
    return e;
}

int MPI_Init(int *argc, char ***argv)
{
    MPI_Comm world = MPI_COMM_WORLD;
    hpc_startup_watch("MPI_Init");
    int e = init_done(PMPI_Init(argc, argv));
    hpc_startup_watch("libhpc's set-up of MPI_COMM_WORLD, after MPI_Init");
    return init_end(made(e, &world));
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    MPI_Comm world = MPI_COMM_WORLD;
    hpc_startup_watch("MPI_Init_thread");
    int e = init_done(PMPI_Init_thread(argc, argv, required, provided));
    hpc_startup_watch("libhpc's set-up of MPI_COMM_WORLD, after MPI_Init");
    return init_end(made(e, &world));
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
    return made(PMPI_Comm_dup(comm, out), out);
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *out)
{
    return made(PMPI_Comm_dup_with_info(comm, info, out), out);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
    return made(PMPI_Comm_split(comm, color, key, out), out);
}

int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out)
{
    return made(PMPI_Comm_split_type(comm, type, key, info, out), out);
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *out)
{
    return made(PMPI_Comm_create(comm, group, out), out);
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *out)
{
    return made(PMPI_Comm_create_group(comm, group, tag, out), out);
}

int MPI_Intercomm_merge(MPI_Comm inter, int high, MPI_Comm *out)
{
    return made(PMPI_Intercomm_merge(inter, high, out), out);
}

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm *out)
{
    return made(PMPI_Cart_create(comm, ndims, dims, periods, reorder, out), out);
}

int MPI_Cart_sub(MPI_Comm comm, const int remain[], MPI_Comm *out)
{
    return made(PMPI_Cart_sub(comm, remain, out), out);
}

int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm *out)
{
    return made(PMPI_Graph_create(comm, nnodes, index, edges, reorder, out), out);
}

int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm *out)
{
    return made(PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info, reorder, out), out);
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *out)
{
    return made(PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree, destinations,
                                                destweights, info, reorder, out),
                out);
}
