/* pipe_stale.c - the stale-synchronous pipeline (--pipe-schedule stale):
 * the 1F1B order over the run's stream of micro-batches (pipe.c drains
 * it only at checkpoints and stops), each stage stepping as soon as
 * --step-every K backwards have summed their gradients (and at the end
 * of hpc-train's step, so that a step is a whole number of updates), so
 * the forward and the backward of one micro-batch may see different
 * weights.  In steady state stage s
 * is S-1-s updates ahead of a micro-batch's forward when its backward
 * runs: its staleness.  The mitigations, in any combination:
 *
 *   --weight-stashing   the forward's weights are kept with the
 *       micro-batch (at most S versions per stage) and its backward uses
 *       them: the gradient is that of one set of weights (PipeDream).
 *   --weight-prediction msnag   the forward uses the weights the
 *       optimiser would reach after D = staleness more steps if every
 *       future gradient were zero, from its momentum (DANA, Hakimi et al.
 *       2019), with t the updates done, lr the learning rate:
 *         SGD:   v_k = mu^k v,  w^ = w - lr sum_{k=1..D} mu^k v
 *         Adam:  m_k = beta1^k m (with L2 decay: m_k = beta1 m_{k-1} +
 *                (1-beta1) wd w_{k-1}), w_k = w_{k-1} - lr/(1-beta1^(t+k))
 *                m_k / (sqrt(v)/sqrt(1-beta2^(t+k)) + eps); AdamW also
 *                w_k *= 1 - lr wd
 *     aggmsnag: the same, but the first predicted step also takes the
 *       gradient summed so far towards the next update (--step-every).
 *   --gap-aware   before a step, the gradient is divided elementwise by
 *       the Gap 1 + |w - w_ref| / C (Barkai et al., ICLR 2020), w_ref the
 *       weights the forward used (predicted or stashed), C the running
 *       root mean square of the step each parameter took (decay 0.999,
 *       the Adam default of beta2; 1e-8 added), so a gradient computed
 *       many typical steps away is shrunk in proportion.
 *   --gap-aware-just-lost  w_ref the weights the backward used instead:
 *       only the updates that neither pass saw are penalised (the same
 *       as --gap-aware with stashing).
 *
 * The formulas are in optim_predict.c (each optimiser's prediction) and
 * pipe_predict.c (the prediction's horizon, gap-aware).  The maths runs
 * on host memory (the device buffer itself on the CPU; on a GPU a copy,
 * then put back): it is elementwise and once per update.
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pipe.h"

#define GA_DECAY 0.999

/* ---- host views of the stage's range ---- */

typedef struct {
    float *h;                /* the range's floats on the host */
    float *dev;              /* the device buffer's range */
    size_t n;
    int copied;
} view_t;

static view_t view(pipeline_t *pp, train_t *t, float *buf, float *tmp, int load)
{
    view_t v = {buf + MODEL_PAD, buf + MODEL_PAD, pp->lay.n - MODEL_PAD, 0};
    if (t->dev != train_dev_cpu()) {
        v.h = tmp;
        v.copied = 1;
        if (load) t->dev->to_host(v.h, v.dev, v.n * sizeof(float));
    }
    return v;
}

static void stale_put(train_t *t, view_t v)
{
    if (v.copied) t->dev->to_dev(v.dev, v.h, v.n * sizeof(float));
}

/* ---- the stage's state ---- */

typedef struct {
    float *tmp[5];           /* host scratch of the range's size (GPU) */
    float *ref;              /* the stage's layout: gap-aware reference of the oldest micro-batch summed */
    int have_ref;
    int64_t per_step;        /* updates a loop step */
    int64_t pred_at;         /* the update count pp->pred was predicted at */
} stale_t;

static stale_t *st_of(pipeline_t *pp)
{
    return (stale_t *)pp->stale;
}

/* the forward's weights are kept per micro-batch */
static int keeps(const train_opts_t *o)
{
    return o->stash || o->gap_aware;
}

double stale_bytes(const train_opts_t *o, const model_t *lay, int nslots, int gpu)
{
    double n = (double)lay->n, range = n - MODEL_PAD, f = 0;
    if (keeps(o)) f += nslots * n;
    if (o->predict) f += n;
    if (o->gap_aware) f += n + range + (gpu ? 0 : range);
    if (gpu) f += 5 * range;
    return f * sizeof(float);
}

int stale_open(pipeline_t *pp, train_t *t)
{
    const train_opts_t *o = t->o;
    size_t n = pp->lay.n, range = n - MODEL_PAD;
    stale_t *st = calloc(1, sizeof *st);
    if (!st) return HPC_ERR(HPC_ERR_NOMEM, "stale pipeline");
    pp->stale = st;
    st->per_step = (pp->M + o->step_every - 1) / o->step_every;
    st->pred_at = -1;
    /* host scratch: on a GPU for every view; on the CPU (where a view is
     * the buffer) for gap-aware's copy of the weights before a step */
    for (int k = 0; k < 5; k++)
        if ((t->dev != train_dev_cpu() || (k == 3 && o->gap_aware)) && !(st->tmp[k] = calloc(range + 1, sizeof(float))))
            return HPC_ERR(HPC_ERR_NOMEM, "stale pipeline");
    /* the forward's weights, per micro-batch (and for the test hook) */
    int keep = keeps(o) || pp->dump;
    for (int k = 0; keep && k < pp->nslots; k++)
        if (!(pp->slot[k].stash = t->dev->alloc(n * sizeof(float)))) return HPC_ERR(HPC_ERR_NOMEM, "weight stash");
    if (o->predict && !(pp->pred = t->dev->alloc(n * sizeof(float)))) return HPC_ERR(HPC_ERR_NOMEM, "prediction");
    if (o->gap_aware) {
        if (!(pp->gap_avg = calloc(range + 1, sizeof(float)))) return HPC_ERR(HPC_ERR_NOMEM, "gap-aware");
        if (!(st->ref = t->dev->alloc(n * sizeof(float)))) return HPC_ERR(HPC_ERR_NOMEM, "gap-aware");
    }
    return 0;
}

void stale_close(pipeline_t *pp, train_t *t)
{
    stale_t *st = st_of(pp);
    if (!st) return;
    for (int k = 0; k < pp->nslots; k++)
        if (pp->slot[k].stash) t->dev->release(pp->slot[k].stash), pp->slot[k].stash = NULL;
    if (pp->pred) t->dev->release(pp->pred);
    if (st->ref) t->dev->release(st->ref);
    for (int k = 0; k < 5; k++) free(st->tmp[k]);
    free(pp->gap_avg);
    free(st);
    pp->stale = NULL;
}

void stale_step_begin(pipeline_t *pp, train_t *t)
{
    pp->updates = t->step * st_of(pp)->per_step;
}

/* The updates between this micro-batch's forward and its backward in
 * steady state (the last stage: none) */
static int staleness(const pipeline_t *pp)
{
    int ahead = pp->S - 1 - pp->s;
    return (int)((ahead + pp->o->step_every - 1) / pp->o->step_every);
}

static void copy_range(pipeline_t *pp, train_t *t, float *dst, const float *src)
{
    /* to_dev copies device to device too (cudaMemcpyDefault; memcpy) */
    t->dev->to_dev(dst + MODEL_PAD, src + MODEL_PAD, (pp->lay.n - MODEL_PAD) * sizeof(float));
}

/* The weights D updates ahead, each at the rate the schedule will give
 * it (the rest of this step's updates, then the next steps') */
static void predict(pipeline_t *pp, train_t *t)
{
    const train_opts_t *o = t->o;
    stale_t *st = st_of(pp);
    int D = staleness(pp);
    /* aggmsnag: the gradient summed so far, if the stage is part-way */
    int agg = o->predict == PREDICT_AGGMSNAG && pp->backs > 0;
    if (!agg && st->pred_at == pp->updates) return;   /* the weights have not moved */
    st->pred_at = agg ? -1 : pp->updates;
    copy_range(pp, t, pp->pred, pp->p);
    if (D == 0) return;
    double lr[64];
    D = D < 64 ? D : 64;
    wp_horizon(o, pp->updates, st->per_step, t->total, D, lr);
    view_t w = view(pp, t, pp->p, st->tmp[0], 1), out = view(pp, t, pp->pred, st->tmp[1], 0);
    view_t g = view(pp, t, pp->g, st->tmp[4], agg);
    wp_args_t a = {w.n, out.h, w.h, agg ? g.h : NULL, {NULL, NULL}, lr, D, pp->updates};
    for (int k = 0; k < t->opt.nstates; k++) a.state[k] = view(pp, t, t->opt.state[k], st->tmp[2 + k], 1).h;
    t->opt.kind->predict(&t->opt, &a);
    stale_put(t, out);
}

const float *stale_forward_weights(pipeline_t *pp, train_t *t, pipe_slot_t *sl)
{
    sl->version = pp->updates;
    const float *w = pp->p;
    if (t->o->predict) {
        predict(pp, t);
        w = pp->pred;
    }
    if (sl->stash) copy_range(pp, t, sl->stash, w);
    return w;
}

const float *stale_backward_weights(pipeline_t *pp, train_t *t, pipe_slot_t *sl)
{
    return t->o->stash ? sl->stash : pp->p;
}

/* The oldest micro-batch of an aggregation sets the gap's reference */
static void keep_ref(pipeline_t *pp, train_t *t, pipe_slot_t *sl)
{
    stale_t *st = st_of(pp);
    if (!t->o->gap_aware || st->have_ref) return;
    const float *ref = t->o->gap_just_lost ? stale_backward_weights(pp, t, sl) : sl->stash;
    copy_range(pp, t, st->ref, ref);
    st->have_ref = 1;
}

static void stale_update(pipeline_t *pp, train_t *t)
{
    stale_t *st = st_of(pp);
    double lr = sched_lr(t->o, t->step, t->total), t0 = hpc_wtime();
    view_t old = {0};
    if (t->o->gap_aware) {
        view_t g = view(pp, t, pp->g, st->tmp[0], 1), w = view(pp, t, pp->p, st->tmp[1], 1);
        view_t ref = view(pp, t, st->ref, st->tmp[2], 1);
        ga_penalise(g.n, g.h, w.h, ref.h, pp->gap_avg);
        stale_put(t, g);
        old = view(pp, t, pp->p, st->tmp[3], 1);
        if (!old.copied) {   /* on the CPU the view is the buffer: keep a copy */
            memcpy(st->tmp[3], old.h, old.n * sizeof(float));
            old.h = st->tmp[3];
        }
    }
    pp->updates++;
    optim_update(&t->opt, t->dev, pp->lay.n - MODEL_PAD, pp->p + MODEL_PAD, pp->g + MODEL_PAD, MODEL_PAD, lr,
                 pp->updates);
    if (t->o->gap_aware) {
        view_t w = view(pp, t, pp->p, st->tmp[1], 1);
        ga_track(w.n, pp->gap_avg, w.h, old.h, GA_DECAY);
        st->have_ref = 0;
    }
    pp->backs = 0;
    pp->upd += hpc_wtime() - t0;
}

void stale_after_backward(pipeline_t *pp, train_t *t, pipe_slot_t *sl, int last)
{
    keep_ref(pp, t, sl);
    if (pp->backs >= t->o->step_every || last) stale_update(pp, t);
}
