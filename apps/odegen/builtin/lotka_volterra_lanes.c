/* lotka_volterra_lanes.c - the built-in system lotka-volterra (data/systems/lotka-volterra.c), its
 * explicit engines: the file compiled into hpc-odegen exactly as
 * --system-file compiles it at run time (sys_lanes.h). */
#define ODE_SYS lotka_volterra
#define ODE_SYS_FILE "lotka-volterra.c"
#include "sys_lanes.h"
