/**
 * @file matmul_3_register_blocked.cu
 * @brief M7 matmul, version 3: register blocking (reference kernel).
 *
 * | version | kernel                           | idea                                                                                 | block tile (M x N x K) | threads | outputs per thread |
 * |---------|----------------------------------|--------------------------------------------------------------------------------------|------------------------|---------|--------------------|
 * | 3       | `matmul_register_blocked_kernel` | 8x8 micro-tile per thread in registers, float4 loads, double-buffered shared memory | 128 x 128 x 8          | 256     | 64                 |
 *
 * Version 2 loads two floats from shared memory per FMA, and shared memory
 * delivers 32 words per clock per SM against 128 FMAs. Here each thread keeps
 * an 8x8 block of C in registers: per k it loads 8 values of A and 8 of B and
 * does 64 FMAs. Each output is still one FMA chain over k in increasing
 * order: the bits of versions 1 and 2.
 *
 * Only the kernel and its device helpers live here: harness/launch.cu
 * validates, decides where float4 accesses are allowed (a_vector, b_vector,
 * c_vector), sizes the grid of MATMUL_RB_BLOCK_M x MATMUL_RB_BLOCK_N tiles
 * (matrix.h) and launches MATMUL_RB_THREADS threads per block.
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "matrix.h"

constexpr int RB_BLOCK_M = MATMUL_RB_BLOCK_M, RB_BLOCK_N = MATMUL_RB_BLOCK_N;
constexpr int RB_BLOCK_K = MATMUL_RB_BLOCK_K;
constexpr int RB_THREAD_M = MATMUL_RB_THREAD_M, RB_THREAD_N = MATMUL_RB_THREAD_N;
constexpr int RB_VECTOR = MATMUL_RB_VECTOR;            /**< floats per float4 */
constexpr int RB_THREADS_N = RB_BLOCK_N / RB_THREAD_N; /**< threads along a row of the block tile: 16 */
constexpr int RB_HALF_M = RB_BLOCK_M / 2, RB_HALF_N = RB_BLOCK_N / 2;
static_assert(RB_BLOCK_K == 2 * RB_VECTOR, "two threads per row of an A tile");
static_assert(RB_BLOCK_M == RB_BLOCK_N, "A and B^T tiles share the copy pattern and store_k_major");
static_assert(RB_THREAD_M == 2 * RB_VECTOR && RB_THREAD_N == 2 * RB_VECTOR,
              "a micro-tile is two float4 of A times two float4 of B");
static_assert(sizeof(float4) == RB_VECTOR * sizeof(float), "a float4 holds RB_VECTOR floats");

/**
 * Elements (r, c .. c+3) of a [rows][cols] row-major matrix, zeros outside
 * it. One 16-byte load when @p vector (rows start 16-byte aligned) and the
 * four are inside; element by element at the right and bottom edges.
 */
static __device__ __forceinline__ float4 load_four(const float *p, int64_t rows, int64_t cols,
                                                   int64_t r, int64_t c, bool vector)
{
    if (vector && r < rows && c + RB_VECTOR <= cols)
        return __ldg(reinterpret_cast<const float4 *>(p + r * cols + c));
    float v[RB_VECTOR];
#pragma unroll
    for (int i = 0; i < RB_VECTOR; ++i)
        v[i] = (r < rows && c + i < cols) ? __ldg(p + r * cols + c + i) : 0.0f;
    return make_float4(v[0], v[1], v[2], v[3]);
}

/** Stores @p v at (r, c .. c+3) of a [rows][cols] matrix, skipping what lies outside. */
static __device__ __forceinline__ void store_four(float *p, int64_t rows, int64_t cols,
                                                  int64_t r, int64_t c, float4 v, bool vector)
{
    if (r >= rows)
        return;
    if (vector && c + RB_VECTOR <= cols) {
        *reinterpret_cast<float4 *>(p + r * cols + c) = v;
        return;
    }
    const float f[RB_VECTOR] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < RB_VECTOR; ++i)
        if (c + i < cols)
            p[r * cols + c + i] = f[i];
}

/** Writes four consecutive k of one row into a k-major tile: tile[k + i][row] = v_i. */
static __device__ __forceinline__ void store_k_major(float (*tile)[RB_BLOCK_M], int row, int k,
                                                     float4 v)
{
    tile[k + 0][row] = v.x;
    tile[k + 1][row] = v.y;
    tile[k + 2][row] = v.z;
    tile[k + 3][row] = v.w;
}

/*
 * The float4 each thread copies per k-tile: of A (and of B^T for NT) row
 * tid / 2 of the tile at k offset 4 (tid % 2); of B for NN k row tid / 32 at
 * column 4 (tid % 32). Consecutive threads read consecutive 16-byte pieces.
 */
static __device__ __forceinline__ int rb_copy_row(void) { return threadIdx.x / 2; }
static __device__ __forceinline__ int rb_copy_k(void) { return (threadIdx.x % 2) * RB_VECTOR; }
static __device__ __forceinline__ int rb_copy_b_k(void)
{
    return threadIdx.x / (RB_BLOCK_N / RB_VECTOR);
}
static __device__ __forceinline__ int rb_copy_b_col(void)
{
    return (threadIdx.x % (RB_BLOCK_N / RB_VECTOR)) * RB_VECTOR;
}

/** Loads this thread's float4 of the A and B tiles at k offset @p k0 into registers. */
template <fa_b_layout LAYOUT>
static __device__ __forceinline__ void rb_fetch(const float *a, const float *b, int64_t m,
                                                int64_t n, int64_t k, int64_t row0, int64_t col0,
                                                int64_t k0, bool a_vector, bool b_vector,
                                                float4 *a_next, float4 *b_next)
{
    *a_next = load_four(a, m, k, row0 + rb_copy_row(), k0 + rb_copy_k(), a_vector);
    if constexpr (LAYOUT == FA_B_ROW_MAJOR)
        *b_next = load_four(b, k, n, k0 + rb_copy_b_k(), col0 + rb_copy_b_col(), b_vector);
    else
        *b_next = load_four(b, n, k, col0 + rb_copy_row(), k0 + rb_copy_k(), b_vector);
}

/** Writes the fetched float4s into one buffer of the shared tiles (A and B^T transposed). */
template <fa_b_layout LAYOUT>
static __device__ __forceinline__ void rb_store(float (*a_tile)[RB_BLOCK_M],
                                                float (*b_tile)[RB_BLOCK_N], float4 a_next,
                                                float4 b_next)
{
    store_k_major(a_tile, rb_copy_row(), rb_copy_k(), a_next);
    if constexpr (LAYOUT == FA_B_ROW_MAJOR)
        *reinterpret_cast<float4 *>(&b_tile[rb_copy_b_k()][rb_copy_b_col()]) = b_next;
    else
        store_k_major(b_tile, rb_copy_row(), rb_copy_k(), b_next);
}

/**
 * A 128x128 block of C; thread (ty, tx) of a 16x16 grid owns the 8x8
 * outputs at rows {4ty .. 4ty+3, 64+4ty .. 64+4ty+3} and the same pattern of
 * columns with tx. Per k it reads 8 values of A and 8 of B from shared memory
 * (four LDS.128) and does 64 FMAs: 4 FMAs per shared load instead of 1 in
 * version 2. A is stored k-major (transposed) so that a thread's four rows at
 * one k are one float4. The two groups of four sit 64 apart (not 8
 * consecutive) so that the 16 threads of a half-warp reading B read 16
 * consecutive float4 (256 contiguous bytes, no bank conflict) and the two
 * rows of threads in a warp read the same A float4 (a broadcast).
 *
 * Double buffering: while the FMAs run on tile t, the loads of tile t+1 are
 * already in flight into registers; they are written to the other buffer
 * afterwards, so one __syncthreads per k-tile suffices.
 */
template <fa_b_layout LAYOUT>
static __global__ void __launch_bounds__(MATMUL_RB_THREADS, 2)
    matmul_register_blocked_kernel(const float *a, const float *b, float *c, int64_t m,
                                   int64_t n, int64_t k, bool a_vector, bool b_vector,
                                   bool c_vector)
{
    __shared__ __align__(16) float a_tile[2][RB_BLOCK_K][RB_BLOCK_M]; /* k-major */
    __shared__ __align__(16) float b_tile[2][RB_BLOCK_K][RB_BLOCK_N];
    const int tid = threadIdx.x;
    const int64_t row0 = (int64_t)blockIdx.y * RB_BLOCK_M;
    const int64_t col0 = (int64_t)blockIdx.x * RB_BLOCK_N;

    const int tx = tid % RB_THREADS_N, ty = tid / RB_THREADS_N;
    float acc[RB_THREAD_M][RB_THREAD_N] = {};
    const int64_t k_tiles = fa_ceil_div(k, RB_BLOCK_K);

    float4 a_next, b_next;
    rb_fetch<LAYOUT>(a, b, m, n, k, row0, col0, 0, a_vector, b_vector, &a_next, &b_next);
    rb_store<LAYOUT>(a_tile[0], b_tile[0], a_next, b_next);
    __syncthreads();
    for (int64_t t = 0; t < k_tiles; ++t) {
        const int current = (int)(t & 1);
        const bool more = t + 1 < k_tiles;
        if (more) /* the loads stay in flight during the FMAs below */
            rb_fetch<LAYOUT>(a, b, m, n, k, row0, col0, (t + 1) * RB_BLOCK_K, a_vector, b_vector,
                             &a_next, &b_next);
#pragma unroll
        for (int kk = 0; kk < RB_BLOCK_K; ++kk) {
            const float4 a_lo = *reinterpret_cast<const float4 *>(&a_tile[current][kk][ty * RB_VECTOR]);
            const float4 a_hi =
                *reinterpret_cast<const float4 *>(&a_tile[current][kk][RB_HALF_M + ty * RB_VECTOR]);
            const float4 b_lo = *reinterpret_cast<const float4 *>(&b_tile[current][kk][tx * RB_VECTOR]);
            const float4 b_hi =
                *reinterpret_cast<const float4 *>(&b_tile[current][kk][RB_HALF_N + tx * RB_VECTOR]);
            const float af[RB_THREAD_M] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w,
                                           a_hi.x, a_hi.y, a_hi.z, a_hi.w};
            const float bf[RB_THREAD_N] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w,
                                           b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
            for (int i = 0; i < RB_THREAD_M; ++i)
#pragma unroll
                for (int j = 0; j < RB_THREAD_N; ++j)
                    acc[i][j] = fmaf(af[i], bf[j], acc[i][j]);
        }
        if (more)
            rb_store<LAYOUT>(a_tile[current ^ 1], b_tile[current ^ 1], a_next, b_next);
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < RB_THREAD_M; ++i) {
        const int64_t r = row0 + (i / RB_VECTOR) * RB_HALF_M + ty * RB_VECTOR + i % RB_VECTOR;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int j = h * RB_VECTOR;
            store_four(c, m, n, r, col0 + h * RB_HALF_N + tx * RB_VECTOR,
                       make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]),
                       c_vector);
        }
    }
}
