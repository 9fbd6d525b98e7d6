/* coll_lazyctx - a rank's GPU context is made at its first device use,
 * not in hpc_init (issue 34.3), without a GPU: the fake runtime of
 * fake_gpu.h behind libhpc, whose set_device makes a context as
 * cudaSetDevice does since CUDA 12.
 *  - hpc_init chooses and describes the GPU but makes no context;
 *  - collectives on host buffers make none, and never ask the runtime
 *    about their pointers while no context exists;
 *  - the first device allocation makes the context (once per thread);
 *  - a GPU that cannot be made current (exclusive-process mode, held by
 *    another process) is warned about and the rank left unbound: device
 *    requests say why, host collectives still run.
 */
#include "config.h"
#include <pthread.h>
#include "hpc_coll.h"
#include "internal.h"

#include "fake_gpu.h"
#include "testlib.h"

static int host_allreduce(void)
{
    double x[4] = {1, 2, 3, (double)hpc_rank()}, y[4];
    int e = hpc_allreduce(x, y, 4, HPC_FLOAT64, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_AUTO);
    int p = hpc_size();
    return e == 0 && y[0] == p && y[2] == 3.0 * p && y[3] == p * (p - 1) / 2.0 ? 0 : -1;
}

static void *other_thread(void *arg)
{
    void *d = NULL;
    *(int *)arg = hpc_coll_dev_alloc(64, &d) == 0 && hpc_gpu_active();
    hpc_coll_dev_free(d);
    return NULL;
}

int main(int argc, char **argv)
{
    fake_install();
    HPC_CHECK(hpc_init(&argc, &argv));
    EXPECT(hpc_gpu() == 0 && !strncmp(hpc_gpu_name(), "Fake GPU", 8), "not bound: gpu %d '%s'", hpc_gpu(),
           hpc_gpu_name());
    EXPECT(fake.set_calls == 0 && !fake.ctx && !hpc_gpu_active(), "hpc_init made a context: %s", fake.log);

    /* host work: no context, no pointer queries */
    EXPECT(host_allreduce() == 0, "host allreduce: %s", hpc_last_error());
    EXPECT(fake.set_calls == 0 && !fake.ctx && fake.ptr_queries == 0,
           "a host collective made a context or asked about its pointers: %d set_device, %d queries",
           fake.set_calls, fake.ptr_queries);

    /* the first device use makes it, once on this thread */
    void *d = NULL, *d2 = NULL;
    EXPECT(hpc_coll_dev_alloc(256, &d) == 0 && hpc_coll_dev_alloc(256, &d2) == 0, "alloc: %s", hpc_last_error());
    EXPECT(fake.set_calls == 1 && fake.ctx && hpc_gpu_active(), "first device use: %d set_device calls, active %d",
           fake.set_calls, hpc_gpu_active());
    hpc_coll_dev_free(d);
    hpc_coll_dev_free(d2);
    /* another thread makes the device current there too */
    int ok = 0;
    pthread_t t;
    pthread_create(&t, NULL, other_thread, &ok);
    pthread_join(t, NULL);
    EXPECT(ok && fake.set_calls == 2, "another thread: ok %d, %d set_device calls", ok, fake.set_calls);
    /* with a context, host buffers are still host memory */
    EXPECT(host_allreduce() == 0, "host allreduce with a context: %s", hpc_last_error());

    /* a GPU that cannot be made current: warned, unbound, CPU work goes on */
    hpc_gpu_policy_t pol;
    hpc_gpu_info_t info;
    HPC_CHECK(hpc_gpu_policy_parse("local", &pol));
    HPC_CHECK(hpc_gpu_bind(&pol, 0, 1, 0, &info));
    fake.set_status = 46;
    EXPECT(hpc_gpu_activate() == HPC_ERR_CUDA, "activation of a busy GPU did not fail: %s", hpc_last_error());
    EXPECT(info.index == -1 && hpc_gpu_unavailable() && strstr(hpc_gpu_unavailable(), "cannot be used"),
           "after a failed activation: index %d, why '%s'", info.index, hpc_gpu_unavailable());
    EXPECT(hpc_coll_dev_alloc(64, &d) == HPC_ERR_NOGPU && strstr(hpc_last_error(), "cannot be used"),
           "a device request on the unbound rank: %s", hpc_last_error());
    EXPECT(host_allreduce() == 0, "host allreduce on the unbound rank: %s", hpc_last_error());
    fake.set_status = 0;
    if (hpc_rank() == 0) printf("coll_lazyctx: %d ranks: no context until the first device use\n", hpc_size());
    hpc_finalize();
    return test_result();
}
