/* hpc.h - umbrella public header of libhpc.
 *
 * Includes MPI and the (header-only) Random123 counter-based RNG, never a
 * CUDA, NCCL or HDF5 header: programs that do not use those need not have
 * them.  Parallel HDF5 helpers live in <hpc_h5.h>.
 *
 * Conventions: public symbols start with hpc_, functions return 0 or a
 * negative HPC_ERR_* code, output arguments come last and are set only on
 * success.
 */
#ifndef HPC_H
#define HPC_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

/* Every public function carries HPC_EXPORT: libhpc is built with hidden
 * visibility, so only what a public header declares this way is exported
 * (as hwloc and UCX do). */
#if defined(__GNUC__) && __GNUC__ >= 4
#define HPC_EXPORT __attribute__((visibility("default")))
#else
#define HPC_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Version                                                             */
/* ------------------------------------------------------------------ */
HPC_EXPORT const char *hpc_version(void);          /* "0.1.0" */
HPC_EXPORT int hpc_have_cuda(void);                /* 1 if built with CUDA */
HPC_EXPORT int hpc_have_nccl(void);                /* 1 if built with NCCL */

/* ------------------------------------------------------------------ */
/* Errors (err.c)                                                      */
/* ------------------------------------------------------------------ */
enum {
    HPC_OK = 0,
    HPC_ERR_ARG = -1,         /* bad argument from the caller */
    HPC_ERR_NOMEM = -2,       /* out of memory */
    HPC_ERR_MPI = -3,         /* an MPI call failed */
    HPC_ERR_CUDA = -4,        /* a CUDA runtime call failed */
    HPC_ERR_NCCL = -5,        /* an NCCL call failed */
    HPC_ERR_HDF5 = -6,        /* an HDF5 call failed */
    HPC_ERR_IO = -7,          /* file system / OS error */
    HPC_ERR_NOGPU = -8,       /* a GPU was needed and there is none */
    HPC_ERR_UNSUPPORTED = -9, /* valid request this build cannot do */
    HPC_ERR_STATE = -10,      /* called in the wrong state (e.g. before hpc_init) */
    HPC_ERR_TIMEOUT = -11,    /* watchdog expired */
    HPC_ERR_MISMATCH = -12,   /* ranks disagree (desync, launcher vs MPI) */
    HPC_ERR_DATA = -13,       /* bad data: wrong shape/type, NaN, missing dataset */
    HPC_ERR_BLAS = -14        /* BLAS/cuBLAS failure */
};
#define HPC_ERR_MIN_ (-14)

/* Short fixed description of a code ("MPI error"). */
HPC_EXPORT const char *hpc_strerror(int code);
/* The last error recorded on this thread: "call: cause" followed by the
 * file:line frames it travelled through, innermost first.  "" if none. */
HPC_EXPORT const char *hpc_last_error(void);
HPC_EXPORT void hpc_error_clear(void);

/* Record an error (printf-style cause) at file:line in func; returns code. */
HPC_EXPORT int hpc_error_set(int code, const char *file, int line, const char *func,
                  const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* Append a "from file:line (func)" frame to the current error; returns code. */
HPC_EXPORT int hpc_error_push(int code, const char *file, int line, const char *func);
/* Translate an MPI error code into HPC_ERR_MPI with MPI's own message. */
HPC_EXPORT int hpc_error_mpi(int mpierr, const char *file, int line, const char *call);

/* Raise an error here: return HPC_ERR(HPC_ERR_ARG, "count %d < 0", n); */
#define HPC_ERR(code, ...) hpc_error_set((code), __FILE__, __LINE__, __func__, __VA_ARGS__)
/* Call a libhpc function; on failure add this frame and return the code. */
#define HPC_TRY(call)                                                      \
    do {                                                                   \
        int hpc_e_ = (call);                                               \
        if (hpc_e_ < 0) return hpc_error_push(hpc_e_, __FILE__, __LINE__, __func__); \
    } while (0)
/* Call MPI; on failure translate and return HPC_ERR_MPI. */
#define HPC_MPI(call)                                                      \
    do {                                                                   \
        int hpc_e_ = (call);                                               \
        if (hpc_e_ != MPI_SUCCESS) return hpc_error_mpi(hpc_e_, __FILE__, __LINE__, #call); \
    } while (0)

/* For applications: on failure print "rank R (host): file:line: message"
 * to stderr and MPI_Abort the whole job (never hang on one failed rank). */
#define HPC_CHECK(call)                                                    \
    do {                                                                   \
        int hpc_e_ = (call);                                               \
        if (hpc_e_ < 0) hpc_abort_on_error(hpc_e_, __FILE__, __LINE__, #call); \
    } while (0)
HPC_EXPORT void hpc_abort_on_error(int code, const char *file, int line, const char *call)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;
/* End the whole job (MPI_Abort) after what this rank printed has had
 * time to reach the launcher: MPICH's hydra drops output still in its
 * pipes when it tears a job down.  Exits without MPI if MPI is not up. */
HPC_EXPORT void hpc_abort(int status)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;
/* For applications, bad command line: rank 0 prints "PROG: message" (one
 * line) to stderr, every rank finalizes MPI and exits with status 2.
 * Must be called by all ranks (they parse the same argv). */
HPC_EXPORT void hpc_die_usage(const char *prog, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((noreturn, format(printf, 2, 3)))
#endif
    ;
/* Same, for bad data: exit status 1.  Collective, like hpc_die_usage. */
HPC_EXPORT void hpc_die_data(const char *prog, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((noreturn, format(printf, 2, 3)))
#endif
    ;

/* ------------------------------------------------------------------ */
/* Logging (log.c): HPC_LOG=error|warn|info|debug (default warn).      */
/* Lines: "[  12.345s] rank 3: message".  info goes out on rank 0 only */
/* unless HPC_LOG_ALL=1; warn/error/debug on every rank.               */
/* ------------------------------------------------------------------ */
typedef enum { HPC_LOG_ERROR = 0, HPC_LOG_WARN = 1, HPC_LOG_INFO = 2, HPC_LOG_DEBUG = 3 } hpc_log_level_t;
HPC_EXPORT void hpc_log(hpc_log_level_t level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
HPC_EXPORT hpc_log_level_t hpc_log_level(void);
#define hpc_error(...) hpc_log(HPC_LOG_ERROR, __VA_ARGS__)
#define hpc_warn(...)  hpc_log(HPC_LOG_WARN, __VA_ARGS__)
#define hpc_info(...)  hpc_log(HPC_LOG_INFO, __VA_ARGS__)
#define hpc_debug(...) hpc_log(HPC_LOG_DEBUG, __VA_ARGS__)

/* ------------------------------------------------------------------ */
/* Launcher detection (launch.c): pure parsing, testable.              */
/* ------------------------------------------------------------------ */
typedef enum {
    HPC_LAUNCHER_NONE = 0,    /* singleton: ./prog */
    HPC_LAUNCHER_SLURM,       /* srun: SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS */
    HPC_LAUNCHER_OMPI,        /* Open MPI mpirun: OMPI_COMM_WORLD_* */
    HPC_LAUNCHER_HYDRA,       /* MPICH hydra: PMI_RANK, PMI_SIZE, MPI_LOCALRANKID */
    HPC_LAUNCHER_TORCHRUN     /* RANK, LOCAL_RANK, WORLD_SIZE */
} hpc_launcher_t;

typedef struct {
    hpc_launcher_t launcher;
    int rank, size;           /* -1 where the launcher did not say */
    int local_rank, local_size;
} hpc_launch_t;

/* Read the launcher's variables from envp ("K=V" strings, NULL-terminated;
 * NULL means the process environment).  Precedence: Open MPI, hydra,
 * torchrun-style, then Slurm (srun sets SLURM_* also around mpirun, where
 * the inner launcher is the one that counts). */
HPC_EXPORT int hpc_launch_parse(char *const *envp, hpc_launch_t *out);
HPC_EXPORT const char *hpc_launcher_name(hpc_launcher_t l);

/* ------------------------------------------------------------------ */
/* GPU binding policy (gpu.c)                                          */
/* ------------------------------------------------------------------ */
typedef enum { HPC_GPU_BIND_LOCAL = 0, HPC_GPU_BIND_NONE, HPC_GPU_BIND_LIST,
               HPC_GPU_BIND_EXCLUSIVE } hpc_gpu_bind_mode_t;
#define HPC_GPU_LIST_MAX 64
typedef struct {
    hpc_gpu_bind_mode_t mode;
    int nlist;
    int list[HPC_GPU_LIST_MAX];  /* for LIST: local rank i -> list[i % nlist] */
} hpc_gpu_policy_t;

/* Parse HPC_GPU_BIND: NULL/""/"local", "none", "exclusive", "list:0,2,1". */
HPC_EXPORT int hpc_gpu_policy_parse(const char *s, hpc_gpu_policy_t *out);
/* Device for this local rank given ndev visible devices; -1 = none.
 * EXCLUSIVE with local_size > ndev is an error (ranks would share a GPU). */
HPC_EXPORT int hpc_gpu_choose(const hpc_gpu_policy_t *p, int local_rank, int local_size,
                   int ndev, int *dev);
typedef struct {
    int index;               /* CUDA device index, -1 = none */
    char name[96];
    char pci_bus_id[32];
    size_t total_mem;
} hpc_gpu_info_t;
/* Number of CUDA devices this process sees (0 without CUDA or driver). */
HPC_EXPORT int hpc_gpu_count(void);

/* ------------------------------------------------------------------ */
/* Rank setup (env.c)                                                  */
/* ------------------------------------------------------------------ */
typedef struct {
    int rank, size;               /* in MPI_COMM_WORLD */
    int local_rank, local_size;   /* on this node */
    int node_id, nnodes;          /* node index (ordered by lowest rank), node count */
    char hostname[256];
    MPI_Comm world;               /* dup of MPI_COMM_WORLD owned by libhpc */
    MPI_Comm node;                /* ranks on this node */
    MPI_Comm leaders;             /* local rank 0 of each node; MPI_COMM_NULL elsewhere */
    hpc_launch_t launch;          /* what the launcher said */
    int ncores;                   /* CPU cores in this rank's affinity mask */
    char cpuset[256];             /* those cores as a list, "0-3,8" */
    int threads;                  /* BLAS/OpenMP threads chosen for this rank */
    int threads_from_user;        /* 1 if OMP_NUM_THREADS/OPENBLAS_NUM_THREADS set */
    int core_sharers;             /* local ranks whose cores overlap ours (incl. us) */
    hpc_gpu_policy_t gpu_policy;
    hpc_gpu_info_t gpu;           /* bound GPU, index -1 = none */
    int mismatch;                 /* 1 if launcher and MPI disagreed (warned) */
} hpc_env_t;

/* Detect the launcher, bind a GPU (before MPI_Init and any other CUDA
 * call), initialise MPI (MPI_THREAD_FUNNELED), build the communicators,
 * set BLAS/OpenMP threads.  argc/argv may be NULL. */
HPC_EXPORT int hpc_init(int *argc, char ***argv);
HPC_EXPORT int hpc_finalize(void);
/* hpc_init for programs: on failure one rank prints "PROG: cause" (one
 * line) and every rank exits - status 2 for bad settings (HPC_GPU_BIND),
 * 1 otherwise.  Never returns on failure. */
HPC_EXPORT void hpc_init_or_exit(int *argc, char ***argv, const char *prog);
/* Register cleanup run by hpc_finalize before MPI_Finalize, in reverse
 * order of registration (e.g. cached communicators). */
HPC_EXPORT int hpc_at_finalize(void (*fn)(void));
/* The environment set up by hpc_init; NULL before hpc_init. */
HPC_EXPORT const hpc_env_t *hpc_env(void);
HPC_EXPORT int hpc_initialized(void);

/* ------------------------------------------------------------------ */
/* Timers (timer.c)                                                    */
/* ------------------------------------------------------------------ */
HPC_EXPORT double hpc_wtime(void);       /* seconds, MPI_Wtime (monotonic before init) */
typedef struct { double min, median, max; } hpc_stats_t;
/* min / median / max of one value per rank (collective over comm). */
HPC_EXPORT int hpc_stats_across(double v, MPI_Comm comm, hpc_stats_t *out);
/* median of n doubles (array is reordered). */
HPC_EXPORT double hpc_median(double *v, size_t n);

/* ------------------------------------------------------------------ */
/* Progress line (progress.c): rank 0, only when stderr is a terminal  */
/* (or HPC_PROGRESS=1): "odegen: 41230/100000 (41.2%) 52.1k/s ETA 1.1s" */
/* ------------------------------------------------------------------ */
typedef struct hpc_progress hpc_progress_t;
/* what: label; unit: "traj", "steps" ...; total: expected count. */
HPC_EXPORT hpc_progress_t *hpc_progress_start(const char *what, const char *unit, uint64_t total);
/* Cheap to call often: redraws at most every 0.5 s. */
HPC_EXPORT void hpc_progress_update(hpc_progress_t *p, uint64_t done);
/* Clears the line and frees p (NULL is fine). */
HPC_EXPORT void hpc_progress_end(hpc_progress_t *p);

/* ------------------------------------------------------------------ */
/* Small helpers shared by the apps (util.c)                            */
/* ------------------------------------------------------------------ */
/* Strict number parsing: whole string, no overflow.  0 or HPC_ERR_ARG. */
HPC_EXPORT int hpc_parse_long(const char *s, long *out);
HPC_EXPORT int hpc_parse_double(const char *s, double *out);
/* Parse a size with optional K/M/G suffix (binary): "8M" -> 8388608. */
HPC_EXPORT int hpc_parse_size(const char *s, size_t *out);
/* The command line joined with spaces (for provenance attributes). */
HPC_EXPORT char *hpc_cmdline(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#include <hpc_rng.h>

#endif /* HPC_H */
