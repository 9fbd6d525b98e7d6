/* odegen.h - internal interfaces of hpc-odegen (one module per concern).
 *
 *   systems.c  the built-in systems (data/systems, compiled in through
 *              builtin/), x0, parameters
 *   sysfile.c  a system from the user's file: compiled at run time, cached,
 *              loaded (or a shared object made so)
 *   options.c  the option table, the checks across options, --help extras
 *   erk.h      the explicit engine (RK23, RK45, DOP853 in 8 SIMD lanes),
 *              compiled with each system (sys_lanes.h)
 *   cuda.cu    the GPU engine (erk.h with the system, one trajectory per
 *              thread, compiled by NVRTC)
 *   output.c   the HDF5 file: layout and attributes (resume, done flags
 *              and the atomic finish come from the app kit's hpc_out)
 *   main.c     the run: wiring, progress, summary
 */
#ifndef ODEGEN_H
#define ODEGEN_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>
#include "hpc_app_h5.h"
#include "ode_prob.h"
#include "ode_sys.h"

#define ODEGEN_PROG "hpc-odegen"

/* ---- systems.c: the built-ins (each an ode_sys_t, ode_sys.h) ---- */
int ode_system_count(void);
const ode_sys_t *ode_system_at(int i);
const ode_sys_t *ode_system_find(const char *name);
/* A built-in's file (data/systems/NAME.c) as text; NULL for another. */
const char *ode_system_source(const ode_sys_t *s);

/* ---- options.c ---- */
enum { ODE_X0_UNIFORM = 0, ODE_X0_NORMAL = 1 };
enum { ODE_DEV_CPU = 0, ODE_DEV_CUDA = 1 };
enum { ODE_F64 = 0, ODE_F32 = 1 };          /* --dtype of /x0 and /y */
#define ODE_MAXPAR 64                      /* scalar parameters of a system */
#define ODE_MAXEV 16                       /* its events (HPC_ODE_MAX_EVENTS) */
#define ODE_MAXVEC 16                      /* vector parameters */

/* The options: the option table's destinations are its fields (what
 * the command line gave), ode_opts_system and ode_opts_finish derive the
 * rest in place and check. */
typedef struct {
    /* --system, --system-file, --system-lib as given; --param NAME=VALUE
     * in order; --dim and --nt as given (0: not given) */
    const char *system, *system_file, *system_lib;
    const char *params[64];
    int nparams;
    int64_t dim_arg, nt_arg;
    const ode_sys_t *sys;
    /* where the system came from: NULL for a built-in, else the path given
     * to --system-file or --system-lib; its C source (NULL where a
     * --system-lib carries none) and that text's SHA-256 */
    const char *sys_path;
    const char *sys_source;
    char sys_sha256[65];
    int dim;
    double par[ODE_MAXPAR];        /* the system's scalar parameters, in its order */
    double *vec[ODE_MAXVEC];       /* its vector parameters, vec_len[k] numbers each */
    int64_t vec_len[ODE_MAXVEC];
    void *user;                    /* the block its functions read (ode_params_setup) */
    int method;                    /* ODE_RK45, ... */
    int64_t n;                     /* this file's (-n: n_total) */
    double t0, t1;
    int nt;
    double *tgrid;                 /* the output times: linspace(t0, t1, nt) or --t-eval */
    const char *t_eval;            /* --t-eval FILE, or NULL */
    int64_t max_events;            /* occurrences of each event kept per trajectory */
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
    int64_t chunk;                 /* trajectories per work chunk (given: 0 = auto) */
    /* --shard I/N: this file holds trajectories [first, first + n) of
     * n_total; 0, 1, 0, n without it */
    int64_t shard, shards, first, n_total;
    int64_t join;                  /* --join N: make OUT from N shard files */
    const char *compile_to;        /* --compile-to FILE.so: compile --system-file, then stop */
} ode_opts_t;

/* The program: name, option table, help (for hpc_app_start). */
extern const hpc_app_t ode_app;
/* Collective, after hpc_app_start: the system (built-in, --system-file
 * compiled and loaded, or --system-lib loaded) into o->sys and where it
 * came from; a failure is one line and every rank exits (2). */
void ode_opts_system(ode_opts_t *o);
/* Then: check what involves several options, resolve the dimension,
 * parameters, method and output times into o, add them to the options
 * key.  Collective (files are read by rank 0 for all).  0, or
 * HPC_ERR_ARG with a one-line cause (a usage error). */
int ode_opts_finish(ode_opts_t *o);
/* Trajectories per chunk for these options (depends on n, nt, dim only,
 * never on the rank count, so a file can be resumed on any count). */
int64_t ode_auto_chunk(const ode_opts_t *o);
/* The name of a method ("RK45") and what it is, for the file. */
const char *ode_method_name(int method);
const char *ode_method_about(int method);

/* ---- systems.c: data keyed by (seed, index), never by rank ---- */
/* Output grid as numpy.linspace(t0, t1, nt). */
void ode_tgrid(double t0, double t1, int nt, double *t);
/* Initial conditions of trajectories [first, first+n) into x0[n][dim]. */
void ode_x0(const ode_opts_t *o, int64_t first, int64_t n, double *x0);
/* The parameter block (o->user) from the values, then the system's setup
 * hook (vector parameters drawn from the stream (seed, 2^64-1)); 0, or
 * HPC_ERR_ARG where a vector parameter is still unset. */
int ode_params_setup(ode_opts_t *o);
/* Fill a problem description (pointers into tgrid and o). */
void ode_make_prob(const ode_opts_t *o, const double *tgrid, ode_prob_t *p);

/* ---- sysfile.c: systems from files ---- */
/* Collective.  path compiled (rank 0, into the cache: HPC_ODEGEN_CACHE)
 * or found there, and loaded on every rank; lib: path is a shared object
 * made so (--compile-to).  only: the one explicit method to compile (its
 * ODE_RK45, ...; -1 none, for the implicit ones; -2 all of them).  Every rank checks it loaded the same bytes.  A
 * failure is one line from rank 0 (after the compiler's own message) and
 * every rank exits 2.  Fills o->sys, sys_path, sys_source, sys_sha256. */
void ode_sys_load(ode_opts_t *o, const char *path, int lib, int only);
/* The compiled object of the loaded --system-file (for --compile-to). */
const char *ode_sys_object(void);
/* The cache (rank-local): path of KEY.EXT in it, made by make(arg, tmp)
 * into a temporary file under the lock KEY.lock when absent (a second
 * process waits for the first and finds it made).  0, or make's error. */
int ode_cache_fetch(const char *key, const char *ext, int (*make)(void *arg, const char *tmp), void *arg,
                    char *path, size_t len);

/* ---- implicit.c: BDF and ESDIRK through SUNDIALS ---- */
/* 1 if this hpc-odegen has the implicit method (ODE_BDF: built with
 * SUNDIALS CVODE; ODE_ESDIRK: with ARKODE too). */
int ode_implicit_available(int method);
/* Integrate n trajectories, one after the other, with p->method; as the
 * explicit engine's solve.  0, or HPC_ERR_* (out of memory). */
int ode_implicit_solve(const ode_sys_t *sys, const ode_prob_t *p, int64_t n, const double *x0, double *yout,
                       ode_stat_t *stat, ode_evout_t *ev);
/* ---- cuda_load.c: the GPU (the module cuda.cu, see ode_cuda.h) ---- */
#include "ode_cuda.h"
/* Collective but solve.  The module, a GPU on every rank, the system's
 * kernel compiled by NVRTC for it or found in the cache, the device
 * buffers for batches of up to nmax trajectories: 0, or HPC_ERR_CUDA
 * with the cause.  A rank without a GPU or the module, or a kernel that
 * does not compile, ends every rank (exit 2, one line; NVRTC's message
 * first). */
int ode_cuda_open(const ode_opts_t *o, const ode_prob_t *p, int64_t nmax, ode_cuda_t **out);
int ode_cuda_solve(ode_cuda_t *c, int64_t n, const double *x0, double *yout, ode_stat_t *stat);
void ode_cuda_close(ode_cuda_t *c);

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
ode_out_t *ode_out_open(const ode_opts_t *o, int argc, char **argv, const double *tgrid);
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
    const ode_evout_t *ev;          /* the events (systems with events) */
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
int ode_out_totals(ode_out_t *w, int64_t *failed, int64_t *steps, int64_t fails_by[4], int64_t *stopped);
/* Collective.  Close, record the run, rename to the final name if all ok. */
int ode_out_finish(ode_out_t *w, double wall, int ok, int argc, char **argv);
const char *ode_status_legend(void);
/* Collective.  The dimension scales traj, t, component, attached to /x0,
 * /y and the four per-trajectory /stats datasets (nsteps, nfev,
 * nrejected, status); for output.c and join.c alike. */
int ode_scales(hid_t traj, hid_t t, hid_t component, hid_t x0, hid_t y, const hid_t stats[4]);

#endif /* ODEGEN_H */
