/**
 * @file matmul_1_naive.cu
 * @brief M7 matmul, version 1: one thread per output (reference kernel).
 *
 * | version | kernel                | idea                                                 | block tile (M x N x K) | threads | outputs per thread |
 * |---------|-----------------------|------------------------------------------------------|------------------------|---------|--------------------|
 * | 1       | `matmul_naive_kernel` | one thread per output, operands straight from global | 32 x 32 x -            | 1024    | 1                  |
 *
 * B is read either row-major ([K][N], "NN") or transposed ([N][K], "NT",
 * C = A * B^T as in Q K^T): the layout is a template parameter, so the
 * kernel is compiled once per layout with no runtime branch in its loop.
 * Each output is one fp32 FMA chain over k in increasing order, the order
 * every fp32 version keeps (harness/model.c replays it bit for bit).
 *
 * Only the kernel lives here: harness/launch.cu validates, sizes the grid of
 * MATMUL_NAIVE_TILE x MATMUL_NAIVE_TILE tiles (matrix.h) and launches it.
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "matrix.h"

/** B[kk][col] of C = A * B whichever way B is stored (@p n, @p k: sizes of the product). */
template <fa_b_layout LAYOUT>
static __device__ __forceinline__ float b_element(const float *b, int64_t kk, int64_t col,
                                                  int64_t n, int64_t k)
{
    if constexpr (LAYOUT == FA_B_ROW_MAJOR)
        return b[kk * n + col];
    else
        return b[col * k + kk];
}

/**
 * c[row][col] = sum_k a[row][k] * B[k][col]. threadIdx.x runs along a row of
 * C, so a warp reads one a[row][k] (a broadcast) and 32 consecutive
 * B[k][col] (coalesced for NN; for NT the 32 reads are k apart: version 2
 * fixes that with shared memory).
 */
template <fa_b_layout LAYOUT>
static __global__ void __launch_bounds__(MATMUL_NAIVE_TILE *MATMUL_NAIVE_TILE)
    matmul_naive_kernel(const float *a, const float *b, float *c, int64_t m, int64_t n,
                        int64_t k)
{
    const int64_t row = (int64_t)blockIdx.y * MATMUL_NAIVE_TILE + threadIdx.y;
    const int64_t col = (int64_t)blockIdx.x * MATMUL_NAIVE_TILE + threadIdx.x;
    if (row >= m || col >= n)
        return;
    float acc = 0.0f;
    for (int64_t kk = 0; kk < k; ++kk)
        acc = fmaf(a[row * k + kk], b_element<LAYOUT>(b, kk, col, n, k), acc);
    c[row * n + col] = acc;
}
