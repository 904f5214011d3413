/**
 * @file model.h
 * @brief CPU model of the stage-03 kernels in their arithmetic order, and the
 *        memory traffic of the naive pipeline, counted.
 *
 * The scores and the PV product are FMA chains in index order, as in the
 * kernels, so the model equals the GPU bit for bit there. The softmax
 * replays the kernel's reduction (each of SOFTMAX_ROWS_THREADS threads sums
 * its strided slice in order, then the block tree of common/fa_kernel.cuh: a
 * butterfly in each warp, then one over the warp totals) and takes its max
 * with fa_max_nan() as the kernel does, but evaluates exp and log with the
 * host's libm, whose last bits differ from CUDA's: it is judged, like the
 * GPU, by the bound. The allowed keys of a row come from fa_mask_key_range(),
 * the function the kernels call.
 *
 * Host arrays use the layouts of attention.h; bf16 and fp16 inputs are
 * uint16_t bit patterns. key_length is a host array here.
 */
#ifndef NAIVE_ATTENTION_MODEL_H
#define NAIVE_ATTENTION_MODEL_H

#include <stdint.h>

#include "attention.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Elements of q and o: batch * heads * nq * head_dim (sizes the validation accepted). */
static inline int64_t attn_count_q(naive_attn_dims d)
{
    return d.batch * d.heads * d.nq * d.head_dim;
}

/** Elements of k and v: batch * heads * nk * head_dim. */
static inline int64_t attn_count_kv(naive_attn_dims d)
{
    return d.batch * d.heads * d.nk * d.head_dim;
}

/** Elements of s and p: batch * heads * nq * nk. */
static inline int64_t attn_count_s(naive_attn_dims d)
{
    return d.batch * d.heads * d.nq * d.nk;
}

/** Elements of lse, the rows of every head: batch * heads * nq. */
static inline int64_t attn_count_rows(naive_attn_dims d)
{
    return d.batch * d.heads * d.nq;
}

/**
 * Keys row @p i of batch @p b may see: every mask of the course allows a
 * prefix 0 .. count-1 of the keys, and this is its count: the end of
 * fa_mask_key_range(), cut at key_length[b] (a negative length counts as 0)
 * when @p key_length is not NULL, as the kernels compute it.
 */
int64_t attn_model_allowed_keys(fa_mask mask, const int64_t *key_length, int64_t b, int64_t i,
                                int64_t nq, int64_t nk);

/** M9 in fp32: s = naive_attn_scale(scale) * (fmaf chain over d of q k). */
void attn_model_scores(const void *q, const void *k, fa_dtype dtype, naive_attn_dims dims,
                       float scale, float *s);

/**
 * M10 in fp32, three passes per row as the kernel; @p p may equal @p s;
 * @p lse may be NULL.
 */
void attn_model_softmax(const float *s, float *p, float *lse, naive_attn_dims dims, fa_mask mask,
                        const int64_t *key_length);

/**
 * M11 in fp32: o = fmaf chain over the allowed keys j (in order) of p v, as the
 * kernel; FA_MASK_NONE with no key_length is the plain matmul over every key.
 */
void attn_model_pv(const float *p, const void *v, fa_dtype dtype, naive_attn_dims dims,
                   fa_mask mask, const int64_t *key_length, float *o);

/**
 * M12: the three steps above through a host score matrix.
 * @return FA_OK; FA_ERR_OUT_OF_MEMORY when the score matrix cannot be allocated.
 */
fa_status attn_model_naive(const void *q, const void *k, const void *v, fa_dtype dtype,
                           naive_attn_dims dims, float scale, fa_mask mask,
                           const int64_t *key_length, float *o, float *lse);

/**
 * Bytes of device memory one call of the naive pipeline reads and writes,
 * counted at the level of the algorithm: each kernel reads each input once
 * and writes each output once, except that the softmax reads its row of S in
 * each of its three passes. (The tiled kernels re-read tiles of Q, K and V,
 * mostly from L2; the softmax's re-reads may hit L2 too: the count is what
 * the algorithm asks of memory, which a cache can only lower.)
 */
typedef struct attn_naive_traffic {
    int64_t scores;  /**< read q, k; write S */
    int64_t softmax; /**< read S three times; write P over it; write lse */
    int64_t pv;      /**< read P, v; write o */
    int64_t total;   /**< the sum of the three */
    int64_t minimum; /**< read q, k, v once and write o, lse once: what a fused kernel moves */
} attn_naive_traffic;

/** The traffic of ref_attn_naive() on @p dims with no mask (a mask lowers the softmax reads). */
attn_naive_traffic attn_naive_traffic_bytes(naive_attn_dims dims, fa_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif /* NAIVE_ATTENTION_MODEL_H */
