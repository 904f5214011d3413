/*
 * Stage 06, M23 version 2 — YOUR FUSED KERNEL ON TENSOR CORES (the exercise).
 * Lesson: 06_fused_flash/README.md, section "M23 version 2: FlashAttention-2's
 * structure" (the copy/compute timeline is drawn there), beside
 * 05_tiled_blocks/README.md, "Level 2: tensor cores".
 *
 * You write flash2_kernel<T, TO, D_PAD, MT, BC> out of the level-2 blocks of
 * stage 05 in FlashAttention-2's order. Write version 1 first
 * (flash_1_cuda_cores.cuh): the loop's state and steps are the same; what
 * is new here is the walk over the key tiles (from the last), the order of
 * the copies, the waits and the barriers, and the output epilogue.
 *   1. write the body marked TODO below (the signature is given);
 *   2. delete the line FA_TODO_VERSION(23, 2);
 *   3. build and check:   cmake --build build -t stage06
 *                          build/06_fused_flash/stage06 --impl learner --milestone 23 --version 2
 *
 * This file holds only the kernel and its device helpers. The launch code
 * (06_fused_flash/harness/launch.cu) is the reference's own, compiled against
 * this file: keep the kernel's name, template parameters and arguments. It
 * picks the tile shape per head dimension (flash.h: flash2_mt(),
 * flash2_bc(), flash2_br()) and gives the block flash2_shared_bytes(D_PAD)
 * bytes of dynamic shared memory. Until you write it, the kernel does nothing
 * and returns.
 *
 * The blocks. `#include "tiles_2_tensor_cores.cuh"` below finds the
 * REFERENCE's stage 05 blocks. To compose yours, once stage 05 version 2
 * passes, replace it with
 *   #include "../../05_tiled_blocks/learner/tiles_2_tensor_cores.cuh"
 * (one or the other: they share their include guard). Your blocks must take
 * MT = 2, the tile's NT = BC / 8 (16 up to D_PAD = 64) and every D_PAD
 * from 32 to 256: stage 05's traces ran them with MT = 1, NT = 8 and D_PAD
 * 64 or 128 only.
 */
#ifndef FLASH_2_TENSOR_CORES_CUH
#define FLASH_2_TENSOR_CORES_CUH

#include "flash.h"
#include "flash_store.cuh"
#include "tiles_2_tensor_cores.cuh"

FA_TODO_VERSION(23, 2); /* delete this line when your M23 version 2 is written */

/* Given, in flash_store.cuh: the staging of O in shared memory, flash2_stage_o<D_PAD, MT>(tile,
 * o, warp_row0, lane) and flash2_chunk_offset<TO>(row, chunk, d_pad). */

/*
 * TODO(M23 v2): the attention forward of one tile of BR query rows of one
 * head, over all the keys, on the tensor cores.
 *
 * The launch: one block of FLASH2_THREADS = 128 threads (four warps) per
 * (query tile, head, batch), blockIdx.x, .y, .z as in version 1, with
 *   T      __nv_bfloat16 or __half (v2 takes no fp32 input); TO: T or float;
 *   D_PAD  p.head_dim rounded up to 32 (tile2_row_elements()): 32 .. 256;
 *   MT     m16 fragments per warp: 2 up to D_PAD 128, else 1;
 *   BC     keys per tile: 128 up to D_PAD 64, else 64;
 *   BR = FLASH2_WARPS * TILE2_WARP_ROWS * MT query rows: 128 or 64.
 * Each warp owns MT x 16 query rows of the tile, from warp_row0 = warp 16 MT,
 * and nothing else: the four warps split the QUERY ROWS, never the keys, so
 * no warp ever needs another warp's m, l or O (FlashAttention-2's split).
 * The validation (M24) guarantees: head_dim a multiple of 8, every row of
 * q, k, v and o 16-byte aligned.
 *
 * Shared memory, from `extern __shared__ __align__(16) unsigned char
 * flash2_shared[];` (flash2_shared_bytes(D_PAD) bytes), swizzled tiles of
 * D_PAD elements per row (tile2_offset()):
 *   q_tile  BR rows, at flash2_shared;  k_tile  BC rows after it;  v_tile  BC rows after that.
 * ONE K tile and ONE V tile, not stage 05's two stages of each: the overlap
 * comes from alternating K and V (below), and the shared memory saved pays
 * for BR = 128.
 *
 * The skeleton, with version 1's pointers (h_kv, q, k, v, c = scale *
 * FA_LOG2E_F) and rows_valid = min(BR, nq - row0) (fa_tile_rows()), key tiles T = ceil(nk / BC):
 *
 *   copy Q (rows_valid of BR rows) into q_tile                     tile2_load_async<D_PAD, FLASH2_THREADS>
 *   if T > 0: copy K_(T-1) (nk - (T - 1) BC rows) into k_tile       the LAST key tile first
 *   cp_async_commit()                                              group "Q, K_(T-1)"
 *   m = -inf, l = 0, o = 0                                         [MT][2], [MT][2], [MT][D_PAD / 8][4]
 *   for t = T - 1 down to 0, key0 = t BC, valid = min(BC, nk - key0):
 *    (1) cp_async_wait<0>()      this thread's copies of K_t (and, at t = T - 1, Q) have landed
 *    (2) __syncthreads()         so have every thread's: K_t is whole. And every warp has
 *                                finished P V_(t+1): v_tile may be overwritten
 *        copy V_t (valid rows) into v_tile; cp_async_commit()      V_t in flight ...
 *        tile2_scores<D_PAD, MT, NT>(s, q_tile, k_tile, warp_row0) ... while S = Q K_t^T
 *        if key0 + BC > nk: tile2_mask_keys<MT, NT>(s, key0, nk)   (only t = T - 1)
 *    (3) cp_async_wait<0>()      this thread's copies of V_t have landed
 *    (4) __syncthreads()         V_t is whole. And every warp has finished its scores:
 *                                k_tile may be overwritten
 *        if t > 0: copy K_(t-1) (BC rows) into k_tile; commit       K_(t-1) in flight ...
 *        tile2_rowmax, tile2_exp, tile2_rowsum                     ... while the softmax
 *        tile2_accumulate_pv<D_PAD, MT, NT>(o, alpha, s, v_tile)  and O = alpha O + P V_t run
 *        m = m_new
 *   cp_async_wait<0>()           nothing may still land once the space is reused (the Q copy, when T = 0)
 *   tile2_normalise<D_PAD, MT>(o, m, l, scale, lse)
 *   the epilogue (the page: "The O epilogue"):
 *    (5) __syncthreads()         every warp is done with Q, K and V and every copy has
 *                                landed: their space becomes the staging tile o_tile = (TO *)flash2_shared
 *        stage O: flash2_stage_o<D_PAD, MT>(o_tile, o, warp_row0, lane = threadIdx.x % 32)
 *    (6) __syncthreads()         the whole O tile is staged
 *        store: PER_CHUNK = 16 / sizeof(TO) elements per 16-byte chunk, ROW_CHUNKS =
 *            D_PAD / PER_CHUNK staged per row, chunks = d / PER_CHUNK stored; thread
 *            threadIdx.x takes i = threadIdx.x, + FLASH2_THREADS, ... < rows_valid ROW_CHUNKS
 *            (row = i / ROW_CHUNKS, chunk = i % ROW_CHUNKS: a constant divisor, cheap)
 *            and, where chunk < chunks, copies one uint4
 *            from o_tile + flash2_chunk_offset<TO>(row, chunk, D_PAD)
 *            to   out + row o_strides.row + chunk PER_CHUNK,
 *            out = (TO *)p.o + b o_strides.batch + h o_strides.head + row0 o_strides.row
 *        lse: with g = lane / 4, quad = lane % 4, the lanes with quad == 0 write lse[i][hh]
 *            of their rows row0 + warp_row0 + 16 i + g + 8 hh < nq, at
 *            p.lse[(b heads_q + h) nq + row].
 *
 * Why this sequence is right (the crux). cp_async_wait<N>() waits for THIS
 * thread's groups only, until at most N are in flight; __syncthreads() then
 * makes every thread's copies visible to every warp. At (1) the only group
 * in flight is K_t's (V_(t+1) was waited for at (3) of the tile before), at (3)
 * only V_t's: so wait<0> waits for exactly the tile about to be read, and
 * never for the copy just issued, which is still in flight. Each barrier does
 * two jobs: it publishes the tile that landed (read after write) and it
 * tells that the other tile's buffer is no longer read (write after read), so
 * the copy issued right after it may overwrite that buffer. This is
 * FlashAttention-2's order: V_t lands behind the scores, K_(t-1) behind the
 * softmax and P V_t. And why from the last tile: only the tile where nk
 * ends can have fewer than BC rows, and walked first, it is the only copy
 * that needs a row bound. The reference's blocks skip the bound of the
 * later copies (tile2_load_async<D_PAD, FLASH2_THREADS, false>, one compare
 * fewer per chunk); with your own stage 05 blocks pass rows_valid = BC
 * there: the same copy, a little slower. Any order of the key tiles gives
 * the same softmax, within the bound (docs/numerics.md replays both).
 *
 * Hints:
 * - Copy the arithmetic of version 1 first: the same pointers, GQA mapping,
 *   state and end of rows; then put the waits and barriers exactly where the
 *   skeleton says, and only there.
 * - tile2_load_async() does not commit: commit once per copy group, inside
 *   the same `if` as the copy.
 * - The masking block runs only on the tile where nk ends, t = T - 1, the
 *   first walked (the others are full); running it on every tile is
 *   correct, only slower.
 * - The staged tile of 16-bit O is exactly the Q tile's space; an fp32 O tile
 *   is twice that, and reaches over K and V (launch.cu asserts it fits): one
 *   more reason for barrier (5).
 * Pitfalls:
 * - wait<0> without the barrier after it (or the reverse): a warp reads
 *   chunks that another thread's copy has not delivered. The failure depends
 *   on timing: a row wrong in one run and right in the next.
 * - Issuing the copy of K_(t-1) before barrier (4): a fast warp overwrites
 *   K_t while a slow warp still computes its scores from it.
 * - An `if (lane ...)` or an early exit around ldmatrix, mma.sync, the
 *   shuffles or a barrier; rows past nq are computed and not stored.
 * - Storing O straight from the fragments: correct, but a warp then writes 4
 *   bytes per lane scattered over 8 rows; the staging turns it into 16-byte
 *   stores of whole rows.
 * - Normalising with the partial l of one lane: tile2_normalise() sums the
 *   quad; call it, do not divide by l yourself.
 */
template <typename T, typename TO, int D_PAD, int MT, int BC>
static __global__ void __launch_bounds__(FLASH2_THREADS)
flash2_kernel(fa_attention_params p, float scale)
{
    (void)p;
    (void)scale;
}

#endif /* FLASH_2_TENSOR_CORES_CUH */
