/**
 * @file tiles_2_tensor_cores.cuh
 * @brief Version 2 of the blocks M17-M22: one tile of attention on the
 *        tensor cores (mma.sync m16n8k16, bf16 or fp16 in, fp32 accumulate),
 *        the structure of FlashAttention-2.
 *
 * | milestone | block | what it does |
 * |---|---|---|
 * | M17 | tile2_load_async() | global -> XOR-swizzled shared rows by cp.async (16 bytes a thread), zero-filled past the end |
 * | M18 | tile2_scores(), tile2_mask_keys() | S = Q K^T into mma accumulators: ldmatrix for Q and K, 16 x 8 x 16 mma steps; keys past nk -inf |
 * | M19 | tile2_rowmax() | m_new = max(m_old, rowmax S) across the 4 threads of a quad |
 * | M20 | tile2_exp() | p = exp2(S c - m c) in the accumulators, alpha per row |
 * | M21 | tile2_rowsum() | each thread's partial l <- alpha l + (its own weights); the quad is summed once, at the end |
 * | M22 | tile2_accumulate_pv(), tile2_normalise() | O = alpha O + P V: P converted in registers into the A operand, V by ldmatrix.trans |
 *
 * A warp owns MT x 16 query rows of the tile (MT m16 fragments; the traces
 * of this stage use MT = 1, four warps of 16 rows) against NT x 8 keys (NT
 * n8 fragments: BC / 8). Its scores are MT x NT accumulator fragments of
 * 16 x 8: with g = lane / 4 and q = lane % 4, lane holds s[i][n][0], s[i][n][1]
 * = S[16 i + g][8 n + 2 q, + 1] and s[i][n][2], s[i][n][3] =
 * S[16 i + g + 8][8 n + 2 q, + 1] (tensor_core.cuh draws the layouts). So each
 * thread holds parts of 2 rows per m16 fragment, g and g + 8 (index h = 0, 1
 * below), and the 4 threads of a quad (lanes 4 g .. 4 g + 3) hold all of them:
 * row reductions are 2 shuffles (fa_lanes_reduce() with 4). MT and NT are
 * template parameters so that the fused kernel of stage 06 can give a warp
 * 32 rows (MT = 2), which reuses every K and V fragment it loads twice.
 *
 * Every block is called by all 32 lanes of every warp (ldmatrix and mma are
 * warp-collective); tile2_load_async() by every thread of the block.
 */
#ifndef TILES_2_TENSOR_CORES_CUH
#define TILES_2_TENSOR_CORES_CUH

#include <math.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "fa_kernel.cuh"
#include "online_state.cuh"
#include "tensor_core.cuh"
#include "tile_layout.cuh"
#include "tiles.h"

/**
 * M17: starts the copy of @p rows_valid rows of @p d elements (row r at
 * src + r src_stride, a multiple of 8 elements) from @p src into the
 * swizzled tile @p tile of @p rows rows, 16 bytes per cp.async. Each thread
 * keeps one 16-byte chunk column and walks down the rows, THREADS / (D_PAD
 * / 8) rows a step, so consecutive threads take consecutive chunks
 * (coalesced) and a step costs one pointer add (and, where a step is a
 * multiple of 8 rows, the swizzle's period, one add to the shared
 * address): the fused kernel runs this copy for every key tile, inside
 * its hottest loop. (Where the chunks of a
 * row divide THREADS, each thread copies the chunks a flat loop over
 * threadIdx.x, threadIdx.x + THREADS, ... would give it.) Chunks of rows
 * past @p rows_valid, or past d in a row, are zero-filled by the copy itself
 * (source size 0), so the tail needs no second pass. With ROW_BOUND =
 * false the caller promises that every row lies in the source (rows_valid
 * = rows), and a chunk costs no compare at all: the fused kernel walks its
 * key tiles so that only the first one copied can end early
 * (flash_2_tensor_cores.cuh). The copies are
 * asynchronous: the caller commits them (cp_async_commit()), waits
 * (cp_async_wait<>()) and passes a __syncthreads() before any thread reads
 * the tile. Called by every thread of a block of @p THREADS threads.
 */
template <int D_PAD, int THREADS, bool ROW_BOUND = true, typename T>
static __device__ __forceinline__ void tile2_load_async(T *tile, const T *src, int64_t src_stride,
                                                        int rows_valid, int rows, int d)
{
    constexpr int CHUNKS = D_PAD / TILE2_CHUNK;
    constexpr int ROWS_PER_PASS = THREADS / CHUNKS;
    static_assert(ROWS_PER_PASS > 0, "a pass copies at least one whole row");
    const int col = (threadIdx.x % CHUNKS) * TILE2_CHUNK;
    const int first_row = threadIdx.x / CHUNKS;
    if (first_row >= ROWS_PER_PASS) /* THREADS not a multiple of CHUNKS: no chunk left here */
        return;
    /* A chunk past d reads nothing; its source is the row's start, a valid address all the same. */
    const bool in_row = col < d;
    const T *from = src + first_row * src_stride + (in_row ? col : 0);
    /* Passes of a multiple of 8 rows keep the swizzle's pattern: the shared address steps too. */
    constexpr bool STEP_TO = ROWS_PER_PASS % 8 == 0;
    uint32_t to = shared_address(tile + tile2_offset(first_row, col, D_PAD));
    const int passes = (int)fa_ceil_div(rows, ROWS_PER_PASS);
    for (int pass = 0; pass < passes;
         ++pass, from += ROWS_PER_PASS * src_stride, to += ROWS_PER_PASS * D_PAD * (int)sizeof(T)) {
        const int row = first_row + pass * ROWS_PER_PASS;
        if (rows % ROWS_PER_PASS != 0 && row >= rows)
            break;
        if constexpr (!STEP_TO)
            to = shared_address(tile + tile2_offset(row, col, D_PAD));
        if constexpr (ROW_BOUND) {
            const bool inside = in_row && row < rows_valid;
            cp_async_16(to, inside ? from : src, inside ? 16 : 0); /* src: valid when nothing is read */
        } else {
            cp_async_16(to, from, in_row ? 16 : 0);
        }
    }
}

/**
 * The shared addresses of chunks 2 j + @p half (j < tile2_swizzle_pairs())
 * of row @p row of @p tile: one lane's ldmatrix rows. Taken once, they give
 * every address of the k loop as one of them plus a constant
 * (tile2_lane_address()), an immediate of the ldmatrix instruction, where
 * tile2_offset() per ldmatrix costs a few integer instructions each.
 */
template <int D_PAD, typename T>
static __device__ __forceinline__ void tile2_lane_addresses(uint32_t (&at)[tile2_swizzle_pairs(D_PAD)],
                                                            const T *tile, int row, int half)
{
#pragma unroll
    for (int j = 0; j < tile2_swizzle_pairs(D_PAD); ++j)
        at[j] = shared_address(tile + tile2_offset(row, (2 * j + half) * TILE2_CHUNK, D_PAD));
}

/**
 * The address of chunk 2 @p pair + h (h the half given to
 * tile2_lane_addresses()) of the row @p rows (a multiple of 8) below
 * @p at's row.
 */
template <int D_PAD, typename T>
static __device__ __forceinline__ uint32_t tile2_lane_address(const uint32_t (&at)[tile2_swizzle_pairs(D_PAD)],
                                                              int pair, int rows)
{
    return at[pair % tile2_swizzle_pairs(D_PAD)] +
           (uint32_t)(tile2_pair_step(pair, rows, D_PAD) * (int)sizeof(T));
}

/**
 * M18: the raw scores of the warp's MT x 16 rows (from tile row
 * @p warp_row0) against the NT x 8 keys of the tile, s = Q K^T, in MT x NT
 * accumulator fragments. For each 16 columns of the head dimension: one
 * ldmatrix.x4 per m16 fragment gives the A fragment of Q (lanes 0-15 address
 * rows 0-15 at chunk 2 kk, lanes 16-31 the same rows at chunk 2 kk + 1), and
 * per pair of n8 fragments one ldmatrix.x4 gives two B fragments of K, each
 * used by all MT m16 fragments. K is stored [key][d], which is B = K^T
 * "col-major", the layout mma's B wants, so no transpose. Columns past d are
 * zero in the tiles and add nothing.
 */
template <int D_PAD, int MT, int NT, typename T>
static __device__ __forceinline__ void tile2_scores(float s[MT][NT][4], const T *q_tile,
                                                    const T *k_tile, int warp_row0)
{
    static_assert(NT % 2 == 0, "K fragments are loaded two n8 at a time");
    const int lane = threadIdx.x % FA_WARP_THREADS;
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int n = 0; n < NT; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                s[i][n][e] = 0.0f;
    /* The lanes' rows and halves, as above. */
    uint32_t q_at[tile2_swizzle_pairs(D_PAD)], k_at[tile2_swizzle_pairs(D_PAD)];
    tile2_lane_addresses<D_PAD>(q_at, q_tile, warp_row0 + lane % 16, lane / 16);
    tile2_lane_addresses<D_PAD>(k_at, k_tile, lane % 8 + 8 * (lane / 16), (lane / 8) % 2);
#pragma unroll
    for (int kk = 0; kk < D_PAD / 16; ++kk) {
        uint32_t a[MT][4];
#pragma unroll
        for (int i = 0; i < MT; ++i)
            ldmatrix_x4(a[i], tile2_lane_address<D_PAD, T>(q_at, kk, 16 * i));
#pragma unroll
        for (int np = 0; np < NT / 2; ++np) {
            uint32_t b[4];
            ldmatrix_x4(b, tile2_lane_address<D_PAD, T>(k_at, kk, 16 * np));
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                tile2_mma(T(), s[i][2 * np], a[i], &b[0]);
                tile2_mma(T(), s[i][2 * np + 1], a[i], &b[2]);
            }
        }
    }
}

/** M18: scores of keys at or past @p nk (key index @p key0 + column) become -inf. */
template <int MT, int NT>
static __device__ __forceinline__ void tile2_mask_keys(float s[MT][NT][4], int64_t key0, int64_t nk)
{
    const int q = threadIdx.x % 4;
#pragma unroll
    for (int n = 0; n < NT; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e)
            if (key0 + 8 * n + 2 * q + e % 2 >= nk)
#pragma unroll
                for (int i = 0; i < MT; ++i)
                    s[i][n][e] = -INFINITY;
}

/**
 * M19: the running max of each of the thread's rows (m16 fragment i; h = 0:
 * row g, h = 1: row g + 8) after this tile: its own 2 NT scores of the row
 * (a tree of maxima), then the quad (2 shuffles), then online_running_max()
 * with the -inf and NaN rules of stage 04. The 4 threads of the quad end
 * with the same m_new.
 */
template <int MT, int NT>
static __device__ __forceinline__ void tile2_rowmax(const float s[MT][NT][4], const float m_old[MT][2],
                                                    float m_new[MT][2])
{
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float part[NT];
#pragma unroll
            for (int n = 0; n < NT; ++n)
                part[n] = fa_max_nan(s[i][n][2 * h], s[i][n][2 * h + 1]);
            /* A tree, log2 NT steps deep: the softmax waits on this max, and a max is exact
             * in any order. */
#pragma unroll
            for (int width = 1; width < NT; width *= 2)
#pragma unroll
                for (int n = 0; n + width < NT; n += 2 * width)
                    part[n] = fa_max_nan(part[n], part[n + width]);
            m_new[i][h] = online_running_max(m_old[i][h], fa_lanes_max<4>(part[0]));
        }
}

/**
 * M20: s <- p = exp2(s c - m_new c) in place, one FFMA and one exp2 per
 * weight, and alpha = exp2((m_old - m_new) c) per row, with the -inf rule of
 * online_max_offset() (see tile1_exp(), the same arithmetic). The exp2 is
 * fa_exp2_ftz(), one instruction where exp2f() takes three more to keep
 * results below 2^-126 subnormal: the bound lets such a weight flush, so
 * exp2f() passes too, but on the tensor cores the softmax's instructions
 * set the fused kernel's pace.
 */
template <int MT, int NT>
static __device__ __forceinline__ void tile2_exp(float s[MT][NT][4], const float m_old[MT][2],
                                                 const float m_new[MT][2], float c,
                                                 float alpha[MT][2])
{
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const float offset = online_max_offset(m_new[i][h]);
            const float max_scaled = offset * c;
            alpha[i][h] = fa_exp2_ftz((m_old[i][h] - offset) * c);
#pragma unroll
            for (int n = 0; n < NT; ++n)
#pragma unroll
                for (int e = 2 * h; e < 2 * h + 2; ++e)
                    s[i][n][e] = fa_exp2_ftz(fmaf(s[i][n][e], c, -max_scaled));
        }
}

/**
 * M21: the thread's partial row sums, l <- alpha l + (the sum of its own
 * 2 NT weights of the row). The quad is not summed here: a sum of partials
 * rescaled by the same alpha is the partial of the rescaled sum, so the 4
 * partials can be added once, at the end (tile2_row_sums()), which saves
 * 2 shuffles per row and tile (FlashAttention-2's choice; \ref stage05 shows
 * the rounding it changes is within the bound).
 */
template <int MT, int NT>
static __device__ __forceinline__ void tile2_rowsum(float l[MT][2], const float alpha[MT][2],
                                                    const float p[MT][NT][4])
{
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float tile_sum = 0.0f;
#pragma unroll
            for (int n = 0; n < NT; ++n)
                tile_sum += p[i][n][2 * h] + p[i][n][2 * h + 1];
            l[i][h] = online_update_sum(l[i][h], alpha[i][h], tile_sum);
        }
}

/** The whole row sum of each of the thread's rows: its quad's partials added. */
template <int MT>
static __device__ __forceinline__ void tile2_row_sums(const float l_partial[MT][2], float l[MT][2])
{
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h)
            l[i][h] = fa_lanes_sum<4>(l_partial[i][h]);
}

/**
 * M22: O <- alpha O + P V for the warp's MT x 16 rows and all D_PAD / 8
 * output fragments. The weights never leave the registers: the accumulators
 * of two neighbouring n8 fragments of S (keys 16 kk .. 16 kk + 15) are exactly
 * the A operand of one m16n8k16 step, once rounded to T and packed in pairs:
 * a[0] = p[2 kk][0, 1] (row g), a[1] = p[2 kk][2, 3] (row g + 8),
 * a[2] = p[2 kk + 1][0, 1], a[3] = p[2 kk + 1][2, 3]. V is stored
 * [key][d] = B row-major, and B must be read "col-major": ldmatrix.trans
 * transposes each 8 x 8 matrix on the way; each V fragment serves all MT
 * m16 fragments.
 */
/** M22's first step: O rescaled by each row's alpha, the factor of its running max's rise. */
template <int D_PAD, int MT>
static __device__ __forceinline__ void tile2_rescale(float o[MT][D_PAD / 8][4], const float alpha[MT][2])
{
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int n = 0; n < D_PAD / 8; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                o[i][n][e] *= alpha[i][e / 2];
}

template <int D_PAD, int MT, int NT, typename T>
static __device__ __forceinline__ void tile2_accumulate_pv(float o[MT][D_PAD / 8][4],
                                                           const float alpha[MT][2],
                                                           const float p[MT][NT][4],
                                                           const T *v_tile)
{
    static_assert(NT % 2 == 0, "P V consumes the keys 16 at a time (k of m16n8k16)");
    const int lane = threadIdx.x % FA_WARP_THREADS;
    tile2_rescale<D_PAD, MT>(o, alpha);
    /* V: key lane % 16 of each 16, chunk 2 dp + lane / 16 (ldmatrix.trans, below). */
    uint32_t v_at[tile2_swizzle_pairs(D_PAD)];
    tile2_lane_addresses<D_PAD>(v_at, v_tile, lane % 16, lane / 16);
#pragma unroll
    for (int kk = 0; kk < NT / 2; ++kk) {
        uint32_t a[MT][4];
#pragma unroll
        for (int i = 0; i < MT; ++i)
            tile2_p_fragment<T>(p[i][2 * kk], p[i][2 * kk + 1], a[i]);
#pragma unroll
        for (int dp = 0; dp < D_PAD / 16; ++dp) {
            uint32_t b[4];
            ldmatrix_x4_trans(b, tile2_lane_address<D_PAD, T>(v_at, dp, 16 * kk));
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                tile2_mma(T(), o[i][2 * dp], a[i], &b[0]);
                tile2_mma(T(), o[i][2 * dp + 1], a[i], &b[2]);
            }
        }
    }
}

/**
 * M22, the end of the rows: the quad's partial sums added (tile2_row_sums()),
 * o / l by one reciprocal and a multiply, lse = scale m + ln l. A row with
 * no allowed key (l = 0) gets o = 0 and lse = -inf.
 */
template <int D_PAD, int MT>
static __device__ __forceinline__ void tile2_normalise(float o[MT][D_PAD / 8][4], const float m[MT][2],
                                                       const float l_partial[MT][2], float scale,
                                                       float lse[MT][2])
{
    float l[MT][2];
    tile2_row_sums<MT>(l_partial, l);
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const float inverse = l[i][h] == 0.0f ? 0.0f : 1.0f / l[i][h];
#pragma unroll
            for (int n = 0; n < D_PAD / 8; ++n) {
                o[i][n][2 * h] *= inverse;
                o[i][n][2 * h + 1] *= inverse;
            }
            lse[i][h] = l[i][h] == 0.0f ? -INFINITY : fmaf(scale, m[i][h], logf(l[i][h]));
        }
}

#endif /* TILES_2_TENSOR_CORES_CUH */
