/* select.c - which algorithm "auto" runs.
 *
 * auto = (1) HPC_COLL_<OP>=ALG if set, (2) the tuning file named by
 * HPC_COLL_TUNING (written by hpc-collbench --tune) if it has a row for
 * this collective, the communicator's shape (nodes, ranks per node),
 * memory kind and size, (3) the alpha-beta-gamma model: alpha =
 * per-message latency, beta = seconds per byte moved, gamma = seconds per
 * byte reduced, with the classic per-algorithm costs for n bytes on p
 * ranks (Thakur, Rabenseifner & Gropp, "Optimization of Collective
 * Communication Operations in MPICH", IJHPCA 2005), plus alpha and beta
 * between nodes and those of a node's shared memory (a flag handed to
 * another core, one core's copy).  The constants default to
 * shared-memory figures and can be set with HPC_COLL_ALPHA ... or in the
 * tuning file.  The model weighs every row of the collective in the
 * registry (registry.h) that takes the buffers' memory kind; NCCL's row
 * costs 0, so device buffers go to NCCL where it is built in.
 *
 * hier's phases (alg/hier.c) are chosen here too, from the same rows:
 * its in-node phase as a job of one node of Q ranks, its leaders' phase
 * as one of N nodes with one rank each.
 *
 * Tuning file format (text, '#' comments; after Open MPI HAN's dynamic
 * rules and MPICH's JSON tuning, which key a choice by the collective,
 * the communicator's shape and the message size):
 *   alpha 2e-6          beta 2e-10        gamma 2.5e-10
 *   alpha_inter 5e-6    beta_inter 4e-10      (between nodes)
 *   alpha_shm 2e-7      beta_shm 1.25e-10     (a node's shared memory)
 *   allreduce 1 2 host 0 64K shm
 *   allreduce 1 2 host 64K - ring
 *   allreduce 4 8 host 0 - hier
 * i.e. COLLECTIVE NODES PPN MEM MIN_BYTES MAX_BYTES(- = no limit,
 * exclusive) ALG, NODES and PPN a number or * (any), MEM host, cuda or *.
 * A row applies where NODES and PPN are the communicator's (nodes, and
 * the ranks of its largest node) or *; failing that, the row of the
 * nearest shape within a factor of 2 in both (one node never stands for
 * more, nor more nodes for one); failing that, the model.  The format
 * of issue 13 (COLLECTIVE NRANKS MIN MAX ALG) is refused, naming the
 * line: its rows do not say how many nodes they were measured on.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <stdlib.h>
#include <string.h>

/* The model's constants (as a tuning file may set them). */
typedef struct { double a, b, g, ai, bi, as, bs; } model_k_t;
static model_k_t K;
static void prepare(void);

/* ---- the model ---------------------------------------------------- */
/* row's cost for bytes on p ranks over nnodes nodes (cma: single copy
 * works on the node), with alpha and beta as given for flat links */
static double cost_with(const coll_row_t *row, size_t bytes, int p, int nnodes, int cma, double alpha,
                        double beta)
{
    coll_cost_in_t m = {.A = alpha, .B = beta, .G = K.g, .n = (double)bytes, .P = p, .N = nnodes,
                        .AI = K.ai, .BI = K.bi, .AS = K.as, .BS = K.bs, .cma = cma};
    coll_cost_fill(&m);
    return row->cost(&m);
}

/* ... on p ranks spread over nnodes nodes: a flat algorithm over several
 * nodes waits on its slowest links, and the Q ranks of a node send
 * through its one network link at once; hier and shm weigh each part at
 * its own link's price */
static double cost_shape(const coll_row_t *row, size_t bytes, int p, int nnodes, int cma)
{
    prepare();
    int flat = nnodes > 1 && row->alg != HPC_ALG_HIER && row->alg != HPC_ALG_SHM;
    double q = nnodes > 1 ? ceil((double)p / nnodes) : 1;
    return cost_with(row, bytes, p, nnodes, cma, flat ? K.ai : K.a, flat ? K.bi * q : K.b);
}

double coll_model_cost(const coll_row_t *row, size_t bytes, int p)
{
    return cost_shape(row, bytes, p, 1, 0);
}

double coll_model_cost_nodes(const coll_row_t *row, size_t bytes, int p, int nnodes)
{
    return cost_shape(row, bytes, p, nnodes, 0);
}

void coll_model_constants(double *a, double *b, double *g, double *ai, double *bi)
{
    prepare();
    *a = K.a;
    *b = K.b;
    *g = K.g;
    *ai = K.ai;
    *bi = K.bi;
}

/* ---- tuning file -------------------------------------------------- */
enum { MEM_HOST, MEM_CUDA, MEM_ANY };
typedef struct {
    hpc_coll_t c;
    int nodes, ppn;         /* 0: any */
    int mem;                /* MEM_* */
    size_t lo, hi;
    hpc_alg_t a;
} tune_row_t;

static tune_row_t *rows;
static int nrows;

/* code, with the reason for line n of path as the cause */
static int tune_bad(int code, const char *path, int n, const char *why)
{
    return HPC_ERR(code, "HPC_COLL_TUNING=%s: line %d: %s", path, n, why);
}

/* The model constant a tuning line names (NULL: not a constant's name). */
static double *tune_slot(const char *name, model_k_t *k)
{
    static const struct { const char *n; size_t off; } names[] = {
        {"alpha", offsetof(model_k_t, a)},        {"beta", offsetof(model_k_t, b)},
        {"gamma", offsetof(model_k_t, g)},        {"alpha_inter", offsetof(model_k_t, ai)},
        {"beta_inter", offsetof(model_k_t, bi)},  {"alpha_shm", offsetof(model_k_t, as)},
        {"beta_shm", offsetof(model_k_t, bs)}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(name, names[i].n)) return (double *)(void *)((char *)k + names[i].off);
    return NULL;
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

/* NODES or PPN: a count >= 1, or * (0) */
static int tune_count(const char *w, int *out)
{
    int64_t v;
    if (!strcmp(w, "*")) return *out = 0, 0;
    if (hpc_parse_int64(w, &v) < 0 || v < 1 || v > INT32_MAX) {
        hpc_error_clear();
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int tune_mem(const char *w, int *out)
{
    *out = !strcmp(w, "host") ? MEM_HOST : !strcmp(w, "cuda") ? MEM_CUDA : !strcmp(w, "*") ? MEM_ANY : -1;
    return *out < 0 ? -1 : 0;
}

#define ROW_FORMAT                                                                                     \
    "expected 'COLLECTIVE NODES PPN MEM MIN_BYTES MAX_BYTES|- ALGORITHM' (NODES, PPN: a count or *; MEM: " \
    "host, cuda or *; an algorithm the collective has)"

/* A row's fields w[0..6] into *r; -1 with *why. */
static int tune_row(char w[][64], tune_row_t *r, const char **why)
{
    *why = ROW_FORMAT;
    size_t lo = 0, hi = (size_t)-1;
    if (hpc_coll_parse(w[0], &r->c) < 0 || tune_count(w[1], &r->nodes) < 0 || tune_count(w[2], &r->ppn) < 0 ||
        tune_mem(w[3], &r->mem) < 0 || hpc_parse_size(w[4], &lo) < 0 ||
        (strcmp(w[5], "-") && hpc_parse_size(w[5], &hi) < 0) || hpc_alg_parse(w[6], &r->a) < 0 ||
        !hpc_coll_has_alg(r->c, r->a) || r->a == HPC_ALG_AUTO) {
        hpc_error_clear();
        return -1;
    }
    if (hi <= lo) {
        *why = "MAX_BYTES must be larger than MIN_BYTES";
        return -1;
    }
    const coll_row_t *row = coll_row(r->c, r->a);
    if (r->mem == MEM_CUDA && !(row->mem & COLL_MEM_DEV)) {
        *why = "MEM cuda with an algorithm that takes host memory only";
        return -1;
    }
    r->lo = lo;
    r->hi = hi;
    return 0;
}

/* One line (comment stripped): a constant (into *mk), a row (into *r,
 * *is_row set), or nothing; -1 with the reason in *why. */
static int tune_line(char *line, tune_row_t *r, int *is_row, model_k_t *mk, const char **why)
{
    char w[8][64];
    int k = sscanf(line, "%63s %63s %63s %63s %63s %63s %63s %63s", w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]);
    *is_row = 0;
    if (k <= 0) return 0;
    double *slot = tune_slot(w[0], mk);
    if (slot) {
        *why = "expected 'alpha|beta|gamma|alpha_inter|beta_inter|alpha_shm|beta_shm NUMBER', a finite "
               "number >= 0 (seconds, seconds per byte)";
        return k == 2 && tune_constant(slot, w[1]) == 0 ? 0 : -1;
    }
    hpc_coll_t c;
    if (k == 5 && hpc_coll_parse(w[0], &c) == 0) {
        *why = "a row of the old format (COLLECTIVE NRANKS MIN_BYTES MAX_BYTES ALG), which does not say "
               "how many nodes it was measured on; rows are now 'COLLECTIVE NODES PPN MEM MIN_BYTES "
               "MAX_BYTES ALG': measure again with hpc-collbench --tune=FILE";
        return -1;
    }
    hpc_error_clear();
    *why = ROW_FORMAT;
    if (k != 7 || tune_row(w, r, why) < 0) return -1;
    *is_row = 1;
    return 0;
}

/* The whole file, or nothing: its rows and constants into *out, *n and
 * *mk, else HPC_ERR_DATA (HPC_ERR_IO, HPC_ERR_NOMEM) with the first bad
 * line as the cause.  Binary bytes (what
 * a wrong file name finds) are one reason, not a warning per line. */
static int tune_parse(const char *path, tune_row_t **out, int *n, model_k_t *mk)
{
    *out = NULL;
    *n = 0;
    FILE *f;
    HPC_TRY(hpc_setting_fopen("HPC_COLL_TUNING", path, &f));
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
            rc = tune_bad(HPC_ERR_DATA, path, lineno, why);
            break;
        }
        char *h = strchr(line, '#');
        if (h) *h = 0;
        tune_row_t r;
        int is_row;
        if (tune_line(line, &r, &is_row, mk, &why) < 0) {
            rc = tune_bad(HPC_ERR_DATA, path, lineno, why);
        } else if (is_row) {
            if (*n == ncap) {
                ncap = ncap ? 2 * ncap : 32;
                tune_row_t *m = realloc(*out, (size_t)ncap * sizeof *m);
                if (!m) {
                    rc = tune_bad(HPC_ERR_NOMEM, path, lineno, "out of memory");
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

int hpc_coll_tuning_check(const char *path)
{
    tune_row_t *r;
    int n;
    model_k_t k = {0, 0, 0, 0, 0, 0, 0};
    int rc = tune_parse(path, &r, &n, &k);
    free(r);
    return rc;
}

/* A bad file is ignored whole, with one warning: the cost model with the
 * settings' constants decides instead.  (Programs on the app kit refuse it
 * at start, exit 2: app/settings_check.c.) */
static void tune_load(const char *path)
{
    if (!*path) return;
    model_k_t k = K;
    if (tune_parse(path, &rows, &nrows, &k) < 0) {
        hpc_warn("%s; the file is ignored, auto uses the cost model", hpc_last_cause());
        hpc_error_clear();
        return;
    }
    K = k;
}

/* How far shape (nodes, ppn) is from a row's: 0 exact (or *), larger the
 * further, -1 where the row does not stand for it (one node never for
 * more, nor more for one; beyond a factor of 2 in either). */
static double shape_distance(const tune_row_t *r, int nodes, int ppn)
{
    double d = 0;
    if (r->nodes && r->nodes != nodes) {
        if ((r->nodes == 1) != (nodes == 1)) return -1;
        double x = fabs(log2((double)r->nodes / nodes));
        if (x > 1) return -1;
        d += x;
    }
    if (r->ppn && r->ppn != ppn) {
        double x = fabs(log2((double)r->ppn / ppn));
        if (x > 1) return -1;
        d += x;
    }
    return d;
}

/* The tuning file's algorithm for c on this shape (AUTO: none), taking
 * only algorithms ok(c, a) says may run (NULL: all). */
static hpc_alg_t tune_lookup(hpc_coll_t c, size_t bytes, int nodes, int ppn, int dev,
                             int (*ok)(const coll_row_t *row, const void *ctx), const void *ctx)
{
    int best = -1;
    double bestd = 0;
    for (int i = 0; i < nrows; i++) {
        const tune_row_t *r = &rows[i];
        if (r->c != c || bytes < r->lo || bytes >= r->hi) continue;
        if (r->mem != MEM_ANY && r->mem != (dev ? MEM_CUDA : MEM_HOST)) continue;
        const coll_row_t *row = coll_row(c, r->a);
        if (!(row->mem & (dev ? COLL_MEM_DEV : COLL_MEM_HOST)) || (ok && !ok(row, ctx))) continue;
        double d = shape_distance(r, nodes, ppn);
        if (d >= 0 && (best < 0 || d < bestd)) {
            best = i;
            bestd = d;
        }
    }
    return best >= 0 ? rows[best].a : HPC_ALG_AUTO;
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
        snprintf(what, sizeof what, "%s=%s: %s", coll_force_var(c), st->force[c], hpc_last_error());
        return HPC_ERR(HPC_ERR_ARG, "%s", what);
    }
    if (a != HPC_ALG_AUTO && !hpc_coll_has_alg(c, a)) {
        char what[128];
        snprintf(what, sizeof what, "%s=%s: ", coll_force_var(c), st->force[c]);
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
    K = (model_k_t){st->alpha, st->beta, st->gamma, st->alpha_inter, st->beta_inter, st->alpha_shm, st->beta_shm};
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

/* The cheapest row of c for this memory kind and shape: every row of c
 * is weighed, NCCL's only where it is built in. */
static hpc_alg_t model_choice(hpc_coll_t c, size_t bytes, const coll_shape_t *sh)
{
    int n;
    const coll_row_t *rw = coll_rows(&n);
    hpc_alg_t a = HPC_ALG_AUTO;
    double best = INFINITY;
    for (int i = 0; i < n; i++) {
        if (rw[i].coll != c || !(rw[i].mem & (sh->dev ? COLL_MEM_DEV : COLL_MEM_HOST))) continue;
        if (rw[i].backend == COLL_BE_NCCL && !hpc_have_nccl()) continue;
        double t = cost_shape(&rw[i], bytes, sh->p, sh->nnodes, sh->cma);
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
    coll_shape_t sh = {.p = p, .nnodes = 1, .ppn = p, .dev = dev, .cma = 0};
    return coll_select_shape(c, bytes, &sh, out);
}

int coll_select_shape(hpc_coll_t c, size_t bytes, const coll_shape_t *sh, hpc_alg_t *out)
{
    prepare();
    /* a bad HPC_COLL_<OP> fails every call that would use it */
    if (force[c] == FORCE_BAD) return force_parse(c, out);
    hpc_alg_t a = (hpc_alg_t)force[c];
    if (a == HPC_ALG_AUTO) {
        /* device memory: a row for device memory (cuda or *) before NCCL */
        a = tune_lookup(c, bytes, sh->nnodes, sh->ppn, sh->dev, NULL, NULL);
        if (a == HPC_ALG_AUTO) a = model_choice(c, bytes, sh);
    }
    *out = a;
    return 0;
}

/* cc's shape: the same on every rank of it (single copy counts only on
 * one node, where every rank shares the segment's agreed probe; over
 * several nodes the nodes may differ, and the choice must not) */
static void comm_shape(const coll_comm_t *cc, int dev, coll_shape_t *sh)
{
    const coll_topo_t *t = &cc->topo;
    int ppn = 1;
    for (int n = 0; n < t->nnodes; n++)
        if (t->first[n + 1] - t->first[n] > ppn) ppn = t->first[n + 1] - t->first[n];
    *sh = (coll_shape_t){.p = cc->size, .nnodes = t->nnodes, .ppn = ppn, .dev = dev,
                         .cma = t->nnodes == 1 && cc->seg && cc->seg->cma};
}

int coll_select_comm(coll_comm_t *cc, hpc_coll_t c, size_t bytes, int dev, hpc_alg_t *out)
{
    const coll_settings_t *st = coll_settings();
    uint64_t cd = ((uint64_t)c << 1 | (uint64_t)(dev != 0)) + 1;
    coll_sel_t *e = &cc->sel[(((uint64_t)bytes * 0x9e3779b97f4a7c15ULL) ^ (cd << 59)) >> 60];
    if (e->key == cd && e->bytes == (uint64_t)bytes && e->gen == st->generation) {
        *out = e->alg;
        return 0;
    }
    coll_shape_t sh;
    comm_shape(cc, dev, &sh);
    HPC_TRY(coll_select_shape(c, bytes, &sh, out));
    *e = (coll_sel_t){.key = cd, .bytes = (uint64_t)bytes, .gen = st->generation, .alg = *out};
    return 0;
}

/* ---- the drop-in: where MPI's own collective is the better choice -----
 * libhpc-mpi.so serves a program's call through libhpc or passes it to
 * MPI unchanged.  On one node, a small call (below HPC_MPI_SMALL, 8 KiB
 * by default: about the model's own latency-bound sizes, n beta below
 * alpha) gains nothing from a flat point-to-point schedule over MPI's
 * own collective on the same transport, and pays the drop-in's per-call
 * work (a request, a schedule); nor does a nonblocking one (a
 * generalized request on top).  There auto gives the call to MPI; its
 * shared-memory algorithm (blocking, without a request) and everything
 * the user or a tuning file chose stay libhpc's.  Local, and the same on
 * every rank of a correct call (the collective, its bytes, blocking or
 * not and the communicator's nodes are). */
int hpc_coll_prefers_mpi(MPI_Comm comm, int c, size_t bytes, int nonblocking)
{
    coll_comm_t *cc;
    if ((unsigned)c >= HPC_COLL_COUNT || coll_get_comm(comm, &cc) < 0) {
        hpc_error_clear();
        return 0;
    }
    prepare();
    if (force[c] != (int)HPC_ALG_AUTO || cc->topo.nnodes != 1 || cc->sim) return 0;
    if (!nonblocking) {
        /* auto's choice (cached per size on cc): first, as a blocking
         * call on shared memory - the common small call - ends here */
        hpc_alg_t a;
        if (coll_select_comm(cc, (hpc_coll_t)c, bytes, 0, &a) < 0) {
            hpc_error_clear();
            return 0;
        }
        const coll_row_t *row = coll_row((hpc_coll_t)c, a);
        if (!row || row->backend != COLL_BE_P2P || a == HPC_ALG_SHM || a == HPC_ALG_HIER) return 0;
    }
    coll_shape_t sh;
    comm_shape(cc, 0, &sh);
    return tune_lookup((hpc_coll_t)c, bytes, sh.nnodes, sh.ppn, 0, NULL, NULL) == HPC_ALG_AUTO;
}

/* ---- hier's phases -------------------------------------------------- */
typedef struct { int shm; } phase_ok_t;

/* what a phase can run: an own flat schedule over a map of ranks, or
 * shared memory where the node has its segment */
static int phase_ok(const coll_row_t *row, const void *ctx)
{
    const phase_ok_t *k = ctx;
    return row->backend == COLL_BE_P2P && row->alg != HPC_ALG_HIER && (row->mem & COLL_MEM_HOST) &&
           (row->alg != HPC_ALG_SHM || k->shm);
}

const coll_row_t *coll_select_phase(hpc_coll_t c, size_t bytes, int nnodes, int ppn, int shm, int cma)
{
    prepare();
    phase_ok_t k = {.shm = shm && nnodes == 1};
    hpc_alg_t a = tune_lookup(c, bytes, nnodes, ppn, 0, phase_ok, &k);
    if (a != HPC_ALG_AUTO) return coll_row(c, a);
    int n;
    const coll_row_t *rw = coll_rows(&n), *best = NULL;
    double tbest = INFINITY;
    for (int i = 0; i < n; i++) {
        if (rw[i].coll != c || !phase_ok(&rw[i], &k)) continue;
        /* in a node: its ranks, the node's constants; among the leaders,
         * one per node: every link between them crosses nodes */
        double t = nnodes == 1 ? cost_with(&rw[i], bytes, ppn, 1, cma, K.a, K.b)
                               : cost_with(&rw[i], bytes, nnodes, 1, 0, K.ai, K.bi);
        if (!best || t < tbest) {
            best = &rw[i];
            tbest = t;
        }
    }
    return best;
}
