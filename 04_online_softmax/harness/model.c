/**
 * @file model.c
 * @brief The stage-04 kernels replayed on the CPU in fp32 (see model.h).
 */
#include "model.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "fa_index.h"
#include "fa_mask.h"
#include "fa_math.h"
#include "fa_model.h"

_Static_assert(ONLINE_MODEL_MAX_THREADS == 1 << ONLINE_MODEL_MAX_LEVELS,
               "a butterfly over 2^L threads has L levels");
_Static_assert((int)SOFTMAX_ONLINE_MAX_THREADS <= (int)ONLINE_MODEL_MAX_THREADS,
               "the model replays the kernel's largest block");
_Static_assert(ATTN_ONLINE_MAX_CHUNK <= 2 * FA_WARP_THREADS,
               "the attention replay gives each lane at most two keys of a chunk");

/* ---- the state functions of online_state.cuh --------------------------------------------- */

online_model_state online_model_state_empty(void) { return (online_model_state){-INFINITY, 0.0f}; }

float online_model_running_max(float max_old, float chunk_max)
{
    return fa_max_nan(max_old, chunk_max);
}


float online_model_correction(float max_old, float max_new)
{
    return expf(max_old - fa_max_offset(max_new));
}

float online_model_weight(float x, float max) { return expf(x - fa_max_offset(max)); }

float online_model_update_sum(float sum, float alpha, float chunk_sum)
{
    return fmaf(alpha, sum, chunk_sum);
}

float online_model_rescale_output(float out, float alpha, float chunk_out)
{
    return fmaf(alpha, out, chunk_out);
}

online_model_state online_model_merge(online_model_state a, online_model_state b, float *alpha_a,
                                      float *alpha_b)
{
    online_model_state merged;
    merged.max = online_model_running_max(a.max, b.max);
    *alpha_a = online_model_correction(a.max, merged.max);
    *alpha_b = online_model_correction(b.max, merged.max);
    const float part_a = a.sum * *alpha_a;
    const float part_b = b.sum * *alpha_b;
    merged.sum = part_a + part_b;
    return merged;
}

float online_model_merge_output(float out_a, float alpha_a, float out_b, float alpha_b)
{
    const float part_a = out_a * alpha_a;
    const float part_b = out_b * alpha_b;
    return part_a + part_b;
}

float online_model_normalise(float out, float sum) { return sum == 0.0f ? 0.0f : out / sum; }

float online_model_lse(online_model_state state)
{
    return state.sum == 0.0f ? -INFINITY : state.max + logf(state.sum);
}

/* ---- M13-M16: the trace kernel ------------------------------------------------------------ */

const char *online_mistake_name(online_mistake mistake)
{
    switch (mistake) {
    case ONLINE_NO_MISTAKE: return "no mistake";
    case ONLINE_MISTAKE_SUM_NOT_RESCALED: return "sum not rescaled";
    case ONLINE_MISTAKE_OUTPUT_NOT_RESCALED: return "output not rescaled";
    case ONLINE_MISTAKE_CORRECTION_INVERTED: return "correction inverted";
    case ONLINE_MISTAKE_MAX_STARTS_AT_ZERO: return "max starts at 0";
    case ONLINE_MISTAKE_NO_INF_GUARD: return "no -inf guard";
    case ONLINE_MISTAKE_COUNT: break;
    }
    return "unknown mistake";
}

/** The max subtracted inside exp, with or without the -inf guard. */
static float offset_of(online_mistake mistake, float max)
{
    return mistake == ONLINE_MISTAKE_NO_INF_GUARD ? max : fa_max_offset(max);
}

static float correction_of(online_mistake mistake, float max_old, float max_new)
{
    if (mistake == ONLINE_MISTAKE_CORRECTION_INVERTED)
        return expf(fa_max_offset(max_new) - fa_max_offset(max_old));
    return expf(max_old - offset_of(mistake, max_new));
}

void online_model_trace_row(const float *x, const float *v, int64_t n, int64_t chunk,
                            online_mistake mistake, float *max_trace, float *correction_trace,
                            float *sum_trace, float *output_trace)
{
    online_model_state state = online_model_state_empty();
    if (mistake == ONLINE_MISTAKE_MAX_STARTS_AT_ZERO)
        state.max = 0.0f;
    float out = 0.0f;
    const int64_t chunks = online_chunk_count(n, chunk);
    for (int64_t t = 0; t < chunks; ++t) {
        const int64_t start = t * chunk;
        const int64_t end = start + chunk < n ? start + chunk : n;

        float chunk_max = -INFINITY;
        for (int64_t j = start; j < end; ++j)
            chunk_max = fa_max_nan(chunk_max, x[j]);
        const float max_new = online_model_running_max(state.max, chunk_max);
        const float alpha = correction_of(mistake, state.max, max_new);

        float chunk_sum = 0.0f, chunk_out = 0.0f;
        for (int64_t j = start; j < end; ++j) {
            const float weight = expf(x[j] - offset_of(mistake, max_new));
            chunk_sum += weight;
            if (output_trace != NULL && x[j] != -INFINITY)
                chunk_out = fmaf(weight, v[j], chunk_out);
        }
        state.sum = mistake == ONLINE_MISTAKE_SUM_NOT_RESCALED
                        ? state.sum + chunk_sum
                        : online_model_update_sum(state.sum, alpha, chunk_sum);
        out = mistake == ONLINE_MISTAKE_OUTPUT_NOT_RESCALED
                  ? out + chunk_out
                  : online_model_rescale_output(out, alpha, chunk_out);
        state.max = max_new;

        if (max_trace != NULL)
            max_trace[t] = state.max;
        if (correction_trace != NULL)
            correction_trace[t] = alpha;
        if (sum_trace != NULL)
            sum_trace[t] = state.sum;
        if (output_trace != NULL)
            output_trace[t] = out;
    }
}

/* ---- M15: one-pass softmax ---------------------------------------------------------------- */

int online_merge_masks(int threads, int masks[ONLINE_MODEL_MAX_LEVELS])
{
    int levels = 0;
    const int lanes = threads < FA_WARP_THREADS ? threads : FA_WARP_THREADS;
    for (int mask = lanes / 2; mask > 0; mask /= 2)
        masks[levels++] = mask;
    for (int warp_mask = threads / FA_WARP_THREADS / 2; warp_mask > 0; warp_mask /= 2)
        masks[levels++] = warp_mask * FA_WARP_THREADS;
    return levels;
}

void online_model_softmax_row(const float *x, int64_t n, int threads, int chunk, float *p,
                              float *lse)
{
    online_model_state states[ONLINE_MODEL_MAX_THREADS];
    const int64_t stride = (int64_t)threads * chunk;
    for (int t = 0; t < threads; ++t) {
        online_model_state state = online_model_state_empty();
        for (int64_t base = t; base < n; base += stride) {
            /* Past the end the kernel reads -inf: weight 0, and adding 0 is exact. */
            float chunk_max = -INFINITY;
            for (int i = 0; i < chunk; ++i) {
                const int64_t j = base + (int64_t)i * threads;
                chunk_max = fa_max_nan(chunk_max, j < n ? x[j] : -INFINITY);
            }
            const float max_new = online_model_running_max(state.max, chunk_max);
            const float alpha = online_model_correction(state.max, max_new);
            float chunk_sum = 0.0f;
            for (int i = 0; i < chunk; ++i) {
                const int64_t j = base + (int64_t)i * threads;
                chunk_sum += online_model_weight(j < n ? x[j] : -INFINITY, max_new);
            }
            state.sum = online_model_update_sum(state.sum, alpha, chunk_sum);
            state.max = max_new;
        }
        states[t] = state;
    }

    /* The butterfly: every thread merges with its partner; partners agree
     * bit for bit, so after the last level every state is the row's. */
    int masks[ONLINE_MODEL_MAX_LEVELS];
    const int levels = online_merge_masks(threads, masks);
    for (int level = 0; level < levels; ++level) {
        online_model_state merged[ONLINE_MODEL_MAX_THREADS];
        for (int t = 0; t < threads; ++t) {
            float alpha_mine, alpha_other;
            merged[t] =
                online_model_merge(states[t], states[t ^ masks[level]], &alpha_mine, &alpha_other);
        }
        for (int t = 0; t < threads; ++t)
            states[t] = merged[t];
    }

    const online_model_state row = states[0];
    if (lse != NULL)
        *lse = online_model_lse(row);
    for (int64_t j = 0; j < n; ++j)
        p[j] = online_model_normalise(online_model_weight(x[j], row.max), row.sum);
}

void online_model_softmax_rows(const float *x, float *p, float *lse, int64_t rows, int64_t n)
{
    const int threads = softmax_rows_online_threads(n);
    for (int64_t r = 0; r < rows; ++r)
        online_model_softmax_row(x + r * n, n, threads, SOFTMAX_ONLINE_CHUNK, p + r * n,
                                 lse != NULL ? lse + r : NULL);
}

/* ---- M16: online attention ---------------------------------------------------------------- */

/** One query row: q [dim], keys and values [key_end][dim], o [dim]. */
static void attn_row(const float *q, const float *k, const float *v, int dim, int64_t key_end,
                     float scale, int64_t chunk, float *o, float *lse)
{
    online_model_state state = online_model_state_empty();
    float out[ATTN_ONLINE_MAX_HEAD_DIM] = {0};
    for (int64_t start = 0; start < key_end; start += chunk) {
        const int length = (int)(key_end - start < chunk ? key_end - start : chunk);

        float weight[ATTN_ONLINE_MAX_CHUNK];
        float score[ATTN_ONLINE_MAX_CHUNK];
        float chunk_max = -INFINITY;
        for (int key = 0; key < length; ++key) {
            const float *k_row = k + (start + key) * dim;
            float dot = 0.0f;
            for (int d = 0; d < dim; ++d)
                dot = fmaf(q[d], k_row[d], dot);
            score[key] = scale * dot;
            chunk_max = fa_max_nan(chunk_max, score[key]);
        }
        const float max_new = online_model_running_max(state.max, chunk_max);
        const float alpha = online_model_correction(state.max, max_new);

        /* Lane l holds the weights of keys l and l + 32 (0 past the chunk). */
        float lane_sums[FA_WARP_THREADS];
        for (int lane = 0; lane < FA_WARP_THREADS; ++lane) {
            float sum = 0.0f;
            for (int key = lane; key < ATTN_ONLINE_MAX_CHUNK; key += FA_WARP_THREADS) {
                weight[key] = key < length ? online_model_weight(score[key], max_new) : 0.0f;
                sum += weight[key];
            }
            lane_sums[lane] = sum;
        }
        /* The warp's fa_lanes_sum() of the lane sums, as every lane ends with it. */
        const float chunk_sum = fa_model_lanes_reduce(FA_REDUCE_SUM, lane_sums, FA_WARP_THREADS);
        state.sum = online_model_update_sum(state.sum, alpha, chunk_sum);
        state.max = max_new;

        for (int col = 0; col < dim; ++col) {
            float chunk_out = 0.0f;
            for (int key = 0; key < length; ++key)
                chunk_out = fmaf(weight[key], v[(start + key) * dim + col], chunk_out);
            out[col] = online_model_rescale_output(out[col], alpha, chunk_out);
        }
    }
    for (int col = 0; col < dim; ++col)
        o[col] = online_model_normalise(out[col], state.sum);
    if (lse != NULL)
        *lse = online_model_lse(state);
}

void online_model_attn_rows(const attn_online_args *args)
{
    const int dim = (int)args->head_dim;
    const int64_t group = args->heads_kv > 0 ? args->heads_q / args->heads_kv : 1;
    for (int64_t b = 0; b < args->batch; ++b) {
        for (int64_t h = 0; h < args->heads_q; ++h) {
            const int64_t head_index = b * args->heads_q + h;
            const int64_t kv_head = b * args->heads_kv + h / group;
            const float *k = args->k + kv_head * args->nk * dim;
            const float *v = args->v + kv_head * args->nk * dim;
            for (int64_t i = 0; i < args->nq; ++i) {
                const int64_t row = head_index * args->nq + i;
                attn_row(args->q + row * dim, k, v, dim,
                         fa_mask_key_range(args->mask, i, args->nq, args->nk).end, args->scale,
                         args->chunk, args->o + row * dim,
                         args->lse != NULL ? args->lse + row : NULL);
            }
        }
    }
}
