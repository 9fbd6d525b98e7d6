/* finalize.c - the end of MPI: MPI_Finalize, or a quiet end where the
 * MPI library is known to hang in it.
 *
 * MPICH before 4.2 over ch4:ucx (Debian 12's 4.0.2) hangs in MPI_Finalize
 * in 10-30% of runs whose ranks span nodes over TCP: one rank waits for
 * the close of its UCX endpoint to another node, which needs that node's
 * rank to make UCX progress, while that rank (and every other) already
 * waits in the PMI barrier finalize makes before it - and makes no
 * progress there (fixed upstream by "ch4/ucx: remove MPIR_pmi_barrier in
 * finalize", MPICH pull request 6596, July 2023).  No UCX setting and no
 * barrier before MPI_Finalize avoids it (docs/cluster.md).
 *
 * Where it applies (HPC_FINALIZE=auto), the quiet end does what the
 * program needs from MPI_Finalize and nothing of what hangs: HDF5 (if the
 * process loaded it) closes every file still open, collectively, as
 * MPI_Finalize's MPI_COMM_SELF callback would have; stdio buffers are
 * flushed; a barrier holds every rank until all are there.  MPI is then
 * left as it is: the process ends through exit() with its own status
 * (atexit handlers run, the kernel closes every descriptor), and the
 * launchers (srun's pmi2, hydra) take a rank that exits without PMI's
 * finalize as a normal exit.  A single-node job has no TCP endpoint and
 * never hangs there: it finalizes as usual.
 */
#include "config.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* The MPI library is MPICH older than 4.2 on its ch4:ucx device. */
static int library_hangs(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    if (MPI_Get_library_version(v, &len) != MPI_SUCCESS) return 0;
    const char *p = strstr(v, "MPICH Version:");
    if (!p || !strstr(v, "ch4:ucx")) return 0;
    int major = 0, minor = 0;
    if (sscanf(p + strlen("MPICH Version:"), " %d.%d", &major, &minor) != 2) return 0;
    return major < 4 || (major == 4 && minor < 2);
}

/* Nodes as the MPI library sees them (not HPC_NODE_SPLIT's fake ones,
 * which share memory and have no TCP endpoint). */
static int real_nodes(void)
{
    MPI_Comm node;
    int rank, lr, leaders = 1, n = 1;
    if (PMPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS ||
        PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return 1;
    PMPI_Comm_rank(node, &lr);
    PMPI_Comm_free(&node);
    leaders = lr == 0;
    if (PMPI_Allreduce(&leaders, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) return 1;
    return n;
}

int hpc_finalize_is_quiet(void)
{
    const char *mode = hpc_setting_value("HPC_FINALIZE", NULL);
    if (mode && !strcmp(mode, "mpi")) return 0;
    if (mode && !strcmp(mode, "quiet")) return 1;
    /* auto: every rank reads the same library; the node count is agreed */
    return library_hangs() && real_nodes() > 1;
}

static int quiet_done;

int hpc_finalize_quiet(void)
{
    /* HDF5's own shutdown, where the process has HDF5: open files are
     * flushed and closed (collectively, on every rank here) */
    int (*h5close)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "H5close");
    if (h5close && h5close() < 0) hpc_warn("hpc_finalize: H5close failed; HDF5 files may be incomplete");
    /* said before the barrier: after it, a rank that exits with an error
     * status may have the launcher end the others at once */
    hpc_debug("hpc_finalize: MPI_Finalize skipped (HPC_FINALIZE; MPICH ch4:ucx across nodes)");
    fflush(NULL);
    int rc = PMPI_Barrier(MPI_COMM_WORLD);
    quiet_done = 1;
    if (rc != MPI_SUCCESS) return hpc_error_mpi(rc, __FILE__, __LINE__, "MPI_Barrier (the quiet end)");
    return 0;
}

int hpc_finalize_was_quiet(void)
{
    return quiet_done;
}
