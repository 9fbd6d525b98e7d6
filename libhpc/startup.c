/* startup.c - HPC_TIMEOUT over the start-up: MPI_Init and what hpc_init
 * (or the drop-in's MPI_Init) does collectively after it.
 *
 * The collectives' watchdog (coll/request.c) needs MPI; a rank stopped or
 * lost before MPI is up leaves every other rank inside MPI_Init, waiting
 * for it for ever.  So the start-up has a watchdog of its own that needs
 * no MPI: a thread armed before MPI_Init that, unless disarmed in time,
 * writes one line and ends the process with _exit(1) - the launcher then
 * ends the job (mpiexec, mpirun and srun take a rank that exits without
 * MPI_Finalize for a failed job).  Armed only where HPC_TIMEOUT > 0; the
 * whole start-up counts as one collective.
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
static pthread_t thread;
static int armed, done, rank = -1;
static double limit;
static const char *stage = "";

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
    while (!done && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&cv, &mu, &at);
    if (done) {
        pthread_mutex_unlock(&mu);
        return NULL;
    }
    char line[512];
    int n = snprintf(line, sizeof line,
                     "hpc: rank %d: watchdog (HPC_TIMEOUT=%g s): the start-up (%s) not finished after %.1f s; "
                     "a rank stopped, lost or not started?\n", rank, limit, stage, now() - t0);
    /* write(2), not stdio: the main thread may hold stderr's lock */
    if (n > 0 && write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0) {
        /* nothing left to tell it with */
    }
    _exit(1);
}

void hpc_startup_watch(const char *what)
{
    pthread_mutex_lock(&mu);
    stage = what;
    if (armed || done) {
        pthread_mutex_unlock(&mu);
        return;
    }
    limit = hpc_setting_double("HPC_TIMEOUT");
    if (limit > 0 && limit < 1e9) {
        rank = which_rank();
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&cv, &ca);
        pthread_condattr_destroy(&ca);
        armed = pthread_create(&thread, NULL, watch, NULL) == 0;
    }
    pthread_mutex_unlock(&mu);
}

void hpc_startup_done(void)
{
    pthread_mutex_lock(&mu);
    int join = armed && !done;
    done = 1;
    if (join) pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    if (join) pthread_join(thread, NULL);
}
