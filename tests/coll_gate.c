/* coll_gate - device input written on the legacy stream is waited for
 * (issue 23.4, 23.7), without a GPU: the fake runtime of fake_gpu.h, whose
 * events recorded on the legacy stream stay "not ready" while the test
 * holds them (a kernel still writing the input).
 *
 *  - CUDA-aware MPI (HPC_CUDA_AWARE=1): MPI reads the device pointers
 *    itself, so the call's first round waits (polled, never blocking the
 *    host) for an event recorded on the legacy stream at the call: held,
 *    nothing completes; released, the sums are right.  For an own
 *    algorithm (ring) and MPI's own (native).
 *  - staged through the host (HPC_CUDA_AWARE=0): the copies run on the
 *    communicator's stream, which is non-blocking and waits for the
 *    legacy stream's event before them - on the GPU, so the call
 *    completes, with the right sums.
 */
#include "config.h"
#include "hpc_coll.h"

#include <stdlib.h>
#include <string.h>
#include "fake_gpu.h"
#include "coll/test_hooks.h"
#include "testlib.h"

enum { N = 5000 };
static int rank, p;

static void fill(double *in, double *out)
{
    for (int i = 0; i < N; i++) {
        in[i] = rank + 0.5 * i;
        out[i] = -1;
    }
}

static long wrong(const double *out)
{
    long bad = 0;
    for (int i = 0; i < N; i++) bad += out[i] != p * (p - 1) / 2.0 + p * 0.5 * i;
    return bad;
}

static void aware(hpc_alg_t alg, double *in, double *out, MPI_Comm comm)
{
    fill(in, out);
    fake.hold_legacy = 1;
    hpc_request_t *r = NULL;
    EXPECT(hpc_iallreduce(in, out, N, HPC_FLOAT64, HPC_SUM, comm, alg, &r) == 0, "%s: %s", hpc_alg_name(alg),
           hpc_last_error());
    int done = 0;
    for (double t0 = MPI_Wtime(); r && !done && MPI_Wtime() - t0 < 0.3;)
        EXPECT(hpc_test(&r, &done) == 0, "test: %s", hpc_last_error());
    EXPECT(!done, "%s, CUDA-aware: completed while the legacy stream still writes its input", hpc_alg_name(alg));
    fake.hold_legacy = 0;
    EXPECT(hpc_wait(&r) == 0, "%s: wait: %s", hpc_alg_name(alg), hpc_last_error());
    EXPECT(wrong(out) == 0, "%s, CUDA-aware: %ld wrong sums", hpc_alg_name(alg), wrong(out));
}

int main(int argc, char **argv)
{
    fake.nccl = 0;
    fake_install();
    HPC_CHECK(hpc_init(&argc, &argv));
    rank = hpc_rank();
    p = hpc_size();
    MPI_Comm comm = hpc_comm_world();
    double *in = NULL, *out = NULL;
    EXPECT(hpc_coll_dev_alloc(N * sizeof(double), (void **)&in) == 0 &&
               hpc_coll_dev_alloc(N * sizeof(double), (void **)&out) == 0, "alloc: %s", hpc_last_error());

    setenv("HPC_CUDA_AWARE", "1", 1);
    hpc_coll_test_reload_settings();
    EXPECT(hpc_coll_cuda_aware() == 1, "HPC_CUDA_AWARE=1 not taken");
    aware(HPC_ALG_RING, in, out, comm);
    aware(HPC_ALG_NATIVE, in, out, comm);

    /* staged: the stream waits for the legacy one on the GPU */
    setenv("HPC_CUDA_AWARE", "0", 1);
    hpc_coll_test_reload_settings();
    fill(in, out);
    fake.hold_legacy = 1;
    fake.loglen = 0;
    fake.log[0] = '\0';
    EXPECT(hpc_allreduce(in, out, N, HPC_FLOAT64, HPC_SUM, comm, HPC_ALG_RING) == 0, "staged: %s",
           hpc_last_error());
    fake.hold_legacy = 0;
    EXPECT(wrong(out) == 0, "staged: %ld wrong sums", wrong(out));
    const char *wait = strstr(fake.log, ",legacy)"), *copy = strstr(fake.log, "copy(");
    EXPECT(wait && copy && wait < copy, "staged: the copies do not wait for the legacy stream: %s", fake.log);
    hpc_coll_dev_free(in);
    hpc_coll_dev_free(out);
    long mine = test_failures, tot = 0;
    MPI_Reduce(&mine, &tot, 1, MPI_LONG, MPI_SUM, 0, comm);
    HPC_CHECK(hpc_finalize());
    if (rank == 0 && !tot)
        printf("coll_gate: %d ranks: CUDA-aware calls wait for the legacy stream's event, staged ones on the GPU\n", p);
    return rank == 0 && tot ? 1 : 0;
}
