/*
 * Stage 01 — YOUR KERNELS (the exercise). Lesson: 01_primitives/README.md.
 *
 * Work through the milestones in order. For each one:
 *   1. write the kernel body marked TODO below (the signature is given);
 *   2. delete the milestone's FA_TODO(n); line;
 *   3. build and check:   cmake --build build -t stage01
 *                          build/01_primitives/stage01 --impl learner --milestone N
 * The driver runs your kernel on hand-computable fixtures and random cases,
 * and names the first case and coordinate that is wrong (and the command that
 * reruns that one case).
 *
 * This file holds only kernels. The launch code (validation, grid, launch,
 * error check) is the reference's own, 01_primitives/harness/launch.cu,
 * compiled against this file: it needs the kernels below under these names
 * and signatures. The `(void)arg;` lines only silence "unused parameter"
 * warnings: delete them as you use the arguments.
 */
#include <math.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_launch.cuh"
#include "fa_math.h"
#include "primitives.h"

enum {
    ELEMENTWISE_THREADS = PRIMITIVES_ELEMENTWISE_THREADS,
    VECTOR_FLOATS = PRIMITIVES_VECTOR_FLOATS,
    ROW_THREADS = PRIMITIVES_ROW_THREADS,
    WARP_THREADS = PRIMITIVES_WARP_THREADS,
    ROW_WARPS = ROW_THREADS / WARP_THREADS
};

/* ---- M1 vector add ----------------------------------------------------------------------- */

FA_TODO(1); /* delete this line when your M1 is written */

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

/* ---- M2 scale array ---------------------------------------------------------------------- */

FA_TODO(2); /* delete this line when your M2 is written */

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

/* ---- M3 elementwise exp ------------------------------------------------------------------ */

FA_TODO(3); /* delete this line when your M3 is written */

/*
 * TODO(M3): out[i] = exp(x[i]), the same loop again, with exp evaluated by
 * METHOD, a compile-time constant:
 *   FA_EXP_EXPF            expf(x)
 *   FA_EXP_EXP2_PRESCALED  exp2f(x * FA_LOG2E_F)      (e^x = 2^(x log2 e))
 *   FA_EXP_FAST            __expf(x)
 * Hint: write a small `template <fa_exp_method METHOD> static __device__ float
 * exp_by(float x)` with an `if (METHOD == ...)` per variant; the compiler keeps
 * only the branch of each instantiation. The check judges each variant by its
 * own error budget, so the exp2f variant must multiply by FA_LOG2E_F
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

/* ---- M4 row max -------------------------------------------------------------------------- */

FA_TODO(4); /* delete this line when your M4 is written */

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
 * would drop the NaN: combine with fa_max_nan(a, b) (common/fa_math.h), the
 * course's max, which keeps it.
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

/* ---- M5 row sum -------------------------------------------------------------------------- */

FA_TODO(5); /* delete this line when your M5 is written */

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
