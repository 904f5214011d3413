/**
 * @file fa_attention_ref.h
 * @brief Attention in double precision, with the per-element error bound of a
 *        described algorithm (docs/numerics.md, the page "How outputs are judged").
 *
 * For one query row i of head h in batch b:
 *   s_j = scale * q_i . k_j over the keys j the mask allows,
 *   m = max_j s_j, l = sum_j exp(s_j - m), p_j = exp(s_j - m) / l,
 *   o_i = sum_j p_j v_j,  lse_i = m + ln l.
 * A row with no allowed key has o_i = 0 and lse_i = -inf (never NaN).
 *
 * NaN and Inf in v follow one rule, in this reference and in every kernel of
 * the course: the row v_j of an allowed key always reaches o_i, whatever its
 * weight, even a weight that underflows to 0 (p_j * NaN = NaN, 0 * Inf =
 * NaN); the row of a masked key (causal limit or key padding) is never read,
 * so padding may hold anything. A NaN in v_jc therefore makes column c of o_i
 * NaN on every row that allows key j. With Inf the value depends on whether
 * the weight underflowed (Inf if not, NaN if so), which the fp32 and double
 * exponentials decide at different score gaps: tests put Inf only on keys of
 * non-negligible weight.
 *
 * The same double loop that computes the reference accumulates the sums the
 * bound needs (A_j = sum_d |q_d k_jd|, sum_j p_j |v_jc - o_c|, the running
 * maxima of the declared block order), so the bound costs one extra O(N D)
 * pass per row.
 */
#ifndef FA_ATTENTION_REF_H
#define FA_ATTENTION_REF_H

#include <stdbool.h>
#include <stdint.h>

#include "fa_check.h"
#include "fa_half.h"
#include "fa_mask.h"
#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A host tensor of shape [batch][heads][rows][dim] read through strides (in
 * elements), the last dimension contiguous: element (b, h, n, d) is at
 * data[b * stride_batch + h * stride_head + n * stride_row + d].
 */
typedef struct fa_tensor_view {
    const void *data;
    fa_dtype dtype;
    int64_t stride_batch, stride_head, stride_row;
} fa_tensor_view;

/** View of a contiguous [B][H][N][D] tensor. */
fa_tensor_view fa_view_bhnd(const void *data, fa_dtype dtype, int64_t heads, int64_t rows,
                            int64_t dim);
/** View of a contiguous [B][N][H][D] tensor. */
fa_tensor_view fa_view_bnhd(const void *data, fa_dtype dtype, int64_t heads, int64_t rows,
                            int64_t dim);

/** Element (b, h, n, d) of @p t widened to double. */
double fa_view_at(const fa_tensor_view *t, int64_t b, int64_t h, int64_t n, int64_t d);

/**
 * The elements of a [@p batch][@p heads][@p rows][@p dim] problem that @p t
 * reads have element and byte offsets that fit a signed 64-bit integer:
 * FA_OK, else FA_ERR_OVERFLOW (FA_ERR_BAD_STRIDE for a negative stride),
 * with a message naming @p op and the tensor @p name. An empty shape reads
 * nothing.
 */
FA_MUST_CHECK fa_status fa_view_require_extent(const char *op, const char *name,
                                               const fa_tensor_view *t, int64_t batch,
                                               int64_t heads, int64_t rows, int64_t dim);

/** One attention forward problem: shapes, scale, mask and the inputs. */
typedef struct fa_attn_problem {
    int64_t batch, heads_q, heads_kv, nq, nk, head_dim;
    double scale;               /**< multiplies q.k; 1/sqrt(head_dim) usually */
    fa_mask mask;
    const int64_t *key_length;  /**< optional [batch]: keys j >= key_length[b] are padding (masked) */
    fa_tensor_view q;           /**< [B][Hq][Nq][D] through strides */
    fa_tensor_view k;           /**< [B][Hkv][Nk][D]; query head h reads kv head h / (Hq / Hkv) */
    fa_tensor_view v;           /**< [B][Hkv][Nk][D] */
    int64_t window_left;        /**< FA_MASK_WINDOW's extents (fa_sliding_window()), each >= -1; */
    int64_t window_right;       /**< ignored by the other masks */
    /**
     * Optional [nq]: the problem holds a sample of the query rows of a call
     * of sample_nq rows, its row r being the call's row sample_rows[r]; the
     * mask reads the call's rows and nq (a long call judged on some rows).
     */
    const int64_t *sample_rows;
    int64_t sample_nq;
} fa_attn_problem;

/**
 * The sizes of @p p multiply without overflow into arrays of doubles a
 * reference allocates: *@p rows = B Hq Nq and *@p elements = B Hq Nq D, and
 * Nk D and Nk FA_BOUND_SCRATCH_PER_KEY, each within fa_max_elements(8).
 * Else FA_ERR_OVERFLOW naming @p op and the product (fa_ref_elements()).
 * Sizes must be >= 0.
 */
FA_MUST_CHECK fa_status fa_attn_require_sizes(const char *op, const fa_attn_problem *p,
                                              int64_t *rows, int64_t *elements);

/**
 * FA_OK when @p mask is a mask @p op runs, FA_MASK_NONE up to @p most in the
 * order of ::fa_mask (the prefix masks first, then the window): else
 * FA_ERR_INVALID_ARGUMENT when @p mask is no fa_mask at all, and
 * FA_ERR_UNSUPPORTED, naming what @p op runs, when it is one beyond @p most.
 */
FA_MUST_CHECK fa_status fa_require_mask(const char *op, fa_mask mask, fa_mask most);

/**
 * FA_OK unless @p mask is FA_MASK_WINDOW with @p left or @p right below -1:
 * then FA_ERR_INVALID_ARGUMENT naming @p op and both extents (the other
 * masks ignore them).
 */
FA_MUST_CHECK fa_status fa_require_window(const char *op, fa_mask mask, int64_t left, int64_t right);

/** Row @p i of @p p as its mask sees it: the call's row of a sample (sample_rows), else i. */
static inline int64_t fa_attn_row(const fa_attn_problem *p, int64_t i)
{
    return p->sample_rows != NULL ? p->sample_rows[i] : i;
}

/** The band of @p p's mask (fa_mask.h): fa_sliding_window() or fa_mask_window(). */
fa_key_window fa_attn_band(const fa_attn_problem *p);

/**
 * The most keys one row of @p p spans, first allowed to last (mask and key
 * padding); for a sample, the most of any row of its call.
 */
int64_t fa_attn_longest_row(const fa_attn_problem *p);

/** True when key @p j is visible to row @p i of batch @p b (mask, key padding, and a sample's rows). */
bool fa_attn_allows(const fa_attn_problem *p, int64_t b, int64_t i, int64_t j);

/** How the products q.k and p.v are accumulated. */
typedef enum fa_accumulation {
    FA_ACCUM_FP32 = 0,        /**< fp32 FMA in some order: gamma_K */
    FA_ACCUM_TENSOR_CORE = 1  /**< tensor cores: align to the largest term and truncate */
} fa_accumulation;

/** How exp is evaluated. */
typedef enum fa_exp_method {
    FA_EXP_EXPF = 0,          /**< expf(x): 2 ulp */
    FA_EXP_EXP2_PRESCALED = 1,/**< exp2f(x * log2 e) with the scale folded into one FFMA: 2 ulp of exp2 */
    FA_EXP_FAST = 2           /**< __expf(x): (2.5 + floor(1.173 |x|)) * 2 ulp */
} fa_exp_method;

/** How o is divided by l at the end. */
typedef enum fa_normalisation {
    FA_NORM_DIVIDE = 0,       /**< o / l: 0.5 ulp */
    FA_NORM_RECIPROCAL = 1    /**< o * rcp.approx(l): 4u in total */
} fa_normalisation;

/**
 * The methods a kernel declares. A zero-initialised method is the definition
 * computed naively in fp32 (expf, division, P kept fp32, no blocking).
 */
typedef struct fa_attn_method {
    fa_dtype input_dtype;         /**< dtype of q, k, v as the kernel reads them */
    fa_accumulation accumulation;
    int64_t block_n;              /**< 0: softmax over the whole row; > 0: online softmax over key blocks of this size */
    fa_dtype p_dtype;             /**< FA_F32: P stays fp32; FA_BF16 / FA_F16: P rounded before P.V */
    bool l_from_rounded_p;        /**< l sums the rounded P (else the unrounded one, FlashAttention-2's choice) */
    fa_exp_method exp_method;
    fa_normalisation normalisation;
    fa_dtype output_dtype;        /**< dtype the kernel stores o in */
} fa_attn_method;

/** The reference and the bound of one problem under one method (all [B][Hq][Nq]...). */
typedef struct fa_attn_reference {
    int64_t batch, heads, rows, dim;
    double *o;          /**< [B][Hq][Nq][D]: the exact (double) output */
    double *o_bound;    /**< [B][Hq][Nq][D]: bound on |o_kernel - o| for the method */
    double *lse;        /**< [B][Hq][Nq]: natural log; -inf on rows with no allowed key */
    double *lse_bound;  /**< [B][Hq][Nq] */
} fa_attn_reference;

/**
 * Validates @p p (sizes >= 0, Hq a multiple of Hkv, non-NULL data when sizes
 * are positive, finite scale) and computes the reference and bound of every
 * output element for method @p m. Allocates the arrays of @p out (free them
 * with fa_attn_reference_free()). Zero sizes give empty arrays.
 *
 * Refuses, with nothing allocated: sizes whose products (B Hq Nq D, the
 * views' last elements, Nk D) overflow a 64-bit byte offset
 * (FA_ERR_OVERFLOW); rows too long for a finite bound
 * (fa_bound_row_supported(): FA_ERR_UNSUPPORTED, "gamma_n with n*u >= 1 ...").
 * A row whose scores are too large for a finite bound is refused too
 * (FA_ERR_UNSUPPORTED, naming the row), and @p out is then left empty: a
 * reference never carries an infinite or NaN bound where it is finite.
 */
FA_MUST_CHECK fa_status fa_attention_reference(const fa_attn_problem *p, const fa_attn_method *m,
                                               fa_attn_reference *out);

/** Frees the arrays of @p r and zeroes it. */
void fa_attn_reference_free(fa_attn_reference *r);

/**
 * Judges a kernel's o ([B][Hq][Nq][D] contiguous fp32, widened if the kernel
 * stored bf16/fp16) and optional lse ([B][Hq][Nq]) against @p ref. Either
 * report may be NULL. Returns true when both are covered.
 */
bool fa_attention_covers(const fa_attn_reference *ref, const float *o, const float *lse,
                         fa_check_report *o_report, fa_check_report *lse_report);

#ifdef __cplusplus
}
#endif

#endif /* FA_ATTENTION_REF_H */
