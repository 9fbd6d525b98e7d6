/* test_gpu_bind - the GPU binding policy against simulated device counts. */
#include "config.h"
#include <string.h>
#include "hpc_testing.h"
#include "testlib.h"

static int choose(const char *policy, int lrank, int lsize, int ndev)
{
    hpc_gpu_policy_t p;
    int dev = -99;
    if (hpc_gpu_policy_parse(policy, &p) != 0) return -100;
    int rc = hpc_gpu_choose(&p, lrank, lsize, ndev, &dev);
    return rc < 0 ? rc : dev;
}

int main(void)
{
    /* default: local rank modulo visible devices; none without devices */
    for (int ndev = 1; ndev <= 4; ndev++)
        for (int lr = 0; lr < 6; lr++)
            EXPECT(choose(NULL, lr, 6, ndev) == lr % ndev, "local %d of %d devices", lr, ndev);
    EXPECT(choose("", 0, 1, 2) == 0, "empty = local");
    EXPECT(choose("local", 3, 4, 2) == 1, "local 3 of 2 devices");
    EXPECT(choose(NULL, 2, 3, 0) == -1, "no devices -> none");
    EXPECT(choose("none", 1, 2, 4) == -1, "none");
    /* exclusive: one GPU per rank or a clear error */
    EXPECT(choose("exclusive", 2, 4, 4) == 2, "exclusive fits");
    EXPECT(choose("exclusive", 0, 3, 2) == HPC_ERR_ARG, "exclusive with 3 ranks on 2 GPUs");
    EXPECT(strstr(hpc_last_error(), "3 ranks on this node but only 2 GPU") != NULL, "message: %s",
           hpc_last_error());
    EXPECT(choose("exclusive", 0, 1, 0) == HPC_ERR_NOGPU, "exclusive without GPUs");
    /* list: local rank i -> list[i % n] */
    EXPECT(choose("list:3,1", 0, 4, 4) == 3, "list 0");
    EXPECT(choose("list:3,1", 1, 4, 4) == 1, "list 1");
    EXPECT(choose("list:3,1", 2, 4, 4) == 3, "list wraps");
    EXPECT(choose("list:3,1", 0, 4, 2) == HPC_ERR_ARG, "list names a missing device");
    EXPECT(choose("list:0", 0, 1, 0) == HPC_ERR_NOGPU, "list without GPUs");
    /* bad policies */
    const char *bad[] = {"foo",       "list:",      "list:a", "list:1,",   "list:-1",  "list:1,,2",
                         "LOCAL",     "exclusive2", "list: 1", "list:1 ,2", "list:1, 2", "list:+1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        hpc_gpu_policy_t p;
        memset(&p, 0x5a, sizeof p);
        EXPECT(hpc_gpu_policy_parse(bad[i], &p) == HPC_ERR_ARG, "'%s' accepted", bad[i]);
        EXPECT(p.mode == (hpc_gpu_bind_mode_t)0x5a5a5a5a, "'%s': output set on failure", bad[i]);
        EXPECT(strstr(hpc_last_error(), "HPC_GPU_BIND") != NULL, "'%s': message %s", bad[i], hpc_last_error());
    }
    /* the count this process sees: 0 in a CPU-only build */
    if (!hpc_have_cuda()) EXPECT(hpc_gpu_count() == 0, "GPUs without CUDA");
    return test_result();
}
