/*
 * Stage 07, M25 — THE MASK IN THE FUSED KERNEL (the exercise).
 * Lesson: 07_causal/README.md, sections "Masks are bands", "Three kinds of
 * key tile" and "M25: what you write".
 *
 * You write the three functions marked TODO below. The reference's version 1
 * fused kernel (06_fused_flash/flash_1_cuda_cores.cuh) is compiled against
 * this file and calls them:
 *   tiles = causal_key_tiles(band, row0, row0 + rows, nk, TILE1_BC)   the sequence's band and nk
 *   for t = tiles.begin .. tiles.end - 1:          the tiles the block visits
 *       ... load K and V, tile1_scores(s, ...)
 *       if (causal_tile_masked(tiles, t))           not one of the full tiles
 *           causal1_mask(s, band, row0, t TILE1_BC, nk)
 *       ... the online softmax and P V, as in stage 06
 * so a tile wrongly skipped loses keys, a tile wrongly called full lets
 * masked keys in, and a wrong element mask does either, row by row.
 *   1. write the three bodies;
 *   2. delete the line FA_TODO(25);
 *   3. build and check:   cmake --build build -t stage07
 *                          build/07_causal/stage07 --impl learner --milestone 25
 *
 * Given: fa_mask.h (common/): fa_key_window (the band of any mask),
 * fa_window_key_range() (one row's keys) and fa_window_tile_keys() (the keys
 * some row and every row of a block of rows sees), fa_clip_keys(); and
 * causal_tiles.h: the causal_tiles struct and causal_tile_masked().
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

#ifdef __CUDACC__
#include "fa_launch.cuh"
FA_TODO(25); /* delete this line when your M25 is written */
#endif

/*
 * TODO(M25): the key tiles of bc keys (tile t holds keys [t bc, (t + 1) bc))
 * that the query rows [r0, r1) visit under the band w, with nk keys:
 *   begin, end             the tiles that hold at least one key that some row
 *                          of the block sees: the block visits exactly
 *                          [begin, end) (begin = end when no row sees a key);
 *   full_begin, full_end   the tiles that lie wholly inside the keys that
 *                          every row sees: no per-element mask there
 *                          (full_end <= full_begin when there are none).
 * Hints: fa_window_tile_keys(w, r0, r1, nk) gives the keys as .any and .all
 * (each [begin, end)); round outwards for the visited tiles and inwards for
 * the full ones. A tile that runs past nk is never full.
 * Pitfalls: an empty .any ([x, x)) must visit no tile, not one; a tile that
 * only touches the end of .all (it starts at all.end) is not full.
 */
static inline FA_HOST_DEVICE causal_tiles causal_key_tiles(fa_key_window w, int64_t r0, int64_t r1,
                                                           int64_t nk, int bc)
{
    (void)w;
    (void)r0;
    (void)r1;
    (void)nk;
    (void)bc;
    const causal_tiles none = {0, 0, 0, 0};
    return none;
}

/*
 * TODO(M25): the interval function of one row inside one tile: row `row`'s
 * allowed keys (fa_window_key_range(w, row, nk)) as offsets from key0, the
 * tile's first key, clipped to the tile: *lo = their first offset, *hi one
 * past their last, both in [0, bc] (*lo >= *hi: the row sees no key of the
 * tile). Offsets are ints: the element masks compare them with a key's
 * place in the tile.
 */
static inline FA_HOST_DEVICE void causal_row_in_tile(fa_key_window w, int64_t row, int64_t key0,
                                                     int64_t nk, int bc, int *lo, int *hi)
{
    (void)w;
    (void)row;
    (void)key0;
    (void)nk;
    (void)bc;
    *lo = 0;
    *hi = 0;
}

#ifdef __CUDACC__
/*
 * TODO(M25): the element mask of a masked tile in the layout of stage 05's
 * tile1_scores(): thread (ty, tx) = (threadIdx.x / TILE1_THREAD_COLS,
 * threadIdx.x % TILE1_THREAD_COLS) holds s[r][c], the score of query row
 * row0 + TILE1_ROWS_PER_THREAD ty + r against key key0 + tx +
 * TILE1_THREAD_COLS c. Set to -INFINITY every score whose key lies outside
 * its row's allowed keys (causal_row_in_tile()); leave the others alone.
 * Hints: one causal_row_in_tile() per row r, then compare each key's offset
 * in the tile (tx + TILE1_THREAD_COLS c). Keys at or past nk are outside
 * every row's range: the tail needs nothing more. Rows past nq (a last
 * query tile padded to its height) may be masked any way: they are never
 * stored.
 */
static __device__ __forceinline__ void causal1_mask(float s[TILE1_ROWS_PER_THREAD][TILE1_KEYS_PER_THREAD],
                                                    fa_key_window w, int64_t row0, int64_t key0,
                                                    int64_t nk)
{
    (void)s;
    (void)w;
    (void)row0;
    (void)key0;
    (void)nk;
}
#endif /* __CUDACC__ */

#endif /* KEY_TILES_CUH */
