/* grid.c - 2D process grids and the index maths of blocked data.
 *
 * A grid of prows x pcols ranks, row-major over the communicator, with a
 * communicator per grid row (rank = column) and per column (rank = row):
 * what SUMMA, 2D stencils and block-cyclic layouts broadcast along.
 */
#include "config.h"
#include <stdlib.h>
#include "app_internal.h"

struct hpc_grid {
    int prows, pcols, row, col;
    MPI_Comm row_comm, col_comm;
};

void hpc_grid_dims(int n, int *prows, int *pcols)
{
    int r = 1;
    for (int d = 1; (long)d * d <= n; d++)
        if (n % d == 0) r = d;
    *prows = r;
    *pcols = n / r;
}

int hpc_grid_create(MPI_Comm comm, int prows, int pcols, hpc_grid_t **out)
{
    int rank, size;
    HPC_MPI(MPI_Comm_rank(comm, &rank));
    HPC_MPI(MPI_Comm_size(comm, &size));
    if (prows == 0 && pcols == 0) hpc_grid_dims(size, &prows, &pcols);
    if (prows < 1 || pcols < 1 || (long)prows * pcols != size)
        return HPC_ERR(HPC_ERR_ARG, "a %dx%d grid needs %ld ranks, the job has %d", prows, pcols,
                       (long)prows * pcols, size);
    hpc_grid_t *g = calloc(1, sizeof *g);
    if (!g) return HPC_ERR(HPC_ERR_NOMEM, "grid");
    g->prows = prows;
    g->pcols = pcols;
    g->row = rank / pcols;
    g->col = rank % pcols;
    int rc = MPI_Comm_split(comm, g->row, g->col, &g->row_comm);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_split(comm, g->col, g->row, &g->col_comm);
    if (rc != MPI_SUCCESS) {
        free(g);
        return hpc_error_mpi(rc, __FILE__, __LINE__, "MPI_Comm_split");
    }
    *out = g;
    return 0;
}

int hpc_grid_prows(const hpc_grid_t *g) { return g->prows; }
int hpc_grid_pcols(const hpc_grid_t *g) { return g->pcols; }
int hpc_grid_row(const hpc_grid_t *g) { return g->row; }
int hpc_grid_col(const hpc_grid_t *g) { return g->col; }
MPI_Comm hpc_grid_row_comm(const hpc_grid_t *g) { return g->row_comm; }
MPI_Comm hpc_grid_col_comm(const hpc_grid_t *g) { return g->col_comm; }

void hpc_grid_free(hpc_grid_t *g)
{
    if (!g) return;
    MPI_Comm_free(&g->row_comm);
    MPI_Comm_free(&g->col_comm);
    free(g);
}

void hpc_block_range(int64_t n, int parts, int i, int64_t *start, int64_t *count)
{
    int64_t q = n / parts, r = n % parts;
    *start = i * q + (i < r ? i : r);
    *count = q + (i < r);
}

int hpc_block_owner(int64_t n, int parts, int64_t k)
{
    int64_t q = n / parts, r = n % parts;
    /* the first r blocks have q + 1 elements */
    if (q == 0 || k < r * (q + 1)) return (int)(k / (q + 1));
    return (int)(r + (k - r * (q + 1)) / q);
}

int64_t hpc_bc_numroc(int64_t n, int64_t nb, int iproc, int nprocs)
{
    int64_t nblocks = n / nb, len = (nblocks / nprocs) * nb;
    int64_t extra = nblocks % nprocs;
    if (iproc < extra) len += nb;
    else if (iproc == extra) len += n % nb;
    return len;
}

int hpc_bc_owner(int64_t k, int64_t nb, int nprocs)
{
    return (int)((k / nb) % nprocs);
}

int64_t hpc_bc_local(int64_t k, int64_t nb, int nprocs)
{
    return (k / (nb * nprocs)) * nb + k % nb;
}

int64_t hpc_bc_global(int64_t l, int64_t nb, int iproc, int nprocs)
{
    return ((l / nb) * nprocs + iproc) * nb + l % nb;
}
