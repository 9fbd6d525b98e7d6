/* test_blas_threads - hpc_init sets OpenBLAS's threads to the cores each
 * rank owns, though libhpc does not link OpenBLAS (issue 20: it looks
 * openblas_set_num_threads up in the program, which links it).  The
 * threads are first set to a count hpc_init would not choose, so that the
 * test sees hpc_init's own choice, at 1 and 2 ranks (2 ranks on a node
 * share its cores: fewer threads each). */
#include "config.h"
#include <cblas.h>
#include "hpc.h"
#include "testlib.h"

int openblas_get_num_threads(void);

int main(int argc, char **argv)
{
    openblas_set_num_threads(57);
    HPC_CHECK(hpc_init(&argc, &argv));
    int t = hpc_threads(), got = openblas_get_num_threads();
    EXPECT(t >= 1 && t != 57, "hpc_threads() = %d", t);
    EXPECT(got == t, "rank %d: OpenBLAS runs %d threads, hpc_init chose %d", hpc_rank(), got, t);
    long mine = test_failures, tot = 0;
    MPI_Reduce(&mine, &tot, 1, MPI_LONG, MPI_SUM, 0, hpc_comm_world());
    if (hpc_rank() == 0 && !tot) printf("test_blas_threads: %d ranks, OpenBLAS runs hpc_init's %d thread(s)\n", hpc_size(), t);
    HPC_CHECK(hpc_finalize());
    return hpc_rank() <= 0 && tot ? 1 : 0;
}
