/* h5_vds.c - what a read-only open learns about virtual datasets.
 *
 * HDF5 1.10's MPI-IO driver refuses to read virtual datasets (a joined
 * job-array file of hpc-odegen is one), and a virtual dataset whose source
 * file is absent reads as its fill value without a word.  So before a
 * file is opened read-only, rank 0 opens it alone (the serial driver),
 * looks for virtual datasets and checks that every source they map exists
 * where HDF5 will look for it, opens as HDF5 and holds the source dataset
 * with the extent the mapping selects.  hpc_h5_open then opens a file
 * with virtual datasets through the serial driver on every rank.
 *
 * Where HDF5 looks (H5Pset_virtual's rules, 1.10): a relative name with
 * each prefix of HDF5_VDS_PREFIX (':'-separated, "${ORIGIN}" = the
 * folder of the virtual file), then in the folder of the virtual file,
 * then as given (the current folder); an absolute name as given, else
 * its last component as a relative one.  "." is the virtual file itself.
 * Runs inside hpc_h5_open, so HDF5's printing is already off.
 */
#include "config.h"
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hpc_h5.h"
#include "internal.h"

/* one mapping: a source file and the dataset in it, and how much of it
 * the mapping reads: the extent its selection reaches (need, nd > 0)
 * where the file records one, else (a selection of all of the source,
 * stored without an extent) the number of elements (points) */
typedef struct {
    char *file, *dset, *vds;   /* vds: the virtual dataset that maps it */
    hsize_t need[8];
    int nd;
    hssize_t points;
} src_t;

typedef struct {
    src_t *s;
    size_t n, cap;
    int nvirtual;
    int failed;
} scan_t;

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* what mapping i reads of its source (see src_t) */
static int src_extent(hid_t dcpl, size_t i, src_t *s)
{
    hid_t sp = H5Pget_virtual_srcspace(dcpl, i), vs = H5Pget_virtual_vspace(dcpl, i);
    if (sp < 0 || vs < 0) {
        if (sp >= 0) H5Sclose(sp);
        if (vs >= 0) H5Sclose(vs);
        return -1;
    }
    int nd = H5Sget_simple_extent_ndims(sp);
    hsize_t lo[8], hi[8];
    s->nd = 0;
    if (H5Sget_select_type(sp) == H5S_SEL_ALL || nd < 1 || nd > 8) {
        s->points = H5Sget_select_npoints(vs);   /* as many as the virtual side selects */
    } else if (H5Sget_select_npoints(sp) > 0 && H5Sget_select_bounds(sp, lo, hi) >= 0) {
        s->nd = nd;
        for (int d = 0; d < nd; d++) s->need[d] = hi[d] + 1;
    }
    H5Sclose(sp);
    H5Sclose(vs);
    return 0;
}

static int add_mappings(scan_t *sc, hid_t dcpl, const char *vds)
{
    size_t count = 0;
    if (H5Pget_virtual_count(dcpl, &count) < 0) return -1;
    for (size_t i = 0; i < count; i++) {
        ssize_t fl = H5Pget_virtual_filename(dcpl, i, NULL, 0);
        ssize_t dl = H5Pget_virtual_dsetname(dcpl, i, NULL, 0);
        if (fl < 0 || dl < 0) return -1;
        if (sc->n == sc->cap) {
            size_t cap = sc->cap ? 2 * sc->cap : 64;
            src_t *s = realloc(sc->s, cap * sizeof *s);
            if (!s) return -1;
            sc->s = s;
            sc->cap = cap;
        }
        src_t *s = &sc->s[sc->n];
        memset(s, 0, sizeof *s);
        s->file = malloc((size_t)fl + 1);
        s->dset = malloc((size_t)dl + 1);
        s->vds = dup_or_null(vds);
        sc->n++;
        if (!s->file || !s->dset || !s->vds) return -1;
        H5Pget_virtual_filename(dcpl, i, s->file, (size_t)fl + 1);
        H5Pget_virtual_dsetname(dcpl, i, s->dset, (size_t)dl + 1);
        if (src_extent(dcpl, i, s) < 0) return -1;
    }
    return 0;
}

static herr_t visit(hid_t obj, const char *name, const H5O_info_t *info, void *data)
{
    scan_t *sc = data;
    if (info->type != H5O_TYPE_DATASET) return 0;
    hid_t d = H5Dopen2(obj, name, H5P_DEFAULT);
    hid_t dcpl = d < 0 ? H5I_INVALID_HID : H5Dget_create_plist(d);
    int rc = dcpl < 0 ? -1 : 0;
    if (!rc && H5Pget_layout(dcpl) == H5D_VIRTUAL) {
        sc->nvirtual++;
        char full[1024];
        snprintf(full, sizeof full, "/%s", name);
        rc = add_mappings(sc, dcpl, full);
    }
    if (dcpl >= 0) H5Pclose(dcpl);
    if (d >= 0) H5Dclose(d);
    if (rc) sc->failed = 1;
    return rc ? -1 : 0;
}

static int by_file(const void *a, const void *b)
{
    const src_t *x = a, *y = b;
    int c = strcmp(x->file, y->file);
    return c ? c : strcmp(x->vds, y->vds);   /* deterministic: the message names the same dataset */
}

static int try_path(char *out, size_t len, const char *dir, const char *name)
{
    int n = dir ? snprintf(out, len, "%s/%s", dir, name) : snprintf(out, len, "%s", name);
    return n > 0 && (size_t)n < len && access(out, F_OK) == 0;
}

/* HDF5_VDS_PREFIX's entries, ${ORIGIN} replaced by the virtual file's folder */
static int try_env(char *out, size_t len, const char *origin, const char *name)
{
    const char *env = getenv("HDF5_VDS_PREFIX");
    if (!env || !*env) return 0;
    for (const char *p = env; *p;) {
        size_t w = strcspn(p, ":");
        char pre[4096];
        if (w < sizeof pre) {
            snprintf(pre, sizeof pre, "%.*s", (int)w, p);
            if (!strncmp(pre, "${ORIGIN}", 9)) {
                char rest[4096];
                snprintf(rest, sizeof rest, "%s", pre + 9);
                snprintf(pre, sizeof pre, "%s%s", origin, rest);
            }
            if (pre[0] && try_path(out, len, pre, name)) return 1;
        }
        p += w + (p[w] == ':');
    }
    return 0;
}

/* Where HDF5 finds source file name for the virtual file in folder
 * origin: 1 with the path in out, or 0 (not found; out = where it was
 * looked for first, for the message). */
static int resolve(const char *origin, const char *name, char *out, size_t len)
{
    if (name[0] == '/') {
        if (try_path(out, len, NULL, name)) return 1;
        const char *slash = strrchr(name, '/');
        name = slash + 1;
    }
    if (try_env(out, len, origin, name) || try_path(out, len, origin, name)) return 1;
    if (try_path(out, len, NULL, name)) return 1;
    snprintf(out, len, "%s/%s", origin, name);
    return 0;
}

/* Source dataset s->dset of the open file f: there, with the extent the
 * mapping reads.  0 or HPC_ERR_DATA naming it. */
static int check_dset(hid_t f, const char *vpath, const char *path, const src_t *s)
{
    htri_t there = H5Lexists(f, s->dset, H5P_DEFAULT);
    hid_t d = there > 0 ? H5Dopen2(f, s->dset, H5P_DEFAULT) : H5I_INVALID_HID;
    if (d < 0) {
        H5Eclear2(H5E_DEFAULT);
        return HPC_ERR(HPC_ERR_DATA, "'%s' maps %s from '%s', which has no dataset '%s'", vpath, s->vds, path,
                       s->dset);
    }
    hsize_t dims[8];
    hid_t sp = H5Dget_space(d);
    int nd = sp < 0 ? -1 : H5Sget_simple_extent_dims(sp, dims, NULL);
    hssize_t points = sp < 0 ? -1 : H5Sget_simple_extent_npoints(sp);
    int short_of = s->nd ? nd != s->nd : points < s->points;
    for (int i = 0; !short_of && i < s->nd; i++) short_of = dims[i] < s->need[i];
    if (sp >= 0) H5Sclose(sp);
    H5Dclose(d);
    if (short_of)
        return HPC_ERR(HPC_ERR_DATA, "'%s' maps %s from '%s', whose '%s' is smaller than the mapping (another file?)",
                       vpath, s->vds, path, s->dset);
    return 0;
}

/* Every mapping of sorted s[0..n) with the same file: the file found,
 * opened once, its datasets checked. */
static int check_sources(const char *vpath, const char *origin, const src_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t e = i;
        while (e < n && !strcmp(s[e].file, s[i].file)) e++;
        /* "." is this file; a printf-style name ("%b") is resolved by HDF5 alone */
        if (strcmp(s[i].file, ".") != 0 && !strchr(s[i].file, '%')) {
            char path[4096];
            if (!resolve(origin, s[i].file, path, sizeof path))
                return HPC_ERR(HPC_ERR_DATA, "'%s' holds virtual datasets over '%s', which is missing (looked for %s; "
                               "keep a joined file beside its shards)", vpath, s[i].file, path);
            hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
            if (f < 0) {
                H5Eclear2(H5E_DEFAULT);
                return HPC_ERR(HPC_ERR_DATA, "'%s' maps %s from '%s', which is not a readable HDF5 file", vpath,
                               s[i].vds, path);
            }
            int rc = 0;
            for (size_t k = i; !rc && k < e; k++)
                if (!strchr(s[k].dset, '%')) rc = check_dset(f, vpath, path, &s[k]);
            H5Fclose(f);
            if (rc) return hpc_error_push(rc, __FILE__, __LINE__, __func__);
        }
        i = e;
    }
    return 0;
}

int hpc_h5_vds_probe(const char *path)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        /* not ours to judge: the real open says what is wrong */
        H5Eclear2(H5E_DEFAULT);
        return 0;
    }
    scan_t sc = {0};
    herr_t e = H5Ovisit2(f, H5_INDEX_NAME, H5_ITER_NATIVE, visit, &sc, H5O_INFO_BASIC);
    H5Fclose(f);
    int rc = sc.nvirtual > 0;
    if (e < 0 || sc.failed) {
        H5Eclear2(H5E_DEFAULT);
        rc = HPC_ERR(HPC_ERR_DATA, "cannot read the virtual datasets' mappings");
    }
    char *copy = strdup(path);
    if (rc > 0 && !copy) rc = HPC_ERR(HPC_ERR_NOMEM, "out of memory");
    if (rc > 0) {
        qsort(sc.s, sc.n, sizeof *sc.s, by_file);
        int e2 = check_sources(path, dirname(copy), sc.s, sc.n);
        if (e2 < 0) rc = hpc_error_push(e2, __FILE__, __LINE__, __func__);
    }
    free(copy);
    for (size_t i = 0; i < sc.n; i++) {
        free(sc.s[i].file);
        free(sc.s[i].dset);
        free(sc.s[i].vds);
    }
    free(sc.s);
    return rc;
}
