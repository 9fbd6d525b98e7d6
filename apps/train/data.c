/* data.c - the training data: what a sample is, and reading any list of
 * samples (a rank's slice of shuffled batches) from the file.
 *
 * Two kinds of file:
 *   /X [N, in], /Y [N, out]  (float32 or float64; cross-entropy: integer
 *       class labels /Y [N] or [N, 1]) - sample i is row i;
 *   an hpc-odegen file, /t [NT], /y [N, NT, D], /stats/status [N] - the
 *       flow map: sample (j, k) of the j-th trajectory with status 0 is
 *       input (x(t_k), t_k) (D + 1 values), target x(t_k+1) (or, with
 *       --target delta, x(t_k+1) - x(t_k)), k = 0 .. NT-2; sample index
 *       j (NT-1) + k, so a trajectory's pairs are neighbours.
 * Samples 0 .. ntrain-1 train, the rest (the last --val-fraction of the
 * rows, or of the usable trajectories) validate.  Values are read as
 * float64, the targets differenced and everything normalised in double,
 * then rounded to float32 once.
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "train.h"

static int has(hpc_h5file_t *f, const char *name)
{
    htri_t e = H5Lexists(hpc_h5_id(f), name, H5P_DEFAULT);
    if (e < 0) H5Eclear2(H5E_DEFAULT);
    return e > 0;
}

/* The failed call's code, its cause prefixed with what ("FILE: cause"),
 * or (what NULL) with this frame added. */
static int fail_rc(int rc, const char *what)
{
    if (!what) return hpc_error_push(rc, __FILE__, __LINE__, __func__);
    return HPC_ERR(rc, "%s: %s", what, hpc_last_cause());
}

/* Dataset name, [N, F] (or [N], taken as [N, 1], where allow_1d), of
 * class cls. */
static int open_2d(data_t *d, const char *name, H5T_class_t cls, int allow_1d, hid_t *out,
                   hsize_t dims[2])
{
    hsize_t all[8];
    int nd = 0;
    int rc = hpc_h5_dataset_open(d->f, name, 2, NULL, out);
    if (rc < 0 && allow_1d) rc = hpc_h5_dataset_open(d->f, name, 1, NULL, out);
    if (rc < 0) return fail_rc(rc, NULL);
    hpc_error_clear();
    rc = hpc_h5_dataset_shape(*out, &nd, all);
    if (rc == 0) rc = hpc_h5_dataset_check_type(*out, name, cls, 0);
    if (rc < 0) return fail_rc(rc, hpc_h5_path(d->f));
    dims[0] = all[0];
    dims[1] = nd == 2 ? all[1] : 1;
    return 0;
}

static int open_xy(data_t *d)
{
    hsize_t dx[2], dy[2];
    d->kind = DATA_XY;
    HPC_TRY(open_2d(d, "X", H5T_FLOAT, 0, &d->x, dx));
    int rc = open_2d(d, "Y", d->loss == LOSS_CE ? H5T_INTEGER : H5T_FLOAT, 1, &d->y, dy);
    if (rc < 0 && d->loss == LOSS_CE && strstr(hpc_last_cause(), "holds"))
        return HPC_ERR(rc, "%s (cross-entropy takes class labels)", hpc_last_cause());
    if (rc < 0) return hpc_error_push(rc, __FILE__, __LINE__, __func__);
    if (d->loss == LOSS_CE && dy[1] != 1)
        return HPC_ERR(HPC_ERR_DATA, "%s: /Y is [%llu, %llu]; cross-entropy takes one label per row", hpc_h5_path(d->f),
                 (unsigned long long)dy[0], (unsigned long long)dy[1]);
    if (dx[0] != dy[0])
        return HPC_ERR(HPC_ERR_DATA, "%s: /X has %llu rows but /Y %llu", hpc_h5_path(d->f), (unsigned long long)dx[0],
                 (unsigned long long)dy[0]);
    d->nsamples = (int64_t)dx[0];
    d->nin = (int64_t)dx[1];
    d->nout = (int64_t)dy[1];
    d->describe = "rows of /X -> rows of /Y";
    return 0;
}

/* hpc-odegen's layout; the usable trajectories (status 0) */
static int open_ode(data_t *d, int delta)
{
    hsize_t dt[8], dy[8], ds[8];
    hid_t t, st;
    d->kind = DATA_ODE;
    d->delta = delta;
    if (d->loss == LOSS_CE)
        return HPC_ERR(HPC_ERR_DATA, "%s is an hpc-odegen file: its targets are states, not labels (use --loss mse)",
                 hpc_h5_path(d->f));
    int rc = hpc_h5_dataset_open(d->f, "t", 1, NULL, &t);
    if (!rc) rc = hpc_h5_dataset_shape(t, &(int){0}, dt);
    if (!rc) rc = hpc_h5_dataset_open(d->f, "y", 3, NULL, &d->y);
    if (!rc) rc = hpc_h5_dataset_check_type(d->y, "y", H5T_FLOAT, 0);
    if (!rc) rc = hpc_h5_dataset_shape(d->y, &(int){0}, dy);
    if (!rc) rc = hpc_h5_dataset_open(d->f, "stats/status", 1, NULL, &st);
    if (!rc) rc = hpc_h5_dataset_check_type(st, "stats/status", H5T_INTEGER, 0);
    if (!rc) rc = hpc_h5_dataset_shape(st, &(int){0}, ds);
    if (rc < 0) return fail_rc(rc, NULL);
    if (dt[0] != dy[1] || ds[0] != dy[0] || dy[1] < 2) {
        H5Dclose(t);
        H5Dclose(st);
        return HPC_ERR(HPC_ERR_DATA, "%s: /t, /y and /stats/status do not fit together (not an hpc-odegen file?)",
                 hpc_h5_path(d->f));
    }
    d->nt = (int64_t)dy[1];
    d->dim = (int64_t)dy[2];
    int8_t *status = malloc(dy[0] + 1);
    d->t = malloc(dt[0] * sizeof *d->t);
    d->traj = malloc((dy[0] + 1) * sizeof *d->traj);
    rc = status && d->t && d->traj ? 0 : HPC_ERR(HPC_ERR_NOMEM, "status of %llu trajectories",
                                                      (unsigned long long)dy[0]);
    if (!rc) rc = hpc_h5_read_rows(t, H5T_NATIVE_DOUBLE, 0, dt[0], d->t);
    if (!rc) rc = hpc_h5_read_rows(st, H5T_NATIVE_INT8, 0, ds[0], status);
    H5Dclose(t);
    H5Dclose(st);
    for (hsize_t i = 0; !rc && i < ds[0]; i++)
        if (status[i] == 0) d->traj[d->ntraj++] = (int64_t)i;
    free(status);
    if (rc) return fail_rc(rc, hpc_h5_path(d->f));
    if (d->ntraj == 0)
        return HPC_ERR(HPC_ERR_DATA, "%s: no trajectory has status 0 (all failed or not computed)", hpc_h5_path(d->f));
    d->nsamples = d->ntraj * (d->nt - 1);
    d->nin = d->dim + 1;
    d->nout = d->dim;
    d->describe = delta ? "(x(t_k), t_k) -> x(t_k+1) - x(t_k) of hpc-odegen trajectories with status 0"
                        : "(x(t_k), t_k) -> x(t_k+1) of hpc-odegen trajectories with status 0";
    return 0;
}

/* Cross-entropy: every label in [0, classes) (classes 0: from the data,
 * the largest label + 1).  Each rank scans its block of /Y; the lowest
 * bad row is reported. */
static int check_labels(data_t *d, int64_t classes)
{
    int64_t lo, n, top = -1, bad = INT64_MAX, badlab = INT64_MIN;
    hpc_block_range(d->nsamples, hpc_size(), hpc_rank(), &lo, &n);
    int64_t *lab = malloc((size_t)(n > 0 ? n : 1) * sizeof *lab);
    int rc = lab ? hpc_h5_read_rows_indep(d->y, H5T_NATIVE_INT64, (hsize_t)lo, (hsize_t)n, lab)
                 : HPC_ERR(HPC_ERR_NOMEM, "labels");
    for (int64_t i = 0; !rc && i < n; i++) {
        if (lab[i] > top) top = lab[i];
        if ((lab[i] < 0 || (classes && lab[i] >= classes)) && bad == INT64_MAX) {
            bad = lo + i;
            badlab = lab[i];
        }
    }
    free(lab);
    int allrc;
    MPI_Allreduce(&rc, &allrc, 1, MPI_INT, MPI_MIN, hpc_comm_world());
    /* a failed read: no rank goes on to the collectives below; the ranks
     * that failed say why (hpc_app_agree in the caller ends all) */
    if (allrc < 0) return rc < 0 ? fail_rc(rc, hpc_h5_path(d->f)) : 0;
    int64_t alltop, allbad, lab2;
    MPI_Allreduce(&top, &alltop, 1, MPI_INT64_T, MPI_MAX, hpc_comm_world());
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT64_T, MPI_MIN, hpc_comm_world());
    if (bad != allbad) badlab = INT64_MIN;   /* the lowest bad row's rank tells its label */
    MPI_Allreduce(&badlab, &lab2, 1, MPI_INT64_T, MPI_MAX, hpc_comm_world());
    if (allbad != INT64_MAX) {
        if (classes)
            return HPC_ERR(HPC_ERR_DATA, "%s: label %lld of row %lld is out of range: --layers gives %lld classes",
                           hpc_h5_path(d->f), (long long)lab2, (long long)allbad, (long long)classes);
        return HPC_ERR(HPC_ERR_DATA, "%s: label %lld of row %lld is negative", hpc_h5_path(d->f), (long long)lab2,
                       (long long)allbad);
    }
    d->nclasses = classes ? classes : alltop + 1;
    d->nout = d->nclasses;
    return 0;
}

static int split(data_t *d, double frac)
{
    if (d->kind == DATA_ODE) {
        int64_t vt = llround(frac * (double)d->ntraj);
        d->nval = vt * (d->nt - 1);
        /* the first validation trajectory's row of /y (beyond the last row: none) */
        d->val_row = vt > 0 ? d->traj[d->ntraj - vt] : d->traj[d->ntraj - 1] + 1;
    } else {
        d->nval = llround(frac * (double)d->nsamples);
        d->val_row = d->nsamples - d->nval;
    }
    d->ntrain = d->nsamples - d->nval;
    if (d->ntrain < 1)
        return HPC_ERR(HPC_ERR_DATA, "--val-fraction %g leaves no training sample (%lld samples)", frac,
                 (long long)d->nsamples);
    return 0;
}

/* mean 0, std 1: the identity until stats_compute or a checkpoint says */
static int norm_alloc(data_t *d)
{
    d->x_mean = calloc((size_t)d->nin, sizeof(double));
    d->x_std = malloc((size_t)d->nin * sizeof(double));
    d->y_mean = calloc((size_t)d->ydim, sizeof(double));
    d->y_std = malloc((size_t)d->ydim * sizeof(double));
    if (!d->x_mean || !d->x_std || !d->y_mean || !d->y_std) return HPC_ERR(HPC_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < d->nin; i++) d->x_std[i] = 1;
    for (int i = 0; i < d->ydim; i++) d->y_std[i] = 1;
    return 0;
}

int data_open(data_t *d, const train_opts_t *o, int64_t nclasses)
{
    memset(d, 0, sizeof *d);
    d->x = d->y = H5I_INVALID_HID;
    d->loss = o->loss;
    int rc = hpc_h5_open(o->data, hpc_comm_world(), 0, 0, &d->f);
    if (rc < 0) return fail_rc(rc, "--data");
    if (has(d->f, "X") && has(d->f, "Y"))
        rc = open_xy(d);
    else if (has(d->f, "y") && has(d->f, "t") && has(d->f, "stats"))
        rc = open_ode(d, o->target_delta);
    else
        rc = HPC_ERR(HPC_ERR_DATA, "%s has neither /X and /Y nor hpc-odegen's /t, /y and /stats/status",
                     hpc_h5_path(d->f));
    if (!rc && d->loss == LOSS_CE) rc = check_labels(d, nclasses);
    d->ydim = d->loss == LOSS_CE ? 1 : (int)d->nout;
    if (!rc) rc = split(d, o->val_fraction);
    if (!rc) rc = norm_alloc(d);
    return rc;
}

void data_close(data_t *d)
{
    if (d->x >= 0) H5Dclose(d->x);
    if (d->y >= 0) H5Dclose(d->y);
    if (d->f) hpc_h5_close(d->f);
    free(d->traj);
    free(d->t);
    free(d->x_mean);
    free(d->x_std);
    free(d->y_mean);
    free(d->y_std);
    memset(d, 0, sizeof *d);
}

/* Raw values of samples ids[0..n): X [n, nin], Y [n, ydim] in double. */
static int read_xy(const data_t *d, size_t n, const int64_t *ids, double *X, double *Y)
{
    hsize_t *at = malloc((n + 1) * sizeof *at);
    int64_t *lab = d->loss == LOSS_CE ? malloc((n + 1) * sizeof *lab) : NULL;
    if (!at || (d->loss == LOSS_CE && !lab)) {
        free(at);
        free(lab);
        return HPC_ERR(HPC_ERR_NOMEM, "%zu samples", n);
    }
    for (size_t j = 0; j < n; j++) at[j] = (hsize_t)ids[j];
    int rc = hpc_h5_read_rows_at(d->x, H5T_NATIVE_DOUBLE, 1, n, at, X);
    if (!rc && d->loss == LOSS_CE) {
        rc = hpc_h5_read_rows_at(d->y, H5T_NATIVE_INT64, 1, n, at, lab);
        for (size_t j = 0; !rc && j < n; j++) Y[j] = (double)lab[j];
    } else if (!rc) {
        rc = hpc_h5_read_rows_at(d->y, H5T_NATIVE_DOUBLE, 1, n, at, Y);
    }
    free(at);
    free(lab);
    return rc;
}

static int read_ode(const data_t *d, size_t n, const int64_t *ids, double *X, double *Y)
{
    const int64_t pairs = d->nt - 1, D = d->dim;
    hsize_t *at = malloc((4 * n + 1) * sizeof *at);
    double *v = malloc((2 * n * D + 1) * sizeof *v);
    if (!at || !v) {
        free(at);
        free(v);
        return HPC_ERR(HPC_ERR_NOMEM, "%zu samples", n);
    }
    for (size_t j = 0; j < n; j++) {   /* rows (i, k) and (i, k+1) */
        hsize_t i = (hsize_t)d->traj[ids[j] / pairs], k = (hsize_t)(ids[j] % pairs);
        at[4 * j] = at[4 * j + 2] = i;
        at[4 * j + 1] = k;
        at[4 * j + 3] = k + 1;
    }
    int rc = hpc_h5_read_rows_at(d->y, H5T_NATIVE_DOUBLE, 2, 2 * n, at, v);
    for (size_t j = 0; !rc && j < n; j++) {
        const double *now = v + 2 * j * D, *next = now + D;
        for (int64_t c = 0; c < D; c++) {
            X[j * d->nin + c] = now[c];
            Y[j * D + c] = d->delta ? next[c] - now[c] : next[c];
        }
        X[j * d->nin + D] = d->t[ids[j] % pairs];
    }
    free(at);
    free(v);
    return rc;
}

int data_read_raw(const data_t *d, size_t n, const int64_t *ids, double *X, double *Y)
{
    return d->kind == DATA_ODE ? read_ode(d, n, ids, X, Y) : read_xy(d, n, ids, X, Y);
}

int data_read(const data_t *d, size_t n, const int64_t *ids, float *X, float *Y)
{
    double *x = malloc((n * d->nin + 1) * sizeof *x), *y = malloc((n * d->ydim + 1) * sizeof *y);
    int rc = x && y ? data_read_raw(d, n, ids, x, y) : HPC_ERR(HPC_ERR_NOMEM, "%zu samples", n);
    for (size_t j = 0; !rc && j < n; j++) {
        for (int64_t c = 0; c < d->nin; c++)
            X[j * d->nin + c] = (float)((x[j * d->nin + c] - d->x_mean[c]) / d->x_std[c]);
        for (int c = 0; c < d->ydim; c++)
            Y[j * d->ydim + c] = d->loss == LOSS_CE ? (float)y[j] :
                                 (float)((y[j * d->ydim + c] - d->y_mean[c]) / d->y_std[c]);
    }
    free(x);
    free(y);
    return rc;
}
