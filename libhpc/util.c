/* util.c - strict parsing of command-line numbers, and the command line. */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

int hpc_parse_long(const char *s, long *out)
{
    if (!s || !*s) return HPC_ERR(HPC_ERR_ARG, "empty number");
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno == ERANGE || isspace((unsigned char)*s))
        return HPC_ERR(HPC_ERR_ARG, "'%s' is not an integer", s);
    *out = v;
    return 0;
}

int hpc_parse_double(const char *s, double *out)
{
    if (!s || !*s) return HPC_ERR(HPC_ERR_ARG, "empty number");
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno == ERANGE || !isfinite(v) || isspace((unsigned char)*s))
        return HPC_ERR(HPC_ERR_ARG, "'%s' is not a finite number", s);
    *out = v;
    return 0;
}

int hpc_parse_size(const char *s, size_t *out)
{
    if (!s || !*s || *s == '-') return HPC_ERR(HPC_ERR_ARG, "'%s' is not a size", s ? s : "");
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno == ERANGE) return HPC_ERR(HPC_ERR_ARG, "'%s' is not a size", s);
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b') end++;
    if (*end || (shift && v > (~0ULL >> shift)))
        return HPC_ERR(HPC_ERR_ARG, "'%s' is not a size (use e.g. 64, 8K, 16M, 1G)", s);
    *out = (size_t)(v << shift);
    return 0;
}

char *hpc_cmdline(int argc, char **argv)
{
    size_t len = 1;
    for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
    char *s = malloc(len), *p = s;
    if (!s) return NULL;
    *p = '\0';
    for (int i = 0; i < argc; i++) {
        size_t n = strlen(argv[i]);
        memcpy(p, argv[i], n);
        p += n;
        *p++ = i + 1 < argc ? ' ' : '\0';
    }
    if (argc == 0) *s = '\0';
    return s;
}
