/* blas.c - the BLAS the program loaded, the kernel it runs, and the
 * kernel this CPU could run (issue 29).
 *
 * OpenBLAS built with DYNAMIC_ARCH (Debian's, most distributions') picks
 * its kernels when it loads, from the CPU's model number.  A model it does
 * not know gets an older kernel: OpenBLAS 0.3.21 runs Prescott (SSE3) on
 * Xeons with AVX-512 that came after it, 3-6x slower in GEMM.  Here the
 * choice is made again from the CPUID flags (what the CPU and the OS
 * support, never the model), and where the kernel OpenBLAS runs uses a
 * narrower vector ISA than the CPU has, the app kit restarts the program
 * with OPENBLAS_CORETYPE set (app/blas_restart.c; the reasons for a
 * restart and not dlopen are in docs/architecture.md).  A user's
 * OPENBLAS_CORETYPE always wins; HPC_BLAS_KERNEL=off turns the choice off.
 *
 * libhpc links no BLAS: it looks up what the program loaded (dlsym), the
 * library that serves cblas_sgemm (OpenBLAS, or BLIS where it is put in
 * front with LD_PRELOAD) named with dladdr.
 */
#include "config.h"
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include "internal.h"

#define RESTARTED "HPC_BLAS_RESTARTED"   /* the guard: OpenBLAS's own choice */

static const struct {
    const char *name;
    unsigned bit;
} flag_names[] = {
    {"sse3", HPC_CPU_SSE3},         {"ssse3", HPC_CPU_SSSE3},       {"sse4_1", HPC_CPU_SSE4_1},
    {"sse4_2", HPC_CPU_SSE4_2},     {"avx", HPC_CPU_AVX},           {"fma", HPC_CPU_FMA},
    {"avx2", HPC_CPU_AVX2},         {"avx512f", HPC_CPU_AVX512F},   {"avx512cd", HPC_CPU_AVX512CD},
    {"avx512bw", HPC_CPU_AVX512BW}, {"avx512dq", HPC_CPU_AVX512DQ}, {"avx512vl", HPC_CPU_AVX512VL},
    {"avx512_bf16", HPC_CPU_AVX512_BF16},
};
enum { NFLAGS = sizeof flag_names / sizeof flag_names[0] };

/* The widest vector ISA a kernel's GEMM uses, in order */
static const char *const tier_name[] = {"x86-64", "SSE3", "SSSE3", "SSE4.1", "SSE4.2", "AVX", "AVX2", "AVX-512"};

/* each ISA with those before it: a kernel uses its predecessors' too */
#define T1 HPC_CPU_SSE3
#define T2 (T1 | HPC_CPU_SSSE3)
#define T3 (T2 | HPC_CPU_SSE4_1)
#define T4 (T3 | HPC_CPU_SSE4_2)
#define T5 (T4 | HPC_CPU_AVX)
#define T6 (T5 | HPC_CPU_AVX2 | HPC_CPU_FMA)
#define T7 (T6 | HPC_CPU_AVX512F | HPC_CPU_AVX512CD | HPC_CPU_AVX512BW | HPC_CPU_AVX512DQ | HPC_CPU_AVX512VL)
/* OpenBLAS's x86-64 kernels (DYNAMIC_ARCH core names, as
 * openblas_get_corename() spells them), the tier of each and the flags
 * it needs.  pick: one per tier that hpckit may choose, known to every
 * OpenBLAS since 0.3.10 and accepted by OPENBLAS_CORETYPE (0.3.21 cannot
 * be forced onto Cooperlake by name: it takes the name for unknown and
 * detects).  The others are known so that a kernel OpenBLAS chose itself
 * can be ranked; a name not here (another architecture, a newer kernel)
 * is left alone. */
static const struct kernel {
    const char *name;
    int tier;
    unsigned needs;
    int pick;
} kernels[] = {
    {"Prescott", 1, T1, 1},
    {"Core2", 2, T2, 1},
    {"Penryn", 3, T3, 1},
    {"Nehalem", 4, T4, 1},
    {"Sandybridge", 5, T5, 1},
    {"Haswell", 6, T6, 1},
    {"SkylakeX", 7, T7, 1},
    {"Generic", 0, 0, 0},
    {"Katmai", 0, 0, 0},
    {"Coppermine", 0, 0, 0},
    {"Northwood", 0, 0, 0},
    {"Banias", 0, 0, 0},
    {"Athlon", 0, 0, 0},
    {"Opteron", 0, 0, 0},
    {"Opteron_SSE3", 1, T1, 0},
    {"Barcelona", 1, T1, 0},
    {"Atom", 2, T2, 0},
    {"Nano", 2, T2, 0},
    {"Bobcat", 2, T2, 0},
    {"Dunnington", 3, T3, 0},
    {"Bulldozer", 5, T5, 0},
    {"Piledriver", 5, T5, 0},
    {"Steamroller", 5, T5, 0},
    {"Excavator", 5, T5, 0},
    {"Zen", 6, T6, 0},
    {"Cooperlake", 7, T7 | HPC_CPU_AVX512_BF16, 0},
    {"SapphireRapids", 7, T7 | HPC_CPU_AVX512_BF16, 0},
};
enum { NKERNELS = sizeof kernels / sizeof kernels[0] };

static const struct kernel *kernel_named(const char *name)
{
    for (int i = 0; name && i < NKERNELS; i++)
        if (!strcasecmp(name, kernels[i].name)) return &kernels[i];
    return NULL;
}

/* the pickable kernel of the highest tier whose flags the CPU has */
static const struct kernel *best_for(unsigned flags)
{
    const struct kernel *best = NULL;
    for (int i = 0; i < NKERNELS; i++)
        if (kernels[i].pick && (kernels[i].needs & ~flags) == 0 && (!best || kernels[i].tier > best->tier))
            best = &kernels[i];
    return best;
}

const char *hpc_blas_kernel_for(unsigned flags)
{
    const struct kernel *b = best_for(flags);
    return b ? b->name : NULL;
}

const char *hpc_blas_pick(unsigned flags, const char *current)
{
    const struct kernel *now = kernel_named(current), *best = best_for(flags);
    if (!now || !best || best->tier <= now->tier) return NULL;
    return best->name;
}

int hpc_blas_tier(const char *kernel)
{
    const struct kernel *k = kernel_named(kernel);
    return k ? k->tier : -1;
}

int hpc_cpu_flags_parse(const char *names, unsigned *flags)
{
    unsigned f = 0;
    for (const char *p = names; p && *p;) {
        size_t n = strcspn(p, " ,");
        int found = !n;
        for (int i = 0; i < NFLAGS && !found; i++)
            if (strlen(flag_names[i].name) == n && !strncmp(p, flag_names[i].name, n)) f |= flag_names[i].bit, found = 1;
        if (!found) return HPC_ERR(HPC_ERR_ARG, "'%.*s' is not a CPU flag hpckit knows", (int)n, p);
        p += n + (p[n] != '\0');
    }
    *flags = f;
    return 0;
}

#if defined(__x86_64__) || defined(__i386__)
/* What the CPU has and the OS saves: AVX needs the YMM state enabled in
 * XCR0, AVX-512 the opmask and ZMM states as well (a kernel that leaves
 * them off makes every AVX-512 instruction fault). */
static unsigned cpu_flags_now(void)
{
    unsigned a, b, c, d, f = 0, max = __get_cpuid_max(0, NULL);
    if (max < 1 || !__get_cpuid(1, &a, &b, &c, &d)) return 0;
    unsigned long long xcr0 = 0;
    if (c & bit_OSXSAVE) {
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        xcr0 = (unsigned long long)hi << 32 | lo;
    }
    int ymm = (xcr0 & 0x6) == 0x6, zmm = ymm && (xcr0 & 0xe0) == 0xe0;
    if (c & bit_SSE3) f |= HPC_CPU_SSE3;
    if (c & bit_SSSE3) f |= HPC_CPU_SSSE3;
    if (c & bit_SSE4_1) f |= HPC_CPU_SSE4_1;
    if (c & bit_SSE4_2) f |= HPC_CPU_SSE4_2;
    if (ymm && (c & bit_AVX)) f |= HPC_CPU_AVX;
    if (ymm && (c & bit_FMA)) f |= HPC_CPU_FMA;
    if (max < 7) return f;
    unsigned sub = 0;
    __cpuid_count(7, 0, sub, b, c, d);
    if (ymm && (b & bit_AVX2)) f |= HPC_CPU_AVX2;
    if (zmm && (b & bit_AVX512F)) f |= HPC_CPU_AVX512F;
    if (zmm && (b & bit_AVX512CD)) f |= HPC_CPU_AVX512CD;
    if (zmm && (b & bit_AVX512BW)) f |= HPC_CPU_AVX512BW;
    if (zmm && (b & bit_AVX512DQ)) f |= HPC_CPU_AVX512DQ;
    if (zmm && (b & bit_AVX512VL)) f |= HPC_CPU_AVX512VL;
    if (sub >= 1) {
        __cpuid_count(7, 1, a, b, c, d);
        if (zmm && (a & (1u << 5))) f |= HPC_CPU_AVX512_BF16;
    }
    return f;
}

static void cpu_brand(char *out, size_t len)
{
    unsigned r[12];
    out[0] = '\0';
    if (__get_cpuid_max(0x80000000, NULL) < 0x80000004) return;
    for (unsigned i = 0; i < 3; i++) __get_cpuid(0x80000002 + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
    char s[49];
    memcpy(s, r, 48);
    s[48] = '\0';
    char *p = s, *e = s + strlen(s);
    while (*p == ' ') p++;
    while (e > p && e[-1] == ' ') *--e = '\0';
    snprintf(out, len, "%s", p);
}
#else
static unsigned cpu_flags_now(void)
{
    return 0;   /* no x86 kernels to choose from: OpenBLAS's choice stands */
}

static void cpu_brand(char *out, size_t len)
{
    snprintf(out, len, "not x86-64");
}
#endif

unsigned hpc_cpu_flags(void)
{
    static int done;
    static unsigned f;
    if (!done) f = cpu_flags_now(), done = 1;
    return f;
}

/* ------------------------------------------------------------------ */
/* The BLAS in this process                                            */
/* ------------------------------------------------------------------ */
typedef enum { FROM_LIBRARY, FROM_HPCKIT, FROM_USER, FROM_OFF, FROM_FAILED } origin_t;

static struct {
    origin_t origin;
    char own[48];      /* OpenBLAS's own choice, where hpckit restarted */
    char asked[48];    /* what hpckit asked OpenBLAS for */
    char was[48];      /* OPENBLAS_CORETYPE before (the test hook's) */
    char why[160];     /* a failed restart */
} blas_choice;

/* the library serving name, opened without loading anything */
static void *provider(const char *name, char *path, size_t len)
{
    void *f = dlsym(RTLD_DEFAULT, name);
    Dl_info info;
    if (!f || !dladdr(f, &info) || !info.dli_fname) return NULL;
    if (path) snprintf(path, len, "%s", info.dli_fname);
    return dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
}

static const char *openblas_core(void)
{
    char *(*core)(void) = (char *(*)(void))dlsym(RTLD_DEFAULT, "openblas_get_corename");
    return core ? core() : NULL;
}

static struct {
    int done;
    char library[64], kernel[48], path[256];
} found;

static void probe(void)
{
    if (found.done) return;
    found.done = 1;
    void *h = provider("cblas_sgemm", found.path, sizeof found.path);
    if (!h) return;
    char *(*config)(void) = (char *(*)(void))dlsym(h, "openblas_get_config");
    char *(*core)(void) = (char *(*)(void))dlsym(h, "openblas_get_corename");
    const char *(*bver)(void) = (const char *(*)(void))dlsym(h, "bli_info_get_version_str");
    int (*barch)(void) = (int (*)(void))dlsym(h, "bli_arch_query_id");
    const char *(*bname)(int) = (const char *(*)(int))dlsym(h, "bli_arch_string");
    void (*binit)(void) = (void (*)(void))dlsym(h, "bli_init");
    if (config && core) {
        char ver[32] = "";
        sscanf(config(), "OpenBLAS %31s", ver);
        snprintf(found.library, sizeof found.library, "OpenBLAS %s", ver);
        snprintf(found.kernel, sizeof found.kernel, "%s", core());
    } else if (bver && barch && bname) {
        if (binit) binit();   /* BLIS_ARCH_TYPE is checked against what init registers */
        snprintf(found.library, sizeof found.library, "BLIS %s", bver());
        snprintf(found.kernel, sizeof found.kernel, "%s", bname(barch()));
    } else {
        const char *base = strrchr(found.path, '/');
        snprintf(found.library, sizeof found.library, "%.63s", base ? base + 1 : found.path);
        snprintf(found.kernel, sizeof found.kernel, "unknown");
    }
    dlclose(h);
}

const char *hpc_blas_library(void)
{
    probe();
    return found.library;
}

const char *hpc_blas_kernel(void)
{
    probe();
    return found.kernel;
}

static int is_openblas(void)
{
    return !strncmp(hpc_blas_library(), "OpenBLAS", 8);
}

/* The test hook HPC_BLAS_TEST_OWN=1 takes OPENBLAS_CORETYPE for OpenBLAS's
 * own choice (not the user's): the restart runs on any machine. */
static const char *user_coretype(void)
{
    const char *t = getenv("OPENBLAS_CORETYPE");
    const char *own = getenv("HPC_BLAS_TEST_OWN");
    if (own && !strcmp(own, "1")) return NULL;
    return t && *t ? t : NULL;
}

int hpc_blas_restart_wanted(void)
{
    const char *guard = getenv(RESTARTED);
    if (guard) {
        /* the restarted copy: note what happened, give the user back the
         * environment as it was (children see no hpckit variable) */
        const char *asked = getenv("OPENBLAS_CORETYPE");
        blas_choice.origin = FROM_HPCKIT;
        snprintf(blas_choice.own, sizeof blas_choice.own, "%s", guard);
        snprintf(blas_choice.asked, sizeof blas_choice.asked, "%s", asked ? asked : "");
        unsetenv(RESTARTED);
        unsetenv("OPENBLAS_CORETYPE");
        return 0;
    }
    const char *core = openblas_core();
    if (!core) return 0;     /* no OpenBLAS in this program */
    if (user_coretype()) {
        blas_choice.origin = FROM_USER;
        return 0;
    }
    const char *pick = hpc_blas_pick(hpc_cpu_flags(), core);
    if (!pick) return 0;
    if (!strcmp(hpc_setting_value("HPC_BLAS_KERNEL", NULL), "off")) {
        blas_choice.origin = FROM_OFF;
        return 0;
    }
    const char *was = getenv("OPENBLAS_CORETYPE");   /* set only under the test hook */
    snprintf(blas_choice.was, sizeof blas_choice.was, "%s", was ? was : "");
    snprintf(blas_choice.asked, sizeof blas_choice.asked, "%s", pick);
    if (setenv(RESTARTED, core, 1) || setenv("OPENBLAS_CORETYPE", pick, 1)) {
        hpc_blas_restart_failed(strerror(errno));
        return 0;
    }
    return 1;
}

void hpc_blas_restart_failed(const char *why)
{
    blas_choice.origin = FROM_FAILED;
    snprintf(blas_choice.why, sizeof blas_choice.why, "restarting with OPENBLAS_CORETYPE=%s failed: %s",
             blas_choice.asked, why);
    unsetenv(RESTARTED);
    if (*blas_choice.was) setenv("OPENBLAS_CORETYPE", blas_choice.was, 1);
    else unsetenv("OPENBLAS_CORETYPE");
}

const char *hpc_blas_describe(void)
{
    static char line[512];
    probe();
    if (!*found.library) return "none loaded";
    const char *who = "";
    char buf[256] = "";
    if (is_openblas()) {
        switch (blas_choice.origin) {
        case FROM_LIBRARY: who = " (OpenBLAS's choice)"; break;
        case FROM_USER:
            snprintf(buf, sizeof buf, " (OPENBLAS_CORETYPE=%s)", getenv("OPENBLAS_CORETYPE"));
            who = buf;
            break;
        case FROM_OFF: who = " (OpenBLAS's choice; HPC_BLAS_KERNEL=off)"; break;
        case FROM_FAILED:
            snprintf(buf, sizeof buf, " (OpenBLAS's choice; %s)", blas_choice.why);
            who = buf;
            break;
        case FROM_HPCKIT:
            if (strcasecmp(blas_choice.asked, found.kernel))
                snprintf(buf, sizeof buf, " (hpckit asked for %s, which this OpenBLAS does not take; its own "
                         "choice was %s)", blas_choice.asked, blas_choice.own);
            else
                snprintf(buf, sizeof buf, " (hpckit's choice for this CPU; OpenBLAS chose %s)", blas_choice.own);
            who = buf;
            break;
        }
    }
    snprintf(line, sizeof line, "%s, kernel %s%s (%s)", found.library, found.kernel, who, found.path);
    return line;
}

const char *hpc_cpu_describe(void)
{
    static char line[512];
    char brand[64];
    cpu_brand(brand, sizeof brand);
    unsigned f = hpc_cpu_flags();
    size_t n = (size_t)snprintf(line, sizeof line, "%s:", *brand ? brand : "unknown");
    for (int i = 0; i < NFLAGS && n < sizeof line; i++)
        if (f & flag_names[i].bit) n += (size_t)snprintf(line + n, sizeof line - n, " %s", flag_names[i].name);
    const struct kernel *b = best_for(f);
    if (n < sizeof line)
        snprintf(line + n, sizeof line - n, "%s%s%s", b ? " (OpenBLAS kernel for them: " : "", b ? b->name : "",
                 b ? ")" : "");
    return line;
}

const char *hpc_blas_advice(void)
{
    static char line[512];
    probe();
    const struct kernel *now = kernel_named(found.kernel), *best = best_for(hpc_cpu_flags());
    if (!is_openblas() || !now || !best || best->tier <= now->tier) return NULL;
    const char *fix;
    char buf[256];
    switch (blas_choice.origin) {
    case FROM_USER:
        snprintf(buf, sizeof buf, "OPENBLAS_CORETYPE=%s is set: unset it (hpckit's programs then choose %s) or set "
                 "OPENBLAS_CORETYPE=%s", getenv("OPENBLAS_CORETYPE"), best->name, best->name);
        fix = buf;
        break;
    case FROM_OFF:
        snprintf(buf, sizeof buf, "HPC_BLAS_KERNEL=off is set: unset it (hpckit's programs then choose %s)",
                 best->name);
        fix = buf;
        break;
    default:
        snprintf(buf, sizeof buf, "set OPENBLAS_CORETYPE=%s", best->name);
        fix = buf;
        break;
    }
    snprintf(line, sizeof line, "OpenBLAS runs its %s kernels (%s) on a CPU with %s: %s", now->name,
             tier_name[now->tier], tier_name[best->tier], fix);
    return line;
}
