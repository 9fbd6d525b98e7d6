/* vanderpol_host.c - the built-in system vanderpol (data/systems/vanderpol.c), its
 * description and hooks (sys_host.h). */
#define ODE_SYS vanderpol
#define ODE_SYS_FILE "vanderpol.c"
#include "sys_host.h"
