/* pipe_unit - the pipeline's arithmetic without MPI, against serial
 * references written here in double precision:
 *   - weight prediction (msnag, aggmsnag) for SGD with momentum, Adam
 *     with and without L2 decay, and AdamW: the closed forms of pipe_predict.c
 *     against D optimiser steps actually taken with zero gradients (the
 *     summed gradient in the first, for aggmsnag), the second moment held,
 *     each step at its own learning rate;
 *   - scheduler-aware prediction: the rates of the updates ahead
 *     (wp_horizon) against a serial replay of a stale stage's updates
 *     under warm-up and cosine schedules (--step-every 1 and 3), and the
 *     prediction with them against the optimiser's steps with the rates
 *     that schedule gives (through the optimisers' table);
 *   - gap-aware: the penalty and the running mean square of the steps;
 *   - the partition: the balanced split against every split tried;
 *   - the schedules: every micro-batch forward then backward once, at
 *     most S - s alive on stage s for 1f1b, M for gpipe, 1 for seq; the
 *     stale schedule's steps together are 1f1b's order over the whole run.
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pipe.h"
#include "testlib.h"

enum { N = 37 };

static float w[N], v[N], m[N], g[N], out[N];

static void fill(void)
{
    for (int i = 0; i < N; i++) {
        w[i] = (float)sin(i + 1.0);
        v[i] = (float)(0.01 * cos(3.0 * i));
        m[i] = (float)(0.02 * sin(5.0 * i));
        g[i] = (float)(0.05 * cos(7.0 * i + 1));
    }
}

static double rel(double a, double b)
{
    return fabs(a - b) / (fabs(b) > 1e-3 ? fabs(b) : 1e-3);
}

/* learning rates of the steps ahead: not all the same */
static const double LR[8] = {0.1, 0.07, 0.12, 0.05, 0.09, 0.11, 0.03, 0.08};

/* SGD with momentum, D steps, the first with gradient gacc (or 0) */
static void ref_sgd(int with_g, const double *lr, double mu, int D)
{
    for (int i = 0; i < N; i++) {
        double p = w[i], buf = v[i];
        for (int k = 1; k <= D; k++) {
            buf = mu * buf + (k == 1 && with_g ? g[i] : 0.0);
            p -= lr[k - 1] * buf;
        }
        EXPECT(rel(out[i], p) < 1e-6, "sgd%s D=%d i=%d: %.9g, reference %.9g", with_g ? " agg" : "", D, i, out[i], p);
    }
}

static void test_sgd(void)
{
    for (int D = 0; D <= 4; D++) {
        wp_predict_sgd(N, out, w, v, NULL, LR, 0.9, D);
        ref_sgd(0, LR, 0.9, D);
        if (D == 0) continue;
        wp_predict_sgd(N, out, w, v, g, LR, 0.9, D);
        ref_sgd(1, LR, 0.9, D);
    }
}

/* Adam's steps as torch.optim takes them, the second moment held */
static void ref_adam(const wp_adam_t *h, int with_g, int D)
{
    for (int i = 0; i < N; i++) {
        double p = w[i], mm = m[i];
        for (int k = 1; k <= D; k++) {
            double grad = (k == 1 && with_g ? g[i] : 0.0);
            if (h->decoupled) p = p * (1 - h->lr[k - 1] * h->wd);
            else grad += h->wd * p;
            mm = h->beta1 * mm + (1 - h->beta1) * grad;
            double t = (double)(h->t + k);
            double denom = sqrt(v[i] * v[i]) / sqrt(1 - pow(h->beta2, t)) + h->eps;
            p -= h->lr[k - 1] / (1 - pow(h->beta1, t)) * mm / denom;
        }
        EXPECT(rel(out[i], p) < 1e-5, "adam wd=%g decoupled=%d%s D=%d i=%d: %.9g, reference %.9g", h->wd,
               h->decoupled, with_g ? " agg" : "", D, i, out[i], p);
    }
}

static void test_adam(void)
{
    float vsq[N];
    for (int i = 0; i < N; i++) vsq[i] = v[i] * v[i];   /* a second moment is >= 0 */
    static const double lr[3][3] = {{1e-2, 1e-2, 1e-2}, {1e-2, 2e-2, 5e-3}, {3e-3, 1e-2, 7e-3}};
    wp_adam_t cases[] = {{lr[0], 0.9, 0.999, 1e-8, 0, 0, 5}, {lr[1], 0.9, 0.999, 1e-8, 0.1, 0, 1},
                         {lr[2], 0.8, 0.99, 1e-6, 0.01, 1, 30}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int D = 1; D <= 3; D++) {
            wp_predict_adam(N, out, w, m, vsq, NULL, &cases[c], D);
            ref_adam(&cases[c], 0, D);
            wp_predict_adam(N, out, w, m, vsq, g, &cases[c], D);
            ref_adam(&cases[c], 1, D);
        }
}

static void test_gap(void)
{
    float gg[N], ref[N], avg[N], old[N];
    for (int i = 0; i < N; i++) ref[i] = w[i] - (float)(0.001 * i), avg[i] = (float)(1e-6 * (i % 5));
    memcpy(gg, g, sizeof gg);
    ga_penalise(N, gg, w, ref, avg);
    for (int i = 0; i < N; i++) {
        double c = sqrt((double)avg[i]) + 1e-8, pen = 1 + fabs((double)w[i] - ref[i]) / c;
        EXPECT(rel(gg[i], g[i] / pen) < 1e-5, "gap-aware i=%d: %.9g, reference %.9g", i, gg[i], g[i] / pen);
        EXPECT(fabs(gg[i]) <= fabs(g[i]), "gap-aware i=%d grew the gradient", i);
    }
    for (int i = 0; i < N; i++) old[i] = w[i] + v[i];
    memcpy(gg, avg, sizeof gg);
    ga_track(N, avg, w, old, 0.999);
    for (int i = 0; i < N; i++) {
        double d = (double)w[i] - old[i], r = 0.999 * gg[i] + 0.001 * d * d;
        EXPECT(rel(avg[i], r) < 1e-5, "gap track i=%d: %.9g, reference %.9g", i, avg[i], r);
    }
}

/* the cost of the most expensive stage of a split */
static double worst(const model_t *md, const int *first, int S)
{
    double top = 0;
    for (int s = 0; s < S; s++) {
        double c = 0;
        for (int l = first[s]; l < first[s + 1]; l++)
            c += 7.0 * md->size[l] * md->size[l + 1] + md->size[l + 1];
        top = c > top ? c : top;
    }
    return top;
}

static void test_partition(void)
{
    const int64_t size[] = {11, 300, 20, 500, 500, 40, 10};
    model_t md;
    model_layout(&md, 6, size, ACT_TANH);
    for (int S = 1; S <= 6; S++) {
        int first[TRAIN_MAXL + 1];
        pipe_partition_balanced(&md, S, first);
        int ok = first[0] == 0 && first[S] == 6;
        for (int s = 0; s < S; s++) ok &= first[s + 1] > first[s];
        EXPECT(ok, "S=%d: not S contiguous non-empty stages", S);
        /* every split: choose S-1 cut points of 5 */
        double best = INFINITY;
        for (int mask = 0; mask < 32; mask++) {
            if (__builtin_popcount((unsigned)mask) != S - 1) continue;
            int f[8] = {0}, k = 1;
            for (int c = 0; c < 5; c++)
                if (mask >> c & 1) f[k++] = c + 1;
            f[S] = 6;
            double c = worst(&md, f, S);
            best = c < best ? c : best;
        }
        EXPECT(fabs(worst(&md, first, S) - best) < 1e-9 * best, "S=%d: %g, the best split %g", S,
               worst(&md, first, S), best);
    }
}

/* A stale stage's run, serially: every loop step of M micro-batches makes
 * ceil(M / K) updates, each at the rate of its step; the rates of the D
 * updates after the first u must be what wp_horizon says.  Then the
 * prediction with those rates (through the optimisers' table) against
 * the D steps taken. */
static void test_horizon(void)
{
    for (int sc = 0; sc < 3; sc++)
        for (int K = 1; K <= 3; K += 2) {
            train_opts_t o;
            memset(&o, 0, sizeof o);
            o.lr = 0.1;
            o.warmup = sc == 2 ? 0 : 5;
            o.sched = sc ? SCHED_COSINE : SCHED_CONSTANT;
            o.min_lr = 0.01;
            int M = 4, total = 12, per = (M + K - 1) / K, ok = 1;
            double rate[12 * 4];   /* update u's rate, replayed */
            int n = 0;
            for (int step = 0; step < total; step++)
                for (int mb = 0, backs = 0; mb < M; mb++)
                    if (++backs == K || mb == M - 1) rate[n++] = sched_lr(&o, step, total), backs = 0;
            for (int u = 0; u + 4 <= n; u++) {
                double lr[4];
                wp_horizon(&o, u, per, total, 4, lr);
                for (int k = 0; k < 4; k++) ok &= lr[k] == rate[u + k];
            }
            EXPECT(ok, "schedule %d, --step-every %d: the horizon's rates are not the replay's", sc, K);
        }
    /* under warm-up the rates ahead differ: prediction with them is the
     * optimiser's D steps at those rates */
    train_opts_t o;
    memset(&o, 0, sizeof o);
    o.lr = 0.1;
    o.warmup = 8;
    o.momentum = 0.9;
    o.optim = optim_find("sgd");
    optim_t opt;
    memset(&opt, 0, sizeof opt);
    opt.kind = o.optim;
    opt.momentum = 0.9;
    double lr[3];
    wp_horizon(&o, 2, 1, 100, 3, lr);
    EXPECT(lr[0] != lr[1] && lr[1] != lr[2], "warm-up: the rates ahead do not change (the test is void)");
    wp_args_t a = {N, out, w, NULL, {v, NULL}, lr, 3, 2};
    o.optim->predict(&opt, &a);
    ref_sgd(0, lr, 0.9, 3);
}

static void test_schedules(void)
{
    static pipe_op_t ops[2 * 64];
    const int SEQ = pipe_sched_find("seq"), GPIPE = pipe_sched_find("gpipe"), STALE = pipe_sched_find("stale");
    EXPECT(SEQ >= 0 && GPIPE >= 0 && STALE >= 0 && pipe_sched_find("1f1b") >= 0 && pipe_sched_find("zigzag") < 0,
           "the schedules' table");
    for (int sched = 0; pipe_scheds[sched].name; sched++)
        for (int S = 1; S <= 5; S++)
            for (int M = 1; M <= 9; M++)
                for (int s = 0; s < S; s++) {
                    int n = pipe_schedule(sched, S, s, M, ops), fwd[64] = {0}, bwd[64] = {0}, ok = n == 2 * M;
                    for (int k = 0; k < n && ok; k++) {
                        int i = ops[k].mb;
                        if (ops[k].kind == 'F') ok = !fwd[i]++ && (k == 0 || ops[k - 1].kind == 'B' ||
                                                                ops[k - 1].mb < i);
                        else ok = fwd[i] && !bwd[i]++;
                    }
                    int most = pipe_alive_most(sched, S, s, M);
                    int bound = sched == SEQ ? 1 : sched == GPIPE ? M : (S - s < M ? S - s : M);
                    EXPECT(ok, "schedule %d S=%d s=%d M=%d: not every micro-batch forward then backward once",
                           sched, S, s, M);
                    EXPECT(most == bound, "schedule %d S=%d s=%d M=%d: %d alive, expected %d", sched, S, s, M,
                           most, bound);
                }
    /* stale over a run: steps cut from one 1f1b stream (its warm-up at
     * most M forwards: the run-ahead stays within the next step), the
     * next step's first forwards run ahead; over 4 steps (the last
     * drains) */
    for (int S = 1; S <= 5; S++)
        for (int M = 1; M <= 7; M++)
            for (int s = 0; s < S; s++) {
                static pipe_op_t ref[2 * 64];
                int warm = S - s - 1 < M ? S - s - 1 : M, nref = 0, k = 0, ok = 1;
                for (int f = 0; f < warm; f++) ref[nref++] = (pipe_op_t){'F', f};
                for (int b = 0; b < 4 * M; b++) {
                    if (b + warm < 4 * M) ref[nref++] = (pipe_op_t){'F', b + warm};
                    ref[nref++] = (pipe_op_t){'B', b};
                }
                for (int step = 0; step < 4 && ok; step++) {
                    int n = pipe_schedule_step(STALE, S, s, M, step == 0, step < 3, ops);
                    for (int i = 0; i < n && ok; i++, k++)
                        ok = k < nref && ops[i].kind == ref[k].kind && step * M + ops[i].mb == ref[k].mb;
                }
                EXPECT(ok && k == nref, "stale over 4 steps, S=%d s=%d M=%d: not 1f1b's stream", S, s, M);
            }
    EXPECT(fabs(pipe_bubble_theory(GPIPE, 4, 8) - 3.0 / 11) < 1e-12, "gpipe's bubble");
    EXPECT(fabs(pipe_bubble_theory(SEQ, 4, 8) - 0.75) < 1e-12, "seq's bubble");
    EXPECT(pipe_bubble_theory(STALE, 4, 8) == 0, "stale's bubble");
}

int main(void)
{
    fill();
    test_sgd();
    test_adam();
    test_gap();
    test_horizon();
    test_partition();
    test_schedules();
    if (!test_failures) printf("pipe_unit: all checks passed\n");
    return test_result();
}
