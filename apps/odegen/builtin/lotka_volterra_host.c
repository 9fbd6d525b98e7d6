/* lotka_volterra_host.c - the built-in system lotka-volterra (data/systems/lotka-volterra.c), its
 * description and hooks (sys_host.h). */
#define ODE_SYS lotka_volterra
#define ODE_SYS_FILE "lotka-volterra.c"
#include "sys_host.h"
