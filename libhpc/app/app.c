/* app.c - start and finish a program, and leave it with one line.
 *
 * The exits, for every program alike:
 *   hpc_app_exit   every rank knows (the same argv): rank 0 says it;
 *   hpc_app_agree  only some ranks know (a file one rank could not read):
 *                  an allreduce finds the lowest failing rank, which says
 *                  it, and all ranks leave with its status;
 *   hpc_app_fatal  this rank knows and the others may be anywhere, inside a
 *                  collective: say it and MPI_Abort.
 */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include "app_internal.h"

static const hpc_app_t *the_app;
static int quiet;
static char *key;

const char *hpc_app_name(void)
{
    return the_app ? the_app->name : "hpc";
}

int hpc_app_quiet(void)
{
    return quiet;
}

const char *hpc_app_key(void)
{
    return key ? key : "";
}

void hpc_app_key_add(const char *fmt, ...)
{
    char more[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(more, sizeof more, fmt, ap);
    va_end(ap);
    size_t n = key ? strlen(key) : 0;
    char *k = realloc(key, n + strlen(more) + 2);
    if (!k) return;
    if (!key) k[0] = '\0';
    sprintf(k + n, "%s%s", n ? ";" : "", more);
    key = k;
}

void hpc_app_key_diff(const char *was, const char *now, char *out, size_t len)
{
    /* walk both "name=value;..." lists to the first field that differs */
    while (*was || *now) {
        size_t a = strcspn(was, ";"), b = strcspn(now, ";");
        if (a != b || strncmp(was, now, a)) {
            size_t ea = strcspn(was, "="), eb = strcspn(now, "=");
            if (ea < a && eb < b && ea == eb && !strncmp(was, now, ea))
                snprintf(out, len, "%.*s: %.*s in the file, %.*s now", (int)ea, was,
                         (int)(a - ea - 1), was + ea + 1, (int)(b - eb - 1), now + eb + 1);
            else
                snprintf(out, len, "'%.*s' in the file, '%.*s' now", (int)a, was, (int)b, now);
            return;
        }
        was += a + (was[a] == ';');
        now += b + (now[b] == ';');
    }
    snprintf(out, len, "no difference");
}

/* "NAME: message" as one line on stderr */
static void say(const char *msg)
{
    char esc[2048];
    fprintf(stderr, "%s: %s\n", hpc_app_name(), hpc_escape(msg, esc, sizeof esc));
    fflush(stderr);
}

/* MPICH's mpiexec (hydra 4.0) reports status 0 for every rank it has not
 * reaped yet once it has passed a signal on to the ranks (it takes that for
 * a forced clean-up), so a run stopped by Ctrl-C or SIGUSR1 through
 * mpiexec would look finished.  Its abort path carries the status
 * faithfully: once every rank is done (their state is on disk), rank 0
 * ends the job with MPI_Abort, MPICH's own notice of it silenced - the
 * stop line has said what happened.  The other ranks finish as usual. */
static void stopped_under_hydra(int status)
{
    if (status != HPC_EXIT_STOPPED || !hpc_initialized() || hpc_launcher() != HPC_LAUNCHER_HYDRA) return;
    MPI_Barrier(MPI_COMM_WORLD);
    if (hpc_rank() != 0) return;
    fflush(stdout);
    fflush(stderr);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDERR_FILENO);
    hpc_abort(status);   /* waits for the last lines to reach mpiexec */
}

static HPC_NORETURN void leave(int status)
{
    fflush(stdout);
    fflush(stderr);
    stopped_under_hydra(status);
    if (hpc_initialized()) {
        hpc_finalize();
    } else {
        int up = 0, down = 0;
        MPI_Initialized(&up);
        MPI_Finalized(&down);
        if (up && !down) MPI_Finalize();
    }
    app_opts_free();
    exit(status);
}

/* Collective over MPI_COMM_WORLD (not libhpc's world: hpc_init may have
 * failed).  Returns only when every rank passed status 0.  A failing rank
 * waits at most AGREE_DEADLINE seconds for the others: one of them may be
 * stuck inside a collective that this rank left by its error (an HDF5
 * call), and then the job must end rather than hang.  The others wait at
 * most HPC_TIMEOUT, as in a collective. */
#define AGREE_DEADLINE 60.0

static void agree_or_leave(int status, const char *msg)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int mine[2] = {status ? rank : size, status}, low[2] = {size, 0};
    MPI_Request req;
    MPI_Iallreduce(mine, low, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD, &req);
    double deadline = status ? AGREE_DEADLINE : hpc_coll_timeout();
    if (deadline <= 0) {
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        double t0 = MPI_Wtime();
        int done = 0;
        while (!done) {
            MPI_Test(&req, &done, MPI_STATUS_IGNORE);
            if (!done && MPI_Wtime() - t0 > deadline) {
                if (status) say(msg);
                else fprintf(stderr, "hpc: rank %d: watchdog (HPC_TIMEOUT=%g s): the ranks' agreement "
                             "not finished after %.1f s; some rank is stopped or stuck\n", rank, deadline,
                             MPI_Wtime() - t0);
                hpc_abort(status ? status : HPC_EXIT_DATA);
            }
            if (!done) {
                struct timespec ts = {0, 1000000};
                nanosleep(&ts, NULL);
            }
        }
    }
    if (low[0] == size) return;
    if (low[0] == rank) say(msg);
    leave(low[1]);
}

void hpc_app_agree(int status, const char *fmt, ...)
{
    char msg[1024] = "";
    if (status) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
    }
    agree_or_leave(status, msg);
}

void hpc_app_agree_rc(int rc, int status, const char *what)
{
    char msg[1024] = "";
    if (rc < 0)
        snprintf(msg, sizeof msg, "%s%s%s", what ? what : "", what ? ": " : "", hpc_last_cause());
    agree_or_leave(rc < 0 ? status : 0, msg);
}

/* hpc_app_fail_later's failure, until it is agreed */
static int later_status;
static char later_msg[1024];

void hpc_app_fail_later(int status, const char *fmt, ...)
{
    if (!status || later_status) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(later_msg, sizeof later_msg, fmt, ap);
    va_end(ap);
    later_status = status;
}

int app_fail_pending(void)
{
    return later_status;
}

void app_fail_agree(void)
{
    /* some rank has one: every rank is here, so this leaves on all */
    agree_or_leave(later_status, later_msg);
    leave(HPC_EXIT_DATA);   /* not reached: some rank had a failure */
}

static void vsay(const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    say(msg);
}

void hpc_app_exit(int status, const char *fmt, ...)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsay(fmt, ap);
        va_end(ap);
    }
    leave(status);
}

int hpc_app_test_hook(const char *var, int n, int64_t *vals)
{
    const char *s = getenv(var);
    if (!s || !*s) return 0;
    if (hpc_parse_int64s(s, ":,", vals, n) < 0) {
        char esc[128];
        if (n == 1) hpc_app_exit(HPC_EXIT_USAGE, "%s='%s': expected an integer", var, hpc_escape(s, esc, sizeof esc));
        hpc_app_exit(HPC_EXIT_USAGE, "%s='%s': expected %d integers separated by ':'", var,
                     hpc_escape(s, esc, sizeof esc), n);
    }
    return n;
}

void hpc_app_fatal(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
    hpc_abort(status);
}

void hpc_app_summary(const char *fmt, ...)
{
    if (quiet || hpc_rank() > 0) return;
    va_list ap;
    va_start(ap, fmt);
    printf("%s: ", hpc_app_name());
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

void hpc_app_start(const hpc_app_t *app, int *argc, char ***argv)
{
    the_app = app;
    app_blas_restart(argv ? *argv : NULL);   /* before MPI: may exec */
    hpc_settings_strict();      /* app_settings_check refuses bad values */
    int rc = hpc_init(argc, argv);
    if (rc < 0) {
        /* only the ranks that failed hold a reason; the lowest says it */
        int here = hpc_init_failed_here();
        /* a bad setting, no GPU, the wrong launcher: usage */
        int status = rc == HPC_ERR_ARG || rc == HPC_ERR_NOGPU || rc == HPC_ERR_MISMATCH ? HPC_EXIT_USAGE
                                                                                       : HPC_EXIT_DATA;
        agree_or_leave(here ? status : 0, hpc_last_cause());
        agree_or_leave(HPC_EXIT_DATA, "start-up failed");   /* not reached */
    }
    /* every rank sees the same environment and argv: same verdicts */
    if (app_settings_check() < 0) hpc_app_exit(HPC_EXIT_USAGE, "%s", hpc_last_cause());
    /* HPC_COLL_<OP>=nccl asks for a device path: NCCL and a GPU on every
     * rank, or one line naming what is missing (this rank's own view) */
    const char *nv = app_settings_nccl_var();
    if (nv) {
        const char *no = hpc_have_cuda() && !hpc_have_nccl() ? hpc_nccl_unavailable() : hpc_gpu_unavailable();
        hpc_app_agree(no ? HPC_EXIT_USAGE : 0, "%s=nccl: rank %d (%s): %s", nv, hpc_rank(), hpc_hostname(), no);
    }
    int v = app_opts_parse(app, argc ? *argc : 0, argv ? *argv : NULL, &quiet);
    if (v < 0) hpc_app_exit(HPC_EXIT_USAGE, "%s", hpc_last_cause());
    if (v > 0) {
        if (hpc_rank() == 0 && v == 1) app_opts_help(app, stdout);
        if (hpc_rank() == 0 && v == 2) printf("%s (hpckit %s)\n", app->name, hpc_version());
        if (hpc_rank() == 0 && v == 3) app_opts_list(app, stdout);
        leave(HPC_EXIT_OK);
    }
    key = app_opts_key(app);
    app_stop_install();
}

int hpc_app_finish(void)
{
    /* a failure kept for later ends the job now, on every rank */
    agree_or_leave(later_status, later_msg);
    free(key);
    key = NULL;
    app_opts_free();
    int rc = hpc_finalize();
    return rc < 0 ? HPC_EXIT_DATA : HPC_EXIT_OK;
}
