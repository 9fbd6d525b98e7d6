/* registry.h - the one table of algorithms: a row per (collective,
 * algorithm).  Everything else is derived from it (registry.c): the
 * builder prototypes, hpc_alg_name/hpc_alg_parse and their messages,
 * hpc_coll_has_alg, hpc_coll_algs, what auto's cost model weighs, what the
 * self-test runs and hpc-collbench compares.
 *
 * X(COLLECTIVE, ALGORITHM, BUILDER, MEMORY, BACKEND, COST):
 *   COLLECTIVE, ALGORITHM  the enum constants without HPC_COLL_ / HPC_ALG_;
 *              the algorithm's name is the constant in lower case
 *   BUILDER    int coll_BUILDER(coll_build_t *b) writes the schedule
 *   MEMORY     COLL_MEM_HOST, COLL_MEM_DEV or COLL_MEM_ANY: the buffers it
 *              takes (own algorithms run on device memory too: CUDA-aware
 *              MPI, or staged through pinned host memory)
 *   BACKEND    COLL_BE_P2P: an own schedule over MPI point-to-point (in
 *              place mapped, device memory staged where needed);
 *              COLL_BE_MPI: the MPI library's collective (staged where
 *              needed); COLL_BE_NCCL: NCCL on device memory, as is
 *   COST       seconds for n bytes per rank on P ranks - an expression in
 *              the names of coll_cost_in_t (A = alpha per message, B = beta
 *              per byte sent, G = gamma per byte reduced, n, P, L = ceil
 *              log2 P, f = (P-1)/P, pof2, fold, segs; the hierarchical
 *              rows also N nodes of Q = P/N ranks, AI and BI alpha and
 *              beta between nodes, Lq = ceil log2 Q, LN = ceil log2 N,
 *              fN = (N-1)/N, and INODE(C, bytes): the cheapest of
 *              collective C's own rows for bytes on the Q ranks of one
 *              node - what hier's in-node phase runs; the shared-memory
 *              rows AS = alpha to hand a flag to another core, BS = beta
 *              of one core's copy, C = bytes of a chunk (single copy:
 *              4C per read), SC = 1 where the call moves its data by
 *              single copy, else 0 - a single copy's system call is
 *              priced at 5 AS); commas only
 *              inside parentheses.  Classic costs from Thakur,
 *              Rabenseifner & Gropp, "Optimization of Collective
 *              Communication Operations in MPICH", IJHPCA 2005.  Ties go
 *              to the earlier row.
 *
 * The two backends are rows like the rest, with two documented costs:
 * native's is COLL_UNMODELLED (+inf: the MPI library picks its own
 * algorithm, which no formula here knows, so auto takes native only from
 * HPC_COLL_<OP> or the tuning file), nccl's is 0 (on device memory its
 * kernels beat any staged or CUDA-aware schedule, so auto takes it
 * wherever it is built in and the buffers are on the GPU).
 *
 * Adding an algorithm: write its builder in the family's file under alg/
 * and add its row here (and the HPC_ALG_ constant in hpc_coll.h if it is a
 * new family).  A row without a builder or a cost does not compile.
 */
#ifndef HPC_COLL_REGISTRY_H
#define HPC_COLL_REGISTRY_H

#define COLL_REGISTRY(X)                                                                        \
    X(BARRIER, NATIVE, native, COLL_MEM_ANY, COLL_BE_MPI, COLL_UNMODELLED)                      \
    X(BARRIER, NCCL, nccl, COLL_MEM_DEV, COLL_BE_NCCL, 0)                                       \
    X(BARRIER, LINEAR, barrier_linear, COLL_MEM_ANY, COLL_BE_P2P, 2 * (P - 1) * A)              \
    X(BARRIER, TREE, barrier_tree, COLL_MEM_ANY, COLL_BE_P2P, 2 * L * A)                        \
    X(BARRIER, BUTTERFLY, barrier_butterfly, COLL_MEM_ANY, COLL_BE_P2P, L * A)                  \
    X(BARRIER, SHM, barrier_shm, COLL_MEM_HOST, COLL_BE_P2P, N > 1 ? INFINITY : 2 * AS)         \
    X(BARRIER, HIER, barrier_hier, COLL_MEM_HOST, COLL_BE_P2P,                                  \
      (Q > 1 ? 2 * fmin(2 * AS, (Q - 1) * A) : 0) + LN * AI)                                    \
                                                                                                \
    X(BCAST, NATIVE, native, COLL_MEM_ANY, COLL_BE_MPI, COLL_UNMODELLED)                        \
    X(BCAST, NCCL, nccl, COLL_MEM_DEV, COLL_BE_NCCL, 0)                                         \
    X(BCAST, LINEAR, bcast_linear, COLL_MEM_ANY, COLL_BE_P2P, (P - 1) * (A + n * B))            \
    X(BCAST, TREE, bcast_tree, COLL_MEM_ANY, COLL_BE_P2P, L * (A + n * B))                      \
    X(BCAST, RING, bcast_ring, COLL_MEM_ANY, COLL_BE_P2P,                                       \
      (P - 2 + segs) * (A + n / segs * B))                                                      \
    X(BCAST, SCATTER_ALLGATHER, bcast_scatter_allgather, COLL_MEM_ANY, COLL_BE_P2P,             \
      (L + P - 1) * A + 2 * f * n * B)                                                          \
    /* shm: the root copies in, the others copy out, chunks pipelined;  \
     * single copy: one read of the root's buffer */                      \
    X(BCAST, SHM, bcast_shm, COLL_MEM_HOST, COLL_BE_P2P,                                        \
      N > 1 ? INFINITY : 2 * AS + SC * 5 * AS + (SC ? n : n + (n < C ? n : C)) * BS)                 \
    X(BCAST, HIER, bcast_hier, COLL_MEM_HOST, COLL_BE_P2P,                                      \
      LN * (AI + n * BI) + INODE(BCAST, n))                                                     \
                                                                                                \
    X(REDUCE, NATIVE, native, COLL_MEM_ANY, COLL_BE_MPI, COLL_UNMODELLED)                       \
    X(REDUCE, NCCL, nccl, COLL_MEM_DEV, COLL_BE_NCCL, 0)                                        \
    X(REDUCE, LINEAR, reduce_linear, COLL_MEM_ANY, COLL_BE_P2P, (P - 1) * (A + n * B + n * G))  \
    X(REDUCE, TREE, reduce_tree, COLL_MEM_ANY, COLL_BE_P2P, L * (A + n * B + n * G))            \
    X(REDUCE, RING, reduce_ring, COLL_MEM_ANY, COLL_BE_P2P,                                     \
      (P - 2 + segs) * (A + n / segs * (B + G)))                                                \
    X(REDUCE, RABENSEIFNER, reduce_rabenseifner, COLL_MEM_ANY, COLL_BE_P2P,                     \
      2 * L * A + 2 * f * n * B + f * n * G + fold)                                             \
    /* shm: a copy in, each rank reduces 1/P of every chunk into the     \
     * ring, the root copies out; single copy: each rank reads its slice \
     * of the others' inputs and writes its sum into the root's result */ \
    X(REDUCE, SHM, reduce_shm, COLL_MEM_HOST, COLL_BE_P2P,                                      \
      N > 1 ? INFINITY : 3 * AS + SC * 5 * AS * P * ceil(n / (4 * C * P)) +                       \
      (SC ? n : 2 * n + n / P) * BS + f * n * G)                                                \
    X(REDUCE, HIER, reduce_hier, COLL_MEM_HOST, COLL_BE_P2P,                                    \
      INODE(REDUCE, n) + 2 * LN * AI + 2 * fN * n * BI + fN * n * G)                            \
                                                                                                \
    X(ALLREDUCE, NATIVE, native, COLL_MEM_ANY, COLL_BE_MPI, COLL_UNMODELLED)                    \
    X(ALLREDUCE, NCCL, nccl, COLL_MEM_DEV, COLL_BE_NCCL, 0)                                     \
    X(ALLREDUCE, LINEAR, allreduce_linear, COLL_MEM_ANY, COLL_BE_P2P,                           \
      2 * (P - 1) * (A + n * B) + (P - 1) * n * G)                                              \
    X(ALLREDUCE, TREE, allreduce_tree, COLL_MEM_ANY, COLL_BE_P2P,                               \
      2 * L * (A + n * B) + L * n * G)                                                          \
    X(ALLREDUCE, RING, allreduce_ring, COLL_MEM_ANY, COLL_BE_P2P,                               \
      2 * (P - 1) * A + 2 * f * n * B + f * n * G + (segs - 1) * A)                             \
    X(ALLREDUCE, BUTTERFLY, allreduce_butterfly, COLL_MEM_ANY, COLL_BE_P2P,                     \
      L * (A + n * B + n * G) + fold)                                                           \
    X(ALLREDUCE, RABENSEIFNER, allreduce_rabenseifner, COLL_MEM_ANY, COLL_BE_P2P,               \
      2 * L * A + 2 * f * n * B + f * n * G + fold)                                             \
    /* shm: what bounds it is memory, not the copies through the cached \
     * segment: each rank reads n and writes n (one copy's worth, n BS), \
     * reduces fn; per chunk a few flags handed between the cores, and   \
     * by single copy a system call per mate and chunk of 4PC (at most   \
     * 2 MiB) (issue 29: pricing the cached copies at memory's rate put  \
     * shm behind Rabenseifner at 8 MiB where it ran 1.65x faster) */    \
    X(ALLREDUCE, SHM, allreduce_shm, COLL_MEM_HOST, COLL_BE_P2P,                                \
      N > 1 ? INFINITY : 3 * AS + (SC ? (5 * (P - 1) + 1) * AS * ceil(n / fmin(4 * P * C, 2097152))     \
                                      : 3 * AS * ceil(n / C)) + n * BS + f * n * G)             \
    X(ALLREDUCE, HIER, allreduce_hier, COLL_MEM_HOST, COLL_BE_P2P,                              \
      INODE(REDUCE, n) + 2 * LN * AI + 2 * fN * n * BI + fN * n * G + INODE(BCAST, n))          \
                                                                                                \
    /* gather, allgather, scatter, reduce_scatter, alltoall: n is one block */                  \
    X(GATHER, NATIVE, native, COLL_MEM_ANY, COLL_BE_MPI, COLL_UNMODELLED)                       \
    X(GATHER, NCCL, nccl, COLL_MEM_DEV, COLL_BE_NCCL, 0)                                        \
    X(GATHER, LINEAR, gather_linear, COLL_MEM_ANY, COLL_BE_P2P, (P - 1) * A + (P - 1) * n * B)  \
    X(GATHER, TREE, gather_tree, COLL_MEM_ANY, COLL_BE_P2P, L * A + (P - 1) * n * B)            \
    X(GATHER, SHM, gather_shm, COLL_MEM_HOST, COLL_BE_P2P,                                      \
      N > 1 ? INFINITY : 2 * AS + SC * 5 * AS * (P - 1) + (SC ? P * n : (P + 1) * n) * BS)           \
                                                                                                \
    X(ALLGATHER, NATIVE, native, COLL_MEM_ANY, COLL_BE_MPI, COLL_UNMODELLED)                    \
    X(ALLGATHER, NCCL, nccl, COLL_MEM_DEV, COLL_BE_NCCL, 0)                                     \
    X(ALLGATHER, LINEAR, allgather_linear, COLL_MEM_ANY, COLL_BE_P2P,                           \
      2 * (P - 1) * A + (P - 1) * n * B + (P - 1) * P * n * B)                                  \
    X(ALLGATHER, RING, allgather_ring, COLL_MEM_ANY, COLL_BE_P2P, (P - 1) * (A + n * B))        \
    X(ALLGATHER, BUTTERFLY, allgather_butterfly, COLL_MEM_ANY, COLL_BE_P2P,                     \
      L * A + (P - 1) * n * B + (pof2 == P ? 0 : 2 * A + P * n * B))                            \
    X(ALLGATHER, BRUCK, allgather_bruck, COLL_MEM_ANY, COLL_BE_P2P,                             \
      L * A + (P - 1) * n * B + P * n * B * 0.5) /* + the local rotation */                     \
    /* shm: each rank's block in, all P blocks out; single copy: P - 1   \
     * reads straight into the result */                                  \
    X(ALLGATHER, SHM, allgather_shm, COLL_MEM_HOST, COLL_BE_P2P,                                \
      N > 1 ? INFINITY : 2 * AS + SC * 5 * AS * (P - 1) + (SC ? P * n : (P + 1) * n) * BS)           \
    X(ALLGATHER, HIER, allgather_hier, COLL_MEM_HOST, COLL_BE_P2P,                              \
      INODE(GATHER, n) + (N - 1) * (AI + Q * n * BI) + INODE(BCAST, P * n))                     \
                                                                                                \
    X(SCATTER, NATIVE, native, COLL_MEM_ANY, COLL_BE_MPI, COLL_UNMODELLED)                      \
    X(SCATTER, NCCL, nccl, COLL_MEM_DEV, COLL_BE_NCCL, 0)                                       \
    X(SCATTER, LINEAR, scatter_linear, COLL_MEM_ANY, COLL_BE_P2P, (P - 1) * A + (P - 1) * n * B) \
    X(SCATTER, TREE, scatter_tree, COLL_MEM_ANY, COLL_BE_P2P, L * A + (P - 1) * n * B)          \
    X(SCATTER, SHM, scatter_shm, COLL_MEM_HOST, COLL_BE_P2P,                                    \
      N > 1 ? INFINITY : 2 * AS + SC * 5 * AS + (SC ? n : (P + 1) * n) * BS)                         \
                                                                                                \
    X(REDUCE_SCATTER, NATIVE, native, COLL_MEM_ANY, COLL_BE_MPI, COLL_UNMODELLED)               \
    X(REDUCE_SCATTER, NCCL, nccl, COLL_MEM_DEV, COLL_BE_NCCL, 0)                                \
    X(REDUCE_SCATTER, LINEAR, reduce_scatter_linear, COLL_MEM_ANY, COLL_BE_P2P,                 \
      (P - 1) * (A + P * n * (B + G)) + (P - 1) * (A + n * B))                                  \
    X(REDUCE_SCATTER, RING, reduce_scatter_ring, COLL_MEM_ANY, COLL_BE_P2P,                     \
      (P - 1) * (A + n * B + n * G))                                                            \
    X(REDUCE_SCATTER, BUTTERFLY, reduce_scatter_butterfly, COLL_MEM_ANY, COLL_BE_P2P,           \
      L * A + (P - 1) * n * (B + G) + (pof2 == P ? 0 : 2 * A + P * n * (B + G)))                \
    /* shm: the whole input in, each rank reduces its own block from     \
     * every slot; single copy: its block read from every other rank */  \
    X(REDUCE_SCATTER, SHM, reduce_scatter_shm, COLL_MEM_HOST, COLL_BE_P2P,                      \
      N > 1 ? INFINITY : 2 * AS + SC * 5 * AS * (P - 1) * ceil(n / (4 * C)) +                       \
      (SC ? P * n : (P + 1) * n) * BS + (P - 1) * n * G)                                        \
    X(REDUCE_SCATTER, HIER, reduce_scatter_hier, COLL_MEM_HOST, COLL_BE_P2P,                    \
      INODE(REDUCE, P * n) + (N - 1) * (AI + Q * n * (BI + G)) + INODE(SCATTER, n))             \
                                                                                                \
    X(ALLTOALL, NATIVE, native, COLL_MEM_ANY, COLL_BE_MPI, COLL_UNMODELLED)                     \
    X(ALLTOALL, NCCL, nccl, COLL_MEM_DEV, COLL_BE_NCCL, 0)                                      \
    X(ALLTOALL, LINEAR, alltoall_linear, COLL_MEM_ANY, COLL_BE_P2P, (P - 1) * n * B + 2 * A)    \
    X(ALLTOALL, RING, alltoall_ring, COLL_MEM_ANY, COLL_BE_P2P, (P - 1) * (A + n * B))          \
    X(ALLTOALL, BRUCK, alltoall_bruck, COLL_MEM_ANY, COLL_BE_P2P,                               \
      L * (A + P / 2 * n * B) + 2 * P * n * B * 0.25)

#endif /* HPC_COLL_REGISTRY_H */
