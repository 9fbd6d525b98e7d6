/* watch.c - HPC_TIMEOUT over waits the collectives' watchdog cannot see:
 * the start-up (MPI_Init and what hpc_init, or the drop-in's MPI_Init,
 * does collectively after it), and the drop-in's set-up of a communicator
 * inside its first collective call.
 *
 * The collectives' watchdog (coll/request.c) polls its own requests; a
 * rank stopped or lost before MPI is up leaves every other rank inside
 * MPI_Init, and a set-up inside a call waits in MPI's own blocking calls.
 * So these waits have a watchdog that needs no MPI: a thread armed at
 * hpc_watch_begin that, unless hpc_watch_end comes in time, writes one
 * line naming the wait and ends the process with _exit(1) - the launcher
 * then ends the job (mpiexec, mpirun and srun take a rank that exits
 * without MPI_Finalize for a failed job).  Armed only where HPC_TIMEOUT >
 * 0; one wait at a time (a begin while armed names the new stage).
 */
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv;
static int cv_made;
static pthread_t thread;
static int armed, stop, rank = -1;
static double limit;
static const char *what = "", *hint = "";

extern char **environ;

/* this rank as far as it is known: MPI's (hpc_init), else the launcher's */
static int which_rank(void)
{
    int r = hpc_err_rank();
    hpc_launch_t l;
    if (r < 0 && hpc_launch_parse(environ, &l) == 0) r = l.rank;
    return r;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *watch(void *arg)
{
    (void)arg;
    double t0 = now(), end = t0 + limit;
    struct timespec at;
    at.tv_sec = (time_t)end;
    at.tv_nsec = (long)((end - (double)at.tv_sec) * 1e9);
    pthread_mutex_lock(&mu);
    int rc = 0;
    while (!stop && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&cv, &mu, &at);
    if (stop) {
        pthread_mutex_unlock(&mu);
        return NULL;
    }
    char line[768];
    int n = snprintf(line, sizeof line, "hpc: rank %d: watchdog (HPC_TIMEOUT=%g s): %s not finished after %.1f s; %s\n",
                     rank, limit, what, now() - t0, hint);
    /* write(2), not stdio: the main thread may hold stderr's lock */
    if (n > 0 && write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0) {
        /* nothing left to tell it with */
    }
    _exit(1);
}

void hpc_watch_begin(const char *stage, const char *why)
{
    pthread_mutex_lock(&mu);
    what = stage;
    hint = why;
    if (armed) {
        pthread_mutex_unlock(&mu);
        return;
    }
    limit = hpc_setting_double("HPC_TIMEOUT");
    if (limit > 0 && limit < 1e9) {
        if (!cv_made) {
            pthread_condattr_t ca;
            pthread_condattr_init(&ca);
            pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
            pthread_cond_init(&cv, &ca);
            pthread_condattr_destroy(&ca);
            cv_made = 1;
        }
        rank = which_rank();
        stop = 0;
        armed = pthread_create(&thread, NULL, watch, NULL) == 0;
    }
    pthread_mutex_unlock(&mu);
}

void hpc_watch_end(void)
{
    pthread_mutex_lock(&mu);
    int join = armed;
    stop = 1;
    if (join) pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    if (join) pthread_join(thread, NULL);
    pthread_mutex_lock(&mu);
    armed = 0;
    pthread_mutex_unlock(&mu);
}
