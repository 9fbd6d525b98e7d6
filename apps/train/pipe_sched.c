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
 * Schedules (M micro-batches, stage s of S), as lists of F i / B i:
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

int pipe_schedule(int sched, int S, int s, int M, pipe_op_t *ops)
{
    int n = 0;
    if (sched == PIPE_SEQ) {
        for (int i = 0; i < M; i++) ops[n++] = (pipe_op_t){'F', i}, ops[n++] = (pipe_op_t){'B', i};
        return n;
    }
    if (sched == PIPE_GPIPE) {
        for (int i = 0; i < M; i++) ops[n++] = (pipe_op_t){'F', i};
        for (int i = 0; i < M; i++) ops[n++] = (pipe_op_t){'B', i};
        return n;
    }
    int warm = S - s - 1 < M ? S - s - 1 : M, f = 0, b = 0;
    while (f < warm) ops[n++] = (pipe_op_t){'F', f++};
    while (f < M) ops[n++] = (pipe_op_t){'F', f++}, ops[n++] = (pipe_op_t){'B', b++};
    while (b < M) ops[n++] = (pipe_op_t){'B', b++};
    return n;
}

int pipe_schedule_step(int sched, int S, int s, int M, int fresh, int carry, pipe_op_t *ops)
{
    if (sched != PIPE_STALE || (fresh && !carry)) return pipe_schedule(sched, S, s, M, ops);
    /* 1f1b's order over an endless stream of micro-batches, cut at B(M-1) */
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
    pipe_op_t ops[2 * PIPE_MAXM];
    if (M > PIPE_MAXM) return sched == PIPE_SEQ ? 1 : sched == PIPE_GPIPE ? M : (S - s < M ? S - s : M);
    int n = pipe_schedule(sched, S, s, M, ops), alive = 0, most = 0;
    for (int k = 0; k < n; k++) {
        alive += ops[k].kind == 'F' ? 1 : -1;
        most = alive > most ? alive : most;
    }
    return most;
}

double pipe_bubble_theory(int sched, int S, int M)
{
    /* equal stages: seq idles all but one stage, the flushed schedules
     * (S-1) of the M+S-1 slots of a step; stale drains only at
     * checkpoints and the end: none in steady state */
    if (sched == PIPE_SEQ) return (double)(S - 1) / S;
    if (sched == PIPE_STALE) return 0;
    return (double)(S - 1) / (M + S - 1);
}
