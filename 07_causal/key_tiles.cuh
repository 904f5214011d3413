/**
 * @file key_tiles.cuh
 * @brief M25, the mask in the fused kernels: which key tiles a block of query
 *        rows visits, which of them run without a per-element mask, and the
 *        per-element mask of the others in both score layouts of \ref stage05.
 *
 * Every mask is a band (fa_key_window, common/fa_mask.h): row i sees the keys
 * of fa_window_key_range(). For the rows [r0, r1) of a query tile,
 * fa_window_tile_keys() gives the keys some row sees (any) and the keys every
 * row sees (all). With key tiles of bc keys from key 0:
 *
 *   skipped  a tile with no key of any: never loaded, never scored;
 *   full     a tile inside all: every score of it counts, no mask;
 *   masked   the rest: scored, then each score outside its row's range is -inf.
 *
 * The tiles a block visits are contiguous, the full ones contiguous within
 * them, so a kernel needs four numbers (causal_tiles), not a list. With no
 * mask every tile is visited and only a last tile that runs past nk is
 * masked: the tail mask of stage 06 is this mechanism too.
 *
 * The fused kernels of \ref stage06 (flash_1_cuda_cores.cuh,
 * flash_2_tensor_cores.cuh, flash_3_hopper.cuh) include this file; the learner's twin
 * (learner/key_tiles.cuh) is judged under the reference's version 1 kernel.
 */
#ifndef KEY_TILES_CUH
#define KEY_TILES_CUH

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "causal_tiles.h"
#include "fa_index.h"
#include "fa_mask.h"
#include "tiles.h"

/**
 * M25: the key tiles of @p bc keys that the query rows [@p r0, @p r1) visit
 * under the band @p w, with @p nk keys (r1 clipped to nq by the caller:
 * fa_window_tile_keys()). A tile t holds keys [t bc, (t + 1) bc); it is
 * visited when it meets the keys some row sees and full when it lies inside
 * the keys every row sees. A block whose rows see no key visits no tile
 * (begin = end): its rows end with o = 0 and lse = -inf.
 */
static inline FA_HOST_DEVICE causal_tiles causal_key_tiles(fa_key_window w, int64_t r0, int64_t r1,
                                                           int64_t nk, int bc)
{
    const fa_tile_keys keys = fa_window_tile_keys(w, r0, r1, nk);
    causal_tiles tiles;
    tiles.begin = keys.any.begin / bc;
    tiles.end = keys.any.end > keys.any.begin ? fa_ceil_div(keys.any.end, bc) : tiles.begin;
    tiles.full_begin = fa_ceil_div(keys.all.begin, bc); /* the first tile starting at or after it */
    tiles.full_end = keys.all.end / bc;                 /* tiles ending at or before it */
    return tiles;
}

/**
 * Row @p row's allowed keys within the tile that starts at key @p key0,
 * as offsets [*lo, *hi) into the tile, clipped to [0, @p bc]: 32-bit
 * numbers for the comparisons of the element masks.
 */
static inline FA_HOST_DEVICE void causal_row_in_tile(fa_key_window w, int64_t row, int64_t key0,
                                                     int64_t nk, int bc, int *lo, int *hi)
{
    const fa_key_range keys = fa_window_key_range(w, row, nk);
    *lo = (int)fa_clip_keys(keys.begin - key0, bc);
    *hi = (int)fa_clip_keys(keys.end - key0, bc);
}

#ifdef __CUDACC__ /* the rest runs on the device only (the CPU tests include the above) */

/**
 * M25, level 1: the scores of a masked tile that lie outside their row's
 * range become -inf, in the layout of tile1_scores() (thread (ty, tx) holds
 * rows @p row0 + 4 ty + r of the query tile and keys @p key0 + tx + 16 c).
 * Keys at or past nk are outside every range, so this also masks a tail.
 */
static __device__ __forceinline__ void causal1_mask(float s[TILE1_ROWS_PER_THREAD][TILE1_KEYS_PER_THREAD],
                                                    fa_key_window w, int64_t row0, int64_t key0,
                                                    int64_t nk)
{
    const int ty = threadIdx.x / TILE1_THREAD_COLS, tx = threadIdx.x % TILE1_THREAD_COLS;
#pragma unroll
    for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r) {
        int lo, hi;
        causal_row_in_tile(w, row0 + ty * TILE1_ROWS_PER_THREAD + r, key0, nk, TILE1_BC, &lo, &hi);
#pragma unroll
        for (int c = 0; c < TILE1_KEYS_PER_THREAD; ++c) {
            const int key = tx + c * TILE1_THREAD_COLS;
            if (key < lo || key >= hi)
                s[r][c] = -INFINITY;
        }
    }
}

/**
 * causal2_mask() for a band with a left edge (LEFT_EDGE: both bounds of a
 * row compared) or without one (only the upper bound). Each row's range
 * [lo, hi) is moved by the lane's 2 q, so that an element is judged by its
 * column 8 n + e, an immediate of the unrolled loop.
 */
template <int MT, int NT, bool LEFT_EDGE>
static __device__ __forceinline__ void causal2_mask_rows(float s[MT][NT][4], fa_key_window w,
                                                         int64_t row0, int64_t key0, int64_t nk)
{
    const int g = (threadIdx.x % 32) / 4, q = threadIdx.x % 4;
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            int lo, hi;
            causal_row_in_tile(w, row0 + 16 * i + g + 8 * h, key0, nk, 8 * NT, &lo, &hi);
            lo -= 2 * q;
            hi -= 2 * q;
#pragma unroll
            for (int n = 0; n < NT; ++n)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int column = 8 * n + e;
                    if (column >= hi || (LEFT_EDGE && column < lo))
                        s[i][n][2 * h + e] = -INFINITY;
                }
        }
}

/**
 * Level 2: the same in the mma accumulator layout of tile2_scores() (lane
 * g = lane / 4, q = lane % 4 of the warp whose rows start at query row
 * @p row0 holds rows row0 + 16 i + g + 8 h and keys key0 + 8 n + 2 q + e).
 * A band without a left edge (every causal mask, a window (-1, right), and
 * no mask's tail) lets every row start at key 0, so only the upper bound
 * is compared: one compare a score. The band is the same for all of a
 * query tile's rows (a packed batch's is its sequence's), so no warp
 * diverges on it.
 */
template <int MT, int NT>
static __device__ __forceinline__ void causal2_mask(float s[MT][NT][4], fa_key_window w, int64_t row0,
                                                    int64_t key0, int64_t nk)
{
    if (w.left < 0)
        causal2_mask_rows<MT, NT, false>(s, w, row0, key0, nk);
    else
        causal2_mask_rows<MT, NT, true>(s, w, row0, key0, nk);
}

#endif /* __CUDACC__ */

#endif /* KEY_TILES_CUH */
