/* app_internal.h - shared by the files of the app kit (libhpc/app/). */
#ifndef HPC_APP_INTERNAL_H
#define HPC_APP_INTERNAL_H

#include "hpc_app.h"
#include "internal.h"

/* opts.c: parse argv against app->opts (and the built-ins).  0 run, 1
 * --help, 2 --version, -1 with a one-line reason in err. */
int app_opts_parse(const hpc_app_t *app, int argc, char **argv, int *quiet, char *err, size_t len);
void app_opts_help(const hpc_app_t *app, FILE *out);
/* The key over the HPC_OPT_KEY options (malloc'd). */
char *app_opts_key(const hpc_app_t *app);
void app_opts_free(void);

/* settings.c: check the HPC_* variables libhpc reads; 0 or -1 with a
 * one-line reason naming the variable. */
int app_settings_check(char *err, size_t len);
/* after it: the first HPC_COLL_<OP> set to nccl, or NULL */
const char *app_settings_nccl_var(void);

/* stop.c */
void app_stop_install(void);

#endif
