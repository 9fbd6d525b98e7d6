/* check_report.c - what the checker's rules share (check.c's entry points,
 * check_h5.c, check_csv.c and the rest): a problem line, the dimensions
 * bound so far, an HDF5 path that exists.  Apart from check.c so that the
 * rules need nothing of the entry points that call them (no loop between
 * the files of the app kit: tests/layers.sh).
 */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "check_internal.h"

void check_problem(app_check_t *c, const char *where, const char *fmt, ...)
{
    char msg[1024], line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "%s%s%s", where && *where ? where : "", where && *where ? ": " : "", msg);
    c->problems++;
    if (c->report) c->report(c->ctx, line);
}

long long check_dim(const app_check_t *c, const char *name)
{
    for (int i = 0; i < c->ndims; i++)
        if (!strcmp(c->dim[i].name, name)) return (long long)c->dim[i].size;
    return -1;
}

int check_bind(app_check_t *c, const char *where, const char *name, hsize_t size)
{
    for (int i = 0; i < c->ndims; i++)
        if (!strcmp(c->dim[i].name, name)) {
            if (c->dim[i].size == size) return 1;
            check_problem(c, where, "%s = %llu here, but %llu in %s", name, (unsigned long long)size,
                          (unsigned long long)c->dim[i].size, c->dim[i].from);
            return 0;
        }
    const app_json_t *d = app_json_get(app_json_get(c->schema, "dims"), name);
    double min = app_json_num(d, "min", 0);
    if ((double)size < min) {
        check_problem(c, where, "%s = %llu, at least %.0f (%s)", name, (unsigned long long)size, min,
                      app_json_str(d, "doc", name));
        return 0;
    }
    if (c->ndims < CHECK_MAXDIMS) {
        snprintf(c->dim[c->ndims].name, sizeof c->dim[0].name, "%s", name);
        snprintf(c->dim[c->ndims].from, sizeof c->dim[0].from, "%s", where);
        c->dim[c->ndims++].size = size;
    }
    return 1;
}

/* each component of an absolute path there (H5Lexists needs the parents) */
int check_path_exists(hid_t f, const char *path)
{
    char part[1024];
    for (const char *p = path + (path[0] == '/'); *p;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - path) : strlen(path);
        if (n >= sizeof part) return 0;
        snprintf(part, sizeof part, "%.*s", (int)n, path);
        htri_t e = H5Lexists(f, part, H5P_DEFAULT);
        if (e <= 0) {
            H5Eclear2(H5E_DEFAULT);
            return 0;
        }
        if (!slash) break;
        p = slash + 1;
    }
    return 1;
}
