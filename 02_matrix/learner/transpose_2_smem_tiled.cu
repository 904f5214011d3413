/*
 * Stage 02, M8 transpose version 2 — YOUR KERNEL (the exercise). Lesson: 02_matrix/README.md.
 *
 * Delete FA_TODO_VERSION(8, 2) when it is written, then
 *   build/02_matrix/stage02 --impl learner --milestone 8 --version 2
 *
 * This file holds only the kernel. The launch code, 02_matrix/harness/launch.cu,
 * launches it exactly as version 1 (32 x 8 threads per 32x32 tile, matrix.h),
 * in one unit with your other stage-02 files.
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_launch.cuh"
#include "matrix.h"

FA_TODO_VERSION(8, 2); /* delete this line when your version 2 is written */

/*
 * TODO(M8 v2): the same through a shared tile, so that the writes are
 * coalesced too. `__shared__ float tile[32][33];` (why 33: the page, "Bank
 * conflicts"). Read the input tile row by row into tile[ty + j][tx];
 * __syncthreads(); write the output tile row by row: the output tile starts
 * at row blockIdx.x * 32, column blockIdx.y * 32 of out, and its element
 * (ty + j, tx) is tile[tx][ty + j]. Guard both phases against the edges.
 */
static __global__ void __launch_bounds__(TRANSPOSE_TILE *TRANSPOSE_ROWS)
    transpose_smem_tiled_kernel(const float *in, float *out, int64_t rows, int64_t cols)
{
    (void)in;
    (void)out;
    (void)rows;
    (void)cols;
}
