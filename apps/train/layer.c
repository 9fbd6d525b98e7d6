/* layer.c - one linear layer and its activation, forward and backward,
 * through the device's kernels (dev.h).  Weight W [out, in] and bias b
 * [out] as nn.Linear; x [rows, in] in, y [rows, out] out.
 *
 * Forward is one GEMM (y = x W^T) and one pass that adds the bias and
 * applies the activation in place.  Backward turns dL/dy into dL/dz
 * (times the activation's derivative) while summing the bias gradient in
 * the same pass, then the weight gradient (dW = dz^T x, accumulated with
 * beta 1 over micro-steps) and, except for the first layer, the input
 * gradient dx = dz W.
 */
#include "config.h"
#include "train.h"

void layer_forward(const train_dev_t *dev, int rows, int in, int out, const float *W, const float *b,
                   act_t act, const float *x, float *y, float *keep)
{
    dev->gemm_nt(rows, out, in, x, W, y);
    dev->bias_act(act, rows, out, b, y, keep);
}

/* dL/dy in d becomes dL/dz; the bias and weight gradients */
void layer_backward_params(const train_dev_t *dev, int rows, int in, int out, act_t act,
                           const float *x, const float *y, const float *keep, float *d, float *dW,
                           float *db, float beta)
{
    dev->act_back(act, rows, out, y, keep, d, db, beta);
    dev->gemm_tn(out, in, rows, d, x, beta, dW);
}

/* dx = dL/dz W: what the layer below gets */
void layer_backward_input(const train_dev_t *dev, int rows, int in, int out, const float *W,
                          const float *d, float *dx)
{
    dev->gemm_nn(rows, in, out, d, W, dx);
}
