/* cuda.cu - the GPU engine of hpc-odegen: NVRTC compiles the system's
 * kernel (sys_cuda.h: the system file with erk.h, one trajectory per
 * thread, float64) at run time, the CUDA runtime loads and runs it.
 *
 * Why NVRTC: a user's system is a C file hpc-odegen first sees at run
 * time; the built-ins go the same way, so there is one GPU path, and the
 * kernel is compiled for the GPU it runs on.  --fmad=false keeps every
 * operation rounded as on the CPU (no fused multiply-add contraction),
 * so the GPU gives the CPU's bits but where CUDA's pow or exp rounds
 * otherwise than glibc's (the test bound is 1e-12 relative).  The
 * caller caches the compiled kernel (cuda_load.c), so a run compiles at
 * most once per system, method and GPU architecture.
 *
 * No MPI or hpc.h here (nvcc does not know MPI's include path): the
 * module's calls return -1 and odegen_cuda_why() says why; NVRTC's log
 * of a failed compile is odegen_cuda_log().  A module of its own,
 * hpckit/hpc-odegen-cuda.so, opened for --device cuda only, so that
 * hpc-odegen needs no CUDA library to start.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include <nvrtc.h>

#include "ode_cuda.h"
#include "hpc_dl.h"

struct ode_cuda {
    ode_prob_t prob;          /* with device pointers */
    cudaLibrary_t lib;
    cudaKernel_t kernel;
    double *d_tgrid, *d_par, *d_x0, *d_y, *d_scratch;
    double **d_vec;           /* device array of device vectors */
    double *h_vec[64];        /* the device vectors, to free */
    int nvec;
    ode_stat_t *d_st;
    int64_t nmax;
    int64_t threads;          /* threads per launch = scratch stride */
};

static char why[1024] = "no error";
static char *nvrtc_log = NULL;

extern "C" HPC_DL_EXPORT const char *odegen_cuda_why(void)
{
    return why;
}

extern "C" HPC_DL_EXPORT const char *odegen_cuda_log(void)
{
    return nvrtc_log ? nvrtc_log : "";
}

static int cuda_fail(cudaError_t e, const char *what)
{
    snprintf(why, sizeof why, "--device cuda: %s: %s", what, cudaGetErrorString(e));
    return -1;
}

/* The GPU's architecture as NVRTC names it ("sm_90"). */
extern "C" HPC_DL_EXPORT int odegen_cuda_arch(char *arch, int len)
{
    int ndev = 0, dev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        snprintf(why, sizeof why, "--device cuda: no usable GPU (%s)",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices visible");
        return -1;
    }
    cudaDeviceProp prop;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess || (e = cudaGetDeviceProperties(&prop, dev)) != cudaSuccess)
        return cuda_fail(e, "the GPU's properties");
    int nv_major = 0, nv_minor = 0;
    nvrtcVersion(&nv_major, &nv_minor);
    snprintf(arch, (size_t)len, "sm_%d%d nvrtc %d.%d", prop.major, prop.minor, nv_major, nv_minor);
    return 0;
}

#define NVRTC(call, what)                                                               \
    do {                                                                                \
        nvrtcResult r_ = (call);                                                        \
        if (r_ != NVRTC_SUCCESS) {                                                      \
            snprintf(why, sizeof why, "--device cuda: %s: %s", what, nvrtcGetErrorString(r_)); \
            goto fail;                                                                  \
        }                                                                               \
    } while (0)

/* Compile src for arch ("sm_90", the first word of odegen_cuda_arch's)
 * into a cubin (malloc'd).  Needs no GPU. */
extern "C" HPC_DL_EXPORT int odegen_cuda_compile(const ode_cuda_src_t *src, const char *arch, void **cubin,
                                                  size_t *len)
{
    nvrtcProgram prog = NULL;
    char opt_arch[64];
    int ok = 0;
    snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=%.*s", (int)strcspn(arch, " "), arch);
    const char *opts[] = {opt_arch, "--fmad=false", "--std=c++17", "--device-as-default-execution-space",
                          "--dopt=on", "-DHPC_ODE_LANES=1"};
    free(nvrtc_log);
    nvrtc_log = NULL;
    *cubin = NULL;
    NVRTC(nvrtcCreateProgram(&prog, src->main, "odegen_kernel.cu", src->nfiles, src->texts, src->names),
          "nvrtcCreateProgram");
    {
        nvrtcResult rc = nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof opts[0]), opts);
        size_t n = 0;
        if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 1 && (nvrtc_log = (char *)malloc(n)))
            nvrtcGetProgramLog(prog, nvrtc_log);
        if (rc != NVRTC_SUCCESS) {
            snprintf(why, sizeof why, "--device cuda: NVRTC: %s", nvrtcGetErrorString(rc));
            goto fail;
        }
    }
    NVRTC(nvrtcGetCUBINSize(prog, len), "nvrtcGetCUBINSize");
    if (!(*cubin = malloc(*len))) {
        snprintf(why, sizeof why, "out of memory");
        goto fail;
    }
    NVRTC(nvrtcGetCUBIN(prog, (char *)*cubin), "nvrtcGetCUBIN");
    ok = 1;
fail:
    if (prog) nvrtcDestroyProgram(&prog);
    if (!ok) {
        free(*cubin);
        *cubin = NULL;
    }
    return ok ? 0 : -1;
}

extern "C" HPC_DL_EXPORT void odegen_cuda_close(ode_cuda_t *c);

#define CU(call, what)                  \
    do {                                \
        cudaError_t e_ = (call);        \
        if (e_ != cudaSuccess) {        \
            odegen_cuda_close(c);       \
            return cuda_fail(e_, what); \
        }                               \
    } while (0)

static int to_device(ode_cuda_t *c, double **d, const double *h, size_t n)
{
    cudaError_t e = cudaMalloc(d, n * sizeof(double));
    if (e == cudaSuccess) e = cudaMemcpy(*d, h, n * sizeof(double), cudaMemcpyHostToDevice);
    (void)c;
    return e == cudaSuccess ? 0 : cuda_fail(e, "copying the problem to the GPU");
}

extern "C" HPC_DL_EXPORT int odegen_cuda_open(const ode_cuda_args_t *a, ode_cuda_t **out)
{
    ode_cuda_t *c = (ode_cuda_t *)calloc(1, sizeof *c);
    if (!c || a->nvec > 64) {
        free(c);
        snprintf(why, sizeof why, "out of memory");
        return -1;
    }
    c->prob = a->prob;
    c->nmax = a->nmax;
    int64_t t = a->nmax < 65536 ? a->nmax : 65536;
    c->threads = (t + 127) / 128 * 128; /* whole blocks */
    size_t D = (size_t)a->prob.dim, NT = (size_t)a->prob.nt;
    (void)a->cubin_len;
    CU(cudaLibraryLoadData(&c->lib, a->cubin, NULL, NULL, 0, NULL, NULL, 0), "loading the compiled kernel");
    CU(cudaLibraryGetKernel(&c->kernel, c->lib, "odegen_kernel"), "the kernel");
    if (to_device(c, &c->d_tgrid, a->prob.tgrid, NT) < 0 ||
        (a->npar && to_device(c, &c->d_par, a->par, (size_t)a->npar) < 0)) {
        odegen_cuda_close(c);
        return -1;
    }
    c->prob.tgrid = c->d_tgrid;
    c->nvec = a->nvec;
    for (int k = 0; k < a->nvec; k++)
        if (to_device(c, &c->h_vec[k], a->vec[k], (size_t)a->vec_len[k]) < 0) {
            odegen_cuda_close(c);
            return -1;
        }
    if (a->nvec) {
        CU(cudaMalloc(&c->d_vec, (size_t)a->nvec * sizeof(double *)), "cudaMalloc");
        CU(cudaMemcpy(c->d_vec, c->h_vec, (size_t)a->nvec * sizeof(double *), cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    CU(cudaMalloc(&c->d_x0, (size_t)a->nmax * D * sizeof(double)), "cudaMalloc x0");
    CU(cudaMalloc(&c->d_y, (size_t)a->nmax * NT * D * sizeof(double)), "cudaMalloc y");
    CU(cudaMalloc(&c->d_st, (size_t)a->nmax * sizeof(ode_stat_t)), "cudaMalloc stats");
    /* the scratch: erk.h's blocks for the method, one lane per thread */
    CU(cudaMalloc(&c->d_scratch, (size_t)a->scratch_per_lane * (size_t)c->threads * sizeof(double)),
       "cudaMalloc scratch");
    *out = c;
    return 0;
}

extern "C" HPC_DL_EXPORT int odegen_cuda_solve(ode_cuda_t *c, int64_t n, const double *x0, double *yout,
                                                ode_stat_t *stat)
{
    size_t D = (size_t)c->prob.dim, NT = (size_t)c->prob.nt;
    if (n > c->nmax) {
        snprintf(why, sizeof why, "--device cuda: batch of %lld > %lld", (long long)n, (long long)c->nmax);
        return -1;
    }
    cudaError_t e;
    if ((e = cudaMemcpy(c->d_x0, x0, (size_t)n * D * sizeof(double), cudaMemcpyHostToDevice)))
        return cuda_fail(e, "copy x0");
    const int block = 128;
    int64_t threads = n < c->threads ? n : c->threads;
    unsigned grid = (unsigned)((threads + block - 1) / block);
    /* grid * block <= c->threads: the scratch has a lane for every thread */
    const double *par = c->d_par;
    double *const *vec = c->d_vec;
    int64_t stride = c->threads;
    void *args[] = {&c->prob, &par, &vec, &n, &c->d_x0, &c->d_y, &c->d_st, &c->d_scratch, &stride};
    if ((e = cudaLaunchKernel((const void *)c->kernel, dim3(grid), dim3(block), args, 0, 0)) ||
        (e = cudaDeviceSynchronize()))
        return cuda_fail(e, "odegen_kernel");
    if ((e = cudaMemcpy(yout, c->d_y, (size_t)n * NT * D * sizeof(double), cudaMemcpyDeviceToHost)))
        return cuda_fail(e, "copy y");
    if ((e = cudaMemcpy(stat, c->d_st, (size_t)n * sizeof(ode_stat_t), cudaMemcpyDeviceToHost)))
        return cuda_fail(e, "copy stats");
    return 0;
}

extern "C" HPC_DL_EXPORT void odegen_cuda_close(ode_cuda_t *c)
{
    if (!c) return;
    cudaFree(c->d_tgrid);
    cudaFree(c->d_par);
    for (int k = 0; k < c->nvec; k++) cudaFree(c->h_vec[k]);
    cudaFree(c->d_vec);
    cudaFree(c->d_x0);
    cudaFree(c->d_y);
    cudaFree(c->d_st);
    cudaFree(c->d_scratch);
    if (c->lib) cudaLibraryUnload(c->lib);
    free(c);
}
