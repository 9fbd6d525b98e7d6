/* vanderpol_lanes.c - the built-in system vanderpol (data/systems/vanderpol.c), its
 * explicit engines: the file compiled into hpc-odegen exactly as
 * --system-file compiles it at run time (sys_lanes.h). */
#define ODE_SYS vanderpol
#define ODE_SYS_FILE "vanderpol.c"
#include "sys_lanes.h"
