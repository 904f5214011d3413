/**
 * @file dot.cu
 * @brief M6 dot product: per-block partial sums, then a second pass (reference kernels).
 *
 * | version | kernels                                    | idea                                          |
 * |---------|--------------------------------------------|-----------------------------------------------|
 * | 1       | `dot_partials_kernel`, `dot_finish_kernel` | fixed partition + fixed trees: deterministic  |
 *
 * Why two passes and not one atomicAdd per block: fp32 addition is not
 * associative, so the order in which blocks add into one accumulator changes
 * the rounding, and that order is whatever the scheduler did. Writing one
 * partial per block and summing the partials in a second, single-block kernel
 * fixes every addition: the same inputs give the same bits on every run and
 * every GPU (the number of blocks is a function of n only).
 *
 * Pass 1: thread g of T = blocks * 256 threads walks the 16-byte chunks
 * g, g + T, g + 2T, ... and accumulates x_i * y_i with one fused multiply-add
 * per element, in element order; the n mod chunk tail elements go to threads
 * 0..tail-1 after their chunks. The block then sums its 256 values with the
 * block tree of \ref stage01 (fa_block_sum(), common/fa_kernel.cuh).
 * Pass 2: one block; thread t sums partials t, t + 256, ... in order, then the
 * same block tree. harness/model.c replays exactly this order on the CPU.
 *
 * Only kernels live here: harness/launch.cu validates, sizes the grid
 * (dot_product_blocks(), matrix.h) and launches them.
 */
#include <stdint.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "fa_kernel.cuh"
#include "matrix.h"

/** Chunks whose loads a thread issues before it consumes the first: bytes in flight. */
constexpr int DOT_CHUNKS_IN_FLIGHT = 4;
static_assert(DOT_PRODUCT_CHUNK_BYTES == sizeof(uint4), "a chunk is one 16-byte load");

/** Elements of @p DTYPE in one 16-byte chunk. */
template <fa_dtype DTYPE>
static __device__ constexpr int chunk_elements()
{
    return DTYPE == FA_F32 ? 4 : 8;
}

/** Element @p i of an array of @p DTYPE, widened exactly to float. */
template <fa_dtype DTYPE>
static __device__ __forceinline__ float load_as_float(const void *p, int64_t i)
{
    if constexpr (DTYPE == FA_F32)
        return __ldg(static_cast<const float *>(p) + i);
    else if constexpr (DTYPE == FA_BF16)
        return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
    else
        return __half2float(static_cast<const __half *>(p)[i]);
}

/** The 32-bit word @p w of a chunk as two floats (the lower address first). */
template <fa_dtype DTYPE>
static __device__ __forceinline__ float2 pair_as_float2(uint32_t w)
{
    if constexpr (DTYPE == FA_BF16) {
        __nv_bfloat162 h;
        memcpy(&h, &w, sizeof w);
        return __bfloat1622float2(h);
    } else {
        __half2 h;
        memcpy(&h, &w, sizeof w);
        return __half22float2(h);
    }
}

/** acc + x_0 y_0 + x_1 y_1 + ... over one chunk, one rounding per element, in order. */
template <fa_dtype DTYPE>
static __device__ __forceinline__ float fma_chunk(uint4 x, uint4 y, float acc)
{
    const uint32_t xw[4] = {x.x, x.y, x.z, x.w};
    const uint32_t yw[4] = {y.x, y.y, y.z, y.w};
#pragma unroll
    for (int w = 0; w < 4; ++w) {
        if constexpr (DTYPE == FA_F32) {
            acc = __fmaf_rn(__uint_as_float(xw[w]), __uint_as_float(yw[w]), acc);
        } else {
            const float2 xf = pair_as_float2<DTYPE>(xw[w]);
            const float2 yf = pair_as_float2<DTYPE>(yw[w]);
            acc = __fmaf_rn(xf.x, yf.x, acc);
            acc = __fmaf_rn(xf.y, yf.y, acc);
        }
    }
    return acc;
}

/** Pass 1: partials[block] = this block's share of sum x_i y_i. */
template <fa_dtype DTYPE>
static __global__ void __launch_bounds__(DOT_PRODUCT_THREADS)
    dot_partials_kernel(const void *x, const void *y, int64_t n, float *partials)
{
    __shared__ float warp_totals[DOT_PRODUCT_THREADS / FA_WARP_THREADS];
    constexpr int ELEMS = chunk_elements<DTYPE>();
    const uint4 *x_chunks = static_cast<const uint4 *>(x);
    const uint4 *y_chunks = static_cast<const uint4 *>(y);
    const int64_t chunks = n / ELEMS;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t thread = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;

    float acc = 0.0f;
    int64_t c = thread;
    /* Issue DOT_CHUNKS_IN_FLIGHT independent loads, then consume them in order:
     * the same additions as the plain loop below, with more bytes in flight. */
    for (; c + (DOT_CHUNKS_IN_FLIGHT - 1) * stride < chunks; c += DOT_CHUNKS_IN_FLIGHT * stride) {
        uint4 xr[DOT_CHUNKS_IN_FLIGHT], yr[DOT_CHUNKS_IN_FLIGHT];
#pragma unroll
        for (int u = 0; u < DOT_CHUNKS_IN_FLIGHT; ++u) {
            xr[u] = __ldg(x_chunks + c + u * stride);
            yr[u] = __ldg(y_chunks + c + u * stride);
        }
#pragma unroll
        for (int u = 0; u < DOT_CHUNKS_IN_FLIGHT; ++u)
            acc = fma_chunk<DTYPE>(xr[u], yr[u], acc);
    }
    for (; c < chunks; c += stride)
        acc = fma_chunk<DTYPE>(__ldg(x_chunks + c), __ldg(y_chunks + c), acc);

    const int64_t tail = n - chunks * ELEMS;
    if (thread < tail) {
        const int64_t i = chunks * ELEMS + thread;
        acc = __fmaf_rn(load_as_float<DTYPE>(x, i), load_as_float<DTYPE>(y, i), acc);
    }

    const float total = fa_block_sum<DOT_PRODUCT_THREADS>(acc, warp_totals);
    if (threadIdx.x == 0)
        partials[blockIdx.x] = total;
}

/** Pass 2, one block: *result = sum of partials[0..count) in a fixed order. */
static __global__ void __launch_bounds__(DOT_PRODUCT_THREADS)
    dot_finish_kernel(const float *partials, int count, float *result)
{
    __shared__ float warp_totals[DOT_PRODUCT_THREADS / FA_WARP_THREADS];
    float acc = 0.0f;
    for (int p = threadIdx.x; p < count; p += DOT_PRODUCT_THREADS)
        acc = __fadd_rn(acc, partials[p]);
    const float total = fa_block_sum<DOT_PRODUCT_THREADS>(acc, warp_totals);
    if (threadIdx.x == 0)
        *result = total;
}
