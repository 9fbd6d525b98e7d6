/* optim.c - the optimisers: one row of the table each, from which the
 * --optim choices, the checkpoint's names and the dispatch come.  A row
 * says which options the optimiser takes, which state arrays it keeps
 * (torch.optim's names: the checkpoint's /optim/<name>), the constants of
 * a step as PyTorch 1.13 computes them in Python floats, its element rule
 * (opt_kernels.h, shared with the GPU) and its weight prediction
 * (optim_predict.c).  Adding one: its rule in opt_kernels.h, a row here.
 * Adding a hyperparameter: its option (options.c, into train_opts_t), its
 * name in the rows that take it, a row of hyperparams below if some
 * optimiser does not, its copy in optim_t and its use in the constants
 * and the rule.
 *
 * Before the step, clip_grad_norm_: the global norm of the gradient, and
 * if C / (norm + 1e-6) < 1 every gradient times that.  The state lives in
 * flat buffers with the layout of the parameters it updates, or of their
 * shards (model.c), on the device.
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "train.h"

/* ---- the rules as CPU loops ---- */

/* A copy of the constants (the loop must not reload them through a
 * pointer that a float store might alias), and the stateless case apart,
 * so that each loop vectorises. */
#define CPU_LOOP(name)                                                                                          \
    TRAIN_HOT void cpu_opt_##name(size_t n, float *p, const float *g, float *s0, float *s1,                   \
                                  const opt_step_t *hp)                                                      \
    {                                                                                                         \
        const opt_step_t h = *hp;                                                                             \
        if (!s0) {                                                                                            \
            for (size_t i = 0; i < n; i++) opt_##name##_elem(i, p, g, NULL, NULL, h);                         \
            return;                                                                                           \
        }                                                                                                     \
        for (size_t i = 0; i < n; i++) opt_##name##_elem(i, p, g, s0, s1, h);                                 \
    }
OPT_KERNELS(CPU_LOOP)

/* ---- the rows ---- */

static int sgd_states(const train_opts_t *o)
{
    return o->momentum != 0;
}

static int adam_states(const train_opts_t *o)
{
    (void)o;
    return 2;
}

static void sgd_constants(const optim_t *o, double lr, int64_t t, opt_step_t *h)
{
    (void)t;
    h->lr = (float)lr;
    h->momentum = (float)o->momentum;
    h->weight_decay = (float)o->wd;
    h->nesterov = o->nesterov;
}

/* the bias corrections in double, as Python's floats */
static void adam_common(const optim_t *o, double lr, int64_t t, opt_step_t *h)
{
    h->beta1 = (float)o->beta1;
    h->beta2 = (float)o->beta2;
    h->eps = (float)o->eps;
    h->c1 = (float)(1 - o->beta1);
    h->c2 = (float)(1 - o->beta2);
    h->step_size = (float)(lr / (1 - pow(o->beta1, (double)t)));
    h->bc2_sqrt = (float)sqrt(1 - pow(o->beta2, (double)t));
}

static void adam_constants(const optim_t *o, double lr, int64_t t, opt_step_t *h)
{
    adam_common(o, lr, t, h);
    h->l2 = (float)o->wd;
    h->decay = 1.0f;
}

static void adamw_constants(const optim_t *o, double lr, int64_t t, opt_step_t *h)
{
    adam_common(o, lr, t, h);
    h->l2 = 0.0f;
    h->decay = (float)(1 - lr * o->wd);
}

const optim_kind_t optim_kinds[] = {
    {"sgd", OPT_K_sgd, 0.0, "momentum nesterov weight-decay", sgd_states, {"momentum_buffer"}, sgd_constants,
     wp_predict_sgd_row},
    {"adam", OPT_K_adam, 0.0, "betas eps weight-decay", adam_states, {"exp_avg", "exp_avg_sq"}, adam_constants,
     wp_predict_adam_row},
    {"adamw", OPT_K_adam, 0.01, "betas eps weight-decay", adam_states, {"exp_avg", "exp_avg_sq"},
     adamw_constants, wp_predict_adamw_row},
    {NULL, 0, 0, NULL, NULL, {NULL}, NULL, NULL}};

const optim_kind_t *optim_find(const char *name)
{
    for (const optim_kind_t *k = optim_kinds; k->name; k++)
        if (!strcmp(k->name, name)) return k;
    return NULL;
}

/* ---- the hyperparameters some optimiser does not take ---- */

static int momentum_given(const train_opts_t *o)
{
    return o->momentum != 0 || o->nesterov;   /* --momentum 0 changes nothing */
}

static int betas_given(const train_opts_t *o)
{
    return o->betas_given;
}

/* given: set to something that would change the training.  Not here,
 * so never refused: --weight-decay (every row takes it) and --eps, which
 * SGD has always ignored (refusing it would break command lines that
 * worked). */
static const struct {
    const char *name;        /* in a row's takes */
    const char *says;        /* the refusal's subject */
    int (*given)(const train_opts_t *o);
} hyperparams[] = {
    {"momentum", "--momentum and --nesterov are", momentum_given},
    {"betas", "--betas is", betas_given},
};

/* name is a word of the row's takes */
static int takes(const optim_kind_t *k, const char *name)
{
    size_t n = strlen(name);
    for (const char *s = k->takes; (s = strstr(s, name)); s += n)
        if ((s == k->takes || s[-1] == ' ') && (s[n] == ' ' || s[n] == 0)) return 1;
    return 0;
}

int optim_check(const train_opts_t *o)
{
    for (size_t i = 0; i < sizeof hyperparams / sizeof *hyperparams; i++)
        if (hyperparams[i].given(o) && !takes(o->optim, hyperparams[i].name))
            return HPC_ERR(HPC_ERR_ARG, "%s not for --optim %s", hyperparams[i].says, o->optim->name);
    return 0;
}

/* ---- using them ---- */

int optim_open(optim_t *o, const train_opts_t *opts, const train_dev_t *dev, size_t n)
{
    memset(o, 0, sizeof *o);
    o->kind = opts->optim;
    o->n = n;
    o->lr0 = opts->lr;
    o->momentum = opts->momentum;
    o->nesterov = opts->nesterov;
    o->beta1 = opts->beta1;
    o->beta2 = opts->beta2;
    o->eps = opts->eps;
    o->wd = opts->weight_decay;
    o->clip = opts->clip;
    o->nstates = o->kind->nstates(opts);
    for (int k = 0; k < o->nstates; k++)
        if (!(o->state[k] = dev->alloc(n * sizeof(float)))) return -1;
    return 0;
}

void optim_close(optim_t *o, const train_dev_t *dev)
{
    for (int k = 0; k < o->nstates; k++)
        if (o->state[k]) dev->release(o->state[k]);
    memset(o, 0, sizeof *o);
}

double optim_step(const optim_t *o, const train_dev_t *dev, float *p, float *g, size_t n, double lr, int64_t t)
{
    double norm = optim_clip(o, dev, g, MODEL_PAD, n, MPI_COMM_NULL, MPI_COMM_NULL);
    optim_update(o, dev, n - MODEL_PAD, p + MODEL_PAD, g + MODEL_PAD, MODEL_PAD, lr, t);
    return norm;
}

double optim_clip(const optim_t *o, const train_dev_t *dev, float *g, size_t lo, size_t hi, MPI_Comm parts,
                  MPI_Comm parts2)
{
    /* the norm costs a pass over the gradient: only for clipping */
    if (o->clip <= 0) return NAN;
    double sum = dev->sumsq(hi - lo, g + lo), all = sum;
    if (parts != MPI_COMM_NULL) MPI_Allreduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, parts);
    sum = all;
    if (parts2 != MPI_COMM_NULL) MPI_Allreduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, parts2);
    double norm = sqrt(all);
    /* as clip_grad_norm_: the coefficient in float, clamped to 1 */
    float coef = (float)(o->clip / (norm + 1e-6));
    if (coef < 1.0f) dev->scale(hi - lo, g + lo, coef);
    return norm;
}

void optim_update(const optim_t *o, const train_dev_t *dev, size_t n, float *p, const float *g, size_t s_at,
                  double lr, int64_t t)
{
    opt_step_t h;
    memset(&h, 0, sizeof h);
    o->kind->constants(o, lr, t, &h);
    float *s[OPT_MAXSTATES] = {NULL};
    for (int k = 0; k < o->nstates; k++) s[k] = o->state[k] + s_at;
    dev->opt[o->kind->kernel](n, p, g, s[0], s[1], &h);
}
