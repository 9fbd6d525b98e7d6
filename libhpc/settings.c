/* settings.c - every HPC_* environment variable hpckit reads, in one
 * table (after MPICH's CVAR blocks: name, type, default, range, help).
 *
 * Rows are declared by their owner where it has one of its own (as
 * MPICH's CVAR blocks sit beside their readers and are gathered into one
 * table): gpu.c's and node.c's are macros beside their declarations in
 * internal.h (HPC_GPU_SETTINGS, HPC_NODE_SETTINGS), the collectives'
 * are coll/settings_rows.h, which also makes their cache's fields.  This
 * file expands them, in the order hpc-info --settings and the README list
 * them, and keeps the rest: the small readers of the core (log, modules,
 * finalize, BLAS, debug) and those above it or outside C (programs, the
 * drop-in, batch scripts, tests), which hpc_init's unknown-name check
 * must know before they run.  What stays here is the types, the parsers,
 * the lookup and the nearest-name suggestion: a leaf of the core.
 *
 * The library, the programs, the drop-in and the batch scripts all read
 * their settings through this table: one parser per type, one range per
 * setting, one text for --help, hpc-info --settings and the README
 * (docs/settings-table.sh makes the README's table from hpc-info's output;
 * tests/settings.sh checks they agree).  A name that starts with HPC_ and
 * is not in the table is a typo until shown otherwise (HPC_TIMEUOT would
 * otherwise do nothing, silently): hpc_settings_warn (settings_warn.c)
 * says so once.  This file logs nothing: it is below log.c, which reads
 * HPC_LOG through it.
 *
 * Values are read from the environment at each call (getenv): callers on
 * hot paths keep what they read (coll/settings_cache.c reads once).
 */
#include "config.h"
#include "hpc.h"
#include "internal.h"
#include "coll/colls.h"
#include "coll/settings_rows.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static const hpc_setting_t table[] = {
    /* libhpc's core */
    {"HPC_LOG", HPC_SET_CHOICE, "warn", 0, 0, "error,warn,info,debug", "libhpc",
     "log level; lines are [elapsed] rank R: ..., info from rank 0 only", NULL},
    {"HPC_LOG_ALL", HPC_SET_FLAG, "0", 0, 1, NULL, "libhpc", "1: info lines from every rank", NULL},
    HPC_GPU_SETTINGS        /* gpu.c's (internal.h) */
    {"HPC_NCCL_LIBRARY", HPC_SET_TEXT, "libnccl.so.2", 0, 0, "LIB", "libhpc",
     "the NCCL the GPU module opens: a name the loader searches (and the module's RUNPATH), or a path",
     NULL},
    HPC_NODE_SETTINGS       /* node.c's (internal.h) */
    {"HPC_MODULE_DIR", HPC_SET_TEXT, "", 0, 0, "DIR", "libhpc",
     "where the GPU modules are (default: lib/hpckit beside libhpc-core)", NULL},
    {"HPC_BLAS_KERNEL", HPC_SET_CHOICE, "auto", 0, 0, "auto,off", "programs",
     "auto: a program whose OpenBLAS runs a kernel narrower than the CPU allows restarts itself with "
     "OPENBLAS_CORETYPE set to the widest the CPU runs (a user's OPENBLAS_CORETYPE wins); off: never", NULL},
    {"HPC_BLAS_RESTARTED", HPC_SET_TEXT, "", 0, 0, "KERNEL", "programs",
     "set by a program for the copy of itself it restarts (OpenBLAS's own kernel); not for users", NULL},
    {"HPC_DEBUG", HPC_SET_LIST, "", 0, 0, "coll,all,1", "libhpc",
     "coll: a check before every collective that all ranks call the same one", NULL},
    {"HPC_FINALIZE", HPC_SET_CHOICE, "auto", 0, 0, "auto,mpi,quiet", "libhpc",
     "the end of MPI: quiet skips MPI_Finalize after closing HDF5 files, flushing and a barrier; auto: "
     "quiet where MPI_Finalize hangs (MPICH < 4.2 ch4:ucx, ranks on several nodes)", NULL},
    /* the collectives: their rows, and one HPC_COLL_<OP> per collective
     * (coll/settings_rows.h) */
    COLL_SETTINGS(COLL_SETTING_ROW)
    COLL_TABLE(COLL_FORCE_ROW)
    /* the programs (the app kit) and the drop-in */
    {"HPC_PROGRESS", HPC_SET_SECONDS, "60", 0, INFINITY, NULL, "programs",
     "seconds between progress lines where neither stderr nor the launcher's is a terminal (0: none)", NULL},
    {"HPC_ODEGEN_CC", HPC_SET_TEXT, "cc", 0, 0, "COMMAND", "programs",
     "hpc-odegen --system-file: the C compiler (GCC or Clang) that compiles a system file", NULL},
    {"HPC_ODEGEN_CACHE", HPC_SET_TEXT, "", 0, 0, "DIR", "programs",
     "hpc-odegen: compiled systems and GPU kernels (default $XDG_CACHE_HOME/hpckit/odegen or "
     "~/.cache/hpckit/odegen; one folder every node sees)", NULL},
    {"HPC_MPI_VERBOSE", HPC_SET_FLAG, "0", 0, 1, NULL, "drop-in",
     "libhpc-mpi.so: at MPI_Finalize, the calls it served and passed on", NULL},
    {"HPC_MPI_SMALL", HPC_SET_BYTES, "8K", 0, INFINITY, NULL, "drop-in",
     "libhpc-mpi.so: on one node, calls of fewer bytes go to MPI's own collective where libhpc has no "
     "shared-memory path for them (a flat point-to-point schedule, a nonblocking call; 0: never)", NULL},
    /* the batch scripts (read by the shell; listed so that they are not
     * taken for typos, and documented with the rest) */
    {"HPC_BIN", HPC_SET_TEXT, "", 0, 0, "DIR", "batch scripts",
     "the programs' folder (the modulefile sets it)", NULL},
    {"HPC_BATCH_DIR", HPC_SET_TEXT, "", 0, 0, "DIR", "batch scripts",
     "the scripts' own folder (the modulefile sets it)", NULL},
    {"HPC_NP", HPC_SET_INT, "", 1, 1 << 30, NULL, "batch scripts",
     "ranks outside Slurm (default: the cores)", NULL},
    {"HPC_MAX_REQUEUE", HPC_SET_INT, "20", 0, 1 << 30, NULL, "batch scripts",
     "requeue a job at most this many times", NULL},
    {"HPC_SRUN_MPI", HPC_SET_TEXT, "", 0, 0, "PLUGIN", "batch scripts",
     "srun --mpi plugin (default: pmi2 for MPICH, pmix for Open MPI where Slurm has it)", NULL},
    {"HPC_ODEGEN_JOIN", HPC_SET_FLAG, "1", 0, 1, NULL, "batch scripts",
     "odegen.sh: 0: an array's task 0 does not join the shards (pipeline.sh joins)", NULL},
    /* tests: the harness's and the programs' test hooks */
    {"HPC_MPI_FLAVOR", HPC_SET_CHOICE, "", 0, 0, "mpich,openmpi", "tests",
     "the build's MPI, for the test scripts (make check sets it)", NULL},
    {"HPC_TEST_*", HPC_SET_TEXT, "", 0, 0, NULL, "tests", "the test harness (tests/)", NULL},
    {"HPC_*_TEST_*", HPC_SET_TEXT, "", 0, 0, NULL, "tests", "the programs' test hooks", NULL},
};
enum { NROWS = sizeof table / sizeof table[0] };

int hpc_settings_count(void)
{
    return NROWS;
}

const hpc_setting_t *hpc_setting_at(int i)
{
    return i >= 0 && i < NROWS ? &table[i] : NULL;
}

/* name matches pat, where '*' in pat stands for one or more characters */
static int match(const char *pat, const char *name)
{
    if (!*pat) return !*name;
    if (*pat == '*') {
        for (const char *n = name; *n; n++)
            if (match(pat + 1, n + 1)) return 1;
        return 0;
    }
    return *pat == *name && match(pat + 1, name + 1);
}

const hpc_setting_t *hpc_setting_find(const char *name)
{
    for (int i = 0; name && i < NROWS; i++)
        if (match(table[i].name, name)) return &table[i];
    return NULL;
}

static int in_list(const char *v, const char *list, size_t n)
{
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == n && !strncasecmp(p, v, n)) return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

static int check_number(const hpc_setting_t *s, const char *v)
{
    double d;
    if (hpc_parse_double(v, 0, &d) < 0) d = NAN;   /* its cause is replaced below */
    if (d >= s->min && d <= s->max) return 0;
    if (s->type == HPC_SET_SECONDS)
        return HPC_ERR(HPC_ERR_ARG, "expected seconds >= %g (a plain number: 30, not 30s)", s->min);
    return HPC_ERR(HPC_ERR_ARG, "expected a finite number >= %g%s%s", s->min, s->values ? " in " : "",
                   s->values ? s->values : "");
}

static int check_bytes(const hpc_setting_t *s, const char *v)
{
    size_t z;
    if (s->values && !strcmp(v, s->values)) return 0;      /* "off" */
    if (hpc_parse_size(v, &z) == 0 && (double)z >= s->min) return 0;
    return HPC_ERR(HPC_ERR_ARG, "expected a size in bytes >= %g (%s)%s%s", s->min, s->def,
                   s->values ? " or " : "", s->values ? s->values : "");
}

static int check_int(const hpc_setting_t *s, const char *v)
{
    int64_t k;
    if (hpc_parse_int64(v, &k) == 0 && k >= s->min && k <= s->max) return 0;
    return HPC_ERR(HPC_ERR_ARG, "expected an integer from %g to %g", s->min, s->max);
}

static int check_list(const hpc_setting_t *s, const char *v)
{
    for (const char *p = v; *p;) {
        size_t n = strcspn(p, ", ");
        if (n && !in_list(p, s->values, n)) return HPC_ERR(HPC_ERR_ARG, "expected a list of: %s", s->values);
        p += n + (p[n] != 0);
    }
    return 0;
}

/* 0, or HPC_ERR_ARG with the cause "expected ..." (what the value should
 * be; hpc_setting_check puts the name and the value before it) */
static int check_value(const hpc_setting_t *s, const char *v)
{
    switch (s->type) {
    case HPC_SET_FLAG:
        if (!strcmp(v, "0") || !strcmp(v, "1")) return 0;
        return HPC_ERR(HPC_ERR_ARG, "expected 0 or 1");
    case HPC_SET_SECONDS:
    case HPC_SET_NUMBER: return check_number(s, v);
    case HPC_SET_BYTES: return check_bytes(s, v);
    case HPC_SET_INT: return check_int(s, v);
    case HPC_SET_CHOICE:
        if (in_list(v, s->values, strlen(v))) return 0;
        return HPC_ERR(HPC_ERR_ARG, "expected one of %s", s->values);
    case HPC_SET_LIST: return check_list(s, v);
    case HPC_SET_TEXT: return s->check ? s->check(v) : 0;
    }
    return 0;
}

/* the one row a misspelt name most likely meant: the fewest single-letter
 * edits, at most two */
static const char *nearest(const char *name)
{
    const char *best = NULL;
    size_t bestd = 3;
    for (int i = 0; i < NROWS; i++) {
        const char *t = table[i].name;
        if (strchr(t, '*')) continue;
        size_t d = hpc_edit_distance(name, t);
        if (d < bestd) bestd = d, best = t;
    }
    return best;
}

int hpc_setting_check(const char *name, const char *value)
{
    const hpc_setting_t *s = hpc_setting_find(name);
    if (!s) {
        const char *near = nearest(name);
        if (near)
            return HPC_ERR(HPC_ERR_UNSUPPORTED, "%s is not a setting of hpckit: did you mean %s? (hpc-info --settings)",
                           name, near);
        return HPC_ERR(HPC_ERR_UNSUPPORTED, "%s is not a setting of hpckit (hpc-info --settings lists them)", name);
    }
    if (!value || !*value) return 0;    /* empty: unset */
    char esc[256];
    if (check_value(s, value) == 0) return 0;
    /* wraps the cause: HPC_ERR formats before it replaces the record */
    return HPC_ERR(HPC_ERR_ARG, "%s='%s': %s", name, hpc_escape(value, esc, sizeof esc), hpc_last_cause());
}

const char *hpc_setting_value(const char *name, const char **from)
{
    const hpc_setting_t *s = hpc_setting_find(name);
    const char *v = getenv(name);
    if (v && *v && s) {
        if (check_value(s, v) == 0) {
            if (from) *from = "environment";
            return v;
        }
        hpc_error_clear();      /* the default is used: not the caller's error */
    }
    if (from) *from = v && *v ? "default (the environment's value is not valid)" : "default";
    return s && s->def ? s->def : "";
}

double hpc_setting_double(const char *name)
{
    double d = 0;
    const char *v = hpc_setting_value(name, NULL);
    size_t z;
    const hpc_setting_t *s = hpc_setting_find(name);
    if (s && s->type == HPC_SET_BYTES) {
        if (s->values && !strcmp(v, s->values)) return INFINITY;
        return hpc_parse_size(v, &z) == 0 ? (double)z : (hpc_error_clear(), 0);
    }
    if (hpc_parse_double(v, 0, &d) < 0) hpc_error_clear();
    return d;
}

int hpc_setting_flag(const char *name)
{
    const char *v = hpc_setting_value(name, NULL);
    return *v ? atoi(v) != 0 : -1;
}

const char *hpc_file_kind(unsigned mode)
{
    return S_ISDIR(mode) ? "a folder" : S_ISFIFO(mode) ? "a FIFO" : S_ISSOCK(mode) ? "a socket"
           : S_ISCHR(mode) ? "a character device" : S_ISBLK(mode) ? "a block device" : "not a file";
}

int hpc_setting_fopen(const char *var, const char *path, FILE **out)
{
    *out = NULL;
    /* O_NONBLOCK: opening a FIFO returns at once, and fstat tells what
     * was opened (no window between a check and the open) */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return HPC_ERR(HPC_ERR_IO, "%s=%s: cannot open it (%s)", var, path, strerror(errno));
    struct stat st = {0};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int rc = HPC_ERR(HPC_ERR_ARG, "%s=%s: not a regular file (%s)", var, path, hpc_file_kind(st.st_mode));
        close(fd);
        return rc;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "r");
    if (!f) {
        int rc = HPC_ERR(HPC_ERR_NOMEM, "%s=%s: %s", var, path, strerror(errno));
        close(fd);
        return rc;
    }
    *out = f;
    return 0;
}
