/* hpc.h - the core of libhpc: start-up, the environment, errors, logging,
 * timers and the counter-based RNG.
 *
 * The layers, each its own header (docs/architecture.md):
 *   hpc.h       this core: every program that links libhpc
 *   hpc_coll.h  collectives over host and device buffers
 *   hpc_h5.h    parallel HDF5 done the one right way
 *   hpc_app.h   the app kit: options, exit codes, signals, progress, run
 *               folders, work queue, resumable outputs, 2D grids
 * This header includes MPI and the (header-only) Random123 RNG, never a
 * CUDA, NCCL or HDF5 header: programs that do not use those need not have
 * them.
 *
 * Conventions: public symbols start with hpc_, functions return 0 or a
 * negative HPC_ERR_* code, output arguments come last and are set only on
 * success.  What may grow is reached through functions, not structs, so new
 * fields never break the ABI.
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

#if defined(__GNUC__)
#define HPC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define HPC_NORETURN __attribute__((noreturn))
#else
#define HPC_PRINTF(f, a)
#define HPC_NORETURN
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Version                                                             */
/* ------------------------------------------------------------------ */
HPC_EXPORT const char *hpc_version(void);   /* "0.2.0" */
/* The GPU stack is a module libhpc opens at run time (PREFIX/lib/hpckit/
 * libhpc-cuda.so, see hpc_dl.h), not a library it links: 1 if that module
 * and the CUDA runtime it needs are loaded, and NCCL in it. */
HPC_EXPORT int hpc_have_cuda(void);
HPC_EXPORT int hpc_have_nccl(void);
/* NULL where NCCL can be used, else why not: the GPU module missing, this
 * hpckit built without NCCL, or NCCL not found at run time (the GPU
 * module opens it: HPC_NCCL_LIBRARY, default libnccl.so.2). */
HPC_EXPORT const char *hpc_nccl_unavailable(void);
/* One line for reports: "CUDA runtime 13.0, driver 12.8, NCCL 2.27.3
 * (PATH of the module)", or "none (why)". */
HPC_EXPORT const char *hpc_gpu_stack(void);

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
/* The last error recorded on this thread: "rank R: call: cause (file:line)"
 * followed by the file:line frames it travelled through, innermost first.
 * "" if none. */
HPC_EXPORT const char *hpc_last_error(void);
/* Its first line only, without the rank prefix and the frames: the cause,
 * for one-line messages to users.  "" if none. */
HPC_EXPORT const char *hpc_last_cause(void);
HPC_EXPORT void hpc_error_clear(void);

/* Record an error (printf-style cause) at file:line in func; returns code. */
HPC_EXPORT int hpc_error_set(int code, const char *file, int line, const char *func,
                             const char *fmt, ...) HPC_PRINTF(5, 6);
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
/* The same where the function has something to undo: on failure add this
 * frame, store the code in rc and goto label, the one cleanup path.
 *     int rc = 0;
 *     char *buf = malloc(n);
 *     if (!buf) HPC_ERR_GOTO(rc, out, HPC_ERR_NOMEM, "%zu bytes", n);
 *     HPC_TRY_GOTO(read_it(buf), rc, out);
 * out:
 *     free(buf);
 *     return rc;
 * HPC_ERR_GOTO raises an error there (as HPC_ERR) and does the same.
 * The cause may quote hpc_last_cause() (a wrapped cause): it is copied
 * before it is replaced. */
#define HPC_TRY_GOTO(call, rc, label)                                      \
    do {                                                                   \
        int hpc_e_ = (call);                                               \
        if (hpc_e_ < 0) {                                                  \
            (rc) = hpc_error_push(hpc_e_, __FILE__, __LINE__, __func__);   \
            goto label;                                                    \
        }                                                                  \
    } while (0)
#define HPC_ERR_GOTO(rc, label, code, ...)                                 \
    do {                                                                   \
        (rc) = HPC_ERR((code), __VA_ARGS__);                               \
        goto label;                                                        \
    } while (0)
/* Call MPI; on failure translate and return HPC_ERR_MPI. */
#define HPC_MPI(call)                                                      \
    do {                                                                   \
        int hpc_e_ = (call);                                               \
        if (hpc_e_ != MPI_SUCCESS) return hpc_error_mpi(hpc_e_, __FILE__, __LINE__, #call); \
    } while (0)

/* For programs: on failure print "rank R (host): file:line: message" to
 * stderr and MPI_Abort the whole job (never hang on one failed rank). */
#define HPC_CHECK(call)                                                    \
    do {                                                                   \
        int hpc_e_ = (call);                                               \
        if (hpc_e_ < 0) hpc_abort_on_error(hpc_e_, __FILE__, __LINE__, #call); \
    } while (0)
HPC_EXPORT void hpc_abort_on_error(int code, const char *file, int line,
                                   const char *call) HPC_NORETURN;
/* End the whole job (MPI_Abort) after what this rank printed has had time
 * to reach the launcher (MPICH's hydra drops output still in its pipes
 * when it tears a job down); modules registered with hpc_at_abort (NCCL
 * communicators) are torn down first.  Exits without MPI if MPI is not up. */
HPC_EXPORT void hpc_abort(int status) HPC_NORETURN;
/* Register fn to run in hpc_abort before MPI_Abort (at most a few). */
HPC_EXPORT int hpc_at_abort(void (*fn)(void));

/* ------------------------------------------------------------------ */
/* Logging (log.c): HPC_LOG=error|warn|info|debug (default warn).      */
/* Lines: "[  12.345s] rank 3: message".  info goes out on rank 0 only */
/* unless HPC_LOG_ALL=1; warn/error/debug on every rank.               */
/* ------------------------------------------------------------------ */
typedef enum { HPC_LOG_ERROR = 0, HPC_LOG_WARN = 1, HPC_LOG_INFO = 2, HPC_LOG_DEBUG = 3 } hpc_log_level_t;
HPC_EXPORT void hpc_log(hpc_log_level_t level, const char *fmt, ...) HPC_PRINTF(2, 3);
HPC_EXPORT hpc_log_level_t hpc_log_level(void);
#define hpc_error(...) hpc_log(HPC_LOG_ERROR, __VA_ARGS__)
#define hpc_warn(...)  hpc_log(HPC_LOG_WARN, __VA_ARGS__)
#define hpc_info(...)  hpc_log(HPC_LOG_INFO, __VA_ARGS__)
#define hpc_debug(...) hpc_log(HPC_LOG_DEBUG, __VA_ARGS__)

/* ------------------------------------------------------------------ */
/* Start-up (env.c)                                                    */
/* ------------------------------------------------------------------ */
/* Read the launcher's variables, bind a GPU (before MPI_Init and any
 * other CUDA call), initialise MPI (MPI_THREAD_FUNNELED) unless the caller
 * did, build the node and leaders communicators, set BLAS/OpenMP threads.
 * argc/argv may be NULL.  Collective over MPI_COMM_WORLD: on failure every
 * rank returns the error (a bad HPC_GPU_BIND is HPC_ERR_ARG everywhere).
 * Launcher variables that contradict themselves (RANK=1 WORLD_SIZE=1 left
 * in a shell) are ignored with one warning from rank 0. */
HPC_EXPORT int hpc_init(int *argc, char ***argv);
/* Undo hpc_init: the hpc_at_finalize callbacks, the communicators, then
 * MPI_Finalize where hpc_init started MPI.  Where MPI_Finalize is known to
 * hang (MPICH before 4.2 on ch4:ucx with ranks on several nodes;
 * HPC_FINALIZE=auto|mpi|quiet, docs/cluster.md) it ends MPI quietly
 * instead: HDF5 files still open are closed (collectively), stdio is
 * flushed, every rank waits in a barrier, and MPI is left to the
 * process's exit (MPI_Finalized then says 0).  Collective. */
HPC_EXPORT int hpc_finalize(void);
HPC_EXPORT int hpc_initialized(void);
/* Register cleanup run by hpc_finalize before MPI_Finalize, in reverse
 * order of registration (e.g. cached communicators). */
HPC_EXPORT int hpc_at_finalize(void (*fn)(void));

/* ------------------------------------------------------------------ */
/* The environment hpc_init set up (env.c).  Valid between hpc_init and */
/* hpc_finalize; before, ranks are -1, sizes 0, communicators NULL.     */
/* ------------------------------------------------------------------ */
HPC_EXPORT int hpc_rank(void);              /* in MPI_COMM_WORLD */
HPC_EXPORT int hpc_size(void);
HPC_EXPORT MPI_Comm hpc_comm_world(void);   /* a duplicate owned by libhpc */
HPC_EXPORT MPI_Comm hpc_comm_node(void);    /* the ranks on this node */
HPC_EXPORT MPI_Comm hpc_comm_leaders(void); /* local rank 0 of each node, else MPI_COMM_NULL */
HPC_EXPORT int hpc_local_rank(void);
HPC_EXPORT int hpc_local_size(void);
HPC_EXPORT int hpc_node_id(void);           /* nodes numbered by their lowest rank */
HPC_EXPORT int hpc_node_count(void);
HPC_EXPORT const char *hpc_hostname(void);
/* CPU placement: cores in this rank's affinity mask (and that mask as a
 * list, "0-3,8"), BLAS/OpenMP threads chosen, local ranks whose cores
 * overlap this rank's (itself included), 1 if the user set the threads. */
HPC_EXPORT int hpc_cores(void);
HPC_EXPORT const char *hpc_cpuset(void);
HPC_EXPORT int hpc_threads(void);
HPC_EXPORT int hpc_core_sharers(void);
HPC_EXPORT int hpc_threads_from_user(void);
/* Bytes of one instance of the last-level cache this rank's core uses (a
 * Zen CCX's L3, a Xeon's; sysfs, else sysconf, else 32 MiB): what a
 * buffer must exceed to be measured in memory, not in cache. */
HPC_EXPORT size_t hpc_llc_bytes(void);

typedef enum {
    HPC_LAUNCHER_NONE = 0,    /* singleton: ./prog */
    HPC_LAUNCHER_SLURM,       /* srun: SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS */
    HPC_LAUNCHER_OMPI,        /* Open MPI mpirun: OMPI_COMM_WORLD_* */
    HPC_LAUNCHER_HYDRA,       /* MPICH hydra: PMI_RANK, PMI_SIZE, MPI_LOCALRANKID */
    HPC_LAUNCHER_TORCHRUN     /* RANK, LOCAL_RANK, WORLD_SIZE */
} hpc_launcher_t;
/* The launcher whose variables hpc_init used, and whether what it said
 * disagreed with MPI (warned at start-up: ranks started as singletons?). */
HPC_EXPORT hpc_launcher_t hpc_launcher(void);
HPC_EXPORT const char *hpc_launcher_name(hpc_launcher_t l);
HPC_EXPORT int hpc_launcher_disagrees(void);

/* GPU this rank is bound to (HPC_GPU_BIND policy): index, -1 = none;
 * name, PCI bus id ("" without one) and memory in bytes. */
HPC_EXPORT int hpc_gpu(void);
HPC_EXPORT const char *hpc_gpu_name(void);
HPC_EXPORT const char *hpc_gpu_pci_bus_id(void);
HPC_EXPORT size_t hpc_gpu_memory(void);
/* Number of CUDA devices this process sees: 0 without the GPU module,
 * the driver or a device.  Only "no device" is taken for a CPU node: any
 * other error of the runtime (one newer than the driver) is warned once. */
HPC_EXPORT int hpc_gpu_count(void);
/* NULL if this process can use a GPU, else one line saying what is
 * missing: the module or a library it needs (the loader's words), a
 * driver recent enough, a visible device.  Programs refuse a device path
 * with it (exit 2). */
HPC_EXPORT const char *hpc_gpu_unavailable(void);
/* Make this rank's GPU current on the calling thread, creating its
 * context on first use (hpc_init only chooses the device: a CPU run on a
 * GPU node holds no GPU memory; HPC_GPU_CONTEXT=init makes it in
 * hpc_init instead).  libhpc calls it before its own device work; call
 * it before your own CUDA calls, on each thread that makes them.  0;
 * HPC_ERR_NOGPU where the rank has no GPU; HPC_ERR_CUDA where the device
 * cannot be used (busy in exclusive-process mode): warned once, and the
 * rank is unbound from then on (hpc_gpu() is -1), CPU work unaffected. */
HPC_EXPORT int hpc_gpu_activate(void);
/* 1 where this thread has made the rank's GPU current (its context
 * exists), else 0. */
HPC_EXPORT int hpc_gpu_active(void);

/* ------------------------------------------------------------------ */
/* Strict parsing (parse.c): the whole string, no overflow; 0 or        */
/* HPC_ERR_ARG with the reason.                                        */
/* ------------------------------------------------------------------ */
HPC_EXPORT int hpc_parse_int64(const char *s, int64_t *out);
/* Finite double; subnormals (1e-310) are fine; "inf" only with allow_inf. */
HPC_EXPORT int hpc_parse_double(const char *s, int allow_inf, double *out);
/* A size with optional K/M/G suffix (binary): "8M" -> 8388608. */
HPC_EXPORT int hpc_parse_size(const char *s, size_t *out);
/* Exactly n integers, each separated from the next by one character of
 * seps ("3:250", "4/16"), each as hpc_parse_int64 takes it. */
HPC_EXPORT int hpc_parse_int64s(const char *s, const char *seps, int64_t *out, int n);
/* s with control characters escaped (\n, \t, \xNN), into buf. */
HPC_EXPORT const char *hpc_escape(const char *s, char *buf, size_t len);
/* The command line joined with spaces (malloc'd), for provenance. */
HPC_EXPORT char *hpc_cmdline(int argc, char **argv);

/* ------------------------------------------------------------------ */
/* Settings (settings.c): every HPC_* environment variable hpckit reads, */
/* declared once with its type, default, range and help.               */
/* ------------------------------------------------------------------ */
typedef enum {
    HPC_SET_FLAG,       /* 0 or 1 */
    HPC_SET_SECONDS,    /* a number of seconds in [min, max] */
    HPC_SET_NUMBER,     /* a finite number in [min, max] (unit in values) */
    HPC_SET_BYTES,      /* a size (128K) >= min, or the word in values */
    HPC_SET_INT,        /* an integer in [min, max] */
    HPC_SET_CHOICE,     /* one of values (comma-separated) */
    HPC_SET_LIST,       /* a comma list of values */
    HPC_SET_TEXT        /* anything (check, if set, decides) */
} hpc_setting_type_t;
typedef struct hpc_setting {
    const char *name;   /* HPC_LOG; a '*' stands for any text (HPC_TEST_*) */
    hpc_setting_type_t type;
    const char *def;    /* the default as text; NULL: detected at run time */
    double min, max;
    const char *values; /* choices, the form, a unit or the word for "off" */
    const char *who;    /* who reads it: libhpc, collectives, programs, ... */
    const char *help;   /* one line */
    /* TEXT only, may be NULL: 0, or HPC_ERR_ARG with the cause "expected ..." */
    int (*check)(const char *value);
} hpc_setting_t;
HPC_EXPORT int hpc_settings_count(void);
HPC_EXPORT const hpc_setting_t *hpc_setting_at(int i);
/* The row of name (a family row for HPC_TRAIN_TEST_PACE), or NULL. */
HPC_EXPORT const hpc_setting_t *hpc_setting_find(const char *name);
/* 0: value is one name takes (empty: unset); HPC_ERR_ARG: it is not (the
 * cause: "NAME='value': expected ..."); HPC_ERR_UNSUPPORTED: name is not a
 * setting (the cause names the nearest one). */
HPC_EXPORT int hpc_setting_check(const char *name, const char *value);
/* The value in effect: the environment's where it is valid, else the
 * default ("" where none); *from (may be NULL) says which. */
HPC_EXPORT const char *hpc_setting_value(const char *name, const char **from);
/* The value in effect as a number (sizes in bytes; "off": +inf) or a
 * flag (-1: unset and detected at run time). */
HPC_EXPORT double hpc_setting_double(const char *name);
HPC_EXPORT int hpc_setting_flag(const char *name);
/* Warn (hpc_warn) once per process of every HPC_* variable that is not a
 * setting, naming the nearest one, and of invalid values (the default is
 * used); returns how many.  hpc_init calls it on rank 0, the drop-in at
 * MPI_Init.  hpc_settings_strict(): the caller refuses invalid values
 * itself (the app kit: one line, exit 2), so only unknown names warn. */
HPC_EXPORT int hpc_settings_warn(void);
HPC_EXPORT void hpc_settings_strict(void);

/* ------------------------------------------------------------------ */
/* BLAS and the CPU (blas.c): the BLAS the program loaded and the kernel */
/* it runs, against what this CPU can run.  libhpc links no BLAS: it   */
/* looks at what the program loaded (OpenBLAS, or BLIS put in front).  */
/* ------------------------------------------------------------------ */
/* "OpenBLAS 0.3.21", "BLIS 0.9.0", another library's file name; "" when
 * the program loaded no BLAS. */
HPC_EXPORT const char *hpc_blas_library(void);
/* The kernel it runs: OpenBLAS's core ("SkylakeX"), BLIS's configuration
 * ("zen3"); "" when none is loaded. */
HPC_EXPORT const char *hpc_blas_kernel(void);
/* One line: library, kernel, who chose it (OpenBLAS, hpckit, the user's
 * OPENBLAS_CORETYPE) and the file; "none loaded". */
HPC_EXPORT const char *hpc_blas_describe(void);
/* One line: the CPU's name, the vector extensions it has (and the OS
 * saves) that BLAS kernels use, and the OpenBLAS kernel for them. */
HPC_EXPORT const char *hpc_cpu_describe(void);
/* NULL, or one line: OpenBLAS runs a kernel narrower than this CPU
 * allows, and the setting that fixes it. */
HPC_EXPORT const char *hpc_blas_advice(void);

/* ------------------------------------------------------------------ */
/* Timers (timer.c)                                                    */
/* ------------------------------------------------------------------ */
HPC_EXPORT double hpc_wtime(void);  /* seconds, MPI_Wtime (monotonic before init) */
typedef struct { double min, median, max; } hpc_stats_t;
/* min / median / max of one value per rank (collective over comm). */
HPC_EXPORT int hpc_stats_across(double v, MPI_Comm comm, hpc_stats_t *out);
/* median of n doubles (array is reordered). */
HPC_EXPORT double hpc_median(double *v, size_t n);

#ifdef __cplusplus
}
#endif

#include <hpc_rng.h>

#endif /* HPC_H */
