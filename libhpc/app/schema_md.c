/* schema_md.c - a kind's schema as the Markdown tables of the guides
 * (hpc-h5check --markdown KIND; data/schema-tables.sh puts them into the
 * guides, tests/data_schemas.sh fails where a guide's table differs):
 * the datasets (or a CSV file's columns), the named dimensions, the
 * attributes.  What the checker holds a file to is what the table says.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "app_h5_internal.h"

/* "; one of 0, -1, -2" from a "values" list */
static void values_text(const app_json_t *v, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "; one of ");
    for (size_t i = 0; v && i < v->n && n < len; i++) {
        if (v->items[i].type == APP_JSON_STRING)
            n += (size_t)snprintf(buf + n, len - n, "%s`%s`", i ? ", " : "", v->items[i].str);
        else
            n += (size_t)snprintf(buf + n, len - n, "%s%g", i ? ", " : "", v->items[i].num);
    }
}

/* the rules of an entry after its doc: "; no NaN or infinity; at least 0" */
static void rules(const app_json_t *e, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
#define ADD(...) n += (size_t)snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__)
    if (app_json_num(e, "finite", 0)) ADD("; no NaN or infinity");
    if (app_json_str(e, "finite_where", NULL)) ADD("; no NaN or infinity where `%s`", app_json_str(e, "finite_where", ""));
    if (app_json_get(e, "min")) ADD("; at least %g", app_json_num(e, "min", 0));
    if (app_json_get(e, "max")) ADD("; at most %g", app_json_num(e, "max", 0));
    if (app_json_get(e, "equals")) ADD("; %g", app_json_num(e, "equals", 0));
    if (app_json_str(e, "equals_dim", NULL)) ADD("; = %s", app_json_str(e, "equals_dim", ""));
    if (app_json_num(e, "increasing", 0)) ADD("; grows row to row");
    if (app_json_num(e, "empty", 0)) ADD("; may be empty");
    if (app_json_str(e, "layout", NULL)) ADD("; %s", app_json_str(e, "layout", ""));
    if (app_json_str(e, "units", NULL)) ADD("; units %s", app_json_str(e, "units", ""));
    if (app_json_str(e, "scale", NULL)) ADD("; the dimension scale `%s`", app_json_str(e, "scale", ""));
    if (app_json_get(e, "values") && n < len) values_text(app_json_get(e, "values"), buf + n, len - n);
    n = strlen(buf);
    const app_json_t *a = app_json_get(e, "attributes");
    for (size_t i = 0; a && i < a->n; i++)
        ADD("%s`%s`", i ? ", " : "; attributes ", app_json_str(&a->items[i], "name", "?"));
#undef ADD
}

static const char *optional(const app_json_t *e)
{
    return app_json_num(e, "optional", 0) ? "(optional) " : "";
}

static void datasets(const app_json_t *s, FILE *out)
{
    const app_json_t *ds = app_json_get(s, "datasets");
    fprintf(out, "| path | shape, type | content |\n|---|---|---|\n");
    for (size_t i = 0; ds && i < ds->n; i++) {
        const app_json_t *e = &ds->items[i];
        char shape[256], type[128], more[2048];
        const char *path = app_json_str(e, "path", "?");
        app_schema_shapes(e, shape, sizeof shape);
        app_schema_types(e, type, sizeof type);
        rules(e, more, sizeof more);
        if (path[0] == '$')
            fprintf(out, "| `FILE:/DATASET` (`%s`) | %s %s | %s%s%s |\n", app_json_str(e, "default", "?"), shape,
                    type, optional(e), app_json_str(e, "doc", ""), more);
        else
            fprintf(out, "| `%s` | %s %s | %s%s%s |\n", path, shape, type, optional(e), app_json_str(e, "doc", ""),
                    more);
    }
}

static void dims(const app_json_t *s, FILE *out)
{
    const app_json_t *d = app_json_get(s, "dims");
    if (!d || !d->n) return;
    fprintf(out, "\nDimensions:");
    for (size_t i = 0; i < d->n; i++) {
        fprintf(out, "%s %s %s", i ? "," : "", d->keys[i], app_json_str(&d->items[i], "doc", ""));
        if (app_json_get(&d->items[i], "min")) fprintf(out, " (at least %g)", app_json_num(&d->items[i], "min", 0));
    }
    fprintf(out, ".\n");
}

static void table(const app_json_t *list, const char *what, int lead, FILE *out)
{
    if (!list || !list->n) return;
    fprintf(out, "%s| %s | type | content |\n|---|---|---|\n", lead ? "\n" : "", what);
    for (size_t i = 0; i < list->n; i++) {
        const app_json_t *e = &list->items[i];
        char more[1024];
        rules(e, more, sizeof more);
        fprintf(out, "| `%s` | %s | %s%s%s |\n", app_json_str(e, "name", "?"), app_json_str(e, "type", "?"),
                optional(e), app_json_str(e, "doc", ""), more);
    }
}

int hpc_check_markdown(const char *kind, FILE *out)
{
    app_json_t *s;
    HPC_TRY(app_schema_load(kind, &s));
    if (!strcmp(app_json_str(s, "format", "hdf5"), "csv")) {
        table(app_json_get(s, "columns"), "column", 0, out);
    } else {
        datasets(s, out);
        dims(s, out);
        table(app_json_get(s, "attributes"), "attribute", 1, out);
    }
    app_json_free(s);
    return 0;
}
