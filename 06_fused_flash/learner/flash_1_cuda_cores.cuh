/*
 * Stage 06, M23 version 1 — YOUR FUSED KERNEL ON CUDA CORES (the exercise).
 * Lesson: 06_fused_flash/README.md, section "M23 version 1: the whole kernel,
 * top to bottom", beside 05_tiled_blocks/README.md ("The loop, and what a
 * trace writes").
 *
 * You write one kernel, flash1_kernel<T, TO, D_MAX>, out of the six level-1
 * blocks of stage 05, called in the order of stage 05's trace loop, without
 * the trace's writes: the only global memory the kernel writes is o and lse.
 *   1. write the body marked TODO below (the signature is given);
 *   2. delete the line FA_TODO_VERSION(23, 1);
 *   3. build and check:   cmake --build build -t stage06
 *                          build/06_fused_flash/stage06 --impl learner --milestone 23 --version 1
 *
 * This file holds only the kernel and its device helpers. The launch code
 * (06_fused_flash/harness/launch.cu: validation already done by M24, the
 * grid, the dynamic shared memory, the instance for the input type, the
 * output type and the head dimension) is the reference's own, compiled
 * against this file: keep the kernel's name, template parameters and
 * arguments. Until you write it, the kernel does nothing and returns.
 *
 * The blocks. `#include "tiles_1_cuda_cores.cuh"` below finds the
 * REFERENCE's stage 05 blocks (05_tiled_blocks/tiles_1_cuda_cores.cuh), so
 * this milestone can be done before, or without, your own stage 05. To
 * compose YOUR blocks instead, once all six milestones of stage 05 version 1
 * pass, replace that line with
 *   #include "../../05_tiled_blocks/learner/tiles_1_cuda_cores.cuh"
 * (a path relative to this file: it works in the repository and in a folder
 * made by tools/learner_init.sh, which mirrors the stage layout). Include one
 * or the other, never both: the two files share their include guard.
 */
#ifndef FLASH_1_CUDA_CORES_CUH
#define FLASH_1_CUDA_CORES_CUH

#include "flash.h"
#include "flash_store.cuh"
#include "tiles_1_cuda_cores.cuh"

FA_TODO_VERSION(23, 1); /* delete this line when your M23 version 1 is written */

/* Given, in flash_store.cuh: flash1_store(to, x), an output value rounded to the output
 * type (fp32: as is; bf16, fp16: to nearest even). */

/*
 * TODO(M23 v1): the attention forward of one tile of TILE1_BR = 64 query
 * rows of one head, over all the keys, on CUDA cores:
 *   o_i = sum_j softmax_j(scale q_i . k_j) v_j,   lse_i = ln sum_j exp(scale q_i . k_j).
 *
 * The launch (harness/launch.cu): one block of TILE1_THREADS = 256 threads
 * per (query tile, head, batch):
 *   blockIdx.x  the query tile: rows row0 = blockIdx.x TILE1_BR .. row0 + 63
 *   blockIdx.y  the query head h (0 .. heads_q - 1)
 *   blockIdx.z  the batch b
 * with tile1_shared_bytes(D_MAX) bytes of dynamic shared memory. Arguments:
 *   T       the input type (float, __nv_bfloat16, __half); TO the output type
 *           (T, or float when p.o_fp32);
 *   D_MAX   64, 128 or 256: the smallest that holds p.head_dim (the
 *           accumulator o has D_MAX / TILE1_THREAD_COLS columns per row);
 *   p       the validated call (flashattn.h): pointers, sizes, strides;
 *   scale   the scale to use, already resolved (never 0; p.scale may be 0);
 *   vector_loads  pass it on to tile1_load(): the launcher decided whether
 *           16-byte loads are safe for q, k and v.
 *
 * Shared memory, carved from `extern __shared__ float flash1_shared[];` in
 * the order tile1_shared_bytes() counts it (stride = tile1_stride(D_MAX)):
 *   q_tile  TILE1_BR rows of `stride` floats, at flash1_shared
 *   k_tile  TILE1_BC rows, after it;  v_tile  TILE1_BC rows, after that;
 *   p_tile  TILE1_BR rows of TILE1_P_STRIDE floats, last.
 *
 * The skeleton (each line a call of a stage 05 block, or a few lines):
 *
 *   ty = threadIdx.x / TILE1_THREAD_COLS, tx = threadIdx.x % TILE1_THREAD_COLS
 *   h_kv = h / (p.heads_q / p.heads_kv)                   the GQA head mapping
 *   q = (const T *)p.q + b q_strides.batch + h    q_strides.head + row0 q_strides.row
 *   k = (const T *)p.k + b k_strides.batch + h_kv k_strides.head
 *   v = (const T *)p.v + b v_strides.batch + h_kv v_strides.head
 *   c = scale * FA_LOG2E_F                                once: exp2 folds the scale
 *   tile1_load(q_tile, ..., q, q_strides.row, min(TILE1_BR, nq - row0), TILE1_BR, ...)   M17, once
 *   m[r] = -INFINITY, l[r] = 0, o[r][col] = 0             the empty state, every row r < 4
 *   for t = 0 .. ceil(nk / TILE1_BC) - 1:                 key0 = t TILE1_BC
 *       valid = min(TILE1_BC, nk - key0)                  fa_tile_rows(nk, key0, TILE1_BC)
 *       __syncthreads()      nobody reads the last tile's K, V and P any more
 *       tile1_load(k_tile, ..., k + key0 k_strides.row, k_strides.row, valid, TILE1_BC, ...)   M17
 *       tile1_load(v_tile, ..., v + key0 v_strides.row, v_strides.row, valid, TILE1_BC, ...)
 *       __syncthreads()      every thread's part of K and V (and, at t = 0, of Q) is written
 *       tile1_scores(s, q_tile, k_tile, stride, d, key0, nk)       M18  (-inf past nk)
 *       tile1_rowmax(s, m, m_new)                                  M19
 *       tile1_exp(s, m, m_new, c, alpha)                           M20
 *       tile1_rowsum(l, alpha, s)                                  M21
 *       tile1_accumulate_pv<D_MAX>(o, alpha, s, p_tile, v_tile, stride, d)   M22
 *       m = m_new
 *   tile1_normalise<D_MAX>(o, m, l, scale, lse)                    M22
 *   store, for r < 4 with row = row0 + 4 ty + r < nq:
 *       o[r][col] at out + row o_strides.row + tx + 16 col, for tx + 16 col < d,
 *           out = (TO *)p.o + b o_strides.batch + h o_strides.head,
 *           through flash1_store() (rounds to TO);
 *       lse[r], by the thread with tx == 0 only, when p.lse != NULL, at
 *           p.lse[(b heads_q + h) nq + row]  (lse is [batch][heads_q][nq], contiguous).
 *
 * Hints:
 * - Strides are in elements and int64_t; b, h, h_kv and row0 are small, but
 *   their products with a stride are not: compute every offset in int64_t
 *   (blockIdx.x * TILE1_BR in unsigned int wraps past 2^32 rows).
 * - GQA: query heads h = G g .. G g + G - 1, G = heads_q / heads_kv, share
 *   key/value head g (MHA: G = 1; MQA: heads_kv = 1). Nothing else changes:
 *   the K/V pointers of the block are those of head h_kv.
 * - Tails need no code of their own: tile1_load() zero-fills the rows past
 *   nq (Q) and past nk (K, V), tile1_scores() scores the missing keys -inf,
 *   and the rows past nq are computed like any other and never stored.
 * - nk = 0 is valid: the loop runs zero times and tile1_normalise() turns the
 *   empty state into o = 0 and lse = -inf. The output must still be written.
 * - Keep m, l, o, s, m_new, alpha and lse in registers: arrays indexed only by
 *   counters of `#pragma unroll` loops with constant bounds
 *   (TILE1_ROWS_PER_THREAD, D_MAX / TILE1_THREAD_COLS).
 * Pitfalls:
 * - An early `return` (or `continue` past the blocks) for the threads whose
 *   rows are past nq: tile1_accumulate_pv() and the loop hold __syncthreads(),
 *   which every thread of the block must reach. Skip only the stores.
 * - Leaving out the barrier at the top of the loop: a fast warp then
 *   overwrites K, V or P while a slow one still reads the previous tile.
 * - m = m_new forgotten, or done before tile1_exp(): alpha and the weights
 *   need the old max and the new one, and the next tile needs the new one
 *   as its old.
 * - h instead of h_kv for K and V: right for MHA, wrong (or out of bounds)
 *   for GQA and MQA.
 * - The lse of every row written by every thread of the row: 16 stores of
 *   the same value; harmless, but take tx == 0.
 */
template <typename T, typename TO, int D_MAX>
static __global__ void __launch_bounds__(TILE1_THREADS)
flash1_kernel(fa_attention_params p, float scale, bool vector_loads)
{
    (void)p;
    (void)scale;
    (void)vector_loads;
}

#endif /* FLASH_1_CUDA_CORES_CUH */
