/* gpu_ops.c - opens the GPU module (gpu_ops.h) on first need.
 *
 * The module is HPC_GPU_MODULE_NAME.so in hpckit's module folder
 * (hpc_dl_module_dir(), dl.c: PREFIX/lib/hpckit beside an installed
 * libhpc-core, the same place in a build tree).  Where it is missing, or
 * the CUDA runtime or NCCL it needs is not on the loader's path, libhpc
 * runs as on a machine without a GPU and hpc_gpu_ops_why() keeps the
 * loader's one-line reason, which every refused device path repeats.
 */
#include "config.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"
#include "gpu_ops.h"
#include "hpc_dl.h"

static const hpc_gpu_ops_t *table;        /* the module's, or a test's */
static const hpc_gpu_ops_t *module_table; /* the module's */
static char why[1536] = "the GPU module was not looked for";
static char path[1100];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int overridden;

static void load(void)
{
#ifndef HPC_HAVE_CUDA
    /* configure found no CUDA: no module was built or installed */
    snprintf(why, sizeof why, "no CUDA: this hpckit was built without it (configure --with-cuda)");
    return;
#endif
    char dir[1024];
    if (hpc_dl_module_dir(dir, sizeof dir) < 0) {
        snprintf(why, sizeof why, "no GPU module: %s", dir);
        return;
    }
    snprintf(path, sizeof path, "%s/%s.so", dir, HPC_GPU_MODULE_NAME);
    void *h;
    if (hpc_dlopen_path(path, &h) < 0) {
        /* the module itself missing (a CPU-only build or install) or
         * what it needs (libcudart, libnccl): dlerror names which */
        snprintf(why, sizeof why, "the CUDA module cannot be loaded: %s", hpc_last_cause());
        hpc_error_clear();
        path[0] = '\0';
        return;
    }
    hpc_gpu_module_fn entry = (hpc_gpu_module_fn)dlsym(h, HPC_GPU_MODULE_ENTRY);
    const hpc_gpu_ops_t *t = entry ? entry(HPC_GPU_OPS_VERSION) : NULL;
    if (!t) {
        snprintf(why, sizeof why, "the CUDA module %s is %s", path,
                 entry ? "of another hpckit version" : "not an hpckit module");
        dlclose(h);
        path[0] = '\0';
        return;
    }
    /* never closed: its runtime holds the GPU's context until exit */
    module_table = t;
    why[0] = '\0';
}

const hpc_gpu_ops_t *hpc_gpu_ops(void)
{
    if (overridden) return table;
    pthread_once(&once, load);
    return module_table;
}

const char *hpc_gpu_ops_why(void)
{
    if (overridden) return table ? "" : "no GPU table (a test took it away)";
    pthread_once(&once, load);
    return why;
}

const char *hpc_gpu_ops_path(void)
{
    if (overridden) return "";
    pthread_once(&once, load);
    return path;
}

void hpc_gpu_ops_set(const hpc_gpu_ops_t *ops, int use)
{
    overridden = use;
    table = ops;
}

const char *hpc_gpu_status_text(int status, char *buf, size_t len)
{
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    if (g) snprintf(buf, len, "%s (%s)", g->error_string(status), g->error_name(status));
    else snprintf(buf, len, "CUDA error %d", status);
    return buf;
}
