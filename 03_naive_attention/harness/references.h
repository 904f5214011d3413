/**
 * @file references.h
 * @brief What the stage 03 outputs are judged against: double references and
 *        per-element error bounds for M9, M10 and M11, and the attention
 *        problem that M12 hands to fa_attention_reference().
 *
 * M12 is judged by the course's attention reference (fa_attention_ref.h)
 * under the naive method: inputs of the kernel's dtype, fp32 accumulation,
 * expf, P kept in fp32, one division per weight. The three steps are judged
 * one by one with the terms of the same bound (\ref numerics) that each step
 * contributes, so a learner sees which step broke:
 * - M9, a scaled dot product: |s^ - s| <= c gamma_D sum_d |q_d k_d| (1 + u) + u |s|;
 * - M10, a softmax of exact fp32 inputs: the course's softmax reference
 *   (fa_softmax_ref.h) under the three-pass method, per weight
 *   eta_j = u |s_j - m| + 5u (the subtraction and expf), lambda = sum_j p_j
 *   eta_j + gamma_n for l (to first order), |p^_j - p_j| <= p_j (eta_j +
 *   lambda + u) and |lse^ - lse| <= lambda + 5u |ln l| + u |lse|, each made
 *   rigorous to second order;
 * - M11, a matmul with fp32 accumulation: |o^ - o| <= gamma_nk sum_j |p_j v_jc|.
 * Each bound also carries an absolute floor for results in the subnormal
 * range, where relative error bounds do not hold.
 */
#ifndef NAIVE_ATTENTION_REFERENCES_H
#define NAIVE_ATTENTION_REFERENCES_H

#include <stdint.h>

#include "attention.h"
#include "fa_attention_ref.h"
#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * M9: s = c q k^T in double, c = naive_attn_scale(scale, head_dim), and the
 * bound of one fp32 FMA chain followed by one multiplication by c.
 * @param q, k   host inputs of @p dtype, layouts of attention.h.
 * @param dtype  element type of q and k.
 * @param dims   sizes (head_dim >= 1).
 * @param scale  as passed to the launcher (0 selects the default).
 * @param s      receives [batch][heads][nq][nk] scores.
 * @param bound  receives the per-element bound, same shape.
 * @return FA_OK; fa_ref_matmul()'s error (sizes whose offsets overflow).
 */
FA_MUST_CHECK fa_status attn_scores_reference(const void *q, const void *k, fa_dtype dtype,
                                              naive_attn_dims dims, float scale, double *s,
                                              double *bound);

/**
 * M10: the masked softmax of each row of @p s in double and the bound of the
 * three-pass fp32 kernel (fa_softmax_rows_reference() with the zero
 * fa_softmax_method). A row with no allowed key (or
 * only -inf scores) gets p = 0 and lse = -inf with zero bounds: the kernel
 * must give exactly that. A NaN or +inf among the allowed scores gives NaN.
 * @param s           host [batch][heads][nq][nk] fp32 scores.
 * @param dims        sizes (head_dim is not read).
 * @param mask        the causal alignment, or none.
 * @param key_length  host [batch] padding lengths, or NULL.
 * @param p, p_bound  receive [batch][heads][nq][nk].
 * @param lse, lse_bound receive [batch][heads][nq].
 * @return fa_softmax_rows_reference()'s status.
 */
FA_MUST_CHECK fa_status softmax_rows_reference(const float *s, naive_attn_dims dims, fa_mask mask,
                                               const int64_t *key_length, double *p,
                                               double *p_bound, double *lse, double *lse_bound);

/**
 * M11: o = p v in double and the bound of one fp32 FMA chain per element.
 * @param p      host [batch][heads][nq][nk] fp32 weights.
 * @param v      host [batch][heads][nk][head_dim] of @p dtype.
 * @param dtype  element type of v.
 * @param dims   sizes.
 * @param o      receives [batch][heads][nq][head_dim].
 * @param bound  receives the per-element bound, same shape.
 * @return FA_OK; FA_ERR_OUT_OF_MEMORY when the widened copy of v cannot be allocated;
 *         fa_ref_matmul()'s error.
 */
FA_MUST_CHECK fa_status attn_pv_reference(const float *p, const void *v, fa_dtype dtype,
                                          naive_attn_dims dims, double *o, double *bound);

/**
 * The attention problem of the course's reference for host inputs in the
 * layouts of attention.h: heads_q = heads_kv = heads, and the scale the
 * kernels really use (naive_attn_scale(), a float) widened to double.
 */
fa_attn_problem naive_attn_problem(const void *q, const void *k, const void *v, fa_dtype dtype,
                                   naive_attn_dims dims, float scale, fa_mask mask,
                                   const int64_t *key_length);

/** The methods of the naive pipeline: the zero method with @p dtype inputs (see fa_attn_method). */
fa_attn_method naive_attn_method(fa_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif /* NAIVE_ATTENTION_REFERENCES_H */
