/* hpc_dl.h - optional libraries opened at run time.
 *
 * A program that needs a large library only sometimes (cuBLAS: about
 * 200 MiB of resident memory once its relocations are done, paid by every
 * process that links it) opens it when it needs it.  No MPI in here, so
 * CUDA sources may include it too.
 */
#ifndef HPC_DL_H
#define HPC_DL_H

#include <dlfcn.h>
#include <stdio.h>

#if defined(__GNUC__) && __GNUC__ >= 4
#define HPC_DL_EXPORT __attribute__((visibility("default")))
#else
#define HPC_DL_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Open library `name` (a soname: "libcublas.so.13") once and resolve its n
 * symbols into fns[] (in order).  0, or -1 with why (dlerror's text, or
 * the first missing symbol) in why[len]; fns is untouched then, and the
 * library closed again. */
HPC_DL_EXPORT int hpc_dlsyms(const char *name, const char *const *symbols, void **fns, int n,
                             char *why, unsigned long len);

/* hpc_dlsyms, with the library opened by the object that includes this
 * header (static inline: compiled into it).  glibc searches the RUNPATH
 * of the object that calls dlopen: from a module that is the module's
 * own (the CUDA library folder configure found, NCCL's with --with-nccl),
 * from libhpc-core its own, which knows nothing of CUDA.  So a module
 * opens cuBLAS and NCCL with this: found beside the CUDA runtime the
 * module loaded, where the loader's cache does not list that folder. */
static inline int hpc_dlsyms_here(const char *name, const char *const *symbols, void **fns, int n, char *why,
                                  unsigned long len)
{
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, len, "%s", e ? e : name);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (!dlsym(h, symbols[i])) {
            snprintf(why, len, "%s has no %s", name, symbols[i]);
            dlclose(h);
            return -1;
        }
    for (int i = 0; i < n; i++) fns[i] = dlsym(h, symbols[i]);
    return 0;
}

/* hpckit's modules: code that needs the GPU stack (the CUDA runtime,
 * NCCL), kept out of libhpc and the programs so that both start on any
 * node.  They live in one folder: PREFIX/lib/hpckit beside an installed
 * libhpc-core (found from where the loaded libhpc-core is, so a moved
 * prefix works), libhpc/.libs/hpckit in a build tree, or HPC_MODULE_DIR.
 * 0 with the folder in dir, or -1 with the reason there. */
HPC_DL_EXPORT int hpc_dl_module_dir(char *dir, unsigned long len);
/* Open module (a name without ".so": "hpc-train-cuda") from that folder
 * and resolve its symbols, as hpc_dlsyms does; why names the file and
 * what the loader said (a missing module, or a library it needs). */
HPC_DL_EXPORT int hpc_dlmodule(const char *module, const char *const *symbols, void **fns, int n,
                               char *why, unsigned long len);

#ifdef __cplusplus
}
#endif
#endif /* HPC_DL_H */
