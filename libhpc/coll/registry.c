/* registry.c - which algorithms exist: the builder of each (collective,
 * algorithm), and the algorithms' names.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

static const char *const alg_names[HPC_ALG_COUNT] = {
    "auto", "native", "nccl", "linear", "tree", "ring", "butterfly",
    "rabenseifner", "bruck", "scatter_allgather"};

const char *hpc_alg_name(hpc_alg_t a)
{
    return (unsigned)a < HPC_ALG_COUNT ? alg_names[a] : "?";
}

int hpc_alg_parse(const char *s, hpc_alg_t *out)
{
    int i = -1;
    for (int k = 0; s && k < HPC_ALG_COUNT && i < 0; k++)
        if (coll_name_eq(s, alg_names[k])) i = k;
    if (i < 0 && s) {
        if (coll_name_eq(s, "binomial")) i = HPC_ALG_TREE;
        else if (coll_name_eq(s, "recursive_doubling")) i = HPC_ALG_BUTTERFLY;
        else if (coll_name_eq(s, "mpi")) i = HPC_ALG_NATIVE;
    }
    if (i < 0)
        return HPC_ERR(HPC_ERR_ARG, "unknown algorithm '%s' (auto, native, nccl, linear, tree, "
                       "ring, butterfly, rabenseifner, bruck, scatter_allgather)",
                       s ? s : "(null)");
    *out = (hpc_alg_t)i;
    return 0;
}

static const coll_builder_fn builders[HPC_COLL_COUNT][HPC_ALG_COUNT] = {
    [HPC_COLL_BARRIER] = {[HPC_ALG_LINEAR] = coll_barrier_linear,
                          [HPC_ALG_TREE] = coll_barrier_tree,
                          [HPC_ALG_BUTTERFLY] = coll_barrier_butterfly},
    [HPC_COLL_BCAST] = {[HPC_ALG_LINEAR] = coll_bcast_linear,
                        [HPC_ALG_TREE] = coll_bcast_tree,
                        [HPC_ALG_RING] = coll_bcast_ring,
                        [HPC_ALG_SCATTER_ALLGATHER] = coll_bcast_scatter_allgather},
    [HPC_COLL_REDUCE] = {[HPC_ALG_LINEAR] = coll_reduce_linear,
                         [HPC_ALG_TREE] = coll_reduce_tree,
                         [HPC_ALG_RING] = coll_reduce_ring,
                         [HPC_ALG_RABENSEIFNER] = coll_reduce_rabenseifner},
    [HPC_COLL_ALLREDUCE] = {[HPC_ALG_LINEAR] = coll_allreduce_linear,
                            [HPC_ALG_TREE] = coll_allreduce_tree,
                            [HPC_ALG_RING] = coll_allreduce_ring,
                            [HPC_ALG_BUTTERFLY] = coll_allreduce_butterfly,
                            [HPC_ALG_RABENSEIFNER] = coll_allreduce_rabenseifner},
    [HPC_COLL_GATHER] = {[HPC_ALG_LINEAR] = coll_gather_linear,
                         [HPC_ALG_TREE] = coll_gather_tree},
    [HPC_COLL_ALLGATHER] = {[HPC_ALG_LINEAR] = coll_allgather_linear,
                            [HPC_ALG_RING] = coll_allgather_ring,
                            [HPC_ALG_BUTTERFLY] = coll_allgather_butterfly,
                            [HPC_ALG_BRUCK] = coll_allgather_bruck},
    [HPC_COLL_SCATTER] = {[HPC_ALG_LINEAR] = coll_scatter_linear,
                          [HPC_ALG_TREE] = coll_scatter_tree},
    [HPC_COLL_REDUCE_SCATTER] = {[HPC_ALG_LINEAR] = coll_reduce_scatter_linear,
                                 [HPC_ALG_RING] = coll_reduce_scatter_ring,
                                 [HPC_ALG_BUTTERFLY] = coll_reduce_scatter_butterfly},
    [HPC_COLL_ALLTOALL] = {[HPC_ALG_LINEAR] = coll_alltoall_linear,
                           [HPC_ALG_RING] = coll_alltoall_ring,
                           [HPC_ALG_BRUCK] = coll_alltoall_bruck},
};

coll_builder_fn coll_builder(hpc_coll_t c, hpc_alg_t a)
{
    if ((unsigned)c >= HPC_COLL_COUNT || (unsigned)a >= HPC_ALG_COUNT) return NULL;
    return builders[c][a];
}

int hpc_coll_has_alg(hpc_coll_t c, hpc_alg_t a)
{
    if ((unsigned)c >= HPC_COLL_COUNT || (unsigned)a >= HPC_ALG_COUNT) return 0;
    if (a == HPC_ALG_AUTO || a == HPC_ALG_NATIVE) return 1;
    /* NCCL: its own collectives, barrier as a one-element allreduce,
     * gather/scatter/alltoall as grouped send/recv */
    if (a == HPC_ALG_NCCL) return 1;
    return coll_builder(c, a) != NULL;
}
