/* expect.c - the known answer of a collective, for the library's own
 * checks: hpc-info --selftest (selftest.c) and hpc-collbench --check share
 * it.  The tests keep an independent reference of their own
 * (tests/coll_testlib.h), so a mistake here cannot hide one in the
 * algorithms.
 *
 * Inputs are small integers (products: +-1), so every reduction is exact
 * in every element type, float16 and bfloat16 included, and the answer can
 * be compared exactly (averages of floats round once: see the callers).
 */
#include "config.h"
#include "hpc_coll.h"

#include <math.h>

double hpc_coll_check_value(hpc_op_t op, int rank, size_t j)
{
    if (op == HPC_PROD) return ((size_t)rank + j) % 3 == 0 ? -1 : 1;
    return (double)(int)(((size_t)rank * 13 + j * 7) % 9) - 4;
}

/* element j reduced over ranks 0..p-1 */
static double reduced(hpc_op_t op, hpc_dtype_t t, int p, size_t j)
{
    double acc = hpc_coll_check_value(op, 0, j);
    for (int r = 1; r < p; r++) {
        double v = hpc_coll_check_value(op, r, j);
        if (op == HPC_MAX) acc = v > acc ? v : acc;
        else if (op == HPC_MIN) acc = v < acc ? v : acc;
        else if (op == HPC_PROD) acc *= v;
        else acc += v;
    }
    if (op == HPC_AVG) acc = t == HPC_INT32 || t == HPC_INT64 ? (double)((long long)acc / p) : acc / p;
    return acc;
}

double hpc_coll_check_expected(const hpc_coll_args_t *a, int rank, int nranks, size_t i)
{
    size_t n = a->count;
    hpc_op_t op = a->op;
    switch (a->coll) {
    case HPC_COLL_BCAST: return hpc_coll_check_value(op, a->root, i);
    case HPC_COLL_REDUCE: return rank == a->root ? reduced(op, a->dtype, nranks, i) : NAN;
    case HPC_COLL_ALLREDUCE: return reduced(op, a->dtype, nranks, i);
    case HPC_COLL_GATHER: return rank == a->root ? hpc_coll_check_value(op, (int)(i / n), i % n) : NAN;
    case HPC_COLL_ALLGATHER: return hpc_coll_check_value(op, (int)(i / n), i % n);
    case HPC_COLL_SCATTER: return hpc_coll_check_value(op, a->root, (size_t)rank * n + i);
    case HPC_COLL_REDUCE_SCATTER: return reduced(op, a->dtype, nranks, (size_t)rank * n + i);
    case HPC_COLL_ALLTOALL: return hpc_coll_check_value(op, (int)(i / n), (size_t)rank * n + i % n);
    default: return NAN;
    }
}
