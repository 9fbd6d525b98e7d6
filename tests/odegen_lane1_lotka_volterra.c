/* odegen_lane1_lotka_volterra.c - lotka-volterra's engine as the GPU runs it (odegen_lane1.h). */
#define ODE_SYS_FILE "lotka-volterra.c"
#define ODE_LANE1_NAME ode_lane1_lotka_volterra
#include "odegen_lane1.h"
