/* call_check.c - the desync check (HPC_DEBUG=coll): before a collective every
 * rank shares what it is about to call; a mismatch - the hang every DDP
 * user knows - becomes one line naming each distinct call and the ranks
 * that made it, and a failed job.
 */
#include "config.h"
#include "hpc.h"
#include "coll_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
    uint64_t seq, count;
    int32_t coll, alg, dt, op, root, pad;
} sig_t;

static int sig_eq(const sig_t *a, const sig_t *b)
{
    return a->seq == b->seq && a->count == b->count && a->coll == b->coll && a->alg == b->alg &&
           a->dt == b->dt && a->op == b->op && a->root == b->root;
}

static int sig_str(char *buf, size_t n, const sig_t *s)
{
    int red = hpc_coll_reduces((hpc_coll_t)s->coll);
    int rooted = coll_rooted((hpc_coll_t)s->coll);
    char root[32] = "";
    if (rooted) snprintf(root, sizeof root, ", root=%d", s->root);
    if (s->coll == HPC_COLL_BARRIER)
        return snprintf(buf, n, "#%llu barrier(alg=%s)", (unsigned long long)s->seq,
                        hpc_alg_name((hpc_alg_t)s->alg));
    return snprintf(buf, n, "#%llu %s(count=%llu %s%s%s%s, alg=%s)",
                    (unsigned long long)s->seq, hpc_coll_name((hpc_coll_t)s->coll),
                    (unsigned long long)s->count, hpc_dtype_name((hpc_dtype_t)s->dt),
                    red ? " " : "", red ? hpc_op_name((hpc_op_t)s->op) : "", root,
                    hpc_alg_name((hpc_alg_t)s->alg));
}

/* What the distinct calls have in common, as the line's cause: ranks at
 * different call numbers or making different collectives are out of
 * step; the same call with other arguments or algorithms is not. */
static const char *cause(const sig_t *all, int p)
{
    int seq = 0, coll = 0, args = 0;
    for (int i = 1; i < p; i++) {
        seq |= all[i].seq != all[0].seq;
        coll |= all[i].coll != all[0].coll;
        args |= all[i].count != all[0].count || all[i].dt != all[0].dt || all[i].op != all[0].op ||
                all[i].root != all[0].root;
    }
    if (seq) return "calls out of step (the ranks have made different numbers of calls on it)";
    if (coll) return "calls out of step (the ranks make different collectives as one call)";
    if (args) return "the ranks pass different arguments to one call";
    return "the ranks run different algorithms for one call";
}

/* The call about to start as call number cc->seq on cc, with alg. */
int coll_desync_check(coll_comm_t *cc, const hpc_coll_args_t *a, hpc_alg_t alg)
{
    sig_t sig = {.seq = cc->seq, .count = a->count, .coll = a->coll, .alg = alg,
                 .dt = a->dtype, .op = a->op, .root = a->root};
    const sig_t *mine = &sig;
    int p = cc->size;
    sig_t *all = malloc((size_t)p * sizeof *all);
    if (!all) return HPC_ERR(HPC_ERR_NOMEM, "desync check");
    int e = MPI_Allgather(mine, (int)sizeof *mine, MPI_BYTE, all, (int)sizeof *mine, MPI_BYTE,
                          cc->comm);
    if (e != MPI_SUCCESS) {
        free(all);
        return hpc_error_mpi(e, __FILE__, __LINE__, "MPI_Allgather (desync check)");
    }
    int bad = 0;
    for (int i = 1; i < p; i++)
        if (!sig_eq(&all[i], &all[0])) bad = 1;
    if (!bad) {
        free(all);
        return 0;
    }
    if (cc->rank == 0) {
        /* One line: each distinct call with the ranks that made it. */
        char line[2048];
        size_t len = (size_t)snprintf(line, sizeof line,
                                      "hpc: collective desync (HPC_DEBUG=coll) on a %d-rank communicator, %s:", p,
                                      cause(all, p));
        int *seen = calloc((size_t)p, sizeof *seen);
        for (int i = 0; seen && i < p && len < sizeof line - 64; i++) {
            if (seen[i]) continue;
            len += (size_t)snprintf(line + len, sizeof line - len, "%s rank", i ? ";" : "");
            int first = 1, nr = 0;
            for (int j = i; j < p; j++) {
                if (seen[j] || !sig_eq(&all[j], &all[i])) continue;
                seen[j] = 1;
                nr++;
                if (nr <= 8 && len < sizeof line - 64)
                    len += (size_t)snprintf(line + len, sizeof line - len, "%s%d", first ? " " : ",", j);
                first = 0;
            }
            if (nr > 8) len += (size_t)snprintf(line + len, sizeof line - len, ",... (%d ranks)", nr);
            len += (size_t)snprintf(line + len, sizeof line - len, " called ");
            if (len < sizeof line) len += (size_t)sig_str(line + len, sizeof line - len, &all[i]);
        }
        free(seen);
        fprintf(stderr, "%s\n", line);
        coll_abort_all();
        hpc_abort(1);
    }
    /* Other ranks give rank 0 time to print, then abort themselves. */
    sleep(3);
    coll_abort_all();
    MPI_Abort(MPI_COMM_WORLD, 1);
    free(all);
    return HPC_ERR(HPC_ERR_MISMATCH, "collective desync");
}

