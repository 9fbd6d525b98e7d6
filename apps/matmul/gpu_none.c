/* gpu_none.c - a build without CUDA has no GPU operations. */
#include "config.h"
#include "mm_ops.h"

const mm_ops_t *mm_gpu_ops(void)
{
    return 0;
}
