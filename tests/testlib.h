/* testlib.h - tiny assertion helpers shared by the C tests.
 * EXPECT records a failure with file:line and carries on, so one run
 * reports every wrong value; tests end with return test_result(). */
#ifndef HPC_TESTLIB_H
#define HPC_TESTLIB_H
#include <stdio.h>

static int test_failures;

#define EXPECT(cond, ...)                                                   \
    do {                                                                    \
        if (!(cond)) {                                                      \
            test_failures++;                                                \
            fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
        }                                                                   \
    } while (0)

/* Device tests: skip only where there is nothing to test on.  listed:
 * GPUs the system lists (test_gpus_listed); cuda_built: this build has
 * CUDA (its modules); counted: what libhpc sees (hpc_gpu_count).  0 run,
 * 77 skip (no GPU listed, or no CUDA in this build), 1 fail: a GPU the
 * system lists that a CUDA build does not see is a broken GPU stack (a
 * runtime newer than the driver, a module that does not load), never a
 * reason to skip. */
static inline int test_gpu_verdict(int listed, int cuda_built, int counted)
{
    if (counted > 0) return 0;
    return listed > 0 && cuda_built ? 1 : 77;
}

/* GPUs the system lists: nvidia-smi -L (what this process may see: a
 * container on a GPU host lists only its own), else, where there is no
 * nvidia-smi, the driver's /proc/driver/nvidia/gpus/; 0 without a driver. */
#include <dirent.h>
#include <string.h>
static inline int test_gpus_listed(void)
{
    int n = 0, found = 0;
    FILE *f = popen("nvidia-smi -L 2>/dev/null; echo \"rc=$?\"", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        n += !strncmp(line, "GPU", 3);
        if (!strncmp(line, "rc=", 3)) found = strncmp(line, "rc=127", 6) != 0;
    }
    if (f) pclose(f);
    if (found) return n;
    DIR *d = opendir("/proc/driver/nvidia/gpus");
    if (d) {
        for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
        closedir(d);
    }
    return n;
}

#ifdef HPC_HAVE_CUDA
#define TEST_CUDA_BUILT 1
#else
#define TEST_CUDA_BUILT 0
#endif

static inline int test_result(void)
{
    if (test_failures) fprintf(stderr, "%d check(s) failed\n", test_failures);
    return test_failures ? 1 : 0;
}
#endif
