/* cuda_load.c - --device cuda: hpc-odegen's GPU engine is the module
 * hpckit/hpc-odegen-cuda.so (cuda.cu), opened here at the first
 * ode_cuda_open, so that the program itself needs no CUDA runtime and
 * every CPU run starts on any node.  The module returns -1 and says why
 * through odegen_cuda_why (it has no MPI header, hence no hpc.h): here
 * that becomes the program's error record. */
#include "config.h"
#include "hpc_app.h"
#include "ode_cuda.h"

typedef int (*open_fn)(const ode_prob_t *, int64_t, ode_cuda_t **);
typedef int (*solve_fn)(ode_cuda_t *, int64_t, const double *, double *, ode_stat_t *);
typedef void (*close_fn)(ode_cuda_t *);
typedef const char *(*why_fn)(void);
static open_fn mod_open;
static solve_fn mod_solve;
static close_fn mod_close;
static why_fn mod_why;

int ode_cuda_open(const ode_prob_t *p, int64_t nmax, ode_cuda_t **out)
{
    static const char *const names[] = {"odegen_cuda_open", "odegen_cuda_solve", "odegen_cuda_close",
                                        "odegen_cuda_why"};
    void *fns[4];
    if (!mod_open) {
        /* a rank without a GPU or the module: all exit 2 here */
        hpc_app_gpu_module(ODE_CUDA_MODULE, names, fns, 4);
        mod_open = (open_fn)fns[0];
        mod_solve = (solve_fn)fns[1];
        mod_close = (close_fn)fns[2];
        mod_why = (why_fn)fns[3];
    }
    if (mod_open(p, nmax, out) < 0) return HPC_ERR(HPC_ERR_CUDA, "%s", mod_why());
    return 0;
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
