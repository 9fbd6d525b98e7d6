/* testlib.h - tiny assertion helpers shared by the C tests.
 * EXPECT records a failure with file:line and carries on, so one run
 * reports every wrong value; tests end with return test_result(). */
#ifndef HPC_TESTLIB_H
#define HPC_TESTLIB_H
#include <stdio.h>

static int test_failures;

#define EXPECT(cond, ...)                                                   \
    do {                                                                    \
        if (!(cond)) {                                                      \
            test_failures++;                                                \
            fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
        }                                                                   \
    } while (0)

static inline int test_result(void)
{
    if (test_failures) fprintf(stderr, "%d check(s) failed\n", test_failures);
    return test_failures ? 1 : 0;
}
#endif
