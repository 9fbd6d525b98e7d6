/* gpu_policy.c - HPC_GPU_BIND's form: none | local | exclusive |
 * list:I,J,... read into a policy (gpu.c applies it).
 *
 * Apart from gpu.c because the settings table checks the form with it
 * (settings.c), and gpu.c logs, opens the GPU module and so reaches
 * log.c, which reads its level through settings.c: the parser in gpu.c
 * made a loop settings.c -> gpu.c -> log.c -> settings.c.  Pure: it needs
 * only the strict parsers and the error record.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "internal.h"

static int parse_list(const char *s, hpc_gpu_policy_t *p)
{
    p->nlist = 0;
    while (*s) {
        /* a device index: digits only, no blank, no sign */
        size_t w = strcspn(s, ",");
        const char *end = s + w;
        char num[8];
        int64_t v = -1;
        if (w > 0 && w < sizeof num && strspn(s, "0123456789") >= w) {
            memcpy(num, s, w);
            num[w] = '\0';
            if (hpc_parse_int64(num, &v) < 0) v = -1;
        }
        if (v < 0 || v > 1023) {
            hpc_error_clear();
            return HPC_ERR(HPC_ERR_ARG, "HPC_GPU_BIND list: bad device '%s'", s);
        }
        if (p->nlist == HPC_GPU_LIST_MAX)
            return HPC_ERR(HPC_ERR_ARG, "HPC_GPU_BIND list: more than %d devices", HPC_GPU_LIST_MAX);
        p->list[p->nlist++] = (int)v;
        s = *end ? end + 1 : end;
        if (*end && !*s) return HPC_ERR(HPC_ERR_ARG, "HPC_GPU_BIND list ends with ','");
    }
    if (p->nlist == 0) return HPC_ERR(HPC_ERR_ARG, "HPC_GPU_BIND list: no devices after 'list:'");
    return 0;
}

int hpc_gpu_policy_parse(const char *s, hpc_gpu_policy_t *out)
{
    hpc_gpu_policy_t p;
    memset(&p, 0, sizeof p);
    p.mode = HPC_GPU_BIND_LOCAL;
    if (!s || !*s || !strcmp(s, "local")) {
    } else if (!strcmp(s, "none")) {
        p.mode = HPC_GPU_BIND_NONE;
    } else if (!strcmp(s, "exclusive")) {
        p.mode = HPC_GPU_BIND_EXCLUSIVE;
    } else if (!strncmp(s, "list:", 5)) {
        p.mode = HPC_GPU_BIND_LIST;
        HPC_TRY(parse_list(s + 5, &p));
    } else {
        return HPC_ERR(HPC_ERR_ARG, "HPC_GPU_BIND='%s': expected none, local, exclusive or list:I,J,...", s);
    }
    *out = p;
    return 0;
}

/* the settings table's check (HPC_GPU_SETTINGS): its cause is the form */
int hpc_gpu_policy_check(const char *v)
{
    hpc_gpu_policy_t p;
    if (hpc_gpu_policy_parse(v, &p) == 0) return 0;
    return HPC_ERR(HPC_ERR_ARG, "expected none, local, exclusive or list:I,J,...");
}
