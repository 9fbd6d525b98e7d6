/* same.c - do all ranks hold the same bytes?  For state every rank keeps a
 * replica of (a data-parallel model): a 64-bit hash of the buffer on each
 * rank, then one allreduce of (hash, ~hash) with MAX, which gives the
 * largest and the smallest hash at once; they are equal only if every
 * rank's hash is.  Cheap enough to run every few hundred steps.
 */
#include "config.h"
#include <string.h>
#include "app_internal.h"

/* 64-bit words through a multiply-xorshift mix (not cryptographic: it
 * finds drift, not an adversary), the tail bytes last, the length too
 * (also the resumable outputs' checksums: writer.c) */
uint64_t hpc_hash64(const void *buf, size_t bytes, uint64_t seed)
{
    const unsigned char *p = buf;
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ seed ^ bytes;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 29;
    }
    for (; i < bytes; i++) h = (h ^ p[i]) * 0x94d049bb133111ebULL;
    return h ^ (h >> 32);
}


static uint64_t hash_bytes(const void *buf, size_t bytes)
{
    return hpc_hash64(buf, bytes, 0);
}

int hpc_all_same(const void *buf, size_t bytes, MPI_Comm comm, int *same)
{
    if ((!buf && bytes) || !same) return HPC_ERR(HPC_ERR_ARG, "NULL buffer or flag");
    uint64_t h = hash_bytes(buf, bytes);
    uint64_t mine[2] = {h, ~h}, top[2];
    HPC_MPI(MPI_Allreduce(mine, top, 2, MPI_UINT64_T, MPI_MAX, comm));
    *same = top[0] == ~top[1];
    return 0;
}
