/**
 * @file fa_adversarial.h
 * @brief Attention inputs that make bugs visible, and metamorphic transformations
 *        (docs/numerics.md: the ladder's steps 4 and 5).
 *
 * A case owns host q, k, v buffers laid out [B][H][N][D] or [B][N][H][D], with
 * pad_rows extra rows after the last query and key row of every head (canary
 * padding, for kernels that read past the end) and an optional key_length per
 * batch. Its problem (scale 1/sqrt(D)) views the buffers.
 *
 * Two dimensions of every head are reserved as controls once a generator uses
 * them, so that scores can be designed without solving for q and k:
 *   dimension D-2, the key offset: q = 1, k_j = offset_j / scale, adds offset_j
 *   to every score of key j;
 *   dimension D-1, the row bias: k_j = 1, q_i = bias / scale, adds bias to every
 *   score of row i.
 * The random fill leaves both at zero, so a case without designed scores is a
 * plain random case. Values are rounded to the case's dtype when stored.
 */
#ifndef FA_ADVERSARIAL_H
#define FA_ADVERSARIAL_H

#include <stdbool.h>
#include <stdint.h>

#include "fa_attention_ref.h"
#include "fa_rng.h"
#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Head dimensions a case needs for its two control dimensions plus one random one. */
enum { FA_CASE_MIN_HEAD_DIM = 3 };

/** Shape and storage of a case. */
typedef struct fa_case_shape {
    int64_t batch, heads_q, heads_kv, nq, nk, head_dim;
    fa_mask mask;
    fa_dtype dtype;        /**< of q, k and v */
    bool sequence_major;   /**< store [B][N][H][D] instead of [B][H][N][D] */
    bool key_padding;      /**< allocate key_length (every entry starts at nk) */
    int64_t pad_rows;      /**< rows allocated after nq and nk in every head (canary padding) */
} fa_case_shape;

/** An attention input with its buffers. */
typedef struct fa_attn_case {
    fa_case_shape shape;
    fa_attn_problem problem;   /**< views of q, k, v; scale 1/sqrt(D); key_length when padded */
    void *q, *k, *v;           /**< host buffers of shape.dtype */
    int64_t *key_length;       /**< [batch] when shape.key_padding, else NULL */
    int64_t q_rows, kv_rows;   /**< rows allocated per (batch, head): nq or nk, plus pad_rows */
} fa_attn_case;

/** Which tensor of a case an element belongs to. */
typedef enum fa_case_tensor { FA_CASE_Q = 0, FA_CASE_K = 1, FA_CASE_V = 2 } fa_case_tensor;

/**
 * Allocates a zero-filled case. Sizes must be >= 0, heads_q a multiple of
 * heads_kv > 0, head_dim >= FA_CASE_MIN_HEAD_DIM (the control dimensions).
 * Returns FA_ERR_NULL_POINTER, FA_ERR_INVALID_SIZE, FA_ERR_OVERFLOW (q or k
 * elements, padding included, whose byte size does not fit a 64-bit offset)
 * or FA_ERR_OUT_OF_MEMORY; on failure @p c is left empty (fa_case_free() is
 * still safe).
 */
FA_MUST_CHECK fa_status fa_case_create(fa_attn_case *c, const fa_case_shape *shape);

/** Frees the buffers of @p c and zeroes it. */
void fa_case_free(fa_attn_case *c);

/** Element (b, h, n, d) of tensor @p t; rows up to nq / nk + pad_rows. */
double fa_case_get(const fa_attn_case *c, fa_case_tensor t, int64_t b, int64_t h, int64_t n, int64_t d);

/** Stores @p x (rounded to nearest in the case's dtype) at (b, h, n, d) of tensor @p t. */
void fa_case_set(fa_attn_case *c, fa_case_tensor t, int64_t b, int64_t h, int64_t n, int64_t d, double x);

/**
 * Random q and k in the non-control dimensions with scores of standard
 * deviation about @p spread (the suite uses 0.3, 1, 3 and 8), control
 * dimensions zero. Only the real rows are written (padding is left alone).
 */
void fa_case_fill_scores(fa_attn_case *c, double spread, fa_rng *rng);

/** v = normal(0, 1) + @p offset in every dimension: 0 centres V, 1000 exposes P rounding. */
void fa_case_fill_values(fa_attn_case *c, double offset, fa_rng *rng);

/** Adds offset[j] ([nk]) to every score of key j, in every batch and head. */
void fa_case_set_key_offsets(fa_attn_case *c, const double *offset);

/** Adds @p bias to every score of every row (k = 1 in the bias dimension, padding included). */
void fa_case_set_row_bias(fa_attn_case *c, double bias);

/** Where the maximum of each row lies, in key blocks of a given size. */
typedef enum fa_max_position {
    FA_MAX_IN_FIRST_BLOCK = 0,  /**< block 0 is raised: the running max never rises after it */
    FA_MAX_IN_LAST_BLOCK = 1,   /**< the last block is raised: one late rise */
    FA_MAX_RISES_EVERY_BLOCK = 2, /**< block t raised by t * rise: a rise in every block */
    FA_MAX_FALLS_EVERY_BLOCK = 3  /**< block t raised by (last - t) * rise: a rise in every block walked from the last */
} fa_max_position;

/** Shapes the key offsets so the max of every row sits at @p where; @p rise is the step in score. */
void fa_case_place_max(fa_attn_case *c, int64_t block_n, fa_max_position where, double rise);

/** Keys every FA_SENTINEL_PERIOD positions are sentinels in fa_case_place_causal_sentinels(). */
enum { FA_SENTINEL_PERIOD = 5 };

/**
 * Sentinels just outside the causal boundary: every key j with
 * j % FA_SENTINEL_PERIOD == 0 (j > 0) gets score offset @p score and values
 * +-@p value (alternating by dimension), so row i = j - 1 - (nk - nq for a
 * bottom-right mask) has a sentinel as its first forbidden key and row
 * i = j - (...) as its diagonal. The suite uses score 8 and |v| = 20.
 */
void fa_case_place_causal_sentinels(fa_attn_case *c, double score, double value);

/**
 * Sentinels just outside the tail: keys from key_length[b] to nk (when the case
 * pads keys) get score offset @p score and values +-@p value.
 */
void fa_case_place_tail_sentinels(fa_attn_case *c, double score, double value);

/** Score offset and value of canary rows: far above any real score and value. */
#define FA_CANARY_SCORE 1000.0
#define FA_CANARY_VALUE 3.0e4 /* finite in fp16 too */

/**
 * Fills the pad_rows after nq and nk of every head with canaries: keys that
 * would dominate any row that reads them (score offset FA_CANARY_SCORE,
 * v = FA_CANARY_VALUE), and query rows of huge values.
 */
void fa_case_fill_canaries(fa_attn_case *c);

/** Sets key_length[b] (the case must pad keys; 0 <= length <= nk). */
void fa_case_set_key_length(fa_attn_case *c, int64_t b, int64_t length);

/* ---- metamorphic transformations ------------------------------------------------------- */

/**
 * Shifts every allowed logit of row (b, h, i) by about @p delta through the
 * row-bias dimension (fa_case_set_row_bias() must have been called) and
 * returns the shift actually applied after rounding q to the dtype. o must
 * not change; lse moves by exactly the returned shift.
 */
double fa_meta_shift_row(fa_attn_case *c, int64_t b, int64_t h, int64_t i, double delta);

/**
 * Permutes keys and values consistently in every (batch, kv head): key j
 * becomes old key perm[j], for j < nk (perm a permutation of 0..nk-1). Rows
 * that see every key keep o and lse. Returns FA_ERR_OUT_OF_MEMORY or FA_OK.
 */
FA_MUST_CHECK fa_status fa_meta_permute_keys(fa_attn_case *c, const int64_t *perm);

/** v *= @p alpha (exact when alpha is a power of two in range): o scales by alpha. */
void fa_meta_scale_values(fa_attn_case *c, double alpha);

/**
 * Packs two cases of equal heads, nq, head_dim, dtype and mask into one batch
 * of a.batch + b.batch sequences padded to the longer nk, with key_length set
 * so each packed sequence sees only its own keys. Row r of a batch of @p a
 * equals the same row of the packed case. Only masks whose rows do not depend
 * on nk qualify (none, causal top-left): FA_ERR_UNSUPPORTED otherwise.
 */
FA_MUST_CHECK fa_status fa_meta_pack(const fa_attn_case *a, const fa_attn_case *b,
                                     fa_attn_case *packed);

#ifdef __cplusplus
}
#endif

#endif /* FA_ADVERSARIAL_H */
