/* hpc_rng.h - counter-based random streams (Philox4x32-10, Random123).
 *
 * A stream is keyed by (seed, index) - index is the item (trajectory,
 * sample, matrix block), never the rank - so results are the same for any
 * number of ranks.  Every function here is inline and marked host+device,
 * so a CUDA kernel that includes this header draws exactly the numbers the
 * CPU draws.
 *
 * Layout: key = {seed lo32, seed hi32}; counter = {index lo32, index hi32,
 * block lo32, block hi32}; each block yields four 32-bit words, consumed in
 * order.
 */
#ifndef HPC_RNG_H
#define HPC_RNG_H

#include <stdint.h>
#include <math.h>
#include <Random123/philox.h>

#if defined(__CUDACC__)
#define HPC_HD __host__ __device__ __forceinline__
#else
#define HPC_HD static inline
#endif

typedef struct {
    philox4x32_key_t key;
    philox4x32_ctr_t ctr;      /* v[2], v[3]: next block number */
    philox4x32_ctr_t out;      /* current block */
    int used;                  /* words of out consumed (4 = empty) */
    int have_spare;            /* Box-Muller keeps the second normal */
    double spare;
} hpc_rng_t;

HPC_HD void hpc_rng_init(hpc_rng_t *r, uint64_t seed, uint64_t index)
{
    r->key.v[0] = (uint32_t)seed;
    r->key.v[1] = (uint32_t)(seed >> 32);
    r->ctr.v[0] = (uint32_t)index;
    r->ctr.v[1] = (uint32_t)(index >> 32);
    r->ctr.v[2] = 0;
    r->ctr.v[3] = 0;
    r->used = 4;
    r->have_spare = 0;
    r->spare = 0.0;
}

/* The raw Philox block for (seed, index, block): what the KAT tests check. */
HPC_HD philox4x32_ctr_t hpc_rng_block(uint64_t seed, uint64_t index, uint64_t block)
{
    philox4x32_key_t k = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    philox4x32_ctr_t c = {{(uint32_t)index, (uint32_t)(index >> 32),
                           (uint32_t)block, (uint32_t)(block >> 32)}};
    return philox4x32(c, k);
}

HPC_HD uint32_t hpc_rng_u32(hpc_rng_t *r)
{
    if (r->used == 4) {
        r->out = philox4x32(r->ctr, r->key);
        if (++r->ctr.v[2] == 0) ++r->ctr.v[3];
        r->used = 0;
    }
    return r->out.v[r->used++];
}

HPC_HD uint64_t hpc_rng_u64(hpc_rng_t *r)
{
    uint64_t lo = hpc_rng_u32(r);
    uint64_t hi = hpc_rng_u32(r);
    return lo | (hi << 32);
}

/* Uniform double in [0, 1) with 53 random bits. */
HPC_HD double hpc_rng_uniform(hpc_rng_t *r)
{
    return (double)(hpc_rng_u64(r) >> 11) * 0x1.0p-53;
}

/* Uniform float in [0, 1) with 24 random bits. */
HPC_HD float hpc_rng_uniformf(hpc_rng_t *r)
{
    return (float)(hpc_rng_u32(r) >> 8) * 0x1.0p-24f;
}

/* Standard normal (Box-Muller, both values used). */
HPC_HD double hpc_rng_normal(hpc_rng_t *r)
{
    if (r->have_spare) {
        r->have_spare = 0;
        return r->spare;
    }
    /* u1 in (0, 1] so log() is finite */
    double u1 = 1.0 - hpc_rng_uniform(r);
    double u2 = hpc_rng_uniform(r);
    double rad = sqrt(-2.0 * log(u1));
    double th = 6.283185307179586476925286766559 * u2;
    r->spare = rad * sin(th);
    r->have_spare = 1;
    return rad * cos(th);
}

HPC_HD float hpc_rng_normalf(hpc_rng_t *r)
{
    return (float)hpc_rng_normal(r);
}

#endif /* HPC_RNG_H */
