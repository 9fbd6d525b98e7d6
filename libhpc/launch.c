/* launch.c - what the launcher told this process, read before MPI_Init.
 *
 * Binding a GPU has to happen before MPI_Init (CUDA-aware MPIs and NCCL
 * pick the current device up then), so the local rank must come from the
 * launcher's environment, not from MPI.  Pure parsing: tests feed it
 * simulated environments.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "internal.h"

extern char **environ;

static const char *lookup(char *const *envp, const char *name)
{
    if (!envp) return getenv(name);
    size_t n = strlen(name);
    for (; *envp; envp++)
        if (!strncmp(*envp, name, n) && (*envp)[n] == '=') return *envp + n + 1;
    return NULL;
}

/* A non-negative integer, or -1 if absent or malformed. */
static int intvar(char *const *envp, const char *name)
{
    const char *s = lookup(envp, name);
    if (!s || !*s) return -1;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < 0 || v > 1 << 30) return -1;
    return (int)v;
}

/* SLURM_TASKS_PER_NODE is "2(x3),1": tasks on each node in order; pick
 * node `node`'s count.  -1 if it cannot be read. */
static int slurm_tasks_on_node(const char *s, int node)
{
    if (!s || node < 0) return -1;
    while (*s) {
        char *end;
        long count = strtol(s, &end, 10);
        if (end == s || count < 0) return -1;
        long rep = 1;
        s = end;
        if (!strncmp(s, "(x", 2)) {
            rep = strtol(s + 2, &end, 10);
            if (end == s + 2 || *end != ')' || rep < 1) return -1;
            s = end + 1;
        }
        if (node < rep) return (int)count;
        node -= (int)rep;
        if (*s == ',') s++;
        else if (*s) return -1;
    }
    return -1;
}

/* the variable names the launcher was read from, for messages */
typedef struct { const char *rank, *size, *lrank, *lsize; } names_t;

static void fill(hpc_launch_t *o, hpc_launcher_t l, char *const *envp, const char *rank,
                 const char *size, const char *lrank, const char *lsize, names_t *nm)
{
    nm->rank = rank;
    nm->size = size;
    nm->lrank = lrank;
    nm->lsize = lsize ? lsize : "SLURM_TASKS_PER_NODE";
    o->launcher = l;
    o->rank = intvar(envp, rank);
    o->size = intvar(envp, size);
    o->local_rank = intvar(envp, lrank);
    o->local_size = lsize ? intvar(envp, lsize) : -1;
}

int hpc_launch_parse(char *const *envp, hpc_launch_t *out)
{
    if (!out) return HPC_ERR(HPC_ERR_ARG, "out is NULL");
    hpc_launch_t o = {HPC_LAUNCHER_NONE, -1, -1, -1, -1};
    names_t nm;
    if (lookup(envp, "OMPI_COMM_WORLD_RANK")) {
        fill(&o, HPC_LAUNCHER_OMPI, envp, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
             "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", &nm);
    } else if (lookup(envp, "PMI_RANK") && lookup(envp, "MPI_LOCALRANKID")) {
        fill(&o, HPC_LAUNCHER_HYDRA, envp, "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID",
             "MPI_LOCALNRANKS", &nm);
    } else if (lookup(envp, "RANK") && lookup(envp, "WORLD_SIZE")) {
        fill(&o, HPC_LAUNCHER_TORCHRUN, envp, "RANK", "WORLD_SIZE", "LOCAL_RANK",
             "LOCAL_WORLD_SIZE", &nm);
    } else if (lookup(envp, "SLURM_PROCID")) {
        fill(&o, HPC_LAUNCHER_SLURM, envp, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", NULL, &nm);
        o.local_size = slurm_tasks_on_node(lookup(envp, "SLURM_TASKS_PER_NODE"),
                                           intvar(envp, "SLURM_NODEID"));
    }
    /* values, not the parsed numbers: a malformed one shows as it is */
#define V(name) (lookup(envp, name) ? lookup(envp, name) : "(unset)")
    if (o.launcher != HPC_LAUNCHER_NONE && (o.rank < 0 || o.size < 1 || o.rank >= o.size))
        return HPC_ERR(HPC_ERR_ARG, "%s=%s %s=%s (%s) contradict each other; left over from "
                       "another launcher?", nm.rank, V(nm.rank), nm.size, V(nm.size),
                       hpc_launcher_name(o.launcher));
    if (o.local_rank >= 0 && o.local_size > 0 && o.local_rank >= o.local_size)
        return HPC_ERR(HPC_ERR_ARG, "%s=%s %s=%s (%s) contradict each other; left over from "
                       "another launcher?", nm.lrank, V(nm.lrank), nm.lsize, V(nm.lsize),
                       hpc_launcher_name(o.launcher));
#undef V
    *out = o;
    return 0;
}

const char *hpc_launcher_name(hpc_launcher_t l)
{
    switch (l) {
    case HPC_LAUNCHER_SLURM: return "slurm";
    case HPC_LAUNCHER_OMPI: return "openmpi";
    case HPC_LAUNCHER_HYDRA: return "hydra";
    case HPC_LAUNCHER_TORCHRUN: return "torchrun";
    default: return "none";
    }
}
