/* coll_tune.c - the tuning file's rows (issue 21.2): keyed by collective,
 * node count, ranks per node, memory kind and byte range, read back and
 * chosen from by auto and by hier's phases - the selection logic over a
 * parsed table, no timing.  One rank: the choices are local.
 *
 *  - a row applies to its shape exactly (or *), a byte range is [min, max);
 *  - a table measured on one node never steers a job of several nodes
 *    (nor the reverse), and a shape beyond a factor of 2 takes the model;
 *  - the nearest shape within a factor of 2 stands in, the exact one first;
 *  - memory kinds: host rows for host buffers, cuda rows for device ones,
 *    * for both;
 *  - hier's in-node phase is chosen from the rows of one node of that many
 *    ranks, its leaders' from the rows of N nodes of one rank; rows naming
 *    what a phase cannot run (native, hier; shm among the leaders or
 *    where the node has no segment) are passed over for the model;
 *  - a file in the format of issue 13 is refused whole (the model decides).
 */
#include "config.h"
#include "hpc_coll.h"
#include "coll/test_hooks.h"
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[] = "/tmp/hpc-coll-tune-XXXXXX";

static void use(const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    setenv("HPC_COLL_TUNING", path, 1);
    hpc_coll_test_reload_settings();
}

static hpc_alg_t pick(hpc_coll_t c, size_t bytes, int nodes, int ppn, int dev)
{
    hpc_alg_t a = HPC_ALG_AUTO;
    if (hpc_coll_test_choose_shape(c, bytes, nodes, ppn, dev, &a) < 0) return HPC_ALG_COUNT;
    return a;
}

static hpc_alg_t phase(hpc_coll_t c, size_t bytes, int nodes, int ppn, int shm)
{
    hpc_alg_t a = HPC_ALG_AUTO;
    if (hpc_coll_test_phase(c, bytes, nodes, ppn, shm, &a) < 0) return HPC_ALG_COUNT;
    return a;
}

#define IS(got, want, what)                                                             \
    do {                                                                                \
        hpc_alg_t g_ = (got);                                                           \
        EXPECT(g_ == (want), "%s: %s, expected %s", what, hpc_alg_name(g_), hpc_alg_name(want)); \
    } while (0)

/* the model's answer for a shape (no file) */
static hpc_alg_t model(hpc_coll_t c, size_t bytes, int nodes, int ppn, int dev)
{
    const char *t = getenv("HPC_COLL_TUNING");
    char keep[64];
    snprintf(keep, sizeof keep, "%s", t ? t : "");
    unsetenv("HPC_COLL_TUNING");
    hpc_coll_test_reload_settings();
    hpc_alg_t a = pick(c, bytes, nodes, ppn, dev);
    if (*keep) setenv("HPC_COLL_TUNING", keep, 1);
    hpc_coll_test_reload_settings();
    return a;
}

static hpc_alg_t model_phase(hpc_coll_t c, size_t bytes, int nodes, int ppn, int shm)
{
    unsetenv("HPC_COLL_TUNING");
    hpc_coll_test_reload_settings();
    hpc_alg_t a = phase(c, bytes, nodes, ppn, shm);
    setenv("HPC_COLL_TUNING", path, 1);
    hpc_coll_test_reload_settings();
    return a;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int fd = mkstemp(path);
    if (fd < 0) return 1;
    close(fd);
    const hpc_coll_t AR = HPC_COLL_ALLREDUCE, BC = HPC_COLL_BCAST, RD = HPC_COLL_REDUCE;

    /* ---- shapes, byte ranges, memory kinds ---- */
    use("# hpc-collbench --tune\n"
        "alpha 2e-6\n"
        "allreduce 1 8 host 0 4K butterfly\n"
        "allreduce 1 8 host 4K 1M ring\n"          /* [4K, 1M) */
        "allreduce 1 8 host 1M - rabenseifner\n"
        "allreduce 4 8 host 0 - tree\n"
        "allreduce 1 8 cuda 0 - ring\n"
        "bcast * * * 0 64K linear\n"
        "bcast 1 2 host 0 - scatter_allgather\n"   /* after the * row: the * row is exact too, and first */
        "reduce 2 4 host 0 - linear\n"
        "reduce 2 8 host 0 - ring\n");
    IS(pick(AR, 100, 1, 8, 0), HPC_ALG_BUTTERFLY, "1x8 100 B");
    IS(pick(AR, 4095, 1, 8, 0), HPC_ALG_BUTTERFLY, "1x8 4095 B");
    IS(pick(AR, 4096, 1, 8, 0), HPC_ALG_RING, "1x8 4 KiB (MIN inclusive)");
    IS(pick(AR, (1 << 20) - 1, 1, 8, 0), HPC_ALG_RING, "1x8 1 MiB - 1");
    IS(pick(AR, 1 << 20, 1, 8, 0), HPC_ALG_RABENSEIFNER, "1x8 1 MiB (MAX exclusive)");
    IS(pick(AR, 100, 4, 8, 0), HPC_ALG_TREE, "4x8: its own row, not the one-node table");
    /* a one-node table does not steer several nodes, nor the reverse */
    IS(pick(AR, 100, 2, 8, 0), HPC_ALG_TREE, "2x8: the 4-node row is within a factor of 2");
    IS(pick(AR, 100, 16, 8, 0), model(AR, 100, 16, 8, 0), "16x8: no row near: the model");
    IS(pick(AR, 100, 1, 1, 0), model(AR, 100, 1, 1, 0), "1x1: no row near");
    EXPECT(pick(AR, 100, 2, 8, 0) != HPC_ALG_BUTTERFLY, "2x8 took the one-node row");
    /* nearest within a factor of 2 in ranks per node; exact first */
    IS(pick(AR, 100, 1, 16, 0), HPC_ALG_BUTTERFLY, "1x16: the 1x8 row stands in");
    IS(pick(AR, 100, 1, 4, 0), HPC_ALG_BUTTERFLY, "1x4: the 1x8 row stands in");
    IS(pick(AR, 100, 1, 32, 0), model(AR, 100, 1, 32, 0), "1x32: beyond a factor of 2");
    IS(pick(RD, 100, 2, 4, 0), HPC_ALG_LINEAR, "2x4 exact");
    IS(pick(RD, 100, 2, 8, 0), HPC_ALG_RING, "2x8 exact");
    IS(pick(RD, 100, 2, 5, 0), HPC_ALG_LINEAR, "2x5: 2x4 is nearer than 2x8 (log2 ratios)");
    IS(pick(RD, 100, 2, 7, 0), HPC_ALG_RING, "2x7: 2x8 is nearer");
    /* wildcards, and the first of two rows that apply */
    IS(pick(BC, 100, 1, 2, 0), HPC_ALG_LINEAR, "bcast 1x2 100 B: the earlier row");
    IS(pick(BC, 100, 64, 64, 1), HPC_ALG_LINEAR, "bcast * * * on device memory");
    IS(pick(BC, 1 << 20, 1, 2, 0), HPC_ALG_SCATTER_ALLGATHER, "bcast 1x2 1 MiB");
    /* memory kinds */
    IS(pick(AR, 100, 1, 8, 1), HPC_ALG_RING, "device memory: the cuda row");
    IS(pick(HPC_COLL_ALLGATHER, 100, 1, 8, 1), model(HPC_COLL_ALLGATHER, 100, 1, 8, 1),
       "device memory, no row: the model (NCCL where built in)");
    IS(pick(AR, 100, 4, 8, 1), model(AR, 100, 4, 8, 1), "device memory: a host row does not apply");

    /* ---- hier's phases from the same rows ---- */
    use("reduce 1 4 host 0 - ring\n"          /* in a node of 4 */
        "bcast 1 4 host 0 - tree\n"
        "gather 1 * host 0 - shm\n"
        "allreduce 8 1 host 0 - butterfly\n"  /* among 8 leaders */
        "allreduce 16 1 host 0 - native\n"    /* a phase cannot run native */
        "bcast 8 1 host 0 - shm\n");          /* nor shm among the leaders */
    IS(phase(RD, 1 << 20, 1, 4, 1), HPC_ALG_RING, "in-node reduce of 4");
    IS(phase(BC, 1 << 20, 1, 4, 1), HPC_ALG_TREE, "in-node bcast of 4");
    IS(phase(HPC_COLL_GATHER, 64, 1, 6, 1), HPC_ALG_SHM, "in-node gather on shared memory");
    IS(phase(HPC_COLL_GATHER, 64, 1, 6, 0), model_phase(HPC_COLL_GATHER, 64, 1, 6, 0),
       "in-node gather without a segment: not shm");
    EXPECT(phase(HPC_COLL_GATHER, 64, 1, 6, 0) != HPC_ALG_SHM, "no segment, yet shm");
    IS(phase(AR, 1000, 8, 1, 0), HPC_ALG_BUTTERFLY, "8 leaders' allreduce");
    hpc_alg_t lead = phase(AR, 1000, 16, 1, 0);
    EXPECT(lead != HPC_ALG_NATIVE && lead != HPC_ALG_HIER && lead != HPC_ALG_SHM, "16 leaders: %s",
           hpc_alg_name(lead));
    IS(lead, model_phase(AR, 1000, 16, 1, 0), "16 leaders: a native row passed over for the model");
    IS(phase(BC, 1000, 8, 1, 1), model_phase(BC, 1000, 8, 1, 1), "8 leaders' bcast: not shm");
    /* the model on one node with a segment: shared memory for small calls */
    IS(model_phase(RD, 8, 1, 4, 1), HPC_ALG_SHM, "model: in-node 8-byte reduce");

    /* ---- the format of issue 13: refused whole ---- */
    use("allreduce 8 0 - ring\n");
    IS(pick(AR, 100, 1, 8, 0), model(AR, 100, 1, 8, 0), "old format: ignored, the model");
    use("allreduce 1 8 host 0 - ring\nallreduce 8 0 - tree\n");
    IS(pick(AR, 100, 1, 8, 0), model(AR, 100, 1, 8, 0), "old row on line 2: the whole file ignored");
    use("allreduce 1 8 cuda 0 - shm\n");
    IS(pick(AR, 100, 1, 8, 1), model(AR, 100, 1, 8, 1), "cuda row naming a host-only algorithm: refused");

    unlink(path);
    unsetenv("HPC_COLL_TUNING");
    printf("coll_tune: %d failures\n", test_failures);
    MPI_Finalize();
    return test_failures ? 1 : 0;
}
