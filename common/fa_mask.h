/**
 * @file fa_mask.h
 * @brief Which keys a query row may see: every mask of the course as one
 *        interval of allowed keys, computed by one function that the kernels,
 *        the CPU models and the double references all call.
 *
 * For query row i of a problem with nq query rows and nk keys, each mask
 * allows exactly the keys begin <= j < end of fa_mask_key_range(). One
 * function for host and device means a kernel and its judge cannot disagree on
 * where the mask ends: an off-by-one in a kernel is an off-by-one against
 * this function, and the sentinel keys of the tests sit right at its edge.
 */
#ifndef FA_MASK_H
#define FA_MASK_H

#include <stdbool.h>
#include <stdint.h>

#include "fa_index.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which keys a query row may see. */
typedef enum fa_mask {
    FA_MASK_NONE = 0,               /**< every key */
    FA_MASK_CAUSAL_TOP_LEFT = 1,    /**< key j <= row i (PyTorch's is_causal) */
    FA_MASK_CAUSAL_BOTTOM_RIGHT = 2,/**< key j <= i + nk - nq (FlashAttention's causal) */
    FA_MASK_WINDOW = 3              /**< a sliding window (left, right) about the bottom-right
                                         diagonal: FlashAttention's window_size (fa_sliding_window()) */
} fa_mask;

/** The allowed keys of one query row: begin <= j < end; empty when end <= begin. */
typedef struct fa_key_range {
    int64_t begin;
    int64_t end;
} fa_key_range;

/**
 * Every mask as a band around a diagonal: query row i sees the keys
 * i + offset - left <= j <= i + offset + right, clipped to [0, nk), where a
 * negative left or right (-1) leaves that side unbounded. No mask is
 * (-1, -1); a causal mask is (-1, 0) about the diagonal of its alignment,
 * offset 0 for top-left and nk - nq for bottom-right; a sliding window is
 * (left, right) about either (FlashAttention's window_size is about the
 * bottom-right one). Both ends of the band grow with i, which is what lets
 * a kernel classify whole tiles at once (fa_window_tile_keys()).
 */
typedef struct fa_key_window {
    int64_t offset; /**< the key on row i's diagonal is i + offset */
    int64_t left;   /**< keys allowed before the diagonal; negative: all of them */
    int64_t right;  /**< keys allowed after the diagonal; negative: all of them */
} fa_key_window;

/**
 * The band of @p mask for nq query rows and nk keys (fa_key_window), for the
 * masks that have no extents of their own: none and the causal ones. A
 * sliding window's band is fa_sliding_window().
 */
static inline FA_HOST_DEVICE fa_key_window fa_mask_window(fa_mask mask, int64_t nq, int64_t nk)
{
    fa_key_window w = {0, -1, -1};
    if (mask == FA_MASK_CAUSAL_TOP_LEFT || mask == FA_MASK_CAUSAL_BOTTOM_RIGHT)
        w.right = 0;
    if (mask == FA_MASK_CAUSAL_BOTTOM_RIGHT)
        w.offset = nk - nq;
    return w;
}

/**
 * FlashAttention's window_size (@p left, @p right) for nq query rows and nk
 * keys: row i sees i + nk - nq - left <= j <= i + nk - nq + right, a side of
 * -1 unbounded; (-1, 0) is the bottom-right causal mask. An extent of
 * nq + nk or more reaches past every key from every row: it becomes -1, so
 * that no row's arithmetic overflows however large the extent.
 */
static inline FA_HOST_DEVICE fa_key_window fa_sliding_window(int64_t left, int64_t right, int64_t nq,
                                                             int64_t nk)
{
    const int64_t beyond = nq + nk; /* nq, nk >= 0 and each far below 2^62 */
    const fa_key_window w = {nk - nq, left >= beyond ? -1 : left, right >= beyond ? -1 : right};
    return w;
}

/**
 * The band of any mask: fa_sliding_window(@p left, @p right, nq, nk) for
 * FA_MASK_WINDOW, fa_mask_window() for the others (which ignore left and
 * right). What a kernel, the CPU models and the double reference all derive
 * their allowed keys from.
 */
static inline FA_HOST_DEVICE fa_key_window fa_mask_band(fa_mask mask, int64_t left, int64_t right,
                                                        int64_t nq, int64_t nk)
{
    return mask == FA_MASK_WINDOW ? fa_sliding_window(left, right, nq, nk)
                                  : fa_mask_window(mask, nq, nk);
}

/** @p x clipped to [0, @p nk]. */
static inline FA_HOST_DEVICE int64_t fa_clip_keys(int64_t x, int64_t nk)
{
    return x < 0 ? 0 : (x > nk ? nk : x);
}

/**
 * The keys row @p i may see in the band @p w, clipped to [0, @p nk); an
 * empty range (end <= begin) when the band lies wholly before key 0 or
 * after key nk - 1.
 */
static inline FA_HOST_DEVICE fa_key_range fa_window_key_range(fa_key_window w, int64_t i, int64_t nk)
{
    const fa_key_range range = {w.left < 0 ? 0 : fa_clip_keys(i + w.offset - w.left, nk),
                                w.right < 0 ? nk : fa_clip_keys(i + w.offset + w.right + 1, nk)};
    return range;
}

/**
 * The keys query row @p i (0 <= i < nq) may see under @p mask (one without
 * extents: fa_mask_window()), clipped to [0, nk). Causal masks allow a prefix: top-left aligns row 0 with key 0
 * (j <= i), bottom-right aligns the last row with the last key
 * (j <= i + nk - nq), so with nq > nk its first nq - nk rows see no key at
 * all. A row with an empty range has no allowed key: its output is 0 and its
 * lse -inf.
 */
static inline FA_HOST_DEVICE fa_key_range fa_mask_key_range(fa_mask mask, int64_t i, int64_t nq,
                                                            int64_t nk)
{
    return fa_window_key_range(fa_mask_window(mask, nq, nk), i, nk);
}

/**
 * What a block of query rows [r0, r1) needs of the keys, for the tile loop
 * of a fused kernel: @c any holds every key some row of the block sees (a key
 * tile outside it is skipped, never loaded), @c all the keys every row sees
 * (a key tile inside it runs without a per-element mask); a tile that meets
 * @c any but is not inside @c all is masked element by element.
 */
typedef struct fa_tile_keys {
    fa_key_range any;
    fa_key_range all;
} fa_tile_keys;

/**
 * fa_tile_keys of rows [@p r0, @p r1) (0 <= r0 < r1 <= nq) in the band
 * @p w, for @p nk keys; rows past nq (a last tile padded to its full height)
 * would only widen @c any and narrow @c all, safe but no longer exact, so a
 * kernel clips r1 to nq. Both ends of a row's range grow with the row, so the keys
 * every row sees run from the last row's begin to the first row's end, and
 * the keys some row sees from the first row's begin to the last row's end.
 * The second holds with empty rows too: a row sees no key only when its band
 * lies before key 0 (then its range is [0, 0), and so are the first rows') or
 * after key nk - 1 ([nk, nk), and so are the last rows'), and a band is at
 * least one key wide, so no row between two rows with keys is empty.
 */
static inline FA_HOST_DEVICE fa_tile_keys fa_window_tile_keys(fa_key_window w, int64_t r0, int64_t r1,
                                                              int64_t nk)
{
    const fa_key_range first = fa_window_key_range(w, r0, nk);
    const fa_key_range last = fa_window_key_range(w, r1 - 1, nk);
    const fa_tile_keys keys = {{first.begin, last.end}, {last.begin, first.end}};
    return keys;
}

/** True when query row @p i may attend to key @p j under @p mask (fa_mask_key_range()). */
static inline FA_HOST_DEVICE bool fa_mask_allows(fa_mask mask, int64_t i, int64_t j, int64_t nq,
                                                 int64_t nk)
{
    const fa_key_range range = fa_mask_key_range(mask, i, nq, nk);
    return j >= range.begin && j < range.end;
}

#ifdef __cplusplus
}
#endif

#endif /* FA_MASK_H */
