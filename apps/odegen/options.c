/* options.c - the command line of hpc-odegen: its option table, the checks
 * that involve several options, and the parts of --help the kit cannot
 * derive (the systems, the file layout, the statuses).
 */
#include "config.h"
#include "hpc_app_h5.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "odegen.h"
#include "sha256.h"
#include "hpc_ode.h"

/* What the table parses into: the program's options themselves (their
 * defaults here), which ode_opts_system takes and ode_opts_finish
 * completes. */
static ode_opts_t a = {.n_total = 10000, .t1 = 10, .rtol = 1e-3, .atol = 1e-6, .max_step = INFINITY,
                       .x0_a = 0, .x0_b = 1, .sync_every = 30, .max_events = 10};

static int take_method(const char *v, void *dest)
{
    for (int m = 0; m < ODE_NMETHODS; m++)
        if (strcasecmp(v, ode_method_name(m)) == 0) {
            *(int *)dest = m;
            return 0;
        }
    if (strcasecmp(v, "Radau") == 0 || strcasecmp(v, "LSODA") == 0 || strcasecmp(v, "SDIRK") == 0)
        return HPC_ERR(HPC_ERR_ARG, "%s is not offered: for stiff systems take BDF (SUNDIALS CVODE's) or ESDIRK "
                       "(SUNDIALS ARKODE's implicit Runge-Kutta); see docs/odegen.md", v);
    return HPC_ERR(HPC_ERR_ARG, "expected RK45, RK23, DOP853, BDF or ESDIRK");
}

static int take_param(const char *v, void *dest)
{
    ode_opts_t *o = dest;
    if (o->nparams == (int)(sizeof o->params / sizeof o->params[0]))
        return HPC_ERR(HPC_ERR_ARG, "more than 64 parameters");
    if (!strchr(v, '=') || v[0] == '=')
        return HPC_ERR(HPC_ERR_ARG, "expected NAME=VALUE");
    o->params[o->nparams++] = v;
    return 0;
}

/* MU,SIGMA: two finite numbers of any length, SIGMA >= 0 */
static int take_normal(const char *v, void *dest)
{
    ode_opts_t *o = dest;
    const char *comma = strchr(v, ',');
    char *mu = comma ? strndup(v, (size_t)(comma - v)) : NULL;
    int ok = mu && hpc_parse_double(mu, 0, &o->x0_a) == 0 &&
             hpc_parse_double(comma + 1, 0, &o->x0_b) == 0;
    free(mu);
    hpc_error_clear();
    if (!ok)
        return HPC_ERR(HPC_ERR_ARG, "expected MU,SIGMA (two finite numbers)");
    if (o->x0_b < 0)
        return HPC_ERR(HPC_ERR_ARG, "SIGMA must be >= 0");
    o->x0_dist = ODE_X0_NORMAL;
    return 0;
}

/* I/N with 0 <= I < N */
static int take_shard(const char *v, void *dest)
{
    ode_opts_t *o = dest;
    int64_t in[2];
    if (hpc_parse_int64s(v, "/", in, 2) < 0 || in[1] < 1 || in[0] < 0 || in[0] >= in[1] || in[1] > 1000000) {
        hpc_error_clear();
        return HPC_ERR(HPC_ERR_ARG, "expected I/N with 0 <= I < N (array task I of N)");
    }
    o->shard = in[0];
    o->shards = in[1];
    return 0;
}

static int x0_low_set, x0_high_set;
static int take_low(const char *v, void *dest)
{
    x0_low_set = 1;
    if (hpc_parse_double(v, 0, (double *)dest) == 0) return 0;
    hpc_error_clear();
    return HPC_ERR(HPC_ERR_ARG, "not a finite number");
}

static int take_high(const char *v, void *dest)
{
    x0_high_set = 1;
    return take_low(v, dest);
}

/* The key flags (HPC_OPT_KEY) mark what shapes the data and is final as
 * parsed: the options key that --resume compares is built from them, and
 * ode_opts_finish adds what is resolved later (the system, its dimension
 * and parameters, rtol after scipy's floor, x0, the chunk, the version). */
static const hpc_opt_t options[] = {
    HPC_SECTION("Problem:"),
    HPC_STRING("system", 's', &a.system, "NAME", 0,
               "built-in system to solve (default decay-sin), see the list below"),
    HPC_STRING("system-file", 0, &a.system_file, "FILE.c", 0,
               "solve the system in FILE.c (written against hpc_ode.h, see the guide's \"Your own "
               "system\"): compiled at run time with the system's C compiler (HPC_ODEGEN_CC) once, "
               "and kept in a cache by its content (HPC_ODEGEN_CACHE); every rank loads the same "
               "object.  A compile error is one line after the compiler's message, exit 2"),
    HPC_STRING("system-lib", 0, &a.system_lib, "FILE.so", 0,
               "solve the system compiled before into FILE.so by --compile-to (for nodes without "
               "a C compiler)"),
    HPC_STRING("compile-to", 0, &a.compile_to, "FILE.so", 0,
               "compile --system-file into FILE.so for --system-lib, and stop"),
    HPC_INT("dim", 'd', &a.dim_arg, "D", 1, 1 << 20, 0,
            "state dimension, where the system allows a choice"),
    HPC_CALL("param", 'p', &a, "NAME=VALUE", take_param, 0,
             "set a system parameter (repeatable); a vector parameter takes NAME=V1,V2,... or "
             "NAME=@FILE (numbers separated by blanks, commas or new lines)"),
    HPC_INT("n", 'n', &a.n_total, "N", 1, INT64_MAX, HPC_OPT_KEY, "number of trajectories (default 10000)"),
    HPC_DOUBLE("t0", 0, &a.t0, "T0", 0, 0, HPC_OPT_KEY, "start of the interval (default 0)"),
    HPC_DOUBLE("t1", 0, &a.t1, "T1", 0, 0, HPC_OPT_KEY, "end of the interval, T1 > T0 (default 10)"),
    HPC_INT("nt", 0, &a.nt_arg, "NT", 2, 100000000, 0,
            "output times, uniform from T0 to T1 inclusive (default 101)"),
    HPC_STRING("t-eval", 0, &a.t_eval, "FILE", 0,
               "output times from FILE instead (numbers separated by blanks, commas or new lines, "
               "ascending, within [T0, T1]; any spacing), as scipy's t_eval"),
    HPC_CALL("x0-low", 0, &a.x0_a, "L", take_low, 0,
             "initial conditions uniform in [L, H), drawn per trajectory from the stream "
             "(seed, index) (default 0)"),
    HPC_CALL("x0-high", 0, &a.x0_b, "H", take_high, 0, "see --x0-low (default 1)"),
    HPC_CALL("x0-normal", 0, &a, "MU,SIGMA", take_normal, 0,
             "initial conditions normal instead"),
    HPC_INT("seed", 0, &a.seed, "S", 0, INT64_MAX, HPC_OPT_KEY, "random seed (default 0)"),
    HPC_SECTION("Solver (as scipy's solve_ivp):"),
    HPC_CALL("method", 'm', &a.method, "M", take_method, 0,
             "RK45 (default), RK23 or DOP853: explicit, step for step as scipy's; BDF: implicit, "
             "for stiff systems (SUNDIALS CVODE's variable-order BDF, dense LU; the system's "
             "Jacobian where its file has one, else difference quotients; CPU only; values "
             "within the tolerances of scipy's BDF and Radau, not its steps); ESDIRK: implicit "
             "Runge-Kutta for stiff systems (SUNDIALS ARKODE's ESDIRK of order 4, L-stable, the "
             "same Jacobian and LU; CPU only).  Names in any case"),
    HPC_DOUBLE("rtol", 0, &a.rtol, "R", 0, INFINITY, HPC_OPT_BOUNDS | HPC_OPT_GT,
               "relative tolerance, R > 0 (default 1e-3; values below 100 eps are raised to 100 "
               "eps, as scipy does)"),
    HPC_DOUBLE("atol", 0, &a.atol, "A", 0, INFINITY, HPC_OPT_KEY | HPC_OPT_BOUNDS,
               "absolute tolerance, A >= 0 (default 1e-6)"),
    HPC_DOUBLE("max-step", 0, &a.max_step, "H", 0, INFINITY,
               HPC_OPT_KEY | HPC_OPT_BOUNDS | HPC_OPT_GT | HPC_OPT_INF, "largest step (default inf)"),
    HPC_DOUBLE("first-step", 0, &a.first_step, "H", 0, INFINITY,
               HPC_OPT_KEY | HPC_OPT_BOUNDS | HPC_OPT_GT,
               "first step, 0 < H <= T1 - T0 (default: scipy's select_initial_step)"),
    HPC_INT("max-steps", 0, &a.max_steps, "K", 0, 2000000000, HPC_OPT_KEY,
            "give a trajectory up after K step attempts (default 0 = no limit, as scipy)"),
    HPC_INT("max-events", 0, &a.max_events, "K", 1, 100000, HPC_OPT_KEY,
            "keep the first K occurrences of each of the system's events per trajectory (time and "
            "state; all are counted) (default 10)"),
    HPC_CHOICE("device", 0, &a.device, "cpu|cuda", HPC_OPT_KEY, "where to integrate (default cpu)"),
    HPC_SECTION("Output:"),
    HPC_STRING("out", 'o', &a.out, "FILE", 0,
               "HDF5 file to write; written as FILE.partial and renamed when every rank has "
               "finished"),
    HPC_CHOICE("dtype", 0, &a.dtype, "float64|float32", HPC_OPT_KEY,
               "type of /x0 and /y in the file (default float64).  float32 halves the file and "
               "the writing and is what training reads anyway; the solver still computes in "
               "float64 and each value is rounded once, to 24 significant bits (relative error "
               "at most 6e-8, about 7 decimal digits: below any --rtol above 1e-7, but the "
               "values no longer equal scipy's bit for bit)"),
    HPC_DOUBLE("sync-every", 0, &a.sync_every, "SECONDS", 0, 1e9, HPC_OPT_BOUNDS,
               "make the data durable (fdatasync) every SECONDS and at the end, not per chunk "
               "(default 30; 0: after every batch of chunks).  A killed run loses no written "
               "chunk whatever SECONDS is (--resume checks them); a crashed node loses at most "
               "SECONDS of them"),
    HPC_FLAG("force", 0, &a.force, 0, "overwrite an existing FILE"),
    HPC_FLAG("resume", 0, &a.resume, 0,
             "continue FILE.partial of an interrupted run with the same options (starts afresh "
             "if there is none)"),
    HPC_CALL("shard", 0, &a, "I/N", take_shard, 0,
             "compute only shard I of N (0 <= I < N): trajectories [n I / N, n (I+1) / N), with "
             "the initial conditions of those indices, into FILE-shardIIII-ofNNNN.h5 (FILE less "
             "its .h5; I and N in four digits: ode.h5 -> ode-shard0003-of0008.h5).  Run it for "
             "I = 0 .. N-1 (a Slurm job array: one task each, see batch/odegen.sh), then --join N "
             "with the same --out"),
    HPC_INT("join", 0, &a.join, "N", 1, 1000000, 0,
            "compute nothing: check that the N shard files --shard I/N wrote for FILE are complete "
            "and made with the same options, and write FILE as HDF5 virtual datasets over them "
            "(a few KiB: the data stays in the shards, which must stay beside FILE; a missing "
            "one reads as NaN and status -127, and hpckit's programs refuse the file naming it)"),
    HPC_INT("chunk", 0, &a.chunk, "K", 1, 1 << 24, 0,
            "trajectories per work chunk (default: about 2 MiB of output, at most 1024; at most N)"),
    HPC_OPTS_END};

static void help_more(FILE *out)
{
    fprintf(out, "\nSystems (default parameters):\n");
    for (int i = 0; i < ode_system_count(); i++) {
        const ode_sys_t *s = ode_system_at(i);
        fprintf(out, "  %-15s", s->name);
        if (s->dim_min == s->dim_max)
            fprintf(out, " dim %d;", s->dim_min);
        else if (s->dim_max)
            fprintf(out, " dim %d..%d (default %d);", s->dim_min, s->dim_max, s->dim);
        else
            fprintf(out, " dim >= %d (default %d);", s->dim_min, s->dim);
        for (int k = 0; k < s->npar; k++) fprintf(out, " %s=%g", s->par_name[k], s->par_default[k]);
        for (int k = 0; k < s->nvec; k++) fprintf(out, " %s[%lld]", s->vec_name[k], (long long)s->vec_len(k, s->dim));
        fprintf(out, "\n  %15s %s\n", "", s->about);
    }
    fprintf(out, "Each is a file of the form --system-file takes (hpc_ode.h), installed in\n"
                 "PREFIX/share/hpckit/systems: copy one to write your own.\n");
}

const hpc_app_t ode_app = {
    .name = ODEGEN_PROG,
    .usage = "hpc-odegen [OPTIONS] --out FILE.h5\nhpc-mpiexec -n RANKS hpc-odegen [OPTIONS] --out FILE.h5",
    .about = "Solve N initial-value problems of one ODE system with an adaptive Dormand-Prince "
             "5(4) method that takes the same steps as scipy's solve_ivp(method='RK45'), and "
             "write the trajectories on a uniform time grid to one HDF5 file.  Work is shared "
             "dynamically between the MPI ranks; the data does not depend on the number of "
             "ranks; a killed run continues with --resume.  'hpc-odegen -n 10000 --out ode.h5' "
             "is the classic example (decay-sin, 10 dims, t in [0, 10], x0 ~ U[0,1), 101 output "
             "times).",
    .opts = options,
    .help_more = help_more,
    .epilog =
        "File layout: /t [NT]; /x0 [N,D]; /y [N,NT,D] float64 (float32 with --dtype\n"
        "float32), contiguous; /traj [N] int64 (trajectory index), /component [D] int64;\n"
        "/stats/nsteps, /stats/nfev, /stats/nrejected [N] int32 (as scipy counts\n"
        "them); /stats/status [N] int8; /stats/done [chunks] uint8 and\n"
        "/stats/written [chunks] uint64 (resume bookkeeping, attribute 'internal')\n"
        "and their index /stats/chunk; root\n"
        "attributes: the options, the command line, hpckit version, rank count,\n"
        "wall time.  /traj, /t, /component and /stats/chunk are HDF5 dimension\n"
        "scales of the others (xarray and netCDF see dimensions traj, t,\n"
        "component, chunk); every dataset has a long_name; CF-1.10: units \"1\" on\n"
        "the dimensionless times, states and counts, /stats/status as CF flags.\n"
        "\n"
        "Status per trajectory (/stats/status); the run goes on after a failure and\n"
        "the rows of /y after it are NaN:\n"
        "     0  ok, reached t1\n"
        "    -1  step size underflow: the step fell below 10 ulp of t (as scipy's\n"
        "        'Required step size is less than spacing between numbers')\n"
        "    -2  non-finite: the state or its derivative became Inf or NaN\n"
        "    -3  --max-steps step attempts used up\n"
        "  -127  missing: a joined FILE read without the shard that holds it\n"
        "  -128  not computed yet (only in a FILE.partial)\n"
        "\n"
        "Exit status: 0 success; 1 bad data or I/O (existing output without\n"
        "--force/--resume, unwritable output or not enough space for it, --resume\n"
        "on a file from other options, another run writing the same output, --join\n"
        "with a shard missing, unfinished or made with other options); 2 bad option\n"
        "or value, or --device cuda where a rank lacks a GPU or the CUDA module (the\n"
        "line names what is missing); 75 stopped by SIGUSR1, SIGTERM or Ctrl-C with\n"
        "FILE.partial resumable (run again with --resume); a second Ctrl-C aborts at\n"
        "once (the .partial stays resumable).\n"
        "\n"
        "Environment: HPC_PROGRESS=SECONDS: a progress line every SECONDS where\n"
        "neither stderr nor the launcher's is a terminal (default 60; 0: none);\n"
        "HPC_LOG=info HPC_LOG_ALL=1 adds per-rank solver and write times.\n"
        "\nExamples:\n"
        "  # the classic example: 10,000 trajectories of decay-sin\n"
        "  hpc-odegen -n 10000 --out ode.h5\n"
        "  # the Lorenz system on 8 ranks; after a stop, the same with --resume\n"
        "  hpc-mpiexec -n 8 hpc-odegen -s lorenz -n 1000000 --out lorenz.h5\n"
        "  # task 3 of a job array of 8, then the 8 shards as one file\n"
        "  hpc-odegen --shard 3/8 -n 8000000 --out big.h5\n"
        "  hpc-odegen --join 8 --out big.h5\n",
    .guide = "odegen.md"};

/* numbers separated by blanks, commas or new lines (# starts a comment
 * line) into v[0..n-1]; where must name the origin for the message */
static int parse_numbers(const char *text, const char *where, double *v, int64_t n, int64_t *got)
{
    int64_t k = 0;
    for (const char *p = text; *p;) {
        if (*p == '#') {
            p += strcspn(p, "\n");
            continue;
        }
        if (strchr(" \t\r\n,", *p)) {
            p++;
            continue;
        }
        size_t w = strcspn(p, " \t\r\n,#");
        char tok[64];
        double x;
        snprintf(tok, sizeof tok, "%.*s", (int)(w < 63 ? w : 63), p);
        if (w > 63 || hpc_parse_double(tok, 0, &x) < 0) {
            hpc_error_clear();
            return HPC_ERR(HPC_ERR_ARG, "%s: '%s' is not a finite number", where, tok);
        }
        if (v && k < n) v[k] = x;
        k++;
        p += w;
    }
    *got = k;
    return 0;
}

/* a vector parameter's value: V1,V2,... or @FILE (read by rank 0 for all) */
static int vector_value(ode_opts_t *o, int k, const char *v)
{
    char *text = NULL, where[300];
    size_t len;
    int64_t got = 0, n = o->vec_len[k];
    const char *name = o->sys->vec_name[k];
    if (v[0] == '@') {
        snprintf(where, sizeof where, "--param %s=%s", name, v);
        int rc = hpc_file_read_all(v + 1, (size_t)1 << 30, hpc_comm_world(), &text, &len);
        if (rc < 0) return HPC_ERR(HPC_ERR_ARG, "%s: %s", where, hpc_last_cause());
        v = text;
    } else {
        snprintf(where, sizeof where, "--param %s", name);
    }
    int rc = parse_numbers(v, where, o->vec[k], n, &got);
    free(text);
    if (rc < 0) return rc;
    if (got != n)
        return HPC_ERR(HPC_ERR_ARG, "%s: %lld numbers, system %s needs %lld (dim %d)", where, (long long)got,
                       o->sys->name, (long long)n, o->dim);
    return 0;
}

/* "name=value" for the chosen system (after all options are read, so
 * --param may come before --system). */
static int apply_param(ode_opts_t *o, const char *kv)
{
    const ode_sys_t *s = o->sys;
    const char *eq = strchr(kv, '=');
    size_t nl = (size_t)(eq - kv);
    for (int k = 0; k < s->npar; k++)
        if (strlen(s->par_name[k]) == nl && strncmp(s->par_name[k], kv, nl) == 0) {
            if (hpc_parse_double(eq + 1, 0, &o->par[k]) == 0) return 0;
            hpc_error_clear();
            return HPC_ERR(HPC_ERR_ARG, "--param %.*s: '%s' is not a finite number", (int)nl, kv, eq + 1);
        }
    for (int k = 0; k < s->nvec; k++)
        if (strlen(s->vec_name[k]) == nl && strncmp(s->vec_name[k], kv, nl) == 0) return vector_value(o, k, eq + 1);
    char names[256] = "";
    for (int k = 0; k < s->npar + s->nvec; k++) {
        strncat(names, k ? ", " : "", sizeof names - strlen(names) - 1);
        strncat(names, k < s->npar ? s->par_name[k] : s->vec_name[k - s->npar], sizeof names - strlen(names) - 1);
    }
    return HPC_ERR(HPC_ERR_ARG, "--param: system %s has no parameter '%.*s' (%s%s)", s->name, (int)nl, kv,
                   s->npar + s->nvec ? "it has: " : "it has none", names);
}

/* the vector parameters: NaN until given (--param) or set by the system's
 * setup hook (ode_params_setup) */
static int make_vectors(ode_opts_t *o)
{
    for (int k = 0; k < o->sys->nvec; k++) {
        int64_t n = o->sys->vec_len(k, o->dim);
        if (n < 1 || n > ((int64_t)1 << 27))
            return HPC_ERR(HPC_ERR_ARG, "system %s: vector parameter %s would have %lld numbers at dim %d",
                           o->sys->name, o->sys->vec_name[k], (long long)n, o->dim);
        o->vec_len[k] = n;
        if (!(o->vec[k] = malloc((size_t)n * sizeof(double))))
            return HPC_ERR(HPC_ERR_NOMEM, "vector parameter %s", o->sys->vec_name[k]);
        for (int64_t i = 0; i < n; i++) o->vec[k][i] = NAN;
    }
    return 0;
}

static int check_dim(ode_opts_t *o)
{
    const ode_sys_t *s = o->sys;
    if (o->dim_arg == 0) {
        o->dim = s->dim;
        return 0;
    }
    o->dim = (int)o->dim_arg;
    if (o->dim >= s->dim_min && (!s->dim_max || o->dim <= s->dim_max)) return 0;
    if (s->dim_min == s->dim_max)
        return HPC_ERR(HPC_ERR_ARG, "--dim %d: system %s has dimension %d", o->dim, s->name, s->dim_min);
    if (s->dim_max)
        return HPC_ERR(HPC_ERR_ARG, "--dim %d: system %s needs %d <= dim <= %d", o->dim, s->name, s->dim_min,
                       s->dim_max);
    return HPC_ERR(HPC_ERR_ARG, "--dim %d: system %s needs dim >= %d", o->dim, s->name, s->dim_min);
}

static int unknown_system(const ode_opts_t *o)
{
    char names[256] = "", esc[128];
    for (int i = 0; i < ode_system_count(); i++) {
        strncat(names, i ? ", " : "", sizeof names - strlen(names) - 1);
        strncat(names, ode_system_at(i)->name, sizeof names - strlen(names) - 1);
    }
    return HPC_ERR(HPC_ERR_ARG, "--system: unknown system '%s' (known: %s; your own: --system-file FILE.c)",
                   hpc_escape(o->system, esc, sizeof esc), names);
}

void ode_opts_system(ode_opts_t *o)
{
    *o = a;
    int given = !!o->system + !!o->system_file + !!o->system_lib;
    int rc = 0;
    if (given > 1)
        rc = HPC_ERR(HPC_ERR_ARG, "--system, --system-file and --system-lib exclude each other");
    else if (o->compile_to && !o->system_file)
        rc = HPC_ERR(HPC_ERR_ARG, "--compile-to needs --system-file (the source to compile)");
    else if (!o->system_file && !o->system_lib && !(o->sys = ode_system_find(o->system ? o->system : "decay-sin")))
        rc = unknown_system(o);
    hpc_app_agree_rc(rc, HPC_EXIT_USAGE, NULL);
    if (o->system_file || o->system_lib)
        ode_sys_load(o, o->system_file ? o->system_file : o->system_lib, !o->system_file,
                     o->compile_to ? -2 : o->method < ODE_NEXPLICIT ? o->method : -1);
    else
        o->sys_source = ode_system_source(o->sys);
    if (!o->sys_path) ode_sha256(o->sys_source, strlen(o->sys_source), o->sys_sha256);
}

/* --t-eval FILE: ascending times in [t0, t1] */
static int read_t_eval(ode_opts_t *o)
{
    char *text = NULL, where[300];
    size_t len;
    int64_t n = 0;
    snprintf(where, sizeof where, "--t-eval %s", o->t_eval);
    if (hpc_file_read_all(o->t_eval, (size_t)1 << 30, hpc_comm_world(), &text, &len) < 0)
        return HPC_ERR(HPC_ERR_ARG, "--t-eval: %s", hpc_last_cause());
    int rc = parse_numbers(text, where, NULL, 0, &n);
    if (!rc && (n < 1 || n > 100000000)) rc = HPC_ERR(HPC_ERR_ARG, "%s: %lld times (1 to 1e8)", where, (long long)n);
    if (!rc && !(o->tgrid = malloc((size_t)n * sizeof(double)))) rc = HPC_ERR(HPC_ERR_NOMEM, "%s", where);
    if (!rc) rc = parse_numbers(text, where, o->tgrid, n, &n);
    free(text);
    if (rc) return rc;
    o->nt = (int)n;
    for (int k = 0; k < o->nt; k++) {
        if (o->tgrid[k] < o->t0 || o->tgrid[k] > o->t1)
            return HPC_ERR(HPC_ERR_ARG, "%s: time %.17g is outside [t0, t1] = [%g, %g]", where, o->tgrid[k], o->t0,
                           o->t1);
        if (k && !(o->tgrid[k] > o->tgrid[k - 1]))
            return HPC_ERR(HPC_ERR_ARG, "%s: times must ascend (%.17g after %.17g)", where, o->tgrid[k],
                           o->tgrid[k - 1]);
    }
    return 0;
}

static int make_grid(ode_opts_t *o)
{
    if (o->t_eval) {
        if (o->nt_arg) return HPC_ERR(HPC_ERR_ARG, "--nt and --t-eval exclude each other");
        return read_t_eval(o);
    }
    o->nt = o->nt_arg ? (int)o->nt_arg : 101;
    if (!(o->tgrid = malloc((size_t)o->nt * sizeof(double)))) return HPC_ERR(HPC_ERR_NOMEM, "the time grid");
    ode_tgrid(o->t0, o->t1, o->nt, o->tgrid);
    return 0;
}

static void add_key(const ode_opts_t *o)
{
    /* the system by its source's hash: an edited file is another system */
    hpc_app_key_add("system=%s;system_sha256=%s;dim=%d;method=%s", o->sys->name, o->sys_sha256, o->dim,
                    ode_method_name(o->method));
    if (o->shards > 1) hpc_app_key_add("shard=%lld/%lld", (long long)o->shard, (long long)o->shards);
    for (int i = 0; i < o->sys->npar; i++) hpc_app_key_add("%s=%.17g", o->sys->par_name[i], o->par[i]);
    for (int k = 0; k < o->sys->nvec; k++)
        hpc_app_key_add("%s=hash:%016llx", o->sys->vec_name[k],
                        (unsigned long long)hpc_hash64(o->vec[k], (size_t)o->vec_len[k] * sizeof(double), 0));
    hpc_app_key_add("nt=%d;t=hash:%016llx", o->nt,
                    (unsigned long long)hpc_hash64(o->tgrid, (size_t)o->nt * sizeof(double), 0));
    hpc_app_key_add("rtol=%.17g;x0=%s(%.17g,%.17g);chunk=%lld;version=%s", o->rtol,
                    o->x0_dist == ODE_X0_NORMAL ? "normal" : "uniform", o->x0_a, o->x0_b,
                    (long long)o->chunk, hpc_version());
}

/* event names become HDF5 groups (events/NAME): one path component each,
 * none twice */
static int check_events(const ode_sys_t *s)
{
    const hpc_ode_event *ev = s->events;
    for (int e = 0; e < s->nev; e++) {
        const char *n = ev[e].name;
        if (!n || !*n || strchr(n, '/') || !strcmp(n, ".") || !strcmp(n, "..") || !strcmp(n, "occurrence") ||
            strlen(n) > 128)
            return HPC_ERR(HPC_ERR_ARG, "system %s: event %d needs a name of its own (1 to 128 characters, no '/', "
                           "not 'occurrence')", s->name, e);
        for (int k = 0; k < e; k++)
            if (!strcmp(n, ev[k].name)) return HPC_ERR(HPC_ERR_ARG, "system %s: two events named '%s'", s->name, n);
        if (ev[e].direction < -1 || ev[e].direction > 1)
            return HPC_ERR(HPC_ERR_ARG, "system %s: event %s: .direction must be -1, 0 or 1", s->name, n);
    }
    return 0;
}

int ode_opts_finish(ode_opts_t *o)
{
    HPC_TRY(check_dim(o));
    HPC_TRY(check_events(o->sys));
    if (o->sys->npar > ODE_MAXPAR || o->sys->nvec > ODE_MAXVEC)
        return HPC_ERR(HPC_ERR_ARG, "system %s has more than %d parameters or %d vector parameters", o->sys->name,
                       ODE_MAXPAR, ODE_MAXVEC);
    for (int k = 0; k < ODE_MAXPAR; k++) o->par[k] = k < o->sys->npar ? o->sys->par_default[k] : 0.0;
    HPC_TRY(make_vectors(o));
    for (int i = 0; i < o->nparams; i++)
        HPC_TRY(apply_param(o, o->params[i]));
    if (o->method < ODE_NEXPLICIT && !(o->sys->methods >> o->method & 1))
        return HPC_ERR(HPC_ERR_ARG, "--method %s: %s was compiled without it (--compile-to compiles every "
                       "method)", ode_method_name(o->method), o->sys_path ? o->sys_path : o->sys->name);
    if (o->method == ODE_ESDIRK && ode_implicit_available(ODE_BDF) && !ode_implicit_available(ODE_ESDIRK))
        return HPC_ERR(HPC_ERR_ARG, "--method ESDIRK: this hpc-odegen was built without SUNDIALS ARKODE (Debian: "
                       "libsundials-dev, 6.3 or later), which it needs");
    if (o->method >= ODE_NEXPLICIT && !ode_implicit_available(o->method))
        return HPC_ERR(HPC_ERR_ARG, "--method %s: this hpc-odegen was built without SUNDIALS (Debian: "
                       "libsundials-dev), which the implicit methods need", ode_method_name(o->method));
    if (o->device == ODE_DEV_CUDA && o->method >= ODE_NEXPLICIT)
        return HPC_ERR(HPC_ERR_ARG, "--method %s runs on the CPU only: the GPU takes RK45, RK23 and DOP853 "
                       "(--device cpu for %s)", ode_method_name(o->method), ode_method_name(o->method));
    if (o->device == ODE_DEV_CUDA && o->sys->nev)
        return HPC_ERR(HPC_ERR_ARG, "--device cuda: system %s has events, which are located on the CPU only "
                       "(--device cpu)", o->sys->name);
    /* the shard's range is n I / N and n (I + 1) / N: n N must fit */
    if (o->shards > 1 && o->n_total > INT64_MAX / o->shards)
        return HPC_ERR(HPC_ERR_ARG, "-n %lld with --shard I/%lld: n x N must fit in 64 bits (-n at most %lld for %lld "
                       "shards)", (long long)o->n_total, (long long)o->shards, (long long)(INT64_MAX / o->shards),
                       (long long)o->shards);
    int sharded = o->shards > 0;   /* --shard I/N given */
    if (!sharded) o->shards = 1;
    o->first = o->n_total * o->shard / o->shards;
    o->n = o->n_total * (o->shard + 1) / o->shards - o->first;
    if (o->rtol < 100 * 2.220446049250313e-16) o->rtol = 100 * 2.220446049250313e-16;
    /* --shard I/N: the shard's own file, the name --join N looks for */
    static char shard_out[4200];
    if (sharded && o->out) {
        if (strlen(o->out) > sizeof shard_out - 32) return HPC_ERR(HPC_ERR_ARG, "--out: the file name is too long");
        ode_shard_name(o->out, o->shard, o->shards, shard_out, sizeof shard_out);
        o->out = shard_out;
    }
    if (!(o->t1 > o->t0)) return HPC_ERR(HPC_ERR_ARG, "--t1 must be greater than --t0");
    HPC_TRY(make_grid(o));
    if ((double)o->nt * o->dim * sizeof(double) > 1073741824.0)
        return HPC_ERR(HPC_ERR_ARG, "--nt x dim: one trajectory would exceed 1 GiB");
    if (o->first_step > o->t1 - o->t0) return HPC_ERR(HPC_ERR_ARG, "--first-step must be <= t1 - t0");
    if (o->x0_dist == ODE_X0_NORMAL && (x0_low_set || x0_high_set))
        return HPC_ERR(HPC_ERR_ARG, "--x0-normal cannot be combined with --x0-low/--x0-high");
    if (o->x0_dist != ODE_X0_NORMAL && !(o->x0_a <= o->x0_b))
        return HPC_ERR(HPC_ERR_ARG, "--x0-low must not exceed --x0-high");
    if (o->resume && o->force) return HPC_ERR(HPC_ERR_ARG, "--resume and --force exclude each other");
    if (o->join && sharded) return HPC_ERR(HPC_ERR_ARG, "--join and --shard exclude each other");
    if (o->n < 1) return HPC_ERR(HPC_ERR_ARG, "--shard: this shard would hold no trajectory (N larger than -n)");
    if (!o->out) return HPC_ERR(HPC_ERR_ARG, "--out FILE.h5 is required (see --help)");
    /* a chunk is at most N trajectories, and its buffers at most 1 GiB */
    double per = (double)o->nt * o->dim * sizeof(double);
    int64_t cap = (int64_t)(1073741824.0 / per);
    int64_t chunk = o->chunk;   /* --chunk K, 0: not given */
    if (!chunk) o->chunk = ode_auto_chunk(o);
    if (chunk && o->chunk > cap)
        return HPC_ERR(HPC_ERR_ARG, "--chunk %lld: one chunk would need more than 1 GiB of buffers (at "
                 "most %lld trajectories of NT x dim here)", (long long)o->chunk, (long long)cap);
    if (o->chunk > o->n) o->chunk = o->n;
    add_key(o);
    return 0;
}

int64_t ode_auto_chunk(const ode_opts_t *o)
{
    /* about 2 MiB of /y per chunk: big enough for efficient HDF5 I/O,
     * small enough that ranks share the work evenly; at least 64 chunks
     * when N allows, so small runs still spread over the ranks. */
    double bytes = (double)o->nt * o->dim * sizeof(double);
    int64_t c = (int64_t)(2.0 * 1024 * 1024 / bytes);
    if (c > 1024) c = 1024;
    int64_t spread = (o->n + 63) / 64;
    if (c > spread) c = spread;
    if (c < 1) c = 1;
    return c;
}
