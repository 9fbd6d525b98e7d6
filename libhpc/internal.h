/* internal.h - declarations shared inside libhpc, not installed. */
#ifndef HPC_INTERNAL_H
#define HPC_INTERNAL_H

#include "hpc.h"

/* env.c: the process-wide environment (NULL before hpc_init). */
extern hpc_env_t *hpc_env_global;
/* Rank for message prefixes: world rank after init, launcher's before, else -1. */
int hpc_rank_hint(void);
const char *hpc_host_hint(void);

/* affinity.c */
/* Cores this process may run on: count and a "0-3,8" list. */
int hpc_affinity_cores(int *ncores, char *list, size_t len);
/* Choose BLAS/OpenMP threads: ncores shared by `sharing` ranks. */
int hpc_threads_for(int ncores, int sharing);
/* Apply n threads to OpenBLAS (and OMP_NUM_THREADS for later runtimes). */
void hpc_threads_apply(int n);

/* gpu.c: bind before MPI_Init; fills info (index -1 if none). */
int hpc_gpu_bind_early(const hpc_gpu_policy_t *p, int local_rank, int local_size,
                       hpc_gpu_info_t *info);
/* Translate a CUDA runtime error (int to keep CUDA headers out). */
int hpc_error_cuda(int cudaerr, const char *file, int line, const char *call);
/* Call the CUDA runtime (cudaSuccess is 0); on failure translate and
 * return HPC_ERR_CUDA naming the call.  For files that include
 * cuda_runtime_api.h. */
#define HPC_CUDA(call)                                                     \
    do {                                                                   \
        int hpc_ce_ = (int)(call);                                         \
        if (hpc_ce_ != 0) return hpc_error_cuda(hpc_ce_, __FILE__, __LINE__, #call); \
    } while (0)

#endif
