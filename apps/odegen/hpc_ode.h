/* hpc_ode.h - an ODE system for hpc-odegen, in one C file.
 *
 * A system file defines the right-hand side dx/dt = f(t, x) and, if it
 * wants, its parameters, a Jacobian, an initial-condition rule and event
 * functions; hpc-odegen compiles it at run time (--system-file FILE.c)
 * with the system's C compiler for the CPU, and with NVRTC for the GPU
 * (--device cuda), from the same source.  The five built-in systems are
 * files of this form, in PREFIX/share/hpckit/systems: copy one to start.
 *
 *   #define HPC_ODE_PARAMS(X) X(sigma, 10.0) X(rho, 28.0) X(beta, 8.0 / 3)
 *   #include <hpc_ode.h>
 *
 *   HPC_ODE_RHS(t, x, dxdt, p)
 *   {
 *       dxdt[0] = p->sigma * (x[1] - x[0]);
 *       dxdt[1] = x[0] * (p->rho - x[2]) - x[1];
 *       dxdt[2] = x[0] * x[1] - p->beta * x[2];
 *   }
 *
 *   HPC_ODE_SYSTEM(.name = "lorenz", .dim = 3, .about = "Lorenz 1963");
 *
 * Before the #include, optionally:
 *   HPC_ODE_PARAMS(X)   scalar parameters X(name, default): p->name, set
 *                       with --param name=value, recorded in the file;
 *   HPC_ODE_VECTORS(V)  vector parameters V(name, length), the length an
 *                       expression of dim: p->name[i], given with --param
 *                       name=@FILE (numbers separated by blanks or commas)
 *                       or filled by the setup hook.
 * p also has p->dim, the dimension.
 *
 * HPC_ODE_RHS(t, x, dxdt, p) { ... } - the right-hand side.  On the CPU
 * it computes 8 trajectories at once: t, x[i] and dxdt[i] are hpc_real,
 * a vector of 8 doubles (one per trajectory; GCC's and Clang's vector
 * types, so + - * / and comparisons work lane by lane and a double
 * operand is used in every lane).  So, inside it:
 *   - a value computed from t or x is an hpc_real: hpc_real u = x[0] * t;
 *   - a constant stored on its own is hpc_const(c): dxdt[0] = hpc_const(1.0);
 *   - functions are the hpc_ ones below (hpc_sin, hpc_exp, ...), not libm's;
 *   - a condition is hpc_where(x[0] > 0, a, b), not if or ?:;
 *   - index x and dxdt only (x[i]); no pointer arithmetic on them.
 * Each lane computes exactly what the same code computes for one
 * trajectory, so results do not depend on which trajectories run together.
 *
 * HPC_ODE_SYSTEM(...) - the description, a designated initializer of
 * hpc_ode_info (below): .name, .about, .dim (and .dim_min, .dim_max for a
 * choice: HPC_ODE_ANY for no upper bound), and the optional hooks, which
 * work on plain doubles, one trajectory at a time:
 *   .jac    void jac(double t, const double *x, double *J, const hpc_ode_params *p):
 *           J[i * p->dim + j] = d f_i / d x_j (implicit methods; without
 *           it they difference f);
 *   .x0     void x0(double *x, const hpc_ode_params *p, hpc_ode_rng *rng):
 *           the initial state; x holds the draws of --x0-low/--x0-high or
 *           --x0-normal on entry, and rng continues the same stream;
 *   .setup  void setup(hpc_ode_params *p, hpc_ode_rng *rng): runs once
 *           per run, after the parameters are set: fill vector parameters
 *           the user did not give (those hold NaN), from a stream of its own;
 *   .events {{"name", g, .terminal = 1, .direction = -1}, ...}: up to
 *           HPC_ODE_MAX_EVENTS functions double g(double t, const double
 *           *x, const hpc_ode_params *p) whose zeros are events, as
 *           scipy's solve_ivp(events=): terminal ends the trajectory,
 *           direction +1 counts only rising zeros, -1 falling, 0 both.
 *
 * Names beginning with hpc_, HPC_, ode_ or ODE_ are hpckit's.  For
 * --device cuda the file is compiled as CUDA C++ as well (NVRTC): keep to
 * the common part of C and C++ there (no variable-length arrays, cast
 * void pointers).
 */
#ifndef HPC_ODE_H
#define HPC_ODE_H

/* Trajectories one call of the right-hand side computes: 8 in
 * hpc-odegen's CPU engine, 1 elsewhere (the implicit methods, event
 * location, the GPU, a program of your own that includes this header). */
#ifndef HPC_ODE_LANES
#define HPC_ODE_LANES 1
#endif

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define HPC_ODE_CUDA 1
#define HPC_ODE_FN static __host__ __device__ __forceinline__
#define HPC_ODE_RESTRICT __restrict__
typedef long long hpc_ode_i64;
typedef unsigned long long hpc_ode_u64;
#else
#include <math.h>
#include <stdint.h>
#include <string.h>
typedef int64_t hpc_ode_i64;
typedef uint64_t hpc_ode_u64;
#if defined(__GNUC__)
/* always_inline: hpc-odegen's engine is one function per instruction set */
#define HPC_ODE_FN static inline __attribute__((always_inline, unused))
#else
#define HPC_ODE_FN static inline
#endif
#define HPC_ODE_RESTRICT restrict
#endif

#if defined(__GNUC__)
#define HPC_ODE_UNUSED __attribute__((unused))
#else
#define HPC_ODE_UNUSED
#endif

/* ------------------------------------------------------------------ */
/* Values: hpc_real is one double per trajectory of the call            */
/* ------------------------------------------------------------------ */
#if HPC_ODE_LANES > 1
typedef double hpc_real __attribute__((vector_size(8 * HPC_ODE_LANES)));
typedef hpc_ode_i64 hpc_mask __attribute__((vector_size(8 * HPC_ODE_LANES)));
typedef hpc_ode_u64 hpc_ode_bitsv __attribute__((vector_size(8 * HPC_ODE_LANES)));
#define HPC_ODE_FOR_LANES(l) for (int l = 0; l < HPC_ODE_LANES; l++)
#else
typedef double hpc_real;
typedef int hpc_mask;
#endif

/* the state and the derivative as the right-hand side sees them: on the
 * GPU component i of a thread's trajectory is st doubles from component
 * i - 1 (neighbouring threads, neighbouring addresses) */
#if defined(HPC_ODE_CUDA)
struct hpc_ode_in {
    const double *v;
    long long st;
    __host__ __device__ double operator[](int i) const { return v[i * st]; }
};
struct hpc_ode_out {
    double *v;
    long long st;
    __host__ __device__ double &operator[](int i) const { return v[i * st]; }
};
typedef struct hpc_ode_in hpc_ode_in;
typedef struct hpc_ode_out hpc_ode_out;
#else
typedef const hpc_real *HPC_ODE_RESTRICT hpc_ode_in;
typedef hpc_real *HPC_ODE_RESTRICT hpc_ode_out;
#endif

/* A constant in every lane (bit for bit; 0.0 + c would turn -0 into +0). */
#if HPC_ODE_LANES > 1
HPC_ODE_FN hpc_real hpc_const(double c)
{
    hpc_real r;
    HPC_ODE_FOR_LANES(l) r[l] = c;
    return r;
}
HPC_ODE_FN hpc_real hpc_where(hpc_mask c, hpc_real a, hpc_real b)
{
    return (hpc_real)(((hpc_ode_bitsv)c & (hpc_ode_bitsv)a) | (~(hpc_ode_bitsv)c & (hpc_ode_bitsv)b));
}
#else
HPC_ODE_FN hpc_real hpc_const(double c)
{
    return c;
}
HPC_ODE_FN hpc_real hpc_where(hpc_mask c, hpc_real a, hpc_real b)
{
    return c ? a : b;
}
#endif

/* ------------------------------------------------------------------ */
/* The sine and cosine: hpckit's own, branch-free, so that a loop over  */
/* lanes vectorises, and the same bits on the CPU and the GPU.          */
/* ------------------------------------------------------------------ */
/* Method (fdlibm's kernels): q = nearest integer to x*2/pi; r = x - q*pi/2
 * with pi/2 in three parts (Cody-Waite; each q*PIO2_k exact for |q| <
 * 2^20); sin or cos of r on [-pi/4, pi/4] by fdlibm's __kernel_sin and
 * __kernel_cos polynomials (error < 2^-58), chosen and signed by the two
 * low bits of q (plus one for the cosine).  At most 1 ulp from the correctly
 * rounded result for |x| <= 1000, 2 ulp up to HPC_ODE_SIN_FAST_MAX; larger
 * or non-finite arguments go to libm (rare: such states are diverging). */
#define HPC_ODE_SIN_FAST_MAX 823549.6 /* 2^19 * pi/2, rounded down */

HPC_ODE_FN hpc_ode_u64 hpc_ode_bits(double x)
{
#if defined(HPC_ODE_CUDA)
    return (hpc_ode_u64)__double_as_longlong(x);
#else
    hpc_ode_u64 u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}

HPC_ODE_FN double hpc_ode_from_bits(hpc_ode_u64 u)
{
#if defined(HPC_ODE_CUDA)
    return __longlong_as_double((long long)u);
#else
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

/* The kernel, once for a double and once for a vector of them: T is the
 * value type, U its bits' type, B(v) the bits, F(u) the value of bits,
 * COS 0 or 1. */
#define HPC_ODE_SIN_KERNEL(T, U, B, F, x, COS, out)                                                     \
    do {                                                                                             \
        const double TWO_OVER_PI = 6.36619772367581382433e-01;                                       \
        const double PIO2_1 = 1.57079632673412561417e+00;                                            \
        const double PIO2_2 = 6.07710050630396597660e-11;                                            \
        const double PIO2_3 = 2.02226624879595063154e-21;                                            \
        const double SHIFTER = 6755399441055744.0; /* 1.5 * 2^52: rounds to an integer */            \
        const double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,               \
                     S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,               \
                     S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;               \
        const double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,               \
                     C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,               \
                     C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;               \
        T qs_ = (x) * TWO_OVER_PI + SHIFTER; /* low mantissa bits hold q */                          \
        T q_ = qs_ - SHIFTER;                                                                        \
        T r_ = (x) - q_ * PIO2_1;                                                                    \
        r_ = r_ - q_ * PIO2_2;                                                                       \
        r_ = r_ - q_ * PIO2_3;                                                                       \
        T z_ = r_ * r_;                                                                              \
        T v_ = z_ * r_;                                                                              \
        T ps_ = S2 + z_ * (S3 + z_ * (S4 + z_ * (S5 + z_ * S6)));                                    \
        T s_ = r_ + v_ * (S1 + z_ * ps_);                                                            \
        /* copysign(s, r): sin(-0) = -0; elsewhere sin r has r's sign anyway */                      \
        const hpc_ode_u64 SIGN_ = (hpc_ode_u64)1 << 63;                                              \
        s_ = F((B(s_) & ~SIGN_) | (B(r_) & SIGN_));                                                  \
        T w2_ = z_ * z_;                                                                             \
        T pc_ = z_ * (C1 + z_ * (C2 + z_ * C3)) + w2_ * w2_ * (C4 + z_ * (C5 + z_ * C6));             \
        T hz_ = 0.5 * z_;                                                                            \
        T w_ = 1.0 - hz_;                                                                            \
        T c_ = w_ + (((1.0 - w_) - hz_) + z_ * pc_);                                                 \
        /* q mod 4 (q + 1 for the cosine): 0 sin r, 1 cos r, 2 -sin r, 3 -cos r */                   \
        U qb_ = B(qs_) + (hpc_ode_u64)(COS);                                        \
        U odd_ = qb_ & (hpc_ode_u64)1;                                              \
        U mask_ = (hpc_ode_u64)0 - odd_;                                            \
        U res_ = (B(s_) & ~mask_) | (B(c_) & mask_);                                \
        res_ ^= (qb_ & (hpc_ode_u64)2) << 62;                                                        \
        (out) = F(res_);                                                                             \
    } while (0)

/* 1 if the kernel is accurate for x (finite and not too large). */
HPC_ODE_FN int hpc_ode_sin_fast_ok(double x)
{
    return fabs(x) <= HPC_ODE_SIN_FAST_MAX;
}

/* The kernel alone, for one double (callers check hpc_ode_sin_fast_ok). */
HPC_ODE_FN double hpc_ode_sin_kernel(double x, int cosine)
{
    double r;
    HPC_ODE_SIN_KERNEL(double, hpc_ode_u64, hpc_ode_bits, hpc_ode_from_bits, x, cosine, r);
    return r;
}

HPC_ODE_FN double hpc_ode_sin1(double x)
{
    return hpc_ode_sin_fast_ok(x) ? hpc_ode_sin_kernel(x, 0) : sin(x);
}

HPC_ODE_FN double hpc_ode_cos1(double x)
{
    return hpc_ode_sin_fast_ok(x) ? hpc_ode_sin_kernel(x, 1) : cos(x);
}

#if HPC_ODE_LANES > 1
#define HPC_ODE_VBITS(v) ((hpc_ode_bitsv)(v))
#define HPC_ODE_VFROM(u) ((hpc_real)(u))
HPC_ODE_FN hpc_real hpc_ode_trig(hpc_real x, int cosine)
{
    hpc_real r;
    int bad = 0;
    HPC_ODE_FOR_LANES(l) {
        r[l] = hpc_ode_sin_kernel(x[l], cosine);
        bad |= !hpc_ode_sin_fast_ok(x[l]);
    }
    if (bad) /* rare: huge or non-finite arguments, with libm */
        HPC_ODE_FOR_LANES(l) if (!hpc_ode_sin_fast_ok(x[l])) r[l] = cosine ? cos(x[l]) : sin(x[l]);
    return r;
}
HPC_ODE_FN hpc_real hpc_sin(hpc_real x)
{
    return hpc_ode_trig(x, 0);
}
HPC_ODE_FN hpc_real hpc_cos(hpc_real x)
{
    return hpc_ode_trig(x, 1);
}
#else
HPC_ODE_FN hpc_real hpc_sin(hpc_real x)
{
    return hpc_ode_sin1(x);
}
HPC_ODE_FN hpc_real hpc_cos(hpc_real x)
{
    return hpc_ode_cos1(x);
}
#endif

/* ------------------------------------------------------------------ */
/* The other functions: libm's (CUDA's on the GPU), lane by lane.       */
/* ------------------------------------------------------------------ */
#if HPC_ODE_LANES > 1
#define HPC_ODE_MAP1(name, fn)                     \
    HPC_ODE_FN hpc_real name(hpc_real a)           \
    {                                              \
        hpc_real r;                                \
        HPC_ODE_FOR_LANES(l) r[l] = fn(a[l]);      \
        return r;                                  \
    }
#define HPC_ODE_MAP2(name, fn)                     \
    HPC_ODE_FN hpc_real name(hpc_real a, hpc_real b) \
    {                                              \
        hpc_real r;                                \
        HPC_ODE_FOR_LANES(l) r[l] = fn(a[l], b[l]); \
        return r;                                  \
    }
#else
#define HPC_ODE_MAP1(name, fn) \
    HPC_ODE_FN hpc_real name(hpc_real a) { return fn(a); }
#define HPC_ODE_MAP2(name, fn) \
    HPC_ODE_FN hpc_real name(hpc_real a, hpc_real b) { return fn(a, b); }
#endif
HPC_ODE_MAP1(hpc_sqrt, sqrt)
HPC_ODE_MAP1(hpc_fabs, fabs)
HPC_ODE_MAP1(hpc_exp, exp)
HPC_ODE_MAP1(hpc_expm1, expm1)
HPC_ODE_MAP1(hpc_ln, log) /* natural log (hpc_log is libhpc's logging) */
HPC_ODE_MAP1(hpc_log1p, log1p)
HPC_ODE_MAP1(hpc_tan, tan)
HPC_ODE_MAP1(hpc_tanh, tanh)
HPC_ODE_MAP1(hpc_atan, atan)
HPC_ODE_MAP1(hpc_cbrt, cbrt)
HPC_ODE_MAP2(hpc_pow, pow)
HPC_ODE_MAP2(hpc_atan2, atan2)
HPC_ODE_MAP2(hpc_fmin, fmin)
HPC_ODE_MAP2(hpc_fmax, fmax)
#undef HPC_ODE_MAP1
#undef HPC_ODE_MAP2

/* ------------------------------------------------------------------ */
/* Parameters                                                           */
/* ------------------------------------------------------------------ */
#ifndef HPC_ODE_PARAMS
#define HPC_ODE_PARAMS(X)
#endif
#ifndef HPC_ODE_VECTORS
#define HPC_ODE_VECTORS(V)
#endif
#define HPC_ODE_PFIELD(name, def) double name;
#define HPC_ODE_VFIELD(name, len) double *name;
typedef struct hpc_ode_params {
    int dim;
    HPC_ODE_PARAMS(HPC_ODE_PFIELD)
    HPC_ODE_VECTORS(HPC_ODE_VFIELD)
} hpc_ode_params;

/* A stream of random numbers (hpckit's Philox stream of the seed): the
 * x0 hook's continues the trajectory's, setup's is one of its own. */
typedef struct hpc_ode_rng {
    double (*uniform)(void *state);   /* [0, 1) */
    double (*normal)(void *state);    /* N(0, 1) */
    void *state;
} hpc_ode_rng;

HPC_ODE_FN double hpc_ode_uniform(hpc_ode_rng *r)
{
    return r->uniform(r->state);
}
HPC_ODE_FN double hpc_ode_normal(hpc_ode_rng *r)
{
    return r->normal(r->state);
}

/* ------------------------------------------------------------------ */
/* The description                                                      */
/* ------------------------------------------------------------------ */
#define HPC_ODE_MAX_EVENTS 16
#define HPC_ODE_ANY (-1) /* .dim_max: no upper bound */

typedef struct hpc_ode_event {
    const char *name;
    double (*g)(double t, const double *x, const hpc_ode_params *p);
    int terminal;  /* 1: the first zero ends the trajectory (status 1) */
    int direction; /* +1: zeros where g rises, -1: where it falls, 0: both */
} hpc_ode_event;

typedef struct hpc_ode_info {
    const char *name;  /* default: the file's name less .c */
    const char *about; /* one line for --help and the file */
    int dim;           /* the default dimension; */
    int dim_min;       /* with these two 0, the only one */
    int dim_max;       /* HPC_ODE_ANY: no bound */
    void (*jac)(double t, const double *x, double *J, const hpc_ode_params *p);
    void (*x0)(double *x, const hpc_ode_params *p, hpc_ode_rng *rng);
    void (*setup)(hpc_ode_params *p, hpc_ode_rng *rng);
    hpc_ode_event events[HPC_ODE_MAX_EVENTS];
} hpc_ode_info;

/* The right-hand side, 8 trajectories at a time on the CPU (see above). */
#define HPC_ODE_RHS(t, x, dxdt, p)                                                       \
    HPC_ODE_FN void hpc_ode_user_rhs(hpc_real t HPC_ODE_UNUSED, hpc_ode_in x HPC_ODE_UNUSED, \
                                     hpc_ode_out dxdt, const hpc_ode_params *p HPC_ODE_UNUSED)

/* The description.  hpc-odegen's lane engine and the GPU need only the
 * right-hand side: there (HPC_ODE_RHS_ONLY) it is left out. */
#if defined(HPC_ODE_RHS_ONLY) || defined(HPC_ODE_CUDA)
#define HPC_ODE_SYSTEM(...) typedef int hpc_ode_system_described
#else
#define HPC_ODE_SYSTEM(...) static const hpc_ode_info hpc_ode_user_info = {__VA_ARGS__}
#endif

#endif /* HPC_ODE_H */
