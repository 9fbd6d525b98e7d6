/* model.h - hpc-collbench's measurements of the cost model's constants
 * (model.c) and its scale simulator (simulate.c). */
#ifndef HPC_COLLBENCH_MODEL_H
#define HPC_COLLBENCH_MODEL_H
#include <stdio.h>
#include <mpi.h>

/* Measure alpha, beta (one node, and between two nodes where comm spans
 * more than one) and gamma; rank 0 writes them to tune.  Collective. */
void model_measure(MPI_Comm comm, FILE *tune);

#endif
