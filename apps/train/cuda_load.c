/* cuda_load.c - --device cuda: hpc-train's GPU device is the module
 * hpckit/hpc-train-cuda.so (cuda.cu), opened here, so that the program
 * itself needs no CUDA runtime and every CPU run starts on any node.  The
 * module returns -1 or -2 and says why through train_cuda_why (it has no
 * MPI header, hence no hpc.h): here that becomes the program's error. */
#include "config.h"
#include "hpc_app.h"
#include "dev.h"

typedef int (*open_fn)(void (*)(const char *), const train_dev_t **);
typedef const char *(*why_fn)(void);

const train_dev_t *train_dev_cuda(void)
{
    static const char *const names[] = {"train_cuda_open", "train_cuda_why"};
    void *fn[2];
    /* a rank without a GPU or the module: all exit 2 here */
    hpc_app_gpu_module(TRAIN_CUDA_MODULE, names, fn, 2);
    const train_dev_t *dev = NULL;
    int rc = ((open_fn)fn[0])(train_dev_fatal, &dev);
    /* cuBLAS missing is a missing library too; a failing GPU is not */
    hpc_app_agree(rc == -2 ? HPC_EXIT_USAGE : 0, "%s", ((why_fn)fn[1])());
    if (rc < 0) {
        HPC_ERR(HPC_ERR_CUDA, "%s", ((why_fn)fn[1])());
        return NULL;
    }
    return dev;
}
