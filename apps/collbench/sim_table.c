/* sim_table.c - hpc-collbench --simulate --ranks N --nodes K: the table a
 * measured run prints, predicted for a job this machine cannot run.
 *
 * Every algorithm of the collective that has a schedule of its own is
 * simulated by libhpc (hpc_coll_simulate: its real builders for all N
 * ranks, played against the cost model, no MPI traffic) at every size;
 * native and nccl have none and are left out.  Sizes, counts, algbw and
 * busbw follow the measured table's conventions (nccl-tests').  Rank 0
 * does it alone.  --csv writes the rows too (placement "simulated"), and
 * the caller may take every cell (hpc-collbench --plot draws them).
 */
#include "config.h"
#include "hpc_app.h"
#include "hpc_coll.h"
#include "model.h"

#include <string.h>

static double busbw_factor(hpc_coll_t c, double p)
{
    if (c == HPC_COLL_ALLREDUCE) return 2 * (p - 1) / p;
    if (c == HPC_COLL_BCAST || c == HPC_COLL_REDUCE) return 1;
    return c == HPC_COLL_BARRIER ? 0 : (p - 1) / p;
}

/* elements per rank for a row of size bytes (the whole buffer) */
static size_t sim_count(hpc_coll_t c, size_t size, size_t es, int p)
{
    if (c == HPC_COLL_BARRIER) return 0;
    if (c == HPC_COLL_BCAST || c == HPC_COLL_REDUCE || c == HPC_COLL_ALLREDUCE) return size / es;
    return size / es / (size_t)p;
}

/* The algorithms to simulate: those given, else every one with a schedule. */
static int sim_algs(const sim_opts_t *s, hpc_alg_t *out)
{
    hpc_alg_t all[HPC_ALG_COUNT];
    int n = 0, k = s->nalg ? s->nalg : hpc_coll_algs(s->coll, all, HPC_ALG_COUNT);
    for (int i = 0; i < k; i++) {
        hpc_alg_t a = s->nalg ? s->algs[i] : all[i];
        if (a == HPC_ALG_NATIVE || a == HPC_ALG_NCCL || a == HPC_ALG_AUTO) continue;
        if (a == HPC_ALG_SHM && s->nodes == 1) continue;
        out[n++] = a;
    }
    return n;
}

int simulate_run(const sim_opts_t *s, FILE *csv)
{
    if (hpc_rank() != 0) return 0;
    hpc_alg_t algs[HPC_ALG_COUNT];
    int nalg = sim_algs(s, algs), fails = 0;
    if (s->algs_out) memcpy(s->algs_out, algs, sizeof algs);
    if (s->nalg_out) *s->nalg_out = nalg;
    size_t es = hpc_dtype_size(s->dt);
    printf("# hpc-collbench --simulate: %s %s, %d ranks on %d nodes (blocks of %d), predicted from "
           "the schedules and the cost model, no MPI traffic\n", hpc_coll_name(s->coll),
           hpc_dtype_name(s->dt), s->ranks, s->nodes, (s->ranks + s->nodes - 1) / s->nodes);
    printf("# %11s %11s", "", "");
    for (int i = 0; i < nalg; i++) printf("  %-25s", hpc_alg_name(algs[i]));
    printf("\n# %11s %11s", "size", "count");
    for (int i = 0; i < nalg; i++) printf("  %9s %7s %7s", "time", "algbw", "busbw");
    printf("\n# %11s %11s", "(B)", "(elements)");
    for (int i = 0; i < nalg; i++) printf("  %9s %7s %7s", "(us)", "(GB/s)", "(GB/s)");
    printf("\n");
    for (size_t size = s->minb; size <= s->maxb; size = (size_t)((double)size * s->factor) > size
                                                      ? (size_t)((double)size * s->factor) : size + 1) {
        size_t count = sim_count(s->coll, size, es, s->ranks);
        printf("  %11zu %11zu", size, count);
        for (int i = 0; i < nalg; i++) {
            double t = 0;
            if (hpc_coll_simulate(s->coll, algs[i], count, s->dt, s->ranks, s->nodes, &t) < 0) {
                printf("  %9s %7s %7s", "N/A", "", "");
                if (s->cell) s->cell(s->ctx, size, count, i, 0, 0, 0, 0);
                if (!fails++) fprintf(stderr, "hpc-collbench: --simulate: %s\n", hpc_last_error());
                hpc_error_clear();
                continue;
            }
            double algbw = t > 0 ? (double)size / t / 1e9 : 0, bus = algbw * busbw_factor(s->coll, s->ranks);
            printf("  %9.2f %7.2f %7.2f", t * 1e6, algbw, bus);
            if (s->cell) s->cell(s->ctx, size, count, i, t * 1e6, algbw, bus, 1);
            if (csv)
                fprintf(csv, "%s,%s,%s,sum,%d,host,simulated,%zu,%zu,%g,%g,%g,0\n", hpc_coll_name(s->coll),
                        hpc_alg_name(algs[i]), hpc_dtype_name(s->dt), s->ranks, size, count, t * 1e6,
                        algbw, bus);
        }
        printf("\n");
        if (size == s->maxb) break;
    }
    fflush(stdout);
    return 0;
}
