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
 * HPC_COLL_ALPHA / _BETA / _GAMMA or in the tuning file.  The model
 * weighs every row of the collective in the registry (registry.h) that
 * takes the buffers' memory kind; NCCL's row costs 0, so device buffers go
 * to NCCL where it is built in.
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

/* Cost in seconds of row's algorithm with n bytes per rank (count *
 * element size) on p ranks: the row's formula with this model's inputs. */
double coll_model_cost(const coll_row_t *row, size_t bytes, int p)
{
    model_init();
    coll_cost_in_t m = {.A = A, .B = B, .G = G, .n = (double)bytes, .P = p,
                        .L = p > 1 ? ceil(log2((double)p)) : 0, .f = (double)(p - 1) / p};
    int pof2 = 1;
    while (pof2 * 2 <= p) pof2 *= 2;
    m.pof2 = pof2;
    /* non-powers of two add a fold round each way with the whole vector */
    m.fold = pof2 == p ? 0 : 2 * (A + m.n * B) + m.n * G;
    m.segs = ceil(m.n / (double)coll_segment());
    if (m.segs < 1) m.segs = 1;
    return row->cost(&m);
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
    if (!hpc_coll_has_alg(c, a)) {
        char what[96];
        snprintf(what, sizeof what, "%s=%s: ", name, e);
        return coll_alg_missing(c, a, what);
    }
    *out = a;
    return 1;
}

/* The cheapest row of c for this memory kind: every row of c is weighed,
 * NCCL's only where it is built in. */
static hpc_alg_t model_choice(hpc_coll_t c, size_t bytes, int p, int dev)
{
    int n;
    const coll_row_t *rw = coll_rows(&n);
    hpc_alg_t a = HPC_ALG_AUTO;
    double best = INFINITY;
    for (int i = 0; i < n; i++) {
        if (rw[i].coll != c || !(rw[i].mem & (dev ? COLL_MEM_DEV : COLL_MEM_HOST))) continue;
        if (rw[i].backend == COLL_BE_NCCL && !hpc_have_nccl()) continue;
        double t = coll_model_cost(&rw[i], bytes, p);
        if (t < best) {
            best = t;
            a = rw[i].alg;
        }
    }
    return a;
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
        /* the tuning file is measured on host memory (and never with NCCL):
         * device memory goes to NCCL where it is built in */
        if (!dev || !hpc_have_nccl()) {
            tune_load();
            /* exact rank count first, else the nearest one in the file */
            int best = -1, bestd = 1 << 30;
            for (int i = 0; i < nrows; i++) {
                if (rows[i].c != c || bytes < rows[i].lo || bytes >= rows[i].hi) continue;
                int d = abs(rows[i].p - p);
                if (d < bestd) { bestd = d; best = i; }
            }
            if (best >= 0 && bestd <= p / 2) a = rows[best].a;
        }
        if (a == HPC_ALG_AUTO) a = model_choice(c, bytes, p, dev);
    }
    *out = a;
    return 0;
}
