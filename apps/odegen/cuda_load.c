/* cuda_load.c - --device cuda: hpc-odegen's GPU engine is the module
 * hpckit/hpc-odegen-cuda.so (cuda.cu), opened here at the first
 * ode_cuda_open, so that the program itself needs no CUDA runtime and
 * every CPU run starts on any node. */
#include "config.h"
#include "hpc_app.h"
#include "ode_cuda.h"

typedef int (*open_fn)(const ode_prob_t *, int64_t, ode_cuda_t **, char *, size_t);
typedef int (*solve_fn)(ode_cuda_t *, int64_t, const double *, double *, ode_stat_t *, char *, size_t);
typedef void (*close_fn)(ode_cuda_t *);
static open_fn mod_open;
static solve_fn mod_solve;
static close_fn mod_close;

int ode_cuda_open(const ode_prob_t *p, int64_t nmax, ode_cuda_t **out, char *err, size_t errlen)
{
    static const char *const names[] = {"odegen_cuda_open", "odegen_cuda_solve", "odegen_cuda_close"};
    void *fns[3];
    if (!mod_open) {
        /* a rank without a GPU or the module: all exit 2 here */
        hpc_app_gpu_module(ODE_CUDA_MODULE, names, fns, 3);
        mod_open = (open_fn)fns[0];
        mod_solve = (solve_fn)fns[1];
        mod_close = (close_fn)fns[2];
    }
    return mod_open(p, nmax, out, err, errlen);
}

int ode_cuda_solve(ode_cuda_t *c, int64_t n, const double *x0, double *yout, ode_stat_t *stat, char *err,
                   size_t errlen)
{
    return mod_solve(c, n, x0, yout, stat, err, errlen);
}

void ode_cuda_close(ode_cuda_t *c)
{
    if (c && mod_close) mod_close(c);
}
