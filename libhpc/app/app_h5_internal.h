/* app_h5_internal.h - shared by the app kit's HDF5 part (hpc_app_h5.h:
 * output.c, writer.c, ckpt.c; the file kinds: json.c, schema*.c,
 * check*.c), which is built into libhpc-h5, above the rest of the kit. */
#ifndef HPC_APP_H5_INTERNAL_H
#define HPC_APP_H5_INTERNAL_H

#include "app_internal.h"
#include "hpc_app_h5.h"

/* output.c and writer.c: a resumable output */
typedef struct out_writer out_writer_t;
struct hpc_out {
    hpc_h5file_t *f;
    char *path;
    int state;
    int64_t nparts, ndone;
    uint8_t *done;             /* durable: the part's data is on disk */
    hid_t done_d;
    hid_t written_d;           /* checksums of parts written, not yet durable
                                * (-1: a file from before they were kept) */
    int64_t runs;              /* 1 + resumes */
    out_writer_t *writer;      /* the background writer, or NULL */
};
/* writer.c: stop the writer (every queued part written, synced, flagged);
 * the first error of its thread, or 0.  No-op without a writer. */
int app_out_writer_stop(hpc_out_t *o);

/* json.c: a small strict JSON reader (the schemas'); name is for the
 * messages ("line 7: ...").  A tree freed as a whole. */
typedef enum {
    APP_JSON_NULL,
    APP_JSON_BOOL,
    APP_JSON_NUMBER,
    APP_JSON_STRING,
    APP_JSON_ARRAY,
    APP_JSON_OBJECT
} app_json_type_t;
typedef struct app_json {
    app_json_type_t type;
    double num;                 /* NUMBER, BOOL (0/1) */
    char *str;                  /* STRING */
    struct app_json *items;     /* ARRAY, OBJECT: n members */
    char **keys;                /* OBJECT: their names */
    size_t n;
} app_json_t;
int app_json_parse(const char *text, const char *name, app_json_t **out);
void app_json_free(app_json_t *v);
void app_json_clear(app_json_t *v);   /* its members freed, v zeroed */
const app_json_t *app_json_get(const app_json_t *obj, const char *key);
const char *app_json_str(const app_json_t *obj, const char *key, const char *dflt);
double app_json_num(const app_json_t *obj, const char *key, double dflt);
/* a deep copy into dst (0 or HPC_ERR_NOMEM) */
int app_json_copy(app_json_t *dst, const app_json_t *src);

/* schema_texts.c (made from data/schemas/KIND.json by data/embed.sh) */
typedef struct {
    const char *kind, *text;
} app_schema_text_t;
extern const app_schema_text_t app_schema_texts[];
extern const size_t app_schema_ntexts;

/* schema.c: the kind's schema with what it extends merged in (a tree
 * the caller frees), or HPC_ERR_ARG naming the kinds there are */
int app_schema_load(const char *kind, app_json_t **out);
/* a member's types ("float64" or ["float64", "float32"]) as text:
 * "float64 or float32" */
void app_schema_types(const app_json_t *entry, char *buf, size_t len);
/* a dataset's shapes as text: "[N, NT, D]", "[N] or [N, 1]" */
void app_schema_shapes(const app_json_t *entry, char *buf, size_t len);

#endif
