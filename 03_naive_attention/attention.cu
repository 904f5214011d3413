/**
 * @file attention.cu
 * @brief Stage 03 reference: M9 scores, M10 row softmax, M11 PV matmul and M12
 *        naive attention, the baseline whose N x N memory traffic the rest of
 *        the course removes.
 *
 * | M   | kernel / launcher       | idea                                           | block |
 * |-----|-------------------------|------------------------------------------------|-------|
 * | M9  | attn_scores_tiled       | S = c Q K^T; 32x32 Q and K tiles in shared mem | 32x32 |
 * | M10 | softmax_rows_three_pass | max, sum of exp, normalise; masks as a prefix  | 256   |
 * | M11 | attn_pv_tiled           | O = P V; 32x32 P and V tiles; allowed keys     | 32x32 |
 * | M12 | ref_attn_naive          | M9, M10 in place, M11 via one N x N workspace  | -     |
 *
 * M9 and M11 run one block per 32x32 output tile (one thread per element),
 * M10 one block per row of S. A tile grid covers every head of every batch:
 * block t handles tile t mod (tiles per head) of head t / (tiles per head).
 * The loops are grid-stride, so a problem with more tiles (or rows) than the
 * 2^31 - 1 blocks of a grid still runs; in practice each block does one.
 *
 * Arithmetic order is fixed and mirrored by model.c: a score and an output
 * element are each one fp32 FMA chain in index order; the softmax sums each
 * thread's strided slice in order, then a butterfly in each warp, then a
 * butterfly over the warp totals.
 */
#include <math.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "attention.h"
#include "fa_device.h"
#include "fa_index.h"

constexpr int TILE = NAIVE_ATTN_TILE;  /**< 32 x 32 outputs per block, reduced 32 at a time */
constexpr int TILE_PADDED = TILE + 1;  /**< +1 column: a column of the tile spans all 32 banks */
constexpr int SOFTMAX_THREADS = SOFTMAX_ROWS_THREADS;
constexpr int SOFTMAX_WARPS = SOFTMAX_THREADS / FA_WARP_THREADS;
static_assert(TILE * TILE <= 1024, "one thread per output of a tile");
static_assert(TILE == FA_WARP_THREADS,
              "a warp covers one row of a tile: broadcast and conflict-free reads");
static_assert(SOFTMAX_THREADS % FA_WARP_THREADS == 0, "whole warps");
static_assert(SOFTMAX_WARPS <= FA_WARP_THREADS, "the warp totals are reduced by one warp");

/** Blocks of a grid-stride launch over @p work items: one each, up to the grid limit. */
static unsigned grid_blocks(int64_t work)
{
    return (unsigned)(work < FA_MAX_GRID_X ? work : FA_MAX_GRID_X);
}

/* bf16 and fp16 widen to fp32 exactly, so the kernels compute in fp32 whatever they read. */
static __device__ __forceinline__ float to_float(float x) { return x; }
static __device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
static __device__ __forceinline__ float to_float(__half x) { return __half2float(x); }

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
                                 ? to_float(q_head[(row0 + ty) * dim + d0 + tx]) : 0.0f;
            k_tile[ty][tx] = (col0 + ty < nk && d_inside)
                                 ? to_float(k_head[(col0 + ty) * dim + d0 + tx]) : 0.0f;
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

template <typename T>
static void launch_scores(const void *q, const void *k, float *s, naive_attn_dims dims,
                          float scale, unsigned grid, cudaStream_t stream)
{
    attn_scores_tiled<T><<<grid, dim3(TILE, TILE), 0, stream>>>(
        static_cast<const T *>(q), static_cast<const T *>(k), s, dims, scale);
}

extern "C" fa_status ref_attn_scores(const void *q, const void *k, float *s, fa_dtype dtype,
                                     naive_attn_dims dims, float scale, cudaStream_t stream)
{
    FA_TRY(attn_scores_validate(q, k, s, dtype, dims, scale));
    const int64_t tiles =
        dims.batch * dims.heads * fa_ceil_div(dims.nq, TILE) * fa_ceil_div(dims.nk, TILE);
    if (tiles == 0)
        return FA_OK;
    const unsigned grid = grid_blocks(tiles);
    const float c = naive_attn_scale(scale, dims.head_dim);
    switch (dtype) {
    case FA_F32: launch_scores<float>(q, k, s, dims, c, grid, stream); break;
    case FA_BF16: launch_scores<__nv_bfloat16>(q, k, s, dims, c, grid, stream); break;
    case FA_F16: launch_scores<__half>(q, k, s, dims, c, grid, stream); break;
    }
    FA_LAUNCH_CHECK();
    return FA_OK;
}

/* ==== M10 row softmax ======================================================================= */

static __device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/**
 * How many keys row @p i of batch @p b may see. Every mask of the course
 * allows a prefix of the keys, so the count says it all: keys 0 .. count-1.
 */
static __device__ int64_t allowed_keys(fa_mask mask, const int64_t *key_length, int64_t b,
                                       int64_t i, int64_t nq, int64_t nk)
{
    int64_t end = nk;
    if (mask == FA_MASK_CAUSAL_TOP_LEFT)
        end = min64(end, i + 1); /* j <= i */
    else if (mask == FA_MASK_CAUSAL_BOTTOM_RIGHT)
        end = min64(end, i + 1 + nk - nq); /* j <= i + nk - nq: the last row sees every key */
    if (key_length != nullptr)
        end = min64(end, key_length[b]);
    return end > 0 ? end : 0;
}

template <bool IS_MAX>
static __device__ __forceinline__ float combine(float a, float b)
{
    return IS_MAX ? fmaxf(a, b) : a + b;
}

/** Butterfly over the 32 lanes: afterwards every lane holds the same reduction of all 32. */
template <bool IS_MAX>
static __device__ __forceinline__ float warp_reduce(float x)
{
#pragma unroll
    for (int offset = FA_WARP_THREADS / 2; offset > 0; offset /= 2)
        x = combine<IS_MAX>(x, __shfl_xor_sync(FA_FULL_WARP_MASK, x, offset));
    return x;
}

/**
 * Max or sum over the block, returned to every thread: each warp reduces its
 * lanes, lane 0 stores the warp's value, then every warp reduces those
 * SOFTMAX_WARPS values (the other lanes hold the identity) by the same
 * butterfly, so all threads get the same bits.
 */
template <bool IS_MAX>
static __device__ float block_reduce(float x, float *scratch)
{
    const int lane = threadIdx.x % FA_WARP_THREADS, warp = threadIdx.x / FA_WARP_THREADS;
    const float identity = IS_MAX ? -INFINITY : 0.0f;
    x = warp_reduce<IS_MAX>(x);
    if (lane == 0)
        scratch[warp] = x;
    __syncthreads();
    x = warp_reduce<IS_MAX>(lane < SOFTMAX_WARPS ? scratch[lane] : identity);
    __syncthreads(); /* scratch is reused by the next reduction */
    return x;
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
    __shared__ float scratch[SOFTMAX_WARPS];
    const int64_t nq = dims.nq, nk = dims.nk;
    const int64_t rows = dims.batch * dims.heads * nq;

    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const int64_t b = row / (dims.heads * nq), i = row % nq;
        const int64_t allowed = allowed_keys(mask, key_length, b, i, nq, nk);
        const float *s_row = s + row * nk;
        float *p_row = p + row * nk;

        /* Pass 1: m = max of the allowed scores. */
        float m = -INFINITY;
        for (int64_t j = threadIdx.x; j < allowed; j += SOFTMAX_THREADS)
            m = fmaxf(m, s_row[j]);
        m = block_reduce<true>(m, scratch);

        /* Subtracting m makes every exponent <= 0, so exp never overflows (exp(89)
         * already does in fp32) and the largest term is exactly 1. With no allowed
         * key, or only -inf scores, m = -inf and s - m would be (-inf) - (-inf) =
         * NaN: shift by 0 instead, every term is exp(-inf) = 0, and l = 0 marks
         * the row as empty. */
        const float shift = (m == -INFINITY) ? 0.0f : m;

        /* Pass 2: l = sum of exp(s - m), each thread over its strided slice. */
        float l = 0.0f;
        for (int64_t j = threadIdx.x; j < allowed; j += SOFTMAX_THREADS)
            l += expf(s_row[j] - shift);
        l = block_reduce<false>(l, scratch);

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

extern "C" fa_status ref_softmax_rows(const float *s, float *p, float *lse, naive_attn_dims dims,
                                      fa_mask mask, const int64_t *key_length,
                                      cudaStream_t stream)
{
    FA_TRY(softmax_rows_validate(s, p, lse, dims, mask, key_length));
    const int64_t rows = dims.batch * dims.heads * dims.nq;
    if (rows == 0)
        return FA_OK;
    softmax_rows_three_pass<<<grid_blocks(rows), SOFTMAX_THREADS, 0, stream>>>(s, p, lse, dims,
                                                                              mask, key_length);
    FA_LAUNCH_CHECK();
    return FA_OK;
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
                                 ? to_float(v_head[(j0 + ty) * dim + col0 + tx]) : 0.0f;
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

template <typename T>
static void launch_pv(const float *p, const void *v, float *o, naive_attn_dims dims, fa_mask mask,
                      const int64_t *key_length, unsigned grid, cudaStream_t stream)
{
    attn_pv_tiled<T><<<grid, dim3(TILE, TILE), 0, stream>>>(p, static_cast<const T *>(v), o,
                                                            dims, mask, key_length);
}

/**
 * P.V over the keys each row may see: M11 passes every key, M12 the mask and
 * padding of its softmax. The arguments of M12 are validated by
 * attn_naive_validate(), which covers @p mask and @p key_length.
 */
static fa_status run_attn_pv(const float *p, const void *v, float *o, fa_dtype dtype,
                             naive_attn_dims dims, fa_mask mask, const int64_t *key_length,
                             cudaStream_t stream)
{
    FA_TRY(attn_pv_validate(p, v, o, dtype, dims));
    const int64_t tiles =
        dims.batch * dims.heads * fa_ceil_div(dims.nq, TILE) * fa_ceil_div(dims.head_dim, TILE);
    if (tiles == 0)
        return FA_OK;
    const unsigned grid = grid_blocks(tiles);
    switch (dtype) {
    case FA_F32: launch_pv<float>(p, v, o, dims, mask, key_length, grid, stream); break;
    case FA_BF16: launch_pv<__nv_bfloat16>(p, v, o, dims, mask, key_length, grid, stream); break;
    case FA_F16: launch_pv<__half>(p, v, o, dims, mask, key_length, grid, stream); break;
    }
    FA_LAUNCH_CHECK();
    return FA_OK;
}

extern "C" fa_status ref_attn_pv(const float *p, const void *v, float *o, fa_dtype dtype,
                                 naive_attn_dims dims, cudaStream_t stream)
{
    return run_attn_pv(p, v, o, dtype, dims, FA_MASK_NONE, nullptr, stream);
}

/* ==== M12 naive attention =================================================================== */

/** Bytes as GiB, for messages. */
static double gibibytes(size_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0 * 1024.0);
}

/**
 * Allocates the @p bytes of score matrices on @p stream, or refuses with
 * ::FA_ERR_OUT_OF_MEMORY and the bytes needed and free. The stream-ordered
 * allocator decides what fits, because its pool may hold memory that
 * cudaMemGetInfo counts as used but that it can hand out again; a request
 * larger than the whole device is refused without asking it.
 */
static fa_status acquire_workspace(float **workspace, size_t bytes, cudaStream_t stream)
{
    *workspace = nullptr;
    if (bytes == 0)
        return FA_OK;
    size_t free_bytes = 0, total_bytes = 0;
    FA_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
    cudaError_t error = cudaErrorMemoryAllocation;
    if (bytes <= total_bytes)
        error = cudaMallocAsync(reinterpret_cast<void **>(workspace), bytes, stream);
    if (error == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError(); /* not sticky: clear it so the next launch check is clean */
        *workspace = nullptr;
        return fa_fail(FA_ERR_OUT_OF_MEMORY,
                       "attn_naive: the score matrices need %zu bytes (%.2f GiB = batch * heads "
                       "* nq * nk * 4) of device memory, %zu bytes (%.2f GiB) are free of %zu; "
                       "nothing was computed",
                       bytes, gibibytes(bytes), free_bytes, gibibytes(free_bytes), total_bytes);
    }
    FA_CUDA_TRY(error);
    return FA_OK;
}

extern "C" fa_status ref_attn_naive(const void *q, const void *k, const void *v, float *o,
                                    float *lse, fa_dtype dtype, naive_attn_dims dims,
                                    float scale, fa_mask mask, const int64_t *key_length,
                                    cudaStream_t stream)
{
    FA_TRY(attn_naive_validate(q, k, v, o, lse, dtype, dims, scale, mask, key_length));
    if (dims.batch * dims.heads * dims.nq == 0)
        return FA_OK;
    size_t bytes = 0;
    FA_TRY(attn_naive_workspace_bytes(dims, &bytes));
    float *scores = nullptr;
    FA_TRY(acquire_workspace(&scores, bytes, stream));

    /* The softmax runs in place, the probabilities overwriting the scores: one
     * N x N fp32 matrix per head is all the pipeline holds at any time. P.V
     * reads the keys the softmax allowed and no other: a masked row of v is
     * never multiplied, an allowed one always is (see attention.h). */
    fa_status status = ref_attn_scores(q, k, scores, dtype, dims, scale, stream);
    if (status == FA_OK)
        status = ref_softmax_rows(scores, scores, lse, dims, mask, key_length, stream);
    if (status == FA_OK)
        status = run_attn_pv(scores, v, o, dtype, dims, mask, key_length, stream);
    if (scores != nullptr) {
        const cudaError_t freed = cudaFreeAsync(scores, stream);
        if (freed != cudaSuccess && status == FA_OK)
            status = fa_cuda_fail(freed, "cudaFreeAsync(scores, stream)", __FILE__, __LINE__);
    }
    return status;
}
