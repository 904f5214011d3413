/*
 * Stage 05, version 1 — YOUR BLOCKS ON CUDA CORES (the exercise).
 * Lesson: 05_tiled_blocks/README.md, sections "Level 1" and "The scale folded
 * into exp2".
 *
 * Six blocks of one tile of attention, one per milestone, each a __device__
 * function that all 256 threads of a block call together. Work through them
 * in order. For each one:
 *   1. write the body marked TODO below (the signature is given);
 *   2. delete the milestone's FA_TODO_VERSION(n, 1); line;
 *   3. build and check:   cmake --build build -t stage05
 *                          build/05_tiled_blocks/stage05 --impl learner --milestone N --version 1
 * The check of milestone N runs your blocks of M17 .. MN (a trace kernel
 * calls them over every key tile, in the order the fused kernel of stage 06
 * will), so milestone N needs the ones before it: the driver says which
 * marker is still there.
 *
 * This file holds only the blocks. The trace kernels that call them
 * (05_tiled_blocks/harness/traces.cuh) and the launch code
 * (05_tiled_blocks/harness/launch.cu) are the reference's own, compiled
 * against this file: they need every function below under its name and
 * signature, written or not. An unwritten block leaves its outputs untouched
 * or writes zeros; the `(void)arg;` lines only silence "unused parameter"
 * warnings: delete them as you use the arguments.
 *
 * The layout every block shares. Thread t of the block is
 * (ty, tx) = (t / 16, t % 16):
 *   - it owns query rows 4 ty .. 4 ty + 3 of the tile (TILE1_ROWS_PER_THREAD);
 *   - of each key tile of BC = 32 keys it scores keys tx and tx + 16
 *     (TILE1_KEYS_PER_THREAD), so s[r][c] is the score of row 4 ty + r and
 *     key tx + 16 c;
 *   - of the output it owns columns tx, tx + 16, tx + 32, ... of its rows:
 *     o[r][c] is column tx + 16 c of row 4 ty + r.
 * The 16 threads of one ty are 16 consecutive lanes of one warp (lanes 0-15
 * or 16-31): everything about one row is reduced by shuffles within them.
 * Shared tiles are fp32 rows of `stride` = D_MAX + 1 floats
 * (tile1_stride() in tiles.h), the padding that keeps reads conflict free.
 */
#ifndef TILES_1_CUDA_CORES_CUH
#define TILES_1_CUDA_CORES_CUH

#include <math.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "fa_kernel.cuh"
#include "fa_launch.cuh"
#include "online_state.cuh"
#include "tile_layout.cuh"
#include "tiles.h"

/* Given, in fa_kernel.cuh: fa_to_float(x), one element of the input type widened to fp32
 * (exact for all three types). */

/* ---- M17 tile load ----------------------------------------------------------------------- */

FA_TODO_VERSION(17, 1); /* delete this line when your M17 version 1 is written */

/*
 * TODO(M17 v1): copy a tile from global memory into shared memory, widened
 * to fp32.
 *   src:  rows_valid rows of d elements of type T, row r at src + r src_stride
 *         (src_stride = d for a contiguous [rows][d] head; heads * d when
 *         the tensor is [tokens][heads][d], as stage 06's may be);
 *   tile: `rows` rows of shared memory, row r at tile + r * stride; write
 *         columns 0 .. d - 1 of every row (the padding column is never read).
 * Rows rows_valid .. rows - 1 (past the end of the tensor) get zeros.
 *
 * Steps:
 *   1. Cut the tile into 16-byte chunks: VECTOR = 16 / sizeof(T) elements
 *      (4 floats, or 8 bf16/fp16), ceil(d / VECTOR) chunks per row
 *      (fa_ceil_div). Let thread threadIdx.x take chunks threadIdx.x,
 *      threadIdx.x + blockDim.x, ... of the whole tile, in row-major order:
 *      consecutive threads take consecutive chunks, so a warp reads 512
 *      contiguous bytes (coalesced, stage 01).
 *   2. For a chunk (row, col): if row >= rows_valid write zeros; else if
 *      vector_loads, load the chunk as one uint4 and widen its VECTOR
 *      elements with fa_to_float(); else read and widen the elements one by
 *      one. The last chunk of a row may be short: width = min(VECTOR, d - col).
 * Hints:
 * - vector_loads is decided by the launcher (d and src_stride multiples of
 *   VECTOR, the tensors 16-byte aligned); when it is false, a uint4 load could
 *   be misaligned or run past the row: use the element-wise path.
 * - Element (row, col) is src[row * src_stride + col]: src_stride is
 *   int64_t, so the offset arithmetic is 64-bit.
 * - A uint4 holds VECTOR elements of T: reinterpret its address as `const T *`.
 * Pitfalls:
 * - Skipping the rows past rows_valid instead of zeroing them: shared memory
 *   holds whatever the last tile (or another block) left there. A key row
 *   past nk is scored -inf by M18, so its weight is 0, and 0 * v adds nothing
 *   to O only if v is a number: 0 * NaN = NaN. The check reads these rows
 *   back and wants zeros.
 * - Every thread of the block calls this; the caller puts the
 *   __syncthreads() between this and the first read of the tile. Do not put
 *   one inside: the trace calls the load for K and for V back to back.
 */
template <typename T>
static __device__ void tile1_load(float *tile, int stride, const T *src, int64_t src_stride,
                                  int rows_valid, int rows, int d, bool vector_loads)
{
    (void)tile;
    (void)stride;
    (void)src;
    (void)src_stride;
    (void)rows_valid;
    (void)rows;
    (void)d;
    (void)vector_loads;
}

/* ---- M18 tile scores --------------------------------------------------------------------- */

FA_TODO_VERSION(18, 1); /* delete this line when your M18 version 1 is written */

/*
 * TODO(M18 v1): the raw scores of the thread's 4 rows and 2 keys,
 *   s[r][c] = q_(4 ty + r) . k_(tx + 16 c) = sum over i < d of q[i] k[i],
 * read from the shared tiles q_tile (BR rows) and k_tile (BC rows), both of
 * row stride `stride`. Raw: no scale here (M20 folds it into exp2).
 * A key whose index key0 + tx + 16 c is >= nk gets s = -INFINITY.
 *
 * Steps:
 *   1. s[r][c] = 0 for the 8 accumulators.
 *   2. For i = 0, 1, ..., d - 1: load the 4 values q_tile[(4 ty + r) * stride + i]
 *      and the 2 values k_tile[(tx + 16 c) * stride + i] into registers, then
 *      8 FMAs: s[r][c] = fmaf(q[r], k[c], s[r][c]).
 *   3. Mask the keys past nk.
 * Hints:
 * - One FMA chain per score, i in increasing order: that is the order the
 *   CPU model replays and the accumulation the check's bound declares
 *   (fp32 FMAs: gamma_(d+1), docs/numerics.md).
 * - Per step, 6 loads for 8 FMAs: the 16 threads of a row read the same Q
 *   value (a broadcast, one bank access) and 16 different rows of K at one
 *   column, which the padding puts in 16 different banks (the page works it
 *   out for d = 64, "Banks").
 * - Keep s and the two small arrays in registers: index them only inside
 *   `#pragma unroll` loops with constant bounds (TILE1_ROWS_PER_THREAD,
 *   TILE1_KEYS_PER_THREAD). `#pragma unroll 4` on the loop over d is enough.
 * Pitfalls:
 * - Leaving the scores of missing keys at their dot product. Their K rows are
 *   zero (M17), so the score would be 0, and exp2(0 - m c) > 0: a key that
 *   does not exist would take weight from the real ones (a row of negative
 *   scores would even be dominated by it). -inf gives exactly 0.
 * - Comparing a 32-bit key index with nk: key0 + tx + 16 c is int64_t.
 */
static __device__ __forceinline__ void tile1_scores(float s[TILE1_ROWS_PER_THREAD][TILE1_KEYS_PER_THREAD],
                                                    const float *q_tile, const float *k_tile,
                                                    int stride, int d, int64_t key0, int64_t nk)
{
    (void)q_tile;
    (void)k_tile;
    (void)stride;
    (void)d;
    (void)key0;
    (void)nk;
    for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r)
        for (int c = 0; c < TILE1_KEYS_PER_THREAD; ++c)
            s[r][c] = 0.0f; /* not written yet: zeros */
}

/* ---- M19 tile rowmax --------------------------------------------------------------------- */

FA_TODO_VERSION(19, 1); /* delete this line when your M19 version 1 is written */

/*
 * TODO(M19 v1): the running max of each of the thread's 4 rows after this
 * tile,
 *   m_new[r] = max(m_old[r], max over the row's BC = 32 scores),
 * the same value in all 16 threads of the row.
 *
 * Steps, per row r:
 *   1. the thread's own 2 scores: fa_max_nan(s[r][0], s[r][1]);
 *   2. the 16 threads of the row: a butterfly of __shfl_xor_sync over lanes
 *      offset 8, 4, 2, 1. fa_lanes_max<TILE1_THREAD_COLS>(value)
 *      (common/fa_kernel.cuh) is exactly that; every lane gets the result;
 *   3. with the old max: m_new[r] = fa_max_nan(m_old[r], tile max), which is
 *      stage 04's online_running_max().
 * Hints:
 * - Offsets below 16 never cross from lanes 0-15 to lanes 16-31: the two
 *   halves of a warp (two values of ty) reduce their own rows at the same time.
 * - The -inf rule: m_old = -inf before the first key tile; a row whose scores
 *   are all -inf so far keeps -inf. That is correct, and M20 deals with it.
 * - The NaN rule: a NaN score must make m NaN. fmaxf(a, NaN) returns a and
 *   would hide it; fa_max_nan() (one max.NaN.f32) keeps it, in every one of
 *   the three steps.
 * Pitfalls:
 * - Every lane of the warp must execute the shuffles: no `if` around them
 *   (rows past nq too: their scores are those of zero Q rows, and nobody
 *   reads their results).
 * - Starting the tile's max at 0 instead of the first score: wrong for rows
 *   of negative scores.
 */
static __device__ __forceinline__ void tile1_rowmax(const float s[TILE1_ROWS_PER_THREAD][TILE1_KEYS_PER_THREAD],
                                                    const float m_old[TILE1_ROWS_PER_THREAD],
                                                    float m_new[TILE1_ROWS_PER_THREAD])
{
    (void)s;
    (void)m_old;
    for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r)
        m_new[r] = 0.0f; /* not written yet: zeros */
}

/* ---- M20 tile exp ------------------------------------------------------------------------ */

FA_TODO_VERSION(20, 1); /* delete this line when your M20 version 1 is written */

/*
 * TODO(M20 v1): turn the raw scores into weights, in place, and compute the
 * correction factor of each row:
 *   s[r][k] <- p = exp2(s[r][k] c - m_new[r] c),
 *   alpha[r] = exp2((m_old[r] - m_new[r]) c),
 * where c = scale log2(e) is given (the trace forms it once). Since
 * exp(scale x) = exp2(scale log2(e) x), p is the softmax weight of
 * scale * s against the running max, stage 04's exp(x - m) in base 2.
 *
 * Steps, per row r:
 *   1. offset = online_max_offset(m_new[r]) (stage 04): m_new itself, or 0
 *      while m_new = -inf;
 *   2. max_scaled = offset * c, once per row;
 *   3. alpha[r] = exp2f((m_old[r] - offset) * c);
 *   4. each weight: exp2f(fmaf(s[r][k], c, -max_scaled)): one FFMA and one
 *      exp2 per weight, the whole point of folding the scale.
 * Hints:
 * - Why the offset (the -inf rule of stage 04): while no allowed key has
 *   been seen, m_new = -inf, and s c - m c would be (-inf) - (-inf) = NaN,
 *   which would poison l and O for good. With offset 0: exp2(-inf) = 0 for
 *   every masked weight and alpha = 0 for the empty state, which rescales
 *   l = 0 and O = 0 to themselves.
 * - Form alpha from the difference (m_old - offset) first, then multiply by
 *   c: a max that did not rise gives exactly 0 and alpha = 1, bit for bit.
 * - A NaN max (M19's NaN rule) makes every weight of the row NaN: correct,
 *   that row is NaN and no other.
 * Pitfalls:
 * - exp2f(s * c - max_scaled) written as two operations rounds twice; the
 *   check's bound declares one FFMA (docs/numerics.md, step 2), and fmaf() is it.
 * - alpha = exp2((m_new - m_old) c): the wrong sign gives factors above 1.
 * - expf(scale * (s - m)): correct in exact arithmetic, but it is not the
 *   declared method and costs a multiply more per weight.
 */
static __device__ __forceinline__ void tile1_exp(float s[TILE1_ROWS_PER_THREAD][TILE1_KEYS_PER_THREAD],
                                                 const float m_old[TILE1_ROWS_PER_THREAD],
                                                 const float m_new[TILE1_ROWS_PER_THREAD], float c,
                                                 float alpha[TILE1_ROWS_PER_THREAD])
{
    (void)s;
    (void)m_old;
    (void)m_new;
    (void)c;
    for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r)
        alpha[r] = 0.0f; /* not written yet: zeros */
}

/* ---- M21 tile rowsum --------------------------------------------------------------------- */

FA_TODO_VERSION(21, 1); /* delete this line when your M21 version 1 is written */

/*
 * TODO(M21 v1): the running sum of each row,
 *   l[r] <- alpha[r] l[r] + (sum of the row's BC = 32 weights p),
 * the same value in all 16 threads of the row.
 *
 * Steps, per row r:
 *   1. the thread's own 2 weights: p[r][0] + p[r][1];
 *   2. the 16 threads of the row: fa_lanes_sum<TILE1_THREAD_COLS>(value),
 *      the butterfly of M19 with +;
 *   3. one FMA: online_update_sum(l[r], alpha[r], tile sum) (stage 04),
 *      that is fmaf(alpha, l, tile sum).
 * Hints:
 * - Masked keys weigh exactly 0 (M18 and M20) and need no test here.
 * - The same rule as M19: all lanes execute the shuffles.
 * Pitfalls:
 * - l + tile sum without alpha: the old terms stay weighted against a max
 *   that is no longer the max (stage 04's classic bug). Correct on rows whose
 *   max sits in the first key tile, wrong on every rising row.
 */
static __device__ __forceinline__ void tile1_rowsum(float l[TILE1_ROWS_PER_THREAD],
                                                    const float alpha[TILE1_ROWS_PER_THREAD],
                                                    const float p[TILE1_ROWS_PER_THREAD][TILE1_KEYS_PER_THREAD])
{
    (void)l;
    (void)alpha;
    (void)p;
}

/* ---- M22 accumulate PV ------------------------------------------------------------------- */

FA_TODO_VERSION(22, 1); /* delete this line when your M22 version 1 is written */

/*
 * TODO(M22 v1), first block: the output update of the tile,
 *   o[r][c] <- alpha[r] o[r][c] + sum over the tile's keys j of P[4 ty + r][j] V[j][tx + 16 c],
 * for the columns tx + 16 c < d. o has D_MAX / 16 columns per row; those at
 * or past d are never written out (leave them alone or compute them: the
 * V tile holds anything there).
 *
 * The problem: an output column needs the whole row of P (32 weights), and
 * the thread holds 2 of them; the other 30 are in the 15 other threads of the
 * row. They meet in shared memory.
 * Steps:
 *   1. write the thread's 8 weights into p_tile: row 4 ty + r, column
 *      tx + 16 c, at p_tile[row * TILE1_P_STRIDE + column];
 *   2. __syncthreads(): every weight of the tile is written;
 *   3. rescale: o[r][c] *= alpha[r] for every accumulator;
 *   4. for each key j = 0 .. BC - 1: load the 4 weights P[4 ty + r][j] (the
 *      same for the 16 threads of the row: a broadcast) and, for each column
 *      tx + 16 c < d, the value v_tile[j * stride + tx + 16 c] (16 threads,
 *      16 consecutive columns: 16 consecutive banks), then 4 FMAs
 *      o[r][c] = fmaf(p[r], v, o[r][c]).
 * Hints:
 * - Rescale first, then accumulate into o itself, key by key: one rounding
 *   per term and no second set of accumulators (D_MAX / 4 more registers).
 * - Keys past nk have p = 0 and a zero V row: they add exactly 0, no test.
 * - The next write of p_tile happens in the next tile, after the trace's own
 *   __syncthreads() at the top of its loop: you need only the one barrier
 *   of step 2.
 * Pitfalls:
 * - The barrier inside a branch (`if (tx < ...)`): every thread of the block
 *   must reach it.
 * - o indexed by a runtime column: keep the loops over c `#pragma unroll` with
 *   the bound D_MAX / TILE1_THREAD_COLS and test `col < d` inside.
 */
template <int D_MAX>
static __device__ __forceinline__ void tile1_accumulate_pv(float o[TILE1_ROWS_PER_THREAD][D_MAX / TILE1_THREAD_COLS],
                                                           const float alpha[TILE1_ROWS_PER_THREAD],
                                                           const float p[TILE1_ROWS_PER_THREAD][TILE1_KEYS_PER_THREAD],
                                                           float *p_tile, const float *v_tile,
                                                           int stride, int d)
{
    (void)o;
    (void)alpha;
    (void)p;
    (void)p_tile;
    (void)v_tile;
    (void)stride;
    (void)d;
}

/*
 * TODO(M22 v1), second block: the end of the rows, after the last key tile:
 *   o[r][c] <- o[r][c] / l[r],   lse[r] = scale m[r] + ln l[r]
 * (m is the running max of the RAW scores, so lse takes the scale back in;
 * lse is in natural units, like the reference's).
 * Steps, per row r:
 *   1. inverse = 1 / l[r], one division per row; then o[r][c] *= inverse for
 *      every column: the declared normalisation is a reciprocal and a multiply;
 *   2. lse[r] = fmaf(scale, m[r], logf(l[r])).
 * Pitfalls:
 * - A row with no allowed key (nk = 0) has l = 0 and o = 0, and 0 * (1 / 0) =
 *   0 * inf is NaN. Its output is o = 0 (take inverse = 0 when l == 0) and
 *   lse = -INFINITY, the log of an empty sum, as stage 04's
 *   online_normalise() and online_lse() decide.
 */
template <int D_MAX>
static __device__ __forceinline__ void tile1_normalise(float o[TILE1_ROWS_PER_THREAD][D_MAX / TILE1_THREAD_COLS],
                                                       const float m[TILE1_ROWS_PER_THREAD],
                                                       const float l[TILE1_ROWS_PER_THREAD],
                                                       float scale, float lse[TILE1_ROWS_PER_THREAD])
{
    (void)o;
    (void)m;
    (void)l;
    (void)scale;
    for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r)
        lse[r] = 0.0f; /* not written yet: zeros */
}

#endif /* TILES_1_CUDA_CORES_CUH */
