/* simulate.c - hpc_coll_simulate: an algorithm's time on many ranks,
 * predicted from its real schedules, without MPI.
 *
 * For every rank of a communicator that does not exist, the algorithm's
 * builder (the same code a real call runs) writes that rank's schedule
 * into a request on a made-up communicator state: nodes of p/nnodes
 * consecutive ranks, no MPI communicator.  No message is sent and no
 * buffer is touched: the user buffers are fake addresses (builders only
 * compute pointers), scratch is allocated but never written (simulated
 * states say so: coll_comm_t.sim).  Then the schedules are played against
 * each other, round by round, with the cost model's constants:
 *   - a round posted at time T sends its messages one after another on
 *     this rank's link: the k-th arrives at T + alpha + (bytes of sends
 *     1..k) beta, alpha/beta of the link's class (same node or not);
 *   - a receive is matched with the peer's sends to this rank in order
 *     (as MPI's non-overtaking rule does) and, with a reduction on
 *     arrival, adds bytes x gamma;
 *   - the round ends when its sends are out and its receives are in;
 *     its local steps add gamma per byte reduced and beta per byte copied;
 *   - the next round is posted then.
 * The prediction is the last rank's end: the critical path.  Not modelled:
 * contention (ranks of a node sharing its network link; a flat algorithm
 * over nodes is therefore predicted optimistic), eager/rendezvous
 * protocols, the progress engine's own cost.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int kind;               /* ST_SEND, ST_RECV, ST_REDUCE (bytes reduced), ST_COPY */
    int peer;
    uint32_t bytes;         /* (a message is at most 1 GiB: schedule.c cuts bigger ones) */
    uint32_t red;           /* RECV: bytes reduced on arrival */
} sim_step_t;

/* Steps of all ranks kept at once, at most (16 bytes each): a ring over
 * thousands of ranks has millions; beyond this the call says so. */
#define SIM_MAX_STEPS ((long)24 << 20)

typedef struct {
    sim_step_t *st;
    int *rend, nrounds, nsteps;
} sim_sched_t;

typedef struct {
    int src;
    double arrive;
    int used;
} sim_msg_t;

typedef struct {
    sim_msg_t *m;
    int n, cap, head;       /* messages before head are all used */
} sim_inbox_t;

/* ---- the made-up communicator --------------------------------------- */
static int sim_topo(coll_topo_t *t, int p, int nnodes)
{
    int per = (p + nnodes - 1) / nnodes;
    HPC_TRY(coll_topo_alloc(t, p));
    t->nnodes = (p + per - 1) / per;
    for (int r = 0; r < p; r++) {
        t->node_of[r] = r / per;
        t->members[r] = r;
    }
    for (int n = 0; n <= t->nnodes; n++) t->first[n] = n * per < p ? n * per : p;
    return 0;
}

/* rank r's schedule, in compact form */
static int sim_build(coll_comm_t *cc, const coll_row_t *row, hpc_dtype_t dt, size_t count, int r,
                     sim_sched_t *out)
{
    hpc_request_t req;
    memset(&req, 0, sizeof req);
    req.cc = cc;
    req.coll = row->coll;
    req.alg = row->alg;
    req.dt = dt;
    req.count = count;
    cc->rank = r;
    coll_sched_init(&req.s);
    size_t es = hpc_dtype_size(dt);
    /* fake, far apart, aligned: builders only compute addresses */
    char *sb = (char *)(uintptr_t)((uint64_t)1 << 44), *rb = (char *)(uintptr_t)((uint64_t)1 << 45);
    coll_build_t b = {.r = &req, .s = &req.s, .rank = r, .p = cc->size, .root = 0, .sbuf = sb,
                      .rbuf = rb, .count = count, .es = es, .dt = dt, .op = HPC_SUM,
                      .seg = coll_segment(), .phase = coll_select_phase, .row_of = coll_row};
    const coll_row_t *use = row;
    int e = coll_row_for(row, &b, &use);
    if (e == 0) e = use->build(&b);
    if (e == 0) e = coll_round(&req.s);
    if (e == 0) {
        out->nsteps = req.s.nsteps;
        out->nrounds = req.s.nrounds;
        out->st = malloc((size_t)(req.s.nsteps ? req.s.nsteps : 1) * sizeof *out->st);
        out->rend = malloc((size_t)(req.s.nrounds ? req.s.nrounds : 1) * sizeof *out->rend);
        if (!out->st || !out->rend) e = HPC_ERR(HPC_ERR_NOMEM, "simulated schedule");
    }
    for (int i = 0; e == 0 && i < req.s.nsteps; i++) {
        const coll_step_t *s = &req.s.steps[i];
        sim_step_t *d = &out->st[i];
        d->kind = s->kind;
        d->peer = s->peer;
        size_t bytes = s->kind == ST_REDUCE || s->kind == ST_SCALE ? s->n * es : s->n;
        d->bytes = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
        d->red = s->kind == ST_RECV ? (uint32_t)(s->rn * es > UINT32_MAX ? UINT32_MAX : s->rn * es) : 0;
    }
    if (e == 0) memcpy(out->rend, req.s.rend, (size_t)req.s.nrounds * sizeof *out->rend);
    coll_tmp_release(&req);
    coll_sched_free(&req.s);
    return e;
}

/* ---- playing the schedules ------------------------------------------ */
typedef struct {
    double A, B, G, AI, BI;
    const int *node_of;
} sim_cost_t;

static int inbox_put(sim_inbox_t *in, int src, double t)
{
    if (in->n == in->cap) {
        int cap = in->cap ? 2 * in->cap : 8;
        sim_msg_t *m = realloc(in->m, (size_t)cap * sizeof *m);
        if (!m) return HPC_ERR(HPC_ERR_NOMEM, "simulated messages");
        in->m = m;
        in->cap = cap;
    }
    in->m[in->n++] = (sim_msg_t){src, t, 0};
    return 0;
}

/* The oldest unused message from src (-1: none yet). */
static int inbox_find(const sim_inbox_t *in, int src)
{
    /* (head moves only once a round has taken its messages for good) */
    for (int i = in->head; i < in->n; i++)
        if (!in->m[i].used && in->m[i].src == src) return i;
    return -1;
}

/* Post rank r's round (its sends leave); returns when the last is out. */
static int post(const sim_cost_t *k, const sim_sched_t *s, int r, int first, int end, double T,
                sim_inbox_t *box, double *out_done)
{
    double t = T;
    for (int i = first; i < end; i++) {
        const sim_step_t *st = &s->st[i];
        if (st->kind != ST_SEND) continue;
        int inter = k->node_of[r] != k->node_of[st->peer];
        double a = inter ? k->AI : k->A, b = inter ? k->BI : k->B;
        t += (double)st->bytes * b;
        HPC_TRY(inbox_put(&box[st->peer], r, t + a));
    }
    *out_done = t;
    return 0;
}

/* Finish rank r's posted round if all its messages are in: *t_end. */
static int finish(const sim_cost_t *k, const sim_sched_t *s, int r, int first, int end, double sent,
                  sim_inbox_t *in, double *t_end)
{
    double t = sent;
    int stack[64], ng = 0, *got = stack;
    if (end - first > 64 && !(got = malloc((size_t)(end - first) * sizeof *got))) return -1;
    for (int i = first; i < end; i++) {
        const sim_step_t *st = &s->st[i];
        if (st->kind != ST_RECV) continue;
        int m = inbox_find(in, st->peer);
        if (m < 0) {
            for (int j = 0; j < ng; j++) in->m[got[j]].used = 0;   /* not yet: undo */
            if (got != stack) free(got);
            return 0;
        }
        in->m[m].used = 1;
        got[ng++] = m;
        double arr = in->m[m].arrive + (double)st->red * k->G;
        if (arr > t) t = arr;
    }
    for (int i = first; i < end; i++) {
        const sim_step_t *st = &s->st[i];
        if (st->kind == ST_REDUCE) t += (double)st->bytes * k->G;
        else if (st->kind == ST_COPY) t += (double)st->bytes * k->B;
    }
    (void)r;
    if (got != stack) free(got);
    /* all taken (and none tentatively any more): start the inbox over */
    while (in->head < in->n && in->m[in->head].used) in->head++;
    if (in->head == in->n) in->head = in->n = 0;
    *t_end = t;
    return 1;
}

static int play(const sim_cost_t *k, sim_sched_t *s, int p, double *out)
{
    int *cur = calloc((size_t)p, sizeof *cur), *posted = calloc((size_t)p, sizeof *posted);
    double *t = calloc((size_t)p, sizeof *t), *sent = calloc((size_t)p, sizeof *sent);
    sim_inbox_t *box = calloc((size_t)p, sizeof *box);
    int rc = 0, left = p;
    if (!cur || !posted || !t || !sent || !box) rc = HPC_ERR(HPC_ERR_NOMEM, "simulating %d ranks", p);
    for (int r = 0; r < p && rc == 0; r++)
        if (s[r].nrounds == 0) left--;
    while (rc == 0 && left > 0) {
        int moved = 0;
        for (int r = 0; r < p && rc == 0; r++) {
            while (cur[r] < s[r].nrounds) {
                int first = cur[r] ? s[r].rend[cur[r] - 1] : 0, end = s[r].rend[cur[r]];
                if (!posted[r]) {
                    rc = post(k, &s[r], r, first, end, t[r], box, &sent[r]);
                    if (rc) break;
                    posted[r] = 1;
                }
                double te = 0;
                int f = finish(k, &s[r], r, first, end, sent[r], &box[r], &te);
                if (f < 0) rc = HPC_ERR(HPC_ERR_NOMEM, "simulated round");
                if (f <= 0) break;
                t[r] = te;
                posted[r] = 0;
                moved = 1;
                if (++cur[r] == s[r].nrounds) left--;
            }
        }
        if (rc == 0 && !moved) rc = HPC_ERR(HPC_ERR_STATE, "simulation: the schedules wait on each other");
    }
    double worst = 0;
    for (int r = 0; rc == 0 && r < p; r++)
        if (t[r] > worst) worst = t[r];
    for (int r = 0; box && r < p; r++) free(box[r].m);
    free(cur);
    free(posted);
    free(t);
    free(sent);
    free(box);
    if (rc == 0) *out = worst;
    return rc;
}

int hpc_coll_simulate(hpc_coll_t c, hpc_alg_t a, size_t count, hpc_dtype_t dt, int p, int nnodes,
                      double *seconds)
{
    if (p < 1 || nnodes < 1 || nnodes > p || !seconds || (unsigned)dt >= HPC_DTYPE_COUNT)
        return HPC_ERR(HPC_ERR_ARG, "simulate: bad ranks %d, nodes %d or dtype", p, nnodes);
    const coll_row_t *row = coll_row(c, a);
    if (!row) return coll_alg_missing(c, a, "simulate: ");
    if (row->backend != COLL_BE_P2P || (a == HPC_ALG_SHM && nnodes == 1))
        return HPC_ERR(HPC_ERR_ARG, "simulate: %s has no schedule of its own to play", hpc_alg_name(a));
    coll_comm_t cc;
    memset(&cc, 0, sizeof cc);
    cc.size = p;
    cc.sim = 1;
    cc.comm = MPI_COMM_NULL;
    cc.dup_req = MPI_REQUEST_NULL;
    sim_sched_t *s = calloc((size_t)p, sizeof *s);
    int rc = s ? sim_topo(&cc.topo, p, nnodes) : HPC_ERR(HPC_ERR_NOMEM, "simulating %d ranks", p);
    long total = 0;
    for (int r = 0; rc == 0 && r < p; r++) {
        rc = p == 1 ? 0 : sim_build(&cc, row, dt, count, r, &s[r]);
        coll_pool_free(&cc);                  /* (scratch: one rank's at a time) */
        total += s[r].nsteps;
        if (rc == 0 && total > SIM_MAX_STEPS)
            rc = HPC_ERR(HPC_ERR_NOMEM, "simulate: %s %s on %d ranks has more than %ld steps; "
                         "fewer ranks", hpc_coll_name(c), hpc_alg_name(a), p, SIM_MAX_STEPS);
    }
    if (rc == 0) {
        sim_cost_t k;
        coll_model_constants(&k.A, &k.B, &k.G, &k.AI, &k.BI);
        k.node_of = cc.topo.node_of;
        rc = play(&k, s, p, seconds);
    }
    for (int r = 0; s && r < p; r++) {
        free(s[r].st);
        free(s[r].rend);
    }
    free(s);
    coll_pool_free(&cc);
    coll_topo_free(&cc.topo);
    return rc;
}
