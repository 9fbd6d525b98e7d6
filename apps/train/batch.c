/* batch.c - what every strategy does with a step's batch: its rows on
 * the device, and what the loss of a step is over.
 */
#include "config.h"
#include "train.h"

double train_loss_terms(const train_t *t)
{
    double n = (double)t->o->batch * (double)t->o->accum;
    return t->o->loss == LOSS_MSE ? n * (double)t->data.nout : n;
}

int train_loss_normalised(const train_t *t)
{
    return t->o->loss == LOSS_MSE && t->o->normalize;
}

size_t train_batch_bytes(const train_t *t, int rows)
{
    if (t->o->device == DEV_CPU) return 0;
    return (size_t)rows * (size_t)(t->data.nin + t->data.ydim) * sizeof(float);
}

int train_batch_alloc(train_t *t, int rows)
{
    if (t->dev == train_dev_cpu()) return 0;
    t->xdev = t->dev->alloc((size_t)rows * t->data.nin * sizeof(float));
    t->ydev = t->dev->alloc((size_t)rows * t->data.ydim * sizeof(float));
    return t->xdev && t->ydev ? 0 : -1;
}

/* The loader's buffer itself on the CPU, a copy on the GPU */
void train_to_device(train_t *t, const float **x, const float **y, int rows)
{
    if (t->dev == train_dev_cpu()) return;
    if (x) {
        t->dev->to_dev(t->xdev, *x, (size_t)rows * t->data.nin * sizeof(float));
        *x = t->xdev;
    }
    if (y) {
        t->dev->to_dev(t->ydev, *y, (size_t)rows * t->data.ydim * sizeof(float));
        *y = t->ydev;
    }
}
