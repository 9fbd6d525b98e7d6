/* check.c - the checker's entry points: which kind a file is (each
 * schema's "detect" marks), one file against its kind's schema with one
 * line per problem, and a program's input checked before it allocates
 * anything (hpc_app_check_input).  The HDF5 rules are in check_h5.c, the
 * CSV ones in check_csv.c.
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_internal.h"

/* ---- which kind ---- */

static int is_hdf5(const char *path)
{
    HPC_H5_QUIET;
    htri_t h = H5Fis_hdf5(path);
    if (h < 0) H5Eclear2(H5E_DEFAULT);
    return h > 0;
}

/* one "detect" mark: "/path", "/path:float" (or ":integer"), "@attr" */
static int mark_holds(hid_t f, const char *mark)
{
    if (mark[0] == '@') {
        htri_t e = H5Aexists(f, mark + 1);
        if (e < 0) H5Eclear2(H5E_DEFAULT);
        return e > 0;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s", mark);
    char *cls = strchr(path, ':');
    if (cls) *cls++ = '\0';
    if (!check_path_exists(f, path)) return 0;
    if (!cls) return 1;
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT), t = d < 0 ? H5I_INVALID_HID : H5Dget_type(d);
    H5T_class_t k = t < 0 ? H5T_NO_CLASS : H5Tget_class(t);
    if (t >= 0) H5Tclose(t);
    if (d >= 0) H5Dclose(d);
    H5Eclear2(H5E_DEFAULT);
    return !strcmp(cls, "float") ? k == H5T_FLOAT : !strcmp(cls, "integer") ? k == H5T_INTEGER : 0;
}

/* the marks of a schema the file holds (*all: how many it has; a schema
 * without marks, or of the other format, holds none of 1) */
static int marks_held(const app_json_t *s, hid_t f, const char *first_line, int *all)
{
    const app_json_t *det = app_json_get(s, "detect");
    int hdf5 = !strcmp(app_json_str(s, "format", "hdf5"), "hdf5"), held = 0;
    *all = 1;
    if (!det || det->type != APP_JSON_ARRAY || !det->n || hdf5 != (f >= 0)) return 0;
    *all = (int)det->n;
    for (size_t i = 0; i < det->n; i++) {
        const char *m = det->items[i].str ? det->items[i].str : "";
        held += hdf5 ? mark_holds(f, m) : !strncmp(first_line, m, strlen(m));
    }
    return held;
}

static int in_list(const char *kinds, const char *kind)
{
    if (!kinds) return 1;
    size_t n = strlen(kind);
    for (const char *p = kinds; *p;) {
        size_t w = strcspn(p, "|");
        if (w == n && !strncmp(p, kind, n)) return 1;
        p += w + (p[w] == '|');
    }
    return 0;
}

/* The file opened as the checker reads it: HDF5 (f), or its first line */
static int open_any(const char *path, hid_t *f, char *line, size_t len)
{
    *f = H5I_INVALID_HID;
    line[0] = '\0';
    FILE *fp = fopen(path, "rb");
    if (!fp) return HPC_ERR(HPC_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    if (!fgets(line, (int)len, fp)) line[0] = '\0';
    fclose(fp);
    line[strcspn(line, "\r\n")] = '\0';
    if (!is_hdf5(path)) return 0;
    HPC_H5_QUIET;
    *f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (*f < 0) {
        H5Eclear2(H5E_DEFAULT);
        return HPC_ERR(HPC_ERR_IO, "%s: cannot be opened as HDF5", path);
    }
    return 0;
}

/* The kind among kinds whose marks the file holds, all of them (the
 * most where several do); with partial, where none does, the one with
 * the most held (the kind the file was meant to be, whose check says
 * what is missing).  NULL: none. */
static void detect_open(hid_t f, const char *line, const char *kinds, int partial, char **kind)
{
    int best = 0, best_part = 0;
    char *part = NULL;
    *kind = NULL;
    for (size_t i = 0; i < app_schema_ntexts; i++) {
        const char *k = app_schema_texts[i].kind;
        app_json_t *s;
        int all;
        if (!in_list(kinds, k) || app_schema_load(k, &s) < 0) continue;
        int held = marks_held(s, f, line, &all);
        app_json_free(s);
        char **into = held == all ? kind : &part;
        int *top = held == all ? &best : &best_part;
        if (held > *top) {
            free(*into);
            *into = strdup(k);
            *top = held;
        }
    }
    if (!*kind && partial) *kind = part;
    else free(part);
    hpc_error_clear();
}

static int detect(const char *path, const char *kinds, int partial, char **kind)
{
    HPC_H5_QUIET;
    hid_t f;
    char line[4096];
    HPC_TRY(open_any(path, &f, line, sizeof line));
    detect_open(f, line, kinds, partial, kind);
    if (f >= 0) H5Fclose(f);
    return 0;
}

int hpc_check_detect(const char *path, const char *kinds, char **kind)
{
    return detect(path, kinds, 0, kind);
}

/* ---- one file against its kind ---- */

int hpc_check_file(const char *path, const char *dataset, const char *kind, int flags,
                   hpc_check_report_t report, void *ctx)
{
    HPC_H5_QUIET;
    app_check_t c;
    memset(&c, 0, sizeof c);
    c.path = path;
    c.dataset = dataset;
    c.flags = flags;
    c.report = report;
    c.ctx = ctx;
    char line[4096], *found = NULL;
    app_json_t *s = NULL;
    if (kind) HPC_TRY(app_schema_load(kind, &s));
    hid_t f;
    int rc = open_any(path, &f, line, sizeof line);
    if (rc) {
        app_json_free(s);
        return rc;
    }
    if (!kind) {
        detect_open(f, line, NULL, 1, &found);
        if (!found) {
            check_problem(&c, "", "not a file of any kind hpckit knows (%s): give --kind", hpc_check_kinds());
            if (f >= 0) H5Fclose(f);
            return c.problems;
        }
        rc = app_schema_load(found, &s);
        free(found);
    }
    c.f = f;
    c.schema = s;
    int hdf5 = !strcmp(app_json_str(s, "format", "hdf5"), "hdf5");
    if (!rc && hdf5 != (f >= 0))
        check_problem(&c, "", "not %s (%s files are %s)", hdf5 ? "an HDF5 file" : "a text file",
                      app_json_str(s, "kind", "?"), hdf5 ? "HDF5" : "CSV text");
    else if (!rc)
        rc = hdf5 ? app_check_h5(&c) : app_check_csv(&c);
    if (f >= 0) H5Fclose(f);
    app_json_free(s);
    return rc < 0 ? rc : c.problems;
}

/* ---- a program's input ---- */

typedef struct {
    char first[1024];
} first_t;

static void keep_first(void *ctx, const char *line)
{
    first_t *k = ctx;
    if (!k->first[0]) snprintf(k->first, sizeof k->first, "%s", line);
}

/* "is KIND data (its title's first part), not what WHAT takes here: A, B" */
static void other_kind(const char *what, const char *kind, const char *kinds, char *msg, size_t len)
{
    const char *s = hpc_check_schema(kind), *t = s ? strstr(s, "\"title\": \"") : NULL;
    int tl = t ? (int)strcspn(t + 10, ":\"") : 0;
    int n = snprintf(msg, len, "is %s data (%.*s), not what %s takes here: ", kind, tl, t ? t + 10 : "", what);
    for (const char *p = kinds; n > 0 && (size_t)n < len && *p; p++)
        n += snprintf(msg + n, len - (size_t)n, *p == '|' ? ", " : "%c", *p);
}

/* every kind of kinds has "detect" marks (a matrix has none: any file
 * with the dataset is one) */
static int detectable(const char *kinds)
{
    int all = 1;
    for (const char *p = kinds; *p && all;) {
        size_t w = strcspn(p, "|");
        char k[64];
        app_json_t *s;
        snprintf(k, sizeof k, "%.*s", (int)w, p);
        all = app_schema_load(k, &s) == 0 && app_json_get(s, "detect");
        if (all) app_json_free(s);
        hpc_error_clear();
        p += w + (p[w] == '|');
    }
    return all;
}

/* rank 0: the kind (into kind) and the first problem (into msg, "" if
 * none; *named: msg names the file already) */
static void check_here(const char *what, const char *path, const char *dataset, const char *kinds, char *kind,
                       size_t klen, char *msg, size_t len, int *named)
{
    char *found = NULL, *other = NULL;
    first_t k = {""};
    msg[0] = kind[0] = '\0';
    *named = 0;
    int rc = detect(path, kinds, 0, &found);
    if (!rc && !found) {
        /* not of a kind it takes: name the kind it is, or check it against
         * the kind taken it looks most like (or the first), which says
         * what is missing */
        if (detectable(kinds) && detect(path, NULL, 0, &other) == 0 && other) {
            other_kind(what, other, kinds, msg, len);
            free(other);
            return;
        }
        if (detect(path, kinds, 1, &found) < 0 || !found) found = strndup(kinds, strcspn(kinds, "|"));
    }
    if (!rc) rc = hpc_check_file(path, dataset, found, 0, keep_first, &k);
    *named = rc < 0;
    if (rc < 0) snprintf(msg, len, "%s", hpc_last_cause());
    else if (rc > 1) snprintf(msg, len, "%s (and %d problem%s more: hpc-h5check lists them)", k.first, rc - 1,
                              rc > 2 ? "s" : "");
    else if (rc > 0) snprintf(msg, len, "%s", k.first);
    if (found) snprintf(kind, klen, "%s", found);
    free(found);
    hpc_error_clear();
}

const char *hpc_app_check_input(const char *what, const char *path, const char *dataset, const char *kinds)
{
    static char kind[64];
    char msg[1400];
    int named = 0;
    if (hpc_rank() == 0) check_here(what, path, dataset, kinds, kind, sizeof kind, msg, sizeof msg, &named);
    MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, hpc_comm_world());
    MPI_Bcast(kind, sizeof kind, MPI_CHAR, 0, hpc_comm_world());
    MPI_Bcast(&named, 1, MPI_INT, 0, hpc_comm_world());
    if (msg[0] && named) hpc_app_exit(HPC_EXIT_DATA, "%s: %s", what, msg);   /* cannot open FILE: ... */
    if (msg[0]) hpc_app_exit(HPC_EXIT_DATA, "%s %s: %s", what, path, msg);
    return kind;
}
