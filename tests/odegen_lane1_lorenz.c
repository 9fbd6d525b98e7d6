/* odegen_lane1_lorenz.c - lorenz's engine as the GPU runs it (odegen_lane1.h). */
#define ODE_SYS_FILE "lorenz.c"
#define ODE_LANE1_NAME ode_lane1_lorenz
#include "odegen_lane1.h"
