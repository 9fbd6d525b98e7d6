/* sysfile.c - a system from the user's file: --system-file FILE.c is
 * compiled at run time, --system-lib FILE.so loaded as compiled before.
 *
 * Compiling: rank 0 writes the file, hpc-odegen's engine (its own copy
 * of the sources, odegen_texts.c) and two small translation units into a
 * fresh folder and runs the C compiler (HPC_ODEGEN_CC, default cc) as
 * the build compiles the built-ins: sys_host.h (the description, one
 * lane) and sys_lanes.h (the explicit engines, 8 lanes, -O3 by pragma,
 * no contraction), linked into one shared object that exports
 * ode_sys_user_get and the source text.  The same flags and the same
 * engine make a file's system bit for bit the built-in of the same text.
 *
 * The cache: objects are kept in HPC_ODEGEN_CACHE (default
 * $XDG_CACHE_HOME/hpckit/odegen or ~/.cache/hpckit/odegen: per user, on
 * the file system every node of a cluster sees) named by the SHA-256 of
 * what decides the object: the preprocessed file (so a header it
 * includes counts too), the engine's sources, the compiler's identity
 * (--version) and the flags.  One node compiles for all; a second run,
 * or another job at the same moment, takes the lock (flock on KEY.lock)
 * and finds the object there; an object appears under its name only
 * complete (written under a temporary name, then renamed).
 *
 * Loading: every rank opens the object (dlopen), checks the ABI and that
 * its bytes are the same as every other rank's (a node that saw another
 * file under the name is one line, not a silent difference).  Failures
 * are one line from rank 0 and exit 2 on every rank; a compile error
 * prints the compiler's own message first.
 */
#include "config.h"
#include "hpc_app.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "odegen.h"
#include "ode_texts.h"
#include "sha256.h"

/* the engine's files the object is compiled from */
static const char *const engine[] = {"hpc_ode.h", "ode_prob.h", "ode_sys.h", "erk.h", "erk_tableaux.h", "ode_events.h",
                                     "sys_lanes.h", "sys_host.h", "sys_params.h"};
#define NENGINE (int)(sizeof engine / sizeof engine[0])
/* what the build passes for the built-ins (AM_CFLAGS, -O2, odegen's
 * own); and, where the compiler takes them, the flags that make it store
 * the 8-lane vectors well (m4/hpc_odegen.m4) */
#define ODE_CFLAGS "-std=c11 -O2 -fPIC -ffp-contract=off -fvisibility=hidden -Wno-psabi"
#define ODE_VEC_CFLAGS "-mmove-max=256 -mstore-max=256"
static char cflags[256] = ODE_CFLAGS;

static char object[4096];   /* the object this run loaded */

const char *ode_sys_object(void)
{
    return object;
}

/* ---------------------------------------------------------------- */
/* The cache folder and the compiler                                 */
/* ---------------------------------------------------------------- */
static int make_dirs(const char *path)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0755) != 0 && errno != EEXIST) return -1;
            *s = '/';
        }
    return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int cache_dir(char *dir, size_t len)
{
    const char *c = hpc_setting_value("HPC_ODEGEN_CACHE", NULL), *x = getenv("XDG_CACHE_HOME"),
               *h = getenv("HOME");
    if (c && *c) snprintf(dir, len, "%s", c);
    else if (x && *x == '/') snprintf(dir, len, "%s/hpckit/odegen", x);
    else if (h && *h) snprintf(dir, len, "%s/.cache/hpckit/odegen", h);
    else return HPC_ERR(HPC_ERR_ARG, "no folder for compiled systems: set HPC_ODEGEN_CACHE (or HOME)");
    if (make_dirs(dir) != 0)
        return HPC_ERR(HPC_ERR_IO, "cannot make the folder for compiled systems '%s' (HPC_ODEGEN_CACHE): %s", dir,
                       strerror(errno));
    return 0;
}

static const char *compiler(void)
{
    const char *cc = hpc_setting_value("HPC_ODEGEN_CC", NULL);
    return cc && *cc ? cc : "cc";
}

/* s in single quotes for sh */
static void shell_quote(const char *s, char *buf, size_t len)
{
    size_t k = 0;
    if (len) buf[k++] = '\'';
    for (; *s && k + 5 < len; s++) {
        if (*s == '\'') {
            memcpy(buf + k, "'\\''", 4);
            k += 4;
        } else {
            buf[k++] = *s;
        }
    }
    if (k + 1 < len) buf[k++] = '\'';
    buf[k < len ? k : len - 1] = '\0';
}

/* Run cmd in folder dir through sh, its output (stdout and stderr) into
 * a malloc'd *out; the exit status, or -1 if it could not run. */
static int run(const char *dir, const char *cmd, char **out)
{
    char qd[4200], *line = malloc(strlen(cmd) + sizeof qd + 32);
    *out = NULL;
    if (!line) return -1;
    shell_quote(dir, qd, sizeof qd);
    sprintf(line, "cd %s && %s 2>&1", qd, cmd);
    fflush(NULL);
    FILE *p = popen(line, "r");
    free(line);
    if (!p) return -1;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (size_t r; buf && (r = fread(buf + n, 1, cap - n - 1, p)) > 0;) {
        n += r;
        if (n + 1 == cap) {
            char *b = realloc(buf, 2 * cap);
            if (!b) break;
            buf = b;
            cap *= 2;
        }
    }
    int st = pclose(p);
    if (buf) buf[n] = '\0';
    *out = buf;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int write_file(const char *dir, const char *name, const char *a, const char *b)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return HPC_ERR(HPC_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    int ok = fputs(a, f) >= 0 && (!b || fputs(b, f) >= 0);
    ok &= fclose(f) == 0;
    return ok ? 0 : HPC_ERR(HPC_ERR_IO, "cannot write '%s'", path);
}

/* text as a C string literal's body */
static char *c_string(const char *text)
{
    size_t n = strlen(text);
    char *s = malloc(4 * n + 1), *o = s;
    if (!s) return NULL;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '\\' || *p == '"' || *p == '?') *o++ = '\\', *o++ = (char)*p;
        else if (*p == '\n') *o++ = '\\', *o++ = 'n', *o++ = '"', *o++ = '\n', *o++ = '"';
        else if (*p < 32 || *p >= 127) o += sprintf(o, "\\%03o", *p);
        else *o++ = (char)*p;
    }
    *o = '\0';
    return s;
}

/* ---------------------------------------------------------------- */
/* Compiling (rank 0)                                                */
/* ---------------------------------------------------------------- */
typedef struct {
    const char *path;     /* as the user gave it */
    const char *text;     /* its bytes */
    char dir[4096];       /* the cache folder */
    char build[4200];     /* the scratch folder of this compile */
    char key[65];
    int only;             /* the one explicit method to compile (-1: none, -2: all) */
    char *log;            /* the compiler's message of a failure */
    const char *stage;    /* which step failed */
} job_t;

/* the scratch folder: the engine, the file (its diagnostics under the
 * user's own name), the translation units */
static int write_sources(job_t *j)
{
    snprintf(j->build, sizeof j->build, "%s/build.XXXXXX", j->dir);
    if (!mkdtemp(j->build)) return HPC_ERR(HPC_ERR_IO, "cannot make a folder in '%s': %s", j->dir, strerror(errno));
    for (int i = 0; i < NENGINE; i++) HPC_TRY(write_file(j->build, engine[i], ode_text(engine[i]), NULL));
    char line[4400], esc[4200], stem[256];
    size_t k = 0;
    for (const char *p = j->path; *p && k + 2 < sizeof esc; p++) {
        if (*p == '"' || *p == '\\') esc[k++] = '\\';
        esc[k++] = *p;
    }
    esc[k] = '\0';
    snprintf(line, sizeof line, "#line 1 \"%s\"\n", esc);
    HPC_TRY(write_file(j->build, "user.c", line, j->text));
    /* the name by default: the file's, less .c */
    char *dup = strdup(j->path);
    snprintf(stem, sizeof stem, "%s", dup ? basename(dup) : "system");
    free(dup);
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem) *dot = '\0';
    for (char *p = stem; *p; p++)
        if (*p == '"' || *p == '\\') *p = '_';
    HPC_TRY(write_file(j->build, "lanes.c", "#define ODE_SYS user\n#define ODE_SYS_FILE \"user.c\"\n"
                                             "#include \"sys_lanes.h\"\n", NULL));
    snprintf(line, sizeof line, "#define ODE_SYS user\n#define ODE_SYS_FILE \"user.c\"\n#define ODE_SYS_VISIBLE 1\n"
                                "#define ODE_SYS_NAME \"%s\"\n#include \"sys_host.h\"\n", stem);
    HPC_TRY(write_file(j->build, "host.c", line, NULL));
    char hex[65], *body = c_string(j->text);
    if (!body) return HPC_ERR(HPC_ERR_NOMEM, "the system's source");
    ode_sha256(j->text, strlen(j->text), hex);
    size_t n = strlen(body) + 512;
    char *src = malloc(n);
    if (src)
        snprintf(src, n, "/* the system's source, carried for the output files */\n"
                         "__attribute__((visibility(\"default\"))) const char ode_sys_user_source[] =\n\"%s\";\n"
                         "__attribute__((visibility(\"default\"))) const char ode_sys_user_sha256[] = \"%s\";\n",
                 body, hex);
    free(body);
    if (!src) return HPC_ERR(HPC_ERR_NOMEM, "the system's source");
    int rc = write_file(j->build, "src.c", src, NULL);
    free(src);
    return rc;
}

/* the key: SHA-256 over what decides the object */
static int make_key(job_t *j)
{
    char qi[4300], cmd[8800], *pre = NULL, *ver = NULL;
    snprintf(qi, sizeof qi, "-I");
    char *dup = strdup(j->path);
    if (!dup) return HPC_ERR(HPC_ERR_NOMEM, "the file name");
    char real[4096];
    const char *d = dirname(dup);
    shell_quote(realpath(d, real) ? real : d, qi + 2, sizeof qi - 2);
    free(dup);
    /* the file's own folder for its includes; -E: what the file includes
     * counts, its comments do not */
    snprintf(cmd, sizeof cmd, "%s %s " ODE_VEC_CFLAGS " -E -x c /dev/null >/dev/null", compiler(), cflags);
    if (run(j->build, cmd, &pre) == 0 && !strstr(cflags, ODE_VEC_CFLAGS))
        strncat(cflags, " " ODE_VEC_CFLAGS, sizeof cflags - strlen(cflags) - 1);
    free(pre);
    pre = NULL;
    snprintf(cmd, sizeof cmd, "%s %s %s -I. -DHPC_ODE_LANES=1 -E -P user.c", compiler(), cflags, qi);
    int st = run(j->build, cmd, &pre);
    if (st != 0) {
        j->log = pre;
        j->stage = "does not compile";
        free(ver);
        return HPC_ERR(HPC_ERR_ARG, "does not compile");
    }
    snprintf(cmd, sizeof cmd, "%s --version", compiler());
    if (run(j->build, cmd, &ver) != 0 || !ver) {
        free(pre);
        free(ver);
        return HPC_ERR(HPC_ERR_ARG, "the C compiler '%s' does not run (set HPC_ODEGEN_CC to one that does)",
                       compiler());
    }
    size_t n = strlen(pre) + strlen(ver) + 256;
    for (int i = 0; i < NENGINE; i++) n += strlen(ode_text(engine[i]));
    char *all = malloc(n);
    if (all) {
        int k = snprintf(all, n, "hpc-odegen system, abi %d, only %d, %s\n%s\n%s\n", ODE_SYS_ABI, j->only, cflags,
                         compiler(), ver);
        for (int i = 0; i < NENGINE; i++) k += snprintf(all + k, n - (size_t)k, "%s", ode_text(engine[i]));
        snprintf(all + k, n - (size_t)k, "%s", pre);
        ode_sha256(all, strlen(all), j->key);
    }
    free(all);
    free(pre);
    free(ver);
    return all ? 0 : HPC_ERR(HPC_ERR_NOMEM, "the cache key");
}

static int compile(job_t *j, const char *out)
{
    char qi[4300], qo[4300], cmd[9000];
    char *dup = strdup(j->path), real[4096];
    if (!dup) return HPC_ERR(HPC_ERR_NOMEM, "the file name");
    const char *d = dirname(dup);
    shell_quote(realpath(d, real) ? real : d, qi, sizeof qi);
    free(dup);
    shell_quote(out, qo, sizeof qo);
    /* the one-lane unit first: its messages are about plain C; then the
     * lanes (hpc_real), the source, and the link */
    const char *units[3] = {"host", "lanes", "src"};
    char only[32] = "";
    if (j->only > -2) snprintf(only, sizeof only, "-DODE_SYS_ONLY=%d", j->only);
    for (int u = 0; u < 3; u++) {
        snprintf(cmd, sizeof cmd, "%s %s %s -I%s -I. -c %s.c -o %s.o", compiler(), cflags, only, qi, units[u],
                 units[u]);
        if (run(j->build, cmd, &j->log) != 0) {
            j->stage = strstr(j->log, "hpc_ode_user_info")
                           ? "has no description: HPC_ODE_SYSTEM(.dim = D, ...) is required"
                       : u == 1 ? "does not compile for 8 trajectories at once: in HPC_ODE_RHS, t and x[i] are "
                                  "hpc_real (a lone constant is hpc_const(c), a function hpc_sin, hpc_exp, ..., a "
                                  "condition hpc_where: see hpc_ode.h)"
                                : "does not compile";
            return HPC_ERR(HPC_ERR_ARG, "does not compile");
        }
        free(j->log);
        j->log = NULL;
    }
    snprintf(cmd, sizeof cmd, "%s -shared -o %s host.o lanes.o src.o -lm -Wl,--no-undefined", compiler(), qo);
    if (run(j->build, cmd, &j->log) != 0) {
        j->stage = strstr(j->log, "hpc_ode_user_rhs") ? "defines no right-hand side: HPC_ODE_RHS(t, x, dxdt, p) "
                                                        "{ ... } is required" : "does not link";
        return HPC_ERR(HPC_ERR_ARG, "does not link");
    }
    free(j->log);
    j->log = NULL;
    return 0;
}

static void remove_build(job_t *j)
{
    if (!j->build[0]) return;
    const char *files[] = {"user.c", "lanes.c", "host.c", "src.c", "host.o", "lanes.o", "src.o"};
    char path[4400];
    for (int i = 0; i < NENGINE + 7; i++) {
        snprintf(path, sizeof path, "%s/%s", j->build, i < NENGINE ? engine[i] : files[i - NENGINE]);
        unlink(path);
    }
    rmdir(j->build);
}

int ode_cache_fetch(const char *key, const char *ext, int (*make)(void *arg, const char *tmp), void *arg,
                    char *path, size_t len)
{
    char dir[4096], lock[4300], tmp[4400];
    HPC_TRY(cache_dir(dir, sizeof dir));
    snprintf(path, len, "%s/%s.%s", dir, key, ext);
    if (access(path, R_OK) == 0) return 0;
    /* another process making the same: wait for it (flock where the file
     * system has it; without, both make the same bytes and a rename wins) */
    snprintf(lock, sizeof lock, "%s/%s.lock", dir, key);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644), rc = 0;
    if (fd >= 0) (void)flock(fd, LOCK_EX);
    if (access(path, R_OK) != 0) {
        snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
        rc = make(arg, tmp);
        if (!rc && rename(tmp, path) != 0)
            rc = HPC_ERR(HPC_ERR_IO, "cannot store '%s' in the cache: %s", path, strerror(errno));
        unlink(tmp);
    }
    if (fd >= 0) close(fd);   /* the lock file stays: removing it would race the next taker */
    return rc;
}

static int make_object(void *arg, const char *tmp)
{
    return compile((job_t *)arg, tmp);
}

/* The object for j (rank 0): found in the cache, or compiled into it. */
static int find_or_compile(job_t *j, char *obj, size_t len)
{
    HPC_TRY(cache_dir(j->dir, sizeof j->dir));
    int rc = write_sources(j);
    if (!rc) rc = make_key(j);
    if (!rc) rc = ode_cache_fetch(j->key, "so", make_object, j, obj, len);
    return rc;
}

/* ---------------------------------------------------------------- */
/* Loading (every rank)                                              */
/* ---------------------------------------------------------------- */
static int load(const char *path, const char *what, ode_opts_t *o)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) return HPC_ERR(HPC_ERR_ARG, "%s: cannot load it: %s", what, dlerror());
    ode_sys_get_fn get = (ode_sys_get_fn)dlsym(h, ODE_SYS_EXPORT);
    if (!get) {
        dlclose(h);
        return HPC_ERR(HPC_ERR_ARG, "%s: not a system compiled by hpc-odegen (no %s)", what, ODE_SYS_EXPORT);
    }
    const ode_sys_t *s = get();
    if (!s || s->abi != ODE_SYS_ABI) {
        dlclose(h);
        return HPC_ERR(HPC_ERR_ARG, "%s: compiled by another hpc-odegen (system ABI %d, this one %d): compile it "
                       "again with --compile-to", what, s ? s->abi : -1, ODE_SYS_ABI);
    }
    if (s->dim < 1 || s->dim_min < 1 || s->dim < s->dim_min || (s->dim_max && s->dim > s->dim_max))
        return HPC_ERR(HPC_ERR_ARG, "%s: HPC_ODE_SYSTEM's dimensions do not fit: .dim %d, .dim_min %d, .dim_max %d "
                       "(.dim >= 1 is required)", what, s->dim, s->dim_min, s->dim_max);
    o->sys = s;
    const char *src = dlsym(h, "ode_sys_user_source"), *sha = dlsym(h, "ode_sys_user_sha256");
    if (src && sha) {
        o->sys_source = src;
        snprintf(o->sys_sha256, sizeof o->sys_sha256, "%s", sha);
    }
    return 0;
}

/* every rank loaded the same bytes under path */
static int same_everywhere(const char *path)
{
    char *bytes = NULL;
    size_t len = 0;
    int rc = hpc_file_read_all(path, (size_t)1 << 31, MPI_COMM_SELF, &bytes, &len), same = 1;
    char hex[65] = "";
    if (!rc) ode_sha256(bytes, len, hex);
    free(bytes);
    int bad = rc < 0, any;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, hpc_comm_world());
    if (any) return rc < 0 ? rc : HPC_ERR(HPC_ERR_IO, "another rank cannot read '%s'", path);
    if (hpc_all_same(hex, sizeof hex, hpc_comm_world(), &same) < 0) return HPC_ERR(HPC_ERR_MPI, "comparing objects");
    if (!same)
        return HPC_ERR(HPC_ERR_ARG, "'%s' has other bytes on some ranks than on others: the ranks would solve "
                       "different systems (HPC_ODEGEN_CACHE must be one folder every node sees)", path);
    return 0;
}

/* the compiler's first line that says "error", for the one line */
static void first_error(const char *log, char *buf, size_t len)
{
    buf[0] = '\0';
    for (const char *p = log; p && *p; p += strcspn(p, "\n"), p += *p == '\n') {
        size_t w = strcspn(p, "\n");
        if (memmem(p, w, "error", 5)) {
            snprintf(buf, len, ": %.*s", (int)(w < 400 ? w : 400), p);
            return;
        }
    }
}

/* rank 0: the object for path (compiled, or found in the cache); every
 * rank: its name in object, or one line and exit 2 */
static void compile_everywhere(const char *path, const char *text, const char *what, int only)
{
    job_t j;
    memset(&j, 0, sizeof j);
    j.path = path;
    j.text = text;
    j.only = only;
    int rc = 0;
    char msg[8192] = "";
    if (hpc_rank() == 0) {
        rc = find_or_compile(&j, object, sizeof object);
        if (rc && j.stage) {
            char err[512];
            /* the compiler's own message first, then the one line */
            if (j.log && *j.log) {
                fputs(j.log, stderr);
                if (j.log[strlen(j.log) - 1] != '\n') fputc('\n', stderr);
            }
            first_error(j.log, err, sizeof err);
            snprintf(msg, sizeof msg, "%s %s (%s)%s", what, j.stage, compiler(), err);
        } else if (rc) {
            snprintf(msg, sizeof msg, "%s: %s", what, hpc_last_cause());
        }
        remove_build(&j);
        free(j.log);
    }
    int fail = rc < 0;
    MPI_Bcast(&fail, 1, MPI_INT, 0, hpc_comm_world());
    MPI_Bcast(object, sizeof object, MPI_CHAR, 0, hpc_comm_world());
    if (fail) hpc_app_agree(HPC_EXIT_USAGE, "%s", msg);   /* every rank fails: rank 0 says why */
}

void ode_sys_load(ode_opts_t *o, const char *path, int lib, int only)
{
    char what[4200], esc[4096];
    hpc_escape(path, esc, sizeof esc);
    snprintf(what, sizeof what, "%s %s", lib ? "--system-lib" : "--system-file", esc);
    o->sys_path = path;
    if (lib) {
        /* dlopen looks a name without a slash up in the library path */
        snprintf(object, sizeof object, "%s%s", strchr(path, '/') ? "" : "./", path);
    } else {
        char *text = NULL;
        size_t len = 0;
        int rc = hpc_file_read_all(path, (size_t)16 << 20, hpc_comm_world(), &text, &len);
        hpc_app_agree_rc(rc, HPC_EXIT_USAGE, "--system-file");
        compile_everywhere(path, text, what, only);
        free(text);   /* the object carries the same text */
    }
    int rc = load(object, what, o);
    hpc_app_agree_rc(rc, HPC_EXIT_USAGE, NULL);
    rc = same_everywhere(object);
    hpc_app_agree_rc(rc, HPC_EXIT_USAGE, what);
    if (!o->sys_source)
        hpc_app_agree(HPC_EXIT_USAGE, "%s: the object carries no source (not made by --compile-to)", what);
}
