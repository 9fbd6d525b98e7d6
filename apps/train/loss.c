/* loss.c - losses on the CPU: the sum over a rank's rows (in double, so a
 * batch's sum does not depend on how it was cut) and the gradient with
 * respect to the model's output, scaled by the caller: scale = 1 / the
 * number of terms PyTorch's mean divides by over the whole global batch
 * (B x outputs for MSELoss, B for CrossEntropyLoss), so the gradients of
 * all ranks add up to the global batch's gradient.
 */
#include "config.h"
#include <math.h>
#include "act_math.h"
#include "dev.h"

static double mse(int m, int n, const float *yhat, const float *y, float scale, float *dy)
{
    double sum = 0;
    for (size_t i = 0; i < (size_t)m * n; i++) {
        float r = yhat[i] - y[i];
        sum += (double)r * r;
        if (dy) dy[i] = 2.0f * r * scale;
    }
    return sum;
}

/* log-softmax with the row's maximum taken out (no overflow); labels are
 * class indices held as floats, checked against n when the data is read */
static double cross_entropy(int m, int n, const float *z, const float *y, float scale, float *dy)
{
    double sum = 0;
    for (size_t i = 0; i < (size_t)m; i++)
        sum += ce_row(n, z + i * n, (int)y[i], scale, dy ? dy + i * n : NULL);
    return sum;
}

double cpu_loss(loss_kind_t kind, int m, int n, const float *yhat, const float *y, float scale, float *dy)
{
    return kind == LOSS_CE ? cross_entropy(m, n, yhat, y, scale, dy) : mse(m, n, yhat, y, scale, dy);
}
