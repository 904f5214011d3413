/**
 * @file attention.h
 * @brief Stage 03 API: M9 QK^T scores, M10 row softmax, M11 PV matmul and
 *        M12 naive attention (the lesson is \ref stage03).
 *
 * Every kernel has two launchers with one signature: `ref_<op>` (the
 * reference kernels of attention.cu) and `learner_<op>` (the learner's, of
 * learner/attention.cu). Both are the same launch code, harness/launch.cu,
 * compiled once against each kernel file (common/fa_launch.cuh): they call
 * `<op>_validate()` before touching the GPU, return FA_OK at once for
 * zero-size work, and enqueue their work on the given stream without waiting
 * for it (a fault inside a kernel surfaces at the next synchronising call).
 * The validation functions are plain C, so bad input is tested on machines
 * without a GPU.
 *
 * Layouts (all dense, row-major, element offsets computed in 64 bits):
 * - q: [batch][heads][nq][head_dim], k and v: [batch][heads][nk][head_dim],
 *   of one ::fa_dtype: fp32, or bf16 / fp16 carried as uint16_t bit patterns;
 * - scores s and probabilities p: [batch][heads][nq][nk] fp32;
 * - o: [batch][heads][nq][head_dim] fp32; lse: [batch][heads][nq] fp32.
 * Query head h reads key/value head h: grouped-query attention (fewer kv
 * heads) is left to the fused kernels of later stages.
 *
 * Masks (::fa_mask, common/fa_mask.h): none; causal top-left (key j <= row i,
 * PyTorch's is_causal); causal bottom-right (j <= i + nk - nq,
 * FlashAttention's causal). Row i's allowed keys are those of
 * fa_mask_key_range(), in the kernels, the CPU model and the references
 * alike. Independently, an optional device array key_length[batch] marks keys
 * j >= key_length[b] of batch b as padding; values outside [0, nk] act as if
 * clamped to it. key_length goes with no mask or with top-left causal only:
 * bottom-right with key_length is refused (::FA_ERR_UNSUPPORTED), because
 * here bottom-right aligns the last query row to key nk - 1, whereas
 * FlashAttention's variable-length attention aligns it to each sequence's own
 * last key, key_length[b] - 1; accepting the pair would silently give a
 * different mask from the one its users expect. Every one of these masks
 * allows a prefix of the keys of a row, which the kernels exploit: a row
 * reads exactly its allowed keys and nothing else.
 *
 * NaN and Inf in v (the rule of fa_attention_ref.h): the row of v of an
 * allowed key always reaches o, whatever its weight, even one that
 * underflowed to 0 (0 * NaN = NaN); the row of a masked key never does, so
 * padding may hold anything.
 *
 * NaN in the scores (the course's one NaN policy, common/fa_math.h): the row
 * max keeps a NaN (fa_max_nan(), never `fmaxf`, which drops it), so a NaN
 * among a row's allowed scores makes that row's max, p and lse NaN.
 *
 * Rules shared by every launcher:
 * - pointers are device pointers; NULL is accepted only where the array is
 *   empty; each needs the alignment of its element (4 bytes for fp32, 2 for
 *   bf16/fp16, 8 for key_length), since the kernels load scalars;
 * - outputs must not overlap inputs, key_length included
 *   (::FA_ERR_INVALID_ARGUMENT), except that the softmax may run in place
 *   (p == s exactly);
 * - head_dim is 1 .. ::NAIVE_ATTN_MAX_HEAD_DIM (::FA_ERR_UNSUPPORTED
 *   otherwise), every other size any value >= 0 whose tensors' byte sizes
 *   fit a signed 64-bit offset (::FA_ERR_OVERFLOW otherwise);
 * - scale = 0 selects the default 1/sqrt(head_dim) (see naive_attn_scale()).
 * A failing call returns a status and records a message that names the
 * argument, its value and what was expected (see fa_last_error()).
 */
#ifndef NAIVE_ATTENTION_H
#define NAIVE_ATTENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fa_half.h"
#include "fa_mask.h"
#include "fa_status.h"

#if defined(FA_HAVE_CUDA) || defined(__CUDACC__)
#include <cuda_runtime_api.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Launch shapes and limits of the stage, shared by the kernels, the launch
 * code (harness/launch.cu) and the CPU model.
 */
enum {
    /** Scores and PV: a block of TILE x TILE threads computes a TILE x TILE output tile. */
    NAIVE_ATTN_TILE = 32,
    /** Softmax: threads per block, one block per row (whole warps, a power of two). */
    SOFTMAX_ROWS_THREADS = 256,
    /** The largest head dimension the stage accepts (the course's API limit). */
    NAIVE_ATTN_MAX_HEAD_DIM = 256
};

/** Sizes of one attention problem (the layouts are in the file comment). */
typedef struct naive_attn_dims {
    int64_t batch;    /**< B */
    int64_t heads;    /**< H: query heads, and key/value heads alike */
    int64_t nq;       /**< query rows per head */
    int64_t nk;       /**< key (and value) rows per head */
    int64_t head_dim; /**< D, 1 .. ::NAIVE_ATTN_MAX_HEAD_DIM; the softmax does not read it */
} naive_attn_dims;

/**
 * The scale the kernels multiply q.k by: @p scale itself, or
 * 1/sqrt(head_dim) rounded to the nearest float when @p scale is 0. The
 * double reference uses this same float, so that the rounding of the default
 * scale is part of the problem and not an error of the kernel.
 */
float naive_attn_scale(float scale, int64_t head_dim);

/* ---- validation (plain C, no CUDA: tested on the CPU) ------------------------------------ */

/**
 * The size checks every validation below starts with, on their own: no size
 * negative (::FA_ERR_INVALID_SIZE), head_dim in 1 .. ::NAIVE_ATTN_MAX_HEAD_DIM
 * when @p reads_head_dim (::FA_ERR_UNSUPPORTED), and the bytes of every
 * tensor within a signed 64-bit offset (::FA_ERR_OVERFLOW): batch * heads *
 * nq * nk, batch * heads * nq and, when @p reads_head_dim, batch * heads *
 * nq * head_dim and batch * heads * nk * head_dim elements, each at most
 * fa_max_elements(4). The message starts with @p op, the launcher's name.
 */
fa_status naive_attn_dims_validate(const char *op, naive_attn_dims dims, bool reads_head_dim);

/**
 * Checks the arguments of ref_attn_scores() / learner_attn_scores().
 * @return FA_OK; FA_ERR_INVALID_SIZE for a negative size; FA_ERR_UNSUPPORTED
 *         for head_dim outside 1 .. ::NAIVE_ATTN_MAX_HEAD_DIM; FA_ERR_OVERFLOW
 *         when the bytes of a tensor overflow int64 (at most
 *         fa_max_elements(4) elements of each: a count of fp32 elements
 *         decides, whatever the dtype); FA_ERR_INVALID_ARGUMENT for
 *         a dtype outside ::fa_dtype, a scale that is not finite, or s
 *         overlapping q or k; FA_ERR_NULL_POINTER for a NULL array that has
 *         elements; FA_ERR_MISALIGNED for a pointer not aligned to its element.
 */
fa_status attn_scores_validate(const void *q, const void *k, const float *s, fa_dtype dtype,
                               naive_attn_dims dims, float scale);

/**
 * Checks the arguments of ref_softmax_rows() / learner_softmax_rows()
 * (head_dim is not read). @p lse and @p key_length may be NULL.
 * @return FA_OK; FA_ERR_INVALID_SIZE for a negative size; FA_ERR_OVERFLOW
 *         when the bytes of a tensor (or of key_length, batch * 8) overflow
 *         int64; FA_ERR_UNSUPPORTED for causal bottom-right together with
 *         key_length (see the file comment); FA_ERR_INVALID_ARGUMENT for a
 *         mask outside ::fa_mask, p overlapping s other than p == s, or an
 *         output (p, lse) overlapping an input (s, key_length) or the other
 *         output; FA_ERR_NULL_POINTER for a NULL s or p that has elements;
 *         FA_ERR_MISALIGNED for a pointer not aligned to its element.
 */
fa_status softmax_rows_validate(const float *s, const float *p, const float *lse,
                                naive_attn_dims dims, fa_mask mask, const int64_t *key_length);

/**
 * Checks the arguments of ref_attn_pv() / learner_attn_pv().
 * @return as attn_scores_validate(), for p, v (inputs) and o (output).
 */
fa_status attn_pv_validate(const float *p, const void *v, const float *o, fa_dtype dtype,
                           naive_attn_dims dims);

/**
 * Checks the arguments of ref_attn_naive() / learner_attn_naive(): those of
 * the three steps, with the outputs o and lse checked against the inputs q,
 * k, v and key_length and against each other (so causal bottom-right with
 * key_length is ::FA_ERR_UNSUPPORTED here too).
 */
fa_status attn_naive_validate(const void *q, const void *k, const void *v, const float *o,
                              const float *lse, fa_dtype dtype, naive_attn_dims dims,
                              float scale, fa_mask mask, const int64_t *key_length);

/**
 * Device memory the naive attention needs besides its inputs and outputs:
 * one fp32 score matrix per head, batch * heads * nq * nk * 4 bytes (the
 * softmax overwrites the scores with the probabilities in place). For B = 1,
 * H = 16 and nq = nk = 4096 that is exactly 1 GiB; it grows as N^2.
 * @param dims   the problem (head_dim is not read).
 * @param bytes  receives the byte count.
 * @return FA_OK; FA_ERR_NULL_POINTER for a NULL @p bytes; FA_ERR_INVALID_SIZE
 *         for a negative size; FA_ERR_OVERFLOW when the count overflows.
 */
fa_status attn_naive_workspace_bytes(naive_attn_dims dims, size_t *bytes);

/* ---- launchers (need the CUDA runtime) ---------------------------------------------------- */

#if defined(FA_HAVE_CUDA) || defined(__CUDACC__)

/**
 * M9 scores: s[b][h][i][j] = scale * sum_d q[b][h][i][d] * k[b][h][j][d].
 *
 * @param q       device [batch][heads][nq][head_dim] of @p dtype.
 * @param k       device [batch][heads][nk][head_dim] of @p dtype.
 * @param s       device [batch][heads][nq][nk] fp32; every element is written,
 *                masked or not (masking is the softmax's job).
 * @param dtype   element type of q and k; bf16 and fp16 are widened to fp32,
 *                so their products are exact and only the sums round.
 * @param dims    sizes; nq != nk is fine; nq = 0 or nk = 0 is an empty problem.
 * @param scale   multiplies each dot product; 0 selects 1/sqrt(head_dim).
 * @param stream  stream the kernel is enqueued on.
 *
 * Each score is one fp32 fused multiply-add chain over d = 0 .. head_dim-1 in
 * order, then one multiplication by the scale, so its error is at most
 * scale gamma_D sum_d |q_d k_d| (1 + u) + u |s| and it equals the CPU model
 * attn_model_scores() bit for bit. NaN or Inf in q or k propagate to the
 * scores of their row or column.
 */
fa_status ref_attn_scores(const void *q, const void *k, float *s, fa_dtype dtype,
                          naive_attn_dims dims, float scale, cudaStream_t stream);
/** @copydoc ref_attn_scores */
fa_status learner_attn_scores(const void *q, const void *k, float *s, fa_dtype dtype,
                              naive_attn_dims dims, float scale, cudaStream_t stream);

/**
 * M10 row softmax in three passes over the allowed keys of each row:
 * m = max_j s_j, l = sum_j exp(s_j - m), p_j = exp(s_j - m) / l, and
 * lse = m + ln l (natural log).
 *
 * @param s           device [batch][heads][nq][nk] fp32 scores.
 * @param p           device [batch][heads][nq][nk] fp32; every element is
 *                    written, masked keys with 0. May be @p s itself (in place).
 * @param lse         device [batch][heads][nq] fp32, or NULL when not wanted.
 * @param dims        sizes (head_dim is not read); nk = 0 gives lse = -inf.
 * @param mask        which keys a row may see (none or one causal alignment).
 * @param key_length  NULL, or device int64 [batch]: keys j >= key_length[b]
 *                    are masked too; not with causal bottom-right (see the
 *                    file comment). Masked scores are never read, so they
 *                    may hold anything.
 * @param stream      stream the kernel is enqueued on.
 *
 * A row with no allowed key, or whose allowed scores are all -inf, gets
 * p = 0 and lse = -inf, never NaN. A NaN among the allowed scores makes the
 * row's max NaN (fa_max_nan(), the course's max), hence its p and lse; +inf
 * does too (exp(inf - inf) is NaN). A NaN in a masked score is never read.
 */
fa_status ref_softmax_rows(const float *s, float *p, float *lse, naive_attn_dims dims,
                           fa_mask mask, const int64_t *key_length, cudaStream_t stream);
/** @copydoc ref_softmax_rows */
fa_status learner_softmax_rows(const float *s, float *p, float *lse, naive_attn_dims dims,
                               fa_mask mask, const int64_t *key_length, cudaStream_t stream);

/**
 * M11 PV matmul: o[b][h][i][c] = sum_j p[b][h][i][j] * v[b][h][j][c].
 *
 * @param p       device [batch][heads][nq][nk] fp32 weights.
 * @param v       device [batch][heads][nk][head_dim] of @p dtype.
 * @param o       device [batch][heads][nq][head_dim] fp32; every element is
 *                written (nk = 0 writes zeros).
 * @param dtype   element type of v.
 * @param dims    sizes; nq = 0 is an empty problem.
 * @param stream  stream the kernel is enqueued on.
 *
 * Each output is one fp32 FMA chain over j = 0 .. nk-1 in order (error at
 * most gamma_nk sum_j |p_j v_jc|; equal bit for bit to attn_model_pv() with no
 * mask). This is a plain matmul: every term is added, weight 0
 * included, so a NaN or Inf anywhere in column c of v makes column c of every
 * row of o NaN or Inf. Masking is M12's business: there the same kernel sums
 * only the keys the softmax allowed, so padding in v is never multiplied.
 */
fa_status ref_attn_pv(const float *p, const void *v, float *o, fa_dtype dtype,
                      naive_attn_dims dims, cudaStream_t stream);
/** @copydoc ref_attn_pv */
fa_status learner_attn_pv(const float *p, const void *v, float *o, fa_dtype dtype,
                          naive_attn_dims dims, cudaStream_t stream);

/**
 * M12 naive attention: o = softmax(scale q k^T, masked) v and lse, composed
 * of M9, M10 (in place) and M11 through a score matrix in device memory. It
 * has no kernel of its own: the learner's twin runs the learner's three
 * kernels, and returns ::FA_ERR_NOT_IMPLEMENTED while FA_TODO(12) or the
 * marker of any of M9-M11 is still in learner/attention.cu.
 *
 * @param q, k, v     device inputs as for ref_attn_scores() and ref_attn_pv().
 * @param o           device [batch][heads][nq][head_dim] fp32.
 * @param lse         device [batch][heads][nq] fp32 natural-log
 *                    log-sum-exp, or NULL when not wanted.
 * @param dtype       element type of q, k and v.
 * @param dims        sizes, any values (head_dim 1 .. ::NAIVE_ATTN_MAX_HEAD_DIM).
 * @param scale       0 selects 1/sqrt(head_dim).
 * @param mask        as for ref_softmax_rows().
 * @param key_length  as for ref_softmax_rows().
 * @param stream      stream everything is enqueued on.
 *
 * The launcher allocates its workspace itself, attn_naive_workspace_bytes()
 * of it, with cudaMallocAsync on @p stream, and frees it with cudaFreeAsync
 * after the last kernel, so the call stays asynchronous and back-to-back
 * calls reuse the pool's memory. When the allocation cannot be satisfied it
 * returns ::FA_ERR_OUT_OF_MEMORY, with the bytes needed and the bytes free
 * (cudaMemGetInfo) in the message, before any kernel runs: o and lse are
 * left untouched. A row with no allowed key gets o = 0 and lse = -inf.
 * The P.V step sums exactly the allowed keys of each row, weights of 0
 * included: a NaN or Inf in an allowed row of v reaches o, one in a masked
 * row (padding, or a key after the causal limit) never does.
 */
fa_status ref_attn_naive(const void *q, const void *k, const void *v, float *o, float *lse,
                         fa_dtype dtype, naive_attn_dims dims, float scale, fa_mask mask,
                         const int64_t *key_length, cudaStream_t stream);
/** @copydoc ref_attn_naive */
fa_status learner_attn_naive(const void *q, const void *k, const void *v, float *o, float *lse,
                             fa_dtype dtype, naive_attn_dims dims, float scale, fa_mask mask,
                             const int64_t *key_length, cudaStream_t stream);

#endif /* FA_HAVE_CUDA || __CUDACC__ */

#ifdef __cplusplus
}
#endif

#endif /* NAIVE_ATTENTION_H */
