/* test_dl - hpc_dlsyms: a library's functions resolved at run time (libm's
 * cos and sin, called and checked), a missing symbol and a missing library
 * refused with a reason and the output untouched, and a library refused
 * for a missing symbol not left loaded (issue 23.9: it leaked its handle);
 * hpc_dlmodule and the module folder (HPC_MODULE_DIR, else beside
 * libhpc-core). */
#include "config.h"
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
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
    /* a library nothing here loads (one of glibc's own), refused for a
     * missing symbol: closed again, not kept */
    static const char *const none[] = {"no_such_function_here"};
    const char *lib = "libBrokenLocale.so.1";
    if (dlopen(lib, RTLD_NOW | RTLD_NOLOAD)) {
        printf("note: %s is loaded already: the leak check cannot see anything\n", lib);
    } else {
        void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            dlclose(h);
            EXPECT(hpc_dlsyms(lib, none, keep, 1, why, sizeof why) == -1, "%s has no_such_function_here?", lib);
            EXPECT(dlopen(lib, RTLD_NOW | RTLD_NOLOAD) == NULL, "%s stays loaded after a refused hpc_dlsyms", lib);
        } else {
            printf("note: no %s here: the leak check is skipped\n", lib);
        }
    }
    /* modules: from HPC_MODULE_DIR; a missing one named with the loader's words */
    char dir[1024];
    setenv("HPC_MODULE_DIR", "/nonexistent/hpckit", 1);
    EXPECT(hpc_dl_module_dir(dir, sizeof dir) == 0 && !strcmp(dir, "/nonexistent/hpckit"), "HPC_MODULE_DIR: %s", dir);
    EXPECT(hpc_dlmodule("hpc-nothing-cuda", two, keep, 2, why, sizeof why) == -1 &&
               strstr(why, "/nonexistent/hpckit/hpc-nothing-cuda.so"), "a missing module: %s", why);
    /* a module that is a FIFO (once: dlopen blocked for ever in open) or
     * a folder: refused at once, naming what it is */
    char tmp[] = "/tmp/test_dl.XXXXXX", fifo[64];
    EXPECT(mkdtemp(tmp) != NULL, "mkdtemp");
    snprintf(fifo, sizeof fifo, "%s/hpc-fifo-cuda.so", tmp);
    EXPECT(mkfifo(fifo, 0600) == 0, "mkfifo %s", fifo);
    setenv("HPC_MODULE_DIR", tmp, 1);
    alarm(30);   /* a hang fails the test instead of blocking it */
    EXPECT(hpc_dlmodule("hpc-fifo-cuda", two, keep, 2, why, sizeof why) == -1 && strstr(why, "not a regular file (a FIFO)"),
           "a FIFO as a module: %s", why);
    alarm(0);
    unlink(fifo);
    EXPECT(mkdir(fifo, 0700) == 0, "mkdir %s", fifo);
    EXPECT(hpc_dlmodule("hpc-fifo-cuda", two, keep, 2, why, sizeof why) == -1 && strstr(why, "not a regular file (a folder)"),
           "a folder as a module: %s", why);
    rmdir(fifo);
    rmdir(tmp);
    unsetenv("HPC_MODULE_DIR");
    EXPECT(hpc_dl_module_dir(dir, sizeof dir) == 0 && strstr(dir, "/hpckit"), "beside libhpc-core: %s", dir);
    return test_result();
}
