/* gpu_load.c - --device cuda: hpc-matmul's GPU operations are the module
 * hpckit/hpc-matmul-cuda.so (gpu.cu), opened here, so that the program
 * itself needs no CUDA runtime and every CPU run starts on any node. */
#include "config.h"
#include "hpc_app.h"
#include "mm_ops.h"

const mm_ops_t *mm_gpu_ops(void)
{
    static const char *const names[] = {"matmul_cuda_ops", "matmul_cuda_why"};
    static const mm_ops_t *ops;
    void *fn[2];
    if (!ops) {
        /* a rank without a GPU or the module: all exit 2 here */
        hpc_app_gpu_module(MM_CUDA_MODULE, names, fn, 2);
        ops = ((const mm_ops_t *(*)(void))fn[0])();
        /* cuBLAS missing is a missing library too */
        hpc_app_agree(ops ? 0 : HPC_EXIT_USAGE, "--device cuda: rank %d: %s", hpc_rank(),
                      ops ? "" : ((const char *(*)(void))fn[1])());
    }
    return ops;
}
