/*
 * Stage 02, M7 matmul version 2 — YOUR KERNEL (the exercise). Lesson: 02_matrix/README.md.
 *
 * Delete FA_TODO_VERSION(7, 2) when it is written, then
 *   build/02_matrix/stage02 --impl learner --milestone 7 --version 2
 *
 * This file holds only the kernel. The launch code, 02_matrix/harness/launch.cu,
 * launches MATMUL_TILED_TILE x MATMUL_TILED_TILE threads per block on a grid
 * of ceil(n / 32) x ceil(m / 32) blocks (matrix.h), one instantiation per
 * layout of B, and compiles this file in one unit with your other stage-02
 * files (helper names must differ between them).
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_launch.cuh"
#include "matrix.h"

FA_TODO_VERSION(7, 2); /* delete this line when your version 2 is written */

/*
 * TODO(M7 v2): `__shared__ float a_tile[32][32]` ([row][kk]) and
 * `b_tile[32][33]` ([kk][col]; the extra column is for NT, see below). For
 * k0 = 0, 32, ...: thread (ty, tx) loads a[row][k0 + tx] into a_tile[ty][tx]
 * and, for NN, B[k0 + ty][col] into b_tile[ty][tx]; for NT it loads the
 * coalesced b[(blockIdx.x * 32 + ty) * k + k0 + tx] and stores it transposed
 * at b_tile[tx][ty] (33 columns keep those stores in 32 different banks).
 * Zero outside the matrices. __syncthreads(); 32 fmaf in kk order;
 * __syncthreads() before the next loads. Store if inside C.
 */
template <fa_b_layout LAYOUT>
static __global__ void __launch_bounds__(MATMUL_TILED_TILE *MATMUL_TILED_TILE)
    matmul_smem_tiled_kernel(const float *a, const float *b, float *c, int64_t m, int64_t n,
                             int64_t k)
{
    (void)a;
    (void)b;
    (void)c;
    (void)m;
    (void)n;
    (void)k;
}
