/* test_err - error codes, messages that travel up the stack with
 * file:line, MPI error translation, and strict number parsing. */
#include "config.h"
#include <string.h>
#include "hpc.h"
#include "testlib.h"

static int inner(void)
{
    return HPC_ERR(HPC_ERR_DATA, "value %d is bad", 42);
}

static int outer(void)
{
    HPC_TRY(inner());
    return 0;
}

static int mpi_fails(void)
{
    int r;
    HPC_MPI(MPI_Comm_rank(MPI_COMM_NULL, &r));
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    /* every code has its own description */
    for (int c = 0; c >= HPC_ERR_BLAS; c--)
        for (int d = c - 1; d >= HPC_ERR_BLAS; d--)
            EXPECT(strcmp(hpc_strerror(c), hpc_strerror(d)) != 0, "codes %d and %d share a text", c, d);
    EXPECT(!strcmp(hpc_strerror(HPC_ERR_MPI), "MPI error"), "%s", hpc_strerror(HPC_ERR_MPI));
    EXPECT(!strcmp(hpc_strerror(-999), "unknown error"), "out of range");

    /* the cause, where it happened, and every frame on the way up */
    EXPECT(outer() == HPC_ERR_DATA, "code lost");
    const char *m = hpc_last_error();
    EXPECT(strstr(m, "rank 0: inner: value 42 is bad (test_err.c:") == m, "message: %s", m);
    EXPECT(strstr(m, "\n  from test_err.c:") && strstr(m, "(outer)"), "frame missing: %s", m);
    hpc_error_clear();
    EXPECT(hpc_last_error()[0] == '\0', "clear");

    /* MPI's own message, translated */
    EXPECT(mpi_fails() == HPC_ERR_MPI, "MPI error not translated");
    EXPECT(strstr(hpc_last_error(), "MPI_Comm_rank(MPI_COMM_NULL, &r)") != NULL, "call named: %s",
           hpc_last_error());

    /* strict parsing */
    long l;
    double d;
    size_t s;
    EXPECT(hpc_parse_long("123", &l) == 0 && l == 123, "long");
    EXPECT(hpc_parse_long("-7", &l) == 0 && l == -7, "negative long");
    EXPECT(hpc_parse_long("12x", &l) == HPC_ERR_ARG, "trailing junk");
    EXPECT(hpc_parse_long("", &l) == HPC_ERR_ARG, "empty");
    EXPECT(hpc_parse_long("99999999999999999999", &l) == HPC_ERR_ARG, "overflow");
    EXPECT(hpc_parse_double("1e-3", &d) == 0 && d == 1e-3, "double");
    EXPECT(hpc_parse_double("nan", &d) == HPC_ERR_ARG, "nan accepted");
    EXPECT(hpc_parse_double("inf", &d) == HPC_ERR_ARG, "inf accepted");
    EXPECT(hpc_parse_double(" 1", &d) == HPC_ERR_ARG, "leading space");
    EXPECT(hpc_parse_size("8M", &s) == 0 && s == 8u << 20, "8M");
    EXPECT(hpc_parse_size("64", &s) == 0 && s == 64, "64");
    EXPECT(hpc_parse_size("1GB", &s) == 0 && s == 1u << 30, "1GB");
    EXPECT(hpc_parse_size("-1", &s) == HPC_ERR_ARG, "negative size");
    EXPECT(hpc_parse_size("3Q", &s) == HPC_ERR_ARG, "bad suffix");
    char *cmd = hpc_cmdline(3, (char *[]){"prog", "-n", "4"});
    EXPECT(cmd && !strcmp(cmd, "prog -n 4"), "cmdline '%s'", cmd);
    free(cmd);
    double v[] = {5, 1, 4, 2, 3};
    EXPECT(hpc_median(v, 5) == 3, "median odd");
    double w[] = {4, 1, 3, 2};
    EXPECT(hpc_median(w, 4) == 2.5, "median even");
    MPI_Finalize();
    return test_result();
}
