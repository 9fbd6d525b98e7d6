/* work.c - dynamic work distribution: a shared ticket counter.
 *
 * Rank 0 exposes one int64 in an MPI window; a rank that needs work takes
 * a ticket with MPI_Fetch_and_op(+1) and gets the ticket-th chunk of the
 * pending list (the chunks not yet done, in index order; every rank builds
 * the same list from the done bitmap).  First come first served, no
 * master rank sitting idle, one round trip per chunk.
 *
 * MPICH (and others) only apply a passive-target atomic when the target
 * rank enters the MPI library, so the engine calls ode_poll() every few
 * hundred lane steps; it pokes MPI's progress engine (cheap, a few us).
 */
#include "config.h"
#include "hpc.h"

#include <stdlib.h>
#include "odegen.h"

struct ode_work {
    MPI_Win win;
    MPI_Comm comm;
    int64_t *counter;              /* window memory (rank 0: one int64) */
    int64_t *pending;              /* chunk indices not done yet */
    int64_t npending;
};

/* The communicator ode_poll() pokes; MPI_COMM_NULL when no run is active. */
static MPI_Comm poll_comm = MPI_COMM_NULL;

void ode_poll(void)
{
    if (poll_comm != MPI_COMM_NULL) {
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, poll_comm, &flag, MPI_STATUS_IGNORE);
    }
}

int ode_work_create(MPI_Comm comm, int64_t nchunks, const uint8_t *done, ode_work_t **out)
{
    int rank;
    ode_work_t *w = calloc(1, sizeof *w);
    if (!w)
        return HPC_ERR(HPC_ERR_NOMEM, "work queue");
    HPC_MPI(MPI_Comm_rank(comm, &rank));
    w->pending = malloc((size_t)(nchunks > 0 ? nchunks : 1) * sizeof *w->pending);
    if (!w->pending) {
        free(w);
        return HPC_ERR(HPC_ERR_NOMEM, "work queue of %lld chunks", (long long)nchunks);
    }
    for (int64_t c = 0; c < nchunks; c++)
        if (!done[c])
            w->pending[w->npending++] = c;
    w->comm = comm;
    HPC_MPI(MPI_Win_allocate(rank == 0 ? (MPI_Aint)sizeof(int64_t) : 0, sizeof(int64_t),
                             MPI_INFO_NULL, comm, &w->counter, &w->win));
    if (rank == 0)
        *w->counter = 0;
    /* the counter is initialised before anyone can take a ticket */
    HPC_MPI(MPI_Barrier(comm));
    HPC_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, w->win));
    poll_comm = comm;
    *out = w;
    return 0;
}

int64_t ode_work_next(ode_work_t *w)
{
    const int64_t one = 1;
    int64_t ticket;
    if (MPI_Fetch_and_op(&one, &ticket, MPI_INT64_T, 0, 0, MPI_SUM, w->win) != MPI_SUCCESS ||
        MPI_Win_flush(0, w->win) != MPI_SUCCESS)
        hpc_abort_on_error(HPC_ERR_MPI, __FILE__, __LINE__, "MPI_Fetch_and_op(work counter)");
    return ticket < w->npending ? w->pending[ticket] : -1;
}

int64_t ode_work_taken(ode_work_t *w)
{
    int rank;
    int64_t v = 0, dummy = 0;
    MPI_Comm_rank(w->comm, &rank);
    if (rank == 0) {
        MPI_Fetch_and_op(&dummy, &v, MPI_INT64_T, 0, 0, MPI_NO_OP, w->win);
        MPI_Win_flush(0, w->win);
    }
    return v;
}

void ode_work_free(ode_work_t *w)
{
    if (!w)
        return;
    poll_comm = MPI_COMM_NULL;
    MPI_Win_unlock_all(w->win);
    MPI_Win_free(&w->win);     /* collective: every rank has left its loop */
    free(w->pending);
    free(w);
}
