/* odegen.h - internal interfaces of hpc-odegen (one module per concern).
 *
 *   systems.c  the registry: names, dimensions, parameters, x0, omega
 *   options.c  the command line and --help
 *   solver.c   the CPU engine (dp45.h with 8 SIMD lanes)
 *   cuda.cu    the GPU engine (dp45.h, one trajectory per thread)
 *   work.c     dynamic work distribution (a shared chunk counter)
 *   output.c   the HDF5 file: layout, attributes, resume
 *   main.c     the run: wiring, progress, summary
 */
#ifndef ODEGEN_H
#define ODEGEN_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>
#include "ode_prob.h"

#define ODEGEN_PROG "hpc-odegen"

/* ---- systems.c ---- */
typedef struct {
    const char *name;
    int sys;                       /* ODE_SYS_* */
    int dim_default, dim_min, dim_max;   /* dim_max 0 = unbounded */
    int npar;
    const char *par_name[ODE_MAXPAR];
    double par_default[ODE_MAXPAR];
    const char *summary;           /* one line for --help */
} ode_system_info_t;

int ode_system_count(void);
const ode_system_info_t *ode_system_at(int i);
const ode_system_info_t *ode_system_find(const char *name);

/* ---- options.c ---- */
enum { ODE_X0_UNIFORM = 0, ODE_X0_NORMAL = 1 };
enum { ODE_DEV_CPU = 0, ODE_DEV_CUDA = 1 };

typedef struct {
    const ode_system_info_t *sys;
    int dim;
    double par[ODE_MAXPAR];
    int64_t n;
    double t0, t1;
    int nt;
    double rtol, atol;
    double max_step;               /* INFINITY = none */
    double first_step;             /* 0 = automatic */
    int64_t max_steps;             /* 0 = unlimited */
    int x0_dist;                   /* ODE_X0_* */
    double x0_a, x0_b;             /* low, high  or  mu, sigma */
    uint64_t seed;
    const char *out;
    int resume, force;
    int device;                    /* ODE_DEV_* */
    int64_t chunk;                 /* trajectories per work chunk, 0 = auto */
    int quiet;
} ode_opts_t;

/* Parse argv into o.  Returns 0 (run), 1 (--help printed on rank 0's
 * request: caller exits 0), or -1 with a one-line reason in err. */
int ode_parse_args(int argc, char **argv, ode_opts_t *o, char *err, size_t errlen);
void ode_print_help(void);
/* Trajectories per chunk for these options (depends on n, nt, dim only,
 * never on the rank count, so a file can be resumed on any count). */
int64_t ode_auto_chunk(const ode_opts_t *o);

/* ---- systems.c: data keyed by (seed, index), never by rank ---- */
/* Output grid as numpy.linspace(t0, t1, nt). */
void ode_tgrid(double t0, double t1, int nt, double *t);
/* Initial conditions of trajectories [first, first+n) into x0[n][dim]. */
void ode_x0(const ode_opts_t *o, int64_t first, int64_t n, double *x0);
/* Per-run vector parameter (kuramoto's omega[dim]); NULL if the system
 * has none.  Caller frees. */
double *ode_system_vec(const ode_opts_t *o);
/* Fill a problem description (pointers into tgrid and vec). */
void ode_make_prob(const ode_opts_t *o, const double *tgrid, const double *vec, ode_prob_t *p);

/* ---- solver.c ---- */
/* Doubles of scratch the CPU engine needs for dimension dim. */
size_t ode_cpu_scratch(int dim);
/* Integrate n trajectories (x0[n][dim] -> yout[n][nt][dim], stat[n]). */
void ode_solve_cpu(const ode_prob_t *p, int64_t n, const double *x0, double *yout,
                   ode_stat_t *stat, double *scratch);
/* Called by the engine every few hundred lane steps: lets rank 0 serve
 * the work counter (MPI progress) while it computes. */
void ode_poll(void);

/* ---- cuda.cu: see ode_cuda.h ---- */
#include "ode_cuda.h"

/* ---- work.c ---- */
typedef struct ode_work ode_work_t;
/* Collective.  Hands out the chunks whose done[] entry is 0, each to
 * exactly one rank, first come first served. */
int ode_work_create(MPI_Comm comm, int64_t nchunks, const uint8_t *done, ode_work_t **out);
/* Next chunk index for this rank, or -1 when none is left. */
int64_t ode_work_next(ode_work_t *w);
/* Tickets taken so far by all ranks (rank 0 only; others get 0). */
int64_t ode_work_taken(ode_work_t *w);
/* Collective. */
void ode_work_free(ode_work_t *w);

/* ---- output.c ---- */
typedef struct ode_out ode_out_t;
typedef struct {
    int64_t nchunks, chunk;
    uint8_t *done;                 /* [nchunks], 1 = chunk on disk */
    int64_t ndone;
} ode_layout_t;
/* Collective.  Create PATH.partial (or, with --resume, reopen it and
 * check that it was written with the same options).  On failure prints
 * nothing: returns -1 with a one-line reason and *exit_code (1 or 2). */
int ode_out_open(const ode_opts_t *o, int argc, char **argv, const double *tgrid,
                 const double *vec, ode_out_t **out, ode_layout_t *lay,
                 char *err, size_t errlen, int *exit_code);
/* 1 if --resume found the final file already complete (nothing to do). */
int ode_out_is_complete(const ode_out_t *f);
/* Independent.  Write one finished chunk and then mark it done. */
int ode_out_write_chunk(ode_out_t *f, int64_t chunk, int64_t first, int64_t n,
                        const double *x0, const double *y, const ode_stat_t *st);
/* Collective totals over the whole file (all chunks). */
int ode_out_totals(ode_out_t *f, int64_t *failed, int64_t *steps, int64_t fails_by[4]);
/* Collective.  Write the closing attributes and rename to the final name. */
int ode_out_finish(ode_out_t *f, double wall, int ok);
const char *ode_status_legend(void);
/* First line of hpc_last_error() (no "from file:line" frames): for the
 * one-line messages of hpc_die_data(). */
const char *ode_cause(void);

#endif /* ODEGEN_H */
