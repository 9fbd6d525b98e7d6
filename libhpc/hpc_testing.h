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

/* The CPU's vector extensions that OpenBLAS's x86-64 kernels need
 * (blas.c), as CPUID reports them and the OS saves their registers. */
enum {
    HPC_CPU_SSE3 = 1u << 0, HPC_CPU_SSSE3 = 1u << 1, HPC_CPU_SSE4_1 = 1u << 2, HPC_CPU_SSE4_2 = 1u << 3,
    HPC_CPU_AVX = 1u << 4, HPC_CPU_FMA = 1u << 5, HPC_CPU_AVX2 = 1u << 6, HPC_CPU_AVX512F = 1u << 7,
    HPC_CPU_AVX512CD = 1u << 8, HPC_CPU_AVX512BW = 1u << 9, HPC_CPU_AVX512DQ = 1u << 10,
    HPC_CPU_AVX512VL = 1u << 11, HPC_CPU_AVX512_BF16 = 1u << 12
};
/* This CPU's (0 on other architectures). */
unsigned hpc_cpu_flags(void);
/* Flags from their /proc/cpuinfo names ("avx2 fma avx512f", sse3 for
 * pni); HPC_ERR_ARG for a name it does not know. */
int hpc_cpu_flags_parse(const char *names, unsigned *flags);
/* The OpenBLAS kernel hpckit chooses for a CPU with these flags (the
 * widest whose every instruction the CPU has), or NULL. */
const char *hpc_blas_kernel_for(unsigned flags);
/* The kernel to restart OpenBLAS with, where it runs `current` on a CPU
 * with these flags: NULL where current is as wide as the CPU allows, or
 * a kernel hpckit does not know (another architecture's, a newer one). */
const char *hpc_blas_pick(unsigned flags, const char *current);
/* A kernel's vector ISA, 0 (none) to 7 (AVX-512); -1 unknown. */
int hpc_blas_tier(const char *kernel);

#ifdef __cplusplus
}
#endif
#endif /* HPC_TESTING_H */
