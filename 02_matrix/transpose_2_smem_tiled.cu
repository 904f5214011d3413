/**
 * @file transpose_2_smem_tiled.cu
 * @brief M8 transpose, version 2: a tile through shared memory (reference kernel).
 *
 * | version | kernel                        | idea                                                                                                 | tile    | threads |
 * |---------|-------------------------------|------------------------------------------------------------------------------------------------------|---------|---------|
 * | 2       | `transpose_smem_tiled_kernel` | a 32x32 tile through shared memory, padded to 33 columns: reads and writes coalesced, no bank conflicts | 32 x 32 | 32 x 8  |
 *
 * The same blocks and threads as version 1 (32 x 8 threads move a 32x32
 * tile); the tile turns in shared memory instead of on the way to global
 * memory, so the writes are as coalesced as the reads.
 *
 * Only the kernel lives here: harness/launch.cu validates, sizes the grid of
 * TRANSPOSE_TILE x TRANSPOSE_TILE tiles (matrix.h) and launches it.
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "matrix.h"

/** Shared row length: one padding column (see the kernel). */
constexpr int TRANSPOSE_PADDED = TRANSPOSE_TILE + 1;

/**
 * The block reads its 32x32 input tile row by row (coalesced) into shared
 * memory, then writes the output tile row by row (coalesced): thread tx of
 * the write phase reads the tile down a column, tile[tx][ty + 8 j]. With 32
 * floats per shared row those 32 reads would all sit in one bank (a 32-way
 * conflict); with 33 they step one bank per row and hit 32 different banks.
 */
static __global__ void __launch_bounds__(TRANSPOSE_TILE *TRANSPOSE_ROWS)
    transpose_smem_tiled_kernel(const float *in, float *out, int64_t rows, int64_t cols)
{
    __shared__ float tile[TRANSPOSE_TILE][TRANSPOSE_PADDED];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t tile_row = (int64_t)blockIdx.y * TRANSPOSE_TILE;
    const int64_t tile_col = (int64_t)blockIdx.x * TRANSPOSE_TILE;

#pragma unroll
    for (int j = 0; j < TRANSPOSE_TILE; j += TRANSPOSE_ROWS) {
        const int64_t r = tile_row + ty + j, c = tile_col + tx;
        if (r < rows && c < cols)
            tile[ty + j][tx] = in[r * cols + c];
    }
    __syncthreads();
    /* out is [cols][rows]: its tile starts at row tile_col, column tile_row. */
#pragma unroll
    for (int j = 0; j < TRANSPOSE_TILE; j += TRANSPOSE_ROWS) {
        const int64_t out_row = tile_col + ty + j, out_col = tile_row + tx;
        if (out_row < cols && out_col < rows)
            out[out_row * rows + out_col] = tile[tx][ty + j];
    }
}
