/* schema.c - the file kinds' schemas: data/schemas/KIND.json, built into
 * libhpc (schema_texts.c, made by data/embed.sh), so that every program
 * checks its inputs against the same text that is installed under
 * share/hpckit/data/schemas and that the guides' tables come from.
 *
 * A schema may extend another ("extends": KIND): the result is the
 * parent with the child's members on top - "datasets", "attributes" and
 * "columns" merged entry by entry (by "path" or "name": the child's
 * fields over the parent's, new entries appended), "dims" name by name,
 * anything else replaced.  The format itself: docs/data.md, "Schemas".
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "app_h5_internal.h"

static const char *text_of(const char *kind)
{
    for (size_t i = 0; i < app_schema_ntexts; i++)
        if (!strcmp(app_schema_texts[i].kind, kind)) return app_schema_texts[i].text;
    return NULL;
}

const char *hpc_check_schema(const char *kind)
{
    return kind ? text_of(kind) : NULL;
}

const char *hpc_check_kinds(void)
{
    static char all[1024];
    if (!all[0])
        for (size_t i = 0, n = 0; i < app_schema_ntexts && n < sizeof all; i++)
            n += (size_t)snprintf(all + n, sizeof all - n, "%s%s", i ? " " : "", app_schema_texts[i].kind);
    return all;
}

/* the entry of list whose "key" is the same as e's, or NULL */
static app_json_t *same_entry(app_json_t *list, const app_json_t *e, const char *key)
{
    const char *k = app_json_str(e, key, NULL);
    for (size_t i = 0; k && i < list->n; i++) {
        const char *k2 = app_json_str(&list->items[i], key, NULL);
        if (k2 && !strcmp(k, k2)) return &list->items[i];
    }
    return NULL;
}

static int append(app_json_t *list, const char *key, const app_json_t *v)
{
    app_json_t *items = realloc(list->items, (list->n + 1) * sizeof *items);
    if (!items) return HPC_ERR(HPC_ERR_NOMEM, "out of memory");
    list->items = items;
    if (list->type == APP_JSON_OBJECT) {
        char **keys = realloc(list->keys, (list->n + 1) * sizeof *keys);
        if (!keys) return HPC_ERR(HPC_ERR_NOMEM, "out of memory");
        list->keys = keys;
        if (!(keys[list->n] = strdup(key))) return HPC_ERR(HPC_ERR_NOMEM, "out of memory");
    }
    memset(&list->items[list->n], 0, sizeof *items);
    list->n++;
    return app_json_copy(&list->items[list->n - 1], v);
}

/* obj's member key set to a copy of v (replaced or added) */
static int put(app_json_t *obj, const char *key, const app_json_t *v)
{
    for (size_t i = 0; i < obj->n; i++)
        if (!strcmp(obj->keys[i], key)) {
            app_json_clear(&obj->items[i]);
            return app_json_copy(&obj->items[i], v);
        }
    return append(obj, key, v);
}

static int merge_object(app_json_t *into, const app_json_t *from)
{
    for (size_t i = 0; i < from->n; i++) HPC_TRY(put(into, from->keys[i], &from->items[i]));
    return 0;
}

/* list (of a parent) with the child's entries merged in by key */
static int merge_list(app_json_t *list, const app_json_t *child, const char *key)
{
    for (size_t i = 0; i < child->n; i++) {
        app_json_t *e = same_entry(list, &child->items[i], key);
        HPC_TRY(e ? merge_object(e, &child->items[i]) : append(list, NULL, &child->items[i]));
    }
    return 0;
}

static int merge(app_json_t *parent, const app_json_t *child)
{
    static const char *const lists[][2] = {{"datasets", "path"}, {"attributes", "name"}, {"columns", "name"}};
    for (size_t i = 0; i < child->n; i++) {
        const char *k = child->keys[i];
        const app_json_t *v = &child->items[i];
        app_json_t *mine = (app_json_t *)app_json_get(parent, k);
        int done = 0;
        for (size_t l = 0; l < sizeof lists / sizeof lists[0] && mine && !done; l++)
            if (!strcmp(k, lists[l][0]) && mine->type == APP_JSON_ARRAY && v->type == APP_JSON_ARRAY) {
                HPC_TRY(merge_list(mine, v, lists[l][1]));
                done = 1;
            }
        if (!done && mine && !strcmp(k, "dims") && mine->type == APP_JSON_OBJECT && v->type == APP_JSON_OBJECT) {
            HPC_TRY(merge_object(mine, v));
            done = 1;
        }
        if (!done) HPC_TRY(put(parent, k, v));
    }
    return 0;
}

static int load(const char *kind, int depth, app_json_t **out)
{
    const char *text = text_of(kind);
    if (!text) return HPC_ERR(HPC_ERR_ARG, "no file kind '%s' (the kinds: %s)", kind, hpc_check_kinds());
    char name[128];
    snprintf(name, sizeof name, "data/schemas/%s.json", kind);
    app_json_t *s;
    HPC_TRY(app_json_parse(text, name, &s));
    const char *parent = app_json_str(s, "extends", NULL);
    if (!parent) {
        *out = s;
        return 0;
    }
    app_json_t *p = NULL;
    int rc = depth > 4 ? HPC_ERR(HPC_ERR_DATA, "%s: extends too deep", name) : load(parent, depth + 1, &p);
    if (!rc) rc = merge(p, s);
    app_json_free(s);
    if (rc) {
        app_json_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int app_schema_load(const char *kind, app_json_t **out)
{
    return load(kind, 0, out);
}

void app_schema_types(const app_json_t *entry, char *buf, size_t len)
{
    const app_json_t *t = app_json_get(entry, "type");
    buf[0] = '\0';
    if (t && t->type == APP_JSON_STRING) snprintf(buf, len, "%s", t->str);
    for (size_t i = 0, n = 0; t && t->type == APP_JSON_ARRAY && i < t->n && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " or " : "", t->items[i].str ? t->items[i].str : "?");
}

static size_t one_shape(const app_json_t *s, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "[");
    for (size_t i = 0; i < s->n && n < len; i++) {
        const app_json_t *d = &s->items[i];
        if (d->type == APP_JSON_STRING) n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", d->str);
        else n += (size_t)snprintf(buf + n, len - n, "%s%.0f", i ? ", " : "", d->num);
    }
    if (n < len) n += (size_t)snprintf(buf + n, len - n, "]");
    return n;
}

void app_schema_shapes(const app_json_t *entry, char *buf, size_t len)
{
    const app_json_t *one = app_json_get(entry, "shape"), *alts = app_json_get(entry, "shapes");
    buf[0] = '\0';
    if (one && one->type == APP_JSON_ARRAY) one_shape(one, buf, len);
    for (size_t i = 0, n = 0; alts && alts->type == APP_JSON_ARRAY && i < alts->n && n < len; i++) {
        if (i) n += (size_t)snprintf(buf + n, len - n, " or ");
        if (n < len) n += one_shape(&alts->items[i], buf + n, len - n);
    }
}
