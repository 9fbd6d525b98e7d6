/* checkpoint.c - RUNDIR/checkpoint.h5: what a run needs to continue bit for
 * bit, laid out so that PyTorch loads it without conversion.
 *
 *   /model/<i>/weight [out, in], /model/<i>/bias [out]   float32
 *       i is the module's index in nn.Sequential(Linear, act, Linear,
 *       act, ..., Linear): 0, 2, 4, ... - so the keys are those of that
 *       Sequential's state_dict ("2.weight")
 *   /optim/<state>/<i>/weight|bias   float32: exp_avg and exp_avg_sq
 *       (Adam, AdamW) or momentum_buffer (SGD with momentum)
 *   /norm/x_mean, /norm/x_std [in], /norm/y_mean, /norm/y_std [out]
 *       float64 (MSE; identity with --no-normalize): the model sees
 *       (x - x_mean) / x_std and predicts (y - y_mean) / y_std
 *   root attributes: step, epoch, seed, samples_seen, train_loss,
 *       val_loss (over normalised targets), val_mse_data (in the target's
 *       units), val_accuracy (cross-entropy), format_version (the
 *       layout's, data/schemas/checkpoint.json: --resume refuses
 *       another), layers, activation, loss, optimizer, lr, data, samples,
 *       target ("Y", "next", "delta"), train_samples, val_samples,
 *       val_from_row (validation: the samples of rows >= it), init_from,
 *       data_bytes, data_mtime, data_digest (the data's fingerprint:
 *       --resume refuses other data unless --data-changed-ok),
 *       "options" (the key --resume compares) and the provenance
 *
 * Written through libhpc's checkpoints (hpc_ckpt_*), the disk reserved
 * first (a full disk: one line, the previous checkpoint kept); the file appears
 * under its name only complete.  Each rank writes the run of each array
 * that it holds (hold.c: data parallelism's rank 0 every array whole, a
 * pipeline stage its layers, a sharded rank its block of each; a
 * replica's copy not again) with hpc_ckpt_put_part, and reads back what
 * it holds, so the file is the same whatever the strategy, and any
 * strategy loads it.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "train.h"

/* ---- the data's fingerprint ----
 * --data is not part of the options key (the same data may move), so a
 * resume on another file of the same shape would continue on it
 * silently.  The checkpoint keeps the file's size and time and the data's
 * digest (d->digest: a hash of every value of every sample, taken by the
 * statistics pass that reads the whole file at every start anyway, so an
 * edit of one value anywhere is seen).  A resume compares size and digest
 * (the time and path are shown, not compared: a copy is the same data).
 * Checkpoints of hpckit 0.2 kept a "data_checksum" of 64 samples
 * instead: of those only the size is compared. */
/* the layout's version, data/schemas/checkpoint.json's "format_version" */
#define CKPT_FORMAT 1

typedef struct {
    int64_t bytes, mtime;
    uint64_t sum;
} fingerprint_t;

static int fingerprint(const train_t *t, fingerprint_t *fp)
{
    struct stat st;
    if (stat(t->o->data, &st) != 0) return HPC_ERR(HPC_ERR_IO, "%s: %s", t->o->data, strerror(errno));
    fp->bytes = (int64_t)st.st_size;
    fp->mtime = (int64_t)st.st_mtime;
    fp->sum = t->data.digest;
    return 0;
}

/* the attributes are collective: written on every rank whatever its
 * fingerprint's verdict, which then decides the commit */
static int put_fingerprint(hid_t id, const train_t *t)
{
    fingerprint_t fp = {0, 0, 0};
    int rc = fingerprint(t, &fp);
    char sum[32];
    snprintf(sum, sizeof sum, "%016" PRIx64, fp.sum);
    int rc2 = hpc_h5_attr_set_int64(id, "data_bytes", fp.bytes);
    if (!rc2) rc2 = hpc_h5_attr_set_int64(id, "data_mtime", fp.mtime);
    if (!rc2) rc2 = hpc_h5_attr_set_string(id, "data_digest", sum);
    return rc ? rc : rc2;
}

static void when(int64_t t, char *buf, size_t len)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm)) snprintf(buf, len, "?");
}

/* --resume: the data against the checkpoint's fingerprint; HPC_ERR_DATA
 * naming both unless they match or --data-changed-ok (a checkpoint
 * without one, from before: not checked; with the 64-sample checksum of
 * hpckit 0.2: the size only) */
static int same_data(hid_t id, const train_t *t)
{
    int64_t bytes, mtime;
    char *sum = NULL, *was = NULL;
    int old = 0;
    if (hpc_h5_attr_get_string(id, "data_digest", &sum) < 0) {
        hpc_error_clear();
        if (hpc_h5_attr_get_string(id, "data_checksum", &sum) < 0) {
            hpc_error_clear();
            return 0;
        }
        old = 1;
    }
    /* the attributes first (collective reads), then the file's size */
    fingerprint_t fp = {0, 0, 0};
    int rc = hpc_h5_attr_get_int64(id, "data_bytes", &bytes);
    if (!rc) rc = hpc_h5_attr_get_int64(id, "data_mtime", &mtime);
    if (!rc) rc = hpc_h5_attr_get_string(id, "data", &was);
    if (!rc) rc = fingerprint(t, &fp);
    char now[32], then[32], tnow[40], tthen[40];
    snprintf(now, sizeof now, "%016" PRIx64, fp.sum);
    if (!rc && ((!old && strcmp(now, sum)) || bytes != fp.bytes) && !t->o->data_changed_ok) {
        when(mtime, tthen, sizeof tthen);
        when(fp.mtime, tnow, sizeof tnow);
        snprintf(then, sizeof then, "%s", sum);
        rc = HPC_ERR(HPC_ERR_DATA, "--data %s is not the data the checkpoint was trained on (%s: %lld bytes, "
                     "modified %s, checksum %s; now %lld bytes, modified %s, checksum %s): continue on it with "
                     "--data-changed-ok, or start over with --force", t->o->data, was, (long long)bytes, tthen,
                     then, (long long)fp.bytes, tnow, now);
    }
    free(sum);
    free(was);
    return rc;
}

static const char *act_name(act_t a)
{
    return a == ACT_RELU ? "relu" : a == ACT_GELU ? "gelu" : "tanh";
}

static int ckpt_path(const train_t *t, char *path, size_t len)
{
    return hpc_run_path(t->run, "checkpoint.h5", path, len);
}

/* A failed collective call still took part: the later ones go on in
 * step on every rank, and the first error decides the commit. */
static int first_rc(int rc, int now)
{
    return rc ? rc : now;
}

/* The most floats of any array (a layer's weight): the host buffer a
 * run of one passes through */
static size_t array_most(const model_t *m)
{
    size_t most = 1;
    for (int l = 0; l < m->nl; l++) {
        size_t n = (size_t)(m->size[l] * m->size[l + 1]);
        most = n > most ? n : most;
    }
    return most;
}

static void array_name(char *name, size_t len, const char *prefix, int l, int bias)
{
    snprintf(name, len, "%s/%d/%s", prefix, 2 * l, bias ? "bias" : "weight");
}

/* Every layer's weight and bias under prefix, each rank its runs of h */
static int put_layers(hpc_ckpt_t *c, const train_t *t, const char *prefix, const hold_t *h, float *host)
{
    const model_t *m = &t->model;
    int rc = 0;
    for (int l = 0; l < m->nl; l++)
        for (int k = 0; k < 2; k++) {
            char name[256];
            hsize_t dims[2] = {(hsize_t)m->size[l + 1], (hsize_t)m->size[l]};
            size_t first, count;
            const float *at = hold_piece(h, l, k, &first, &count);
            if (!h->writes) count = 0;
            if (count) t->dev->to_host(host, at, count * sizeof(float));
            array_name(name, sizeof name, prefix, l, k);
            rc = first_rc(rc, hpc_ckpt_put_part(c, name, H5T_NATIVE_FLOAT, 2 - k, dims, host, first, count));
        }
    return rc;
}

/* What this rank holds of every layer's weight and bias, from prefix;
 * with check_finite, -1 (and *bad set) if any is NaN or infinite */
static int get_layers(hpc_ckpt_t *c, const train_t *t, const char *prefix, const hold_t *h, float *host,
                      int *bad)
{
    const model_t *m = &t->model;
    for (int l = 0; l < m->nl; l++)
        for (int k = 0; k < 2; k++) {
            char name[256];
            hsize_t dims[2] = {(hsize_t)m->size[l + 1], (hsize_t)m->size[l]};
            size_t first, count;
            float *at = hold_piece(h, l, k, &first, &count);
            array_name(name, sizeof name, prefix, l, k);
            HPC_TRY(hpc_ckpt_get_part(c, name, H5T_NATIVE_FLOAT, 2 - k, dims, host, first, count));
            for (size_t i = 0; bad && i < count; i++) *bad |= !isfinite(host[i]);
            if (count) t->dev->to_dev(at, host, count * sizeof(float));
        }
    return 0;
}

static int put_norm(hpc_ckpt_t *c, const data_t *d)
{
    hsize_t nin = (hsize_t)d->nin, nout = (hsize_t)d->ydim;
    int rc = hpc_ckpt_put(c, "norm/x_mean", H5T_NATIVE_DOUBLE, 1, &nin, d->x_mean);
    rc = first_rc(rc, hpc_ckpt_put(c, "norm/x_std", H5T_NATIVE_DOUBLE, 1, &nin, d->x_std));
    if (d->loss == LOSS_CE) return rc;
    rc = first_rc(rc, hpc_ckpt_put(c, "norm/y_mean", H5T_NATIVE_DOUBLE, 1, &nout, d->y_mean));
    return first_rc(rc, hpc_ckpt_put(c, "norm/y_std", H5T_NATIVE_DOUBLE, 1, &nout, d->y_std));
}

/* What the data was, as plain attributes (the options key has it too, in
 * one string): the target, the split and where the weights came from. */
static int put_split(hid_t id, const train_t *t)
{
    const data_t *d = &t->data;
    const char *target = d->kind == DATA_XY ? "Y" : d->delta ? "delta" : "next";
    int rc = hpc_h5_attr_set_string(id, "target", target);
    rc = first_rc(rc, hpc_h5_attr_set_int64(id, "train_samples", d->ntrain));
    rc = first_rc(rc, hpc_h5_attr_set_int64(id, "val_samples", d->nval));
    rc = first_rc(rc, hpc_h5_attr_set_int64(id, "val_from_row", d->val_row));
    return first_rc(rc, hpc_h5_attr_set_string(id, "init_from", t->o->init_from ? t->o->init_from : ""));
}

static int put_attrs(hpc_ckpt_t *c, const train_t *t)
{
    const train_opts_t *o = t->o;
    hid_t id = hpc_ckpt_id(c);
    char sizes[TRAIN_MAXL * 9 + 16] = "";
    train_layers_str(o, sizes, sizeof sizes);
    const char *opt = o->optim->name;
    int rc = hpc_h5_attr_set_int64(id, "step", t->step);
    rc = first_rc(rc, hpc_h5_attr_set_double(id, "epoch", (double)t->step / (double)t->steps_per_epoch));
    rc = first_rc(rc, hpc_h5_attr_set_int64(id, "seed", (int64_t)o->seed));
    rc = first_rc(rc, hpc_h5_attr_set_int64(id, "samples_seen", t->step * o->batch * o->accum));
    rc = first_rc(rc, hpc_h5_attr_set_double(id, "train_loss", t->train_loss));
    rc = first_rc(rc, hpc_h5_attr_set_double(id, "val_loss", t->val_loss));
    rc = first_rc(rc, hpc_h5_attr_set_double(id, "val_mse_data", t->val_mse));
    rc = first_rc(rc, hpc_h5_attr_set_double(id, "val_accuracy", t->val_acc));
    rc = first_rc(rc, hpc_h5_attr_set_int64(id, "format_version", CKPT_FORMAT));
    rc = first_rc(rc, hpc_h5_attr_set_string(id, "layers", sizes));
    rc = first_rc(rc, hpc_h5_attr_set_string(id, "activation", act_name(o->act)));
    rc = first_rc(rc, hpc_h5_attr_set_string(id, "loss", o->loss == LOSS_CE ? "cross-entropy" : "mse"));
    rc = first_rc(rc, hpc_h5_attr_set_string(id, "optimizer", opt));
    rc = first_rc(rc, hpc_h5_attr_set_double(id, "lr", o->lr));
    rc = first_rc(rc, hpc_h5_attr_set_string(id, "data", o->data));
    rc = first_rc(rc, hpc_h5_attr_set_string(id, "samples", t->data.describe));
    rc = first_rc(rc, hpc_h5_attr_set_int64(id, "normalized", o->normalize));
    rc = first_rc(rc, put_fingerprint(id, t));
    return first_rc(rc, put_split(id, t));
}

/* The prefix of buffer k of t->hold: the model, then each state */
static void prefix_of(const train_t *t, int k, char *buf, size_t len)
{
    if (k == 0) snprintf(buf, len, "model");
    else snprintf(buf, len, "optim/%s", t->opt.kind->state[k - 1]);
}

int ckpt_save(train_t *t)
{
    char path[4096];
    hpc_ckpt_t *c;
    float *host = malloc(array_most(&t->model) * sizeof *host);
    if (!host) return HPC_ERR(HPC_ERR_NOMEM, "the checkpoint's buffer");
    const model_t *m = &t->model;
    /* the arrays' bytes: weights and biases, each optimiser state, the
     * normalisation, their object headers; reserved on disk before
     * anything is written */
    double bytes = (double)m->nparams * sizeof(float) * (1 + t->opt.nstates) +
                   (double)(t->data.nin + t->data.ydim) * 2 * sizeof(double) +
                   2048.0 * (2 * m->nl * (1 + t->opt.nstates) + 4);
    int rc = ckpt_path(t, path, sizeof path);
    if (!rc) rc = hpc_ckpt_begin_sized(path, hpc_comm_world(), hpc_app_key(), t->argc, t->argv, bytes, &c);
    if (rc) {
        free(host);
        return rc;
    }
    for (int k = 0; k <= t->opt.nstates; k++) {
        char prefix[64];
        prefix_of(t, k, prefix, sizeof prefix);
        rc = first_rc(rc, put_layers(c, t, prefix, &t->hold[k], host));
    }
    free(host);
    rc = first_rc(rc, put_norm(c, &t->data));
    rc = first_rc(rc, put_attrs(c, t));
    int crc = hpc_ckpt_commit(c, rc == 0);
    if (!rc && !crc) t->saved_step = t->step;
    return rc ? rc : crc;
}

static int load(train_t *t, hpc_ckpt_t *c)
{
    data_t *d = &t->data;
    float *host = malloc(array_most(&t->model) * sizeof *host);
    if (!host) return HPC_ERR(HPC_ERR_NOMEM, "the checkpoint's buffer");
    int rc = 0;
    for (int k = 0; k <= t->opt.nstates && !rc; k++) {
        char prefix[64];
        prefix_of(t, k, prefix, sizeof prefix);
        rc = get_layers(c, t, prefix, &t->hold[k], host, NULL);
    }
    free(host);
    HPC_TRY(rc);
    hsize_t nin = (hsize_t)d->nin, nout = (hsize_t)d->ydim;
    HPC_TRY(hpc_ckpt_get(c, "norm/x_mean", H5T_NATIVE_DOUBLE, 1, &nin, d->x_mean));
    HPC_TRY(hpc_ckpt_get(c, "norm/x_std", H5T_NATIVE_DOUBLE, 1, &nin, d->x_std));
    if (d->loss == LOSS_MSE) {
        HPC_TRY(hpc_ckpt_get(c, "norm/y_mean", H5T_NATIVE_DOUBLE, 1, &nout, d->y_mean));
        HPC_TRY(hpc_ckpt_get(c, "norm/y_std", H5T_NATIVE_DOUBLE, 1, &nout, d->y_std));
    }
    hid_t id = hpc_ckpt_id(c);
    HPC_TRY(hpc_h5_attr_get_int64(id, "step", &t->step));
    HPC_TRY(hpc_h5_attr_get_double(id, "train_loss", &t->train_loss));
    HPC_TRY(hpc_h5_attr_get_double(id, "val_loss", &t->val_loss));
    HPC_TRY(hpc_h5_attr_get_double(id, "val_mse_data", &t->val_mse));
    /* a checkpoint from before accuracies were kept has none */
    if (hpc_h5_attr_get_double(id, "val_accuracy", &t->val_acc) < 0) {
        hpc_error_clear();
        t->val_acc = NAN;
    }
    if (t->step < 0) return HPC_ERR(HPC_ERR_DATA, "step %lld", (long long)t->step);
    HPC_TRY(same_data(id, t));
    t->saved_step = t->step;
    return 0;
}

int ckpt_load(train_t *t)
{
    char path[4096];
    hpc_ckpt_t *c;
    int rc = ckpt_path(t, path, sizeof path);
    if (rc == 0) rc = hpc_ckpt_open(path, hpc_comm_world(), hpc_app_key(), &c);
    if (rc < 0) return HPC_ERR(rc, "--resume: %s", hpc_last_cause());
    rc = load(t, c);
    if (rc < 0) rc = HPC_ERR(rc, "--resume: %s: %s", path, hpc_last_cause());
    hpc_ckpt_close(c);
    return rc;
}

/* The shape of dataset name in file id: its rank in *nd (0 if it is not
 * there or not a dataset) and up to 2 dims. */
static void file_shape(hid_t id, const char *name, int *nd, hsize_t dims[2])
{
    *nd = 0;
    H5E_BEGIN_TRY {
        hid_t ds = H5Lexists(id, name, H5P_DEFAULT) > 0 ? H5Dopen2(id, name, H5P_DEFAULT) : H5I_INVALID_HID;
        hid_t sp = ds >= 0 ? H5Dget_space(ds) : H5I_INVALID_HID;
        int n = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
        if (n >= 1 && n <= 2) *nd = H5Sget_simple_extent_dims(sp, dims, NULL) == n ? n : 0;
        else if (n > 2) *nd = n;
        if (sp >= 0) H5Sclose(sp);
        if (ds >= 0) H5Dclose(ds);
    } H5E_END_TRY;
}

static void shape_str(int nd, const hsize_t *dims, char *buf, size_t len)
{
    if (nd == 1) snprintf(buf, len, "[%llu]", (unsigned long long)dims[0]);
    else if (nd == 2) snprintf(buf, len, "[%llu, %llu]", (unsigned long long)dims[0], (unsigned long long)dims[1]);
    else snprintf(buf, len, "%d-dimensional", nd);
}

/* The activation the weights were trained with, where the file says
 * (a checkpoint's root attribute "activation", or an init file's that
 * hpckit_torch.save_init wrote): it must be --act's, or the run would
 * train a GELU model silently as tanh.  A file without one (a PyTorch
 * state_dict written by hand) is taken as --act says. */
static int check_init_act(hid_t id, const train_t *t)
{
    char *was = NULL;
    int rc = 0;
    H5E_BEGIN_TRY { rc = H5Aexists(id, "activation") > 0 ? hpc_h5_attr_get_string(id, "activation", &was) : 0; }
    H5E_END_TRY;
    if (rc < 0) return HPC_ERR(HPC_ERR_DATA, "--init-from %s: its activation attribute cannot be read: %s",
                               t->o->init_from, hpc_last_cause());
    const char *now = act_name(t->o->act);
    if (was && strcmp(was, now))
        rc = HPC_ERR(HPC_ERR_DATA, "--init-from %s: its model was trained with %s, but this run's --act is %s "
                     "(pass --act %s)", t->o->init_from, was, now, was);
    free(was);
    return rc;
}

/* Every /model/<2l>/weight [out, in] and bias [out] of the layers, and no
 * more layers than those; HPC_ERR_DATA with a cause naming the first
 * misfit. */
static int check_init_layers(hid_t id, const train_t *t)
{
    const model_t *m = &t->model;
    const char *path = t->o->init_from;
    H5G_info_t gi;
    herr_t ok;
    H5E_BEGIN_TRY { ok = H5Lexists(id, "model", H5P_DEFAULT) > 0 ? H5Gget_info_by_name(id, "model", &gi, H5P_DEFAULT) : -1; }
    H5E_END_TRY;
    if (ok < 0)
        return HPC_ERR(HPC_ERR_DATA, "--init-from %s: no /model group (write the state_dict under model/, as docs/train.md "
                 "shows)", path);
    for (int l = 0; l < m->nl; l++)
        for (int k = 0; k < 2; k++) {
            char name[64], have[64], want[64];
            int nd;
            hsize_t dims[2], need[2] = {(hsize_t)m->size[l + 1], (hsize_t)m->size[l]};
            snprintf(name, sizeof name, "model/%d/%s", 2 * l, k ? "bias" : "weight");
            file_shape(id, name, &nd, dims);
            shape_str(2 - k, need, want, sizeof want);
            if (nd == 0)
                return HPC_ERR(HPC_ERR_DATA, "--init-from %s: no %s: --layers needs %s there (the Linear layers of "
                         "nn.Sequential(Linear, act, Linear, ...) at 0, 2, 4, ...)", path, name, want);
            if (nd != 2 - k || dims[0] != need[0] || (!k && dims[1] != need[1])) {
                shape_str(nd, dims, have, sizeof have);
                return HPC_ERR(HPC_ERR_DATA, "--init-from %s: %s is %s but --layers needs %s", path, name, have, want);
            }
        }
    if (gi.nlinks != (hsize_t)m->nl)
        return HPC_ERR(HPC_ERR_DATA, "--init-from %s: /model has %llu layers but --layers gives %d", path,
                 (unsigned long long)gi.nlinks, m->nl);
    return 0;
}

int ckpt_init_from(train_t *t)
{
    const char *path = t->o->init_from;
    hpc_ckpt_t *c;
    if (!hpc_ckpt_exists(path, hpc_comm_world()))
        return HPC_ERR(HPC_ERR_DATA, "--init-from %s: no such file", path);
    int rc = hpc_ckpt_open(path, hpc_comm_world(), NULL, &c);
    if (rc < 0) return HPC_ERR(rc, "--init-from %s: not a readable HDF5 file", path);
    int bad = 0, any = 0;
    float *host = NULL;
    HPC_TRY_GOTO(check_init_layers(hpc_ckpt_id(c), t), rc, out);
    HPC_TRY_GOTO(check_init_act(hpc_ckpt_id(c), t), rc, out);
    if (!(host = malloc(array_most(&t->model) * sizeof *host)))
        HPC_ERR_GOTO(rc, out, HPC_ERR_NOMEM, "--init-from %s: out of memory", path);
    rc = get_layers(c, t, "model", &t->hold[0], host, &bad);
    if (rc < 0) rc = HPC_ERR(rc, "--init-from %s: %s", path, hpc_last_cause());
out:
    free(host);
    hpc_ckpt_close(c);
    /* each rank saw its runs only (every rank comes here) */
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, hpc_comm_world());
    if (!rc && any) rc = HPC_ERR(HPC_ERR_DATA, "--init-from %s: the weights hold NaN or infinity", path);
    return rc;
}
