/* exit.c - leave a program with one line, and who the program is.
 *
 * The exits, for every program alike:
 *   hpc_app_exit   every rank knows (the same argv): rank 0 says it;
 *   hpc_app_agree  only some ranks know (a file one rank could not read):
 *                  an allreduce finds the lowest failing rank, which says
 *                  it, and all ranks leave with its status;
 *   hpc_app_fatal  this rank knows and the others may be anywhere, inside a
 *                  collective: say it and MPI_Abort.
 * A file below app.c (start, finish) and stop.c (whose agreement carries
 * a failure kept for later), so that neither needs the other.
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

const char *hpc_app_name(void)
{
    return the_app ? the_app->name : "hpc";
}

int hpc_app_quiet(void)
{
    return quiet;
}

void app_exit_init(const hpc_app_t *app, int is_quiet)
{
    the_app = app;
    quiet = is_quiet;
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

HPC_NORETURN void app_leave(int status)
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

void app_agree_or_leave(int status, const char *msg)
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
    app_leave(low[1]);
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
    app_agree_or_leave(status, msg);
}

void hpc_app_agree_rc(int rc, int status, const char *what)
{
    char msg[1024] = "";
    if (rc < 0)
        snprintf(msg, sizeof msg, "%s%s%s", what ? what : "", what ? ": " : "", hpc_last_cause());
    app_agree_or_leave(rc < 0 ? status : 0, msg);
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

void app_fail_settle(void)
{
    app_agree_or_leave(later_status, later_msg);
}

int app_fail_pending(void)
{
    return later_status;
}

void app_fail_agree(void)
{
    /* some rank has one: every rank is here, so this leaves on all */
    app_agree_or_leave(later_status, later_msg);
    app_leave(HPC_EXIT_DATA);   /* not reached: some rank had a failure */
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
    app_leave(status);
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
