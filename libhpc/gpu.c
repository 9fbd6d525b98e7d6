/* gpu.c - one GPU binding policy, in one place.
 *
 * Default: local rank -> local_rank % ndev over the devices this process
 * can see, so CUDA_VISIBLE_DEVICES and Slurm's per-task GPU binding just
 * work.  HPC_GPU_BIND overrides: none | local | exclusive | list:I,J,...
 * The choice is pure (tested against simulated device counts); the bind
 * itself runs before MPI_Init and before any other CUDA call, through the
 * GPU module (gpu_ops.h): without it, or without a device, there is
 * nothing to bind and hpc_gpu_unavailable() says why.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "gpu_ops.h"

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

/* ---- through the GPU module (gpu_ops.h) ---------------------------- */

int hpc_error_cuda(int err, const char *file, int line, const char *call)
{
    char text[256];
    return hpc_error_set(HPC_ERR_CUDA, file, line, call, "%s", hpc_gpu_status_text(err, text, sizeof text));
}

/* What hpc_gpu_count found: the count, and why it is 0 where it is. */
static int counted = -1;
static char count_why[768];
static char lost[512];              /* why the bound GPU failed to activate (unbound since) */

/* Pure: the count, or why there is none, for a status of
 * cudaGetDeviceCount.  Only cudaErrorNoDevice means "no GPU"; any other
 * error (a runtime newer than the driver: cudaErrorInsufficientDriver) is
 * a broken GPU stack, HPC_ERR_CUDA, which the caller warns about rather
 * than taking it for a CPU node. */
int hpc_gpu_count_status(int status, int n, int driver)
{
    if (status == GPU_OK && n > 0) return n;
    if (status == GPU_OK || status == GPU_ERR_NO_DEVICE)
        return HPC_ERR(HPC_ERR_NOGPU, "no CUDA device is visible%s",
                       getenv("CUDA_VISIBLE_DEVICES") ? " (CUDA_VISIBLE_DEVICES is set)" : "");
    /* the runtime says "insufficient driver" where there is none at all
     * (driver version 0): a CPU node with the CUDA libraries, not an error */
    if (status == GPU_ERR_INSUFFICIENT_DRIVER && driver == 0)
        return HPC_ERR(HPC_ERR_NOGPU, "no NVIDIA driver is installed (libcuda.so.1 not found)");
    char text[256];
    hpc_gpu_status_text(status, text, sizeof text);
    if (status == GPU_ERR_INSUFFICIENT_DRIVER)
        return HPC_ERR(HPC_ERR_CUDA, "the CUDA runtime needs a newer NVIDIA driver than this node's (%d.%d): %s",
                       driver / 1000, driver % 1000 / 10, text);
    return HPC_ERR(HPC_ERR_CUDA, "the CUDA runtime cannot count the GPUs: %s", text);
}

int hpc_gpu_count(void)
{
    if (counted >= 0) return counted;
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    if (!g) {
        snprintf(count_why, sizeof count_why, "%s", hpc_gpu_ops_why());
        return counted = 0;
    }
    int n = 0, driver = 0;
    int st = g->device_count(&n);
    if (st != GPU_OK) g->last_error();
    g->driver_version(&driver);
    int rc = hpc_gpu_count_status(st, n, driver);
    if (rc > 0) return counted = rc;
    /* kept for hpc_gpu_unavailable; no GPU is an answer, not the caller's error */
    snprintf(count_why, sizeof count_why, "%s", hpc_last_cause());
    hpc_error_clear();
    if (rc == HPC_ERR_CUDA) hpc_warn("%s", count_why);
    return counted = 0;
}

const char *hpc_gpu_unavailable(void)
{
    if (lost[0]) return lost;
    return hpc_gpu_count() > 0 ? NULL : count_why;
}

/* Tests that swap the GPU table count again. */
void hpc_gpu_count_reset(void)
{
    counted = -1;
    count_why[0] = '\0';
}

const char *hpc_gpu_stack(void)
{
    static char line[1024];
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    if (!g) {
        snprintf(line, sizeof line, "none (%s)", hpc_gpu_ops_why());
        return line;
    }
    int rt = 0, drv = 0, nc = 0;
    g->runtime_version(&rt);
    g->driver_version(&drv);
    size_t k = (size_t)snprintf(line, sizeof line, "CUDA runtime %d.%d, ", rt / 1000, rt % 1000 / 10);
    if (drv) k += (size_t)snprintf(line + k, sizeof line - k, "driver %d.%d", drv / 1000, drv % 1000 / 10);
    else k += (size_t)snprintf(line + k, sizeof line - k, "no NVIDIA driver");
    if (g->nccl_version && g->nccl_version(&nc) == HPC_NCCL_OK && k < sizeof line)
        k += (size_t)snprintf(line + k, sizeof line - k, ", NCCL %d.%d.%d", nc / 10000, nc / 100 % 100,
                              nc % 100);
    else if (k < sizeof line)
        k += (size_t)snprintf(line + k, sizeof line - k, ", no NCCL (%s)", hpc_nccl_unavailable());
    if (k < sizeof line) snprintf(line + k, sizeof line - k, " (%s)", hpc_gpu_ops_path());
    return line;
}

/* The rank's binding: the device chosen, and on each thread whether it
 * has been made current there (the runtime's current device is per
 * thread).  The context is made at the first device use, not in
 * hpc_init: cudaSetDevice creates the primary context (CUDA 12+), which
 * costs every rank of a CPU run on a GPU node about 0.5 GB of GPU memory
 * and, with GPUs in exclusive-process mode, fails for every rank after
 * the first on a GPU.  HPC_GPU_CONTEXT=init makes it in hpc_init, for
 * CUDA-aware MPI libraries that pick the device up in MPI_Init. */
static hpc_gpu_info_t *bound;
static _Thread_local int current = -1;

static int activate(void)
{
    if (!bound || bound->index < 0) {
        const char *no = hpc_gpu_unavailable();
        return HPC_ERR(HPC_ERR_NOGPU, "%s", no ? no : "not bound to a GPU (HPC_GPU_BIND)");
    }
    if (current == bound->index) return 0;
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    int st = g ? g->set_device(bound->index) : GPU_ERR_NO_DEVICE;
    if (st != GPU_OK) {
        char text[256];
        if (g) g->last_error();
        hpc_gpu_status_text(st, text, sizeof text);
        /* the rank stays usable for CPU work: unbound, with the reason */
        snprintf(lost, sizeof lost, "GPU %d (%s) cannot be used: %s%s", bound->index, bound->pci_bus_id, text,
                 st == 46 /* cudaErrorDevicesUnavailable */ ? " (exclusive-process mode, held by another "
                                                            "process?)" : "");
        hpc_warn("%s; this rank runs without a GPU", lost);
        bound->index = -1;
        return HPC_ERR(HPC_ERR_CUDA, "%s", lost);
    }
    current = bound->index;
    return 0;
}

int hpc_gpu_activate(void)
{
    HPC_TRY(activate());
    return 0;
}

int hpc_gpu_active(void)
{
    return bound && bound->index >= 0 && current == bound->index;
}

const char *hpc_gpu_lost(void)
{
    return lost[0] ? lost : NULL;
}

int hpc_gpu_bind(const hpc_gpu_policy_t *p, int local_rank, int local_size, int eager, hpc_gpu_info_t *info)
{
    int dev;
    memset(info, 0, sizeof *info);
    info->index = -1;
    bound = info;
    current = -1;
    lost[0] = '\0';
    /* without GPUs the policy is still checked: exclusive/list is an error */
    HPC_TRY(hpc_gpu_choose(p, local_rank < 0 ? 0 : local_rank, local_size, hpc_gpu_count(), &dev));
    if (dev < 0) return 0;
    /* queries that make no context: name, memory, bus id */
    const hpc_gpu_ops_t *g = hpc_gpu_ops();
    HPC_CUDA(g->device_info(dev, info->name, sizeof info->name, &info->total_mem));
    HPC_CUDA(g->pci_bus_id(dev, info->pci_bus_id, (int)sizeof info->pci_bus_id));
    info->index = dev;
    if (eager) activate();        /* a failure warns and leaves the rank unbound */
    hpc_error_clear();
    return 0;
}
