/*
 * Stage 02, M6 dot product — YOUR KERNELS (the exercise). Lesson: 02_matrix/README.md.
 *
 * 1. write the two kernel bodies marked TODO below (the signatures are given);
 * 2. delete the FA_TODO(6); line;
 * 3. build and check:   cmake --build build -t stage02
 *                        build/02_matrix/stage02 --impl learner --milestone 6
 * The driver runs your kernels on hand-computable fixtures and random cases
 * in fp32, bf16 and fp16, runs every case twice (the bits must repeat), and
 * names the first case that is wrong with the command that reruns it alone.
 *
 * This file holds only kernels. The launch code (validation, grid, launch,
 * error check) is the reference's own, 02_matrix/harness/launch.cu, compiled
 * against this file and the other files of this folder (all in one unit, so
 * a helper's name must differ from those of your other stage-02 files): it
 * needs the kernels below under these names and signatures. It launches
 * dot_product_blocks(n, dtype) blocks of DOT_PRODUCT_THREADS threads for
 * pass 1, then one block for pass 2 (matrix.h). The `(void)arg;` lines only
 * silence "unused parameter" warnings: delete them as you use the arguments.
 *
 * The plan (the page explains why): pass 1 writes one partial sum per block,
 * pass 2 adds the partials in one block. No atomics: with a fixed partition
 * and fixed trees the result has the same bits on every run.
 */
#include <stdint.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "fa_kernel.cuh"
#include "fa_launch.cuh"
#include "matrix.h"

FA_TODO(6); /* delete this line when your M6 is written */

/*
 * TODO(M6) pass 1: partials[blockIdx.x] = this block's share of sum_i x[i] * y[i].
 *  1. Thread g = blockIdx.x * blockDim.x + threadIdx.x of T = gridDim.x *
 *     blockDim.x threads walks the 16-byte chunks g, g + T, g + 2T, ... of x
 *     and y (reinterpret them as `const uint4 *`; a chunk holds 4 fp32 or 8
 *     bf16/fp16, `if constexpr (DTYPE == FA_F32)`). Widen each element to float
 *     (__uint_as_float, __bfloat1622float2, __half22float2 on the 32-bit
 *     words) and accumulate with one fmaf per element in element order.
 *     Keep the element offsets in int64_t (cast before multiplying).
 *  2. The n % chunk tail elements (fewer than one chunk) go to threads
 *     0 .. tail-1, one each, after their chunks.
 *  3. Sum the block's values with the block tree of stage 01:
 *     fa_block_sum<DOT_PRODUCT_THREADS>(acc, scratch) (common/fa_kernel.cuh,
 *     scratch a __shared__ float[DOT_PRODUCT_THREADS / 32]), or your own.
 *     Thread 0 writes partials[blockIdx.x].
 *  Hint: load several chunks before using the first (bytes in flight are
 *  what a memory-bound kernel needs); the order of the FMAs stays the same.
 */
template <fa_dtype DTYPE>
static __global__ void __launch_bounds__(DOT_PRODUCT_THREADS)
    dot_partials_kernel(const void *x, const void *y, int64_t n, float *partials)
{
    (void)x;
    (void)y;
    (void)n;
    (void)partials;
}

/*
 * TODO(M6) pass 2, one block of DOT_PRODUCT_THREADS: *result = sum of
 * partials[0..count). Thread t adds partials t, t + 256, ... in order, then
 * the same block tree as pass 1; thread 0 writes *result.
 */
static __global__ void __launch_bounds__(DOT_PRODUCT_THREADS)
    dot_finish_kernel(const float *partials, int count, float *result)
{
    (void)partials;
    (void)count;
    (void)result;
}
