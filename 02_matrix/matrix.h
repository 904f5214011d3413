/**
 * @file matrix.h
 * @brief Stage 02 API (\ref stage02): M6 dot product, M7 matmul (four
 *        versions), M8 transpose (two versions).
 *
 * Every kernel has two launchers with one signature: `ref_<op>` (the
 * solution's kernels: dot.cu, matmul_1_naive.cu to matmul_4_mma_bf16.cu,
 * transpose_1_naive.cu and transpose_2_smem_tiled.cu) and `learner_<op>`
 * (the same files under learner/). Both are the same launch
 * code, harness/launch.cu, compiled once against each set of kernels, so one
 * contract comment covers both. A launcher validates its arguments with the
 * plain-C `<op>_validate` functions below before any CUDA call, returns FA_OK
 * without touching the GPU for an empty problem, and otherwise enqueues its
 * kernels on @p stream and returns without waiting for them. The learner's
 * launchers return ::FA_ERR_NOT_IMPLEMENTED, before any of that, while the
 * learner's file still holds the milestone's (or version's) FA_TODO marker.
 *
 * Layouts: every matrix is dense and row-major with no padding between rows,
 * so element (i, j) of an [R][C] matrix is at offset i * C + j (computed in
 * 64 bits). Device pointers must point to memory of the current device.
 *
 * The constants below are what the kernels and the launch code share: block
 * shapes, tiles, shared-memory sizes. A kernel file uses them; it never
 * defines a constant the launch code needs.
 */
#ifndef FA_MATRIX_H
#define FA_MATRIX_H

#include <assert.h>
#include <stdint.h>

#include "fa_half.h"
#include "fa_index.h"
#include "fa_reference.h"
#include "fa_status.h"

#if FA_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- M6 dot product: geometry shared by the kernels, the launch code, the model ------ */

enum {
    /** Threads per block of both passes of the dot product. */
    DOT_PRODUCT_THREADS = 256,
    /**
     * Most blocks of the first pass, hence the length of the partials buffer
     * the caller provides. Fixed, not derived from the GPU's SM count, so the
     * summation order (and the result) is the same on every GPU.
     */
    DOT_PRODUCT_MAX_PARTIALS = 1024,
    /** Each thread loads x and y in 16-byte chunks: 4 fp32 or 8 bf16/fp16 elements. */
    DOT_PRODUCT_CHUNK_BYTES = 16
};
static_assert(DOT_PRODUCT_THREADS % FA_WARP_THREADS == 0, "a dot block is made of whole warps");

/** Elements of @p dtype in one 16-byte chunk (4 for fp32, 8 for bf16 and fp16). */
static inline int64_t dot_product_chunk_elements(fa_dtype dtype)
{
    return DOT_PRODUCT_CHUNK_BYTES / fa_dtype_size(dtype);
}

/**
 * Blocks of the first pass for @p n elements of @p dtype: one thread per
 * whole chunk, capped at ::DOT_PRODUCT_MAX_PARTIALS, at least one (so the
 * n mod chunk tail and n < chunk have a thread).
 */
static inline int64_t dot_product_blocks(int64_t n, fa_dtype dtype)
{
    const int64_t chunks = n / dot_product_chunk_elements(dtype);
    const int64_t blocks = fa_ceil_div(chunks, DOT_PRODUCT_THREADS);
    const int64_t most = DOT_PRODUCT_MAX_PARTIALS;
    if (blocks < 1)
        return 1;
    return blocks < most ? blocks : most;
}

/* ---- limits shared by the matrix kernels ------------------------------------------------- */

enum {
    /**
     * Most rows of a matmul's A and C or of a transpose's input: the grid's y
     * dimension (at most 65535 blocks) holds the row tiles, and the smallest
     * row tile of the stage is 32 rows.
     */
    MATRIX_MAX_ROWS = FA_MAX_GRID_YZ * 32
};

/* ---- M7 matmul: the block shape of each version ------------------------------------------ */

enum {
    /** Version 1: a block computes a 32 x 32 tile of C, one output per thread. */
    MATMUL_NAIVE_TILE = 32,
    /** Version 2: 32 x 32 outputs per block, k in steps of 32 through shared memory. */
    MATMUL_TILED_TILE = 32,
    /** Version 3: a 128 x 128 block tile of C, k in steps of 8 ... */
    MATMUL_RB_BLOCK_M = 128,
    MATMUL_RB_BLOCK_N = 128,
    MATMUL_RB_BLOCK_K = 8,
    /** ... each thread an 8 x 8 micro-tile in registers ... */
    MATMUL_RB_THREAD_M = 8,
    MATMUL_RB_THREAD_N = 8,
    /** ... 256 threads ... */
    MATMUL_RB_THREADS = (MATMUL_RB_BLOCK_M / MATMUL_RB_THREAD_M) *
                        (MATMUL_RB_BLOCK_N / MATMUL_RB_THREAD_N),
    /** ... moving 4 floats (one float4) per load where rows start on 16 bytes. */
    MATMUL_RB_VECTOR = 4,
    /** Version 4: a 128 x 128 block tile of C, k in steps of 32 ... */
    MATMUL_MMA_BLOCK_M = 128,
    MATMUL_MMA_BLOCK_N = 128,
    MATMUL_MMA_BLOCK_K = 32,
    /** ... from 4 warps, each owning 64 x 64 of it ... */
    MATMUL_MMA_THREADS = 4 * FA_WARP_THREADS,
    /** ... k-tiles in flight through a cp.async pipeline: compute one, load three ... */
    MATMUL_MMA_STAGES = 4,
    /** ... copied in 16-byte chunks of 8 bf16 (cp.async needs rows that start on 16 bytes) ... */
    MATMUL_MMA_CHUNK = 8,
    /** ... into dynamic shared memory: per stage a [128][32] A tile and a 32 x 128 B tile (bf16). */
    MATMUL_MMA_SMEM_BYTES = MATMUL_MMA_STAGES *
                            (MATMUL_MMA_BLOCK_M * MATMUL_MMA_BLOCK_K +
                             MATMUL_MMA_BLOCK_K * MATMUL_MMA_BLOCK_N) * 2
};
static_assert(MATMUL_NAIVE_TILE * MATMUL_NAIVE_TILE <= 1024, "version 1: one block of threads");
static_assert(MATMUL_TILED_TILE * MATMUL_TILED_TILE <= 1024, "version 2: one thread per output");
static_assert(MATMUL_RB_BLOCK_M * MATMUL_RB_BLOCK_K == MATMUL_RB_VECTOR * MATMUL_RB_THREADS,
              "version 3: one float4 of A per thread per k-tile");
static_assert(MATMUL_RB_BLOCK_N * MATMUL_RB_BLOCK_K == MATMUL_RB_VECTOR * MATMUL_RB_THREADS,
              "version 3: one float4 of B per thread per k-tile");
static_assert(MATMUL_MMA_BLOCK_K % 16 == 0, "version 4: whole k16 steps of mma.sync per k-tile");
static_assert(MATMUL_MMA_CHUNK * 2 == 16, "version 4: a chunk is one 16-byte cp.async");
static_assert(2 * MATMUL_MMA_SMEM_BYTES <= 160 * 1024,
              "version 4: two blocks per SM fit the shared memory of an A100 (164 KiB) and an "
              "H100 (228 KiB)");
static_assert(MATRIX_MAX_ROWS / MATMUL_NAIVE_TILE <= FA_MAX_GRID_YZ &&
                  MATRIX_MAX_ROWS / MATMUL_TILED_TILE <= FA_MAX_GRID_YZ &&
                  MATRIX_MAX_ROWS / MATMUL_RB_BLOCK_M <= FA_MAX_GRID_YZ &&
                  MATRIX_MAX_ROWS / MATMUL_MMA_BLOCK_M <= FA_MAX_GRID_YZ,
              "the row tiles of every version fit the grid's y dimension");

/* ---- M8 transpose: the block shape of both versions --------------------------------------- */

enum {
    TRANSPOSE_TILE = 32, /**< a block moves a 32 x 32 tile */
    TRANSPOSE_ROWS = 8   /**< threads per block along the tile's rows: 32 x 8 threads */
};
static_assert(TRANSPOSE_TILE % TRANSPOSE_ROWS == 0, "each thread moves TILE / ROWS elements");
static_assert(MATRIX_MAX_ROWS / TRANSPOSE_TILE <= FA_MAX_GRID_YZ,
              "row tiles fit the grid's y dimension");

/* ---- validation (plain C, no CUDA: tested on the CPU) ------------------------------------ */

/**
 * The sizes of a dot product, checked before any pointer (dot_product_validate()
 * calls it first; a check calls it before allocating anything).
 * @return FA_OK; FA_ERR_INVALID_ARGUMENT for a dtype outside ::fa_dtype;
 *         FA_ERR_INVALID_SIZE for n < 0; FA_ERR_OVERFLOW when n elements of
 *         @p dtype have more bytes than a signed 64-bit offset holds.
 */
fa_status dot_product_validate_sizes(fa_dtype dtype, int64_t n);

/**
 * Checks the arguments of ref_dot_product() / learner_dot_product().
 * @return as dot_product_validate_sizes(), then FA_OK for n = 0;
 *         FA_ERR_NULL_POINTER for a NULL x, y, partials or result when n > 0;
 *         FA_ERR_MISALIGNED when x or y is not 16-byte aligned or partials /
 *         result not 4-byte aligned.
 */
fa_status dot_product_validate(const void *x, const void *y, fa_dtype dtype, int64_t n,
                               const float *partials, const float *result);

/**
 * The sizes of a matmul; @p op names the launcher in the message (e.g.
 * "matmul_naive"), @p element_size is 4 (fp32) or 2 (bf16).
 * @return FA_OK; FA_ERR_INVALID_SIZE for a negative size;
 *         FA_ERR_INVALID_ARGUMENT for a layout outside ::fa_b_layout;
 *         FA_ERR_UNSUPPORTED for m > ::MATRIX_MAX_ROWS or n, k > INT32_MAX;
 *         FA_ERR_OVERFLOW when B's k * n elements have more bytes than a
 *         signed 64-bit offset holds (A and C cannot: m is far smaller).
 */
fa_status matmul_validate_sizes(const char *op, int64_t m, int64_t n, int64_t k,
                                fa_b_layout layout, int element_size);

/**
 * Checks the arguments of every matmul launcher.
 * @return as matmul_validate_sizes(), then FA_ERR_NULL_POINTER for a NULL
 *         matrix that has elements (a when m*k > 0, b when k*n > 0, c when
 *         m*n > 0); FA_ERR_MISALIGNED for a pointer not aligned to its
 *         element size; FA_ERR_INVALID_ARGUMENT for a c that overlaps a or b.
 */
fa_status matmul_validate(const char *op, const void *a, const void *b, const float *c,
                          int64_t m, int64_t n, int64_t k, fa_b_layout layout,
                          int element_size);

/**
 * The sizes of a transpose; @p op names the launcher.
 * @return FA_OK; FA_ERR_INVALID_SIZE for a negative size; FA_ERR_UNSUPPORTED
 *         for rows > ::MATRIX_MAX_ROWS or cols > INT32_MAX (within those the
 *         byte sizes always fit 64-bit offsets).
 */
fa_status transpose_validate_sizes(const char *op, int64_t rows, int64_t cols);

/**
 * Checks the arguments of both transpose launchers.
 * @return as transpose_validate_sizes(), then FA_OK for an empty matrix;
 *         FA_ERR_NULL_POINTER for a NULL in or out; FA_ERR_MISALIGNED for a
 *         pointer that is not 4-byte aligned; FA_ERR_INVALID_ARGUMENT when
 *         out overlaps in (a transpose cannot run in place).
 */
fa_status transpose_validate(const char *op, const float *in, const float *out, int64_t rows,
                             int64_t cols);

#if FA_HAVE_CUDA
/* ---- launchers (CUDA) -------------------------------------------------------------------- */

/**
 * M6 dot product: *result = sum_i x[i] * y[i], accumulated in fp32.
 *
 * @param x, y      device vectors of @p n elements of @p dtype (fp32, bf16 or
 *                  fp16; both the same), each 16-byte aligned.
 * @param dtype     element type of x and y; products of bf16 or fp16 values
 *                  are exact in fp32, so only the additions round.
 * @param n         length; n = 0 stores 0 (when @p result is not NULL).
 * @param partials  device workspace of ::DOT_PRODUCT_MAX_PARTIALS floats,
 *                  overwritten (one partial sum per block of the first pass).
 * @param result    one device float. May be NULL only when n = 0.
 * @param stream    stream the two kernels are enqueued on, in order.
 *
 * Deterministic: pass 1 gives each block a fixed set of chunks and sums them
 * with a fixed tree; pass 2 sums the partials with a fixed tree. The result
 * depends only on the inputs and n, never on scheduling or the GPU model.
 * A NaN or Inf in the inputs propagates to the result as IEEE arithmetic does.
 */
fa_status ref_dot_product(const void *x, const void *y, fa_dtype dtype, int64_t n,
                          float *partials, float *result, cudaStream_t stream);
/** The learner's M6 dot product; contract of ref_dot_product(). */
fa_status learner_dot_product(const void *x, const void *y, fa_dtype dtype, int64_t n,
                              float *partials, float *result, cudaStream_t stream);

/**
 * M7 matmul in fp32, C = A * B, one launcher per version of the kernel:
 *   - matmul_naive (version 1): one thread per element of C, operands from
 *     global memory;
 *   - matmul_smem_tiled (version 2): 32x32 tiles of A and B staged in shared
 *     memory;
 *   - matmul_register_blocked (version 3): 128x128 block tiles, each thread
 *     an 8x8 micro-tile in registers, float4 loads where aligned, double
 *     buffering.
 *
 * @param a       device [m][k] fp32, row-major.
 * @param b       device fp32: [k][n] row-major for ::FA_B_ROW_MAJOR ("NN");
 *                [n][k] row-major for ::FA_B_TRANSPOSED ("NT": C = A * B^T,
 *                the form of Q K^T).
 * @param c       device [m][n] fp32, row-major; every element is written.
 * @param m, n, k sizes, any value >= 0 (no multiple of a tile needed).
 *                m = 0 or n = 0 is an empty problem; k = 0 writes C = 0.
 * @param layout  how B is stored.
 * @param stream  stream the kernel is enqueued on.
 *
 * Each element is one fp32 fused multiply-add chain over k = 0..K-1 in order,
 * so its error is at most gamma_K sum_k |a_ik b_kj| and all three versions
 * give the same bits. Pointers need only the alignment of a float; version 3
 * falls back to scalar loads where rows are not 16-byte aligned.
 */
fa_status ref_matmul_naive(const float *a, const float *b, float *c, int64_t m, int64_t n,
                           int64_t k, fa_b_layout layout, cudaStream_t stream);
/** M7 version 2, shared-memory tiles; contract of ref_matmul_naive(). */
fa_status ref_matmul_smem_tiled(const float *a, const float *b, float *c, int64_t m, int64_t n,
                                int64_t k, fa_b_layout layout, cudaStream_t stream);
/** M7 version 3, register blocking; contract of ref_matmul_naive(). */
fa_status ref_matmul_register_blocked(const float *a, const float *b, float *c, int64_t m,
                                      int64_t n, int64_t k, fa_b_layout layout,
                                      cudaStream_t stream);
/** The learner's M7 version 1; contract of ref_matmul_naive(). */
fa_status learner_matmul_naive(const float *a, const float *b, float *c, int64_t m, int64_t n,
                               int64_t k, fa_b_layout layout, cudaStream_t stream);
/** The learner's M7 version 2; contract of ref_matmul_naive(). */
fa_status learner_matmul_smem_tiled(const float *a, const float *b, float *c, int64_t m,
                                    int64_t n, int64_t k, fa_b_layout layout,
                                    cudaStream_t stream);
/** The learner's M7 version 3; contract of ref_matmul_naive(). */
fa_status learner_matmul_register_blocked(const float *a, const float *b, float *c,
                                          int64_t m, int64_t n, int64_t k,
                                          fa_b_layout layout, cudaStream_t stream);

/**
 * M7 version 4: C = A * B on tensor cores (mma.sync m16n8k16, ldmatrix,
 * cp.async), bf16 inputs, fp32 accumulation and fp32 output. Runs on sm_80
 * and later.
 *
 * @param a       device [m][k] bf16 (bit patterns), row-major.
 * @param b       device bf16: [k][n] for ::FA_B_ROW_MAJOR, [n][k] for
 *                ::FA_B_TRANSPOSED (C = A * B^T), row-major.
 * @param c       device [m][n] fp32, row-major; every element is written.
 * @param m, n, k any sizes >= 0; m = 0 or n = 0 is empty; k = 0 writes C = 0.
 * @param layout  how B is stored.
 * @param stream  stream the kernel is enqueued on.
 *
 * The fast path copies 16-byte chunks with cp.async and needs 16-byte aligned
 * pointers, k % 8 == 0 and, for ::FA_B_ROW_MAJOR, n % 8 == 0; other shapes
 * take a slower path with 2-byte loads and give the same result. The tensor
 * cores align the products of a block to the largest term and truncate, so
 * the error bound is gamma_{K(1+2/8)} sum_k |a_ik b_kj| with u = 2^-23
 * (the page "How outputs are judged", \ref numerics) instead of the fp32
 * gamma_K with u = 2^-24.
 */
fa_status ref_matmul_mma_bf16(const uint16_t *a, const uint16_t *b, float *c, int64_t m,
                              int64_t n, int64_t k, fa_b_layout layout, cudaStream_t stream);
/** The learner's M7 version 4; contract of ref_matmul_mma_bf16(). */
fa_status learner_matmul_mma_bf16(const uint16_t *a, const uint16_t *b, float *c, int64_t m,
                                  int64_t n, int64_t k, fa_b_layout layout,
                                  cudaStream_t stream);

/**
 * M8 transpose, out[c][r] = in[r][c], fp32, exact (data movement only).
 *   - transpose_naive (version 1): one thread per element and step, reads
 *     coalesced, writes strided by @p rows;
 *   - transpose_smem_tiled (version 2): 32x32 tiles through shared memory,
 *     padded to 33 columns, so both the reads and the writes are coalesced.
 * A matrix with one row or one column has the memory image of its
 * transpose: both launchers copy it (cudaMemcpyAsync) without a kernel.
 *
 * @param in      device [rows][cols] fp32, row-major.
 * @param out     device [cols][rows] fp32, row-major; must not overlap @p in.
 * @param rows, cols any sizes >= 0 (1 x N, N x 1 and non-multiples of 32
 *                included); an empty matrix is a no-op.
 * @param stream  stream the kernel is enqueued on.
 */
fa_status ref_transpose_naive(const float *in, float *out, int64_t rows, int64_t cols,
                              cudaStream_t stream);
/** M8 version 2, shared-memory tiles; contract of ref_transpose_naive(). */
fa_status ref_transpose_smem_tiled(const float *in, float *out, int64_t rows, int64_t cols,
                                   cudaStream_t stream);
/** The learner's M8 version 1; contract of ref_transpose_naive(). */
fa_status learner_transpose_naive(const float *in, float *out, int64_t rows, int64_t cols,
                                  cudaStream_t stream);
/** The learner's M8 version 2; contract of ref_transpose_naive(). */
fa_status learner_transpose_smem_tiled(const float *in, float *out, int64_t rows, int64_t cols,
                                       cudaStream_t stream);
#endif /* FA_HAVE_CUDA */

#ifdef __cplusplus
}
#endif

#endif /* FA_MATRIX_H */
