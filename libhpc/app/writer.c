/* writer.c - a resumable output's parts written in the background.
 *
 * The program computes the next batch while a thread of its own writes
 * the last one (double buffering: hpc_out_submit hands one batch over and
 * returns once the batch before it is written, so the buffer of that one
 * is free again).  The thread runs the program's write function, which
 * writes raw rows only (hpc_h5_raw_*: no MPI, no other HDF5 call - the
 * main thread keeps both), then records each part's checksum in the
 * "written" dataset beside the done flags.
 *
 * Durability at intervals, not per part: every sync_every seconds (and
 * when the writer stops) the thread syncs the file's data (fdatasync) and
 * only then sets the done flags of the parts written before the sync, so
 * done = 1 still means "on disk".  A part written but not yet flagged is
 * not lost when the process is killed (its bytes are in the page cache):
 * --resume re-reads it and keeps it where it matches its checksum
 * (hpc_out_recover).  A crashed node loses what was written since the
 * last sync: a torn part fails its checksum and is computed again.
 */
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "app_h5_internal.h"

struct out_writer {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    hpc_out_t *o;
    hpc_h5_raw_t *done_raw, *written_raw;
    double every, last_sync;
    /* the one slot: a batch handed over, not yet written */
    int busy, stop;
    int64_t *parts;
    int nparts, cap;
    hpc_out_write_fn fn;
    void *arg;
    uint64_t *sums;
    /* written since the last sync */
    int64_t *pending;
    int64_t npending;
    /* the first failure: -errno, and where */
    int err;
    int64_t err_part;
    char err_what[160];
};

/* seconds; not hpc_wtime, which asks MPI (the thread may not) */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void fail(out_writer_t *w, int err, int64_t part, const char *what)
{
    if (w->err) return;
    w->err = err;
    w->err_part = part;
    snprintf(w->err_what, sizeof w->err_what, "%s", what);
}

/* fdatasync, then the done flags of what it covered (thread; no lock
 * held: only the thread touches pending, done and ndone) */
static void sync_pending(out_writer_t *w)
{
    if (w->npending == 0 || w->err) return;
    int rc = hpc_h5_raw_sync(w->done_raw);
    if (rc) {
        fail(w, rc, w->pending[0], "syncing");
        return;
    }
    const uint8_t one = 1;
    for (int64_t i = 0; i < w->npending && !w->err; i++) {
        int64_t part = w->pending[i];
        rc = hpc_h5_raw_write_rows(w->done_raw, (hsize_t)part, 1, &one);
        if (rc) fail(w, rc, part, "flagging");
        else if (!w->o->done[part]) w->o->done[part] = 1, w->o->ndone++;
    }
    w->npending = 0;
    w->last_sync = now();
}

/* one batch: the program's bytes, then each part's checksum (thread) */
static void write_batch(out_writer_t *w)
{
    int rc = w->fn(w->arg, w->sums);
    if (rc) {
        fail(w, rc, w->parts[0], "writing");
        return;
    }
    for (int i = 0; i < w->nparts && !w->err; i++) {
        uint64_t sum = w->sums[i] | 1;   /* 0 means "not written" */
        rc = w->written_raw ? hpc_h5_raw_write_rows(w->written_raw, (hsize_t)w->parts[i], 1, &sum) : 0;
        if (rc) fail(w, rc, w->parts[i], "recording");
        else w->pending[w->npending++] = w->parts[i];
    }
    if (now() - w->last_sync >= w->every) sync_pending(w);
}

static void *run(void *p)
{
    out_writer_t *w = p;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->busy && !w->stop) pthread_cond_wait(&w->cv, &w->mu);
        if (!w->busy) break;
        pthread_mutex_unlock(&w->mu);
        if (!w->err) write_batch(w);
        pthread_mutex_lock(&w->mu);
        w->busy = 0;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    sync_pending(w);
    return NULL;
}

static void writer_free(out_writer_t *w)
{
    hpc_h5_raw_close(w->done_raw);
    hpc_h5_raw_close(w->written_raw);
    free(w->parts);
    free(w->sums);
    free(w->pending);
    free(w);
}

int hpc_out_writer_start(hpc_out_t *o, double sync_every)
{
    if (!o || o->writer) return HPC_ERR(HPC_ERR_ARG, "no output, or a writer already");
    out_writer_t *w = calloc(1, sizeof *w);
    if (!w) return HPC_ERR(HPC_ERR_NOMEM, "writer");
    w->o = o;
    w->every = sync_every > 0 ? sync_every : 0;
    w->last_sync = now();
    w->pending = malloc((size_t)o->nparts * sizeof *w->pending);
    int rc = w->pending ? 0 : HPC_ERR(HPC_ERR_NOMEM, "writer");
    if (!rc) rc = hpc_h5_raw_open(o->f, o->done_d, H5T_NATIVE_UINT8, &w->done_raw);
    if (!rc && o->written_d >= 0) rc = hpc_h5_raw_open(o->f, o->written_d, H5T_NATIVE_UINT64, &w->written_raw);
    if (!rc) {
        pthread_mutex_init(&w->mu, NULL);
        pthread_cond_init(&w->cv, NULL);
        if (pthread_create(&w->thread, NULL, run, w) != 0) {
            rc = HPC_ERR(HPC_ERR_IO, "cannot start the writer thread");
            pthread_cond_destroy(&w->cv);
            pthread_mutex_destroy(&w->mu);
        }
    }
    if (rc) {
        writer_free(w);
        return rc;
    }
    o->writer = w;
    return 0;
}

/* the thread's first failure as a libhpc error (main thread) */
static int writer_error(out_writer_t *w)
{
    return HPC_ERR(HPC_ERR_IO, "%s part %lld of '%s': %s", w->err_what, (long long)w->err_part,
                   hpc_h5_path(w->o->f), strerror(-w->err));
}

int hpc_out_submit(hpc_out_t *o, const int64_t *parts, int n, hpc_out_write_fn fn, void *arg)
{
    out_writer_t *w = o ? o->writer : NULL;
    if (!w || n < 1 || !parts || !fn) return HPC_ERR(HPC_ERR_ARG, "no writer, or nothing to write");
    for (int i = 0; i < n; i++)
        if (parts[i] < 0 || parts[i] >= o->nparts) return HPC_ERR(HPC_ERR_ARG, "part %lld", (long long)parts[i]);
    pthread_mutex_lock(&w->mu);
    while (w->busy) pthread_cond_wait(&w->cv, &w->mu);
    int rc = 0;
    if (w->err) {
        rc = -1;
    } else if (n > w->cap) {
        int64_t *p = realloc(w->parts, (size_t)n * sizeof *p);
        uint64_t *s = p ? realloc(w->sums, (size_t)n * sizeof *s) : NULL;
        if (p) w->parts = p;
        if (s) w->sums = s, w->cap = n;
        if (!p || !s) rc = -2;
    }
    if (rc == 0) {
        memcpy(w->parts, parts, (size_t)n * sizeof *parts);
        w->nparts = n;
        w->fn = fn;
        w->arg = arg;
        w->busy = 1;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    if (rc == -1) return writer_error(w);
    if (rc == -2) return HPC_ERR(HPC_ERR_NOMEM, "writer");
    return 0;
}

int app_out_writer_stop(hpc_out_t *o)
{
    out_writer_t *w = o ? o->writer : NULL;
    if (!w) return 0;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    int rc = w->err ? writer_error(w) : 0;
    o->writer = NULL;
    writer_free(w);
    return rc;
}

int hpc_out_drain(hpc_out_t *o)
{
    return app_out_writer_stop(o);
}
