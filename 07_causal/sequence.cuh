/**
 * @file sequence.cuh
 * @brief One sequence of a call as a block of the fused kernels sees it: its
 *        lengths and where its rows start, in a plain batch or a packed one.
 *
 * In a plain batch (flashattn.h) sequence b is batch entry b: nq rows and nk
 * keys, b batch strides in. In a packed batch it is rows
 * cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1 of q and o and keys
 * cu_seqlens_k[b] .. cu_seqlens_k[b + 1] - 1 of k and v, and its lse rows
 * start at cu_seqlens_q[b] within each head's nq. The kernels index from the
 * sequence's start with its own lengths, so a packed sequence is exactly a
 * batch of one: its mask is aligned to its lengths and its tiles hold only
 * its keys (a tail past its last key is zero-filled and masked as past nk).
 */
#ifndef SEQUENCE_CUH
#define SEQUENCE_CUH

#include <stdint.h>

#include "fa_mask.h"
#include "flashattn.h"

/** Where a block reads sequence b of a call: its lengths and its offsets in elements. */
typedef struct flash_sequence {
    int64_t nq, nk;              /**< its query rows and keys */
    int64_t q, k, v;             /**< element offset of its row 0 (head 0) in q, k and v */
    int64_t first_row, first_key; /**< its row 0 and key 0 among the tensors' rows (0 when plain) */
} flash_sequence;

/**
 * Sequence @p b of @p p: with PACKED from the offsets (two loads of each
 * array), else batch entry b.
 */
template <bool PACKED>
static __device__ __forceinline__ flash_sequence flash_sequence_of(const fa_attention_params &p,
                                                                   int64_t b)
{
    if constexpr (PACKED) {
        const int64_t q0 = p.cu_seqlens_q[b], k0 = p.cu_seqlens_k[b];
        return {p.cu_seqlens_q[b + 1] - q0, p.cu_seqlens_k[b + 1] - k0, q0 * p.q_strides.row,
                k0 * p.k_strides.row, k0 * p.v_strides.row, q0, k0};
    } else {
        return {p.nq, p.nk, b * p.q_strides.batch, b * p.k_strides.batch, b * p.v_strides.batch,
                0, 0};
    }
}

/** Where a block writes sequence b's outputs, in elements. */
typedef struct flash_outputs {
    int64_t o;   /**< offset of its row 0 (head 0) in o */
    int64_t lse; /**< offset of its row 0 of the block's head in lse */
} flash_outputs;

/**
 * The outputs of sequence @p b of @p p for query head @p h. Called after the
 * loop over the keys, so that the offsets are not held in registers across
 * it (with them made at the start, version 1 at head dimension 64 spilled).
 */
template <bool PACKED>
static __device__ __forceinline__ flash_outputs flash_outputs_of(const fa_attention_params &p,
                                                                 int64_t b, int64_t h)
{
    if constexpr (PACKED) {
        const int64_t q0 = p.cu_seqlens_q[b];
        return {q0 * p.o_strides.row, h * p.nq + q0};
    } else {
        return {b * p.o_strides.batch, (b * p.heads_q + h) * p.nq};
    }
}

/** The band of @p p's mask over sequence @p s's rows and keys (fa_mask_band()). */
static __device__ __forceinline__ fa_key_window flash_sequence_band(const fa_attention_params &p,
                                                                    const flash_sequence &s)
{
    return fa_mask_band(p.mask, p.window_left, p.window_right, s.nq, s.nk);
}

#endif /* SEQUENCE_CUH */
