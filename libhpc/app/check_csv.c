/* check_csv.c - a CSV file against its schema's "columns": the header is
 * the columns' names in order (columns marked "optional" may be missing
 * at the end: files of an older hpckit); every row has as many fields;
 * each field parses as its column's type ("int", "float": finite), is
 * empty only where the column allows it, within "min"/"max", and
 * "increasing" columns grow row to row.  Streamed line by line; after 20
 * problems the rest are counted in one more line.
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_internal.h"

#define MAX_SAID 20

typedef struct {
    const app_json_t *cols;
    size_t ncols;          /* in this file's header */
    double *last;          /* the previous row's values (increasing) */
    int said;
    unsigned long long unsaid;
} csv_t;

static void problem(app_check_t *c, csv_t *v, const char *fmt, const char *a, const char *b, long long line)
{
    if (v->said >= MAX_SAID) {
        v->unsaid++;
        return;
    }
    v->said++;
    char where[96];
    snprintf(where, sizeof where, "line %lld", line);
    check_problem(c, where, fmt, a, b);
}

/* the header against the columns; the columns this file has, or 0 */
static size_t header(app_check_t *c, const app_json_t *cols, char *line)
{
    char want[2048] = "";
    size_t n = 0, need = 0, len = 0;
    for (size_t i = 0; i < cols->n; i++)
        if (!app_json_num(&cols->items[i], "optional", 0)) need = i + 1;
    for (size_t i = 0; i < cols->n && len < sizeof want; i++) {
        len += (size_t)snprintf(want + len, sizeof want - len, "%s%s", i ? "," : "",
                                app_json_str(&cols->items[i], "name", "?"));
        if (len < sizeof want && i + 1 >= need && !strcmp(line, want)) n = i + 1;
    }
    if (!n) check_problem(c, "line 1", "the header is '%s', expected '%s'", line, want);
    return n;
}

/* one field of column col */
static void field(app_check_t *c, csv_t *v, size_t col, const char *s, long long line)
{
    const app_json_t *e = &v->cols->items[col];
    const char *name = app_json_str(e, "name", "?"), *type = app_json_str(e, "type", "float");
    if (!*s) {
        if (!app_json_num(e, "empty", 0)) problem(c, v, "column %s is empty%s", name, "", line);
        return;
    }
    char *end;
    double x = !strcmp(type, "int") ? (double)strtoll(s, &end, 10) : strtod(s, &end);
    if (*end || !isfinite(x)) {
        problem(c, v, "column %s: '%s' is not a finite number of its type", name, s, line);
        return;
    }
    char num[64];
    snprintf(num, sizeof num, "%s", s);
    if (app_json_get(e, "min") && x < app_json_num(e, "min", 0))
        problem(c, v, "column %s: %s is below its least value", name, num, line);
    if (app_json_get(e, "max") && x > app_json_num(e, "max", 0))
        problem(c, v, "column %s: %s is above its largest value", name, num, line);
    if (app_json_num(e, "increasing", 0) && line > 2 && !(x > v->last[col]))
        problem(c, v, "column %s: %s does not grow from the row before", name, num, line);
    v->last[col] = x;
}

static void row(app_check_t *c, csv_t *v, char *line, long long n)
{
    size_t col = 0;
    for (char *p = line;; col++) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        if (col < v->ncols) field(c, v, col, p, n);
        if (!comma) break;
        p = comma + 1;
    }
    if (col + 1 != v->ncols) {
        char a[32], b[32];
        snprintf(a, sizeof a, "%zu", col + 1);
        snprintf(b, sizeof b, "%zu", v->ncols);
        problem(c, v, "%s fields, expected %s", a, b, n);
    }
}

int app_check_csv(app_check_t *c)
{
    csv_t v = {app_json_get(c->schema, "columns"), 0, NULL, 0, 0};
    FILE *fp = fopen(c->path, "r");
    if (!fp || !v.cols) {
        if (fp) fclose(fp);
        return HPC_ERR(HPC_ERR_IO, "cannot read %s", c->path);
    }
    char *line = NULL;
    size_t cap = 0;
    long long n = 0;
    ssize_t got;
    while ((got = getline(&line, &cap, fp)) >= 0) {
        line[strcspn(line, "\r\n")] = '\0';
        if (++n == 1) {
            if (!(v.ncols = header(c, v.cols, line))) break;
            if (!(v.last = calloc(v.ncols, sizeof *v.last))) break;
            continue;
        }
        row(c, &v, line, n);
    }
    if (n == 0) check_problem(c, "", "empty: not even the header");
    if (v.unsaid) check_problem(c, "", "and %llu problems more", v.unsaid);
    free(line);
    free(v.last);
    fclose(fp);
    return 0;
}
