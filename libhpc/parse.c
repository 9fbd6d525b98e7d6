/* parse.c - strict parsing of numbers from the command line and the
 * environment: the whole string, no overflow, one clear error; no blank
 * before or after, no sign where the type has none (a size); and the
 * reverse, a command line joined back into one string (the HDF5
 * provenance and the app kit record it). */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

int hpc_parse_int64(const char *s, int64_t *out)
{
    if (!s || !*s) return HPC_ERR(HPC_ERR_ARG, "empty number");
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno == ERANGE || isspace((unsigned char)*s))
        return HPC_ERR(HPC_ERR_ARG, "'%s' is not an integer%s", s,
                       errno == ERANGE ? " in range" : "");
    *out = (int64_t)v;
    return 0;
}

int hpc_parse_double(const char *s, int allow_inf, double *out)
{
    if (!s || !*s) return HPC_ERR(HPC_ERR_ARG, "empty number");
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* ERANGE on underflow (1e-310) still gives the right subnormal or 0 */
    int overflow = errno == ERANGE && fabs(v) > 1.0;
    if (*end || isspace((unsigned char)*s) || isnan(v) || overflow ||
        (isinf(v) && !allow_inf))
        return HPC_ERR(HPC_ERR_ARG, "'%s' is not a finite number", s);
    *out = v;
    return 0;
}

int hpc_parse_size(const char *s, size_t *out)
{
    /* a digit first: strtoull would skip blanks and take a sign, so that
     * " -5" read as 2^64 - 5 */
    if (!s || !isdigit((unsigned char)*s)) return HPC_ERR(HPC_ERR_ARG, "'%s' is not a size", s ? s : "");
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


int hpc_parse_int64s(const char *s, const char *seps, int64_t *out, int n)
{
    if (!s || !seps || n < 1) return HPC_ERR(HPC_ERR_ARG, "empty list");
    int64_t v[16];
    if (n > 16) return HPC_ERR(HPC_ERR_ARG, "more than 16 numbers asked for");
    char buf[256];
    const char *p = s;
    for (int i = 0; i < n; i++) {
        size_t k = i + 1 < n ? strcspn(p, seps) : strlen(p);
        if (k >= sizeof buf || (i + 1 < n && !p[k]))
            return HPC_ERR(HPC_ERR_ARG, "'%s' is not %d integers separated by '%s'", s, n, seps);
        memcpy(buf, p, k);
        buf[k] = '\0';
        if (hpc_parse_int64(buf, &v[i]) < 0)
            return HPC_ERR(HPC_ERR_ARG, "'%s' is not %d integers separated by '%s'", s, n, seps);
        p += k + (i + 1 < n);
    }
    memcpy(out, v, (size_t)n * sizeof *out);
    return 0;
}

char *hpc_cmdline(int argc, char **argv)
{
    size_t len = 1;
    for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
    char *s = malloc(len), *p = s;
    if (!s) return NULL;
    *s = '\0';
    for (int i = 0; i < argc; i++) {
        size_t n = strlen(argv[i]);
        memcpy(p, argv[i], n);
        p += n;
        *p++ = i + 1 < argc ? ' ' : '\0';
    }
    return s;
}

/* (here, below the app kit: the settings table quotes values with it) */
const char *hpc_escape(const char *s, char *buf, size_t len)
{
    size_t k = 0;
    if (!len) return buf;
    for (; s && *s && k + 5 < len; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\n') k += (size_t)snprintf(buf + k, len - k, "\\n");
        else if (c == '\t') k += (size_t)snprintf(buf + k, len - k, "\\t");
        else if (c < 0x20 || c == 0x7f) k += (size_t)snprintf(buf + k, len - k, "\\x%02x", c);
        else buf[k++] = (char)c;
    }
    buf[k] = '\0';
    return buf;
}

size_t hpc_edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b), d[64];
    if (n >= 63 || m >= 63) return SIZE_MAX;
    for (size_t j = 0; j <= m; j++) d[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t prev = d[0];   /* d[i-1][j-1] */
        d[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t cur = d[j], sub = prev + (a[i - 1] != b[j - 1]);
            d[j] = (d[j] < d[j - 1] ? d[j] : d[j - 1]) + 1;
            if (sub < d[j]) d[j] = sub;
            prev = cur;
        }
    }
    return d[m];
}
