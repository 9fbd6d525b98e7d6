/* act_math.h - the formulas the CPU (act.c, loss.c) and the GPU (cuda.cu)
 * share, once: the cross-entropy of one row (log-sum-exp in double) and,
 * for the activations, tanh as a rational approximation (Eigen's fast
 * tanh: plain operations the compiler vectorises, at most 6 ulp and
 * 3.6e-7 relative from tanh, train_unit checks), gelu with erf as
 * PyTorch's nn.GELU(), and their derivatives. */
#ifndef TRAIN_ACT_MATH_H
#define TRAIN_ACT_MATH_H

#include <math.h>

#if defined(__CUDACC__)
#define ACT_HD __host__ __device__ __forceinline__
#else
#define ACT_HD static inline
#endif

/* p(x)/q(x) on [-c, c]; beyond c it is +-1 to float precision, below 4e-4
 * it is x */
ACT_HD float act_tanh(float x)
{
    const float c = 7.90531110763549805f;
    float xc = x > c ? c : x < -c ? -c : x, x2 = xc * xc;
    float p = -2.76076847742355e-16f;
    p = p * x2 + 2.00018790482477e-13f;
    p = p * x2 + -8.60467152213735e-11f;
    p = p * x2 + 5.12229709037114e-08f;
    p = p * x2 + 1.48572235717979e-05f;
    p = p * x2 + 6.37261928875436e-04f;
    p = p * x2 + 4.89352455891786e-03f;
    float q = 1.19825839466702e-06f;
    q = q * x2 + 1.18534705686654e-04f;
    q = q * x2 + 2.26843463243900e-03f;
    q = q * x2 + 4.89352518554385e-03f;
    float r = p * xc / q;
    return fabsf(x) < 0.0004f ? x : r;
}

ACT_HD float act_gelu(float x)
{
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}

/* d gelu / dx = Phi(x) + x phi(x) */
ACT_HD float act_gelu_grad(float x)
{
    float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
    float pdf = expf(-0.5f * x * x) * 0.39894228040143268f;
    return cdf + x * pdf;
}

/* Row zr (n logits) against class label: its loss; with dyr, the
 * gradient (softmax - one-hot) * scale into dyr[0..n-1]. */
ACT_HD double ce_row(int n, const float *zr, int label, float scale, float *dyr)
{
    float top = zr[0];
    for (int j = 1; j < n; j++) top = zr[j] > top ? zr[j] : top;
    double se = 0;
    for (int j = 0; j < n; j++) se += exp((double)zr[j] - top);
    double lse = top + log(se);
    if (dyr)
        for (int j = 0; j < n; j++) {
            float p = (float)exp((double)zr[j] - lse);
            dyr[j] = (p - (j == label ? 1.0f : 0.0f)) * scale;
        }
    return lse - zr[label];
}

#endif
