/* gpu_load.c - --device cuda: hpc-matmul's GPU operations are the module
 * hpckit/hpc-matmul-cuda.so (gpu.cu), opened here, so that the program
 * itself needs no CUDA runtime and every CPU run starts on any node. */
#include "config.h"
#include "hpc_app.h"
#include "mm_ops.h"

const mm_ops_t *mm_gpu_ops(void)
{
    static const char *const names[] = {"matmul_cuda_ops"};
    static const mm_ops_t *ops;
    void *fn;
    if (!ops) {
        /* a rank without a GPU or the module: all exit 2 here */
        hpc_app_gpu_module(MM_CUDA_MODULE, names, &fn, 1);
        char why[512] = "";
        ops = ((const mm_ops_t *(*)(char *, size_t))fn)(why, sizeof why);
        /* cuBLAS missing is a missing library too */
        hpc_app_agree(ops ? 0 : HPC_EXIT_USAGE, "--device cuda: rank %d: %s", hpc_rank(), why);
    }
    return ops;
}
