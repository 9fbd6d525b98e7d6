/* file.c - whole files written by one process (tables, tuning files,
 * plots): they appear complete or not at all.
 *
 * A regular file (or a new name) is written under a temporary name in the
 * same folder and renamed over the target by hpc_file_commit, after every
 * write, the flush, fsync and close succeeded; until then an existing file
 * keeps its old contents, and a failed run leaves nothing behind.  Anything
 * else (/dev/stdout, a pipe, /dev/full) is written in place, with the same
 * checks, so a full disk or a closed pipe is an error, never exit 0.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "app_internal.h"

struct hpc_file {
    FILE *f;
    int err;       /* errno of the first failed hpc_file_printf */
    char *path;    /* the target */
    char *tmp;     /* the temporary name, NULL when written in place */
};

static int err_io(const char *path, const char *what, int e)
{
    char esc[512];
    return HPC_ERR(HPC_ERR_IO, "%s '%s': %s", what, hpc_escape(path, esc, sizeof esc), strerror(e));
}

/* 1 if path names something other than a regular file (a device, a pipe) */
static int is_special(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

int hpc_file_check(const char *path)
{
    if (!path || !*path) return HPC_ERR(HPC_ERR_ARG, "empty file name");
    if (is_special(path) || access(path, F_OK) == 0) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return err_io(path, "cannot write", EISDIR);
        if (access(path, W_OK) != 0) return err_io(path, "cannot write", errno);
        if (is_special(path)) return 0;
    }
    char *p = strdup(path);
    if (!p) return HPC_ERR(HPC_ERR_NOMEM, "file name");
    const char *dir = dirname(p);
    int e = access(dir, W_OK | X_OK) == 0 ? 0 : errno;
    free(p);
    return e ? err_io(path, "cannot write", e) : 0;
}

int hpc_file_open(const char *path, hpc_file_t **out)
{
    *out = NULL;
    HPC_TRY(hpc_file_check(path));
    hpc_file_t *h = calloc(1, sizeof *h);
    if (!h || !(h->path = strdup(path))) {
        free(h);
        return HPC_ERR(HPC_ERR_NOMEM, "file");
    }
    if (is_special(path)) {
        h->f = fopen(path, "w");
        if (!h->f) {
            int rc = err_io(path, "cannot write", errno);
            hpc_file_discard(h);
            return rc;
        }
        *out = h;
        return 0;
    }
    /* "dir/.name.XXXXXX": hidden, in the target's folder so rename is atomic */
    char *p = strdup(path), *q = strdup(path);
    size_t n = strlen(path) + 16;
    h->tmp = malloc(n);
    if (!p || !q || !h->tmp) {
        free(p);
        free(q);
        hpc_file_discard(h);
        return HPC_ERR(HPC_ERR_NOMEM, "file");
    }
    snprintf(h->tmp, n, "%s/.%s.XXXXXX", dirname(p), basename(q));
    free(p);
    free(q);
    int fd = mkstemp(h->tmp);
    if (fd < 0 || !(h->f = fdopen(fd, "w"))) {
        int rc = err_io(path, "cannot write", errno);
        if (fd >= 0) close(fd); /* and discard removes the name mkstemp made */
        else {
            free(h->tmp); /* no name was made: nothing to remove */
            h->tmp = NULL;
        }
        hpc_file_discard(h);
        return rc;
    }
    /* the permissions a plain fopen would give (mkstemp makes 0600) */
    mode_t um = umask(0);
    umask(um);
    fchmod(fd, 0666 & ~um);
    *out = h;
    return 0;
}

FILE *hpc_file_stream(hpc_file_t *h)
{
    return h->f;
}

int hpc_file_printf(hpc_file_t *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(h->f, fmt, ap);
    va_end(ap);
    if (n < 0 && !h->err) h->err = errno ? errno : EIO;
    return n < 0 ? err_io(h->path, "cannot write", h->err) : 0;
}

int hpc_file_commit(hpc_file_t *h)
{
    if (!h) return HPC_ERR(HPC_ERR_ARG, "NULL file");
    int e = h->err;
    if (ferror(h->f) && !e) e = EIO;
    if (fflush(h->f) != 0 && !e) e = errno;
    /* a device's fsync (EINVAL, ENOTTY) is not an error; a disk's is */
    if (h->tmp && fsync(fileno(h->f)) != 0 && errno != EINVAL && !e) e = errno;
    if (fclose(h->f) != 0 && !e) e = errno;
    h->f = NULL;
    if (!e && h->tmp) {
        if (rename(h->tmp, h->path) != 0) e = errno;
        else {
            free(h->tmp);
            h->tmp = NULL;
        }
    }
    int rc = e ? err_io(h->path, "cannot write", e) : 0;
    hpc_file_discard(h);
    return rc;
}

void hpc_file_discard(hpc_file_t *h)
{
    if (!h) return;
    if (h->f) fclose(h->f);
    if (h->tmp) unlink(h->tmp);
    free(h->tmp);
    free(h->path);
    free(h);
}

/* ------------------------------------------------------------------ */
/* Whole files read: by rank 0, given to every rank                    */
/* ------------------------------------------------------------------ */
static int read_local(const char *path, size_t max, char **text, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return err_io(path, "cannot read", errno);
    struct stat st;
    if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        int e = S_ISDIR(st.st_mode) ? EISDIR : errno;
        close(fd);
        return err_io(path, "cannot read", e);
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    for (ssize_t r = 1; buf && r > 0;) {
        if (n == cap) {
            char *b = cap < max + 1 ? realloc(buf, 2 * cap + 1) : NULL;
            if (!b) break;
            buf = b;
            cap *= 2;
        }
        r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) r = 1;
        else if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return err_io(path, "cannot read", e);
        } else n += (size_t)r;
        if (n > max) break;
    }
    close(fd);
    if (!buf) return HPC_ERR(HPC_ERR_NOMEM, "reading a file");
    if (n > max) {
        char esc[512];
        free(buf);
        return HPC_ERR(HPC_ERR_DATA, "'%s' is larger than %zu bytes", hpc_escape(path, esc, sizeof esc), max);
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

int hpc_file_read_all(const char *path, size_t max, MPI_Comm comm, char **text, size_t *len)
{
    int rank;
    HPC_MPI(MPI_Comm_rank(comm, &rank));
    char *buf = NULL;
    size_t n = 0;
    int rc = rank == 0 ? read_local(path, max, &buf, &n) : 0;
    /* the outcome and the size, then the bytes (the cause stays on rank 0:
     * others record the same code with a pointer to it) */
    long long hdr[2] = {rc, (long long)n};
    HPC_MPI(MPI_Bcast(hdr, 2, MPI_LONG_LONG, 0, comm));
    if (hdr[0] < 0) {
        if (rank == 0) return rc;
        char esc[512];
        return HPC_ERR((int)hdr[0], "'%s' could not be read on rank 0", hpc_escape(path, esc, sizeof esc));
    }
    n = (size_t)hdr[1];
    if (rank != 0 && !(buf = malloc(n + 1))) return HPC_ERR(HPC_ERR_NOMEM, "reading '%s'", path);
    for (size_t off = 0; off < n;) {
        int part = n - off > (1u << 30) ? 1 << 30 : (int)(n - off);
        HPC_MPI(MPI_Bcast(buf + off, part, MPI_CHAR, 0, comm));
        off += (size_t)part;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}
