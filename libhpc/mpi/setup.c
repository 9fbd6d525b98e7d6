/* setup.c - libhpc's state for the program's communicators
 * (libhpc-mpi.so).
 *
 * libhpc keeps a private duplicate of every communicator it serves calls
 * on (the one communicator it keeps for it: each costs MPI a context id,
 * and MPICH has 2048), and its node layout: made by collective calls
 * over it (hpc_coll_setup).  Made inside a collective call, that is a
 * hidden collective, and it deadlocks wherever the ranks do not all make
 * it at the same point: a rank setting up comm A inside its first call on
 * A waits for ranks that are inside their first call on comm B
 * (nonblocking calls on two communicators may start in different orders
 * on different ranks - MPI allows it), or inside MPI itself.  So it is
 * made where every rank of the communicator is at once: in MPI_Init for
 * MPI_COMM_WORLD, and on return from the call that makes a communicator
 * (MPI_Comm_dup, MPI_Comm_split, ...), whose ranks all made that call.
 *
 * MPI_Comm_idup makes one without blocking, so no rank may wait there:
 * where the program starts it, libhpc starts its own duplicate the same
 * way (MPI_Comm_idup of the parent's private one: the parent's order of
 * calls is the same on every rank) and copies the parent's nodes (the
 * same group); where the program learns the communicator is made (its
 * request completed by MPI_Wait, MPI_Test and their all/any/some forms,
 * pmpi.c calls pm_idup_check), the state is attached to it, locally.
 * Its duplicate is waited for at its first call, which every rank began
 * when it made the communicator.  Such a communicator has no shared
 * segment on the node (making one takes a collective): its shm algorithm
 * runs over point-to-point.
 *
 * A communicator made otherwise (MPI-4's constructors, an idup whose
 * request was freed or completed without these calls) is set up at the
 * first collective call on it, of any kind, served or not, before the
 * call decides which: the first point every rank reaches in the same
 * order on that communicator; HPC_TIMEOUT covers that wait (watch.c).
 *
 * Where MPI refuses the set-up on every rank (no context id left for the
 * duplicate), the communicator is left to MPI, with one line from its
 * rank 0, once: the program goes on.
 */
#include "config.h"
#include "pmpi.h"
#include "internal.h"   /* hpc_watch_*, hpc_coll_idup_*, hpc_coll_refuse */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* > 0: inside libhpc, pass everything on (here, below pmpi.c's wrappers
 * that read it, so that neither file needs the other: tests/layers.sh) */
int pm_depth;

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

int pm_ready(MPI_Comm comm, int *err, int made_now)
{
    if (pm_depth || comm == MPI_COMM_NULL) return 0;
    /* set up already (the common case, cheap), or now; asked only then
     * whether it is an intercommunicator, which libhpc refuses */
    pm_depth++;
    int lazy = !made_now && !hpc_coll_known(comm);
    if (lazy)
        hpc_watch_begin("libhpc's set-up of a communicator inside its first collective call (one made where the "
                        "drop-in could not see it: MPI-4's constructors, MPI_Comm_idup completed without "
                        "MPI_Wait/MPI_Test)", "do its ranks start their first calls on it and on other "
                        "communicators in different orders, or is a rank stopped?");
    int e = hpc_coll_setup(comm);
    if (lazy) hpc_watch_end();
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

/* ---- MPI_Comm_idup: the state begun, attached when the program learns
 * the communicator is made ------------------------------------------------ */
typedef struct pm_idup {
    struct pm_idup *next;
    MPI_Request req;        /* the program's request */
    MPI_Comm *out;          /* where MPI writes the communicator */
    void *child;            /* hpc_coll_idup_begin's state */
} pm_idup_t;

static pm_idup_t *idups;
int pm_nidup;

static void idup_started(MPI_Comm parent, MPI_Comm *out, MPI_Request req)
{
    void *child = NULL;
    if (pm_depth || !intra(parent)) return;
    pm_depth++;
    int e = hpc_coll_idup_begin(parent, &child);
    pm_depth--;
    pm_idup_t *d = child ? malloc(sizeof *d) : NULL;
    if (e < 0 || !d) {   /* set up at its first call instead */
        hpc_error_clear();
        if (child) hpc_coll_idup_end(child, MPI_COMM_NULL);
        return;
    }
    *d = (pm_idup_t){idups, req, out, child};
    idups = d;
    pm_nidup++;
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *out, MPI_Request *req)
{
    int e = PMPI_Comm_idup(comm, out, req);
    if (e == MPI_SUCCESS) idup_started(comm, out, *req);
    return e;
}

#if MPI_VERSION >= 4
int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *out, MPI_Request *req)
{
    int e = PMPI_Comm_idup_with_info(comm, info, out, req);
    if (e == MPI_SUCCESS) idup_started(comm, out, *req);
    return e;
}
#endif

/* The entry of request r, unlinked (NULL: none) */
static pm_idup_t *idup_take(MPI_Request r)
{
    for (pm_idup_t **q = &idups; *q; q = &(*q)->next)
        if ((*q)->req == r) {
            pm_idup_t *d = *q;
            *q = d->next;
            pm_nidup--;
            return d;
        }
    return NULL;
}

void pm_idup_check(int n, const MPI_Request *before, const MPI_Request *after)
{
    for (int i = 0; i < n && pm_nidup; i++) {
        if (before[i] == MPI_REQUEST_NULL || after[i] != MPI_REQUEST_NULL) continue;
        pm_idup_t *d = idup_take(before[i]);
        if (!d) continue;
        pm_depth++;
        if (hpc_coll_idup_end(d->child, *d->out) < 0) hpc_error_clear();   /* then set up at its first call */
        pm_depth--;
        free(d);
    }
}

void pm_idup_forget(MPI_Request r)
{
    pm_idup_t *d = pm_nidup ? idup_take(r) : NULL;
    if (!d) return;
    hpc_coll_idup_end(d->child, MPI_COMM_NULL);   /* freed at MPI_Finalize */
    free(d);
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
    if (e == MPI_SUCCESS && out && !pm_depth && pm_ready(*out, &err, 1) < 0) return err;
    return e;
}

/* HPC_TIMEOUT covers the start-up too (watch.c): armed before MPI is up,
 * disarmed once MPI_COMM_WORLD is set up */
static int init_end(int e)
{
    hpc_watch_end();
    return e;
}

#define INIT_AFTER "the start-up (libhpc's set-up of MPI_COMM_WORLD, after MPI_Init)"

int MPI_Init(int *argc, char ***argv)
{
    MPI_Comm world = MPI_COMM_WORLD;
    hpc_watch_begin("the start-up (MPI_Init)", HPC_STARTUP_HINT);
    int e = init_done(PMPI_Init(argc, argv));
    hpc_watch_begin(INIT_AFTER, HPC_STARTUP_HINT);
    return init_end(made(e, &world));
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    MPI_Comm world = MPI_COMM_WORLD;
    hpc_watch_begin("the start-up (MPI_Init)", HPC_STARTUP_HINT);
    int e = init_done(PMPI_Init_thread(argc, argv, required, provided));
    hpc_watch_begin(INIT_AFTER, HPC_STARTUP_HINT);
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
