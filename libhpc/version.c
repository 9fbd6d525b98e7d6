/* version.c - what this libhpc is, and what GPU stack it found. */
#include "config.h"
#include "hpc.h"
#include "gpu_ops.h"

const char *hpc_version(void)
{
    return PACKAGE_VERSION;
}

int hpc_have_cuda(void)
{
    return hpc_gpu_ops() != NULL;
}

int hpc_have_nccl(void)
{
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    return g && g->nccl_init;
}

const char *hpc_nccl_unavailable(void)
{
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    if (!g) return hpc_gpu_ops_why();
    if (g->nccl_init) return NULL;
    return g->nccl_why && *g->nccl_why() ? g->nccl_why() : "the CUDA module was built without NCCL";
}
