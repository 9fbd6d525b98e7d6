/* dl.c - optional libraries and hpckit's modules, opened at run time
 * (hpc_dl.h). */
#include "config.h"
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "hpc.h"
#include "hpc_dl.h"
#include "internal.h"

/* Where hpc_dl_module_dir looks, relative to the folder of the loaded
 * libhpc-core: configure's pkglibdir seen from its libdir ("hpckit"). */
#ifndef HPC_LIB_TO_MODULES
#define HPC_LIB_TO_MODULES "hpckit"
#endif

static int syms_from(void *h, const char *name, const char *const *symbols, void **fns, int n,
                     char *why, unsigned long len)
{
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

int hpc_dlsyms(const char *name, const char *const *symbols, void **fns, int n, char *why, unsigned long len)
{
    /* RTLD_LOCAL: its symbols stay out of the way of everything else */
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, len, "%s", dlerror());
        return -1;
    }
    if (syms_from(h, name, symbols, fns, n, why, len) < 0) {
        dlclose(h);               /* not kept open for nothing */
        return -1;
    }
    return 0;
}

int hpc_dl_module_dir(char *dir, unsigned long len)
{
    const char *env = hpc_setting_value("HPC_MODULE_DIR", NULL);
    if (env && *env) {
        snprintf(dir, len, "%s", env);
        return 0;
    }
    /* the folder of the libhpc-core this process loaded: an install
     * (PREFIX/lib) or a build tree (libhpc/.libs), moved or not */
    Dl_info info;
    if (!dladdr((void *)hpc_dl_module_dir, &info) || !info.dli_fname || !strchr(info.dli_fname, '/')) {
        snprintf(dir, len, "cannot tell where libhpc-core was loaded from (set HPC_MODULE_DIR)");
        return -1;
    }
    /* its folder as a plain path ("PREFIX/bin/../lib" from a RUNPATH of
     * $ORIGIN/../lib reads as PREFIX/lib) */
    char lib[4096], real[PATH_MAX];
    const char *slash = strrchr(info.dli_fname, '/');
    snprintf(lib, sizeof lib, "%.*s", (int)(slash - info.dli_fname), info.dli_fname);
    snprintf(dir, len, "%s/%s", realpath(lib, real) ? real : lib, HPC_LIB_TO_MODULES);
    return 0;
}

int hpc_dlopen_path(const char *path, void **out)
{
    /* a FIFO there would block dlopen's open for ever (the folder comes
     * from a setting, HPC_MODULE_DIR: anything may be there) */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return HPC_ERR(HPC_ERR_IO, "%s: not a regular file (%s)", path, hpc_file_kind(st.st_mode));
    *out = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!*out) return HPC_ERR(HPC_ERR_IO, "%s", dlerror());
    return 0;
}

int hpc_dlmodule(const char *module, const char *const *symbols, void **fns, int n, char *why,
                 unsigned long len)
{
    char dir[1024], path[1280];
    if (hpc_dl_module_dir(dir, sizeof dir) < 0) {
        snprintf(why, len, "%s", dir);
        return -1;
    }
    snprintf(path, sizeof path, "%s/%s.so", dir, module);
    void *h;
    if (hpc_dlopen_path(path, &h) < 0) {
        snprintf(why, len, "%s", hpc_last_cause());
        hpc_error_clear();
        return -1;
    }
    if (syms_from(h, path, symbols, fns, n, why, len) < 0) {
        dlclose(h);
        return -1;
    }
    return 0;
}
