/**
 * @file matrix.h
 * @brief Stage 02 (\ref stage02): dot product (M6), matrix multiply (M7), transpose (M8).
 *
 * Every kernel has a reference launcher `ref_<op>` (the solution, in dot.cu,
 * matmul.cu and transpose.cu) and a learner twin `learner_<op>` with the same
 * signature (learner/dot.cu, learner/matmul.cu, learner/transpose.cu); one
 * contract comment covers both. A launcher validates its arguments with the
 * plain-C `<op>_validate` functions below before any CUDA call, returns FA_OK
 * without touching the GPU for an empty problem, and otherwise enqueues its
 * kernels on @p stream and returns without waiting for them.
 *
 * Layouts: every matrix is dense and row-major with no padding between rows,
 * so element (i, j) of an [R][C] matrix is at offset i * C + j (computed in
 * 64 bits). Device pointers must point to memory of the current device.
 */
#ifndef FA_MATRIX_H
#define FA_MATRIX_H

#include <stdint.h>

#include "fa_half.h"
#include "fa_reference.h"
#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- M6 dot product: geometry shared by the kernels, the CPU model and the bound -------- */

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
    const int64_t blocks = (chunks + DOT_PRODUCT_THREADS - 1) / DOT_PRODUCT_THREADS;
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
    MATRIX_MAX_ROWS = 65535 * 32
};

/* ---- validation (plain C, no CUDA: tested on the CPU) ------------------------------------ */

/**
 * Checks the arguments of ref_dot_product() / learner_dot_product().
 * @return FA_OK; FA_ERR_INVALID_ARGUMENT for a dtype outside ::fa_dtype;
 *         FA_ERR_INVALID_SIZE for n < 0; FA_ERR_NULL_POINTER for a NULL x, y,
 *         partials or result when n > 0; FA_ERR_MISALIGNED when x or y is not
 *         16-byte aligned or partials / result not 4-byte aligned.
 */
fa_status dot_product_validate(const void *x, const void *y, fa_dtype dtype, int64_t n,
                               const float *partials, const float *result);

/**
 * Checks the arguments of every matmul launcher; @p op names the launcher in
 * the message (e.g. "matmul_naive"), @p element_size is 4 (fp32) or 2 (bf16).
 * @return FA_OK; FA_ERR_INVALID_SIZE for a negative size;
 *         FA_ERR_UNSUPPORTED for m > ::MATRIX_MAX_ROWS or n, k > INT32_MAX;
 *         FA_ERR_INVALID_ARGUMENT for a layout outside ::fa_b_layout or a c
 *         that overlaps a or b; FA_ERR_NULL_POINTER for a NULL matrix that has
 *         elements (a when m*k > 0, b when k*n > 0, c when m*n > 0);
 *         FA_ERR_MISALIGNED for a pointer not aligned to its element size.
 */
fa_status matmul_validate(const char *op, const void *a, const void *b, const float *c,
                          int64_t m, int64_t n, int64_t k, fa_b_layout layout,
                          int element_size);

/**
 * Checks the arguments of both transpose launchers; @p op names the launcher.
 * @return FA_OK; FA_ERR_INVALID_SIZE for a negative size; FA_ERR_UNSUPPORTED
 *         for rows > ::MATRIX_MAX_ROWS or cols > INT32_MAX;
 *         FA_ERR_NULL_POINTER for a NULL in or out when rows*cols > 0;
 *         FA_ERR_MISALIGNED for a pointer that is not 4-byte aligned;
 *         FA_ERR_INVALID_ARGUMENT when out overlaps in (a transpose cannot
 *         run in place).
 */
fa_status transpose_validate(const char *op, const float *in, const float *out, int64_t rows,
                             int64_t cols);

/* ---- launchers (need the CUDA runtime) ---------------------------------------------------- */

#if defined(FA_HAVE_CUDA) || defined(__CUDACC__)
#include <cuda_runtime_api.h>

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
 *   - matmul_naive: one thread per element of C, operands from global memory;
 *   - matmul_smem_tiled: 32x32 tiles of A and B staged in shared memory;
 *   - matmul_register_blocked: 128x128 block tiles, each thread an 8x8
 *     micro-tile in registers, float4 loads where aligned, double buffering.
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
 * give the same bits. Pointers need only the alignment of a float; the
 * vectorised version falls back to scalar loads where rows are not aligned.
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
fa_status learner_matmul_register_blocked(const float *a, const float *b, float *c, int64_t m,
                                          int64_t n, int64_t k, fa_b_layout layout,
                                          cudaStream_t stream);

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
 * (NUMERICS.md) instead of the fp32 gamma_K with u = 2^-24.
 */
fa_status ref_matmul_mma_bf16(const uint16_t *a, const uint16_t *b, float *c, int64_t m,
                              int64_t n, int64_t k, fa_b_layout layout, cudaStream_t stream);
/** The learner's M7 version 4; contract of ref_matmul_mma_bf16(). */
fa_status learner_matmul_mma_bf16(const uint16_t *a, const uint16_t *b, float *c, int64_t m,
                                  int64_t n, int64_t k, fa_b_layout layout,
                                  cudaStream_t stream);

/**
 * M8 transpose, out[c][r] = in[r][c], fp32, exact (data movement only).
 *   - transpose_naive: one thread per element, reads coalesced, writes
 *     strided by @p rows;
 *   - transpose_smem_tiled: 32x32 tiles through shared memory, padded to 33
 *     columns, so both the reads and the writes are coalesced.
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

#endif /* FA_HAVE_CUDA || __CUDACC__ */

#ifdef __cplusplus
}
#endif

#endif /* FA_MATRIX_H */
