/*
 * Stage 03 — YOUR KERNELS (the exercise). Lesson: 03_naive_attention/README.md.
 *
 * Work through the milestones in order. For each one:
 *   1. write the kernel body marked TODO below (the signature is given);
 *   2. delete the milestone's FA_TODO(n); line;
 *   3. build and check:   cmake --build build -t stage03
 *                          build/03_naive_attention/stage03 --impl learner --milestone N
 * The driver runs your kernel on hand-computable fixtures (in fp32, bf16 and
 * fp16) and random cases, and names the first case and coordinate that is
 * wrong, with the command that reruns that one case: start with the fixture
 * it names, the stage page works each one out.
 *
 * This file holds only kernels. The launch code (validation, grid, launch,
 * error check, M12's workspace) is the reference's own,
 * 03_naive_attention/harness/launch.cu, compiled against this file: it needs
 * the kernels below under these names and signatures, and launches M9 and
 * M11 with blocks of NAIVE_ATTN_TILE x NAIVE_ATTN_TILE threads, M10 with
 * SOFTMAX_ROWS_THREADS (attention.h). M12 has no kernel: its launcher chains
 * your M9, M10 (in place) and M11; read it there, and delete FA_TODO(12) once
 * M9 to M11 pass (it also waits for their markers to be gone).
 * The `(void)arg;` lines only silence "unused parameter" warnings: delete
 * them as you use the arguments. Helpers marked [[maybe_unused]] are given;
 * the attribute only silences a warning until your kernels call them.
 */
#include <math.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "attention.h"
#include "fa_index.h"
#include "fa_kernel.cuh"
#include "fa_launch.cuh"
#include "fa_mask.h"
#include "fa_math.h"

constexpr int TILE = NAIVE_ATTN_TILE;                  /* 32 x 32 outputs per block */
[[maybe_unused]] constexpr int TILE_PADDED = TILE + 1; /* a tile column spans all 32 banks */
constexpr int SOFTMAX_THREADS = SOFTMAX_ROWS_THREADS;  /* 256: one block per row */

/* Given, in fa_kernel.cuh: fa_to_float(x). bf16 and fp16 widen to fp32 exactly, so compute
 * in fp32 whatever you read. */

/* ---- M9 QK^T scores ------------------------------------------------------------------------ */

FA_TODO(9); /* delete this line when your M9 is written */

/*
 * TODO(M9): s[head][i][j] = scale * sum_d q[head][i][d] * k[head][j][d],
 * for every head = b * heads + h, query row i < nq, key j < nk.
 *
 * The grid has one block of 32 x 32 threads per 32 x 32 tile of S, over all
 * heads, and may be capped: loop
 *   for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x)
 * with tiles = batch * heads * row_tiles * col_tiles, row_tiles = ceil(nq/32),
 * col_tiles = ceil(nk/32) (fa_ceil_div), and find the tile's head, first row
 * and first column:
 *   head = tile / (row_tiles * col_tiles)
 *   row0 = tile / col_tiles % row_tiles * 32,   col0 = tile % col_tiles * 32.
 * Thread (ty, tx) computes score (row0 + ty, col0 + tx).
 * Hints:
 * - Stage tiles in shared memory, 32 dimensions at a time, as in stage 02's
 *   matmul (the NT case: K is stored by rows, like Q):
 *     __shared__ float q_tile[TILE][TILE];          [query row][d]
 *     __shared__ float k_tile[TILE][TILE_PADDED];   [key row][d]
 *   thread (ty, tx) loads dimension d0 + tx of query row0 + ty and of key
 *   col0 + ty (consecutive tx, consecutive addresses), 0.0f outside the
 *   matrices; __syncthreads(); then acc = fmaf(q_tile[ty][d], k_tile[tx][d], acc)
 *   for d = 0..31; __syncthreads() before the next load.
 * - Widen with fa_to_float(): T is float, __nv_bfloat16 or __half.
 * - Offsets are int64_t: head * nq * head_dim passes 2^31 on long sequences.
 * - Multiply by scale once, after the sum, and store only inside S (the
 *   edge tiles stick out when nq or nk is not a multiple of 32).
 * - The checks accept any summation order; the reference's (d = 0, 1, ...)
 *   is what makes the model match it bit for bit.
 */
template <typename T>
static __global__ void __launch_bounds__(TILE *TILE)
    attn_scores_tiled(const T *__restrict__ q, const T *__restrict__ k, float *__restrict__ s,
                      naive_attn_dims dims, float scale)
{
    (void)q;
    (void)k;
    (void)s;
    (void)dims;
    (void)scale;
}

/* ---- M10 row softmax ----------------------------------------------------------------------- */

FA_TODO(10); /* delete this line when your M10 (both parts) is written */

/*
 * TODO(M10, part 1): how many keys row i of batch b may see.
 * Every mask of the course allows a prefix of the keys, 0 .. count-1, and
 * common/fa_mask.h says where it ends: fa_mask_key_range(mask, i, nq, nk).end
 * is the causal limit (j <= i top-left, j <= i + nk - nq bottom-right, every
 * key with no mask) already clipped to [0, nk]. Use it, never a formula of
 * your own: the checks and the CPU model call that same function.
 * Then, when key_length != nullptr, also cut at key_length[b] (keys
 * j >= key_length[b] are padding), counting a negative length as 0.
 * The stage page draws both alignments for 3 x 5 and 5 x 3.
 */
[[maybe_unused]] static __device__ __forceinline__ int64_t allowed_keys(
    fa_mask mask, const int64_t *key_length, int64_t b, int64_t i, int64_t nq, int64_t nk)
{
    (void)mask;
    (void)key_length;
    (void)b;
    (void)i;
    (void)nq;
    (void)nk;
    return 0;
}

/*
 * TODO(M10, part 2): one block of SOFTMAX_THREADS = 256 threads per row of S
 * (rows = batch * heads * nq, grid-stride: for (int64_t row = blockIdx.x;
 * row < rows; row += gridDim.x)); b = row / (heads * nq), i = row % nq;
 * allowed = allowed_keys(...). Then three passes over j = threadIdx.x,
 * threadIdx.x + 256, ... :
 *   1. m = max of s_row[j] over j < allowed: fold with fa_max_nan(m, x)
 *      (common/fa_math.h) from -INFINITY, then
 *      m = fa_block_max<SOFTMAX_THREADS>(m, scratch) (common/fa_kernel.cuh,
 *      the block tree of stage 01's M4; scratch is a __shared__
 *      float[SOFTMAX_THREADS / 32]);
 *   2. l = sum of expf(s_row[j] - m) over j < allowed, then
 *      fa_block_sum<SOFTMAX_THREADS>(l, scratch2);
 *   3. p_row[j] = expf(s_row[j] - m) / l for j < allowed, 0.0f for the
 *      masked j < nk; thread 0 writes lse[row] = m + logf(l) when lse != NULL.
 * Hints:
 * - NaN: a NaN among the allowed scores must make the row's m, p and lse NaN.
 *   fmaxf(m, NaN) returns m, dropping it; fa_max_nan keeps it (the course's
 *   one NaN policy). A NaN m then turns every term and l into NaN by itself.
 * - Read only the allowed scores: masked ones may hold anything (padding).
 * - A row with no allowed key has m = -inf (the max of nothing), and
 *   s - m = (-inf) - (-inf) is NaN. Subtract 0 instead when m == -inf: every
 *   term is then expf(-inf) = 0, so l = 0. For l == 0 write p = 0 and
 *   lse = -INFINITY, never 0/0.
 * - A scratch array may be written again only after every thread passed a
 *   __syncthreads() since it was read (fa_block_reduce()): one scratch per
 *   reduction needs no extra barrier, even from one row to the next.
 * - p may be the same array as s (M12 runs the softmax in place): in pass 3,
 *   read s_row[j] before writing p_row[j], in the same thread. So no
 *   __restrict__ on s and p.
 * - Pass 3 recomputes expf rather than storing it in pass 2: one more read
 *   of S costs less than a write and a read of P.
 */
static __global__ void __launch_bounds__(SOFTMAX_THREADS)
    softmax_rows_three_pass(const float *s, float *p, float *lse, naive_attn_dims dims,
                            fa_mask mask, const int64_t *key_length)
{
    (void)s;
    (void)p;
    (void)lse;
    (void)dims;
    (void)mask;
    (void)key_length;
}

/* ---- M11 PV matmul ------------------------------------------------------------------------- */

FA_TODO(11); /* delete this line when your M11 is written */

/*
 * TODO(M11): o[head][i][c] = sum_j p[head][i][j] * v[head][j][c], for
 * i < nq, c < head_dim, summing over the keys row i may see:
 * j < allowed_keys(mask, key_length, b, i, nq, nk), with b = head / heads
 * (M10's part 1: write it first). M11 alone is launched with FA_MASK_NONE and
 * no key_length (every key, a plain matmul); M12 with the softmax's mask and
 * padding.
 *
 * The same tiling as M9, with tiles of O: row_tiles = ceil(nq/32),
 * col_tiles = ceil(head_dim/32), and a loop over keys j0 = 0, 32, ...:
 *   __shared__ float p_tile[TILE][TILE];   [query row][key]
 *   __shared__ float v_tile[TILE][TILE];   [key][column of v]
 * thread (ty, tx) loads p(row0 + ty, j0 + tx) and v(j0 + ty, col0 + tx),
 * zeros outside; then acc = fmaf(p_tile[ty][j], v_tile[j][tx], acc) for
 * the keys j0 + j this row may see.
 * Hints:
 * - Loop over the allowed prefix, not over nk, and do not skip a weight of
 *   0: an allowed key's v row must reach o even when its weight underflowed
 *   (0 * NaN = NaN, the course's rule), while a masked key's row (padding,
 *   which may be full of NaN) must never be multiplied.
 * - The allowed prefix never shrinks from one row to the next, so the tile's
 *   last row (min(row0 + 32, nq) - 1) bounds the key loop of the block, and
 *   causal tiles above the diagonal stop early. A warp is one row (one ty),
 *   so a test on that row's count does not diverge.
 * - nk may be 0: o is then all zeros, and must still be written.
 */
template <typename T>
static __global__ void __launch_bounds__(TILE *TILE)
    attn_pv_tiled(const float *__restrict__ p, const T *__restrict__ v, float *__restrict__ o,
                  naive_attn_dims dims, fa_mask mask, const int64_t *__restrict__ key_length)
{
    (void)p;
    (void)v;
    (void)o;
    (void)dims;
    (void)mask;
    (void)key_length;
}

/* ---- M12 naive attention ------------------------------------------------------------------- */

/*
 * Nothing to write here: M12 is your M9, M10 and M11 chained by the launcher
 * (harness/launch.cu, FA_LAUNCHER(attn_naive)). It asks the stream-ordered
 * allocator for the N x N scores (B * H * Nq * Nk * 4 bytes,
 * attn_naive_workspace_bytes()), runs your three kernels through them, the
 * softmax in place, and refuses with FA_ERR_OUT_OF_MEMORY, before computing
 * anything, when they do not fit. The stage benchmark shows how fast that
 * memory runs out. Read it, then delete the marker below once M9 to M11 pass.
 */
FA_TODO(12); /* delete this line once your M9, M10 and M11 pass */
