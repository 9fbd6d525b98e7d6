/* hpc_testing.h - test hooks of libhpc: the pure parts of rank setup that
 * the tests feed simulated environments.  Not installed, not exported:
 * the tests link libhpc's objects from a convenience library
 * (libhpc/libtesting.la), not the installed libraries. */
#ifndef HPC_TESTING_H
#define HPC_TESTING_H

#include "hpc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the launcher said, read before MPI_Init (launch.c). */
typedef struct {
    hpc_launcher_t launcher;
    int rank, size;           /* -1 where the launcher did not say */
    int local_rank, local_size;
} hpc_launch_t;

/* Read the launcher's variables from envp ("K=V" strings, NULL-terminated;
 * NULL means the process environment).  Precedence: Open MPI, hydra,
 * torchrun-style, then Slurm (srun sets SLURM_* also around mpirun, where
 * the inner launcher is the one that counts).  Variables that contradict
 * themselves (rank >= size) give HPC_ERR_ARG naming them; *out is then
 * untouched. */
int hpc_launch_parse(char *const *envp, hpc_launch_t *out);

/* GPU binding policy (gpu.c). */
typedef enum { HPC_GPU_BIND_LOCAL = 0, HPC_GPU_BIND_NONE, HPC_GPU_BIND_LIST,
               HPC_GPU_BIND_EXCLUSIVE } hpc_gpu_bind_mode_t;
#define HPC_GPU_LIST_MAX 64
typedef struct {
    hpc_gpu_bind_mode_t mode;
    int nlist;
    int list[HPC_GPU_LIST_MAX];  /* for LIST: local rank i -> list[i % nlist] */
} hpc_gpu_policy_t;

/* Parse HPC_GPU_BIND: NULL/""/"local", "none", "exclusive", "list:0,2,1". */
int hpc_gpu_policy_parse(const char *s, hpc_gpu_policy_t *out);
/* Device for this local rank given ndev visible devices; -1 = none.
 * EXCLUSIVE with local_size > ndev is an error (ranks would share a GPU). */
int hpc_gpu_choose(const hpc_gpu_policy_t *p, int local_rank, int local_size,
                   int ndev, int *dev);
/* The device count (> 0), for a status of cudaGetDeviceCount (gpu_ops.h's
 * numbers) and the driver's version (cudaDriverGetVersion: 0 = no
 * driver); else the reason there is none, as the cause of HPC_ERR_NOGPU
 * ("no device" or "no driver": a CPU node) or of HPC_ERR_CUDA (any other
 * error: a broken stack, which hpc_gpu_count warns about). */
int hpc_gpu_count_status(int status, int n, int driver);
/* Forget the count (a test swapped the GPU table). */
void hpc_gpu_count_reset(void);

#ifdef __cplusplus
}
#endif
#endif /* HPC_TESTING_H */
