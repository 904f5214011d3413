/**
 * @file causal_tiles.h
 * @brief What the fused kernels read of M25's classification of the key
 *        tiles (key_tiles.cuh computes it), and the order in which blocks
 *        take their query tiles. Given to the learner, not written.
 */
#ifndef CAUSAL_TILES_H
#define CAUSAL_TILES_H

#include <stdbool.h>
#include <stdint.h>

#include "fa_index.h"

/** The key tiles of one block of query rows: visit [begin, end), no mask inside [full_begin, full_end). */
typedef struct causal_tiles {
    int64_t begin, end;           /**< the tiles holding a key some row sees; the rest are skipped */
    int64_t full_begin, full_end; /**< the tiles every row sees whole (empty when full_end <= full_begin) */
} causal_tiles;

/** Whether visited tile @p t needs the per-element mask: it is not one of the full tiles. */
static inline FA_HOST_DEVICE bool causal_tile_masked(causal_tiles tiles, int64_t t)
{
    return t < tiles.full_begin || t >= tiles.full_end;
}

#ifdef __CUDACC__
/**
 * The query tile of this block, heaviest first: under a causal mask the last
 * query tiles see the most keys, and blocks start in the order of blockIdx.x,
 * so block x takes tile gridDim.x - 1 - x. The longest blocks start in the
 * first wave and the short ones fill in behind them, instead of the longest
 * starting last and running alone at the end. With no mask every tile costs
 * the same and the order changes nothing.
 */
static __device__ __forceinline__ int64_t causal_query_tile(void)
{
    return (int64_t)(gridDim.x - 1 - blockIdx.x);
}

#endif /* __CUDACC__ */

#endif /* CAUSAL_TILES_H */
