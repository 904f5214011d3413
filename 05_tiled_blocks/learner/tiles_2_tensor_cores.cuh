/*
 * Stage 05, version 2 — YOUR BLOCKS ON TENSOR CORES (the exercise).
 * Lesson: 05_tiled_blocks/README.md, section "Level 2", with the fragment
 * layouts drawn; stage 02's page, "The m16n8k16 fragments", and
 * 02_matrix/tensor_core.cuh, whose wrappers you call here.
 *
 * The same six blocks as version 1, in the structure of FlashAttention-2:
 * bf16 or fp16 tiles in XOR-swizzled shared memory filled by cp.async,
 * fragments read by ldmatrix, products by mma.sync m16n8k16 with fp32
 * accumulators, and S, P and O never leaving the registers. For each milestone:
 *   1. write the body marked TODO below (the signature is given);
 *   2. delete the milestone's FA_TODO_VERSION(n, 2); line;
 *   3. build and check:   cmake --build build -t stage05
 *                          build/05_tiled_blocks/stage05 --impl learner --milestone N --version 2
 * As in version 1, the check of milestone N runs your blocks of M17 .. MN.
 *
 * This file holds only the blocks. The trace kernels that call them
 * (05_tiled_blocks/harness/traces.cuh) and the launch code
 * (05_tiled_blocks/harness/launch.cu) are the reference's own, compiled
 * against this file: they need every function below under its name and
 * signature, written or not. An unwritten block leaves its outputs untouched
 * or writes zeros; the `(void)arg;` lines only silence "unused parameter"
 * warnings: delete them as you use the arguments.
 *
 * The layout every block shares. Four warps; a warp owns MT x 16 query rows
 * of the tile, from tile row warp_row0 (MT m16 fragments: the traces of this
 * stage use MT = 1; stage 06 gives a warp 32 rows, MT = 2, and then every K
 * and V fragment loaded serves both). The key tile is NT n8 fragments
 * (NT = BC / 8 = 8 here). With g = lane / 4 and q = lane % 4 (the "quad":
 * lanes 4 g .. 4 g + 3), the scores of fragment (i, n) are held as
 *   s[i][n][0], s[i][n][1] = S[16 i + g    ][8 n + 2 q], S[16 i + g    ][8 n + 2 q + 1]
 *   s[i][n][2], s[i][n][3] = S[16 i + g + 8][8 n + 2 q], S[16 i + g + 8][8 n + 2 q + 1]
 * (the C layout of m16n8k16). So each thread holds parts of two rows per m16
 * fragment, g (h = 0: elements 0, 1) and g + 8 (h = 1: elements 2, 3), and the
 * four threads of a quad hold the whole of those rows: a row reduction is two
 * shuffles, offsets 2 and 1 (fa_lanes_max<4>, fa_lanes_sum<4>). Per-row state
 * (m, l, alpha, lse) is therefore [MT][2], indexed [i][h].
 *
 * Every block except tile2_load_async() is warp-collective (ldmatrix,
 * mma.sync and the shuffles need all 32 lanes): no `if (lane ...)` around
 * those instructions.
 */
#ifndef TILES_2_TENSOR_CORES_CUH
#define TILES_2_TENSOR_CORES_CUH

#include <math.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "fa_kernel.cuh"
#include "fa_launch.cuh"
#include "online_state.cuh"
#include "tensor_core.cuh"
#include "tile_layout.cuh"
#include "tiles.h"

/* Given, in tiles.h: TILE2_CHUNK and the swizzle tile2_offset() (the page works it by hand,
 * "The swizzle, by hand"); in tile_layout.cuh: tile2_mma(T(), d, a, b), tile2_pack(T(), low,
 * high) and tile2_p_fragment<T>(low, high, a), P's two n8 fragments as an A fragment. */

/* ---- M17 tile load ----------------------------------------------------------------------- */

FA_TODO_VERSION(17, 2); /* delete this line when your M17 version 2 is written */

/*
 * TODO(M17 v2): start the asynchronous copy of a tile into swizzled shared
 * memory.
 *   src:  rows_valid rows of d elements of type T, row r at src + r src_stride
 *         (d for a contiguous head, heads * d for [tokens][heads][d]);
 *   tile: `rows` rows of D_PAD >= d elements (a multiple of 32), element
 *         (row, col) at tile + tile2_offset(row, col, D_PAD).
 * Every 16-byte chunk of the tile is written: chunks of rows past rows_valid
 * and chunks at or past d in a row are zeros.
 *
 * Steps:
 *   1. CHUNKS = D_PAD / TILE2_CHUNK chunks per row; thread threadIdx.x takes
 *      chunks threadIdx.x, threadIdx.x + THREADS, ... of the tile in
 *      row-major order (consecutive threads, consecutive 16 bytes of global
 *      memory: coalesced);
 *   2. for chunk (row, col = 8 * (chunk % CHUNKS)): inside = row < rows_valid
 *      && col < d;
 *   3. cp_async_16(shared_address(tile + tile2_offset(row, col, D_PAD)),
 *      inside ? src + row * src_stride + col : src, inside ? 16 : 0).
 * Hints:
 * - The third operand of cp_async_16 is how many bytes to read; the rest of
 *   the 16 are zero-filled by the copy itself. With 0, nothing is read, but
 *   the source must still be a valid address: pass src.
 * - Do not commit or wait here: the trace commits one group per tile
 *   (cp_async_commit()), so that the copy of the next tile runs while this
 *   one is used (the page draws the order: "The two-stage pipeline").
 * - d and src_stride are multiples of 8 and the tensors 16-byte aligned
 *   (validation), so a row is whole chunks and every source address is
 *   16-byte aligned, as cp.async requires.
 * Pitfalls:
 * - Skipping the chunks outside instead of zero-filling them: the shared
 *   memory keeps what was there (this stage held the tile before last, or
 *   nothing defined at all). Columns past d of Q and K enter every dot
 *   product of M18; the rows of V past nk are multiplied by p = 0, and
 *   0 * NaN is NaN. The check reads the rows past the end back: zeros.
 * - Writing the tile unswizzled: ldmatrix in M18 and M22 reads through
 *   tile2_offset(), and so does the check.
 */
template <int D_PAD, int THREADS, typename T>
static __device__ __forceinline__ void tile2_load_async(T *tile, const T *src, int64_t src_stride,
                                                        int rows_valid, int rows, int d)
{
    (void)tile;
    (void)src;
    (void)src_stride;
    (void)rows_valid;
    (void)rows;
    (void)d;
}

/* ---- M18 tile scores --------------------------------------------------------------------- */

FA_TODO_VERSION(18, 2); /* delete this line when your M18 version 2 is written */

/*
 * TODO(M18 v2), first block: the raw scores S = Q K^T of the warp's MT x 16
 * rows (tile rows warp_row0 ..) against the NT x 8 keys of the tile, in the
 * accumulators s[MT][NT][4] (layout at the top of this file).
 *
 * Steps:
 *   1. s = 0.
 *   2. For each slice kk of 16 head-dimension columns (kk < D_PAD / 16):
 *      a. the A fragments of Q, one ldmatrix_x4 per m16 fragment i: lane
 *         names row warp_row0 + 16 i + lane % 16 at column
 *         (2 kk + lane / 16) * TILE2_CHUNK (lanes 0-15: columns 16 kk ..+7,
 *         lanes 16-31: the next 8), which delivers a[0..3] in A's order;
 *      b. for each pair np of n8 fragments (np < NT / 2): one ldmatrix_x4 of
 *         K gives the two B fragments of keys 16 np .. 16 np + 15: lane names
 *         key 16 np + lane % 8 + 8 (lane / 16) at column
 *         (2 kk + (lane / 8) % 2) * TILE2_CHUNK; registers b[0], b[1] are the
 *         B fragment of n = 2 np, b[2], b[3] that of n = 2 np + 1;
 *      c. tile2_mma(T(), s[i][2 np], a[i], &b[0]) and
 *         tile2_mma(T(), s[i][2 np + 1], a[i], &b[2]) for every i.
 *   Every address goes through tile2_offset(row, col, D_PAD) and
 *   shared_address().
 * Hints:
 * - K is stored [key][d]. The B operand of S = Q K^T is K^T, whose column n
 *   is key n: stored [key][d] is exactly B "col-major", the layout mma
 *   wants, so K needs no transpose (plain ldmatrix, not .trans).
 * - Columns between d and D_PAD are zeros in both tiles (M17): they add 0.
 * - Load each K fragment once and use it for all MT fragments of Q: that
 *   reuse is why stage 06 takes MT = 2.
 * Pitfalls:
 * - Swapping lane / 16 and (lane / 8) % 2 between Q and K: the A quadrants
 *   go rows-first (a[1] is rows 8-15), the B pair goes k-first (b[1] is
 *   k 8-15 of the same keys).
 * - Unrolling: keep every loop `#pragma unroll` with constant bounds, or the
 *   fragments land in local memory.
 */
template <int D_PAD, int MT, int NT, typename T>
static __device__ __forceinline__ void tile2_scores(float s[MT][NT][4], const T *q_tile,
                                                    const T *k_tile, int warp_row0)
{
    (void)q_tile;
    (void)k_tile;
    (void)warp_row0;
    for (int i = 0; i < MT; ++i)
        for (int n = 0; n < NT; ++n)
            for (int e = 0; e < 4; ++e)
                s[i][n][e] = 0.0f; /* not written yet: zeros */
}

/*
 * TODO(M18 v2), second block: the scores of keys at or past nk become -inf.
 * Element e of fragment n holds key key0 + 8 n + 2 q + e % 2 (q = lane % 4),
 * for both rows (e / 2) and every m16 fragment i.
 * Pitfall: the same as version 1's. M17 zero-filled those K rows, so their
 * scores are 0, a weight exp2(0 - m c) > 0 for a key that does not exist.
 */
template <int MT, int NT>
static __device__ __forceinline__ void tile2_mask_keys(float s[MT][NT][4], int64_t key0, int64_t nk)
{
    (void)s;
    (void)key0;
    (void)nk;
}

/* ---- M19 tile rowmax --------------------------------------------------------------------- */

FA_TODO_VERSION(19, 2); /* delete this line when your M19 version 2 is written */

/*
 * TODO(M19 v2): the running max of each of the thread's rows after this tile,
 *   m_new[i][h] = max(m_old[i][h], max over the row's NT x 8 scores),
 * the same value in the four threads of the quad.
 * Steps, per (i, h):
 *   1. the thread's own 2 NT scores of the row: s[i][n][2 h] and
 *      s[i][n][2 h + 1] for every n, folded with fa_max_nan();
 *   2. the quad: fa_lanes_max<4>(value), two shuffles (offsets 2, 1);
 *   3. m_new[i][h] = fa_max_nan(m_old[i][h], that) (online_running_max()).
 * The -inf rule and the NaN rule are version 1's (and stage 04's): a row with
 * only -inf so far keeps -inf, a NaN score makes m NaN; fmaxf would drop it.
 * Pitfall: starting the fold at 0 or at s[i][0][0] for both rows: h = 1 is
 * another row.
 */
template <int MT, int NT>
static __device__ __forceinline__ void tile2_rowmax(const float s[MT][NT][4], const float m_old[MT][2],
                                                    float m_new[MT][2])
{
    (void)s;
    (void)m_old;
    for (int i = 0; i < MT; ++i)
        for (int h = 0; h < 2; ++h)
            m_new[i][h] = 0.0f; /* not written yet: zeros */
}

/* ---- M20 tile exp ------------------------------------------------------------------------ */

FA_TODO_VERSION(20, 2); /* delete this line when your M20 version 2 is written */

/*
 * TODO(M20 v2): version 1's arithmetic on the accumulators, in place:
 *   s[i][n][e] <- p = exp2(s c - m_new c)   (row h = e / 2),
 *   alpha[i][h] = exp2((m_old - m_new) c),
 * with offset = online_max_offset(m_new[i][h]) (the -inf rule),
 * max_scaled = offset * c once per row, alpha = exp2f((m_old - offset) * c)
 * and each weight exp2f(fmaf(s, c, -max_scaled)): one FFMA and one exp2.
 * Hint: loop h over the two rows and e over 2 h, 2 h + 1; every loop unrolled.
 * Pitfalls: those of version 1 (tile1_exp() in your other file).
 */
template <int MT, int NT>
static __device__ __forceinline__ void tile2_exp(float s[MT][NT][4], const float m_old[MT][2],
                                                 const float m_new[MT][2], float c,
                                                 float alpha[MT][2])
{
    (void)s;
    (void)m_old;
    (void)m_new;
    (void)c;
    for (int i = 0; i < MT; ++i)
        for (int h = 0; h < 2; ++h)
            alpha[i][h] = 0.0f; /* not written yet: zeros */
}

/* ---- M21 tile rowsum --------------------------------------------------------------------- */

FA_TODO_VERSION(21, 2); /* delete this line when your M21 version 2 is written */

/*
 * TODO(M21 v2), first block: the thread's PARTIAL row sums,
 *   l[i][h] <- alpha[i][h] l[i][h] + (the sum of the thread's own 2 NT
 *              weights of row h),
 * with no shuffle: online_update_sum(l, alpha, own sum), one FMA.
 *
 * Why no shuffle (the page proves it, "M21: partial sums"): the four threads
 * of the quad rescale by the same alpha (m_new is quad-wide after M19), and
 *   alpha l_0 + t_0 + ... + alpha l_3 + t_3 = alpha (l_0 + ... + l_3) + (t_0 + ... + t_3),
 * so the sum of the partials is the running sum, at every tile. The four are
 * added once, at the end (tile2_row_sums()), which saves two shuffles per
 * row and tile. FlashAttention-2 does the same.
 */
template <int MT, int NT>
static __device__ __forceinline__ void tile2_rowsum(float l[MT][2], const float alpha[MT][2],
                                                    const float p[MT][NT][4])
{
    (void)l;
    (void)alpha;
    (void)p;
}

/*
 * TODO(M21 v2), second block: the whole row sums from the partials,
 *   l[i][h] = sum of l_partial[i][h] over the four threads of the quad
 * (fa_lanes_sum<4>), every thread of the quad receiving it.
 * The trace calls this after every tile to write out l (M21's check reads
 * it) and tile2_normalise() calls it once at the end. It shuffles: all 32
 * lanes call it, whatever rows they hold.
 */
template <int MT>
static __device__ __forceinline__ void tile2_row_sums(const float l_partial[MT][2], float l[MT][2])
{
    (void)l_partial;
    for (int i = 0; i < MT; ++i)
        for (int h = 0; h < 2; ++h)
            l[i][h] = 0.0f; /* not written yet: zeros */
}

/* ---- M22 accumulate PV ------------------------------------------------------------------- */

FA_TODO_VERSION(22, 2); /* delete this line when your M22 version 2 is written */

/*
 * TODO(M22 v2), first block: O <- alpha O + P V for the warp's rows, with
 * o[MT][D_PAD / 8][4] in the C layout (fragment n holds output columns
 * 8 n .. 8 n + 7) and P still in the accumulators of M18-M20.
 *
 * Steps:
 *   1. rescale: o[i][n][e] *= alpha[i][e / 2] (elements 0, 1 are row g,
 *      2, 3 row g + 8).
 *   2. For each 16 keys kk (kk < NT / 2):
 *      a. the A operand of P, per m16 fragment i, straight from the
 *         accumulators of S fragments 2 kk and 2 kk + 1, rounded to T:
 *           a[i][0] = tile2_pack(T(), p[i][2 kk][0],     p[i][2 kk][1])
 *           a[i][1] = tile2_pack(T(), p[i][2 kk][2],     p[i][2 kk][3])
 *           a[i][2] = tile2_pack(T(), p[i][2 kk + 1][0], p[i][2 kk + 1][1])
 *           a[i][3] = tile2_pack(T(), p[i][2 kk + 1][2], p[i][2 kk + 1][3])
 *         (the page draws why this is exactly A's layout: "From S to P
 *         without shared memory");
 *      b. for each pair dp of output fragments (dp < D_PAD / 16): one
 *         ldmatrix_x4_trans of V: lane names key 16 kk + lane % 16 at column
 *         (2 dp + lane / 16) * TILE2_CHUNK; b[0], b[1] are the B fragment of
 *         output fragment 2 dp, b[2], b[3] that of 2 dp + 1;
 *      c. tile2_mma(T(), o[i][2 dp], a[i], &b[0]) and
 *         tile2_mma(T(), o[i][2 dp + 1], a[i], &b[2]) for every i.
 * Hints:
 * - V is stored [key][d]: that is B = V row-major, [k][n], and mma wants B
 *   "col-major" (each register two consecutive k of one column n).
 *   ldmatrix .trans transposes each 8 x 8 matrix on the way, which is all it
 *   takes: no transposed copy of V anywhere.
 * - P is rounded to T here and only here: l (M21) summed the fp32 weights.
 *   That is the declared method (FlashAttention-2's choice), and the check's
 *   bound knows it.
 * Pitfalls:
 * - Plain ldmatrix for V: no fault, wrong numbers (the fragments of V^T).
 * - Forgetting the rescale: right whenever the max never rises after the
 *   first tile, wrong on rising rows.
 */
template <int D_PAD, int MT, int NT, typename T>
static __device__ __forceinline__ void tile2_accumulate_pv(float o[MT][D_PAD / 8][4],
                                                           const float alpha[MT][2],
                                                           const float p[MT][NT][4],
                                                           const T *v_tile)
{
    (void)o;
    (void)alpha;
    (void)p;
    (void)v_tile;
}

/*
 * TODO(M22 v2), second block: the end of the rows, version 1's arithmetic on
 * the fragments: l = tile2_row_sums(l_partial); per row (i, h)
 * inverse = l == 0 ? 0 : 1 / l, o[i][n][2 h] and o[i][n][2 h + 1] *= inverse
 * for every n, lse[i][h] = l == 0 ? -INFINITY : fmaf(scale, m[i][h], logf(l)).
 * Pitfall: normalising with l_partial, one quarter of the sum (the quad was
 * never summed during the loop).
 */
template <int D_PAD, int MT>
static __device__ __forceinline__ void tile2_normalise(float o[MT][D_PAD / 8][4], const float m[MT][2],
                                                       const float l_partial[MT][2], float scale,
                                                       float lse[MT][2])
{
    (void)o;
    (void)m;
    (void)l_partial;
    (void)scale;
    for (int i = 0; i < MT; ++i)
        for (int h = 0; h < 2; ++h)
            lse[i][h] = 0.0f; /* not written yet: zeros */
}

#endif /* TILES_2_TENSOR_CORES_CUH */
