/**
 * @file flash_store.cuh
 * @brief How both versions' epilogues write O, given to the learner rather
 *        than written: one value rounded to the output type (version 1), and
 *        the staging of a tile of O in shared memory before its 16-byte
 *        stores (version 2).
 *
 * The reference kernels (flash_1_cuda_cores.cuh, flash_2_tensor_cores.cuh)
 * and the learner's include this one header.
 */
#ifndef FLASH_STORE_CUH
#define FLASH_STORE_CUH

#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "tile_layout.cuh"

/** An output value rounded to the output type (fp32: as is; bf16, fp16: to nearest even). */
static __device__ __forceinline__ void flash1_store(float *to, float x) { *to = x; }
static __device__ __forceinline__ void flash1_store(__nv_bfloat16 *to, float x)
{
    *to = __float2bfloat16_rn(x);
}
static __device__ __forceinline__ void flash1_store(__half *to, float x)
{
    *to = __float2half_rn(x);
}

/** Offset of element (row, col) of a staged fp32 O tile: 16-byte chunks of 4 floats, swizzled. */
static __device__ __forceinline__ int flash2_o32_offset(int row, int col, int d_pad)
{
    return row * d_pad + (((col / 4) ^ (row % 8)) * 4) + col % 4;
}

/** Columns col and col + 1 of one output row, rounded to TO, into the staging tile. */
static __device__ __forceinline__ void flash2_stage_pair(__nv_bfloat16 *tile, int row, int col,
                                                         int d_pad, float x, float y)
{
    *reinterpret_cast<uint32_t *>(tile + tile2_offset(row, col, d_pad)) =
        tile2_pack(__nv_bfloat16(), x, y);
}
static __device__ __forceinline__ void flash2_stage_pair(__half *tile, int row, int col, int d_pad,
                                                         float x, float y)
{
    *reinterpret_cast<uint32_t *>(tile + tile2_offset(row, col, d_pad)) =
        tile2_pack(__half(), x, y);
}
static __device__ __forceinline__ void flash2_stage_pair(float *tile, int row, int col, int d_pad,
                                                         float x, float y)
{
    *reinterpret_cast<float2 *>(tile + flash2_o32_offset(row, col, d_pad)) = make_float2(x, y);
}

/**
 * The warp's O fragments (MT m16 by D_PAD / 8 n8 fragments, its rows from
 * @p warp_row0, a multiple of 8), rounded to TO, into the staging tile
 * @p tile: lane 4 g + quad's pairs sit in rows warp_row0 + g + 8 r, at
 * column 2 quad of every chunk. A 16-bit tile is swizzled as the input
 * tiles are, and row g's pattern holds for all of those rows (tiles.h:
 * tile2_swizzle_group()), so each pair's offset is one of G per-lane
 * offsets plus a constant (tile2_chunk_step()), the immediate of its store.
 * An fp32 tile (flash2_o32_offset(), whose pattern repeats every 8 rows
 * too) is still staged pair by pair: the per-lane offsets were measured
 * for 16-bit tiles only.
 */
template <int D_PAD, int MT, typename TO>
static __device__ __forceinline__ void flash2_stage_o(TO *tile, const float (&o)[MT][D_PAD / 8][4],
                                                      int warp_row0, int lane)
{
    constexpr int G = tile2_swizzle_group(D_PAD);
    const int g = lane / 4, quad = lane % 4;
    int at[G]; /* chunk c < G of row warp_row0 + g, at column 2 quad */
#pragma unroll
    for (int c = 0; c < G; ++c)
        at[c] = tile2_offset(warp_row0 + g, c * TILE2_CHUNK + 2 * quad, D_PAD);
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int n = 0; n < D_PAD / 8; ++n)
#pragma unroll
            for (int hh = 0; hh < 2; ++hh) {
                const float x = o[i][n][2 * hh], y = o[i][n][2 * hh + 1];
                if constexpr (sizeof(TO) == 4)
                    flash2_stage_pair(tile, warp_row0 + 16 * i + g + 8 * hh, 8 * n + 2 * quad, D_PAD, x, y);
                else
                    *reinterpret_cast<uint32_t *>(tile + at[n % G] + tile2_chunk_step(n, 16 * i + 8 * hh, D_PAD)) =
                        tile2_pack(TO(), x, y);
            }
}

/** Offset of 16-byte chunk @p chunk of row @p row in a staged tile of TO. */
template <typename TO>
static __device__ __forceinline__ int flash2_chunk_offset(int row, int chunk, int d_pad)
{
    return sizeof(TO) == 4 ? flash2_o32_offset(row, chunk * 4, d_pad)
                           : tile2_offset(row, chunk * TILE2_CHUNK, d_pad);
}

#endif /* FLASH_STORE_CUH */
