/**
 * @file model.h
 * @brief CPU model of the stage-04 kernels: the same fp32 operations in the
 *        same order, chunk by chunk and merge by merge.
 *
 * Each function of online_state.cuh has its fp32 twin here, and the kernels'
 * loops are replayed with them (every max by fa_max_nan(), the kernels' max,
 * which the host computes to the same bits, NaN included): the traces chunk
 * by chunk, the one-pass softmax thread by thread with the block's merge
 * butterfly, attention key chunk by key chunk with the warp's lane sums. Products and sums are separate
 * roundings and fused ones are written `fmaf`, as in the kernels (the build
 * compiles C in ISO mode, where the compiler does not fuse a * b + c on its
 * own, and each product is its own statement).
 *
 * What agrees bit for bit with the GPU: the running max (no rounding at all)
 * and every result that involves no exp or log. The rest cannot: the host's
 * `expf` and `logf` differ from CUDA's in the last ulps. The model is judged
 * by the same bound as the kernels, and the checks compare the two through
 * the double reference (reference.h); the correction factor, one exp of an
 * argument both compute identically, is compared directly within the two
 * libraries' exp budgets.
 *
 * For the tests that prove the bounds reject real bugs, the trace replay can
 * also make one of the classic mistakes on purpose (::online_mistake).
 */
#ifndef ONLINE_MODEL_H
#define ONLINE_MODEL_H

#include <stdint.h>

#include "online.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest thread count of a modelled merge tree, and its number of levels. */
enum { ONLINE_MODEL_MAX_THREADS = 1024, ONLINE_MODEL_MAX_LEVELS = 10 };

/** The fp32 state of one row, as online_state in online_state.cuh. */
typedef struct online_model_state {
    float max; /**< m: the largest entry seen, -inf before any allowed entry */
    float sum; /**< l = sum exp(x - m) over the entries seen */
} online_model_state;

/** (m, l) = (-inf, 0): the state before any entry. */
online_model_state online_model_state_empty(void);

/** M13: fa_max_nan(max_old, chunk_max): NaN kept, as every max of the course. */
float online_model_running_max(float max_old, float chunk_max);

/** M14: expf(max_old - fa_max_offset(max_new)). */
float online_model_correction(float max_old, float max_new);

/** expf(x - fa_max_offset(max)): the weight of an entry, 0 when masked. */
float online_model_weight(float x, float max);

/** M15: fmaf(alpha, sum, chunk_sum). */
float online_model_update_sum(float sum, float alpha, float chunk_sum);

/** M16: fmaf(alpha, out, chunk_out). */
float online_model_rescale_output(float out, float alpha, float chunk_out);

/** The merge of two states, as online_merge(): two rounded products, one rounded sum. */
online_model_state online_model_merge(online_model_state a, online_model_state b, float *alpha_a,
                                      float *alpha_b);

/** out_a alpha_a + out_b alpha_b with both products rounded on their own. */
float online_model_merge_output(float out_a, float alpha_a, float out_b, float alpha_b);

/** out / sum, or 0 when sum = 0 (a row with no allowed entry). */
float online_model_normalise(float out, float sum);

/** m + logf(l), or -inf when l = 0. */
float online_model_lse(online_model_state state);

/** A classic mistake the trace replay can make on purpose. */
typedef enum online_mistake {
    ONLINE_NO_MISTAKE = 0,
    ONLINE_MISTAKE_SUM_NOT_RESCALED,    /**< l' = l + s: old terms keep the old max */
    ONLINE_MISTAKE_OUTPUT_NOT_RESCALED, /**< o' = o + w */
    ONLINE_MISTAKE_CORRECTION_INVERTED, /**< alpha = exp(m_new - m_old) */
    ONLINE_MISTAKE_MAX_STARTS_AT_ZERO,  /**< m starts at 0 instead of -inf */
    ONLINE_MISTAKE_NO_INF_GUARD,        /**< subtracts m = -inf itself: (-inf) - (-inf) = NaN */
    ONLINE_MISTAKE_COUNT
} online_mistake;

/** Short name of @p mistake, e.g. "sum not rescaled". */
const char *online_mistake_name(online_mistake mistake);

/**
 * The trace kernel of M13-M16 on one row: chunks of @p chunk entries in
 * order; after chunk t writes m_t, alpha_t, l_t and o_t into whichever of
 * @p max_trace, @p correction_trace, @p sum_trace, @p output_trace is not NULL
 * (each [online_chunk_count(n, chunk)]). @p v (the values, [n]) may be NULL
 * when @p output_trace is. @p mistake = ONLINE_NO_MISTAKE is the kernel.
 */
void online_model_trace_row(const float *x, const float *v, int64_t n, int64_t chunk,
                            online_mistake mistake, float *max_trace, float *correction_trace,
                            float *sum_trace, float *output_trace);

/**
 * The order in which a block of @p threads (a power of two, 1 ..
 * ONLINE_MODEL_MAX_THREADS) merges its threads' states, as xor masks of the
 * thread index: first the butterfly inside a warp (16, 8, 4, 2, 1, or fewer
 * for fewer than 32 threads), then the butterfly over the warps' states (for
 * 256 threads: 128, 64, 32). Writes the masks into @p masks and returns how
 * many there are (log2 threads).
 */
int online_merge_masks(int threads, int masks[ONLINE_MODEL_MAX_LEVELS]);

/**
 * The one-pass softmax of one row with any geometry: @p threads threads (a
 * power of two, 1 .. ONLINE_MODEL_MAX_THREADS), each folding @p chunk
 * strided entries per update (thread t's update c reads entries
 * c * threads * chunk + t + i * threads, i < chunk), then the merges of
 * online_merge_masks(), then p = weight / l and lse. The kernel's geometry is
 * threads = softmax_rows_online_threads(n), chunk = ::SOFTMAX_ONLINE_CHUNK;
 * other geometries are the same algorithm with other rounding, for the
 * invariance tests. @p lse may be NULL.
 */
void online_model_softmax_row(const float *x, int64_t n, int threads, int chunk, float *p,
                              float *lse);

/** softmax_rows_online on host arrays, row by row, the kernel's geometry; @p lse may be NULL. */
void online_model_softmax_rows(const float *x, float *p, float *lse, int64_t rows, int64_t n);

/**
 * attn_rows_online on host arrays: @p args as for the kernel, its pointers on
 * the host (o and lse written, lse may be NULL). The arguments must be valid
 * (attn_rows_online_validate()).
 */
void online_model_attn_rows(const attn_online_args *args);

#ifdef __cplusplus
}
#endif

#endif /* ONLINE_MODEL_H */
