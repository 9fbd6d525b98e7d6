/* run.c - run folders: one folder per run holding its CSV metrics and its
 * plots, written by rank 0.
 *
 * CSV rows are flushed as they are written, so `tail -f metrics.csv` and a
 * killed run both see every finished row; a resumed run keeps the rows of
 * the steps its checkpoint covers and drops the rest.
 *
 * One run at a time: rank 0 holds RUNDIR/.lock (lock.c) from open to
 * close.  The names in the folder are the program's, not the user's: the
 * CSV is a new file (mkstemp) renamed over the old name, a plot goes
 * through hpc_file (the same) after a link under its name is removed, so
 * a symbolic link left in the folder is replaced and its target never
 * written.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include "app_internal.h"

struct hpc_run {
    char *dir;
    MPI_Comm comm;
    int rank;
    FILE *csv;
    char csv_name[256];
    int lockfd;                /* rank 0's hold on RUNDIR/.lock, -1 = none */
    char *lock_path;
};

/* mkdir -p; 0 or errno */
static int make_dirs(const char *dir)
{
    char *p = strdup(dir);
    if (!p) return ENOMEM;
    int err = 0;
    for (char *s = p + 1; !err; s++) {
        if (*s != '/' && *s) continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) err = errno;
        *s = c;
        if (!c) break;
    }
    struct stat st;
    if (!err && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))) err = ENOTDIR;
    if (!err && access(dir, W_OK | X_OK) != 0) err = errno;
    free(p);
    return err;
}

int hpc_run_open(const char *dir, MPI_Comm comm, hpc_run_t **out)
{
    if (!dir || !*dir) return HPC_ERR(HPC_ERR_ARG, "empty run folder name");
    hpc_run_t *r = calloc(1, sizeof *r);
    if (!r || !(r->dir = strdup(dir))) {
        free(r);
        return HPC_ERR(HPC_ERR_NOMEM, "run folder");
    }
    r->comm = comm;
    r->lockfd = -1;
    MPI_Comm_rank(comm, &r->rank);
    /* one run at a time in a folder: RUNDIR/.lock (lock.c), held until
     * hpc_run_close - a second run on it would mix its metrics and
     * checkpoints with the first's */
    char who[128] = "";
    size_t n = strlen(dir) + 8;
    int err = (r->lock_path = malloc(n)) ? 0 : ENOMEM;
    if (!err) snprintf(r->lock_path, n, "%s/.lock", dir);
    if (!err && r->rank == 0) err = make_dirs(dir);
    if (!err && r->rank == 0) err = hpc_lock_take(r->lock_path, &r->lockfd, who, sizeof who);
    int msg[2] = {err, 0};
    MPI_Bcast(msg, 2, MPI_INT, 0, comm);
    err = msg[0];
    MPI_Bcast(who, sizeof who, MPI_CHAR, 0, comm);
    if (err) {
        char esc[512];
        int rc = err == EWOULDBLOCK
                 ? HPC_ERR(HPC_ERR_IO, "run folder '%s' is in use by another run (pid and host: %s)",
                           hpc_escape(dir, esc, sizeof esc), who[0] ? who : "?")
                 : HPC_ERR(HPC_ERR_IO, "run folder '%s': %s", hpc_escape(dir, esc, sizeof esc),
                           err == ENOTDIR ? "exists and is not a folder" : strerror(err));
        hpc_run_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

const char *hpc_run_dir(const hpc_run_t *r)
{
    return r->dir;
}

int hpc_run_path(const hpc_run_t *r, const char *name, char *buf, size_t len)
{
    if ((size_t)snprintf(buf, len, "%s/%s", r->dir, name) >= len)
        return HPC_ERR(HPC_ERR_ARG, "path '%s/%s' too long", r->dir, name);
    return 0;
}

/* The rows of path (never read through a link) under the same header
 * with first field <= keep_upto, onto out */
static void csv_copy(const char *path, const char *header, int64_t keep_upto, FILE *out)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    FILE *in = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!in) {
        if (fd >= 0) close(fd);
        return;
    }
    char line[8192];
    int same = fgets(line, sizeof line, in) && !strncmp(line, header, strlen(header)) &&
               (line[strlen(header)] == '\n' || !line[strlen(header)]);
    while (same && fgets(line, sizeof line, in))
        if (strtoll(line, NULL, 10) <= keep_upto && strchr(line, '\n')) fputs(line, out);
    fclose(in);
}

int hpc_run_csv_open(hpc_run_t *r, const char *name, const char *header, int64_t keep_upto)
{
    if (r->rank != 0) return 0;
    char path[4096], tmp[4400];
    HPC_TRY(hpc_run_path(r, name, path, sizeof path));
    if (r->csv) fclose(r->csv);
    r->csv = NULL;
    snprintf(r->csv_name, sizeof r->csv_name, "%s", name);
    /* a new file (mkstemp: never through a link), the header and the kept
     * rows, renamed over the old one (a link there is replaced, its
     * target untouched; a crash in between keeps the old); the stream
     * stays open for the rows */
    snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", r->dir, name);
    int fd = mkstemp(tmp);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!out) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        return HPC_ERR(HPC_ERR_IO, "cannot write '%s': %s", path, strerror(e));
    }
    mode_t um = umask(0);   /* the permissions fopen would give (mkstemp: 0600) */
    umask(um);
    if (fchmod(fd, 0666 & ~um) != 0) {
        /* 0600 then */
    }
    fprintf(out, "%s\n", header);
    if (keep_upto >= 0) csv_copy(path, header, keep_upto, out);
    if (fflush(out) != 0 || ferror(out) || rename(tmp, path) != 0) {
        int e = errno ? errno : EIO;
        fclose(out);
        unlink(tmp);
        return HPC_ERR(HPC_ERR_IO, "cannot write '%s': %s", path, strerror(e));
    }
    r->csv = out;
    return 0;
}

int hpc_run_csv_row(hpc_run_t *r, const char *fmt, ...)
{
    if (r->rank != 0 || !r->csv) return 0;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->csv, fmt, ap);
    va_end(ap);
    fputc('\n', r->csv);
    if (fflush(r->csv) != 0 || ferror(r->csv))
        return HPC_ERR(HPC_ERR_IO, "cannot write '%s/%s': %s", r->dir, r->csv_name, strerror(errno ? errno : EIO));
    return 0;
}

const char *hpc_gnuplot(void)
{
    static char found[4096];
#ifdef HPC_GNUPLOT
    if (access(HPC_GNUPLOT, X_OK) == 0) return HPC_GNUPLOT;
#endif
    if (found[0]) return found;
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(found, sizeof found, "%.*s/gnuplot", (int)n, p);
        if (n && access(found, X_OK) == 0) return found;
        p += n + (p[n] == ':');
    }
    found[0] = '\0';
    return found;
}

static int png_complete(int fd, off_t size);

/* gnuplot reading the script from a pipe, writing the PNG to fd out: 0,
 * 1 if the PNG came out incomplete, or an error */
static int gnuplot_run(const char *gp, const char *script, const char *cwd, int out)
{
    int fd[2];
    if (pipe(fd) != 0) return HPC_ERR(HPC_ERR_IO, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[0], 0);
        dup2(out, 1);
        close(fd[0]);
        close(fd[1]);
        /* gnuplot's complaints are for the log, not the user's terminal */
        if ((cwd && chdir(cwd) != 0) || !freopen("/dev/null", "w", stderr)) _exit(127);
        execl(gp, "gnuplot", (char *)NULL);
        _exit(127);
    }
    close(fd[0]);
    FILE *w = pid > 0 ? fdopen(fd[1], "w") : NULL;
    if (!w) {
        close(fd[1]);
        return HPC_ERR(HPC_ERR_IO, "cannot start gnuplot: %s", strerror(errno));
    }
    /* no "set output": the PNG goes to standard output, our file */
    fprintf(w, "set terminal pngcairo size 900,600 noenhanced\n%s\n", script);
    fclose(w);
    int st = 0;
    waitpid(pid, &st, 0);
    struct stat sb;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || fstat(out, &sb) != 0 || (S_ISREG(sb.st_mode) && sb.st_size == 0))
        return HPC_ERR(HPC_ERR_IO, "gnuplot failed");
    return S_ISREG(sb.st_mode) && !png_complete(out, sb.st_size) ? 1 : 0;
}

/* A PNG ends with its IEND chunk.  gnuplot exits 0 when its writes fail
 * (a full disk): a file without that end is a truncated picture. */
static int png_complete(int fd, off_t size)
{
    static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
    unsigned char tail[12];
    return size >= 12 && pread(fd, tail, sizeof tail, size - 12) == 12 && !memcmp(tail, iend, sizeof iend);
}

int hpc_plot(const char *png, const char *script, const char *cwd)
{
    const char *gp = hpc_gnuplot();
    if (!gp[0]) return 1;
    char full[4200], esc[512];
    int rel = cwd && png[0] != '/';
    if ((size_t)snprintf(full, sizeof full, "%s%s%s", rel ? cwd : "", rel ? "/" : "", png) >= sizeof full)
        return HPC_ERR(HPC_ERR_ARG, "plot name too long");
    hpc_file_t *f;
    HPC_TRY(hpc_file_open(full, &f));
    fflush(hpc_file_stream(f));
    int rc = gnuplot_run(gp, script, cwd, fileno(hpc_file_stream(f)));
    if (rc != 0) {
        int full_disk = rc == 1;
        struct statvfs vs;
        /* the likely reason, where the folder has no room left */
        int none_free = fstatvfs(fileno(hpc_file_stream(f)), &vs) == 0 && vs.f_bavail == 0;
        hpc_file_discard(f);
        if (full_disk)
            return HPC_ERR(HPC_ERR_IO, "cannot write '%s': gnuplot's picture came out incomplete%s",
                           hpc_escape(full, esc, sizeof esc), none_free ? " (No space left on device)" : "");
        return HPC_ERR(HPC_ERR_IO, "gnuplot could not draw '%s'%s", hpc_escape(full, esc, sizeof esc),
                       none_free ? " (No space left on device)" : "");
    }
    return hpc_file_commit(f);
}

int hpc_run_plot(hpc_run_t *r, const char *png, const char *script)
{
    if (r->rank != 0) return 0;
    /* the run's own name: a link there is replaced, never written through
     * (hpc_file would write a link to a device in place) */
    char path[4096];
    struct stat st;
    HPC_TRY(hpc_run_path(r, png, path, sizeof path));
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) unlink(path);
    return hpc_plot(png, script, r->dir);
}

void hpc_run_close(hpc_run_t *r)
{
    if (!r) return;
    if (r->csv) fclose(r->csv);
    if (r->lock_path) hpc_lock_release(r->lock_path, r->lockfd);
    free(r->lock_path);
    free(r->dir);
    free(r);
}
