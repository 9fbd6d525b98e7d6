/* h5_reserve.c - disk space for a file before HDF5 writes it.
 *
 * HDF5 1.10 cannot fail cleanly on a full disk: when H5Fclose cannot
 * flush its metadata (ENOSPC) it frees the file yet keeps its ID, and the
 * library's shutdown inside MPI_Finalize then dereferences it (a
 * segfault at exit; on 2 ranks a hang in the collective flush).  So the
 * space is claimed first, with plain system calls that fail cleanly:
 * rank 0 fallocate()s the bytes the file will need, with
 * FALLOC_FL_KEEP_SIZE (blocks reserved beyond the end, the size
 * unchanged, so HDF5 sees an empty file).  Once the blocks are the
 * file's, HDF5's writes into them cannot run out of space, whoever else
 * fills the disk meanwhile.  Where the file system has no fallocate
 * (EOPNOTSUPP: some network file systems), the free space is compared
 * instead (statvfs), which a concurrent writer can still outrun.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "hpc_h5.h"
#include "internal.h"

/* The free space of path's folder in bytes (-1: unknown) */
static double folder_free(const char *path)
{
    char *copy = strdup(path);
    struct statvfs vs;
    double free_b = copy && statvfs(dirname(copy), &vs) == 0 ? (double)vs.f_bavail * vs.f_frsize : -1;
    free(copy);
    return free_b;
}

int hpc_reserve_path(const char *path, double bytes, int create)
{
    if (bytes <= 0) return 0;
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT | O_TRUNC : 0), 0666);
    if (fd < 0) return errno;
    int err = 0;
#ifdef FALLOC_FL_KEEP_SIZE
    if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)bytes) != 0) err = errno;
#else
    err = EOPNOTSUPP;
#endif
    if (err == EOPNOTSUPP || err == ENOSYS) {
        /* what the file does not hold yet (a resumed one holds part) */
        struct stat st;
        double have = fstat(fd, &st) == 0 ? (double)st.st_blocks * 512 : 0, free_b = folder_free(path);
        err = free_b >= 0 && free_b < bytes - have ? ENOSPC : 0;
    }
    /* a failed reservation gives back what it got (a partial fallocate),
     * keeping what the file holds */
    if (err) hpc_reserve_trim(path);
    close(fd);
    return err;
}

int hpc_reserve_trim(const char *path)
{
    /* a truncation that shrinks the file frees every block beyond its new
     * end, on any file system (one to the same size may do nothing) */
    struct stat st;
    if (lstat(path, &st) != 0) return errno;
    if (!S_ISREG(st.st_mode)) return 0;
    if (truncate(path, st.st_size + 1) != 0 || truncate(path, st.st_size) != 0) return errno;
    return 0;
}

int hpc_reserve_error(const char *path, double bytes, int err)
{
    double free_b = folder_free(path), mib = 1048576.0;
    if (free_b >= 0)
        return HPC_ERR(HPC_ERR_IO, "no room for '%s': it needs %.1f MiB, its folder has %.1f MiB free (%s)",
                       path, bytes / mib, free_b / mib, strerror(err));
    return HPC_ERR(HPC_ERR_IO, "no room for '%s': it needs %.1f MiB (%s)", path, bytes / mib, strerror(err));
}
