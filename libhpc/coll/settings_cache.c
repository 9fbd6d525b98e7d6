/* settings_cache.c - the HPC_* environment the collectives read, read once.
 *
 * hpc_test() is called in tight polling loops, and every collective used
 * to look at several variables; getenv is a linear scan of the
 * environment.  So every setting is read and parsed on first use and kept
 * (collectives are called from one thread: MPI_THREAD_FUNNELED).  A
 * program that changes them with setenv afterwards is not seen; the tests
 * re-read them through a test hook (coll_settings_reload).
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static coll_settings_t set;
static int loaded;

/* the table's value (libhpc/settings.c: defaults and ranges live there;
 * an invalid value was warned of, or refused by the app kit) */
static double env_double(const char *name)
{
    return hpc_setting_double(name);
}

static size_t env_size(const char *name)
{
    double d = hpc_setting_double(name);
    return d >= (double)SIZE_MAX ? SIZE_MAX : (size_t)d;
}

/* HPC_DEBUG is a comma list of areas ("coll", "all", or 1) */
static int env_debug(void)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", hpc_setting_value("HPC_DEBUG", NULL));
    for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
        if (coll_name_eq(t, "coll") || coll_name_eq(t, "all") || strcmp(t, "1") == 0) return 1;
    return 0;
}

/* HPC_COLL_<OP>=ALG, kept as written: select.c parses it (and reports a
 * bad one on every call, as a bad argument would be) */
static void env_force(hpc_coll_t c)
{
    char name[64] = "HPC_COLL_";
    size_t k = strlen(name);
    for (const char *s = hpc_coll_name(c); *s && k < sizeof name - 1; s++)
        name[k++] = (char)toupper((unsigned char)*s);
    name[k] = 0;
    const char *e = getenv(name);
    snprintf(set.force_var[c], sizeof set.force_var[c], "%s", name);
    snprintf(set.force[c], sizeof set.force[c], "%s", e ? e : "");
}

static void load(void)
{
    memset(&set, 0, sizeof set);
    set.segment = env_size("HPC_COLL_SEGMENT");
    set.debug = env_debug();
    set.timeout = env_double("HPC_TIMEOUT");
    set.stall = env_double("HPC_COLL_STALL");
    set.cuda_aware = hpc_setting_flag("HPC_CUDA_AWARE");
    set.yield = hpc_setting_flag("HPC_COLL_YIELD");
    set.alpha = env_double("HPC_COLL_ALPHA");
    set.beta = env_double("HPC_COLL_BETA");
    set.gamma = env_double("HPC_COLL_GAMMA");
    set.alpha_inter = env_double("HPC_COLL_ALPHA_INTER");
    set.beta_inter = env_double("HPC_COLL_BETA_INTER");
    set.alpha_shm = env_double("HPC_COLL_ALPHA_SHM");
    set.beta_shm = env_double("HPC_COLL_BETA_SHM");
    set.single_copy = env_size("HPC_COLL_SINGLE_COPY");     /* off: SIZE_MAX */
    set.pool_max = env_size("HPC_COLL_POOL_MAX");
    set.pool_idle = env_double("HPC_COLL_POOL_IDLE");
    snprintf(set.tuning, sizeof set.tuning, "%s", hpc_setting_value("HPC_COLL_TUNING", NULL));
    for (int c = 0; c < HPC_COLL_COUNT; c++) env_force((hpc_coll_t)c);
    loaded = 1;
}

const coll_settings_t *coll_settings(void)
{
    if (!loaded) load();
    return &set;
}

void coll_settings_reload(void)
{
    unsigned g = set.generation;
    load();
    set.generation = g + 1;
}

size_t coll_segment(void)
{
    return coll_settings()->segment;
}

int coll_debug_enabled(void)
{
    return coll_settings()->debug;
}

double hpc_coll_timeout(void)
{
    return coll_settings()->timeout;
}
