/* odegen_lane1_kuramoto.c - kuramoto's engine as the GPU runs it (odegen_lane1.h). */
#define ODE_SYS_FILE "kuramoto.c"
#define ODE_LANE1_NAME ode_lane1_kuramoto
#include "odegen_lane1.h"
