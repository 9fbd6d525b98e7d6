/* reduce.c - local reduction on host memory: dst[i] = a[i] (op) b[i].
 *
 * The loops are written as blocks of 16 independent element operations on
 * restrict-qualified pointers followed by a scalar tail: at -O2 GCC's
 * cheap vectoriser turns each block into SIMD instructions (a plain loop
 * with an unknown trip count would stay scalar), which is what lets the
 * ring and Rabenseifner allreduce run near memory bandwidth.
 * dst may equal a or b (element-wise, same index): "restrict" is then not
 * honoured by the caller, so those cases take the in-place variants.
 *
 * float16 and bfloat16 are widened to float, combined, and rounded back
 * (round to nearest even, types.c) - float32 accumulation per step.
 *
 * int32/int64 sums and products wrap around (two's complement), as MPI
 * libraries and NCCL do in practice - but signed overflow is undefined
 * behaviour in C, which a compiler may exploit, so they are computed in
 * the unsigned type (which wraps by definition) and converted back (a
 * modulo conversion on every compiler we build with).
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

#include <string.h>

#define BLK 16

#define OP_SUM(x, y) ((x) + (y))
#define OP_PROD(x, y) ((x) * (y))
#define WSUM(T, U, x, y) ((T)((U)(x) + (U)(y)))
#define WPROD(T, U, x, y) ((T)((U)(x) * (U)(y)))
#define SUM_I32(x, y) WSUM(int32_t, uint32_t, x, y)
#define PROD_I32(x, y) WPROD(int32_t, uint32_t, x, y)
#define SUM_I64(x, y) WSUM(int64_t, uint64_t, x, y)
#define PROD_I64(x, y) WPROD(int64_t, uint64_t, x, y)
#define OP_MIN(x, y) ((y) < (x) ? (y) : (x))
#define OP_MAX(x, y) ((y) > (x) ? (y) : (x))

/* three-operand form (dst distinct from a and b) and in-place form
 * (dst == a; b distinct) */
#define DEF_RED(T, NAME, OP)                                                  \
    static void red3_##NAME(T *restrict d, const T *restrict a,             \
                            const T *restrict b, size_t n)                  \
    {                                                                       \
        size_t i = 0;                                                       \
        for (; i + BLK <= n; i += BLK)                                      \
            for (size_t j = 0; j < BLK; j++) d[i + j] = OP(a[i + j], b[i + j]); \
        for (; i < n; i++) d[i] = OP(a[i], b[i]);                           \
    }                                                                       \
    static void red2_##NAME(T *restrict d, const T *restrict b, size_t n)   \
    {                                                                       \
        size_t i = 0;                                                       \
        for (; i + BLK <= n; i += BLK)                                      \
            for (size_t j = 0; j < BLK; j++) d[i + j] = OP(d[i + j], b[i + j]); \
        for (; i < n; i++) d[i] = OP(d[i], b[i]);                           \
    }

#define DEF_TYPE(T, TN, SUM, PROD)      \
    DEF_RED(T, TN##_sum, SUM)           \
    DEF_RED(T, TN##_prod, PROD)         \
    DEF_RED(T, TN##_min, OP_MIN)        \
    DEF_RED(T, TN##_max, OP_MAX)

DEF_TYPE(int32_t, i32, SUM_I32, PROD_I32)
DEF_TYPE(int64_t, i64, SUM_I64, PROD_I64)
DEF_TYPE(float, f32, OP_SUM, OP_PROD)
DEF_TYPE(double, f64, OP_SUM, OP_PROD)

/* ---- 16-bit floats: widened (types.c), combined, rounded back ---- */

static float fop(hpc_op_t op, float x, float y)
{
    switch (op) {
    case HPC_PROD: return x * y;
    case HPC_MIN: return OP_MIN(x, y);
    case HPC_MAX: return OP_MAX(x, y);
    default: return x + y;
    }
}

static void red16(int bf, hpc_op_t op, uint16_t *d, const uint16_t *a, const uint16_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float x = bf ? coll_bf16_to_float(a[i]) : coll_half_to_float(a[i]);
        float y = bf ? coll_bf16_to_float(b[i]) : coll_half_to_float(b[i]);
        float z = fop(op, x, y);
        d[i] = bf ? coll_float_to_bf16(z) : coll_float_to_half(z);
    }
}

#define DISPATCH(TN, T)                                                          \
    do {                                                                         \
        void (*f3)(T *restrict, const T *restrict, const T *restrict, size_t);   \
        void (*f2)(T *restrict, const T *restrict, size_t);                      \
        switch (op) {                                                            \
        case HPC_PROD: f3 = red3_##TN##_prod; f2 = red2_##TN##_prod; break;      \
        case HPC_MIN: f3 = red3_##TN##_min; f2 = red2_##TN##_min; break;         \
        case HPC_MAX: f3 = red3_##TN##_max; f2 = red2_##TN##_max; break;         \
        default: f3 = red3_##TN##_sum; f2 = red2_##TN##_sum; break;              \
        }                                                                        \
        if (dst == a) f2((T *)dst, (const T *)b, n);                             \
        else if (dst == b) f2((T *)dst, (const T *)a, n);                        \
        else f3((T *)dst, (const T *)a, (const T *)b, n);                        \
    } while (0)

void coll_reduce_host(hpc_dtype_t dt, hpc_op_t op, void *dst, const void *a,
                      const void *b, size_t n)
{
    switch (dt) {
    case HPC_INT32: DISPATCH(i32, int32_t); break;
    case HPC_INT64: DISPATCH(i64, int64_t); break;
    case HPC_FLOAT32: DISPATCH(f32, float); break;
    case HPC_FLOAT64: DISPATCH(f64, double); break;
    case HPC_FLOAT16: red16(0, op, dst, a, b, n); break;
    case HPC_BFLOAT16: red16(1, op, dst, a, b, n); break;
    default: break;
    }
}

/* AVG = SUM / nranks: integer division truncates toward zero (as C does). */
void coll_scale_host(hpc_dtype_t dt, void *buf, size_t n, int div)
{
    size_t i;
    switch (dt) {
    case HPC_INT32: { int32_t *v = buf; for (i = 0; i < n; i++) v[i] /= div; } break;
    case HPC_INT64: { int64_t *v = buf; for (i = 0; i < n; i++) v[i] /= div; } break;
    case HPC_FLOAT32: { float *v = buf; for (i = 0; i < n; i++) v[i] /= (float)div; } break;
    case HPC_FLOAT64: { double *v = buf; for (i = 0; i < n; i++) v[i] /= (double)div; } break;
    case HPC_FLOAT16: {
        uint16_t *v = buf;
        for (i = 0; i < n; i++) v[i] = coll_float_to_half(coll_half_to_float(v[i]) / (float)div);
    } break;
    case HPC_BFLOAT16: {
        uint16_t *v = buf;
        for (i = 0; i < n; i++) v[i] = coll_float_to_bf16(coll_bf16_to_float(v[i]) / (float)div);
    } break;
    default: break;
    }
}
