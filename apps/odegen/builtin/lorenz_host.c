/* lorenz_host.c - the built-in system lorenz (data/systems/lorenz.c), its
 * description and hooks (sys_host.h). */
#define ODE_SYS lorenz
#define ODE_SYS_FILE "lorenz.c"
#include "sys_host.h"
