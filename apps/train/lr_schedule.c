/* lr_schedule.c - the learning rate of each step, as PyTorch's schedulers give
 * it (closed forms, so a resumed run needs nothing but the step):
 *   warm-up, t < W:  lr (t + 1) / W     (LinearLR(start_factor=1/W,
 *                                         total_iters=W-1))
 *   constant:        lr
 *   cosine:          min + (lr - min) (1 + cos(pi (t - W) / (T - W))) / 2
 *                                        (CosineAnnealingLR(T_max=T-W,
 *                                         eta_min=min) after the warm-up)
 * t counts optimiser steps from 0; T is the run's total.
 */
#include "config.h"
#include <math.h>
#include "train.h"

double sched_lr(const train_opts_t *o, int64_t t, int64_t total)
{
    if (t < o->warmup) return o->lr * (double)(t + 1) / (double)o->warmup;
    int64_t span = total - o->warmup;
    if (o->sched == SCHED_CONSTANT || span <= 0) return o->lr;
    const double pi = 3.14159265358979323846;
    return o->min_lr + (o->lr - o->min_lr) * (1 + cos(pi * (double)(t - o->warmup) / (double)span)) / 2;
}
