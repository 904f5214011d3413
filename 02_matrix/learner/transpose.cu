/**
 * @file learner/transpose.cu
 * @brief EXERCISE M8 transpose: your kernels go here (see \ref stage02).
 *
 * The launchers below are complete: each validates, sizes a grid of 32x32
 * tiles (x over the input's columns, y over its rows) with 32 x 8 threads,
 * and launches your kernel. Write version 1, delete its FA_TODO line, run
 * `stage02 --milestone 8`; then version 2.
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_device.h"
#include "matrix.h"
#include "fa_index.h"

constexpr int TRANSPOSE_TILE = 32;       /**< a block moves a 32 x 32 tile */
constexpr int TRANSPOSE_ROWS = 8;        /**< threads per block along the tile's rows */
static_assert(TRANSPOSE_TILE % TRANSPOSE_ROWS == 0, "each thread moves TILE / ROWS elements");
static_assert(MATRIX_MAX_ROWS / TRANSPOSE_TILE <= 65535, "row tiles fit the grid's y dimension");

/**
 * Version 1: out[c][r] = in[r][c], in is [rows][cols], out is [cols][rows].
 *
 * TODO(M8 v1): c = blockIdx.x * 32 + threadIdx.x; for j = 0, 8, 16, 24:
 * r = blockIdx.y * 32 + threadIdx.y + j; copy when r < rows and c < cols.
 * 64-bit offsets (r * cols + c can pass 2^31).
 */
static __global__ void __launch_bounds__(TRANSPOSE_TILE *TRANSPOSE_ROWS)
    transpose_naive_kernel(const float *in, float *out, int64_t rows, int64_t cols)
{
    (void)in;
    (void)out;
    (void)rows;
    (void)cols;
}

/**
 * Version 2: the same through a shared tile, so that the writes are
 * coalesced too.
 *
 * TODO(M8 v2): `__shared__ float tile[32][33];` (why 33: the page, "Bank
 * conflicts"). Read the input tile row by row into tile[ty + j][tx];
 * __syncthreads(); write the output tile row by row: the output tile starts
 * at row blockIdx.x * 32, column blockIdx.y * 32 of out, and its element
 * (ty + j, tx) is tile[tx][ty + j]. Guard both phases against the edges.
 */
static __global__ void __launch_bounds__(TRANSPOSE_TILE *TRANSPOSE_ROWS)
    transpose_smem_tiled_kernel(const float *in, float *out, int64_t rows, int64_t cols)
{
    (void)in;
    (void)out;
    (void)rows;
    (void)cols;
}

/** Grid of 32x32 tiles: x over the input's columns, y over its rows. */
static dim3 transpose_grid(int64_t rows, int64_t cols)
{
    return dim3((unsigned)fa_ceil_div(cols, TRANSPOSE_TILE), (unsigned)fa_ceil_div(rows, TRANSPOSE_TILE));
}

/** The complete launch code, as in the reference: validation, grid, launch. */
static fa_status run_transpose_naive(const float *in, float *out, int64_t rows, int64_t cols,
                                     cudaStream_t stream)
{
    FA_TRY(transpose_validate("transpose_naive", in, out, rows, cols));
    if (rows == 0 || cols == 0)
        return FA_OK;
    const dim3 block(TRANSPOSE_TILE, TRANSPOSE_ROWS);
    transpose_naive_kernel<<<transpose_grid(rows, cols), block, 0, stream>>>(in, out, rows, cols);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

/** The complete launch code, as in the reference: validation, grid, launch. */
static fa_status run_transpose_smem_tiled(const float *in, float *out, int64_t rows, int64_t cols,
                                          cudaStream_t stream)
{
    FA_TRY(transpose_validate("transpose_smem_tiled", in, out, rows, cols));
    if (rows == 0 || cols == 0)
        return FA_OK;
    const dim3 block(TRANSPOSE_TILE, TRANSPOSE_ROWS);
    transpose_smem_tiled_kernel<<<transpose_grid(rows, cols), block, 0, stream>>>(in, out, rows,
                                                                                 cols);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

extern "C" fa_status learner_transpose_naive(const float *in, float *out, int64_t rows,
                                             int64_t cols, cudaStream_t stream)
{
    FA_TODO("M8 transpose, version 1 (transpose_naive)");
    return run_transpose_naive(in, out, rows, cols, stream);
}

extern "C" fa_status learner_transpose_smem_tiled(const float *in, float *out, int64_t rows,
                                                  int64_t cols, cudaStream_t stream)
{
    FA_TODO("M8 transpose, version 2 (transpose_smem_tiled)");
    return run_transpose_smem_tiled(in, out, rows, cols, stream);
}
