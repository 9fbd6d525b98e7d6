/* test_launch - launcher detection from simulated environments. */
#include "config.h"
#include <string.h>
#include "hpc_testing.h"
#include "testlib.h"

static void expect_launch(char *const *env, hpc_launcher_t l, int rank, int size, int lrank, int lsize)
{
    hpc_launch_t o;
    int rc = hpc_launch_parse(env, &o);
    EXPECT(rc == 0, "parse failed: %s", hpc_last_error());
    if (rc) return;
    EXPECT(o.launcher == l, "launcher %s, want %s", hpc_launcher_name(o.launcher), hpc_launcher_name(l));
    EXPECT(o.rank == rank && o.size == size, "rank/size %d/%d, want %d/%d", o.rank, o.size, rank, size);
    EXPECT(o.local_rank == lrank && o.local_size == lsize, "local %d/%d, want %d/%d", o.local_rank,
           o.local_size, lrank, lsize);
}

static void expect_error(char *const *env, const char *what)
{
    hpc_launch_t o;
    memset(&o, 0x5a, sizeof o);
    int rc = hpc_launch_parse(env, &o);
    EXPECT(rc == HPC_ERR_ARG, "%s: accepted", what);
    EXPECT(o.rank == 0x5a5a5a5a, "%s: output written on failure", what);
}

int main(void)
{
    expect_launch((char *[]){"HOME=/root", NULL}, HPC_LAUNCHER_NONE, -1, -1, -1, -1);
    /* srun: 3 nodes with 2 tasks, then one with 1; task 6 is on node 3 */
    expect_launch((char *[]){"SLURM_PROCID=6", "SLURM_NTASKS=7", "SLURM_LOCALID=0",
                             "SLURM_NODEID=3", "SLURM_TASKS_PER_NODE=2(x3),1", NULL},
                  HPC_LAUNCHER_SLURM, 6, 7, 0, 1);
    expect_launch((char *[]){"SLURM_PROCID=3", "SLURM_NTASKS=8", "SLURM_LOCALID=1",
                             "SLURM_NODEID=1", "SLURM_TASKS_PER_NODE=4,2(x2)", NULL},
                  HPC_LAUNCHER_SLURM, 3, 8, 1, 2);
    /* Open MPI's mpirun inside a Slurm allocation: the inner launcher counts */
    expect_launch((char *[]){"SLURM_NTASKS=4", "SLURM_PROCID=0", "OMPI_COMM_WORLD_RANK=2",
                             "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_RANK=0",
                             "OMPI_COMM_WORLD_LOCAL_SIZE=2", NULL},
                  HPC_LAUNCHER_OMPI, 2, 4, 0, 2);
    expect_launch((char *[]){"PMI_RANK=1", "PMI_SIZE=3", "MPI_LOCALRANKID=1", "MPI_LOCALNRANKS=3", NULL},
                  HPC_LAUNCHER_HYDRA, 1, 3, 1, 3);
    expect_launch((char *[]){"RANK=5", "WORLD_SIZE=8", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=4", NULL},
                  HPC_LAUNCHER_TORCHRUN, 5, 8, 1, 4);
    /* torchrun without LOCAL_WORLD_SIZE: local size unknown */
    expect_launch((char *[]){"RANK=0", "WORLD_SIZE=1", "LOCAL_RANK=0", NULL}, HPC_LAUNCHER_TORCHRUN, 0, 1,
                  0, -1);
    /* malformed Slurm task list: local size unknown, not an error */
    expect_launch((char *[]){"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_LOCALID=0", "SLURM_NODEID=0",
                             "SLURM_TASKS_PER_NODE=2(x", NULL},
                  HPC_LAUNCHER_SLURM, 0, 2, 0, -1);

    expect_error((char *[]){"RANK=4", "WORLD_SIZE=4", NULL}, "rank >= size");
    expect_error((char *[]){"PMI_RANK=x", "PMI_SIZE=2", "MPI_LOCALRANKID=0", NULL}, "non-numeric rank");
    expect_error((char *[]){"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=2",
                            "OMPI_COMM_WORLD_LOCAL_RANK=3", "OMPI_COMM_WORLD_LOCAL_SIZE=2", NULL},
                 "local rank >= local size");
    EXPECT(!strcmp(hpc_launcher_name(HPC_LAUNCHER_HYDRA), "hydra"), "name");
    return test_result();
}
