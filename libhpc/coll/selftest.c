/* selftest.c - hpc_coll_selftest(): every row of the registry (every
 * collective with every algorithm), blocking and nonblocking (started,
 * then test-polled as a training loop would), on the memory kinds the row
 * takes (host; device buffers where there is a GPU), checked against
 * values every rank can compute by itself.  Inputs are small integers, so
 * sums are exact in every dtype and any reduction order.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tolerance: exact for integers and small-integer float sums, except
 * float16/bfloat16 averages (one rounding) and float averages. */
static double tol(const hpc_coll_args_t *a, double want)
{
    if (a->op != HPC_AVG || a->dtype == HPC_INT32 || a->dtype == HPC_INT64) return 0;
    double u = a->dtype == HPC_FLOAT16 ? 0x1p-10 : a->dtype == HPC_BFLOAT16 ? 0x1p-7 : 1e-6;
    return 2 * u * (fabs(want) + 1);
}

/* One case on this rank: 0, or the cause of the failure recorded and
 * *bad set: HPC_ERR_DATA naming the first of *bad wrong elements, or a
 * call's error (*bad 1) with its whole record (where it failed) as the
 * cause, so that the verdict line shows it. */
static int run_case(MPI_Comm comm, hpc_coll_args_t *a, int nb, int dev, long *bad)
{
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    size_t es = hpc_dtype_size(a->dtype), sc, rc;
    hpc_coll_buf_counts(a, rank, p, &sc, &rc);
    if (a->coll == HPC_COLL_BCAST) sc = 0;
    void *hs = calloc(sc + 1, es), *hr = calloc(rc + 1, es);
    void *ds = NULL, *dr = NULL;
    int e = 0;
    *bad = 1;
    if (!hs || !hr) HPC_ERR_GOTO(e, out, HPC_ERR_NOMEM, "out of memory");
    for (size_t j = 0; j < sc; j++) hpc_dtype_set(a->dtype, hs, j, hpc_coll_check_value(a->op, rank, j));
    if (a->coll == HPC_COLL_BCAST)
        for (size_t j = 0; j < rc; j++) hpc_dtype_set(a->dtype, hr, j, rank == a->root ? hpc_coll_check_value(a->op, rank, j) : -99);
    else
        for (size_t j = 0; j < rc; j++) hpc_dtype_set(a->dtype, hr, j, -99);
    a->sendbuf = hs;
    a->recvbuf = hr;
    if (dev) {
        if ((e = coll_dev_alloc((sc + 1) * es, 2, &ds)) < 0 || (e = coll_dev_alloc((rc + 1) * es, 2, &dr)) < 0 ||
            (e = coll_dev_memcpy(ds, hs, sc * es)) < 0 || (e = coll_dev_memcpy(dr, hr, rc * es)) < 0)
            HPC_ERR_GOTO(e, out, e, "%s", hpc_last_error());
        a->sendbuf = ds;
        a->recvbuf = dr;
    }
    if (nb) {
        hpc_request_t *req = NULL;
        e = hpc_icoll(a, comm, &req);
        int done = 0;
        while (e == 0 && !done) e = hpc_test(&req, &done);
    } else {
        e = hpc_coll(a, comm);
    }
    if (e < 0) HPC_ERR_GOTO(e, out, e, "%s", hpc_last_error());
    if (dev && (e = coll_dev_memcpy(hr, dr, rc * es)) < 0) HPC_ERR_GOTO(e, out, e, "%s", hpc_last_error());
    *bad = 0;
    for (size_t i = 0; i < rc; i++) {
        double want = hpc_coll_check_expected(a, rank, p, i), got = hpc_dtype_get(a->dtype, hr, i);
        if (isnan(want)) continue;
        if (fabs(got - want) > tol(a, want)) {
            if (!*bad) e = HPC_ERR(HPC_ERR_DATA, "rank %d element %zu: %g, expected %g", rank, i, got, want);
            ++*bad;
        }
    }
out:
    if (ds) coll_dev_free(ds, 2);
    if (dr) coll_dev_free(dr, 2);
    free(hs);
    free(hr);
    return e;
}

/* The self-test of every row of the registry, or of row only_row alone
 * (>= 0); *ncases: cases run. */
int coll_selftest(MPI_Comm comm, int include_device, int verbose, int only_row, hpc_selftest_t *res)
{
    int rank, p, nrows;
    const coll_row_t *rows = coll_rows(&nrows);
    if (only_row >= nrows) return HPC_ERR(HPC_ERR_ARG, "selftest: no row %d", only_row);
    HPC_MPI(MPI_Comm_rank(comm, &rank));
    HPC_MPI(MPI_Comm_size(comm, &p));
    int devs = include_device && coll_dev_count() > 0;
    /* every rank must agree that device buffers are tested */
    int all_devs = 0;
    HPC_MPI(MPI_Allreduce(&devs, &all_devs, 1, MPI_INT, MPI_MIN, comm));
    if (include_device && !all_devs && rank == 0 && verbose > 0)
        printf("selftest: device buffers skipped (no GPU on %s)\n", devs ? "some ranks" : "this node");
    struct { hpc_dtype_t t; hpc_op_t op; } kinds[] = {
        {HPC_FLOAT32, HPC_SUM}, {HPC_INT64, HPC_MAX}, {HPC_INT32, HPC_AVG}, {HPC_BFLOAT16, HPC_SUM}};
    int ncase = 0, fails = 0;
    double t0 = MPI_Wtime();
    /* NCCL refuses ranks that share a GPU (and says why): skip it then */
    int nccl_ok = 0;
    if (all_devs && hpc_have_nccl() && (only_row < 0 || rows[only_row].backend == COLL_BE_NCCL)) {
        int e = hpc_barrier(comm, HPC_ALG_NCCL);
        nccl_ok = e == 0;
        if (e < 0 && rank == 0 && verbose >= 0) printf("selftest: nccl skipped: %s\n", hpc_last_error());
        hpc_error_clear();
    }
    /* one collective at a time: run its cases, then agree on the verdicts
     * with two MPI calls for the lot (not per case: on a node with more
     * ranks than cores every MPI call costs milliseconds) */
    enum { MAXC = 2 * 4 * HPC_ALG_COUNT };
    hpc_coll_args_t args[MAXC];
    int nbs[MAXC], first[MAXC], mine[MAXC];
    long bad[MAXC], tot[MAXC];
    char (*why)[256] = malloc(MAXC * sizeof *why);
    if (!why) return HPC_ERR(HPC_ERR_NOMEM, "selftest");
    for (int mem = 0; mem <= all_devs; mem++)
        for (int c = 0; c < HPC_COLL_COUNT; c++) {
            int n = 0;
            for (int i = 0; i < nrows; i++) {
                const coll_row_t *row = &rows[i];
                if ((int)row->coll != c || (only_row >= 0 && i != only_row)) continue;
                if (!(row->mem & (mem ? COLL_MEM_DEV : COLL_MEM_HOST))) continue;
                if (row->backend == COLL_BE_NCCL && !nccl_ok) continue;
                int nk = hpc_coll_reduces((hpc_coll_t)c) ? 4 : (c == HPC_COLL_BARRIER ? 1 : 2);
                for (int k = 0; k < nk; k++)
                    for (int nb = 0; nb < 2 && n < MAXC; nb++, n++) {
                        hpc_coll_args_t *a = &args[n];
                        /* on the device, the first kind's count passes a pipeline
                         * segment and a kernel grid's stride (4096 x 256), so the
                         * pipelined and grid-stride paths run too */
                        size_t count = mem && k == 0 ? (size_t)(1 << 20) + 37 : 5 + (size_t)k;
                        *a = (hpc_coll_args_t){.coll = (hpc_coll_t)c, .count = count,
                                               .dtype = kinds[k].t, .op = kinds[k].op,
                                               .root = p > 1 ? 1 : 0, .alg = row->alg};
                        if (!hpc_coll_reduces(a->coll)) a->op = HPC_SUM;
                        nbs[n] = nb;
                        why[n][0] = '\0';
                        if (run_case(comm, a, nb, mem, &bad[n]) < 0) {
                            /* kept for the verdict line: not the caller's error */
                            snprintf(why[n], sizeof why[n], "%s", hpc_last_cause());
                            hpc_error_clear();
                        }
                        mine[n] = bad[n] ? rank : p;
                    }
            }
            if (n == 0) continue;
            HPC_MPI(MPI_Allreduce(bad, tot, n, MPI_LONG, MPI_SUM, comm));
            HPC_MPI(MPI_Allreduce(mine, first, n, MPI_INT, MPI_MIN, comm));
            for (int i = 0; i < n; i++) {
                /* the first failing rank's reason, to rank 0 */
                if (tot[i] && first[i] != 0 && first[i] < p) {
                    if (rank == first[i]) MPI_Send(why[i], (int)sizeof why[i], MPI_CHAR, 0, 77, comm);
                    if (rank == 0) MPI_Recv(why[i], (int)sizeof why[i], MPI_CHAR, first[i], 77, comm, MPI_STATUS_IGNORE);
                }
                ncase++;
                if (tot[i]) fails++;
                if (rank == 0 && (verbose > 0 || (verbose == 0 && tot[i]))) {
                    const hpc_coll_args_t *a = &args[i];
                    char what[64] = "";
                    if (c != HPC_COLL_BARRIER)
                        snprintf(what, sizeof what, " %s%s%s count %zu", hpc_dtype_name(a->dtype),
                                 hpc_coll_reduces(a->coll) ? " " : "",
                                 hpc_coll_reduces(a->coll) ? hpc_op_name(a->op) : "", a->count);
                    printf("selftest: %-4s %-14s %-17s %-11s %s%s%s%s\n", tot[i] ? "FAIL" : "PASS",
                           hpc_coll_name(a->coll), hpc_alg_name(a->alg), nbs[i] ? "nonblocking" : "blocking",
                           mem ? "device" : "host", what, tot[i] ? ": " : "", tot[i] ? why[i] : "");
                }
            }
            if (rank == 0) fflush(stdout);
        }
    free(why);
    double secs = MPI_Wtime() - t0;
    if (rank == 0 && only_row < 0 && verbose >= 0) {
        printf("selftest: %d cases on %d rank%s (%s buffers), %d passed, %d failed, %.2f s\n", ncase, p,
               p == 1 ? "" : "s", all_devs ? "host and device" : "host", ncase - fails, fails,
               secs);
        fflush(stdout);
    }
    *res = (hpc_selftest_t){.cases = ncase, .failed = fails, .device = all_devs, .seconds = secs};
    return 0;
}

int hpc_coll_selftest(MPI_Comm comm, int include_device, int verbose, hpc_selftest_t *res)
{
    if (!res) return HPC_ERR(HPC_ERR_ARG, "NULL result");
    HPC_TRY(coll_selftest(comm, include_device, verbose, -1, res));
    return 0;
}
