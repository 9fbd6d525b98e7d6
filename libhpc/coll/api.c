/* api.c - the collectives API: argument checks, per-communicator state,
 * algorithm choice, the desync check and watchdog, and requests.
 *
 * Every call goes the same way: check arguments, find the communicator's
 * private state (a duplicate of the user's comm and a sequence number),
 * resolve the algorithm, build a schedule (sched.c) from the
 * algorithm's builder (alg/), the native MPI call (native.c) or
 * NCCL (nccl.c), then either run it to the end (blocking) or return it
 * as a request that hpc_test()/hpc_wait() advance.  Progress is global:
 * waiting on one request advances every request in flight, so ranks that
 * wait for their requests in different orders cannot deadlock.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sched.h>
#include <unistd.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>      /* MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support */
#endif

/* ------------------------------------------------------------------ */
/* Names                                                                */
/* ------------------------------------------------------------------ */
static const char *const dtype_names[HPC_DTYPE_COUNT] = {
    "int32", "int64", "float32", "float64", "float16", "bfloat16"};
static const char *const op_names[HPC_OP_COUNT] = {"sum", "prod", "min", "max", "avg"};
static const char *const alg_names[HPC_ALG_COUNT] = {
    "auto", "native", "nccl", "linear", "tree", "ring", "butterfly",
    "rabenseifner", "bruck", "scatter_allgather"};
static const char *const coll_names[HPC_COLL_COUNT] = {
    "barrier", "bcast", "reduce", "allreduce", "gather", "allgather",
    "scatter", "reduce_scatter", "alltoall"};

const char *hpc_dtype_name(hpc_dtype_t t)
{
    return (unsigned)t < HPC_DTYPE_COUNT ? dtype_names[t] : "?";
}
const char *hpc_op_name(hpc_op_t op)
{
    return (unsigned)op < HPC_OP_COUNT ? op_names[op] : "?";
}
const char *hpc_alg_name(hpc_alg_t a)
{
    return (unsigned)a < HPC_ALG_COUNT ? alg_names[a] : "?";
}
const char *hpc_coll_name(hpc_coll_t c)
{
    return (unsigned)c < HPC_COLL_COUNT ? coll_names[c] : "?";
}

/* Case-insensitive, '-' and '_' equivalent. */
static int name_eq(const char *a, const char *b)
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
        if (name_eq(s, names[i])) return i;
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
        if (name_eq(s, alias[k].n)) i = (int)alias[k].t;
    if (i < 0)
        return HPC_ERR(HPC_ERR_ARG, "unknown dtype '%s' (int32, int64, float32, float64, "
                       "float16, bfloat16)", s ? s : "(null)");
    *out = (hpc_dtype_t)i;
    return 0;
}

int hpc_op_parse(const char *s, hpc_op_t *out)
{
    int i = lookup(s, op_names, HPC_OP_COUNT);
    if (i < 0 && s && name_eq(s, "mean")) i = HPC_AVG;
    if (i < 0)
        return HPC_ERR(HPC_ERR_ARG, "unknown reduction op '%s' (sum, prod, min, max, avg)",
                       s ? s : "(null)");
    *out = (hpc_op_t)i;
    return 0;
}

int hpc_alg_parse(const char *s, hpc_alg_t *out)
{
    int i = lookup(s, alg_names, HPC_ALG_COUNT);
    if (i < 0 && s) {
        if (name_eq(s, "binomial")) i = HPC_ALG_TREE;
        else if (name_eq(s, "recursive_doubling")) i = HPC_ALG_BUTTERFLY;
        else if (name_eq(s, "mpi")) i = HPC_ALG_NATIVE;
    }
    if (i < 0)
        return HPC_ERR(HPC_ERR_ARG, "unknown algorithm '%s' (auto, native, nccl, linear, tree, "
                       "ring, butterfly, rabenseifner, bruck, scatter_allgather)",
                       s ? s : "(null)");
    *out = (hpc_alg_t)i;
    return 0;
}

int hpc_coll_parse(const char *s, hpc_coll_t *out)
{
    int i = lookup(s, coll_names, HPC_COLL_COUNT);
    if (i < 0 && s) {
        if (name_eq(s, "broadcast")) i = HPC_COLL_BCAST;
        else if (name_eq(s, "reducescatter")) i = HPC_COLL_REDUCE_SCATTER;
    }
    if (i < 0)
        return HPC_ERR(HPC_ERR_ARG, "unknown collective '%s' (barrier, bcast, reduce, allreduce, "
                       "gather, allgather, scatter, reduce_scatter, alltoall)", s ? s : "(null)");
    *out = (hpc_coll_t)i;
    return 0;
}

size_t hpc_dtype_size(hpc_dtype_t t)
{
    static const size_t sz[HPC_DTYPE_COUNT] = {4, 8, 4, 8, 2, 2};
    return (unsigned)t < HPC_DTYPE_COUNT ? sz[t] : 0;
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

int hpc_coll_reduces(hpc_coll_t c)
{
    return c == HPC_COLL_REDUCE || c == HPC_COLL_ALLREDUCE || c == HPC_COLL_REDUCE_SCATTER;
}

int hpc_coll_has_alg(hpc_coll_t c, hpc_alg_t a)
{
    if ((unsigned)c >= HPC_COLL_COUNT || (unsigned)a >= HPC_ALG_COUNT) return 0;
    if (a == HPC_ALG_AUTO || a == HPC_ALG_NATIVE) return 1;
    /* NCCL: its own collectives, barrier as a one-element allreduce,
     * gather/scatter/alltoall as grouped send/recv */
    if (a == HPC_ALG_NCCL) return 1;
    return coll_builder(c, a) != NULL;
}

/* ------------------------------------------------------------------ */
/* Environment knobs                                                    */
/* ------------------------------------------------------------------ */
size_t coll_segment(void)
{
    static size_t seg = 0;
    if (!seg) {
        const char *e = getenv("HPC_COLL_SEGMENT");
        size_t v = 0;
        if (e && *e && hpc_parse_size(e, &v) == 0 && v >= 64) seg = v;
        else seg = 128 * 1024;
    }
    return seg;
}

int coll_debug_enabled(void)
{
    /* HPC_DEBUG is a comma list of areas ("coll", "all"); read each call so
     * tests can switch it, cheap next to any collective. */
    const char *e = getenv("HPC_DEBUG");
    if (!e || !*e) return 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", e);
    for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
        if (name_eq(t, "coll") || name_eq(t, "all") || strcmp(t, "1") == 0) return 1;
    return 0;
}

double coll_timeout(void)
{
    const char *e = getenv("HPC_TIMEOUT");
    double v = 0;
    if (e && *e && hpc_parse_double(e, &v) == 0 && v > 0) return v;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Per-communicator state: an attribute on the user's communicator.     */
/* ------------------------------------------------------------------ */
static int coll_keyval = MPI_KEYVAL_INVALID, self_registered;
static coll_comm_t *all_comms;

static int comm_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm; (void)keyval; (void)extra;
    coll_comm_t *cc = attr;
    for (coll_comm_t **q = &all_comms; *q; q = &(*q)->next)
        if (*q == cc) {
            *q = cc->next;
            break;
        }
    coll_nccl_comm_free(cc);
    coll_pool_free(cc);
    coll_dev_comm_free(cc);
    if (cc->comm != MPI_COMM_NULL) MPI_Comm_free(&cc->comm);
    free(cc);
    return MPI_SUCCESS;
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first: free every
 * cached state (and its duplicate communicator) and our MPI types/ops
 * while MPI still works, so nothing is reported leaked. */
static int self_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm; (void)keyval; (void)attr; (void)extra;
    while (all_comms) {
        coll_comm_t *cc = all_comms;
        if (MPI_Comm_delete_attr(cc->user, coll_keyval) != MPI_SUCCESS && all_comms == cc)
            all_comms = cc->next;    /* its comm is gone; leave it */
    }
    coll_native_cleanup();
    MPI_Comm_free_keyval(&coll_keyval);
    coll_keyval = MPI_KEYVAL_INVALID;
    self_registered = 0;
    return MPI_SUCCESS;
}

int coll_get_comm(MPI_Comm comm, coll_comm_t **out)
{
    int flag = 0, inter = 0;
    void *val = NULL;
    if (comm == MPI_COMM_NULL) return HPC_ERR(HPC_ERR_ARG, "communicator is MPI_COMM_NULL");
    int init = 0;
    MPI_Initialized(&init);
    if (!init) return HPC_ERR(HPC_ERR_STATE, "collective called before MPI is initialised");
    if (coll_keyval == MPI_KEYVAL_INVALID)
        HPC_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete, &coll_keyval, NULL));
    if (!self_registered) {
        int k;
        HPC_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &k, NULL));
        HPC_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, k, NULL));
        MPI_Comm_free_keyval(&k);             /* lives on while attached */
        self_registered = 1;
    }
    HPC_MPI(MPI_Comm_get_attr(comm, coll_keyval, &val, &flag));
    if (flag) {
        *out = val;
        return 0;
    }
    HPC_MPI(MPI_Comm_test_inter(comm, &inter));
    if (inter) return HPC_ERR(HPC_ERR_ARG, "intercommunicators are not supported");
    coll_comm_t *cc = calloc(1, sizeof *cc);
    if (!cc) return HPC_ERR(HPC_ERR_NOMEM, "communicator state");
    int e = MPI_Comm_dup(comm, &cc->comm);
    if (e != MPI_SUCCESS) {
        free(cc);
        return hpc_error_mpi(e, __FILE__, __LINE__, "MPI_Comm_dup");
    }
    MPI_Comm_rank(cc->comm, &cc->rank);
    MPI_Comm_size(cc->comm, &cc->size);
    /* Oversubscribed node (more ranks than cores): a rank that spins while
     * waiting steals the core its peer needs to send, and every message
     * costs a scheduler time slice.  Then our wait loops yield when idle.
     * HPC_COLL_YIELD=0|1 overrides. */
    MPI_Comm node;
    int nlocal = 1;
    if (MPI_Comm_split_type(cc->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &nlocal);
        MPI_Comm_free(&node);
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    const char *y = getenv("HPC_COLL_YIELD");
    cc->yield = y && *y ? atoi(y) != 0 : (ncpu > 0 && nlocal > ncpu);
    int *ub = NULL;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    cc->tag_ub = (flag && ub && *ub > 0) ? *ub : 32767;
    e = MPI_Comm_set_attr(comm, coll_keyval, cc);
    if (e != MPI_SUCCESS) {
        MPI_Comm_free(&cc->comm);
        free(cc);
        return hpc_error_mpi(e, __FILE__, __LINE__, "MPI_Comm_set_attr");
    }
    cc->user = comm;
    cc->next = all_comms;
    all_comms = cc;
    *out = cc;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Buffer sizes                                                         */
/* ------------------------------------------------------------------ */
void hpc_coll_buf_counts(const hpc_coll_args_t *a, int rank, int p, size_t *sc, size_t *rc)
{
    size_t n = a->count, s = 0, r = 0, pn = (size_t)p * n;
    int root = rank == a->root;
    switch (a->coll) {
    case HPC_COLL_BARRIER: break;
    case HPC_COLL_BCAST: r = n; break;
    case HPC_COLL_REDUCE: s = n; r = root ? n : 0; break;
    case HPC_COLL_ALLREDUCE: s = n; r = n; break;
    case HPC_COLL_GATHER: s = n; r = root ? pn : 0; break;
    case HPC_COLL_ALLGATHER: s = n; r = pn; break;
    case HPC_COLL_SCATTER: s = root ? pn : 0; r = n; break;
    case HPC_COLL_REDUCE_SCATTER: s = pn; r = n; break;
    case HPC_COLL_ALLTOALL: s = pn; r = pn; break;
    default: break;
    }
    if (sc) *sc = s;
    if (rc) *rc = r;
}

/* ------------------------------------------------------------------ */
/* Requests in flight                                                   */
/* ------------------------------------------------------------------ */
static hpc_request_t *active;     /* doubly linked list */

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
}

static void list_del(hpc_request_t *r)
{
    if (r->prev) r->prev->next = r->next;
    else if (active == r) active = r->next;
    if (r->next) r->next->prev = r->prev;
    r->prev = r->next = NULL;
}

static void req_free(hpc_request_t *r)
{
    if (!r) return;
    /* a schedule that failed half-way may still have messages posted:
     * they must not land in memory freed here */
    for (int i = 0; i < r->s.nreq; i++)
        if (r->s.reqs[i] != MPI_REQUEST_NULL) {
            if (r->s.steps[r->s.reqstep[i]].kind == ST_RECV) MPI_Cancel(&r->s.reqs[i]);
            MPI_Request_free(&r->s.reqs[i]);
        }
    coll_tmp_release(r);
    coll_sched_free(&r->s);
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

/* Watchdog: name the operation, its sequence number and the peers whose
 * messages of the current round have not arrived (or not been taken). */
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
            len += (size_t)snprintf(peers + len, sizeof peers - len, "%s%d (%s)", any ? ", " : "",
                                    st->peer, st->kind == ST_RECV ? "recv" : "send");
            any = 1;
        }
    }
    if (!any)
        snprintf(peers, sizeof peers, "%s",
                 r->alg == HPC_ALG_NATIVE ? "unknown (inside the MPI library's collective)" :
                 r->alg == HPC_ALG_NCCL ? "unknown (inside NCCL)" : "none pending (local step)");
    fprintf(stderr, "hpc: rank %d: watchdog (HPC_TIMEOUT=%g s): %s #%llu (alg %s, count %zu, %s%s%s) "
            "not finished after %.1f s, round %d of %d; still waiting for rank(s) %s\n",
            r->cc->rank, coll_timeout(), hpc_coll_name(r->coll), (unsigned long long)r->seq,
            hpc_alg_name(r->alg), r->count, hpc_dtype_name(r->dt),
            hpc_coll_reduces(r->coll) ? ", " : "", hpc_coll_reduces(r->coll) ? hpc_op_name(r->op) : "",
            waited, s->cur + 1, s->nrounds, peers);
    hpc_abort(1);
}

/* Advance every request in flight once.  Errors stay with their request. */
static void progress_all(double timeout, double now)
{
    for (hpc_request_t *q = active, *nx; q; q = nx) {
        nx = q->next;
        int done = 0;
        int e = req_progress(q, &done);
        if (done) {
            q->err = e;
            q->completed = 1;
            list_del(q);
        } else if (timeout > 0 && now - q->t0 > timeout) {
            watchdog_fire(q, now - q->t0);
        }
    }
}


int hpc_test(hpc_request_t **req, int *done)
{
    if (!req || !done) return HPC_ERR(HPC_ERR_ARG, "NULL request or flag");
    *done = 0;
    hpc_request_t *r = *req;
    if (!r) {
        *done = 1;
        return 0;
    }
    double t = coll_timeout();
    progress_all(t, t > 0 ? MPI_Wtime() : 0);
    if (!r->completed) return 0;
    int e = r->err;
    req_free(r);
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

int hpc_waitall(int n, hpc_request_t **reqs)
{
    int first = 0;
    for (int i = 0; i < n; i++) {
        int e = hpc_wait(&reqs[i]);
        if (e < 0 && !first) first = e;
    }
    return first;
}

/* ------------------------------------------------------------------ */
/* Desync check (HPC_DEBUG=coll)                                        */
/* ------------------------------------------------------------------ */
typedef struct {
    uint64_t seq, count;
    int32_t coll, alg, dt, op, root, pad;
} sig_t;

static int sig_eq(const sig_t *a, const sig_t *b)
{
    return a->seq == b->seq && a->count == b->count && a->coll == b->coll && a->alg == b->alg &&
           a->dt == b->dt && a->op == b->op && a->root == b->root;
}

static int sig_str(char *buf, size_t n, const sig_t *s)
{
    int red = hpc_coll_reduces((hpc_coll_t)s->coll);
    int rooted = s->coll == HPC_COLL_BCAST || s->coll == HPC_COLL_REDUCE ||
                 s->coll == HPC_COLL_GATHER || s->coll == HPC_COLL_SCATTER;
    char root[32] = "";
    if (rooted) snprintf(root, sizeof root, ", root=%d", s->root);
    if (s->coll == HPC_COLL_BARRIER)
        return snprintf(buf, n, "#%llu barrier(alg=%s)", (unsigned long long)s->seq,
                        hpc_alg_name((hpc_alg_t)s->alg));
    return snprintf(buf, n, "#%llu %s(count=%llu %s%s%s%s, alg=%s)",
                    (unsigned long long)s->seq, hpc_coll_name((hpc_coll_t)s->coll),
                    (unsigned long long)s->count, hpc_dtype_name((hpc_dtype_t)s->dt),
                    red ? " " : "", red ? hpc_op_name((hpc_op_t)s->op) : "", root,
                    hpc_alg_name((hpc_alg_t)s->alg));
}

static int desync_check(coll_comm_t *cc, const sig_t *mine)
{
    int p = cc->size;
    sig_t *all = malloc((size_t)p * sizeof *all);
    if (!all) return HPC_ERR(HPC_ERR_NOMEM, "desync check");
    int e = MPI_Allgather(mine, (int)sizeof *mine, MPI_BYTE, all, (int)sizeof *mine, MPI_BYTE,
                          cc->comm);
    if (e != MPI_SUCCESS) {
        free(all);
        return hpc_error_mpi(e, __FILE__, __LINE__, "MPI_Allgather (desync check)");
    }
    int bad = 0;
    for (int i = 1; i < p; i++)
        if (!sig_eq(&all[i], &all[0])) bad = 1;
    if (!bad) {
        free(all);
        return 0;
    }
    if (cc->rank == 0) {
        /* One line: each distinct call with the ranks that made it. */
        char line[2048];
        size_t len = (size_t)snprintf(line, sizeof line,
                                      "hpc: collective desync (HPC_DEBUG=coll) on a %d-rank communicator:", p);
        int *seen = calloc((size_t)p, sizeof *seen);
        for (int i = 0; seen && i < p && len < sizeof line - 64; i++) {
            if (seen[i]) continue;
            len += (size_t)snprintf(line + len, sizeof line - len, "%s rank", i ? ";" : "");
            int first = 1, nr = 0;
            for (int j = i; j < p; j++) {
                if (seen[j] || !sig_eq(&all[j], &all[i])) continue;
                seen[j] = 1;
                nr++;
                if (nr <= 8 && len < sizeof line - 64)
                    len += (size_t)snprintf(line + len, sizeof line - len, "%s%d", first ? " " : ",", j);
                first = 0;
            }
            if (nr > 8) len += (size_t)snprintf(line + len, sizeof line - len, ",... (%d ranks)", nr);
            len += (size_t)snprintf(line + len, sizeof line - len, " called ");
            if (len < sizeof line) len += (size_t)sig_str(line + len, sizeof line - len, &all[i]);
        }
        free(seen);
        fprintf(stderr, "%s\n", line);
        hpc_abort(1);
    }
    /* Other ranks give rank 0 time to print, then abort themselves. */
    sleep(3);
    MPI_Abort(MPI_COMM_WORLD, 1);
    free(all);
    return HPC_ERR(HPC_ERR_MISMATCH, "collective desync");
}

/* ------------------------------------------------------------------ */
/* Starting a collective                                                */
/* ------------------------------------------------------------------ */
static int check_buf(const char *what, const void *p, size_t n, size_t es, hpc_coll_t c)
{
    if (n == 0) return 0;
    if (!p) return HPC_ERR(HPC_ERR_ARG, "%s: %s is NULL with %zu elements", hpc_coll_name(c), what, n);
    if ((uintptr_t)p % es)
        return HPC_ERR(HPC_ERR_ARG, "%s: %s %p is misaligned for %zu-byte elements",
                       hpc_coll_name(c), what, p, es);
    return 0;
}

static int is_rooted(hpc_coll_t c)
{
    return c == HPC_COLL_BCAST || c == HPC_COLL_REDUCE || c == HPC_COLL_GATHER ||
           c == HPC_COLL_SCATTER;
}

static int validate(const hpc_coll_args_t *a, const coll_comm_t *cc)
{
    if ((unsigned)a->coll >= HPC_COLL_COUNT)
        return HPC_ERR(HPC_ERR_ARG, "unknown collective %d", (int)a->coll);
    const char *cn = hpc_coll_name(a->coll);
    if (a->coll != HPC_COLL_BARRIER && (unsigned)a->dtype >= HPC_DTYPE_COUNT)
        return HPC_ERR(HPC_ERR_ARG, "%s: unknown dtype %d", cn, (int)a->dtype);
    if (hpc_coll_reduces(a->coll) && (unsigned)a->op >= HPC_OP_COUNT)
        return HPC_ERR(HPC_ERR_ARG, "%s: unknown reduction op %d", cn, (int)a->op);
    if ((unsigned)a->alg >= HPC_ALG_COUNT)
        return HPC_ERR(HPC_ERR_ARG, "%s: unknown algorithm %d", cn, (int)a->alg);
    if (!hpc_coll_has_alg(a->coll, a->alg))
        return HPC_ERR(HPC_ERR_ARG, "%s has no algorithm '%s'", cn, hpc_alg_name(a->alg));
    if (is_rooted(a->coll) && (a->root < 0 || a->root >= cc->size))
        return HPC_ERR(HPC_ERR_ARG, "%s: root %d out of range for %d ranks", cn, a->root, cc->size);
    if (a->coll == HPC_COLL_BARRIER) return 0;
    if (a->count > (size_t)INT32_MAX)
        return HPC_ERR(HPC_ERR_ARG, "%s: count %zu too large", cn, a->count);
    size_t es = hpc_dtype_size(a->dtype), sc, rc;
    hpc_coll_buf_counts(a, cc->rank, cc->size, &sc, &rc);
    int root = cc->rank == a->root;
    int inplace_send = a->sendbuf == HPC_IN_PLACE;
    if (inplace_send && (a->coll == HPC_COLL_SCATTER || (a->coll == HPC_COLL_GATHER && !root)))
        return HPC_ERR(HPC_ERR_ARG, "%s: HPC_IN_PLACE as sendbuf is for %s", cn,
                       a->coll == HPC_COLL_GATHER ? "the root only" : "gather, not scatter (use recvbuf)");
    if (a->recvbuf == HPC_IN_PLACE && !(a->coll == HPC_COLL_SCATTER && root))
        return HPC_ERR(HPC_ERR_ARG, "%s: HPC_IN_PLACE as recvbuf is for the root of scatter only", cn);
    if (!inplace_send && a->coll != HPC_COLL_BCAST)
        HPC_TRY(check_buf("sendbuf", a->sendbuf, sc, es, a->coll));
    if (a->recvbuf != HPC_IN_PLACE) {
        /* in place, the input lives in recvbuf even where no output does */
        size_t need = rc;
        if (inplace_send && a->coll == HPC_COLL_REDUCE) need = a->count;
        HPC_TRY(check_buf(a->coll == HPC_COLL_BCAST ? "buf" : "recvbuf", a->recvbuf, need, es, a->coll));
    }
    return 0;
}

static int run_builder(hpc_request_t *r, const hpc_coll_args_t *a, const char *sb, char *rb,
                       int inplace);

/* Build the schedule of an own algorithm into r, staging device buffers
 * through pinned host memory when MPI is not CUDA-aware. */
static int build_own(hpc_request_t *r, const hpc_coll_args_t *a, int stage)
{
    coll_comm_t *cc = r->cc;
    int p = cc->size, rank = cc->rank;
    size_t es = hpc_dtype_size(a->dtype), n = a->count;
    size_t sc, rc;
    hpc_coll_buf_counts(a, rank, p, &sc, &rc);
    int isroot = rank == a->root;
    const char *sb = a->sendbuf == HPC_IN_PLACE ? NULL : a->sendbuf;
    char *rb = a->recvbuf == HPC_IN_PLACE ? NULL : a->recvbuf;
    int inplace = (a->sendbuf == HPC_IN_PLACE) || (a->recvbuf == HPC_IN_PLACE);
    /* the same pointer for both is in place too */
    if (!inplace && sb && rb) {
        switch (a->coll) {
        case HPC_COLL_ALLREDUCE: case HPC_COLL_REDUCE: case HPC_COLL_ALLTOALL:
        case HPC_COLL_REDUCE_SCATTER:
            inplace = sb == rb;
            break;
        case HPC_COLL_ALLGATHER: inplace = sb == rb + (size_t)rank * n * es; break;
        case HPC_COLL_GATHER: inplace = isroot && sb == rb + (size_t)rank * n * es; break;
        case HPC_COLL_SCATTER: inplace = isroot && rb == sb + (size_t)rank * n * es; break;
        default: break;
        }
    }
    /* Staging: host shadows of the user's device buffers. */
    char *urb = rb;
    if (stage) {
        size_t rbytes = rc * es;
        if (inplace && a->coll == HPC_COLL_REDUCE) rbytes = n * es;
        if (inplace && a->coll == HPC_COLL_REDUCE_SCATTER) rbytes = (size_t)p * n * es;
        if (inplace && a->coll == HPC_COLL_SCATTER) rbytes = 0;
        void *hs = NULL, *hr = NULL;
        if (rbytes) {
            HPC_TRY(coll_tmp_kind(r, rbytes, 1, &hr));
            if (inplace && a->coll != HPC_COLL_GATHER && a->coll != HPC_COLL_SCATTER)
                HPC_TRY(coll_copy_k(&r->s, hr, urb, rbytes, 1));
            if (inplace && a->coll == HPC_COLL_GATHER)
                HPC_TRY(coll_copy_k(&r->s, (char *)hr + (size_t)rank * n * es,
                                    urb + (size_t)rank * n * es, n * es, 1));
            if (a->coll == HPC_COLL_BCAST && isroot)
                HPC_TRY(coll_copy_k(&r->s, hr, urb, rbytes, 1));
        }
        if (!inplace && sc && sb) {
            HPC_TRY(coll_tmp_kind(r, sc * es, 1, &hs));
            HPC_TRY(coll_copy_k(&r->s, hs, sb, sc * es, 1));
        } else if (inplace && a->coll == HPC_COLL_SCATTER && sb) {
            HPC_TRY(coll_tmp_kind(r, sc * es, 1, &hs));
            HPC_TRY(coll_copy_k(&r->s, hs, sb, sc * es, 1));
        }
        HPC_TRY(coll_round(&r->s));
        sb = hs;
        rb = hr;
        /* from here on everything runs on host memory */
        r->dev = 0;
    }

    if (r->alg == HPC_ALG_NATIVE) {
        /* staged native: MPI's call on the host shadows, MPI's in place */
        r->sendbuf = inplace && !(a->coll == HPC_COLL_SCATTER) ? HPC_IN_PLACE : sb;
        r->recvbuf = inplace && a->coll == HPC_COLL_SCATTER && isroot ? HPC_IN_PLACE : rb;
        if (a->coll == HPC_COLL_GATHER && !isroot) r->sendbuf = sb;
        HPC_TRY(coll_native_build(r));
    } else {
        HPC_TRY(run_builder(r, a, sb, rb, inplace));
    }
    if (stage && urb && rb) {
        int back = 1;
        if (a->coll == HPC_COLL_REDUCE && !isroot) back = 0;
        if (a->coll == HPC_COLL_GATHER && !isroot) back = 0;
        if (back) HPC_TRY(coll_copy_k(&r->s, urb, rb, rc * es, 1));
        HPC_TRY(coll_round(&r->s));
    }
    return 0;
}

/* Map in place onto the builders' out-of-place view, run the algorithm's
 * builder (a plain copy on one rank) and add the AVG division. */
static int run_builder(hpc_request_t *r, const hpc_coll_args_t *a, const char *sb, char *rb, int inplace)
{
    int p = r->cc->size, rank = r->cc->rank, isroot = rank == a->root;
    size_t es = hpc_dtype_size(a->dtype), n = a->count;
    coll_build_t b = {.r = r, .s = &r->s, .rank = rank, .p = p, .root = a->root,
                      .count = n, .es = es, .dt = a->dtype,
                      .op = a->op == HPC_AVG ? HPC_SUM : a->op,
                      .dev = r->dev, .seg = coll_segment()};
    /* The builders see out-of-place arguments; in place is mapped here. */
    b.rbuf = rb;
    b.sbuf = sb;
    if (inplace) {
        switch (a->coll) {
        case HPC_COLL_ALLREDUCE: case HPC_COLL_REDUCE: b.sbuf = rb; break;
        case HPC_COLL_ALLGATHER: b.sbuf = rb + (size_t)rank * n * es; break;
        case HPC_COLL_GATHER: b.sbuf = rb + (size_t)rank * n * es; break;
        case HPC_COLL_SCATTER: b.rbuf = (char *)sb + (size_t)rank * n * es; break;
        case HPC_COLL_REDUCE_SCATTER: case HPC_COLL_ALLTOALL: {
            /* inputs are overwritten by outputs of other blocks: copy them */
            void *t = NULL;
            size_t bytes = (size_t)p * n * es;
            HPC_TRY(coll_tmp(r, bytes, &t));
            HPC_TRY(coll_copy_k(&r->s, t, rb, bytes, b.dev));
            HPC_TRY(coll_round(&r->s));
            b.sbuf = t;
        } break;
        default: break;
        }
    }
    coll_builder_fn fn = coll_builder(a->coll, r->alg);
    if (!fn)
        return HPC_ERR(HPC_ERR_ARG, "%s has no algorithm '%s'", hpc_coll_name(a->coll),
                       hpc_alg_name(r->alg));
    if (p == 1) {
        /* one rank: a copy, whatever the algorithm */
        if (a->coll != HPC_COLL_BCAST && a->coll != HPC_COLL_BARRIER)
            HPC_TRY(coll_copy(&b, b.rbuf, b.sbuf, n * es));
        HPC_TRY(coll_round(&r->s));
    } else {
        HPC_TRY(fn(&b));
        HPC_TRY(coll_round(&r->s));
    }
    /* AVG: sum, then divide where the result lives */
    if (a->op == HPC_AVG && hpc_coll_reduces(a->coll) && (a->coll != HPC_COLL_REDUCE || isroot)) {
        HPC_TRY(coll_scale(&r->s, b.rbuf, n, p, b.dev));
        HPC_TRY(coll_round(&r->s));
    }
    return 0;
}

static int env_cuda_aware(void)
{
    const char *e = getenv("HPC_CUDA_AWARE");
    if (e && *e) return atoi(e) != 0;
    return -1;
}

int hpc_coll_cuda_aware(void)
{
    int e = env_cuda_aware();
    if (e >= 0) return e;
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40000000
    return MPIX_Query_cuda_support();
#elif defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support();
#else
    return 0;
#endif
}

static int coll_start(const hpc_coll_args_t *a0, MPI_Comm comm, int blocking, hpc_request_t **out)
{
    if (!a0) return HPC_ERR(HPC_ERR_ARG, "NULL arguments");
    hpc_coll_args_t a = *a0;
    coll_comm_t *cc = NULL;
    HPC_TRY(coll_get_comm(comm, &cc));
    if (a.coll == HPC_COLL_BARRIER) {
        a.count = 0;
        a.dtype = HPC_INT32;
        a.root = 0;
    }
    if (!hpc_coll_reduces(a.coll)) a.op = HPC_SUM;
    if (!is_rooted(a.coll)) a.root = 0;
    HPC_TRY(validate(&a, cc));

    /* memory kind: device if either buffer is */
    int sdev = a.sendbuf && a.sendbuf != HPC_IN_PLACE && coll_is_device_ptr(a.sendbuf);
    int rdev = a.recvbuf && a.recvbuf != HPC_IN_PLACE && coll_is_device_ptr(a.recvbuf);
    size_t sc, rc;
    hpc_coll_buf_counts(&a, cc->rank, cc->size, &sc, &rc);
    if (sc && rc && a.sendbuf && a.recvbuf && a.sendbuf != HPC_IN_PLACE &&
        a.recvbuf != HPC_IN_PLACE && sdev != rdev)
        return HPC_ERR(HPC_ERR_ARG, "%s: sendbuf and recvbuf must both be host or both be device memory",
                       hpc_coll_name(a.coll));
    int dev = sdev || rdev;

    hpc_alg_t alg = a.alg;
    if (alg == HPC_ALG_AUTO) {
        size_t bytes = a.count * hpc_dtype_size(a.dtype);
        HPC_TRY(coll_tune_choose(a.coll, bytes, cc->size, dev, &alg));
        /* NCCL refused here (ranks share a GPU): auto falls back to ours */
        if (alg == HPC_ALG_NCCL && !coll_nccl_ready(cc))
            HPC_TRY(coll_tune_choose(a.coll, bytes, cc->size, 0, &alg));
    }
    if (alg == HPC_ALG_NCCL && !dev) {
        /* an empty buffer has no memory kind: decide by what NCCL needs */
        if (a.count == 0 || a.coll == HPC_COLL_BARRIER) dev = hpc_have_nccl();
        if (!dev)
            return HPC_ERR(HPC_ERR_ARG, "%s: algorithm 'nccl' needs device buffers", hpc_coll_name(a.coll));
    }

    if (coll_debug_enabled()) {
        sig_t sig = {.seq = cc->seq, .count = a.count, .coll = a.coll, .alg = alg,
                     .dt = a.dtype, .op = a.op, .root = a.root};
        HPC_TRY(desync_check(cc, &sig));
    }

    hpc_request_t *r = calloc(1, sizeof *r);
    if (!r) return HPC_ERR(HPC_ERR_NOMEM, "request");
    r->cc = cc;
    r->seq = cc->seq++;
    r->tag = (int)(r->seq % (uint64_t)cc->tag_ub);
    r->coll = a.coll;
    r->alg = alg;
    r->dt = a.dtype;
    r->op = a.op;
    r->count = a.count;
    r->root = a.root;
    r->dev = dev;
    r->blocking = blocking;
    r->sendbuf = a.sendbuf;
    r->recvbuf = a.recvbuf;
    r->t0 = MPI_Wtime();
    coll_sched_init(&r->s);

    int e = 0;
    int stage = dev && !hpc_coll_cuda_aware();
    /* native blocking = MPI's blocking call, unless requests of ours are in
     * flight: then MPI's nonblocking call, progressed with them */
    r->ext.blocking = blocking && !active;
    if (alg == HPC_ALG_NCCL) {
        e = coll_nccl_build(r);
    } else if (alg == HPC_ALG_NATIVE && !stage) {
        e = coll_native_build(r);
    } else {
        /* own algorithms; native too when device memory must be staged */
        e = build_own(r, &a, stage);
    }
    if (e < 0) {
        req_free(r);
        return hpc_error_push(e, __FILE__, __LINE__, __func__);
    }

    if (blocking) {
        /* progress this one and everything else in flight until it is done */
        double t = coll_timeout();
        int spins = 0;
        for (;;) {
            int done = 0, cur = r->s.cur;
            e = req_progress(r, &done);
            if (done) break;
            if (active) progress_all(t, t > 0 ? MPI_Wtime() : 0);
            spins = r->s.cur == cur ? spins + 1 : 0;
            idle(cc, spins);
            if (t > 0) {
                double now = MPI_Wtime();
                if (now - r->t0 > t) watchdog_fire(r, now - r->t0);
            }
        }
        req_free(r);
        if (e < 0) return hpc_error_push(e, __FILE__, __LINE__, __func__);
        return 0;
    }
    /* nonblocking: post the first round now so the transfer starts */
    int done = 0;
    e = req_progress(r, &done);
    if (done) {
        r->err = e;
        r->completed = 1;
    } else {
        list_add(r);
    }
    *out = r;
    return 0;
}

int hpc_coll(const hpc_coll_args_t *a, MPI_Comm comm)
{
    HPC_TRY(coll_start(a, comm, 1, NULL));
    return 0;
}

int hpc_icoll(const hpc_coll_args_t *a, MPI_Comm comm, hpc_request_t **req)
{
    if (!req) return HPC_ERR(HPC_ERR_ARG, "NULL request pointer");
    hpc_request_t *r = NULL;
    HPC_TRY(coll_start(a, comm, 0, &r));
    *req = r;
    return 0;
}

/* ------------------------------------------------------------------ */
/* The named entry points                                               */
/* ------------------------------------------------------------------ */
#define ARGS(C, S, R, N, T, O, RT, A) \
    hpc_coll_args_t a = {.coll = (C), .sendbuf = (S), .recvbuf = (R), .count = (N), \
                         .dtype = (T), .op = (O), .root = (RT), .alg = (A)}

int hpc_barrier(MPI_Comm comm, hpc_alg_t alg)
{
    ARGS(HPC_COLL_BARRIER, NULL, NULL, 0, HPC_INT32, HPC_SUM, 0, alg);
    return hpc_coll(&a, comm);
}
int hpc_bcast(void *buf, size_t count, hpc_dtype_t dt, int root, MPI_Comm comm, hpc_alg_t alg)
{
    ARGS(HPC_COLL_BCAST, NULL, buf, count, dt, HPC_SUM, root, alg);
    return hpc_coll(&a, comm);
}
int hpc_reduce(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt, hpc_op_t op,
               int root, MPI_Comm comm, hpc_alg_t alg)
{
    ARGS(HPC_COLL_REDUCE, sendbuf, recvbuf, count, dt, op, root, alg);
    return hpc_coll(&a, comm);
}
int hpc_allreduce(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt, hpc_op_t op,
                  MPI_Comm comm, hpc_alg_t alg)
{
    ARGS(HPC_COLL_ALLREDUCE, sendbuf, recvbuf, count, dt, op, 0, alg);
    return hpc_coll(&a, comm);
}
int hpc_gather(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt, int root,
               MPI_Comm comm, hpc_alg_t alg)
{
    ARGS(HPC_COLL_GATHER, sendbuf, recvbuf, count, dt, HPC_SUM, root, alg);
    return hpc_coll(&a, comm);
}
int hpc_allgather(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                  MPI_Comm comm, hpc_alg_t alg)
{
    ARGS(HPC_COLL_ALLGATHER, sendbuf, recvbuf, count, dt, HPC_SUM, 0, alg);
    return hpc_coll(&a, comm);
}
int hpc_scatter(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt, int root,
                MPI_Comm comm, hpc_alg_t alg)
{
    ARGS(HPC_COLL_SCATTER, sendbuf, recvbuf, count, dt, HPC_SUM, root, alg);
    return hpc_coll(&a, comm);
}
int hpc_reduce_scatter(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                       hpc_op_t op, MPI_Comm comm, hpc_alg_t alg)
{
    ARGS(HPC_COLL_REDUCE_SCATTER, sendbuf, recvbuf, count, dt, op, 0, alg);
    return hpc_coll(&a, comm);
}
int hpc_alltoall(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                 MPI_Comm comm, hpc_alg_t alg)
{
    ARGS(HPC_COLL_ALLTOALL, sendbuf, recvbuf, count, dt, HPC_SUM, 0, alg);
    return hpc_coll(&a, comm);
}

int hpc_ibarrier(MPI_Comm comm, hpc_alg_t alg, hpc_request_t **req)
{
    ARGS(HPC_COLL_BARRIER, NULL, NULL, 0, HPC_INT32, HPC_SUM, 0, alg);
    return hpc_icoll(&a, comm, req);
}
int hpc_ibcast(void *buf, size_t count, hpc_dtype_t dt, int root, MPI_Comm comm, hpc_alg_t alg,
               hpc_request_t **req)
{
    ARGS(HPC_COLL_BCAST, NULL, buf, count, dt, HPC_SUM, root, alg);
    return hpc_icoll(&a, comm, req);
}
int hpc_ireduce(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt, hpc_op_t op,
                int root, MPI_Comm comm, hpc_alg_t alg, hpc_request_t **req)
{
    ARGS(HPC_COLL_REDUCE, sendbuf, recvbuf, count, dt, op, root, alg);
    return hpc_icoll(&a, comm, req);
}
int hpc_iallreduce(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt, hpc_op_t op,
                   MPI_Comm comm, hpc_alg_t alg, hpc_request_t **req)
{
    ARGS(HPC_COLL_ALLREDUCE, sendbuf, recvbuf, count, dt, op, 0, alg);
    return hpc_icoll(&a, comm, req);
}
int hpc_igather(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt, int root,
                MPI_Comm comm, hpc_alg_t alg, hpc_request_t **req)
{
    ARGS(HPC_COLL_GATHER, sendbuf, recvbuf, count, dt, HPC_SUM, root, alg);
    return hpc_icoll(&a, comm, req);
}
int hpc_iallgather(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                   MPI_Comm comm, hpc_alg_t alg, hpc_request_t **req)
{
    ARGS(HPC_COLL_ALLGATHER, sendbuf, recvbuf, count, dt, HPC_SUM, 0, alg);
    return hpc_icoll(&a, comm, req);
}
int hpc_iscatter(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt, int root,
                 MPI_Comm comm, hpc_alg_t alg, hpc_request_t **req)
{
    ARGS(HPC_COLL_SCATTER, sendbuf, recvbuf, count, dt, HPC_SUM, root, alg);
    return hpc_icoll(&a, comm, req);
}
int hpc_ireduce_scatter(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                        hpc_op_t op, MPI_Comm comm, hpc_alg_t alg, hpc_request_t **req)
{
    ARGS(HPC_COLL_REDUCE_SCATTER, sendbuf, recvbuf, count, dt, op, 0, alg);
    return hpc_icoll(&a, comm, req);
}
int hpc_ialltoall(const void *sendbuf, void *recvbuf, size_t count, hpc_dtype_t dt,
                  MPI_Comm comm, hpc_alg_t alg, hpc_request_t **req)
{
    ARGS(HPC_COLL_ALLTOALL, sendbuf, recvbuf, count, dt, HPC_SUM, 0, alg);
    return hpc_icoll(&a, comm, req);
}
