/* stall_check.c - ranks that run one call with different algorithms, or
 * whose calls are out of step: one clear line instead of a hang, without
 * HPC_DEBUG and at no cost while collectives make progress.
 *
 * How it happens: auto chooses by memory kind (device buffers go to NCCL,
 * host buffers to an own algorithm or MPI's), so a rank that passes host
 * memory where the others pass device memory runs another algorithm and
 * every rank waits forever; so do ranks whose HPC_COLL_<OP> or tuning
 * files differ.  And ranks whose calls are out of step - one rank made a
 * call the others did not (a wrapper that served a call on some ranks
 * and let MPI serve it on others, a call skipped by one rank) - run their
 * call number N as different calls, which waits the same way.
 *
 * How it is seen:
 *  - the algorithm is part of every message's tag (coll_tag), so the
 *    messages of ranks that disagree never match: they wait in MPI's
 *    queue, where a probe finds them;
 *  - a request that has completed no round for HPC_COLL_STALL seconds
 *    (default 1; request.c decides) is checked here, and again every
 *    quarter of that while it stays stalled:
 *    1. once, it sends a beacon (call number, the call, algorithm, memory
 *       kind) to
 *       the ranks its current round waits on and to its ring neighbours
 *       (NCCL and MPI's collectives have no known peers: neighbours only);
 *    2. it reads the beacons that came to it;
 *    3. it probes for messages of its call number under another
 *       algorithm's tag.
 *    A beacon of the same call number naming another call says the calls
 *    are out of step; one naming the same call under another algorithm,
 *    or a message of the same call number under another algorithm's tag,
 *    is a mismatch (a message alone cannot tell which: its line says both
 *    unless a beacon tells).  Why one side always sees it: if every rank is stalled,
 *    some two ring neighbours differ and one reads the other's beacon; a
 *    rank that got through its part without the others either sent its
 *    messages (they wait, under the wrong tag, at a rank that probes) or
 *    a rank waiting for it beacons it.
 * Beacons are taken in only there - and every 64th call, so that a rank
 * which is never stalled (the slow one its peers wait for) does not
 * gather them in MPI's queue all run long.
 * One line is printed: of the ranks that see it, rank k speaks only after
 * 2k seconds (16 at most), by which time a lower rank that saw it too has
 * ended the job.
 *
 * What it cannot see: a rank blocked inside MPI's own blocking collective
 * reads nothing - so where NCCL is built in, native calls that auto chose
 * run nonblocking under our progress (build.c).
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t seq, count;
    int32_t alg, dev, coll, from, dt, op, root, pad;
} beacon_t;

/* tag = (seq mod M) * HPC_ALG_COUNT + alg below tag_ub; tag_ub: beacons */
int coll_tag(const coll_comm_t *cc, uint64_t seq, hpc_alg_t alg)
{
    uint64_t m = (uint64_t)cc->tag_ub / HPC_ALG_COUNT;
    return (int)((seq % m) * HPC_ALG_COUNT + (uint64_t)alg);
}

static int beacon_tag(const coll_comm_t *cc)
{
    return cc->tag_ub;
}

/* Beacons sent: each its own buffer, kept until MPI is done with it. */
struct coll_beacon_out {
    struct coll_beacon_out *next;
    MPI_Request req;
    beacon_t msg;
};

/* Free those MPI is done with (all: at the communicator's end, where one
 * never taken is left to MPI - a few bytes - rather than freed under it). */
static void beacons_reap(coll_comm_t *cc, int all)
{
    for (coll_beacon_out_t **q = &cc->bout; *q;) {
        coll_beacon_out_t *o = *q;
        int flag = 0;
        MPI_Test(&o->req, &flag, MPI_STATUS_IGNORE);
        if (!flag && !all) {
            q = &o->next;
            continue;
        }
        *q = o->next;
        if (flag) free(o);
        else MPI_Request_free(&o->req);
    }
}

static void beacons_fini(coll_comm_t *cc)
{
    beacons_reap(cc, 1);
}

static int beacon_send(coll_comm_t *cc, const beacon_t *b, int to)
{
    beacons_reap(cc, 0);
    coll_beacon_out_t *o = malloc(sizeof *o);
    if (!o) return HPC_ERR(HPC_ERR_NOMEM, "beacon");
    o->msg = *b;
    int e = MPI_Isend(&o->msg, (int)sizeof o->msg, MPI_BYTE, to, beacon_tag(cc), cc->comm, &o->req);
    if (e != MPI_SUCCESS) {
        free(o);
        return hpc_error_mpi(e, __FILE__, __LINE__, "MPI_Isend (beacon)");
    }
    o->next = cc->bout;
    cc->bout = o;
    cc->hook[COLL_HOOK_BEACONS].fini = beacons_fini;
    return 0;
}

/* The ranks r waits on in its current round, and its ring neighbours. */
static int peers_of(const hpc_request_t *r, int *out, int max)
{
    const coll_comm_t *cc = r->cc;
    const coll_sched_t *s = &r->s;
    int n = 0;
    int cand[2] = {(cc->rank + 1) % cc->size, (cc->rank + cc->size - 1) % cc->size};
    for (int i = 0; i < 2 + s->nreq && n < max; i++) {
        int peer;
        if (i < 2) {
            peer = cand[i];
        } else {
            if (s->reqs[i - 2] == MPI_REQUEST_NULL) continue;
            peer = s->steps[s->reqstep[i - 2]].peer;
        }
        int seen = peer == cc->rank;
        for (int k = 0; k < n && !seen; k++) seen = out[k] == peer;
        if (!seen) out[n++] = peer;
    }
    return n;
}

static void beacon_out(hpc_request_t *r)
{
    int peers[64];
    int n = peers_of(r, peers, 64);
    beacon_t b = {.seq = r->seq, .count = r->count, .alg = r->alg, .dev = r->dev, .coll = r->coll,
                  .from = r->cc->rank, .dt = r->dt, .op = r->op, .root = r->root};
    for (int i = 0; i < n; i++)
        if (beacon_send(r->cc, &b, peers[i]) < 0) hpc_error_clear();   /* only a hint */
}

/* Beacons that came in, kept (the latest few) for every stalled request. */
static void beacons_in(coll_comm_t *cc)
{
    for (;;) {
        int flag = 0;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, beacon_tag(cc), cc->comm, &flag, &st) != MPI_SUCCESS || !flag) return;
        beacon_t b;
        MPI_Recv(&b, (int)sizeof b, MPI_BYTE, st.MPI_SOURCE, beacon_tag(cc), cc->comm, MPI_STATUS_IGNORE);
        b.from = st.MPI_SOURCE;
        memcpy(cc->bin[cc->nbin++ % COLL_BEACONS_KEPT], &b, sizeof b);
        _Static_assert(sizeof b <= sizeof cc->bin[0], "beacon size");
    }
}

/* What a stalled request learns of a rank that disagrees with it. */
typedef enum { EV_NONE, EV_ALG, EV_STEP, EV_MSG } ev_kind_t;
typedef struct {
    ev_kind_t kind;
    int peer, dev;          /* dev: its memory kind, -1 unknown */
    hpc_alg_t alg;
    beacon_t b;             /* EV_STEP, EV_ALG: the peer's beacon */
} evidence_t;

/* "allgather(count=12 int64)" */
static void call_str(char *buf, size_t n, int coll, uint64_t count, int dt, int op, int root)
{
    hpc_coll_t c = (hpc_coll_t)coll;
    char extra[48] = "";
    if (hpc_coll_reduces(c)) snprintf(extra, sizeof extra, " %s", hpc_op_name((hpc_op_t)op));
    if (coll_rooted(c)) snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ", root %d", root);
    if (c == HPC_COLL_BARRIER) snprintf(buf, n, "barrier");
    else snprintf(buf, n, "%s(count=%llu %s%s)", hpc_coll_name(c), (unsigned long long)count,
                  hpc_dtype_name((hpc_dtype_t)dt), extra);
}

static void report(hpc_request_t *r, const evidence_t *ev)
{
    int me = r->cc->rank;
    const char *cn = hpc_coll_name(r->coll);
    unsigned long long seq = (unsigned long long)r->seq;
    if (ev->kind == EV_STEP) {
        char mine[96], theirs[96];
        call_str(mine, sizeof mine, r->coll, r->count, r->dt, r->op, r->root);
        call_str(theirs, sizeof theirs, ev->b.coll, ev->b.count, ev->b.dt, ev->b.op, ev->b.root);
        fprintf(stderr,
                "hpc: rank %d: %s #%llu: calls out of step: this rank's call #%llu on this communicator is "
                "%s, rank %d's is %s; the ranks have made different calls on it (a call made on some "
                "ranks only, or calls in another order)\n",
                me, cn, seq, seq, mine, ev->peer, theirs);
    } else {
        char kind[32] = "";
        if (ev->dev >= 0) snprintf(kind, sizeof kind, " (%s memory)", ev->dev ? "device" : "host");
        fprintf(stderr,
                "hpc: rank %d: %s #%llu: ranks run different algorithms for one call%s: this rank '%s' "
                "(%s memory), rank %d '%s'%s; auto chooses by memory kind, so pass host or device "
                "buffers alike on every rank (and the same algorithm, HPC_COLL_<OP> and tuning file)%s\n",
                me, cn, seq, ev->kind == EV_MSG ? ", or their calls are out of step" : "",
                hpc_alg_name(r->alg), r->dev ? "device" : "host", ev->peer, hpc_alg_name(ev->alg), kind,
                ev->kind == EV_MSG ? "; or make the same calls in the same order on every rank" : "");
    }
    fflush(stderr);
    coll_abort_all();
    hpc_abort(1);
}

/* The same call number as r, but another call (operation or arguments). */
static int other_call(const hpc_request_t *r, const beacon_t *b)
{
    return b->coll != (int32_t)r->coll || b->count != r->count || b->dt != (int32_t)r->dt ||
           (hpc_coll_reduces(r->coll) && b->op != (int32_t)r->op) ||
           (coll_rooted(r->coll) && b->root != r->root);
}

/* What a stalled r learns: beacons first (they tell out of step from
 * another algorithm), then messages under other algorithms' tags. */
static int evidence(hpc_request_t *r, evidence_t *ev)
{
    coll_comm_t *cc = r->cc;
    beacons_in(cc);
    int kept = cc->nbin < COLL_BEACONS_KEPT ? cc->nbin : COLL_BEACONS_KEPT;
    ev->kind = EV_NONE;
    for (int i = 0; i < kept && ev->kind != EV_STEP; i++) {
        beacon_t b;
        memcpy(&b, cc->bin[i], sizeof b);
        if (b.seq != r->seq) continue;
        if (other_call(r, &b)) *ev = (evidence_t){.kind = EV_STEP, .peer = b.from, .dev = b.dev, .b = b};
        else if (b.alg != (int32_t)r->alg)
            *ev = (evidence_t){.kind = EV_ALG, .peer = b.from, .alg = (hpc_alg_t)b.alg, .dev = b.dev, .b = b};
    }
    if (ev->kind != EV_NONE) return 1;
    for (int a = 0; a < HPC_ALG_COUNT; a++) {
        int flag = 0;
        MPI_Status st;
        if (a == (int)r->alg) continue;
        if (MPI_Iprobe(MPI_ANY_SOURCE, coll_tag(cc, r->seq, (hpc_alg_t)a), cc->comm, &flag, &st) == MPI_SUCCESS &&
            flag) {
            *ev = (evidence_t){.kind = EV_MSG, .peer = st.MPI_SOURCE, .alg = (hpc_alg_t)a, .dev = -1};
            return 1;
        }
    }
    return 0;
}

/* Every 64th call on cc: a rank that is never stalled itself (the slow
 * one its peers wait for) would otherwise collect beacons in MPI's queue
 * for the whole run. */
void coll_mismatch_tick(coll_comm_t *cc)
{
    if (cc->size > 1 && cc->bout_seen != cc->seq / 64) {
        cc->bout_seen = cc->seq / 64;
        beacons_in(cc);
    }
}

void coll_mismatch_check(hpc_request_t *r, double now)
{
    if (r->cc->size < 2) return;
    if (!r->beaconed) {
        r->beaconed = 1;
        beacon_out(r);
    }
    evidence_t ev;
    if (!evidence(r, &ev)) return;
    /* several ranks may see it: rank k speaks 2k s (at most 16 s) after
     * it did, so a lower rank that saw it too has ended the job before;
     * a message alone waits a second more for a beacon that tells out of
     * step from another algorithm (the peer, stalled too, sends one) */
    if (r->mismatch_t == 0) r->mismatch_t = now;
    int k = r->cc->rank < 8 ? r->cc->rank : 8;
    if (now - r->mismatch_t < 2.0 * k + (ev.kind == EV_MSG ? 1.0 : 0.0)) return;
    report(r, &ev);
}
