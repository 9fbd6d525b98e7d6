/* shmseg.c - a communicator's shared segment on its node, made once when
 * libhpc first sets the communicator up (comm.c), never inside a call.
 *
 * The node's ranks (topo.c's node communicator, which lives only through
 * the set-up: a real node, or one of HPC_NODE_SPLIT's fake ones) map one
 * POSIX shared-memory object: a
 * control line per rank (the counters its calls publish, the addresses
 * of its buffers, its pid), then the result ring and every rank's slots
 * (alg/shm.c says what they hold).  Node rank 0 creates it under a name
 * of its own, the others map it, and it is unlinked as soon as all have:
 * nothing is left in /dev/shm whatever happens to the job afterwards.
 * Freeing it is a local munmap, so MPI_Comm_free stays as unsynchronised
 * as MPI made it (MPI_Win_allocate_shared would have made it collective:
 * MPI_Win_free synchronises, and a program that frees communicators in
 * different orders on different ranks would then wait forever).
 *
 * At set-up the ranks also agree on two things the kernel may refuse:
 *  - single copy (CMA, process_vm_readv): each rank reads a word of every
 *    node mate's private memory; it is used only if every read on every
 *    rank worked (yama's ptrace_scope, a container's seccomp profile or
 *    different users refuse it);
 *  - pids: each rank's pid, so a rank waiting on a node mate's flag can
 *    see that the mate has died (kill(pid, 0)), and its parent's, so it
 *    can see that its launcher has gone.  Where a mate's pid cannot be
 *    seen from here (another pid namespace), pids are not used.
 * If the segment cannot be made on some rank, no rank of the node has one
 * and the shared-memory algorithms fall back to point-to-point ones.
 */
#define _GNU_SOURCE
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* Ranks read this word of each other's memory to see that CMA works. */
static volatile uint64_t probe_word = 0x68706b6974636d61ULL;   /* "hpkitcma" */

/* Bytes of one slot: HPC_COLL_SEGMENT up to 64 KiB (a chunk stays in
 * cache while the node's ranks work on it), a multiple of 64, and room
 * for one element of each node mate (reduce_scatter's pieces). */
static size_t chunk_bytes(int m)
{
    size_t c = coll_segment();
    if (c > ((size_t)64 << 10)) c = (size_t)64 << 10;
    c &= ~(size_t)63;
    size_t need = ((size_t)m * 8 + 63) & ~(size_t)63;
    return c < need ? need : c;
}

/* This rank's map of the object name (0) or a reason (-1). */
static int seg_map(const char *name, size_t bytes, int create, char **out)
{
    int fd = shm_open(name, create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
    if (fd < 0) return -1;
    if (create && ftruncate(fd, (off_t)bytes) != 0) {
        close(fd);
        shm_unlink(name);
        return -1;
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        if (create) shm_unlink(name);
        return -1;
    }
    *out = p;
    return 0;
}

/* 1 if process_vm_readv reads every node mate's probe word and
 * process_vm_writev writes it back (the same value: harmless). */
static int cma_works(const coll_seg_t *s)
{
    for (int i = 0; i < s->m; i++) {
        if (i == s->me) continue;
        const coll_seg_line_t *l = coll_seg_line(s, i);
        uint64_t got = 0;
        struct iovec loc = {&got, sizeof got}, rem = {(void *)(uintptr_t)l->rbuf, sizeof got};
        if (process_vm_readv((pid_t)l->pid, &loc, 1, &rem, 1, 0) != (ssize_t)sizeof got ||
            got != probe_word ||
            process_vm_writev((pid_t)l->pid, &loc, 1, &rem, 1, 0) != (ssize_t)sizeof got)
            return 0;
    }
    return 1;
}

/* 1 if every node mate's pid names a process here. */
static int pids_visible(const coll_seg_t *s)
{
    for (int i = 0; i < s->m; i++)
        if (i != s->me && kill((pid_t)coll_seg_line(s, i)->pid, 0) != 0 && errno != EPERM) return 0;
    return 1;
}

static void seg_unmap(coll_seg_t *s)
{
    if (s->base) munmap(s->base, s->bytes);
    s->base = NULL;
}

int coll_seg_init(coll_comm_t *cc, MPI_Comm node)
{
    const coll_topo_t *t = &cc->topo;
    cc->seg = NULL;
    if (t->local_size < 2) return 0;
    coll_seg_t *s = calloc(1, sizeof *s);
    if (!s) return HPC_ERR(HPC_ERR_NOMEM, "shared segment state");
    s->m = t->local_size;
    s->me = t->local_rank;
    s->depth = 4;
    s->chunk = chunk_bytes(s->m);
    /* single copy's allreduce reads 4 chunks from each mate with one
     * system call and keeps a chunk's whole result here (at most 2 MiB,
     * which stays in cache); the slots and the ring share the room */
    size_t entry = 4 * (size_t)s->m * s->chunk, cap = (size_t)2 << 20;
    s->entry = entry < cap ? entry : cap;
    size_t area = (size_t)(s->m + 1) * s->chunk;
    if (area < s->entry) area = s->entry;
    s->bytes = (size_t)s->m * COLL_SEG_LINE + area * (size_t)s->depth;
    /* node rank 0 names and makes it; the others map it */
    static unsigned made;
    char name[96] = "";
    int ok = 1;
    if (s->me == 0) {
        snprintf(name, sizeof name, "/hpckit-%ld-%u-%lx", (long)getpid(), made++, (unsigned long)(uintptr_t)s);
        ok = seg_map(name, s->bytes, 1, &s->base) == 0;
        if (ok) memset(s->base, 0, (size_t)s->m * COLL_SEG_LINE);
        else name[0] = 0;
    }
    HPC_MPI(MPI_Bcast(name, (int)sizeof name, MPI_CHAR, 0, node));
    if (s->me != 0) ok = name[0] && seg_map(name, s->bytes, 0, &s->base) == 0;
    if (ok) {
        coll_seg_line_t *l = coll_seg_line(s, s->me);
        l->pid = (int64_t)getpid();
        l->rbuf = (uint64_t)(uintptr_t)&probe_word;
    }
    int all = 0;
    /* (also the barrier after which every line's pid and probe address are there) */
    int e = MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, node);
    if (s->me == 0 && name[0]) shm_unlink(name);
    if (e != MPI_SUCCESS || !all) {
        seg_unmap(s);
        free(s);
        if (e != MPI_SUCCESS) return hpc_error_mpi(e, __FILE__, __LINE__, "MPI_Allreduce");
        hpc_log(HPC_LOG_DEBUG, "no shared segment on this node's ranks: shared-memory collectives "
                "run over point-to-point");
        return 0;
    }
    int mine = cma_works(s), cma = 0;
    HPC_MPI(MPI_Allreduce(&mine, &cma, 1, MPI_INT, MPI_MIN, node));
    s->cma = cma;
    s->pids = pids_visible(s);
    s->ppid = (int64_t)getppid();
    coll_seg_line(s, s->me)->rbuf = 0;
    cc->seg = s;
    return 0;
}

void coll_seg_free(coll_comm_t *cc)
{
    if (!cc->seg) return;
    seg_unmap(cc->seg);
    free(cc->seg);
    cc->seg = NULL;
}

/* pid is gone, or a zombie (killed, not yet reaped by its parent) */
static int gone(pid_t pid)
{
    if (kill(pid, 0) != 0) return errno == ESRCH;
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');     /* "pid (comm) S ..." */
    return p && (p[1] == ' ') && (p[2] == 'Z' || p[2] == 'X');
}

int coll_seg_dead(const coll_seg_t *s, int *who)
{
    *who = -1;
    if (s->ppid > 1 && (int64_t)getppid() != s->ppid) return 1;
    for (int i = 0; s->pids && i < s->m; i++)
        if (i != s->me && gone((pid_t)coll_seg_line(s, i)->pid)) {
            *who = i;
            return 1;
        }
    return 0;
}

/* bytes between here (loc) and node rank i's memory (rem): in (read)
 * or out (write), in pieces the kernel takes (it may move less than
 * asked, and at most 2 GiB at once) */
static long moves;   /* single copies asked for, for the tests */

long coll_seg_moves(void)
{
    return moves;
}

static int cma_move(const coll_seg_t *s, int i, char *loc, uint64_t rem, size_t bytes, int write)
{
    pid_t pid = (pid_t)coll_seg_line(s, i)->pid;
    moves++;
    while (bytes > 0) {
        size_t want = bytes < ((size_t)1 << 30) ? bytes : (size_t)1 << 30;
        struct iovec l = {loc, want}, r = {(void *)(uintptr_t)rem, want};
        ssize_t got = write ? process_vm_writev(pid, &l, 1, &r, 1, 0) : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (got <= 0) {
            if (got < 0 && errno == EINTR) continue;
            return HPC_ERR(HPC_ERR_IO, "single copy %s node rank %d (pid %ld): %s", write ? "to" : "from", i,
                           (long)pid, got < 0 ? strerror(errno) : "nothing moved");
        }
        loc += got;
        rem += (uint64_t)got;
        bytes -= (size_t)got;
    }
    return 0;
}

int coll_seg_read(const coll_seg_t *s, int i, void *dst, uint64_t src, size_t bytes)
{
    return cma_move(s, i, dst, src, bytes, 0);
}

int coll_seg_write(const coll_seg_t *s, int i, uint64_t dst, const void *src, size_t bytes)
{
    return cma_move(s, i, (char *)(uintptr_t)src, dst, bytes, 1);
}
