/* dist.c - who owns what: the grid, and each rank's blocks of A, B, C.
 *
 * Balanced contiguous blocks (hpc_block_range) rather than block-cyclic:
 * every rank reads and writes one hyperslab per matrix, and the local
 * GEMMs run on the largest operands the blocks allow.  The K dimension is
 * split over the grid columns for A and over the grid rows for B, so a
 * panel of K has one owner column (A) and one owner row (B).
 */
#include "config.h"
#include "matmul.h"

int mm_dist_init(mm_dist_t *d, const mm_opts_t *o)
{
    d->m = o->m;
    d->n = o->n;
    d->k = o->k;
    HPC_TRY(hpc_grid_create(hpc_comm_world(), (int)o->prows, (int)o->pcols, &d->grid));
    d->pr = hpc_grid_prows(d->grid);
    d->pc = hpc_grid_pcols(d->grid);
    d->r = hpc_grid_row(d->grid);
    d->c = hpc_grid_col(d->grid);
    hpc_block_range(d->m, d->pr, d->r, &d->am0, &d->amr);
    hpc_block_range(d->k, d->pc, d->c, &d->ak0, &d->akc);
    hpc_block_range(d->k, d->pr, d->r, &d->bk0, &d->bkr);
    hpc_block_range(d->n, d->pc, d->c, &d->bn0, &d->bnc);
    return 0;
}

void mm_dist_free(mm_dist_t *d)
{
    hpc_grid_free(d->grid);
    d->grid = NULL;
}

int mm_a_owner(const mm_dist_t *d, int64_t k)
{
    return hpc_block_owner(d->k, d->pc, k);
}

int mm_b_owner(const mm_dist_t *d, int64_t k)
{
    return hpc_block_owner(d->k, d->pr, k);
}

int64_t mm_panel_end(const mm_dist_t *d, int64_t k0, int64_t nb)
{
    int64_t s, n, end = k0 + nb;
    hpc_block_range(d->k, d->pc, mm_a_owner(d, k0), &s, &n);
    if (s + n < end) end = s + n;
    hpc_block_range(d->k, d->pr, mm_b_owner(d, k0), &s, &n);
    if (s + n < end) end = s + n;
    return end < d->k ? end : d->k;
}

double mm_rank_bytes(const mm_dist_t *d, const mm_opts_t *o)
{
    double es = (double)mm_esize(o->dtype);
    double blocks = ((double)d->amr * d->akc + (double)d->bkr * d->bnc + (double)d->amr * d->bnc + 3) * es;
    /* SUMMA's two slots of panels (summa.c's setup), host memory on the CPU */
    double panels = o->device == MM_CPU ? 2.0 * ((double)d->amr * o->nb + (double)o->nb * d->bnc + 2) * es : 0;
    return blocks + panels + (o->verify ? mm_verify_bytes(d) : 0);
}
