/* timeline.c - RUNDIR/timeline.csv and timeline.png: when each stage ran
 * the forward and backward of each micro-batch, against wall time, for a
 * few steps after the first - the figure that shows a pipeline's bubble.
 *
 * Every rank records its operations (compute only: the waits for
 * messages are the blank between the boxes) against a clock started at
 * a barrier of its pipeline, so the ranks' rows line up to the
 * barrier's skew.  Rank 0 gathers replica 0's rows and writes them
 * through hpc_file (complete or absent) and draws them with gnuplot.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pipe.h"

void timeline_record(pipe_t *pp, train_t *t, char kind, int mb, double t0, double t1)
{
    pp->busy += t1 - t0;
    int64_t step = t->steps_run - 1;   /* steps recorded so far: the first is not */
    if (!pp->rec_t0 || step >= pp->rec_steps || pp->nrec >= pp->caprec) return;
    pp->rec[pp->nrec++] = (pipe_rec_t){(int)t->step + 1, mb, kind, t0 - pp->rec_t0, t1 - pp->rec_t0};
}

/* Replica 0's records on rank 0 (of its pipeline): counts, then rows */
static pipe_rec_t *gather(pipe_t *pp, int *counts, int *total)
{
    int n = pp->nrec * (int)sizeof(pipe_rec_t), *displ = calloc((size_t)pp->S, sizeof *displ);
    MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, pp->pipe_comm);
    *total = 0;
    for (int s = 0; pp->s == 0 && s < pp->S; s++) displ[s] = *total, *total += counts[s];
    pipe_rec_t *all = pp->s == 0 ? malloc((size_t)*total + 1) : NULL;
    MPI_Gatherv(pp->rec, n, MPI_BYTE, all, counts, displ, MPI_BYTE, 0, pp->pipe_comm);
    free(displ);
    return all;
}

static int write_csv(pipe_t *pp, train_t *t, const pipe_rec_t *all, const int *counts)
{
    char path[4096];
    hpc_file_t *f;
    HPC_TRY(hpc_run_path(t->run, "timeline.csv", path, sizeof path));
    HPC_TRY(hpc_file_open(path, &f));
    hpc_file_printf(f, "stage,step,kind,micro,start_ms,end_ms\n");
    const pipe_rec_t *r = all;
    for (int s = 0; s < pp->S; s++)
        for (int k = 0; k < counts[s] / (int)sizeof *r; k++, r++)
            hpc_file_printf(f, "%d,%d,%c,%d,%.4f,%.4f\n", s, r->step, r->kind, r->mb, 1e3 * r->t0, 1e3 * r->t1);
    return hpc_file_commit(f);
}

static void plot(pipe_t *pp, train_t *t)
{
    char script[2048];
    snprintf(script, sizeof script,
             "set datafile separator ','\n"
             "set key outside top center horizontal\n"
             "set xlabel 'wall time (ms)'\n"
             "set ylabel 'stage'\n"
             "set yrange [%d.6:-0.6]\n"
             "set ytics 1\n"
             "set style fill solid 0.8 border lc rgb 'black'\n"
             "set title 'hpc-train pipeline: forward and backward of each micro-batch (blank: idle)'\n"
             "plot 'timeline.csv' using (($5+$6)/2):(strcol(3) eq 'F' ? $1 : NaN):(($6-$5)/2):(0.4) "
             "with boxxyerror lc rgb '#4477aa' title 'forward', "
             "'' using (($5+$6)/2):(strcol(3) eq 'B' ? $1 : NaN):(($6-$5)/2):(0.4) "
             "with boxxyerror lc rgb '#ee7733' title 'backward'\n",
             pp->S - 1);
    if (hpc_run_plot(t->run, "timeline.png", script) < 0) {
        hpc_warn("timeline.png: %s", hpc_last_cause());
        hpc_error_clear();
    }
}

void timeline_write(pipe_t *pp, train_t *t)
{
    if (pp->d != 0) return;   /* replica 0 draws; the others are alike */
    int *counts = calloc((size_t)pp->S, sizeof *counts), total = 0;
    pipe_rec_t *all = gather(pp, counts, &total);
    if (pp->s == 0 && pp->nrec > 0) {
        if (write_csv(pp, t, all, counts) < 0) {   /* a report, not the result */
            hpc_warn("timeline.csv: %s", hpc_last_cause());
            hpc_error_clear();
        } else {
            plot(pp, t);
        }
    }
    free(all);
    free(counts);
}
