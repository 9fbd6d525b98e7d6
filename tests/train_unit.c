/* train_unit - hpc-train's pieces on the CPU, against independent
 * references written here in double precision:
 *   - gradients of every activation (tanh, relu, gelu) with every loss
 *     (mse, cross-entropy) and a layer without activation at the end:
 *     the float32 forward against a plain double forward, the float32
 *     backward against central finite differences of that double forward,
 *     and accumulation (beta 1) giving twice the gradient;
 *   - the fast tanh against tanh() (ulps and relative error);
 *   - the initialisation: PyTorch's bounds and variance, seeded, per layer;
 *   - SGD (momentum, Nesterov, weight decay), Adam and AdamW against the
 *     update rules in double, step by step;
 *   - the schedules' closed forms; the parameter layout.
 * (PyTorch itself is the reference of tests/train_torch.sh.)
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "train.h"
#include "testlib.h"

enum { ROWS = 7, NL = 3 };
static const int64_t SIZE[NL + 1] = {3, 5, 4, 3};

/* ---- the reference: a double forward of the same network ---- */

static double ref_act(act_t a, double x)
{
    switch (a) {
    case ACT_TANH: return tanh(x);
    case ACT_RELU: return x > 0 ? x : 0;
    case ACT_GELU: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    default: return x;
    }
}

/* mean loss of the batch (PyTorch's reduction) */
static double ref_loss(const model_t *m, const double *p, const double *x, const double *y, loss_kind_t kind)
{
    double a[ROWS][8], z[ROWS][8];
    for (int r = 0; r < ROWS; r++)
        for (int j = 0; j < SIZE[0]; j++) a[r][j] = x[r * SIZE[0] + j];
    for (int l = 0; l < m->nl; l++) {
        int in = (int)m->size[l], out = (int)m->size[l + 1];
        for (int r = 0; r < ROWS; r++)
            for (int o = 0; o < out; o++) {
                double s = p[m->b[l] + o];
                for (int i = 0; i < in; i++) s += p[m->w[l] + (size_t)o * in + i] * a[r][i];
                z[r][o] = l == m->nl - 1 ? s : ref_act(m->act, s);
            }
        memcpy(a, z, sizeof a);
    }
    int nout = (int)m->size[m->nl];
    double sum = 0;
    for (int r = 0; r < ROWS; r++) {
        if (kind == LOSS_MSE) {
            for (int o = 0; o < nout; o++) sum += (a[r][o] - y[r * nout + o]) * (a[r][o] - y[r * nout + o]);
        } else {
            double se = 0;
            for (int o = 0; o < nout; o++) se += exp(a[r][o]);
            sum += log(se) - a[r][(int)y[r]];
        }
    }
    return sum / (kind == LOSS_MSE ? ROWS * nout : ROWS);
}

static void gradcheck(act_t act, loss_kind_t kind)
{
    const train_dev_t *dev = train_dev_cpu();
    model_t m;
    model_layout(&m, NL, SIZE, act);
    float *p = dev->alloc(m.n * 4), *g = dev->alloc(m.n * 4), *g2 = dev->alloc(m.n * 4);
    model_init(&m, 11, p);
    float x[ROWS * 3], y[ROWS * 3];
    double xd[ROWS * 3], yd[ROWS * 3], *pd = calloc(m.n, sizeof *pd);
    hpc_rng_t r;
    hpc_rng_init(&r, 5, (uint64_t)act * 2 + kind);
    for (int i = 0; i < ROWS * 3; i++) {
        x[i] = (float)(2 * hpc_rng_uniform(&r) - 1);
        y[i] = kind == LOSS_CE ? (float)(i % 3) : (float)(2 * hpc_rng_uniform(&r) - 1);
        xd[i] = x[i];
        yd[i] = y[i];
    }
    for (size_t i = 0; i < m.n; i++) pd[i] = p[i];
    acts_t w;
    wts_t pw, gw, gw2;
    model_wts(&m, p, &pw);
    model_wts(&m, g, &gw);
    model_wts(&m, g2, &gw2);
    EXPECT(acts_alloc(&w, &m, dev, ROWS, 0, NL, ACTS_OUT | ACTS_GRAD) == 0, "acts");
    EXPECT(w.bytes == acts_bytes(&m, ROWS, 0, NL, ACTS_OUT | ACTS_GRAD), "acts_bytes %zu, allocated %zu",
           acts_bytes(&m, ROWS, 0, NL, ACTS_OUT | ACTS_GRAD), w.bytes);
    w.a0 = x;
    model_forward(&m, dev, &pw, &w, ROWS, 0, NL);
    int nout = (int)SIZE[NL], terms = kind == LOSS_MSE ? ROWS * nout : ROWS;
    double loss = dev->loss(kind, ROWS, nout, model_output(&m, &w), y, 1.0f / terms, w.d[0]) / terms;
    double want = ref_loss(&m, pd, xd, yd, kind);
    EXPECT(fabs(loss - want) <= 1e-5 * fabs(want), "act %d loss %d: forward %.9g, reference %.9g", act, kind,
           loss, want);
    model_backward(&m, dev, &pw, &gw, &w, ROWS, 0.0f, 0, NL, NULL, NULL);
    /* every weight and bias against a central difference, h = 1e-6 */
    double worst = 0, top = 0;
    for (int l = 0; l < NL; l++) {
        size_t cnt = (size_t)(SIZE[l] * SIZE[l + 1] + SIZE[l + 1]);
        for (size_t k = 0; k < cnt; k++) {
            size_t i = k < (size_t)(SIZE[l] * SIZE[l + 1]) ? m.w[l] + k : m.b[l] + k - SIZE[l] * SIZE[l + 1];
            double keep = pd[i], h = 1e-6;
            pd[i] = keep + h;
            double up = ref_loss(&m, pd, xd, yd, kind);
            pd[i] = keep - h;
            double down = ref_loss(&m, pd, xd, yd, kind);
            pd[i] = keep;
            double fd = (up - down) / (2 * h);
            if (fabs(g[i] - fd) > worst) worst = fabs(g[i] - fd);
            if (fabs(fd) > top) top = fabs(fd);
        }
    }
    EXPECT(worst <= 1e-4 * top && top > 1e-3, "act %d loss %d: gradient off by %.3g (largest %.3g)", act, kind,
           worst, top);
    /* a second micro-step accumulates: twice the gradient */
    memcpy(g2, g, m.n * 4);
    model_forward(&m, dev, &pw, &w, ROWS, 0, NL);
    dev->loss(kind, ROWS, nout, model_output(&m, &w), y, 1.0f / terms, w.d[0]);
    model_backward(&m, dev, &pw, &gw2, &w, ROWS, 1.0f, 0, NL, NULL, NULL);
    double acc = 0;
    for (size_t i = MODEL_PAD; i < m.n; i++) acc = fmax(acc, fabs(g2[i] - 2.0f * g[i]));
    EXPECT(acc <= 1e-6 * top, "act %d loss %d: accumulation off by %.3g", act, kind, acc);
    acts_free(&w, dev);
    free(pd);
    free(p);
    free(g);
    free(g2);
}

/* ---- tanh ---- */

static int64_t ulps(float a, float b)
{
    int32_t x, y;
    memcpy(&x, &a, 4);
    memcpy(&y, &b, 4);
    if (x < 0) x = INT32_MIN - x;
    if (y < 0) y = INT32_MIN - y;
    return x > y ? (int64_t)x - y : (int64_t)y - x;
}

static void tanh_accuracy(void)
{
    int64_t worst = 0;
    double wrel = 0;
    for (float x = -20.0f; x <= 20.0f; x += 1e-4f + fabsf(x) * 1e-5f) {
        double t = tanh((double)x);
        worst = ulps((float)t, cpu_tanh(x)) > worst ? ulps((float)t, cpu_tanh(x)) : worst;
        wrel = fmax(wrel, fabs(cpu_tanh(x) - t) / fmax(fabs(t), 1e-30));
    }
    EXPECT(worst <= 8 && wrel < 5e-7, "tanh: %lld ulps, %.3g relative", (long long)worst, wrel);
    EXPECT(cpu_tanh(0.0f) == 0.0f && cpu_tanh(1e-5f) == 1e-5f && cpu_tanh(50.0f) == 1.0f, "tanh edges");
}

/* ---- initialisation ---- */

static void init(void)
{
    const int64_t size[3] = {256, 256, 10};
    model_t m;
    model_layout(&m, 2, size, ACT_TANH);
    float *a = calloc(m.n, 4), *b = calloc(m.n, 4), *c = calloc(m.n, 4);
    model_init(&m, 3, a);
    model_init(&m, 3, b);
    model_init(&m, 4, c);
    EXPECT(!memcmp(a, b, m.n * 4), "the same seed gave other weights");
    EXPECT(memcmp(a, c, m.n * 4), "another seed gave the same weights");
    double bound = 1 / 16.0, s = 0, q = 0;
    int out = 0;
    for (size_t i = 0; i < 256 * 256; i++) {
        double v = a[m.w[0] + i];
        s += v;
        q += v * v;
        out += fabs(v) > bound;
    }
    double mean = s / 65536, var = q / 65536 - mean * mean;
    /* U(-b, b): mean 0 (sd b/sqrt(3 n)), variance b^2/3 */
    EXPECT(out == 0 && fabs(mean) < 5 * bound / sqrt(3 * 65536.0) && fabs(var / (bound * bound / 3) - 1) < 0.02,
           "layer 0 weights: %d out of bounds, mean %g, variance %g of %g", out, mean, var, bound * bound / 3);
    for (int i = 0; i < 10; i++) EXPECT(fabs(a[m.b[1] + i]) <= 1 / 16.0, "bias of layer 1 beyond 1/sqrt(256)");
    EXPECT(memcmp(a + m.w[0], a + m.w[1], 256 * 10 * 4), "layers drew the same numbers");
    free(a);
    free(b);
    free(c);
}

/* ---- optimisers against the rules in double ---- */

static void optimiser(const char *name, double mom, int nesterov, double wd)
{
    const optim_kind_t *kind = optim_find(name);
    enum { N = MODEL_PAD + 40, STEPS = 5 };
    const train_dev_t *dev = train_dev_cpu();
    train_opts_t o;
    memset(&o, 0, sizeof o);
    o.optim = kind;
    o.momentum = mom;
    o.nesterov = nesterov;
    o.beta1 = 0.8;
    o.beta2 = 0.95;
    o.eps = 1e-6;
    o.weight_decay = wd;
    optim_t opt;
    EXPECT(optim_open(&opt, &o, dev, N) == 0, "optim_open");
    float p[N] = {0}, g[N] = {0};
    double pd[N] = {0}, m[N] = {0}, v[N] = {0}, lr = 0.01;
    /* gradients and weights positive and apart from 0: Adam divides by
     * |g| + eps, where a gradient near 0 turns float rounding into O(lr) */
    for (int i = MODEL_PAD; i < N; i++) pd[i] = p[i] = (float)(0.1 * (i % 7) + 0.2);
    double worst = 0;
    for (int t = 1; t <= STEPS; t++) {
        for (int i = MODEL_PAD; i < N; i++) g[i] = (float)(0.01 * ((i * t) % 11) + 0.02);
        optim_step(&opt, dev, p, g, N, lr, t);
        for (int i = MODEL_PAD; i < N; i++) {
            double gi = g[i];
            if (!strcmp(name, "sgd")) {
                double d = gi + wd * pd[i];
                if (mom != 0) {
                    m[i] = mom * m[i] + d;
                    d = nesterov ? d + mom * m[i] : m[i];
                }
                pd[i] -= lr * d;
            } else {
                if (!strcmp(name, "adamw")) pd[i] *= 1 - lr * wd;
                else gi += wd * pd[i];
                m[i] = 0.8 * m[i] + 0.2 * gi;
                v[i] = 0.95 * v[i] + 0.05 * gi * gi;
                double mh = m[i] / (1 - pow(0.8, t)), vh = v[i] / (1 - pow(0.95, t));
                pd[i] -= lr * mh / (sqrt(vh) + 1e-6);
            }
            worst = fmax(worst, fabs(p[i] - pd[i]));
        }
    }
    EXPECT(worst < 2e-6, "optimiser %s (momentum %g, nesterov %d, wd %g): off by %.3g", name, mom, nesterov, wd,
           worst);
    optim_close(&opt, dev);
}

static void clipping(void)
{
    enum { N = MODEL_PAD + 4 };
    train_opts_t o;
    memset(&o, 0, sizeof o);
    o.optim = optim_find("sgd");
    o.clip = 1.0;
    optim_t opt;
    EXPECT(optim_open(&opt, &o, train_dev_cpu(), N) == 0, "optim_open");
    float p[N] = {0}, g[N] = {0};
    g[MODEL_PAD] = 3;
    g[MODEL_PAD + 1] = 4;   /* norm 5: clipped to 1, so p moves by lr * (0.6, 0.8) */
    double norm = optim_step(&opt, train_dev_cpu(), p, g, N, 1.0, 1);
    EXPECT(fabs(norm - 5) < 1e-12 && fabs(p[MODEL_PAD] + 0.6) < 1e-6 && fabs(p[MODEL_PAD + 1] + 0.8) < 1e-6,
           "clip: norm %g, p %g %g", norm, p[MODEL_PAD], p[MODEL_PAD + 1]);
    optim_close(&opt, train_dev_cpu());
}

static void schedules(void)
{
    train_opts_t o;
    memset(&o, 0, sizeof o);
    o.lr = 0.1;
    o.warmup = 4;
    EXPECT(fabs(sched_lr(&o, 0, 100) - 0.025) < 1e-15 && fabs(sched_lr(&o, 3, 100) - 0.1) < 1e-15 &&
               sched_lr(&o, 50, 100) == 0.1, "warm-up then constant");
    o.sched = SCHED_COSINE;
    o.min_lr = 0.01;
    EXPECT(sched_lr(&o, 4, 104) == 0.1, "cosine starts at lr");
    EXPECT(fabs(sched_lr(&o, 54, 104) - 0.055) < 1e-15, "cosine half way: %.17g", sched_lr(&o, 54, 104));
    EXPECT(sched_lr(&o, 103, 104) > 0.01 && sched_lr(&o, 103, 104) < 0.0101, "cosine ends near min-lr");
}

static void layout(void)
{
    const int64_t size[4] = {11, 256, 256, 10};
    model_t m;
    model_layout(&m, 3, size, ACT_TANH);
    EXPECT(m.nparams == 11 * 256 + 256 + 256 * 256 + 256 + 256 * 10 + 10, "nparams %zu", m.nparams);
    size_t end = MODEL_PAD;
    for (int l = 2; l >= 0; l--) {   /* the last layer first, 64-byte aligned, no overlap */
        EXPECT(m.w[l] >= end && m.w[l] % 16 == 0, "layer %d weight at %zu", l, m.w[l]);
        EXPECT(m.b[l] >= m.w[l] + (size_t)(size[l] * size[l + 1]) && m.b[l] % 16 == 0, "layer %d bias", l);
        end = m.b[l] + (size_t)size[l + 1];
    }
    EXPECT(m.n >= end && m.n < end + 16, "n %zu, end %zu", m.n, end);
    /* a stage's layout: layers [1, 3) as they are in the whole one */
    model_t st;
    model_layout_part(&st, 3, size, ACT_TANH, 1, 3, 0, 1);
    EXPECT(st.w[2] == MODEL_PAD && st.n == m.w[0] - m.w[2] + MODEL_PAD, "stage layout: n %zu", st.n);
    for (int l = 1; l < 3; l++)
        EXPECT(st.w[l] - MODEL_PAD == m.w[l] - m.w[2] && st.b[l] - MODEL_PAD == m.b[l] - m.w[2], "stage layer %d", l);
}

/* Sharded layouts: units padded to 16 D floats, the blocks of every
 * array over the D ranks (hold_piece) disjoint, complete, and where the
 * layout says (model_block) */
static void shards(void)
{
    const int64_t size[5] = {11, 37, 300, 5, 3};
    const double caps[3] = {0, 2000, 1e9};
    for (int D = 1; D <= 4; D++)
        for (int c = 0; c < 3; c++) {
            model_t m, plain;
            model_layout_part(&m, 4, size, ACT_TANH, 0, 4, caps[c], D);
            model_layout(&plain, 4, size, ACT_TANH);
            int ok = m.nparams == plain.nparams && (D > 1 || m.n == plain.n);
            size_t at = 0;
            for (int u = 0; u < m.nunits; u++) {
                ok &= m.ulen[u] % (16 * (size_t)D) == 0 && m.uat[u] == at && m.uoff[u] % 16 == 0;
                ok &= m.uhi[u] > m.ulo[u] && (u == 0 || m.ulo[u - 1] == m.uhi[u]);
                at += m.ulen[u] / (size_t)D;
            }
            ok &= at == m.shard_n && m.nunits >= 1 && (caps[c] > 0 || m.nunits == 4);
            EXPECT(ok, "D=%d cap %g: units", D, caps[c]);
            float *buf = calloc(m.shard_n + 1, sizeof *buf);
            for (int l = 0; l < 4; l++)
                for (int k = 0; k < 2; k++) {
                    size_t len = k ? (size_t)size[l + 1] : (size_t)(size[l] * size[l + 1]), got = 0, next = 0;
                    for (int r = 0; r < D; r++) {   /* the runs follow each other in rank order */
                        hold_t h = {&m, buf, 1, r, 1};
                        size_t first, count, blk, blen;
                        float *p = hold_piece(&h, l, k, &first, &count);
                        if (!count) continue;
                        int u = m.unit_of[l];
                        model_block(&m, u, r, &blk, &blen);
                        size_t full = (k ? m.b[l] : m.w[l]) + first;
                        ok &= first == next && full >= blk && full + count <= blk + blen;
                        ok &= (size_t)(p - buf) == m.uat[u] + (full - blk);
                        next = first + count;
                        got += count;
                    }
                    EXPECT(ok && got == len, "D=%d cap %g layer %d %s: the runs cover %zu of %zu", D, caps[c], l,
                           k ? "bias" : "weight", got, len);
                }
            free(buf);
        }
}

int main(void)
{
    for (int a = ACT_TANH; a <= ACT_GELU; a++) {
        gradcheck((act_t)a, LOSS_MSE);
        gradcheck((act_t)a, LOSS_CE);
    }
    tanh_accuracy();
    init();
    optimiser("sgd", 0, 0, 0);
    optimiser("sgd", 0.9, 0, 0.01);
    optimiser("sgd", 0.9, 1, 0);
    optimiser("adam", 0, 0, 0);
    optimiser("adam", 0, 0, 0.1);
    optimiser("adamw", 0, 0, 0.1);
    clipping();
    schedules();
    layout();
    shards();
    if (!test_failures) printf("train_unit: all checks passed\n");
    return test_result();
}
