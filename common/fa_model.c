/** @file fa_model.c @brief Host replicas of the reductions of fa_kernel.cuh. */
#include "fa_model.h"

#include <string.h>

#include "fa_index.h"

float fa_model_lanes_reduce(fa_reduce_op op, float *lanes, int width)
{
    /* Lane 0 only ever combines lanes below the offset with those above it,
     * and every lane ends with lane 0's bits, so the lower half suffices. */
    for (int offset = width / 2; offset > 0; offset /= 2)
        for (int i = 0; i < offset; ++i)
            lanes[i] = fa_reduce_combine(op, lanes[i], lanes[i + offset]);
    return lanes[0];
}

float fa_model_block_reduce(fa_reduce_op op, const float *values, int threads)
{
    float warps[FA_WARP_THREADS];
    const int count = threads / FA_WARP_THREADS;
    for (int w = 0; w < count; ++w) {
        float lanes[FA_WARP_THREADS];
        memcpy(lanes, values + w * FA_WARP_THREADS, sizeof lanes);
        warps[w] = fa_model_lanes_reduce(op, lanes, FA_WARP_THREADS);
    }
    return fa_model_lanes_reduce(op, warps, count);
}
