/** @file runners.c @brief Forward calls of stage 06 on host tensors and for timing (runners.h). */
#include "runners.h"

#include <stdio.h>
#include <stdlib.h>

#include "fa_device.h"
#include "fa_problem.h"
#include "fa_timing.h"
#include "judge.h"

flash_launcher flash_forward_of(fa_impl impl)
{
    return impl == FA_IMPL_LEARNER ? learner_flash_forward : ref_flash_forward;
}

fa_status flash_library_forward(int version, const fa_attention_params *p, cudaStream_t stream)
{
    fa_attention_params call = *p;
    call.variant = (fa_variant)version;
    return fa_attention_forward(&call, stream);
}

int flash_library_versions(void)
{
    const int versions = flash3_device_check() == FA_OK ? 3 : 2;
    fa_clear_error(); /* another device is no error */
    return versions;
}

fa_status flash_validate(fa_impl impl, const fa_attention_params *p, fa_variant *chosen)
{
    return (impl == FA_IMPL_LEARNER ? learner_attention_validate : ref_attention_validate)(p,
                                                                                         chosen);
}

flash_sizes flash_sizes_of(const fa_attention_params *host)
{
    const flash_sizes s = {flash_o_bytes(host), host->lse != NULL ? flash_lse_count(host) : 0};
    return s;
}

/** Bytes of the span of an input of @p rows x @p heads rows of @p p. */
static size_t input_bytes(const fa_attention_params *p, const fa_strides *strides, int64_t rows,
                          int64_t heads)
{
    return (size_t)(flash_span(strides, flash_batch_entries(p), rows, heads, p->head_dim) *
                    fa_dtype_size(p->dtype));
}

/**
 * A packed call's offsets (host @p host) uploaded into @p device (canaries
 * after them) and their contents checked as fa_attention_forward() does.
 */
static fa_status upload_offsets(fa_attention_params *device, const fa_attention_params *host)
{
    const size_t bytes = (size_t)(host->batch + 1) * sizeof(int32_t);
    void *cu_q = NULL, *cu_k = NULL;
    FA_TRY(fa_canary_input(&cu_q, host->cu_seqlens_q, bytes));
    device->cu_seqlens_q = cu_q;
    FA_TRY(fa_canary_input(&cu_k, host->cu_seqlens_k, bytes));
    device->cu_seqlens_k = cu_k;
    return flash_check_packed_offsets(host, host->cu_seqlens_q, host->cu_seqlens_k);
}

fa_status flash_run_on_host(flash_launcher launch, int version, const fa_attention_params *host,
                            const flash_sizes *sizes, int64_t *overwritten)
{
    fa_attention_params device = *host;
    device.variant = (fa_variant)version;
    void *q = NULL, *k = NULL, *v = NULL, *o = NULL, *lse = NULL;
    const size_t lse_bytes = (size_t)sizes->lse_count * sizeof(float);
    fa_status status = fa_canary_input(&q, host->q, input_bytes(host, &host->q_strides, host->nq,
                                                                host->heads_q));
    if (status == FA_OK)
        status = fa_canary_input(&k, host->k, input_bytes(host, &host->k_strides, host->nk,
                                                          host->heads_kv));
    if (status == FA_OK)
        status = fa_canary_input(&v, host->v, input_bytes(host, &host->v_strides, host->nk,
                                                          host->heads_kv));
    if (status == FA_OK)
        status = fa_canary_output(&o, (size_t)sizes->o_bytes);
    if (status == FA_OK && host->lse != NULL)
        status = fa_canary_output(&lse, lse_bytes);
    device.cu_seqlens_q = device.cu_seqlens_k = NULL;
    if (status == FA_OK && host->cu_seqlens_q != NULL && host->batch > 0)
        status = upload_offsets(&device, host);
    if (status == FA_OK) {
        device.q = q;
        device.k = k;
        device.v = v;
        device.o = o;
        device.lse = lse;
        status = fa_attention_supported(&device, NULL);
    }
    if (status == FA_OK)
        status = launch(version, &device, 0);
    if (status == FA_OK)
        status = fa_canary_download(host->o, o, (size_t)sizes->o_bytes, overwritten);
    if (status == FA_OK && host->lse != NULL)
        status = fa_canary_download(host->lse, lse, lse_bytes, overwritten);
    fa_device_free(q);
    fa_device_free(k);
    fa_device_free(v);
    fa_device_free(o);
    fa_device_free(lse);
    fa_device_free((void *)device.cu_seqlens_q);
    fa_device_free((void *)device.cu_seqlens_k);
    return status;
}

bool flash_result_run(fa_result *result, const char *name, flash_launcher launch, int version,
                      flash_case *c)
{
    const fa_attention_params *p = &c->call.params;
    const flash_sizes sizes = flash_sizes_of(p);
    int64_t overwritten = 0;
    if (!fa_result_status(result, name, flash_run_on_host(launch, version, p, &sizes, &overwritten)))
        return false;
    if (!fa_result_canaries(result, name, "o or lse", overwritten))
        return false;
    fa_attn_method method;
    if (!fa_result_status(result, name, flash_method(&c->call, version, &method)))
        return false;
    int64_t *rows = NULL, count = p->nq;
    if (p->nq >= FLASH_SAMPLE_FROM) {
        rows = malloc((size_t)p->nq * sizeof(int64_t));
        if (rows == NULL)
            return fa_result_status(result, name,
                                    fa_fail(FA_ERR_OUT_OF_MEMORY, "flash case: no host memory"));
        count = flash_sample_rows(p->nq, rows);
    }
    const bool ok = flash_result_judge(result, name, &c->call, &method, rows, count);
    free(rows);
    return ok;
}

/* ---- timing ----------------------------------------------------------------------------------- */

double flash_flop(const flash_shape *s)
{
    return 4.0 * (double)s->batch * (double)s->heads_q * (double)s->nq * (double)s->nk *
           (double)s->head_dim;
}

void flash_shape_label(const flash_shape *s, char *label, size_t cap)
{
    char heads[32];
    if (s->heads_kv == s->heads_q)
        snprintf(heads, sizeof heads, "%lld", (long long)s->heads_q);
    else
        snprintf(heads, sizeof heads, "%lld/%lld", (long long)s->heads_q, (long long)s->heads_kv);
    char mask[64] = "";
    if (s->mask == FA_MASK_WINDOW)
        snprintf(mask, sizeof mask, " window %lld,%lld", (long long)s->window_left,
                 (long long)s->window_right);
    else if (s->mask != FA_MASK_NONE)
        snprintf(mask, sizeof mask, " %s", fa_mask_flag_name(s->mask));
    snprintf(label, cap, "%lld x %s x %lld x %lld d%lld %s%s", (long long)s->batch, heads,
             (long long)s->nq, (long long)s->nk, (long long)s->head_dim, fa_dtype_name(s->dtype),
             mask);
}

void flash_timing_free(flash_timing *t)
{
    fa_device_free((void *)t->params.q);
    fa_device_free((void *)t->params.k);
    fa_device_free((void *)t->params.v);
    fa_device_free(t->params.o);
    fa_device_free(t->params.lse);
    *t = (flash_timing){0};
}

static fa_status timing_alloc(flash_timing *t, const flash_shape *s, uint64_t seed)
{
    fa_attention_params *p = &t->params;
    *p = flash_params(s->batch, s->heads_q, s->heads_kv, s->nq, s->nk, s->head_dim, s->dtype);
    p->variant = (fa_variant)t->version;
    p->mask = s->mask;
    p->window_left = s->window_left;
    p->window_right = s->window_right;
    const int64_t q_count = s->batch * s->nq * s->heads_q * s->head_dim;
    const int64_t kv_count = s->batch * s->nk * s->heads_kv * s->head_dim;
    const void **inputs[3] = {&p->q, &p->k, &p->v};
    void *lse = NULL;
    for (int i = 0; i < 3; ++i) {
        const int64_t count = i == 0 ? q_count : kv_count;
        void *input = NULL;
        FA_TRY(fa_device_alloc(&input, (size_t)(count * fa_dtype_size(s->dtype))));
        *inputs[i] = input;
        FA_TRY(fa_device_fill_normal(input, s->dtype, count, seed + (uint64_t)i));
    }
    FA_TRY(fa_device_alloc(&p->o, (size_t)(q_count * fa_dtype_size(s->dtype))));
    FA_TRY(fa_device_alloc(&lse, (size_t)flash_lse_count(p) * sizeof(float)));
    p->lse = lse;
    return fa_attention_supported(p, NULL);
}

fa_status flash_timing_alloc(flash_timing *t, flash_launcher launch, int version,
                             const flash_shape *shape, uint64_t seed)
{
    *t = (flash_timing){.launch = launch, .version = version};
    const fa_status status = timing_alloc(t, shape, seed);
    if (status != FA_OK)
        flash_timing_free(t);
    return status;
}

fa_status flash_timed(void *context, int rep, cudaStream_t stream)
{
    (void)rep; /* the L2 is flushed between repetitions: no rotation of inputs needed */
    const flash_timing *t = context;
    return t->launch(t->version, &t->params, stream);
}

fa_status flash_time_shape(flash_launcher launch, int version, const flash_shape *shape,
                           uint64_t seed, fa_stats *stats)
{
    flash_timing t;
    FA_TRY(flash_timing_alloc(&t, launch, version, shape, seed));
    const fa_timing_options timing = fa_timing_defaults();
    const fa_status status = fa_time_gpu(flash_timed, &t, &timing, stats);
    flash_timing_free(&t);
    return status;
}
