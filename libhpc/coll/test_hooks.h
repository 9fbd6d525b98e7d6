/* test_hooks.h - what the tests see of the collectives' insides; not
 * installed, not exported: test_hooks.c is in the convenience library
 * libhpc/libtesting.la, which the tests link with libhpc's objects.
 */
#ifndef HPC_COLL_TEST_HOOKS_H
#define HPC_COLL_TEST_HOOKS_H

#include "hpc_coll.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One row of the registry (libhpc/coll/registry.h). */
typedef struct {
    hpc_coll_t coll;
    hpc_alg_t alg;
    int has_builder, has_cost;
    unsigned mem;           /* 1 host buffers, 2 device buffers, 3 both */
    int backend;            /* 0 own schedule over MPI p2p, 1 MPI's collective, 2 NCCL */
} hpc_coll_test_row_t;

/* The rows, the first max of them into out; returns how many there are. */
int hpc_coll_test_rows(hpc_coll_test_row_t *out, int max);
/* Row i's cost formula for bytes per rank on p ranks (the default model). */
double hpc_coll_test_row_cost(int i, size_t bytes, int p);
/* The self-test of row i alone (collective over comm): *ncases run. */
int hpc_coll_test_row_selftest(MPI_Comm comm, int i, int include_device, int *ncases,
                                          int *nfail);
/* Lower the limits meant for 2 GiB messages: bytes per point-to-point
 * message (default 1 GiB) and elements per MPI collective call (default
 * INT_MAX), so small buffers exercise the splitting.  Same on all ranks. */
void hpc_coll_test_limits(size_t max_message, size_t max_count);
/* How often they cut: extra messages, MPI calls split or given a big type. */
void hpc_coll_test_split_counts(long *pieces, long *native);

/* Bytes of scratch buffers comm's pool holds now. */
size_t hpc_coll_test_pool_bytes(MPI_Comm comm);

/* The nodes libhpc sees in comm (HPC_NODE_SPLIT too): *nnodes, and the
 * node of each of its first max ranks into node_of (may be NULL). */
int hpc_coll_test_nodes(MPI_Comm comm, int *nnodes, int *node_of, int max);

/* What auto picks on comm (its nodes known) for c with bytes per rank. */
int hpc_coll_test_choose(MPI_Comm comm, hpc_coll_t c, size_t bytes, hpc_alg_t *out);

/* What auto picks for c with bytes per rank on nnodes nodes of ppn ranks
 * (the largest), dev: device memory - HPC_COLL_<OP>, the tuning file's
 * rows for that shape, the model (no communicator: single copy not
 * counted). */
HPC_EXPORT int hpc_coll_test_choose_shape(hpc_coll_t c, size_t bytes, int nnodes, int ppn, int dev,
                                          hpc_alg_t *out);
/* What hier runs in a phase of c: in a node of ppn ranks (nnodes 1; shm:
 * the node has its segment) or among nnodes leaders (ppn 1). */
HPC_EXPORT int hpc_coll_test_phase(hpc_coll_t c, size_t bytes, int nnodes, int ppn, int shm, hpc_alg_t *out);
/* comm's shared segment on this node: *ranks on it (0: none), *cma: single
 * copy works there. */
HPC_EXPORT int hpc_coll_test_segment(MPI_Comm comm, int *ranks, int *cma);
/* Single copies (process_vm_readv/_writev calls of shm) this process made. */
long hpc_coll_test_cma_moves(void);

/* Requests in flight (freed ones included). */
int hpc_coll_test_in_flight(void);

/* The device side's frees and stream-wait flags (devsync.c, device.c):
 * park a stream-wait kernel on stream (its slot in *slot), let it go,
 * the slots still busy, device frees kept back, and the progress that
 * makes them once no slot is busy.  kind: 1 pinned host, 2 device. */
int hpc_coll_test_flag_wait(void *stream, int *slot);
void hpc_coll_test_flag_set(int slot);
int hpc_coll_test_flags_busy(void);
void hpc_coll_test_dev_free(void *p, int kind);
int hpc_coll_test_frees_pending(void);
void hpc_coll_test_free_deferred(void);

/* Read the HPC_* settings again (they are read once, on first use), for
 * tests that change them with setenv. */
void hpc_coll_test_reload_settings(void);

#ifdef __cplusplus
}
#endif
#endif /* HPC_COLL_TEST_HOOKS_H */
