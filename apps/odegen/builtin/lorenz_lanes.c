/* lorenz_lanes.c - the built-in system lorenz (data/systems/lorenz.c), its
 * explicit engines: the file compiled into hpc-odegen exactly as
 * --system-file compiles it at run time (sys_lanes.h). */
#define ODE_SYS lorenz
#define ODE_SYS_FILE "lorenz.c"
#include "sys_lanes.h"
