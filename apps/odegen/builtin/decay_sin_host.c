/* decay_sin_host.c - the built-in system decay-sin (data/systems/decay-sin.c), its
 * description and hooks (sys_host.h). */
#define ODE_SYS decay_sin
#define ODE_SYS_FILE "decay-sin.c"
#include "sys_host.h"
