// cuda.cu - reduction and averaging kernels for device buffers, and the
// kernel a stream waits in for a request the host progresses.
//
// Compiled by nvcc, so it includes no MPI header: dtype and op arrive as
// the integer values of hpc_dtype_t / hpc_op_t (hpc_coll.h), spelled out
// below.  16-bit floats are widened to float, combined and rounded back
// (float32 accumulation per step), as on the host.
#include <cstddef>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

namespace {

enum { I32 = 0, I64 = 1, F32 = 2, F64 = 3, F16 = 4, BF16 = 5 };   // hpc_dtype_t
enum { SUM = 0, PROD = 1, MIN = 2, MAX = 3, AVG = 4 };             // hpc_op_t

template <typename T> struct Acc { typedef T type; };
template <> struct Acc<__half> { typedef float type; };
template <> struct Acc<__nv_bfloat16> { typedef float type; };

template <typename T> __device__ __forceinline__ typename Acc<T>::type widen(T x) { return x; }
template <> __device__ __forceinline__ float widen<__half>(__half x) { return __half2float(x); }
template <> __device__ __forceinline__ float widen<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T, typename A> __device__ __forceinline__ T narrow(A x) { return (T)x; }
template <> __device__ __forceinline__ __half narrow<__half, float>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 narrow<__nv_bfloat16, float>(float x) { return __float2bfloat16_rn(x); }

// Integer sums and products wrap around (two's complement) as on the
// host: computed in the unsigned type, since signed overflow is undefined
// behaviour in C++ too.  Floats are their own "unsigned" type.
template <typename A> struct Wrap { typedef A type; };
template <> struct Wrap<int> { typedef unsigned type; };
template <> struct Wrap<long long> { typedef unsigned long long type; };

template <typename A, int OP> __device__ __forceinline__ A combine(A x, A y)
{
    typedef typename Wrap<A>::type U;
    if (OP == PROD) return (A)((U)x * (U)y);
    if (OP == MIN) return y < x ? y : x;
    if (OP == MAX) return y > x ? y : x;
    return (A)((U)x + (U)y);
}

// dst may alias a or b (same index only), so no __restrict__ here.
template <typename T, int OP>
__global__ void reduce_kernel(T *dst, const T *a, const T *b, size_t n)
{
    typedef typename Acc<T>::type A;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = narrow<T, A>(combine<A, OP>(widen<T>(a[i]), widen<T>(b[i])));
}

template <typename T>
__global__ void scale_kernel(T *buf, size_t n, int div)
{
    typedef typename Acc<T>::type A;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        buf[i] = narrow<T, A>(widen<T>(buf[i]) / (A)div);
}

// A stream waits here for a request the host progresses (devsync.c):
// until the host sets *flag, then it says so in *ack (mapped pinned
// memory, read through volatile so every look goes to the host).
__global__ void wait_flag_kernel(const volatile unsigned *flag, volatile unsigned *ack)
{
    while (*flag == 0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
        __nanosleep(2000);
#endif
    }
    *ack = 1;
    __threadfence_system();
}

void grid(size_t n, unsigned *blocks, unsigned *threads)
{
    *threads = 256;
    size_t b = (n + 255) / 256;
    *blocks = (unsigned)(b > 4096 ? 4096 : (b ? b : 1));   // grid-stride beyond
}

template <typename T>
cudaError_t launch_reduce(cudaStream_t s, int op, void *dst, const void *a, const void *b, size_t n)
{
    unsigned nb, nt;
    grid(n, &nb, &nt);
    T *d = static_cast<T *>(dst);
    const T *x = static_cast<const T *>(a), *y = static_cast<const T *>(b);
    switch (op) {
    case PROD: reduce_kernel<T, PROD><<<nb, nt, 0, s>>>(d, x, y, n); break;
    case MIN: reduce_kernel<T, MIN><<<nb, nt, 0, s>>>(d, x, y, n); break;
    case MAX: reduce_kernel<T, MAX><<<nb, nt, 0, s>>>(d, x, y, n); break;
    default: reduce_kernel<T, SUM><<<nb, nt, 0, s>>>(d, x, y, n); break;   // SUM, AVG
    }
    return cudaGetLastError();
}

template <typename T>
cudaError_t launch_scale(cudaStream_t s, void *buf, size_t n, int div)
{
    unsigned nb, nt;
    grid(n, &nb, &nt);
    scale_kernel<T><<<nb, nt, 0, s>>>(static_cast<T *>(buf), n, div);
    return cudaGetLastError();
}

} // namespace

extern "C" int coll_cuda_reduce(void *stream, int dt, int op, void *dst, const void *a,
                                const void *b, size_t n)
{
    if (n == 0) return cudaSuccess;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    switch (dt) {
    case I32: return launch_reduce<int>(s, op, dst, a, b, n);
    case I64: return launch_reduce<long long>(s, op, dst, a, b, n);
    case F32: return launch_reduce<float>(s, op, dst, a, b, n);
    case F64: return launch_reduce<double>(s, op, dst, a, b, n);
    case F16: return launch_reduce<__half>(s, op, dst, a, b, n);
    case BF16: return launch_reduce<__nv_bfloat16>(s, op, dst, a, b, n);
    default: return cudaErrorInvalidValue;
    }
}

extern "C" int coll_cuda_wait_flag(void *stream, volatile unsigned *flag, volatile unsigned *ack)
{
    wait_flag_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(flag, ack);
    return cudaGetLastError();
}

extern "C" int coll_cuda_scale(void *stream, int dt, void *buf, size_t n, int div)
{
    if (n == 0 || div == 1) return cudaSuccess;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    switch (dt) {
    case I32: return launch_scale<int>(s, buf, n, div);
    case I64: return launch_scale<long long>(s, buf, n, div);
    case F32: return launch_scale<float>(s, buf, n, div);
    case F64: return launch_scale<double>(s, buf, n, div);
    case F16: return launch_scale<__half>(s, buf, n, div);
    case BF16: return launch_scale<__nv_bfloat16>(s, buf, n, div);
    default: return cudaErrorInvalidValue;
    }
}
