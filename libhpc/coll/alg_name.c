/* alg_name.c - an algorithm's name: its enum constant in lower case, as
 * the registry's rows write it (registry.h).
 *
 * Apart from registry.c because everything that reports an algorithm
 * (requests, the stall check) needs its name, and registry.c's rows point
 * at every builder: a name taken from registry.c made a loop registry ->
 * shm's builder -> request -> registry.  Here the rows are read only for
 * their names (the macro's text), so this file needs nothing of the
 * collectives.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

#include <pthread.h>
#include <stdio.h>

/* ---- names: the enum constant of a row, in lower case --------------- */
static char names[HPC_ALG_COUNT][24];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void lower(char *d, const char *s)
{
    size_t k = 0;
    for (; *s && k < sizeof names[0] - 1; s++) d[k++] = (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
    d[k] = 0;
}

static void names_init(void)
{
    for (int k = 0; k < HPC_ALG_COUNT; k++) snprintf(names[k], sizeof names[k], "?");
    snprintf(names[HPC_ALG_AUTO], sizeof names[0], "auto");   /* not an algorithm: no row */
#define NAME(C_, A_, FN_, MEM_, BE_, COST_) lower(names[HPC_ALG_##A_], #A_);
    COLL_REGISTRY(NAME)
#undef NAME
}

const char *hpc_alg_name(hpc_alg_t a)
{
    pthread_once(&names_once, names_init);
    return (unsigned)a < HPC_ALG_COUNT ? names[a] : "?";
}
