/* test_env - hpc_init at several rank counts: communicators, node
 * layout, what the launcher said, threads, stats across ranks. */
#include "config.h"
#include <string.h>
#include "hpc_testing.h"
#include "testlib.h"

int main(int argc, char **argv)
{
    int rc = hpc_init(&argc, &argv);
    EXPECT(rc == 0, "hpc_init: %s", hpc_last_error());
    if (rc) return 1;
    int wr, ws;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    EXPECT(hpc_rank() == wr && hpc_size() == ws, "rank/size %d/%d vs MPI %d/%d", hpc_rank(),
           hpc_size(), wr, ws);
    EXPECT(hpc_init(&argc, &argv) == HPC_ERR_STATE, "second hpc_init accepted");

    /* tests run on one host: one node holding every rank */
    EXPECT(hpc_node_count() == 1 && hpc_node_id() == 0, "nodes %d id %d", hpc_node_count(),
           hpc_node_id());
    EXPECT(hpc_local_size() == ws && hpc_local_rank() == wr, "local %d/%d", hpc_local_rank(),
           hpc_local_size());
    int nsize, lsize = -1;
    MPI_Comm_size(hpc_comm_node(), &nsize);
    EXPECT(nsize == hpc_local_size(), "node comm size %d", nsize);
    if (hpc_local_rank() == 0) {
        EXPECT(hpc_comm_leaders() != MPI_COMM_NULL, "leader without leaders comm");
        if (hpc_comm_leaders() != MPI_COMM_NULL) MPI_Comm_size(hpc_comm_leaders(), &lsize);
        EXPECT(lsize == hpc_node_count(), "leaders %d", lsize);
    } else {
        EXPECT(hpc_comm_leaders() == MPI_COMM_NULL, "non-leader in leaders comm");
    }
    /* the launcher's word matches MPI's (hydra or Open MPI here; none for a
     * singleton): what the launcher said, re-read through the test hook */
    hpc_launch_t l;
    EXPECT(hpc_launch_parse(NULL, &l) == 0 && l.launcher == hpc_launcher(), "launcher %s vs %s",
           hpc_launcher_name(l.launcher), hpc_launcher_name(hpc_launcher()));
    if (hpc_launcher() != HPC_LAUNCHER_NONE) {
        EXPECT(l.rank == wr && l.size == ws, "launcher says %d/%d", l.rank, l.size);
        EXPECT(l.local_rank == hpc_local_rank(), "launcher local rank %d", l.local_rank);
    }
    EXPECT(!hpc_launcher_disagrees(), "mismatch flagged");
    EXPECT(hpc_cores() >= 1 && hpc_threads() >= 1 && hpc_threads() <= hpc_cores(), "cores %d threads %d",
           hpc_cores(), hpc_threads());
    EXPECT(hpc_core_sharers() >= 1 && hpc_core_sharers() <= hpc_local_size(), "sharers %d",
           hpc_core_sharers());
    EXPECT(hpc_cpuset()[0] != '\0', "empty cpuset");
    EXPECT(hpc_gpu() >= -1 && (hpc_gpu() >= 0 || hpc_gpu_name()[0] == '\0'), "gpu index");

    /* min / median / max of the rank numbers */
    hpc_stats_t st;
    EXPECT(hpc_stats_across((double)wr, hpc_comm_world(), &st) == 0, "stats");
    EXPECT(st.min == 0 && st.max == ws - 1 && st.median == (ws - 1) / 2.0, "stats %g %g %g", st.min,
           st.median, st.max);
    /* MPI_Wtime's origin is the library's choice: check it moves forward */
    double t1 = hpc_wtime(), t2 = hpc_wtime();
    MPI_Barrier(hpc_comm_world());
    double t3 = hpc_wtime();
    EXPECT(t1 <= t2 && t2 <= t3 && t3 - t1 < 60, "wtime %g %g %g", t1, t2, t3);

    int errs = test_failures, total = 0;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, hpc_comm_world());
    EXPECT(hpc_finalize() == 0, "finalize");
    EXPECT(hpc_finalize() == HPC_ERR_STATE, "second finalize");
    EXPECT(hpc_rank() == -1 && hpc_comm_world() == MPI_COMM_NULL, "getters after finalize");
    if (wr == 0 && total) fprintf(stderr, "%d failure(s) over all ranks\n", total);
    return wr == 0 ? (total != 0) : 0;
}
