/* strategy.c - which strategy the options ask for.  Each strategy lives
 * in its own file behind strategy_t (train.h): strat_dp.c, shard.c,
 * pipe.c.
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

int strategy_stop_agreed(train_t *t)
{
    (void)t;
    return hpc_app_stop_agreed(hpc_comm_world());
}
