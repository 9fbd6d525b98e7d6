/* check_layers.c - the named check "layer-chain" (the model and
 * checkpoint kinds): /model holds the Linear layers of
 * nn.Sequential(Linear, act, ..., Linear) at the module indices 0, 2, 4,
 * ..., each a float32 weight [out, in] and bias [out], each layer's in
 * the previous one's out; the root attribute "layers" (where present)
 * lists the same sizes; every optimiser state under /optim/<state>/ has
 * the model's arrays; IN and OUT (the normalisation's dimensions) are
 * bound to the first layer's in and the last one's out.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_internal.h"

#define MAXL 256

typedef struct {
    int n;                       /* members of the group */
    long idx[MAXL];              /* their names as layer indices (-1: not one) */
    char bad[64];                /* the first name that is not one */
} members_t;

static herr_t member_cb(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    members_t *m = data;
    char *end;
    long i = strtol(name, &end, 10);
    (void)g;
    (void)info;
    if (*end || end == name || i < 0 || i % 2) {
        if (!m->bad[0]) snprintf(m->bad, sizeof m->bad, "%s", name);
        return 0;
    }
    if (m->n < MAXL) m->idx[m->n++] = i;
    return 0;
}

static int by_value(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* dataset path: float32 of nd dims into dims; 0 or a problem reported */
static int array(app_check_t *c, const char *path, int nd, hsize_t *dims)
{
    if (!check_path_exists(c->f, path)) {
        check_problem(c, path, "missing (every layer has a float32 weight [out, in] and bias [out])");
        return -1;
    }
    hid_t d = H5Dopen2(c->f, path, H5P_DEFAULT);
    if (d < 0) {
        H5Eclear2(H5E_DEFAULT);
        check_problem(c, path, "not a dataset");
        return -1;
    }
    hid_t t = H5Dget_type(d);
    int n = 0, ok = t >= 0 && H5Tget_class(t) == H5T_FLOAT && H5Tget_size(t) == 4;
    hsize_t all[8];
    if (t >= 0) H5Tclose(t);
    int shaped = hpc_h5_dataset_shape(d, &n, all) == 0 && n == nd;
    hpc_error_clear();
    if ((c->flags & HPC_CHECK_VALUES) && shaped) {
        static const char finite[] = "{\"finite\": true}";
        app_json_t *e;
        if (app_json_parse(finite, "finite", &e) == 0) {
            check_values(c, path, d, n, all, e, NULL);
            app_json_free(e);
        }
    }
    H5Dclose(d);
    if (!ok) check_problem(c, path, "not float32 (the layers are float32, as PyTorch's)");
    if (!shaped) check_problem(c, path, "has %d dimensions, expected %d", n, nd);
    if (!ok || !shaped) return -1;
    memcpy(dims, all, (size_t)nd * sizeof *dims);
    return 0;
}

/* the layer indices of group (sorted), their count, or -1 (reported) */
static int layer_indices(app_check_t *c, const char *group, members_t *m)
{
    memset(m, 0, sizeof *m);
    hid_t g = H5Gopen2(c->f, group, H5P_DEFAULT);
    if (g < 0) {
        H5Eclear2(H5E_DEFAULT);
        check_problem(c, group, "not a group of layers");
        return -1;
    }
    H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, member_cb, m);
    H5Gclose(g);
    H5Eclear2(H5E_DEFAULT);
    if (m->bad[0]) {
        check_problem(c, group, "'%s' is not a layer (the Linear modules' indices: 0, 2, 4, ...)", m->bad);
        return -1;
    }
    qsort(m->idx, (size_t)m->n, sizeof m->idx[0], by_value);
    for (int k = 0; k < m->n; k++)
        if (m->idx[k] != 2 * k) {
            check_problem(c, group, "layer %d is missing (it holds %d layers, the last at %ld)", 2 * k, m->n,
                          m->idx[m->n - 1]);
            return -1;
        }
    if (!m->n) check_problem(c, group, "holds no layer");
    return m->n ? m->n : -1;
}

/* the model's layers chained; sizes[0..L] */
static int model_chain(app_check_t *c, long *sizes)
{
    members_t m;
    int L = layer_indices(c, "/model", &m);
    for (int k = 0; k < L; k++) {
        char w[64], b[64];
        hsize_t wd[2], bd[1];
        snprintf(w, sizeof w, "/model/%d/weight", 2 * k);
        snprintf(b, sizeof b, "/model/%d/bias", 2 * k);
        if (array(c, w, 2, wd) < 0 || array(c, b, 1, bd) < 0) return -1;
        if (bd[0] != wd[0]) {
            check_problem(c, b, "[%llu], but its weight has %llu outputs", (unsigned long long)bd[0],
                          (unsigned long long)wd[0]);
            return -1;
        }
        if (k && (long)wd[1] != sizes[k]) {
            check_problem(c, w, "[%llu, %llu]: %llu inputs, but layer %d has %ld outputs", (unsigned long long)wd[0],
                          (unsigned long long)wd[1], (unsigned long long)wd[1], 2 * (k - 1), sizes[k]);
            return -1;
        }
        sizes[k] = (long)wd[1];
        sizes[k + 1] = (long)wd[0];
    }
    return L;
}

static void check_sizes_attr(app_check_t *c, const long *sizes, int L)
{
    char *v = NULL, have[MAXL * 12] = "";
    if (hpc_h5_attr_get_string(c->f, "layers", &v) < 0) {
        hpc_error_clear();
        return;
    }
    for (int k = 0, n = 0; k <= L && n < (int)sizeof have; k++)
        n += snprintf(have + n, sizeof have - (size_t)n, "%s%ld", k ? "," : "", sizes[k]);
    if (strcmp(v, have)) check_problem(c, "", "attribute layers is '%s', but /model holds %s", v, have);
    free(v);
}

/* the names of a group's members (at most 16) */
typedef struct {
    int n;
    char name[16][128];
} names_t;

static herr_t name_cb(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    names_t *s = data;
    (void)g;
    (void)info;
    if (s->n < 16) snprintf(s->name[s->n++], sizeof s->name[0], "%s", name);
    return 0;
}

/* one state's arrays: the model's shapes; 0 or -1 (reported) */
static int check_state(app_check_t *c, const char *state, const long *sizes, int L)
{
    for (int k = 0; k < L; k++)
        for (int b = 0; b < 2; b++) {
            char path[256];
            hsize_t dims[2];
            snprintf(path, sizeof path, "/optim/%s/%d/%s", state, 2 * k, b ? "bias" : "weight");
            if (array(c, path, 2 - b, dims) < 0) return -1;
            if ((long)dims[0] != sizes[k + 1] || (!b && (long)dims[1] != sizes[k])) {
                check_problem(c, path, "not the shape of /model/%d/%s", 2 * k, b ? "bias" : "weight");
                return -1;
            }
        }
    return 0;
}

/* every state under /optim has the model's arrays */
static void check_optim(app_check_t *c, const long *sizes, int L)
{
    names_t s = {0};
    if (!check_path_exists(c->f, "/optim")) return;
    hid_t g = H5Gopen2(c->f, "/optim", H5P_DEFAULT);
    if (g >= 0) {
        H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, name_cb, &s);
        H5Gclose(g);
    } else {
        check_problem(c, "/optim", "not a group");
    }
    H5Eclear2(H5E_DEFAULT);
    for (int i = 0; i < s.n && check_state(c, s.name[i], sizes, L) == 0; i++) continue;
}

void check_layer_chain(app_check_t *c)
{
    long sizes[MAXL + 1];
    if (!check_path_exists(c->f, "/model")) {
        check_problem(c, "/model", "missing (the layers: /model/<i>/weight and bias, i = 0, 2, 4, ...)");
        return;
    }
    int L = model_chain(c, sizes);
    if (L <= 0) return;
    char first[32], last[32];
    snprintf(first, sizeof first, "/model/0/weight");
    snprintf(last, sizeof last, "/model/%d/weight", 2 * (L - 1));
    check_bind(c, first, "IN", (hsize_t)sizes[0]);
    check_bind(c, last, "OUT", (hsize_t)sizes[L]);
    check_sizes_attr(c, sizes, L);
    check_optim(c, sizes, L);
}
