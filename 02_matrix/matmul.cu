/**
 * @file matmul.cu
 * @brief M7 matmul, C = A * B, four kernels with one idea each (reference).
 *
 * | version | kernel                          | idea                                                    | block tile (M x N x K) | threads | outputs per thread |
 * |---------|---------------------------------|---------------------------------------------------------|------------------------|---------|--------------------|
 * | 1       | matmul_naive_kernel             | one thread per output, operands straight from global    | 32 x 32 x -            | 1024    | 1                  |
 * | 2       | matmul_smem_tiled_kernel        | 32x32 tiles in shared memory: each load feeds 32 FMAs   | 32 x 32 x 32           | 1024    | 1                  |
 * | 3       | matmul_register_blocked_kernel  | 8x8 micro-tile per thread in registers, float4 loads, double-buffered shared memory | 128 x 128 x 8 | 256 | 64 |
 * | 4       | matmul_mma_bf16_kernel          | tensor cores: mma.sync m16n8k16 bf16, ldmatrix, cp.async 4-stage pipeline, XOR-swizzled shared memory, addresses set up once | 128 x 128 x 32 | 128 (4 warps of 64 x 64) | 128 |
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
#include "fa_index.h"

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
    const dim3 grid((unsigned)fa_ceil_div(n, NAIVE_TILE), (unsigned)fa_ceil_div(m, NAIVE_TILE));
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
    const dim3 grid((unsigned)fa_ceil_div(n, TILED_TILE), (unsigned)fa_ceil_div(m, TILED_TILE));
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

/* ==== version 4: tensor cores ============================================================== */

constexpr int MMA_BLOCK_M = 128, MMA_BLOCK_N = 128, MMA_BLOCK_K = 32;
constexpr int MMA_WARP_M = 64, MMA_WARP_N = 64; /**< the tile of C one warp owns */
constexpr int MMA_WARPS_N = MMA_BLOCK_N / MMA_WARP_N;
constexpr int MMA_THREADS = FA_WARP_THREADS * (MMA_BLOCK_M / MMA_WARP_M) * MMA_WARPS_N; /* 128 */
constexpr int MMA_STAGES = 4;               /**< tiles in flight: compute one, load three */
constexpr int MMA_M = 16, MMA_N = 8, MMA_K = 16; /**< the instruction's shape */
constexpr int MMA_TILES_M = MMA_WARP_M / MMA_M;  /* 4 */
constexpr int MMA_TILES_N = MMA_WARP_N / MMA_N;  /* 8 */
constexpr int MMA_K_STEPS = MMA_BLOCK_K / MMA_K; /* 2 */
constexpr int MMA_CHUNK = 8;                     /**< bf16 per 16-byte chunk */
constexpr int MMA_A_TILE = MMA_BLOCK_M * MMA_BLOCK_K;
constexpr int MMA_B_TILE = MMA_BLOCK_K * MMA_BLOCK_N;
constexpr int MMA_A_TILE_BYTES = MMA_A_TILE * 2;
constexpr int MMA_STAGE_BYTES = (MMA_A_TILE + MMA_B_TILE) * 2; /**< A tile, then B tile */
constexpr int MMA_SMEM_BYTES = MMA_STAGES * MMA_STAGE_BYTES;   /* 64 KiB */
constexpr int MMA_K_CHUNKS = MMA_BLOCK_K / MMA_CHUNK; /**< chunks per row of a [.][BLOCK_K] tile */
constexpr int MMA_N_CHUNKS = MMA_BLOCK_N / MMA_CHUNK; /**< chunks per row of a [BLOCK_K][BLOCK_N] tile */
constexpr int MMA_SWIZZLE_ROWS = 8; /**< a 128-byte line holds 8 chunks: 8 rows to spread */
constexpr int MMA_COPY_PASSES = MMA_A_TILE / MMA_CHUNK / MMA_THREADS; /**< chunks per thread per operand tile */
constexpr int MMA_GROUP_M = 8; /**< block rows that walk C together (see the kernel) */
static_assert(MMA_A_TILE == MMA_B_TILE && MMA_A_TILE / MMA_CHUNK % MMA_THREADS == 0,
              "every thread copies MMA_COPY_PASSES chunks of A and as many of B per k-tile");
static_assert(2 * MMA_SMEM_BYTES <= 160 * 1024,
              "two blocks per SM fit the shared memory of an A100 (164 KiB) and an H100 (228 KiB)");
static_assert(MMA_BLOCK_K % MMA_K == 0 && MMA_WARP_M % MMA_M == 0 && MMA_WARP_N % (2 * MMA_N) == 0,
              "whole instructions; B fragments come in pairs of n8 tiles per ldmatrix.x4");
static_assert(MMA_STAGE_BYTES % 128 == 0 && MMA_A_TILE_BYTES % 128 == 0,
              "every tile starts on a 128-byte line, as the swizzle assumes");
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
static __host__ __device__ constexpr int swizzled(int row, int chunk)
{
    constexpr int LINE_CHUNKS = ROW_CHUNKS < MMA_SWIZZLE_ROWS ? MMA_SWIZZLE_ROWS : ROW_CHUNKS;
    const int linear = row * ROW_CHUNKS + chunk;
    return (linear ^ ((linear / LINE_CHUNKS) % MMA_SWIZZLE_ROWS)) * MMA_CHUNK;
}

/**
 * True when moving @p rows rows down a swizzled tile moves every chunk by the
 * same offset (the swizzle repeats every 8 lines): then one swizzled offset,
 * computed once, serves all those rows with a constant added, and the
 * constant folds into the instruction's immediate.
 */
template <int ROW_CHUNKS>
static __host__ __device__ constexpr bool swizzle_repeats_every(int rows)
{
    constexpr int LINE_CHUNKS = ROW_CHUNKS < MMA_SWIZZLE_ROWS ? MMA_SWIZZLE_ROWS : ROW_CHUNKS;
    return rows * ROW_CHUNKS % (LINE_CHUNKS * MMA_SWIZZLE_ROWS) == 0;
}

/**
 * One thread's share of the asynchronous copies of one operand (cp.async
 * path: 16-byte aligned rows, K a multiple of 8). The addresses are worked
 * out once, before the k loop; each k-tile then only issues the copies and
 * moves the pointers on by one k-tile, instead of recomputing 64-bit
 * addresses and bound checks for every chunk of every tile.
 */
typedef struct {
    const uint16_t *src[MMA_COPY_PASSES]; /**< its chunk of each pass, in the next k-tile to load */
    int64_t k_step;   /**< elements from one k-tile to the next: BLOCK_K along a row, or BLOCK_K rows */
    uint32_t dst;     /**< byte offset of its pass-0 chunk in the shared tile (swizzled) */
    int k_index;      /**< k of its pass-0 chunk inside the k-tile */
} operand_copy;

/**
 * Sets up the copies of TILE_ROWS x TILE_COLS tiles of a [rows][cols] bf16
 * matrix, the first at (r0, c0); the k dimension runs down the rows
 * (K_ALONG_ROWS, B in NN) or along them (A, and B in NT). Thread t copies
 * chunk t % ROW_CHUNKS of rows t / ROW_CHUNKS + j * ROWS_PER_PASS:
 * consecutive threads read consecutive 16-byte chunks of a row.
 *
 * Outside the matrix in m or n, a chunk is clamped onto the last row (A, B^T)
 * or the last chunk of a row (B): it then holds real but unrelated data,
 * which only ever reaches rows or columns of C that lie outside C and are
 * never stored. So the k loop needs no m or n bound checks at all. In k it
 * cannot clamp (those products would be summed into C): chunks past K are
 * zero-filled instead, which only the last k-tile can need.
 */
template <int TILE_ROWS, int TILE_COLS, bool K_ALONG_ROWS>
static __device__ __forceinline__ operand_copy operand_copy_setup(const uint16_t *matrix,
                                                                  int64_t rows, int64_t cols,
                                                                  int64_t r0, int64_t c0)
{
    constexpr int ROW_CHUNKS = TILE_COLS / MMA_CHUNK;
    constexpr int ROWS_PER_PASS = MMA_THREADS / ROW_CHUNKS;
    static_assert(MMA_THREADS % ROW_CHUNKS == 0 && TILE_ROWS == ROWS_PER_PASS * MMA_COPY_PASSES,
                  "the block copies ROWS_PER_PASS whole rows per pass");
    static_assert(swizzle_repeats_every<ROW_CHUNKS>(ROWS_PER_PASS),
                  "every pass has the swizzle of pass 0: its destination is pass 0's plus a constant");
    const int row = threadIdx.x / ROW_CHUNKS, chunk = threadIdx.x % ROW_CHUNKS;
    operand_copy copy;
#pragma unroll
    for (int j = 0; j < MMA_COPY_PASSES; ++j) {
        int64_t r = r0 + row + j * ROWS_PER_PASS;
        int64_t c = c0 + chunk * MMA_CHUNK;
        if constexpr (K_ALONG_ROWS)
            c = c < cols ? c : cols - MMA_CHUNK; /* cols % 8 == 0: a chunk is wholly in or out */
        else
            r = r < rows ? r : rows - 1;
        copy.src[j] = matrix + r * cols + c;
    }
    copy.k_step = K_ALONG_ROWS ? MMA_BLOCK_K * cols : MMA_BLOCK_K;
    copy.dst = (uint32_t)swizzled<ROW_CHUNKS>(row, chunk) * 2;
    copy.k_index = K_ALONG_ROWS ? row : chunk * MMA_CHUNK;
    return copy;
}

/**
 * Issues this thread's cp.async copies of the next k-tile of one operand
 * into the shared tile at @p tile, then steps to the k-tile after it.
 * CHECK_K (the last k-tile, when K % BLOCK_K != 0): a chunk at k >= @p k_left
 * (K minus the tile's first k) reads 0 bytes from the matrix base and is
 * zero-filled. Every other k-tile copies without a single test.
 */
template <int TILE_COLS, bool K_ALONG_ROWS, bool CHECK_K>
static __device__ __forceinline__ void operand_copy_issue(operand_copy *copy, uint32_t tile,
                                                          const uint16_t *matrix, int k_left)
{
    constexpr int ROWS_PER_PASS = MMA_THREADS / (TILE_COLS / MMA_CHUNK);
#pragma unroll
    for (int j = 0; j < MMA_COPY_PASSES; ++j) {
        const int k_index = copy->k_index + (K_ALONG_ROWS ? j * ROWS_PER_PASS : 0);
        const bool inside = !CHECK_K || k_index < k_left;
        cp_async_16(tile + copy->dst + j * ROWS_PER_PASS * TILE_COLS * 2,
                    inside ? copy->src[j] : matrix, inside ? 16 : 0);
        copy->src[j] += copy->k_step;
    }
}

/**
 * The fallback for rows that do not start on 16 bytes (K or N not a multiple
 * of 8, or an unaligned base): copies the TILE_ROWS x TILE_COLS tile at
 * (r0, c0) of a [rows][cols] matrix with 2-byte loads and a bound check per
 * element (zeros outside), then one 16-byte shared store per chunk;
 * synchronous, but the same tile as the cp.async path.
 */
template <int TILE_ROWS, int TILE_COLS>
static __device__ __forceinline__ void load_tile_checked(uint16_t *tile, const uint16_t *src,
                                                         int64_t rows, int64_t cols, int64_t r0,
                                                         int64_t c0)
{
    constexpr int ROW_CHUNKS = TILE_COLS / MMA_CHUNK;
    constexpr int ROWS_PER_PASS = MMA_THREADS / ROW_CHUNKS;
    const int chunk = threadIdx.x % ROW_CHUNKS;
    const int64_t c = c0 + (int64_t)chunk * MMA_CHUNK;
#pragma unroll
    for (int j = 0; j < TILE_ROWS / ROWS_PER_PASS; ++j) {
        const int row = threadIdx.x / ROW_CHUNKS + j * ROWS_PER_PASS;
        const int64_t r = r0 + row;
        uint32_t packed[MMA_CHUNK / 2];
#pragma unroll
        for (int e = 0; e < MMA_CHUNK; e += 2) {
            const uint32_t lo = (r < rows && c + e < cols) ? src[r * cols + c + e] : 0u;
            const uint32_t hi = (r < rows && c + e + 1 < cols) ? src[r * cols + c + e + 1] : 0u;
            packed[e / 2] = lo | (hi << 16);
        }
        *reinterpret_cast<uint4 *>(tile + swizzled<ROW_CHUNKS>(row, chunk)) =
            make_uint4(packed[0], packed[1], packed[2], packed[3]);
    }
}

/** What a block loads: its matrices, sizes and corner, and the cp.async state of both operands. */
typedef struct {
    const uint16_t *a, *b;
    int64_t m, n, k, row0, col0;
    operand_copy a_copy, b_copy; /**< used by the ALIGNED kernels only */
} mma_operands;

/**
 * Starts loading k-tile @p tile of A and B into its pipeline stage, tile %
 * STAGES, of the shared buffer at @p smem (@p smem_address: the same, as a
 * shared-memory address).
 */
template <fa_b_layout LAYOUT, bool ALIGNED>
static __device__ __forceinline__ void load_stage(mma_operands *op, uint16_t *smem,
                                                  uint32_t smem_address, int tile)
{
    constexpr bool NN = LAYOUT == FA_B_ROW_MAJOR;
    const int stage = tile % MMA_STAGES;
    const int64_t k0 = (int64_t)tile * MMA_BLOCK_K;
    if constexpr (ALIGNED) {
        constexpr int B_COLS = NN ? MMA_BLOCK_N : MMA_BLOCK_K;
        const uint32_t a_tile = smem_address + stage * MMA_STAGE_BYTES;
        const uint32_t b_tile = a_tile + MMA_A_TILE_BYTES;
        if (k0 + MMA_BLOCK_K <= op->k) {
            operand_copy_issue<MMA_BLOCK_K, false, false>(&op->a_copy, a_tile, op->a, 0);
            operand_copy_issue<B_COLS, NN, false>(&op->b_copy, b_tile, op->b, 0);
        } else {
            const int k_left = (int)(op->k - k0);
            operand_copy_issue<MMA_BLOCK_K, false, true>(&op->a_copy, a_tile, op->a, k_left);
            operand_copy_issue<B_COLS, NN, true>(&op->b_copy, b_tile, op->b, k_left);
        }
    } else {
        uint16_t *a_tile = smem + stage * (MMA_STAGE_BYTES / 2);
        uint16_t *b_tile = a_tile + MMA_A_TILE;
        load_tile_checked<MMA_BLOCK_M, MMA_BLOCK_K>(a_tile, op->a, op->m, op->k, op->row0, k0);
        if constexpr (NN)
            load_tile_checked<MMA_BLOCK_K, MMA_BLOCK_N>(b_tile, op->b, op->k, op->n, k0, op->col0);
        else
            load_tile_checked<MMA_BLOCK_N, MMA_BLOCK_K>(b_tile, op->b, op->n, op->k, op->col0, k0);
    }
}

/**
 * Byte offsets, inside a stage's tiles, of the 16-byte row this lane names
 * to ldmatrix; worked out once, since the swizzle makes them costly. The
 * other fragments of the warp tile are a constant away (see mma_k_tile()).
 */
typedef struct {
    uint32_t a[MMA_K_STEPS];     /**< A fragment of m-tile 0, per k16 step */
    uint32_t b[MMA_TILES_N / 2]; /**< NN: B fragments of n8 pair p, k16 step 0; NT: pair 0, per k16 step */
} fragment_offsets;

/*
 * ldmatrix addressing (lane l, each lane names one 16-byte row of an 8x8 matrix):
 *   A [m][k] tile: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7,
 *   k 8-15), (rows 8-15, k 8-15) = a[0..3] of the fragment: lane l names row
 *   l % 16 at k chunk l / 16.
 *   B^T [n][k] tile (NT): matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15,
 *   k 0-7), (n 8-15, k 8-15) = b[0], b[1] of two n8 tiles: lane l names row n
 *   = l % 8 + 8 (l / 16) at k chunk (l / 8) % 2.
 *   B [k][n] tile (NN): the same four matrices stored k-major, read with
 *   .trans: lane l names row k = l % 8 + 8 ((l / 8) % 2) at n chunk l / 16.
 * Moving 16 rows down keeps the swizzle (asserted below), so the next m16
 * tile of A, the next n8 pair of B^T and the next k16 step of B are a
 * constant away; the n8 pairs of B (NN) differ in the swizzled chunk and
 * get an offset each.
 */
template <fa_b_layout LAYOUT>
static __device__ __forceinline__ fragment_offsets fragment_offsets_of(int warp_row, int warp_col,
                                                                      int lane)
{
    static_assert(swizzle_repeats_every<MMA_K_CHUNKS>(MMA_M) &&
                      swizzle_repeats_every<MMA_K_CHUNKS>(2 * MMA_N) &&
                      swizzle_repeats_every<MMA_N_CHUNKS>(MMA_K),
                  "16 rows down a tile keep the swizzle");
    constexpr int STEP_CHUNKS = MMA_K / MMA_CHUNK;
    fragment_offsets f;
#pragma unroll
    for (int s = 0; s < MMA_K_STEPS; ++s)
        f.a[s] = 2 * swizzled<MMA_K_CHUNKS>(warp_row + lane % 16, s * STEP_CHUNKS + lane / 16);
    if constexpr (LAYOUT == FA_B_TRANSPOSED) {
#pragma unroll
        for (int s = 0; s < MMA_K_STEPS; ++s)
            f.b[s] = 2 * swizzled<MMA_K_CHUNKS>(warp_col + lane % 8 + 8 * (lane / 16),
                                                s * STEP_CHUNKS + (lane / 8) % 2);
    } else {
#pragma unroll
        for (int p = 0; p < MMA_TILES_N / 2; ++p)
            f.b[p] = 2 * swizzled<MMA_N_CHUNKS>(lane % 8 + 8 * ((lane / 8) % 2),
                                                (warp_col + 2 * p * MMA_N) / MMA_CHUNK + lane / 16);
    }
    return f;
}

/**
 * One k-tile on the tensor cores (@p a_tile, @p b_tile: shared addresses of
 * the stage's tiles): for each k16 step, the warp loads its A fragments (4
 * ldmatrix.x4: 64 rows x 16 k) and B fragments (4 ldmatrix.x4, each two n8
 * tiles x 16 k) and issues 4 x 8 mma.sync.
 */
template <fa_b_layout LAYOUT>
static __device__ __forceinline__ void mma_k_tile(uint32_t a_tile, uint32_t b_tile,
                                                  const fragment_offsets *f,
                                                  float acc[MMA_TILES_M][MMA_TILES_N][4])
{
    static_assert(MMA_K_STEPS <= MMA_TILES_N / 2, "fragment_offsets.b holds one per k16 step (NT)");
#pragma unroll
    for (int s = 0; s < MMA_K_STEPS; ++s) {
        uint32_t a_frag[MMA_TILES_M][4];
        uint32_t b_frag[MMA_TILES_N][2];
#pragma unroll
        for (int i = 0; i < MMA_TILES_M; ++i)
            ldmatrix_x4(a_frag[i], a_tile + f->a[s] + i * MMA_M * MMA_BLOCK_K * 2);
#pragma unroll
        for (int p = 0; p < MMA_TILES_N / 2; ++p) {
            uint32_t r[4];
            if constexpr (LAYOUT == FA_B_TRANSPOSED)
                ldmatrix_x4(r, b_tile + f->b[s] + p * 2 * MMA_N * MMA_BLOCK_K * 2);
            else
                ldmatrix_x4_trans(r, b_tile + f->b[p] + s * MMA_K * MMA_BLOCK_N * 2);
            b_frag[2 * p][0] = r[0];
            b_frag[2 * p][1] = r[1];
            b_frag[2 * p + 1][0] = r[2];
            b_frag[2 * p + 1][1] = r[3];
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
 * through a 4-stage cp.async pipeline: while the tensor cores work on tile
 * kt, tiles kt+1 to kt+3 are on their way from global memory.
 *
 * Block order: consecutive blocks (which run at the same time) take a column
 * of MMA_GROUP_M block rows before moving right, rather than a whole row of
 * C. They then share B tiles as well as A tiles, so more of what they read
 * is already in L2.
 *
 * Per iteration: wait until tile kt has landed (this thread's copies), one
 * barrier (everyone's copies are visible, and everyone has finished tile
 * kt-1, whose stage is refilled next), start the copy of tile kt+3 into that
 * stage, compute tile kt. A group is committed every iteration, even an empty
 * one, so "all but the newest STAGES-2 groups" always means "up to tile kt".
 */
template <fa_b_layout LAYOUT, bool ALIGNED>
static __global__ void __launch_bounds__(MMA_THREADS, 2)
    matmul_mma_bf16_kernel(const uint16_t *a, const uint16_t *b, float *c, int64_t m, int64_t n,
                           int64_t k, bool c_pairs)
{
    extern __shared__ __align__(128) uint16_t mma_smem[]; /* MMA_STAGES x (A tile, B tile) */
    const uint32_t smem_address = shared_address(mma_smem);
    const int lane = threadIdx.x % FA_WARP_THREADS, warp = threadIdx.x / FA_WARP_THREADS;
    const int warp_row = (warp / MMA_WARPS_N) * MMA_WARP_M;
    const int warp_col = (warp % MMA_WARPS_N) * MMA_WARP_N;

    /* The grid is ceil(n / BLOCK_N) x ceil(m / BLOCK_M); group g holds block rows
     * 8g .. 8g+7, and block l of a group sits at row l % rows_in_group, column
     * l / rows_in_group. 32-bit: a group has at most 8 x 2^24 blocks. */
    const unsigned group = blockIdx.y / MMA_GROUP_M;
    const unsigned first_row = group * MMA_GROUP_M;
    const unsigned rows_in_group = min(gridDim.y - first_row, (unsigned)MMA_GROUP_M);
    const unsigned in_group = (blockIdx.y - first_row) * gridDim.x + blockIdx.x;
    const int64_t row0 = (int64_t)(first_row + in_group % rows_in_group) * MMA_BLOCK_M;
    const int64_t col0 = (int64_t)(in_group / rows_in_group) * MMA_BLOCK_N;
    const int k_tiles = (int)fa_ceil_div(k, MMA_BLOCK_K);

    mma_operands op = {a, b, m, n, k, row0, col0, {}, {}};
    if constexpr (ALIGNED) {
        op.a_copy = operand_copy_setup<MMA_BLOCK_M, MMA_BLOCK_K, false>(a, m, k, row0, 0);
        if constexpr (LAYOUT == FA_B_ROW_MAJOR)
            op.b_copy = operand_copy_setup<MMA_BLOCK_K, MMA_BLOCK_N, true>(b, k, n, 0, col0);
        else
            op.b_copy = operand_copy_setup<MMA_BLOCK_N, MMA_BLOCK_K, false>(b, n, k, col0, 0);
    }
    const fragment_offsets frag = fragment_offsets_of<LAYOUT>(warp_row, warp_col, lane);

    float acc[MMA_TILES_M][MMA_TILES_N][4] = {};

#pragma unroll
    for (int s = 0; s < MMA_STAGES - 1; ++s) {
        if (s < k_tiles)
            load_stage<LAYOUT, ALIGNED>(&op, mma_smem, smem_address, s);
        cp_async_commit();
    }
    for (int kt = 0; kt < k_tiles; ++kt) {
        cp_async_wait<MMA_STAGES - 2>();
        __syncthreads();
        const int next = kt + MMA_STAGES - 1;
        if (next < k_tiles)
            load_stage<LAYOUT, ALIGNED>(&op, mma_smem, smem_address, next);
        cp_async_commit();
        const uint32_t a_tile = smem_address + (kt % MMA_STAGES) * MMA_STAGE_BYTES;
        mma_k_tile<LAYOUT>(a_tile, a_tile + MMA_A_TILE_BYTES, &frag, acc);
    }

    /* The C fragment: lane l holds rows l/4 and l/4 + 8, columns 2(l%4) and 2(l%4) + 1. */
    const int group_row = lane / 4, pair = 2 * (lane % 4);
#pragma unroll
    for (int i = 0; i < MMA_TILES_M; ++i)
#pragma unroll
        for (int j = 0; j < MMA_TILES_N; ++j) {
            const int64_t r = row0 + warp_row + i * MMA_M + group_row;
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
    const dim3 grid((unsigned)fa_ceil_div(n, MMA_BLOCK_N), (unsigned)fa_ceil_div(m, MMA_BLOCK_M));
    /* 64 KiB of shared memory is more than the 48 KiB a block gets unasked; and ask for
     * the largest shared-memory carveout, so that two blocks fit on an SM (the kernel
     * reads global memory through cp.async.cg, which skips L1 anyway). */
    const auto kernel = matmul_mma_bf16_kernel<LAYOUT, ALIGNED>;
    FA_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     MMA_SMEM_BYTES));
    FA_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                     cudaSharedmemCarveoutMaxShared));
    kernel<<<grid, MMA_THREADS, MMA_SMEM_BYTES, stream>>>(a, b, c, m, n, k, c_pairs);
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
