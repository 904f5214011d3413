/*
 * Stage 01 — YOUR KERNELS (the exercise). Lesson: 01_primitives/README.md.
 *
 * Work through the milestones in order. For each one:
 *   1. write the kernel body marked TODO below (the signature is given);
 *   2. delete the FA_TODO(...) line at the top of its launcher(s);
 *   3. build and check:   cmake --build build -t stage01
 *                          build/01_primitives/stage01 --impl learner --milestone N
 * The driver runs your kernel on hand-computable fixtures and random cases,
 * and names the first case and coordinate that is wrong.
 *
 * The launch code below is complete (validation, grid, launch, error check)
 * and the same as the reference's; you should not need to change it. It sits
 * in static launch_* helpers so that each public launcher reads as two
 * lines: the FA_TODO(...) to delete, then the call.
 * The `(void)arg;` lines only silence "unused parameter" warnings: delete
 * them as you use the arguments.
 */
#include <math.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_device.h"
#include "primitives.h"
#include "fa_index.h"

enum {
    ELEMENTWISE_THREADS = PRIMITIVES_ELEMENTWISE_THREADS,
    VECTOR_FLOATS = PRIMITIVES_VECTOR_FLOATS,
    ROW_THREADS = PRIMITIVES_ROW_THREADS,
    WARP_THREADS = PRIMITIVES_WARP_THREADS,
    ROW_WARPS = ROW_THREADS / WARP_THREADS
};
static_assert(sizeof(float4) == VECTOR_FLOATS * sizeof(float), "a float4 holds VECTOR_FLOATS floats");
static_assert(ROW_THREADS % WARP_THREADS == 0, "blocks are made of whole warps");

/* Grid of an elementwise launch: one block per 256 vectors of 4 floats, capped
 * at the number of blocks the GPU holds at once (your grid-stride loop covers
 * the rest). */
static fa_status elementwise_blocks(int64_t n, int *blocks)
{
    int device = 0, sms = 0, threads_per_sm = 0;
    FA_CUDA_TRY(cudaGetDevice(&device));
    FA_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    FA_CUDA_TRY(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    const int64_t vectors = fa_ceil_div(n, VECTOR_FLOATS);
    const int64_t wanted = fa_ceil_div(vectors, ELEMENTWISE_THREADS);
    const int64_t resident = (int64_t)sms * (threads_per_sm / ELEMENTWISE_THREADS);
    *blocks = (int)(wanted < resident ? wanted : resident);
    return FA_OK;
}

/* ---- M1 vector add ----------------------------------------------------------------------- */

/*
 * TODO(M1): out[i] = a[i] + b[i] for 0 <= i < n.
 *
 * The grid may be smaller than the work: write a grid-stride loop.
 *   first  = (int64_t)blockIdx.x * blockDim.x + threadIdx.x
 *   stride = (int64_t)gridDim.x * blockDim.x
 * The cast goes on the first operand: blockIdx.x * blockDim.x is an unsigned
 * 32-bit product that wraps past 2^32 before any assignment could widen it,
 * and n may exceed 2^31.
 *   for (v = first; v < n / 4; v += stride) ...
 * Hints:
 * - Move 16 bytes at a time: view the arrays as float4 (the launcher checked
 *   that every pointer is 16-byte aligned), load a4[v] and b4[v], add the four
 *   components, store out4[v]. Consecutive threads then touch consecutive
 *   16-byte chunks: each warp's access is one contiguous 512-byte span.
 * - The last n % 4 elements fill no float4. Let thread `first` handle element
 *   (n / 4) * 4 + first when that is < n.
 * - n can be 0 (the launcher returns before launching), 1, 3, 1025, ...
 * A plain scalar loop (one float per iteration) also passes the checks; the
 * benchmark shows what the float4 version gains.
 */
static __global__ void __launch_bounds__(ELEMENTWISE_THREADS)
vector_add_kernel(const float *a, const float *b, float *out, int64_t n)
{
    (void)a;
    (void)b;
    (void)out;
    (void)n;
}

static fa_status launch_vector_add(const float *a, const float *b, float *out, int64_t n,
                                   cudaStream_t stream)
{
    FA_TRY(vector_add_validate(a, b, out, n));
    if (n == 0)
        return FA_OK;
    int blocks = 0;
    FA_TRY(elementwise_blocks(n, &blocks));
    vector_add_kernel<<<blocks, ELEMENTWISE_THREADS, 0, stream>>>(a, b, out, n);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

fa_status learner_vector_add(const float *a, const float *b, float *out, int64_t n,
                             cudaStream_t stream)
{
    FA_TODO("M1 vector add");
    return launch_vector_add(a, b, out, n, stream);
}

/* ---- M2 scale array ---------------------------------------------------------------------- */

/*
 * TODO(M2): out[i] = alpha * x[i]. The same loop as M1 with one input.
 * out may be the same array as x (in place): each element is read before it
 * is written, by the same thread, so that is safe.
 */
static __global__ void __launch_bounds__(ELEMENTWISE_THREADS)
scale_array_kernel(const float *x, float alpha, float *out, int64_t n)
{
    (void)x;
    (void)alpha;
    (void)out;
    (void)n;
}

static fa_status launch_scale_array(const float *x, float alpha, float *out, int64_t n,
                                    cudaStream_t stream)
{
    FA_TRY(scale_array_validate(x, alpha, out, n));
    if (n == 0)
        return FA_OK;
    int blocks = 0;
    FA_TRY(elementwise_blocks(n, &blocks));
    scale_array_kernel<<<blocks, ELEMENTWISE_THREADS, 0, stream>>>(x, alpha, out, n);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

fa_status learner_scale_array(const float *x, float alpha, float *out, int64_t n,
                              cudaStream_t stream)
{
    FA_TODO("M2 scale array");
    return launch_scale_array(x, alpha, out, n, stream);
}

/* ---- M3 elementwise exp ------------------------------------------------------------------ */

/*
 * TODO(M3): out[i] = exp(x[i]), the same loop again, with exp evaluated by
 * METHOD, a compile-time constant:
 *   FA_EXP_EXPF            expf(x)
 *   FA_EXP_EXP2_PRESCALED  exp2f(x * PRIMITIVES_LOG2E)      (e^x = 2^(x log2 e))
 *   FA_EXP_FAST            __expf(x)
 * Hint: write a small `template <fa_exp_method METHOD> static __device__ float
 * exp_by(float x)` with an `if (METHOD == ...)` per variant; the compiler keeps
 * only the branch of each instantiation. The check judges each variant by its
 * own error budget, so the exp2f variant must multiply by PRIMITIVES_LOG2E
 * itself, in fp32, exactly as written above.
 */
template <fa_exp_method METHOD>
static __global__ void __launch_bounds__(ELEMENTWISE_THREADS)
exp_kernel(const float *x, float *out, int64_t n)
{
    (void)x;
    (void)out;
    (void)n;
}

template <fa_exp_method METHOD>
static fa_status launch_exp(const float *x, float *out, int64_t n, cudaStream_t stream)
{
    FA_TRY(exp_validate(METHOD, x, out, n));
    if (n == 0)
        return FA_OK;
    int blocks = 0;
    FA_TRY(elementwise_blocks(n, &blocks));
    exp_kernel<METHOD><<<blocks, ELEMENTWISE_THREADS, 0, stream>>>(x, out, n);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

fa_status learner_exp_accurate(const float *x, float *out, int64_t n, cudaStream_t stream)
{
    FA_TODO("M3 elementwise exp");
    return launch_exp<FA_EXP_EXPF>(x, out, n, stream);
}

fa_status learner_exp2_prescaled(const float *x, float *out, int64_t n, cudaStream_t stream)
{
    FA_TODO("M3 elementwise exp");
    return launch_exp<FA_EXP_EXP2_PRESCALED>(x, out, n, stream);
}

fa_status learner_exp_fast(const float *x, float *out, int64_t n, cudaStream_t stream)
{
    FA_TODO("M3 elementwise exp");
    return launch_exp<FA_EXP_FAST>(x, out, n, stream);
}

/* ---- M4 row max -------------------------------------------------------------------------- */

/*
 * TODO(M4): out[blockIdx.x] = max of row blockIdx.x, i.e. of
 * x[row * ld + c] for 0 <= c < cols. One block of ROW_THREADS = 256 threads
 * per row. Three steps:
 *   1. each thread folds columns threadIdx.x, threadIdx.x + 256, ... into one
 *      value, starting from -INFINITY (the max of nothing; cols may be 0);
 *   2. each warp folds its 32 values with __shfl_down_sync(0xffffffff, v,
 *      offset) for offset = 16, 8, 4, 2, 1: lane 0 ends with the warp's max;
 *   3. lane 0 of each warp writes its value to a __shared__ float[ROW_WARPS];
 *      __syncthreads(); warp 0 folds those 8 values the same way (offsets 4,
 *      2, 1; lanes >= 8 hold -INFINITY) and thread 0 writes out[blockIdx.x].
 * NaN: a row that holds a NaN must give NaN. fmaxf(a, NaN) returns a, so it
 * would drop the NaN: combine with (a > b || isnan(a)) ? a : b instead.
 * Index with int64_t: row * ld can exceed 2^31. Read only the first cols
 * elements of a row: the checks fill the padding up to ld with NaN.
 */
static __global__ void __launch_bounds__(ROW_THREADS)
row_max_kernel(const float *x, int64_t cols, int64_t ld, float *out)
{
    (void)x;
    (void)cols;
    (void)ld;
    (void)out;
}

static fa_status launch_row_max(const float *x, int64_t rows, int64_t cols, int64_t ld, float *out,
                                cudaStream_t stream)
{
    FA_TRY(row_max_validate(x, rows, cols, ld, out));
    if (rows == 0)
        return FA_OK;
    const unsigned blocks = (unsigned)rows; /* one block per row; validation capped rows at 2^31 - 1 */
    row_max_kernel<<<blocks, ROW_THREADS, 0, stream>>>(x, cols, ld, out);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

fa_status learner_row_max(const float *x, int64_t rows, int64_t cols, int64_t ld, float *out,
                          cudaStream_t stream)
{
    FA_TODO("M4 row max");
    return launch_row_max(x, rows, cols, ld, out, stream);
}

/* ---- M5 row sum -------------------------------------------------------------------------- */

/*
 * TODO(M5): out[blockIdx.x] = sum of row blockIdx.x: the tree of M4 with +
 * and 0 as the starting value. If you wrote M4 with a helper that takes the
 * combining operation, M5 is a few lines.
 * The check bounds the error by gamma_d * sum |x| with d = ceil(cols / 256)
 * - 1 + 8, the depth of this tree: a different order of additions with a
 * similar depth passes too, but a single thread adding a whole long row in
 * sequence (depth cols - 1) can exceed it.
 */
static __global__ void __launch_bounds__(ROW_THREADS)
row_sum_kernel(const float *x, int64_t cols, int64_t ld, float *out)
{
    (void)x;
    (void)cols;
    (void)ld;
    (void)out;
}

static fa_status launch_row_sum(const float *x, int64_t rows, int64_t cols, int64_t ld, float *out,
                                cudaStream_t stream)
{
    FA_TRY(row_sum_validate(x, rows, cols, ld, out));
    if (rows == 0)
        return FA_OK;
    const unsigned blocks = (unsigned)rows;
    row_sum_kernel<<<blocks, ROW_THREADS, 0, stream>>>(x, cols, ld, out);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

fa_status learner_row_sum(const float *x, int64_t rows, int64_t cols, int64_t ld, float *out,
                          cudaStream_t stream)
{
    FA_TODO("M5 row sum");
    return launch_row_sum(x, rows, cols, ld, out, stream);
}
