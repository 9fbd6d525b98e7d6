/* options.c - the command line of hpc-odegen and its --help.
 *
 * Every rank parses the same argv, so every rank reaches the same verdict
 * and they can all leave through hpc_die_usage() together.
 */
#include "config.h"
#include "hpc.h"

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "odegen.h"

enum {
    OPT_T0 = 256, OPT_T1, OPT_NT, OPT_RTOL, OPT_ATOL, OPT_MAX_STEP, OPT_FIRST_STEP,
    OPT_MAX_STEPS, OPT_X0_LOW, OPT_X0_HIGH, OPT_X0_NORMAL, OPT_SEED, OPT_RESUME,
    OPT_FORCE, OPT_DEVICE, OPT_CHUNK
};

static const struct option long_opts[] = {
    {"system", required_argument, NULL, 's'},
    {"dim", required_argument, NULL, 'd'},
    {"param", required_argument, NULL, 'p'},
    {"n", required_argument, NULL, 'n'},
    {"t0", required_argument, NULL, OPT_T0},
    {"t1", required_argument, NULL, OPT_T1},
    {"nt", required_argument, NULL, OPT_NT},
    {"rtol", required_argument, NULL, OPT_RTOL},
    {"atol", required_argument, NULL, OPT_ATOL},
    {"max-step", required_argument, NULL, OPT_MAX_STEP},
    {"first-step", required_argument, NULL, OPT_FIRST_STEP},
    {"max-steps", required_argument, NULL, OPT_MAX_STEPS},
    {"x0-low", required_argument, NULL, OPT_X0_LOW},
    {"x0-high", required_argument, NULL, OPT_X0_HIGH},
    {"x0-normal", required_argument, NULL, OPT_X0_NORMAL},
    {"seed", required_argument, NULL, OPT_SEED},
    {"out", required_argument, NULL, 'o'},
    {"resume", no_argument, NULL, OPT_RESUME},
    {"force", no_argument, NULL, OPT_FORCE},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"chunk", required_argument, NULL, OPT_CHUNK},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

void ode_print_help(void)
{
    printf(
"Usage: hpc-odegen [OPTIONS] --out FILE.h5\n"
"       mpiexec -n RANKS hpc-odegen [OPTIONS] --out FILE.h5\n"
"\n"
"Solve N initial-value problems of one ODE system with an adaptive\n"
"Dormand-Prince 5(4) method that takes the same steps as scipy's\n"
"solve_ivp(method='RK45'), and write the trajectories on a uniform time\n"
"grid to one HDF5 file.  Work is shared dynamically between the MPI ranks;\n"
"the data does not depend on the number of ranks; a killed run continues\n"
"with --resume.  'hpc-odegen -n 10000 --out ode.h5' is the classic example\n"
"(decay-sin, 10 dims, t in [0, 10], x0 ~ U[0,1), 101 output times).\n"
"\n"
"Problem:\n"
"  -s, --system NAME      system to solve (default decay-sin), see below\n"
"  -d, --dim D            state dimension, where the system allows a choice\n"
"  -p, --param NAME=VALUE set a system parameter (repeatable)\n"
"  -n, --n N              number of trajectories (default 10000)\n"
"      --t0 T0, --t1 T1   time interval, T1 > T0 (default 0, 10)\n"
"      --nt NT            output times, uniform from T0 to T1 inclusive, NT >= 2\n"
"                         (default 101)\n"
"  Initial conditions, drawn per trajectory from the stream (seed, index):\n"
"      --x0-low L --x0-high H   uniform in [L, H) (default 0, 1)\n"
"      --x0-normal MU,SIGMA     normal\n"
"      --seed S           random seed, 0 <= S < 2^63 (default 0)\n"
"\n"
"Solver (as scipy's RK45):\n"
"      --rtol R           relative tolerance, R > 0 (default 1e-3; values\n"
"                         below 100 eps are raised to 100 eps, as scipy does)\n"
"      --atol A           absolute tolerance, A >= 0 (default 1e-6)\n"
"      --max-step H       largest step (default inf)\n"
"      --first-step H     first step, 0 < H <= T1 - T0 (default: scipy's\n"
"                         select_initial_step)\n"
"      --max-steps K      give a trajectory up after K step attempts\n"
"                         (default 0 = no limit, as scipy)\n"
"      --device cpu|cuda  where to integrate (default cpu)\n"
"\n"
"Output:\n"
"  -o, --out FILE         HDF5 file to write; written as FILE.partial and\n"
"                         renamed when every rank has finished\n"
"      --force            overwrite an existing FILE\n"
"      --resume           continue FILE.partial of an interrupted run with\n"
"                         the same options (starts afresh if there is none)\n"
"      --chunk K          trajectories per work chunk and HDF5 chunk\n"
"                         (default: about 2 MiB of output, at most 1024)\n"
"  -q, --quiet            no progress line and no summary\n"
"  -h, --help             this text\n"
"\n"
"Systems (default parameters):\n");
    for (int i = 0; i < ode_system_count(); i++) {
        const ode_system_info_t *s = ode_system_at(i);
        printf("  %-15s", s->name);
        if (s->dim_min == s->dim_max)
            printf(" dim %d;", s->dim_min);
        else if (s->dim_max)
            printf(" dim %d..%d (default %d);", s->dim_min, s->dim_max, s->dim_default);
        else
            printf(" dim >= %d (default %d);", s->dim_min, s->dim_default);
        for (int k = 0; k < s->npar; k++)
            printf(" %s=%g", s->par_name[k], s->par_default[k]);
        printf("\n  %15s %s\n", "", s->summary);
    }
    printf(
"\n"
"File layout: /t [NT]; /x0 [N,D]; /y [N,NT,D] float64 chunked along\n"
"trajectories; /stats/nsteps, /stats/nfev, /stats/nrejected [N] int32 (as\n"
"scipy counts them); /stats/status [N] int8; root attributes: the options,\n"
"the command line, hpckit version, rank count, wall time.\n"
"\n"
"Status per trajectory (/stats/status); the run goes on after a failure and\n"
"the rows of /y after it are NaN:\n"
"     0  ok, reached t1\n"
"    -1  step size underflow: the step fell below 10 ulp of t (as scipy's\n"
"        'Required step size is less than spacing between numbers')\n"
"    -2  non-finite: the state or its derivative became Inf or NaN\n"
"    -3  --max-steps step attempts used up\n"
"  -128  not computed yet (only in a FILE.partial)\n"
"\n"
"Exit status: 0 success; 1 bad data or I/O (existing output without\n"
"--force/--resume, unwritable output, --resume on a file from other\n"
"options, no usable GPU for --device cuda); 2 bad option or value.\n"
"\n"
"Environment: HPC_PROGRESS=1 shows the progress line also when stderr is\n"
"not a terminal; HPC_LOG=info HPC_LOG_ALL=1 adds per-rank solver and write\n"
"times.  See docs/odegen.md.\n");
}

static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

static int parse_finite(const char *opt, const char *s, double *v, char *err, size_t len)
{
    if (hpc_parse_double(s, v) < 0 || !isfinite(*v))
        return fail(err, len, "%s: '%s' is not a finite number", opt, s);
    return 0;
}

static int parse_int(const char *opt, const char *s, long lo, long hi, long *v,
                     char *err, size_t len)
{
    if (hpc_parse_long(s, v) < 0)
        return fail(err, len, "%s: '%s' is not an integer", opt, s);
    if (*v < lo || *v > hi)
        return fail(err, len, "%s: %ld is out of range [%ld, %ld]", opt, *v, lo, hi);
    return 0;
}

/* "name=value" for the chosen system (applied after all options are read,
 * so --param may come before --system). */
static int apply_param(const ode_system_info_t *s, const char *kv, double *par,
                       char *err, size_t len)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv)
        return fail(err, len, "--param: expected NAME=VALUE, got '%s'", kv);
    size_t nl = (size_t)(eq - kv);
    for (int k = 0; k < s->npar; k++)
        if (strlen(s->par_name[k]) == nl && strncmp(s->par_name[k], kv, nl) == 0)
            return parse_finite("--param", eq + 1, &par[k], err, len);
    char names[256] = "";
    for (int k = 0; k < s->npar; k++) {
        strncat(names, k ? ", " : "", sizeof names - strlen(names) - 1);
        strncat(names, s->par_name[k], sizeof names - strlen(names) - 1);
    }
    return fail(err, len, "--param: system %s has no parameter '%.*s' (%s%s)", s->name,
                (int)nl, kv, s->npar ? "it has: " : "it has none", names);
}

static void defaults(ode_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->sys = ode_system_find("decay-sin");
    o->dim = 0;
    o->n = 10000;
    o->t0 = 0.0;
    o->t1 = 10.0;
    o->nt = 101;
    o->rtol = 1e-3;
    o->atol = 1e-6;
    o->max_step = INFINITY;
    o->x0_dist = ODE_X0_UNIFORM;
    o->x0_a = 0.0;
    o->x0_b = 1.0;
}

static int check(ode_opts_t *o, int have_low, int have_high, char *err, size_t len)
{
    const ode_system_info_t *s = o->sys;
    if (o->dim == 0)
        o->dim = s->dim_default;
    else if (o->dim < s->dim_min || (s->dim_max && o->dim > s->dim_max)) {
        if (s->dim_min == s->dim_max)
            return fail(err, len, "--dim %d: system %s has dimension %d", o->dim, s->name,
                        s->dim_min);
        if (s->dim_max)
            return fail(err, len, "--dim %d: system %s needs %d <= dim <= %d", o->dim, s->name,
                        s->dim_min, s->dim_max);
        return fail(err, len, "--dim %d: system %s needs dim >= %d", o->dim, s->name,
                    s->dim_min);
    }
    if ((double)o->nt * o->dim * sizeof(double) > 1073741824.0)
        return fail(err, len, "--nt %d x dim %d: one trajectory would exceed 1 GiB", o->nt, o->dim);
    if (!(o->t1 > o->t0))
        return fail(err, len, "--t1 %g must be greater than --t0 %g", o->t1, o->t0);
    if (!(o->rtol > 0))
        return fail(err, len, "--rtol %g must be > 0", o->rtol);
    if (o->rtol < 100 * 2.220446049250313e-16)
        o->rtol = 100 * 2.220446049250313e-16;   /* scipy's validate_tol */
    if (!(o->atol >= 0))
        return fail(err, len, "--atol %g must be >= 0", o->atol);
    if (!(o->max_step > 0))
        return fail(err, len, "--max-step %g must be > 0", o->max_step);
    if (o->first_step != 0 && !(o->first_step > 0 && o->first_step <= o->t1 - o->t0))
        return fail(err, len, "--first-step %g must be in (0, t1 - t0]", o->first_step);
    if (o->x0_dist == ODE_X0_NORMAL && (have_low || have_high))
        return fail(err, len, "--x0-normal cannot be combined with --x0-low/--x0-high");
    if (o->x0_dist == ODE_X0_UNIFORM && !(o->x0_a <= o->x0_b))
        return fail(err, len, "--x0-low %g must not exceed --x0-high %g", o->x0_a, o->x0_b);
    if (o->resume && o->force)
        return fail(err, len, "--resume and --force exclude each other");
    if (!o->out)
        return fail(err, len, "--out FILE.h5 is required (see --help)");
    if (o->out[0] == '\0')
        return fail(err, len, "--out: empty file name");
    return 0;
}

int ode_parse_args(int argc, char **argv, ode_opts_t *o, char *err, size_t len)
{
    const char *params[64];
    int nparams = 0, have_low = 0, have_high = 0;
    long v;

    defaults(o);
    opterr = 0;     /* we print one line of our own */
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":s:d:p:n:o:qh", long_opts, NULL)) != -1) {
        switch (c) {
        case 's':
            o->sys = ode_system_find(optarg);
            if (!o->sys) {
                char names[256] = "";
                for (int i = 0; i < ode_system_count(); i++) {
                    strncat(names, i ? ", " : "", sizeof names - strlen(names) - 1);
                    strncat(names, ode_system_at(i)->name, sizeof names - strlen(names) - 1);
                }
                return fail(err, len, "--system: unknown system '%s' (known: %s)", optarg, names);
            }
            break;
        case 'd':
            if (parse_int("--dim", optarg, 1, 1 << 20, &v, err, len)) return -1;
            o->dim = (int)v;
            break;
        case 'p':
            if (nparams == (int)(sizeof params / sizeof params[0]))
                return fail(err, len, "--param: too many");
            params[nparams++] = optarg;
            break;
        case 'n':
            if (hpc_parse_long(optarg, &v) < 0)
                return fail(err, len, "-n: '%s' is not an integer", optarg);
            if (v <= 0)
                return fail(err, len, "-n %ld: the number of trajectories must be > 0", v);
            o->n = v;
            break;
        case OPT_T0: if (parse_finite("--t0", optarg, &o->t0, err, len)) return -1; break;
        case OPT_T1: if (parse_finite("--t1", optarg, &o->t1, err, len)) return -1; break;
        case OPT_NT:
            if (hpc_parse_long(optarg, &v) < 0)
                return fail(err, len, "--nt: '%s' is not an integer", optarg);
            if (v < 2 || v > 100000000)
                return fail(err, len, "--nt %ld: need 2 <= NT <= 1e8 (the grid includes t0 and t1)", v);
            o->nt = (int)v;
            break;
        case OPT_RTOL: if (parse_finite("--rtol", optarg, &o->rtol, err, len)) return -1; break;
        case OPT_ATOL: if (parse_finite("--atol", optarg, &o->atol, err, len)) return -1; break;
        case OPT_MAX_STEP:
            if (hpc_parse_double(optarg, &o->max_step) < 0 || isnan(o->max_step))
                return fail(err, len, "--max-step: '%s' is not a number", optarg);
            break;
        case OPT_FIRST_STEP:
            if (parse_finite("--first-step", optarg, &o->first_step, err, len)) return -1;
            if (!(o->first_step > 0))
                return fail(err, len, "--first-step %g must be > 0", o->first_step);
            break;
        case OPT_MAX_STEPS:
            if (parse_int("--max-steps", optarg, 0, 2000000000L, &v, err, len)) return -1;
            o->max_steps = v;
            break;
        case OPT_X0_LOW:
            if (parse_finite("--x0-low", optarg, &o->x0_a, err, len)) return -1;
            have_low = 1;
            break;
        case OPT_X0_HIGH:
            if (parse_finite("--x0-high", optarg, &o->x0_b, err, len)) return -1;
            have_high = 1;
            break;
        case OPT_X0_NORMAL: {
            char buf[128];
            snprintf(buf, sizeof buf, "%s", optarg);
            char *comma = strchr(buf, ',');
            if (!comma)
                return fail(err, len, "--x0-normal: expected MU,SIGMA, got '%s'", optarg);
            *comma = '\0';
            if (parse_finite("--x0-normal MU", buf, &o->x0_a, err, len)) return -1;
            if (parse_finite("--x0-normal SIGMA", comma + 1, &o->x0_b, err, len)) return -1;
            if (o->x0_b < 0)
                return fail(err, len, "--x0-normal: SIGMA %g must be >= 0", o->x0_b);
            o->x0_dist = ODE_X0_NORMAL;
            break;
        }
        case OPT_SEED:
            if (parse_int("--seed", optarg, 0, INT64_MAX, &v, err, len)) return -1;
            o->seed = (uint64_t)v;
            break;
        case 'o': o->out = optarg; break;
        case OPT_RESUME: o->resume = 1; break;
        case OPT_FORCE: o->force = 1; break;
        case OPT_DEVICE:
            if (strcmp(optarg, "cpu") == 0)
                o->device = ODE_DEV_CPU;
            else if (strcmp(optarg, "cuda") == 0)
                o->device = ODE_DEV_CUDA;
            else
                return fail(err, len, "--device: '%s' is not cpu or cuda", optarg);
            break;
        case OPT_CHUNK:
            if (parse_int("--chunk", optarg, 1, 1 << 24, &v, err, len)) return -1;
            o->chunk = v;
            break;
        case 'q': o->quiet = 1; break;
        case 'h': return 1;
        case ':':
            return fail(err, len, "option %s needs a value", argv[optind - 1]);
        default:
            return fail(err, len, "unknown option '%s' (see --help)", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return fail(err, len, "unexpected argument '%s' (see --help)", argv[optind]);

    for (int k = 0; k < ODE_MAXPAR; k++)
        o->par[k] = k < o->sys->npar ? o->sys->par_default[k] : 0.0;
    for (int i = 0; i < nparams; i++)
        if (apply_param(o->sys, params[i], o->par, err, len))
            return -1;
    if (check(o, have_low, have_high, err, len))
        return -1;
    if (o->chunk == 0)
        o->chunk = ode_auto_chunk(o);
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
