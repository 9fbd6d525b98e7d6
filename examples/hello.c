/* hello.c - a program of your own on libhpc: start-up from any launcher
 * (GPU bound, MPI up, threads chosen), a random number that depends on an
 * item index and not on the rank count, a collective, the error rule.
 *   make && hpc-mpiexec -n 4 ./hello */
#include <stdio.h>
#include <hpc.h>
#include <hpc_coll.h>

int main(int argc, char **argv)
{
    if (hpc_init(&argc, &argv) < 0) {             /* launcher, GPU, MPI, threads */
        fprintf(stderr, "hello: %s\n", hpc_last_cause());
        return 1;
    }
    hpc_rng_t r;
    hpc_rng_init(&r, 1234, /* item index, never the rank */ hpc_rank());
    double x = hpc_rng_uniform(&r), sum = 0;
    printf("rank %d of %d on node %d drew %.6f\n", hpc_rank(), hpc_size(), hpc_node_id(), x);
    HPC_CHECK(hpc_allreduce(&x, &sum, 1, HPC_FLOAT64, HPC_SUM, hpc_comm_world(), HPC_ALG_AUTO));
    if (hpc_rank() == 0) printf("sum over %d ranks: %.6f\n", hpc_size(), sum);
    HPC_CHECK(hpc_finalize());
    return 0;
}
