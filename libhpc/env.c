/* env.c - hpc_init / hpc_finalize: rank setup from any launcher.
 *
 * Order matters: read the launcher's variables, bind the GPU (before
 * MPI_Init, which CUDA-aware MPIs and NCCL take the current device from),
 * start MPI, then build the node and leader communicators and check that
 * MPI agrees with what the launcher said.  An input error (a bad
 * HPC_GPU_BIND, more ranks than GPUs under "exclusive") is held until MPI is
 * up, agreed on by all ranks and reported by one of them, so a job never
 * half-starts.  Launcher variables that contradict themselves are
 * ignored with a warning: MPI knows who we are.
 */
#include "config.h"
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

hpc_env_t *hpc_env_global;
static hpc_env_t env_storage;
static int we_started_mpi;
static int failed_here;      /* this rank's own hpc_init failed */
static void (*exit_fns[16])(void);
static int nexit;
/* every world rank's node and each node's host name, so that a rank can
 * name the host of a peer it lost (the watchdog): an int a rank and a
 * name a node */
static int *node_of_rank;
static char (*node_host)[64];

int hpc_at_finalize(void (*fn)(void))
{
    if (nexit == (int)(sizeof exit_fns / sizeof exit_fns[0]))
        return HPC_ERR(HPC_ERR_NOMEM, "too many finalize callbacks");
    exit_fns[nexit++] = fn;
    return 0;
}

int hpc_init_failed_here(void)
{
    return failed_here;
}

int hpc_initialized(void)
{
    return hpc_env_global != NULL;
}

static int gather_hosts(hpc_env_t *e)
{
    node_of_rank = malloc(sizeof *node_of_rank * (size_t)e->size);
    node_host = calloc((size_t)e->nnodes, sizeof *node_host);
    if (!node_of_rank || !node_host) return HPC_ERR(HPC_ERR_NOMEM, "host table of %d ranks", e->size);
    HPC_MPI(MPI_Allgather(&e->node_id, 1, MPI_INT, node_of_rank, 1, MPI_INT, e->world));
    char mine[64];
    snprintf(mine, sizeof mine, "%s", e->hostname);
    if (e->leaders != MPI_COMM_NULL)
        HPC_MPI(MPI_Allgather(mine, 64, MPI_CHAR, node_host, 64, MPI_CHAR, e->leaders));
    HPC_MPI(MPI_Bcast(node_host, 64 * e->nnodes, MPI_CHAR, 0, e->node));
    return 0;
}

const char *hpc_rank_host(int world_rank)
{
    hpc_env_t *e = hpc_env_global;
    if (!e || !node_of_rank || world_rank < 0 || world_rank >= e->size) return "";
    int n = node_of_rank[world_rank];
    return n >= 0 && n < e->nnodes ? node_host[n] : "";
}

static int build_comms(hpc_env_t *e)
{
    HPC_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &e->world));
    HPC_MPI(MPI_Comm_rank(e->world, &e->rank));
    HPC_MPI(MPI_Comm_size(e->world, &e->size));
    HPC_TRY(hpc_comm_split_node(e->world, &e->node));   /* HPC_NODE_SPLIT too */
    HPC_MPI(MPI_Comm_rank(e->node, &e->local_rank));
    HPC_MPI(MPI_Comm_size(e->node, &e->local_size));
    /* node ids follow the lowest world rank on each node */
    HPC_MPI(MPI_Comm_split(e->world, e->local_rank == 0 ? 0 : MPI_UNDEFINED, e->rank, &e->leaders));
    int ids[2] = {0, 0};
    if (e->leaders != MPI_COMM_NULL) {
        HPC_MPI(MPI_Comm_rank(e->leaders, &ids[0]));
        HPC_MPI(MPI_Comm_size(e->leaders, &ids[1]));
    }
    HPC_MPI(MPI_Bcast(ids, 2, MPI_INT, 0, e->node));
    e->node_id = ids[0];
    e->nnodes = ids[1];
    return gather_hosts(e);
}

/* Warn, naming both sides, where the launcher and MPI disagree: a sign of
 * a launcher/MPI mix-up (mpiexec of one MPI running a binary of another
 * starts N singletons). */
static void check_launcher(hpc_env_t *e)
{
    const hpc_launch_t *l = &e->launch;
    if (l->launcher == HPC_LAUNCHER_NONE) return;
    char what[256] = "";
    if (l->rank >= 0 && l->rank != e->rank)
        snprintf(what + strlen(what), sizeof what - strlen(what), " rank %d vs %d", l->rank, e->rank);
    if (l->size >= 0 && l->size != e->size)
        snprintf(what + strlen(what), sizeof what - strlen(what), " size %d vs %d", l->size, e->size);
    /* fake nodes (HPC_NODE_SPLIT) are not the launcher's: nothing to compare */
    hpc_node_split_t sp;
    int fake = hpc_node_split_parse(getenv("HPC_NODE_SPLIT"), &sp) == 0 && sp.mode != HPC_NODE_SPLIT_NONE;
    if (!fake && l->local_rank >= 0 && l->local_rank != e->local_rank)
        snprintf(what + strlen(what), sizeof what - strlen(what), " local rank %d vs %d",
                 l->local_rank, e->local_rank);
    if (!fake && l->local_size >= 0 && l->local_size != e->local_size)
        snprintf(what + strlen(what), sizeof what - strlen(what), " local size %d vs %d",
                 l->local_size, e->local_size);
    if (!what[0]) return;
    e->mismatch = 1;
    hpc_warn("launcher (%s) and MPI disagree:%s (launcher vs MPI); ranks started as "
             "singletons? (start with hpc-mpiexec, the launcher of the MPI hpckit was built "
             "with; srun needs --mpi=pmi2 for MPICH, --mpi=pmix for Open MPI)",
             hpc_launcher_name(l->launcher), what);
}

/* The MPI this library was built with, for messages */
static const char *mpi_flavor(void)
{
#if defined(OMPI_MAJOR_VERSION)
    return "Open MPI";
#elif defined(MPICH_VERSION)
    return "MPICH";
#else
    return "its MPI";
#endif
}

/* N singletons: a launcher announced N > 1 ranks, but MPI sees this
 * process alone - another MPI's mpiexec (Debian's plain `mpiexec` is Open
 * MPI's), or srun without the MPI plugin.  Each process would run the
 * whole job as "rank 0 of 1", all writing the same files, so it is
 * refused on every one of them (none can speak for the others: the line
 * is the same on each).  torchrun-style variables are only warned about
 * (check_launcher): a shell keeps them after torchrun, and nothing that
 * starts MPI programs sets them; nor is a Slurm batch script's own
 * SLURM_NTASKS (no SLURM_STEP_ID: the script itself, not an srun step). */
static int refuse_singletons(const hpc_env_t *e)
{
    const hpc_launch_t *l = &e->launch;
    if (e->size != 1 || l->size <= 1) return 0;
    const char *by, *var;
    switch (l->launcher) {
    case HPC_LAUNCHER_OMPI: by = "Open MPI's mpiexec"; var = "OMPI_COMM_WORLD_SIZE"; break;
    case HPC_LAUNCHER_HYDRA: by = "MPICH's mpiexec"; var = "PMI_SIZE"; break;
    case HPC_LAUNCHER_SLURM:
        if (!getenv("SLURM_STEP_ID")) return 0;
        by = "srun without MPI's plugin";
        var = "SLURM_NTASKS";
        break;
    default: return 0;
    }
#if defined(OMPI_MAJOR_VERSION)
    const char *plugin = "pmix";
#else
    const char *plugin = "pmi2";
#endif
    return HPC_ERR(HPC_ERR_MISMATCH, "started as %d singletons (rank 0 of 1 each) by %s (%s=%d), but "
                   "built with %s: start it with hpc-mpiexec -n %d (%s's %s), or srun --mpi=%s under Slurm",
                   l->size, by, var, l->size, mpi_flavor(), l->size, mpi_flavor(), HPC_MPIEXEC, plugin);
}


/* Threads: the cores in this rank's mask, divided among the ranks on the
 * node whose masks overlap it (unbound ranks all see every core). */
static int setup_threads(hpc_env_t *e)
{
    HPC_TRY(hpc_affinity_cores(&e->ncores, e->cpuset, sizeof e->cpuset));
    cpu_set_t mine, *all = malloc(sizeof(cpu_set_t) * e->local_size);
    if (!all) return HPC_ERR(HPC_ERR_NOMEM, "%d cpu sets", e->local_size);
    CPU_ZERO(&mine);
    sched_getaffinity(0, sizeof mine, &mine);
    int rc = MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, e->node);
    if (rc != MPI_SUCCESS) {
        free(all);
        return hpc_error_mpi(rc, __FILE__, __LINE__, "MPI_Allgather");
    }
    int sharing = 0;
    for (int i = 0; i < e->local_size; i++) {
        cpu_set_t both;
        CPU_AND(&both, &mine, &all[i]);
        sharing += CPU_COUNT(&both) > 0;
    }
    free(all);
    e->core_sharers = sharing;
    const char *user = getenv("OPENBLAS_NUM_THREADS");
    if (!user) user = getenv("OMP_NUM_THREADS");
    if (user && atoi(user) > 0) {
        e->threads_from_user = 1;
        e->threads = atoi(user);
    } else {
        e->threads = hpc_threads_for(e->ncores, sharing);
        hpc_threads_apply(e->threads);
    }
    return 0;
}

/* All ranks agree on whether init failed: every rank returns an error,
 * the failing ranks their own, the others one naming the lowest failing
 * rank (programs report one line, see hpc_app_start). */
static int agree(hpc_env_t *e, int rc)
{
    failed_here = rc < 0;
    int mine = rc < 0 ? e->rank : e->size, lowest = e->size;
    if (MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS) return rc;
    if (lowest == e->size) return 0;
    if (rc < 0) return rc;
    return HPC_ERR(HPC_ERR_MISMATCH, "rank %d failed to initialise", lowest);
}

/* The launcher's word, read before MPI_Init.  Variables that contradict
 * themselves (a RANK/WORLD_SIZE left in a shell after torchrun) are
 * ignored: MPI will say who we are; the warning waits until MPI is up so
 * that only rank 0 prints it. */
static void read_launcher(hpc_env_t *e, char *stale, size_t len)
{
    hpc_launch_t none = {HPC_LAUNCHER_NONE, -1, -1, -1, -1};
    e->launch = none;
    if (hpc_launch_parse(NULL, &e->launch) < 0) {
        snprintf(stale, len, "%s", hpc_last_cause());
        hpc_error_clear();
    }
    hpc_err_set_rank(e->launch.rank);
}

/* Bind the GPU before MPI_Init where the launcher told us the local rank
 * (CUDA-aware MPIs and NCCL pick the device up then); otherwise after,
 * from MPI's node communicator. */
static int bind_gpu(hpc_env_t *e, int early)
{
    int known = e->launch.local_rank >= 0;
    if (early != known) return 0;
    int lr = known ? e->launch.local_rank : e->local_rank;
    int ls = known ? e->launch.local_size : e->local_size;
    const char *when = hpc_setting_value("HPC_GPU_CONTEXT", NULL);
    HPC_TRY(hpc_gpu_bind(&e->gpu_policy, lr, ls, when && !strcmp(when, "init"), &e->gpu));
    return 0;
}

/* Open MPI 4.1 picks its osc/rdma component for a window over ranks on
 * several nodes even where the transport between them (TCP) cannot do
 * RDMA, and MPI_Win_allocate then fails (MPI_ERR_WIN) instead of falling
 * back: hpc-odegen's work queue (a ticket counter in a window) ended so on
 * every multi-node job over Ethernet (tests/cluster/).  Where the user
 * chose no osc component, leave rdma out: where UCX runs (InfiniBand)
 * osc/ucx is chosen as before, elsewhere pt2pt. */
static void openmpi_osc_default(void)
{
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
    if (!getenv("OMPI_MCA_osc")) setenv("OMPI_MCA_osc", "^rdma", 0);
#endif
}

static void free_comms(hpc_env_t *e)
{
    free(node_of_rank);
    free(node_host);
    node_of_rank = NULL;
    node_host = NULL;
    if (e->leaders != MPI_COMM_NULL) MPI_Comm_free(&e->leaders);
    if (e->node != MPI_COMM_NULL) MPI_Comm_free(&e->node);
    if (e->world != MPI_COMM_NULL) MPI_Comm_free(&e->world);
}

int hpc_init(int *argc, char ***argv)
{
    if (hpc_env_global) return HPC_ERR(HPC_ERR_STATE, "hpc_init called twice");
    hpc_env_t *e = &env_storage;
    memset(e, 0, sizeof *e);
    e->world = e->node = e->leaders = MPI_COMM_NULL;
    e->gpu.index = -1;
    if (gethostname(e->hostname, sizeof e->hostname - 1) != 0) strcpy(e->hostname, "?");

    char stale[512] = "";
    read_launcher(e, stale, sizeof stale);
    /* an input error is held until MPI is up, so that all ranks agree */
    int held = hpc_gpu_policy_parse(getenv("HPC_GPU_BIND"), &e->gpu_policy);
    if (held == 0) held = bind_gpu(e, 1);
    if (held < 0) held = hpc_error_push(held, __FILE__, __LINE__, __func__);

    int up = 0, provided;
    MPI_Initialized(&up);
    if (!up) {
        openmpi_osc_default();
        /* a rank lost before MPI is up would hold every other one here */
        hpc_watch_begin("the start-up (MPI_Init)", HPC_STARTUP_HINT);
        int mrc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
        if (mrc != MPI_SUCCESS) {
            hpc_watch_end();
            return hpc_error_mpi(mrc, __FILE__, __LINE__, "MPI_Init_thread");
        }
        we_started_mpi = 1;
    }
    hpc_watch_begin("the start-up (hpc_init's communicators, after MPI_Init)", HPC_STARTUP_HINT);
    int rc = build_comms(e);
    if (rc == 0) {
        hpc_env_global = e;
        hpc_err_set_rank(e->rank);
        if (stale[0] && e->rank == 0) hpc_warn("ignoring the launcher variables: %s", stale);
        if (e->rank == 0) settings_init_warn();
    }
    if (rc == 0 && held == 0) held = bind_gpu(e, 0);
    if (rc == 0 && held == 0 && e->gpu_policy.mode == HPC_GPU_BIND_EXCLUSIVE)
        /* the launcher may not have said how many ranks share the node */
        held = hpc_gpu_choose(&e->gpu_policy, e->local_rank, e->local_size, hpc_gpu_count(), &(int){0});
    if (rc == 0) rc = refuse_singletons(e);
    if (rc == 0) check_launcher(e);
    if (rc == 0) rc = setup_threads(e);
    if (rc == 0) rc = held;
    rc = agree(e, rc);
    hpc_watch_end();
    if (rc < 0) {
        hpc_env_global = NULL;
        free_comms(e);
        return rc;
    }
    hpc_debug("hpc_init: rank %d/%d local %d/%d node %d/%d gpu %d threads %d", e->rank, e->size,
              e->local_rank, e->local_size, e->node_id, e->nnodes, e->gpu.index, e->threads);
    return 0;
}

int hpc_finalize(void)
{
    hpc_env_t *e = hpc_env_global;
    if (!e) return HPC_ERR(HPC_ERR_STATE, "hpc_finalize without hpc_init");
    /* modules (collectives' cached communicators, NCCL) clean up first,
     * last registered first */
    while (nexit > 0) exit_fns[--nexit]();
    free_comms(e);
    hpc_env_global = NULL;
    if (!we_started_mpi) return 0;
    we_started_mpi = 0;
    /* where MPI_Finalize would hang (finalize.c), the process ends MPI */
    if (hpc_finalize_is_quiet()) return hpc_finalize_quiet();
    /* stdio flushed while every rank is still inside MPI, as the quiet end
     * does: once MPI_Finalize returns, a rank that exits with an error
     * status may have the launcher (Open MPI's) kill the others before
     * their exit() flushes their files */
    fflush(NULL);
    HPC_MPI(MPI_Finalize());
    return 0;
}

/* ---- getters: one line each, the defaults for "not initialised" ---- */
#define GET(type, name, field, none)                                       \
    type name(void) { return hpc_env_global ? hpc_env_global->field : none; }
GET(int, hpc_rank, rank, -1)
GET(int, hpc_size, size, 0)
GET(MPI_Comm, hpc_comm_world, world, MPI_COMM_NULL)
GET(MPI_Comm, hpc_comm_node, node, MPI_COMM_NULL)
GET(MPI_Comm, hpc_comm_leaders, leaders, MPI_COMM_NULL)
GET(int, hpc_local_rank, local_rank, -1)
GET(int, hpc_local_size, local_size, 0)
GET(int, hpc_node_id, node_id, -1)
GET(int, hpc_node_count, nnodes, 0)
GET(const char *, hpc_hostname, hostname, "")
GET(int, hpc_cores, ncores, 0)
GET(const char *, hpc_cpuset, cpuset, "")
GET(int, hpc_threads, threads, 0)
GET(int, hpc_core_sharers, core_sharers, 0)
GET(int, hpc_threads_from_user, threads_from_user, 0)
GET(hpc_launcher_t, hpc_launcher, launch.launcher, HPC_LAUNCHER_NONE)
GET(int, hpc_launcher_disagrees, mismatch, 0)
GET(int, hpc_gpu, gpu.index, -1)
GET(const char *, hpc_gpu_name, gpu.name, "")
GET(const char *, hpc_gpu_pci_bus_id, gpu.pci_bus_id, "")
GET(size_t, hpc_gpu_memory, gpu.total_mem, 0)
#undef GET
