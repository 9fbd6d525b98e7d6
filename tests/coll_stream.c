/* coll_stream.c - stream-ordered collectives and hpc_request_stream_wait.
 *
 * Everywhere: the stream forms with the legacy stream (NULL) on host
 * buffers behave as the nonblocking ones (results checked), stream_wait
 * returns at once, and a stream without a GPU is refused.
 * With a GPU on every rank (else that part is skipped, and the test says
 * so): allreduce, bcast, reduce, allgather and reduce_scatter with auto,
 * nccl (where built) and own algorithms on device buffers - the input is
 * copied in on stream s1 behind a long copy, the call is ordered on s1,
 * stream s2 waits for it with hpc_request_stream_wait and copies the
 * result out; the host only polls (hpc_test) until s2 is done, and the
 * result must be right: the call waited for its input and s2 for the call.
 * Runs at 2 ranks (and 1). */
#include "config.h"
#include "hpc_coll.h"
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef HPC_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* elements per rank: 1000 on the host; on the device more than a
 * pipeline segment (128 KiB) and a kernel grid's stride (4096 blocks of
 * 256 threads), so that pipelined and grid-stride paths run */
static size_t N = 1000;
enum { N_HOST = 1000, N_DEV = (1 << 20) + 1000 };
static int rank, p;

static double in_val(int r, size_t i)
{
    return (double)((r + 1) * 3 + (int)(i % 13));
}

/* Expected element i of this rank's output. */
static double want(hpc_coll_t c, size_t i)
{
    double sum = 0;
    switch (c) {
    case HPC_COLL_BCAST: return in_val(0, i);
    case HPC_COLL_ALLGATHER: return in_val((int)(i / N), i % N);
    case HPC_COLL_REDUCE_SCATTER: i += (size_t)rank * N; break;
    default: break;
    }
    for (int r = 0; r < p; r++) sum += in_val(r, i);
    return sum;
}

static void sizes(hpc_coll_t c, size_t *ni, size_t *no)
{
    *ni = c == HPC_COLL_REDUCE_SCATTER ? (size_t)p * N : N;
    *no = c == HPC_COLL_ALLGATHER ? (size_t)p * N : N;
}

static int start(hpc_coll_t c, const double *in, double *out, hpc_alg_t alg, hpc_stream_t s,
                 hpc_request_t **req)
{
    switch (c) {
    case HPC_COLL_ALLREDUCE:
        return hpc_iallreduce_stream(in, out, N, HPC_FLOAT64, HPC_SUM, MPI_COMM_WORLD, alg, s, req);
    case HPC_COLL_BCAST:
        return hpc_ibcast_stream(out, N, HPC_FLOAT64, 0, MPI_COMM_WORLD, alg, s, req);
    case HPC_COLL_REDUCE:
        return hpc_ireduce_stream(in, out, N, HPC_FLOAT64, HPC_SUM, 0, MPI_COMM_WORLD, alg, s, req);
    case HPC_COLL_ALLGATHER:
        return hpc_iallgather_stream(in, out, N, HPC_FLOAT64, MPI_COMM_WORLD, alg, s, req);
    default:
        return hpc_ireduce_scatter_stream(in, out, N, HPC_FLOAT64, HPC_SUM, MPI_COMM_WORLD, alg, s, req);
    }
}

static void check(hpc_coll_t c, hpc_alg_t alg, const char *where, const double *out)
{
    size_t ni, no, bad = 0;
    sizes(c, &ni, &no);
    if (c == HPC_COLL_REDUCE && rank != 0) return;
    for (size_t i = 0; i < no; i++) bad += out[i] != want(c, i);
    EXPECT(bad == 0, "%s %s (%s): %zu wrong elements, e.g. [0] = %g, expected %g", hpc_coll_name(c),
           hpc_alg_name(alg), where, bad, out[0], want(c, 0));
}

static const hpc_coll_t colls[] = {HPC_COLL_ALLREDUCE, HPC_COLL_BCAST, HPC_COLL_REDUCE,
                                   HPC_COLL_ALLGATHER, HPC_COLL_REDUCE_SCATTER};

static void host_part(int gpu)
{
    static double in[N_HOST * 8], out[N_HOST * 8];
    for (size_t k = 0; k < sizeof colls / sizeof colls[0]; k++) {
        hpc_coll_t c = colls[k];
        size_t ni, no;
        sizes(c, &ni, &no);
        for (size_t i = 0; i < ni; i++) in[i] = in_val(rank, i);
        for (size_t i = 0; i < no; i++) out[i] = c == HPC_COLL_BCAST && rank == 0 ? in_val(0, i) : -1;
        hpc_request_t *req = NULL;
        EXPECT(start(c, in, out, HPC_ALG_RING, NULL, &req) == 0, "%s: %s",
               hpc_coll_name(c), hpc_last_error());
        EXPECT(hpc_request_stream_wait(req, NULL) == 0, "stream_wait: %s", hpc_last_error());
        EXPECT(hpc_wait(&req) == 0, "wait: %s", hpc_last_error());
        check(c, HPC_ALG_RING, "host memory, legacy stream", out);
    }
    if (!gpu) {
        hpc_request_t *req = NULL;
        hpc_error_clear();
        EXPECT(hpc_iallreduce_stream(in, out, N, HPC_FLOAT64, HPC_SUM, MPI_COMM_WORLD, HPC_ALG_AUTO,
                                     (hpc_stream_t)0x1234, &req) == HPC_ERR_NOGPU && req == NULL &&
                   strstr(hpc_last_error(), "stream"),
               "a stream without a GPU: %s", hpc_last_error());
    }
    EXPECT(hpc_request_stream_wait(NULL, NULL) == HPC_ERR_ARG, "NULL request");
}

#ifdef HPC_HAVE_CUDA
static void device_case(hpc_coll_t c, hpc_alg_t alg, cudaStream_t s1, cudaStream_t s2, double *hin,
                        double *hout, double *din, double *dout, void *big_h, void *big_d, size_t big)
{
    size_t ni, no;
    sizes(c, &ni, &no);
    for (size_t i = 0; i < ni; i++) hin[i] = in_val(rank, i);
    for (size_t i = 0; i < no; i++) hout[i] = -1;
    cudaMemset(dout, 0xff, no * sizeof *dout);
    cudaDeviceSynchronize();
    /* s1: a long copy, then the input - the call must wait for both */
    cudaMemcpyAsync(big_d, big_h, big, cudaMemcpyHostToDevice, s1);
    if (c == HPC_COLL_BCAST) cudaMemcpyAsync(dout, hin, N * sizeof *hin, cudaMemcpyHostToDevice, s1);
    else cudaMemcpyAsync(din, hin, ni * sizeof *hin, cudaMemcpyHostToDevice, s1);
    hpc_request_t *req = NULL;
    int e = start(c, din, dout, alg, s1, &req);
    EXPECT(e == 0, "%s %s on device: %s", hpc_coll_name(c), hpc_alg_name(alg), hpc_last_error());
    if (e) return;
    EXPECT(hpc_request_stream_wait(req, s2) == 0, "stream_wait: %s", hpc_last_error());
    cudaMemcpyAsync(hout, dout, no * sizeof *hout, cudaMemcpyDeviceToHost, s2);
    /* the host only polls; s2 must not finish before the call has */
    while (cudaStreamQuery(s2) == cudaErrorNotReady) {
        int done = 0;
        if (req && hpc_test(&req, &done) < 0) {
            EXPECT(0, "test: %s", hpc_last_error());
            break;
        }
    }
    EXPECT(hpc_wait(&req) == 0, "wait: %s", hpc_last_error());
    check(c, alg, "device memory, streams", hout);
}

static void device_part(void)
{
    N = N_DEV;
    cudaStream_t s1, s2;
    cudaStreamCreate(&s1);
    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    size_t big = (size_t)64 << 20;
    double *hin, *hout, *din, *dout;
    void *big_h, *big_d;
    cudaMallocHost((void **)&hin, (size_t)p * N * sizeof *hin);
    cudaMallocHost((void **)&hout, (size_t)p * N * sizeof *hout);
    cudaMallocHost(&big_h, big);
    cudaMalloc((void **)&din, (size_t)p * N * sizeof *din);
    cudaMalloc((void **)&dout, (size_t)p * N * sizeof *dout);
    cudaMalloc(&big_d, big);
    hpc_alg_t algs[] = {HPC_ALG_AUTO, HPC_ALG_NCCL, HPC_ALG_RING, HPC_ALG_TREE, HPC_ALG_NATIVE};
    /* NCCL refuses ranks that share a GPU (and says why): skip it then */
    int nccl_ok = hpc_have_nccl() && hpc_barrier(MPI_COMM_WORLD, HPC_ALG_NCCL) == 0;
    if (!nccl_ok && hpc_have_nccl() && rank == 0) printf("coll_stream: nccl skipped: %s\n", hpc_last_error());
    hpc_error_clear();
    for (size_t k = 0; k < sizeof colls / sizeof colls[0]; k++)
        for (size_t a = 0; a < sizeof algs / sizeof algs[0]; a++) {
            if (algs[a] == HPC_ALG_NCCL && !nccl_ok) continue;
            if (!hpc_coll_has_alg(colls[k], algs[a])) continue;
            device_case(colls[k], algs[a], s1, s2, hin, hout, din, dout, big_h, big_d, big);
        }
    cudaFree(din); cudaFree(dout); cudaFree(big_d);
    cudaFreeHost(hin); cudaFreeHost(hout); cudaFreeHost(big_h);
    cudaStreamDestroy(s1); cudaStreamDestroy(s2);
}
#endif

int main(int argc, char **argv)
{
    int listed = test_gpus_listed();     /* before MPI: it may fork nvidia-smi */
    /* hpc_init binds each rank's GPU (local rank % devices) */
    HPC_CHECK(hpc_init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int gpu = hpc_gpu_count() > 0, all = 0;
    MPI_Allreduce(&gpu, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    /* a GPU listed that a CUDA build does not see: a failure, not a skip */
    EXPECT(test_gpu_verdict(listed, TEST_CUDA_BUILT, hpc_gpu_count()) != 1,
           "rank %d: a GPU is listed, libhpc sees none: %s", rank, hpc_gpu_unavailable());
    host_part(gpu);
#ifdef HPC_HAVE_CUDA
    if (all) device_part();
#endif
    long mine = test_failures, tot = 0;
    MPI_Reduce(&mine, &tot, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("coll_stream: %d ranks, device part %s, %ld failures\n", p,
               all ? "run" : "skipped (no GPU on every rank)", tot);
    hpc_finalize();
    return rank == 0 && tot ? 1 : 0;
}
