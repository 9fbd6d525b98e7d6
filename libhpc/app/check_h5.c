/* check_h5.c - an HDF5 file against its schema: every dataset there (or
 * optional), of a type the schema allows, its shape in the schema's named
 * dimensions (each name the same size wherever it appears), its layout
 * and attributes; the root attributes; the schema's named checks; a
 * joined file's sources; and with HPC_CHECK_VALUES every value the
 * schema constrains (finite, at least min, one of the listed values).
 * Metadata reads only, except the values.
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_internal.h"

/* ---- types ---- */

static void type_text(hid_t t, char *buf, size_t len)
{
    H5T_class_t k = H5Tget_class(t);
    size_t size = H5Tget_size(t);
    if (k == H5T_FLOAT) snprintf(buf, len, "float%zu", 8 * size);
    else if (k == H5T_INTEGER) snprintf(buf, len, "%sint%zu", H5Tget_sign(t) == H5T_SGN_NONE ? "u" : "", 8 * size);
    else if (k == H5T_STRING) snprintf(buf, len, "string");
    else if (k == H5T_COMPOUND) snprintf(buf, len, "a compound type");
    else if (k == H5T_ENUM) snprintf(buf, len, "an enum");
    else snprintf(buf, len, "type class %d", (int)k);
}

static int one_type_fits(hid_t t, const char *spec, const char *have)
{
    H5T_class_t k = H5Tget_class(t);
    if (!strcmp(spec, "float")) return k == H5T_FLOAT;
    if (!strcmp(spec, "integer")) return k == H5T_INTEGER;
    return !strcmp(spec, have);
}

int check_type_fits(hid_t t, const app_json_t *entry, char *have, size_t len)
{
    type_text(t, have, len);
    const app_json_t *spec = app_json_get(entry, "type");
    if (!spec) return 1;
    if (spec->type == APP_JSON_STRING) return one_type_fits(t, spec->str, have);
    for (size_t i = 0; i < spec->n; i++)
        if (spec->items[i].str && one_type_fits(t, spec->items[i].str, have)) return 1;
    return 0;
}

/* ---- shapes ---- */

static void dims_text(int nd, const hsize_t *dims, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < nd && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%llu", i ? ", " : "", (unsigned long long)dims[i]);
    if (n < len) snprintf(buf + n, len - n, "]");
}

/* alt fits dims[nd] with what is bound so far (nothing bound here) */
static int shape_fits(const app_check_t *c, const app_json_t *alt, int nd, const hsize_t *dims)
{
    if ((int)alt->n != nd) return 0;
    for (int i = 0; i < nd; i++) {
        const app_json_t *d = &alt->items[i];
        if (d->type == APP_JSON_NUMBER && (hsize_t)d->num != dims[i]) return 0;
        if (d->type == APP_JSON_STRING && check_dim(c, d->str) >= 0 && (hsize_t)check_dim(c, d->str) != dims[i])
            return 0;
    }
    return 1;
}

static void bind_shape(app_check_t *c, const char *where, const app_json_t *alt, const hsize_t *dims)
{
    for (size_t i = 0; i < alt->n; i++) {
        const app_json_t *d = &alt->items[i];
        if (d->type == APP_JSON_STRING) {
            if (!check_bind(c, where, d->str, dims[i])) return;
        } else if ((hsize_t)d->num != dims[i]) {
            check_problem(c, where, "dimension %zu is %llu, expected %.0f", i, (unsigned long long)dims[i], d->num);
            return;
        }
    }
}

static void check_shape(app_check_t *c, const char *where, const app_json_t *entry, int nd, const hsize_t *dims)
{
    const app_json_t *one = app_json_get(entry, "shape"), *alts = app_json_get(entry, "shapes");
    const app_json_t *list = alts ? alts->items : one;
    size_t n = alts ? alts->n : one ? 1 : 0;
    const app_json_t *same_rank = NULL;
    for (size_t i = 0; i < n; i++) {
        if (shape_fits(c, &list[i], nd, dims)) {
            bind_shape(c, where, &list[i], dims);
            return;
        }
        if ((int)list[i].n == nd && !same_rank) same_rank = &list[i];
    }
    if (same_rank) {
        bind_shape(c, where, same_rank, dims);   /* says which dimension disagrees */
        return;
    }
    char want[256], have[256];
    app_schema_shapes(entry, want, sizeof want);
    dims_text(nd, dims, have, sizeof have);
    if (n) check_problem(c, where, "%s has %d dimension%s, expected %s", have, nd, nd == 1 ? "" : "s", want);
}

/* ---- attributes ---- */

static int attr_class_fits(hid_t a, const char *type, char *have, size_t len)
{
    hid_t t = H5Aget_type(a), sp = H5Aget_space(a);
    int nd = sp < 0 ? -1 : H5Sget_simple_extent_ndims(sp);
    hssize_t npts = sp < 0 ? -1 : H5Sget_simple_extent_npoints(sp);
    H5T_class_t k = t < 0 ? H5T_NO_CLASS : H5Tget_class(t);
    if (t >= 0) type_text(t, have, len);
    if (nd > 0) snprintf(have + strlen(have), len - strlen(have), "[%lld]", (long long)npts);
    if (t >= 0) H5Tclose(t);
    if (sp >= 0) H5Sclose(sp);
    int array = strstr(type, "[]") != NULL, one = nd == 0 || npts == 1;
    if (!array && !one) return 0;
    if (!strncmp(type, "string", 6)) return k == H5T_STRING;
    if (!strncmp(type, "int", 3)) return k == H5T_INTEGER;
    if (!strncmp(type, "float", 5)) return k == H5T_FLOAT || k == H5T_INTEGER;
    return 1;
}

/* a string attribute's value (malloc'd), or NULL */
static char *attr_string(hid_t obj, const char *name)
{
    char *v = NULL;
    if (hpc_h5_attr_get_string(obj, name, &v) < 0) hpc_error_clear();
    return v;
}

static void attr_values(app_check_t *c, const char *where, hid_t obj, const app_json_t *e, const char *type)
{
    const char *name = app_json_str(e, "name", "?");
    const app_json_t *values = app_json_get(e, "values"), *eq = app_json_get(e, "equals");
    const char *dim = app_json_str(e, "equals_dim", NULL);
    if (values && !strcmp(type, "string")) {
        char *v = attr_string(obj, name);
        int ok = 0;
        for (size_t i = 0; v && i < values->n; i++) ok |= values->items[i].str && !strcmp(v, values->items[i].str);
        if (v && !ok) check_problem(c, where, "attribute %s is '%s', not one this hpckit knows", name, v);
        free(v);
        return;
    }
    if (strcmp(type, "int") && strcmp(type, "float")) return;
    double x;
    if (hpc_h5_attr_get_double(obj, name, &x) < 0) {
        hpc_error_clear();
        return;
    }
    if (eq && x != eq->num)
        check_problem(c, where, "attribute %s is %.17g, expected %.17g: %s", name, x, eq->num,
                      app_json_str(e, "doc", "another version"));
    if (dim && check_dim(c, dim) >= 0 && x != (double)check_dim(c, dim))
        check_problem(c, where, "attribute %s is %.17g, but %s = %lld", name, x, dim, check_dim(c, dim));
    if (app_json_get(e, "min") && !(x >= app_json_num(e, "min", 0)))
        check_problem(c, where, "attribute %s is %.17g, below %g", name, x, app_json_num(e, "min", 0));
}

static void check_attrs(app_check_t *c, const char *where, hid_t obj, const app_json_t *list)
{
    for (size_t i = 0; list && i < list->n; i++) {
        const app_json_t *e = &list->items[i];
        const char *name = app_json_str(e, "name", "?"), *type = app_json_str(e, "type", "");
        htri_t there = H5Aexists(obj, name);
        if (there <= 0) {
            H5Eclear2(H5E_DEFAULT);
            if (!app_json_num(e, "optional", 0)) check_problem(c, where, "attribute %s missing (%s)", name, type);
            continue;
        }
        hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
        char have[64] = "?";
        int fits = a >= 0 && attr_class_fits(a, type, have, sizeof have);
        if (a >= 0) H5Aclose(a);
        if (!fits) check_problem(c, where, "attribute %s is %s, expected %s", name, have, type);
        else attr_values(c, where, obj, e, type);
    }
}

/* ---- datasets ---- */

/* the root dataset that carries attribute attr (one, for a dataset the
 * user names, such as hpc-matmul's --out), or NULL */
typedef struct {
    const char *attr;
    char found[256];
} find_t;

static herr_t find_cb(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    find_t *fd = data;
    (void)info;
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    if (d < 0) {
        H5Eclear2(H5E_DEFAULT);
        return 0;
    }
    htri_t has = H5Aexists(d, fd->attr);
    H5Dclose(d);
    if (has > 0) snprintf(fd->found, sizeof fd->found, "/%s", name);
    return has > 0;
}

/* where entry's dataset is: its path, or (a "$" path) the user's, the one
 * found by its attribute, or the default */
static void entry_path(const app_check_t *c, const app_json_t *e, char *buf, size_t len)
{
    const char *p = app_json_str(e, "path", "");
    if (p[0] != '$') {
        snprintf(buf, len, "%s", p);
        return;
    }
    if (c->dataset) {
        snprintf(buf, len, "%s%s", c->dataset[0] == '/' ? "" : "/", c->dataset);
        return;
    }
    find_t fd = {app_json_str(e, "find_attribute", NULL), ""};
    if (fd.attr) H5Literate(c->f, H5_INDEX_NAME, H5_ITER_INC, NULL, find_cb, &fd);
    H5Eclear2(H5E_DEFAULT);
    snprintf(buf, len, "%s", fd.found[0] ? fd.found : app_json_str(e, "default", p));
}

/* "PATH == V": the rows of PATH (1D) equal to V, or NULL (none asked,
 * or unreadable: a problem of PATH's own entry) */
static unsigned char *row_mask(const app_check_t *c, const char *cond, hsize_t rows)
{
    char path[256];
    long long v;
    if (!cond || sscanf(cond, "%255s == %lld", path, &v) != 2 || !check_path_exists(c->f, path)) return NULL;
    hid_t d = H5Dopen2(c->f, path, H5P_DEFAULT);
    int nd = 0;
    hsize_t dims[8];
    long long *x = NULL;
    unsigned char *m = NULL;
    if (d >= 0 && hpc_h5_dataset_shape(d, &nd, dims) == 0 && nd == 1 && dims[0] == rows &&
        (x = malloc((rows + 1) * sizeof *x)) && (m = malloc(rows + 1)) &&
        H5Dread(d, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0) {
        for (hsize_t i = 0; i < rows; i++) m[i] = x[i] == v;
    } else {
        free(m);
        m = NULL;
    }
    hpc_error_clear();
    H5Eclear2(H5E_DEFAULT);
    free(x);
    if (d >= 0) H5Dclose(d);
    return m;
}

static void check_one(app_check_t *c, const app_json_t *e)
{
    char path[512], want[256], have[64];
    entry_path(c, e, path, sizeof path);
    if (strchr(path, '<')) return;   /* a family of datasets: the named checks' */
    if (!check_path_exists(c->f, path)) {
        if (app_json_num(e, "optional", 0)) return;
        char shape[256], type[128];
        app_schema_shapes(e, shape, sizeof shape);
        app_schema_types(e, type, sizeof type);
        check_problem(c, path, "missing (%s %s: %s)", shape, type, app_json_str(e, "doc", ""));
        return;
    }
    hid_t d = H5Dopen2(c->f, path, H5P_DEFAULT);
    if (d < 0) {
        H5Eclear2(H5E_DEFAULT);
        check_problem(c, path, "not a dataset (a group?)");
        return;
    }
    hid_t t = H5Dget_type(d);
    if (t >= 0 && !check_type_fits(t, e, have, sizeof have)) {
        app_schema_types(e, want, sizeof want);
        check_problem(c, path, "%s, expected %s", have, want);
    }
    if (t >= 0) H5Tclose(t);
    int nd = 0;
    hsize_t dims[8] = {0};
    if (hpc_h5_dataset_shape(d, &nd, dims) == 0) check_shape(c, path, e, nd, dims);
    hpc_error_clear();
    const char *layout = app_json_str(e, "layout", NULL);
    hid_t dcpl = H5Dget_create_plist(d);
    H5D_layout_t l = dcpl < 0 ? H5D_LAYOUT_ERROR : H5Pget_layout(dcpl);
    if (dcpl >= 0) H5Pclose(dcpl);
    /* a joined file's datasets are virtual over contiguous ones */
    if (layout && !strcmp(layout, "contiguous") && l != H5D_CONTIGUOUS && l != H5D_VIRTUAL)
        check_problem(c, path, "layout %s, expected contiguous", l == H5D_CHUNKED ? "chunked" : "compact");
    check_attrs(c, path, d, app_json_get(e, "attributes"));
    if (c->flags & HPC_CHECK_VALUES) {
        unsigned char *mask = row_mask(c, app_json_str(e, "finite_where", NULL), nd ? dims[0] : 0);
        check_values(c, path, d, nd, dims, e, mask);
        free(mask);
    }
    H5Dclose(d);
}

static void check_joined(app_check_t *c)
{
    int rc = hpc_h5_vds_probe(c->path);
    if (rc == 0) check_problem(c, "", "holds no virtual datasets: not a joined file");
    if (rc < 0) check_problem(c, "", "%s", hpc_last_cause());
    hpc_error_clear();
}

int app_check_h5(app_check_t *c)
{
    const app_json_t *ds = app_json_get(c->schema, "datasets");
    const app_json_t *checks = app_json_get(c->schema, "checks");
    /* the named checks bind the layers' dimensions first */
    for (size_t i = 0; checks && i < checks->n; i++)
        if (checks->items[i].str && !strcmp(checks->items[i].str, "layer-chain")) check_layer_chain(c);
    for (size_t i = 0; ds && i < ds->n; i++) check_one(c, &ds->items[i]);
    check_attrs(c, "", c->f, app_json_get(c->schema, "attributes"));
    if (app_json_num(c->schema, "joined", 0)) check_joined(c);
    H5Eclear2(H5E_DEFAULT);
    return 0;
}
