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
    FA_MASK_CAUSAL_BOTTOM_RIGHT = 2 /**< key j <= i + nk - nq (FlashAttention's causal) */
} fa_mask;

/** The allowed keys of one query row: begin <= j < end; empty when end <= begin. */
typedef struct fa_key_range {
    int64_t begin;
    int64_t end;
} fa_key_range;

/**
 * The keys query row @p i (0 <= i < nq) may see under @p mask, clipped to
 * [0, nk). Causal masks allow a prefix: top-left aligns row 0 with key 0
 * (j <= i), bottom-right aligns the last row with the last key
 * (j <= i + nk - nq), so with nq > nk its first nq - nk rows see no key at
 * all. A row with an empty range has no allowed key: its output is 0 and its
 * lse -inf.
 */
static inline FA_HOST_DEVICE fa_key_range fa_mask_key_range(fa_mask mask, int64_t i, int64_t nq,
                                                            int64_t nk)
{
    int64_t end = nk;
    if (mask == FA_MASK_CAUSAL_TOP_LEFT)
        end = i + 1;
    else if (mask == FA_MASK_CAUSAL_BOTTOM_RIGHT)
        end = i + 1 + (nk - nq);
    end = end < 0 ? 0 : (end > nk ? nk : end);
    const fa_key_range range = {0, end};
    return range;
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
