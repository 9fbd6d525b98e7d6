/* settings.c - the HPC_* variables libhpc reads, checked once at start.
 *
 * A misspelt value would otherwise be ignored silently deep inside a run
 * (HPC_LOG=verbose) or fail on one rank mid-job (HPC_COLL_ALLREDUCE=rign);
 * every program instead refuses it up front with one line, exit 2.  Empty
 * values count as unset.  HPC_GPU_BIND is checked by hpc_init itself.
 */
#include "config.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "app_internal.h"
#include "hpc_coll.h"

extern char **environ;

static int bad(char *err, size_t len, const char *var, const char *val, const char *want)
{
    char esc[256];
    snprintf(err, len, "%s='%s': %s", var, hpc_escape(val, esc, sizeof esc), want);
    return -1;
}

static int one_of(const char *v, const char *const *ok)
{
    for (; *ok; ok++)
        if (!strcmp(v, *ok)) return 1;
    return 0;
}

/* the first HPC_COLL_<OP> set to nccl (a device path: app.c checks that
 * every rank can take it) */
static char nccl_var[160];

const char *app_settings_nccl_var(void)
{
    return nccl_var[0] ? nccl_var : NULL;
}

/* HPC_COLL_<OP>=ALG: OP a collective, ALG one it has */
static int check_coll_override(const char *var, const char *val, char *err, size_t len)
{
    char name[64];
    size_t i = 0;
    for (const char *p = var + strlen("HPC_COLL_"); *p && i + 1 < sizeof name; p++)
        name[i++] = (char)tolower((unsigned char)*p);
    name[i] = '\0';
    hpc_coll_t c;
    hpc_alg_t a;
    if (hpc_coll_parse(name, &c) < 0)
        return bad(err, len, var, val, "not a setting of libhpc (no collective by that name)");
    if (hpc_alg_parse(val, &a) < 0 || !hpc_coll_has_alg(c, a)) {
        char why[384], names[256];
        snprintf(why, sizeof why, "%s has no algorithm by that name (it has %s)", hpc_coll_name(c),
                 hpc_coll_alg_names(c, names, sizeof names));
        return bad(err, len, var, val, why);
    }
    if (a == HPC_ALG_NCCL && !nccl_var[0]) snprintf(nccl_var, sizeof nccl_var, "%s", var);
    return 0;
}

/* HPC_DEBUG: a comma list of areas */
static int check_debug(const char *var, const char *val, char *err, size_t len)
{
    static const char *const areas[] = {"coll", "all", "1", NULL};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", val);
    for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
        if (!one_of(t, areas)) return bad(err, len, var, val, "expected a list of: coll, all");
    return 0;
}

static int check_one(const char *var, const char *val, char *err, size_t len)
{
    static const char *const levels[] = {"error", "warn", "info", "debug", NULL};
    static const char *const bools[] = {"0", "1", NULL};
    double d;
    size_t sz;
    if (!strcmp(var, "HPC_LOG"))
        return one_of(val, levels) ? 0 : bad(err, len, var, val, "expected error, warn, info or debug");
    if (!strcmp(var, "HPC_LOG_ALL") || !strcmp(var, "HPC_CUDA_AWARE") ||
        !strcmp(var, "HPC_COLL_YIELD"))
        return one_of(val, bools) ? 0 : bad(err, len, var, val, "expected 0 or 1");
    if (!strcmp(var, "HPC_DEBUG")) return check_debug(var, val, err, len);
    if (!strcmp(var, "HPC_PROGRESS"))
        return hpc_parse_double(val, 0, &d) == 0 && d >= 0 ? 0
               : bad(err, len, var, val, "expected seconds between progress lines in a log, >= 0 "
                     "(0: none; a plain number: 60, not 60s)");
    if (!strcmp(var, "HPC_TIMEOUT"))
        return hpc_parse_double(val, 0, &d) == 0 && d > 0 ? 0
               : bad(err, len, var, val, "expected seconds > 0 (a plain number: 30, not 30s)");
    if (!strcmp(var, "HPC_COLL_SEGMENT"))
        return hpc_parse_size(val, &sz) == 0 && sz >= 64 ? 0
               : bad(err, len, var, val, "expected a size of at least 64 bytes (128K)");
    if (!strcmp(var, "HPC_COLL_ALPHA") || !strcmp(var, "HPC_COLL_BETA") || !strcmp(var, "HPC_COLL_GAMMA") ||
        !strcmp(var, "HPC_COLL_ALPHA_INTER") || !strcmp(var, "HPC_COLL_BETA_INTER") ||
        !strcmp(var, "HPC_COLL_ALPHA_SHM") || !strcmp(var, "HPC_COLL_BETA_SHM") ||
        !strcmp(var, "HPC_COLL_STALL") || !strcmp(var, "HPC_COLL_POOL_IDLE"))
        return hpc_parse_double(val, 0, &d) == 0 && d >= 0 ? 0
               : bad(err, len, var, val, "expected a finite number >= 0");
    if (!strcmp(var, "HPC_COLL_SINGLE_COPY"))
        return !strcmp(val, "off") || hpc_parse_size(val, &sz) == 0 ? 0
               : bad(err, len, var, val, "expected a size in bytes (64K; 0: every message) or off");
    if (!strcmp(var, "HPC_COLL_POOL_MAX"))
        return hpc_parse_size(val, &sz) == 0 ? 0 : bad(err, len, var, val, "expected a size in bytes (256M)");
    if (!strcmp(var, "HPC_NODE_SPLIT")) {
        hpc_node_split_t sp;
        if (hpc_node_split_parse(val, &sp) == 0) return 0;
        hpc_error_clear();
        return bad(err, len, var, val, "expected odd-even, blocks:K (K ranks per node) or none");
    }
    if (!strcmp(var, "HPC_COLL_TUNING")) return hpc_coll_tuning_check(val, err, len);
    if (!strncmp(var, "HPC_COLL_", 9)) return check_coll_override(var, val, err, len);
    return 0;   /* HPC_TEST_*, the batch scripts' HPC_BIN, ...: not ours */
}

int app_settings_check(char *err, size_t len)
{
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "HPC_", 4)) continue;
        const char *eq = strchr(*e, '=');
        if (!eq || !eq[1]) continue;
        char var[128];
        snprintf(var, sizeof var, "%.*s", (int)(eq - *e), *e);
        if (check_one(var, eq + 1, err, len) < 0) return -1;
    }
    return 0;
}
