/* affinity.c - the cores a rank owns and the BLAS/OpenMP threads it runs. */
#include "config.h"
#include <sched.h>
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
