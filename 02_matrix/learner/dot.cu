/**
 * @file learner/dot.cu
 * @brief EXERCISE M6 dot product: your kernels go here (see \ref stage02).
 *
 * The launcher below is complete: it validates the arguments, picks the
 * grid and launches your two kernels. Write their bodies, then delete the
 * FA_TODO line of learner_dot_product. Check with `stage02 --milestone 6`.
 *
 * The plan (the page explains why): pass 1 writes one partial sum per
 * block, pass 2 adds the partials in one block. No atomics: with a fixed
 * partition and fixed trees the result has the same bits on every run.
 */
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "fa_device.h"
#include "matrix.h"

/**
 * Pass 1: partials[blockIdx.x] = this block's share of sum_i x[i] * y[i].
 *
 * TODO(M6):
 *  1. Thread g = blockIdx.x * blockDim.x + threadIdx.x of T = gridDim.x *
 *     blockDim.x threads walks the 16-byte chunks g, g + T, g + 2T, ... of x
 *     and y (reinterpret them as `const uint4 *`; a chunk holds 4 fp32 or 8
 *     bf16/fp16, `if constexpr (DTYPE == FA_F32)`). Widen each element to float
 *     (__uint_as_float, __bfloat1622float2, __half22float2 on the 32-bit
 *     words) and accumulate with one fmaf per element in element order.
 *     Keep the element offsets in int64_t.
 *  2. The n % chunk tail elements (fewer than one chunk) go to threads
 *     0 .. tail-1, one each, after their chunks.
 *  3. Sum the block's values: __shfl_down_sync tree within each warp
 *     (offsets 16, 8, 4, 2, 1), warp totals through shared memory, the same
 *     tree in warp 0. Thread 0 writes partials[blockIdx.x].
 *  Hint: load several chunks before using the first (bytes in flight are
 *  what a memory-bound kernel needs); the order of the FMAs stays the same.
 */
template <fa_dtype DTYPE>
static __global__ void __launch_bounds__(DOT_PRODUCT_THREADS)
    dot_partials_kernel(const void *x, const void *y, int64_t n, float *partials)
{
    (void)x;
    (void)y;
    (void)n;
    (void)partials;
}

/**
 * Pass 2, one block of DOT_PRODUCT_THREADS: *result = sum of partials[0..count).
 *
 * TODO(M6): thread t adds partials t, t + 256, ... in order, then the same
 * block tree as pass 1; thread 0 writes *result.
 */
static __global__ void __launch_bounds__(DOT_PRODUCT_THREADS)
    dot_finish_kernel(const float *partials, int count, float *result)
{
    (void)partials;
    (void)count;
    (void)result;
}

template <fa_dtype DTYPE>
static fa_status launch_dot(const void *x, const void *y, int64_t n, float *partials,
                            float *result, cudaStream_t stream)
{
    const int blocks = (int)dot_product_blocks(n, DTYPE);
    dot_partials_kernel<DTYPE><<<blocks, DOT_PRODUCT_THREADS, 0, stream>>>(x, y, n, partials);
    FA_LAUNCH_CHECK();
    dot_finish_kernel<<<1, DOT_PRODUCT_THREADS, 0, stream>>>(partials, blocks, result);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

/** The complete launch code, as in the reference: validation, n = 0, dtype dispatch. */
static fa_status run_dot_product(const void *x, const void *y, fa_dtype dtype, int64_t n,
                                 float *partials, float *result, cudaStream_t stream)
{
    FA_TRY(dot_product_validate(x, y, dtype, n, partials, result));
    if (n == 0) {
        if (result != NULL)
            FA_CUDA_TRY(cudaMemsetAsync(result, 0, sizeof(float), stream));
        return FA_OK;
    }
    switch (dtype) {
    case FA_F32: return launch_dot<FA_F32>(x, y, n, partials, result, stream);
    case FA_BF16: return launch_dot<FA_BF16>(x, y, n, partials, result, stream);
    case FA_F16: return launch_dot<FA_F16>(x, y, n, partials, result, stream);
    }
    return fa_fail(FA_ERR_INVALID_ARGUMENT, "dot_product: dtype = %d", (int)dtype);
}

extern "C" fa_status learner_dot_product(const void *x, const void *y, fa_dtype dtype, int64_t n,
                                         float *partials, float *result, cudaStream_t stream)
{
    FA_TODO("M6 dot product");
    return run_dot_product(x, y, dtype, n, partials, result, stream);
}
