/* test_rng_cuda - the RNG gives the same bits in a CUDA kernel as on the
 * CPU, uniforms and normals alike (the normals use libhpc's own log and
 * sin/cos, rounded operation by operation on both sides).  Skips (77)
 * without CUDA in the build or without a GPU. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hpc.h"
#include "testlib.h"

#ifdef HPC_HAVE_CUDA
int test_rng_cuda_draw(uint64_t seed, int n, int per, double *host);
#endif

int main(void)
{
#ifdef HPC_HAVE_CUDA
    int v = test_gpu_verdict(test_gpus_listed(), TEST_CUDA_BUILT, hpc_gpu_count());
    if (v) {
        printf("%s: %s\n", v == 1 ? "FAIL: a GPU is listed, libhpc sees none" : "SKIP: no GPU", hpc_gpu_unavailable());
        return v;
    }
    const int n = 4096, per = 64;
    double *gpu = malloc(sizeof(double) * n * per);
    int e = test_rng_cuda_draw(12345, n, per, gpu);
    EXPECT(e == 0, "CUDA error %d", e);
    int64_t differ = 0;
    for (int i = 0; e == 0 && i < n; i++) {
        hpc_rng_t r;
        hpc_rng_init(&r, 12345, (uint64_t)i);
        for (int k = 0; k < per; k++) {
            double c = k % 2 ? hpc_rng_normal(&r) : hpc_rng_uniform(&r);
            differ += memcmp(&c, &gpu[(size_t)i * per + k], sizeof c) != 0;
        }
    }
    EXPECT(differ == 0, "%lld of %d draws differ between CPU and GPU", (long long)differ, n * per);
    free(gpu);
    return test_result();
#else
    printf("SKIP: built without CUDA\n");
    return 77;
#endif
}
