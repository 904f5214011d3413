/**
 * @file causal.h
 * @brief Stage 07: M25's launcher, the reference's version 1 fused kernel
 *        run with one implementation of key_tiles.cuh (the reference's or the
 *        learner's). The library's own calls with a mask go through
 *        fa_attention_forward() (\ref stage06), whose kernels include the
 *        reference key_tiles.cuh.
 */
#ifndef CAUSAL_H
#define CAUSAL_H

#include "flashattn.h"

#ifdef __cplusplus
extern "C" {
#endif

#if FA_HAVE_CUDA
/**
 * Version @p version (1 only: M25 is judged in the v1 kernel) of the fused
 * kernel with the reference's key tiles, on the device call @p p, validated
 * beforehand (fa_attention_supported() for v1, and a packed batch's offsets
 * by flash_check_packed_offsets()). Every mask of fa_mask.h, plain and
 * packed batches.
 * ::FA_ERR_UNSUPPORTED for another version.
 */
fa_status ref_causal_forward(int version, const fa_attention_params *p, cudaStream_t stream);
/** The same with the learner's key_tiles.cuh; ::FA_ERR_NOT_IMPLEMENTED until M25 is written. */
fa_status learner_causal_forward(int version, const fa_attention_params *p, cudaStream_t stream);
#endif

#ifdef __cplusplus
}
#endif

#endif /* CAUSAL_H */
