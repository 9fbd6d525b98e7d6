/* settings_warn.c - the one warning about the environment's HPC_*
 * variables: a name the settings table does not know (with the nearest
 * one), or a value it refuses.
 *
 * Apart from settings.c because it logs: log.c reads HPC_LOG and
 * HPC_LOG_ALL through settings.c, so settings.c logging through hpc_warn
 * made a loop settings.c <-> log.c.  settings.c gives its verdicts as
 * errors with causes (hpc_setting_check); this file, above both, turns
 * them into log lines.
 */
#include "config.h"
#include "hpc.h"
#include "internal.h"

#include <stdio.h>
#include <string.h>

extern char **environ;

static int values_checked_by_caller;

void hpc_settings_strict(void)
{
    values_checked_by_caller = 1;
}

/* hpc_init, on rank 0: unless the app kit checks the settings itself */
void settings_init_warn(void)
{
    if (!values_checked_by_caller) hpc_settings_warn();
}

int hpc_settings_warn(void)
{
    static int done;
    if (done) return 0;
    done = 1;
    int n = 0;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "HPC_", 4)) continue;
        const char *eq = strchr(*e, '=');
        if (!eq) continue;
        char var[128];
        snprintf(var, sizeof var, "%.*s", (int)(eq - *e), *e);
        int rc = hpc_setting_check(var, eq + 1);
        if (rc == HPC_ERR_UNSUPPORTED) {
            hpc_warn("%s", hpc_last_cause());
            n++;
        } else if (rc < 0 && !values_checked_by_caller) {
            hpc_warn("%s; using the default", hpc_last_cause());
            n++;
        }
        if (rc < 0) hpc_error_clear();     /* warned of: not this thread's error */
    }
    return n;
}
