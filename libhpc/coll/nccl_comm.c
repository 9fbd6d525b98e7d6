/* nccl_comm.c - the NCCL communicator behind an hpckit communicator.
 *
 * May NCCL run here?  NCCL with two ranks on one GPU hangs or fails
 * obscurely, so the ranks compare (host, GPU PCI bus id) and refuse it
 * with a message naming the ranks and the GPU.  That comparison is
 * collective, so it is started where every rank starts it alike: at the
 * first call on the communicator whose algorithm is auto or nccl (api.c) -
 * not where auto picked NCCL, which depends on each rank's memory kind.
 * It is started without blocking (MPI_Iallgather) and waited for only
 * where its answer is needed (a call that would run on NCCL): a blocking
 * exchange inside the first call would be a hidden collective, and ranks
 * that start their first calls on two communicators in different orders
 * (nonblocking calls may) would each wait in another communicator's
 * exchange forever.  Waiting for an exchange every rank has started ends
 * as soon as the others call MPI (any call advances it).
 *
 * The communicator itself is made on first use, without blocking: the
 * unique id goes out with MPI_Ibcast, and NCCL is set up nonblocking
 * (config.blocking = 0) and polled.  A rank that never joins (it chose
 * another algorithm) then leaves its peers waiting in our progress loop,
 * where the stall check sees it (stall_check.c), not inside NCCL.  NCCL's
 * asynchronous errors are polled with every look at a request, so a dead
 * peer is an error rather than a hang; at the job's end (coll_abort_all)
 * the communicator is aborted.  NCCL is reached through the GPU module
 * (gpu_ops.h), so without it hpc_have_nccl() is 0 and nothing here runs.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"
#include "internal.h"
#include "gpu_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { NC_UNKNOWN = 0, NC_USABLE = 1, NC_READY = 2 };   /* cc->nccl_state; < 0: refused or broken */
enum { SETUP_IDLE, SETUP_ID, SETUP_INIT };              /* cc->nccl_setup */

typedef struct { char host[64]; char bus[32]; } gpu_id_t;

static void nccl_abort(coll_comm_t *cc)
{
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    if (cc->nccl && g) g->nccl_abort(cc->nccl);
    cc->nccl = NULL;
    if (cc->nccl_state >= 0) {
        cc->nccl_state = HPC_ERR_NCCL;
        snprintf(cc->nccl_why, sizeof cc->nccl_why, "nccl: the communicator was aborted");
    }
}

static int probe_finish(coll_comm_t *cc);

static void nccl_fini(coll_comm_t *cc)
{
    /* a probe in flight: every rank started it, so it ends (an active
     * nonblocking collective may not be freed) */
    if (probe_finish(cc) < 0) hpc_error_clear();
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    /* an id exchange still in flight: its peers have left with it */
    if (cc->nccl_setup == SETUP_ID) MPI_Request_free(&cc->nccl_idreq);
    if (cc->nccl && cc->nccl_state == NC_READY && g) {
        void *nc = cc->nccl;
        int st = g->nccl_finalize(nc);
        /* nonblocking communicator: finalizing may take a while */
        for (double t0 = MPI_Wtime(); st == HPC_NCCL_IN_PROGRESS && MPI_Wtime() - t0 < 30;)
            g->nccl_async_error(nc, &st);
        if (st == HPC_NCCL_OK) {
            g->nccl_destroy(nc);
            cc->nccl = NULL;
        }
    }
    nccl_abort(cc);
    cc->nccl_state = NC_UNKNOWN;
    cc->nccl_setup = SETUP_IDLE;
    cc->nccl_posted = cc->nccl_launched = 0;
}

/* the probe's answer, from every rank's (host, GPU): the same on every rank */
static void probe_verdict(coll_comm_t *cc, const gpu_id_t *all)
{
    int state = NC_USABLE;
    for (int i = 0; i < cc->size && state > 0; i++) {
        if (!strcmp(all[i].bus, "none")) {
            state = HPC_ERR_NOGPU;
            snprintf(cc->nccl_why, sizeof cc->nccl_why, "nccl: rank %d on %s has no GPU", i, all[i].host);
        }
        for (int j = i + 1; j < cc->size && state > 0; j++)
            if (!strcmp(all[i].host, all[j].host) && !strcmp(all[i].bus, all[j].bus)) {
                state = HPC_ERR_UNSUPPORTED;
                snprintf(cc->nccl_why, sizeof cc->nccl_why,
                         "nccl: ranks %d and %d share GPU %s on %s; NCCL needs one GPU per rank "
                         "(fewer ranks per node, or HPC_GPU_BIND / CUDA_VISIBLE_DEVICES)",
                         i, j, all[i].bus, all[i].host);
            }
    }
    cc->nccl_state = state;
}

/* Wait for the probe started on cc (if one is in flight) and take its answer. */
static int probe_finish(coll_comm_t *cc)
{
    if (!cc->nccl_ids) return 0;
    int e = MPI_Wait(&cc->nccl_probereq, MPI_STATUS_IGNORE);
    gpu_id_t *all = cc->nccl_ids;
    cc->nccl_ids = NULL;
    if (e == MPI_SUCCESS) probe_verdict(cc, all + 1);     /* all[0]: this rank's, sent */
    free(all);
    if (e != MPI_SUCCESS) {
        cc->nccl_state = HPC_ERR_MPI;
        snprintf(cc->nccl_why, sizeof cc->nccl_why, "nccl: the GPU exchange (MPI_Iallgather) failed");
        return hpc_error_mpi(e, __FILE__, __LINE__, "MPI_Iallgather (NCCL setup)");
    }
    return 0;
}

int coll_nccl_probe(coll_comm_t *cc)
{
    if (cc->nccl_state != NC_UNKNOWN || cc->nccl_ids) return 0;
    /* one buffer: this rank's id, then every rank's */
    gpu_id_t *all = calloc((size_t)cc->size + 1, sizeof *all), *me = all;
    if (!all) return HPC_ERR(HPC_ERR_NOMEM, "NCCL setup");
    gethostname(me->host, sizeof me->host - 1);
    /* the bound GPU's bus id as hpc_init found it: asking makes no context
     * (a host collective must not); a rank bound to none, the current one */
    const hpc_gpu_ops_t *g = hpc_gpu_unavailable() ? NULL : hpc_gpu_ops();
    int dev = -1;
    if (g && hpc_gpu() >= 0) {
        snprintf(me->bus, sizeof me->bus, "%s", hpc_gpu_pci_bus_id());
    } else if (!g || g->get_device(&dev) != GPU_OK ||
               g->pci_bus_id(dev, me->bus, (int)sizeof me->bus) != GPU_OK) {
        if (g) g->last_error();
        snprintf(me->bus, sizeof me->bus, "none");
    }
    int e = MPI_Iallgather(me, (int)sizeof *me, MPI_BYTE, all + 1, (int)sizeof *me, MPI_BYTE, cc->comm,
                           &cc->nccl_probereq);
    if (e != MPI_SUCCESS) {
        free(all);
        return hpc_error_mpi(e, __FILE__, __LINE__, "MPI_Iallgather (NCCL setup)");
    }
    cc->nccl_ids = all;
    cc->hook[COLL_HOOK_NCCL] = (coll_hook_t){.fini = nccl_fini, .abort = nccl_abort};
    return 0;
}

int coll_nccl_ready(coll_comm_t *cc)
{
    if (probe_finish(cc) < 0) hpc_error_clear();    /* refused: nccl_why says why */
    return cc->nccl_state > 0;
}

/* NCCL failed on cc (result: NCCL's status, or < 0 for an error libhpc
 * recorded): it cannot be used again (its peers are in an unknown state),
 * so abort it and say why. */
int coll_nccl_broken(coll_comm_t *cc, int result, const char *what)
{
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    char cause[128];
    /* result < 0: not NCCL's status but the error libhpc recorded */
    snprintf(cause, sizeof cause, "%s", result < 0 ? hpc_last_cause() : g ? g->nccl_error_string(result) : "?");
    const char *why = cause;
    const char *last = cc->nccl && g ? g->nccl_last_error(cc->nccl) : NULL;
    char saved[128];
    snprintf(saved, sizeof saved, "%s", last ? last : "");
    nccl_abort(cc);
    /* (cut to the line's length if need be) */
    if (snprintf(cc->nccl_why, sizeof cc->nccl_why, "nccl: %s: %s%s%s", what, why, saved[0] ? " - " : "", saved) < 0)
        snprintf(cc->nccl_why, sizeof cc->nccl_why, "nccl: %s", what);
    return HPC_ERR(HPC_ERR_NCCL, "%s", cc->nccl_why);
}

int coll_nccl_setup(coll_comm_t *cc, void **nc, int *ready)
{
    *ready = 0;
    HPC_TRY(probe_finish(cc));
    if (cc->nccl_state < 0) return HPC_ERR(cc->nccl_state, "%s", cc->nccl_why);
    if (cc->nccl_state == NC_UNKNOWN)
        return HPC_ERR(HPC_ERR_STATE, "nccl: communicator not probed (an algorithm chosen outside api.c?)");
    if (cc->nccl_state == NC_READY) {
        *nc = cc->nccl;
        *ready = 1;
        return 0;
    }
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    if (!g || !g->nccl_init) return HPC_ERR(HPC_ERR_UNSUPPORTED, "nccl: %s", hpc_gpu_ops_why());
    if (cc->nccl_setup == SETUP_IDLE) {
        memset(cc->nccl_id, 0, sizeof cc->nccl_id);
        if (cc->rank == 0) {
            int e = g->nccl_unique_id(cc->nccl_id);
            if (e != HPC_NCCL_OK) return coll_nccl_broken(cc, e, "ncclGetUniqueId");
        }
        _Static_assert(HPC_NCCL_ID_BYTES <= sizeof cc->nccl_id, "NCCL unique id size");
        HPC_MPI(MPI_Ibcast(cc->nccl_id, HPC_NCCL_ID_BYTES, MPI_BYTE, 0, cc->comm, &cc->nccl_idreq));
        cc->nccl_setup = SETUP_ID;
    }
    if (cc->nccl_setup == SETUP_ID) {
        int flag = 0;
        HPC_MPI(MPI_Test(&cc->nccl_idreq, &flag, MPI_STATUS_IGNORE));
        if (!flag) return 0;
        void *comm = NULL;
        int e = g->nccl_init(&comm, cc->size, cc->nccl_id, cc->rank);
        cc->nccl = comm;
        cc->nccl_setup = SETUP_INIT;
        if (e != HPC_NCCL_OK && e != HPC_NCCL_IN_PROGRESS) return coll_nccl_broken(cc, e, "ncclCommInitRankConfig");
    }
    int st = HPC_NCCL_OK;
    g->nccl_async_error(cc->nccl, &st);
    if (st == HPC_NCCL_IN_PROGRESS) return 0;
    cc->nccl_setup = SETUP_IDLE;
    if (st != HPC_NCCL_OK) return coll_nccl_broken(cc, st, "setting up the NCCL communicator");
    cc->nccl_state = NC_READY;
    *nc = cc->nccl;
    *ready = 1;
    return 0;
}
