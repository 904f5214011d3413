/*
 * Stage 03 — YOUR KERNELS (the exercise). Lesson: 03_naive_attention/README.md.
 *
 * Work through the milestones in order. For each one:
 *   1. write the kernel body marked TODO below (the signature is given);
 *   2. delete the FA_TODO(...) line at the top of its launcher;
 *   3. build and check:   cmake --build build -t stage03
 *                          build/03_naive_attention/stage03 --impl learner --milestone N
 * The driver runs your kernel on hand-computable fixtures (in fp32, bf16 and
 * fp16) and random cases, and names the first case and coordinate that is
 * wrong: start with the fixture it names, the stage page works each one out.
 *
 * The launch code below is complete (validation, grid, launch, error check)
 * and the same as the reference's; you should not need to change it. It sits
 * in static run_* helpers so that each public launcher reads as two lines:
 * the FA_TODO(...) to delete, then the call. M12 has no kernel of its own: it
 * chains your M9, M10 and M11 through a workspace.
 * The `(void)arg;` lines only silence "unused parameter" warnings: delete
 * them as you use the arguments. Helpers marked [[maybe_unused]] are given;
 * the attribute only silences a warning until your kernels call them.
 */
#include <math.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "attention.h"
#include "fa_device.h"
#include "fa_index.h"

constexpr int TILE = NAIVE_ATTN_TILE;         /* 32 x 32 outputs per block */
[[maybe_unused]] constexpr int TILE_PADDED = TILE + 1; /* a tile column spans all 32 banks */
constexpr int WARP = NAIVE_ATTN_WARP_THREADS;
constexpr int SOFTMAX_THREADS = SOFTMAX_ROWS_THREADS;
constexpr int SOFTMAX_WARPS = SOFTMAX_THREADS / WARP;
constexpr int64_t MAX_GRID_BLOCKS = 2147483647; /* the limit of a grid's x dimension */
static_assert(TILE * TILE <= 1024, "one thread per output of a tile");
static_assert(TILE == WARP, "a warp covers one row of a tile");
static_assert(SOFTMAX_THREADS % WARP == 0, "whole warps");
static_assert(SOFTMAX_WARPS <= WARP, "the warp totals are reduced by one warp");

static unsigned grid_blocks(int64_t work)
{
    return (unsigned)(work < MAX_GRID_BLOCKS ? work : MAX_GRID_BLOCKS);
}

/* Given: bf16 and fp16 widen to fp32 exactly, so compute in fp32 whatever you read. */
[[maybe_unused]] static __device__ __forceinline__ float to_float(float x) { return x; }
[[maybe_unused]] static __device__ __forceinline__ float to_float(__nv_bfloat16 x)
{
    return __bfloat162float(x);
}
[[maybe_unused]] static __device__ __forceinline__ float to_float(__half x)
{
    return __half2float(x);
}

/* ---- M9 QK^T scores ------------------------------------------------------------------------ */

/*
 * TODO(M9): s[head][i][j] = scale * sum_d q[head][i][d] * k[head][j][d],
 * for every head = b * heads + h, query row i < nq, key j < nk.
 *
 * The grid has one block of 32 x 32 threads per 32 x 32 tile of S, over all
 * heads, and may be capped: loop
 *   for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x)
 * with tiles = batch * heads * row_tiles * col_tiles, row_tiles = ceil(nq/32),
 * col_tiles = ceil(nk/32), and find the tile's head, first row and first column:
 *   head = tile / (row_tiles * col_tiles)
 *   row0 = tile / col_tiles % row_tiles * 32,   col0 = tile % col_tiles * 32.
 * Thread (ty, tx) computes score (row0 + ty, col0 + tx).
 * Hints:
 * - Stage tiles in shared memory, 32 dimensions at a time, as in stage 02's
 *   matmul (the NT case: K is stored by rows, like Q):
 *     __shared__ float q_tile[TILE][TILE];          [query row][d]
 *     __shared__ float k_tile[TILE][TILE_PADDED];   [key row][d]
 *   thread (ty, tx) loads dimension d0 + tx of query row0 + ty and of key
 *   col0 + ty (consecutive tx, consecutive addresses), 0.0f outside the
 *   matrices; __syncthreads(); then acc = fmaf(q_tile[ty][d], k_tile[tx][d], acc)
 *   for d = 0..31; __syncthreads() before the next load.
 * - Widen with to_float(): T is float, __nv_bfloat16 or __half.
 * - Offsets are int64_t: head * nq * head_dim passes 2^31 on long sequences.
 * - Multiply by scale once, after the sum, and store only inside S (the
 *   edge tiles stick out when nq or nk is not a multiple of 32).
 * - The checks accept any summation order; the reference's (d = 0, 1, ...)
 *   is what makes the model match it bit for bit.
 */
template <typename T>
static __global__ void __launch_bounds__(TILE *TILE)
    attn_scores_tiled(const T *__restrict__ q, const T *__restrict__ k, float *__restrict__ s,
                      naive_attn_dims dims, float scale)
{
    (void)q;
    (void)k;
    (void)s;
    (void)dims;
    (void)scale;
}

template <typename T>
static void launch_scores(const void *q, const void *k, float *s, naive_attn_dims dims,
                          float scale, unsigned grid, cudaStream_t stream)
{
    attn_scores_tiled<T><<<grid, dim3(TILE, TILE), 0, stream>>>(
        static_cast<const T *>(q), static_cast<const T *>(k), s, dims, scale);
}

static fa_status run_attn_scores(const void *q, const void *k, float *s, fa_dtype dtype,
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

extern "C" fa_status learner_attn_scores(const void *q, const void *k, float *s, fa_dtype dtype,
                                         naive_attn_dims dims, float scale, cudaStream_t stream)
{
    FA_TODO("M9 QK^T scores");
    return run_attn_scores(q, k, s, dtype, dims, scale, stream);
}

/* ---- M10 row softmax ----------------------------------------------------------------------- */

[[maybe_unused]] static __device__ __forceinline__ int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/*
 * TODO(M10, part 1): how many keys row i of batch b may see.
 * Every mask of the course allows a prefix of the keys, 0 .. count-1:
 *   no mask:              count = nk;
 *   causal top-left:      j <= i           -> count = min(nk, i + 1);
 *   causal bottom-right:  j <= i + nk - nq -> count = min(nk, i + 1 + nk - nq);
 *   key_length != NULL:   also j < key_length[b];
 * and never below 0 (bottom-right rows with i < nq - nk see no key at all).
 * The stage page draws both alignments for 3 x 5 and 5 x 3.
 */
[[maybe_unused]] static __device__ int64_t allowed_keys(fa_mask mask, const int64_t *key_length,
                                                        int64_t b, int64_t i, int64_t nq,
                                                        int64_t nk)
{
    (void)mask;
    (void)key_length;
    (void)b;
    (void)i;
    (void)nq;
    (void)nk;
    return 0;
}

/* Given (stage 01's reductions): max or sum over the block, returned to every thread. */
template <bool IS_MAX>
static __device__ __forceinline__ float combine(float a, float b)
{
    return IS_MAX ? fmaxf(a, b) : a + b;
}

template <bool IS_MAX>
static __device__ __forceinline__ float warp_reduce(float x)
{
#pragma unroll
    for (int offset = WARP / 2; offset > 0; offset /= 2)
        x = combine<IS_MAX>(x, __shfl_xor_sync(0xffffffffu, x, offset));
    return x;
}

/* Call with every thread of the block; scratch is a __shared__ float[SOFTMAX_WARPS]. */
template <bool IS_MAX>
static __device__ float block_reduce(float x, float *scratch)
{
    const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
    const float identity = IS_MAX ? -INFINITY : 0.0f;
    x = warp_reduce<IS_MAX>(x);
    if (lane == 0)
        scratch[warp] = x;
    __syncthreads();
    x = warp_reduce<IS_MAX>(lane < SOFTMAX_WARPS ? scratch[lane] : identity);
    __syncthreads();
    return x;
}

/*
 * TODO(M10, part 2): one block of 256 threads per row of S (rows = batch *
 * heads * nq, grid-stride: for (int64_t row = blockIdx.x; row < rows;
 * row += gridDim.x)); b = row / (heads * nq), i = row % nq;
 * allowed = allowed_keys(...). Then three passes over j = threadIdx.x,
 * threadIdx.x + 256, ... :
 *   1. m = max of s_row[j] over j < allowed (fmaxf, then block_reduce<true>);
 *   2. l = sum of expf(s_row[j] - m) over j < allowed (block_reduce<false>);
 *   3. p_row[j] = expf(s_row[j] - m) / l for j < allowed, 0.0f for the
 *      masked j < nk; thread 0 writes lse[row] = m + logf(l) when lse != NULL.
 * Hints:
 * - Read only the allowed scores: masked ones may hold anything (padding).
 * - A row with no allowed key has m = -inf (the max of nothing), and
 *   s - m = (-inf) - (-inf) is NaN. Subtract 0 instead when m == -inf: every
 *   term is then expf(-inf) = 0, so l = 0. For l == 0 write p = 0 and
 *   lse = -INFINITY, never 0/0.
 * - p may be the same array as s (M12 runs the softmax in place): in pass 3,
 *   read s_row[j] before writing p_row[j], in the same thread. So no
 *   __restrict__ on s and p.
 * - Pass 3 recomputes expf rather than storing it in pass 2: one more read
 *   of S costs less than a write and a read of P.
 */
static __global__ void __launch_bounds__(SOFTMAX_THREADS)
    softmax_rows_three_pass(const float *s, float *p, float *lse, naive_attn_dims dims,
                            fa_mask mask, const int64_t *key_length)
{
    (void)s;
    (void)p;
    (void)lse;
    (void)dims;
    (void)mask;
    (void)key_length;
}

static fa_status run_softmax_rows(const float *s, float *p, float *lse, naive_attn_dims dims,
                                  fa_mask mask, const int64_t *key_length, cudaStream_t stream)
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

extern "C" fa_status learner_softmax_rows(const float *s, float *p, float *lse,
                                          naive_attn_dims dims, fa_mask mask,
                                          const int64_t *key_length, cudaStream_t stream)
{
    FA_TODO("M10 row softmax");
    return run_softmax_rows(s, p, lse, dims, mask, key_length, stream);
}

/* ---- M11 PV matmul ------------------------------------------------------------------------- */

/*
 * TODO(M11): o[head][i][c] = sum_j p[head][i][j] * v[head][j][c], for
 * i < nq, c < head_dim, summing over the keys row i may see:
 * j < allowed_keys(mask, key_length, b, i, nq, nk), with b = head / heads.
 * M11 alone passes FA_MASK_NONE and no key_length (every key, a plain
 * matmul); M12 passes the softmax's mask and padding.
 *
 * The same tiling as M9, with tiles of O: row_tiles = ceil(nq/32),
 * col_tiles = ceil(head_dim/32), and a loop over keys j0 = 0, 32, ...:
 *   __shared__ float p_tile[TILE][TILE];   [query row][key]
 *   __shared__ float v_tile[TILE][TILE];   [key][column of v]
 * thread (ty, tx) loads p(row0 + ty, j0 + tx) and v(j0 + ty, col0 + tx),
 * zeros outside; then acc = fmaf(p_tile[ty][j], v_tile[j][tx], acc) for
 * the keys j0 + j this row may see.
 * Hints:
 * - Loop over the allowed prefix, not over nk, and do not skip a weight of
 *   0: an allowed key's v row must reach o even when its weight underflowed
 *   (0 * NaN = NaN, the course's rule), while a masked key's row (padding,
 *   which may be full of NaN) must never be multiplied.
 * - The allowed prefix never shrinks from one row to the next, so the tile's
 *   last row (min(row0 + 32, nq) - 1) bounds the key loop of the block, and
 *   causal tiles above the diagonal stop early. A warp is one row (one ty),
 *   so a test on that row's count does not diverge.
 * - nk may be 0: o is then all zeros, and must still be written.
 */
template <typename T>
static __global__ void __launch_bounds__(TILE *TILE)
    attn_pv_tiled(const float *__restrict__ p, const T *__restrict__ v, float *__restrict__ o,
                  naive_attn_dims dims, fa_mask mask, const int64_t *__restrict__ key_length)
{
    (void)p;
    (void)v;
    (void)o;
    (void)dims;
    (void)mask;
    (void)key_length;
}

template <typename T>
static void launch_pv(const float *p, const void *v, float *o, naive_attn_dims dims, fa_mask mask,
                      const int64_t *key_length, unsigned grid, cudaStream_t stream)
{
    attn_pv_tiled<T><<<grid, dim3(TILE, TILE), 0, stream>>>(p, static_cast<const T *>(v), o,
                                                            dims, mask, key_length);
}

/* Given: M11 passes every key; M12 its mask and padding (attn_naive_validate() checked them). */
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

extern "C" fa_status learner_attn_pv(const float *p, const void *v, float *o, fa_dtype dtype,
                                     naive_attn_dims dims, cudaStream_t stream)
{
    FA_TODO("M11 PV matmul");
    return run_attn_pv(p, v, o, dtype, dims, FA_MASK_NONE, nullptr, stream);
}

/* ---- M12 naive attention ------------------------------------------------------------------- */

/*
 * M12 has nothing new to write: read this launcher, then delete its FA_TODO
 * once M9 to M11 pass. It asks the allocator for the N x N scores (B * H *
 * Nq * Nk * 4 bytes, attn_naive_workspace_bytes()), runs your three kernels
 * through them, the softmax in place, and refuses with FA_ERR_OUT_OF_MEMORY,
 * before computing anything, when they do not fit. The stage benchmark shows
 * how fast that memory runs out.
 */
static double gibibytes(size_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0 * 1024.0);
}

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

static fa_status run_attn_naive(const void *q, const void *k, const void *v, float *o,
                                float *lse, fa_dtype dtype, naive_attn_dims dims, float scale,
                                fa_mask mask, const int64_t *key_length, cudaStream_t stream)
{
    FA_TRY(attn_naive_validate(q, k, v, o, lse, dtype, dims, scale, mask, key_length));
    if (dims.batch * dims.heads * dims.nq == 0)
        return FA_OK;
    size_t bytes = 0;
    FA_TRY(attn_naive_workspace_bytes(dims, &bytes));
    float *scores = nullptr;
    FA_TRY(acquire_workspace(&scores, bytes, stream));

    fa_status status = learner_attn_scores(q, k, scores, dtype, dims, scale, stream);
    if (status == FA_OK)
        status = learner_softmax_rows(scores, scores, lse, dims, mask, key_length, stream);
    if (status == FA_OK)
        status = run_attn_pv(scores, v, o, dtype, dims, mask, key_length, stream);
    if (scores != nullptr) {
        const cudaError_t freed = cudaFreeAsync(scores, stream);
        if (freed != cudaSuccess && status == FA_OK)
            status = fa_cuda_fail(freed, "cudaFreeAsync(scores, stream)", __FILE__, __LINE__);
    }
    return status;
}

extern "C" fa_status learner_attn_naive(const void *q, const void *k, const void *v, float *o,
                                        float *lse, fa_dtype dtype, naive_attn_dims dims,
                                        float scale, fa_mask mask, const int64_t *key_length,
                                        cudaStream_t stream)
{
    FA_TODO("M12 naive attention");
    return run_attn_naive(q, k, v, o, lse, dtype, dims, scale, mask, key_length, stream);
}
