/* test_err - error codes, messages that travel up the stack with
 * file:line (HPC_TRY, and HPC_TRY_GOTO's one cleanup path), MPI error
 * translation, strict number parsing, and the error module as a leaf:
 * stale launcher variables cannot send it back into launcher parsing
 * (that recursion once crashed every program). */
#include "config.h"
#include <string.h>
#include <stdlib.h>
#include "hpc_app.h"
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

/* HPC_TRY_GOTO / HPC_ERR_GOTO: a failure below runs the cleanup once
 * and passes the code up unchanged, a frame a level */
static int cleanups, middle_line, top_line;

static int leaf_io(void)
{
    return HPC_ERR(HPC_ERR_IO, "disk %s is full", "/scratch");
}

static int middle(int how)     /* 0: leaf fails, 1: fails here, 2: works */
{
    int rc = 0;
    char *buf = malloc(16);
    if (!buf) HPC_ERR_GOTO(rc, out, HPC_ERR_NOMEM, "16 bytes");
    if (how == 1) HPC_ERR_GOTO(rc, out, HPC_ERR_DATA, "row %d is short", 3);
    if (how == 0) {
        middle_line = __LINE__ + 1;
        HPC_TRY_GOTO(leaf_io(), rc, out);
    }
    rc = 7;
out:
    cleanups++;
    free(buf);
    return rc;
}

static int top(int how)
{
    int rc = 0;
    top_line = __LINE__ + 1;
    HPC_TRY_GOTO(middle(how), rc, done);
    rc = 8;
done:
    cleanups += 10;
    return rc;
}

static void try_goto(void)
{
    char want[256];
    cleanups = 0;
    EXPECT(top(0) == HPC_ERR_IO, "code changed on the way up");
    EXPECT(cleanups == 11, "cleanups ran %d (want 1 + 10)", cleanups);
    EXPECT(!strcmp(hpc_last_cause(), "disk /scratch is full"), "cause: '%s'", hpc_last_cause());
    const char *m = hpc_last_error();
    EXPECT(strstr(m, "rank 0: leaf_io: disk /scratch is full (test_err.c:") == m, "message: %s", m);
    snprintf(want, sizeof want, "\n  from test_err.c:%d (middle)\n  from test_err.c:%d (top)", middle_line,
             top_line);
    EXPECT(strstr(m, want) != NULL, "frames '%s' missing: %s", want, m);

    cleanups = 0;
    EXPECT(top(1) == HPC_ERR_DATA && cleanups == 11, "HPC_ERR_GOTO: cleanups %d", cleanups);
    EXPECT(!strcmp(hpc_last_cause(), "row 3 is short"), "cause: '%s'", hpc_last_cause());
    snprintf(want, sizeof want, "from test_err.c:%d (top)", top_line);
    EXPECT(strstr(hpc_last_error(), "rank 0: middle: row 3 is short") == hpc_last_error() &&
               strstr(hpc_last_error(), want), "HPC_ERR_GOTO frames: %s", hpc_last_error());

    cleanups = 0;
    EXPECT(top(2) == 8 && cleanups == 11, "success path: cleanups %d", cleanups);

    /* a cause wrapping the one before it (the record is its own argument) */
    EXPECT(leaf_io() == HPC_ERR_IO, "leaf");
    EXPECT(HPC_ERR(HPC_ERR_ARG, "--resume: %s", hpc_last_cause()) == HPC_ERR_ARG &&
               !strcmp(hpc_last_cause(), "--resume: disk /scratch is full"),
           "wrapped cause: '%s'", hpc_last_cause());
    hpc_error_clear();
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

    try_goto();

    /* MPI's own message, translated */
    EXPECT(mpi_fails() == HPC_ERR_MPI, "MPI error not translated");
    EXPECT(strstr(hpc_last_error(), "MPI_Comm_rank(MPI_COMM_NULL, &r)") != NULL, "call named: %s",
           hpc_last_error());

    /* strict parsing */
    int64_t l, two[2] = {-5, -5};
    double d;
    size_t s;
    EXPECT(hpc_parse_int64("123", &l) == 0 && l == 123, "int64");
    EXPECT(hpc_parse_int64("-7", &l) == 0 && l == -7, "negative int64");
    EXPECT(hpc_parse_int64("9223372036854775807", &l) == 0 && l == INT64_MAX, "INT64_MAX");
    EXPECT(hpc_parse_int64("12x", &l) == HPC_ERR_ARG, "trailing junk");
    EXPECT(hpc_parse_int64("", &l) == HPC_ERR_ARG, "empty");
    EXPECT(hpc_parse_int64("1e12", &l) == HPC_ERR_ARG, "1e12 is not an integer");
    EXPECT(hpc_parse_int64("99999999999999999999", &l) == HPC_ERR_ARG, "overflow");
    EXPECT(hpc_parse_double("1e-3", 0, &d) == 0 && d == 1e-3, "double");
    EXPECT(hpc_parse_double("1e-310", 0, &d) == 0 && d > 0 && d < 1e-300, "subnormal refused");
    EXPECT(hpc_parse_double("1e-400", 0, &d) == 0 && d == 0, "underflow to 0 refused");
    EXPECT(hpc_parse_double("1e400", 1, &d) == HPC_ERR_ARG, "overflow accepted");
    EXPECT(hpc_parse_double("nan", 1, &d) == HPC_ERR_ARG, "nan accepted");
    EXPECT(hpc_parse_double("inf", 0, &d) == HPC_ERR_ARG, "inf accepted");
    EXPECT(hpc_parse_double("inf", 1, &d) == 0 && d > 1e308, "inf refused where allowed");
    EXPECT(hpc_parse_double(" 1", 0, &d) == HPC_ERR_ARG, "leading space");
    EXPECT(hpc_parse_size("8M", &s) == 0 && s == 8u << 20, "8M");
    EXPECT(hpc_parse_size("64", &s) == 0 && s == 64, "64");
    EXPECT(hpc_parse_size("1GB", &s) == 0 && s == 1u << 30, "1GB");
    EXPECT(hpc_parse_size("-1", &s) == HPC_ERR_ARG, "negative size");
    EXPECT(hpc_parse_size("3Q", &s) == HPC_ERR_ARG, "bad suffix");
    /* blanks, signs where the type has none, empty strings: refused by
     * every parser (once: ' -5' was a size of 2^64 - 5, strtoull skips
     * blanks and negates) */
    static const char *const blanks[] = {" 5", "5 ", "\t5", "5\n", " ", "", " -5", "- 5", "5 K"};
    for (size_t i = 0; i < sizeof blanks / sizeof blanks[0]; i++) {
        char two_s[32];
        snprintf(two_s, sizeof two_s, "%s:1", blanks[i]);
        EXPECT(hpc_parse_int64(blanks[i], &l) == HPC_ERR_ARG, "int64 '%s' accepted", blanks[i]);
        EXPECT(hpc_parse_double(blanks[i], 1, &d) == HPC_ERR_ARG, "double '%s' accepted", blanks[i]);
        EXPECT(hpc_parse_size(blanks[i], &s) == HPC_ERR_ARG, "size '%s' accepted", blanks[i]);
        EXPECT(hpc_parse_int64s(two_s, ":", two, 2) == HPC_ERR_ARG, "int64s '%s' accepted", two_s);
    }
    static const char *const signed_size[] = {"-5", "+5", " -5", "\t-1K", "-0", "+0", "5-", "5+"};
    for (size_t i = 0; i < sizeof signed_size / sizeof signed_size[0]; i++)
        EXPECT(hpc_parse_size(signed_size[i], &s) == HPC_ERR_ARG, "size '%s' accepted", signed_size[i]);
    EXPECT(hpc_parse_size(NULL, &s) == HPC_ERR_ARG && hpc_parse_int64(NULL, &l) == HPC_ERR_ARG &&
               hpc_parse_double(NULL, 0, &d) == HPC_ERR_ARG, "NULL accepted");
    EXPECT(hpc_parse_int64s("3:250", ":,", two, 2) == 0 && two[0] == 3 && two[1] == 250, "3:250");
    EXPECT(hpc_parse_int64s("4/-16", "/", two, 2) == 0 && two[0] == 4 && two[1] == -16, "4/-16");
    two[0] = two[1] = 7;
    EXPECT(hpc_parse_int64s("3:", ":", two, 2) == HPC_ERR_ARG, "3: (second missing)");
    EXPECT(hpc_parse_int64s("3:4:5", ":", two, 2) == HPC_ERR_ARG, "3:4:5 (one too many)");
    EXPECT(hpc_parse_int64s("3:4x", ":", two, 2) == HPC_ERR_ARG, "3:4x (trailing junk)");
    EXPECT(hpc_parse_int64s("3", ":", two, 2) == HPC_ERR_ARG, "3 (no separator)");
    EXPECT(hpc_parse_int64s("3;4", ":", two, 2) == HPC_ERR_ARG, "3;4 (another separator)");
    EXPECT(two[0] == 7 && two[1] == 7, "output written on failure");
    EXPECT(hpc_parse_int64s("12", ":", two, 1) == 0 && two[0] == 12, "one number");
    hpc_error_clear();

    /* the cause alone, for one-line messages */
    EXPECT(outer() == HPC_ERR_DATA && !strcmp(hpc_last_cause(), "value 42 is bad"), "cause: '%s'",
           hpc_last_cause());
    /* a leaf: with contradicting launcher variables, raising errors
     * neither recurses nor changes the rank in the message */
    setenv("RANK", "1", 1);
    setenv("WORLD_SIZE", "1", 1);
    setenv("SLURM_PROCID", "4", 1);
    setenv("SLURM_NTASKS", "2", 1);
    EXPECT(outer() == HPC_ERR_DATA && strstr(hpc_last_error(), "rank 0: inner:") == hpc_last_error(),
           "with stale launcher variables: %s", hpc_last_error());
    unsetenv("RANK");
    unsetenv("WORLD_SIZE");
    unsetenv("SLURM_PROCID");
    unsetenv("SLURM_NTASKS");
    char esc[64];
    EXPECT(!strcmp(hpc_escape("a\nb\tc\x01", esc, sizeof esc), "a\\nb\\tc\\x01"), "escape: %s", esc);
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
