/**
 * @file launch.cu
 * @brief The launchers of stage 01, written once: each validates its
 *        arguments (validate.c), returns at once for empty work, computes its
 *        grid, launches the kernel and checks the launch.
 *
 * This file is compiled twice (common/stage.cmake): against the reference
 * kernels of primitives.cu, giving the ref_* launchers, and against the
 * learner's learner/primitives.cu, giving learner_* (FA_LAUNCHER,
 * common/fa_launch.cuh). A learner's kernel therefore runs under exactly the
 * reference's launch. The kernel set provides: vector_add_kernel,
 * scale_array_kernel, exp_kernel<METHOD>, row_max_kernel and row_sum_kernel.
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_device.h"
#include "fa_index.h"
#include "fa_launch.cuh"
#include "primitives.h"

#include "primitives.cu" /* the kernel set: the reference's or the learner's (include path) */

/**
 * Grid of an elementwise launch over @p n floats: one block per 256 vectors,
 * but no more blocks than the GPU holds at once. The grid-stride loop then
 * covers any n with a grid sized to the machine, not to the data.
 */
static fa_status elementwise_blocks(int64_t n, int *blocks)
{
    int device = 0, sms = 0, threads_per_sm = 0;
    FA_CUDA_TRY(cudaGetDevice(&device));
    FA_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    FA_CUDA_TRY(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor,
                                       device));
    const int64_t vectors = fa_ceil_div(n, PRIMITIVES_VECTOR_FLOATS); /* the last may be a partial tail */
    const int64_t wanted = fa_ceil_div(vectors, PRIMITIVES_ELEMENTWISE_THREADS);
    const int64_t resident = (int64_t)sms * (threads_per_sm / PRIMITIVES_ELEMENTWISE_THREADS);
    *blocks = (int)(wanted < resident ? wanted : resident);
    return FA_OK;
}

fa_status FA_LAUNCHER(vector_add)(const float *a, const float *b, float *out, int64_t n,
                                  cudaStream_t stream)
{
    FA_TRY(fa_todo_status<1>());
    FA_TRY(vector_add_validate(a, b, out, n));
    if (n == 0)
        return FA_OK;
    int blocks = 0;
    FA_TRY(elementwise_blocks(n, &blocks));
    vector_add_kernel<<<blocks, PRIMITIVES_ELEMENTWISE_THREADS, 0, stream>>>(a, b, out, n);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

fa_status FA_LAUNCHER(scale_array)(const float *x, float alpha, float *out, int64_t n,
                                   cudaStream_t stream)
{
    FA_TRY(fa_todo_status<2>());
    FA_TRY(scale_array_validate(x, alpha, out, n));
    if (n == 0)
        return FA_OK;
    int blocks = 0;
    FA_TRY(elementwise_blocks(n, &blocks));
    scale_array_kernel<<<blocks, PRIMITIVES_ELEMENTWISE_THREADS, 0, stream>>>(x, alpha, out, n);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

/** The launch shared by the three M3 launchers. */
template <fa_exp_method METHOD>
static fa_status launch_exp(const float *x, float *out, int64_t n, cudaStream_t stream)
{
    FA_TRY(fa_todo_status<3>());
    FA_TRY(exp_validate(METHOD, x, out, n));
    if (n == 0)
        return FA_OK;
    int blocks = 0;
    FA_TRY(elementwise_blocks(n, &blocks));
    exp_kernel<METHOD><<<blocks, PRIMITIVES_ELEMENTWISE_THREADS, 0, stream>>>(x, out, n);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

fa_status FA_LAUNCHER(exp_accurate)(const float *x, float *out, int64_t n, cudaStream_t stream)
{
    return launch_exp<FA_EXP_EXPF>(x, out, n, stream);
}

fa_status FA_LAUNCHER(exp2_prescaled)(const float *x, float *out, int64_t n, cudaStream_t stream)
{
    return launch_exp<FA_EXP_EXP2_PRESCALED>(x, out, n, stream);
}

fa_status FA_LAUNCHER(exp_fast)(const float *x, float *out, int64_t n, cudaStream_t stream)
{
    return launch_exp<FA_EXP_FAST>(x, out, n, stream);
}

fa_status FA_LAUNCHER(row_max)(const float *x, int64_t rows, int64_t cols, int64_t ld,
                               float *out, cudaStream_t stream)
{
    FA_TRY(fa_todo_status<4>());
    FA_TRY(row_max_validate(x, rows, cols, ld, out));
    if (rows == 0)
        return FA_OK;
    const unsigned blocks = (unsigned)rows; /* one block per row; validation capped rows at 2^31 - 1 */
    row_max_kernel<<<blocks, PRIMITIVES_ROW_THREADS, 0, stream>>>(x, cols, ld, out);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

fa_status FA_LAUNCHER(row_sum)(const float *x, int64_t rows, int64_t cols, int64_t ld,
                               float *out, cudaStream_t stream)
{
    FA_TRY(fa_todo_status<5>());
    FA_TRY(row_sum_validate(x, rows, cols, ld, out));
    if (rows == 0)
        return FA_OK;
    const unsigned blocks = (unsigned)rows;
    row_sum_kernel<<<blocks, PRIMITIVES_ROW_THREADS, 0, stream>>>(x, cols, ld, out);
    FA_LAUNCH_CHECK();
    return FA_OK;
}
