/* coll_registry.c - the table of algorithms (libhpc/coll/registry.h) is
 * complete and everything claimed to derive from it does:
 *  - every row has a builder and a cost formula; no (collective,
 *    algorithm) twice; every algorithm constant has a row; every
 *    collective has native, nccl and linear;
 *  - costs: own algorithms finite and positive on 2+ ranks, native
 *    unmodelled (+inf), nccl 0, for host memory nccl not offered;
 *  - hpc_coll_has_alg, hpc_coll_algs, hpc_coll_alg_names, hpc_alg_name and
 *    hpc_alg_parse (and their messages) agree with the rows;
 *  - auto's model picks the cheapest row, computed here from the rows;
 *  - every row passes the self-test (on the memory kinds it takes and this
 *    machine has) and actually ran cases.
 */
#include "config.h"
#include "hpc_coll.h"
#include "coll/test_hooks.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXROWS = HPC_COLL_COUNT * HPC_ALG_COUNT };
static hpc_coll_test_row_t rows[MAXROWS];
static int nrows;

static int find(hpc_coll_t c, hpc_alg_t a)
{
    for (int i = 0; i < nrows; i++)
        if (rows[i].coll == c && rows[i].alg == a) return i;
    return -1;
}

static void check_table(void)
{
    EXPECT(nrows > 0 && nrows <= MAXROWS, "%d rows", nrows);
    int seen[HPC_ALG_COUNT] = {0};
    for (int i = 0; i < nrows; i++) {
        const hpc_coll_test_row_t *r = &rows[i];
        EXPECT(r->has_builder && r->has_cost, "row %d (%s %s) lacks a builder or a cost", i,
               hpc_coll_name(r->coll), hpc_alg_name(r->alg));
        EXPECT(find(r->coll, r->alg) == i, "%s %s has two rows", hpc_coll_name(r->coll),
               hpc_alg_name(r->alg));
        EXPECT(r->alg != HPC_ALG_AUTO, "auto has a row");
        EXPECT(r->mem >= 1 && r->mem <= 3, "row %d memory %u", i, r->mem);
        EXPECT((r->alg == HPC_ALG_NATIVE) == (r->backend == 1) &&
               (r->alg == HPC_ALG_NCCL) == (r->backend == 2), "row %d backend %d", i, r->backend);
        EXPECT(r->alg != HPC_ALG_NCCL || r->mem == 2, "nccl row %d takes host memory", i);
        seen[r->alg] = 1;
    }
    for (int a = HPC_ALG_AUTO + 1; a < HPC_ALG_COUNT; a++)
        EXPECT(seen[a], "algorithm %d (%s) has no row", a, hpc_alg_name((hpc_alg_t)a));
    for (int c = 0; c < HPC_COLL_COUNT; c++)
        EXPECT(find((hpc_coll_t)c, HPC_ALG_NATIVE) >= 0 && find((hpc_coll_t)c, HPC_ALG_NCCL) >= 0 &&
                   find((hpc_coll_t)c, HPC_ALG_LINEAR) >= 0,
               "%s lacks native, nccl or linear", hpc_coll_name((hpc_coll_t)c));
}

static void check_costs(void)
{
    size_t sizes[] = {0, 8, 4096, 1 << 20, (size_t)1 << 31};
    int ps[] = {1, 2, 3, 7, 16, 1000};
    for (int i = 0; i < nrows; i++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
                double t = hpc_coll_test_row_cost(i, sizes[s], ps[k]);
                const char *c = hpc_coll_name(rows[i].coll), *a = hpc_alg_name(rows[i].alg);
                if (rows[i].backend == 1)
                    EXPECT(isinf(t) && t > 0, "%s native: cost %g, not unmodelled", c, t);
                else if (rows[i].backend == 2)
                    EXPECT(t == 0, "%s nccl: cost %g", c, t);
                else
                    EXPECT(isfinite(t) && t >= 0 && (ps[k] == 1 || t > 0),
                           "%s %s: cost %g for %zu bytes on %d ranks", c, a, t, sizes[s], ps[k]);
            }
}

static void check_derived(void)
{
    char buf[512], all[512];
    hpc_coll_alg_names(HPC_COLL_COUNT, all, sizeof all);
    EXPECT(!strncmp(all, "auto, ", 6), "every name: '%s'", all);
    for (int a = 0; a < HPC_ALG_COUNT; a++) {
        hpc_alg_t back;
        const char *name = hpc_alg_name((hpc_alg_t)a);
        EXPECT(strcmp(name, "?") && hpc_alg_parse(name, &back) == 0 && (int)back == a, "name %d '%s'", a, name);
        EXPECT(strstr(all, name) != NULL, "'%s' not in '%s'", name, all);
    }
    hpc_alg_t x;
    hpc_error_clear();
    EXPECT(hpc_alg_parse("hypercube", &x) == HPC_ERR_ARG && strstr(hpc_last_error(), all),
           "parse message '%s' lacks '%s'", hpc_last_error(), all);
    for (int c = 0; c < HPC_COLL_COUNT; c++) {
        hpc_alg_t list[HPC_ALG_COUNT];
        int n = hpc_coll_algs((hpc_coll_t)c, list, HPC_ALG_COUNT), k = 0;
        EXPECT(hpc_coll_algs((hpc_coll_t)c, NULL, 0) == n, "count only");
        EXPECT(hpc_coll_has_alg((hpc_coll_t)c, HPC_ALG_AUTO), "auto");
        size_t len = 0;
        buf[0] = 0;
        for (int a = HPC_ALG_AUTO + 1; a < HPC_ALG_COUNT; a++) {
            int has = find((hpc_coll_t)c, (hpc_alg_t)a) >= 0;
            EXPECT(hpc_coll_has_alg((hpc_coll_t)c, (hpc_alg_t)a) == has, "has_alg %d %d", c, a);
            if (!has) continue;
            EXPECT(k < n && list[k] == (hpc_alg_t)a, "hpc_coll_algs(%s)[%d]", hpc_coll_name((hpc_coll_t)c), k);
            k++;
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", len ? ", " : "",
                                    hpc_alg_name((hpc_alg_t)a));
        }
        EXPECT(k == n, "%s: %d algorithms listed, %d rows", hpc_coll_name((hpc_coll_t)c), n, k);
        char names[512];
        EXPECT(!strcmp(hpc_coll_alg_names((hpc_coll_t)c, names, sizeof names), buf),
               "names of %s: '%s', rows say '%s'", hpc_coll_name((hpc_coll_t)c), names, buf);
    }
    EXPECT(hpc_coll_algs(HPC_COLL_COUNT, NULL, 0) == HPC_ERR_ARG, "bad collective");
    /* a collective without the algorithm: the message names the ones it has */
    hpc_coll_alg_names(HPC_COLL_ALLGATHER, buf, sizeof buf);
    int32_t in[4] = {0}, out[64];
    hpc_error_clear();
    EXPECT(hpc_allgather(in, out, 1, HPC_INT32, MPI_COMM_WORLD, HPC_ALG_RABENSEIFNER) == HPC_ERR_ARG &&
           strstr(hpc_last_error(), buf), "message '%s' lacks '%s'", hpc_last_error(), buf);
}

/* auto's model = the cheapest host row of the collective (ties: the
 * earlier row), computed here from the rows' own costs */
static void check_auto(void)
{
    size_t sizes[] = {0, 8, 1000, 65536, 1 << 22, (size_t)1 << 28};
    int ps[] = {1, 2, 3, 4, 7, 16, 64};
    for (int c = 0; c < HPC_COLL_COUNT; c++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
                int best = -1;
                double bt = INFINITY;
                for (int i = 0; i < nrows; i++) {
                    if ((int)rows[i].coll != c || !(rows[i].mem & 1)) continue;
                    double t = hpc_coll_test_row_cost(i, sizes[s], ps[k]);
                    if (t < bt) bt = t, best = i;
                }
                hpc_alg_t a = HPC_ALG_AUTO;
                EXPECT(best >= 0 && hpc_coll_choose((hpc_coll_t)c, sizes[s] / 2, HPC_FLOAT16, ps[k], 0, &a) == 0 &&
                           a == rows[best].alg,
                       "auto %s %zu B on %d: %s, the rows say %s", hpc_coll_name((hpc_coll_t)c), sizes[s], ps[k],
                       hpc_alg_name(a), best >= 0 ? hpc_alg_name(rows[best].alg) : "none");
            }
}

static int gpus_listed;

/* Whether NCCL can form on comm: every rank bound to a GPU of its own
 * (host, PCI bus id), as NCCL demands - decided from what the ranks hold,
 * not from the build, so one GPU shared by three ranks expects no case. */
static int nccl_can_form(MPI_Comm comm)
{
    char me[160], *all;
    int p, mine = hpc_gpu() >= 0 && *hpc_gpu_pci_bus_id(), every = 0;
    MPI_Comm_size(comm, &p);
    MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_MIN, comm);
    snprintf(me, sizeof me, "%s/%s", hpc_hostname(), mine ? hpc_gpu_pci_bus_id() : "");
    if (!(all = calloc((size_t)p, sizeof me))) return 0;
    MPI_Allgather(me, (int)sizeof me, MPI_CHAR, all, (int)sizeof me, MPI_CHAR, comm);
    int ok = hpc_have_nccl() && every;
    for (int i = 0; i < p && ok; i++)
        for (int j = 0; j < i && ok; j++) ok = strcmp(all + i * sizeof me, all + j * sizeof me) != 0;
    free(all);
    return ok;
}

static void check_selftest(MPI_Comm comm, int rank)
{
    int gpu = hpc_gpu_count() > 0, all = 0;
    MPI_Allreduce(&gpu, &all, 1, MPI_INT, MPI_MIN, comm);
    int nccl = all && nccl_can_form(comm);
    /* a GPU listed that a CUDA build does not see: the device rows would
     * be left out quietly - a failure */
    EXPECT(test_gpu_verdict(gpus_listed, TEST_CUDA_BUILT, hpc_gpu_count()) != 1,
           "rank %d: a GPU is listed, libhpc sees none: %s", rank, hpc_gpu_unavailable());
    for (int i = 0; i < nrows; i++) {
        int ncases = -1, nfail = -1;
        int e = hpc_coll_test_row_selftest(comm, i, 1, &ncases, &nfail);
        EXPECT(e == 0 && nfail == 0, "self-test of %s %s: %d failed (%s)", hpc_coll_name(rows[i].coll),
               hpc_alg_name(rows[i].alg), nfail, e ? hpc_last_error() : "");
        /* a row ran wherever its memory kind is here (nccl: needs the GPU) */
        int runs = (rows[i].mem & 1) || (all && (rows[i].backend != 2 /* nccl */ || nccl));
        EXPECT(!runs || ncases > 0, "self-test ran no case of %s %s", hpc_coll_name(rows[i].coll),
               hpc_alg_name(rows[i].alg));
    }
    if (rank == 0)
        printf("coll_registry: %d rows self-tested (device: %s, nccl: %s)\n", nrows, all ? "yes" : "no",
               nccl ? "yes" : "no (needs a GPU of its own per rank)");
}

int main(int argc, char **argv)
{
    gpus_listed = test_gpus_listed();    /* before MPI: it may fork nvidia-smi */
    /* hpc_init, not MPI_Init: it binds each rank's GPU (local rank % devices) */
    HPC_CHECK(hpc_init(&argc, &argv));
    int rank = hpc_rank();
    nrows = hpc_coll_test_rows(rows, MAXROWS);
    check_table();
    check_costs();
    check_derived();
    check_auto();
    check_selftest(MPI_COMM_WORLD, rank);
    long mine = test_failures, tot = 0;
    MPI_Reduce(&mine, &tot, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("coll_registry: %d rows, %ld failures\n", nrows, tot);
    hpc_finalize();
    return rank == 0 && tot ? 1 : 0;
}
