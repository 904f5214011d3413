/**
 * @file packed.h
 * @brief A packed batch made of stage 06 cases: each sequence a call of its
 *        own (batch 1, judged as one), and the packed call over all of them,
 *        on host memory. Plain C (no CUDA): checks.c runs and judges it.
 */
#ifndef CAUSAL_PACKED_H
#define CAUSAL_PACKED_H

#include <stdint.h>

#include "cases.h"
#include "fixtures.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A packed batch: its sequences, their offsets, and the packed call on host tensors. */
typedef struct causal_packed {
    causal_packed_spec spec;   /**< the case it was made from (causal_packed_case()) */
    int count;                 /**< sequences */
    flash_case *seqs;          /**< sequence s as a call of batch 1, [1][n][heads][d] */
    int32_t *cu_q, *cu_k;      /**< count + 1 offsets of the sequences' rows and keys */
    void *q, *k, *v, *o;       /**< the packed tensors, [rows][heads][d] (gaps after the rows
                                    with row_gaps): the sequences' one after the other, rows of no
                                    sequence and gaps poisoned (o wholly) */
    float *lse;                /**< [heads_q][rows], poisoned, or NULL */
    fa_attention_params call;  /**< the packed call on them (host pointers) */
} causal_packed;

/**
 * Makes packed case @p index of version @p version (causal_packed_case()),
 * its values from the random stream (@p seed, @p stream): sequence s a
 * random case (flash_case_random(), for the version's key tiles) of
 * nq[s] x nk[s] with its own score pattern (s mod 4: spread, a row bias of
 * 100, the maximum late, a rising maximum), spread (0.3, 1, 3, 8 by s) and
 * mean of V, so that sequences differ in range; then the packed tensors.
 * FA_ERR_OUT_OF_MEMORY, or the case's status; @p b is left empty on failure.
 */
fa_status causal_packed_make(causal_packed *b, int version, int index, uint64_t seed,
                             uint64_t stream);

/** Copies the packed o and lse into each sequence's case, to be judged as a call of its own. */
void causal_packed_scatter(causal_packed *b);

/**
 * Bytes of the packed o and lse that are no sequence's elements (rows
 * outside every sequence, gaps between rows) and lost the poison: a kernel
 * wrote where it must not. -1 when the host has no memory for the count.
 */
int64_t causal_packed_outside_written(const causal_packed *b);

/** Poisons the packed o and lse again (before another run). */
void causal_packed_poison(causal_packed *b);

/** Frees what @p b owns and zeroes it (safe on a zeroed batch). */
void causal_packed_free(causal_packed *b);

#ifdef __cplusplus
}
#endif

#endif /* CAUSAL_PACKED_H */
