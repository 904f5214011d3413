/**
 * @file fa_model.h
 * @brief The reductions of fa_kernel.cuh replayed on the host, in the same
 *        order, so that a stage's CPU model gives the kernel's bits.
 */
#ifndef FA_MODEL_H
#define FA_MODEL_H

#include "fa_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * What every lane gets from fa_lanes_reduce() over @p width lanes (a power
 * of two up to 32) holding @p lanes[0..width): at offset width / 2, ..., 1,
 * lane i combines its value with lane i ^ offset's. Overwrites @p lanes.
 */
float fa_model_lanes_reduce(fa_reduce_op op, float *lanes, int width);

/**
 * What every thread gets from fa_block_reduce() over @p threads values
 * (whole warps, a power of two of them up to 32): each warp's butterfly,
 * then the butterfly over the warps' results.
 */
float fa_model_block_reduce(fa_reduce_op op, const float *values, int threads);

#ifdef __cplusplus
}
#endif

#endif /* FA_MODEL_H */
