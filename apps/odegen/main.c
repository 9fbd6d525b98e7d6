/* main.c - hpc-odegen: parallel ODE ensemble generation to HDF5.
 *
 * The run: start through the app kit (options, one-line errors), open or
 * resume the output, then take chunks of trajectories from the shared
 * work queue until none is left: draw their initial conditions from
 * (seed, index), integrate them (CPU lanes or the GPU) and hand them to
 * the writer thread (rows.c), which writes them while the next batch is
 * integrated (two batches of buffers, used in turn).  A stop signal or a
 * failed write closes the queue for every rank and leaves a resumable
 * FILE.partial.  Rank 0 shows progress and the summary line.
 */
#include "config.h"
#include "hpc_app.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include "odegen.h"

/* Buffers for one batch of chunks: bounded by the chunk size, not by N. */
typedef struct {
    int64_t cap;            /* trajectories */
    double *x0, *y, *scratch;
    ode_stat_t *st;
    ode_evout_t ev;         /* the events of the batch (systems with events) */
    int64_t *chunks;        /* chunk indices in the batch */
    int nchunks;
    ode_rows_t rows;        /* the batch as handed to the writer */
} batch_t;

static int batch_alloc(batch_t *b, const ode_opts_t *o, int64_t cap)
{
    memset(b, 0, sizeof *b);
    b->cap = cap;
    size_t nev = (size_t)o->sys->nev, M = (size_t)o->max_events;
    b->x0 = malloc((size_t)cap * o->dim * sizeof(double));
    b->y = malloc((size_t)cap * o->nt * o->dim * sizeof(double));
    b->st = malloc((size_t)cap * sizeof *b->st);
    /* the explicit engine's lanes (64-byte aligned: one lane set of a
     * component is a cache line) */
    size_t sc = o->method < ODE_NEXPLICIT ? o->sys->scratch(o->method, o->dim) : 0;
    b->scratch = sc ? aligned_alloc(64, (sc * sizeof(double) + 63) / 64 * 64) : NULL;
    b->chunks = malloc((size_t)(cap / o->chunk + 1) * sizeof *b->chunks);
    if (nev) {
        b->ev.count = malloc((size_t)cap * nev * sizeof *b->ev.count);
        b->ev.t = malloc((size_t)cap * nev * M * sizeof *b->ev.t);
        b->ev.y = malloc((size_t)cap * nev * M * o->dim * sizeof *b->ev.y);
    }
    return b->x0 && b->y && b->st && (b->scratch || !sc) && b->chunks &&
           (!nev || (b->ev.count && b->ev.t && b->ev.y)) ? 0 : -1;
}

static void batch_free(batch_t *b)
{
    free(b->x0);
    free(b->y);
    free(b->st);
    free(b->scratch);
    free(b->chunks);
    free(b->ev.count);
    free(b->ev.t);
    free(b->ev.y);
}

/* n trajectories of the batch, on the CPU: the explicit engine compiled
 * with the system, or an implicit method */
static int solve_cpu(const ode_opts_t *o, const ode_prob_t *p, batch_t *b, int64_t n)
{
    size_t nev = (size_t)p->nev, M = (size_t)p->max_events;
    if (nev) {
        memset(b->ev.count, 0, (size_t)n * nev * sizeof *b->ev.count);
        for (size_t i = 0; i < (size_t)n * nev * M; i++) b->ev.t[i] = NAN;
        for (size_t i = 0; i < (size_t)n * nev * M * (size_t)p->dim; i++) b->ev.y[i] = NAN;
    }
    if (p->method >= ODE_NEXPLICIT) return ode_implicit_solve(o->sys, p, n, b->x0, b->y, b->st, nev ? &b->ev : NULL);
    o->sys->solve(p, n, b->x0, b->y, b->st, nev ? &b->ev : NULL, b->scratch);
    return 0;
}

typedef struct {
    const ode_opts_t *o;
    const ode_prob_t *p;
    ode_out_t *out;
    hpc_workq_t *work;
    ode_cuda_t *cuda;
    hpc_progress_t *prog;
    int64_t todo;           /* trajectories to compute in this run */
    int64_t mine;           /* computed by this rank */
    double solve_s;         /* seconds in the solver on this rank */
    double write_s;         /* seconds waiting for the writer */
    char err[1024];         /* the first failure of this rank, or "" */
    int kill_rank;          /* test hooks, see test_kill() and test_pace() */
    int64_t kill_after;
    long pace_ms;
} run_t;

/* Test hook: HPC_ODEGEN_TEST_KILL=R:K makes rank R kill itself with
 * SIGKILL (as kill -9 would) when it takes its (K+1)-th chunk, i.e. with
 * that chunk handed out but not written - or, if the other ranks took all
 * the work first, after the last chunk but before the file is finished.
 * Lets the resume test stop a run at a known point; nothing else reads it. */
static void test_kill_setup(run_t *r)
{
    int64_t v[2];
    r->kill_rank = -1;
    if (hpc_app_test_hook("HPC_ODEGEN_TEST_KILL", 2, v) == 2) {
        r->kill_rank = (int)v[0];
        r->kill_after = v[1];
    }
    /* HPC_ODEGEN_TEST_PACE=MS: sleep MS milliseconds after each chunk, so a
     * test that interrupts a run from outside (kill -9, Slurm's signal)
     * finds it still running however fast the machine is */
    r->pace_ms = hpc_app_test_hook("HPC_ODEGEN_TEST_PACE", 1, v) == 1 ? (long)v[0] : 0;
}

static void test_pace(const run_t *r, int nchunks)
{
    if (r->pace_ms <= 0) return;
    long ms = r->pace_ms * nchunks;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_kill(run_t *r, int64_t taken)
{
    if (r->kill_rank == hpc_rank() && taken > r->kill_after) {
        fflush(NULL);
        raise(SIGKILL);
    }
}

/* Take up to max chunks from the queue into b; returns trajectories.  A
 * stop signal on this rank closes the queue for every rank. */
static int64_t take(run_t *r, batch_t *b, int max)
{
    static int64_t taken = 0;
    int64_t n = 0;
    b->nchunks = 0;
    if (hpc_app_stop_requested()) hpc_workq_close(r->work);
    while (b->nchunks < max) {
        int64_t c;
        if (hpc_workq_take(r->work, 1, &c) == 0)
            break;
        test_kill(r, ++taken);
        int64_t first = c * r->o->chunk;
        int64_t cnt = r->o->n - first < r->o->chunk ? r->o->n - first : r->o->chunk;
        ode_x0(r->o, first, cnt, b->x0 + n * r->o->dim);
        b->chunks[b->nchunks++] = c;
        n += cnt;
    }
    return n;
}

/* Integrate the batch and hand it to the writer (which returns once the
 * batch before is written); 0, or an HPC_ERR_* with the cause kept in
 * r->err (it must outlive the next error: the drain's). */
static int process(run_t *r, batch_t *b, int64_t n)
{
    const ode_opts_t *o = r->o;
    double t = hpc_wtime();
    if (o->device == ODE_DEV_CUDA) {
        int rc = ode_cuda_solve(r->cuda, n, b->x0, b->y, b->st);
        if (rc < 0) {
            snprintf(r->err, sizeof r->err, "%s", hpc_last_cause());
            return rc;
        }
    } else {
        int rc = solve_cpu(o, r->p, b, n);
        if (rc < 0) {
            snprintf(r->err, sizeof r->err, "%s", hpc_last_cause());
            return rc;
        }
    }
    r->solve_s += hpc_wtime() - t;
    t = hpc_wtime();
    b->rows = (ode_rows_t){r->out, b->nchunks, b->chunks, b->x0, b->y, b->st, &b->ev};
    int rc = ode_out_put(&b->rows);
    if (rc < 0) {
        snprintf(r->err, sizeof r->err, "%s", hpc_last_cause());
        return rc;
    }
    r->write_s += hpc_wtime() - t;
    test_pace(r, b->nchunks);
    r->mine += n;
    if (r->prog) {
        /* chunks handed out, less the ones still in flight: a fair estimate */
        int64_t est = (hpc_workq_taken(r->work) - hpc_size()) * o->chunk;
        if (est < r->mine) est = r->mine;
        if (est > r->todo) est = r->todo;
        hpc_progress_update(r->prog, (uint64_t)(o->n - r->todo + est));
    }
    return 0;
}

typedef struct {
    int64_t failed, steps, by[4], stopped;
} totals_t;

static void summary(const ode_opts_t *o, const totals_t *t, double wall, int64_t computed,
                    double solve_s, int64_t resumed_chunks)
{
    double solve_sum = 0;
    MPI_Reduce(&solve_s, &solve_sum, 1, MPI_DOUBLE, MPI_SUM, 0, hpc_comm_world());
    char sz[32] = "?", resumed[96] = "", events[64] = "";
    struct stat sb;
    if (hpc_rank() == 0 && stat(o->out, &sb) == 0) hpc_format_bytes((double)sb.st_size, sz, sizeof sz);
    int size = hpc_size();
    if (resumed_chunks > 0)
        snprintf(resumed, sizeof resumed, " (resumed: %lld chunks were already done)",
                 (long long)resumed_chunks);
    if (o->sys->nev)
        snprintf(events, sizeof events, ", %lld ended by an event", (long long)t->stopped);
    hpc_app_summary("%lld trajectories, %lld failed (%lld underflow, %lld non-finite, "
                    "%lld max-steps)%s, %lld steps, %.2f s, %.0f traj/s on %d rank%s (%s; solver alone "
                    "%.0f traj/s per rank), %s %s%s",
                    (long long)o->n, (long long)t->failed, (long long)t->by[0], (long long)t->by[1],
                    (long long)t->by[2], events, (long long)t->steps, wall, wall > 0 ? computed / wall : 0.0,
                    size, size > 1 ? "s" : "", o->device == ODE_DEV_CUDA ? "cuda" : "cpu",
                    solve_sum > 0 ? computed / solve_sum : 0.0, o->out, sz, resumed);
}

/* The GPU first: no file is touched if the device cannot run.  Returns
 * the chunks per batch (a kernel launch wants ~10^5 threads). */
static int open_device(run_t *r, const ode_opts_t *o, const ode_prob_t *p)
{
    if (o->device != ODE_DEV_CUDA) return 1;
    /* up to 512 MiB of output per batch (host and device buffers alike) */
    double per = (double)o->nt * o->dim * sizeof(double);
    int64_t want = (int64_t)(512.0 * 1024 * 1024 / per);
    if (want > 131072) want = 131072;
    int batch_chunks = want > o->chunk ? (int)(want / o->chunk) : 1;
    hpc_app_agree_rc(ode_cuda_open(o, p, batch_chunks * o->chunk, &r->cuda), HPC_EXIT_DATA, NULL);
    return batch_chunks;
}

/* Compute every chunk not yet done (or, after a stop signal anywhere,
 * until the queue closes), the two batches in turn; then wait for the
 * writer.  A failed write or kernel closes the queue for every rank (the
 * others finish what they hold): the caller agrees on the failure, and
 * the .partial stays, resumable. */
static void compute(run_t *r, batch_t b[2], int batch_chunks)
{
    for (int i = 0;; i ^= 1) {
        int64_t n = take(r, &b[i], batch_chunks);
        if (n == 0)
            break;
        if (process(r, &b[i], n) < 0) {
            hpc_workq_close(r->work);
            break;
        }
    }
    test_kill(r, INT64_MAX);   /* (before the drain: written, not all flagged) */
    double t = hpc_wtime();
    if (ode_out_drain(r->out) < 0 && !r->err[0]) snprintf(r->err, sizeof r->err, "%s", hpc_last_cause());
    r->write_s += hpc_wtime() - t;
}

/* --compile-to FILE.so: the compiled system copied there (rank 0), for
 * --system-lib on nodes without a compiler */
static void compile_to(const ode_opts_t *o)
{
    int rc = 0;
    if (hpc_rank() == 0) {
        char *bytes = NULL;
        size_t len = 0;
        hpc_file_t *f = NULL;
        rc = hpc_file_read_all(ode_sys_object(), (size_t)1 << 31, MPI_COMM_SELF, &bytes, &len);
        if (!rc) rc = hpc_file_open(o->compile_to, &f);
        if (!rc && fwrite(bytes, 1, len, hpc_file_stream(f)) != len) rc = HPC_ERR(HPC_ERR_IO, "writing %s", o->compile_to);
        if (!rc) rc = hpc_file_commit(f);
        else hpc_file_discard(f);
        free(bytes);
    }
    hpc_app_agree_rc(rc, HPC_EXIT_DATA, "--compile-to");
    if (hpc_rank() == 0 && !hpc_app_quiet())
        printf("%s: %s (system %s, sha256 %s) compiled into %s; run it with --system-lib %s\n", ODEGEN_PROG,
               o->sys_path, o->sys->name, o->sys_sha256, o->compile_to, o->compile_to);
}

int main(int argc, char **argv)
{
    ode_opts_t o;
    hpc_app_start(&ode_app, &argc, &argv);
    ode_opts_system(&o);
    if (o.compile_to) {
        compile_to(&o);
        return hpc_app_finish();
    }
    if (ode_opts_finish(&o) < 0 || ode_params_setup(&o) < 0) hpc_app_exit(HPC_EXIT_USAGE, "%s", hpc_last_cause());
    if (o.join) {
        ode_join(&o, argc, argv);
        return hpc_app_finish();
    }

    double *tgrid = o.tgrid;
    ode_prob_t p;
    ode_make_prob(&o, tgrid, &p);
    p.poll = hpc_workq_poll;

    run_t r = {.o = &o, .p = &p, .kill_rank = -1};
    test_kill_setup(&r);
    int batch_chunks = open_device(&r, &o, &p);
    r.out = ode_out_open(&o, argc, argv, tgrid);
    if (ode_out_complete(r.out)) {
        if (hpc_rank() == 0 && !hpc_app_quiet())
            printf("%s: %s is already complete, nothing to resume\n", ODEGEN_PROG, o.out);
        HPC_CHECK(ode_out_finish(r.out, 0, 1, argc, argv));
        ode_cuda_close(r.cuda);
        return hpc_app_finish();
    }

    batch_t b[2];
    int ok = batch_alloc(&b[0], &o, batch_chunks * o.chunk) == 0 && batch_alloc(&b[1], &o, batch_chunks * o.chunk) == 0;
    hpc_app_agree(ok ? 0 : HPC_EXIT_DATA, "out of memory for 2 x %lld trajectories of buffers",
                  (long long)(batch_chunks * o.chunk));
    /* chunks a killed run wrote but had not yet flagged (between syncs) */
    int64_t recovered = 0;
    hpc_app_agree_rc(ode_out_recover(r.out, &recovered), HPC_EXIT_DATA, "--resume");
    if (recovered) hpc_log(HPC_LOG_INFO, "--resume: %lld chunks written by the last run checked and kept", (long long)recovered);
    int64_t nchunks, ndone;
    const uint8_t *done = ode_out_done(r.out, &nchunks, &ndone);
    HPC_CHECK(hpc_workq_create(hpc_comm_world(), nchunks, done, &r.work));
    int64_t done_traj = 0;
    for (int64_t c = 0; c < nchunks; c++)
        if (done[c])
            done_traj += (c + 1) * o.chunk <= o.n ? o.chunk : o.n - c * o.chunk;
    r.todo = o.n - done_traj;
    if (hpc_rank() == 0) {
        r.prog = hpc_progress_start("odegen", "traj", (uint64_t)o.n);
        hpc_progress_from(r.prog, (uint64_t)done_traj);
    }

    MPI_Barrier(hpc_comm_world());
    double t0 = hpc_wtime();
    compute(&r, b, batch_chunks);
    hpc_workq_free(r.work);
    int bad = r.err[0] != 0;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, hpc_comm_world());
    if (bad) {
        /* a failed write or kernel somewhere: keep the .partial, one line */
        ode_out_finish(r.out, 0, 0, argc, argv);
        hpc_error_clear();
        hpc_app_agree(r.err[0] ? HPC_EXIT_DATA : 0, "%s (%s.partial continues with --resume)", r.err, o.out);
    }
    hpc_log(HPC_LOG_INFO, "%lld trajectories, solver %.3f s, writing %.3f s", (long long)r.mine, r.solve_s,
            r.write_s);
    double wall = hpc_wtime() - t0, wmax = wall;
    MPI_Allreduce(&wall, &wmax, 1, MPI_DOUBLE, MPI_MAX, hpc_comm_world());
    hpc_progress_end(r.prog);

    /* stopped by a signal with chunks left: keep the .partial */
    int64_t mine = r.mine, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT64_T, MPI_SUM, hpc_comm_world());
    if (all < r.todo) {
        ode_out_finish(r.out, wmax, 0, argc, argv);   /* "not completed": .partial kept */
        hpc_error_clear();
        hpc_app_stop_agreed(hpc_comm_world());   /* which signal, for the line */
        hpc_app_exit(HPC_EXIT_STOPPED, "%s after %lld of %lld trajectories; %s.partial continues with "
                     "--resume", hpc_app_stop_why(), (long long)(done_traj + all), (long long)o.n, o.out);
    }
    totals_t tot;
    HPC_CHECK(ode_out_totals(r.out, &tot.failed, &tot.steps, tot.by, &tot.stopped));
    int rc = ode_out_finish(r.out, wmax, 1, argc, argv);
    hpc_app_agree_rc(rc, HPC_EXIT_DATA, "finishing the output");
    summary(&o, &tot, wmax, r.todo, r.solve_s, ndone);

    ode_cuda_close(r.cuda);
    batch_free(&b[0]);
    batch_free(&b[1]);
    return hpc_app_finish();
}
