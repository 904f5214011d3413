/**
 * @file primitives.cu
 * @brief Stage 01 reference kernels and launchers: the solution of M1-M5.
 *
 * | version | kernel               | milestone | idea |
 * |---------|----------------------|-----------|------|
 * | 1       | `vector_add_kernel`  | M1 | grid-stride loop over `float4`, scalar tail of n mod 4 |
 * | 2       | `scale_array_kernel` | M2 | the same loop, one multiply per element |
 * | 3       | `exp_kernel<method>` | M3 | the same loop; `expf`, `exp2f(x * log2 e)` or `__expf` |
 * | 4       | `row_max_kernel`     | M4 | one block per row: strided slices, warp shuffles, then shared memory across warps; NaN kept |
 * | 5       | `row_sum_kernel`     | M5 | the same tree with + (error grows with its depth, not with the row length) |
 *
 * Every launcher validates its arguments (validate.c), returns at once for
 * empty work, computes its grid explicitly, launches, and checks the launch.
 * The only external symbols of this file are the `ref_*` launchers: kernels
 * and helpers are static, so the file can be copied as a learner's solution
 * with `ref_` renamed.
 */
#include <math.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_device.h"
#include "primitives.h"
#include "fa_index.h"

enum {
    ELEMENTWISE_THREADS = PRIMITIVES_ELEMENTWISE_THREADS,
    VECTOR_FLOATS = PRIMITIVES_VECTOR_FLOATS,
    ROW_THREADS = PRIMITIVES_ROW_THREADS,
    WARP_THREADS = PRIMITIVES_WARP_THREADS,
    ROW_WARPS = ROW_THREADS / WARP_THREADS
};
static_assert(sizeof(float4) == PRIMITIVES_VECTOR_BYTES && alignof(float4) == PRIMITIVES_VECTOR_BYTES,
              "a float4 is the 16-byte, 16-byte aligned vector the launchers check for");
static_assert(sizeof(float4) == VECTOR_FLOATS * sizeof(float), "a float4 holds VECTOR_FLOATS floats");
static_assert(ELEMENTWISE_THREADS % WARP_THREADS == 0, "blocks are made of whole warps");
static_assert(ROW_THREADS % WARP_THREADS == 0, "blocks are made of whole warps");
static_assert((ROW_WARPS & (ROW_WARPS - 1)) == 0 && ROW_WARPS <= WARP_THREADS,
              "the block level of the tree halves the warps' results within one warp");

/**
 * Grid of an elementwise launch over @p n floats: one block per 256 vectors,
 * but no more blocks than the GPU holds at once. The grid-stride loop then
 * covers any n with a grid sized to the machine, not to the data.
 */
static fa_status elementwise_blocks(int64_t n, int *blocks)
{
    int device = 0, sms = 0, threads_per_sm = 0;
    FA_CUDA_TRY(cudaGetDevice(&device));
    FA_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    FA_CUDA_TRY(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    const int64_t vectors = fa_ceil_div(n, VECTOR_FLOATS); /* the last one may be a partial tail */
    const int64_t wanted = fa_ceil_div(vectors, ELEMENTWISE_THREADS);
    const int64_t resident = (int64_t)sms * (threads_per_sm / ELEMENTWISE_THREADS);
    *blocks = (int)(wanted < resident ? wanted : resident);
    return FA_OK;
}

/* ---- M1 vector add ----------------------------------------------------------------------- */

/**
 * out = a + b. Thread `first` handles vectors first, first + stride, ... so in
 * every step the 32 lanes of a warp touch 32 consecutive float4: 512
 * contiguous bytes, fully coalesced.
 */
static __global__ void __launch_bounds__(ELEMENTWISE_THREADS)
vector_add_kernel(const float *a, const float *b, float *out, int64_t n)
{
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t vectors = n / VECTOR_FLOATS;

    /* The launcher checked that all three pointers are 16-byte aligned. */
    const float4 *a4 = (const float4 *)a;
    const float4 *b4 = (const float4 *)b;
    float4 *out4 = (float4 *)out;
    for (int64_t v = first; v < vectors; v += stride) {
        const float4 p = a4[v], q = b4[v];
        out4[v] = make_float4(p.x + q.x, p.y + q.y, p.z + q.z, p.w + q.w);
    }

    /* The last n mod 4 elements (at most 3) fill no float4: the grid's first threads take one each. */
    const int64_t i = vectors * VECTOR_FLOATS + first;
    if (i < n)
        out[i] = a[i] + b[i];
}

fa_status ref_vector_add(const float *a, const float *b, float *out, int64_t n, cudaStream_t stream)
{
    FA_TRY(vector_add_validate(a, b, out, n));
    if (n == 0)
        return FA_OK;
    int blocks = 0;
    FA_TRY(elementwise_blocks(n, &blocks));
    vector_add_kernel<<<blocks, ELEMENTWISE_THREADS, 0, stream>>>(a, b, out, n);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

/* ---- M2 scale array ---------------------------------------------------------------------- */

/** out = alpha * x, with the loop of vector_add_kernel. */
static __global__ void __launch_bounds__(ELEMENTWISE_THREADS)
scale_array_kernel(const float *x, float alpha, float *out, int64_t n)
{
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t vectors = n / VECTOR_FLOATS;

    const float4 *x4 = (const float4 *)x;
    float4 *out4 = (float4 *)out;
    for (int64_t v = first; v < vectors; v += stride) {
        const float4 p = x4[v];
        out4[v] = make_float4(alpha * p.x, alpha * p.y, alpha * p.z, alpha * p.w);
    }

    const int64_t i = vectors * VECTOR_FLOATS + first;
    if (i < n)
        out[i] = alpha * x[i];
}

fa_status ref_scale_array(const float *x, float alpha, float *out, int64_t n, cudaStream_t stream)
{
    FA_TRY(scale_array_validate(x, alpha, out, n));
    if (n == 0)
        return FA_OK;
    int blocks = 0;
    FA_TRY(elementwise_blocks(n, &blocks));
    scale_array_kernel<<<blocks, ELEMENTWISE_THREADS, 0, stream>>>(x, alpha, out, n);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

/* ---- M3 elementwise exp ------------------------------------------------------------------ */

/** exp(x) by @p METHOD: the three differ in accuracy (see model.h); the bench shows what they cost. */
template <fa_exp_method METHOD>
static __device__ __forceinline__ float exp_by(float x)
{
    if (METHOD == FA_EXP_EXPF)
        return expf(x); /* x log2 e formed with a two-part constant and FMAs: 2 ulp for every x */
    if (METHOD == FA_EXP_EXP2_PRESCALED)
        return exp2f(x * PRIMITIVES_LOG2E); /* e^x = 2^(x log2 e); the product rounds, an error that grows with |x| */
    return __expf(x); /* the same multiply and ex2.approx as above, inside one intrinsic */
}

/** out = exp(x), with the loop of vector_add_kernel. */
template <fa_exp_method METHOD>
static __global__ void __launch_bounds__(ELEMENTWISE_THREADS)
exp_kernel(const float *x, float *out, int64_t n)
{
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t vectors = n / VECTOR_FLOATS;

    const float4 *x4 = (const float4 *)x;
    float4 *out4 = (float4 *)out;
    for (int64_t v = first; v < vectors; v += stride) {
        const float4 p = x4[v];
        out4[v] = make_float4(exp_by<METHOD>(p.x), exp_by<METHOD>(p.y), exp_by<METHOD>(p.z),
                              exp_by<METHOD>(p.w));
    }

    const int64_t i = vectors * VECTOR_FLOATS + first;
    if (i < n)
        out[i] = exp_by<METHOD>(x[i]);
}

/** The launch shared by the three M3 launchers. */
template <fa_exp_method METHOD>
static fa_status launch_exp(const float *x, float *out, int64_t n, cudaStream_t stream)
{
    FA_TRY(exp_validate(METHOD, x, out, n));
    if (n == 0)
        return FA_OK;
    int blocks = 0;
    FA_TRY(elementwise_blocks(n, &blocks));
    exp_kernel<METHOD><<<blocks, ELEMENTWISE_THREADS, 0, stream>>>(x, out, n);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

fa_status ref_exp_accurate(const float *x, float *out, int64_t n, cudaStream_t stream)
{
    return launch_exp<FA_EXP_EXPF>(x, out, n, stream);
}

fa_status ref_exp2_prescaled(const float *x, float *out, int64_t n, cudaStream_t stream)
{
    return launch_exp<FA_EXP_EXP2_PRESCALED>(x, out, n, stream);
}

fa_status ref_exp_fast(const float *x, float *out, int64_t n, cudaStream_t stream)
{
    return launch_exp<FA_EXP_FAST>(x, out, n, stream);
}

/* ---- M4 row max and M5 row sum: the reduction tree --------------------------------------- */

/** The two reductions of the stage; they differ only in how two values combine. */
enum reduce_op { REDUCE_SUM, REDUCE_MAX };

/**
 * max that keeps NaN. `fmaxf(a, NaN)` returns a, so a NaN would vanish from
 * the row max; here a NaN on either side wins, as in the double reference.
 */
static __device__ __forceinline__ float max_keep_nan(float a, float b)
{
    return (a > b || isnan(a)) ? a : b;
}

static __device__ __forceinline__ float combine(reduce_op op, float a, float b)
{
    return op == REDUCE_SUM ? a + b : max_keep_nan(a, b);
}

/** The value that changes nothing: 0 for +, -inf for max. */
static __device__ __forceinline__ float identity_of(reduce_op op)
{
    return op == REDUCE_SUM ? 0.0f : -INFINITY;
}

/**
 * Lane 0 receives op over the values of lanes [0, width), width a power of
 * two <= 32. At each level lane i combines its value with lane i + offset's,
 * read from that lane's registers by `__shfl_down_sync`: no shared memory, no
 * barrier. All 32 lanes must call it.
 */
static __device__ __forceinline__ float warp_reduce(reduce_op op, float v, int width)
{
    for (int offset = width / 2; offset > 0; offset /= 2)
        v = combine(op, v, __shfl_down_sync(FA_FULL_WARP_MASK, v, offset));
    return v;
}

/**
 * Thread 0 receives op over the ROW_THREADS values of the block: each warp
 * reduces its 32, lane 0 of each warp parks the result in shared memory, and
 * warp 0 reduces those ROW_WARPS results. Every thread must call it (it holds
 * a barrier), once per kernel (its shared array is not reset).
 */
static __device__ __forceinline__ float block_reduce(reduce_op op, float v)
{
    __shared__ float warp_results[ROW_WARPS];
    const int lane = threadIdx.x % WARP_THREADS;
    const int warp = threadIdx.x / WARP_THREADS;

    v = warp_reduce(op, v, WARP_THREADS);
    if (lane == 0)
        warp_results[warp] = v;
    __syncthreads(); /* every warp's result is in shared memory before warp 0 reads them */

    if (warp == 0)
        v = warp_reduce(op, lane < ROW_WARPS ? warp_results[lane] : identity_of(op), ROW_WARPS);
    return v;
}

/**
 * out[row] = max of the row, one block per row. Thread t reads columns t,
 * t + 256, ...: in each step a warp reads 32 consecutive floats, 128
 * contiguous bytes, whatever alignment the row starts at.
 */
static __global__ void __launch_bounds__(ROW_THREADS)
row_max_kernel(const float *x, int64_t cols, int64_t ld, float *out)
{
    const int64_t row_start = (int64_t)blockIdx.x * ld;
    float m = -INFINITY;
#pragma unroll 4 /* several independent loads in flight per thread, the combines follow */
    for (int64_t c = threadIdx.x; c < cols; c += ROW_THREADS)
        m = max_keep_nan(m, x[row_start + c]);

    m = block_reduce(REDUCE_MAX, m);
    if (threadIdx.x == 0)
        out[blockIdx.x] = m;
}

/**
 * out[row] = sum of the row, with the tree of row_max_kernel. Each thread
 * adds ceil(cols / 256) elements in order, then 8 pairwise levels follow, so
 * an element goes through at most ceil(cols / 256) - 1 + 8 roundings: the
 * depth the error bound gamma_d sum |x| counts.
 */
static __global__ void __launch_bounds__(ROW_THREADS)
row_sum_kernel(const float *x, int64_t cols, int64_t ld, float *out)
{
    const int64_t row_start = (int64_t)blockIdx.x * ld;
    float s = 0.0f;
#pragma unroll 4
    for (int64_t c = threadIdx.x; c < cols; c += ROW_THREADS)
        s += x[row_start + c];

    s = block_reduce(REDUCE_SUM, s);
    if (threadIdx.x == 0)
        out[blockIdx.x] = s;
}

fa_status ref_row_max(const float *x, int64_t rows, int64_t cols, int64_t ld, float *out,
                      cudaStream_t stream)
{
    FA_TRY(row_max_validate(x, rows, cols, ld, out));
    if (rows == 0)
        return FA_OK;
    const unsigned blocks = (unsigned)rows; /* one block per row; validation capped rows at 2^31 - 1 */
    row_max_kernel<<<blocks, ROW_THREADS, 0, stream>>>(x, cols, ld, out);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

fa_status ref_row_sum(const float *x, int64_t rows, int64_t cols, int64_t ld, float *out,
                      cudaStream_t stream)
{
    FA_TRY(row_sum_validate(x, rows, cols, ld, out));
    if (rows == 0)
        return FA_OK;
    const unsigned blocks = (unsigned)rows;
    row_sum_kernel<<<blocks, ROW_THREADS, 0, stream>>>(x, cols, ld, out);
    FA_LAUNCH_CHECK();
    return FA_OK;
}
