/* workq.c - dynamic work distribution: a shared ticket counter.
 *
 * Rank 0 exposes one int64 in an MPI window; a rank that needs work takes
 * the next tickets with one MPI_Fetch_and_op(+max) and gets those entries
 * of the pending list (the items not skipped, in index order; every rank
 * builds the same list).  First come first served, no master rank sitting
 * idle, one round trip per batch.
 *
 * MPICH (and others) apply a passive-target atomic only when the target
 * rank enters the MPI library, so a rank that computes for long calls
 * hpc_workq_poll() now and then; it pokes MPI's progress engine (a few us).
 */
#include "config.h"
#include <stdlib.h>
#include "app_internal.h"

struct hpc_workq {
    MPI_Win win;
    MPI_Comm comm;
    int rank;
    int64_t *counter;              /* window memory (rank 0: one int64) */
    int64_t *pending;              /* items to hand out */
    int64_t npending;
};

/* The communicator hpc_workq_poll() pokes; NULL when no queue is active. */
static MPI_Comm poll_comm = MPI_COMM_NULL;

void hpc_workq_poll(void)
{
    if (poll_comm != MPI_COMM_NULL) {
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, poll_comm, &flag, MPI_STATUS_IGNORE);
    }
}

int hpc_workq_create(MPI_Comm comm, int64_t nitems, const uint8_t *skip, hpc_workq_t **out)
{
    if (nitems < 0) return HPC_ERR(HPC_ERR_ARG, "%lld items", (long long)nitems);
    hpc_workq_t *q = calloc(1, sizeof *q);
    if (!q) return HPC_ERR(HPC_ERR_NOMEM, "work queue");
    q->pending = malloc((size_t)(nitems > 0 ? nitems : 1) * sizeof *q->pending);
    if (!q->pending) {
        free(q);
        return HPC_ERR(HPC_ERR_NOMEM, "work queue of %lld items", (long long)nitems);
    }
    for (int64_t i = 0; i < nitems; i++)
        if (!skip || !skip[i]) q->pending[q->npending++] = i;
    q->comm = comm;
    MPI_Comm_rank(comm, &q->rank);
    int rc = MPI_Win_allocate(q->rank == 0 ? (MPI_Aint)sizeof(int64_t) : 0, sizeof(int64_t),
                              MPI_INFO_NULL, comm, &q->counter, &q->win);
    if (rc != MPI_SUCCESS) {
        free(q->pending);
        free(q);
        return hpc_error_mpi(rc, __FILE__, __LINE__, "MPI_Win_allocate");
    }
    if (q->rank == 0) *q->counter = 0;
    /* the counter is set before anyone can take a ticket */
    HPC_MPI(MPI_Barrier(comm));
    HPC_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, q->win));
    poll_comm = comm;
    *out = q;
    return 0;
}

int64_t hpc_workq_take(hpc_workq_t *q, int64_t max, int64_t *items)
{
    int64_t first;
    if (max < 1) return 0;
    if (MPI_Fetch_and_op(&max, &first, MPI_INT64_T, 0, 0, MPI_SUM, q->win) != MPI_SUCCESS ||
        MPI_Win_flush(0, q->win) != MPI_SUCCESS)
        hpc_abort_on_error(HPC_ERR_MPI, __FILE__, __LINE__, "MPI_Fetch_and_op(work counter)");
    int64_t n = 0;
    for (int64_t t = first; t < first + max && t < q->npending; t++) items[n++] = q->pending[t];
    return n;
}

void hpc_workq_close(hpc_workq_t *q)
{
    /* push the counter past the end: every later take gets nothing */
    int64_t far = INT64_MAX / 4, old;
    if (MPI_Fetch_and_op(&far, &old, MPI_INT64_T, 0, 0, MPI_SUM, q->win) != MPI_SUCCESS ||
        MPI_Win_flush(0, q->win) != MPI_SUCCESS)
        hpc_abort_on_error(HPC_ERR_MPI, __FILE__, __LINE__, "MPI_Fetch_and_op(work counter)");
}

int64_t hpc_workq_taken(hpc_workq_t *q)
{
    int64_t v = 0, dummy = 0;
    if (q->rank == 0) {
        MPI_Fetch_and_op(&dummy, &v, MPI_INT64_T, 0, 0, MPI_NO_OP, q->win);
        MPI_Win_flush(0, q->win);
    }
    return v < q->npending ? v : q->npending;
}

int64_t hpc_workq_pending(const hpc_workq_t *q)
{
    return q->npending;
}

void hpc_workq_free(hpc_workq_t *q)
{
    if (!q) return;
    poll_comm = MPI_COMM_NULL;
    MPI_Win_unlock_all(q->win);
    MPI_Win_free(&q->win);     /* collective: every rank has left its loop */
    free(q->pending);
    free(q);
}
