/* test_env - hpc_init at several rank counts: communicators, node
 * layout, what the launcher said, threads, stats across ranks. */
#include "config.h"
#include <string.h>
#include "hpc.h"
#include "testlib.h"

int main(int argc, char **argv)
{
    int rc = hpc_init(&argc, &argv);
    EXPECT(rc == 0, "hpc_init: %s", hpc_last_error());
    if (rc) return 1;
    const hpc_env_t *e = hpc_env();
    int wr, ws;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    EXPECT(e->rank == wr && e->size == ws, "rank/size %d/%d vs MPI %d/%d", e->rank, e->size, wr, ws);
    EXPECT(hpc_init(&argc, &argv) == HPC_ERR_STATE, "second hpc_init accepted");

    /* tests run on one host: one node holding every rank */
    EXPECT(e->nnodes == 1 && e->node_id == 0, "nodes %d id %d", e->nnodes, e->node_id);
    EXPECT(e->local_size == ws && e->local_rank == wr, "local %d/%d", e->local_rank, e->local_size);
    int nsize, lsize = -1;
    MPI_Comm_size(e->node, &nsize);
    EXPECT(nsize == e->local_size, "node comm size %d", nsize);
    if (e->local_rank == 0) {
        EXPECT(e->leaders != MPI_COMM_NULL, "leader without leaders comm");
        if (e->leaders != MPI_COMM_NULL) MPI_Comm_size(e->leaders, &lsize);
        EXPECT(lsize == e->nnodes, "leaders %d", lsize);
    } else {
        EXPECT(e->leaders == MPI_COMM_NULL, "non-leader in leaders comm");
    }
    /* the launcher's word matches MPI's (hydra or Open MPI here; none for a singleton) */
    if (e->launch.launcher != HPC_LAUNCHER_NONE) {
        EXPECT(e->launch.rank == wr && e->launch.size == ws, "launcher says %d/%d", e->launch.rank,
               e->launch.size);
        EXPECT(e->launch.local_rank == e->local_rank, "launcher local rank %d", e->launch.local_rank);
    }
    EXPECT(!e->mismatch, "mismatch flagged");
    EXPECT(e->ncores >= 1 && e->threads >= 1 && e->threads <= e->ncores, "cores %d threads %d",
           e->ncores, e->threads);
    EXPECT(e->core_sharers >= 1 && e->core_sharers <= e->local_size, "sharers %d", e->core_sharers);
    EXPECT(e->cpuset[0] != '\0', "empty cpuset");
    EXPECT(!hpc_have_cuda() || e->gpu.index >= -1, "gpu index");

    /* min / median / max of the rank numbers */
    hpc_stats_t st;
    EXPECT(hpc_stats_across((double)wr, e->world, &st) == 0, "stats");
    EXPECT(st.min == 0 && st.max == ws - 1 && st.median == (ws - 1) / 2.0, "stats %g %g %g", st.min,
           st.median, st.max);
    /* MPI_Wtime's origin is the library's choice: check it moves forward */
    double t1 = hpc_wtime(), t2 = hpc_wtime();
    MPI_Barrier(e->world);
    double t3 = hpc_wtime();
    EXPECT(t1 <= t2 && t2 <= t3 && t3 - t1 < 60, "wtime %g %g %g", t1, t2, t3);

    int errs = test_failures, total = 0;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, e->world);
    EXPECT(hpc_finalize() == 0, "finalize");
    EXPECT(hpc_finalize() == HPC_ERR_STATE, "second finalize");
    if (wr == 0 && total) fprintf(stderr, "%d failure(s) over all ranks\n", total);
    return wr == 0 ? (total != 0) : 0;
}
