/* mem.c - "will it fit?" before a large allocation.
 *
 * malloc on Linux rarely fails outright: an allocation larger than the
 * node's memory is granted and the job dies later from the OOM killer,
 * or one rank's malloc fails while the others sit in a collective.  A
 * program that knows how much it will need asks first, on every node,
 * and refuses in one line.
 *
 * What is available is the node's MemAvailable, or less where the
 * process is in a memory cgroup with a limit (Slurm's task/cgroup, a
 * container): the OOM killer acts at the cgroup's limit, whatever the
 * node has free.  Of each limited cgroup on the way to the root, what is
 * left is its limit less what it uses, counting its inactive page cache
 * as free (the kernel reclaims it first).
 */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include "app_internal.h"

static int read_u64(const char *dir, const char *file, unsigned long long *v)
{
    char p[1024], line[64];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    FILE *f = fopen(p, "r");
    if (!f) return -1;
    int ok = fgets(line, sizeof line, f) && sscanf(line, "%llu", v) == 1;
    fclose(f);
    return ok ? 0 : -1;   /* "max" (no limit in cgroup v2) reads as none */
}

/* inactive page cache of a cgroup (memory.stat: "inactive_file" in v2,
 * "total_inactive_file" in v1) */
static unsigned long long inactive_file(const char *dir)
{
    char p[1024], key[64];
    unsigned long long v, r = 0;
    snprintf(p, sizeof p, "%s/memory.stat", dir);
    FILE *f = fopen(p, "r");
    if (!f) return 0;
    while (fscanf(f, "%63s %llu", key, &v) == 2)
        if (!strcmp(key, "inactive_file") || !strcmp(key, "total_inactive_file")) r = v;
    fclose(f);
    return r;
}

/* The least room left under the limits of this process's memory cgroup
 * and its ancestors; ULLONG_MAX where none is limited (or none is seen). */
static unsigned long long cgroup_room(void)
{
    unsigned long long room = ~0ULL;
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return room;
    char line[1024], dir[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':') : NULL;
        if (!path) continue;
        *path++ = 0;
        ctl++;
        int v2 = !*ctl, v1 = 0;
        for (char *t = strtok(ctl, ","); t; t = strtok(NULL, ",")) v1 |= !strcmp(t, "memory");
        if (!v1 && !v2) continue;
        const char *lim = v1 ? "memory.limit_in_bytes" : "memory.max";
        const char *use = v1 ? "memory.usage_in_bytes" : "memory.current";
        snprintf(dir, sizeof dir, "/sys/fs/cgroup%s%s", v1 ? "/memory" : "", path);
        for (;;) {   /* this cgroup, then each parent up to the mount */
            unsigned long long l, u;
            if (read_u64(dir, lim, &l) == 0 && read_u64(dir, use, &u) == 0 && l < (1ULL << 60)) {
                unsigned long long used = u - (inactive_file(dir) < u ? inactive_file(dir) : 0);
                unsigned long long left = l > used ? l - used : 0;
                if (left < room) room = left;
            }
            char *slash = strrchr(dir, '/');
            if (!slash || strlen(dir) <= strlen(v1 ? "/sys/fs/cgroup/memory" : "/sys/fs/cgroup")) break;
            *slash = 0;
        }
    }
    fclose(f);
    return room;
}

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
    unsigned long long avail = kib * 1024, room = cgroup_room();
    *out = (size_t)(room < avail ? room : avail);
    return 0;
}

void hpc_app_need_memory(double bytes_per_rank, const char *what)
{
    size_t avail = 0;
    int rc = hpc_mem_available(&avail);
    double need = bytes_per_rank * hpc_local_size();
    if (rc < 0) hpc_error_clear();   /* not Linux: nothing to compare with, let it try */
    hpc_app_agree(rc == 0 && need > (double)avail ? HPC_EXIT_DATA : 0,
                  "%s needs %.1f GiB per rank, %.1f GiB for the %d ranks on this node (%s), but %.1f GiB is "
                  "available there",
                  what, bytes_per_rank / 1073741824.0, need / 1073741824.0, hpc_local_size(), hpc_hostname(),
                  (double)avail / 1073741824.0);
}
