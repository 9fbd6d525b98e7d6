/* internal.h - declarations shared inside libhpc, not installed. */
#ifndef HPC_INTERNAL_H
#define HPC_INTERNAL_H

#include "hpc.h"
#include "hpc_testing.h"
#include <stdio.h>

/* libhpc-core's private interface to libhpc.so and libhpc-h5: the few
 * internal functions the upper layers (the app kit, h5.c) call in the
 * lower ones, across the libraries.  Exported (hpc_ names) for that alone: not
 * API, no header of them is installed, and tests/symbols.sh knows them
 * by this mark. */
#define HPC_PRIVATE HPC_EXPORT

/* The process-wide environment (env.c); its fields are reached from
 * outside only through the getters of hpc.h. */
typedef struct hpc_gpu_info {
    int index;               /* CUDA device index, -1 = none */
    char name[96];
    char pci_bus_id[32];
    size_t total_mem;
} hpc_gpu_info_t;

typedef struct hpc_env {
    int rank, size;               /* in MPI_COMM_WORLD */
    int local_rank, local_size;   /* on this node */
    int node_id, nnodes;
    char hostname[256];
    MPI_Comm world, node, leaders;
    hpc_launch_t launch;          /* what the launcher said (NONE if ignored) */
    int ncores;
    char cpuset[256];
    int threads, threads_from_user, core_sharers;
    hpc_gpu_policy_t gpu_policy;
    hpc_gpu_info_t gpu;
    int mismatch;                 /* launcher and MPI disagreed (warned) */
} hpc_env_t;

/* NULL before hpc_init and after hpc_finalize. */
extern hpc_env_t *hpc_env_global;
/* After a failed hpc_init: 1 where this rank's own start-up failed (it
 * holds the reason), 0 where another rank's did. */
HPC_PRIVATE int hpc_init_failed_here(void);
/* The host name of a world rank's node as hpc_init gathered it ("" before
 * hpc_init or out of range): what a watchdog names with a lost peer. */
const char *hpc_rank_host(int world_rank);
/* finalize.c: whether to end MPI quietly (HPC_FINALIZE; collective over
 * MPI_COMM_WORLD), the quiet end itself (HDF5 closed, stdio flushed, a
 * barrier; MPI left to the process's exit), and whether it happened.  The
 * drop-in's MPI_Finalize uses them too. */
HPC_PRIVATE int hpc_finalize_is_quiet(void);
HPC_PRIVATE int hpc_finalize_quiet(void);
HPC_PRIVATE int hpc_finalize_was_quiet(void);
/* settings.c: hpc_init's warnings of unknown HPC_* names and bad values
 * (on rank 0; not where the app kit refuses them itself) */
void settings_init_warn(void);
/* coll/comm.c, for the drop-in (libhpc-mpi.so):
 * hpc_coll_known: comm has libhpc's state (or is refused); no set-up.
 * hpc_coll_refuse: comm gets none (MPI serves its collectives), after a
 *   set-up that failed on MPI's side on every rank (no context id left).
 * hpc_coll_idup_begin: where the program starts MPI_Comm_idup on parent,
 *   a state for the communicator to come, its duplicate begun without
 *   blocking (MPI_Comm_idup of parent's) and its nodes copied from
 *   parent's; *child NULL where parent has no state (the new one is then
 *   set up at its first collective call).  hpc_coll_idup_end: where the
 *   program learns that the communicator is made, the state is attached
 *   to it (local; comm MPI_COMM_NULL: never, kept until MPI_Finalize). */
/* coll/request.c, for the drop-in: advance every request in flight once;
 * and hpc_test without advancing anything (after hpc_coll_progress, so
 * that n calls in flight cost n advances, not n squared); the passes. */
struct hpc_request;
/* coll/select.c, for the drop-in: 1 where MPI's own collective is the
 * better choice for a small call (the caller holds it to HPC_MPI_SMALL)
 * of c moving bytes per block on comm (one node, and a flat
 * point-to-point schedule or a nonblocking call; never against
 * HPC_COLL_<OP> or a tuning row) */
HPC_PRIVATE int hpc_coll_prefers_mpi(MPI_Comm comm, int c, size_t bytes, int nonblocking);
HPC_PRIVATE int hpc_coll_progress(void);
/* how many times libhpc has advanced its requests in flight (each pass
 * advances each once) */
HPC_PRIVATE unsigned long hpc_coll_passes(void);
HPC_PRIVATE int hpc_test_done(struct hpc_request **req, int *done);
HPC_PRIVATE int hpc_coll_known(MPI_Comm comm);
HPC_PRIVATE int hpc_coll_refuse(MPI_Comm comm);
HPC_PRIVATE int hpc_coll_idup_begin(MPI_Comm parent, void **child);
HPC_PRIVATE int hpc_coll_idup_end(void *child, MPI_Comm comm);
/* watch.c: HPC_TIMEOUT over a wait the collectives' watchdog cannot see
 * (the start-up from before MPI_Init, a communicator's set-up inside a
 * call), from hpc_watch_begin until hpc_watch_end; stage names it and
 * hint says what may cause it, in the line.  Past the limit: that one
 * line, _exit(1).  A begin while armed only renames the stage. */
HPC_PRIVATE void hpc_watch_begin(const char *stage, const char *hint);
#define HPC_STARTUP_HINT "a rank stopped, lost or not started?"
HPC_PRIVATE void hpc_watch_end(void);
/* settings.c: the file a setting names (var=path), opened for reading
 * only if it is a regular file: a FIFO would block every rank in open
 * for ever, a folder read as empty.  HPC_ERR_ARG "VAR=PATH: not a
 * regular file (a FIFO)", HPC_ERR_IO where it cannot be opened. */
int hpc_setting_fopen(const char *var, const char *path, FILE **out);
/* "a FIFO", "a folder", ... for a st_mode that is not a regular file */
const char *hpc_file_kind(unsigned mode);
/* dl.c: dlopen(path, RTLD_NOW | RTLD_LOCAL) of a module by its path into
 * *out, only if it is a regular file (a FIFO would block dlopen for
 * ever); HPC_ERR_IO with the reason (the loader's words) */
int hpc_dlopen_path(const char *path, void **out);

/* err.c is a leaf: it never calls back into the environment.  env.c
 * tells it the rank to put in messages once it is known (the launcher's
 * before MPI_Init, MPI's after); -1 = unknown. */
void hpc_err_set_rank(int rank);
HPC_PRIVATE int hpc_err_rank(void);
/* Rank for message prefixes: the same as hpc_err_rank(). */
static inline int hpc_rank_hint(void) { return hpc_err_rank(); }
/* Host for message prefixes (err.c, from gethostname). */
HPC_PRIVATE const char *hpc_host_hint(void);
/* HPC_TIMEOUT in seconds, 0 = no watchdog (coll/settings_cache.c): every wait
 * libhpc makes on other ranks, collective or app kit, is bounded by it. */
HPC_PRIVATE double hpc_coll_timeout(void);
/* 0 if the tuning file at path is valid as a whole (coll/select.c), else
 * HPC_ERR_DATA (HPC_ERR_IO: unreadable) with its first bad line as the
 * cause: "HPC_COLL_TUNING=F: line N: why". */
HPC_PRIVATE int hpc_coll_tuning_check(const char *path);

/* blas.c, for the app kit before MPI_Init: 1 where OpenBLAS runs a
 * kernel narrower than the CPU allows, the user did not choose one
 * (OPENBLAS_CORETYPE) and HPC_BLAS_KERNEL is auto: the environment is
 * then set for a restart of the program (OPENBLAS_CORETYPE and the guard
 * HPC_BLAS_RESTARTED).  0 otherwise; in the restarted copy it notes what
 * happened and removes both.  hpc_blas_restart_failed(WHY): the exec
 * failed; the environment is put back and the reason kept for
 * hpc_blas_describe. */
HPC_PRIVATE int hpc_blas_restart_wanted(void);
HPC_PRIVATE void hpc_blas_restart_failed(const char *why);

/* lock.c: an exclusive flock on path, created without following a link
 * (one there is replaced).  0 with *fd held; EWOULDBLOCK with the
 * holder's "pid host" in who; or errno. */
HPC_PRIVATE int hpc_lock_take(const char *path, int *fd, char *who, size_t len);
/* Remove the lock file and release the lock (fd < 0: nothing held). */
HPC_PRIVATE void hpc_lock_release(const char *path, int fd);

/* h5_reserve.c (rank 0's side of hpc_h5_create_reserved, hpc_h5_reserve) */
/* Reserve bytes of disk for path (create: made empty first); 0 or errno,
 * nothing kept on failure. */
int hpc_reserve_path(const char *path, double bytes, int create);
/* Free what a reservation holds beyond the end of path; 0 or errno. */
int hpc_reserve_trim(const char *path);
/* HPC_ERR_IO "no room for 'path': it needs N MiB, its folder has M MiB free" */
int hpc_reserve_error(const char *path, double bytes, int err);

/* affinity.c */
/* Cores this process may run on: count and a "0-3,8" list. */
int hpc_affinity_cores(int *ncores, char *list, size_t len);
/* Choose BLAS/OpenMP threads: ncores shared by `sharing` ranks. */
int hpc_threads_for(int ncores, int sharing);
/* Apply n threads to OpenBLAS (and OMP_NUM_THREADS for later runtimes). */
void hpc_threads_apply(int n);

/* gpu.c's settings, rows of the settings table (settings.c expands them;
 * gpu_policy.c checks HPC_GPU_BIND's form, with the words of the row) */
#define HPC_GPU_SETTINGS                                                                                   \
    {"HPC_GPU_BIND", HPC_SET_TEXT, "local", 0, 0, "local|none|exclusive|list:I,J", "libhpc",               \
     "GPU per rank: local rank % visible GPUs; none; one GPU per rank or an error; local rank i gets "     \
     "device list[i % n]", hpc_gpu_policy_check},                                                          \
    {"HPC_GPU_CONTEXT", HPC_SET_CHOICE, "lazy", 0, 0, "lazy,init", "libhpc",                               \
     "when a rank's GPU context is made: at its first device use (a CPU run holds no GPU memory), or in "  \
     "hpc_init before MPI_Init (for a CUDA-aware MPI that needs it then)", NULL},
/* gpu_policy.c: 0 if s is HPC_GPU_BIND's form, else HPC_ERR_ARG "expected ..." */
int hpc_gpu_policy_check(const char *s);

/* gpu.c: bind (before MPI_Init where the local rank is known): choose
 * the device and fill info (index -1 if none); the context is made at
 * the first hpc_gpu_activate, or here with eager (HPC_GPU_CONTEXT=init).
 * info stays the binding's record: a failed activation sets index -1. */
int hpc_gpu_bind(const hpc_gpu_policy_t *p, int local_rank, int local_size, int eager,
                 hpc_gpu_info_t *info);
/* Why the bound GPU could not be made current (then unbound), or NULL. */
const char *hpc_gpu_lost(void);
/* Translate a CUDA runtime error (int to keep CUDA headers out). */
int hpc_error_cuda(int cudaerr, const char *file, int line, const char *call);
/* Call the CUDA runtime (cudaSuccess is 0); on failure translate and
 * return HPC_ERR_CUDA naming the call.  For files that include
 * cuda_runtime_api.h. */
#define HPC_CUDA(call)                                                     \
    do {                                                                   \
        int hpc_ce_ = (int)(call);                                         \
        if (hpc_ce_ != 0) return hpc_error_cuda(hpc_ce_, __FILE__, __LINE__, #call); \
    } while (0)

/* parse.c: the fewest single-letter edits (insert, delete, replace) that
 * turn a into b - how settings and options find what a misspelt name
 * meant; SIZE_MAX for names of 63 characters or more */
HPC_PRIVATE size_t hpc_edit_distance(const char *a, const char *b);

/* node.c: nodes, and HPC_NODE_SPLIT's fake ones (odd-even, blocks:K) */
enum { HPC_NODE_SPLIT_NONE, HPC_NODE_SPLIT_ODD_EVEN, HPC_NODE_SPLIT_BLOCKS };
typedef struct {
    int mode;                /* HPC_NODE_SPLIT_* */
    int k;                   /* blocks: ranks per node */
} hpc_node_split_t;
/* s: the variable's value (NULL or "" = none); HPC_ERR_ARG, one line */
HPC_PRIVATE int hpc_node_split_parse(const char *s, hpc_node_split_t *out);
/* node_split.c: 0 if s is the form, else HPC_ERR_ARG "expected ..." */
int hpc_node_split_check(const char *s);
/* node.c's settings, rows of the settings table (settings.c expands them) */
#define HPC_NODE_SETTINGS                                                                 \
    {"HPC_NODE_SPLIT", HPC_SET_TEXT, "none", 0, 0, "odd-even|blocks:K|none", "libhpc",    \
     "fake nodes for testing on one machine (even/odd world ranks; K ranks each)", hpc_node_split_check},
/* The ranks of comm on this node (real, cut by HPC_NODE_SPLIT), ordered
 * as in comm.  Collective over comm. */
int hpc_comm_split_node(MPI_Comm comm, MPI_Comm *node);


/* h5_vds.c (rank 0, inside hpc_h5_open): 1 if the file at path holds
 * virtual datasets and every source they map is there, 0 if it holds
 * none (or is not HDF5: the open itself says so), else HPC_ERR_DATA (or
 * HPC_ERR_NOMEM) with a one-line cause naming the missing or wrong source. */
int hpc_h5_vds_probe(const char *path);

/* h5.c: HDF5's own error printing off (the library translates its
 * errors) from here to the end of the enclosing block, as it was after */
int hpc_h5_quiet_begin(void);
void hpc_h5_quiet_end(int *unused);
#define HPC_H5_QUIET int quiet_ __attribute__((cleanup(hpc_h5_quiet_end), unused)) = hpc_h5_quiet_begin()

#endif
