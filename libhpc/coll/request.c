/* request.c - requests in flight and their progress.
 *
 * Progress is global: waiting on one request advances every request in
 * flight, so ranks that wait for their requests in different orders cannot
 * deadlock.  A blocking collective is a request run to its end here, with
 * everything else in flight advanced alongside.  The watchdog
 * (HPC_TIMEOUT) names the operation and the peers still waited for; a
 * request stalled for HPC_COLL_STALL seconds is handed to stall_check.c.
 * Also here: letting go of a request (hpc_request_free), and streams
 * waiting for one (hpc_request_stream_wait, with devsync.c).
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static hpc_request_t *active;     /* doubly linked list */
static int nactive;

/* Waiting with nothing to do: spin (a message is microseconds away, and
 * a core given away to another program comes back a time slice later),
 * except where this job itself has more ranks on the node than cores:
 * there spinning only delays the peer we wait for, so yield to it. */
static void idle(const coll_comm_t *cc, int spins)
{
    (void)spins;
    if (cc && cc->yield) sched_yield();
}

static void list_add(hpc_request_t *r)
{
    r->prev = NULL;
    r->next = active;
    if (active) active->prev = r;
    active = r;
    nactive++;
}

static void list_del(hpc_request_t *r)
{
    if (r->prev) r->prev->next = r->next;
    else if (active == r) active = r->next;
    if (r->next) r->next->prev = r->prev;
    r->prev = r->next = NULL;
    nactive--;
}

/* Streams waiting for r may go on (also when r failed: they must not wait
 * forever; the error is the host's to report). */
static void release_streams(hpc_request_t *r)
{
    for (int i = 0; i < r->nflag; i++) coll_dev_flag_set(r->flag[i]);
    r->nflag = 0;
}

/* r failed with device work maybe still queued: let it end before its
 * scratch goes back to the pool (a rare path; it may block). */
static void quiesce(hpc_request_t *r)
{
    if (r->lstream && (r->s.fence || r->s.dev_pending)) coll_dev_stream_sync(r->lstream);
    r->s.fence = r->s.dev_pending = 0;
}

void coll_request_free(hpc_request_t *r)
{
    if (!r) return;
    release_streams(r);
    quiesce(r);
    /* a schedule that failed half-way may still have messages posted:
     * they must not land in memory freed here */
    for (int i = 0; i < r->s.nreq; i++)
        if (r->s.reqs[i] != MPI_REQUEST_NULL) {
            if (r->s.steps[r->s.reqstep[i]].kind == ST_RECV) MPI_Cancel(&r->s.reqs[i]);
            MPI_Request_free(&r->s.reqs[i]);
        }
    coll_tmp_release(r);
    coll_sched_free(&r->s);
    free(r->ext.mreqs);
    coll_dev_event_free(r->ext.event);
    coll_dev_event_free(r->ready_ev);
    coll_dev_event_free(r->fence_ev);
    free(r);
}

static int req_progress(hpc_request_t *r, int *done)
{
    int e = coll_sched_progress(r, done);
    if (e < 0) {
        *done = 1;
        return e;
    }
    return 0;
}

/* The host of rank peer of comm, as " on HOST" ("" where unknown: no
 * hpc_init, the drop-in): a peer on a lost node is named with its node. */
static const char *peer_host(MPI_Comm comm, int peer, char *buf, size_t len)
{
    MPI_Group g, wg;
    int w = MPI_UNDEFINED;
    buf[0] = 0;
    if (MPI_Comm_group(comm, &g) != MPI_SUCCESS) return buf;
    if (MPI_Comm_group(MPI_COMM_WORLD, &wg) == MPI_SUCCESS) {
        MPI_Group_translate_ranks(g, 1, &peer, wg, &w);
        MPI_Group_free(&wg);
    }
    MPI_Group_free(&g);
    const char *h = w == MPI_UNDEFINED ? "" : hpc_rank_host(w);
    if (*h) snprintf(buf, len, " on %s", h);
    return buf;
}

/* Watchdog: name the operation, its sequence number and the peers whose
 * messages of the current round have not arrived (or not been taken),
 * with their hosts. */
static void watchdog_fire(hpc_request_t *r, double waited)
{
    char peers[512] = "";
    size_t len = 0;
    coll_sched_t *s = &r->s;
    int any = 0;
    for (int i = 0; i < s->nreq && len < sizeof peers - 16; i++) {
        int flag = 0;
        if (s->reqs[i] != MPI_REQUEST_NULL)
            MPI_Request_get_status(s->reqs[i], &flag, MPI_STATUS_IGNORE);
        else
            flag = 1;
        if (!flag) {
            const coll_step_t *st = &s->steps[s->reqstep[i]];
            char host[80];
            len += (size_t)snprintf(peers + len, sizeof peers - len, "%s%d (%s%s)", any ? ", " : "",
                                    st->peer, st->kind == ST_RECV ? "recv" : "send",
                                    peer_host(r->cc->comm, st->peer, host, sizeof host));
            any = 1;
        }
    }
    /* an external step that can say what it waits for (shared memory) */
    coll_ext_t *x = r->ext.describe ? &r->ext : NULL;
    int first = s->cur && s->cur <= s->nrounds ? s->rend[s->cur - 1] : 0;
    int end = s->cur < s->nrounds ? s->rend[s->cur] : first;
    for (int i = first; i < end; i++)
        if (s->steps[i].kind == ST_EXT && coll_step_ext(r, &s->steps[i])->describe) x = coll_step_ext(r, &s->steps[i]);
    if (!any && x)
        x->describe(r, x, peers, sizeof peers);
    else if (!any)
        snprintf(peers, sizeof peers, "%s",
                 r->alg == HPC_ALG_NATIVE ? "unknown (inside the MPI library's collective)" :
                 r->alg == HPC_ALG_NCCL ? "unknown (inside NCCL)" : "none pending (local step)");
    fprintf(stderr, "hpc: rank %d: watchdog (HPC_TIMEOUT=%g s): %s #%llu (alg %s, count %zu, %s%s%s) "
            "not finished after %.1f s, round %d of %d; still waiting for rank(s) %s\n",
            r->cc->rank, hpc_coll_timeout(), hpc_coll_name(r->coll), (unsigned long long)r->seq,
            hpc_alg_name(r->alg), r->count, hpc_dtype_name(r->dt),
            hpc_coll_reduces(r->coll) ? ", " : "", hpc_coll_reduces(r->coll) ? hpc_op_name(r->op) : "",
            waited, s->cur + 1, s->nrounds, peers);
    coll_abort_all();
    hpc_abort(1);
}

/* A request completed: off the list, its scratch back to the pool at once
 * (so nothing of it touches its communicator after this); one the caller
 * has let go of (hpc_request_free) is freed now, its error told in the
 * log since no one will ask for it. */
static void finish(hpc_request_t *q, int err)
{
    q->err = err;
    q->completed = 1;
    list_del(q);
    if (err < 0) quiesce(q);
    release_streams(q);
    coll_tmp_release(q);
    if (!q->detached) return;
    if (err < 0)
        hpc_warn("a freed request (%s #%llu) failed: %s", hpc_coll_name(q->coll),
                 (unsigned long long)q->seq, hpc_last_error());
    coll_request_free(q);
}

/* r is not done at time now: the watchdog, and a look for a mismatch
 * (stall_check.c) once it has completed no round for HPC_COLL_STALL seconds
 * - then every quarter of that while the stall lasts. */
static void waiting(hpc_request_t *r, double now)
{
    const coll_settings_t *st = coll_settings();
    if (st->timeout > 0 && now - r->t0 > st->timeout) watchdog_fire(r, now - r->t0);
    if (r->s.cur != r->stall_round) {
        r->stall_round = r->s.cur;
        r->t_round = now;
        return;
    }
    if (st->stall <= 0 || now - r->t_round < st->stall || now < r->t_check) return;
    r->t_check = now + st->stall / 4;
    coll_mismatch_check(r, now);
}

static unsigned long passes;     /* progress_all's, for the drop-in's summary */

unsigned long hpc_coll_passes(void)
{
    return passes;
}

/* Advance every request in flight once.  Errors stay with their request. */
static void progress_all(void)
{
    passes++;
    double now = coll_now();
    for (hpc_request_t *q = active, *nx; q; q = nx) {
        nx = q->next;
        int done = 0;
        int e = req_progress(q, &done);
        if (done) finish(q, e);
        else waiting(q, now);
    }
    /* frees kept back while a stream-wait kernel ran (device.c) */
    coll_dev_free_deferred();
}

/* cc is being freed: complete its requests first - freed ones are the
 * library's to finish, and the others must not touch cc afterwards (their
 * scratch goes back to the pool now). */
static void drain(coll_comm_t *cc)
{
    for (;;) {
        int left = 0;
        for (hpc_request_t *q = active; q; q = q->next) left += q->cc == cc;
        if (!left) break;
        progress_all();
    }
}


int coll_requests_in_flight(void)
{
    return nactive;
}

/* A blocking call that runs without a schedule (alg/shm.c's small calls)
 * waits: what else is in flight advances (MPI's progress rule: a blocking
 * call must not hold up the nonblocking ones its peers wait for), the
 * core goes to a peer where the node is oversubscribed, and the watchdog
 * and the stall check look at r as at any request. */
void coll_request_wait_tick(hpc_request_t *r, int spins)
{
    if (active) progress_all();
    idle(r->cc, spins);
    if ((spins & 63) == 0) waiting(r, coll_now());
}

/* Run r: to its end (blocking; r is freed) or post its first round and
 * return it as a request in flight (*out). */
int coll_request_run(hpc_request_t *r, int blocking, hpc_request_t **out)
{
    int e = 0;
    if (blocking) {
        /* progress this one and everything else in flight until it is done */
        int spins = 0;
        for (;;) {
            int done = 0, cur = r->s.cur;
            e = req_progress(r, &done);
            /* the others advance at least once per call, freed ones too */
            if (active) progress_all();
            if (done) break;
            spins = r->s.cur == cur ? spins + 1 : 0;
            idle(r->cc, spins);
            waiting(r, coll_now());
        }
        coll_request_free(r);
        if (e < 0) return hpc_error_push(e, __FILE__, __LINE__, __func__);
        return 0;
    }
    /* nonblocking: post the first round now so the transfer starts */
    int done = 0;
    e = req_progress(r, &done);
    list_add(r);
    r->cc->hook[COLL_HOOK_REQUESTS].fini = drain;
    if (done) finish(r, e);
    /* stream-ordered NCCL: on the caller's stream before we return, else
     * work the caller queues next would run first (the first call on a
     * communicator sets NCCL up; that is waited for here, in our loop) */
    while (r->streamed && r->alg == HPC_ALG_NCCL && !r->enqueued && !r->completed) {
        progress_all();
        if (!r->completed) waiting(r, coll_now());
    }
    *out = r;
    return 0;
}

int hpc_coll_progress(void)
{
    progress_all();
    return 0;
}

int hpc_test(hpc_request_t **req, int *done)
{
    if (req && *req) progress_all();
    return hpc_test_done(req, done);
}

int hpc_test_done(hpc_request_t **req, int *done)
{
    if (!req || !done) return HPC_ERR(HPC_ERR_ARG, "NULL request or flag");
    *done = 0;
    hpc_request_t *r = *req;
    if (!r) {
        *done = 1;
        return 0;
    }
    if (!r->completed) return 0;
    int e = r->err;
    coll_request_free(r);
    *req = NULL;
    *done = 1;
    if (e < 0) return hpc_error_push(e, __FILE__, __LINE__, __func__);
    return 0;
}

int hpc_wait(hpc_request_t **req)
{
    if (!req) return HPC_ERR(HPC_ERR_ARG, "NULL request");
    int done = 0, spins = 0;
    coll_comm_t *cc = *req ? (*req)->cc : NULL;
    while (*req) {
        int e = hpc_test(req, &done);
        if (e < 0) return e;
        if (!done) idle(cc, ++spins);
    }
    return 0;
}

int hpc_request_stream_wait(hpc_request_t *req, hpc_stream_t stream)
{
    if (!req) return HPC_ERR(HPC_ERR_ARG, "NULL request");
    /* done: so is its device work; no GPU: no stream holds work */
    if (req->completed || coll_dev_count() == 0) return 0;
    if (req->enqueued) return coll_dev_stream_wait_event(stream, req->ext.event);
    /* progressed by the host: a kernel waits for a flag set at completion
     * - but not on the legacy default stream, where it would hold up our
     * own (blocking) stream and so the request: there, and when no flag
     * is free, the host waits */
    if (stream && req->nflag < (int)(sizeof req->flag / sizeof req->flag[0])) {
        int slot;
        if (coll_dev_flag_wait(stream, &slot) == 0) {
            req->flag[req->nflag++] = slot;
            return 0;
        }
        hpc_error_clear();
    }
    while (!req->completed) {
        progress_all();
        if (!req->completed) waiting(req, coll_now());
    }
    return 0;
}

int hpc_request_free(hpc_request_t **req)
{
    if (!req) return HPC_ERR(HPC_ERR_ARG, "NULL request pointer");
    hpc_request_t *r = *req;
    *req = NULL;
    if (!r) return 0;
    r->detached = 1;
    /* done already (it is off the list): free it now; as for one that
     * completes later, its error is for the log, not the caller */
    if (r->completed) {
        if (r->err < 0) hpc_warn("a freed request (%s #%llu) had failed", hpc_coll_name(r->coll),
                                 (unsigned long long)r->seq);
        coll_request_free(r);
    }
    return 0;
}

int hpc_waitall(int n, hpc_request_t **reqs)
{
    int first = 0;
    for (int i = 0; i < n; i++) {
        int e = hpc_wait(&reqs[i]);
        if (e < 0 && !first) first = e;
    }
    return first;
}

