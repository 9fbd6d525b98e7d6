/* mem.c - "will it fit?" before a large allocation.
 *
 * malloc on Linux rarely fails outright: an allocation larger than the
 * node's memory is granted and the job dies later from the OOM killer,
 * or one rank's malloc fails while the others sit in a collective.  A
 * program that knows how much it will need asks first, on every node,
 * and refuses in one line.
 */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include "app_internal.h"

int hpc_mem_available(size_t *out)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return HPC_ERR(HPC_ERR_IO, "cannot read /proc/meminfo");
    char line[256];
    unsigned long long kib = 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
    fclose(f);
    if (!found) return HPC_ERR(HPC_ERR_IO, "no MemAvailable in /proc/meminfo");
    *out = (size_t)kib * 1024;
    return 0;
}

void hpc_app_need_memory(double bytes_per_rank, const char *what)
{
    size_t avail = 0;
    int rc = hpc_mem_available(&avail);
    double need = bytes_per_rank * hpc_local_size();
    if (rc < 0) hpc_error_clear();   /* not Linux: nothing to compare with, let it try */
    hpc_app_agree(rc == 0 && need > (double)avail ? HPC_EXIT_DATA : 0,
                  "%s needs %.1f GiB per rank, %.1f GiB for the %d ranks on this node, but %.1f GiB is available",
                  what, bytes_per_rank / 1073741824.0, need / 1073741824.0, hpc_local_size(),
                  (double)avail / 1073741824.0);
}
