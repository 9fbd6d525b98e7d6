/* check_internal.h - shared by the checker's files (check.c: the entry
 * points, detection and reports; check_h5.c: HDF5 files; check_layers.c:
 * the named check "layer-chain"; check_csv.c: CSV files). */
#ifndef HPC_CHECK_INTERNAL_H
#define HPC_CHECK_INTERNAL_H

#include "app_h5_internal.h"

#define CHECK_MAXDIMS 32

typedef struct app_check {
    const char *path;           /* the file */
    const char *dataset;        /* the user's FILE:/DATASET part, or NULL */
    const app_json_t *schema;   /* merged (schema.c) */
    int flags;                  /* HPC_CHECK_* */
    hid_t f;                    /* HDF5: the open file */
    hpc_check_report_t report;
    void *ctx;
    int problems;
    /* the named dimensions bound so far: name, size, and where from */
    int ndims;
    struct {
        char name[32], from[128];
        hsize_t size;
    } dim[CHECK_MAXDIMS];
} app_check_t;

/* one problem: "PATH: message" (PATH a dataset or attribute, or empty) */
void check_problem(app_check_t *c, const char *where, const char *fmt, ...) HPC_PRINTF(3, 4);
/* name bound to size (from: the dataset that says so): 1 new or equal,
 * 0 a problem reported (another size, below the dim's min) */
int check_bind(app_check_t *c, const char *where, const char *name, hsize_t size);
/* the size bound to name, or -1 */
long long check_dim(const app_check_t *c, const char *name);

/* check_h5.c, check_csv.c: the file against the schema (0, or a
 * negative code where it cannot be read at all) */
int app_check_h5(app_check_t *c);
int app_check_csv(app_check_t *c);

/* check.c: every component of an absolute path is there */
int check_path_exists(hid_t f, const char *path);

/* check_h5.c: a dataset's type against a schema entry (its "type"):
 * 1 fits; the text of the file's type in have */
int check_type_fits(hid_t type, const app_json_t *entry, char *have, size_t len);
/* values of dataset name (open as d, dims[nd]): the entry's "finite",
 * "min", "values" (with mask: only rows whose mask is nonzero) */
void check_values(app_check_t *c, const char *name, hid_t d, int nd, const hsize_t *dims,
                  const app_json_t *entry, const unsigned char *mask);

/* check_layers.c: "layer-chain", /model/<i>/weight and bias (and
 * /optim/<state>/<i>/...) chained layer to layer, IN and OUT bound */
void check_layer_chain(app_check_t *c);

#endif
