/**
 * @file transpose.cu
 * @brief M8 transpose, out[c][r] = in[r][c] (reference).
 *
 * | version | kernel                          | idea                                                  | tile    | threads |
 * |---------|---------------------------------|-------------------------------------------------------|---------|---------|
 * | 1       | transpose_naive_kernel          | each thread copies in[r][c] to out[c][r]: reads coalesced, writes 4*rows bytes apart | 32 x 32 | 32 x 8 |
 * | 2       | transpose_smem_tiled_kernel     | a 32x32 tile through shared memory, padded to 33 columns: reads and writes coalesced, no bank conflicts | 32 x 32 | 32 x 8 |
 *
 * Both move a 32x32 tile per block with 32 x 8 threads, four elements per
 * thread (rows ty, ty+8, ty+16, ty+24), so the only difference is where the
 * tile turns. A transpose moves data and computes nothing: the output must
 * equal the input bit for bit (NaN payloads included).
 *
 * A 1 x N or N x 1 matrix is the one case where the tile grid is a poor fit:
 * its transpose is the same N floats in the same order, but 31 of the 32
 * rows (or columns) of every tile lie outside it, so 31/32 of the threads
 * would idle. Both launchers hand that case to a plain device-to-device copy
 * (transpose_vector()).
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_device.h"
#include "matrix.h"
#include "fa_index.h"

constexpr int TRANSPOSE_TILE = 32;       /**< a block moves a 32 x 32 tile */
constexpr int TRANSPOSE_ROWS = 8;        /**< threads per block along the tile's rows */
constexpr int TRANSPOSE_PADDED = TRANSPOSE_TILE + 1; /**< shared row length: see the kernel */
static_assert(TRANSPOSE_TILE % TRANSPOSE_ROWS == 0, "each thread moves TILE / ROWS elements");
static_assert(MATRIX_MAX_ROWS / TRANSPOSE_TILE <= 65535, "row tiles fit the grid's y dimension");

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

/**
 * The transpose of a matrix with one row or one column (@p count floats) has
 * the same memory image as the matrix, so it is a copy: cudaMemcpyAsync moves
 * it at copy bandwidth, with wide vector accesses and every thread busy.
 */
static fa_status transpose_vector(const float *in, float *out, int64_t count, cudaStream_t stream)
{
    FA_CUDA_TRY(cudaMemcpyAsync(out, in, (size_t)count * sizeof(float), cudaMemcpyDeviceToDevice,
                                stream));
    return FA_OK;
}

/** Grid of 32x32 tiles: x over the input's columns, y over its rows. */
static dim3 transpose_grid(int64_t rows, int64_t cols)
{
    return dim3((unsigned)fa_ceil_div(cols, TRANSPOSE_TILE), (unsigned)fa_ceil_div(rows, TRANSPOSE_TILE));
}

extern "C" fa_status ref_transpose_naive(const float *in, float *out, int64_t rows, int64_t cols,
                                         cudaStream_t stream)
{
    FA_TRY(transpose_validate("transpose_naive", in, out, rows, cols));
    if (rows == 0 || cols == 0)
        return FA_OK;
    if (rows == 1 || cols == 1)
        return transpose_vector(in, out, rows * cols, stream);
    const dim3 block(TRANSPOSE_TILE, TRANSPOSE_ROWS);
    transpose_naive_kernel<<<transpose_grid(rows, cols), block, 0, stream>>>(in, out, rows, cols);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

extern "C" fa_status ref_transpose_smem_tiled(const float *in, float *out, int64_t rows,
                                              int64_t cols, cudaStream_t stream)
{
    FA_TRY(transpose_validate("transpose_smem_tiled", in, out, rows, cols));
    if (rows == 0 || cols == 0)
        return FA_OK;
    if (rows == 1 || cols == 1)
        return transpose_vector(in, out, rows * cols, stream);
    const dim3 block(TRANSPOSE_TILE, TRANSPOSE_ROWS);
    transpose_smem_tiled_kernel<<<transpose_grid(rows, cols), block, 0, stream>>>(in, out, rows,
                                                                                 cols);
    FA_LAUNCH_CHECK();
    return FA_OK;
}
