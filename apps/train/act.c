/* act.c - activations on the CPU, fused with what comes next to them:
 * the bias add and the activation in one pass over the GEMM's output
 * (forward), the activation's derivative and the bias gradient in one
 * pass (backward).  Activations as PyTorch defines them: tanh, relu
 * (derivative 0 at 0), gelu with erf (nn.GELU()).
 *
 * tanh is the hot one (two hidden layers of 256 per sample): a rational
 * approximation (act_math.h, shared with the GPU) where libm's tanhf is a
 * call per element.
 */
#include "config.h"
#include <math.h>
#include "dev.h"
#include "act_math.h"

#define HOT TRAIN_HOT

float cpu_tanh(float x)
{
    return act_tanh(x);
}

HOT static void bias_tanh(int m, int n, const float *b, float *z)
{
    for (int i = 0; i < m; i++) {
        float *r = z + (size_t)i * n;
        for (int j = 0; j < n; j++) r[j] = act_tanh(r[j] + b[j]);
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
                z[i * n + j] = act_gelu(v);
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
                d[i * n + j] *= act_gelu_grad(keep[i * n + j]);
                db[j] += d[i * n + j];
            }
        return;
    }
}
