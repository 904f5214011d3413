/**
 * @file fa_softmax_ref.h
 * @brief Row softmax and log-sum-exp in double precision, with the per-element
 *        bound of an fp32 kernel of a declared method (docs/numerics.md).
 *
 * For the entries j a row may see: m = max_j x_j, e_j = exp(x_j - m),
 * l = sum_j e_j, p_j = e_j / l, lse = m + ln l. Entries the row may not see
 * (mask, padding) and -inf entries have p_j = 0.
 *
 * The bound. Entry j's weight reaches l through a chain of fp32 operations:
 * expf of a rounded difference (u |x_j - mu| + eps_exp, mu the running max when
 * the weight was formed), then, for an online kernel, one correction factor
 * expf(mu_old - mu_new) per later rise of the max (u |delta| + eps_exp each).
 * The differences telescope from x_j up to m, so the weight's relative error is
 *   eta_j = u |x_j - m| + (1 + k_j) eps_exp,
 * k_j the rises after the weight was formed (0 for a three-pass kernel; a
 * factor exp(0) = 1 is exact and not counted). The sum rounds every partial
 * sum at most G times on any term's path (G = the terms for three passes; the
 * chunk, the updates and two per merge level for an online kernel), all terms
 * positive, so l's relative error is
 *   lambda = (1 + 2 (max eta_j + gamma_G)) (sum_j p_j eta_j + gamma_G) + floors.
 * Then |p^_j - p_j| <= p_j b_j (1 + 2 b_j), b_j = eta_j + u + lambda (the
 * division), and |lse^ - lse| <= (1 + 2 b) (lambda + eps_log |ln l| + u |lse|),
 * b = lambda + eps_log + u. Weights below 2^-126 may be subnormal or flushed,
 * so each term adds an absolute floor, and the double reference adds its own
 * (tiny) error. eps_exp = 5u is the expf budget of docs/numerics.md (2 ulp, one
 * ulp at most 2u, plus the half ulp of the correctly rounded value); logf gets
 * the same 5u.
 *
 * gamma_G needs G u < 1: a three-pass row of 2^24 visible entries or more (G =
 * the entries) has no finite bound and is refused, FA_ERR_UNSUPPORTED, with
 * NaN bounds so that a check never judges it. An online method keeps G small
 * (chunk - 1 + updates + 2 levels), so long rows are judged per block.
 */
#ifndef FA_SOFTMAX_REF_H
#define FA_SOFTMAX_REF_H

#include <stdbool.h>
#include <stdint.h>

#include "fa_attention_ref.h"
#include "fa_bound.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most lanes an online method may fold a row with (a CUDA block's threads). */
enum { FA_SOFTMAX_MAX_LANES = 1024 };
_Static_assert((FA_SOFTMAX_MAX_LANES & (FA_SOFTMAX_MAX_LANES - 1)) == 0,
               "lanes are merged by an xor butterfly: a power of two");

/**
 * Relative error bound of an fp32 expf(x - mu) for exact fp32 x and mu: the
 * rounded difference (u |x - mu|) and expf's budget. @p difference is x - mu.
 */
double fa_softmax_exp_error(double difference);

/** b (1 + 2 b): a first-order relative budget @p budget made rigorous to second order. */
double fa_softmax_widened(double budget);

/** The entries of a row the softmax may see. */
typedef struct fa_softmax_keys {
    fa_mask mask;   /**< causal alignment, or FA_MASK_NONE */
    int64_t row;    /**< i, the query row this softmax row belongs to (causal masks) */
    int64_t rows;   /**< Nq, the query rows (bottom-right alignment) */
    int64_t length; /**< entries j >= length are padding; the row length when there is none */
} fa_softmax_keys;

/** The keys of a row of @p n entries that sees every entry. */
fa_softmax_keys fa_softmax_all_keys(int64_t n);

/** True when entry @p j of a row of @p n entries is visible under @p keys. */
bool fa_softmax_allows(const fa_softmax_keys *keys, int64_t n, int64_t j);

/**
 * How an fp32 kernel computes a row. The zero method is the three-pass
 * softmax: max, sum of expf(x_j - m), then one division per entry.
 *
 * An online method (chunk > 0) folds the row into lanes: lane t owns entries
 * t, t + lanes, t + 2 lanes, ... and folds chunk of its entries per update
 * (one max, a correction factor when the max rose, chunk expf and one fused
 * update of its sum); the lanes' states are then merged pairwise, level by
 * level, lane t with lane t ^ merge_masks[level] (a rescale of the side whose
 * max is lower, one product and one sum per level). lanes = 1 and no levels
 * is the one-pass online softmax over consecutive chunks.
 */
typedef struct fa_softmax_method {
    int64_t chunk;           /**< 0: three passes; > 0: entries a lane folds per update */
    int lanes;               /**< online: a power of two, 1 .. FA_SOFTMAX_MAX_LANES */
    int merge_levels;        /**< online: levels of the merge tree, 0 when lanes = 1 */
    const int *merge_masks;  /**< online: [merge_levels] xor partners (< lanes), in merge order */
} fa_softmax_method;

/**
 * Softmax of one row x [n] (fp32, contiguous) in double, and the bound of a
 * kernel implementing @p method. @p keys NULL means every entry is visible.
 * The double sums are compensated, so rows of any length are accurate.
 *
 * Edges, exact answers with bound 0: a row with no visible finite entry (n = 0,
 * all masked, or all -inf) gets p = 0 and lse = -inf; a NaN or +inf among the
 * visible entries makes p NaN on every visible entry and lse NaN. Invisible
 * entries always get p = 0 with bound 0.
 *
 * @param x          the row, [n] fp32.
 * @param n          its length (0 allowed).
 * @param keys       the visible entries, or NULL for all.
 * @param method     the kernel's method (the zero method: three passes).
 * @param p          receives [n] the exact weights.
 * @param p_bound    receives [n] the bound on |p_kernel - p|.
 * @param lse        receives ln of the row's sum of exp (natural log), or NULL.
 * @param lse_bound  receives the bound on |lse_kernel - lse|, or NULL.
 *
 * Returns FA_OK, or FA_ERR_UNSUPPORTED when the row has no finite bound
 * (gamma_G with G u >= 1, see above): p and lse are still the exact values,
 * every bound of a visible entry and lse_bound are NaN.
 *
 * Preconditions (not checked): n >= 0; x, p and p_bound non-NULL when n > 0;
 * an online method has lanes and masks as documented in fa_softmax_method.
 */
FA_MUST_CHECK fa_status fa_softmax_row_reference(const float *x, int64_t n,
                                                 const fa_softmax_keys *keys,
                                                 const fa_softmax_method *method, double *p,
                                                 double *p_bound, double *lse, double *lse_bound);

/**
 * fa_softmax_row_reference() for every row of x [batch][heads][rows][n]
 * (contiguous), row i of every head seeing the keys of @p mask and, when
 * @p key_length is not NULL, the keys j < key_length[b].
 * @param x           [batch][heads][rows][n] fp32.
 * @param batch, heads, rows, n sizes (>= 0).
 * @param mask        the causal alignment of row i to key j, or FA_MASK_NONE.
 * @param key_length  [batch] keys per batch element, or NULL for n.
 * @param method      the kernel's method.
 * @param p, p_bound  receive [batch][heads][rows][n].
 * @param lse, lse_bound receive [batch][heads][rows]; either may be NULL.
 * @return FA_ERR_OVERFLOW, writing nothing, when batch heads rows n doubles
 *         do not fit a 64-bit byte offset; else every row is written and the
 *         first row's refusal (fa_softmax_row_reference()) or FA_OK returned.
 */
FA_MUST_CHECK fa_status fa_softmax_rows_reference(const float *x, int64_t batch, int64_t heads,
                                                  int64_t rows, int64_t n, fa_mask mask,
                                                  const int64_t *key_length,
                                                  const fa_softmax_method *method, double *p,
                                                  double *p_bound, double *lse, double *lse_bound);

/**
 * The state an online method holds for a row before its division: the max,
 * the sum of the weights and the unnormalised output against it, with their
 * exact values and the bounds of the fp32 kernel.
 */
typedef struct fa_softmax_state_ref {
    double max;          /**< m, the largest visible entry (exact in fp32) */
    double sum;          /**< l = sum_j exp(x_j - m) */
    double sum_bound;    /**< bound on |l_kernel - l|: lambda l */
    double output;       /**< o = sum_j exp(x_j - m) v_j (0 without values) */
    double output_bound; /**< bound on |o_kernel - o| */
} fa_softmax_state_ref;

/**
 * The state (m, l, o) of row x [n] under @p method in double, and its bound:
 * what a split row's partial states must hold when merged (one value column
 * v; attention applies it per column). l gets lambda l of the derivation
 * above; o the same with |v_j| weights and one more rounding on every path
 * (the product e_j v_j, or its FMA): (1 + 2 (max eta_j + gamma_(G+1)))
 * (sum_j e_j |v_j| eta_j + gamma_(G+1) sum_j e_j |v_j|) + floors.
 *
 * Edges, exact with bound 0: no visible finite entry gives m = -inf, l = 0,
 * o = 0; a visible NaN or +inf makes l and o NaN (and m NaN: the kernel's max
 * then depends on how it treats NaN, and is not to be compared). Invisible
 * entries never read v.
 *
 * @param x       the row, [n] fp32.
 * @param v       the values, [n] fp32, or NULL (then o = 0 with bound 0).
 * @param n       the row length (0 allowed).
 * @param keys    the visible entries, or NULL for all.
 * @param method  the kernel's method (see fa_softmax_method).
 * @param state   receives the state and its bounds.
 *
 * Returns FA_OK, or FA_ERR_UNSUPPORTED when the state has no finite bound
 * (gamma_(G+1) with (G + 1) u >= 1): the state is still exact, both bounds NaN.
 *
 * Preconditions (not checked) as fa_softmax_row_reference(); state non-NULL.
 */
FA_MUST_CHECK fa_status fa_softmax_state_reference(const float *x, const float *v, int64_t n,
                                                   const fa_softmax_keys *keys,
                                                   const fa_softmax_method *method,
                                                   fa_softmax_state_ref *state);

/**
 * fa_softmax_state_reference() with the term @p omitted (FA_BOUND_TERM_NONE or
 * FA_BOUND_TERM_MERGE_RISES: the k_j of the merge levels) left out of the
 * bounds: only for the self-check that the term carries weight
 * (docs/numerics.md). Never judge a kernel with it. Another term:
 * FA_ERR_INVALID_ARGUMENT.
 */
FA_MUST_CHECK fa_status fa_softmax_state_reference_without(const float *x, const float *v,
                                                           int64_t n, const fa_softmax_keys *keys,
                                                           const fa_softmax_method *method,
                                                           fa_bound_term omitted,
                                                           fa_softmax_state_ref *state);

#ifdef __cplusplus
}
#endif

#endif /* FA_SOFTMAX_REF_H */
