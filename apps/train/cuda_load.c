/* cuda_load.c - --device cuda: hpc-train's GPU device is the module
 * hpckit/hpc-train-cuda.so (cuda.cu), opened here, so that the program
 * itself needs no CUDA runtime and every CPU run starts on any node. */
#include "config.h"
#include "hpc_app.h"
#include "dev.h"

typedef int (*open_fn)(void (*)(const char *), const train_dev_t **, char *, size_t);

const train_dev_t *train_dev_cuda(char *err, size_t len)
{
    static const char *const names[] = {"train_cuda_open"};
    void *fn;
    /* a rank without a GPU or the module: all exit 2 here */
    hpc_app_gpu_module(TRAIN_CUDA_MODULE, names, &fn, 1);
    const train_dev_t *dev = NULL;
    int rc = ((open_fn)fn)(train_dev_fatal, &dev, err, len);
    /* cuBLAS missing is a missing library too; a failing GPU is not */
    hpc_app_agree(rc == -2 ? HPC_EXIT_USAGE : 0, "%s", err);
    return rc == 0 ? dev : NULL;
}
