/* hpc_app.h - the app kit: what every hpckit program shares, written once.
 *
 * An app is its option table, its computation and its output layout; the
 * kit gives it, the same way for every program:
 *   - start and finish with uniform exit codes (HPC_EXIT_*): a bad flag,
 *     value or HPC_* setting is one line from one rank and status 2, bad
 *     data one line and status 1, --help and --version status 0;
 *   - a table-driven option parser: one table gives getopt_long, --help,
 *     strict value checks with one-line errors, and the options key that
 *     outputs record and --resume compares;
 *   - "all ranks agree, then fail once" (hpc_app_agree);
 *   - a stop flag set by SIGUSR1, SIGTERM or Ctrl-C that the ranks agree
 *     on at a step boundary (hpc_app_stop_agreed), a second Ctrl-C that
 *     aborts;
 *   - a progress line with rate and ETA, and the summary line;
 *   - run folders (metrics.csv appends, gnuplot plots at the end);
 *   - a dynamic work queue over an MPI atomic counter;
 *   - 2D process grids and block index maths;
 *   - a check that every rank holds the same replica.
 * It needs no HDF5: what writes or reads HDF5 (resumable outputs,
 * checkpoints, file kinds) is hpc_app_h5.h's, in libhpc-h5.
 * Messages are one line: control characters in user input are escaped.
 */
#ifndef HPC_APP_H
#define HPC_APP_H

#include <stdio.h>
#include <hpc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Exit status, the same for every program                             */
/* ------------------------------------------------------------------ */
enum {
    HPC_EXIT_OK = 0,
    HPC_EXIT_DATA = 1,        /* bad data, I/O, a run that failed */
    HPC_EXIT_USAGE = 2,       /* bad option, value or HPC_* setting */
    HPC_EXIT_STOPPED = 75     /* stopped by a signal (or Ctrl-C) at an agreed
                                 step, with the resumable state saved: run
                                 again with --resume (sysexits'
                                 EX_TEMPFAIL); hpc-matmul keeps none: run
                                 it again */
};

/* ------------------------------------------------------------------ */
/* Option tables                                                       */
/* ------------------------------------------------------------------ */
typedef enum {
    HPC_OPT_END = 0,    /* ends the table */
    HPC_OPT_SECTION,    /* a heading in --help: help = "Solver:" */
    HPC_OPT_FLAG,       /* int *dest = 1 */
    HPC_OPT_INT,        /* int64_t *dest in [ilo, ihi] */
    HPC_OPT_DOUBLE,     /* double *dest in [lo, hi] (see flags), finite
                           unless HPC_OPT_INF */
    HPC_OPT_SIZE,       /* size_t *dest: 64, 8K, 16M, 1G */
    HPC_OPT_STRING,     /* const char **dest (points into argv), non-empty */
    HPC_OPT_CHOICE,     /* int *dest = index of the value in choices "cpu|cuda" */
    HPC_OPT_CALL,       /* call(value, dest): 0, or HPC_ERR(HPC_ERR_ARG,
                           "expected MU,SIGMA"): the cause follows
                           "--name: 'value': " in the message */
    HPC_OPT_OPERANDS    /* hpc_operands_t *dest: the arguments that are not
                           options (FILE...); without such a row one is
                           an error ("unexpected argument") */
} hpc_opt_type_t;

/* HPC_OPT_OPERANDS' destination: the operands in order (pointers into argv) */
typedef struct {
    int n;
    char **v;
} hpc_operands_t;

enum {
    HPC_OPT_KEY = 1,     /* shapes the output: part of the options key */
    HPC_OPT_INF = 2,     /* DOUBLE: inf is a valid value */
    HPC_OPT_GT = 4,      /* DOUBLE: strictly greater than lo */
    HPC_OPT_LT = 8,      /* DOUBLE: strictly less than hi */
    HPC_OPT_BOUNDS = 16  /* DOUBLE: check [lo, hi] (bounds 0..0 otherwise mean none) */
};

typedef struct hpc_opt {
    hpc_opt_type_t type;
    const char *name;        /* long name, without "--" */
    char letter;             /* short option, 0 = none */
    void *dest;
    const char *arg;         /* the value's placeholder in --help: "N", "FILE" */
    const char *help;        /* one paragraph; the kit wraps it */
    int flags;               /* HPC_OPT_* */
    int64_t ilo, ihi;        /* INT bounds (both 0: any int64) */
    double lo, hi;           /* DOUBLE bounds (with HPC_OPT_BOUNDS) */
    const char *choices;     /* CHOICE: "cpu|cuda" */
    int (*call)(const char *value, void *dest);
} hpc_opt_t;

/* Table rows, one macro per kind (all fields set, so -Wextra is quiet):
 *   HPC_INT("nt", 0, &o.nt, "NT", 2, 100000000, HPC_OPT_KEY, "output times ..."),
 *   HPC_DOUBLE("rtol", 0, &o.rtol, "R", 0, 0, HPC_OPT_KEY | HPC_OPT_BOUNDS | HPC_OPT_GT, "..."),
 * bounds of DOUBLE need HPC_OPT_BOUNDS (lo, hi; with HPC_OPT_INF, hi may be INFINITY). */
#define HPC_SECTION(title) {HPC_OPT_SECTION, NULL, 0, NULL, NULL, (title), 0, 0, 0, 0, 0, NULL, NULL}
#define HPC_FLAG(name, letter, dest, flags, help) \
    {HPC_OPT_FLAG, (name), (letter), (dest), NULL, (help), (flags), 0, 0, 0, 0, NULL, NULL}
#define HPC_INT(name, letter, dest, arg, lo, hi, flags, help) \
    {HPC_OPT_INT, (name), (letter), (dest), (arg), (help), (flags), (lo), (hi), 0, 0, NULL, NULL}
#define HPC_DOUBLE(name, letter, dest, arg, lo, hi, flags, help) \
    {HPC_OPT_DOUBLE, (name), (letter), (dest), (arg), (help), (flags), 0, 0, (lo), (hi), NULL, NULL}
#define HPC_SIZE(name, letter, dest, arg, flags, help) \
    {HPC_OPT_SIZE, (name), (letter), (dest), (arg), (help), (flags), 0, 0, 0, 0, NULL, NULL}
#define HPC_STRING(name, letter, dest, arg, flags, help) \
    {HPC_OPT_STRING, (name), (letter), (dest), (arg), (help), (flags), 0, 0, 0, 0, NULL, NULL}
#define HPC_CHOICE(name, letter, dest, choices, flags, help) \
    {HPC_OPT_CHOICE, (name), (letter), (dest), (choices), (help), (flags), 0, 0, 0, 0, (choices), NULL}
#define HPC_CALL(name, letter, dest, arg, fn, flags, help) \
    {HPC_OPT_CALL, (name), (letter), (dest), (arg), (help), (flags), 0, 0, 0, 0, NULL, (fn)}
#define HPC_OPERANDS(dest, arg, help) \
    {HPC_OPT_OPERANDS, NULL, 0, (dest), (arg), (help), 0, 0, 0, 0, 0, NULL, NULL}
#define HPC_OPTS_END {HPC_OPT_END, NULL, 0, NULL, NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL}

typedef struct hpc_app {
    const char *name;        /* "hpc-odegen" */
    const char *usage;       /* what follows "Usage: NAME ", one or more lines */
    const char *about;       /* the paragraph(s) after the usage */
    const hpc_opt_t *opts;   /* ends with {HPC_OPT_END} */
    void (*help_more)(FILE *out);  /* sections after the options, or NULL */
    const char *epilog;      /* printed last (exit status, environment), or NULL */
    const char *guide;       /* its guide among the installed docs ("train.md"), or NULL */
} hpc_app_t;

/* Collective over MPI_COMM_WORLD.  hpc_init, then the HPC_* settings are
 * checked, then argv is parsed against app->opts (every rank parses the
 * same argv, so all reach the same verdict).  Every program also takes
 * -h/--help, --version and -q/--quiet (no progress line, no summary).
 * Returns only to run: on --help/--version rank 0 prints and every rank
 * exits 0; on a bad option or setting rank 0 prints one line
 * "NAME: reason" and every rank exits HPC_EXIT_USAGE.  Installs the stop
 * signals (SIGUSR1, SIGTERM, SIGINT: see hpc_app_stop_requested). */
HPC_EXPORT void hpc_app_start(const hpc_app_t *app, int *argc, char ***argv);
/* Collective.  A failure kept by hpc_app_fail_later on any rank ends the
 * job here (one line, its status); else hpc_finalize, and HPC_EXIT_OK
 * for main to return. */
HPC_EXPORT int hpc_app_finish(void);
HPC_EXPORT const char *hpc_app_name(void);
HPC_EXPORT int hpc_app_quiet(void);
/* The options key: "name=value;..." over the options flagged HPC_OPT_KEY
 * in table order (doubles %.17g, choices by name), as parsed.  Apps append
 * what else shapes their data (hpc_app_key_add). */
HPC_EXPORT const char *hpc_app_key(void);
HPC_EXPORT void hpc_app_key_add(const char *fmt, ...) HPC_PRINTF(1, 2);
/* 1 if option name (the long name, without "--") was on the command
 * line, whatever its value (its default given explicitly too), else 0:
 * an option that only some modes take is refused where it was given,
 * not only where it differs from its default. */
HPC_EXPORT int hpc_app_opt_given(const char *name);
/* The first field where two keys differ: "rtol: 0.001 in the file, 1e-06
 * now".  For one-line messages. */
HPC_EXPORT void hpc_app_key_diff(const char *was, const char *now, char *out, size_t len);

/* Collective over the world.  status 0 = fine on this rank.  If any rank
 * passes a non-zero status, the lowest such rank prints "NAME: message"
 * (one line) and every rank exits with that rank's status. */
HPC_EXPORT void hpc_app_agree(int status, const char *fmt, ...) HPC_PRINTF(2, 3);
/* The same for a libhpc result: rc < 0 fails with status and the error's
 * cause (hpc_last_cause), after "what: " when what is not NULL. */
HPC_EXPORT void hpc_app_agree_rc(int rc, int status, const char *what);
/* A program's test hook, HPC_<PROG>_TEST_<WHAT> (how the tests reach a
 * point no option reaches: stop rank R at step S, ...): 0 where var is
 * unset or empty, else n, with the n integers it holds (separated by ':'
 * or ',') in vals.  A malformed value is one line and exit 2, as a bad
 * setting is: never read as 0 or ignored.  Every rank reads the same
 * environment: call it where every rank does. */
HPC_EXPORT int hpc_app_test_hook(const char *var, int n, int64_t *vals);
/* --device cuda: every rank has a usable GPU (hpc_gpu_unavailable) and
 * the program's GPU module (hpc_dlmodule: its n symbols into fns), or
 * every rank exits HPC_EXIT_USAGE after one line from the first rank that
 * lacks them, naming what is missing (the loader's message).  Collective. */
HPC_EXPORT void hpc_app_gpu_module(const char *module, const char *const *symbols, void **fns, int n);
/* Local.  A failure one rank found where the others are not waiting for
 * it (rank 0's metrics file): kept, and agreed at the next
 * hpc_app_stop_agreed or hpc_app_stop_vote over the whole job or at
 * hpc_app_finish, where
 * every rank then exits as by hpc_app_agree (the lowest failing rank
 * prints the line).  The first one on a rank is kept. */
HPC_EXPORT void hpc_app_fail_later(int status, const char *fmt, ...) HPC_PRINTF(2, 3);
/* Every rank knows (same input): rank 0 prints "NAME: message", every
 * rank exits with status.  Collective.  HPC_EXIT_STOPPED under MPICH's
 * mpiexec ends through MPI_Abort from rank 0 once all ranks got here:
 * after passing a signal on, hydra reports 0 for ranks that exit. */
HPC_EXPORT void hpc_app_exit(int status, const char *fmt, ...) HPC_NORETURN HPC_PRINTF(2, 3);
/* Only this rank knows and the others may be anywhere (inside a
 * collective): print "NAME: message" and end the job (MPI_Abort). */
HPC_EXPORT void hpc_app_fatal(int status, const char *fmt, ...) HPC_NORETURN HPC_PRINTF(2, 3);
/* Collective: unless every node has bytes_per_rank times its number of
 * ranks available (hpc_mem_available), the rank that saw it says "NAME:
 * what needs X GiB per rank, ... on this node (HOST), but Y GiB is
 * available there" and all exit 1 - before the allocation, not as an OOM
 * kill or one rank's failed malloc. */
HPC_EXPORT void hpc_app_need_memory(double bytes_per_rank, const char *what);
/* This node's available memory in bytes: /proc/meminfo's MemAvailable, or
 * less where a memory cgroup of the process (or an ancestor) has a limit
 * (Slurm's task/cgroup, a container): its limit less its use, inactive
 * page cache counted as free.  cgroup v1 and v2. */
HPC_EXPORT int hpc_mem_available(size_t *out);
/* Rank 0, unless --quiet: "NAME: " + the line (the figure of merit). */
HPC_EXPORT void hpc_app_summary(const char *fmt, ...) HPC_PRINTF(1, 2);

/* ------------------------------------------------------------------ */
/* Stopping at a step boundary                                          */
/* ------------------------------------------------------------------ */
/* 1 once SIGUSR1, SIGTERM or a first SIGINT (Ctrl-C) reached this rank
 * (Slurm's warning before the time limit, preemption, scancel, a person).
 * Local, async-signal-safe flag.  A program that asks (this, _agreed or a
 * vote) stops at steps: from its first question on, the first SIGINT only
 * sets the flag and a second one (half a second or more later: one
 * keypress may arrive twice, from the terminal and from the launcher)
 * ends the rank at once by SIGINT's default action, which makes the
 * launcher end the others.  Before that, SIGINT ends the program at once
 * as it always did (nothing to keep yet; programs without steps). */
HPC_EXPORT int hpc_app_stop_requested(void);
/* Collective over comm: 1 on every rank if the signal reached any rank,
 * so all stop at the same step even when only some got it.  Where comm
 * holds every rank, a failure kept by hpc_app_fail_later on any rank ends
 * the job here instead (in the same allreduce: no cost without one). */
HPC_EXPORT int hpc_app_stop_agreed(MPI_Comm comm);
/* Test hook and for programs: behave as if the signal had arrived. */
HPC_EXPORT void hpc_app_stop_raise(void);
/* How the stop line begins: "interrupted" when any rank got Ctrl-C (as
 * far as the agreement told this rank), else "stopped by a signal":
 *   hpc_app_exit(HPC_EXIT_STOPPED, "%s after step %lld; ... --resume",
 *                hpc_app_stop_why(), ...) */
HPC_EXPORT const char *hpc_app_stop_why(void);
/* The agreement without a pause, for steps too short for an allreduce
 * each (SUMMA's panels, hpc-train's data-parallel steps): each step's
 * vote travels (MPI_Iallreduce) while the next step computes.  Every rank
 * of comm calls hpc_app_stop_vote once per step, at the same steps; it
 * returns 1 on every rank at the same step, one step after the signal
 * reached any rank.  Where comm holds every rank, a failure kept by
 * hpc_app_fail_later rides in the same vote and ends the job there, a
 * step after it was kept.  open is local; close is collective (it
 * completes the vote in flight) and takes NULL. */
typedef struct hpc_stop_vote hpc_stop_vote_t;
HPC_EXPORT int hpc_app_stop_vote_open(MPI_Comm comm, hpc_stop_vote_t **out);
HPC_EXPORT int hpc_app_stop_vote(hpc_stop_vote_t *v);
HPC_EXPORT void hpc_app_stop_vote_close(hpc_stop_vote_t *v);

/* ------------------------------------------------------------------ */
/* Progress line (rank 0, never with --quiet or HPC_PROGRESS=0):        */
/*   "odegen: 41230/100000 traj (41.2%), 52.1k traj/s, 0.8s elapsed,    */
/*    ETA 1.1s"                                                          */
/* redrawn in place at most every 0.5 s when stderr is a terminal;      */
/* otherwise (mpiexec, srun, a Slurm log) a new line every HPC_PROGRESS */
/* seconds (default 60).                                                */
/* ------------------------------------------------------------------ */
typedef struct hpc_progress hpc_progress_t;
/* NULL (a valid handle for the calls below) where nothing is shown. */
HPC_EXPORT hpc_progress_t *hpc_progress_start(const char *what, const char *unit, uint64_t total);
/* A resumed run: the count starts at done (shown as done/total; the rate
 * and ETA are this run's). */
HPC_EXPORT void hpc_progress_from(hpc_progress_t *p, uint64_t done);
/* The rate in another unit than the count: per_item of unit per item
 * counted (hpc-train counts steps and shows samples/s: per_item = the
 * samples of a step). */
HPC_EXPORT void hpc_progress_rate(hpc_progress_t *p, const char *unit, double per_item);
/* The program's own fields after the count ("epoch 3.20/10 loss 0.0123"):
 * fields(ctx, buf, len) writes them into buf; called only when a line is
 * drawn, so it may read the program's state of that moment. */
typedef void (*hpc_progress_fields_fn)(void *ctx, char *buf, size_t len);
HPC_EXPORT void hpc_progress_fields(hpc_progress_t *p, hpc_progress_fields_fn fields, void *ctx);
/* Cheap to call often: draws only when a line is due. */
HPC_EXPORT void hpc_progress_update(hpc_progress_t *p, uint64_t done);
/* Clears a redrawn line and frees p (NULL is fine). */
HPC_EXPORT void hpc_progress_end(hpc_progress_t *p);

/* ------------------------------------------------------------------ */
/* Formatting                                                          */
/* ------------------------------------------------------------------ */
/* (the strict number parsers hpc_parse_* are in hpc.h) */
/* "12.3 MiB" */
HPC_EXPORT void hpc_format_bytes(double bytes, char *buf, size_t len);
/* "1.23M" */
HPC_EXPORT void hpc_format_count(double v, char *buf, size_t len);
/* hpc_escape (hpc.h): s with control characters escaped, into buf. */

/* ------------------------------------------------------------------ */
/* Whole files (tables, tuning files, plots): complete or absent        */
/* ------------------------------------------------------------------ */
typedef struct hpc_file hpc_file_t;
/* 0 if path could be written (its folder exists and is writable, or it is
 * a writable device such as /dev/stdout); else HPC_ERR_IO naming it.  For
 * an early check, before the work whose result path will hold. */
HPC_EXPORT int hpc_file_check(const char *path);
/* Start writing path: a regular file or a new name is written under a
 * hidden temporary name in its folder (an existing file keeps its contents
 * until the commit); anything else (/dev/stdout, a pipe) in place. */
HPC_EXPORT int hpc_file_open(const char *path, hpc_file_t **out);
HPC_EXPORT FILE *hpc_file_stream(hpc_file_t *f);
/* fprintf that remembers why the first failed write failed (ENOSPC). */
HPC_EXPORT int hpc_file_printf(hpc_file_t *f, const char *fmt, ...) HPC_PRINTF(2, 3);
/* Check every write, flush, fsync, close, then rename onto path; frees f.
 * HPC_ERR_IO (the temporary removed, path untouched) if anything failed. */
HPC_EXPORT int hpc_file_commit(hpc_file_t *f);
/* Drop what was written (path untouched); frees f.  NULL is a no-op. */
HPC_EXPORT void hpc_file_discard(hpc_file_t *f);
/* Collective over comm: rank 0 reads path whole (at most max bytes) and
 * every rank gets its bytes, NUL-terminated, in *text (free it), and their
 * count in *len - one read of a shared file however many ranks need it,
 * and the same bytes on each.  HPC_ERR_IO (cannot read: rank 0's cause
 * names the path and errno) or HPC_ERR_DATA (larger than max) on every
 * rank alike. */
HPC_EXPORT int hpc_file_read_all(const char *path, size_t max, MPI_Comm comm, char **text, size_t *len);

/* ------------------------------------------------------------------ */
/* Run folders                                                          */
/* ------------------------------------------------------------------ */
typedef struct hpc_run hpc_run_t;
/* Collective.  Use folder dir (created with its parents by rank 0; an
 * existing file of that name, or an unwritable place, is HPC_ERR_IO),
 * locked for this run until hpc_run_close (dir/.lock): a folder another
 * live run holds is HPC_ERR_IO "run folder 'dir' is in use by another run
 * (pid and host: ...)".  Its files are written as new files renamed into
 * place: a symbolic link under one of their names is replaced, never
 * written through. */
HPC_EXPORT int hpc_run_open(const char *dir, MPI_Comm comm, hpc_run_t **out);
HPC_EXPORT const char *hpc_run_dir(const hpc_run_t *r);
/* dir/name into buf (HPC_ERR_ARG if it does not fit). */
HPC_EXPORT int hpc_run_path(const hpc_run_t *r, const char *name, char *buf, size_t len);
/* Rank 0: open the CSV file name (metrics.csv) with header "step,loss,...".
 * keep_upto < 0: start it afresh; >= 0 (a resumed run): keep the rows of
 * an existing file with the same header whose first column is <= keep_upto
 * and drop the rest (they belong to the interrupted part). */
HPC_EXPORT int hpc_run_csv_open(hpc_run_t *r, const char *name, const char *header, int64_t keep_upto);
/* Rank 0: append one row (fmt without the newline), flushed at once. */
HPC_EXPORT int hpc_run_csv_row(hpc_run_t *r, const char *fmt, ...) HPC_PRINTF(2, 3);
/* Rank 0: hpc_plot(png, script, dir).  1 if gnuplot is not installed (nothing drawn),
 * 0 when the PNG was written. */
HPC_EXPORT int hpc_run_plot(hpc_run_t *r, const char *png, const char *script);
HPC_EXPORT void hpc_run_close(hpc_run_t *r);
/* gnuplot's script drawn into png (pngcairo), run in folder cwd (NULL:
 * here; png relative to it).  1 if gnuplot is not installed, 0 drawn.
 * The PNG goes through gnuplot's standard output into an hpc_file, so
 * png never appears in the script (no quoting can break out of it) and
 * appears only when complete.  script must not hold user text: data files
 * it reads are named by the program (a run folder's metrics.csv). */
HPC_EXPORT int hpc_plot(const char *png, const char *script, const char *cwd);
/* Where gnuplot is ("" if not found): configure's, else PATH's. */
HPC_EXPORT const char *hpc_gnuplot(void);

/* ------------------------------------------------------------------ */
/* Dynamic work queue: a ticket counter in an MPI window on rank 0;     */
/* a rank that needs work takes the next tickets with one atomic.       */
/* ------------------------------------------------------------------ */
typedef struct hpc_workq hpc_workq_t;
/* Collective.  Items 0..nitems-1, except those with skip[i] != 0 (NULL:
 * none), each handed to exactly one rank, first come first served. */
HPC_EXPORT int hpc_workq_create(MPI_Comm comm, int64_t nitems, const uint8_t *skip,
                                hpc_workq_t **out);
/* Up to max items (one atomic), into items[]; returns how many (0 when
 * the queue is empty).  Aborts the job if MPI fails (a lost ticket
 * would silently drop work). */
HPC_EXPORT int64_t hpc_workq_take(hpc_workq_t *q, int64_t max, int64_t *items);
/* No more items for anyone (a rank got the stop signal): every later
 * take, on any rank, returns 0.  Independent. */
HPC_EXPORT void hpc_workq_close(hpc_workq_t *q);
/* Items taken so far by all ranks (rank 0 only; others 0). */
HPC_EXPORT int64_t hpc_workq_taken(hpc_workq_t *q);
/* Items this queue hands out (nitems less the skipped ones). */
HPC_EXPORT int64_t hpc_workq_pending(const hpc_workq_t *q);
/* MPI applies passive-target atomics only when the target enters the
 * library: a rank that computes for long (rank 0 above all, or a rank
 * driving a GPU) calls this every few milliseconds.  Cheap. */
HPC_EXPORT void hpc_workq_poll(void);
/* Collective: every rank has left its loop. */
HPC_EXPORT void hpc_workq_free(hpc_workq_t *q);

/* ------------------------------------------------------------------ */
/* 2D process grids and block maths                                    */
/* ------------------------------------------------------------------ */
typedef struct hpc_grid hpc_grid_t;
/* The most nearly square prows x pcols = nranks with prows <= pcols
 * (1 x P for a prime P). */
HPC_EXPORT void hpc_grid_dims(int nranks, int *prows, int *pcols);
/* Collective.  Rank r of comm sits at row r / pcols, column r % pcols.
 * prows = pcols = 0: hpc_grid_dims.  prows * pcols != size: HPC_ERR_ARG. */
HPC_EXPORT int hpc_grid_create(MPI_Comm comm, int prows, int pcols, hpc_grid_t **out);
HPC_EXPORT int hpc_grid_prows(const hpc_grid_t *g);
HPC_EXPORT int hpc_grid_pcols(const hpc_grid_t *g);
HPC_EXPORT int hpc_grid_row(const hpc_grid_t *g);     /* my row */
HPC_EXPORT int hpc_grid_col(const hpc_grid_t *g);     /* my column */
HPC_EXPORT MPI_Comm hpc_grid_row_comm(const hpc_grid_t *g);  /* my row: rank = column */
HPC_EXPORT MPI_Comm hpc_grid_col_comm(const hpc_grid_t *g);  /* my column: rank = row */
HPC_EXPORT void hpc_grid_free(hpc_grid_t *g);
/* Block i of n split into parts as evenly as possible (the first n %
 * parts blocks one larger): start and count. */
HPC_EXPORT void hpc_block_range(int64_t n, int parts, int i, int64_t *start, int64_t *count);
/* The block that holds index k of that split. */
HPC_EXPORT int hpc_block_owner(int64_t n, int parts, int64_t k);
/* Block-cyclic (ScaLAPACK): blocks of nb over nprocs.  Local length on
 * iproc (NUMROC), owner of global index k, its local index, and back. */
HPC_EXPORT int64_t hpc_bc_numroc(int64_t n, int64_t nb, int iproc, int nprocs);
HPC_EXPORT int hpc_bc_owner(int64_t k, int64_t nb, int nprocs);
HPC_EXPORT int64_t hpc_bc_local(int64_t k, int64_t nb, int nprocs);
HPC_EXPORT int64_t hpc_bc_global(int64_t l, int64_t nb, int iproc, int nprocs);

/* ------------------------------------------------------------------ */
/* Replicas: the same bytes on every rank?                              */
/* ------------------------------------------------------------------ */
/* Collective over comm: *same = 1 if buf holds the same bytes on every
 * rank (a 64-bit hash per rank, compared with one allreduce), else 0. */
HPC_EXPORT int hpc_all_same(const void *buf, size_t bytes, MPI_Comm comm, int *same);
/* A 64-bit hash of bytes, chained through seed (not cryptographic: it
 * finds torn or stale data, not an adversary; hpc_app_h5.h's resumable
 * outputs checksum their parts with it). */
HPC_EXPORT uint64_t hpc_hash64(const void *buf, size_t bytes, uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif /* HPC_APP_H */
