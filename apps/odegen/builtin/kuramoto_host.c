/* kuramoto_host.c - the built-in system kuramoto (data/systems/kuramoto.c), its
 * description and hooks (sys_host.h). */
#define ODE_SYS kuramoto
#define ODE_SYS_FILE "kuramoto.c"
#include "sys_host.h"
