/** @file runners.c @brief Traces of stage 05 on host data and for timing (runners.h). */
#include "runners.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fa_device.h"

void tile_outputs_free(tile_outputs *out)
{
    free(out->q_tiles);
    free(out->k_tiles);
    free(out->v_tiles);
    free(out->scores);
    free(out->max);
    free(out->weights);
    free(out->correction);
    free(out->sum);
    free(out->o);
    free(out->lse);
    *out = (tile_outputs){0};
}

static void *at_least_one(int64_t count, int64_t element_bytes)
{
    return malloc((size_t)((count > 0 ? count : 1) * element_bytes));
}

fa_status tile_outputs_alloc(tile_outputs *out, const tile_sizes *s)
{
    const int64_t f = (int64_t)sizeof(float);
    *out = (tile_outputs){0};
    out->q_tiles = at_least_one(s->q_tiles, s->tile_bytes);
    out->k_tiles = at_least_one(s->k_tiles, s->tile_bytes);
    out->v_tiles = at_least_one(s->v_tiles, s->tile_bytes);
    out->scores = at_least_one(s->scores, f);
    out->max = at_least_one(s->max, f);
    out->weights = at_least_one(s->weights, f);
    out->correction = at_least_one(s->correction, f);
    out->sum = at_least_one(s->sum, f);
    out->o = at_least_one(s->o, f);
    out->lse = at_least_one(s->lse, f);
    if (out->q_tiles && out->k_tiles && out->v_tiles && out->scores && out->max && out->weights &&
        out->correction && out->sum && out->o && out->lse)
        return FA_OK;
    tile_outputs_free(out);
    return fa_fail(FA_ERR_OUT_OF_MEMORY, "stage05: no host memory for the outputs of a trace");
}

fa_status tile_trace_launch(fa_impl impl, int milestone, int version, const tile_problem *problem,
                            const tile_trace *trace, cudaStream_t stream)
{
    return (impl == FA_IMPL_LEARNER ? learner_tile_trace : ref_tile_trace)(milestone, version,
                                                                           problem, trace, stream);
}

/** One output array of a trace: its host copy, its bytes, its device buffer. */
typedef struct slot {
    void *host;
    size_t bytes;
    void *device;
} slot;

enum { MAX_SLOTS = 3 };

/** The arrays milestone @p milestone writes, in a fixed order (see aim()). */
static int slots_of(int milestone, const tile_sizes *s, const tile_outputs *out,
                    slot slots[MAX_SLOTS])
{
    const size_t f = sizeof(float), t = (size_t)s->tile_bytes;
    switch (milestone) {
    case 17:
        slots[0] = (slot){out->q_tiles, (size_t)s->q_tiles * t, NULL};
        slots[1] = (slot){out->k_tiles, (size_t)s->k_tiles * t, NULL};
        slots[2] = (slot){out->v_tiles, (size_t)s->v_tiles * t, NULL};
        return 3;
    case 18: slots[0] = (slot){out->scores, (size_t)s->scores * f, NULL}; return 1;
    case 19: slots[0] = (slot){out->max, (size_t)s->max * f, NULL}; return 1;
    case 20:
        slots[0] = (slot){out->weights, (size_t)s->weights * f, NULL};
        slots[1] = (slot){out->correction, (size_t)s->correction * f, NULL};
        return 2;
    case 21: slots[0] = (slot){out->sum, (size_t)s->sum * f, NULL}; return 1;
    default:
        slots[0] = (slot){out->o, (size_t)s->o * f, NULL};
        slots[1] = (slot){out->lse, (size_t)s->lse * f, NULL};
        return 2;
    }
}

/** Points the trace's fields of milestone @p milestone at the device buffers of slots_of(). */
static void aim(int milestone, const slot *slots, tile_trace *trace)
{
    *trace = (tile_trace){0};
    switch (milestone) {
    case 17:
        trace->q_tiles = slots[0].device;
        trace->k_tiles = slots[1].device;
        trace->v_tiles = slots[2].device;
        break;
    case 18: trace->scores = slots[0].device; break;
    case 19: trace->max = slots[0].device; break;
    case 20:
        trace->weights = slots[0].device;
        trace->correction = slots[1].device;
        break;
    case 21: trace->sum = slots[0].device; break;
    default:
        trace->o = slots[0].device;
        trace->lse = slots[1].device;
        break;
    }
}

fa_status tile_run_on_host(fa_impl impl, int milestone, int version, const tile_problem *host,
                           const tile_sizes *sizes, tile_outputs *out, int64_t *overwritten)
{
    const size_t element = (size_t)fa_dtype_size(host->dtype);
    const size_t q_bytes = (size_t)(host->heads * host->nq * host->d) * element;
    const size_t kv_bytes = (size_t)(host->heads * host->nk * host->d) * element;
    tile_problem device = *host;
    void *q = NULL, *k = NULL, *v = NULL;
    slot slots[MAX_SLOTS];
    const int count = slots_of(milestone, sizes, out, slots);
    fa_status status = fa_canary_input(&q, host->q, q_bytes);
    if (status == FA_OK)
        status = fa_canary_input(&k, host->k, kv_bytes);
    if (status == FA_OK)
        status = fa_canary_input(&v, host->v, kv_bytes);
    for (int i = 0; i < count && status == FA_OK; ++i)
        status = fa_canary_output(&slots[i].device, slots[i].bytes);
    if (status == FA_OK) {
        tile_trace trace;
        aim(milestone, slots, &trace);
        device.q = q;
        device.k = k;
        device.v = v;
        status = tile_trace_launch(impl, milestone, version, &device, &trace, 0);
    }
    for (int i = 0; i < count && status == FA_OK; ++i)
        status = fa_canary_download(slots[i].host, slots[i].device, slots[i].bytes, overwritten);
    fa_device_free(q);
    fa_device_free(k);
    fa_device_free(v);
    for (int i = 0; i < count; ++i)
        fa_device_free(slots[i].device);
    return status;
}

/* ---- timing ----------------------------------------------------------------------------------- */

void tile_timing_free(tile_timing *t)
{
    fa_device_free((void *)t->problem.q);
    fa_device_free((void *)t->problem.k);
    fa_device_free((void *)t->problem.v);
    fa_device_free(t->trace.q_tiles);
    fa_device_free(t->trace.k_tiles);
    fa_device_free(t->trace.v_tiles);
    fa_device_free(t->trace.scores);
    fa_device_free(t->trace.max);
    fa_device_free(t->trace.weights);
    fa_device_free(t->trace.correction);
    fa_device_free(t->trace.sum);
    fa_device_free(t->trace.o);
    fa_device_free(t->trace.lse);
    *t = (tile_timing){0};
}

/** A device input of @p count elements of @p dtype, filled from @p seed. */
static fa_status random_input(const void **device, fa_dtype dtype, int64_t count, uint64_t seed)
{
    void *buffer = NULL;
    FA_TRY(fa_device_alloc(&buffer, (size_t)(count * fa_dtype_size(dtype))));
    *device = buffer;
    return fa_device_fill_normal(buffer, dtype, count, seed);
}

fa_status tile_timing_alloc(tile_timing *t, fa_impl impl, int milestone, int version,
                            const tile_problem *shape, uint64_t seed)
{
    *t = (tile_timing){.impl = impl, .milestone = milestone, .version = version};
    t->problem = *shape;
    t->problem.q = t->problem.k = t->problem.v = NULL;
    t->problem.scale = (float)(1.0 / sqrt((double)shape->d));
    const int64_t q_count = shape->heads * shape->nq * shape->d;
    const int64_t kv_count = shape->heads * shape->nk * shape->d;
    fa_status status = random_input(&t->problem.q, shape->dtype, q_count, seed);
    if (status == FA_OK)
        status = random_input(&t->problem.k, shape->dtype, kv_count, seed + 1);
    if (status == FA_OK)
        status = random_input(&t->problem.v, shape->dtype, kv_count, seed + 2);

    const tile_sizes s = tile_sizes_of(milestone, version, &t->problem);
    slot slots[MAX_SLOTS];
    const tile_outputs none = {0};
    const int count = slots_of(milestone, &s, &none, slots);
    for (int i = 0; i < count && status == FA_OK; ++i)
        status = fa_device_alloc(&slots[i].device, slots[i].bytes);
    aim(milestone, slots, &t->trace);
    if (status != FA_OK)
        tile_timing_free(t);
    return status;
}

fa_status tile_timed(void *context, int rep, cudaStream_t stream)
{
    (void)rep; /* the L2 is flushed between repetitions: no rotation of inputs needed */
    const tile_timing *t = context;
    return tile_trace_launch(t->impl, t->milestone, t->version, &t->problem, &t->trace, stream);
}

void tile_shape_label(const tile_problem *p, char *label, size_t cap)
{
    snprintf(label, cap, "%lld x %lld x %lld d%lld %s", (long long)p->heads, (long long)p->nq,
             (long long)p->nk, (long long)p->d, fa_dtype_name(p->dtype));
}
