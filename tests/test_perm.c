/* test_perm - hpc_perm_at (hpc_rng.h): a bijection of [0, n) for every n
 * (small ones exhaustively, a large one through a bitmap), different for
 * another stream or seed, reproducible, and without a visible bias: over
 * many streams every element lands in every position about equally often,
 * and about one element in n stays in place (as for a uniform shuffle). */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "hpc.h"
#include "testlib.h"

static int is_bijection(uint64_t seed, uint64_t stream, uint64_t n)
{
    uint8_t *seen = calloc(n, 1);
    hpc_perm_t p;
    hpc_perm_init(&p, seed, stream, n);
    int ok = seen != NULL;
    for (uint64_t i = 0; ok && i < n; i++) {
        uint64_t x = hpc_perm_at(&p, i);
        ok = x < n && !seen[x];
        if (ok) seen[x] = 1;
    }
    free(seen);
    return ok;
}

static void bijections(void)
{
    for (uint64_t n = 1; n <= 600; n++)
        EXPECT(is_bijection(7, n, n), "n = %llu is not a bijection", (unsigned long long)n);
    const uint64_t big[] = {1000003, 1 << 20, (1 << 20) + 1, 3 << 19};
    for (size_t k = 0; k < sizeof big / sizeof big[0]; k++)
        EXPECT(is_bijection(123, k, big[k]), "n = %llu is not a bijection", (unsigned long long)big[k]);
    /* the largest sizes: stays in range */
    hpc_perm_t p;
    hpc_perm_init(&p, 1, 2, UINT64_MAX);
    for (uint64_t i = 0; i < 1000; i++) EXPECT(hpc_perm_at(&p, UINT64_MAX - 1 - i) < UINT64_MAX, "range");
}

static void keyed(void)
{
    const uint64_t n = 1000;
    hpc_perm_t a, b, c, a2;
    hpc_perm_init(&a, 5, 0, n);
    hpc_perm_init(&b, 5, 1, n);
    hpc_perm_init(&c, 6, 0, n);
    hpc_perm_init(&a2, 5, 0, n);
    int same_b = 0, same_c = 0, repro = 1;
    for (uint64_t i = 0; i < n; i++) {
        same_b += hpc_perm_at(&a, i) == hpc_perm_at(&b, i);
        same_c += hpc_perm_at(&a, i) == hpc_perm_at(&c, i);
        repro &= hpc_perm_at(&a, i) == hpc_perm_at(&a2, i);
    }
    EXPECT(repro, "the same key gave another permutation");
    /* two independent shuffles agree in about one place */
    EXPECT(same_b < 10 && same_c < 10, "streams too alike: %d, %d equal positions", same_b, same_c);
}

/* n elements, many streams: every (element, position) pair about equally
 * often (4 rounds were not enough for 2-bit halves: 10 sd off at n = 10) */
static void unbiased(int n)
{
    enum { STREAMS = 20000 };
    int *count = calloc((size_t)n * n, sizeof *count);
    double fixed = 0, worst = 0, p = 1.0 / n;
    for (int s = 0; s < STREAMS; s++) {
        hpc_perm_t perm;
        hpc_perm_init(&perm, 99, (uint64_t)s, (uint64_t)n);
        for (int i = 0; i < n; i++) {
            int x = (int)hpc_perm_at(&perm, (uint64_t)i);
            count[i * n + x]++;
            fixed += x == i;
        }
    }
    /* each cell ~ Binomial(STREAMS, 1/n); the largest of n^2 cells stays
     * well inside 5 sd for an unbiased shuffle */
    for (int c = 0; c < n * n; c++) {
        double z = fabs(count[c] - STREAMS * p) / sqrt(STREAMS * p * (1 - p));
        if (z > worst) worst = z;
    }
    EXPECT(worst < 5, "n = %d: position counts off by %.1f standard deviations", n, worst);
    EXPECT(fabs(fixed / STREAMS - 1.0) < 0.1, "n = %d: %.3f fixed points per shuffle, expected 1", n,
           fixed / STREAMS);
    free(count);
}

int main(void)
{
    bijections();
    keyed();
    unbiased(5);
    unbiased(10);
    unbiased(40);
    if (!test_failures) printf("test_perm: all checks passed\n");
    return test_result();
}
