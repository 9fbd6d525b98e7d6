/* app.c - start and finish a program, and its options key.  The exits
 * (hpc_app_exit, _agree, _fatal, a failure kept for later) are exit.c's.
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

static char *key;

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

void hpc_app_start(const hpc_app_t *app, int *argc, char ***argv)
{
    app_exit_init(app, 0);
    app_blas_restart(argv ? *argv : NULL);   /* before MPI: may exec */
    hpc_settings_strict();      /* app_settings_check refuses bad values */
    int rc = hpc_init(argc, argv);
    if (rc < 0) {
        /* only the ranks that failed hold a reason; the lowest says it */
        int here = hpc_init_failed_here();
        /* a bad setting, no GPU, the wrong launcher: usage */
        int status = rc == HPC_ERR_ARG || rc == HPC_ERR_NOGPU || rc == HPC_ERR_MISMATCH ? HPC_EXIT_USAGE
                                                                                       : HPC_EXIT_DATA;
        app_agree_or_leave(here ? status : 0, hpc_last_cause());
        app_agree_or_leave(HPC_EXIT_DATA, "start-up failed");   /* not reached */
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
    int quiet = 0;
    int v = app_opts_parse(app, argc ? *argc : 0, argv ? *argv : NULL, &quiet);
    app_exit_init(app, quiet);
    if (v < 0) hpc_app_exit(HPC_EXIT_USAGE, "%s", hpc_last_cause());
    if (v > 0) {
        if (hpc_rank() == 0 && v == 1) app_opts_help(app, stdout);
        if (hpc_rank() == 0 && v == 2) printf("%s (hpckit %s)\n", app->name, hpc_version());
        if (hpc_rank() == 0 && v == 3) app_opts_list(app, stdout);
        app_leave(HPC_EXIT_OK);
    }
    key = app_opts_key(app);
    app_stop_install();
}

int hpc_app_finish(void)
{
    /* a failure kept for later ends the job now, on every rank */
    app_fail_settle();
    free(key);
    key = NULL;
    app_opts_free();
    int rc = hpc_finalize();
    return rc < 0 ? HPC_EXIT_DATA : HPC_EXIT_OK;
}
