/**
 * @file attention.cu
 * @brief Stage 03 reference kernels: M9 scores, M10 row softmax and M11 PV
 *        matmul, the baseline whose N x N memory traffic the rest of the
 *        course removes.
 *
 * | M   | kernel                  | idea                                            | block |
 * |-----|-------------------------|-------------------------------------------------|-------|
 * | M9  | attn_scores_tiled       | S = c Q K^T; 32x32 Q and K tiles in shared mem  | 32x32 |
 * | M10 | softmax_rows_three_pass | max, sum of exp, normalise; a mask is a prefix  | 256   |
 * | M11 | attn_pv_tiled           | O = P V; 32x32 P and V tiles; allowed keys only | 32x32 |
 * | M12 | (no kernel)             | M9, M10 in place, M11 via one N x N workspace   | -     |
 *
 * Only kernels live here: harness/launch.cu validates, computes the grids,
 * allocates M12's workspace and launches them, for these kernels and for the
 * learner's alike. M9 and M11 run one block per 32x32 output tile (one thread
 * per element), M10 one block per row of S. A tile grid covers every head of
 * every batch: block t handles tile t mod (tiles per head) of head t / (tiles
 * per head). The loops are grid-stride, so a problem with more tiles (or
 * rows) than the 2^31 - 1 blocks of a grid still runs; in practice each block
 * does one.
 *
 * Arithmetic order is fixed and mirrored by harness/model.c: a score and an
 * output element are each one fp32 FMA chain in index order; the softmax sums
 * each thread's strided slice in order, then the block tree of
 * common/fa_kernel.cuh (a butterfly in each warp, then one over the warp
 * totals). Which keys a row sees comes from common/fa_mask.h, the function
 * the model and the references call too.
 */
#include <math.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "attention.h"
#include "fa_index.h"
#include "fa_kernel.cuh"
#include "fa_mask.h"
#include "fa_math.h"

constexpr int TILE = NAIVE_ATTN_TILE;  /**< 32 x 32 outputs per block, reduced 32 at a time */
constexpr int TILE_PADDED = TILE + 1;  /**< +1 column: a column of the tile spans all 32 banks */
constexpr int SOFTMAX_THREADS = SOFTMAX_ROWS_THREADS;
constexpr int SOFTMAX_WARPS = SOFTMAX_THREADS / FA_WARP_THREADS;
static_assert(TILE * TILE <= 1024, "one thread per output of a tile");
static_assert(TILE == FA_WARP_THREADS,
              "a warp covers one row of a tile: broadcast and conflict-free reads");
static_assert(SOFTMAX_THREADS % FA_WARP_THREADS == 0, "whole warps");
static_assert((SOFTMAX_WARPS & (SOFTMAX_WARPS - 1)) == 0 && SOFTMAX_WARPS <= FA_WARP_THREADS,
              "the warp totals are reduced by one butterfly (fa_block_reduce)");

/* bf16 and fp16 widen to fp32 exactly, so the kernels compute in fp32 whatever they read. */

static __device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ==== M9 scores ============================================================================= */

/**
 * s[head][i][j] = scale * q[head][i] . k[head][j]. The block stages 32 rows
 * of Q and 32 rows of K, 32 dimensions at a time, in shared memory; thread
 * (ty, tx) then runs 32 FMAs for score (row0 + ty, col0 + tx). A warp is one
 * ty: it reads one q_tile element (a broadcast) and 32 k_tile rows at one d,
 * which the padding column spreads over the 32 banks.
 */
template <typename T>
static __global__ void __launch_bounds__(TILE *TILE)
    attn_scores_tiled(const T *__restrict__ q, const T *__restrict__ k, float *__restrict__ s,
                      naive_attn_dims dims, float scale)
{
    __shared__ float q_tile[TILE][TILE];        /* [query row][d] */
    __shared__ float k_tile[TILE][TILE_PADDED]; /* [key row][d] */
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t nq = dims.nq, nk = dims.nk, dim = dims.head_dim;
    const int64_t row_tiles = fa_ceil_div(nq, TILE), col_tiles = fa_ceil_div(nk, TILE);
    const int64_t tiles = dims.batch * dims.heads * row_tiles * col_tiles;

    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int64_t head = tile / (row_tiles * col_tiles); /* b * heads + h */
        const int64_t row0 = tile / col_tiles % row_tiles * TILE;
        const int64_t col0 = tile % col_tiles * TILE;
        const T *q_head = q + head * nq * dim;
        const T *k_head = k + head * nk * dim;

        float acc = 0.0f;
        for (int64_t d0 = 0; d0 < dim; d0 += TILE) {
            /* Thread (ty, tx) loads dimension d0 + tx of query row0 + ty and of key
             * col0 + ty: a warp reads 32 consecutive elements of one row. Zeros
             * outside the matrices add nothing to a sum. */
            const bool d_inside = d0 + tx < dim;
            q_tile[ty][tx] = (row0 + ty < nq && d_inside)
                                 ? fa_to_float(q_head[(row0 + ty) * dim + d0 + tx]) : 0.0f;
            k_tile[ty][tx] = (col0 + ty < nk && d_inside)
                                 ? fa_to_float(k_head[(col0 + ty) * dim + d0 + tx]) : 0.0f;
            __syncthreads();
#pragma unroll
            for (int d = 0; d < TILE; ++d)
                acc = fmaf(q_tile[ty][d], k_tile[tx][d], acc);
            __syncthreads(); /* the next step overwrites the tiles */
        }
        const int64_t i = row0 + ty, j = col0 + tx;
        if (i < nq && j < nk)
            s[(head * nq + i) * nk + j] = acc * scale;
    }
}

/* ==== M10 row softmax ======================================================================= */

/**
 * How many keys row @p i of batch @p b may see. Every mask of the course
 * allows a prefix of the keys (fa_mask_key_range() begins at 0), so its end
 * says it all: keys 0 .. end-1, cut at key_length[b] when there is padding
 * (a negative length counts as 0; one past nk changes nothing).
 */
static __device__ __forceinline__ int64_t allowed_keys(fa_mask mask, const int64_t *key_length,
                                                       int64_t b, int64_t i, int64_t nq,
                                                       int64_t nk)
{
    const int64_t end = fa_mask_key_range(mask, i, nq, nk).end;
    if (key_length == nullptr)
        return end;
    const int64_t length = key_length[b] > 0 ? key_length[b] : 0;
    return min64(end, length);
}

/**
 * One block per row of S: three passes over the row's allowed keys. Masked
 * scores are never read (they may hold anything, NaN included) and their
 * probabilities are written as exact zeros. @p s and @p p may be the same
 * array, so neither is __restrict__: in the last pass each element is read,
 * then overwritten, by the same thread.
 */
static __global__ void __launch_bounds__(SOFTMAX_THREADS)
    softmax_rows_three_pass(const float *s, float *p, float *lse, naive_attn_dims dims,
                            fa_mask mask, const int64_t *key_length)
{
    /* One scratch per reduction: between two uses of either, every thread passes
     * the barrier inside the other, so rows need no barrier of their own. */
    __shared__ float max_scratch[SOFTMAX_WARPS];
    __shared__ float sum_scratch[SOFTMAX_WARPS];
    const int64_t nq = dims.nq, nk = dims.nk;
    const int64_t rows = dims.batch * dims.heads * nq;

    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const int64_t b = row / (dims.heads * nq), i = row % nq;
        const int64_t allowed = allowed_keys(mask, key_length, b, i, nq, nk);
        const float *s_row = s + row * nk;
        float *p_row = p + row * nk;

        /* Pass 1: m = max of the allowed scores. fa_max_nan keeps a NaN score in
         * m (fmaxf would drop it): the course's one NaN policy (fa_math.h). */
        float m = -INFINITY;
        for (int64_t j = threadIdx.x; j < allowed; j += SOFTMAX_THREADS)
            m = fa_max_nan(m, s_row[j]);
        m = fa_block_max<SOFTMAX_THREADS>(m, max_scratch);

        /* Subtracting m makes every exponent <= 0, so exp never overflows (exp(89)
         * already does in fp32) and the largest term is exactly 1. With no allowed
         * key, or only -inf scores, m = -inf and s - m would be (-inf) - (-inf) =
         * NaN: shift by 0 instead, every term is exp(-inf) = 0, and l = 0 marks
         * the row as empty. A NaN m shifts by NaN: every term, l and the row are
         * NaN, as they must be. */
        const float shift = (m == -INFINITY) ? 0.0f : m;

        /* Pass 2: l = sum of exp(s - m), each thread over its strided slice. */
        float l = 0.0f;
        for (int64_t j = threadIdx.x; j < allowed; j += SOFTMAX_THREADS)
            l += expf(s_row[j] - shift);
        l = fa_block_sum<SOFTMAX_THREADS>(l, sum_scratch);

        /* Pass 3: p = exp(s - m) / l, recomputing the exponential rather than
         * storing it: a read of S is cheaper than a write and a read of P. An
         * empty row (l = 0) gets zeros, not 0 / 0. A NaN l leaves the row NaN. */
        const bool empty = (l == 0.0f);
        for (int64_t j = threadIdx.x; j < nk; j += SOFTMAX_THREADS)
            p_row[j] = (j < allowed && !empty) ? expf(s_row[j] - shift) / l : 0.0f;
        if (lse != nullptr && threadIdx.x == 0)
            lse[row] = empty ? -INFINITY : shift + logf(l);
    }
}

/* ==== M11 PV matmul ========================================================================= */

/**
 * o[head][i][c] = sum_j p[head][i][j] * v[head][j][c] over the keys j row i
 * may see: the prefix allowed_keys(), every key when @p mask is none and
 * @p key_length is NULL (M11 on its own). Every allowed term is added, a
 * weight of 0 included, so a NaN or Inf in an allowed row of v reaches o
 * (0 * NaN = NaN), and no masked row of v is ever multiplied, so padding full
 * of NaN cannot leak. The block stages 32 rows of P and 32 rows of V, 32 keys
 * at a time; a warp (one ty, so one query row and one allowed count) reads
 * one p_tile element (a broadcast) and 32 consecutive v_tile elements.
 */
template <typename T>
static __global__ void __launch_bounds__(TILE *TILE)
    attn_pv_tiled(const float *__restrict__ p, const T *__restrict__ v, float *__restrict__ o,
                  naive_attn_dims dims, fa_mask mask, const int64_t *__restrict__ key_length)
{
    __shared__ float p_tile[TILE][TILE]; /* [query row][key] */
    __shared__ float v_tile[TILE][TILE]; /* [key][column of v] */
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t nq = dims.nq, nk = dims.nk, dim = dims.head_dim;
    const int64_t row_tiles = fa_ceil_div(nq, TILE), col_tiles = fa_ceil_div(dim, TILE);
    const int64_t tiles = dims.batch * dims.heads * row_tiles * col_tiles;

    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int64_t head = tile / (row_tiles * col_tiles);
        const int64_t b = head / dims.heads;
        const int64_t row0 = tile / col_tiles % row_tiles * TILE;
        const int64_t col0 = tile % col_tiles * TILE;
        const float *p_head = p + head * nq * nk;
        const T *v_head = v + head * nk * dim;
        /* The allowed prefix never shrinks from one row to the next, so the
         * tile's last row bounds the key loop (causal tiles above the diagonal
         * stop early). Rows past nq see nothing and add nothing. */
        const int64_t i = row0 + ty;
        const int64_t row_allowed = i < nq ? allowed_keys(mask, key_length, b, i, nq, nk) : 0;
        const int64_t tile_allowed =
            allowed_keys(mask, key_length, b, min64(row0 + TILE, nq) - 1, nq, nk);

        float acc = 0.0f;
        for (int64_t j0 = 0; j0 < tile_allowed; j0 += TILE) {
            p_tile[ty][tx] = (j0 + tx < row_allowed) ? p_head[i * nk + j0 + tx] : 0.0f;
            v_tile[ty][tx] = (j0 + ty < tile_allowed && col0 + tx < dim)
                                 ? fa_to_float(v_head[(j0 + ty) * dim + col0 + tx]) : 0.0f;
            __syncthreads();
            /* Uniform across the warp: one row, one count. A key another row of
             * the tile may see is in v_tile, but this row never multiplies it. */
            const int64_t terms = min64(row_allowed - j0, TILE);
            if (terms == TILE) { /* every tile but a row's last: no per-term test */
#pragma unroll
                for (int j = 0; j < TILE; ++j)
                    acc = fmaf(p_tile[ty][j], v_tile[j][tx], acc);
            } else {
                for (int j = 0; j < terms; ++j)
                    acc = fmaf(p_tile[ty][j], v_tile[j][tx], acc);
            }
            __syncthreads(); /* the next step overwrites the tiles */
        }
        const int64_t c = col0 + tx;
        if (i < nq && c < dim)
            o[(head * nq + i) * dim + c] = acc;
    }
}
