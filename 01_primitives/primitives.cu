/**
 * @file primitives.cu
 * @brief Stage 01 reference kernels: the solution of M1-M5.
 *
 * | version | kernel               | milestone | idea |
 * |---------|----------------------|-----------|------|
 * | 1       | `vector_add_kernel`  | M1 | grid-stride loop over `float4`, scalar tail of n mod 4 |
 * | 2       | `scale_array_kernel` | M2 | the same loop, one multiply per element |
 * | 3       | `exp_kernel<method>` | M3 | the same loop; `expf`, `exp2f(x * log2 e)` or `__expf` |
 * | 4       | `row_max_kernel`     | M4 | one block per row: strided slices, then the block's tree (fa_kernel.cuh); NaN kept |
 * | 5       | `row_sum_kernel`     | M5 | the same tree with + (error grows with its depth, not with the row length) |
 *
 * Only kernels live here: harness/launch.cu validates, computes the grid and
 * launches them, for these kernels and for the learner's alike. The tree of
 * M4 and M5 is fa_block_reduce() of common/fa_kernel.cuh, which later stages
 * call too: read it beside this file.
 */
#include <math.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_index.h"
#include "fa_kernel.cuh"
#include "primitives.h"

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


/* ---- M3 elementwise exp ------------------------------------------------------------------ */

/** exp(x) by @p METHOD: the three differ in accuracy (see model.h); the bench shows what they cost. */
template <fa_exp_method METHOD>
static __device__ __forceinline__ float exp_by(float x)
{
    if (METHOD == FA_EXP_EXPF)
        return expf(x); /* x log2 e formed with a two-part constant and FMAs: 2 ulp for every x */
    if (METHOD == FA_EXP_EXP2_PRESCALED)
        return exp2f(x * FA_LOG2E_F); /* e^x = 2^(x log2 e); the product rounds, an error that grows with |x| */
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

/* ---- M4 row max and M5 row sum: the reduction tree --------------------------------------- */

/**
 * out[row] = max of the row, one block per row. Thread t reads columns t,
 * t + 256, ...: in each step a warp reads 32 consecutive floats, 128
 * contiguous bytes, whatever alignment the row starts at.
 */
static __global__ void __launch_bounds__(ROW_THREADS)
row_max_kernel(const float *x, int64_t cols, int64_t ld, float *out)
{
    __shared__ float warp_results[ROW_WARPS];
    const int64_t row_start = (int64_t)blockIdx.x * ld;
    float m = -INFINITY;
#pragma unroll 4 /* several independent loads in flight per thread, the combines follow */
    for (int64_t c = threadIdx.x; c < cols; c += ROW_THREADS)
        m = fa_max_nan(m, x[row_start + c]); /* fmaxf would drop a NaN (fa_math.h) */

    m = fa_block_max<ROW_THREADS>(m, warp_results);
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
    __shared__ float warp_results[ROW_WARPS];
    const int64_t row_start = (int64_t)blockIdx.x * ld;
    float s = 0.0f;
#pragma unroll 4
    for (int64_t c = threadIdx.x; c < cols; c += ROW_THREADS)
        s += x[row_start + c];

    s = fa_block_sum<ROW_THREADS>(s, warp_results);
    if (threadIdx.x == 0)
        out[blockIdx.x] = s;
}
