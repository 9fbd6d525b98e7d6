/* gpu_module.c - --device cuda for programs: the GPU stack and the
 * program's own GPU module, or one line and exit 2 on every rank.
 *
 * A program's CUDA code lives in a module (hpckit/hpc-NAME-cuda.so, see
 * hpc_dl.h), not in the program, so that the program starts on nodes
 * without the CUDA runtime.  What is missing - libhpc's GPU module, the
 * runtime or NCCL it needs, a driver, a device, the program's module or
 * a library of it (cuBLAS) - is a request this node cannot serve: a
 * usage error, as a bad option is, with the loader's own words.
 */
#include "config.h"
#include <stdio.h>
#include "app_internal.h"
#include "hpc_dl.h"

void hpc_app_gpu_module(const char *module, const char *const *symbols, void **fns, int n)
{
    char why[1024] = "";
    const char *no = hpc_gpu_unavailable();
    if (no) snprintf(why, sizeof why, "%s", no);
    /* the context is made here, at the first device use, not in hpc_init
     * (a rank bound to none works on the device its own code chose) */
    else if (hpc_gpu() >= 0 && hpc_gpu_activate() < 0) snprintf(why, sizeof why, "%s", hpc_last_cause());
    else if (hpc_dlmodule(module, symbols, fns, n, why, sizeof why) == 0) why[0] = '\0';
    hpc_app_agree(why[0] ? HPC_EXIT_USAGE : 0, "--device cuda: rank %d (%s): %s", hpc_rank(), hpc_hostname(),
                  why);
}
