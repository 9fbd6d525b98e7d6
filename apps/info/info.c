/* hpc-info - who runs where, bound to what: the first thing to run in a
 * new allocation (srun hpc-info, mpiexec -n 4 hpc-info).
 *
 * Every rank describes itself in a fixed-size record; rank 0 gathers them
 * and prints a table (or JSON), the MPI library, the launcher and the
 * warnings that explain slow or hanging jobs: ranks sharing a GPU, ranks
 * sharing cores, launcher and MPI disagreeing.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cblas.h>
#include "hpc_app.h"
#include "hpc_coll.h"
#include "info.h"

typedef struct {
    int rank, node_id, local_rank, ncores, threads, threads_user, sharers, mismatch, gpu;
    char host[64], cpuset[96], gpu_name[96], pci[32];
    char blas_advice[256];     /* the BLAS kernel is narrower than the CPU: why, the fix */
} rank_rec_t;

enum { WARN_LEN = 384 };

static int json, selftest, with_device, verbose, settings, markdown;

static const hpc_opt_t options[] = {
    HPC_FLAG("json", 0, &json, 0, "print the same information as one JSON object"),
    HPC_FLAG("selftest", 0, &selftest, 0,
             "also run every collective with every algorithm, blocking and nonblocking, at small "
             "sizes with several types and operations, against MPI's own; exit 1 if any case fails"),
    HPC_FLAG("device", 0, &with_device, 0,
             "with --selftest: also device (GPU) buffers; exit 2 without a usable GPU on every rank"),
    HPC_FLAG("verbose", 'v', &verbose, 0, "with --selftest: one line per case, not only failures"),
    HPC_FLAG("settings", 0, &settings, 0,
             "print every HPC_* setting instead: its value in effect (rank 0's), where it came from "
             "(environment or default) and what it does; with --json as an array"),
    HPC_FLAG("markdown", 0, &markdown, 0,
             "with --settings: a Markdown table of the settings, their forms and defaults (the README's)"),
    HPC_OPTS_END};

static const hpc_app_t app = {
    .name = "hpc-info",
    .usage = "hpc-info [--json] [--selftest [--device] [-v]]\n"
             "hpc-info --settings [--json | --markdown]\n"
             "hpc-mpiexec -n 4 hpc-info    srun hpc-info",
    .about = "Show how the ranks of a job were placed: one row per rank with its host, node "
             "id, local rank, the CPU cores it may run on, the BLAS/OpenMP threads libhpc chose "
             "for it (u: set by the user), and the GPU it is bound to (index, name, PCI bus id) "
             "or \"none\".  Then the MPI library, the launcher detected, the GPU stack (CUDA "
             "runtime and driver versions, NCCL, the module libhpc opened; or why there is "
             "none), the BLAS library, its version and the kernel it runs (and who chose it), "
             "the CPU's vector extensions and the OpenBLAS kernel for them, and warnings: ranks "
             "sharing a GPU, ranks sharing cores, launcher and MPI disagreeing, a BLAS kernel "
             "narrower than the CPU allows (with the setting that fixes it).  Run it like "
             "the job it stands for.",
    .opts = options,
    .epilog = "Environment:\n"
              "  HPC_GPU_BIND   none | local (default: local rank % visible GPUs) |\n"
              "                 exclusive (one GPU per rank, error if too few) |\n"
              "                 list:I,J,... (local rank i -> device list[i % n])\n"
              "  CUDA_VISIBLE_DEVICES, OMP_NUM_THREADS, OPENBLAS_NUM_THREADS,\n"
              "  OPENBLAS_CORETYPE are honoured.\n"
              "  HPC_BLAS_KERNEL auto (default: a program whose OpenBLAS chose a kernel\n"
              "                 narrower than the CPU allows restarts with the widest) | off\n"
              "  HPC_LOG        error | warn (default) | info | debug\n"
              "  Every HPC_* setting: hpc-info --settings.  A name that is not one (a typo:\n"
              "  HPC_TIMEUOT) is warned of once, with the nearest setting's name.\n"
              "\n"
              "\n"
              "With --json: one object with version, mpi, launcher, build {cuda, nccl} (what\n"
              "libhpc was built with), cuda_aware_mpi, gpu_stack, blas {library, kernel,\n"
              "line, openblas_config}, cpu, ranks [...], warnings [...], and with\n"
              "--selftest its counts as \"selftest\" (run without --json to see which cases\n"
              "failed).\n"
              "\n"
              "Exit status: 0 success, 1 failure (self-test failures), 2 bad usage (and\n"
              "--device without a usable GPU on every rank: the line names what is missing).\n"
        "\nExamples:\n"
        "  # where 4 local ranks run, bound to what\n"
        "  hpc-mpiexec -n 4 hpc-info\n"
        "  # every collective with every algorithm, checked\n"
        "  hpc-mpiexec -n 2 hpc-info --selftest\n"
        "  # every HPC_* setting in effect, and where it came from\n"
        "  hpc-info --settings\n"
        "  # in a Slurm allocation (Open MPI: --mpi=pmix)\n"
        "  srun --mpi=pmi2 hpc-info\n",
    .guide = "README.md"};

/* srun's MPI plugin and the launcher's option that binds a rank to a core,
 * for this build's MPI */
#if defined(OMPI_MAJOR_VERSION)
#define SRUN_MPI "pmix"
#define BIND_CORE "--bind-to core"
#else
#define SRUN_MPI "pmi2"
#define BIND_CORE "-bind-to core"
#endif

static void describe(rank_rec_t *r)
{
    memset(r, 0, sizeof *r);
    r->rank = hpc_rank();
    r->node_id = hpc_node_id();
    r->local_rank = hpc_local_rank();
    r->ncores = hpc_cores();
    r->threads = hpc_threads();
    r->threads_user = hpc_threads_from_user();
    r->sharers = hpc_core_sharers();
    r->mismatch = hpc_launcher_disagrees();
    r->gpu = hpc_gpu();
    snprintf(r->host, sizeof r->host, "%.63s", hpc_hostname());
    snprintf(r->cpuset, sizeof r->cpuset, "%.95s", hpc_cpuset());
    snprintf(r->gpu_name, sizeof r->gpu_name, "%s", r->gpu >= 0 ? hpc_gpu_name() : "none");
    snprintf(r->pci, sizeof r->pci, "%s", r->gpu >= 0 ? hpc_gpu_pci_bus_id() : "-");
    const char *adv = hpc_blas_advice();
    snprintf(r->blas_advice, sizeof r->blas_advice, "%s", adv ? adv : "");
}

/* Up to nw warning lines about the placement. */
static int find_warnings(const rank_rec_t *r, int n, char w[][WARN_LEN], int nw)
{
    int k = 0;
    for (int i = 0; i < n && k < nw; i++) {
        for (int j = i + 1; j < n && k < nw; j++) {
            if (r[i].gpu < 0 || strcmp(r[i].host, r[j].host) || strcmp(r[i].pci, r[j].pci)) continue;
            snprintf(w[k++], WARN_LEN, "ranks %d and %d share GPU %s on %s (NCCL refuses this; "
                     "use fewer ranks per node or HPC_GPU_BIND=exclusive)",
                     r[i].rank, r[j].rank, r[i].pci, r[i].host);
            break;
        }
    }
    int sharing = 0, mism = 0;
    for (int i = 0; i < n; i++) {
        sharing += r[i].sharers > 1;
        mism += r[i].mismatch;
    }
    if (sharing && k < nw)
        snprintf(w[k++], WARN_LEN, "%d rank(s) share cores with others on their node (not bound); "
                 "libhpc divided the threads; bind for speed (hpc-mpiexec " BIND_CORE ", srun --cpu-bind=cores)",
                 sharing);
    if (mism && k < nw)
        snprintf(w[k++], WARN_LEN, "%d rank(s): launcher and MPI disagree about rank/size "
                 "(srun without --mpi=%s, or another MPI's mpiexec? start with hpc-mpiexec)", mism, SRUN_MPI);
    /* one line per host whose BLAS kernel is narrower than its CPU */
    for (int i = 0; i < n && k < nw; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = r[j].blas_advice[0] && !strcmp(r[i].host, r[j].host);
        if (r[i].blas_advice[0] && !seen)
            snprintf(w[k++], sizeof w[0], "%s: %s", r[i].host, r[i].blas_advice);
    }
    return k;
}

static void print_table(const rank_rec_t *r, int n, const char *mpi, const char *launcher,
                        char w[][WARN_LEN], int nw)
{
    printf("%4s  %-20s %4s %5s  %-14s %7s  %s\n", "rank", "host", "node", "local", "cores", "threads", "gpu");
    for (int i = 0; i < n; i++) {
        char gpu[160];
        if (r[i].gpu >= 0) snprintf(gpu, sizeof gpu, "%d %s (%s)", r[i].gpu, r[i].gpu_name, r[i].pci);
        else snprintf(gpu, sizeof gpu, "none");
        printf("%4d  %-20s %4d %5d  %-14s %5d%s  %s\n", r[i].rank, r[i].host, r[i].node_id, r[i].local_rank,
               r[i].cpuset, r[i].threads, r[i].threads_user ? "u" : " ", gpu);
    }
    printf("\nMPI:       %s\n", mpi);
    printf("launcher:  %s\n", launcher);
    /* how this build's ranks are started (hpc-mpiexec: apps/mpiexec) */
    printf("start:     hpc-mpiexec -n N (runs %s), srun --mpi=%s under Slurm\n", HPC_MPIEXEC, SRUN_MPI);
    printf("libhpc:    %s (CUDA %s, NCCL %s, CUDA-aware MPI %s)\n", hpc_version(),
           hpc_have_cuda() ? "yes" : "no", hpc_have_nccl() ? "yes" : "no",
           hpc_coll_cuda_aware() ? "yes" : "no");
    /* rank 0's view: the runtime and driver versions, or why there is none */
    printf("GPU stack: %s\n", hpc_gpu_stack());
    printf("BLAS:      %s\n", hpc_blas_describe());
    printf("CPU:       %s\n", hpc_cpu_describe());
    for (int i = 0; i < nw; i++) printf("warning: %s\n", w[i]);
}

static void print_json(const rank_rec_t *r, int n, const char *mpi, const char *launcher,
                       char w[][WARN_LEN], int nw, const hpc_selftest_t *st)
{
    printf("{\"version\": ");
    info_json_str(hpc_version());
    printf(", \"mpi\": ");
    info_json_str(mpi);
    printf(", \"launcher\": ");
    info_json_str(launcher);
    printf(", \"start\": {\"mpiexec\": \"hpc-mpiexec\", \"runs\": ");
    info_json_str(HPC_MPIEXEC);
    printf(", \"srun_mpi\": \"%s\"}", SRUN_MPI);
    /* what this libhpc was built with, as the table's libhpc line */
    printf(", \"build\": {\"cuda\": %s, \"nccl\": %s}, \"cuda_aware_mpi\": %s",
           hpc_have_cuda() ? "true" : "false", hpc_have_nccl() ? "true" : "false",
           hpc_coll_cuda_aware() ? "true" : "false");
    printf(", \"gpu_stack\": ");
    info_json_str(hpc_gpu_stack());
    printf(", \"blas\": {\"library\": ");
    info_json_str(hpc_blas_library());
    printf(", \"kernel\": ");
    info_json_str(hpc_blas_kernel());
    printf(", \"line\": ");
    info_json_str(hpc_blas_describe());
    /* OpenBLAS's build line, called by name: hpc-info links OpenBLAS as
     * the programs do (--as-needed drops a library nothing calls), so
     * that it reports, and restarts for, the kernel they run */
    printf(", \"openblas_config\": ");
    info_json_str(openblas_get_config());
    printf("}, \"cpu\": ");
    info_json_str(hpc_cpu_describe());
    printf(", \"ranks\": [\n");
    for (int i = 0; i < n; i++) {
        printf("  {\"rank\": %d, \"host\": ", r[i].rank);
        info_json_str(r[i].host);
        printf(", \"node\": %d, \"local_rank\": %d, \"cores\": ", r[i].node_id, r[i].local_rank);
        info_json_str(r[i].cpuset);
        printf(", \"ncores\": %d, \"threads\": %d, \"gpu\": ", r[i].ncores, r[i].threads);
        if (r[i].gpu < 0) {
            printf("null}");
        } else {
            printf("{\"index\": %d, \"name\": ", r[i].gpu);
            info_json_str(r[i].gpu_name);
            printf(", \"pci_bus_id\": ");
            info_json_str(r[i].pci);
            printf("}}");
        }
        printf("%s\n", i + 1 < n ? "," : "");
    }
    printf("], \"warnings\": [");
    for (int i = 0; i < nw; i++) {
        info_json_str(w[i]);
        if (i + 1 < nw) printf(", ");
    }
    printf("]");
    if (st)
        printf(", \"selftest\": {\"cases\": %d, \"passed\": %d, \"failed\": %d, \"device\": %s, "
               "\"seconds\": %.3f}", st->cases, st->cases - st->failed, st->failed,
               st->device ? "true" : "false", st->seconds);
    printf("}\n");
}

/* --device asks for GPU buffers: every rank must have one, or the first
 * without says what it lacks (a request this node cannot serve: exit 2) */
static void require_gpus(void)
{
    const char *no = hpc_gpu_unavailable();
    if (!no && hpc_gpu() < 0) no = "not bound to a GPU (HPC_GPU_BIND)";
    hpc_app_agree(no ? HPC_EXIT_USAGE : 0, "--device: rank %d (%s): %s", hpc_rank(), hpc_hostname(), no);
}

int main(int argc, char **argv)
{
    hpc_app_start(&app, &argc, &argv);
    if (with_device && !selftest) hpc_app_exit(HPC_EXIT_USAGE, "--device goes with --selftest");
    if (verbose && !selftest) hpc_app_exit(HPC_EXIT_USAGE, "--verbose goes with --selftest");
    if (json && verbose) hpc_app_exit(HPC_EXIT_USAGE, "--verbose prints lines, --json one object: choose one");
    if (markdown && !settings) hpc_app_exit(HPC_EXIT_USAGE, "--markdown goes with --settings");
    if (settings && (selftest || verbose)) hpc_app_exit(HPC_EXIT_USAGE, "--settings prints the settings alone");
    if (settings && json && markdown) hpc_app_exit(HPC_EXIT_USAGE, "--json or --markdown: choose one");
    if (settings) {
        if (hpc_rank() == 0)
            info_print_settings(json ? INFO_SETTINGS_JSON : markdown ? INFO_SETTINGS_MARKDOWN : INFO_SETTINGS_TEXT);
        return hpc_app_finish();
    }
    if (with_device) require_gpus();
    int rank = hpc_rank(), size = hpc_size();
    rank_rec_t mine, *all = NULL;
    describe(&mine);
    if (rank == 0 && !(all = malloc(sizeof *all * size))) HPC_CHECK(HPC_ERR(HPC_ERR_NOMEM, "records"));
    HPC_CHECK(MPI_Gather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, 0, hpc_comm_world())
                  == MPI_SUCCESS ? 0 : HPC_ERR(HPC_ERR_MPI, "MPI_Gather"));
    /* JSON is one object: the self-test runs first, silently, and goes in it */
    hpc_selftest_t st = {0};
    if (selftest && json) HPC_CHECK(hpc_coll_selftest(hpc_comm_world(), with_device, -1, &st));
    if (rank == 0) {
        char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(mpi, &len);
        mpi[strcspn(mpi, "\n")] = '\0';
        for (char *t = mpi; *t; t++)
            if (*t == '\t') *t = ' ';
        char w[8][WARN_LEN];
        int nw = find_warnings(all, size, w, 8);
        const char *launcher = hpc_launcher_name(hpc_launcher());
        if (json) print_json(all, size, mpi, launcher, w, nw, selftest ? &st : NULL);
        else print_table(all, size, mpi, launcher, w, nw);
        fflush(stdout);
        free(all);
    }
    if (selftest && !json) HPC_CHECK(hpc_coll_selftest(hpc_comm_world(), with_device, verbose, &st));
    int rc = hpc_app_finish();
    return st.failed > 0 ? HPC_EXIT_DATA : rc;
}
