/* metrics.c - RUNDIR/metrics.csv and RUNDIR/loss.png, written by rank 0.
 *
 * One row every --log-every steps and at every evaluation: the step, the
 * epoch (fractional: steps / steps per epoch), the learning rate of that
 * step, its training loss (the global batch's, as every rank holds it),
 * the validation loss where it was computed (empty otherwise) - both
 * over normalised targets, as the model sees them (the identity with
 * --no-normalize; cross-entropy: of the labels) - the validation MSE in
 * the target's own units (MSE runs), the samples per second since the
 * previous row, the share of the step time spent in collective calls,
 * and the share of the communication that backward hid.  A resumed run
 * keeps the rows up to its checkpoint.  A row or plot that cannot be
 * written (a full disk) ends the run with one line and exit 1.
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "train.h"

#define HEADER "step,epoch,lr,train_loss_normalized,val_loss_normalized,val_mse_data,samples_per_s," \
               "comm_share,comm_hidden,val_accuracy"

int metrics_open(train_t *t, int64_t keep_upto)
{
    return hpc_run_csv_open(t->run, "metrics.csv", HEADER, keep_upto);
}

void metrics_row(train_t *t, double lr, double val_loss, double val_mse, double val_acc, double samples_per_s,
                 double comm_share, double hidden)
{
    char val[32] = "", mse[32] = "", acc[32] = "";
    if (isfinite(val_loss)) snprintf(val, sizeof val, "%.9g", val_loss);
    if (isfinite(val_mse)) snprintf(mse, sizeof mse, "%.9g", val_mse);
    if (isfinite(val_acc)) snprintf(acc, sizeof acc, "%.6f", val_acc);
    int rc = hpc_run_csv_row(t->run, "%lld,%.4f,%.9g,%.9g,%s,%s,%.1f,%.4f,%.4f,%s", (long long)t->step,
                             (double)t->step / (double)t->steps_per_epoch, lr, t->train_loss, val, mse,
                             samples_per_s, comm_share, hidden, acc);
    /* only rank 0 knows: every rank stops at the step's agreement (the
     * checkpoint before it stays the last one), one line, exit 1 */
    if (rc < 0) {
        hpc_app_fail_later(HPC_EXIT_DATA, "%s; stopped after step %lld, %s/checkpoint.h5 left as it was",
                           hpc_last_cause(), (long long)t->step, t->o->out);
        hpc_error_clear();
    }
}

void metrics_plot(train_t *t)
{
    /* the label says which values the loss is over (no user text in it) */
    const char *ylabel = train_loss_normalised(t) ? "loss (normalised targets)"
                         : t->o->loss == LOSS_CE ? "cross-entropy" : "loss (data units)";
    char script[1024];
    snprintf(script, sizeof script,
             "set datafile separator ','\n"
             "set key autotitle columnhead\n"
             "set logscale y\n"
             "set grid\n"
             "set xlabel 'step'\n"
             "set ylabel '%s'\n"
             "set title 'hpc-train'\n"
             "plot 'metrics.csv' using 1:4 with lines lw 2 title 'train', "
             "'' using 1:($5 > 0 ? $5 : NaN) with linespoints pt 7 ps 0.6 title 'validation'\n", ylabel);
    /* test hook: HPC_TRAIN_TEST_PLOT_WAIT=FILE: rank 0 waits (60 s at
     * most) for FILE before plotting, so a test can fill the disk between
     * the last checkpoint and the plot */
    const char *wait = getenv("HPC_TRAIN_TEST_PLOT_WAIT");
    for (int i = 0; wait && hpc_rank() == 0 && i < 600 && access(wait, F_OK) != 0; i++) usleep(100000);
    /* a plot that could not be written (a full disk) fails the run, on
     * every rank: a truncated loss.png must not look like one */
    hpc_app_agree_rc(hpc_run_plot(t->run, "loss.png", script), HPC_EXIT_DATA, "loss.png");
}
