/**
 * @file launch.cu
 * @brief The launchers of stage 02, written once: each validates its
 *        arguments (validate.c), returns at once for empty work, computes its
 *        grid, launches the kernel(s) and checks the launch.
 *
 * This file is compiled twice (common/stage.cmake): against the reference
 * kernel files of 02_matrix/, giving the ref_* launchers, and against the
 * learner's files of the same names in learner/, giving learner_*
 * (FA_LAUNCHER, common/fa_launch.cuh). A learner's kernel therefore runs
 * under exactly the reference's launch. The kernel set provides:
 * - dot.cu: dot_partials_kernel<DTYPE>, dot_finish_kernel (M6);
 * - matmul_1_naive.cu: matmul_naive_kernel<LAYOUT> (M7 version 1);
 * - matmul_2_smem_tiled.cu: matmul_smem_tiled_kernel<LAYOUT> (version 2);
 * - matmul_3_register_blocked.cu: matmul_register_blocked_kernel<LAYOUT> (version 3);
 * - matmul_4_mma_bf16.cu: matmul_mma_bf16_kernel<LAYOUT, ALIGNED> (version 4);
 * - transpose_1_naive.cu: transpose_naive_kernel (M8 version 1);
 * - transpose_2_smem_tiled.cu: transpose_smem_tiled_kernel (version 2).
 * The launchers of a version start with FA_TRY(fa_todo_status<M, V>()), so
 * each version reports "not implemented" on its own until its marker is gone
 * (the extra parentheses keep the template's comma out of the macro's
 * argument list).
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_bytes.h"
#include "fa_device.h"
#include "fa_index.h"
#include "fa_launch.cuh"
#include "matrix.h"

/* The kernel set: the reference's or the learner's (include path). */
#include "dot.cu"
#include "matmul_1_naive.cu"
#include "matmul_2_smem_tiled.cu"
#include "matmul_3_register_blocked.cu"
#include "matmul_4_mma_bf16.cu"
#include "transpose_1_naive.cu"
#include "transpose_2_smem_tiled.cu"

/** The grid of @p tile_rows x @p tile_cols tiles over a [rows][cols] matrix: x along its columns. */
static dim3 tile_grid(int64_t rows, int64_t cols, int tile_rows, int tile_cols)
{
    return dim3((unsigned)fa_ceil_div(cols, tile_cols), (unsigned)fa_ceil_div(rows, tile_rows));
}

/* ---- M6 dot product ----------------------------------------------------------------------- */

template <fa_dtype DTYPE>
static fa_status launch_dot(const void *x, const void *y, int64_t n, float *partials,
                            float *result, cudaStream_t stream)
{
    const int blocks = (int)dot_product_blocks(n, DTYPE);
    dot_partials_kernel<DTYPE><<<blocks, DOT_PRODUCT_THREADS, 0, stream>>>(x, y, n, partials);
    FA_LAUNCH_CHECK();
    dot_finish_kernel<<<1, DOT_PRODUCT_THREADS, 0, stream>>>(partials, blocks, result);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

fa_status FA_LAUNCHER(dot_product)(const void *x, const void *y, fa_dtype dtype, int64_t n,
                                   float *partials, float *result, cudaStream_t stream)
{
    FA_TRY(fa_todo_status<6>());
    FA_TRY(dot_product_validate(x, y, dtype, n, partials, result));
    if (n == 0) {
        if (result != NULL)
            FA_CUDA_TRY(cudaMemsetAsync(result, 0, sizeof(float), stream));
        return FA_OK;
    }
    switch (dtype) {
    case FA_F32: return launch_dot<FA_F32>(x, y, n, partials, result, stream);
    case FA_BF16: return launch_dot<FA_BF16>(x, y, n, partials, result, stream);
    case FA_F16: return launch_dot<FA_F16>(x, y, n, partials, result, stream);
    }
    return fa_fail(FA_ERR_INVALID_ARGUMENT, "dot_product: dtype = %d", (int)dtype);
}

/* ---- M7 matmul, versions 1 and 2: one thread per output of a square tile ------------------- */

/** A kernel of versions 1 and 2, for one layout of B. */
typedef void (*matmul_fp32_kernel)(const float *, const float *, float *, int64_t, int64_t,
                                   int64_t);

/** Launches @p nn or @p nt (by @p layout), one thread per output of @p tile x @p tile tiles of C. */
static fa_status launch_square_tiles(matmul_fp32_kernel nn, matmul_fp32_kernel nt, int tile,
                                     const float *a, const float *b, float *c, int64_t m,
                                     int64_t n, int64_t k, fa_b_layout layout,
                                     cudaStream_t stream)
{
    if (m == 0 || n == 0)
        return FA_OK;
    const dim3 block(tile, tile);
    (layout == FA_B_ROW_MAJOR ? nn : nt)<<<tile_grid(m, n, tile, tile), block, 0, stream>>>(
        a, b, c, m, n, k);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

fa_status FA_LAUNCHER(matmul_naive)(const float *a, const float *b, float *c, int64_t m,
                                    int64_t n, int64_t k, fa_b_layout layout,
                                    cudaStream_t stream)
{
    FA_TRY(fa_todo_status<7, 1>());
    FA_TRY(matmul_validate("matmul_naive", a, b, c, m, n, k, layout, (int)sizeof(float)));
    return launch_square_tiles(matmul_naive_kernel<FA_B_ROW_MAJOR>,
                               matmul_naive_kernel<FA_B_TRANSPOSED>, MATMUL_NAIVE_TILE, a, b, c,
                               m, n, k, layout, stream);
}

fa_status FA_LAUNCHER(matmul_smem_tiled)(const float *a, const float *b, float *c, int64_t m,
                                         int64_t n, int64_t k, fa_b_layout layout,
                                         cudaStream_t stream)
{
    FA_TRY(fa_todo_status<7, 2>());
    FA_TRY(matmul_validate("matmul_smem_tiled", a, b, c, m, n, k, layout, (int)sizeof(float)));
    return launch_square_tiles(matmul_smem_tiled_kernel<FA_B_ROW_MAJOR>,
                               matmul_smem_tiled_kernel<FA_B_TRANSPOSED>, MATMUL_TILED_TILE, a,
                               b, c, m, n, k, layout, stream);
}

/* ---- M7 matmul, version 3: register blocking ---------------------------------------------- */

fa_status FA_LAUNCHER(matmul_register_blocked)(const float *a, const float *b, float *c,
                                               int64_t m, int64_t n, int64_t k,
                                               fa_b_layout layout, cudaStream_t stream)
{
    FA_TRY(fa_todo_status<7, 3>());
    FA_TRY(matmul_validate("matmul_register_blocked", a, b, c, m, n, k, layout,
                           (int)sizeof(float)));
    if (m == 0 || n == 0)
        return FA_OK;
    /* float4 accesses need every row to start on 16 bytes: an aligned base and a row length
     * that is a multiple of 4. */
    const size_t vector_bytes = MATMUL_RB_VECTOR * sizeof(float);
    const bool a_vector = k % MATMUL_RB_VECTOR == 0 && fa_is_aligned(a, vector_bytes);
    const bool b_vector = (layout == FA_B_ROW_MAJOR ? n : k) % MATMUL_RB_VECTOR == 0 &&
                          fa_is_aligned(b, vector_bytes);
    const bool c_vector = n % MATMUL_RB_VECTOR == 0 && fa_is_aligned(c, vector_bytes);
    const dim3 grid = tile_grid(m, n, MATMUL_RB_BLOCK_M, MATMUL_RB_BLOCK_N);
    if (layout == FA_B_ROW_MAJOR)
        matmul_register_blocked_kernel<FA_B_ROW_MAJOR><<<grid, MATMUL_RB_THREADS, 0, stream>>>(
            a, b, c, m, n, k, a_vector, b_vector, c_vector);
    else
        matmul_register_blocked_kernel<FA_B_TRANSPOSED><<<grid, MATMUL_RB_THREADS, 0, stream>>>(
            a, b, c, m, n, k, a_vector, b_vector, c_vector);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

/* ---- M7 matmul, version 4: tensor cores --------------------------------------------------- */

template <fa_b_layout LAYOUT, bool ALIGNED>
static fa_status launch_mma(const uint16_t *a, const uint16_t *b, float *c, int64_t m, int64_t n,
                            int64_t k, cudaStream_t stream)
{
    const bool c_pairs = n % 2 == 0 && fa_is_aligned(c, 2 * sizeof(float));
    const auto kernel = matmul_mma_bf16_kernel<LAYOUT, ALIGNED>;
    /* 64 KiB of shared memory is more than the 48 KiB a block gets unasked; and ask for
     * the largest shared-memory carveout, so that two blocks fit on an SM (the kernel
     * reads global memory through cp.async.cg, which skips L1 anyway). */
    FA_TRY(fa_shared_memory_opt_in(kernel, MATMUL_MMA_SMEM_BYTES, "matmul_mma_bf16"));
    FA_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                     cudaSharedmemCarveoutMaxShared));
    kernel<<<tile_grid(m, n, MATMUL_MMA_BLOCK_M, MATMUL_MMA_BLOCK_N), MATMUL_MMA_THREADS,
             MATMUL_MMA_SMEM_BYTES, stream>>>(a, b, c, m, n, k, c_pairs);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

fa_status FA_LAUNCHER(matmul_mma_bf16)(const uint16_t *a, const uint16_t *b, float *c, int64_t m,
                                       int64_t n, int64_t k, fa_b_layout layout,
                                       cudaStream_t stream)
{
    FA_TRY(fa_todo_status<7, 4>());
    FA_TRY(matmul_validate("matmul_mma_bf16", a, b, c, m, n, k, layout, (int)sizeof(uint16_t)));
    if (m == 0 || n == 0)
        return FA_OK;
    /* cp.async copies whole 16-byte chunks: every row of A and B must start on 16 bytes. */
    const size_t chunk_bytes = MATMUL_MMA_CHUNK * sizeof(uint16_t);
    const bool aligned = k % MATMUL_MMA_CHUNK == 0 &&
                         (layout == FA_B_TRANSPOSED || n % MATMUL_MMA_CHUNK == 0) &&
                         fa_is_aligned(a, chunk_bytes) && fa_is_aligned(b, chunk_bytes);
    if (layout == FA_B_ROW_MAJOR)
        return aligned ? launch_mma<FA_B_ROW_MAJOR, true>(a, b, c, m, n, k, stream)
                       : launch_mma<FA_B_ROW_MAJOR, false>(a, b, c, m, n, k, stream);
    return aligned ? launch_mma<FA_B_TRANSPOSED, true>(a, b, c, m, n, k, stream)
                   : launch_mma<FA_B_TRANSPOSED, false>(a, b, c, m, n, k, stream);
}

/* ---- M8 transpose ------------------------------------------------------------------------- */

/** A transpose kernel of either version. */
typedef void (*transpose_kernel)(const float *, float *, int64_t, int64_t);

/**
 * Launches @p kernel over 32x32 tiles. A matrix with one row or one column
 * has the same memory image as its transpose: @p count floats in the same
 * order. The tile grid would leave 31 of the 32 rows (or columns) of every
 * tile idle, so that case is a device-to-device copy at copy bandwidth.
 */
static fa_status launch_transpose(transpose_kernel kernel, const float *in, float *out,
                                  int64_t rows, int64_t cols, cudaStream_t stream)
{
    if (rows == 0 || cols == 0)
        return FA_OK;
    if (rows == 1 || cols == 1) {
        FA_CUDA_TRY(cudaMemcpyAsync(out, in, (size_t)(rows * cols) * sizeof(float),
                                    cudaMemcpyDeviceToDevice, stream));
        return FA_OK;
    }
    const dim3 block(TRANSPOSE_TILE, TRANSPOSE_ROWS);
    kernel<<<tile_grid(rows, cols, TRANSPOSE_TILE, TRANSPOSE_TILE), block, 0, stream>>>(
        in, out, rows, cols);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

fa_status FA_LAUNCHER(transpose_naive)(const float *in, float *out, int64_t rows, int64_t cols,
                                       cudaStream_t stream)
{
    FA_TRY(fa_todo_status<8, 1>());
    FA_TRY(transpose_validate("transpose_naive", in, out, rows, cols));
    return launch_transpose(transpose_naive_kernel, in, out, rows, cols, stream);
}

fa_status FA_LAUNCHER(transpose_smem_tiled)(const float *in, float *out, int64_t rows,
                                            int64_t cols, cudaStream_t stream)
{
    FA_TRY(fa_todo_status<8, 2>());
    FA_TRY(transpose_validate("transpose_smem_tiled", in, out, rows, cols));
    return launch_transpose(transpose_smem_tiled_kernel, in, out, rows, cols, stream);
}
