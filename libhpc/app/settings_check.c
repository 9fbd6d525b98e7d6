/* settings_check.c - the HPC_* variables libhpc reads, checked once at start.
 *
 * A misspelt value would otherwise be ignored silently deep inside a run
 * (HPC_LOG=verbose) or fail on one rank mid-job (HPC_COLL_ALLREDUCE=rign);
 * every program instead refuses it up front with one line, exit 2.  Empty
 * values count as unset.  The forms are the settings table's
 * (libhpc/settings.c); here is what needs the layers above the core: an
 * algorithm's name (HPC_COLL_<OP>), a tuning file.  Names that are not
 * settings (HPC_COLL_* ones too) are warned of once, with the nearest
 * name, after the values passed.
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

/* HPC_ERR_ARG: "VAR='value': want" */
static int bad(const char *var, const char *val, const char *want)
{
    char esc[256];
    return HPC_ERR(HPC_ERR_ARG, "%s='%s': %s", var, hpc_escape(val, esc, sizeof esc), want);
}

/* the first HPC_COLL_<OP> set to nccl (a device path: app.c checks that
 * every rank can take it) */
static char nccl_var[160];

const char *app_settings_nccl_var(void)
{
    return nccl_var[0] ? nccl_var : NULL;
}

/* HPC_COLL_<OP>=ALG: ALG one that collective c has */
static int check_coll_override(const char *var, const char *val, hpc_coll_t c)
{
    hpc_alg_t a;
    if (hpc_alg_parse(val, &a) < 0 || !hpc_coll_has_alg(c, a)) {
        char why[384], names[256];
        snprintf(why, sizeof why, "%s has no algorithm by that name (it has %s)", hpc_coll_name(c),
                 hpc_coll_alg_names(c, names, sizeof names));
        return bad(var, val, why);
    }
    if (a == HPC_ALG_NCCL && !nccl_var[0]) snprintf(nccl_var, sizeof nccl_var, "%s", var);
    return 0;
}

/* One variable: the table's check (libhpc/settings.c), and what only
 * the layers above the core know: an algorithm's name, a tuning file.
 * One rule for every name: one that is not a setting is warned of with
 * the nearest (hpc_settings_warn), an invalid value of one that is is
 * refused - HPC_COLL_<OP> too: a forced algorithm that does not exist
 * is refused, a misspelt HPC_COLL_ALLREDUC warned of. */
static int check_one(const char *var, const char *val)
{
    if (!strcmp(var, "HPC_COLL_TUNING")) return hpc_coll_tuning_check(val);
    int rc = hpc_setting_check(var, val);
    if (rc == HPC_ERR_ARG) return rc;
    hpc_error_clear();
    if (rc == HPC_ERR_UNSUPPORTED) return 0;   /* unknown names: warned of (hpc_settings_warn) */
    if (!strncmp(var, "HPC_COLL_", 9) && hpc_setting_find(var)->type == HPC_SET_TEXT) {
        hpc_coll_t c;
        char name[64];
        size_t i = 0;
        for (const char *p = var + 9; *p && i + 1 < sizeof name; p++) name[i++] = (char)tolower((unsigned char)*p);
        name[i] = 0;
        if (hpc_coll_parse(name, &c) == 0) return check_coll_override(var, val, c);
        hpc_error_clear();
    }
    return 0;
}

int app_settings_check(void)
{
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "HPC_", 4)) continue;
        const char *eq = strchr(*e, '=');
        if (!eq || !eq[1]) continue;
        char var[128];
        snprintf(var, sizeof var, "%.*s", (int)(eq - *e), *e);
        HPC_TRY(check_one(var, eq + 1));
    }
    if (hpc_rank() == 0) hpc_settings_warn();     /* the values are good: unknown names */
    return 0;
}
