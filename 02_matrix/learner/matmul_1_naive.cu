/*
 * Stage 02, M7 matmul version 1 — YOUR KERNEL (the exercise). Lesson: 02_matrix/README.md.
 *
 * M7 has four versions, one file each (matmul_1_naive.cu ... matmul_4_mma_bf16.cu),
 * each with its own marker FA_TODO_VERSION(7, v). Write them in order; after
 * each, delete its marker and check it alone or with the ones before:
 *   cmake --build build -t stage02
 *   build/02_matrix/stage02 --impl learner --milestone 7 --version 1
 *   build/02_matrix/stage02 --impl learner --milestone 7     (every version written so far)
 *
 * This file holds only the kernel. The launch code is the reference's own,
 * 02_matrix/harness/launch.cu, compiled against this file and the others of
 * this folder (one unit: helper names must differ between your files). It
 * launches MATMUL_NAIVE_TILE x MATMUL_NAIVE_TILE threads per block on a grid
 * of ceil(n / 32) x ceil(m / 32) blocks (matrix.h), one instantiation per
 * layout of B. B comes row-major ([K][N], NN) or transposed ([N][K], NT):
 * LAYOUT is a template parameter, so `if constexpr` on it costs nothing.
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_launch.cuh"
#include "matrix.h"

FA_TODO_VERSION(7, 1); /* delete this line when your version 1 is written */

/*
 * TODO(M7 v1): row = blockIdx.y * 32 + threadIdx.y, col = blockIdx.x * 32 +
 * threadIdx.x; outside C: return. acc = 0; for kk in 0 .. k-1 in order:
 * acc = fmaf(a[row][kk], B[kk][col], acc), where B[kk][col] is b[kk * n + col]
 * (NN) or b[col * k + kk] (NT). c[row * n + col] = acc. 64-bit offsets.
 * K = 0 must still write c = 0.
 */
template <fa_b_layout LAYOUT>
static __global__ void __launch_bounds__(MATMUL_NAIVE_TILE *MATMUL_NAIVE_TILE)
    matmul_naive_kernel(const float *a, const float *b, float *c, int64_t m, int64_t n,
                        int64_t k)
{
    (void)a;
    (void)b;
    (void)c;
    (void)m;
    (void)n;
    (void)k;
}
