/* stop.c - stop cleanly at a step boundary on SIGUSR1 or SIGTERM.
 *
 * Slurm sends SIGUSR1 (--signal) before the time limit and SIGTERM on
 * preemption or scancel; a signal may reach only some ranks.  The handler
 * only sets a flag; the program asks hpc_app_stop_agreed() at a step
 * boundary, an allreduce, so all ranks stop after the same step.
 */
#include "config.h"
#include <signal.h>
#include <string.h>
#include "app_internal.h"

static volatile sig_atomic_t requested;

static void on_signal(int sig)
{
    (void)sig;
    requested = 1;
}

void app_stop_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int hpc_app_stop_requested(void)
{
    return requested != 0;
}

void hpc_app_stop_raise(void)
{
    requested = 1;
}

int hpc_app_stop_agreed(MPI_Comm comm)
{
    int mine = requested != 0, any = mine;
    if (MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) return mine;
    return any;
}
