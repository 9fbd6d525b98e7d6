/* test_blas_pick - the OpenBLAS kernel hpckit restarts a program with
 * (libhpc/blas.c), on planted CPUID flag sets: the CPUs of the issue
 * (a Xeon with AVX-512 that OpenBLAS 0.3.21 runs on Prescott, a Zen 5
 * forced onto Haswell), CPUs without AVX-512, half of AVX-512, no x86; and
 * over every one of the 2^13 flag sets, that the kernel chosen never needs
 * an instruction the CPU lacks (what each kernel needs is this test's own
 * table, from OpenBLAS's kernel sources, not blas.c's).  Then this CPU's
 * flags against the kernel's own view of them, /proc/cpuinfo. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "hpc_testing.h"
#include "testlib.h"

static unsigned flags(const char *names)
{
    unsigned f = 0;
    int rc = hpc_cpu_flags_parse(names, &f);
    EXPECT(rc == 0, "'%s': %s", names, hpc_last_error());
    return f;
}

static void expect_pick(const char *cpu, const char *names, const char *current, const char *want)
{
    const char *got = hpc_blas_pick(flags(names), current);
    EXPECT(got ? want && !strcmp(got, want) : !want, "%s running %s: hpckit picks %s, want %s", cpu, current,
           got ? got : "nothing", want ? want : "nothing");
}

#define SSE "sse3 ssse3 sse4_1 sse4_2"
#define AVX2 SSE " avx fma avx2"
#define AVX512 AVX2 " avx512f avx512cd avx512bw avx512dq avx512vl"

/* the instructions OpenBLAS's GEMM kernels of each core execute */
static const struct {
    const char *kernel, *needs;
} needs[] = {
    {"Prescott", "sse3"},   {"Core2", "sse3 ssse3"},     {"Penryn", "sse3 ssse3 sse4_1"},
    {"Nehalem", SSE},       {"Sandybridge", SSE " avx"}, {"Haswell", AVX2},
    {"SkylakeX", AVX512},
};

static void every_flag_set(void)
{
    int wrong = 0, chosen = 0;
    for (unsigned f = 0; f < (1u << 13); f++) {
        const char *k = hpc_blas_pick(f, "Prescott");
        if (!k) continue;
        chosen++;
        int known = 0;
        for (size_t i = 0; i < sizeof needs / sizeof needs[0]; i++) {
            if (strcmp(needs[i].kernel, k)) continue;
            known = 1;
            unsigned n = flags(needs[i].needs);
            if (n & ~f) wrong++;
        }
        if (!known) wrong++;
    }
    EXPECT(wrong == 0, "%d flag sets get a kernel that needs what they lack (or one this test does not know)",
           wrong);
    EXPECT(chosen > 0, "no flag set gets any kernel");
}

/* this CPU's flags (CPUID and XCR0) against the kernel's (/proc/cpuinfo,
 * which shows only what the kernel enabled) */
static void this_cpu(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[8192];
    unsigned want = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5)) continue;
        const char *names[] = {"pni", "ssse3", "sse4_1", "sse4_2", "avx", "fma", "avx2", "avx512f", "avx512cd",
                               "avx512bw", "avx512dq", "avx512vl", "avx512_bf16"};
        for (int i = 0; i < 13; i++) {
            char pat[32];
            snprintf(pat, sizeof pat, " %s ", names[i]);
            line[strcspn(line, "\n")] = ' ';
            if (strstr(line, pat)) want |= 1u << i;
        }
        break;
    }
    fclose(f);
    EXPECT(hpc_cpu_flags() == want, "CPUID says %#x, /proc/cpuinfo %#x", hpc_cpu_flags(), want);
    printf("test_blas_pick: this CPU's flags %#x, hpckit's kernel for it: %s\n", want,
           hpc_blas_kernel_for(want) ? hpc_blas_kernel_for(want) : "none");
}

int main(void)
{
    /* a Xeon with AVX-512, AMX and BF16 that OpenBLAS 0.3.21 does not know */
    expect_pick("Sapphire Rapids", AVX512 " avx512_bf16", "Prescott", "SkylakeX");
    /* this project's Zen 5 with OPENBLAS_CORETYPE=Haswell (its own: Cooperlake) */
    expect_pick("Zen 5", AVX512 " avx512_bf16", "Haswell", "SkylakeX");
    expect_pick("Zen 5", AVX512 " avx512_bf16", "Cooperlake", NULL);
    expect_pick("Zen 5", AVX512 " avx512_bf16", "cooperlake", NULL);
    expect_pick("Skylake-SP", AVX512, "SkylakeX", NULL);
    expect_pick("Skylake-SP", AVX512, "skylakex", NULL);
    /* AVX2, no AVX-512: Haswell's kernels, and Zen's are as wide */
    expect_pick("Zen 2", AVX2, "Prescott", "Haswell");
    expect_pick("Zen 2", AVX2, "Sandybridge", "Haswell");
    expect_pick("Zen 2", AVX2, "Zen", NULL);
    expect_pick("Zen 2", AVX2, "Haswell", NULL);
    /* AVX-512F and CD only (Knights Landing): not SkylakeX, which needs BW, DQ, VL */
    expect_pick("Knights Landing", AVX2 " avx512f avx512cd", "Prescott", "Haswell");
    /* AVX2 without FMA (a VM that hides it): Haswell's kernels need FMA */
    expect_pick("no FMA", SSE " avx avx2", "Prescott", "Sandybridge");
    /* AVX-512 the OS does not save (no ZMM state): blas.c clears the flags, so
     * the set here has none */
    expect_pick("AVX-512 off in XCR0", AVX2, "Haswell", NULL);
    expect_pick("Westmere", SSE, "Prescott", "Nehalem");
    expect_pick("Core 2", "sse3 ssse3", "Prescott", "Core2");
    expect_pick("Core 2", "sse3 ssse3", "Atom", NULL);
    /* a kernel wider than the CPU (the user forced it): not hpckit's business */
    expect_pick("Westmere", SSE, "SkylakeX", NULL);
    /* not x86, or a kernel hpckit does not know: left alone */
    expect_pick("aarch64", "", "NEOVERSEN1", NULL);
    expect_pick("newer OpenBLAS", AVX512, "SapphireRapids2", NULL);
    expect_pick("no flags", "", "Prescott", NULL);
    EXPECT(hpc_blas_tier("Cooperlake") == hpc_blas_tier("SkylakeX"), "Cooperlake and SkylakeX are both AVX-512");
    EXPECT(hpc_blas_tier("Zen") == hpc_blas_tier("Haswell"), "Zen and Haswell are both AVX2");
    EXPECT(hpc_blas_tier("neoversen1") == -1, "an ARM kernel has a tier");
    unsigned f = 0;
    EXPECT(hpc_cpu_flags_parse("avx2 avx513", &f) == HPC_ERR_ARG, "an unknown flag is taken");
    every_flag_set();
#if defined(__x86_64__)
    this_cpu();
#endif
    return test_failures ? 1 : 0;
}
