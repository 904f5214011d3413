/**
 * @file reference.h
 * @brief Double references of the stage-04 traces and softmax rows, with the
 *        per-element bound of the online algorithm (NUMERICS.md, blocked
 *        online softmax). Attention outputs are judged by
 *        fa_attention_reference() with block_n = the chunk instead.
 *
 * The bound, for one row with max m and l = sum_j e_j, e_j = exp(x_j - m):
 * entry j's term reaches l through a chain of fp32 operations. Its weight is
 * expf of a rounded difference (u |x_j - mu| + eps_exp, mu the running max when
 * the term was formed), and every later rise of the max multiplies it by a
 * correction factor, itself expf of a rounded difference (u |delta| + eps_exp
 * each). The differences telescope from x_j up to m, so the term's relative
 * error is at most
 *   eta_j = u |x_j - m| + (1 + k_j) eps_exp,
 * k_j the number of rises after the term was formed (a factor exp(0) = 1 is
 * exact and not counted). The additions and the fused updates round each
 * partial sum once: with at most C roundings on any term's path, gamma_C
 * (Higham; every term is positive, so no cancellation). Hence
 *   |l_hat - l| <= (1 + 2 beta) (sum_j e_j eta_j + gamma_C l) + floors,
 * beta = max eta_j + gamma_C covering the second-order terms, and the floors
 * 2^-126 per term for weights that fall below the normal range. The output o
 * takes the same with |v_j| weights; p = weight / l adds its own weight's error
 * and the division's u to the relative error of l, and lse = m + ln l adds
 * logf's budget and the rounding of the addition.
 *
 * eps_exp = 5u is the expf budget of NUMERICS.md (2 ulp, one ulp being at most
 * 2u, plus the half ulp of the correctly rounded result); the same 5u is used
 * for logf (CUDA documents 1 ulp). The references themselves are computed in
 * double; their own rounding is added to every bound.
 */
#ifndef ONLINE_REFERENCE_H
#define ONLINE_REFERENCE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** fp32 unit roundoff u = 2^-24. */
#define ONLINE_UNIT_ROUNDOFF 0x1p-24
/** Relative error budget of one expf (and one logf): 5u. */
#define ONLINE_EXP_BUDGET (5.0 * ONLINE_UNIT_ROUNDOFF)
/** Below the normal range (2^-126) results may be subnormal or flushed: an absolute floor. */
#define ONLINE_SUBNORMAL_FLOOR 0x1p-126

/**
 * Where online_ref_trace_row() writes, each array [online_chunk_count(n, chunk)];
 * any pointer may be NULL when that part is not wanted.
 */
typedef struct online_trace_ref {
    double *max;              /**< m_t: exact (the fp32 max is exact); compare bit for bit */
    double *correction;       /**< alpha_t = exp(m_(t-1) - m_t), 0 after an empty state */
    double *correction_bound; /**< bound on |alpha_hat - alpha| */
    double *sum;              /**< l_t = sum over chunks <= t of exp(x_j - m_t) */
    double *sum_bound;        /**< bound on |l_hat - l| for the trace kernel's order */
    double *output;           /**< o_t = sum over chunks <= t of exp(x_j - m_t) v_j (needs v) */
    double *output_bound;     /**< bound on |o_hat - o| (needs v) */
} online_trace_ref;

/**
 * The exact traces of one row x [n] (values v [n], may be NULL when neither
 * output array is wanted), chunks of @p chunk entries in order, and their
 * bounds for the trace kernel: per chunk t at most chunk + t + 1 roundings on
 * any term's path (the chunk's own sum, then one fused update per chunk).
 *
 * Edges as the kernels: -inf entries are masked (weight 0, value unused), NaN
 * entries are ignored by the max and make l and o NaN from their chunk on;
 * bounds of non-finite values are 0 (the output must be the same NaN or
 * infinity).
 */
void online_ref_trace_row(const float *x, const float *v, int64_t n, int64_t chunk,
                          const online_trace_ref *ref);

/**
 * Softmax of one row x [n] in double: p [n] and *lse, with the bound of the
 * one-pass kernel whose geometry is @p threads threads (a power of two, 1 ..
 * ONLINE_MODEL_MAX_THREADS) folding @p chunk strided entries per update, then
 * the merge butterfly of online_merge_masks() (two roundings and, where the
 * max of one side is lower, one exp per level). The rises k_j are counted by
 * replaying the geometry on the exact maxima.
 *
 * Edges: a row with no allowed entry gets p = 0, lse = -inf (bound 0); a row
 * holding NaN or +inf gets NaN everywhere (bound 0). @p lse and
 * @p lse_bound may be NULL.
 */
void online_ref_softmax_row(const float *x, int64_t n, int threads, int chunk, double *p,
                            double *p_bound, double *lse, double *lse_bound);

/**
 * online_ref_softmax_row() for every row of x [rows][n], with the geometry of
 * softmax_rows_online (softmax_rows_online_threads(n) threads,
 * SOFTMAX_ONLINE_CHUNK entries per update). p, p_bound [rows][n]; lse,
 * lse_bound [rows] (may be NULL).
 */
void online_ref_softmax_rows(const float *x, int64_t rows, int64_t n, double *p, double *p_bound,
                             double *lse, double *lse_bound);

#ifdef __cplusplus
}
#endif

#endif /* ONLINE_REFERENCE_H */
