/* hpc-info - who runs where, bound to what: the first thing to run in a
 * new allocation (srun hpc-info, mpiexec -n 4 hpc-info).
 *
 * Every rank describes itself in a fixed-size record; rank 0 gathers them
 * and prints a table (or JSON), the MPI library, the launcher and the
 * warnings that explain slow or hanging jobs: ranks sharing a GPU, ranks
 * sharing cores, launcher and MPI disagreeing.
 */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hpc_coll.h"

static const char *prog = "hpc-info";

typedef struct {
    int rank, node_id, local_rank, ncores, threads, threads_user, sharers, mismatch, gpu;
    char host[64], cpuset[96], gpu_name[96], pci[32];
} rank_rec_t;

static void usage(FILE *f)
{
    fprintf(f,
"Usage: hpc-info [--json] [--selftest [--device]] [--help]\n"
"\n"
"Show how the ranks of a job were placed: one row per rank with its host,\n"
"node id, local rank, the CPU cores it may run on, the BLAS/OpenMP threads\n"
"libhpc chose for it, and the GPU it is bound to (index, name, PCI bus id)\n"
"or \"none\".  Then the MPI library, the launcher detected, and warnings:\n"
"ranks sharing a GPU, ranks sharing cores, launcher and MPI disagreeing.\n"
"\n"
"Run it like the job it stands for:\n"
"  mpiexec -n 4 hpc-info        srun hpc-info        hpc-info\n"
"\n"
"Options:\n"
"  --json       print the same information as one JSON object\n"
"  --selftest   also run every collective with every algorithm, blocking\n"
"               and nonblocking, and print PASS/FAIL per case; exit 1 if\n"
"               any case fails\n"
"  --device     with --selftest: include device (GPU) buffers\n"
"  -v           with --selftest: one line per case, not only failures\n"
"  -h, --help   show this help and exit\n"
"\n"
"Environment:\n"
"  HPC_GPU_BIND   none | local (default: local rank %% visible GPUs) |\n"
"                 exclusive (one GPU per rank, error if too few) |\n"
"                 list:I,J,... (local rank i -> device list[i %% n])\n"
"  CUDA_VISIBLE_DEVICES, OMP_NUM_THREADS, OPENBLAS_NUM_THREADS are honoured.\n"
"  HPC_LOG        error | warn (default) | info | debug\n"
"\n"
"Exit status: 0 success, 1 failure (or selftest failures), 2 bad usage.\n");
}

static void describe(const hpc_env_t *e, rank_rec_t *r)
{
    memset(r, 0, sizeof *r);
    r->rank = e->rank;
    r->node_id = e->node_id;
    r->local_rank = e->local_rank;
    r->ncores = e->ncores;
    r->threads = e->threads;
    r->threads_user = e->threads_from_user;
    r->sharers = e->core_sharers;
    r->mismatch = e->mismatch;
    r->gpu = e->gpu.index;
    snprintf(r->host, sizeof r->host, "%.63s", e->hostname);
    snprintf(r->cpuset, sizeof r->cpuset, "%.95s", e->cpuset);
    snprintf(r->gpu_name, sizeof r->gpu_name, "%s", e->gpu.index >= 0 ? e->gpu.name : "none");
    snprintf(r->pci, sizeof r->pci, "%s", e->gpu.index >= 0 ? e->gpu.pci_bus_id : "-");
}

/* Up to nw warning lines about the placement. */
static int find_warnings(const rank_rec_t *r, int n, char w[][256], int nw)
{
    int k = 0;
    for (int i = 0; i < n && k < nw; i++) {
        for (int j = i + 1; j < n && k < nw; j++) {
            if (r[i].gpu < 0 || strcmp(r[i].host, r[j].host) || strcmp(r[i].pci, r[j].pci)) continue;
            snprintf(w[k++], 256, "ranks %d and %d share GPU %s on %s (NCCL refuses this; "
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
        snprintf(w[k++], 256, "%d rank(s) share cores with others on their node (not bound); "
                 "libhpc divided the threads; bind for speed (mpiexec -bind-to core, srun --cpu-bind=cores)",
                 sharing);
    if (mism && k < nw)
        snprintf(w[k++], 256, "%d rank(s): launcher and MPI disagree about rank/size "
                 "(srun without --mpi=pmi2/pmix, or another MPI's mpiexec?)", mism);
    return k;
}

static void print_table(const rank_rec_t *r, int n, const char *mpi, const char *launcher,
                        char w[][256], int nw)
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
    printf("libhpc:    %s (CUDA %s, NCCL %s, CUDA-aware MPI %s)\n", hpc_version(),
           hpc_have_cuda() ? "yes" : "no", hpc_have_nccl() ? "yes" : "no",
           hpc_coll_cuda_aware() ? "yes" : "no");
    for (int i = 0; i < nw; i++) printf("warning: %s\n", w[i]);
}

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
        else putchar(*s);
    }
    putchar('"');
}

static void print_json(const rank_rec_t *r, int n, const char *mpi, const char *launcher,
                       char w[][256], int nw)
{
    printf("{\"version\": ");
    json_str(hpc_version());
    printf(", \"mpi\": ");
    json_str(mpi);
    printf(", \"launcher\": ");
    json_str(launcher);
    printf(", \"ranks\": [\n");
    for (int i = 0; i < n; i++) {
        printf("  {\"rank\": %d, \"host\": ", r[i].rank);
        json_str(r[i].host);
        printf(", \"node\": %d, \"local_rank\": %d, \"cores\": ", r[i].node_id, r[i].local_rank);
        json_str(r[i].cpuset);
        printf(", \"ncores\": %d, \"threads\": %d, \"gpu\": ", r[i].ncores, r[i].threads);
        if (r[i].gpu < 0) {
            printf("null}");
        } else {
            printf("{\"index\": %d, \"name\": ", r[i].gpu);
            json_str(r[i].gpu_name);
            printf(", \"pci_bus_id\": ");
            json_str(r[i].pci);
            printf("}}");
        }
        printf("%s\n", i + 1 < n ? "," : "");
    }
    printf("], \"warnings\": [");
    for (int i = 0; i < nw; i++) {
        json_str(w[i]);
        if (i + 1 < nw) printf(", ");
    }
    printf("]}\n");
}

int main(int argc, char **argv)
{
    int json = 0, selftest = 0, device = 0, verbose = 0;
    static const struct option opts[] = {
        {"json", no_argument, 0, 'j'}, {"selftest", no_argument, 0, 's'},
        {"device", no_argument, 0, 'd'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    hpc_init_or_exit(&argc, &argv, prog);
    const hpc_env_t *e = hpc_env();
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, "hv", opts, NULL)) != -1;) {
        switch (c) {
        case 'j': json = 1; break;
        case 's': selftest = 1; break;
        case 'd': device = 1; break;
        case 'v': verbose = 1; break;
        case 'h':
            if (e->rank == 0) usage(stdout);
            hpc_finalize();
            return 0;
        default:
            hpc_die_usage(prog, "unknown option '%s' (see --help)", argv[optind - 1]);
        }
    }
    if (optind < argc) hpc_die_usage(prog, "unexpected argument '%s' (see --help)", argv[optind]);

    rank_rec_t mine, *all = NULL;
    describe(e, &mine);
    if (e->rank == 0 && !(all = malloc(sizeof *all * e->size))) HPC_CHECK(HPC_ERR(HPC_ERR_NOMEM, "records"));
    HPC_CHECK(MPI_Gather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, 0, e->world) == MPI_SUCCESS
                  ? 0 : HPC_ERR(HPC_ERR_MPI, "MPI_Gather"));
    if (e->rank == 0) {
        char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(mpi, &len);
        mpi[strcspn(mpi, "\n")] = '\0';
        for (char *t = mpi; *t; t++)
            if (*t == '\t') *t = ' ';
        char launcher[64];
        snprintf(launcher, sizeof launcher, "%s", hpc_launcher_name(e->launch.launcher));
        char w[8][256];
        int nw = find_warnings(all, e->size, w, 8);
        if (json) print_json(all, e->size, mpi, launcher, w, nw);
        else print_table(all, e->size, mpi, launcher, w, nw);
        fflush(stdout);
        free(all);
    }
    int failed = 0;
    if (selftest) {
        int nfail = 0;
        HPC_CHECK(hpc_coll_selftest(e->world, device, verbose, &nfail));
        failed = nfail > 0;
    }
    HPC_CHECK(hpc_finalize());
    return failed;
}
