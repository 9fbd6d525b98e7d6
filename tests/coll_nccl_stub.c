/* coll_nccl_stub - libhpc's NCCL state machine (issue 23.3), without a GPU,
 * through the stub of NCCL in fake_gpu.h: a nonblocking communicator whose
 * set-up and every group stay "in progress" for a few looks at
 * ncclCommGetAsyncError, and which refuses any call meanwhile
 * (ncclInvalidArgument), as NCCL does.
 *
 * Several nonblocking allreduces started back to back on one communicator
 * (gradient buckets) must all complete: each goes in once the group
 * before it is in, in the order they were called, and NCCL never sees a
 * call while one is in progress.  Calls without a stream first make the
 * communicator's (non-blocking) stream wait for the legacy stream (issue
 * 23.7).  On 1 rank the stub's allreduce leaves the data in place, which
 * is checked; on more, the order and count of NCCL calls are compared
 * between ranks.
 */
#include "config.h"
#include "hpc_coll.h"

#include <string.h>
#include "fake_gpu.h"
#include "testlib.h"

enum { NB = 4, N = 1000 };

int main(int argc, char **argv)
{
    fake.init_polls = 3;
    fake.group_polls = 3;
    fake_install();
    HPC_CHECK(hpc_init(&argc, &argv));
    int rank = hpc_rank(), p = hpc_size();
    MPI_Comm comm = hpc_comm_world();
    EXPECT(hpc_have_nccl(), "the stub's NCCL is not seen");
    float *buf[NB];
    for (int b = 0; b < NB; b++) {
        EXPECT(hpc_coll_dev_alloc(N * sizeof(float), (void **)&buf[b]) == 0, "alloc: %s", hpc_last_error());
        for (int i = 0; i < N; i++) buf[b][i] = (float)(b * N + i + rank);
    }
    /* the buckets, back to back, then the wait */
    hpc_request_t *req[NB];
    for (int b = 0; b < NB; b++) {
        int e = hpc_iallreduce(HPC_IN_PLACE, buf[b], N, HPC_FLOAT32, HPC_SUM, comm, HPC_ALG_NCCL, &req[b]);
        EXPECT(e == 0, "bucket %d: %s", b, hpc_last_error());
        if (e) req[b] = NULL;
        int done;
        if (b == 1 && req[0]) EXPECT(hpc_test(&req[0], &done) == 0, "test: %s", hpc_last_error());
    }
    int e = hpc_waitall(NB, req);
    EXPECT(e == 0, "waitall: %s", hpc_last_error());
    EXPECT(fake.refused == 0, "NCCL was called %d time(s) while a group was in progress: %s", fake.refused, fake.log);
    EXPECT(fake.ncalls == NB, "%d NCCL collectives for %d calls", fake.ncalls, NB);
    /* in call order: allreduce#1 ... #NB */
    const char *at = fake.log;
    for (int b = 1; b <= NB; b++) {
        char what[32];
        snprintf(what, sizeof what, "allreduce#%d(", b);
        const char *q = strstr(at, what);
        EXPECT(q, "the calls went to NCCL out of order: %s", fake.log);
        if (q) at = q;
    }
    /* the legacy gate: the stream NCCL runs on waits for the legacy stream */
    EXPECT(strstr(fake.log, "stream_create(") && strstr(fake.log, ",nonblocking)") &&
               !strstr(fake.log, ",blocking)"), "the collectives' streams are not all non-blocking: %s", fake.log);
    const char *rec = strstr(fake.log, "record(legacy)"), *wait = strstr(fake.log, ",legacy)"),
               *first = strstr(fake.log, "allreduce#1(");
    EXPECT(rec && wait && first && rec < wait && wait < first,
           "NCCL's stream does not wait for the legacy stream before the first call: %s", fake.log);
    if (p == 1)
        for (int b = 0; b < NB; b++)
            for (int i = 0; i < N; i++)
                if (buf[b][i] != (float)(b * N + i)) {
                    EXPECT(0, "bucket %d element %d: %g", b, i, buf[b][i]);
                    break;
                }
    /* every rank made the same NCCL calls in the same order */
    int calls = fake.ncalls, lo = 0, hi = 0;
    MPI_Allreduce(&calls, &lo, 1, MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(&calls, &hi, 1, MPI_INT, MPI_MAX, comm);
    EXPECT(lo == hi, "ranks made %d to %d NCCL calls", lo, hi);
    for (int b = 0; b < NB; b++) hpc_coll_dev_free(buf[b]);
    long mine = test_failures, tot = 0;
    MPI_Reduce(&mine, &tot, 1, MPI_LONG, MPI_SUM, 0, comm);
    HPC_CHECK(hpc_finalize());
    if (rank == 0 && !tot)
        printf("coll_nccl_stub: %d ranks, %d nonblocking calls through an in-progress NCCL, in order, none refused\n",
               p, NB);
    return rank == 0 && tot ? 1 : 0;
}
