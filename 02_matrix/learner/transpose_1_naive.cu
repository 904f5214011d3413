/*
 * Stage 02, M8 transpose version 1 — YOUR KERNEL (the exercise). Lesson: 02_matrix/README.md.
 *
 * M8 has two versions, one file each (transpose_1_naive.cu,
 * transpose_2_smem_tiled.cu), each with its own marker FA_TODO_VERSION(8, v).
 * Write version 1, delete its marker, and check:
 *   cmake --build build -t stage02
 *   build/02_matrix/stage02 --impl learner --milestone 8 --version 1
 *
 * This file holds only the kernel. The launch code, 02_matrix/harness/launch.cu,
 * launches TRANSPOSE_TILE x TRANSPOSE_ROWS = 32 x 8 threads per block on a
 * grid of 32x32 tiles, x over the input's columns and y over its rows
 * (matrix.h); a 1 x N or N x 1 matrix it copies without your kernel. It
 * compiles this file in one unit with your other stage-02 files.
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_launch.cuh"
#include "matrix.h"

FA_TODO_VERSION(8, 1); /* delete this line when your version 1 is written */

/*
 * TODO(M8 v1): out[c][r] = in[r][c], in is [rows][cols], out is [cols][rows].
 * c = blockIdx.x * 32 + threadIdx.x; for j = 0, 8, 16, 24:
 * r = blockIdx.y * 32 + threadIdx.y + j; copy when r < rows and c < cols.
 * 64-bit offsets (r * cols + c can pass 2^31).
 */
static __global__ void __launch_bounds__(TRANSPOSE_TILE *TRANSPOSE_ROWS)
    transpose_naive_kernel(const float *in, float *out, int64_t rows, int64_t cols)
{
    (void)in;
    (void)out;
    (void)rows;
    (void)cols;
}
