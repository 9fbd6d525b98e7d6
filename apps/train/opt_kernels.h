/* opt_kernels.h - the optimisers' update of one element, as PyTorch 1.13
 * computes it (torch.optim, the single-tensor path), operation by
 * operation in float32; one definition for the CPU (optim.c makes a
 * vectorised loop of each) and the GPU (cuda.cu makes a kernel of each).
 * An optimiser is its rule here, its name in OPT_KERNELS, and its row in
 * optim.c's table (the options, the states, the constants of a step).
 *
 *   sgd:   d = g + wd p;  with momentum: buf = mu buf + d (buf starts at
 *          0, so the first step gives buf = d, as PyTorch's clone);
 *          d = nesterov ? d + mu buf : buf;  p = p - lr d
 *   adam:  p = p decay (AdamW: 1 - lr wd; Adam: 1);  g = g + l2 p (Adam:
 *          wd; AdamW: 0);  m = beta1 m + (1 - beta1) g;
 *          v = beta2 v + (1 - beta2) g^2;
 *          p = p - (lr / (1 - beta1^t)) m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
 *
 * A weight decay of 0 adds 0 p and a factor of 1 multiplies by 1 - both
 * exact - so the rules are branch-free and vectorise, and give the bits
 * of the rules above.  No MPI or HDF5 here: nvcc includes it.
 */
#ifndef TRAIN_OPT_KERNELS_H
#define TRAIN_OPT_KERNELS_H

#include <stddef.h>
#ifndef __CUDACC__
#include <math.h>
#endif

#ifdef __CUDACC__
#define OPT_HD __host__ __device__ static inline
#else
#define OPT_HD static inline
#endif

/* One step's constants (what a rule does not use is 0) */
typedef struct {
    float lr, momentum, weight_decay;
    int nesterov;
    float beta1, beta2, eps;
    /* what PyTorch computes in Python floats (double), then rounds */
    float c1, c2;           /* 1 - beta1, 1 - beta2 */
    float l2;               /* Adam: the weight decay added to the gradient; AdamW: 0 */
    float decay;            /* AdamW: 1 - lr weight_decay; Adam: 1 */
    float step_size;        /* lr / (1 - beta1^t) */
    float bc2_sqrt;         /* sqrt(1 - beta2^t) */
} opt_step_t;

/* element i of parameters p, gradient g and the states s0, s1 (NULL
 * where the optimiser keeps none) */
OPT_HD void opt_sgd_elem(size_t i, float *p, const float *g, float *s0, float *s1, const opt_step_t h)
{
    (void)s1;
    float d = g[i] + h.weight_decay * p[i];
    if (s0) {   /* momentum */
        s0[i] = s0[i] * h.momentum + d;
        d = h.nesterov ? d + h.momentum * s0[i] : s0[i];
    }
    p[i] = p[i] + -h.lr * d;
}

OPT_HD void opt_adam_elem(size_t i, float *p, const float *g, float *m, float *v, const opt_step_t h)
{
    p[i] = p[i] * h.decay;
    float gi = g[i] + h.l2 * p[i];
    m[i] = m[i] * h.beta1 + h.c1 * gi;
    v[i] = v[i] * h.beta2 + h.c2 * (gi * gi);
    float denom = sqrtf(v[i]) / h.bc2_sqrt + h.eps;
    p[i] = p[i] + -h.step_size * (m[i] / denom);
}

/* Every rule, by name (opt_<name>_elem); OPT_K_<name> indexes the
 * devices' tables */
#define OPT_KERNELS(X) X(sgd) X(adam)
#define OPT_KERNEL_ENUM(name) OPT_K_##name,
enum { OPT_KERNELS(OPT_KERNEL_ENUM) OPT_NKERNELS };

/* One rule over n elements */
typedef void (*opt_kernel_fn)(size_t n, float *p, const float *g, float *s0, float *s1, const opt_step_t *h);

#endif /* TRAIN_OPT_KERNELS_H */
