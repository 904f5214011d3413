/** @file runners.c @brief Launches of the stage-04 kernels on host data and for timing. */
#include "runners.h"

#include <stdbool.h>
#include <stdlib.h>

#include "fa_device.h"
#include "fa_rng.h"

enum { FLOAT_BYTES = sizeof(float) };

/** Bytes of @p count floats (count >= 0: the launchers validated it, or it is a host array's). */
static size_t float_bytes(int64_t count)
{
    return (size_t)count * FLOAT_BYTES;
}

const char *online_trace_name(online_trace_op op)
{
    switch (op) {
    case ONLINE_TRACE_MAX: return "max trace";
    case ONLINE_TRACE_CORRECTION: return "correction trace";
    case ONLINE_TRACE_SUM: return "sum trace";
    case ONLINE_TRACE_OUTPUT: return "output trace";
    }
    return "trace";
}

fa_status online_launch_trace(fa_impl impl, online_trace_op op, const float *x, const float *v,
                              float *trace, int64_t rows, int64_t n, int64_t chunk,
                              cudaStream_t stream)
{
    const bool learner = impl == FA_IMPL_LEARNER;
    switch (op) {
    case ONLINE_TRACE_MAX:
        return (learner ? learner_online_max_trace : ref_online_max_trace)(x, trace, rows, n, chunk,
                                                                           stream);
    case ONLINE_TRACE_CORRECTION:
        return (learner ? learner_online_correction_trace
                        : ref_online_correction_trace)(x, trace, rows, n, chunk, stream);
    case ONLINE_TRACE_SUM:
        return (learner ? learner_online_sum_trace : ref_online_sum_trace)(x, trace, rows, n, chunk,
                                                                           stream);
    case ONLINE_TRACE_OUTPUT:
        return (learner ? learner_online_output_trace : ref_online_output_trace)(x, v, trace, rows,
                                                                                 n, chunk, stream);
    }
    return fa_fail(FA_ERR_INVALID_ARGUMENT, "stage04: unknown trace %d", (int)op);
}

fa_status online_launch_softmax(fa_impl impl, const float *x, float *p, float *lse, int64_t rows,
                                int64_t n, cudaStream_t stream)
{
    return (impl == FA_IMPL_LEARNER ? learner_softmax_rows_online
                                    : ref_softmax_rows_online)(x, p, lse, rows, n, stream);
}

fa_status online_launch_attention(fa_impl impl, const attn_online_args *args, cudaStream_t stream)
{
    return (impl == FA_IMPL_LEARNER ? learner_attn_rows_online : ref_attn_rows_online)(args,
                                                                                       stream);
}

fa_status online_run_trace(fa_impl impl, online_trace_op op, const float *x, const float *v,
                           int64_t rows, int64_t n, int64_t chunk, float *trace,
                           int64_t *overwritten)
{
    *overwritten = 0;
    const int64_t count = rows * n;
    const int64_t trace_count = chunk >= 1 ? rows * online_chunk_count(n, chunk) : 0;
    void *d_x = NULL, *d_v = NULL, *d_trace = NULL;
    fa_status status = fa_canary_input(&d_x, x, float_bytes(count));
    if (status == FA_OK && op == ONLINE_TRACE_OUTPUT)
        status = fa_canary_input(&d_v, v, float_bytes(count));
    if (status == FA_OK)
        status = fa_canary_output(&d_trace, float_bytes(trace_count));
    if (status == FA_OK)
        status = online_launch_trace(impl, op, d_x, d_v, d_trace, rows, n, chunk, 0);
    if (status == FA_OK)
        status = fa_canary_download(trace, d_trace, float_bytes(trace_count), overwritten);
    fa_device_free(d_x);
    fa_device_free(d_v);
    fa_device_free(d_trace);
    return status;
}

fa_status online_run_softmax(fa_impl impl, const float *x, int64_t rows, int64_t n, float *p,
                             float *lse, int64_t *overwritten)
{
    *overwritten = 0;
    const int64_t count = rows * n;
    void *d_x = NULL, *d_p = NULL, *d_lse = NULL;
    fa_status status = fa_canary_input(&d_x, x, float_bytes(count));
    if (status == FA_OK)
        status = fa_canary_output(&d_p, float_bytes(count));
    if (status == FA_OK && lse != NULL)
        status = fa_canary_output(&d_lse, float_bytes(rows));
    if (status == FA_OK)
        status = online_launch_softmax(impl, d_x, d_p, d_lse, rows, n, 0);
    if (status == FA_OK)
        status = fa_canary_download(p, d_p, float_bytes(count), overwritten);
    if (status == FA_OK && lse != NULL)
        status = fa_canary_download(lse, d_lse, float_bytes(rows), overwritten);
    fa_device_free(d_x);
    fa_device_free(d_p);
    fa_device_free(d_lse);
    return status;
}

fa_status online_run_attention(fa_impl impl, const attn_online_args *host, int64_t *overwritten)
{
    *overwritten = 0;
    const int64_t rows = host->batch * host->heads_q * host->nq;
    const int64_t q_count = rows * host->head_dim;
    const int64_t kv_count = host->batch * host->heads_kv * host->nk * host->head_dim;
    void *d_q = NULL, *d_k = NULL, *d_v = NULL, *d_o = NULL, *d_lse = NULL;
    fa_status status = fa_canary_input(&d_q, host->q, float_bytes(q_count));
    if (status == FA_OK)
        status = fa_canary_input(&d_k, host->k, float_bytes(kv_count));
    if (status == FA_OK)
        status = fa_canary_input(&d_v, host->v, float_bytes(kv_count));
    if (status == FA_OK)
        status = fa_canary_output(&d_o, float_bytes(q_count));
    if (status == FA_OK && host->lse != NULL)
        status = fa_canary_output(&d_lse, float_bytes(rows));
    if (status == FA_OK) {
        attn_online_args device = *host;
        device.q = d_q;
        device.k = d_k;
        device.v = d_v;
        device.o = d_o;
        device.lse = d_lse;
        status = online_launch_attention(impl, &device, 0);
    }
    if (status == FA_OK)
        status = fa_canary_download(host->o, d_o, float_bytes(q_count), overwritten);
    if (status == FA_OK && host->lse != NULL)
        status = fa_canary_download(host->lse, d_lse, float_bytes(rows), overwritten);
    fa_device_free(d_q);
    fa_device_free(d_k);
    fa_device_free(d_v);
    fa_device_free(d_o);
    fa_device_free(d_lse);
    return status;
}

/* ---- device problems for timing -------------------------------------------------------- */

/** The timed inputs are uniform in [-TIMED_RANGE, TIMED_RANGE). */
static const double TIMED_RANGE = 4.0;

/** A device array of @p count random floats from @p seed (NULL for count 0). */
static fa_status random_device_floats(float **device, int64_t count, uint64_t seed)
{
    *device = NULL;
    float *host = malloc(float_bytes(count > 0 ? count : 1));
    if (host == NULL)
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "stage04: no host memory for %lld floats",
                       (long long)count);
    fa_rng rng;
    fa_rng_seed(&rng, seed, 0);
    fa_fill(host, count, FA_FILL_UNIFORM, TIMED_RANGE, &rng);
    void *ptr = NULL;
    const fa_status status = fa_device_copy_of(&ptr, host, float_bytes(count));
    free(host);
    *device = ptr;
    return status;
}

/** A device array of @p count floats, left as it is (an output). */
static fa_status device_floats(float **device, int64_t count)
{
    void *ptr = NULL;
    const fa_status status = fa_device_alloc(&ptr, float_bytes(count));
    *device = ptr;
    return status;
}

void online_timed_trace_free(online_timed_trace *t)
{
    fa_device_free(t->x);
    fa_device_free(t->v);
    fa_device_free(t->trace);
    t->x = t->v = t->trace = NULL;
}

fa_status online_timed_trace_alloc(online_timed_trace *t, fa_impl impl, online_trace_op op,
                                   int64_t rows, int64_t n, int64_t chunk, uint64_t seed)
{
    *t = (online_timed_trace){impl, op, NULL, NULL, NULL, rows, n, chunk};
    fa_status status = random_device_floats(&t->x, rows * n, seed);
    if (status == FA_OK && op == ONLINE_TRACE_OUTPUT)
        status = random_device_floats(&t->v, rows * n, seed + 1);
    if (status == FA_OK)
        status = device_floats(&t->trace, rows * online_chunk_count(n, chunk));
    if (status != FA_OK)
        online_timed_trace_free(t);
    return status;
}

void online_timed_softmax_free(online_timed_softmax *t)
{
    fa_device_free(t->x);
    fa_device_free(t->p);
    fa_device_free(t->lse);
    t->x = t->p = t->lse = NULL;
}

fa_status online_timed_softmax_alloc(online_timed_softmax *t, fa_impl impl, int64_t rows,
                                     int64_t n, uint64_t seed)
{
    *t = (online_timed_softmax){impl, NULL, NULL, NULL, rows, n};
    fa_status status = random_device_floats(&t->x, rows * n, seed);
    if (status == FA_OK)
        status = device_floats(&t->p, rows * n);
    if (status == FA_OK)
        status = device_floats(&t->lse, rows);
    if (status != FA_OK)
        online_timed_softmax_free(t);
    return status;
}

void online_timed_attention_free(online_timed_attention *t)
{
    fa_device_free(t->q);
    fa_device_free(t->k);
    fa_device_free(t->v);
    fa_device_free(t->o);
    fa_device_free(t->lse);
    t->q = t->k = t->v = t->o = t->lse = NULL;
}

fa_status online_timed_attention_alloc(online_timed_attention *t, fa_impl impl,
                                       const attn_online_args *shape, uint64_t seed)
{
    *t = (online_timed_attention){.impl = impl, .args = *shape};
    const attn_online_args *a = shape;
    const int64_t rows = a->batch * a->heads_q * a->nq;
    const int64_t kv_count = a->batch * a->heads_kv * a->nk * a->head_dim;
    fa_status status = random_device_floats(&t->q, rows * a->head_dim, seed);
    if (status == FA_OK)
        status = random_device_floats(&t->k, kv_count, seed + 1);
    if (status == FA_OK)
        status = random_device_floats(&t->v, kv_count, seed + 2);
    if (status == FA_OK)
        status = device_floats(&t->o, rows * a->head_dim);
    if (status == FA_OK)
        status = device_floats(&t->lse, rows);
    if (status != FA_OK) {
        online_timed_attention_free(t);
        return status;
    }
    t->args.q = t->q;
    t->args.k = t->k;
    t->args.v = t->v;
    t->args.o = t->o;
    t->args.lse = t->lse;
    return FA_OK;
}

fa_status online_trace_work(void *context, int rep, cudaStream_t stream)
{
    (void)rep; /* inputs flushed from L2 before each repetition: no rotation needed */
    const online_timed_trace *t = context;
    return online_launch_trace(t->impl, t->op, t->x, t->v, t->trace, t->rows, t->n, t->chunk,
                               stream);
}

fa_status online_softmax_work(void *context, int rep, cudaStream_t stream)
{
    (void)rep;
    const online_timed_softmax *t = context;
    return online_launch_softmax(t->impl, t->x, t->p, t->lse, t->rows, t->n, stream);
}

fa_status online_attention_work(void *context, int rep, cudaStream_t stream)
{
    (void)rep;
    const online_timed_attention *t = context;
    return online_launch_attention(t->impl, &t->args, stream);
}

fa_status online_median_ms(fa_gpu_work work, void *context, double *milliseconds)
{
    const fa_timing_options timing = fa_timing_defaults();
    fa_stats stats;
    FA_TRY(fa_time_gpu(work, context, &timing, &stats));
    *milliseconds = stats.median;
    return FA_OK;
}
