/**
 * @file learner/matmul.cu
 * @brief EXERCISE M7 matmul, four versions: your kernels go here (see \ref stage02).
 *
 * | version | kernel                          | you write                                              |
 * |---------|---------------------------------|--------------------------------------------------------|
 * | 1       | matmul_naive_kernel             | one thread per output                                   |
 * | 2       | matmul_smem_tiled_kernel        | 32x32 tiles of A and B through shared memory            |
 * | 3       | matmul_register_blocked_kernel  | 8x8 outputs per thread, float4 loads, double buffering  |
 * | 4       | matmul_mma_bf16_kernel          | tensor cores: ldmatrix + mma.sync m16n8k16, cp.async pipeline |
 *
 * The launchers are complete (validation, grid, block, layout and alignment
 * dispatch). Write the versions in order; after each, delete its FA_TODO
 * line and run `stage02 --milestone 7`: the check walks the versions in
 * order and says which passed. B comes row-major ([K][N], NN) or transposed
 * ([N][K], NT): LAYOUT is a template parameter, so `if constexpr` on it costs
 * nothing. Every version must zero-fill what lies outside the matrices and
 * mask the stores: M, N, K are arbitrary (K = 0 means C = 0).
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_device.h"
#include "matrix.h"
#include "tensor_core.cuh"
#include "fa_index.h"

/** True when @p p is a multiple of @p alignment bytes. */
static bool aligned_to(const void *p, uintptr_t alignment)
{
    return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

/* ==== version 1: one thread per output ===================================================== */

constexpr int NAIVE_TILE = 32; /**< a block computes 32 x 32 outputs, one per thread */
static_assert(MATRIX_MAX_ROWS / NAIVE_TILE <= 65535, "row tiles fit the grid's y dimension");

/**
 * TODO(M7 v1): row = blockIdx.y * 32 + threadIdx.y, col = blockIdx.x * 32 +
 * threadIdx.x; outside C: return. acc = 0; for kk in 0 .. k-1 in order:
 * acc = fmaf(a[row][kk], B[kk][col], acc), where B[kk][col] is b[kk * n + col]
 * (NN) or b[col * k + kk] (NT). c[row * n + col] = acc. 64-bit offsets.
 */
template <fa_b_layout LAYOUT>
static __global__ void __launch_bounds__(NAIVE_TILE *NAIVE_TILE)
    matmul_naive_kernel(const float *a, const float *b, float *c, int64_t m, int64_t n,
                        int64_t k)
{
    (void)a;
    (void)b;
    (void)c;
    (void)m;
    (void)n;
    (void)k;
}

/** The complete launch code, as in the reference: validation, grid, launch. */
static fa_status run_matmul_naive(const float *a, const float *b, float *c, int64_t m, int64_t n,
                                  int64_t k, fa_b_layout layout, cudaStream_t stream)
{
    FA_TRY(matmul_validate("matmul_naive", a, b, c, m, n, k, layout, sizeof(float)));
    if (m == 0 || n == 0)
        return FA_OK;
    const dim3 block(NAIVE_TILE, NAIVE_TILE);
    const dim3 grid((unsigned)fa_ceil_div(n, NAIVE_TILE), (unsigned)fa_ceil_div(m, NAIVE_TILE));
    if (layout == FA_B_ROW_MAJOR)
        matmul_naive_kernel<FA_B_ROW_MAJOR><<<grid, block, 0, stream>>>(a, b, c, m, n, k);
    else
        matmul_naive_kernel<FA_B_TRANSPOSED><<<grid, block, 0, stream>>>(a, b, c, m, n, k);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

extern "C" fa_status learner_matmul_naive(const float *a, const float *b, float *c, int64_t m,
                                          int64_t n, int64_t k, fa_b_layout layout,
                                          cudaStream_t stream)
{
    FA_TODO("M7 matmul, version 1 (matmul_naive)");
    return run_matmul_naive(a, b, c, m, n, k, layout, stream);
}

/* ==== version 2: shared-memory tiles ======================================================= */

constexpr int TILED_TILE = 32; /**< 32 x 32 outputs per block, k in steps of 32 */
static_assert(MATRIX_MAX_ROWS / TILED_TILE <= 65535, "row tiles fit the grid's y dimension");

/**
 * TODO(M7 v2): `__shared__ float a_tile[32][32]` ([row][kk]) and
 * `b_tile[32][33]` ([kk][col]; the extra column is for NT, see below). For
 * k0 = 0, 32, ...: thread (ty, tx) loads a[row][k0 + tx] into a_tile[ty][tx]
 * and, for NN, B[k0 + ty][col] into b_tile[ty][tx]; for NT it loads the
 * coalesced b[(blockIdx.x * 32 + ty) * k + k0 + tx] and stores it transposed
 * at b_tile[tx][ty] (33 columns keep those stores in 32 different banks).
 * Zero outside the matrices. __syncthreads(); 32 fmaf in kk order;
 * __syncthreads() before the next loads. Store if inside C.
 */
template <fa_b_layout LAYOUT>
static __global__ void __launch_bounds__(TILED_TILE *TILED_TILE)
    matmul_smem_tiled_kernel(const float *a, const float *b, float *c, int64_t m, int64_t n,
                             int64_t k)
{
    (void)a;
    (void)b;
    (void)c;
    (void)m;
    (void)n;
    (void)k;
}

/** The complete launch code, as in the reference: validation, grid, launch. */
static fa_status run_matmul_smem_tiled(const float *a, const float *b, float *c, int64_t m,
                                       int64_t n, int64_t k, fa_b_layout layout,
                                       cudaStream_t stream)
{
    FA_TRY(matmul_validate("matmul_smem_tiled", a, b, c, m, n, k, layout, sizeof(float)));
    if (m == 0 || n == 0)
        return FA_OK;
    const dim3 block(TILED_TILE, TILED_TILE);
    const dim3 grid((unsigned)fa_ceil_div(n, TILED_TILE), (unsigned)fa_ceil_div(m, TILED_TILE));
    if (layout == FA_B_ROW_MAJOR)
        matmul_smem_tiled_kernel<FA_B_ROW_MAJOR><<<grid, block, 0, stream>>>(a, b, c, m, n, k);
    else
        matmul_smem_tiled_kernel<FA_B_TRANSPOSED><<<grid, block, 0, stream>>>(a, b, c, m, n, k);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

extern "C" fa_status learner_matmul_smem_tiled(const float *a, const float *b, float *c, int64_t m,
                                               int64_t n, int64_t k, fa_b_layout layout,
                                               cudaStream_t stream)
{
    FA_TODO("M7 matmul, version 2 (matmul_smem_tiled)");
    return run_matmul_smem_tiled(a, b, c, m, n, k, layout, stream);
}

/* ==== version 3: register blocking ========================================================= */

constexpr int RB_BLOCK_M = 128, RB_BLOCK_N = 128, RB_BLOCK_K = 8;
constexpr int RB_THREAD_M = 8, RB_THREAD_N = 8; /**< the micro-tile of one thread */
constexpr int RB_VECTOR = 4;                    /**< floats per float4 */
constexpr int RB_THREADS = (RB_BLOCK_M / RB_THREAD_M) * (RB_BLOCK_N / RB_THREAD_N); /* 256 */
static_assert(RB_BLOCK_M * RB_BLOCK_K == RB_VECTOR * RB_THREADS, "one float4 of A per thread");
static_assert(MATRIX_MAX_ROWS / RB_BLOCK_M <= 65535, "row tiles fit the grid's y dimension");

/**
 * TODO(M7 v3): a 128x128 block of C per 256 threads, 8x8 outputs per thread.
 *  - Shared: two buffers of a_tile[8][128] (A stored k-major, i.e.
 *    transposed, so a thread's 4 rows at one k are one float4) and
 *    b_tile[8][128] ([k][col]).
 *  - Copy per k-tile: each thread one float4 of A (row tid / 2, k offset
 *    4 (tid % 2)) and one of B (NN: k row tid / 32, column 4 (tid % 32); NT:
 *    like A, from the [N][K] rows). Use a float4 load when the *_vector flag
 *    says rows are 16-byte aligned and the four elements are inside,
 *    element by element with zeros otherwise.
 *  - Thread (ty, tx) = (tid / 16, tid % 16) owns rows 4ty..4ty+3 and
 *    64+4ty..64+4ty+3, and columns 4tx.. and 64+4tx.. (the split keeps the
 *    float4 reads of a half-warp on 256 contiguous bytes: no bank conflict).
 *    Per k: two float4 of A, two of B, 64 fmaf into float acc[8][8].
 *  - Double buffering: issue the global loads of tile t+1 into registers
 *    before the FMAs of tile t, store them into the other buffer after,
 *    then one __syncthreads().
 *  - Store with float4 where c_vector and the four columns are inside.
 *  Check `-Xptxas -v`: about 128 registers, no spills (__launch_bounds__(256, 2)).
 */
template <fa_b_layout LAYOUT>
static __global__ void __launch_bounds__(RB_THREADS, 2)
    matmul_register_blocked_kernel(const float *a, const float *b, float *c, int64_t m,
                                   int64_t n, int64_t k, bool a_vector, bool b_vector,
                                   bool c_vector)
{
    (void)a;
    (void)b;
    (void)c;
    (void)m;
    (void)n;
    (void)k;
    (void)a_vector;
    (void)b_vector;
    (void)c_vector;
}

/** The complete launch code, as in the reference: validation, grid, launch. */
static fa_status run_matmul_register_blocked(const float *a, const float *b, float *c, int64_t m,
                                             int64_t n, int64_t k, fa_b_layout layout,
                                             cudaStream_t stream)
{
    FA_TRY(matmul_validate("matmul_register_blocked", a, b, c, m, n, k, layout, sizeof(float)));
    if (m == 0 || n == 0)
        return FA_OK;
    /* float4 loads need every row to start on 16 bytes: an aligned base and a row length
     * that is a multiple of 4. */
    const bool a_vector = k % RB_VECTOR == 0 && aligned_to(a, sizeof(float4));
    const bool b_vector = (layout == FA_B_ROW_MAJOR ? n : k) % RB_VECTOR == 0 &&
                          aligned_to(b, sizeof(float4));
    const bool c_vector = n % RB_VECTOR == 0 && aligned_to(c, sizeof(float4));
    const dim3 grid((unsigned)fa_ceil_div(n, RB_BLOCK_N), (unsigned)fa_ceil_div(m, RB_BLOCK_M));
    if (layout == FA_B_ROW_MAJOR)
        matmul_register_blocked_kernel<FA_B_ROW_MAJOR><<<grid, RB_THREADS, 0, stream>>>(
            a, b, c, m, n, k, a_vector, b_vector, c_vector);
    else
        matmul_register_blocked_kernel<FA_B_TRANSPOSED><<<grid, RB_THREADS, 0, stream>>>(
            a, b, c, m, n, k, a_vector, b_vector, c_vector);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

extern "C" fa_status learner_matmul_register_blocked(const float *a, const float *b, float *c,
                                                     int64_t m, int64_t n, int64_t k,
                                                     fa_b_layout layout, cudaStream_t stream)
{
    FA_TODO("M7 matmul, version 3 (matmul_register_blocked)");
    return run_matmul_register_blocked(a, b, c, m, n, k, layout, stream);
}

/* ==== version 4: tensor cores ============================================================== */

constexpr int MMA_BLOCK_M = 128, MMA_BLOCK_N = 128, MMA_BLOCK_K = 32;
constexpr int MMA_THREADS = 128; /**< 4 warps in a 2 x 2 grid, each owning 64 x 64 of C */
constexpr int MMA_CHUNK = 8;     /**< bf16 per 16-byte chunk (one cp.async, one ldmatrix row) */
static_assert(MMA_BLOCK_K % 16 == 0, "whole k16 steps of mma.sync per k-tile");
static_assert(MATRIX_MAX_ROWS / MMA_BLOCK_M <= 65535, "row tiles fit the grid's y dimension");

/**
 * TODO(M7 v4): tensor cores. The wrappers of tensor_core.cuh are the
 * instructions; the page draws the fragments.
 *  - Shared: 3 stages of a [128][32] A tile and a B tile ([128][32] rows of
 *    B^T for NT, [32][128] for NN), bf16 as uint16_t: 48 KiB in all.
 *  - Tile loads: 16-byte chunks; when ALIGNED, cp_async_16 with 0 source
 *    bytes for chunks outside the matrix (zero-fill); otherwise 2-byte loads
 *    with a bound check per element and a 16-byte shared store.
 *  - Pipeline: commit tiles 0 and 1; for each k-tile kt: cp_async_wait<1>(),
 *    __syncthreads(), start tile kt + 2 into the stage tile kt - 1 used,
 *    commit (even when empty), compute tile kt.
 *  - Compute, per k16 step: 4 ldmatrix_x4 of A (lane l names row l % 16 of
 *    the m16 tile, k chunk l / 16), 4 ldmatrix_x4 (NT) or ldmatrix_x4_trans
 *    (NN) of B, each giving the fragments of two n8 tiles, then 4 x 8
 *    mma_m16n8k16_bf16 into float acc[4][8][4].
 *  - Bank conflicts: 8 rows of one chunk column must hit 8 different 16-byte
 *    bank groups: XOR-swizzle the chunk index, or pad rows by 16 bytes (then
 *    mind the 48 KiB).
 *  - Epilogue: lane l holds rows l/4 and l/4 + 8, columns 2(l%4) and
 *    2(l%4)+1 of each 16x8 tile: store as float2 when c_pairs and inside.
 *  Check `-Xptxas -v` (no spills) and `cuobjdump -sass` (HMMA, LDSM, LDGSTS).
 */
template <fa_b_layout LAYOUT, bool ALIGNED>
static __global__ void __launch_bounds__(MMA_THREADS, 2)
    matmul_mma_bf16_kernel(const uint16_t *a, const uint16_t *b, float *c, int64_t m, int64_t n,
                           int64_t k, bool c_pairs)
{
    (void)a;
    (void)b;
    (void)c;
    (void)m;
    (void)n;
    (void)k;
    (void)c_pairs;
}

template <fa_b_layout LAYOUT, bool ALIGNED>
static fa_status launch_mma(const uint16_t *a, const uint16_t *b, float *c, int64_t m, int64_t n,
                            int64_t k, cudaStream_t stream)
{
    const bool c_pairs = n % 2 == 0 && aligned_to(c, sizeof(float2));
    const dim3 grid((unsigned)fa_ceil_div(n, MMA_BLOCK_N), (unsigned)fa_ceil_div(m, MMA_BLOCK_M));
    matmul_mma_bf16_kernel<LAYOUT, ALIGNED><<<grid, MMA_THREADS, 0, stream>>>(a, b, c, m, n, k,
                                                                             c_pairs);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

/** The complete launch code, as in the reference: validation, grid, launch. */
static fa_status run_matmul_mma_bf16(const uint16_t *a, const uint16_t *b, float *c, int64_t m,
                                     int64_t n, int64_t k, fa_b_layout layout, cudaStream_t stream)
{
    FA_TRY(matmul_validate("matmul_mma_bf16", a, b, c, m, n, k, layout, sizeof(uint16_t)));
    if (m == 0 || n == 0)
        return FA_OK;
    /* cp.async copies whole 16-byte chunks: every row of A and B must start on 16 bytes. */
    const bool aligned = k % MMA_CHUNK == 0 &&
                         (layout == FA_B_TRANSPOSED || n % MMA_CHUNK == 0) &&
                         aligned_to(a, 16) && aligned_to(b, 16);
    if (layout == FA_B_ROW_MAJOR)
        return aligned ? launch_mma<FA_B_ROW_MAJOR, true>(a, b, c, m, n, k, stream)
                       : launch_mma<FA_B_ROW_MAJOR, false>(a, b, c, m, n, k, stream);
    return aligned ? launch_mma<FA_B_TRANSPOSED, true>(a, b, c, m, n, k, stream)
                   : launch_mma<FA_B_TRANSPOSED, false>(a, b, c, m, n, k, stream);
}

extern "C" fa_status learner_matmul_mma_bf16(const uint16_t *a, const uint16_t *b, float *c,
                                             int64_t m, int64_t n, int64_t k, fa_b_layout layout,
                                             cudaStream_t stream)
{
    FA_TODO("M7 matmul, version 4 (matmul_mma_bf16)");
    return run_matmul_mma_bf16(a, b, c, m, n, k, layout, stream);
}
