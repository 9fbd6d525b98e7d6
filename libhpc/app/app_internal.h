/* app_internal.h - shared by the files of the app kit (libhpc/app/). */
#ifndef HPC_APP_INTERNAL_H
#define HPC_APP_INTERNAL_H

#include "hpc_app.h"
#include "internal.h"

/* opts.c: parse argv against app->opts (and the built-ins).  0 run, 1
 * --help, 2 --version, HPC_ERR_ARG (or HPC_ERR_NOMEM) with a one-line
 * cause (hpc_last_cause). */
/* 0, or 1 --help, 2 --version, 3 --list-options (the caller prints) */
int app_opts_parse(const hpc_app_t *app, int argc, char **argv, int *quiet);
void app_opts_list(const hpc_app_t *app, FILE *out);
void app_opts_help(const hpc_app_t *app, FILE *out);
/* The key over the HPC_OPT_KEY options (malloc'd). */
char *app_opts_key(const hpc_app_t *app);
void app_opts_free(void);

/* settings_check.c: check the HPC_* variables libhpc reads; 0 or
 * HPC_ERR_ARG with a one-line cause naming the variable. */
int app_settings_check(void);
/* after it: the first HPC_COLL_<OP> set to nccl, or NULL */
const char *app_settings_nccl_var(void);

/* exit.c: who the program is (hpc_app_start's app, -q); the way out
 * (MPI finished, status); the agreement over MPI_COMM_WORLD that returns
 * only when every rank passed 0 (a failing rank waits at most 60 s) */
void app_exit_init(const hpc_app_t *app, int quiet);
void app_leave(int status) HPC_NORETURN;
void app_agree_or_leave(int status, const char *msg);
/* exit.c: a failure kept by hpc_app_fail_later on this rank (0: none),
 * and the agreement that ends the job on it (collective over the world):
 * _agree when some rank has one, _settle when none may (returns if so) */
int app_fail_pending(void);
void app_fail_agree(void) HPC_NORETURN;
void app_fail_settle(void);

/* blas_restart.c: before hpc_init, restart the program (argv as main
 * got it) with the OpenBLAS kernel its CPU runs best, where OpenBLAS
 * chose a narrower one (blas.c decides); returns where it does not. */
void app_blas_restart(char **argv);

/* stop.c */
void app_stop_install(void);

#endif
