/* gpu_lazyctx - on a real GPU: no context until the first device use
 * (issue 34.3).  hpc_init binds (chooses and describes the device) but
 * must make no context: a CPU run on a GPU node holds no GPU memory, and
 * with GPUs in exclusive-process mode ranks beyond the first would fail.
 * Asked of the driver itself (cuDevicePrimaryCtxGetState, through the
 * module), after hpc_init, after a host collective, and after
 * hpc_gpu_activate, which must make it.  Skips (77) without a GPU. */
#include "config.h"
#include "hpc_coll.h"
#include "internal.h"
#include "gpu_ops.h"
#include "testlib.h"

static int context(void)
{
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    int yes = -1;
    if (!g || !g->context_active || g->context_active(&yes) != GPU_OK) return -1;
    return yes;
}

int main(int argc, char **argv)
{
    int listed = test_gpus_listed();
    HPC_CHECK(hpc_init(&argc, &argv));
    int v = test_gpu_verdict(listed, TEST_CUDA_BUILT, hpc_gpu_count());
    if (v) {
        if (hpc_rank() == 0) printf("%s: %s\n", v == 77 ? "SKIP" : "FAIL", hpc_gpu_unavailable());
        hpc_finalize();
        return v;
    }
    EXPECT(hpc_gpu() >= 0, "rank %d not bound", hpc_rank());
    int after_init = context();
    EXPECT(after_init == 0, "a context after hpc_init (%d)", after_init);
    double x = 1, y = 0;
    EXPECT(hpc_allreduce(&x, &y, 1, HPC_FLOAT64, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_AUTO) == 0 && y == hpc_size(),
           "host allreduce: %s", hpc_last_error());
    int after_host = context();
    EXPECT(after_host == 0, "a context after a host collective (%d)", after_host);
    EXPECT(hpc_gpu_activate() == 0 && hpc_gpu_active(), "activate: %s", hpc_last_error());
    int after_activate = context();
    EXPECT(after_activate == 1, "no context after hpc_gpu_activate (%d)", after_activate);
    if (hpc_rank() == 0)
        printf("gpu_lazyctx: %d ranks: context after hpc_init %d, after a host allreduce %d, after activate %d\n",
               hpc_size(), after_init, after_host, after_activate);
    hpc_finalize();
    return test_result();
}
