/**
 * @file causal_tiles.h
 * @brief What the fused kernels read of M25's classification of the key
 *        tiles (key_tiles.cuh computes it). Given to the learner, not written.
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

#endif /* CAUSAL_TILES_H */
