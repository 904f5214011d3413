/**
 * @file matmul_2_smem_tiled.cu
 * @brief M7 matmul, version 2: tiles of A and B through shared memory (reference kernel).
 *
 * | version | kernel                     | idea                                                  | block tile (M x N x K) | threads | outputs per thread |
 * |---------|----------------------------|-------------------------------------------------------|------------------------|---------|--------------------|
 * | 2       | `matmul_smem_tiled_kernel` | 32x32 tiles in shared memory: each load feeds 32 FMAs | 32 x 32 x 32           | 1024    | 1                  |
 *
 * Tiles that stick out of the matrices are zero-filled on load (a zero
 * contributes nothing to the sum) and masked on store, so M, N and K need not
 * be multiples of 32. The FMA chain of each output runs over k in increasing
 * order, as in version 1: the same bits.
 *
 * Only the kernel lives here: harness/launch.cu validates, sizes the grid of
 * MATMUL_TILED_TILE x MATMUL_TILED_TILE tiles (matrix.h) and launches it.
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "matrix.h"

/** +1 column: a column of the B tile then spans all 32 banks (see the kernel). */
constexpr int TILED_PADDED = MATMUL_TILED_TILE + 1;

/**
 * Each block stages a 32x32 tile of A and of B in shared memory, then every
 * thread runs 32 FMAs out of it: each global load now feeds 32 FMAs instead
 * of one. For NT, B arrives as rows of B^T; the thread that read B^T[col][kk]
 * (coalesced along kk) stores it at b_tile[kk][col], down a column of the
 * tile. Without the padding column those 32 stores would all hit one bank.
 */
template <fa_b_layout LAYOUT>
static __global__ void __launch_bounds__(MATMUL_TILED_TILE *MATMUL_TILED_TILE)
    matmul_smem_tiled_kernel(const float *a, const float *b, float *c, int64_t m, int64_t n,
                             int64_t k)
{
    __shared__ float a_tile[MATMUL_TILED_TILE][MATMUL_TILED_TILE]; /* [row][kk] */
    __shared__ float b_tile[MATMUL_TILED_TILE][TILED_PADDED];      /* [kk][col] */
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t row = (int64_t)blockIdx.y * MATMUL_TILED_TILE + ty;
    const int64_t col = (int64_t)blockIdx.x * MATMUL_TILED_TILE + tx;

    float acc = 0.0f;
    for (int64_t k0 = 0; k0 < k; k0 += MATMUL_TILED_TILE) {
        a_tile[ty][tx] = (row < m && k0 + tx < k) ? a[row * k + k0 + tx] : 0.0f;
        if constexpr (LAYOUT == FA_B_ROW_MAJOR) {
            b_tile[ty][tx] = (k0 + ty < k && col < n) ? b[(k0 + ty) * n + col] : 0.0f;
        } else {
            const int64_t b_row = (int64_t)blockIdx.x * MATMUL_TILED_TILE + ty; /* a row of B^T */
            b_tile[tx][ty] = (b_row < n && k0 + tx < k) ? b[b_row * k + k0 + tx] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < MATMUL_TILED_TILE; ++kk)
            acc = fmaf(a_tile[ty][kk], b_tile[kk][tx], acc);
        __syncthreads(); /* the next iteration overwrites the tiles */
    }
    if (row < m && col < n)
        c[row * n + col] = acc;
}
