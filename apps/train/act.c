/* act.c - activations on the CPU, fused with what comes next to them:
 * the bias add and the activation in one pass over the GEMM's output
 * (forward), the activation's derivative and the bias gradient in one
 * pass (backward).  Activations as PyTorch defines them: tanh, relu
 * (derivative 0 at 0), gelu with erf (nn.GELU()).
 *
 * tanh is the hot one (two hidden layers of 256 per sample): a rational
 * approximation (Eigen's fast tanh) in plain operations the compiler
 * vectorises, at most 6 ulp and 3.6e-7 relative from tanh (train_unit
 * checks), where libm's tanhf is a call per element.
 */
#include "config.h"
#include <math.h>
#include "dev.h"

#define HOT TRAIN_HOT

/* tanh as p(x)/q(x) on [-c, c]; beyond c it is +-1 to float precision,
 * below 4e-4 it is x */
static inline float tanh_r(float x)
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

float cpu_tanh(float x)
{
    return tanh_r(x);
}

static float gelu(float x)
{
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}

/* d gelu / dx = Phi(x) + x phi(x) */
static float gelu_grad(float x)
{
    float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
    float pdf = expf(-0.5f * x * x) * 0.39894228040143268f;
    return cdf + x * pdf;
}

HOT static void bias_tanh(int m, int n, const float *b, float *z)
{
    for (int i = 0; i < m; i++) {
        float *r = z + (size_t)i * n;
        for (int j = 0; j < n; j++) r[j] = tanh_r(r[j] + b[j]);
    }
}

HOT static void bias_relu(int m, int n, const float *b, float *z)
{
    for (int i = 0; i < m; i++) {
        float *r = z + (size_t)i * n;
        for (int j = 0; j < n; j++) {
            float v = r[j] + b[j];
            r[j] = v > 0.0f ? v : 0.0f;
        }
    }
}

HOT static void bias_only(int m, int n, const float *b, float *z)
{
    for (int i = 0; i < m; i++) {
        float *r = z + (size_t)i * n;
        for (int j = 0; j < n; j++) r[j] += b[j];
    }
}

void cpu_bias_act(act_t act, int m, int n, const float *b, float *z, float *keep)
{
    switch (act) {
    case ACT_TANH: bias_tanh(m, n, b, z); return;
    case ACT_RELU: bias_relu(m, n, b, z); return;
    case ACT_NONE: bias_only(m, n, b, z); return;
    case ACT_GELU:
        for (size_t i = 0; i < (size_t)m; i++)
            for (int j = 0; j < n; j++) {
                float v = z[i * n + j] + b[j];
                keep[i * n + j] = v;
                z[i * n + j] = gelu(v);
            }
        return;
    }
}

/* the derivative, from the output a (tanh, relu) or the input x (gelu) */
HOT static void back_tanh(int m, int n, const float *a, float *d, float *db)
{
    for (int i = 0; i < m; i++) {
        const float *ar = a + (size_t)i * n;
        float *dr = d + (size_t)i * n;
        for (int j = 0; j < n; j++) {
            dr[j] = dr[j] * (1.0f - ar[j] * ar[j]);
            db[j] += dr[j];
        }
    }
}

HOT static void back_relu(int m, int n, const float *a, float *d, float *db)
{
    for (int i = 0; i < m; i++) {
        const float *ar = a + (size_t)i * n;
        float *dr = d + (size_t)i * n;
        for (int j = 0; j < n; j++) {
            dr[j] = ar[j] > 0.0f ? dr[j] : 0.0f;
            db[j] += dr[j];
        }
    }
}

HOT static void colsum(int m, int n, const float *d, float *db)
{
    for (int i = 0; i < m; i++) {
        const float *dr = d + (size_t)i * n;
        for (int j = 0; j < n; j++) db[j] += dr[j];
    }
}

/* The bias gradient is the column sum of d, in row order (so it does not
 * depend on the vector width), added to beta db (accumulation). */
void cpu_act_back(act_t act, int m, int n, const float *a, const float *keep, float *d, float *db,
                  float beta)
{
    for (int j = 0; j < n; j++) db[j] = beta != 0.0f ? db[j] : 0.0f;
    switch (act) {
    case ACT_TANH: back_tanh(m, n, a, d, db); return;
    case ACT_RELU: back_relu(m, n, a, d, db); return;
    case ACT_NONE: colsum(m, n, d, db); return;
    case ACT_GELU:
        for (size_t i = 0; i < (size_t)m; i++)
            for (int j = 0; j < n; j++) {
                d[i * n + j] *= gelu_grad(keep[i * n + j]);
                db[j] += d[i * n + j];
            }
        return;
    }
}
