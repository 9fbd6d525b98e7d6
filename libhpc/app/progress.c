/* progress.c - one redrawn line with count, rate and ETA on rank 0.
 *
 * Shown only where a person is watching (stderr is a terminal) or when
 * HPC_PROGRESS=1 asks for it (then each update is a new line, for logs);
 * never with --quiet or HPC_PROGRESS=0.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hpc_app.h"
#include "internal.h"

struct hpc_progress {
    char what[64], unit[16];
    uint64_t total;
    double t0, last;
    int tty;
};

hpc_progress_t *hpc_progress_start(const char *what, const char *unit, uint64_t total)
{
    const char *force = getenv("HPC_PROGRESS");
    int tty = isatty(STDERR_FILENO);
    int want = force && *force ? !strcmp(force, "1") : tty;
    if (hpc_rank_hint() > 0 || hpc_app_quiet() || !want) return NULL;
    hpc_progress_t *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    snprintf(p->what, sizeof p->what, "%s", what);
    snprintf(p->unit, sizeof p->unit, "%s", unit);
    p->total = total;
    p->t0 = p->last = hpc_wtime();
    p->tty = tty;
    return p;
}

void hpc_progress_update(hpc_progress_t *p, uint64_t done)
{
    if (!p) return;
    double t = hpc_wtime();
    if (t - p->last < 0.5 && done < p->total) return;
    p->last = t;
    double el = t - p->t0, rate = el > 0 ? done / el : 0;
    char r[32], eta[32] = "?";
    hpc_format_count(rate, r, sizeof r);
    if (rate > 0 && p->total >= done) snprintf(eta, sizeof eta, "%.1fs", (p->total - done) / rate);
    fprintf(stderr, "%s%s: %llu/%llu %s (%.1f%%) %s %s/s ETA %s%s", p->tty ? "\r" : "", p->what,
            (unsigned long long)done, (unsigned long long)p->total, p->unit,
            p->total ? 100.0 * done / p->total : 100.0, r, p->unit, eta, p->tty ? "\033[K" : "\n");
    fflush(stderr);
}

void hpc_progress_end(hpc_progress_t *p)
{
    if (!p) return;
    if (p->tty) fprintf(stderr, "\r\033[K");
    fflush(stderr);
    free(p);
}
