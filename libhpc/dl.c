/* dl.c - optional libraries opened at run time (hpc_dl.h). */
#include "config.h"
#include <dlfcn.h>
#include <stdio.h>
#include "hpc_dl.h"

int hpc_dlsyms(const char *name, const char *const *symbols, void **fns, int n, char *why, unsigned long len)
{
    /* RTLD_LOCAL: its symbols stay out of the way of everything else */
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, len, "%s", dlerror());
        return -1;
    }
    void *got[64];
    if (n > 64) {
        snprintf(why, len, "too many symbols (%d)", n);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (!(got[i] = dlsym(h, symbols[i]))) {
            snprintf(why, len, "%s has no %s", name, symbols[i]);
            return -1;
        }
    for (int i = 0; i < n; i++) fns[i] = got[i];
    return 0;
}
