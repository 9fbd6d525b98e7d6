/* pmpi_check.h - what the plain MPI test programs of the drop-in
 * (pmpi_known.c, pmpi_conform.c, pmpi_probe.c) share: no hpckit header,
 * MPI and libc only.  CHECK(cond, fmt, ...) counts a failure in nerr and
 * says the first 20, naming this world rank (wrank, set by the program)
 * and the line. */
#ifndef PMPI_CHECK_H
#define PMPI_CHECK_H
#include <stdio.h>

static int wrank, nerr;

#define CHECK(cond, ...)                                                            \
    do {                                                                            \
        if (!(cond) && nerr++ < 20) {                                               \
            fprintf(stderr, "rank %d: %s:%d: ", wrank, __FILE__, __LINE__);         \
            fprintf(stderr, __VA_ARGS__);                                           \
            fputc('\n', stderr);                                                    \
        }                                                                           \
    } while (0)

#endif
