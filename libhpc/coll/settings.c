/* settings.c - the HPC_* environment the collectives read. */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t coll_segment(void)
{
    static size_t seg = 0;
    if (!seg) {
        const char *e = getenv("HPC_COLL_SEGMENT");
        size_t v = 0;
        if (e && *e && hpc_parse_size(e, &v) == 0 && v >= 64) seg = v;
        else seg = 128 * 1024;
    }
    return seg;
}

int coll_debug_enabled(void)
{
    /* HPC_DEBUG is a comma list of areas ("coll", "all"); read each call so
     * tests can switch it, cheap next to any collective. */
    const char *e = getenv("HPC_DEBUG");
    if (!e || !*e) return 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", e);
    for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
        if (coll_name_eq(t, "coll") || coll_name_eq(t, "all") || strcmp(t, "1") == 0) return 1;
    return 0;
}

double coll_timeout(void)
{
    const char *e = getenv("HPC_TIMEOUT");
    double v = 0;
    if (e && *e && hpc_parse_double(e, &v) == 0 && v > 0) return v;
    return 0;
}

