/**
 * @file runners.h
 * @brief The stage-03 launchers of either implementation, and one attention
 *        problem on the device for timing: what the checks, the timings and
 *        the benchmark share. Built only with CUDA.
 */
#ifndef NAIVE_ATTENTION_RUNNERS_H
#define NAIVE_ATTENTION_RUNNERS_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "attention.h"
#include "fa_stage.h"
#include "fa_stats.h"
#include "fa_timing.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef fa_status (*scores_launcher)(const void *, const void *, float *, fa_dtype,
                                     naive_attn_dims, float, cudaStream_t);
typedef fa_status (*softmax_launcher)(const float *, float *, float *, naive_attn_dims, fa_mask,
                                      const int64_t *, cudaStream_t);
typedef fa_status (*pv_launcher)(const float *, const void *, float *, fa_dtype,
                                 naive_attn_dims, cudaStream_t);
typedef fa_status (*naive_launcher)(const void *, const void *, const void *, float *, float *,
                                    fa_dtype, naive_attn_dims, float, fa_mask, const int64_t *,
                                    cudaStream_t);

/** M9 of @p impl: ref_attn_scores() or learner_attn_scores(). */
scores_launcher naive_scores_of(fa_impl impl);
/** M10 of @p impl. */
softmax_launcher naive_softmax_of(fa_impl impl);
/** M11 of @p impl. */
pv_launcher naive_pv_of(fa_impl impl);
/** M12 of @p impl. */
naive_launcher naive_attention_of(fa_impl impl);

/**
 * One attention problem on the device for timing: random inputs of one dtype
 * (a normal(0, 1) pattern repeated, never zeros: zeros can time faster), the
 * outputs, and the score matrix s when the steps are timed on their own.
 */
typedef struct naive_timed_problem {
    naive_attn_dims dims;
    fa_dtype dtype;
    fa_mask mask;        /**< the softmax's and M12's mask (no padding) */
    void *q, *k, *v;
    float *s, *o, *lse;  /**< s: NULL when the score matrix is not wanted */
} naive_timed_problem;

/**
 * B = 1, H = 16, Nq = Nk = @p n, D = 128: the shape of the benchmark, of the
 * milestones' timings (n = 2048) and of the results in docs/performance.md.
 */
naive_attn_dims naive_timed_square_dims(int64_t n);

/**
 * Allocates and fills the inputs and outputs of @p dims (and s when
 * @p with_scores). Returns ::FA_ERR_OUT_OF_MEMORY when they do not fit.
 */
fa_status naive_timed_alloc(naive_timed_problem *tp, naive_attn_dims dims, fa_dtype dtype,
                            fa_mask mask, bool with_scores, uint64_t seed);
void naive_timed_free(naive_timed_problem *tp);

/**
 * Times milestone @p milestone (9..12) of @p impl on @p tp: M9 writes tp->s,
 * M10 runs in place on tp->s (as M12 runs it), M11 reads tp->s as P, M12 the
 * whole launcher (its workspace allocation included).
 */
fa_status naive_timed_run(fa_impl impl, int milestone, const naive_timed_problem *tp,
                          const fa_timing_options *timing, fa_stats *milliseconds);

#ifdef __cplusplus
}
#endif

#endif /* NAIVE_ATTENTION_RUNNERS_H */
