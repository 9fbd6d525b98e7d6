/* cuda_load.c - --device cuda: hpc-odegen's GPU engine is the module
 * hpckit/hpc-odegen-cuda.so (cuda.cu), opened here at ode_cuda_open, so
 * that the program itself needs no CUDA library and every CPU run starts
 * on any node.  Here: the kernel's sources (the system's file, the
 * engine, sys_cuda.h), the cache of compiled kernels (the compiled
 * systems' cache, keyed by the sources, the method, the GPU's
 * architecture and NVRTC's version), and the agreement of the ranks.  The
 * module returns -1 and says why through odegen_cuda_why (it has no MPI
 * header, hence no hpc.h): here that becomes the program's error record. */
#include "config.h"
#include "hpc_app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "odegen.h"
#include "ode_texts.h"
#include "sha256.h"
#include "hpc_dl.h"

static ode_cuda_arch_fn mod_arch;
static ode_cuda_compile_fn mod_compile;
static ode_cuda_open_fn mod_open;
static ode_cuda_solve_fn mod_solve;
static ode_cuda_close_fn mod_close;
static ode_cuda_text_fn mod_why, mod_log;

/* the engine's files the kernel includes, and the C headers a system file
 * may include, empty under NVRTC (CUDA's built-ins stand for them) */
static const char *const engine[] = {"hpc_ode.h", "ode_prob.h", "erk.h", "erk_tableaux.h", "sys_params.h",
                                     "sys_cuda.h"};
static const char *const stubs[] = {"math.h", "stdint.h", "stddef.h", "stdlib.h", "string.h", "stdio.h",
                                    "float.h", "stdbool.h"};
#define NENGINE (int)(sizeof engine / sizeof engine[0])
#define NSTUBS (int)(sizeof stubs / sizeof stubs[0])
#define NFILES (NENGINE + NSTUBS + 1)

/* the module's functions; gpu: every rank must have a GPU (else only
 * the module, for the test hook below) */
static void load_module(int gpu)
{
    static const char *const names[] = {"odegen_cuda_arch", "odegen_cuda_compile", "odegen_cuda_open",
                                        "odegen_cuda_solve", "odegen_cuda_close", "odegen_cuda_why",
                                        "odegen_cuda_log"};
    void *fns[7];
    char why[1024];
    if (mod_open) return;
    /* a rank without a GPU or the module: all exit 2 here */
    if (gpu) hpc_app_gpu_module(ODE_CUDA_MODULE, names, fns, 7);
    else hpc_app_agree(hpc_dlmodule(ODE_CUDA_MODULE, names, fns, 7, why, sizeof why) < 0 ? HPC_EXIT_USAGE : 0,
                       "--device cuda: %s", why);
    mod_arch = (ode_cuda_arch_fn)fns[0];
    mod_compile = (ode_cuda_compile_fn)fns[1];
    mod_open = (ode_cuda_open_fn)fns[2];
    mod_solve = (ode_cuda_solve_fn)fns[3];
    mod_close = (ode_cuda_close_fn)fns[4];
    mod_why = (ode_cuda_text_fn)fns[5];
    mod_log = (ode_cuda_text_fn)fns[6];
}

typedef struct {
    ode_cuda_src_t src;
    const char *names[NFILES], *texts[NFILES];
    char *user;           /* "user.c": the system's file under its own name */
    char main[128];
    const char *arch;
} kernel_t;

static int kernel_sources(const ode_opts_t *o, kernel_t *k)
{
    const char *src = o->sys_source ? o->sys_source : "";
    char name[4096];
    snprintf(name, sizeof name, "%s", o->sys_path ? o->sys_path : o->sys->name);
    for (char *p = name; *p; p++)
        if (*p == '"' || *p == '\\') *p = '_';
    size_t n = strlen(src) + strlen(name) + 32;
    if (!(k->user = malloc(n))) return HPC_ERR(HPC_ERR_NOMEM, "the kernel's source");
    snprintf(k->user, n, "#line 1 \"%s\"\n%s", name, src);
    int f = 0;
    for (int i = 0; i < NENGINE; i++, f++) {
        k->names[f] = engine[i];
        k->texts[f] = ode_text(engine[i]);
    }
    for (int i = 0; i < NSTUBS; i++, f++) {
        k->names[f] = stubs[i];
        k->texts[f] = "";
    }
    k->names[f] = "user.c";
    k->texts[f++] = k->user;
    snprintf(k->main, sizeof k->main, "#define ODE_METHOD %d\n#include \"sys_cuda.h\"\n", o->method);
    k->src = (ode_cuda_src_t){k->main, f, k->names, k->texts};
    return 0;
}

/* SHA-256 over what decides the kernel */
static void kernel_key(const kernel_t *k, char key[65])
{
    size_t n = strlen(k->arch) + strlen(k->main) + 64;
    for (int i = 0; i < k->src.nfiles; i++) n += strlen(k->names[i]) + strlen(k->texts[i]) + 2;
    char *all = malloc(n);
    if (!all) {
        snprintf(key, 65, "%s", "0");
        return;
    }
    size_t off = (size_t)snprintf(all, n, "hpc-odegen kernel\n%s\n%s", k->arch, k->main);
    for (int i = 0; i < k->src.nfiles; i++)
        off += (size_t)snprintf(all + off, n - off, "%s\n%s\n", k->names[i], k->texts[i]);
    ode_sha256(all, off, key);
    free(all);
}

/* the cache's maker: NVRTC into a file */
static int make_cubin(void *arg, const char *tmp)
{
    const kernel_t *k = arg;
    void *cubin = NULL;
    size_t len = 0;
    if (mod_compile(&k->src, k->arch, &cubin, &len) < 0) return HPC_ERR(HPC_ERR_CUDA, "%s", mod_why());
    FILE *f = fopen(tmp, "wb");
    int ok = f && fwrite(cubin, 1, len, f) == len;
    ok &= f && fclose(f) == 0;
    free(cubin);
    return ok ? 0 : HPC_ERR(HPC_ERR_IO, "cannot write '%s'", tmp);
}

/* this rank's kernel: from the cache, compiled first by rank 0 so that a
 * compile error is said once (with NVRTC's message) */
static int fetch_kernel(const ode_opts_t *o, const char *arch, char **cubin, size_t *len)
{
    kernel_t k;
    memset(&k, 0, sizeof k);
    k.arch = arch;
    char key[65], path[4400];
    int rc = kernel_sources(o, &k);
    if (!rc) kernel_key(&k, key);
    if (hpc_rank() == 0 && !rc) {
        rc = ode_cache_fetch(key, "cubin", make_cubin, &k, path, sizeof path);
        if (rc && *mod_log()) fputs(mod_log(), stderr);
    }
    int fail = rc < 0;
    MPI_Bcast(&fail, 1, MPI_INT, 0, hpc_comm_world());
    if (fail) {
        free(k.user);
        hpc_app_agree(HPC_EXIT_USAGE, "--device cuda: system %s does not compile for the GPU (NVRTC, %s): %s",
                      o->sys->name, arch, hpc_rank() == 0 ? hpc_last_cause() : "");
    }
    if (hpc_rank() != 0) rc = ode_cache_fetch(key, "cubin", make_cubin, &k, path, sizeof path);
    free(k.user);
    if (!rc) rc = hpc_file_read_all(path, (size_t)1 << 30, MPI_COMM_SELF, cubin, len);
    return rc;
}

/* Test hook HPC_ODEGEN_TEST_NVRTC=SM (90: sm_90): compile the kernel for
 * that architecture, no GPU needed, and stop (exit 0): how the tests check
 * on a machine without a GPU that NVRTC takes a system and the engine. */
static void test_nvrtc(const ode_opts_t *o)
{
    int64_t sm;
    if (hpc_app_test_hook("HPC_ODEGEN_TEST_NVRTC", 1, &sm) != 1) return;
    char arch[64], *cubin = NULL;
    size_t len = 0;
    load_module(0);
    snprintf(arch, sizeof arch, "sm_%lld (test hook)", (long long)sm);
    hpc_app_agree_rc(fetch_kernel(o, arch, &cubin, &len), HPC_EXIT_USAGE, "--device cuda");
    free(cubin);
    hpc_app_exit(HPC_EXIT_OK, "the %s kernel of system %s compiled for sm_%lld (%zu bytes); no GPU used",
                 ode_method_name(o->method), o->sys->name, (long long)sm, len);
}

int ode_cuda_open(const ode_opts_t *o, const ode_prob_t *p, int64_t nmax, ode_cuda_t **out)
{
    char arch[128];
    test_nvrtc(o);
    load_module(1);
    int rc = mod_arch(arch, sizeof arch) < 0 ? HPC_ERR(HPC_ERR_CUDA, "%s", mod_why()) : 0;
    hpc_app_agree_rc(rc, HPC_EXIT_USAGE, NULL);
    char *cubin = NULL;
    size_t len = 0;
    HPC_TRY(fetch_kernel(o, arch, &cubin, &len));
    ode_cuda_args_t a = {*p,     o->par,      o->sys->npar, o->vec, o->vec_len, o->sys->nvec, cubin, len, nmax,
                         (int64_t)(o->sys->scratch(o->method, o->dim) / 8)};
    a.prob.events = NULL; /* events run on the CPU only (options.c refuses them here) */
    a.prob.nev = 0;
    rc = mod_open(&a, out) < 0 ? HPC_ERR(HPC_ERR_CUDA, "%s", mod_why()) : 0;
    free(cubin);
    return rc;
}

int ode_cuda_solve(ode_cuda_t *c, int64_t n, const double *x0, double *yout, ode_stat_t *stat)
{
    if (mod_solve(c, n, x0, yout, stat) < 0) return HPC_ERR(HPC_ERR_CUDA, "%s", mod_why());
    return 0;
}

void ode_cuda_close(ode_cuda_t *c)
{
    if (c && mod_close) mod_close(c);
}
