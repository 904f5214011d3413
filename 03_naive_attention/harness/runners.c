/** @file runners.c @brief The stage-03 launchers by implementation, and timed problems. */
#include "runners.h"

#include <string.h>

#include "fa_device.h"
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

fa_status naive_timed_alloc(naive_timed_problem *tp, naive_attn_dims dims, fa_dtype dtype,
                            fa_mask mask, bool with_scores, uint64_t seed)
{
    memset(tp, 0, sizeof *tp);
    tp->dims = dims;
    tp->dtype = dtype;
    tp->mask = mask;
    const size_t size = (size_t)fa_dtype_size(dtype);
    void **inputs[] = {&tp->q, &tp->k, &tp->v};
    const int64_t counts[] = {attn_count_q(dims), attn_count_kv(dims), attn_count_kv(dims)};
    fa_status status = FA_OK;
    for (int i = 0; i < 3 && status == FA_OK; ++i) {
        status = fa_device_alloc(inputs[i], (size_t)counts[i] * size);
        if (status == FA_OK) /* the same values in q, k and v, as a seed gives them */
            status = fa_device_fill_normal(*inputs[i], dtype, counts[i], seed);
    }
    if (status == FA_OK)
        status = fa_device_alloc((void **)&tp->o, (size_t)attn_count_q(dims) * sizeof(float));
    if (status == FA_OK)
        status =
            fa_device_alloc((void **)&tp->lse, (size_t)attn_count_rows(dims) * sizeof(float));
    if (status == FA_OK && with_scores)
        status = fa_device_alloc((void **)&tp->s, (size_t)attn_count_s(dims) * sizeof(float));
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
