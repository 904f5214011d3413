/**
 * @file launch.cu
 * @brief The launchers of stage 03, written once: each validates its
 *        arguments (validate.c), returns at once for empty work, computes its
 *        grid, launches the kernel and checks the launch; M12 allocates its
 *        workspace and chains the three kernels through it.
 *
 * This file is compiled twice (common/stage.cmake): against the reference
 * kernels of attention.cu, giving the ref_* launchers, and against the
 * learner's learner/attention.cu, giving learner_* (FA_LAUNCHER,
 * common/fa_launch.cuh). A learner's kernel therefore runs under exactly the
 * reference's launch. The kernel set provides attn_scores_tiled<T>,
 * softmax_rows_three_pass and attn_pv_tiled<T>, T one of float,
 * __nv_bfloat16 and __half.
 *
 * M12 has no kernel of its own, so its marker, FA_TODO(12), gates the
 * composition: the learner deletes it once M9-M11 pass, and the M12 launcher
 * also requires the markers of M9-M11 gone, so its probe names the first step
 * still missing before anything runs.
 */
#include <stddef.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "attention.h"
#include "fa_device.h"
#include "fa_index.h"
#include "fa_launch.cuh"

#include "attention.cu" /* the kernel set: the reference's or the learner's (include path) */

/** Blocks of a grid-stride launch over @p work items: one each, up to the grid limit. */
static unsigned grid_blocks(int64_t work)
{
    return (unsigned)(work < FA_MAX_GRID_X ? work : FA_MAX_GRID_X);
}

/* ==== M9 scores ============================================================================= */

/* One block of NAIVE_ATTN_TILE x NAIVE_ATTN_TILE threads per output tile. */
template <typename T>
static void launch_scores(const void *q, const void *k, float *s, naive_attn_dims dims,
                          float scale, unsigned grid, cudaStream_t stream)
{
    attn_scores_tiled<T><<<grid, dim3(NAIVE_ATTN_TILE, NAIVE_ATTN_TILE), 0, stream>>>(
        static_cast<const T *>(q), static_cast<const T *>(k), s, dims, scale);
}

fa_status FA_LAUNCHER(attn_scores)(const void *q, const void *k, float *s, fa_dtype dtype,
                                   naive_attn_dims dims, float scale, cudaStream_t stream)
{
    FA_TRY(fa_todo_status<9>());
    FA_TRY(attn_scores_validate(q, k, s, dtype, dims, scale));
    const int64_t tiles = dims.batch * dims.heads * fa_ceil_div(dims.nq, NAIVE_ATTN_TILE) *
                          fa_ceil_div(dims.nk, NAIVE_ATTN_TILE);
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

fa_status FA_LAUNCHER(softmax_rows)(const float *s, float *p, float *lse, naive_attn_dims dims,
                                    fa_mask mask, const int64_t *key_length, cudaStream_t stream)
{
    FA_TRY(fa_todo_status<10>());
    FA_TRY(softmax_rows_validate(s, p, lse, dims, mask, key_length));
    const int64_t rows = dims.batch * dims.heads * dims.nq;
    if (rows == 0)
        return FA_OK;
    softmax_rows_three_pass<<<grid_blocks(rows), SOFTMAX_ROWS_THREADS, 0, stream>>>(
        s, p, lse, dims, mask, key_length);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

/* ==== M11 PV matmul ========================================================================= */

template <typename T>
static void launch_pv(const float *p, const void *v, float *o, naive_attn_dims dims, fa_mask mask,
                      const int64_t *key_length, unsigned grid, cudaStream_t stream)
{
    attn_pv_tiled<T><<<grid, dim3(NAIVE_ATTN_TILE, NAIVE_ATTN_TILE), 0, stream>>>(
        p, static_cast<const T *>(v), o, dims, mask, key_length);
}

/**
 * P.V over the keys each row may see: M11 passes every key, M12 the mask and
 * padding of its softmax (attn_naive_validate() checked those).
 */
static fa_status run_pv(const float *p, const void *v, float *o, fa_dtype dtype,
                        naive_attn_dims dims, fa_mask mask, const int64_t *key_length,
                        cudaStream_t stream)
{
    FA_TRY(attn_pv_validate(p, v, o, dtype, dims));
    const int64_t tiles = dims.batch * dims.heads * fa_ceil_div(dims.nq, NAIVE_ATTN_TILE) *
                          fa_ceil_div(dims.head_dim, NAIVE_ATTN_TILE);
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

fa_status FA_LAUNCHER(attn_pv)(const float *p, const void *v, float *o, fa_dtype dtype,
                               naive_attn_dims dims, cudaStream_t stream)
{
    FA_TRY(fa_todo_status<11>());
    return run_pv(p, v, o, dtype, dims, FA_MASK_NONE, nullptr, stream);
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

fa_status FA_LAUNCHER(attn_naive)(const void *q, const void *k, const void *v, float *o,
                                  float *lse, fa_dtype dtype, naive_attn_dims dims, float scale,
                                  fa_mask mask, const int64_t *key_length, cudaStream_t stream)
{
    FA_TRY(fa_todo_status<12>());
    FA_TRY(fa_todo_status<9>()); /* the composition needs each of its steps */
    FA_TRY(fa_todo_status<10>());
    FA_TRY(fa_todo_status<11>());
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
    fa_status status = FA_LAUNCHER(attn_scores)(q, k, scores, dtype, dims, scale, stream);
    if (status == FA_OK)
        status = FA_LAUNCHER(softmax_rows)(scores, scores, lse, dims, mask, key_length, stream);
    if (status == FA_OK)
        status = run_pv(scores, v, o, dtype, dims, mask, key_length, stream);
    if (scores != nullptr) {
        const cudaError_t freed = cudaFreeAsync(scores, stream);
        if (freed != cudaSuccess && status == FA_OK)
            status = fa_cuda_fail(freed, "cudaFreeAsync(scores, stream)", __FILE__, __LINE__);
    }
    return status;
}
