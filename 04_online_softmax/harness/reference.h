/**
 * @file reference.h
 * @brief Double references of the stage-04 traces with the per-element bound
 *        of the online algorithm, and the softmax rows of the one-pass kernel.
 *        Attention outputs are judged by fa_attention_reference() with
 *        block_n = the chunk instead (online_attn_method()).
 *
 * The derivation is the online method of the course's softmax reference
 * (fa_softmax_ref.h): entry j's weight carries eta_j = u |x_j - m| +
 * (1 + k_j) eps_exp, k_j the rises of the max after the weight was formed,
 * and every partial sum rounds at most G times on a term's path (gamma_G).
 * A trace holds the same terms after each chunk t, against the running max
 * m_t, with G = chunk + t + 1 (the chunk's own sum, then one fused update per
 * chunk); the output o takes the same with |v_j| weights. The references
 * themselves are computed in double; their own rounding is added to every
 * bound.
 */
#ifndef ONLINE_REFERENCE_H
#define ONLINE_REFERENCE_H

#include <stdint.h>

#include "fa_attention_ref.h"
#include "fa_status.h"
#include "online.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * Edges as the kernels: -inf entries are masked (weight 0, value unused); a
 * NaN entry makes m, alpha, l and o NaN from its chunk on (the max keeps NaN,
 * fa_max_nan()); bounds of non-finite values are 0 (the output must be the
 * same NaN or infinity).
 */
void online_ref_trace_row(const float *x, const float *v, int64_t n, int64_t chunk,
                          const online_trace_ref *ref);

/**
 * Softmax of one row x [n] in double: p [n] and *lse, with the bound of the
 * one-pass kernel whose geometry is @p threads threads (a power of two, 1 ..
 * ONLINE_MODEL_MAX_THREADS) folding @p chunk strided entries per update, then
 * the merge butterfly of online_merge_masks(): fa_softmax_row_reference()
 * under that geometry as an online fa_softmax_method. -inf entries are masked.
 *
 * Edges: a row with no finite entry gets p = 0, lse = -inf (bound 0); a row
 * holding NaN or +inf gets NaN everywhere (bound 0). @p lse and
 * @p lse_bound may be NULL. Returns fa_softmax_row_reference()'s status.
 */
FA_MUST_CHECK fa_status online_ref_softmax_row(const float *x, int64_t n, int threads, int chunk,
                                               double *p, double *p_bound, double *lse,
                                               double *lse_bound);

/**
 * online_ref_softmax_row() for every row of x [rows][n], with the geometry of
 * softmax_rows_online (softmax_rows_online_threads(n) threads,
 * SOFTMAX_ONLINE_CHUNK entries per update). p, p_bound [rows][n]; lse,
 * lse_bound [rows] (may be NULL). Returns the first row's error, if any.
 */
FA_MUST_CHECK fa_status online_ref_softmax_rows(const float *x, int64_t rows, int64_t n, double *p,
                                                double *p_bound, double *lse, double *lse_bound);

/**
 * The double reference's view of an attention problem of host arrays
 * (contiguous [B][H][N][D], no key padding), for fa_attention_reference().
 */
fa_attn_problem online_attn_problem(const attn_online_args *args);

/**
 * The method attn_rows_online declares to fa_attention_reference(): fp32
 * inputs, P and output, fp32 FMA dot products, expf, online softmax over key
 * blocks of @p chunk (>= 1), one division per output.
 */
fa_attn_method online_attn_method(int64_t chunk);

#ifdef __cplusplus
}
#endif

#endif /* ONLINE_REFERENCE_H */
