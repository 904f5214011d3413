/**
 * @file fa_bound.h
 * @brief The error bound of one attention row under a declared method
 *        (the derivation is on the page "How outputs are judged", docs/numerics.md).
 *
 * fa_attention_reference() computes a row exactly in double, then asks this
 * module for the bound. The bound of output column c is linear in the values:
 *
 *   bound(o_c) = sum_j diff_weight[j] |v_jc - o_c| + sum_j abs_weight[j] |v_jc|
 *              + o_weight |o_c| + o_floor,
 *
 * so the per-key weights are computed once per row (O(N)) and the caller makes
 * one O(N D) pass over v. Every term, its rigorous second-order factor and the
 * absolute floors (flush to zero, subnormal P and outputs) are already folded
 * into the weights.
 *
 * A bound that is not finite is no bound: it would cover any output. Where a
 * factor of the derivation leaves its range (gamma_n with n u >= 1, l's gamma
 * or a weight's relative error reaching 1), the row is refused with
 * FA_ERR_UNSUPPORTED and a message saying which factor, never given an
 * infinite bound.
 */
#ifndef FA_BOUND_H
#define FA_BOUND_H

#include <stdint.h>

#include "fa_attention_ref.h"
#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** fp32 unit roundoff u = 2^-24. */
#define FA_BOUND_U32 0x1p-24

/**
 * Relative budget of one expf, exp2f or ex2.approx.f32 (and of one logf):
 * within 2 ulp of exp (CUDA Math API, PTX ISA), one ulp is at most 2u
 * relative, and the half ulp of the correctly rounded value the budget is
 * measured from makes 2.5 ulp = 5u.
 */
#define FA_BOUND_EXP_BUDGET (5.0 * FA_BOUND_U32)

/** Smallest normal fp32: below it a result may be subnormal or flushed to zero. */
#define FA_BOUND_MIN_NORMAL32 0x1p-126

/** Doubles of scratch fa_bound_row() needs per key position. */
enum { FA_BOUND_SCRATCH_PER_KEY = 6 };

/**
 * A term of a bound, named so that the self-check of docs/numerics.md can
 * leave exactly one out and show that an adversarially rounded correct kernel
 * is then uncovered: the term carries weight. Judging uses FA_BOUND_TERM_NONE.
 */
typedef enum fa_bound_term {
    FA_BOUND_TERM_NONE = 0,       /**< the whole bound */
    FA_BOUND_TERM_RESCALE = 1,    /**< attention: rho_tau, the later rescales of a weight */
    FA_BOUND_TERM_MERGE_RISES = 2,/**< softmax: the correction factors of the merge levels */
    FA_BOUND_TERM_FLUSHED = 3     /**< attention: weights that may fall below 2^-126 and flush to 0 */
} fa_bound_term;

/**
 * Bound on |fl(q.k) - q.k| for one unscaled dot product of length
 * @p head_dim with sum_d |q_d k_d| = @p abs_dot, accumulated as @p m
 * declares: a chain of FFMAs (gamma_(D+1) with u = 2^-24), or the tensor
 * cores' truncating sums (gamma_(D (1 + 2/8)) with u = 2^-23), plus 2^-126
 * per product for flushed partial sums, into *@p bound. The first term of
 * every weight's error; also the bound of a tile of raw scores on its own.
 * @return FA_OK, or ::FA_ERR_UNSUPPORTED when gamma is not finite (a head
 *         dimension too large to judge).
 */
FA_MUST_CHECK fa_status fa_bound_dot(const fa_attn_method *m, int64_t head_dim, double abs_dot,
                                     double *bound);

/** What the bound of one query row is computed from: the exact row of the reference. */
typedef struct fa_bound_row_input {
    int64_t keys;           /**< key positions 0 .. keys-1 (the kernel's block grid starts at 0) */
    const double *score;    /**< [keys] exact s_j = scale * q.k_j; -inf where the key is not allowed */
    const double *abs_dot;  /**< [keys] A_j = sum_d |q_d k_jd| (unscaled); unused where not allowed */
    double scale;           /**< the problem's scale (its magnitude multiplies A_j) */
    int64_t head_dim;       /**< D, the length of each q.k */
    double max;             /**< m = max_j s_j; finite (rows without an allowed key have no bound to compute) */
    double sum;             /**< l = sum_j exp(s_j - m) >= 1 */
    fa_bound_term omitted;  /**< FA_BOUND_TERM_NONE, or the term to leave out (self-check only) */
} fa_bound_row_input;

/** The bound of one row, as weights of the linear form above. */
typedef struct fa_bound_row_terms {
    double *diff_weight;    /**< [keys] caller-owned: multiplies |v_jc - o_c| (0 where not allowed) */
    double *abs_weight;     /**< [keys] caller-owned: multiplies |v_jc| (0 where not allowed) */
    double o_weight;        /**< multiplies |o_c| */
    double o_floor;         /**< absolute term of every column */
    double lse_bound;       /**< bound on |lse_kernel - lse| (natural log) */
    int64_t rises;          /**< R: blocks where the running maximum may rise (the larger of both block orders) */
} fa_bound_row_terms;

/**
 * FA_OK when the factors of the bound that a row's sizes fix are in range for
 * every row of up to @p keys key positions under @p method: gamma_n of the
 * q.k dot product of @p head_dim terms and of P.V finite (n u < 1), gamma_n
 * of l below 1 (n u < 1/2; else 1 - gamma_l, the bound's second-order
 * denominator, is not positive), counting a rise in every key block. Else FA_ERR_UNSUPPORTED with a message that
 * names the factor, e.g. "gamma_n with n*u >= 1 for P.V (n = 16777217, ...)":
 * fp32 sums over 2^23 keys or more have no bound, such rows must be judged
 * per block. fa_attention_reference() asks this before allocating anything.
 * The method must have been validated.
 */
FA_MUST_CHECK fa_status fa_bound_row_supported(const fa_attn_method *method, int64_t keys,
                                               int64_t head_dim);

/**
 * Fills @p out with the bound of a kernel that implements method @p method on
 * the row @p in, valid whether the kernel visits the key blocks first to last
 * or last to first. @p scratch holds FA_BOUND_SCRATCH_PER_KEY * in->keys
 * doubles. The method must have been validated (fa_attention_reference() does).
 *
 * Returns FA_ERR_INVALID_ARGUMENT for a row that breaks its description (a
 * negative size, a max or sum or scale that is not finite, l < 1, an allowed
 * score that is NaN or +inf, an A_j that is not a finite number >= 0), and
 * FA_ERR_UNSUPPORTED when the bound would not be finite: a size-fixed factor
 * out of range (fa_bound_row_supported()), or scores so large that a weight's
 * relative error H = expm1(eta_j) or l's relative error reaches 1. On error
 * @p out holds no bound.
 */
FA_MUST_CHECK fa_status fa_bound_row(const fa_attn_method *method, const fa_bound_row_input *in,
                                     double *scratch, fa_bound_row_terms *out);

/**
 * fa_attention_reference() with the term @p omitted left out of every row's
 * bound: only for the self-check that the term carries weight (an
 * adversarially rounded correct kernel is then uncovered on the input built
 * for it, docs/numerics.md). Never judge a kernel with it.
 */
FA_MUST_CHECK fa_status fa_attention_reference_without(const fa_attn_problem *p,
                                                       const fa_attn_method *m,
                                                       fa_bound_term omitted,
                                                       fa_attn_reference *out);

/**
 * Adds to @p out a bound on the error of the double reference itself
 * (double dot products, libm exp and log, compensated sums), so that the
 * verdict compares the kernel with the exact result and not with the
 * reference's rounding. The addition is about 2^-29 of the fp32 terms.
 */
void fa_bound_row_add_reference_error(const fa_bound_row_input *in, fa_bound_row_terms *out);

#ifdef __cplusplus
}
#endif

#endif /* FA_BOUND_H */
