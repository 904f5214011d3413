/**
 * @file transpose_1_naive.cu
 * @brief M8 transpose, version 1: out[c][r] = in[r][c] straight through (reference kernel).
 *
 * | version | kernel                   | idea                                                                                 | tile    | threads |
 * |---------|--------------------------|--------------------------------------------------------------------------------------|---------|---------|
 * | 1       | `transpose_naive_kernel` | each thread copies in[r][c] to out[c][r]: reads coalesced, writes 4 * rows bytes apart | 32 x 32 | 32 x 8  |
 *
 * Both versions move a 32x32 tile per block with 32 x 8 threads, four
 * elements per thread (rows ty, ty+8, ty+16, ty+24), so the only difference
 * is where the tile turns. A transpose moves data and computes nothing: the
 * output must equal the input bit for bit (NaN payloads included).
 *
 * Only the kernel lives here: harness/launch.cu validates, sizes the grid of
 * TRANSPOSE_TILE x TRANSPOSE_TILE tiles (matrix.h), launches it, and copies a
 * 1 x N or N x 1 matrix without a kernel (its transpose has the same memory
 * image).
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "matrix.h"

/**
 * Thread (tx, ty) copies in[r][c] to out[c][r] for c = tile column + tx and
 * r = tile row + ty + 8 j. A warp (fixed ty, 32 tx) reads 32 consecutive
 * floats of one input row (one 128-byte transaction) but writes one float in
 * each of 32 output rows: 32 separate 32-byte sectors, 4 useful bytes in each.
 */
static __global__ void __launch_bounds__(TRANSPOSE_TILE *TRANSPOSE_ROWS)
    transpose_naive_kernel(const float *in, float *out, int64_t rows, int64_t cols)
{
    const int64_t c = (int64_t)blockIdx.x * TRANSPOSE_TILE + threadIdx.x;
    const int64_t row0 = (int64_t)blockIdx.y * TRANSPOSE_TILE + threadIdx.y;
    if (c >= cols)
        return;
#pragma unroll
    for (int j = 0; j < TRANSPOSE_TILE; j += TRANSPOSE_ROWS) {
        const int64_t r = row0 + j;
        if (r < rows)
            out[c * rows + r] = in[r * cols + c];
    }
}
