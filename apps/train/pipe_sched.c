/* pipe_sched.c - what a pipeline stage does and in which order, without
 * any MPI or device: the partition of the layers into stages and each
 * schedule's list of operations per stage.
 *
 * Partition: S contiguous stages, each of at least one layer, minimising
 * the cost of the most expensive stage (dynamic programming over the
 * split points, exact for the at most TRAIN_MAXL layers).  A layer's cost
 * is its parameters plus its FLOPs per sample (6 in out: the forward
 * GEMM, and the two of backward), so that memory and time both count.
 *
 * Schedules: one row of the table each (its name for --pipe-schedule,
 * its list of operations, its bubble in theory, whether its stages step
 * on their own), for M micro-batches, stage s of S, as lists of F i / B i:
 *   seq    F0 B0 F1 B1 ...: one micro-batch in flight in the whole
 *          pipeline, since F1 on stage 0 waits for B0
 *   gpipe  F0 ... F(M-1) B0 ... B(M-1)
 *   1f1b   PipeDream-flush: w = min(S-s-1, M) forwards to fill the
 *          pipeline, then one forward one backward, then the remaining
 *          backwards: at most w + 1 <= S - s micro-batches alive
 *   stale  the 1f1b order over the run's whole stream of micro-batches:
 *          the first forwards of the next step run ahead, no flush
 *          between steps (pipe_schedule_step); the stage steps after
 *          backwards (pipe_stale.c)
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "pipe.h"

static double layer_cost(const model_t *m, int l)
{
    double in = (double)m->size[l], out = (double)m->size[l + 1];
    return in * out + out + 6 * in * out;
}

void pipe_partition_balanced(const model_t *m, int S, int *first)
{
    enum { L = TRAIN_MAXL + 1 };
    double pre[L] = {0}, best[L][L];   /* best[k][j]: layers [0, j) on k stages */
    int cut[L][L];
    for (int l = 0; l < m->nl; l++) pre[l + 1] = pre[l] + layer_cost(m, l);
    for (int j = 0; j <= m->nl; j++) best[1][j] = pre[j];
    for (int k = 2; k <= S; k++)
        for (int j = k; j <= m->nl; j++) {
            best[k][j] = -1;
            for (int i = k - 1; i < j; i++) {   /* stage k holds [i, j) */
                double c = best[k - 1][i] > pre[j] - pre[i] ? best[k - 1][i] : pre[j] - pre[i];
                if (best[k][j] < 0 || c < best[k][j]) best[k][j] = c, cut[k][j] = i;
            }
        }
    first[S] = m->nl;
    for (int k = S, j = m->nl; k >= 1; k--) {
        first[k - 1] = k > 1 ? cut[k][j] : 0;
        j = first[k - 1];
    }
}

static int ops_seq(int S, int s, int M, pipe_op_t *ops)
{
    (void)S, (void)s;
    int n = 0;
    for (int i = 0; i < M; i++) ops[n++] = (pipe_op_t){'F', i}, ops[n++] = (pipe_op_t){'B', i};
    return n;
}

static int ops_gpipe(int S, int s, int M, pipe_op_t *ops)
{
    (void)S, (void)s;
    int n = 0;
    for (int i = 0; i < M; i++) ops[n++] = (pipe_op_t){'F', i};
    for (int i = 0; i < M; i++) ops[n++] = (pipe_op_t){'B', i};
    return n;
}

static int ops_1f1b(int S, int s, int M, pipe_op_t *ops)
{
    int warm = S - s - 1 < M ? S - s - 1 : M, f = 0, b = 0, n = 0;
    while (f < warm) ops[n++] = (pipe_op_t){'F', f++};
    while (f < M) ops[n++] = (pipe_op_t){'F', f++}, ops[n++] = (pipe_op_t){'B', b++};
    while (b < M) ops[n++] = (pipe_op_t){'B', b++};
    return n;
}

/* equal stages: seq idles all but one stage, the flushed schedules
 * (S-1) of the M+S-1 slots of a step; stale drains only at checkpoints
 * and the end: none in steady state */
static double bubble_seq(int S, int M)
{
    (void)M;
    return (double)(S - 1) / S;
}

static double bubble_flush(int S, int M)
{
    return (double)(S - 1) / (M + S - 1);
}

static double bubble_none(int S, int M)
{
    (void)S, (void)M;
    return 0;
}

const pipe_sched_t pipe_scheds[] = {
    {"seq", ops_seq, bubble_seq, 0, "one micro-batch in flight"},
    {"gpipe", ops_gpipe, bubble_flush, 0, "all forwards, all backwards, one update"},
    {"1f1b", ops_1f1b, bubble_flush, 0,
     "one forward one backward, the same update as gpipe with at most S micro-batches alive per stage"},
    {"stale", ops_1f1b, bubble_none, 1, "1F1B where each stage updates as soon as its gradient is ready"},
    {NULL, NULL, NULL, 0, NULL}};

int pipe_sched_find(const char *name)
{
    for (int k = 0; pipe_scheds[k].name; k++)
        if (!strcmp(pipe_scheds[k].name, name)) return k;
    return -1;
}

int pipe_schedule(int sched, int S, int s, int M, pipe_op_t *ops)
{
    return pipe_scheds[sched].ops(S, s, M, ops);
}

int pipe_schedule_step(int sched, int S, int s, int M, int fresh, int carry, pipe_op_t *ops)
{
    if (!pipe_scheds[sched].async || (fresh && !carry)) return pipe_schedule(sched, S, s, M, ops);
    /* the op list's order over an endless stream of micro-batches, cut
     * at B(M-1): 1f1b's (the asynchronous schedules' lists are 1f1b's) */
    int warm = S - s - 1 < M ? S - s - 1 : M, n = 0;
    for (int f = 0; fresh && f < warm; f++) ops[n++] = (pipe_op_t){'F', f};
    for (int b = 0; b < M; b++) {
        if (b + warm < M || carry) ops[n++] = (pipe_op_t){'F', b + warm};
        ops[n++] = (pipe_op_t){'B', b};
    }
    return n;
}

int pipe_alive_most(int sched, int S, int s, int M)
{
    pipe_op_t *ops = malloc((size_t)(2 * M + 1) * sizeof *ops);
    if (!ops) return M;   /* as many as gpipe, at most */
    int n = pipe_schedule(sched, S, s, M, ops), alive = 0, most = 0;
    for (int k = 0; k < n; k++) {
        alive += ops[k].kind == 'F' ? 1 : -1;
        most = alive > most ? alive : most;
    }
    free(ops);
    return most;
}

double pipe_bubble_theory(int sched, int S, int M)
{
    return pipe_scheds[sched].bubble(S, M);
}
