/* model_measure.c - the cost model's constants, measured for --tune.
 *
 * alpha (seconds per message) and beta (seconds per byte) come from a
 * ping-pong between rank 0 and another rank of its node - and, where the
 * job spans nodes (real ones, or HPC_NODE_SPLIT's), between rank 0 and a
 * rank of another node, which gives alpha_inter and beta_inter: one way
 * takes alpha + n beta, so alpha is the time of 8 bytes and beta the
 * slope up to 4 MiB.  gamma (seconds per byte reduced) is one core
 * summing float32 vectors of 4 MiB.  The node's shared memory: beta_shm
 * is one core's memcpy of 64 MiB per byte, alpha_shm half of a barrier
 * through the node's shared segment (one flag each way; the shm rows
 * price a barrier at 2 alpha_shm).  Rank 0 writes the lines the tuning
 * file's parser reads (libhpc/coll/select.c).
 */
#include "config.h"
#include "hpc_app.h"
#include "model.h"

#include <stdlib.h>
#include <string.h>

enum { BIG = 4 << 20, ITERS = 20 };

/* One-way time of bytes between ranks a and b (rank a's measurement,
 * best of ITERS round trips, given to every rank). */
static double pingpong(MPI_Comm comm, int a, int b, size_t bytes, char *buf)
{
    int me;
    double best = 1e30;
    MPI_Comm_rank(comm, &me);
    for (int i = 0; i < ITERS && (me == a || me == b); i++) {
        double t0 = MPI_Wtime();
        if (me == a) {
            MPI_Send(buf, (int)bytes, MPI_BYTE, b, 0, comm);
            MPI_Recv(buf, (int)bytes, MPI_BYTE, b, 0, comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, a, 0, comm, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)bytes, MPI_BYTE, a, 0, comm);
        }
        double t = (MPI_Wtime() - t0) / 2;
        if (t < best) best = t;
    }
    MPI_Bcast(&best, 1, MPI_DOUBLE, a, comm);
    return best;
}

/* alpha and beta between ranks 0 and peer */
static void link_of(MPI_Comm comm, int peer, char *buf, double *alpha, double *beta)
{
    double t0 = pingpong(comm, 0, peer, 8, buf), t1 = pingpong(comm, 0, peer, BIG, buf);
    *alpha = t0;
    *beta = t1 > t0 ? (t1 - t0) / (BIG - 8) : 0;
}

/* seconds per byte of one core's memcpy from memory (64 MiB, beyond
 * the caches, as --membw; best of 5) */
static double beta_shm_of(void)
{
    size_t n = (size_t)64 << 20;
    char *x = malloc(n), *y = malloc(n);
    double best = 1e30;
    if (!x || !y) hpc_app_fatal(HPC_EXIT_DATA, "out of memory");
    memset(x, 1, n);
    memset(y, 2, n);
    for (int r = 0; r < 5; r++) {
        double t0 = MPI_Wtime();
        memcpy(y, x, n);
        double t = MPI_Wtime() - t0;
        if (t < best) best = t;
        x[r] = y[n - 1 - (size_t)r];
    }
    free(x);
    free(y);
    return best / (double)n;
}

/* half of a barrier on the node's shared memory (0: one rank per node);
 * every node measures its own, rank 0's is kept */
static double alpha_shm_of(MPI_Comm comm)
{
    MPI_Comm node = hpc_comm_node();
    int q = 0;
    double a = 0;
    MPI_Comm_size(node, &q);
    if (q > 1) {
        for (int i = 0; i < 20; i++) HPC_CHECK(hpc_barrier(node, HPC_ALG_SHM));
        double t0 = MPI_Wtime();
        for (int i = 0; i < ITERS * 50; i++) HPC_CHECK(hpc_barrier(node, HPC_ALG_SHM));
        a = (MPI_Wtime() - t0) / (ITERS * 50) / 2;
    }
    HPC_CHECK(hpc_bcast(&a, 1, HPC_FLOAT64, 0, comm, HPC_ALG_NATIVE));
    return a;
}

static double gamma_of(void)
{
    size_t n = BIG / sizeof(float);
    float *x = malloc(BIG), *y = malloc(BIG);
    double best = 1e30;
    if (!x || !y) hpc_app_fatal(HPC_EXIT_DATA, "out of memory");
    for (size_t i = 0; i < n; i++) x[i] = y[i] = (float)(i % 7);
    for (int r = 0; r < 5; r++) {
        double t0 = MPI_Wtime();
        for (size_t i = 0; i < n; i++) x[i] += y[i];
        double t = MPI_Wtime() - t0;
        if (t < best) best = t;
    }
    volatile float sink = x[n / 2];
    (void)sink;
    free(x);
    free(y);
    return best / BIG;
}

void model_measure(MPI_Comm comm, FILE *tune)
{
    int me, p, node = hpc_node_id();
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    int *nodes = malloc((size_t)p * sizeof *nodes);
    char *buf = calloc(1, BIG);
    if (!nodes || !buf) hpc_app_fatal(HPC_EXIT_DATA, "out of memory");
    MPI_Allgather(&node, 1, MPI_INT, nodes, 1, MPI_INT, comm);
    int intra = -1, inter = -1;
    for (int r = 1; r < p; r++) {
        if (nodes[r] == nodes[0] && intra < 0) intra = r;
        if (nodes[r] != nodes[0] && inter < 0) inter = r;
    }
    double a = 0, b = 0, ai = 0, bi = 0, g = gamma_of(), bs = beta_shm_of(), as = alpha_shm_of(comm);
    if (intra > 0) link_of(comm, intra, buf, &a, &b);
    if (inter > 0) link_of(comm, inter, buf, &ai, &bi);
    if (tune) {
        fprintf(tune, "# cost model, measured: ping-pong rank 0 <-> %d (same node)%s; gamma, beta_shm: one "
                      "core; alpha_shm: a barrier through the node's shared memory / 2\n",
                intra, inter > 0 ? " and <-> another node" : "");
        if (intra > 0) fprintf(tune, "alpha %.3g\nbeta %.3g\n", a, b);
        fprintf(tune, "gamma %.3g\nbeta_shm %.3g\n", g, bs);
        if (as > 0) fprintf(tune, "alpha_shm %.3g\n", as);
        if (inter > 0) fprintf(tune, "alpha_inter %.3g\nbeta_inter %.3g\n", ai, bi);
    }
    free(nodes);
    free(buf);
}
