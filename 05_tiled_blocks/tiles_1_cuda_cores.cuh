/**
 * @file tiles_1_cuda_cores.cuh
 * @brief Version 1 of the blocks M17-M22: one tile of attention on CUDA
 *        cores, in fp32, with every block a `__device__` function that all
 *        TILE1_THREADS threads of a block call together.
 *
 * | milestone | block | what it does |
 * |---|---|---|
 * | M17 | tile1_load() | global -> padded shared rows, widened to fp32, 16-byte loads, rows past the end zero |
 * | M18 | tile1_scores() | S = Q K^T of the tile: 4 x 2 scores per thread; keys past nk are -inf |
 * | M19 | tile1_rowmax() | m_new = max(m_old, rowmax S), across the 16 threads of a row |
 * | M20 | tile1_exp() | p = exp2(S c - m c), alpha = exp2((m_old - m_new) c) |
 * | M21 | tile1_rowsum() | l = alpha l + rowsum p |
 * | M22 | tile1_accumulate_pv(), tile1_normalise() | O = alpha O + P V through shared P; then O / l and lse |
 *
 * Thread t of the block is (ty, tx) = (t / 16, t % 16). It owns query rows
 * 4 ty .. 4 ty + 3 of the tile and, of each key tile, keys tx and tx + 16;
 * of the output, the columns tx, tx + 16, tx + 32, ... of its rows. The 16
 * threads of one ty are 16 consecutive lanes of one warp, so the reductions
 * over a row are shuffles within those lanes (fa_lanes_reduce() with 16).
 *
 * Shared tiles are fp32 rows of stride tile1_stride() (tiles.h) = D + 1
 * floats: one float of padding per row, so that the 16 threads reading column k of 16
 * different K rows hit 16 different banks (\ref stage05, "Banks").
 */
#ifndef TILES_1_CUDA_CORES_CUH
#define TILES_1_CUDA_CORES_CUH

#include <math.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "fa_kernel.cuh"
#include "online_state.cuh"
#include "tile_layout.cuh"
#include "tiles.h"

/**
 * M17: copies @p rows_valid rows of @p d elements from @p src (row r at
 * src + r src_stride: d for a contiguous [rows][d] tensor, heads * d for
 * [tokens][heads][d]) into the shared tile @p tile (stride @p stride floats),
 * widened to fp32, and writes zeros into the rows from @p rows_valid to
 * @p rows. Zero rows of Q give scores of 0 for rows nobody reads; zero rows
 * of K and V are what a masked key may hold: M18 gives their scores -inf,
 * so their weight is exactly 0 and 0 * 0 adds nothing to O (a NaN or a
 * stale value there would add NaN).
 *
 * The threads take the tile in 16-byte chunks, consecutive threads
 * consecutive chunks: each warp reads 512 contiguous bytes. With
 * @p vector_loads (d and src_stride multiples of the chunk and src 16-byte
 * aligned, decided by the launcher) a chunk is one 16-byte load; otherwise its elements are
 * read one by one. Every thread of the block must call it; the caller puts
 * a __syncthreads() between this and the first read of the tile.
 */
template <typename T>
static __device__ void tile1_load(float *tile, int stride, const T *src, int64_t src_stride,
                                  int rows_valid, int rows, int d, bool vector_loads)
{
    constexpr int VECTOR = 16 / sizeof(T); /* elements per 16-byte chunk */
    const int chunks_per_row = (int)fa_ceil_div(d, VECTOR);
    for (int chunk = threadIdx.x; chunk < rows * chunks_per_row; chunk += blockDim.x) {
        const int row = chunk / chunks_per_row;
        const int col = (chunk % chunks_per_row) * VECTOR;
        float *to = tile + row * stride + col;
        const int width = d - col < VECTOR ? d - col : VECTOR;
        if (row >= rows_valid) {
            for (int i = 0; i < width; ++i)
                to[i] = 0.0f;
        } else if (vector_loads) {
            const uint4 bits = *reinterpret_cast<const uint4 *>(src + row * src_stride + col);
            const T *values = reinterpret_cast<const T *>(&bits);
#pragma unroll
            for (int i = 0; i < VECTOR; ++i)
                to[i] = fa_to_float(values[i]);
        } else {
            for (int i = 0; i < width; ++i)
                to[i] = fa_to_float(src[row * src_stride + col + i]);
        }
    }
}

/**
 * M18: the raw scores of the thread's 4 rows and 2 keys,
 * s[r][c] = q_(4 ty + r) . k_(tx + 16 c), each one FMA chain over the head
 * dimension in order (k = 0, 1, ..., d - 1), the order the CPU model
 * replays. A key at or past @p nk (key index @p key0 + tx + 16 c) gets -inf:
 * its K row is zero, and a score of 0 would weigh exp(0 - m) > 0.
 *
 * Per step k a thread reads 4 Q values (the same for the 16 threads of its
 * row: a broadcast) and 2 K values (16 rows of K at one column: 16 banks
 * thanks to the padding) for 8 FMAs.
 */
static __device__ __forceinline__ void tile1_scores(float s[TILE1_ROWS_PER_THREAD][TILE1_KEYS_PER_THREAD],
                                                    const float *q_tile, const float *k_tile,
                                                    int stride, int d, int64_t key0, int64_t nk)
{
    const int ty = threadIdx.x / TILE1_THREAD_COLS, tx = threadIdx.x % TILE1_THREAD_COLS;
#pragma unroll
    for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r)
#pragma unroll
        for (int c = 0; c < TILE1_KEYS_PER_THREAD; ++c)
            s[r][c] = 0.0f;
    const float *q = q_tile + ty * TILE1_ROWS_PER_THREAD * stride;
    const float *k = k_tile + tx * stride;
#pragma unroll 4
    for (int i = 0; i < d; ++i) {
        float q_col[TILE1_ROWS_PER_THREAD], k_col[TILE1_KEYS_PER_THREAD];
#pragma unroll
        for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r)
            q_col[r] = q[r * stride + i];
#pragma unroll
        for (int c = 0; c < TILE1_KEYS_PER_THREAD; ++c)
            k_col[c] = k[c * TILE1_THREAD_COLS * stride + i];
#pragma unroll
        for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r)
#pragma unroll
            for (int c = 0; c < TILE1_KEYS_PER_THREAD; ++c)
                s[r][c] = fmaf(q_col[r], k_col[c], s[r][c]);
    }
#pragma unroll
    for (int c = 0; c < TILE1_KEYS_PER_THREAD; ++c)
        if (key0 + tx + c * TILE1_THREAD_COLS >= nk)
#pragma unroll
            for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r)
                s[r][c] = -INFINITY;
}

/**
 * M19: the running max of each of the thread's rows after this tile,
 * m_new = max(m_old, max of the row's BC scores). The thread's own 2
 * scores first, then the 16 threads of the row by shuffles; every one of
 * them ends with the same m_new. The -inf rule and the NaN rule are those
 * of stage 04 (online_running_max()): a row whose scores so far are all
 * -inf keeps m = -inf, a NaN score makes m NaN.
 */
static __device__ __forceinline__ void tile1_rowmax(const float s[TILE1_ROWS_PER_THREAD][TILE1_KEYS_PER_THREAD],
                                                    const float m_old[TILE1_ROWS_PER_THREAD],
                                                    float m_new[TILE1_ROWS_PER_THREAD])
{
#pragma unroll
    for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r) {
        float tile_max = s[r][0];
#pragma unroll
        for (int c = 1; c < TILE1_KEYS_PER_THREAD; ++c)
            tile_max = fa_max_nan(tile_max, s[r][c]);
        m_new[r] = online_running_max(m_old[r], fa_lanes_max<TILE1_THREAD_COLS>(tile_max));
    }
}

/**
 * M20: turns the scores into weights in place, s <- p = exp2(s c - m_new c),
 * and returns the correction factors alpha = exp2((m_old - m_new) c), with
 * c = scale log2(e). m_new c is formed once per row, so each weight costs one
 * FFMA and one exp2. The -inf rule: while a row has no allowed key m_new is
 * -inf, and online_max_offset() subtracts 0 instead (a masked score then
 * weighs exp2(-inf) = 0, an empty state's alpha is 0, never NaN).
 * alpha is formed from the difference first, so a max that did not rise
 * gives exactly (m - m) c = 0 and alpha = 1.
 */
static __device__ __forceinline__ void tile1_exp(float s[TILE1_ROWS_PER_THREAD][TILE1_KEYS_PER_THREAD],
                                                 const float m_old[TILE1_ROWS_PER_THREAD],
                                                 const float m_new[TILE1_ROWS_PER_THREAD], float c,
                                                 float alpha[TILE1_ROWS_PER_THREAD])
{
#pragma unroll
    for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r) {
        const float offset = online_max_offset(m_new[r]);
        const float max_scaled = offset * c;
        alpha[r] = exp2f((m_old[r] - offset) * c);
#pragma unroll
        for (int k = 0; k < TILE1_KEYS_PER_THREAD; ++k)
            s[r][k] = exp2f(fmaf(s[r][k], c, -max_scaled));
    }
}

/**
 * M21: the running sum of each row, l <- alpha l + (sum of the row's BC
 * weights): the thread's 2 weights, then the 16 threads of the row by
 * shuffles, then one FMA (online_update_sum()). Every thread of the row
 * ends with the same l.
 */
static __device__ __forceinline__ void tile1_rowsum(float l[TILE1_ROWS_PER_THREAD],
                                                    const float alpha[TILE1_ROWS_PER_THREAD],
                                                    const float p[TILE1_ROWS_PER_THREAD][TILE1_KEYS_PER_THREAD])
{
#pragma unroll
    for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r) {
        float tile_sum = p[r][0];
#pragma unroll
        for (int c = 1; c < TILE1_KEYS_PER_THREAD; ++c)
            tile_sum += p[r][c];
        l[r] = online_update_sum(l[r], alpha[r], fa_lanes_sum<TILE1_THREAD_COLS>(tile_sum));
    }
}

/**
 * M22: O <- alpha O + P V for the thread's rows and its output columns
 * tx, tx + 16, ... (< d). P is spread over the 16 threads of a row, and each
 * output column needs the whole row of P: the weights go through the shared
 * tile @p p_tile (stride TILE1_P_STRIDE), one barrier, then every thread
 * reads its rows of P (a broadcast) and rows of V at consecutive columns
 * (consecutive banks). O is rescaled in place first, then accumulated by
 * FMAs in key order: one accumulator per output, not two.
 * Every thread of the block must call it; before @p p_tile is written again
 * the block must pass a __syncthreads() (the next tile's load has one).
 */
template <int D_MAX>
static __device__ __forceinline__ void tile1_accumulate_pv(float o[TILE1_ROWS_PER_THREAD][D_MAX / TILE1_THREAD_COLS],
                                                           const float alpha[TILE1_ROWS_PER_THREAD],
                                                           const float p[TILE1_ROWS_PER_THREAD][TILE1_KEYS_PER_THREAD],
                                                           float *p_tile, const float *v_tile,
                                                           int stride, int d)
{
    const int ty = threadIdx.x / TILE1_THREAD_COLS, tx = threadIdx.x % TILE1_THREAD_COLS;
#pragma unroll
    for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r)
#pragma unroll
        for (int c = 0; c < TILE1_KEYS_PER_THREAD; ++c)
            p_tile[(ty * TILE1_ROWS_PER_THREAD + r) * TILE1_P_STRIDE + tx + c * TILE1_THREAD_COLS] =
                p[r][c];
    __syncthreads(); /* every weight of the tile is in shared memory */

#pragma unroll
    for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r)
#pragma unroll
        for (int c = 0; c < D_MAX / TILE1_THREAD_COLS; ++c)
            o[r][c] *= alpha[r];
    const float *p_rows = p_tile + ty * TILE1_ROWS_PER_THREAD * TILE1_P_STRIDE;
    for (int j = 0; j < TILE1_BC; ++j) {
        float p_col[TILE1_ROWS_PER_THREAD];
#pragma unroll
        for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r)
            p_col[r] = p_rows[r * TILE1_P_STRIDE + j];
        const float *v_row = v_tile + j * stride;
#pragma unroll
        for (int c = 0; c < D_MAX / TILE1_THREAD_COLS; ++c) {
            const int col = tx + c * TILE1_THREAD_COLS;
            if (col < d) {
                const float v = v_row[col];
#pragma unroll
                for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r)
                    o[r][c] = fmaf(p_col[r], v, o[r][c]);
            }
        }
    }
}

/**
 * M22, the end of the row: o / l (one reciprocal, then a multiply per
 * column) and lse = scale m + ln l. A row with no allowed key (l = 0) gets
 * o = 0 and lse = -inf, never NaN.
 */
template <int D_MAX>
static __device__ __forceinline__ void tile1_normalise(float o[TILE1_ROWS_PER_THREAD][D_MAX / TILE1_THREAD_COLS],
                                                       const float m[TILE1_ROWS_PER_THREAD],
                                                       const float l[TILE1_ROWS_PER_THREAD],
                                                       float scale, float lse[TILE1_ROWS_PER_THREAD])
{
#pragma unroll
    for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r) {
        const float inverse = l[r] == 0.0f ? 0.0f : 1.0f / l[r];
#pragma unroll
        for (int c = 0; c < D_MAX / TILE1_THREAD_COLS; ++c)
            o[r][c] *= inverse;
        lse[r] = l[r] == 0.0f ? -INFINITY : fmaf(scale, m[r], logf(l[r]));
    }
}

#endif /* TILES_1_CUDA_CORES_CUH */
