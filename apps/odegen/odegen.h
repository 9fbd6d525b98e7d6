/* odegen.h - internal interfaces of hpc-odegen (one module per concern).
 *
 *   systems.c  the registry: names, dimensions, parameters, x0, omega
 *   options.c  the option table, the checks across options, --help extras
 *   solver.c   the CPU engine (dp45.h with 8 SIMD lanes)
 *   cuda.cu    the GPU engine (dp45.h, one trajectory per thread)
 *   output.c   the HDF5 file: layout and attributes (resume, done flags
 *              and the atomic finish come from the app kit's hpc_out)
 *   main.c     the run: wiring, progress, summary
 */
#ifndef ODEGEN_H
#define ODEGEN_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>
#include "hpc_app.h"
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
enum { ODE_F64 = 0, ODE_F32 = 1 };          /* --dtype of /x0 and /y */

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
    int dtype;                     /* ODE_F64, ODE_F32 */
    double sync_every;             /* seconds between syncs of the data */
    int64_t chunk;                 /* trajectories per work chunk */
    /* --shard I/N: this file holds trajectories [first, first + n) of
     * n_total; 0, 1, 0, n without it */
    int64_t shard, shards, first, n_total;
    int64_t join;                  /* --join N: make OUT from N shard files */
} ode_opts_t;

/* The program: name, option table, help (for hpc_app_start). */
extern const hpc_app_t ode_app;
/* After hpc_app_start: check what involves several options, resolve the
 * system and its parameters into o, add them to the options key.  0, or
 * HPC_ERR_ARG with a one-line cause (a usage error). */
int ode_opts_finish(ode_opts_t *o);
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
/* ---- cuda.cu: see ode_cuda.h ---- */
#include "ode_cuda.h"

/* ---- join.c ---- */
/* The file name of shard i of n for OUT: "ode.h5" -> "ode-shard0003-of0008.h5". */
void ode_shard_name(const char *out, int64_t i, int64_t n, char *buf, size_t len);
/* --join N: check the N shard files of o->out and write o->out as one
 * file of virtual datasets over them.  Collective; exits with one line on
 * a missing or incomplete shard. */
void ode_join(const ode_opts_t *o, int argc, char **argv);

/* ---- output.c ---- */
typedef struct ode_out ode_out_t;
/* Collective.  Create FILE.partial with the layout (or, with --resume,
 * reopen it and check its options, shapes and types).  Bad input or I/O
 * ends the run with one line (hpc_app_agree). */
ode_out_t *ode_out_open(const ode_opts_t *o, int argc, char **argv, const double *tgrid,
                        const double *vec);
/* 1 if --resume found the final file already complete (nothing to do). */
int ode_out_complete(const ode_out_t *w);
/* The done flag of each chunk, their number and how many are set. */
const uint8_t *ode_out_done(const ode_out_t *w, int64_t *nchunks, int64_t *ndone);
/* ---- rows.c: a batch of finished chunks into the file ---- */
/* What main.c hands over: the batch's chunk indices and its rows, which
 * stay untouched until the next ode_out_put (or ode_out_drain) returns. */
typedef struct {
    ode_out_t *w;
    int nchunks;
    const int64_t *chunks;
    const double *x0, *y;
    const ode_stat_t *st;
} ode_rows_t;
/* Independent.  The batch to the writer thread; returns once the batch
 * before is written (0), or with the writer's first error. */
int ode_out_put(ode_rows_t *b);
/* Independent.  Everything handed over written, synced and flagged done. */
int ode_out_drain(ode_out_t *w);
/* Collective, after a resume: chunks the killed run wrote but had not
 * yet flagged, kept where their rows match their checksums. */
int ode_out_recover(ode_out_t *w, int64_t *recovered);
/* Collective totals over the whole file (all chunks). */
int ode_out_totals(ode_out_t *w, int64_t *failed, int64_t *steps, int64_t fails_by[4]);
/* Collective.  Close, record the run, rename to the final name if all ok. */
int ode_out_finish(ode_out_t *w, double wall, int ok, int argc, char **argv);
const char *ode_status_legend(void);
/* Collective.  The dimension scales traj, t, component, attached to /x0,
 * /y and the four per-trajectory /stats datasets (nsteps, nfev,
 * nrejected, status); for output.c and join.c alike. */
int ode_scales(hid_t traj, hid_t t, hid_t component, hid_t x0, hid_t y, const hid_t stats[4]);

#endif /* ODEGEN_H */
