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
 * keeps the rows up to its checkpoint.
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include "train.h"

#define HEADER "step,epoch,lr,train_loss_normalized,val_loss_normalized,val_mse_data,samples_per_s," \
               "comm_share,comm_hidden"

int metrics_open(train_t *t, int64_t keep_upto)
{
    return hpc_run_csv_open(t->run, "metrics.csv", HEADER, keep_upto);
}

void metrics_row(train_t *t, double lr, double val_loss, double val_mse, double samples_per_s,
                 double comm_share, double hidden)
{
    char val[32] = "", mse[32] = "";
    if (isfinite(val_loss)) snprintf(val, sizeof val, "%.9g", val_loss);
    if (isfinite(val_mse)) snprintf(mse, sizeof mse, "%.9g", val_mse);
    int rc = hpc_run_csv_row(t->run, "%lld,%.4f,%.9g,%.9g,%s,%s,%.1f,%.4f,%.4f", (long long)t->step,
                             (double)t->step / (double)t->steps_per_epoch, lr, t->train_loss, val, mse,
                             samples_per_s, comm_share, hidden);
    /* metrics are a report, not the result: a full disk here is a warning */
    if (rc < 0) {
        hpc_warn("%s", hpc_last_cause());
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
    int rc = hpc_run_plot(t->run, "loss.png", script);
    if (rc < 0) {
        hpc_warn("loss.png: %s", hpc_last_cause());
        hpc_error_clear();
    }
}
