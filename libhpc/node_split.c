/* node_split.c - HPC_NODE_SPLIT's form: odd-even | blocks:K | none read
 * into a split (node.c applies it; its header says what each does).
 *
 * Apart from node.c because the settings table checks the form with it
 * (settings.c), which is below node.c: pure, it needs only the strict
 * parsers and the error record.
 */
#include "config.h"
#include <ctype.h>
#include <string.h>
#include "internal.h"

int hpc_node_split_parse(const char *s, hpc_node_split_t *out)
{
    hpc_node_split_t r = {HPC_NODE_SPLIT_NONE, 0};
    if (s && *s) {
        if (!strcmp(s, "odd-even") || !strcmp(s, "odd_even")) {
            r.mode = HPC_NODE_SPLIT_ODD_EVEN;
        } else if (!strncmp(s, "blocks:", 7)) {
            int64_t k = 0;
            int bad = hpc_parse_int64(s + 7, &k) < 0 || !isdigit((unsigned char)s[7]);
            if (bad) hpc_error_clear();
            if (bad || k < 1 || k > 1 << 24)
                return HPC_ERR(HPC_ERR_ARG, "HPC_NODE_SPLIT='%s': blocks:K needs K, ranks per node, >= 1", s);
            r.mode = HPC_NODE_SPLIT_BLOCKS;
            r.k = (int)k;
        } else if (strcmp(s, "none") != 0) {
            return HPC_ERR(HPC_ERR_ARG, "HPC_NODE_SPLIT='%s': expected odd-even, blocks:K or none", s);
        }
    }
    *out = r;
    return 0;
}

/* the settings table's check (HPC_NODE_SETTINGS): its cause is the form */
int hpc_node_split_check(const char *v)
{
    hpc_node_split_t sp;
    if (hpc_node_split_parse(v, &sp) == 0) return 0;
    return HPC_ERR(HPC_ERR_ARG, "expected odd-even, blocks:K (K ranks per node) or none");
}
