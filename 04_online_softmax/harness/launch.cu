/**
 * @file launch.cu
 * @brief The launchers of stage 04, written once: each validates its
 *        arguments (validate.c), returns at once for empty work, computes its
 *        grid, launches the kernel and checks the launch.
 *
 * This file is compiled twice (common/stage.cmake): against the reference
 * kernels of online.cu, giving the ref_* launchers, and against the learner's
 * learner/online.cu, giving learner_* (FA_LAUNCHER, common/fa_launch.cuh). A
 * learner's kernel therefore runs under exactly the reference's launch. The
 * kernel set provides: online_trace_kernel<online_trace_op>,
 * softmax_rows_online_kernel and attn_rows_online_kernel<COLS_PER_LANE>.
 */
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_bytes.h"
#include "fa_device.h"
#include "fa_index.h"
#include "fa_launch.cuh"
#include "online.h"

#include "online.cu" /* the kernel set: the reference's or the learner's (include path) */

/**
 * Shared memory a block may opt into on sm_80 (A100), the smaller of the two
 * opt-in limits of the course's targets (sm_90, H100 and H200: 227 KiB).
 * GPUs with less (sm_86 and sm_89: 99 KiB) refuse the largest tiles at launch.
 */
static constexpr int64_t SM80_SHARED_OPTIN_BYTES = (int64_t)163 * 1024;

static_assert(attn_shared_bytes(ATTN_ONLINE_MAX_HEAD_DIM, ATTN_ONLINE_MAX_CHUNK) <=
                  SM80_SHARED_OPTIN_BYTES,
              "every head_dim and chunk must fit one block on sm_80 and sm_90");
static_assert(ATTN_ONLINE_MAX_HEAD_DIM % FA_WARP_THREADS == 0,
              "the instantiations give each lane up to head_dim / 32 output columns");

/* ---- M13-M16: the traces ---------------------------------------------------------------- */

/** The launch shared by the four trace launchers (arguments already validated). */
template <online_trace_op TRACE>
static fa_status launch_trace(const float *x, const float *v, float *trace, int64_t rows,
                              int64_t n, int64_t chunk, cudaStream_t stream)
{
    if (rows == 0 || n == 0)
        return FA_OK;
    const int64_t blocks = fa_ceil_div(rows, ONLINE_TRACE_THREADS); /* validation capped it */
    online_trace_kernel<TRACE><<<(unsigned)blocks, ONLINE_TRACE_THREADS, 0, stream>>>(
        x, v, trace, rows, n, chunk, online_chunk_count(n, chunk));
    FA_LAUNCH_CHECK();
    return FA_OK;
}

fa_status FA_LAUNCHER(online_max_trace)(const float *x, float *max_trace, int64_t rows,
                                        int64_t n, int64_t chunk, cudaStream_t stream)
{
    FA_TRY(fa_todo_status<13>());
    FA_TRY(online_max_trace_validate(x, max_trace, rows, n, chunk));
    return launch_trace<ONLINE_TRACE_MAX>(x, nullptr, max_trace, rows, n, chunk, stream);
}

fa_status FA_LAUNCHER(online_correction_trace)(const float *x, float *correction_trace,
                                               int64_t rows, int64_t n, int64_t chunk,
                                               cudaStream_t stream)
{
    FA_TRY(fa_todo_status<14>());
    FA_TRY(online_correction_trace_validate(x, correction_trace, rows, n, chunk));
    return launch_trace<ONLINE_TRACE_CORRECTION>(x, nullptr, correction_trace, rows, n, chunk,
                                                 stream);
}

fa_status FA_LAUNCHER(online_sum_trace)(const float *x, float *sum_trace, int64_t rows,
                                        int64_t n, int64_t chunk, cudaStream_t stream)
{
    FA_TRY(fa_todo_status<15>());
    FA_TRY(online_sum_trace_validate(x, sum_trace, rows, n, chunk));
    return launch_trace<ONLINE_TRACE_SUM>(x, nullptr, sum_trace, rows, n, chunk, stream);
}

fa_status FA_LAUNCHER(online_output_trace)(const float *x, const float *v, float *output_trace,
                                           int64_t rows, int64_t n, int64_t chunk,
                                           cudaStream_t stream)
{
    FA_TRY(fa_todo_status<16>());
    FA_TRY(online_output_trace_validate(x, v, output_trace, rows, n, chunk));
    return launch_trace<ONLINE_TRACE_OUTPUT>(x, v, output_trace, rows, n, chunk, stream);
}

/* ---- M15: one-pass softmax --------------------------------------------------------------- */

fa_status FA_LAUNCHER(softmax_rows_online)(const float *x, float *p, float *lse, int64_t rows,
                                           int64_t n, cudaStream_t stream)
{
    FA_TRY(fa_todo_status<15>());
    FA_TRY(softmax_rows_online_validate(x, p, lse, rows, n));
    if (rows == 0 || (n == 0 && lse == nullptr))
        return FA_OK; /* with n = 0 the kernel still writes lse = -inf */
    const unsigned blocks = (unsigned)rows; /* one block per row; validation capped rows */
    softmax_rows_online_kernel<<<blocks, softmax_rows_online_threads(n), 0, stream>>>(x, p, lse,
                                                                                      n);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

/* ---- M16: online attention --------------------------------------------------------------- */

/**
 * Launches the instantiation with just enough columns per lane for head_dim.
 * Above 48 KiB, dynamic shared memory is opt-in per kernel, up to the
 * device's limit less the kernel's own static shared memory. The cap is set
 * to the most this instantiation can need (the largest chunk) clipped to that
 * limit: the same value on every call, so launches from several host threads
 * never lower it under one another's feet, as a cap set to each call's own
 * need could. A call needing more than the device offers is refused before
 * launching.
 */
template <int COLS_PER_LANE>
static fa_status launch_attn(const attn_online_args *args, int64_t blocks, bool vector_loads,
                             cudaStream_t stream)
{
    int device = 0, optin_bytes = 0;
    FA_CUDA_TRY(cudaGetDevice(&device));
    FA_CUDA_TRY(cudaDeviceGetAttribute(&optin_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                       device));
    cudaFuncAttributes attributes;
    FA_CUDA_TRY(cudaFuncGetAttributes(&attributes, attn_rows_online_kernel<COLS_PER_LANE>));
    const int64_t limit = (int64_t)optin_bytes - (int64_t)attributes.sharedSizeBytes;
    const int64_t bytes = attn_shared_bytes(args->head_dim, args->chunk);
    if (bytes > limit)
        return fa_fail(FA_ERR_UNSUPPORTED,
                       "attn_rows_online: head_dim = %lld with chunk = %lld needs %lld bytes of "
                       "shared memory per block, this GPU allows at most %lld",
                       (long long)args->head_dim, (long long)args->chunk, (long long)bytes,
                       (long long)limit);
    const int64_t most =
        attn_shared_bytes((int64_t)COLS_PER_LANE * FA_WARP_THREADS, ATTN_ONLINE_MAX_CHUNK);
    const int64_t cap = most < limit ? most : limit;
    FA_CUDA_TRY(cudaFuncSetAttribute(attn_rows_online_kernel<COLS_PER_LANE>,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize, (int)cap));
    attn_rows_online_kernel<COLS_PER_LANE>
        <<<(unsigned)blocks, ATTN_ONLINE_THREADS, (size_t)bytes, stream>>>(*args, vector_loads);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

fa_status FA_LAUNCHER(attn_rows_online)(const attn_online_args *args, cudaStream_t stream)
{
    FA_TRY(fa_todo_status<16>());
    FA_TRY(attn_rows_online_validate(args));
    const int64_t heads = args->batch * args->heads_q;
    if (heads == 0 || args->nq == 0)
        return FA_OK;
    const int64_t blocks = heads * fa_ceil_div(args->nq, ATTN_ONLINE_WARPS); /* validated */
    /* float4 loads need whole float4 rows and 16-byte aligned tensors (the
     * contract promises only 4 bytes); the row offsets are then multiples of 4. */
    const size_t vector_bytes = ATTN_ONLINE_VECTOR_FLOATS * sizeof(float);
    const bool vector_loads = args->head_dim % ATTN_ONLINE_VECTOR_FLOATS == 0 &&
                              fa_is_aligned(args->q, vector_bytes) &&
                              fa_is_aligned(args->k, vector_bytes) &&
                              fa_is_aligned(args->v, vector_bytes);
    const int64_t cols_per_lane = fa_ceil_div(args->head_dim, FA_WARP_THREADS);
    if (cols_per_lane <= 1)
        return launch_attn<1>(args, blocks, vector_loads, stream);
    if (cols_per_lane <= 2)
        return launch_attn<2>(args, blocks, vector_loads, stream);
    if (cols_per_lane <= 4)
        return launch_attn<4>(args, blocks, vector_loads, stream);
    return launch_attn<ATTN_ONLINE_MAX_HEAD_DIM / FA_WARP_THREADS>(args, blocks, vector_loads,
                                                                      stream);
}
