/* decay_sin_lanes.c - the built-in system decay-sin (data/systems/decay-sin.c), its
 * explicit engines: the file compiled into hpc-odegen exactly as
 * --system-file compiles it at run time (sys_lanes.h). */
#define ODE_SYS decay_sin
#define ODE_SYS_FILE "decay-sin.c"
#include "sys_lanes.h"
