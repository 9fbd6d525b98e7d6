/* version.c - what this libhpc is and what it was built with. */
#include "config.h"
#include "hpc.h"

const char *hpc_version(void)
{
    return PACKAGE_VERSION;
}

int hpc_have_cuda(void)
{
#ifdef HPC_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

int hpc_have_nccl(void)
{
#ifdef HPC_HAVE_NCCL
    return 1;
#else
    return 0;
#endif
}
