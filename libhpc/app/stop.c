/* stop.c - stop cleanly at a step boundary on SIGUSR1, SIGTERM or Ctrl-C.
 *
 * Slurm sends SIGUSR1 (--signal) before the time limit and SIGTERM on
 * preemption or scancel; a signal may reach only some ranks.  The handler
 * only sets a flag; the program asks hpc_app_stop_agreed() at a step
 * boundary, an allreduce, so all ranks stop after the same step.
 *
 * Ctrl-C (SIGINT) is the same request from a person: the first one stops
 * at the next agreed step, like SIGTERM, and the run leaves its resumable
 * state; a second one ends the rank at once (the default action of SIGINT,
 * re-raised: the launcher then ends every rank).  A second SIGINT within
 * INT_SAME seconds of the first counts as the same Ctrl-C: a terminal
 * signals the whole foreground process group and a launcher (mpiexec,
 * srun) forwards what it got, so one keypress can arrive twice.
 *
 * Only a program that asks for the flag can stop at a step: until it
 * first asks (hpc_app_stop_requested, _agreed or a vote), SIGINT keeps its
 * default action, so programs without steps (hpc-info, hpc-collbench) and
 * the set-up before a loop still end at once on Ctrl-C.  A SIGINT ignored
 * when the program started (nohup, a background job of a script) stays
 * ignored.
 */
#include "config.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "app_internal.h"
#include "hpc_coll.h"

#define INT_SAME 0.5    /* seconds: a SIGINT this soon after the first is its echo */

enum { STOP_NONE = 0, STOP_SIGNAL = 1, STOP_INTERRUPT = 2 };

static volatile sig_atomic_t requested;   /* STOP_*, the strongest so far */
static volatile sig_atomic_t polled;      /* the program asks: it stops at steps */
static int agreed;                        /* the strongest any rank had, once agreed */
static double first_int;                  /* when the first SIGINT came (handler only) */
static char notice[256], again[256];      /* what rank 0 writes from the handler */
static size_t notice_len, again_len;

static double monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);   /* async-signal-safe */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void on_signal(int sig)
{
    (void)sig;
    if (requested < STOP_SIGNAL) requested = STOP_SIGNAL;
}

/* The default action of sig, now: SIGINT is blocked while its handler
 * runs, so the raised one ends the process as soon as the handler returns. */
static void die_by(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    raise(sig);
}

static void on_interrupt(int sig)
{
    double now = monotonic();
    if (!polled) {
        die_by(sig);
        return;
    }
    if (first_int == 0) {
        first_int = now;
        requested = STOP_INTERRUPT;
        if (notice_len && write(STDERR_FILENO, notice, notice_len) < 0) { /* nothing to do */ }
        return;
    }
    if (now - first_int < INT_SAME) return;
    if (again_len && write(STDERR_FILENO, again, again_len) < 0) { /* nothing to do */ }
    die_by(sig);
}

/* The lines rank 0 writes from the handler, made now (snprintf is not
 * async-signal-safe). */
static void make_lines(void)
{
    int rank0 = hpc_rank_hint() <= 0;
    const char *clear = isatty(STDERR_FILENO) ? "\r\033[K" : "";
    notice_len = again_len = 0;
    if (!rank0) return;
    snprintf(notice, sizeof notice, "%s%s: interrupted: stopping after the current step "
             "(Ctrl-C again to abort at once)\n", clear, hpc_app_name());
    snprintf(again, sizeof again, "%s%s: interrupted again: aborting\n", clear, hpc_app_name());
    notice_len = strlen(notice);
    again_len = strlen(again);
}

void app_stop_install(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    make_lines();
    if (sigaction(SIGINT, NULL, &old) == 0 && old.sa_handler == SIG_IGN) return;
    sa.sa_handler = on_interrupt;
    sigaction(SIGINT, &sa, NULL);
}

int hpc_app_stop_requested(void)
{
    polled = 1;
    return requested != STOP_NONE;
}

void hpc_app_stop_raise(void)
{
    if (requested < STOP_SIGNAL) requested = STOP_SIGNAL;
}

static void note_agreed(int any)
{
    if (any > agreed) agreed = any;
}

int hpc_app_stop_agreed(MPI_Comm comm)
{
    polled = 1;
    /* the stop and a failure kept for later (hpc_app_fail_later), in one
     * allreduce; the failure only where comm is the whole job, since its
     * agreement is over the world */
    int size = 0, world = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    int mine[2] = {requested, size == world && app_fail_pending()}, any[2] = {mine[0], mine[1]};
    /* libhpc's allreduce, not MPI's: a rank lost mid-run (its node dead,
     * its link cut) ends the job under HPC_TIMEOUT's watchdog here too */
    if (hpc_allreduce(mine, any, 2, HPC_INT32, HPC_MAX, comm, HPC_ALG_AUTO) < 0) {
        hpc_error_clear();
        any[0] = mine[0], any[1] = mine[1];
    }
    if (any[1]) app_fail_agree();
    note_agreed(any[0]);
    return any[0] != STOP_NONE;
}

const char *hpc_app_stop_why(void)
{
    int kind = agreed > requested ? agreed : requested;
    return kind == STOP_INTERRUPT ? "interrupted" : "stopped by a signal";
}

/* ---- the agreement without a pause: one vote in flight ---- */
struct hpc_stop_vote {
    MPI_Comm comm;
    hpc_request_t *req;   /* libhpc's: waited for under the watchdog */
    int world;            /* comm holds every rank: failures ride along */
    int mine[2], any[2];  /* the stop, a failure kept for later */
    int pending;
};

int hpc_app_stop_vote_open(MPI_Comm comm, hpc_stop_vote_t **out)
{
    hpc_stop_vote_t *v = calloc(1, sizeof *v);
    if (!v) return HPC_ERR(HPC_ERR_NOMEM, "a stop vote");
    int size = 0, world = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    v->comm = comm;
    v->world = size == world;
    v->req = NULL;
    polled = 1;
    *out = v;
    return 0;
}

int hpc_app_stop_vote(hpc_stop_vote_t *v)
{
    int stop = 0;
    polled = 1;
    if (v->pending) {
        v->pending = 0;
        if (hpc_wait(&v->req) < 0) {
            hpc_error_clear();
            v->any[0] = v->mine[0], v->any[1] = v->mine[1];
        }
        /* as hpc_app_stop_agreed: every rank learns it at the same step */
        if (v->any[1]) app_fail_agree();
        note_agreed(v->any[0]);
        stop = v->any[0] != STOP_NONE;
    }
    if (!stop) {
        v->mine[0] = requested;
        v->mine[1] = v->world && app_fail_pending();
        v->any[0] = v->any[1] = 0;
        /* libhpc's, as hpc_app_stop_agreed's */
        v->pending = hpc_iallreduce(v->mine, v->any, 2, HPC_INT32, HPC_MAX, v->comm, HPC_ALG_AUTO, &v->req) == 0;
        if (!v->pending) hpc_error_clear();
    }
    return stop;
}

void hpc_app_stop_vote_close(hpc_stop_vote_t *v)
{
    if (!v) return;
    if (v->pending && hpc_wait(&v->req) < 0) hpc_error_clear();
    free(v);
}
