/* coll_testlib.h - helpers shared by the collectives tests (header-only):
 * element get/put for every dtype (16-bit floats by hand, so the tests do
 * not trust the library's conversions) and a counter-based input
 * generator, so every rank can name any rank's inputs. */
#ifndef COLL_TESTLIB_H
#define COLL_TESTLIB_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "hpc_coll.h"
#include "internal.h"

/* MPI_Finalize, or libhpc's quiet end where the MPI library hangs in it
 * (MPICH < 4.2 ch4:ucx across nodes: tests/cluster/ runs these programs
 * on several nodes; libhpc/finalize.c) */
static inline void t_finalize(void)
{
    if (hpc_finalize_is_quiet())
        hpc_finalize_quiet();
    else
        MPI_Finalize();
}

/* Only values exactly representable in the 16-bit format are stored
 * through these (the generator makes sure), so truncation is exact. */
static inline uint16_t t_f2h(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffffu;
    if (ax == 0) return sign;
    int e = (int)(ax >> 23) - 127;
    if (e < -14) {                                  /* subnormal half */
        uint32_t man = (ax & 0x7fffff) | 0x800000;
        return sign | (uint16_t)(man >> (-e - 14 + 13));
    }
    return sign | (uint16_t)(((uint32_t)(e + 15) << 10) | ((ax >> 13) & 0x3ff));
}

static inline float t_h2f(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v;
    if (e == 0) v = ldexpf((float)m, -24);
    else if (e == 31) v = m ? NAN : INFINITY;
    else v = ldexpf((float)(m | 0x400), e - 25);
    return (h & 0x8000) ? -v : v;
}

static inline uint16_t t_f2b(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    return (uint16_t)(x >> 16);
}

static inline float t_b2f(uint16_t b)
{
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static inline void t_put(hpc_dtype_t t, void *buf, size_t j, double v)
{
    switch (t) {
    case HPC_INT32: ((int32_t *)buf)[j] = (int32_t)v; break;
    case HPC_INT64: ((int64_t *)buf)[j] = (int64_t)v; break;
    case HPC_FLOAT32: ((float *)buf)[j] = (float)v; break;
    case HPC_FLOAT64: ((double *)buf)[j] = v; break;
    case HPC_FLOAT16: ((uint16_t *)buf)[j] = t_f2h((float)v); break;
    case HPC_BFLOAT16: ((uint16_t *)buf)[j] = t_f2b((float)v); break;
    default: break;
    }
}

static inline double t_get(hpc_dtype_t t, const void *buf, size_t j)
{
    switch (t) {
    case HPC_INT32: return ((const int32_t *)buf)[j];
    case HPC_INT64: return (double)((const int64_t *)buf)[j];
    case HPC_FLOAT32: return ((const float *)buf)[j];
    case HPC_FLOAT64: return ((const double *)buf)[j];
    case HPC_FLOAT16: return t_h2f(((const uint16_t *)buf)[j]);
    case HPC_BFLOAT16: return t_b2f(((const uint16_t *)buf)[j]);
    default: return 0;
    }
}

static inline uint64_t t_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* Input element j of rank r in case id: exactly representable in t.
 * Integers: [-1000, 1000] (prod: [-2, 2]).  Floats: k/256 with |k| < 256
 * for 16-bit types (prod: [0.5, 2) with 8 significant bits), k/2^24 in
 * [-1, 1) for float32 and [-1, 1) for float64 - so float32 sums are exact
 * in double, the reference's arithmetic. */
static inline double t_gen(uint64_t id, int r, size_t j, hpc_dtype_t t, hpc_op_t op)
{
    uint64_t h = t_mix(id * 0x9e3779b97f4a7c15ULL ^ t_mix(((uint64_t)r << 40) ^ (uint64_t)j));
    int prod = op == HPC_PROD;
    switch (t) {
    case HPC_INT32: case HPC_INT64:
        return prod ? (double)(int)(h % 5) - 2 : (double)(int)(h % 2001) - 1000;
    case HPC_FLOAT16: case HPC_BFLOAT16:
        return prod ? (64.0 + (double)(h % 192)) / 128.0          /* 8 significant bits */
                    : ((double)(int)(h % 511) - 255) / 256.0;
    case HPC_FLOAT32:
        return prod ? 0.5 + (double)(h % (1u << 23)) / (1u << 23)   /* float-exact */
                    : ((double)(int64_t)(h % (1u << 25)) - (1 << 24)) / (1 << 24);
    default:
        return prod ? 0.5 + (double)(h >> 12) * 0x1p-52 * 1.5
                    : ((double)(h >> 11) * 0x1p-52) - 1.0;
    }
}

/* unit roundoff of t (0 for integers) */
static inline double t_unit(hpc_dtype_t t)
{
    switch (t) {
    case HPC_FLOAT16: return 0x1p-11;
    case HPC_BFLOAT16: return 0x1p-8;
    case HPC_FLOAT32: return 0x1p-24;
    case HPC_FLOAT64: return 0x1p-53;
    default: return 0;
    }
}

#endif
