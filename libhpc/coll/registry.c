/* registry.c - everything derived from the table of algorithms
 * (registry.h): the rows themselves with their cost functions and their
 * usable column, the row that runs where one cannot (coll_row_for), name
 * to algorithm (its name: alg_name.c), which algorithms a collective has,
 * and the lists and messages that name them.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* hier's in-node phase: the cheapest own row of c for bytes on one node
 * of m's ranks (defined below the rows). */
static double node_cost(const coll_cost_in_t *m, hpc_coll_t c, double bytes);
#define INODE(C_, bytes) node_cost(m, HPC_COLL_##C_, (bytes))

/* One cost function per row, its body the row's COST expression. */
#define COST_FN(C_, A_, FN_, MEM_, BE_, COST_)                                  \
    static double cost_##C_##_##A_(const coll_cost_in_t *m)                     \
    {                                                                           \
        const double A = m->A, B = m->B, G = m->G, n = m->n, P = m->P, L = m->L, \
                     f = m->f, pof2 = m->pof2, fold = m->fold, segs = m->segs;  \
        const double N = m->N > 1 ? m->N : 1, Q = ceil(P / N),                 \
                     AI = m->AI > 0 ? m->AI : A, BI = m->BI > 0 ? m->BI : B,    \
                     Lq = Q > 1 ? ceil(log2(Q)) : 0, LN = N > 1 ? ceil(log2(N)) : 0, \
                     fN = (N - 1) / N, AS = m->AS, BS = m->BS, SC = m->SC, C = m->C; \
        (void)A; (void)B; (void)G; (void)n; (void)P; (void)L; (void)f;          \
        (void)pof2; (void)fold; (void)segs; (void)N; (void)Q; (void)AI; (void)BI; \
        (void)Lq; (void)LN; (void)fN; (void)AS; (void)BS; (void)SC; (void)C;    \
        return (COST_);                                                         \
    }
COLL_REGISTRY(COST_FN)
#undef COST_FN

/* The usable column: only shm needs more than its memory kind (a
 * segment, one node: alg/shm.c says where it has them). */
#define USABLE(A_) (HPC_ALG_##A_ == HPC_ALG_SHM ? coll_shm_usable : NULL)
#define ROW(C_, A_, FN_, MEM_, BE_, COST_) \
    {HPC_COLL_##C_, HPC_ALG_##A_, #A_, coll_##FN_, USABLE(A_), cost_##C_##_##A_, MEM_, BE_},
static const coll_row_t rows[] = {COLL_REGISTRY(ROW)};
#undef ROW
enum { NROWS = (int)(sizeof rows / sizeof rows[0]) };

/* The inputs that follow from the others: L, f, pof2, fold, segs, C,
 * and SC from m->SC's "single copy works on the node". */
void coll_cost_fill(coll_cost_in_t *m)
{
    double p = m->P;
    m->L = p > 1 ? ceil(log2(p)) : 0;
    m->f = p > 0 ? (p - 1) / p : 0;
    double pof2 = 1;
    while (pof2 * 2 <= p) pof2 *= 2;
    m->pof2 = pof2;
    /* non-powers of two add a fold round each way with the whole vector */
    m->fold = pof2 == p ? 0 : 2 * (m->A + m->n * m->B) + m->n * m->G;
    m->segs = ceil(m->n / (double)coll_segment());
    if (m->segs < 1) m->segs = 1;
    size_t c = coll_segment() < ((size_t)64 << 10) ? coll_segment() : (size_t)64 << 10;
    m->C = (double)c;
    m->SC = m->cma && m->n >= (double)coll_settings()->single_copy ? 1 : 0;
}

static double node_cost(const coll_cost_in_t *m, hpc_coll_t c, double bytes)
{
    double q = ceil(m->P / (m->N > 1 ? m->N : 1)), best = INFINITY;
    if (q <= 1) return 0;
    coll_cost_in_t k = *m;
    k.P = q;
    k.N = 1;
    k.n = bytes;
    coll_cost_fill(&k);
    for (int i = 0; i < NROWS; i++) {
        if (rows[i].coll != c || rows[i].backend != COLL_BE_P2P || rows[i].alg == HPC_ALG_HIER ||
            !(rows[i].mem & COLL_MEM_HOST))
            continue;
        double t = rows[i].cost(&k);
        if (t < best) best = t;
    }
    return best;
}

const coll_row_t *coll_rows(int *n)
{
    *n = NROWS;
    return rows;
}

const coll_row_t *coll_row(hpc_coll_t c, hpc_alg_t a)
{
    for (int i = 0; i < NROWS; i++)
        if (rows[i].coll == c && rows[i].alg == a) return &rows[i];
    return NULL;
}

int coll_row_for(const coll_row_t *row, const coll_build_t *b, const coll_row_t **use)
{
    *use = row;
    if (!row->usable || row->usable(b)) return 0;
    if (b->map) return HPC_ERR(HPC_ERR_STATE, "%s: no segment", hpc_alg_name(row->alg));
    int i = (int)(row - rows), j = i + 1;
    if (j >= NROWS || rows[j].coll != row->coll) j = i - 1;
    return coll_row_for(&rows[j], b, use);
}

int hpc_coll_has_alg(hpc_coll_t c, hpc_alg_t a)
{
    if ((unsigned)c >= HPC_COLL_COUNT || (unsigned)a >= HPC_ALG_COUNT) return 0;
    return a == HPC_ALG_AUTO || coll_row(c, a) != NULL;
}

int hpc_coll_algs(hpc_coll_t c, hpc_alg_t *out, int max)
{
    if ((unsigned)c >= HPC_COLL_COUNT) return HPC_ERR(HPC_ERR_ARG, "unknown collective %d", (int)c);
    int n = 0;
    for (int k = HPC_ALG_AUTO + 1; k < HPC_ALG_COUNT; k++)
        if (coll_row(c, (hpc_alg_t)k)) {
            if (out && n < max) out[n] = (hpc_alg_t)k;
            n++;
        }
    return n;
}

const char *hpc_coll_alg_names(hpc_coll_t c, char *buf, size_t len)
{
    if (!buf || !len) return "";
    size_t k = 0;
    buf[0] = 0;
    for (int a = 0; a < HPC_ALG_COUNT; a++) {
        int listed = (unsigned)c < HPC_COLL_COUNT ? a != HPC_ALG_AUTO && coll_row(c, (hpc_alg_t)a)
                                                  : strcmp(hpc_alg_name((hpc_alg_t)a), "?") != 0;
        if (!listed || k >= len) continue;
        int w = snprintf(buf + k, len - k, "%s%s", k ? ", " : "", hpc_alg_name((hpc_alg_t)a));
        k = w < 0 ? len : k + (size_t)w;
    }
    return buf;
}

int hpc_alg_parse(const char *s, hpc_alg_t *out)
{
    static const struct { const char *n; hpc_alg_t a; } alias[] = {
        {"binomial", HPC_ALG_TREE}, {"recursive_doubling", HPC_ALG_BUTTERFLY},
        {"mpi", HPC_ALG_NATIVE}};
    int i = -1;
    for (int k = 0; s && k < HPC_ALG_COUNT && i < 0; k++)
        if (coll_name_eq(s, hpc_alg_name((hpc_alg_t)k))) i = k;
    for (size_t k = 0; s && i < 0 && k < sizeof alias / sizeof alias[0]; k++)
        if (coll_name_eq(s, alias[k].n)) i = (int)alias[k].a;
    if (i < 0) {
        char all[256];
        return HPC_ERR(HPC_ERR_ARG, "unknown algorithm '%s' (%s)", s ? s : "(null)",
                       hpc_coll_alg_names(HPC_COLL_COUNT, all, sizeof all));
    }
    *out = (hpc_alg_t)i;
    return 0;
}

int coll_alg_missing(hpc_coll_t c, hpc_alg_t a, const char *what)
{
    char has[256];
    return HPC_ERR(HPC_ERR_ARG, "%s%s has no algorithm '%s' (it has %s)", what ? what : "",
                   hpc_coll_name(c), hpc_alg_name(a), hpc_coll_alg_names(c, has, sizeof has));
}
