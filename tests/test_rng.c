/* test_rng - libhpc's Philox streams against Random123's known-answer
 * vectors (kat_vectors, philox4x32 R=10) and basic distribution checks. */
#include "config.h"
#include <math.h>
#include <string.h>
#include "hpc.h"
#include "testlib.h"

static void kat(uint64_t seed, uint64_t index, uint64_t block, const uint32_t want[4])
{
    philox4x32_ctr_t r = hpc_rng_block(seed, index, block);
    for (int i = 0; i < 4; i++)
        EXPECT(r.v[i] == want[i], "word %d: %08x, want %08x", i, r.v[i], want[i]);
}

/* distance in ulps between two doubles of the same sign */
static int64_t ulps(double a, double b)
{
    int64_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    if (x < 0) x = INT64_MIN - x;
    if (y < 0) y = INT64_MIN - y;
    return x > y ? x - y : y - x;
}

/* sin, cos of 2 pi t in long double: 4t - j is exact, the rest has 11
 * more bits than the double under test */
static void ref_sincos2pi(double t, double *sn, double *cs)
{
    int j = (int)(4.0 * t + 0.5);
    long double x = (long double)(4.0 * t - j) * 1.5707963267948966192313216916397514L;
    long double s = sinl(x), c = cosl(x);
    long double S[4] = {s, c, -s, -c}, C[4] = {c, -s, -c, s};
    *sn = (double)S[j & 3];
    *cs = (double)C[j & 3];
}

int main(void)
{
    /* Random123 kat_vectors: ctr {0,0,0,0} key {0,0}; all ones; pi digits.
     * Our layout: ctr = {index lo, index hi, block lo, block hi}, key = {seed lo, seed hi}. */
    kat(0, 0, 0, (const uint32_t[]){0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
    kat(~0ULL, ~0ULL, ~0ULL, (const uint32_t[]){0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
    kat(0x299f31d0a4093822ULL, 0x85a308d3243f6a88ULL, 0x0370734413198a2eULL,
        (const uint32_t[]){0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});

    /* The stream hands out block 0's words, then block 1's, in order. */
    hpc_rng_t r;
    hpc_rng_init(&r, 42, 7);
    for (uint64_t b = 0; b < 3; b++) {
        philox4x32_ctr_t blk = hpc_rng_block(42, 7, b);
        for (int i = 0; i < 4; i++) {
            uint32_t u = hpc_rng_u32(&r);
            EXPECT(u == blk.v[i], "stream word %d of block %llu", i, (unsigned long long)b);
        }
    }

    /* Same (seed, index) -> same numbers; another index -> others. */
    hpc_rng_t a, b, c;
    hpc_rng_init(&a, 1, 100);
    hpc_rng_init(&b, 1, 100);
    hpc_rng_init(&c, 1, 101);
    int same = 1, differ = 0;
    for (int i = 0; i < 100; i++) {
        double x = hpc_rng_uniform(&a), y = hpc_rng_uniform(&b), z = hpc_rng_uniform(&c);
        same &= x == y;
        differ += x != z;
    }
    EXPECT(same, "equal keys gave different streams");
    EXPECT(differ > 95, "neighbouring indices correlate: only %d of 100 differ", differ);

    /* Uniform in [0,1): mean 1/2, variance 1/12; normal: mean 0, variance 1
     * (n = 1e6: 6-sigma bounds, a test that can fail but won't by chance). */
    const int n = 1000000;
    double s = 0, s2 = 0, lo = 1, hi = 0, ns = 0, ns2 = 0;
    float fmin = 1, fmax = 0;
    hpc_rng_init(&r, 2026, 0);
    for (int i = 0; i < n; i++) {
        double u = hpc_rng_uniform(&r);
        s += u;
        s2 += u * u;
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
        float f = hpc_rng_uniformf(&r);
        fmin = f < fmin ? f : fmin;
        fmax = f > fmax ? f : fmax;
        double g = hpc_rng_normal(&r);
        ns += g;
        ns2 += g * g;
    }
    double mean = s / n, var = s2 / n - mean * mean;
    EXPECT(lo >= 0 && hi < 1, "uniform out of [0,1): %g %g", lo, hi);
    EXPECT(fmin >= 0 && fmax < 1, "uniformf out of [0,1): %g %g", fmin, fmax);
    EXPECT(fabs(mean - 0.5) < 6 * sqrt(1.0 / 12 / n), "uniform mean %.6f", mean);
    EXPECT(fabs(var - 1.0 / 12) < 6 * sqrt(1.0 / 180 / n), "uniform variance %.6f", var);
    double nm = ns / n, nv = ns2 / n - nm * nm;
    EXPECT(fabs(nm) < 6 / sqrt(n), "normal mean %.6f", nm);
    EXPECT(fabs(nv - 1) < 6 * sqrt(2.0 / n), "normal variance %.6f", nv);

    /* The normals' own log and sin/cos (the same bits on CPU and GPU):
     * within 2 ulp of libm's log, and of sin/cos(2 pi t) computed in long
     * double from the exact quarter-turn reduction (libm's sin of the
     * double 2*pi*t is off by the rounding of the argument, tens of ulp
     * near the zeros); the normals within 1e-14 of Box-Muller with libm. */
    int64_t worst_log = 0, worst_trig = 0;
    double worst_norm = 0;
    hpc_rng_init(&r, 99, 1);
    for (int i = 0; i < 200000; i++) {
        double u = 1.0 - hpc_rng_uniform(&r), t = hpc_rng_uniform(&r), sn, cs;
        int64_t d = ulps(hpc_rng_log_(u), log(u));
        worst_log = d > worst_log ? d : worst_log;
        hpc_rng_sincos2pi_(t, &sn, &cs);
        double rs, rc;
        ref_sincos2pi(t, &rs, &rc);
        d = ulps(sn, rs);
        worst_trig = d > worst_trig ? d : worst_trig;
        d = ulps(cs, rc);
        worst_trig = d > worst_trig ? d : worst_trig;
    }
    const double edges[] = {0x1p-53, 0x1.0000000000001p-1, 0.5, 0.70710678118654746, 0.70710678118654757, 1.0};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        int64_t d = ulps(hpc_rng_log_(edges[i]), log(edges[i]));
        worst_log = d > worst_log ? d : worst_log;
    }
    EXPECT(worst_log <= 2, "own log: %lld ulp from libm", (long long)worst_log);
    EXPECT(worst_trig <= 2, "own sin/cos: %lld ulp from libm", (long long)worst_trig);
    hpc_rng_t a2, b2;
    hpc_rng_init(&a2, 5, 77);
    hpc_rng_init(&b2, 5, 77);
    for (int i = 0; i < 100000; i++) {
        double g = hpc_rng_normal(&a2);
        double u1 = 1.0 - hpc_rng_uniform(&b2), u2 = hpc_rng_uniform(&b2);
        double ref = sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925286766559 * u2);
        double spare = sqrt(-2.0 * log(u1)) * sin(6.283185307179586476925286766559 * u2);
        double err = fabs(g - ref) / (fabs(ref) > 1 ? fabs(ref) : 1);
        worst_norm = err > worst_norm ? err : worst_norm;
        g = hpc_rng_normal(&a2);
        err = fabs(g - spare) / (fabs(spare) > 1 ? fabs(spare) : 1);
        worst_norm = err > worst_norm ? err : worst_norm;
    }
    EXPECT(worst_norm < 1e-14, "normals %.3g from libm's Box-Muller", worst_norm);
    return test_result();
}
