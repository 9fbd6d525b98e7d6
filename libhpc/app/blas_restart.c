/* blas_restart.c - a program whose OpenBLAS runs a kernel narrower than
 * the CPU allows starts again with OPENBLAS_CORETYPE set (issue 29).
 *
 * OpenBLAS chooses its kernel in its constructor, which runs before
 * main: the only moment a program that links it can choose is before its
 * own start, so the program execs itself, once, before MPI_Init (the
 * launcher's connection is then still only its environment and inherited
 * descriptors, which exec keeps; the pid stays the same for the
 * launcher).  The guard HPC_BLAS_RESTARTED makes it once; the restarted
 * copy removes it and OPENBLAS_CORETYPE again, so the program's children
 * see the user's environment.  Why not dlopen: docs/architecture.md. */
#include "config.h"
#include <errno.h>
#include <unistd.h>
#include "app_internal.h"

void app_blas_restart(char **argv)
{
    if (!argv || !argv[0] || !hpc_blas_restart_wanted()) return;
    fflush(NULL);
    execv("/proc/self/exe", argv);
    hpc_blas_restart_failed(errno);   /* hpc_blas_describe says why */
}
