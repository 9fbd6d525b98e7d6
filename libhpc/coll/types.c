/* types.c - dtypes, ops and collectives: names both ways, element sizes,
 * element access for any dtype, the 16-bit float conversions, and which
 * buffers a collective reads and writes.  Depends on nothing else here.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"
#include "colls.h"

#include <ctype.h>
#include <string.h>

static const char *const dtype_names[HPC_DTYPE_COUNT] = {
    "int32", "int64", "float32", "float64", "float16", "bfloat16"};
static const char *const op_names[HPC_OP_COUNT] = {"sum", "prod", "min", "max", "avg"};
#define NAME(name, ...) #name,
static const char *const coll_names[HPC_COLL_COUNT] = {COLL_TABLE(NAME)};
#undef NAME
/* ", barrier, bcast, ...": the names, for the parser's message */
#define LIST(name, ...) ", " #name
static const char coll_list[] = COLL_TABLE(LIST);
#undef LIST

/* The table's rows are hpc_coll_t's constants, in order (the public
 * enum is the ABI, written out in hpc_coll.h) */
enum {
#define ROW(name, E, ...) ROW_##E,
    COLL_TABLE(ROW)
#undef ROW
    ROWS
};
#define SAME(name, E, ...) _Static_assert((int)HPC_COLL_##E == ROW_##E, "colls.h: " #name " out of order");
COLL_TABLE(SAME)
#undef SAME
_Static_assert((int)ROWS == (int)HPC_COLL_COUNT, "colls.h: a row for every hpc_coll_t");

const char *hpc_dtype_name(hpc_dtype_t t)
{
    return (unsigned)t < HPC_DTYPE_COUNT ? dtype_names[t] : "?";
}
const char *hpc_op_name(hpc_op_t op)
{
    return (unsigned)op < HPC_OP_COUNT ? op_names[op] : "?";
}
const char *hpc_coll_name(hpc_coll_t c)
{
    return (unsigned)c < HPC_COLL_COUNT ? coll_names[c] : "?";
}

int coll_name_eq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        int x = tolower((unsigned char)*a), y = tolower((unsigned char)*b);
        if (x == '-') x = '_';
        if (y == '-') y = '_';
        if (x != y) return 0;
    }
    return *a == *b;
}

static int lookup(const char *s, const char *const *names, int n)
{
    for (int i = 0; s && i < n; i++)
        if (coll_name_eq(s, names[i])) return i;
    return -1;
}

int hpc_dtype_parse(const char *s, hpc_dtype_t *out)
{
    static const struct { const char *n; hpc_dtype_t t; } alias[] = {
        {"int", HPC_INT32}, {"i32", HPC_INT32}, {"long", HPC_INT64}, {"i64", HPC_INT64},
        {"float", HPC_FLOAT32}, {"fp32", HPC_FLOAT32}, {"f32", HPC_FLOAT32},
        {"double", HPC_FLOAT64}, {"fp64", HPC_FLOAT64}, {"f64", HPC_FLOAT64},
        {"half", HPC_FLOAT16}, {"fp16", HPC_FLOAT16}, {"f16", HPC_FLOAT16},
        {"bf16", HPC_BFLOAT16}};
    int i = lookup(s, dtype_names, HPC_DTYPE_COUNT);
    for (size_t k = 0; i < 0 && s && k < sizeof alias / sizeof alias[0]; k++)
        if (coll_name_eq(s, alias[k].n)) i = (int)alias[k].t;
    if (i < 0)
        return HPC_ERR(HPC_ERR_ARG, "unknown dtype '%s' (int32, int64, float32, float64, "
                       "float16, bfloat16)", s ? s : "(null)");
    *out = (hpc_dtype_t)i;
    return 0;
}

int hpc_op_parse(const char *s, hpc_op_t *out)
{
    int i = lookup(s, op_names, HPC_OP_COUNT);
    if (i < 0 && s && coll_name_eq(s, "mean")) i = HPC_AVG;
    if (i < 0)
        return HPC_ERR(HPC_ERR_ARG, "unknown reduction op '%s' (sum, prod, min, max, avg)",
                       s ? s : "(null)");
    *out = (hpc_op_t)i;
    return 0;
}

int hpc_coll_parse(const char *s, hpc_coll_t *out)
{
    int i = lookup(s, coll_names, HPC_COLL_COUNT);
    if (i < 0 && s) {
        if (coll_name_eq(s, "broadcast")) i = HPC_COLL_BCAST;
        else if (coll_name_eq(s, "reducescatter")) i = HPC_COLL_REDUCE_SCATTER;
    }
    if (i < 0)
        return HPC_ERR(HPC_ERR_ARG, "unknown collective '%s' (%s)", s ? s : "(null)", coll_list + 2);
    *out = (hpc_coll_t)i;
    return 0;
}

size_t hpc_dtype_size(hpc_dtype_t t)
{
    static const size_t sz[HPC_DTYPE_COUNT] = {4, 8, 4, 8, 2, 2};
    return (unsigned)t < HPC_DTYPE_COUNT ? sz[t] : 0;
}

/* ---- 16-bit floats ------------------------------------------------ */

float coll_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else {                        /* subnormal: normalise */
            int e = -1;
            do { e++; man <<= 1; } while (!(man & 0x400));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t coll_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u)                            /* inf or nan */
        return sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0);
    if (ax >= 0x477ff000u) return sign | 0x7c00;      /* rounds to >= 65520: inf */
    if (ax < 0x38800000u) {                           /* subnormal half or zero */
        if (ax < 0x33000000u) return sign;            /* < 2^-25: rounds to 0 */
        uint32_t e = ax >> 23, man = (ax & 0x7fffff) | 0x800000;
        uint32_t shift = 126 - e;                     /* 14..24 */
        uint32_t v = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (v & 1))) v++;
        return sign | (uint16_t)v;
    }
    /* normal: rebias, round mantissa to nearest even */
    uint32_t v = ((ax >> 13) - ((127 - 15) << 10));
    uint32_t rem = ax & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (v & 1))) v++;
    return sign | (uint16_t)v;
}

float coll_bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t coll_float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40); /* quiet nan */
    x += 0x7fff + ((x >> 16) & 1);                   /* round to nearest even */
    return (uint16_t)(x >> 16);
}

double hpc_dtype_get(hpc_dtype_t t, const void *buf, size_t i)
{
    switch (t) {
    case HPC_INT32: return ((const int32_t *)buf)[i];
    case HPC_INT64: return (double)((const int64_t *)buf)[i];
    case HPC_FLOAT32: return ((const float *)buf)[i];
    case HPC_FLOAT64: return ((const double *)buf)[i];
    case HPC_FLOAT16: return coll_half_to_float(((const uint16_t *)buf)[i]);
    case HPC_BFLOAT16: return coll_bf16_to_float(((const uint16_t *)buf)[i]);
    default: return 0;
    }
}

void hpc_dtype_set(hpc_dtype_t t, void *buf, size_t i, double v)
{
    switch (t) {
    case HPC_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case HPC_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
    case HPC_FLOAT32: ((float *)buf)[i] = (float)v; break;
    case HPC_FLOAT64: ((double *)buf)[i] = v; break;
    case HPC_FLOAT16: ((uint16_t *)buf)[i] = coll_float_to_half((float)v); break;
    case HPC_BFLOAT16: ((uint16_t *)buf)[i] = coll_float_to_bf16((float)v); break;
    default: break;
    }
}

/* ---- what a collective reads and writes --------------------------- */

int hpc_coll_reduces(hpc_coll_t c)
{
    switch (c) {
#define CASE(name, E, SIG, ...) case HPC_COLL_##E: return COLL_SIG_REDUCES(SIG);
        COLL_TABLE(CASE)
#undef CASE
    default: return 0;
    }
}

int coll_rooted(hpc_coll_t c)
{
    switch (c) {
#define CASE(name, E, SIG, ...) case HPC_COLL_##E: return COLL_SIG_ROOTED(SIG);
        COLL_TABLE(CASE)
#undef CASE
    default: return 0;
    }
}

void hpc_coll_buf_counts(const hpc_coll_args_t *a, int rank, int p, size_t *sc, size_t *rc)
{
    size_t n = a->count, s = 0, r = 0, pn = (size_t)p * n;
    int root = rank == a->root;
    switch (a->coll) {
#define CASE(name, E, SIG, SEND, RECV, ...)                                                            \
    case HPC_COLL_##E:                                                                                 \
        s = COLL_CNT_OF(SEND, n, pn, root);                                                            \
        r = COLL_CNT_OF(RECV, n, pn, root);                                                            \
        break;
        COLL_TABLE(CASE)
#undef CASE
    default: break;
    }
    if (sc) *sc = s;
    if (rc) *rc = r;
}

/* 0, or which buffer of c stands for HPC_IN_PLACE where sb and rb alias
 * as c's in-place form does (1 sendbuf, 2 recvbuf); NULL for a buffer
 * that is HPC_IN_PLACE, off the offset of this rank's block in bytes */
int coll_aliased(hpc_coll_t c, const void *sb, const void *rb, int isroot, size_t off)
{
    const char *s = sb, *r = rb;
    switch (c) {
#define CASE(name, E, SIG, SEND, RECV, ALIAS, ...)                                                     \
    case HPC_COLL_##E: return COLL_ALIAS_OF(ALIAS, s, r, isroot, off) ? COLL_ALIAS_SIDE(ALIAS) : 0;
        COLL_TABLE(CASE)
#undef CASE
    default: return 0;
    }
}
