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
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include "app_internal.h"

/* Started as `ld.so [OPTIONS] PROGRAM` (a loader run by hand, or a tool
 * that does so): /proc/self/exe is the loader, and exec'ing it with the
 * program's argv would lose the loader's options and the program. */
static int started_by_loader(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = '\0';
    const char *base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    return strncmp(base, "ld-linux", 8) == 0 || strncmp(base, "ld.so", 5) == 0 || strncmp(base, "ld64.so", 7) == 0;
}

void app_blas_restart(char **argv)
{
    if (!argv || !argv[0] || !hpc_blas_restart_wanted()) return;
    if (started_by_loader()) {
        hpc_blas_restart_failed("started through the dynamic loader (ld.so PROGRAM): set OPENBLAS_CORETYPE yourself");
        return;
    }
    fflush(NULL);
    execv("/proc/self/exe", argv);
    hpc_blas_restart_failed(strerror(errno));   /* hpc_blas_describe says why */
}
