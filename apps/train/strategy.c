/* strategy.c - which strategy the options ask for, and which options
 * each takes.  Each strategy lives in its own file behind strategy_t
 * (train.h): strat_dp.c, strat_shard.c, pipe.c; what they share is
 * strat_common.c's, below them all.
 */
#include "config.h"
#include <stdio.h>
#include "pipe.h"

const strategy_t *strategy_of(const train_opts_t *o)
{
    if (o->parallel != PAR_DP) return &strategy_pipe;   /* --shard optim composes inside it */
    return o->shard != SHARD_NONE ? &strategy_shard : &strategy_dp;
}

void strategy_describe(const train_opts_t *o, char *buf, size_t len)
{
    static const char *shard[] = {"", "optim", "grads", "params"};
    static const char *par[] = {"dp", "pipe", "hybrid"};
    int n = snprintf(buf, len, "--parallel %s", par[o->parallel]);
    if (o->parallel != PAR_DP && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " --pipe-schedule %s", pipe_scheds[o->pipe_sched].name);
    if (o->shard && n >= 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, " --shard %s", shard[o->shard]);
}

/* Where an option belongs: the data-parallel strategies (dp, --shard),
 * a pipeline with a flushed schedule, one with an asynchronous one */
enum { FOR_DP = 1, FOR_PIPE = 2, FOR_STALE = 4 };
#define FOR_PIPELINE (FOR_PIPE | FOR_STALE)

/* The options that not every strategy takes, with where each belongs;
 * every other option belongs everywhere.  Refused where given, their
 * defaults given explicitly too (a --pipe-schedule that dp ignores is a
 * mistake).  hint: what the refusal adds. */
static const struct {
    const char *name;
    int where;
    const char *hint;
} option_scope[] = {
    {"stages", FOR_PIPELINE, ""},
    {"partition", FOR_PIPELINE, ""},
    {"micro", FOR_PIPELINE, ""},
    {"pipe-schedule", FOR_PIPELINE, ""},
    {"weight-stashing", FOR_STALE, ""},
    {"weight-prediction", FOR_STALE, ""},
    {"gap-aware", FOR_STALE, ""},
    {"gap-aware-just-lost", FOR_STALE, ""},
    {"recompute", FOR_PIPELINE, ""},
    {"step-every", FOR_STALE, ""},
    {"accum", FOR_DP, "; a pipeline splits the batch with --micro"},
};

static int where_of(const train_opts_t *o)
{
    if (o->parallel == PAR_DP) return FOR_DP;
    return pipe_scheds[o->pipe_sched].async ? FOR_STALE : FOR_PIPE;
}

/* "--parallel pipe or hybrid", or within a pipeline "--pipe-schedule
 * stale, not gpipe" */
static int refuse(const train_opts_t *o, int k, int here)
{
    int w = option_scope[k].where;
    const char *name = option_scope[k].name, *hint = option_scope[k].hint;
    if (w & FOR_DP)
        return HPC_ERR(HPC_ERR_ARG, "--%s is for --parallel dp%s", name, hint);
    if (here == FOR_DP)
        return HPC_ERR(HPC_ERR_ARG, "--%s is for --parallel pipe or hybrid%s", name, hint);
    return HPC_ERR(HPC_ERR_ARG, "--%s is for --pipe-schedule %s, not %s%s", name,
                   w & FOR_STALE ? "stale" : "seq, gpipe or 1f1b", pipe_scheds[o->pipe_sched].name, hint);
}

int strategy_check(const train_opts_t *o)
{
    int here = where_of(o);
    for (size_t k = 0; k < sizeof option_scope / sizeof *option_scope; k++)
        if (!(option_scope[k].where & here) && hpc_app_opt_given(option_scope[k].name))
            return refuse(o, (int)k, here);
    const strategy_t *s = strategy_of(o);
    return s->check ? s->check(o) : 0;
}
