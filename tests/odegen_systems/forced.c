/* forced.c - a test system for tests/odegen_sysfile.sh: a damped
 * oscillator, stiffer on one side (hpc_where), driven by a decaying sum
 * of cosines whose amplitudes are a vector parameter; the velocity
 * starts from the x0 hook's own draw.  tests/odegen_ref.py has its twin. */
#define HPC_ODE_PARAMS(X) X(zeta, 0.1) X(w0, 2.0)
#define HPC_ODE_VECTORS(V) V(amp, 3)
#include <hpc_ode.h>

HPC_ODE_RHS(t, x, dxdt, p)
{
    hpc_real force = hpc_const(0.0);
    for (int k = 0; k < 3; k++)
        force += p->amp[k] * hpc_cos((k + 1.0) * t);
    hpc_real spring = hpc_where(x[0] > 0, x[0], 1.5 * x[0]);
    dxdt[0] = x[1];
    dxdt[1] = -2 * p->zeta * p->w0 * x[1] - p->w0 * p->w0 * spring + force * hpc_exp(-0.1 * t);
}

static void start(double *x, const hpc_ode_params *p, hpc_ode_rng *rng)
{
    (void)p;
    x[1] = 0.5 * hpc_ode_normal(rng);
}

HPC_ODE_SYSTEM(.name = "test-forced", .dim = 2, .x0 = start,
               .about = "a damped oscillator driven by a decaying sum of cosines (a test)");
