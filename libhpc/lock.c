/* lock.c - advisory locks on files (flock), for one writer at a time: an
 * output being written (PATH.lock, h5.c) and a run folder in use
 * (RUNDIR/.lock, app/run.c).
 *
 * The lock file holds "pid host" of the holder, for the refusal's
 * message.  It is opened without following a symbolic link: a link left
 * under that name (by anyone) is replaced, never written through - the
 * lock file is ours, its target is not.  flock is released when the
 * holder exits, however it ends, so a stale file locks nothing.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "internal.h"

int hpc_lock_take(const char *path, int *fd_out, char *who, size_t len)
{
    *fd_out = -1;
    if (len) who[0] = '\0';
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 && errno == ELOOP && unlink(path) == 0)
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return errno;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno == EWOULDBLOCK ? EWOULDBLOCK : errno;
        ssize_t n = len ? pread(fd, who, len - 1, 0) : 0;
        if (len) {
            who[n > 0 ? n : 0] = '\0';
            who[strcspn(who, "\n")] = '\0';
        }
        close(fd);
        return e;
    }
    char me[300];
    int n = snprintf(me, sizeof me, "%ld %s\n", (long)getpid(), hpc_host_hint());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, me, (size_t)n, 0) != n) {
        /* the lock holds without the note */
    }
    *fd_out = fd;
    return 0;
}

void hpc_lock_release(const char *path, int fd)
{
    if (fd < 0) return;
    unlink(path);
    close(fd);   /* releases the flock */
}
