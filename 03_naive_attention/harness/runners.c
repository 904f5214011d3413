/** @file runners.c @brief The stage-03 launchers by implementation, and timed problems. */
#include "runners.h"

#include <stdlib.h>
#include <string.h>

#include "fa_device.h"
#include "fa_rng.h"
#include "model.h"

scores_launcher naive_scores_of(fa_impl impl)
{
    return impl == FA_IMPL_LEARNER ? learner_attn_scores : ref_attn_scores;
}

softmax_launcher naive_softmax_of(fa_impl impl)
{
    return impl == FA_IMPL_LEARNER ? learner_softmax_rows : ref_softmax_rows;
}

pv_launcher naive_pv_of(fa_impl impl)
{
    return impl == FA_IMPL_LEARNER ? learner_attn_pv : ref_attn_pv;
}

naive_launcher naive_attention_of(fa_impl impl)
{
    return impl == FA_IMPL_LEARNER ? learner_attn_naive : ref_attn_naive;
}

naive_attn_dims naive_timed_square_dims(int64_t n)
{
    const naive_attn_dims d = {1, 16, n, n, 128};
    return d;
}

/** Random values repeated across large inputs: filling gigabytes from the rng would take long. */
enum { PATTERN_ELEMENTS = 1 << 20 };

void naive_timed_free(naive_timed_problem *tp)
{
    fa_device_free(tp->q);
    fa_device_free(tp->k);
    fa_device_free(tp->v);
    fa_device_free(tp->s);
    fa_device_free(tp->o);
    fa_device_free(tp->lse);
    memset(tp, 0, sizeof *tp);
}

/** Uploads @p count elements of @p size bytes that repeat @p pattern. */
static fa_status upload_pattern(void *device, int64_t count, size_t size, const void *pattern)
{
    for (int64_t done = 0; done < count; done += PATTERN_ELEMENTS) {
        const int64_t n = count - done < PATTERN_ELEMENTS ? count - done : PATTERN_ELEMENTS;
        FA_TRY(fa_upload((char *)device + (size_t)done * size, pattern, (size_t)n * size));
    }
    return FA_OK;
}

fa_status naive_timed_alloc(naive_timed_problem *tp, naive_attn_dims dims, fa_dtype dtype,
                            fa_mask mask, bool with_scores, uint64_t seed)
{
    memset(tp, 0, sizeof *tp);
    tp->dims = dims;
    tp->dtype = dtype;
    tp->mask = mask;
    const size_t size = (size_t)fa_dtype_size(dtype);
    void *pattern = malloc(PATTERN_ELEMENTS * size);
    float *values = malloc(PATTERN_ELEMENTS * sizeof(float));
    fa_status status = FA_OK;
    if (pattern == NULL || values == NULL) {
        status = fa_fail(FA_ERR_OUT_OF_MEMORY, "timing: out of host memory");
    } else {
        fa_rng rng;
        fa_rng_seed(&rng, seed, 0);
        fa_fill(values, PATTERN_ELEMENTS, FA_FILL_GAUSSIAN, 1, &rng);
        for (int i = 0; i < PATTERN_ELEMENTS; ++i)
            fa_store(pattern, dtype, i, values[i]);
        void **inputs[] = {&tp->q, &tp->k, &tp->v};
        const int64_t counts[] = {attn_count_q(dims), attn_count_kv(dims), attn_count_kv(dims)};
        for (int i = 0; i < 3 && status == FA_OK; ++i) {
            status = fa_device_alloc(inputs[i], (size_t)counts[i] * size);
            if (status == FA_OK)
                status = upload_pattern(*inputs[i], counts[i], size, pattern);
        }
        if (status == FA_OK)
            status = fa_device_alloc((void **)&tp->o, (size_t)attn_count_q(dims) * sizeof(float));
        if (status == FA_OK)
            status = fa_device_alloc((void **)&tp->lse,
                                     (size_t)attn_count_rows(dims) * sizeof(float));
        if (status == FA_OK && with_scores)
            status = fa_device_alloc((void **)&tp->s, (size_t)attn_count_s(dims) * sizeof(float));
    }
    free(pattern);
    free(values);
    if (status != FA_OK)
        naive_timed_free(tp);
    return status;
}

/** What one timed repetition runs. */
typedef struct timed_work {
    fa_impl impl;
    int milestone;
    const naive_timed_problem *problem;
} timed_work;

static fa_status run_timed(void *context, int rep, cudaStream_t stream)
{
    (void)rep; /* the inputs are flushed from L2 between repetitions: no rotation needed */
    const timed_work *w = context;
    const naive_timed_problem *tp = w->problem;
    switch (w->milestone) {
    case 9:
        return naive_scores_of(w->impl)(tp->q, tp->k, tp->s, tp->dtype, tp->dims, 0, stream);
    case 10:
        return naive_softmax_of(w->impl)(tp->s, tp->s, tp->lse, tp->dims, tp->mask, NULL, stream);
    case 11:
        return naive_pv_of(w->impl)(tp->s, tp->v, tp->o, tp->dtype, tp->dims, stream);
    default:
        return naive_attention_of(w->impl)(tp->q, tp->k, tp->v, tp->o, tp->lse, tp->dtype,
                                           tp->dims, 0, tp->mask, NULL, stream);
    }
}

fa_status naive_timed_run(fa_impl impl, int milestone, const naive_timed_problem *tp,
                          const fa_timing_options *timing, fa_stats *milliseconds)
{
    timed_work work = {impl, milestone, tp};
    return fa_time_gpu(run_timed, &work, timing, milliseconds);
}
