/* affinity.c - the cores a rank owns, the BLAS/OpenMP threads it runs,
 * and the cache they share. */
#include "config.h"
#include <sched.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <dlfcn.h>
#include "internal.h"

int hpc_affinity_cores(int *ncores, char *list, size_t len)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return HPC_ERR(HPC_ERR_IO, "sched_getaffinity failed");
    size_t pos = 0;
    int n = 0;
    list[0] = '\0';
    /* runs of consecutive cores print as "a-b" */
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &set)) continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set)) e++;
        n += e - c + 1;
        if (pos < len) {
            int w = e > c ? snprintf(list + pos, len - pos, "%s%d-%d", pos ? "," : "", c, e)
                          : snprintf(list + pos, len - pos, "%s%d", pos ? "," : "", c);
            pos += w > 0 ? (size_t)w : 0;
        }
        c = e;
    }
    *ncores = n;
    return 0;
}

int hpc_threads_for(int ncores, int sharing)
{
    if (sharing < 1) sharing = 1;
    int t = ncores / sharing;
    return t < 1 ? 1 : t;
}

void hpc_threads_apply(int n)
{
    char buf[16];
    snprintf(buf, sizeof buf, "%d", n);
    /* for OpenMP runtimes loaded later; OpenBLAS already read its env */
    setenv("OMP_NUM_THREADS", buf, 1);
    /* OpenBLAS where the program loaded it (hpc-matmul, hpc-train): looked
     * up, not linked, so that libhpc needs no BLAS */
    void (*set)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
    if (set) set(n);
}

size_t hpc_llc_bytes(void)
{
    /* one instance of the last level (sysfs: a Zen CCX's 32 MiB, where
     * sysconf may sum the socket's), else sysconf's, else 32 MiB */
    static size_t known;
    if (known) return known;
    size_t best = 0;
    int top = 0;
    for (int i = 0; i < 8; i++) {
        char path[96], text[32];
        int level = 0;
        unsigned long kb = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        int ok = fscanf(f, "%d", &level) == 1;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (!ok || !(f = fopen(path, "r"))) continue;
        if (fgets(text, sizeof text, f) && sscanf(text, "%luK", &kb) == 1 && level >= top) {
            top = level;
            best = (size_t)kb << 10;
        }
        fclose(f);
    }
    long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
    known = best ? best : v > 0 ? (size_t)v : (size_t)32 << 20;
    return known;
}
