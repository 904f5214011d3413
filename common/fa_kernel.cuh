/**
 * @file fa_kernel.cuh
 * @brief Device building blocks that several stages use: widening an input
 *        element to fp32, exp2 in one instruction, and reductions across
 *        lanes, warps and blocks, with one NaN policy (fa_math.h).
 *
 * \ref stage01 teaches how these work (M4, M5); later stages call them
 * instead of writing them again.
 *
 * Every reduction here is an xor butterfly: at each level lane i combines its
 * value with lane i ^ offset's, read from that lane's registers by
 * `__shfl_xor_sync`. After log2(LANES) levels every lane of each aligned group
 * of LANES lanes holds the group's result, the same bits on every lane (both
 * partners compute op(a, b) and op(b, a), and + and fa_max_nan() commute bit
 * for bit). Lane 0's tree is the pairwise tree (v0 + v16, then + (v8 + v24),
 * ...): a sum of 32 values goes through 5 roundings.
 *
 * NaN policy: the max reductions keep NaN (fa_max_nan()); the sums keep it
 * too, as IEEE addition does. fa_model.h replays these trees on the host, bit
 * for bit, for the CPU models of the stages.
 */
#ifndef FA_KERNEL_CUH
#define FA_KERNEL_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "fa_index.h"
#include "fa_math.h"

/** One input element widened to fp32: exact for fp32, bf16 and fp16 alike. */
static __device__ __forceinline__ float fa_to_float(float x) { return x; }
static __device__ __forceinline__ float fa_to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
static __device__ __forceinline__ float fa_to_float(__half x) { return __half2float(x); }

/**
 * 2^x as the one `ex2.approx.ftz.f32` (MUFU.EX2). exp2f() is `ex2.approx.f32`,
 * whose results below 2^-126 cost a compare and two multiplies around the
 * MUFU on every call. In a softmax such a weight is below 2^-126 of its
 * block's largest: flushed to +0, it moves o by at most 2^-126 |v - o| / l,
 * a term the bound carries for every weight that may fall that low
 * (FA_BOUND_TERM_FLUSHED in fa_bound.h). Normal results keep exp2f's 2 ulp;
 * 2^-inf = +0, 2^NaN = NaN.
 */
static __device__ __forceinline__ float fa_exp2_ftz(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

/**
 * op over each aligned group of @p LANES lanes (a power of two, 1..32): the
 * four lanes of a tensor-core quad (LANES = 4), or a whole warp (32). Every
 * lane receives its group's result. All 32 lanes of the warp must call it.
 */
template <fa_reduce_op OP, int LANES = FA_WARP_THREADS>
static __device__ __forceinline__ float fa_lanes_reduce(float value)
{
    static_assert(LANES >= 1 && LANES <= FA_WARP_THREADS && (LANES & (LANES - 1)) == 0,
                  "a group is a power of two of lanes within one warp");
#pragma unroll
    for (int offset = LANES / 2; offset > 0; offset /= 2)
        value = fa_reduce_combine(OP, value, __shfl_xor_sync(FA_FULL_WARP_MASK, value, offset));
    return value;
}

/** Sum over each aligned group of @p LANES lanes; every lane gets it. */
template <int LANES = FA_WARP_THREADS>
static __device__ __forceinline__ float fa_lanes_sum(float value)
{
    return fa_lanes_reduce<FA_REDUCE_SUM, LANES>(value);
}

/** Max over each aligned group of @p LANES lanes, NaN kept; every lane gets it. */
template <int LANES = FA_WARP_THREADS>
static __device__ __forceinline__ float fa_lanes_max(float value)
{
    return fa_lanes_reduce<FA_REDUCE_MAX, LANES>(value);
}

/**
 * op over the @p THREADS threads of a block (whole warps, at most 32 warps);
 * every thread receives the result. Each warp reduces its 32 values, lane 0
 * parks them in @p scratch (THREADS / 32 floats of shared memory), and after
 * one barrier every warp reduces the parked values itself, so no second
 * barrier is needed to hand the result out. Every thread of the block must
 * call it; before @p scratch is written again (another call), the block must
 * pass a __syncthreads().
 */
template <fa_reduce_op OP, int THREADS>
static __device__ __forceinline__ float fa_block_reduce(float value, float *scratch)
{
    constexpr int WARPS = THREADS / FA_WARP_THREADS;
    static_assert(THREADS % FA_WARP_THREADS == 0, "a block of whole warps");
    static_assert(WARPS >= 1 && WARPS <= FA_WARP_THREADS && (WARPS & (WARPS - 1)) == 0,
                  "the warps' results are reduced by one butterfly: a power of two up to 32");
    const int lane = threadIdx.x % FA_WARP_THREADS;
    const int warp = threadIdx.x / FA_WARP_THREADS;
    value = fa_lanes_reduce<OP>(value);
    if (lane == 0)
        scratch[warp] = value;
    __syncthreads(); /* every warp's result is parked before any warp reads them */
    /* Each group of WARPS lanes reads all the parked values in the same order,
     * so every lane ends with the same bits. */
    return fa_lanes_reduce<OP, WARPS>(scratch[lane % WARPS]);
}

/** Sum over a block of @p THREADS threads; every thread gets it (see fa_block_reduce()). */
template <int THREADS>
static __device__ __forceinline__ float fa_block_sum(float value, float *scratch)
{
    return fa_block_reduce<FA_REDUCE_SUM, THREADS>(value, scratch);
}

/** Max over a block of @p THREADS threads, NaN kept; every thread gets it. */
template <int THREADS>
static __device__ __forceinline__ float fa_block_max(float value, float *scratch)
{
    return fa_block_reduce<FA_REDUCE_MAX, THREADS>(value, scratch);
}

#endif /* FA_KERNEL_CUH */
