/* rng_cuda.cu - the counter-based RNG drawn inside a CUDA kernel, for
 * test_rng_cuda: thread i fills out[i*per .. i*per+per) from the stream
 * (seed, i), uniforms and normals alternating. */
#include <cuda_runtime_api.h>
#include "hpc_rng.h"

__global__ static void draw(uint64_t seed, int n, int per, double *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    hpc_rng_t r;
    hpc_rng_init(&r, seed, (uint64_t)i);
    for (int k = 0; k < per; k++) out[(size_t)i * per + k] = k % 2 ? hpc_rng_normal(&r) : hpc_rng_uniform(&r);
}

/* 0, or the cudaError_t of the first failing call */
extern "C" int test_rng_cuda_draw(uint64_t seed, int n, int per, double *host)
{
    double *d = NULL;
    size_t bytes = (size_t)n * per * sizeof(double);
    cudaError_t e = cudaMalloc(&d, bytes);
    if (e == cudaSuccess) {
        draw<<<(n + 127) / 128, 128>>>(seed, n, per, d);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpy(host, d, bytes, cudaMemcpyDeviceToHost);
    cudaFree(d);
    return (int)e;
}
