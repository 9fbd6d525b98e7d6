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
 *   alpha_inter 5e-6    beta_inter 4e-10     (between nodes: two link classes)
 *   allreduce 2 0 8192 butterfly
 *   allreduce 2 8192 - ring
 * i.e. COLLECTIVE NRANKS MIN_BYTES MAX_BYTES(- = no limit, exclusive) ALG.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <stdlib.h>
#include <string.h>

static double A, B, G;           /* alpha, beta, gamma */
static double AI, BI;            /* alpha, beta between nodes */
/* The model's constants as a tuning file may set them. */
typedef struct { double a, b, g, ai, bi; } model_k_t;
static void prepare(void);
static double cost_with(const coll_row_t *row, size_t bytes, int p, int nnodes, double alpha, double beta);

/* ---- the model ---------------------------------------------------- */
/* Cost in seconds of row's algorithm with n bytes per rank (count *
 * element size) on p ranks: the row's formula with this model's inputs. */
double coll_model_cost(const coll_row_t *row, size_t bytes, int p)
{
    return coll_model_cost_nodes(row, bytes, p, 1);
}

/* ... on p ranks spread over nnodes nodes: the two link classes (every
 * row sees N, AI, BI; only the hierarchical ones use them) */
double coll_model_cost_nodes(const coll_row_t *row, size_t bytes, int p, int nnodes)
{
    prepare();
    /* a flat algorithm over several nodes waits on its slowest links, and
     * the Q ranks of a node send through its one network link at once */
    int flat = nnodes > 1 && row->alg != HPC_ALG_HIER && row->alg != HPC_ALG_SHM;
    double q = nnodes > 1 ? ceil((double)p / nnodes) : 1;
    return cost_with(row, bytes, p, nnodes, flat ? AI : A, flat ? BI * q : B);
}

void coll_model_constants(double *a, double *b, double *g, double *ai, double *bi)
{
    prepare();
    *a = A;
    *b = B;
    *g = G;
    *ai = AI;
    *bi = BI;
}

/* Among node leaders (alg/hier.c): every link crosses nodes. */
double coll_model_cost_inter(const coll_row_t *row, size_t bytes, int p)
{
    prepare();
    return cost_with(row, bytes, p, 1, AI, BI);
}

static double cost_with(const coll_row_t *row, size_t bytes, int p, int nnodes, double alpha, double beta)
{
    coll_cost_in_t m = {.A = alpha, .B = beta, .G = G, .n = (double)bytes, .P = p,
                        .L = p > 1 ? ceil(log2((double)p)) : 0, .f = (double)(p - 1) / p,
                        .N = nnodes, .AI = AI, .BI = BI};
    int pof2 = 1;
    while (pof2 * 2 <= p) pof2 *= 2;
    m.pof2 = pof2;
    /* non-powers of two add a fold round each way with the whole vector */
    m.fold = pof2 == p ? 0 : 2 * (alpha + m.n * beta) + m.n * G;
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
static int nrows;

/* A reason for line n of path into err; -1. */
static int tune_bad(char *err, size_t len, const char *path, int n, const char *why)
{
    snprintf(err, len, "HPC_COLL_TUNING=%s: line %d: %s", path, n, why);
    return -1;
}

/* The model constant a tuning line names (NULL: not a constant's name). */
static double *tune_slot(const char *name, model_k_t *k)
{
    return !strcmp(name, "alpha") ? &k->a : !strcmp(name, "beta") ? &k->b : !strcmp(name, "gamma") ? &k->g
         : !strcmp(name, "alpha_inter") ? &k->ai : !strcmp(name, "beta_inter") ? &k->bi : NULL;
}

/* A model constant: a finite number >= 0 (hpc_parse_double refuses inf
 * and nan; inf or a negative beta would make every algorithm's cost
 * infinite or negative, and auto choose none). */
static int tune_constant(double *to, const char *v)
{
    double x;
    if (hpc_parse_double(v, 0, &x) < 0 || x < 0) {
        hpc_error_clear();
        return -1;
    }
    *to = x;
    return 0;
}

/* One line (comment stripped): a constant (into *mk), a row (into *r,
 * *is_row set), or nothing; -1 with the reason in *why. */
static int tune_line(char *line, tune_row_t *r, int *is_row, model_k_t *mk, const char **why)
{
    char w[6][64];
    int k = sscanf(line, "%63s %63s %63s %63s %63s %63s", w[0], w[1], w[2], w[3], w[4], w[5]);
    *is_row = 0;
    if (k <= 0) return 0;
    double *slot = tune_slot(w[0], mk);
    if (slot) {
        *why = "expected 'alpha|beta|gamma|alpha_inter|beta_inter NUMBER', a finite number >= 0 "
               "(seconds, seconds per byte)";
        return k == 2 && tune_constant(slot, w[1]) == 0 ? 0 : -1;
    }
    int64_t np;
    size_t lo = 0, hi = (size_t)-1;
    *why = "expected 'COLLECTIVE NRANKS MIN_BYTES MAX_BYTES|- ALGORITHM' (an algorithm the collective has)";
    if (k != 5 || hpc_coll_parse(w[0], &r->c) < 0 || hpc_parse_int64(w[1], &np) < 0 || np < 1 ||
        np > INT32_MAX || hpc_parse_size(w[2], &lo) < 0 || (strcmp(w[3], "-") && hpc_parse_size(w[3], &hi) < 0) ||
        hpc_alg_parse(w[4], &r->a) < 0 || !hpc_coll_has_alg(r->c, r->a) || r->a == HPC_ALG_AUTO) {
        hpc_error_clear();
        return -1;
    }
    if (hi <= lo) {
        *why = "MAX_BYTES must be larger than MIN_BYTES";
        return -1;
    }
    r->p = (int)np;
    r->lo = lo;
    r->hi = hi;
    *is_row = 1;
    return 0;
}

/* The whole file, or nothing: its rows and constants into *out, *n and
 * *mk, else -1 with the first bad line in err.  Binary bytes (what
 * a wrong file name finds) are one reason, not a warning per line. */
static int tune_parse(const char *path, tune_row_t **out, int *n, model_k_t *mk, char *err, size_t len)
{
    *out = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, len, "HPC_COLL_TUNING=%s: cannot open it", path);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    int lineno = 0, ncap = 0, rc = 0;
    while (rc == 0 && (got = getline(&line, &cap, f)) >= 0) {
        lineno++;
        const char *why = NULL;
        for (ssize_t i = 0; i < got && !why; i++) {
            unsigned char ch = (unsigned char)line[i];
            if (ch == 0 || (ch < 32 && ch != '\t' && ch != '\n' && ch != '\r') || ch == 127)
                why = "not a tuning file (binary bytes; hpc-collbench --tune writes one)";
        }
        if (why) {
            rc = tune_bad(err, len, path, lineno, why);
            break;
        }
        char *h = strchr(line, '#');
        if (h) *h = 0;
        tune_row_t r;
        int is_row;
        if (tune_line(line, &r, &is_row, mk, &why) < 0) {
            rc = tune_bad(err, len, path, lineno, why);
        } else if (is_row) {
            if (*n == ncap) {
                ncap = ncap ? 2 * ncap : 32;
                tune_row_t *m = realloc(*out, (size_t)ncap * sizeof *m);
                if (!m) {
                    rc = tune_bad(err, len, path, lineno, "out of memory");
                    break;
                }
                *out = m;
            }
            (*out)[(*n)++] = r;
        }
    }
    free(line);
    fclose(f);
    if (rc < 0) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

int hpc_coll_tuning_check(const char *path, char *err, size_t len)
{
    tune_row_t *r;
    int n;
    model_k_t k = {0, 0, 0, 0, 0};
    int rc = tune_parse(path, &r, &n, &k, err, len);
    free(r);
    return rc;
}

/* A bad file is ignored whole, with one warning: the cost model with the
 * settings' constants decides instead.  (Programs on the app kit refuse it
 * at start, exit 2: app/settings.c.) */
static void tune_load(const char *path)
{
    if (!*path) return;
    char err[512];
    model_k_t k = {A, B, G, AI, BI};
    if (tune_parse(path, &rows, &nrows, &k, err, sizeof err) < 0) {
        hpc_warn("%s; the file is ignored, auto uses the cost model", err);
        return;
    }
    A = k.a;
    B = k.b;
    G = k.g;
    AI = k.ai;
    BI = k.bi;
}

/* ---- HPC_COLL_<OP> ------------------------------------------------- */
enum { FORCE_BAD = -1 };
static int force[HPC_COLL_COUNT];   /* forced algorithm, AUTO = none, FORCE_BAD */

static int force_parse(hpc_coll_t c, hpc_alg_t *out)
{
    const coll_settings_t *st = coll_settings();
    hpc_alg_t a = HPC_ALG_AUTO;
    if (!st->force[c][0]) return 0;
    if (hpc_alg_parse(st->force[c], &a) < 0) {
        char what[512];
        snprintf(what, sizeof what, "%s=%s: %s", st->force_var[c], st->force[c], hpc_last_error());
        return HPC_ERR(HPC_ERR_ARG, "%s", what);
    }
    if (a != HPC_ALG_AUTO && !hpc_coll_has_alg(c, a)) {
        char what[128];
        snprintf(what, sizeof what, "%s=%s: ", st->force_var[c], st->force[c]);
        return coll_alg_missing(c, a, what);
    }
    *out = a;
    return 0;
}

/* Model constants, tuning file and forced algorithms: (re)read with the
 * settings, never per call. */
static void prepare(void)
{
    static int ready;
    static unsigned gen;
    const coll_settings_t *st = coll_settings();
    if (ready && gen == st->generation) return;
    A = st->alpha;
    B = st->beta;
    G = st->gamma;
    AI = st->alpha_inter;
    BI = st->beta_inter;
    free(rows);
    rows = NULL;
    nrows = 0;
    tune_load(st->tuning);
    for (int c = 0; c < HPC_COLL_COUNT; c++) {
        hpc_alg_t a = HPC_ALG_AUTO;
        force[c] = force_parse((hpc_coll_t)c, &a) < 0 ? FORCE_BAD : (int)a;
        hpc_error_clear();
    }
    ready = 1;
    gen = st->generation;
}

/* The cheapest row of c for this memory kind: every row of c is weighed,
 * NCCL's only where it is built in. */
static hpc_alg_t model_choice(hpc_coll_t c, size_t bytes, int p, int nnodes, int dev)
{
    int n;
    const coll_row_t *rw = coll_rows(&n);
    hpc_alg_t a = HPC_ALG_AUTO;
    double best = INFINITY;
    for (int i = 0; i < n; i++) {
        if (rw[i].coll != c || !(rw[i].mem & (dev ? COLL_MEM_DEV : COLL_MEM_HOST))) continue;
        if (rw[i].backend == COLL_BE_NCCL && !hpc_have_nccl()) continue;
        double t = coll_model_cost_nodes(&rw[i], bytes, p, nnodes);
        /* the first eligible row even if every cost came out non-finite:
         * auto must always name an algorithm */
        if (t < best || a == HPC_ALG_AUTO) {
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
    return coll_select_nodes(c, bytes, p, 1, dev, out);
}

int coll_select_nodes(hpc_coll_t c, size_t bytes, int p, int nnodes, int dev, hpc_alg_t *out)
{
    prepare();
    /* a bad HPC_COLL_<OP> fails every call that would use it */
    if (force[c] == FORCE_BAD) return force_parse(c, out);
    hpc_alg_t a = (hpc_alg_t)force[c];
    if (a == HPC_ALG_AUTO) {
        /* the tuning file is measured on host memory (and never with NCCL):
         * device memory goes to NCCL where it is built in */
        if (!dev || !hpc_have_nccl()) {
            /* exact rank count first, else the nearest one in the file */
            int best = -1, bestd = 1 << 30;
            for (int i = 0; i < nrows; i++) {
                if (rows[i].c != c || bytes < rows[i].lo || bytes >= rows[i].hi) continue;
                int d = abs(rows[i].p - p);
                if (d < bestd) { bestd = d; best = i; }
            }
            if (best >= 0 && bestd <= p / 2) a = rows[best].a;
        }
        if (a == HPC_ALG_AUTO) a = model_choice(c, bytes, p, nnodes, dev);
    }
    *out = a;
    return 0;
}
