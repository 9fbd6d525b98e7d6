/* odegen_lane1_vanderpol.c - vanderpol's engine as the GPU runs it (odegen_lane1.h). */
#define ODE_SYS_FILE "vanderpol.c"
#define ODE_LANE1_NAME ode_lane1_vanderpol
#include "odegen_lane1.h"
