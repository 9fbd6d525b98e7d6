/* test_dl - hpc_dlsyms: a library's functions resolved at run time (libm's
 * cos and sin, called and checked), a missing symbol and a missing library
 * refused with a reason and the output untouched. */
#include "config.h"
#include <math.h>
#include <string.h>
#include "hpc_dl.h"
#include "testlib.h"

int main(void)
{
    static const char *const two[] = {"cos", "sin"}, *const bad[] = {"cos", "no_such_function_here"};
    void *fns[2] = {NULL, NULL};
    char why[256] = "";
    EXPECT(hpc_dlsyms("libm.so.6", two, fns, 2, why, sizeof why) == 0, "libm: %s", why);
    double (*c)(double) = (double (*)(double))fns[0], (*s)(double) = (double (*)(double))fns[1];
    EXPECT(c && s && c(0.5) == cos(0.5) && s(0.5) == sin(0.5), "the resolved functions are not cos and sin");
    void *keep[2] = {&keep, &keep};
    EXPECT(hpc_dlsyms("libm.so.6", bad, keep, 2, why, sizeof why) == -1 && strstr(why, "no_such_function_here"),
           "missing symbol: %s", why);
    EXPECT(keep[0] == &keep && keep[1] == &keep, "output written on failure");
    EXPECT(hpc_dlsyms("libno-such-library.so.7", two, keep, 2, why, sizeof why) == -1 && why[0],
           "missing library accepted");
    return test_result();
}
