/* json.c - a small strict JSON reader for the file kinds' schemas
 * (data/schemas/KIND.json, built into libhpc by schemas.c).
 *
 * Only what a schema needs: objects, arrays, strings (RFC 8259's escapes
 * but \u: the schemas are ASCII), numbers, true, false,
 * null.  A tree of nodes, freed as a whole; an error names the line.
 * Not a general-purpose parser and not exported: the schemas are ours.
 */
#include "config.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "app_h5_internal.h"

typedef struct {
    const char *s, *p, *name;
    int depth;
} reader_t;

static int line_of(const reader_t *r)
{
    int line = 1;
    for (const char *q = r->s; q < r->p; q++) line += *q == '\n';
    return line;
}

static int bad(const reader_t *r, const char *what)
{
    return HPC_ERR(HPC_ERR_DATA, "%s: line %d: %s", r->name, line_of(r), what);
}

static void skip_space(reader_t *r)
{
    while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r') r->p++;
}

static int parse_value(reader_t *r, app_json_t *v);

static int parse_string(reader_t *r, char **out)
{
    const char *q = ++r->p;   /* after the opening quote */
    size_t n = 0;
    for (; *q && *q != '"'; q++, n++)
        if (*q == '\\' && q[1]) q++;
    if (*q != '"') return bad(r, "a string without its closing quote");
    char *s = malloc(n + 1), *w = s;
    if (!s) return HPC_ERR(HPC_ERR_NOMEM, "out of memory");
    for (q = r->p; *q != '"'; q++) {
        if (*q != '\\') {
            *w++ = *q;
            continue;
        }
        q++;
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t", *e = strchr(from, *q);
        if (e && *q) {
            *w++ = to[e - from];
        } else {
            free(s);
            r->p = q;
            return bad(r, "an escape a schema does not use");
        }
    }
    *w = '\0';
    r->p = q + 1;
    *out = s;
    return 0;
}

static int grow(app_json_t *v)
{
    if (v->n % 16) return 0;
    app_json_t *items = realloc(v->items, (v->n + 16) * sizeof *items);
    char **keys = v->type == APP_JSON_OBJECT ? realloc(v->keys, (v->n + 16) * sizeof *keys) : v->keys;
    if (items) v->items = items;
    if (keys) v->keys = keys;
    return items && (keys || v->type != APP_JSON_OBJECT) ? 0 : HPC_ERR(HPC_ERR_NOMEM, "out of memory");
}

/* an object or an array: members up to close */
static int parse_members(reader_t *r, app_json_t *v, char close)
{
    if (++r->depth > 32) return bad(r, "nested too deep");
    r->p++;
    skip_space(r);
    if (*r->p == close) {
        r->p++;
        r->depth--;
        return 0;
    }
    for (;;) {
        HPC_TRY(grow(v));
        app_json_t *item = &v->items[v->n];
        memset(item, 0, sizeof *item);
        skip_space(r);
        if (v->type == APP_JSON_OBJECT) {
            if (*r->p != '"') return bad(r, "expected a member's name in quotes");
            v->keys[v->n] = NULL;
            HPC_TRY(parse_string(r, &v->keys[v->n]));
            v->n++;   /* from here on it is freed with the tree */
            skip_space(r);
            if (*r->p++ != ':') return bad(r, "expected ':' after a member's name");
        } else {
            v->n++;
        }
        HPC_TRY(parse_value(r, item));
        skip_space(r);
        if (*r->p == close) break;
        if (*r->p++ != ',') return bad(r, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    r->p++;
    r->depth--;
    return 0;
}

static int parse_value(reader_t *r, app_json_t *v)
{
    skip_space(r);
    static const struct {
        const char *word;
        app_json_type_t type;
        int b;
    } words[] = {{"true", APP_JSON_BOOL, 1}, {"false", APP_JSON_BOOL, 0}, {"null", APP_JSON_NULL, 0}};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (!strncmp(r->p, words[i].word, strlen(words[i].word))) {
            v->type = words[i].type;
            v->num = words[i].b;
            r->p += strlen(words[i].word);
            return 0;
        }
    if (*r->p == '{' || *r->p == '[') {
        v->type = *r->p == '{' ? APP_JSON_OBJECT : APP_JSON_ARRAY;
        return parse_members(r, v, *r->p == '{' ? '}' : ']');
    }
    if (*r->p == '"') {
        v->type = APP_JSON_STRING;
        return parse_string(r, &v->str);
    }
    if (*r->p == '-' || isdigit((unsigned char)*r->p)) {
        char *end;
        v->type = APP_JSON_NUMBER;
        v->num = strtod(r->p, &end);
        r->p = end;
        return 0;
    }
    return bad(r, "expected a value");
}

int app_json_parse(const char *text, const char *name, app_json_t **out)
{
    reader_t r = {text, text, name, 0};
    app_json_t *v = calloc(1, sizeof *v);
    if (!v) return HPC_ERR(HPC_ERR_NOMEM, "out of memory");
    int rc = parse_value(&r, v);
    skip_space(&r);
    if (!rc && *r.p) rc = bad(&r, "text after the value");
    if (rc) {
        app_json_free(v);
        return rc;
    }
    *out = v;
    return 0;
}

static void free_members(app_json_t *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free_members(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
}

void app_json_clear(app_json_t *v)
{
    free_members(v);
    memset(v, 0, sizeof *v);
}

void app_json_free(app_json_t *v)
{
    if (!v) return;
    free_members(v);
    free(v);
}

const app_json_t *app_json_get(const app_json_t *obj, const char *key)
{
    if (!obj || obj->type != APP_JSON_OBJECT) return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (!strcmp(obj->keys[i], key)) return &obj->items[i];
    return NULL;
}

const char *app_json_str(const app_json_t *obj, const char *key, const char *dflt)
{
    const app_json_t *v = app_json_get(obj, key);
    return v && v->type == APP_JSON_STRING ? v->str : dflt;
}

double app_json_num(const app_json_t *obj, const char *key, double dflt)
{
    const app_json_t *v = app_json_get(obj, key);
    return v && (v->type == APP_JSON_NUMBER || v->type == APP_JSON_BOOL) ? v->num : dflt;
}

int app_json_copy(app_json_t *dst, const app_json_t *src)
{
    *dst = *src;
    dst->str = NULL;
    dst->items = NULL;
    dst->keys = NULL;
    dst->n = 0;
    if (src->str && !(dst->str = strdup(src->str))) return HPC_ERR(HPC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < src->n; i++) {
        HPC_TRY(grow(dst));
        if (dst->keys && !(dst->keys[i] = strdup(src->keys[i]))) return HPC_ERR(HPC_ERR_NOMEM, "out of memory");
        dst->n++;
        HPC_TRY(app_json_copy(&dst->items[i], &src->items[i]));
    }
    return 0;
}
