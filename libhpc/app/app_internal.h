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

/* app.c: a failure kept by hpc_app_fail_later on this rank (0: none),
 * and the agreement that ends the job on it (collective over the world) */
int app_fail_pending(void);
void app_fail_agree(void) HPC_NORETURN;

/* stop.c */
void app_stop_install(void);

#endif
