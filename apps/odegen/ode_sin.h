/* ode_sin.h - a sine that vectorises, for the right-hand sides.
 *
 * Why: the classic example spends most of its time in sin(); libm's sin()
 * is a function call with branches, so a loop over lanes that calls it
 * cannot be vectorised.  ode_sin() is branch-free straight-line code (no
 * calls, no table look-ups), so GCC turns a lane loop into AVX2/SSE2 code,
 * and nvcc compiles the same source for the GPU, so CPU and GPU agree.
 *
 * Method (fdlibm's kernels): q = nearest integer to x*2/pi; r = x - q*pi/2
 * with pi/2 split into three parts (Cody-Waite; each q*PIO2_k is exact for
 * |q| < 2^20); then sin or cos of r on [-pi/4, pi/4] by fdlibm's
 * __kernel_sin/__kernel_cos polynomials (error < 2^-58), chosen and signed
 * by the two low bits of q.
 *
 * Error bound (measured against glibc's sin(), which is correctly rounded,
 * on 10^6 random arguments per range; tests/odegen_unit checks it):
 * at most 1 ulp for |x| <= 1000, at most 2 ulp up to ODE_SIN_FAST_MAX
 * (2^19 pi/2 ~ 8.2e5: the reduction keeps no tail); bit-equal to glibc for
 * ~92% of arguments in [-1, 1].  Larger or non-finite arguments are
 * detected by ode_sin_fast_ok() and the caller recomputes them with libm's
 * sin() (rare: such states are diverging anyway).
 *
 * Works in C11 and in CUDA C++ (host and device).
 */
#ifndef ODE_SIN_H
#define ODE_SIN_H

#include <stdint.h>
#include <string.h>
#include <math.h>

#if defined(__CUDACC__)
#define ODE_FN __host__ __device__ __forceinline__
#define ODE_RESTRICT __restrict__
#elif defined(__GNUC__)
/* always_inline: the whole engine must be inlined into solver.c's entry
 * point, which is compiled once per instruction set (target_clones). */
#define ODE_FN static inline __attribute__((always_inline))
#define ODE_RESTRICT restrict
#else
#define ODE_FN static inline
#define ODE_RESTRICT restrict
#endif

#define ODE_SIN_FAST_MAX 823549.6 /* 2^19 * pi/2, rounded down */

/* bit pattern of a double, without aliasing trouble (compiles to a move) */
ODE_FN uint64_t ode_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

ODE_FN double ode_from_bits(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* 1 if ode_sin(x) is accurate for x (finite and not too large). */
ODE_FN int ode_sin_fast_ok(double x)
{
    return fabs(x) <= ODE_SIN_FAST_MAX;
}

ODE_FN double ode_sin(double x)
{
    /* pi/2 in three pieces: PIO2_1 and PIO2_2 have 33 significant bits,
     * so q*PIO2_1 and q*PIO2_2 are exact for |q| < 2^20. */
    const double TWO_OVER_PI = 6.36619772367581382433e-01;
    const double PIO2_1 = 1.57079632673412561417e+00;
    const double PIO2_2 = 6.07710050630396597660e-11;
    const double PIO2_3 = 2.02226624879595063154e-21;
    const double SHIFTER = 6755399441055744.0; /* 1.5 * 2^52: rounds to integer */
    /* fdlibm __kernel_sin coefficients */
    const double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
                 S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
                 S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
    /* fdlibm __kernel_cos coefficients */
    const double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
                 C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
                 C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;

    double qs = x * TWO_OVER_PI + SHIFTER;   /* low mantissa bits hold q */
    uint64_t qb = ode_bits(qs);
    double q = qs - SHIFTER;
    double r = x - q * PIO2_1;
    r = r - q * PIO2_2;
    r = r - q * PIO2_3;

    double z = r * r;
    double v = z * r;
    double ps = S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)));
    double s = r + v * (S1 + z * ps);
    s = copysign(s, r);     /* sin(-0) = -0; elsewhere a no-op (sin r has r's sign) */

    double w2 = z * z;
    double pc = z * (C1 + z * (C2 + z * C3)) + w2 * w2 * (C4 + z * (C5 + z * C6));
    double hz = 0.5 * z;
    double w = 1.0 - hz;
    double c = w + (((1.0 - w) - hz) + z * pc);

    /* q mod 4: 0 -> sin r, 1 -> cos r, 2 -> -sin r, 3 -> -cos r */
    uint64_t odd = qb & 1u;
    uint64_t mask = (uint64_t)0 - odd;
    uint64_t res = (ode_bits(s) & ~mask) | (ode_bits(c) & mask);
    res ^= (qb & 2u) << 62;
    return ode_from_bits(res);
}

#endif /* ODE_SIN_H */
