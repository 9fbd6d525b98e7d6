/* test_gpu_status - what libhpc makes of the CUDA runtime's statuses
 * (issue 23.1, 23.2), without a GPU: fake statuses through the GPU table.
 *
 *  - only cudaErrorNoDevice, or no driver at all, reads as "no GPU"; a
 *    runtime newer than the driver (cudaErrorInsufficientDriver with a
 *    driver present) or any other error is a broken stack, warned about,
 *    and hpc_gpu_unavailable() names the status and the driver's version;
 *  - hpc_gpu_stack() reports the runtime, driver and NCCL versions;
 *  - without a table (no module) everything is "no GPU" with the reason,
 *    and a CUDA error reads as its number;
 *  - the device tests' skip-or-fail verdict (testlib.h): a GPU the system
 *    lists that a CUDA build does not see is a failure, never a skip.
 */
#include "config.h"
#include "hpc.h"

#include <string.h>
#include "fake_gpu.h"
#include "testlib.h"

static void count_as(int status, int ndev, int driver)
{
    fake.count_status = status;
    fake.ndev = ndev;
    fake.driver = driver;
    hpc_gpu_count_reset();
}

int main(void)
{
    char why[512];

    /* no module: nothing, with the reason; errors by number */
    hpc_gpu_ops_set(NULL, 1);
    hpc_gpu_count_reset();
    EXPECT(hpc_gpu_count() == 0 && !hpc_have_cuda() && !hpc_have_nccl(), "no table, yet a GPU stack");
    EXPECT(hpc_gpu_unavailable() && hpc_gpu_unavailable()[0], "no table: no reason given");
    EXPECT(!strncmp(hpc_gpu_stack(), "none (", 6), "no table: stack '%s'", hpc_gpu_stack());
    EXPECT(!strcmp(hpc_gpu_status_text(35, why, sizeof why), "CUDA error 35"), "no table: '%s'", why);

    /* the fake runtime (its error names) */
    fake_install();
    /* the pure verdicts: a count, or HPC_ERR_NOGPU (a CPU node) or
     * HPC_ERR_CUDA (a broken stack) with the reason as the cause */
    const char *c = hpc_last_cause();
    hpc_error_clear();
    EXPECT(hpc_gpu_count_status(GPU_OK, 2, 12080) == 2 && !c[0], "two devices: '%s'", c);
    EXPECT(hpc_gpu_count_status(GPU_ERR_NO_DEVICE, 0, 12080) == HPC_ERR_NOGPU && strstr(c, "no CUDA device"),
           "no device: '%s'", c);
    EXPECT(hpc_gpu_count_status(GPU_ERR_INSUFFICIENT_DRIVER, 0, 0) == HPC_ERR_NOGPU && strstr(c, "no NVIDIA driver"),
           "no driver at all: '%s'", c);
    EXPECT(hpc_gpu_count_status(GPU_ERR_INSUFFICIENT_DRIVER, 0, 12020) == HPC_ERR_CUDA &&
               strstr(c, "newer NVIDIA driver") && strstr(c, "12.2") && strstr(c, "cudaErrorInsufficientDriver"),
           "old driver: '%s'", c);
    EXPECT(hpc_gpu_count_status(999, 0, 13000) == HPC_ERR_CUDA && strstr(c, "cannot count"), "another error: '%s'",
           c);
    hpc_error_clear();

    /* the fake runtime: a device */
    count_as(GPU_OK, 1, 12080);
    EXPECT(hpc_gpu_count() == 1 && hpc_gpu_unavailable() == NULL, "one device: %d, %s", hpc_gpu_count(),
           hpc_gpu_unavailable());
    EXPECT(hpc_have_cuda() && hpc_have_nccl(), "the table with NCCL: have_cuda %d, have_nccl %d", hpc_have_cuda(),
           hpc_have_nccl());
    EXPECT(strstr(hpc_gpu_stack(), "CUDA runtime 13.0, driver 12.8, NCCL 2.27.3"), "stack '%s'", hpc_gpu_stack());
    EXPECT(!strcmp(hpc_gpu_status_text(GPU_ERR_NO_DEVICE, why, sizeof why),
                   "no CUDA-capable device is detected (cudaErrorNoDevice)"), "translated: '%s'", why);
    /* a runtime newer than the driver: no GPU, and why */
    count_as(GPU_ERR_INSUFFICIENT_DRIVER, 0, 12020);
    EXPECT(hpc_gpu_count() == 0, "insufficient driver counted %d", hpc_gpu_count());
    const char *no = hpc_gpu_unavailable();
    EXPECT(no && strstr(no, "newer NVIDIA driver") && strstr(no, "12.2"), "insufficient driver: '%s'", no ? no : "");
    EXPECT(!hpc_last_cause()[0], "no GPU left an error behind: '%s'", hpc_last_cause());
    /* the runtime without a driver */
    count_as(GPU_ERR_INSUFFICIENT_DRIVER, 0, 0);
    no = hpc_gpu_unavailable();
    EXPECT(no && strstr(no, "no NVIDIA driver"), "no driver: '%s'", no ? no : "");
    EXPECT(strstr(hpc_gpu_stack(), "no NVIDIA driver"), "stack without a driver: '%s'", hpc_gpu_stack());
    /* cudaErrorNoDevice */
    count_as(GPU_ERR_NO_DEVICE, 0, 12080);
    no = hpc_gpu_unavailable();
    EXPECT(no && strstr(no, "no CUDA device is visible"), "no device: '%s'", no ? no : "");
    hpc_gpu_ops_set(NULL, 0);

    /* the device tests' verdict: 0 run, 77 skip, 1 fail */
    EXPECT(test_gpu_verdict(1, 1, 1) == 0, "a GPU seen: run");
    EXPECT(test_gpu_verdict(0, 1, 0) == 77, "no GPU listed: skip");
    EXPECT(test_gpu_verdict(2, 0, 0) == 77, "no CUDA in the build: skip");
    EXPECT(test_gpu_verdict(1, 1, 0) == 1, "a GPU listed, none seen by a CUDA build: fail, never skip");
    EXPECT(test_gpu_verdict(0, 1, 1) == 0, "seen but not listed (no nvidia-smi): run");
    if (!test_failures) printf("test_gpu_status: statuses, reasons, stack line and test verdicts as expected\n");
    return test_result();
}
