/* model.h - hpc-collbench's measurements of the cost model's constants
 * (model_measure.c) and its scale simulator (sim_table.c). */
#ifndef HPC_COLLBENCH_MODEL_H
#define HPC_COLLBENCH_MODEL_H
#include <stdio.h>
#include <mpi.h>
#include "hpc_coll.h"

/* Measure alpha, beta (one node, and between two nodes where comm spans
 * more than one) and gamma; rank 0 writes them to tune.  Collective. */
void model_measure(MPI_Comm comm, FILE *tune);

/* --simulate: the table for ranks on nodes, predicted (sim_table.c);
 * rank 0 prints it (and CSV rows to csv), the others return at once. */
typedef struct {
    hpc_coll_t coll;
    const hpc_alg_t *algs;   /* nalg of them, or 0: every one with a schedule */
    int nalg;
    size_t minb, maxb;
    double factor;
    hpc_dtype_t dt;
    int ranks, nodes;
    /* each cell of the table (for --plot): algorithm k of algs_out */
    void (*cell)(void *ctx, size_t size, size_t count, int k, double us, double algbw, double busbw, int ok);
    void *ctx;
    hpc_alg_t *algs_out;     /* [HPC_ALG_COUNT]: the algorithms simulated, *nalg_out of them */
    int *nalg_out;
} sim_opts_t;
int simulate_run(const sim_opts_t *s, FILE *csv);

#endif
