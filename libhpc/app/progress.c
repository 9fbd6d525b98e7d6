/* progress.c - rank 0's progress line: count, the program's own fields,
 * rate, elapsed time and ETA.
 *
 * Where a person watches the line is redrawn in place at most every
 * 0.5 s: stderr is a terminal, or the launcher's is (mpiexec started by
 * hand passes its ranks' output on through pipes, so rank 0's own stderr
 * is no terminal; the launcher's processes up the parent chain are asked
 * instead).  Elsewhere - in a log, Slurm's output file, a launcher whose
 * output goes to a file - a redrawn line would be noise, and no line at
 * all leaves a long job silent: a new line every HPC_PROGRESS seconds
 * (default 60).  HPC_PROGRESS=0 and --quiet show nothing.  (HPC_PROGRESS=1,
 * which once forced lines into logs, still does: one a second.)
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hpc_app.h"
#include "internal.h"

#define TTY_EVERY 0.5          /* s between redraws on a terminal */
#define LOG_EVERY_DEFAULT 60   /* s between lines in a log */

struct hpc_progress {
    char what[64], unit[16], rate_unit[16];
    double per_item;
    uint64_t total, from;
    double t0, last, every;
    int tty;
    hpc_progress_fields_fn fields;
    void *ctx;
};

/* The launchers' processes between a rank and the person who started it:
 * MPICH's hydra (proxy, mpiexec), Open MPI's (mpirun, orted, prte) */
static int is_launcher(const char *comm)
{
    static const char *const names[] = {"hydra_pmi_proxy", "mpiexec", "mpirun", "orterun", "orted",
                                        "prterun", "prted", "prte", NULL};
    for (int k = 0; names[k]; k++)
        if (!strncmp(comm, names[k], strlen(names[k]))) return 1;
    return 0;
}

/* Is the stderr of the launcher that started this process a terminal?
 * Up the parent chain while the processes are a launcher's (at most 4),
 * none beyond: a shell's terminal does not count when mpiexec's output
 * goes to a file (nohup mpiexec ... > log). */
static int launcher_on_terminal(void)
{
    pid_t pid = getppid();
    for (int depth = 0; depth < 4 && pid > 1; depth++) {
        char path[64], comm[32] = "", fd2[256];
        snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
        FILE *f = fopen(path, "r");
        if (!f) return 0;
        if (!fgets(comm, sizeof comm, f)) comm[0] = '\0';
        fclose(f);
        if (!is_launcher(comm)) return 0;
        snprintf(path, sizeof path, "/proc/%d/fd/2", (int)pid);
        ssize_t n = readlink(path, fd2, sizeof fd2 - 1);
        if (n > 0) {
            fd2[n] = '\0';
            if (!strncmp(fd2, "/dev/pts/", 9) || !strncmp(fd2, "/dev/tty", 8)) return 1;
        }
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        int parent = 0;
        if (!(f = fopen(path, "r"))) return 0;
        /* pid (comm) state ppid: comm may hold spaces and ')' */
        char line[512];
        char *end = fgets(line, sizeof line, f) ? strrchr(line, ')') : NULL;
        fclose(f);
        if (!end || sscanf(end + 1, " %*c %d", &parent) != 1) return 0;
        pid = parent;
    }
    return 0;
}

/* HPC_PROGRESS as seconds (the settings table's; the app kit refused a
 * bad value at start, a program outside the kit gets the default) */
static double log_every(void)
{
    return hpc_setting_double("HPC_PROGRESS");
}

hpc_progress_t *hpc_progress_start(const char *what, const char *unit, uint64_t total)
{
    double every = log_every();
    if (hpc_rank_hint() > 0 || hpc_app_quiet() || every == 0) return NULL;
    hpc_progress_t *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    snprintf(p->what, sizeof p->what, "%s", what);
    snprintf(p->unit, sizeof p->unit, "%s", unit);
    snprintf(p->rate_unit, sizeof p->rate_unit, "%s", unit);
    p->per_item = 1;
    p->total = total;
    p->t0 = p->last = hpc_wtime();
    p->tty = isatty(STDERR_FILENO) || launcher_on_terminal();
    p->every = p->tty ? TTY_EVERY : every;
    return p;
}

void hpc_progress_rate(hpc_progress_t *p, const char *unit, double per_item)
{
    if (!p) return;
    snprintf(p->rate_unit, sizeof p->rate_unit, "%s", unit);
    p->per_item = per_item;
}

void hpc_progress_from(hpc_progress_t *p, uint64_t done)
{
    if (!p) return;
    p->from = done;
}

void hpc_progress_fields(hpc_progress_t *p, hpc_progress_fields_fn fields, void *ctx)
{
    if (!p) return;
    p->fields = fields;
    p->ctx = ctx;
}

/* "8.2s", "3m05s", "2h07m", "3d04h" */
static void duration(double s, char *buf, size_t len)
{
    long long t = (long long)(s + 0.5);
    if (s < 10) snprintf(buf, len, "%.1fs", s);
    else if (t < 60) snprintf(buf, len, "%llds", t);
    else if (t < 3600) snprintf(buf, len, "%lldm%02llds", t / 60, t % 60);
    else if (t < 86400) snprintf(buf, len, "%lldh%02lldm", t / 3600, t % 3600 / 60);
    else snprintf(buf, len, "%lldd%02lldh", t / 86400, t % 86400 / 3600);
}

void hpc_progress_update(hpc_progress_t *p, uint64_t done)
{
    if (!p) return;
    double t = hpc_wtime();
    /* the terminal's line also shows the end; a log has the summary for it */
    if (t - p->last < p->every && !(p->tty && done >= p->total)) return;
    p->last = t;
    double el = t - p->t0, rate = el > 0 && done > p->from ? (double)(done - p->from) / el : 0;
    char r[32], eta[32] = "?", spent[32], mine[512] = "";
    hpc_format_count(rate * p->per_item, r, sizeof r);
    duration(el, spent, sizeof spent);
    if (rate > 0 && p->total >= done) duration((double)(p->total - done) / rate, eta, sizeof eta);
    if (p->fields) {
        mine[0] = ',';
        mine[1] = ' ';
        p->fields(p->ctx, mine + 2, sizeof mine - 2);
        if (!mine[2]) mine[0] = '\0';
    }
    fprintf(stderr, "%s%s: %llu/%llu %s (%.1f%%)%s, %s %s/s, %s elapsed, ETA %s%s", p->tty ? "\r" : "",
            p->what, (unsigned long long)done, (unsigned long long)p->total, p->unit,
            p->total ? 100.0 * done / p->total : 100.0, mine, r, p->rate_unit, spent, eta,
            p->tty ? "\033[K" : "\n");
    fflush(stderr);
}

void hpc_progress_end(hpc_progress_t *p)
{
    if (!p) return;
    if (p->tty) fprintf(stderr, "\r\033[K");
    fflush(stderr);
    free(p);
}
