/* coll_devfree - frees and stream-wait kernels (issue 23.5), without a
 * GPU: the fake runtime of fake_gpu.h behind libhpc.
 *
 * hpc_request_stream_wait parks a kernel that spins on a host flag; a
 * cudaFree/cudaFreeHost meanwhile would synchronise the device, wait for
 * the kernel, which waits for the host: a deadlock.  So:
 *  - a device or pinned free while a flag slot is busy is kept back, and
 *    made by the progress that follows once no slot is busy - not before
 *    the kernel has run (the host setting the flag is not enough);
 *  - a slot whose kernel never ran (its stream failed) is free again once
 *    an event behind it reports the failure: the frees it held back go;
 *  - a slot whose flag the host never set stays busy (its kernel waits).
 */
#include "config.h"
#include "hpc_coll.h"

#include "fake_gpu.h"
#include "coll/test_hooks.h"
#include "testlib.h"

int main(int argc, char **argv)
{
    fake_install();
    HPC_CHECK(hpc_init(&argc, &argv));
    EXPECT(hpc_gpu_count() == 1, "the fake GPU is not seen");
    void *s1 = NULL, *s2 = NULL, *a = NULL, *b = NULL, *c = NULL;
    fake_ops.stream_create(&s1, 1);
    fake_ops.stream_create(&s2, 1);

    /* a kernel waits on s1: frees are kept back */
    int slot = -1;
    EXPECT(hpc_coll_test_flag_wait(s1, &slot) == 0 && slot >= 0, "flag wait: %s", hpc_last_error());
    EXPECT(hpc_coll_test_flags_busy() == 1, "busy slots: %d", hpc_coll_test_flags_busy());
    EXPECT(hpc_coll_dev_alloc(1024, &a) == 0 && hpc_coll_dev_alloc(64, &b) == 0, "alloc: %s", hpc_last_error());
    int frees0 = fake.frees;
    hpc_coll_test_dev_free(a, 2);
    hpc_coll_dev_free(b);
    EXPECT(fake.frees == frees0 && hpc_coll_test_frees_pending() == 2,
           "freed while a stream-wait kernel may run: %d frees, %d kept back", fake.frees - frees0,
           hpc_coll_test_frees_pending());
    /* the host lets it go; the kernel has not run yet: still kept */
    hpc_coll_test_flag_set(slot);
    hpc_coll_test_free_deferred();
    EXPECT(fake.frees == frees0 && hpc_coll_test_frees_pending() == 2,
           "freed before the kernel ran: %d frees", fake.frees - frees0);
    /* it runs: the next progress frees both */
    EXPECT(fake_run_kernels() == 1, "no kernel ran");
    hpc_coll_test_free_deferred();
    EXPECT(fake.frees == frees0 + 2 && hpc_coll_test_frees_pending() == 0 && hpc_coll_test_flags_busy() == 0,
           "after the kernel: %d frees, %d kept back, %d busy", fake.frees - frees0, hpc_coll_test_frees_pending(),
           hpc_coll_test_flags_busy());
    /* no slot busy: a free is made at once */
    EXPECT(hpc_coll_dev_alloc(64, &c) == 0, "alloc: %s", hpc_last_error());
    hpc_coll_dev_free(c);
    EXPECT(fake.frees == frees0 + 3, "a free with no kernel waiting was kept back");

    /* a kernel that never runs: its stream fails; the slot and the frees go */
    int slot2 = -1;
    EXPECT(hpc_coll_test_flag_wait(s2, &slot2) == 0, "flag wait on s2: %s", hpc_last_error());
    EXPECT(hpc_coll_dev_alloc(64, &a) == 0, "alloc: %s", hpc_last_error());
    hpc_coll_dev_free(a);
    EXPECT(hpc_coll_test_frees_pending() == 1, "not kept back behind s2's kernel");
    hpc_coll_test_flag_set(slot2);
    ((fake_stream_t *)s2)->broken = 1;
    hpc_coll_test_free_deferred();
    EXPECT(hpc_coll_test_flags_busy() == 0 && hpc_coll_test_frees_pending() == 0 && fake.frees == frees0 + 4,
           "a slot whose kernel never ran stays busy (%d busy, %d kept back)", hpc_coll_test_flags_busy(),
           hpc_coll_test_frees_pending());

    /* a slot the host never releases stays busy: its kernel still waits */
    int slot3 = -1;
    EXPECT(hpc_coll_test_flag_wait(s1, &slot3) == 0, "flag wait: %s", hpc_last_error());
    fake_run_kernels();
    EXPECT(hpc_coll_test_flags_busy() == 1, "a waiting kernel's slot was freed: %d busy", hpc_coll_test_flags_busy());
    hpc_coll_test_flag_set(slot3);
    fake_run_kernels();
    EXPECT(hpc_coll_test_flags_busy() == 0, "released and run, still busy");

    /* allocations while a kernel waits (issue 34.7): no cudaMalloc or
     * cudaMallocHost (they may synchronise the device, so wait for the
     * kernel, which waits for the host); a staged device allreduce takes
     * pageable staging and stream-ordered device memory, and is right */
    int slot4 = -1;
    EXPECT(hpc_coll_test_flag_wait(s1, &slot4) == 0, "flag wait: %s", hpc_last_error());
    float *x = NULL, *y = NULL, hx[1000], hy[1000];
    EXPECT(hpc_coll_dev_alloc(sizeof hx, (void **)&x) == 0 && hpc_coll_dev_alloc(sizeof hy, (void **)&y) == 0,
           "alloc: %s", hpc_last_error());
    for (int i = 0; i < 1000; i++) hx[i] = (float)i;
    hpc_coll_dev_memcpy(x, hx, sizeof hx);
    size_t mark = fake.loglen;
    EXPECT(hpc_allreduce(x, y, 1000, HPC_FLOAT32, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_RING) == 0, "allreduce: %s",
           hpc_last_error());
    hpc_coll_dev_memcpy(hy, y, sizeof hy);
    int right = 1;
    for (int i = 0; i < 1000; i++) right &= hy[i] == (float)i * hpc_size();
    EXPECT(right, "the allreduce while a kernel waits is wrong");
    const char *during = fake.log + mark;
    EXPECT(!strstr(during, "malloc_host") && !strstr(during, "malloc "),
           "a synchronising allocation while a kernel waits: %s", during);
    hpc_coll_test_flag_set(slot4);
    fake_run_kernels();
    hpc_coll_dev_free(x);
    hpc_coll_dev_free(y);
    hpc_coll_test_free_deferred();

    int fails = test_failures;
    HPC_CHECK(hpc_finalize());
    if (!fails) printf("coll_devfree: frees wait for the stream-wait kernels, slots of failed streams come back\n");
    return test_result();
}
