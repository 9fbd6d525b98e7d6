/* kuramoto_lanes.c - the built-in system kuramoto (data/systems/kuramoto.c), its
 * explicit engines: the file compiled into hpc-odegen exactly as
 * --system-file compiles it at run time (sys_lanes.h). */
#define ODE_SYS kuramoto
#define ODE_SYS_FILE "kuramoto.c"
#include "sys_lanes.h"
