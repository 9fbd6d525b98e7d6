/* select.c - which algorithm "auto" runs.
 *
 * auto = (1) HPC_COLL_<OP>=ALG if set, (2) the tuning file named by
 * HPC_COLL_TUNING (written by hpc-collbench --tune) if it has a line for
 * this collective, rank count and size, (3) the alpha-beta-gamma model:
 * alpha = per-message latency, beta = seconds per byte moved, gamma =
 * seconds per byte reduced, with the classic per-algorithm costs for n
 * bytes on p ranks (Thakur, Rabenseifner & Gropp, "Optimization of
 * Collective Communication Operations in MPICH", IJHPCA 2005).  The
 * constants default to shared-memory figures and can be set with
 * HPC_COLL_ALPHA / _BETA / _GAMMA or in the tuning file.
 * Device buffers go to NCCL where it is built in.
 *
 * Tuning file format (text, '#' comments):
 *   alpha 2e-6          beta 2e-10        gamma 2.5e-10
 *   allreduce 2 0 8192 butterfly
 *   allreduce 2 8192 - ring
 * i.e. COLLECTIVE NRANKS MIN_BYTES MAX_BYTES(- = no limit, exclusive) ALG.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the model ---------------------------------------------------- */
static double par(const char *env, double def)
{
    const char *e = getenv(env);
    double v;
    if (e && *e && hpc_parse_double(e, &v) == 0 && v >= 0) return v;
    return def;
}

static double A = -1, B, G;      /* alpha, beta, gamma */

static void model_init(void)
{
    if (A >= 0) return;
    /* one shared-memory message ~2 us; ~5 GB/s copy; ~4 GB/s reduce */
    A = par("HPC_COLL_ALPHA", 2e-6);
    B = par("HPC_COLL_BETA", 2e-10);
    G = par("HPC_COLL_GAMMA", 2.5e-10);
}

static double lg(int p)
{
    return ceil(log2((double)p));
}

/* Cost in seconds of algorithm a for collective c with n bytes per rank
 * (count * element size); +inf where a does not exist for c. */
double coll_model_cost(hpc_coll_t c, hpc_alg_t a, size_t bytes, int p)
{
    model_init();
    if (p <= 1) return a == HPC_ALG_LINEAR ? 0 : 1e-9;
    if (!coll_builder(c, a)) return INFINITY;
    double n = (double)bytes, f = (double)(p - 1) / p, L = lg(p), P = p;
    /* non-powers of two add a fold round each way with the whole vector */
    int pof2 = 1;
    while (pof2 * 2 <= p) pof2 *= 2;
    double fold = pof2 == p ? 0 : 2 * (A + n * B) + n * G;
    double segs = ceil(n / (double)coll_segment());
    switch (c) {
    case HPC_COLL_BARRIER:
        if (a == HPC_ALG_LINEAR) return 2 * (P - 1) * A;
        if (a == HPC_ALG_TREE) return 2 * L * A;
        return L * A;
    case HPC_COLL_BCAST:
        if (a == HPC_ALG_LINEAR) return (P - 1) * (A + n * B);
        if (a == HPC_ALG_TREE) return L * (A + n * B);
        if (a == HPC_ALG_RING) return (P - 2 + segs) * (A + n / segs * B);
        return (L + P - 1) * A + 2 * f * n * B;            /* scatter_allgather */
    case HPC_COLL_REDUCE:
        if (a == HPC_ALG_LINEAR) return (P - 1) * (A + n * B + n * G);
        if (a == HPC_ALG_TREE) return L * (A + n * B + n * G);
        if (a == HPC_ALG_RING) return (P - 2 + segs) * (A + n / segs * (B + G));
        return 2 * L * A + 2 * f * n * B + f * n * G + fold;   /* rabenseifner */
    case HPC_COLL_ALLREDUCE:
        if (a == HPC_ALG_LINEAR) return 2 * (P - 1) * (A + n * B) + (P - 1) * n * G;
        if (a == HPC_ALG_TREE) return 2 * L * (A + n * B) + L * n * G;
        if (a == HPC_ALG_BUTTERFLY) return L * (A + n * B + n * G) + fold;
        if (a == HPC_ALG_RING) return 2 * (P - 1) * A + 2 * f * n * B + f * n * G + (segs - 1) * A;
        return 2 * L * A + 2 * f * n * B + f * n * G + fold;   /* rabenseifner */
    case HPC_COLL_GATHER:
    case HPC_COLL_SCATTER:
        if (a == HPC_ALG_LINEAR) return (P - 1) * A + (P - 1) * n * B;
        return L * A + (P - 1) * n * B;
    case HPC_COLL_ALLGATHER:       /* n = one block; total p*n */
        if (a == HPC_ALG_LINEAR) return 2 * (P - 1) * A + (P - 1) * n * B + (P - 1) * P * n * B;
        if (a == HPC_ALG_RING) return (P - 1) * (A + n * B);
        if (a == HPC_ALG_BUTTERFLY) return L * A + (P - 1) * n * B + (pof2 == p ? 0 : 2 * A + P * n * B);
        return L * A + (P - 1) * n * B + P * n * B * 0.5;      /* bruck: + local rotation */
    case HPC_COLL_REDUCE_SCATTER:  /* n = one block */
        if (a == HPC_ALG_LINEAR) return (P - 1) * (A + P * n * (B + G)) + (P - 1) * (A + n * B);
        if (a == HPC_ALG_RING) return (P - 1) * (A + n * B + n * G);
        return L * A + (P - 1) * n * (B + G) + (pof2 == p ? 0 : 2 * A + P * n * (B + G));
    case HPC_COLL_ALLTOALL:        /* n = one pair's block */
        if (a == HPC_ALG_LINEAR) return (P - 1) * n * B + A * 2;
        if (a == HPC_ALG_RING) return (P - 1) * (A + n * B);
        return L * (A + P / 2 * n * B) + 2 * P * n * B * 0.25;  /* bruck */
    default:
        return INFINITY;
    }
}

/* ---- tuning file -------------------------------------------------- */
typedef struct {
    hpc_coll_t c;
    int p;
    size_t lo, hi;
    hpc_alg_t a;
} tune_row_t;

static tune_row_t *rows;
static int nrows = -1;

static void tune_load(void)
{
    if (nrows >= 0) return;
    nrows = 0;
    const char *path = getenv("HPC_COLL_TUNING");
    if (!path || !*path) return;
    FILE *f = fopen(path, "r");
    if (!f) {
        hpc_warn("HPC_COLL_TUNING=%s: cannot open it; using the cost model", path);
        return;
    }
    char line[256];
    int cap = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *h = strchr(line, '#');
        if (h) *h = 0;
        char w[5][64];
        int k = sscanf(line, "%63s %63s %63s %63s %63s", w[0], w[1], w[2], w[3], w[4]);
        if (k <= 0) continue;
        if (k == 2 && (!strcmp(w[0], "alpha") || !strcmp(w[0], "beta") || !strcmp(w[0], "gamma"))) {
            model_init();
            double v = atof(w[1]);
            if (w[0][0] == 'a') A = v;
            else if (w[0][0] == 'b') B = v;
            else G = v;
            continue;
        }
        tune_row_t r;
        long np;
        size_t lo = 0, hi = (size_t)-1;
        if (k != 5 || hpc_coll_parse(w[0], &r.c) < 0 || hpc_parse_long(w[1], &np) < 0 ||
            hpc_parse_size(w[2], &lo) < 0 || (strcmp(w[3], "-") && hpc_parse_size(w[3], &hi) < 0) ||
            hpc_alg_parse(w[4], &r.a) < 0 || !hpc_coll_has_alg(r.c, r.a)) {
            hpc_error_clear();
            hpc_warn("%s:%d: not a tuning line, ignored", path, lineno);
            continue;
        }
        r.p = (int)np;
        r.lo = lo;
        r.hi = hi;
        if (nrows == cap) {
            cap = cap ? 2 * cap : 32;
            tune_row_t *n = realloc(rows, (size_t)cap * sizeof *n);
            if (!n) break;
            rows = n;
        }
        rows[nrows++] = r;
    }
    fclose(f);
}

static int env_choice(hpc_coll_t c, hpc_alg_t *out)
{
    char name[64] = "HPC_COLL_";
    size_t k = strlen(name);
    for (const char *s = hpc_coll_name(c); *s && k < sizeof name - 1; s++)
        name[k++] = (char)toupper((unsigned char)*s);
    name[k] = 0;
    const char *e = getenv(name);
    if (!e || !*e) return 0;
    hpc_alg_t a;
    if (hpc_alg_parse(e, &a) < 0)
        return hpc_error_push(HPC_ERR_ARG, __FILE__, __LINE__, __func__);
    if (a == HPC_ALG_AUTO) return 0;
    if (!hpc_coll_has_alg(c, a))
        return HPC_ERR(HPC_ERR_ARG, "%s=%s: %s has no algorithm '%s'", name, e, hpc_coll_name(c), e);
    *out = a;
    return 1;
}

int hpc_coll_choose(hpc_coll_t c, size_t count, hpc_dtype_t dt, int p, int dev, hpc_alg_t *out)
{
    if ((unsigned)c >= HPC_COLL_COUNT) return HPC_ERR(HPC_ERR_ARG, "unknown collective %d", (int)c);
    return coll_select(c, count * hpc_dtype_size(dt), p, dev, out);
}

int coll_select(hpc_coll_t c, size_t bytes, int p, int dev, hpc_alg_t *out)
{
    hpc_alg_t a = HPC_ALG_AUTO;
    int e = env_choice(c, &a);
    if (e < 0) return e;
    if (e == 0) {
        if (dev && hpc_have_nccl()) {
            a = HPC_ALG_NCCL;
        } else {
            tune_load();
            /* exact rank count first, else the nearest one in the file */
            int best = -1, bestd = 1 << 30;
            for (int i = 0; i < nrows; i++) {
                if (rows[i].c != c || bytes < rows[i].lo || bytes >= rows[i].hi) continue;
                int d = abs(rows[i].p - p);
                if (d < bestd) { bestd = d; best = i; }
            }
            if (best >= 0 && bestd <= p / 2) {
                a = rows[best].a;
            } else {
                double bc = INFINITY;
                for (int k = HPC_ALG_LINEAR; k < HPC_ALG_COUNT; k++) {
                    double t = coll_model_cost(c, (hpc_alg_t)k, bytes, p);
                    if (t < bc) { bc = t; a = (hpc_alg_t)k; }
                }
            }
        }
    }
    *out = a;
    return 0;
}
