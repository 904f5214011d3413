/*
 * Stage 02, M7 matmul version 4 — YOUR KERNEL (the exercise). Lesson: 02_matrix/README.md.
 *
 * Delete FA_TODO_VERSION(7, 4) when it is written, then
 *   build/02_matrix/stage02 --impl learner --milestone 7 --version 4
 *
 * You write the kernel, not the instructions: 02_matrix/tensor_core.cuh wraps
 * cp.async, ldmatrix and mma.sync m16n8k16 as C functions (read it; the page
 * draws the fragments). This file holds only the kernel and your device
 * helpers. The launch code, 02_matrix/harness/launch.cu, launches
 * MATMUL_MMA_THREADS = 128 threads (4 warps) per block on a grid of
 * ceil(n / 128) x ceil(m / 128) blocks, with MATMUL_MMA_SMEM_BYTES (64 KiB)
 * of dynamic shared memory per block (matrix.h); it instantiates the kernel
 * for both layouts of B and for ALIGNED = true (every row of A and B starts
 * on 16 bytes: K % 8 == 0, for NN also N % 8 == 0, aligned bases) or false,
 * and passes c_pairs (C's rows allow float2 stores). It compiles this file in
 * one unit with your other stage-02 files (helper names must differ).
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_launch.cuh"
#include "matrix.h"
#include "tensor_core.cuh"

FA_TODO_VERSION(7, 4); /* delete this line when your version 4 is written */

/*
 * TODO(M7 v4): tensor cores, bf16 in, fp32 accumulate.
 *  - Shared: `extern __shared__ __align__(128) uint16_t smem[];` holds
 *    MATMUL_MMA_STAGES = 4 stages (fewer is fine) of a [128][32] A tile and
 *    a B tile ([128][32] rows of B^T for NT, [32][128] for NN), bf16 as
 *    uint16_t: 16 KiB per stage.
 *  - Tile loads: 16-byte chunks; when ALIGNED, cp_async_16 with 0 source
 *    bytes for chunks outside the matrix in k (zero-fill); otherwise 2-byte
 *    loads with a bound check per element and a 16-byte shared store.
 *  - Pipeline (S stages): commit tiles 0 .. S-2; for each k-tile kt:
 *    cp_async_wait<S - 2>(), __syncthreads(), start tile kt + S - 1 into
 *    the stage tile kt - 1 used, commit (even when empty), compute tile kt.
 *  - Compute, per k16 step: 4 ldmatrix_x4 of A (lane l names row l % 16 of
 *    the m16 tile, k chunk l / 16), 4 ldmatrix_x4 (NT) or ldmatrix_x4_trans
 *    (NN) of B, each giving the fragments of two n8 tiles, then 4 x 8
 *    mma_m16n8k16_bf16 into float acc[4][8][4].
 *  - Bank conflicts: 8 rows of one chunk column must hit 8 different 16-byte
 *    bank groups: XOR-swizzle the chunk index, or pad rows by 16 bytes (then
 *    fewer stages fit the 64 KiB).
 *  - Epilogue: lane l holds rows l/4 and l/4 + 8, columns 2(l%4) and
 *    2(l%4)+1 of each 16x8 tile: store as float2 when c_pairs and inside.
 *  Check the build: `cmake -DFA_PTXAS_VERBOSE=ON` (no spills), and
 *  `cmake --build build -t stage02_sass` for the machine code of the
 *  reference (HMMA, LDSM, LDGSTS) to compare with yours.
 */
template <fa_b_layout LAYOUT, bool ALIGNED>
static __global__ void __launch_bounds__(MATMUL_MMA_THREADS, 2)
    matmul_mma_bf16_kernel(const uint16_t *a, const uint16_t *b, float *c, int64_t m, int64_t n,
                           int64_t k, bool c_pairs)
{
    (void)a;
    (void)b;
    (void)c;
    (void)m;
    (void)n;
    (void)k;
    (void)c_pairs;
}
