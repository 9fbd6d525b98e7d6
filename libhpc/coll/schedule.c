/* schedule.c - schedules: building them and running them round by round.
 *
 * A round posts all of its receives, then its sends (receives first so a
 * rendezvous send finds its match at once), then its external operation,
 * and when every one has completed runs the round's local steps in the
 * order they were added.  Progress never blocks: a blocking collective is
 * a loop over coll_sched_progress().  Device work a round queues (kernels,
 * copies) is not waited for either: an event after it is polled before
 * the next round's messages go out.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

#include <stdlib.h>
#include <string.h>

void coll_sched_init(coll_sched_t *s)
{
    memset(s, 0, sizeof *s);
}

void coll_sched_free(coll_sched_t *s)
{
    free(s->steps);
    free(s->rend);
    free(s->reqs);
    free(s->reqstep);
    free(s->idx);
    memset(s, 0, sizeof *s);
}

static int add_step(coll_sched_t *s, const coll_step_t *st)
{
    if (s->nsteps == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        coll_step_t *n = realloc(s->steps, (size_t)cap * sizeof *n);
        if (!n) return HPC_ERR(HPC_ERR_NOMEM, "schedule of %d steps", cap);
        s->steps = n;
        s->cap = cap;
    }
    s->steps[s->nsteps++] = *st;
    return 0;
}

int coll_round(coll_sched_t *s)
{
    int first = s->nrounds ? s->rend[s->nrounds - 1] : 0;
    if (s->nsteps == first) return 0;     /* empty rounds are dropped */
    if (s->nrounds == s->rcap) {
        int cap = s->rcap ? 2 * s->rcap : 8;
        int *n = realloc(s->rend, (size_t)cap * sizeof *n);
        if (!n) return HPC_ERR(HPC_ERR_NOMEM, "schedule of %d rounds", cap);
        s->rend = n;
        s->rcap = cap;
    }
    s->rend[s->nrounds++] = s->nsteps;
    return 0;
}

/* Bytes one message may carry: MPI counts are ints, so a step of 2 GiB
 * or more goes as several messages (1 GiB by default; the tests lower
 * it).  Sender and receiver cut a step at the same whole-element
 * boundaries, and MPI keeps messages between two ranks with one tag in
 * order, so the pieces match one to one. */
size_t coll_max_message = (size_t)1 << 30;
long coll_pieces;               /* extra messages made by cutting (tests) */

static size_t piece(const coll_build_t *b)
{
    size_t es = b->es ? b->es : 1, m = coll_max_message / es * es;
    return m ? m : es;
}

/* A point-to-point step of bytes at buf, cut into pieces; recv-reduce
 * steps reduce each piece as it arrives (dst and x advance with it). */
static int p2p(coll_build_t *b, int kind, int peer, const char *buf, size_t bytes, char *dst,
               const char *x)
{
    size_t m = piece(b), es = b->es ? b->es : 1;
    for (size_t off = 0; off < bytes; off += m) {
        size_t len = bytes - off < m ? bytes - off : m;
        coll_step_t st = {.kind = kind, .peer = b->map ? b->map[peer] : peer, .n = len};
        if (kind == ST_SEND) st.a = buf + off;
        else st.dst = (char *)buf + off;
        if (dst) {
            st.dev = b->dev;
            st.rdst = dst + off;
            st.ra = x + off;
            st.rn = len / es;
        }
        HPC_TRY(add_step(b->s, &st));
        if (off) coll_pieces++;
    }
    return 0;
}

int coll_send(coll_build_t *b, int peer, const void *buf, size_t bytes)
{
    if (bytes == 0 || peer == b->rank) return 0;
    return p2p(b, ST_SEND, peer, buf, bytes, NULL, NULL);
}

int coll_recv(coll_build_t *b, int peer, void *buf, size_t bytes)
{
    if (bytes == 0 || peer == b->rank) return 0;
    return p2p(b, ST_RECV, peer, buf, bytes, NULL, NULL);
}

int coll_recv_reduce(coll_build_t *b, int peer, void *buf, size_t n, void *dst, const void *x)
{
    if (n == 0 || peer == b->rank) return 0;
    return p2p(b, ST_RECV, peer, buf, n * b->es, dst, x);
}

int coll_reduce(coll_build_t *b, void *dst, const void *x, const void *y, size_t n)
{
    if (n == 0) return 0;
    coll_step_t st = {.kind = ST_REDUCE, .n = n, .dst = dst, .a = x, .b = y, .dev = b->dev};
    return add_step(b->s, &st);
}

int coll_copy_k(coll_sched_t *s, void *dst, const void *src, size_t bytes, int dev)
{
    if (bytes == 0 || dst == src) return 0;
    coll_step_t st = {.kind = ST_COPY, .n = bytes, .dst = dst, .a = src, .dev = dev};
    return add_step(s, &st);
}

int coll_copy(coll_build_t *b, void *dst, const void *src, size_t bytes)
{
    return coll_copy_k(b->s, dst, src, bytes, b->dev);
}

int coll_scale(coll_sched_t *s, void *buf, size_t n, int div, int dev)
{
    if (n == 0 || div == 1) return 0;
    coll_step_t st = {.kind = ST_SCALE, .n = n, .dst = buf, .div = div, .dev = dev};
    return add_step(s, &st);
}

int coll_ext_step(coll_sched_t *s)
{
    return coll_ext_step_x(s, NULL);
}

int coll_ext_step_x(coll_sched_t *s, coll_ext_t *x)
{
    coll_step_t st = {.kind = ST_EXT, .x = x};
    return add_step(s, &st);
}

coll_ext_t *coll_step_ext(hpc_request_t *r, const coll_step_t *st)
{
    return st->x ? st->x : &r->ext;
}

static int grow_reqs(coll_sched_t *s, int n)
{
    if (n <= s->reqcap) return 0;
    MPI_Request *q = realloc(s->reqs, (size_t)n * sizeof *q);
    if (!q) return HPC_ERR(HPC_ERR_NOMEM, "%d requests", n);
    s->reqs = q;
    int *rs = realloc(s->reqstep, (size_t)n * sizeof *rs);
    if (!rs) return HPC_ERR(HPC_ERR_NOMEM, "%d requests", n);
    s->reqstep = rs;
    int *ix = realloc(s->idx, (size_t)n * sizeof *ix);
    if (!ix) return HPC_ERR(HPC_ERR_NOMEM, "%d requests", n);
    s->idx = ix;
    s->reqcap = n;
    return 0;
}

static int post_round(hpc_request_t *r, int first, int end)
{
    coll_sched_t *s = &r->s;
    MPI_Comm comm = r->cc->comm;
    HPC_TRY(grow_reqs(s, end - first));
    s->nreq = 0;
    s->arrival = 0;
    for (int i = first; i < end; i++)
        if (s->steps[i].kind == ST_RECV && s->steps[i].rn) s->arrival = 1;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = first; i < end; i++) {
            coll_step_t *st = &s->steps[i];
            if (pass == 0 && st->kind == ST_RECV) {
                HPC_MPI(MPI_Irecv(st->dst, (int)st->n, MPI_BYTE, st->peer, r->tag, comm,
                                  &s->reqs[s->nreq]));
                s->reqstep[s->nreq++] = i;
            } else if (pass == 1 && st->kind == ST_SEND) {
                HPC_MPI(MPI_Isend(st->a, (int)st->n, MPI_BYTE, st->peer, r->tag, comm,
                                  &s->reqs[s->nreq]));
                s->reqstep[s->nreq++] = i;
            } else if (pass == 1 && st->kind == ST_EXT) {
                coll_ext_t *x = coll_step_ext(r, st);
                x->done = 0;
                HPC_TRY(x->post(r, x));
            }
        }
    }
    s->nleft = s->nreq;
    return 0;
}

/* The stream r's device steps run on, created on first use. */
static int local_stream(hpc_request_t *r, void **out)
{
    if (!r->lstream) HPC_TRY(coll_dev_stream(r->cc, r->streamed, &r->lstream));
    *out = r->lstream;
    return 0;
}

static int reduce_step(hpc_request_t *r, const coll_step_t *st)
{
    hpc_op_t op = r->op == HPC_AVG ? HPC_SUM : r->op;
    if (st->dev) {
        void *stream = NULL;
        HPC_TRY(local_stream(r, &stream));
        HPC_TRY(coll_dev_reduce(stream, r->dt, op, st->rdst, st->ra, st->dst, st->rn));
        r->s.dev_pending = 1;
    } else {
        coll_reduce_host(r->dt, op, st->rdst, st->ra, st->dst, st->rn);
    }
    return 0;
}

/* A round with reductions on arrival: take messages as they complete and
 * reduce each at once.  1 when all of the round's messages are in. */
static int arrivals(hpc_request_t *r, int *all)
{
    coll_sched_t *s = &r->s;
    *all = 0;
    while (s->nleft > 0) {
        int out = 0;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
        HPC_MPI(MPI_Testsome(s->nreq, s->reqs, &out, s->idx, MPI_STATUSES_IGNORE));
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
        if (out == MPI_UNDEFINED) {
            s->nleft = 0;
            break;
        }
        if (out == 0) break;
        for (int k = 0; k < out; k++) {
            const coll_step_t *st = &s->steps[s->reqstep[s->idx[k]]];
            if (st->kind == ST_RECV && st->rn) HPC_TRY(reduce_step(r, st));
        }
        s->nleft -= out;
    }
    *all = s->nleft == 0;
    return 0;
}

static int run_locals(hpc_request_t *r, int first, int end)
{
    coll_sched_t *s = &r->s;
    hpc_op_t op = r->op == HPC_AVG ? HPC_SUM : r->op;
    for (int i = first; i < end; i++) {
        coll_step_t *st = &s->steps[i];
        void *stream = NULL;
        if (st->dev && (st->kind == ST_REDUCE || st->kind == ST_COPY || st->kind == ST_SCALE)) {
            HPC_TRY(local_stream(r, &stream));
            s->dev_pending = 1;
        }
        switch (st->kind) {
        case ST_REDUCE:
            if (st->dev) HPC_TRY(coll_dev_reduce(stream, r->dt, op, st->dst, st->a, st->b, st->n));
            else coll_reduce_host(r->dt, op, st->dst, st->a, st->b, st->n);
            break;
        case ST_COPY:
            if (st->dev) HPC_TRY(coll_dev_copy(stream, st->dst, st->a, st->n));
            else memmove(st->dst, st->a, st->n);
            break;
        case ST_SCALE:
            if (st->dev) HPC_TRY(coll_dev_scale(stream, r->dt, st->dst, st->n, st->div));
            else coll_scale_host(r->dt, st->dst, st->n, st->div);
            break;
        default:
            break;
        }
    }
    return 0;
}

/* Before round cur's messages go out: the input of a stream-ordered call
 * is ready (its gate), and what the GPU was given in the rounds before is
 * done - the next messages read it.  Both polled, never waited for. */
static int device_ready(hpc_request_t *r, int first, int end, int *ready)
{
    coll_sched_t *s = &r->s;
    *ready = 1;
    if (s->fence) {
        int done = 0;
        HPC_TRY(coll_dev_event_done(r->fence_ev, &done));
        if (!done) return *ready = 0;
        s->fence = 0;
    }
    for (int i = first; i < end; i++)
        if (s->steps[i].kind == ST_GATE && r->ready_ev) {
            int done = 0;
            HPC_TRY(coll_dev_event_done(r->ready_ev, &done));
            if (!done) return *ready = 0;
        }
    return 0;
}

int coll_gate_step(coll_sched_t *s)
{
    coll_step_t st = {.kind = ST_GATE};
    return add_step(s, &st);
}

int coll_sched_progress(hpc_request_t *r, int *done)
{
    coll_sched_t *s = &r->s;
    *done = 0;
    while (s->cur < s->nrounds) {
        int first = s->cur ? s->rend[s->cur - 1] : 0, end = s->rend[s->cur];
        int has_ext = 0;
        for (int i = first; i < end; i++)
            if (s->steps[i].kind == ST_EXT) has_ext = 1;
        if (!s->posted) {
            int ready = 0;
            HPC_TRY(device_ready(r, first, end, &ready));
            if (!ready) return 0;
            HPC_TRY(post_round(r, first, end));
            s->posted = 1;
        }
        if (s->nreq && s->arrival) {
            int all = 0;
            HPC_TRY(arrivals(r, &all));
            if (!all) return 0;
            s->nreq = 0;
        } else if (s->nreq) {
            int flag = 0;
            /* GCC 12 misreads MPICH's MPI_STATUSES_IGNORE as a 0-size array */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
            HPC_MPI(MPI_Testall(s->nreq, s->reqs, &flag, MPI_STATUSES_IGNORE));
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
            if (!flag) return 0;
            s->nreq = 0;
        }
        if (has_ext) {
            int all = 1;
            for (int i = first; i < end; i++) {
                coll_ext_t *x = s->steps[i].kind == ST_EXT ? coll_step_ext(r, &s->steps[i]) : NULL;
                if (!x || x->done) continue;
                HPC_TRY(x->test(r, x, &x->done));
                all &= x->done;
            }
            if (!all) return 0;
        }
        HPC_TRY(run_locals(r, first, end));
        /* the round's device work (reductions on arrival, local steps)
         * is queued: one event marks its end, polled before the next
         * round's messages and before the request counts as done */
        if (s->dev_pending) {
            HPC_TRY(coll_dev_event_record(r->lstream, &r->fence_ev));
            s->dev_pending = 0;
            s->fence = 1;
        }
        s->cur++;
        s->posted = 0;
    }
    if (s->fence) {
        int ready = 0;
        HPC_TRY(device_ready(r, 0, 0, &ready));
        if (!ready) return 0;
    }
    *done = 1;
    return 0;
}
