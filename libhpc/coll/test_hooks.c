/* test_hooks.c - the functions of test_hooks.h: thin views of internal
 * state for the tests, nothing a program needs. */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"
#include "test_hooks.h"

int hpc_coll_test_rows(hpc_coll_test_row_t *out, int max)
{
    int n;
    const coll_row_t *rows = coll_rows(&n);
    for (int i = 0; out && i < n && i < max; i++)
        out[i] = (hpc_coll_test_row_t){.coll = rows[i].coll, .alg = rows[i].alg,
                                       .has_builder = rows[i].build != NULL,
                                       .has_cost = rows[i].cost != NULL, .mem = rows[i].mem,
                                       .backend = rows[i].backend};
    return n;
}

double hpc_coll_test_row_cost(int i, size_t bytes, int p)
{
    int n;
    const coll_row_t *rows = coll_rows(&n);
    return i >= 0 && i < n && p > 0 ? coll_model_cost(&rows[i], bytes, p) : -1;
}

int hpc_coll_test_row_selftest(MPI_Comm comm, int i, int include_device, int *ncases, int *nfail)
{
    if (i < 0 || !ncases || !nfail) return HPC_ERR(HPC_ERR_ARG, "bad row or NULL output");
    hpc_selftest_t res;
    HPC_TRY(coll_selftest(comm, include_device, 0, i, &res));
    *ncases = res.cases;
    *nfail = res.failed;
    return 0;
}

int hpc_coll_test_flag_wait(void *stream, int *slot)
{
    return coll_dev_flag_wait(stream, slot);
}

void hpc_coll_test_flag_set(int slot)
{
    coll_dev_flag_set(slot);
}

int hpc_coll_test_flags_busy(void)
{
    return coll_dev_flags_busy();
}

void hpc_coll_test_dev_free(void *p, int kind)
{
    coll_dev_free(p, kind);
}

int hpc_coll_test_frees_pending(void)
{
    return coll_dev_frees_pending();
}

void hpc_coll_test_free_deferred(void)
{
    coll_dev_free_deferred();
}

void hpc_coll_test_reload_settings(void)
{
    coll_settings_reload();
}

void hpc_coll_test_limits(size_t max_message, size_t max_count)
{
    coll_max_message = max_message;
    coll_max_count = max_count;
}

void hpc_coll_test_split_counts(long *pieces, long *native)
{
    *pieces = coll_pieces;
    *native = coll_native_splits;
}

size_t hpc_coll_test_pool_bytes(MPI_Comm comm)
{
    coll_comm_t *cc = NULL;
    if (coll_get_comm(comm, &cc) < 0) return (size_t)-1;
    return cc->pool_bytes;
}

int hpc_coll_test_in_flight(void)
{
    return coll_requests_in_flight();
}

int hpc_coll_test_nodes(MPI_Comm comm, int *nnodes, int *node_of, int max)
{
    coll_comm_t *cc = NULL;
    HPC_TRY(coll_get_comm(comm, &cc));
    *nnodes = cc->topo.nnodes;
    for (int r = 0; node_of && r < max && r < cc->size; r++) node_of[r] = cc->topo.node_of[r];
    return 0;
}

int hpc_coll_test_choose(MPI_Comm comm, hpc_coll_t c, size_t bytes, hpc_alg_t *out)
{
    coll_comm_t *cc = NULL;
    HPC_TRY(coll_get_comm(comm, &cc));
    return coll_select_comm(cc, c, bytes, 0, out);
}

int hpc_coll_test_choose_shape(hpc_coll_t c, size_t bytes, int nnodes, int ppn, int dev, hpc_alg_t *out)
{
    if ((unsigned)c >= HPC_COLL_COUNT || nnodes < 1 || ppn < 1) return HPC_ERR(HPC_ERR_ARG, "bad shape");
    coll_shape_t sh = {.p = nnodes * ppn, .nnodes = nnodes, .ppn = ppn, .dev = dev, .cma = 0};
    return coll_select_shape(c, bytes, &sh, out);
}

int hpc_coll_test_phase(hpc_coll_t c, size_t bytes, int nnodes, int ppn, int shm, hpc_alg_t *out)
{
    if ((unsigned)c >= HPC_COLL_COUNT || nnodes < 1 || ppn < 1) return HPC_ERR(HPC_ERR_ARG, "bad shape");
    const coll_row_t *row = coll_select_phase(c, bytes, nnodes, ppn, shm, 0);
    if (!row) return HPC_ERR(HPC_ERR_STATE, "no algorithm for the phase");
    *out = row->alg;
    return 0;
}

int hpc_coll_test_segment(MPI_Comm comm, int *ranks, int *cma)
{
    coll_comm_t *cc = NULL;
    HPC_TRY(coll_get_comm(comm, &cc));
    *ranks = cc->seg ? cc->seg->m : 0;
    *cma = cc->seg ? cc->seg->cma : 0;
    return 0;
}

long hpc_coll_test_cma_moves(void)
{
    return coll_seg_moves();
}
