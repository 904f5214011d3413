/*
 * Stage 02, M7 matmul version 3 — YOUR KERNEL (the exercise). Lesson: 02_matrix/README.md.
 *
 * Delete FA_TODO_VERSION(7, 3) when it is written, then
 *   build/02_matrix/stage02 --impl learner --milestone 7 --version 3
 *
 * This file holds only the kernel (and any device helpers you write). The
 * launch code, 02_matrix/harness/launch.cu, launches MATMUL_RB_THREADS = 256
 * threads per block on a grid of ceil(n / 128) x ceil(m / 128) blocks
 * (matrix.h), one instantiation per layout of B, and tells the kernel where
 * float4 accesses are allowed: a_vector (rows of A start on 16 bytes),
 * b_vector (rows of B, or of B^T for NT), c_vector (rows of C). It compiles
 * this file in one unit with your other stage-02 files (helper names must
 * differ between them).
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_launch.cuh"
#include "matrix.h"

FA_TODO_VERSION(7, 3); /* delete this line when your version 3 is written */

/*
 * TODO(M7 v3): a 128x128 block of C per 256 threads, 8x8 outputs per thread
 * (MATMUL_RB_BLOCK_M/N/K, MATMUL_RB_THREAD_M/N, MATMUL_RB_VECTOR in matrix.h).
 *  - Shared: two buffers of a_tile[8][128] (A stored k-major, i.e.
 *    transposed, so a thread's 4 rows at one k are one float4) and
 *    b_tile[8][128] ([k][col]).
 *  - Copy per k-tile: each thread one float4 of A (row tid / 2, k offset
 *    4 (tid % 2)) and one of B (NN: k row tid / 32, column 4 (tid % 32); NT:
 *    like A, from the [N][K] rows). Use a float4 load when the *_vector flag
 *    says rows are 16-byte aligned and the four elements are inside,
 *    element by element with zeros otherwise.
 *  - Thread (ty, tx) = (tid / 16, tid % 16) owns rows 4ty..4ty+3 and
 *    64+4ty..64+4ty+3, and columns 4tx.. and 64+4tx.. (the split keeps the
 *    float4 reads of a half-warp on 256 contiguous bytes: no bank conflict).
 *    Per k: two float4 of A, two of B, 64 fmaf into float acc[8][8].
 *  - Double buffering: issue the global loads of tile t+1 into registers
 *    before the FMAs of tile t, store them into the other buffer after,
 *    then one __syncthreads().
 *  - Store with float4 where c_vector and the four columns are inside.
 *  Check the registers: `cmake -DFA_PTXAS_VERBOSE=ON` prints them for every
 *  kernel at build time: about 128, no spills (__launch_bounds__(256, 2)).
 */
template <fa_b_layout LAYOUT>
static __global__ void __launch_bounds__(MATMUL_RB_THREADS, 2)
    matmul_register_blocked_kernel(const float *a, const float *b, float *c, int64_t m,
                                   int64_t n, int64_t k, bool a_vector, bool b_vector,
                                   bool c_vector)
{
    (void)a;
    (void)b;
    (void)c;
    (void)m;
    (void)n;
    (void)k;
    (void)a_vector;
    (void)b_vector;
    (void)c_vector;
}
