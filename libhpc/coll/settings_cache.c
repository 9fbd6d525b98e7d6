/* settings_cache.c - the HPC_* environment the collectives read, read once.
 *
 * hpc_test() is called in tight polling loops, and every collective used
 * to look at several variables; getenv is a linear scan of the
 * environment.  So every setting is read and parsed on first use and kept
 * (collectives are called from one thread: MPI_THREAD_FUNNELED).  A
 * program that changes them with setenv afterwards is not seen; the tests
 * re-read them through a test hook (coll_settings_reload).
 *
 * The settings are settings_rows.h's rows: their fields, defaults and
 * ranges are written there once, and load() fills each field from its
 * row by offsetof (as UCX fills its config structs).
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"
#include "colls.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static coll_settings_t set;
static int loaded;

/* a row of settings_rows.h: where its value goes in coll_settings_t */
#define COLL_SETTING_PLACE(field, NAME, ...) \
    {NAME, offsetof(coll_settings_t, field), sizeof(((coll_settings_t *)0)->field)},
static const struct {
    const char *name;
    size_t off, size;
} places[] = {COLL_SETTINGS(COLL_SETTING_PLACE)};

/* The table's value, in the field's type (settings_rows.h's rows: defaults
 * and ranges live there; an invalid value was warned of, or refused by
 * the app kit, and its default is used). */
static void fill(const char *name, void *dst, size_t size)
{
    const hpc_setting_t *s = hpc_setting_find(name);
    switch (s->type) {
    case HPC_SET_FLAG: *(int *)dst = hpc_setting_flag(name); break;
    case HPC_SET_BYTES: {
        double d = hpc_setting_double(name);   /* off: INFINITY */
        *(size_t *)dst = d >= (double)SIZE_MAX ? SIZE_MAX : (size_t)d;
        break;
    }
    case HPC_SET_TEXT: snprintf(dst, size, "%s", hpc_setting_value(name, NULL)); break;
    default: *(double *)dst = hpc_setting_double(name);   /* SECONDS, NUMBER */
    }
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
static const char *const force_vars[HPC_COLL_COUNT] = {COLL_TABLE(COLL_FORCE_VAR)};

const char *coll_force_var(hpc_coll_t c)
{
    return force_vars[c];
}

static void env_force(hpc_coll_t c)
{
    snprintf(set.force[c], sizeof set.force[c], "%s", hpc_setting_value(force_vars[c], NULL));
}

static void load(void)
{
    memset(&set, 0, sizeof set);
    for (size_t i = 0; i < sizeof places / sizeof places[0]; i++)
        fill(places[i].name, (char *)&set + places[i].off, places[i].size);
    set.debug = env_debug();
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
