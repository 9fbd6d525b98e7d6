/* err.c - error codes, the last-error record and the abort path.
 *
 * Errors travel up the stack PETSc-style: the innermost failure records
 * "rank R: call: cause (file:line)", and every HPC_TRY on the way up adds a
 * "from file:line (func)" frame, so the final message shows the path.
 *
 * A leaf: nothing here calls back into the environment or the launcher
 * parsing (which themselves raise errors); env.c tells it the rank.
 */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"

#define HPC_ERRMSG_LEN 2048

static _Thread_local char last_msg[HPC_ERRMSG_LEN];
static _Thread_local size_t last_len;
static _Thread_local char last_cause[1024];
static int err_rank = -1;
static void (*abort_fns[8])(void);
static int nabort;

void hpc_err_set_rank(int rank)
{
    err_rank = rank;
}

/* The rank env.c told us, else MPI's if MPI is up (a program that calls
 * MPI_Init itself), else -1.  MPI calls only: no way back into libhpc. */
int hpc_err_rank(void)
{
    int up = 0, down = 0, r;
    if (err_rank >= 0) return err_rank;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down && MPI_Comm_rank(MPI_COMM_WORLD, &r) == MPI_SUCCESS) return r;
    return -1;
}

/* The host for message prefixes: what env.c records too (gethostname),
 * asked here so that this file needs nothing above it. */
const char *hpc_host_hint(void)
{
    static char host[256];
    if (!host[0] && gethostname(host, sizeof host - 1) != 0) strcpy(host, "?");
    return host;
}

static const char *const names[] = {
    "success",
    "invalid argument",
    "out of memory",
    "MPI error",
    "CUDA error",
    "NCCL error",
    "HDF5 error",
    "I/O error",
    "no GPU",
    "not supported by this build",
    "invalid state",
    "timed out",
    "ranks disagree",
    "bad data",
    "BLAS error",
};

const char *hpc_strerror(int code)
{
    if (code > 0 || code < HPC_ERR_MIN_) return "unknown error";
    return names[-code];
}

const char *hpc_last_error(void)
{
    return last_msg;
}

const char *hpc_last_cause(void)
{
    return last_cause;
}

void hpc_error_clear(void)
{
    last_msg[0] = '\0';
    last_cause[0] = '\0';
    last_len = 0;
}

static void append(const char *fmt, ...)
{
    if (last_len >= sizeof last_msg - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(last_msg + last_len, sizeof last_msg - last_len, fmt, ap);
    va_end(ap);
    if (n > 0) last_len += (size_t)n;
    if (last_len > sizeof last_msg - 1) last_len = sizeof last_msg - 1;
}

/* Strip directories: messages name "env.c:42", not a build path. */
static const char *base(const char *file)
{
    const char *s = strrchr(file, '/');
    return s ? s + 1 : file;
}

int hpc_error_set(int code, const char *file, int line, const char *func,
                  const char *fmt, ...)
{
    /* formatted aside first: the arguments may point into the record
     * (HPC_ERR(code, "--resume: %s", hpc_last_cause()) wraps a cause) */
    char cause[sizeof last_cause];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cause, sizeof cause, fmt, ap);
    va_end(ap);
    hpc_error_clear();
    memcpy(last_cause, cause, sizeof cause);
    int rank = hpc_err_rank();
    if (rank >= 0) append("rank %d: ", rank);
    append("%s: %s (%s:%d)", func, last_cause, base(file), line);
    return code;
}

int hpc_error_push(int code, const char *file, int line, const char *func)
{
    if (last_len == 0) return hpc_error_set(code, file, line, func, "%s", hpc_strerror(code));
    append("\n  from %s:%d (%s)", base(file), line, func);
    return code;
}

int hpc_error_mpi(int mpierr, const char *file, int line, const char *call)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(mpierr, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "MPI error %d", mpierr);
    return hpc_error_set(HPC_ERR_MPI, file, line, call, "%s", msg);
}

void hpc_abort_on_error(int code, const char *file, int line, const char *call)
{
    fprintf(stderr, "rank %d (%s): %s:%d: %s failed: %s\n  %s\n", hpc_err_rank(), hpc_host_hint(),
            base(file), line, call, hpc_strerror(code), hpc_last_error());
    hpc_abort(1);
}

int hpc_at_abort(void (*fn)(void))
{
    if (nabort == (int)(sizeof abort_fns / sizeof abort_fns[0]))
        return HPC_ERR(HPC_ERR_NOMEM, "too many abort callbacks");
    abort_fns[nabort++] = fn;
    return 0;
}

void hpc_abort(int status)
{
    fflush(stdout);
    fflush(stderr);
    /* e.g. ncclCommAbort: a GPU kernel waiting for a dead peer would
     * otherwise keep this process from exiting */
    while (nabort > 0) abort_fns[--nabort]();
    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down) {
        /* let the launcher forward this rank's last line first */
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
        MPI_Abort(MPI_COMM_WORLD, status);
    }
    exit(status);
}
