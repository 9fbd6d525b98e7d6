/* kuramoto.c - N coupled phase oscillators, their natural frequencies
 * omega_i drawn once per run from N(omega_mean, omega_std) (or given:
 * --param omega=@FILE with N numbers). */
#define HPC_ODE_PARAMS(X) X(K, 1.0) X(omega_mean, 0.0) X(omega_std, 1.0)
#define HPC_ODE_VECTORS(V) V(omega, dim)
#include <hpc_ode.h>

HPC_ODE_RHS(t, x, dxdt, p)
{
    const double kn = p->K / p->dim;
    for (int i = 0; i < p->dim; i++) {
        hpc_real acc = hpc_const(0.0);
        for (int j = 0; j < p->dim; j++)
            acc += hpc_sin(x[j] - x[i]);
        dxdt[i] = p->omega[i] + kn * acc;
    }
}

/* omega from the run's own stream of the seed, unless given */
static void setup(hpc_ode_params *p, hpc_ode_rng *rng)
{
    if (isnan(p->omega[0]))
        for (int i = 0; i < p->dim; i++)
            p->omega[i] = p->omega_mean + p->omega_std * hpc_ode_normal(rng);
}

HPC_ODE_SYSTEM(.name = "kuramoto", .dim = 10, .dim_min = 2, .dim_max = 4096, .setup = setup,
               .about = "theta_i' = omega_i + K/N sum_j sin(theta_j - theta_i), omega_i ~ N from the seed");
