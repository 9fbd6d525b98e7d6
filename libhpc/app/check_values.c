/* check_values.c - what a dataset's values may hold (HPC_CHECK_VALUES):
 * "finite" (no NaN or infinity; "finite_where": only in the rows a mask
 * keeps, such as the trajectories with status 0), "min" (labels: at
 * least 0), "values" (codes: one of the list).  Read in blocks of rows
 * (about 32 MiB), as double, whatever the file's type: one pass, memory
 * bounded whatever the file's size.  One line per rule broken, naming
 * the first element and how many more.
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_internal.h"

#define BLOCK_ELEMS ((hsize_t)4 << 20)

typedef struct {
    unsigned long long first, more;
    double value;
    int seen;
} broken_t;

static void note(broken_t *b, unsigned long long at, double v)
{
    if (b->seen++) {
        b->more++;
        return;
    }
    b->first = at;
    b->value = v;
}

static int in_list(const app_json_t *values, double v)
{
    for (size_t i = 0; i < values->n; i++)
        if (values->items[i].num == v) return 1;
    return 0;
}

/* element number at of dims[nd] as "[i, j, k]" */
static void index_text(unsigned long long at, int nd, const hsize_t *dims, char *buf, size_t len)
{
    unsigned long long idx[8];
    for (int i = nd - 1; i >= 0; i--) {
        idx[i] = dims[i] ? at % dims[i] : 0;
        at = dims[i] ? at / dims[i] : 0;
    }
    size_t n = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < nd && n < len; i++) n += (size_t)snprintf(buf + n, len - n, "%s%llu", i ? ", " : "", idx[i]);
    if (n < len) snprintf(buf + n, len - n, "]");
}

/* "/y: NaN at [3, 17, 0] (and 4 more) where ..." */
static void say(app_check_t *c, const char *name, const broken_t *b, int nd, const hsize_t *dims, const char *what)
{
    char at[128], more[64] = "";
    if (!b->seen) return;
    index_text(b->first, nd, dims, at, sizeof at);
    if (b->more) snprintf(more, sizeof more, " (and %llu more)", b->more);
    char v[32];
    if (isnan(b->value)) snprintf(v, sizeof v, "NaN");
    else if (isinf(b->value)) snprintf(v, sizeof v, "%sinfinity", b->value < 0 ? "-" : "");
    else snprintf(v, sizeof v, "%g", b->value);
    check_problem(c, name, "%s at %s%s %s", v, at, more, what);
}

/* rows [r0, r0 + nr) into buf, as double */
static int read_rows(hid_t d, int nd, const hsize_t *dims, hsize_t r0, hsize_t nr, double *buf)
{
    hsize_t start[8] = {0}, count[8];
    memcpy(count, dims, (size_t)nd * sizeof *dims);
    start[0] = r0;
    count[0] = nr;
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(nd, count, NULL);
    int rc = fs >= 0 && ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
             H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, buf) >= 0 ? 0 : -1;
    if (fs >= 0) H5Sclose(fs);
    if (ms >= 0) H5Sclose(ms);
    return rc;
}

void check_values(app_check_t *c, const char *name, hid_t d, int nd, const hsize_t *dims, const app_json_t *e,
                  const unsigned char *mask)
{
    const app_json_t *values = app_json_get(e, "values");
    int finite = app_json_num(e, "finite", 0) || mask, has_min = app_json_get(e, "min") != NULL;
    double min = app_json_num(e, "min", 0);
    if ((!finite && !has_min && !values) || nd < 1) return;
    hsize_t row = 1;
    for (int i = 1; i < nd; i++) row *= dims[i];
    hsize_t per = row ? (BLOCK_ELEMS / row > 0 ? BLOCK_ELEMS / row : 1) : 1;
    double *buf = malloc((size_t)(per * row + 1) * sizeof *buf);
    if (!buf) {
        check_problem(c, name, "no memory to read its values");
        return;
    }
    broken_t nonfinite = {0}, below = {0}, other = {0};
    for (hsize_t r0 = 0; r0 < dims[0] && row; r0 += per) {
        hsize_t nr = dims[0] - r0 < per ? dims[0] - r0 : per;
        if (read_rows(d, nd, dims, r0, nr, buf) < 0) {
            H5Eclear2(H5E_DEFAULT);
            check_problem(c, name, "its rows from %llu cannot be read", (unsigned long long)r0);
            break;
        }
        for (hsize_t i = 0; i < nr * row; i++) {
            double v = buf[i];
            unsigned long long at = (unsigned long long)(r0 * row + i);
            if (finite && !isfinite(v) && (!mask || mask[r0 + i / row])) note(&nonfinite, at, v);
            if (has_min && v < min) note(&below, at, v);
            if (values && !in_list(values, v)) note(&other, at, v);
        }
    }
    free(buf);
    const char *where = app_json_str(e, "finite_where", NULL);
    char what[300];
    snprintf(what, sizeof what, "where no NaN or infinity is allowed%s%s", mask && where ? ": " : "",
             mask && where ? where : "");
    say(c, name, &nonfinite, nd, dims, what);
    snprintf(what, sizeof what, "below %g, the least value allowed", min);
    say(c, name, &below, nd, dims, what);
    say(c, name, &other, nd, dims, "is not one of the values the schema lists");
}
