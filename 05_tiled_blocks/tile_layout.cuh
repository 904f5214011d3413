/**
 * @file tile_layout.cuh
 * @brief What the blocks build on, given to the learner rather than
 *        written: the mma step and the register packing for bf16 and fp16
 *        fragments (level 1 widens its inputs with fa_to_float() of
 *        fa_kernel.cuh). The 16-byte chunk and the XOR swizzle of level 2's
 *        shared tiles, tile2_offset(), are in tiles.h, where the CPU tests
 *        reach them too.
 *
 * The reference blocks (tiles_1_cuda_cores.cuh, tiles_2_tensor_cores.cuh)
 * and the learner's include this one header, so the layout a learner's blocks
 * read is the layout the traces write back, by construction.
 */
#ifndef TILE_LAYOUT_CUH
#define TILE_LAYOUT_CUH

#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "fa_index.h"
#include "fa_kernel.cuh"
#include "tensor_core.cuh"
#include "tiles.h"

static_assert(TILE1_THREAD_COLS <= FA_WARP_THREADS && FA_WARP_THREADS % TILE1_THREAD_COLS == 0,
              "level 1: the threads of one row are lanes of one warp");

/** d += a b for one m16n8k16 step of element type T (bf16 or fp16). */
static __device__ __forceinline__ void tile2_mma(__nv_bfloat16, float d[4], const uint32_t a[4],
                                                 const uint32_t b[2])
{
    mma_m16n8k16_bf16(d, a, b);
}
static __device__ __forceinline__ void tile2_mma(__half, float d[4], const uint32_t a[4],
                                                 const uint32_t b[2])
{
    mma_m16n8k16_f16(d, a, b);
}

/** Two floats rounded to T and packed into one register, the lower column in the low half. */
static __device__ __forceinline__ uint32_t tile2_pack(__nv_bfloat16, float low, float high)
{
    const __nv_bfloat162 pair = __floats2bfloat162_rn(low, high);
    return *reinterpret_cast<const uint32_t *>(&pair);
}
static __device__ __forceinline__ uint32_t tile2_pack(__half, float low, float high)
{
    const __half2 pair = __floats2half2_rn(low, high);
    return *reinterpret_cast<const uint32_t *>(&pair);
}

/**
 * P's keys 16 kk .. 16 kk + 15 as an A fragment of m16n8k16 (and of wgmma's
 * register operand): its accumulator fragments of those keys, n8 fragments
 * @p low = 2 kk and @p high = 2 kk + 1, rounded to T, a row's two adjacent
 * keys per register. The accumulator layout of S is the A layout of P, so
 * no value moves between threads.
 */
template <typename T>
static __device__ __forceinline__ void tile2_p_fragment(const float low[4], const float high[4],
                                                        uint32_t a[4])
{
    a[0] = tile2_pack(T(), low[0], low[1]);
    a[1] = tile2_pack(T(), low[2], low[3]);
    a[2] = tile2_pack(T(), high[0], high[1]);
    a[3] = tile2_pack(T(), high[2], high[3]);
}

#endif /* TILE_LAYOUT_CUH */
