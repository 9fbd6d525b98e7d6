/* colls.h - what each collective is, written once (as nccl-tests keeps one
 * struct per collective): the one table every other description of a
 * collective derives from.  Macros only - no code, no symbols - so the
 * public API wrappers (api.c), names and buffer counts (types.c), MPI's
 * native calls (native.c), the PMPI drop-in (libhpc/mpi/pmpi.c) and
 * hpc-collbench's bus factor and the HPC_COLL_<OP> settings
 * (settings_rows.h) all expand the same rows.
 *
 * COLL_TABLE(X) calls X once per collective, in hpc_coll_t's order (the
 * public enum in hpc_coll.h is the ABI; types.c asserts the two agree):
 *
 *   X(name, ENUM, SIG, SEND, RECV, ALIAS, BUS, Mpi, Impi, STREAM)
 *
 *   name    hpc_<name>, hpc_i<name>, the name hpc_coll_name gives
 *   ENUM    HPC_COLL_<ENUM>
 *   SIG     the shape of its arguments, which also says whether it is
 *           rooted and whether it reduces (below): the same shape in
 *           hpckit's API and in MPI's
 *   SEND    elements this rank sends / receives, for count n on p ranks:
 *   RECV    NONE, N, PN, ROOT_N or ROOT_PN (at the root, else none)
 *   ALIAS   which aliasing of sendbuf and recvbuf is "in place", as
 *           HPC_IN_PLACE is (hpc_coll.h): NONE, SAME (the same pointer),
 *           BLOCK (sendbuf is this rank's block of recvbuf), ROOT_BLOCK
 *           (that, at the root), ROOT_SCATTER (recvbuf is the root's
 *           block of sendbuf, at the root)
 *   BUS     bus bandwidth over algorithm bandwidth on p ranks (nccl-tests'
 *           factors; an expression in p, a double)
 *   Mpi     MPI_<Mpi> and MPI_<Impi>: its native call, blocking and not
 *   Impi    (PMPI_... in the drop-in); the same argument shape as SIG
 *   STREAM  1: it has a stream-ordered form hpc_i<name>_stream
 *
 * The shapes (SIG): NONE (barrier), BUF_ROOT (bcast: one buffer, a
 * root), RED_ROOT and RED (a reduction, with a root or to all), MOVE_ROOT
 * and MOVE (data movement, with a root or among all).  Adding a
 * collective: a row here, its constant in hpc_coll.h's enum and its
 * declarations there (the documented API, from which the man pages are
 * made), and its algorithms' builders and rows in the registry.
 */
#ifndef COLL_COLLS_H
#define COLL_COLLS_H

#define COLL_TABLE(X)                                                                                                                              \
    X(barrier,        BARRIER,        NONE,      NONE,    NONE,    NONE,         0,               Barrier,              Ibarrier,              0)  \
    X(bcast,          BCAST,          BUF_ROOT,  NONE,    N,       NONE,         1,               Bcast,                Ibcast,                1)  \
    X(reduce,         REDUCE,         RED_ROOT,  N,       ROOT_N,  SAME,         1,               Reduce,               Ireduce,               1)  \
    X(allreduce,      ALLREDUCE,      RED,       N,       N,       SAME,         2 * (p - 1) / p, Allreduce,            Iallreduce,            1)  \
    X(gather,         GATHER,         MOVE_ROOT, N,       ROOT_PN, ROOT_BLOCK,   (p - 1) / p,     Gather,               Igather,               0)  \
    X(allgather,      ALLGATHER,      MOVE,      N,       PN,      BLOCK,        (p - 1) / p,     Allgather,            Iallgather,            1)  \
    X(scatter,        SCATTER,        MOVE_ROOT, ROOT_PN, N,       ROOT_SCATTER, (p - 1) / p,     Scatter,              Iscatter,              0)  \
    X(reduce_scatter, REDUCE_SCATTER, RED,       PN,      N,       SAME,         (p - 1) / p,     Reduce_scatter_block, Ireduce_scatter_block, 1)  \
    X(alltoall,       ALLTOALL,       MOVE,      PN,      PN,      SAME,         (p - 1) / p,     Alltoall,             Ialltoall,             0)

/* What a shape says: rooted, reduces */
#define COLL_SIG_ROOTED(SIG) COLL_SIG_ROOTED_##SIG
#define COLL_SIG_ROOTED_NONE 0
#define COLL_SIG_ROOTED_BUF_ROOT 1
#define COLL_SIG_ROOTED_RED_ROOT 1
#define COLL_SIG_ROOTED_RED 0
#define COLL_SIG_ROOTED_MOVE_ROOT 1
#define COLL_SIG_ROOTED_MOVE 0
#define COLL_SIG_REDUCES(SIG) COLL_SIG_REDUCES_##SIG
#define COLL_SIG_REDUCES_NONE 0
#define COLL_SIG_REDUCES_BUF_ROOT 0
#define COLL_SIG_REDUCES_RED_ROOT 1
#define COLL_SIG_REDUCES_RED 1
#define COLL_SIG_REDUCES_MOVE_ROOT 0
#define COLL_SIG_REDUCES_MOVE 0

/* A count (SEND, RECV) for count n, n * p (pn) and whether this rank is
 * the root */
#define COLL_CNT_OF(C, n, pn, isroot) COLL_CNT_##C(n, pn, isroot)
#define COLL_CNT_NONE(n, pn, isroot) ((size_t)0)
#define COLL_CNT_N(n, pn, isroot) ((size_t)(n))
#define COLL_CNT_PN(n, pn, isroot) ((size_t)(pn))
#define COLL_CNT_ROOT_N(n, pn, isroot) ((isroot) ? (size_t)(n) : (size_t)0)
#define COLL_CNT_ROOT_PN(n, pn, isroot) ((isroot) ? (size_t)(pn) : (size_t)0)

/* Is the call in place by aliasing (ALIAS)?  s, r: sendbuf and recvbuf
 * as char pointers (NULL for HPC_IN_PLACE), off: this rank's block's
 * offset in bytes.  And which of the two then stands for HPC_IN_PLACE:
 * 1 sendbuf, 2 recvbuf */
#define COLL_ALIAS_OF(A, s, r, isroot, off) COLL_ALIAS_##A(s, r, isroot, off)
#define COLL_ALIAS_NONE(s, r, isroot, off) 0
#define COLL_ALIAS_SAME(s, r, isroot, off) ((s) == (r))
#define COLL_ALIAS_BLOCK(s, r, isroot, off) ((r) && (s) == (r) + (off))
#define COLL_ALIAS_ROOT_BLOCK(s, r, isroot, off) ((isroot) && (r) && (s) == (r) + (off))
#define COLL_ALIAS_ROOT_SCATTER(s, r, isroot, off) ((isroot) && (s) && (r) == (s) + (off))
#define COLL_ALIAS_SIDE(A) COLL_ALIAS_SIDE_##A
#define COLL_ALIAS_SIDE_NONE 0
#define COLL_ALIAS_SIDE_SAME 1
#define COLL_ALIAS_SIDE_BLOCK 1
#define COLL_ALIAS_SIDE_ROOT_BLOCK 1
#define COLL_ALIAS_SIDE_ROOT_SCATTER 2

/* Expand to its arguments where FLAG is 1, to nothing where it is 0 */
#define COLL_IF(FLAG, ...) COLL_IF_##FLAG(__VA_ARGS__)
#define COLL_IF_0(...)
#define COLL_IF_1(...) __VA_ARGS__

#endif
