/* timeline.c - RUNDIR/timeline.csv and timeline.png: when each stage ran
 * the forward and backward of each micro-batch, against wall time, for a
 * few steps after the first - the figure that shows a pipeline's bubble.
 *
 * Every rank records its operations (compute only: the waits for
 * messages are the blank between the boxes) against a clock started at
 * a barrier of its pipeline, so the ranks' rows line up to the
 * barrier's skew.  Rank 0 gathers replica 0's rows and writes them
 * through hpc_file (complete or absent) and draws them with gnuplot.
 *
 * The same rows give the bubble the schedule itself causes: each
 * recorded step replayed with the stage's median forward and backward
 * times, every operation starting as soon as its stage is free and its
 * input is there (messages free).  On a machine whose cores other work
 * shares, the wall-clock bubble also holds the time a rank was
 * descheduled while its neighbour waited, and single operations that
 * were; the replay does not, so a test can hold it to the theory.
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pipe.h"

void timeline_record(pipeline_t *pp, train_t *t, char kind, int mb, double t0, double t1)
{
    pp->busy += t1 - t0;
    int64_t step = t->steps_run - 1;   /* steps recorded so far: the first is not */
    if (!pp->rec_t0 || step >= pp->rec_steps || pp->nrec >= pp->caprec) return;
    pp->rec[pp->nrec++] = (pipe_rec_t){(int)t->step + 1, mb, kind, t0 - pp->rec_t0, t1 - pp->rec_t0};
}

/* Replica 0's records on rank 0 (of its pipeline): counts, then rows */
static pipe_rec_t *gather(pipeline_t *pp, int *counts, int *total)
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

/* Stage s's operations of one step, in order: indices into all */
typedef struct {
    int n, next;
    const pipe_rec_t **op;
    double free_at;
    double cost[2];          /* the stage's median forward, backward */
} lane_t;

/* When operation (s, kind, mb) ended: mb < 2M (the stale schedule runs
 * the next step's first forwards ahead) */
static double *done_at(double *end, int M, int s, char kind, int mb)
{
    return &end[(2 * s + (kind == 'B')) * 2 * M + mb];
}

/* One step: the makespan of the replay; busy += the operations' time */
static double replay_step(lane_t *lane, int S, int M, double *end, double *busy)
{
    /* an input made in the step before (run ahead) is there at the start */
    for (int i = 0; i < 4 * S * M; i++) end[i] = 0;
    for (int s = 0; s < S; s++)
        for (int k = 0; k < lane[s].n; k++) *done_at(end, M, s, lane[s].op[k]->kind, lane[s].op[k]->mb) = -1;
    int left = 0, progress = 1;
    for (int s = 0; s < S; s++) left += lane[s].n, lane[s].next = 0, lane[s].free_at = 0;
    while (left && progress) {
        progress = 0;
        for (int s = 0; s < S; s++) {
            if (lane[s].next == lane[s].n) continue;
            const pipe_rec_t *r = lane[s].op[lane[s].next];
            double need = 0;   /* the input: the stage before's forward, the stage after's backward */
            if (r->kind == 'F' && s > 0) need = *done_at(end, M, s - 1, 'F', r->mb);
            if (r->kind == 'B' && s < S - 1) need = *done_at(end, M, s + 1, 'B', r->mb);
            if (need < 0) continue;
            double t0 = need > lane[s].free_at ? need : lane[s].free_at;
            double cost = lane[s].cost[r->kind == 'B'];
            lane[s].free_at = *done_at(end, M, s, r->kind, r->mb) = t0 + cost;
            *busy += cost;
            lane[s].next++, left--, progress = 1;
        }
    }
    double span = 0;
    for (int s = 0; s < S; s++) span = lane[s].free_at > span ? lane[s].free_at : span;
    return left ? -1 : span;   /* an incomplete record: not replayed */
}

/* The median duration of stage s's operations of one kind */
static double median_cost(const pipe_rec_t *r, int n, char kind)
{
    double *v = malloc((size_t)(n + 1) * sizeof *v);
    int k = 0;
    for (int i = 0; v && i < n; i++)
        if (r[i].kind == kind) v[k++] = r[i].t1 - r[i].t0;
    double m = k ? hpc_median(v, (size_t)k) : 0;
    free(v);
    return m;
}

static void replay(pipeline_t *pp, const pipe_rec_t *all, const int *counts)
{
    int S = pp->S, M = pp->M, total = 0;
    for (int s = 0; s < S; s++) total += counts[s] / (int)sizeof *all;
    lane_t lane[TRAIN_MAXL];
    const pipe_rec_t **ops = malloc((size_t)(total + 1) * sizeof *ops);
    double *end = malloc((size_t)4 * S * M * sizeof *end), busy_all = 0, span_all = 0;
    int first = all && total ? all[0].step : 0, k0 = 0;
    const pipe_rec_t *r0 = all;
    for (int s = 0; s < S; r0 += counts[s] / (int)sizeof *r0, s++) {
        lane[s].cost[0] = median_cost(r0, counts[s] / (int)sizeof *r0, 'F');
        lane[s].cost[1] = median_cost(r0, counts[s] / (int)sizeof *r0, 'B');
    }
    for (int step = first; ops && end && step < first + pp->rec_steps; step++) {
        int k = 0;
        const pipe_rec_t *r = all;
        for (int s = 0; s < S; s++) {
            lane[s].op = ops + k;
            lane[s].n = 0;
            for (int i = 0; i < counts[s] / (int)sizeof *r; i++, r++)
                if (r->step == step) ops[k++] = r, lane[s].n++;
        }
        double busy = 0, span = k ? replay_step(lane, S, M, end, &busy) : -1;
        if (span > 0) busy_all += busy, span_all += span, k0++;
    }
    pp->bubble_replay = k0 && span_all > 0 ? 1 - busy_all / (S * span_all) : NAN;
    free(ops);
    free(end);
}

static int write_csv(pipeline_t *pp, train_t *t, const pipe_rec_t *all, const int *counts)
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

static void plot(pipeline_t *pp, train_t *t)
{
    char script[2048];
    snprintf(script, sizeof script,
             "set datafile separator ','\n"
             "set key outside top center horizontal\n"
             "set xlabel 'wall time (ms)'\n"
             "set ylabel 'stage'\n"
             "set yrange [%d.6:-0.6]\n"
             "set ytics 1\n"
             "set style fill solid 0.9 noborder\n"
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

void timeline_write(pipeline_t *pp, train_t *t)
{
    if (pp->d != 0) return;   /* replica 0 draws; the others are alike */
    int *counts = calloc((size_t)pp->S, sizeof *counts), total = 0;
    pipe_rec_t *all = gather(pp, counts, &total);
    pp->bubble_replay = NAN;
    if (pp->s == 0 && pp->nrec > 0) {
        replay(pp, all, counts);
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
