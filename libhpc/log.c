/* log.c - leveled log lines "[  1.234s] rank 3: ..." on stderr. */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "internal.h"

static int level = -1;
static double t0 = -1;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

hpc_log_level_t hpc_log_level(void)
{
    if (level < 0) {
        static const char *const names[] = {"error", "warn", "info", "debug"};
        const char *s = hpc_setting_value("HPC_LOG", NULL);
        level = HPC_LOG_WARN;
        for (int i = 0; s && i < 4; i++)
            if (!strcasecmp(s, names[i])) level = i;
        t0 = now();
    }
    return (hpc_log_level_t)level;
}

void hpc_log(hpc_log_level_t lvl, const char *fmt, ...)
{
    if ((int)lvl > (int)hpc_log_level()) return;
    int rank = hpc_rank_hint();
    /* info is about the job, not each rank: say it once */
    if (lvl == HPC_LOG_INFO && rank > 0 && hpc_setting_flag("HPC_LOG_ALL") != 1) return;
    static const char *const tags[] = {"error: ", "warning: ", "", "debug: "};
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "[%8.3fs] rank %d: %s%s\n", now() - t0, rank, tags[lvl], line);
}
