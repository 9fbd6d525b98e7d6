/* gpu.c - one GPU binding policy, in one place.
 *
 * Default: local rank -> local_rank % ndev over the devices this process
 * can see, so CUDA_VISIBLE_DEVICES and Slurm's per-task GPU binding just
 * work.  HPC_GPU_BIND overrides: none | local | exclusive | list:I,J,...
 * The choice is pure (tested against simulated device counts); the bind
 * itself runs before MPI_Init and before any other CUDA call.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#ifdef HPC_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static int parse_list(const char *s, hpc_gpu_policy_t *p)
{
    p->nlist = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v > 1023 || (*end && *end != ','))
            return HPC_ERR(HPC_ERR_ARG, "HPC_GPU_BIND list: bad device '%s'", s);
        if (p->nlist == HPC_GPU_LIST_MAX)
            return HPC_ERR(HPC_ERR_ARG, "HPC_GPU_BIND list: more than %d devices", HPC_GPU_LIST_MAX);
        p->list[p->nlist++] = (int)v;
        s = *end ? end + 1 : end;
        if (*end && !*s) return HPC_ERR(HPC_ERR_ARG, "HPC_GPU_BIND list ends with ','");
    }
    if (p->nlist == 0) return HPC_ERR(HPC_ERR_ARG, "HPC_GPU_BIND list: no devices after 'list:'");
    return 0;
}

int hpc_gpu_policy_parse(const char *s, hpc_gpu_policy_t *out)
{
    hpc_gpu_policy_t p;
    memset(&p, 0, sizeof p);
    p.mode = HPC_GPU_BIND_LOCAL;
    if (!s || !*s || !strcmp(s, "local")) {
    } else if (!strcmp(s, "none")) {
        p.mode = HPC_GPU_BIND_NONE;
    } else if (!strcmp(s, "exclusive")) {
        p.mode = HPC_GPU_BIND_EXCLUSIVE;
    } else if (!strncmp(s, "list:", 5)) {
        p.mode = HPC_GPU_BIND_LIST;
        HPC_TRY(parse_list(s + 5, &p));
    } else {
        return HPC_ERR(HPC_ERR_ARG, "HPC_GPU_BIND='%s': expected none, local, exclusive or list:I,J,...", s);
    }
    *out = p;
    return 0;
}

int hpc_gpu_choose(const hpc_gpu_policy_t *p, int local_rank, int local_size, int ndev, int *dev)
{
    if (!p || !dev || local_rank < 0 || ndev < 0)
        return HPC_ERR(HPC_ERR_ARG, "bad arguments (local rank %d, %d devices)", local_rank, ndev);
    int d = -1;
    switch (p->mode) {
    case HPC_GPU_BIND_NONE:
        break;
    case HPC_GPU_BIND_LOCAL:
        if (ndev > 0) d = local_rank % ndev;
        break;
    case HPC_GPU_BIND_EXCLUSIVE:
        if (ndev == 0) return HPC_ERR(HPC_ERR_NOGPU, "HPC_GPU_BIND=exclusive but no GPU is visible");
        if (local_size > ndev)
            return HPC_ERR(HPC_ERR_ARG,
                           "HPC_GPU_BIND=exclusive: %d ranks on this node but only %d GPU(s); "
                           "start at most %d ranks per node", local_size, ndev, ndev);
        d = local_rank;
        break;
    case HPC_GPU_BIND_LIST:
        d = p->list[local_rank % p->nlist];
        if (d >= ndev)
            return HPC_ERR(ndev ? HPC_ERR_ARG : HPC_ERR_NOGPU,
                           "HPC_GPU_BIND list names device %d but only %d GPU(s) are visible", d, ndev);
        break;
    }
    *dev = d;
    return 0;
}

#ifdef HPC_HAVE_CUDA
int hpc_error_cuda(int err, const char *file, int line, const char *call)
{
    return hpc_error_set(HPC_ERR_CUDA, file, line, call, "%s (%s)",
                         cudaGetErrorString((cudaError_t)err), cudaGetErrorName((cudaError_t)err));
}

int hpc_gpu_count(void)
{
    int n = 0;
    /* no driver or no device is "0 GPUs", not an error */
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

int hpc_gpu_bind(const hpc_gpu_policy_t *p, int local_rank, int local_size, hpc_gpu_info_t *info)
{
    int dev;
    memset(info, 0, sizeof *info);
    info->index = -1;
    HPC_TRY(hpc_gpu_choose(p, local_rank < 0 ? 0 : local_rank, local_size, hpc_gpu_count(), &dev));
    if (dev < 0) return 0;
    cudaError_t e = cudaSetDevice(dev);
    if (e != cudaSuccess) return hpc_error_cuda(e, __FILE__, __LINE__, "cudaSetDevice");
    struct cudaDeviceProp prop;
    e = cudaGetDeviceProperties(&prop, dev);
    if (e != cudaSuccess) return hpc_error_cuda(e, __FILE__, __LINE__, "cudaGetDeviceProperties");
    info->index = dev;
    snprintf(info->name, sizeof info->name, "%.95s", prop.name);
    info->total_mem = prop.totalGlobalMem;
    e = cudaDeviceGetPCIBusId(info->pci_bus_id, sizeof info->pci_bus_id, dev);
    if (e != cudaSuccess) return hpc_error_cuda(e, __FILE__, __LINE__, "cudaDeviceGetPCIBusId");
    return 0;
}
#else
int hpc_error_cuda(int err, const char *file, int line, const char *call)
{
    return hpc_error_set(HPC_ERR_UNSUPPORTED, file, line, call, "CUDA error %d in a build without CUDA", err);
}

int hpc_gpu_count(void)
{
    return 0;
}

int hpc_gpu_bind(const hpc_gpu_policy_t *p, int local_rank, int local_size, hpc_gpu_info_t *info)
{
    int dev;
    memset(info, 0, sizeof *info);
    info->index = -1;
    /* still validate the policy: exclusive/list without GPUs is an error */
    HPC_TRY(hpc_gpu_choose(p, local_rank < 0 ? 0 : local_rank, local_size, 0, &dev));
    return 0;
}
#endif
