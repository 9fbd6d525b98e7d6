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

/* Start r on the stream (seed, index): index is the item the numbers are
 * for (a trajectory, a sample, a block), never the rank, so any number
 * of ranks draws the same numbers for it. */
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

/* The same bits on every CPU and GPU: log and sin/cos of our own, in plain
 * IEEE operations (fdlibm's minimax kernels, < 1 ulp), because libm's and
 * CUDA's differ in the last bits; in CUDA each operation is rounded on its
 * own (__dmul_rn/__dadd_rn: no fused multiply-add), as on the host, where
 * C11 does not contract either (do not build with -ffp-contract=fast). */
#if defined(__CUDA_ARCH__)   /* the device pass of nvcc */
#define HPC_RNG_MUL(a, b) __dmul_rn((a), (b))
#define HPC_RNG_ADD(a, b) __dadd_rn((a), (b))
#else
#define HPC_RNG_MUL(a, b) ((a) * (b))
#define HPC_RNG_ADD(a, b) ((a) + (b))
#endif

/* c[0] + z (c[1] + z (... c[n-1])), each step rounded on its own */
HPC_HD double hpc_rng_poly_(double z, const double *c, int n)
{
    double p = c[n - 1];
    for (int i = n - 2; i >= 0; i--) p = HPC_RNG_ADD(c[i], HPC_RNG_MUL(z, p));
    return p;
}

/* log(x) for a normal x > 0 (fdlibm's e_log.c method). */
HPC_HD double hpc_rng_log_(double x)
{
    const double odd[4] = {3.999999999940941908e-01, 2.222219843214978396e-01,
                           1.531383769920937332e-01};
    const double even[4] = {6.666666666666735130e-01, 2.857142874366239149e-01,
                            1.818357216161805012e-01, 1.479819860511658591e-01};
    union { double d; uint64_t u; } v = {x};
    int k = (int)((v.u >> 52) & 0x7ff) - 1023;
    v.u = (v.u & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;   /* [1, 2) */
    if (v.d > 1.4142135623730951) {                                  /* -> [0.707, 1.414) */
        v.u -= 0x0010000000000000ULL;
        k++;
    }
    const double f = v.d - 1.0, s = f / (2.0 + f), z = HPC_RNG_MUL(s, s), w = HPC_RNG_MUL(z, z);
    const double R = HPC_RNG_ADD(HPC_RNG_MUL(w, hpc_rng_poly_(w, odd, 3)),
                                 HPC_RNG_MUL(z, hpc_rng_poly_(w, even, 4)));
    const double hfsq = HPC_RNG_MUL(HPC_RNG_MUL(0.5, f), f), dk = (double)k;
    const double tail = HPC_RNG_ADD(HPC_RNG_MUL(s, hfsq + R), HPC_RNG_MUL(dk, 1.90821492927058770002e-10));
    return HPC_RNG_MUL(dk, 6.93147180369123816490e-01) - ((hfsq - tail) - f);
}

/* sin and cos of 2 pi t for t in [0, 1): reduced exactly to a quarter
 * turn j and x = (4t - j) pi/2 in [-pi/4, pi/4], then fdlibm's kernels. */
HPC_HD void hpc_rng_sincos2pi_(double t, double *sn, double *cs)
{
    const double S[5] = {8.33333333332248946124e-03, -1.98412698298579493134e-04,
                         2.75573137070700676789e-06, -2.50507602534068634195e-08,
                         1.58969099521155010221e-10};
    const double C[6] = {4.16666666666666019037e-02, -1.38888888888741095749e-03,
                         2.48015872894767294178e-05, -2.75573143513906633035e-07,
                         2.08757232129817482790e-09, -1.13596475577881948265e-11};
    const double q = 4.0 * t;
    const int j = (int)(q + 0.5);
    const double x = HPC_RNG_MUL(q - (double)j, 1.5707963267948966), z = HPC_RNG_MUL(x, x);
    const double s = HPC_RNG_ADD(x, HPC_RNG_MUL(HPC_RNG_MUL(z, x),
                     HPC_RNG_ADD(-1.66666666666666324348e-01, HPC_RNG_MUL(z, hpc_rng_poly_(z, S, 5)))));
    const double hz = HPC_RNG_MUL(0.5, z), w = 1.0 - hz;
    const double c = HPC_RNG_ADD(w, HPC_RNG_ADD((1.0 - w) - hz, HPC_RNG_MUL(HPC_RNG_MUL(z, z),
                                 hpc_rng_poly_(z, C, 6))));
    switch (j & 3) {   /* sin(x + j pi/2), cos(x + j pi/2) */
    case 0: *sn = s; *cs = c; break;
    case 1: *sn = c; *cs = -s; break;
    case 2: *sn = -s; *cs = -c; break;
    default: *sn = -c; *cs = s; break;
    }
}

/* Standard normal (Box-Muller, both values used): the same bits on the
 * CPU and in CUDA kernels. */
HPC_HD double hpc_rng_normal(hpc_rng_t *r)
{
    if (r->have_spare) {
        r->have_spare = 0;
        return r->spare;
    }
    /* u1 in (0, 1] so the log is finite; sqrt is correctly rounded everywhere */
    double u1 = 1.0 - hpc_rng_uniform(r);
    double u2 = hpc_rng_uniform(r);
    double rad = sqrt(-2.0 * hpc_rng_log_(u1)), sn, cs;
    hpc_rng_sincos2pi_(u2, &sn, &cs);
    r->spare = rad * sn;
    r->have_spare = 1;
    return rad * cs;
}

HPC_HD float hpc_rng_normalf(hpc_rng_t *r)
{
    return (float)hpc_rng_normal(r);
}

/* ------------------------------------------------------------------ */
/* Random-access permutations: position i of a pseudo-random permutation */
/* of [0, n), keyed by (seed, stream) - e.g. stream = epoch for a global */
/* shuffle - in O(1) memory and time, the same on every rank and on the  */
/* GPU.  An 8-round Feistel network on the smallest even number of bits  */
/* that holds n, with round keys from the Philox block (seed, stream,    */
/* HPC_PERM_TAG + r) (a block range no stream reaches by drawing), and   */
/* cycle-walking back into [0, n) (fewer than 4 walks on average).       */
/* ------------------------------------------------------------------ */
#define HPC_PERM_ROUNDS 8
#define HPC_PERM_TAG 0x7065726d00000000ULL   /* "perm" */

typedef struct {
    uint64_t n, mask;          /* size; mask of one half */
    int half;                  /* bits per half */
    uint64_t key[HPC_PERM_ROUNDS];
} hpc_perm_t;

HPC_HD void hpc_perm_init(hpc_perm_t *p, uint64_t seed, uint64_t stream, uint64_t n)
{
    int bits = 2;
    while (bits < 64 && n > (1ULL << bits)) bits += 2;
    p->n = n;
    p->half = bits / 2;
    p->mask = (1ULL << p->half) - 1;
    for (int r = 0; r < HPC_PERM_ROUNDS; r += 2) {
        philox4x32_ctr_t b = hpc_rng_block(seed, stream, HPC_PERM_TAG + (uint64_t)r);
        p->key[r] = (uint64_t)b.v[0] | ((uint64_t)b.v[1] << 32);
        p->key[r + 1] = (uint64_t)b.v[2] | ((uint64_t)b.v[3] << 32);
    }
}

/* The round function: splitmix64's finaliser of the half and the key. */
HPC_HD uint64_t hpc_perm_mix_(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Element at position i (0 <= i < n) of the permutation. */
HPC_HD uint64_t hpc_perm_at(const hpc_perm_t *p, uint64_t i)
{
    uint64_t x = i;
    do {
        uint64_t l = x >> p->half, r = x & p->mask;
        for (int k = 0; k < HPC_PERM_ROUNDS; k++) {
            uint64_t t = l ^ (hpc_perm_mix_(r ^ p->key[k]) & p->mask);
            l = r;
            r = t;
        }
        x = (l << p->half) | r;
    } while (x >= p->n);
    return x;
}

#endif /* HPC_RNG_H */
