/* test_app - the app kit's parts that need MPI, at 1 to 4 ranks: 2D grids
 * and block maths (against brute force), the work queue (every item to
 * exactly one rank, skipped ones never, a closed queue empty for all),
 * run folders (CSV rows kept or dropped on resume), whole files (old
 * contents kept until the commit, a full device an error, plots named by
 * hostile file names drawn under exactly those names and nothing run), and
 * resumable outputs (create, parts done, finish; resume continues; another
 * key refused). */
#include "config.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "hpc_app_h5.h"
#include "testlib.h"

static int rank, size;
static char dir[512];

static void grids(void)
{
    int pr, pc;
    const int want[][3] = {{1, 1, 1}, {2, 1, 2}, {3, 1, 3}, {4, 2, 2}, {6, 2, 3}, {7, 1, 7}, {12, 3, 4}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        hpc_grid_dims(want[i][0], &pr, &pc);
        EXPECT(pr == want[i][1] && pc == want[i][2], "%d ranks: %dx%d", want[i][0], pr, pc);
    }
    hpc_grid_t *g;
    EXPECT(hpc_grid_create(hpc_comm_world(), 0, 0, &g) == 0, "grid: %s", hpc_last_error());
    int r, c;
    MPI_Comm_rank(hpc_grid_row_comm(g), &c);
    MPI_Comm_rank(hpc_grid_col_comm(g), &r);
    EXPECT(r == hpc_grid_row(g) && c == hpc_grid_col(g) && rank == r * hpc_grid_pcols(g) + c,
           "rank %d at (%d,%d)", rank, r, c);
    hpc_grid_free(g);
    EXPECT(hpc_grid_create(hpc_comm_world(), size, 1, &g) == 0 && hpc_grid_row(g) == rank, "Px1");
    hpc_grid_free(g);
    EXPECT(hpc_grid_create(hpc_comm_world(), size + 1, 1, &g) == HPC_ERR_ARG, "wrong grid accepted");
}

static void blocks(void)
{
    for (int64_t n = 0; n < 30; n++)
        for (int parts = 1; parts < 8; parts++) {
            int64_t next = 0;
            for (int i = 0; i < parts; i++) {
                int64_t s, c;
                hpc_block_range(n, parts, i, &s, &c);
                EXPECT(s == next && c >= n / parts && c <= n / parts + 1, "n %lld parts %d block %d",
                       (long long)n, parts, i);
                for (int64_t k = s; k < s + c; k++)
                    EXPECT(hpc_block_owner(n, parts, k) == i, "owner of %lld", (long long)k);
                next = s + c;
            }
            EXPECT(next == n, "blocks of %lld do not cover it", (long long)n);
        }
    /* block-cyclic against counting by hand */
    for (int64_t n = 0; n < 40; n++)
        for (int64_t nb = 1; nb < 5; nb++)
            for (int p = 1; p < 5; p++) {
                int64_t count[5] = {0};
                for (int64_t k = 0; k < n; k++) {
                    int o = hpc_bc_owner(k, nb, p);
                    EXPECT(hpc_bc_local(k, nb, p) == count[o], "local index");
                    EXPECT(hpc_bc_global(count[o], nb, o, p) == k, "global index");
                    count[o]++;
                }
                for (int q = 0; q < p; q++)
                    EXPECT(hpc_bc_numroc(n, nb, q, p) == count[q], "numroc n %lld nb %lld p %d q %d",
                           (long long)n, (long long)nb, p, q);
            }
}

static void workq(void)
{
    const int64_t n = 103;
    uint8_t skip[103] = {0};
    for (int64_t i = 0; i < n; i += 7) skip[i] = 1;
    hpc_workq_t *q;
    EXPECT(hpc_workq_create(hpc_comm_world(), n, skip, &q) == 0, "workq");
    int *mine = calloc(n, sizeof *mine), *all = calloc(n, sizeof *all);
    int64_t items[5], got;
    while ((got = hpc_workq_take(q, 1 + rank % 3, items)) > 0)
        for (int64_t k = 0; k < got; k++) mine[items[k]]++;
    MPI_Allreduce(mine, all, (int)n, MPI_INT, MPI_SUM, hpc_comm_world());
    for (int64_t i = 0; i < n; i++) EXPECT(all[i] == !skip[i], "item %lld taken %d times", (long long)i, all[i]);
    EXPECT(hpc_workq_pending(q) == n - 15, "pending %lld", (long long)hpc_workq_pending(q));
    hpc_workq_free(q);
    /* closed by one rank: nobody gets anything afterwards */
    EXPECT(hpc_workq_create(hpc_comm_world(), n, NULL, &q) == 0, "workq");
    if (rank == 0) hpc_workq_close(q);
    MPI_Barrier(hpc_comm_world());
    EXPECT(hpc_workq_take(q, 4, items) == 0, "a closed queue handed out work");
    hpc_workq_free(q);
    free(mine);
    free(all);
}

static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    int n = 0, c;
    while (f && (c = fgetc(f)) != EOF) n += c == '\n';
    if (f) fclose(f);
    return n;
}

static void runs(void)
{
    hpc_run_t *r;
    char sub[600], csv[700];
    snprintf(sub, sizeof sub, "%s/a/b", dir);
    EXPECT(hpc_run_open(sub, hpc_comm_world(), &r) == 0, "run folder: %s", hpc_last_error());
    EXPECT(hpc_run_path(r, "metrics.csv", csv, sizeof csv) == 0, "path");
    EXPECT(hpc_run_csv_open(r, "metrics.csv", "step,loss", -1) == 0, "csv");
    for (int s = 1; s <= 5; s++) EXPECT(hpc_run_csv_row(r, "%d,%g", s, 1.0 / s) == 0, "row");
    hpc_run_close(r);
    MPI_Barrier(hpc_comm_world());
    EXPECT(count_lines(csv) == 6, "csv has %d lines", count_lines(csv));
    MPI_Barrier(hpc_comm_world());   /* all have read it before rank 0 rewrites it */
    /* resumed at step 3: rows 4 and 5 go, new rows follow */
    EXPECT(hpc_run_open(sub, hpc_comm_world(), &r) == 0, "reopen");
    EXPECT(hpc_run_csv_open(r, "metrics.csv", "step,loss", 3) == 0, "csv keep");
    EXPECT(hpc_run_csv_row(r, "4,0.3") == 0, "row");
    if (rank == 0 && hpc_gnuplot()[0])
        EXPECT(hpc_run_plot(r, "loss.png", "set datafile separator ','\nplot 'metrics.csv' using 1:2 with lines") == 0,
               "plot: %s", hpc_last_error());
    hpc_run_close(r);
    MPI_Barrier(hpc_comm_world());
    EXPECT(count_lines(csv) == 5, "resumed csv has %d lines", count_lines(csv));
    if (hpc_gnuplot()[0]) {
        char png[700];
        snprintf(png, sizeof png, "%s/loss.png", sub);
        EXPECT(access(png, R_OK) == 0, "no plot");
    }
    /* a file where the folder should be */
    EXPECT(hpc_run_open(csv, hpc_comm_world(), &r) == HPC_ERR_IO, "a file taken as a run folder");
}

static int count_entries(const char *path)
{
    DIR *d = opendir(path);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d) closedir(d);
    return n;
}

static void slurp(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    buf[n] = '\0';
    if (f) fclose(f);
}

/* rank 0 only: files belong to one process */
static void files(void)
{
    char sub[600], path[700], got[64];
    snprintf(sub, sizeof sub, "%s/files", dir);
    mkdir(sub, 0777);
    snprintf(path, sizeof path, "%s/t.tune", sub);
    hpc_file_t *f;
    EXPECT(hpc_file_open(path, &f) == 0, "open: %s", hpc_last_error());
    EXPECT(hpc_file_printf(f, "old\n") == 0, "printf");
    EXPECT(hpc_file_commit(f) == 0, "commit: %s", hpc_last_error());
    slurp(path, got, sizeof got);
    EXPECT(!strcmp(got, "old\n"), "committed '%s'", got);
    /* a run that fails keeps the old file, and leaves no temporary */
    EXPECT(hpc_file_open(path, &f) == 0, "reopen");
    hpc_file_printf(f, "half");
    slurp(path, got, sizeof got);
    EXPECT(!strcmp(got, "old\n"), "old contents gone before the commit: '%s'", got);
    hpc_file_discard(f);
    slurp(path, got, sizeof got);
    EXPECT(!strcmp(got, "old\n") && count_entries(sub) == 1, "discard: '%s', %d entries", got,
           count_entries(sub));
    /* a full device: an error naming the cause, never success */
    EXPECT(hpc_file_open("/dev/full", &f) == 0, "open /dev/full: %s", hpc_last_error());
    hpc_file_printf(f, "x\n");
    EXPECT(hpc_file_commit(f) == HPC_ERR_IO && strstr(hpc_last_cause(), "No space"),
           "/dev/full: %s", hpc_last_cause());
    hpc_error_clear();
    snprintf(path, sizeof path, "%s/missing/x.csv", sub);
    EXPECT(hpc_file_check(path) == HPC_ERR_IO && hpc_file_open(path, &f) == HPC_ERR_IO, "missing folder");
    EXPECT(hpc_file_check(sub) == HPC_ERR_IO, "a folder as a file");
    hpc_error_clear();
    if (!hpc_gnuplot()[0]) return;
    /* names that would break out of a quoted gnuplot string */
    const char *names[] = {"bob's.png", "q.png'; system('touch pwned'); x='.png", "a\"b.png"};
    for (int i = 0; i < 3; i++) {
        EXPECT(hpc_plot(names[i], "plot x", sub) == 0, "plot %s: %s", names[i], hpc_last_error());
        snprintf(path, sizeof path, "%s/%s", sub, names[i]);
        EXPECT(access(path, R_OK) == 0, "no plot named %s", names[i]);
    }
    snprintf(path, sizeof path, "%s/pwned", sub);
    EXPECT(access(path, F_OK) != 0 && access("pwned", F_OK) != 0, "the plot's name ran a command");
    EXPECT(count_entries(sub) == 4, "%d files after the plots (1 tune + 3 plots)", count_entries(sub));
    EXPECT(hpc_plot("missing/p.png", "plot x", sub) == HPC_ERR_IO, "plot into a missing folder");
    EXPECT(hpc_plot("bad.png", "plot nonsense_function(x)", sub) == HPC_ERR_IO && count_entries(sub) == 4,
           "a failed plot left a file");
    hpc_error_clear();
}

static void outputs(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/out.h5", dir);
    hpc_out_t *o;
    hpc_app_key_add("n=10");
    EXPECT(hpc_out_open(path, hpc_comm_world(), HPC_OUT_NEW, hpc_app_key(), 4, "done", 1e3, &o) == 0,
           "create: %s", hpc_last_error());
    EXPECT(hpc_out_state(o) == HPC_OUT_CREATED && hpc_out_ndone(o) == 0, "state");
    char *argv[] = {"test_app"};
    EXPECT(hpc_out_ready(o, 1, argv) == 0, "ready: %s", hpc_last_error());
    if (rank == 0) EXPECT(hpc_out_part_done(o, 1) == 0, "part: %s", hpc_last_error());
    EXPECT(hpc_out_finish(o, 0, 1.0, 1, argv) == HPC_ERR_IO, "an unfinished output completed");
    hpc_error_clear();
    /* resume: part 1 is done; another key is refused naming the field */
    EXPECT(hpc_out_open(path, hpc_comm_world(), HPC_OUT_RESUME, "n=11", 4, "done", 0, &o) == HPC_ERR_DATA,
           "resume with another key");
    EXPECT(strstr(hpc_last_cause(), "n: 10 in the file, 11 now") != NULL, "diff: %s", hpc_last_cause());
    EXPECT(hpc_out_open(path, hpc_comm_world(), HPC_OUT_RESUME, hpc_app_key(), 4, "done", 0, &o) == 0,
           "resume: %s", hpc_last_error());
    EXPECT(hpc_out_state(o) == HPC_OUT_RESUMED && hpc_out_ndone(o) == 1 && hpc_out_done(o)[1], "resumed state");
    EXPECT(hpc_out_finish(o, 1, 2.0, 1, argv) == 0, "finish: %s", hpc_last_error());
    EXPECT(access(path, R_OK) == 0, "no final file");
    EXPECT(hpc_out_open(path, hpc_comm_world(), HPC_OUT_NEW, hpc_app_key(), 4, "done", 0, &o) == HPC_ERR_IO,
           "overwrote without --force");
    EXPECT(hpc_out_open(path, hpc_comm_world(), HPC_OUT_RESUME, hpc_app_key(), 4, "done", 0, &o) == 0 &&
           hpc_out_state(o) == HPC_OUT_COMPLETE, "resume of a complete output");
    EXPECT(hpc_out_finish(o, 1, 0, 1, argv) == 0, "close complete");
    EXPECT(hpc_out_open(path, hpc_comm_world(), HPC_OUT_FORCE, hpc_app_key(), 4, "done", 1e300, &o) == HPC_ERR_IO &&
           strstr(hpc_last_cause(), "would need"), "no space check: %s", hpc_last_cause());
}

/* MemAvailable against what sysinfo's totals allow; a small request fits */
static void memory(void)
{
    size_t avail = 0;
    EXPECT(hpc_mem_available(&avail) == 0, "hpc_mem_available: %s", hpc_last_error());
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    EXPECT(avail > 0 && (double)avail <= (double)pages * (double)psize, "available %zu of %ld pages of %ld",
           avail, pages, psize);
    hpc_app_need_memory(1 << 20, "a 1 MiB test");   /* returns: it fits */
}

int main(int argc, char **argv)
{
    if (hpc_init(&argc, &argv)) return 1;
    rank = hpc_rank();
    size = hpc_size();
    int id = rank == 0 ? (int)getpid() : 0;
    MPI_Bcast(&id, 1, MPI_INT, 0, hpc_comm_world());
    snprintf(dir, sizeof dir, "%s/hpc_test_app_%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", id);
    if (rank == 0) mkdir(dir, 0777);
    MPI_Barrier(hpc_comm_world());
    grids();
    blocks();
    workq();
    runs();
    if (rank == 0) files();
    outputs();
    memory();
    MPI_Barrier(hpc_comm_world());
    if (rank == 0) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    }
    int errs = test_failures, total = 0;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, hpc_comm_world());
    hpc_finalize();
    return rank == 0 ? total != 0 : 0;
}
