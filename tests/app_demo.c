/* app_demo - a program made of the app kit alone, for tests/app_kit.sh:
 * one option of every kind, then what the test asks it to do.
 *
 *   app_demo [options]         prints the parsed values and the options key
 *   --fail-rank R              rank R reports a failure: hpc_app_agree
 *   --stop-rank R --steps N    rank R raises the stop signal at step 3 of N;
 *                              every rank must stop after the same step
 *   --later-rank R             rank R keeps a failure (hpc_app_fail_later) at
 *                              step 3 (without --steps: at once); every rank
 *                              must end with it at the next agreement
 *   --vote                     agree on the stop with the nonblocking vote
 *                              (one step later) instead of an allreduce
 *   --pace MS                  sleep MS ms a step (signals from outside)
 *   --setup MS                 sleep MS ms before the first step (before
 *                              the program first asks for the stop flag)
 * With --steps rank 0 shows a progress line of the steps, with a field of
 * its own ("item I") and the rate in items (10 a step).
 *   --was KEY                  prints the first difference of KEY and ours
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "hpc_app.h"

static int64_t n = 5, fail_rank = -1, later_rank = -1, stop_rank = -1, steps = 0, pace = 0, setup = 0;
static int vote;
static double x = 0.5, big = 1;
static size_t size = 64;
static const char *name = "demo", *was;
static int mode, flag;
static double mu, sigma;

static int take_pair(const char *v, void *dest)
{
    (void)dest;
    char extra;
    if (sscanf(v, "%lf,%lf%c", &mu, &sigma, &extra) != 2) return HPC_ERR(HPC_ERR_ARG, "expected MU,SIGMA");
    return 0;
}

static const hpc_opt_t options[] = {
    HPC_SECTION("Values:"),
    HPC_INT("n", 'n', &n, "N", 1, 100, HPC_OPT_KEY, "a count from 1 to 100"),
    HPC_DOUBLE("x", 'x', &x, "X", 0, 10, HPC_OPT_KEY | HPC_OPT_BOUNDS | HPC_OPT_GT,
               "a number, 0 < X <= 10"),
    HPC_DOUBLE("big", 0, &big, "B", 0, 0, HPC_OPT_INF, "any number, inf allowed"),
    HPC_SIZE("size", 's', &size, "SIZE", 0, "a size: 64, 8K, 1M"),
    HPC_STRING("name", 0, &name, "NAME", HPC_OPT_KEY, "a word"),
    HPC_CHOICE("mode", 'm', &mode, "a|b|c", HPC_OPT_KEY, "one of a, b, c"),
    HPC_CALL("pair", 0, NULL, "MU,SIGMA", take_pair, 0, "two numbers"),
    HPC_FLAG("flag", 'f', &flag, 0, "a switch, with a help text long enough that the kit has to "
             "wrap it over more than one line of the help output"),
    HPC_SECTION("Actions:"),
    HPC_INT("fail-rank", 0, &fail_rank, "R", 0, 1000, 0, "rank R fails: the others must agree"),
    HPC_INT("later-rank", 0, &later_rank, "R", 0, 1000, 0, "rank R keeps a failure for later at step 3"),
    HPC_INT("stop-rank", 0, &stop_rank, "R", 0, 1000, 0, "rank R raises the stop signal at step 3"),
    HPC_INT("steps", 0, &steps, "N", 0, 1000000, 0, "run N steps"),
    HPC_FLAG("vote", 0, &vote, 0, "agree on the stop with hpc_app_stop_vote"),
    HPC_INT("pace", 0, &pace, "MS", 0, 100000, 0, "sleep MS ms a step"),
    HPC_INT("setup", 0, &setup, "MS", 0, 100000, 0, "sleep MS ms before the first step"),
    HPC_STRING("was", 0, &was, "KEY", 0, "print the first difference of KEY and this run's key"),
    HPC_OPTS_END};

static const hpc_app_t app = {
    .name = "app_demo",
    .usage = "app_demo [OPTIONS]",
    .about = "A program made of the app kit alone.",
    .opts = options,
    .epilog = "Exit status: 0 success, 1 a rank failed, 2 bad usage, 75 stopped."};

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (ms > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR) continue;
}

static void fields(void *ctx, char *buf, size_t len)
{
    snprintf(buf, len, "item %lld", (long long)(*(int64_t *)ctx * 10));
}

/* The steps until the end or an agreed stop; returns the steps done */
static int64_t run_steps(int rank)
{
    int64_t step = 0;
    hpc_stop_vote_t *v = NULL;
    hpc_progress_t *p = rank == 0 ? hpc_progress_start("app_demo", "steps", (uint64_t)steps) : NULL;
    hpc_progress_rate(p, "items", 10);
    hpc_progress_fields(p, fields, &step);
    if (setup && rank == 0) {   /* for the test: it is running now */
        printf("setting up\n");
        fflush(stdout);
    }
    sleep_ms(setup);
    if (vote && hpc_app_stop_vote_open(hpc_comm_world(), &v) < 0) hpc_app_fatal(1, "%s", hpc_last_cause());
    while (step < steps) {
        if (rank == stop_rank && step == 3) hpc_app_stop_raise();
        if (rank == later_rank && step == 3) hpc_app_fail_later(HPC_EXIT_DATA, "rank %d failed at step 3", rank);
        if (vote ? hpc_app_stop_vote(v) : hpc_app_stop_agreed(hpc_comm_world())) break;
        sleep_ms(pace);
        step++;
        hpc_progress_update(p, (uint64_t)step);
    }
    hpc_app_stop_vote_close(v);
    hpc_progress_end(p);
    return step;
}

int main(int argc, char **argv)
{
    hpc_app_start(&app, &argc, &argv);
    int rank = hpc_rank();
    hpc_app_agree(rank == fail_rank ? HPC_EXIT_DATA : 0, "rank %d says no", rank);
    if (!steps && rank == later_rank) hpc_app_fail_later(HPC_EXIT_DATA, "rank %d failed, said at the end", rank);
    int64_t step = steps ? run_steps(rank) : 0;
    if (rank == 0 && !hpc_app_quiet()) {
        printf("n=%lld x=%.17g big=%g size=%zu name=%s mode=%d flag=%d pair=%g,%g\n", (long long)n, x,
               big, size, name, mode, flag, mu, sigma);
        printf("key=%s\n", hpc_app_key());
        if (was) {
            char diff[512];
            hpc_app_key_diff(was, hpc_app_key(), diff, sizeof diff);
            printf("diff=%s\n", diff);
        }
    }
    if (steps) {
        int64_t lo, hi;
        MPI_Allreduce(&step, &lo, 1, MPI_INT64_T, MPI_MIN, hpc_comm_world());
        MPI_Allreduce(&step, &hi, 1, MPI_INT64_T, MPI_MAX, hpc_comm_world());
        hpc_app_summary("stopped after step %lld on every rank (min %lld max %lld)", (long long)step,
                        (long long)lo, (long long)hi);
        if (step < steps)
            hpc_app_exit(HPC_EXIT_STOPPED, "%s after step %lld of %lld: continue with --resume",
                         hpc_app_stop_why(), (long long)step, (long long)steps);
    }
    return hpc_app_finish();
}
