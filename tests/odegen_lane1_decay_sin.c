/* odegen_lane1_decay_sin.c - decay-sin's engine as the GPU runs it (odegen_lane1.h). */
#define ODE_SYS_FILE "decay-sin.c"
#define ODE_LANE1_NAME ode_lane1_decay_sin
#include "odegen_lane1.h"
