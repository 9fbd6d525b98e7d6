/* strat_common.c - what the strategies share, below them: the data-
 * parallel ranks' fit and slice of the batch (dp and --shard), the
 * replica check of a device buffer, the stop agreed after a step, and
 * the end of a rank whose collective failed.  It calls no strategy and
 * no loop, so the strategies (strat_dp.c, strat_shard.c, pipe.c) and
 * their table (strategy.c) all sit above it.
 */
#include "config.h"
#include <stdlib.h>
#include "train.h"

int strat_fit_replicas(train_opts_t *o, int nranks)
{
    if (o->batch < nranks)
        return HPC_ERR(HPC_ERR_ARG, "--batch %lld is smaller than the %d ranks: every rank needs a sample",
                 (long long)o->batch, nranks);
    return 0;
}

void strat_replica_each(const train_opts_t *o, int rank, int nranks, int *part, int *parts)
{
    (void)o;
    *part = rank;
    *parts = nranks;
}

int train_buffers_same(const train_t *t, const float *buf, size_t n, MPI_Comm comm, int *same)
{
    const float *host = buf;
    float *copy = NULL;
    if (t->dev != train_dev_cpu()) {
        if (!(copy = malloc(n * sizeof *copy + 1))) return HPC_ERR(HPC_ERR_NOMEM, "--check-sync");
        t->dev->to_host(copy, buf, n * sizeof *copy);
        host = copy;
    }
    int rc = hpc_all_same(host, n * sizeof(float), comm, same);
    free(copy);
    return rc;
}

int strategy_stop_agreed(train_t *t)
{
    (void)t;
    return hpc_app_stop_agreed(hpc_comm_world());
}

void train_coll_fatal(const char *what)
{
    /* a collective that fails leaves the other ranks inside theirs */
    hpc_app_fatal(HPC_EXIT_DATA, "%s: %s", what, hpc_last_cause());
}
