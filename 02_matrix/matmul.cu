/**
 * @file matmul.cu
 * @brief M7 matmul, C = A * B, four kernels with one idea each (reference).
 *
 * | version | kernel                          | idea                                                    | block tile (M x N x K) | threads | outputs per thread |
 * |---------|---------------------------------|---------------------------------------------------------|------------------------|---------|--------------------|
 * | 1       | matmul_naive_kernel             | one thread per output, operands straight from global    | 32 x 32 x -            | 1024    | 1                  |
 * | 2       | matmul_smem_tiled_kernel        | 32x32 tiles in shared memory: each load feeds 32 FMAs   | 32 x 32 x 32           | 1024    | 1                  |
 * | 3       | matmul_register_blocked_kernel  | 8x8 micro-tile per thread in registers, float4 loads, double-buffered shared memory | 128 x 128 x 8 | 256 | 64 |
 * | 4       | matmul_mma_bf16_kernel          | tensor cores: mma.sync m16n8k16 bf16, ldmatrix, cp.async 3-stage pipeline, XOR-swizzled shared memory | 128 x 128 x 32 | 128 (4 warps of 64 x 64) | 128 |
 *
 * Every version reads B either row-major ([K][N], "NN") or transposed
 * ([N][K], "NT", C = A * B^T as in Q K^T): the layout is a template
 * parameter, so each kernel is compiled once per layout with no runtime
 * branch in the inner loop. Tiles that stick out of the matrices are
 * zero-filled on load (a zero contributes nothing to the sum) and masked on
 * store, so M, N and K need not be multiples of anything.
 *
 * Versions 1 to 3 accumulate each output as one fp32 FMA chain over k in
 * increasing order, so they agree bit for bit with each other and with
 * model_matmul_fp32() (model.c). Version 4 uses the tensor cores, whose
 * internal order and rounding (truncation) differ; it is judged with the
 * tensor-core bound of NUMERICS.md.
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_device.h"
#include "matrix.h"
#include "tensor_core.cuh"

/** Ceil-division: grid sizes, and tile counts inside the kernels. */
static __host__ __device__ constexpr int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/** True when @p p is a multiple of @p alignment bytes. */
static bool aligned_to(const void *p, uintptr_t alignment)
{
    return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

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

/* ==== version 1: one thread per output ===================================================== */

constexpr int NAIVE_TILE = 32; /**< a block computes 32 x 32 outputs, one per thread */
static_assert(NAIVE_TILE * NAIVE_TILE <= 1024, "one block");
static_assert(MATRIX_MAX_ROWS / NAIVE_TILE <= 65535, "row tiles fit the grid's y dimension");

/**
 * c[row][col] = sum_k a[row][k] * B[k][col]. threadIdx.x runs along a row of
 * C, so a warp reads one a[row][k] (a broadcast) and 32 consecutive
 * B[k][col] (coalesced for NN; for NT the 32 reads are k apart: the next
 * version fixes that with shared memory).
 */
template <fa_b_layout LAYOUT>
static __global__ void __launch_bounds__(NAIVE_TILE *NAIVE_TILE)
    matmul_naive_kernel(const float *a, const float *b, float *c, int64_t m, int64_t n,
                        int64_t k)
{
    const int64_t row = (int64_t)blockIdx.y * NAIVE_TILE + threadIdx.y;
    const int64_t col = (int64_t)blockIdx.x * NAIVE_TILE + threadIdx.x;
    if (row >= m || col >= n)
        return;
    float acc = 0.0f;
    for (int64_t kk = 0; kk < k; ++kk)
        acc = fmaf(a[row * k + kk], b_element<LAYOUT>(b, kk, col, n, k), acc);
    c[row * n + col] = acc;
}

extern "C" fa_status ref_matmul_naive(const float *a, const float *b, float *c, int64_t m,
                                      int64_t n, int64_t k, fa_b_layout layout,
                                      cudaStream_t stream)
{
    FA_TRY(matmul_validate("matmul_naive", a, b, c, m, n, k, layout, sizeof(float)));
    if (m == 0 || n == 0)
        return FA_OK;
    const dim3 block(NAIVE_TILE, NAIVE_TILE);
    const dim3 grid((unsigned)ceil_div(n, NAIVE_TILE), (unsigned)ceil_div(m, NAIVE_TILE));
    if (layout == FA_B_ROW_MAJOR)
        matmul_naive_kernel<FA_B_ROW_MAJOR><<<grid, block, 0, stream>>>(a, b, c, m, n, k);
    else
        matmul_naive_kernel<FA_B_TRANSPOSED><<<grid, block, 0, stream>>>(a, b, c, m, n, k);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

/* ==== version 2: shared-memory tiles ======================================================= */

constexpr int TILED_TILE = 32;       /**< 32 x 32 outputs per block, k in steps of 32 */
constexpr int TILED_PADDED = 33;     /**< +1 column: a column of the tile spans all 32 banks */
static_assert(TILED_TILE * TILED_TILE <= 1024, "one thread per output of the tile");
static_assert(MATRIX_MAX_ROWS / TILED_TILE <= 65535, "row tiles fit the grid's y dimension");

/**
 * Each block stages a 32x32 tile of A and of B in shared memory, then every
 * thread runs 32 FMAs out of it: each global load now feeds 32 FMAs instead
 * of one. For NT, B arrives as rows of B^T; the thread that read B^T[col][kk]
 * (coalesced along kk) stores it at b_tile[kk][col], down a column of the
 * tile. Without the padding column those 32 stores would all hit one bank.
 */
template <fa_b_layout LAYOUT>
static __global__ void __launch_bounds__(TILED_TILE *TILED_TILE)
    matmul_smem_tiled_kernel(const float *a, const float *b, float *c, int64_t m, int64_t n,
                             int64_t k)
{
    __shared__ float a_tile[TILED_TILE][TILED_TILE];   /* [row][kk] */
    __shared__ float b_tile[TILED_TILE][TILED_PADDED]; /* [kk][col] */
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t row = (int64_t)blockIdx.y * TILED_TILE + ty;
    const int64_t col = (int64_t)blockIdx.x * TILED_TILE + tx;

    float acc = 0.0f;
    for (int64_t k0 = 0; k0 < k; k0 += TILED_TILE) {
        a_tile[ty][tx] = (row < m && k0 + tx < k) ? a[row * k + k0 + tx] : 0.0f;
        if constexpr (LAYOUT == FA_B_ROW_MAJOR) {
            b_tile[ty][tx] = (k0 + ty < k && col < n) ? b[(k0 + ty) * n + col] : 0.0f;
        } else {
            const int64_t b_row = (int64_t)blockIdx.x * TILED_TILE + ty; /* a row of B^T */
            b_tile[tx][ty] = (b_row < n && k0 + tx < k) ? b[b_row * k + k0 + tx] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILED_TILE; ++kk)
            acc = fmaf(a_tile[ty][kk], b_tile[kk][tx], acc);
        __syncthreads(); /* the next iteration overwrites the tiles */
    }
    if (row < m && col < n)
        c[row * n + col] = acc;
}

extern "C" fa_status ref_matmul_smem_tiled(const float *a, const float *b, float *c, int64_t m,
                                           int64_t n, int64_t k, fa_b_layout layout,
                                           cudaStream_t stream)
{
    FA_TRY(matmul_validate("matmul_smem_tiled", a, b, c, m, n, k, layout, sizeof(float)));
    if (m == 0 || n == 0)
        return FA_OK;
    const dim3 block(TILED_TILE, TILED_TILE);
    const dim3 grid((unsigned)ceil_div(n, TILED_TILE), (unsigned)ceil_div(m, TILED_TILE));
    if (layout == FA_B_ROW_MAJOR)
        matmul_smem_tiled_kernel<FA_B_ROW_MAJOR><<<grid, block, 0, stream>>>(a, b, c, m, n, k);
    else
        matmul_smem_tiled_kernel<FA_B_TRANSPOSED><<<grid, block, 0, stream>>>(a, b, c, m, n, k);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

/* ==== version 3: register blocking ========================================================= */

constexpr int RB_BLOCK_M = 128, RB_BLOCK_N = 128, RB_BLOCK_K = 8;
constexpr int RB_THREAD_M = 8, RB_THREAD_N = 8; /**< the micro-tile of one thread */
constexpr int RB_VECTOR = 4;                    /**< floats per float4 */
constexpr int RB_THREADS_N = RB_BLOCK_N / RB_THREAD_N;                /* 16 */
constexpr int RB_THREADS = (RB_BLOCK_M / RB_THREAD_M) * RB_THREADS_N; /* 256 */
constexpr int RB_HALF_M = RB_BLOCK_M / 2, RB_HALF_N = RB_BLOCK_N / 2;
static_assert(RB_BLOCK_M * RB_BLOCK_K == RB_VECTOR * RB_THREADS, "one float4 of A per thread");
static_assert(RB_BLOCK_N * RB_BLOCK_K == RB_VECTOR * RB_THREADS, "one float4 of B per thread");
static_assert(RB_BLOCK_K == 2 * RB_VECTOR, "two threads per row of an A tile");
static_assert(RB_BLOCK_M == RB_BLOCK_N, "A and B^T tiles share the copy pattern and store_k_major");
static_assert(RB_THREAD_M == 2 * RB_VECTOR && RB_THREAD_N == 2 * RB_VECTOR,
              "a micro-tile is two float4 of A times two float4 of B");
static_assert(MATRIX_MAX_ROWS / RB_BLOCK_M <= 65535, "row tiles fit the grid's y dimension");

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
static __global__ void __launch_bounds__(RB_THREADS, 2)
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
    const int64_t k_tiles = ceil_div(k, RB_BLOCK_K);

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

extern "C" fa_status ref_matmul_register_blocked(const float *a, const float *b, float *c,
                                                 int64_t m, int64_t n, int64_t k,
                                                 fa_b_layout layout, cudaStream_t stream)
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
    const dim3 grid((unsigned)ceil_div(n, RB_BLOCK_N), (unsigned)ceil_div(m, RB_BLOCK_M));
    if (layout == FA_B_ROW_MAJOR)
        matmul_register_blocked_kernel<FA_B_ROW_MAJOR><<<grid, RB_THREADS, 0, stream>>>(
            a, b, c, m, n, k, a_vector, b_vector, c_vector);
    else
        matmul_register_blocked_kernel<FA_B_TRANSPOSED><<<grid, RB_THREADS, 0, stream>>>(
            a, b, c, m, n, k, a_vector, b_vector, c_vector);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

/* ==== version 4: tensor cores ============================================================== */

constexpr int MMA_BLOCK_M = 128, MMA_BLOCK_N = 128, MMA_BLOCK_K = 32;
constexpr int MMA_WARP_M = 64, MMA_WARP_N = 64; /**< the tile of C one warp owns */
constexpr int MMA_WARPS_N = MMA_BLOCK_N / MMA_WARP_N;
constexpr int MMA_THREADS = 32 * (MMA_BLOCK_M / MMA_WARP_M) * MMA_WARPS_N; /* 128 */
constexpr int MMA_STAGES = 3;               /**< tiles in flight: compute one, load two */
constexpr int MMA_M = 16, MMA_N = 8, MMA_K = 16; /**< the instruction's shape */
constexpr int MMA_TILES_M = MMA_WARP_M / MMA_M;  /* 4 */
constexpr int MMA_TILES_N = MMA_WARP_N / MMA_N;  /* 8 */
constexpr int MMA_CHUNK = 8;                     /**< bf16 per 16-byte chunk */
constexpr int MMA_A_TILE = MMA_BLOCK_M * MMA_BLOCK_K;
constexpr int MMA_B_TILE = MMA_BLOCK_K * MMA_BLOCK_N;
constexpr int MMA_K_CHUNKS = MMA_BLOCK_K / MMA_CHUNK; /**< chunks per row of a [.][BLOCK_K] tile */
constexpr int MMA_N_CHUNKS = MMA_BLOCK_N / MMA_CHUNK; /**< chunks per row of a [BLOCK_K][BLOCK_N] tile */
constexpr int MMA_SWIZZLE_ROWS = 8; /**< a 128-byte line holds 8 chunks: 8 rows to spread */
static_assert(MMA_STAGES * (MMA_A_TILE + MMA_B_TILE) * 2 <= 48 * 1024,
              "static shared memory is at most 48 KiB per block");
static_assert(MMA_BLOCK_K % MMA_K == 0 && MMA_WARP_M % MMA_M == 0 && MMA_WARP_N % (2 * MMA_N) == 0,
              "whole instructions; B fragments come in pairs of n8 tiles per ldmatrix.x4");
static_assert(MMA_A_TILE / MMA_CHUNK % MMA_THREADS == 0 && MMA_B_TILE / MMA_CHUNK % MMA_THREADS == 0,
              "every thread copies the same number of chunks");
static_assert(MATRIX_MAX_ROWS / MMA_BLOCK_M <= 65535, "row tiles fit the grid's y dimension");

/**
 * Element offset of 16-byte chunk @p chunk of row @p row in a tile whose rows
 * hold ROW_CHUNKS chunks, XOR-swizzled: the chunk's position inside its
 * 128-byte line is XORed with the line's index (mod 8). ldmatrix reads one
 * chunk column of 8 consecutive rows at once; unswizzled, those 8 chunks sit
 * a multiple of 64 or 256 bytes apart and land in the same 4 banks (a 4- or
 * 8-way conflict). Swizzled, they land in 8 different bank groups. Unlike
 * padding, the swizzle costs no shared memory, and it keeps chunks whole, so
 * cp.async can still write 16 bytes at a time.
 */
template <int ROW_CHUNKS>
static __device__ __forceinline__ int swizzled(int row, int chunk)
{
    constexpr int LINE_CHUNKS = ROW_CHUNKS < MMA_SWIZZLE_ROWS ? MMA_SWIZZLE_ROWS : ROW_CHUNKS;
    const int linear = row * ROW_CHUNKS + chunk;
    return (linear ^ ((linear / LINE_CHUNKS) % MMA_SWIZZLE_ROWS)) * MMA_CHUNK;
}

/**
 * Copies the TILE_ROWS x TILE_COLS tile at (r0, c0) of a [rows][cols] bf16
 * matrix into a swizzled shared tile, zero-filling what lies outside.
 * ALIGNED (16-byte aligned base, cols % 8 == 0): one cp.async per chunk, a
 * chunk being either wholly inside or wholly outside (0 bytes read).
 * Otherwise: 2-byte loads with a bound check per element, then one 16-byte
 * shared store; synchronous, but the same result.
 */
template <int TILE_ROWS, int TILE_COLS, bool ALIGNED>
static __device__ __forceinline__ void load_tile_bf16(uint16_t *tile, const uint16_t *src,
                                                      int64_t rows, int64_t cols, int64_t r0,
                                                      int64_t c0)
{
    constexpr int ROW_CHUNKS = TILE_COLS / MMA_CHUNK;
    constexpr int ROWS_PER_PASS = MMA_THREADS / ROW_CHUNKS; /* the block copies this many rows at once */
    static_assert(MMA_THREADS % ROW_CHUNKS == 0 && TILE_ROWS % ROWS_PER_PASS == 0,
                  "every thread copies the same chunk column of TILE_ROWS / ROWS_PER_PASS rows");
    /* Thread t copies chunk t % ROW_CHUNKS of rows t / ROW_CHUNKS + j * ROWS_PER_PASS:
     * consecutive threads read consecutive 16-byte chunks of a row. */
    const int chunk = threadIdx.x % ROW_CHUNKS;
    const int64_t c = c0 + (int64_t)chunk * MMA_CHUNK;
#pragma unroll
    for (int j = 0; j < TILE_ROWS / ROWS_PER_PASS; ++j) {
        const int row = threadIdx.x / ROW_CHUNKS + j * ROWS_PER_PASS;
        const int64_t r = r0 + row;
        uint16_t *dst = tile + swizzled<ROW_CHUNKS>(row, chunk);
        if constexpr (ALIGNED) {
            const bool inside = r < rows && c < cols;
            cp_async_16(shared_address(dst), inside ? src + r * cols + c : src, inside ? 16 : 0);
        } else {
            uint32_t packed[MMA_CHUNK / 2];
#pragma unroll
            for (int e = 0; e < MMA_CHUNK; e += 2) {
                const uint32_t lo = (r < rows && c + e < cols) ? src[r * cols + c + e] : 0u;
                const uint32_t hi = (r < rows && c + e + 1 < cols) ? src[r * cols + c + e + 1] : 0u;
                packed[e / 2] = lo | (hi << 16);
            }
            *reinterpret_cast<uint4 *>(dst) = make_uint4(packed[0], packed[1], packed[2], packed[3]);
        }
    }
}

/** Starts loading k-tile @p k0 of A and B into one pipeline stage. */
template <fa_b_layout LAYOUT, bool ALIGNED>
static __device__ __forceinline__ void load_stage(uint16_t *a_tile, uint16_t *b_tile,
                                                  const uint16_t *a, const uint16_t *b,
                                                  int64_t m, int64_t n, int64_t k, int64_t row0,
                                                  int64_t col0, int64_t k0)
{
    load_tile_bf16<MMA_BLOCK_M, MMA_BLOCK_K, ALIGNED>(a_tile, a, m, k, row0, k0);
    if constexpr (LAYOUT == FA_B_ROW_MAJOR)
        load_tile_bf16<MMA_BLOCK_K, MMA_BLOCK_N, ALIGNED>(b_tile, b, k, n, k0, col0);
    else
        load_tile_bf16<MMA_BLOCK_N, MMA_BLOCK_K, ALIGNED>(b_tile, b, n, k, col0, k0);
}

/**
 * One k-tile on the tensor cores: for each k16 step, the warp loads its A
 * fragments (4 ldmatrix.x4: 64 rows x 16 k) and B fragments (4 ldmatrix.x4,
 * each two n8 tiles x 16 k) and issues 4 x 8 mma.sync.
 *
 * ldmatrix addressing (lane l, each lane names one 16-byte row of an 8x8 matrix):
 *   A [m][k] tile: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7,
 *   k 8-15), (rows 8-15, k 8-15) = a[0..3] of the fragment: lane l names row
 *   l % 16 at k chunk l / 16.
 *   B^T [n][k] tile (NT): matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15,
 *   k 0-7), (n 8-15, k 8-15) = b[0], b[1] of two n8 tiles: lane l names row n
 *   = l % 8 + 8 (l / 16) at k chunk (l / 8) % 2.
 *   B [k][n] tile (NN): the same four matrices stored k-major, read with
 *   .trans: lane l names row k = l % 8 + 8 ((l / 8) % 2) at n chunk l / 16.
 */
template <fa_b_layout LAYOUT>
static __device__ __forceinline__ void mma_k_tile(const uint16_t *a_tile, const uint16_t *b_tile,
                                                  float acc[MMA_TILES_M][MMA_TILES_N][4],
                                                  int warp_row, int warp_col, int lane)
{
#pragma unroll
    for (int kk = 0; kk < MMA_BLOCK_K; kk += MMA_K) {
        uint32_t a_frag[MMA_TILES_M][4];
        uint32_t b_frag[MMA_TILES_N][2];
#pragma unroll
        for (int i = 0; i < MMA_TILES_M; ++i) {
            const int row = warp_row + i * MMA_M + lane % 16;
            const int chunk = kk / MMA_CHUNK + lane / 16;
            ldmatrix_x4(a_frag[i], shared_address(a_tile + swizzled<MMA_K_CHUNKS>(row, chunk)));
        }
#pragma unroll
        for (int j = 0; j < MMA_TILES_N; j += 2) {
            uint32_t r[4];
            if constexpr (LAYOUT == FA_B_TRANSPOSED) {
                const int row = warp_col + j * MMA_N + lane % 8 + 8 * (lane / 16);
                const int chunk = kk / MMA_CHUNK + (lane / 8) % 2;
                ldmatrix_x4(r, shared_address(b_tile + swizzled<MMA_K_CHUNKS>(row, chunk)));
            } else {
                const int row = kk + lane % 8 + 8 * ((lane / 8) % 2);
                const int chunk = (warp_col + j * MMA_N) / MMA_CHUNK + lane / 16;
                ldmatrix_x4_trans(r, shared_address(b_tile + swizzled<MMA_N_CHUNKS>(row, chunk)));
            }
            b_frag[j][0] = r[0];
            b_frag[j][1] = r[1];
            b_frag[j + 1][0] = r[2];
            b_frag[j + 1][1] = r[3];
        }
#pragma unroll
        for (int i = 0; i < MMA_TILES_M; ++i)
#pragma unroll
            for (int j = 0; j < MMA_TILES_N; ++j)
                mma_m16n8k16_bf16(acc[i][j], a_frag[i], b_frag[j]);
    }
}

/** Stores (v0, v1) at (r, c), (r, c+1) of a [rows][cols] matrix, skipping what lies outside. */
static __device__ __forceinline__ void store_pair(float *p, int64_t rows, int64_t cols,
                                                  int64_t r, int64_t c, float v0, float v1,
                                                  bool pairs)
{
    if (r >= rows || c >= cols)
        return;
    if (pairs && c + 1 < cols) {
        *reinterpret_cast<float2 *>(p + r * cols + c) = make_float2(v0, v1);
        return;
    }
    p[r * cols + c] = v0;
    if (c + 1 < cols)
        p[r * cols + c + 1] = v1;
}

/**
 * A 128x128 block of C from 4 warps, each owning 64x64 (4 x 8 accumulator
 * tiles of 16x8: 128 fp32 registers per thread). K is walked in tiles of 32
 * through a 3-stage cp.async pipeline: while the tensor cores work on tile
 * kt, tiles kt+1 and kt+2 are on their way from global memory.
 *
 * Per iteration: wait until tile kt has landed (this thread's copies), one
 * barrier (everyone's copies are visible, and everyone has finished tile
 * kt-1, whose stage is refilled next), start the copy of tile kt+2 into that
 * stage, compute tile kt. A group is committed every iteration, even an empty
 * one, so "all but the newest STAGES-2 groups" always means "up to tile kt".
 */
template <fa_b_layout LAYOUT, bool ALIGNED>
static __global__ void __launch_bounds__(MMA_THREADS, 2)
    matmul_mma_bf16_kernel(const uint16_t *a, const uint16_t *b, float *c, int64_t m, int64_t n,
                           int64_t k, bool c_pairs)
{
    __shared__ __align__(128) uint16_t a_tiles[MMA_STAGES][MMA_A_TILE];
    __shared__ __align__(128) uint16_t b_tiles[MMA_STAGES][MMA_B_TILE];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int warp_row = (warp / MMA_WARPS_N) * MMA_WARP_M;
    const int warp_col = (warp % MMA_WARPS_N) * MMA_WARP_N;
    const int64_t row0 = (int64_t)blockIdx.y * MMA_BLOCK_M;
    const int64_t col0 = (int64_t)blockIdx.x * MMA_BLOCK_N;
    const int k_tiles = (int)ceil_div(k, MMA_BLOCK_K);

    float acc[MMA_TILES_M][MMA_TILES_N][4] = {};

#pragma unroll
    for (int s = 0; s < MMA_STAGES - 1; ++s) {
        if (s < k_tiles)
            load_stage<LAYOUT, ALIGNED>(a_tiles[s], b_tiles[s], a, b, m, n, k, row0, col0,
                                        (int64_t)s * MMA_BLOCK_K);
        cp_async_commit();
    }
    for (int kt = 0; kt < k_tiles; ++kt) {
        cp_async_wait<MMA_STAGES - 2>();
        __syncthreads();
        const int next = kt + MMA_STAGES - 1;
        if (next < k_tiles)
            load_stage<LAYOUT, ALIGNED>(a_tiles[next % MMA_STAGES], b_tiles[next % MMA_STAGES], a,
                                        b, m, n, k, row0, col0, (int64_t)next * MMA_BLOCK_K);
        cp_async_commit();
        mma_k_tile<LAYOUT>(a_tiles[kt % MMA_STAGES], b_tiles[kt % MMA_STAGES], acc, warp_row,
                           warp_col, lane);
    }

    /* The C fragment: lane l holds rows l/4 and l/4 + 8, columns 2(l%4) and 2(l%4) + 1. */
    const int group = lane / 4, pair = 2 * (lane % 4);
#pragma unroll
    for (int i = 0; i < MMA_TILES_M; ++i)
#pragma unroll
        for (int j = 0; j < MMA_TILES_N; ++j) {
            const int64_t r = row0 + warp_row + i * MMA_M + group;
            const int64_t col = col0 + warp_col + j * MMA_N + pair;
            store_pair(c, m, n, r, col, acc[i][j][0], acc[i][j][1], c_pairs);
            store_pair(c, m, n, r + 8, col, acc[i][j][2], acc[i][j][3], c_pairs);
        }
}

template <fa_b_layout LAYOUT, bool ALIGNED>
static fa_status launch_mma(const uint16_t *a, const uint16_t *b, float *c, int64_t m, int64_t n,
                            int64_t k, cudaStream_t stream)
{
    const bool c_pairs = n % 2 == 0 && aligned_to(c, sizeof(float2));
    const dim3 grid((unsigned)ceil_div(n, MMA_BLOCK_N), (unsigned)ceil_div(m, MMA_BLOCK_M));
    matmul_mma_bf16_kernel<LAYOUT, ALIGNED><<<grid, MMA_THREADS, 0, stream>>>(a, b, c, m, n, k,
                                                                             c_pairs);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

extern "C" fa_status ref_matmul_mma_bf16(const uint16_t *a, const uint16_t *b, float *c,
                                         int64_t m, int64_t n, int64_t k, fa_b_layout layout,
                                         cudaStream_t stream)
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
