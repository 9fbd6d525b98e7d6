/* coll_topo.c - nodes as libhpc sees them, with HPC_NODE_SPLIT's fake
 * ones (issue 13): hpc_init's node id, count and node communicator, and
 * each communicator's node map (kept with its cached state), for no
 * split, odd-even, blocks:2 and blocks:3, on MPI_COMM_WORLD and on a
 * communicator in reverse rank order; auto picks hier on more than one
 * node (1 MiB allreduce, 4+ ranks).  Bad values are refused.
 * All ranks of the test run on one machine: the real split is one node.
 */
#include "config.h"
#include "hpc_coll.h"
#include "coll/test_hooks.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

static int wrank, p;

/* the fake node of world rank w under split s ("" none) */
static int node_of(const char *s, int w)
{
    if (!strcmp(s, "odd-even")) return w % 2;
    if (!strncmp(s, "blocks:", 7)) return w / atoi(s + 7);
    return 0;
}

/* comm's node map: nodes numbered by their lowest rank in comm */
static void check_map(const char *split, MPI_Comm comm)
{
    int n = 0, map[64], want[64], color[64], me;
    MPI_Comm_rank(comm, &me);
    int e = hpc_coll_test_nodes(comm, &n, map, 64);
    EXPECT(e == 0, "%s: %s", split, hpc_last_error());
    /* world rank of each rank of comm */
    int w[64];
    MPI_Allgather(&wrank, 1, MPI_INT, w, 1, MPI_INT, comm);
    int nn = 0;
    for (int r = 0; r < p; r++) {
        color[r] = node_of(split, w[r]);
        want[r] = -1;
        for (int q = 0; q < r; q++)
            if (color[q] == color[r]) want[r] = want[q];
        if (want[r] < 0) want[r] = nn++;
    }
    EXPECT(n == nn, "HPC_NODE_SPLIT=%s: %d nodes, expected %d", split, n, nn);
    for (int r = 0; r < p; r++)
        EXPECT(map[r] == want[r], "HPC_NODE_SPLIT=%s: rank %d on node %d, expected %d", split, r,
               map[r], want[r]);
    /* auto: hierarchical where there is more than one node (the model's
     * inter-node links cost more), never where there is one */
    hpc_alg_t alg = HPC_ALG_AUTO;
    EXPECT(hpc_coll_test_choose(comm, HPC_COLL_ALLREDUCE, 1 << 20, &alg) == 0, "choose");
    if (nn > 1 && p >= 4) EXPECT(alg == HPC_ALG_HIER, "HPC_NODE_SPLIT=%s: 1 MiB allreduce -> %s", split, hpc_alg_name(alg));
    if (nn == 1) EXPECT(alg != HPC_ALG_HIER, "one node: 1 MiB allreduce -> hier");
    /* the collectives still work over it */
    long x = me + 1, sum = 0;
    e = hpc_allreduce(&x, &sum, 1, HPC_INT64, HPC_SUM, comm, HPC_ALG_AUTO);
    EXPECT(e == 0 && sum == (long)p * (p + 1) / 2, "allreduce under %s: %ld", split, sum);
}

int main(int argc, char **argv)
{
    setenv("HPC_NODE_SPLIT", "blocks:2", 1);
    if (hpc_init(&argc, &argv) < 0) return 1;
    wrank = hpc_rank();
    p = hpc_size();
    EXPECT(hpc_node_id() == wrank / 2, "hpc_node_id %d under blocks:2", hpc_node_id());
    EXPECT(hpc_node_count() == (p + 1) / 2, "hpc_node_count %d under blocks:2", hpc_node_count());
    int ns = 0;
    MPI_Comm_size(hpc_comm_node(), &ns);
    EXPECT(ns == (wrank / 2 * 2 + 1 < p ? 2 : 1), "node communicator of %d ranks", ns);
    EXPECT((hpc_comm_leaders() != MPI_COMM_NULL) == (wrank % 2 == 0), "leaders communicator");

    const char *splits[] = {"", "odd-even", "blocks:2", "blocks:3"};
    for (int i = 0; i < 4; i++) {
        setenv("HPC_NODE_SPLIT", splits[i], 1);
        MPI_Comm a, rev;
        MPI_Comm_dup(MPI_COMM_WORLD, &a);   /* a fresh one: the map is made once per comm */
        MPI_Comm_split(MPI_COMM_WORLD, 0, p - wrank, &rev);
        check_map(splits[i], a);
        check_map(splits[i], rev);
        MPI_Comm_free(&a);
        MPI_Comm_free(&rev);
    }
    /* strict: a bad value fails the first collective on a new comm */
    const char *bad[] = {"odd", "blocks:", "blocks:0", "blocks:2x", "blocks:-1", "blocks: 2", "blocks:\t2"};
    for (int i = 0; i < (int)(sizeof bad / sizeof *bad); i++) {
        setenv("HPC_NODE_SPLIT", bad[i], 1);
        MPI_Comm a;
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        int e = hpc_barrier(a, HPC_ALG_AUTO);
        EXPECT(e == HPC_ERR_ARG && strstr(hpc_last_error(), "HPC_NODE_SPLIT"),
               "HPC_NODE_SPLIT=%s: %d %s", bad[i], e, hpc_last_error());
        hpc_error_clear();
        MPI_Comm_free(&a);
    }
    unsetenv("HPC_NODE_SPLIT");
    int rc = test_result();
    hpc_finalize();
    return rc;
}
