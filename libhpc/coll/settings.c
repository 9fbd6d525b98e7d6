/* settings.c - the HPC_* environment the collectives read, read once.
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

static double env_double(const char *name, double def, double min)
{
    const char *e = getenv(name);
    double v;
    if (e && *e && hpc_parse_double(e, 0, &v) == 0 && v >= min) return v;
    return def;
}

static size_t env_size(const char *name, size_t def, size_t min)
{
    const char *e = getenv(name);
    size_t v;
    if (e && *e && hpc_parse_size(e, &v) == 0 && v >= min) return v;
    return def;
}

/* HPC_COLL_SINGLE_COPY: the smallest message shm moves by single copy
 * (bytes; default 64K), or "off" (never) */
static size_t env_single_copy(void)
{
    const char *e = getenv("HPC_COLL_SINGLE_COPY");
    if (e && !strcmp(e, "off")) return SIZE_MAX;
    return env_size("HPC_COLL_SINGLE_COPY", (size_t)64 << 10, 0);
}

/* -1 unset, else 0 or 1 */
static int env_flag(const char *name)
{
    const char *e = getenv(name);
    return e && *e ? atoi(e) != 0 : -1;
}

/* HPC_DEBUG is a comma list of areas ("coll", "all", or 1) */
static int env_debug(void)
{
    const char *e = getenv("HPC_DEBUG");
    if (!e || !*e) return 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", e);
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
    set.segment = env_size("HPC_COLL_SEGMENT", 128 * 1024, 64);
    set.debug = env_debug();
    set.timeout = env_double("HPC_TIMEOUT", 0, 0);
    set.stall = env_double("HPC_COLL_STALL", 1, 0);
    set.cuda_aware = env_flag("HPC_CUDA_AWARE");
    set.yield = env_flag("HPC_COLL_YIELD");
    /* one shared-memory message ~2 us; ~5 GB/s copy; ~4 GB/s reduce */
    set.alpha = env_double("HPC_COLL_ALPHA", 2e-6, 0);
    set.beta = env_double("HPC_COLL_BETA", 2e-10, 0);
    set.gamma = env_double("HPC_COLL_GAMMA", 2.5e-10, 0);
    /* between nodes: ~5 us per message, ~2.5 GB/s (a 25 Gb/s link) */
    set.alpha_inter = env_double("HPC_COLL_ALPHA_INTER", 5e-6, 0);
    set.beta_inter = env_double("HPC_COLL_BETA_INTER", 4e-10, 0);
    /* through a node's shared memory: ~0.2 us to hand a flag to another
     * core; one core copies ~8 GB/s */
    set.alpha_shm = env_double("HPC_COLL_ALPHA_SHM", 2e-7, 0);
    set.beta_shm = env_double("HPC_COLL_BETA_SHM", 1.25e-10, 0);
    set.single_copy = env_single_copy();
    set.pool_max = env_size("HPC_COLL_POOL_MAX", (size_t)256 << 20, 0);
    set.pool_idle = env_double("HPC_COLL_POOL_IDLE", 10, 0);
    const char *t = getenv("HPC_COLL_TUNING");
    snprintf(set.tuning, sizeof set.tuning, "%s", t ? t : "");
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
