/**
 * @file model.c
 * @brief CPU model of the stage-03 kernels and their counted traffic (see model.h).
 */
#include "model.h"

#include <math.h>
#include <stdlib.h>

#include "fa_index.h"
#include "fa_math.h"
#include "fa_model.h"

enum { MODEL_WARPS = SOFTMAX_ROWS_THREADS / FA_WARP_THREADS };
_Static_assert(SOFTMAX_ROWS_THREADS % FA_WARP_THREADS == 0, "whole warps");
_Static_assert((MODEL_WARPS & (MODEL_WARPS - 1)) == 0 && MODEL_WARPS <= FA_WARP_THREADS,
               "the warp totals are reduced by one butterfly");

int64_t attn_model_allowed_keys(fa_mask mask, const int64_t *key_length, int64_t b, int64_t i,
                                int64_t nq, int64_t nk)
{
    const int64_t end = fa_mask_key_range(mask, i, nq, nk).end;
    if (key_length == NULL)
        return end;
    const int64_t length = key_length[b] > 0 ? key_length[b] : 0;
    return length < end ? length : end;
}

void attn_model_scores(const void *q, const void *k, fa_dtype dtype, naive_attn_dims dims,
                       float scale, float *s)
{
    const int64_t heads = dims.batch * dims.heads, nq = dims.nq, nk = dims.nk;
    const int64_t dim = dims.head_dim;
    const float c = naive_attn_scale(scale, dim);
    for (int64_t head = 0; head < heads; ++head)
        for (int64_t i = 0; i < nq; ++i)
            for (int64_t j = 0; j < nk; ++j) {
                const int64_t qi = (head * nq + i) * dim, kj = (head * nk + j) * dim;
                float acc = 0.0f;
                for (int64_t d = 0; d < dim; ++d)
                    acc = fmaf(fa_load(q, dtype, qi + d), fa_load(k, dtype, kj + d), acc);
                s[(head * nq + i) * nk + j] = acc * c;
            }
}

void attn_model_softmax(const float *s, float *p, float *lse, naive_attn_dims dims, fa_mask mask,
                        const int64_t *key_length)
{
    const int64_t nq = dims.nq, nk = dims.nk;
    const int64_t rows = dims.batch * dims.heads * nq;
    for (int64_t row = 0; row < rows; ++row) {
        const int64_t b = row / (dims.heads * nq), i = row % nq;
        const int64_t allowed = attn_model_allowed_keys(mask, key_length, b, i, nq, nk);
        const float *s_row = s + row * nk;
        float *p_row = p + row * nk;

        /* The maximum is exact in any order, and NaN as soon as one score is
         * (fa_max_nan(), the kernel's max: fmaxf would drop the NaN). */
        float m = -INFINITY;
        for (int64_t j = 0; j < allowed; ++j)
            m = fa_max_nan(m, s_row[j]);
        const float shift = (m == -INFINITY) ? 0.0f : m;

        float partial[SOFTMAX_ROWS_THREADS];
        for (int t = 0; t < SOFTMAX_ROWS_THREADS; ++t) {
            partial[t] = 0.0f;
            for (int64_t j = t; j < allowed; j += SOFTMAX_ROWS_THREADS)
                partial[t] += expf(s_row[j] - shift);
        }
        /* The kernel's fa_block_sum(): each warp's butterfly, then one over the warp totals. */
        const float l = fa_model_block_reduce(FA_REDUCE_SUM, partial, SOFTMAX_ROWS_THREADS);

        const int empty = (l == 0.0f);
        for (int64_t j = 0; j < nk; ++j)
            p_row[j] = (j < allowed && !empty) ? expf(s_row[j] - shift) / l : 0.0f;
        if (lse != NULL)
            lse[row] = empty ? -INFINITY : shift + logf(l);
    }
}

void attn_model_pv(const float *p, const void *v, fa_dtype dtype, naive_attn_dims dims,
                   fa_mask mask, const int64_t *key_length, float *o)
{
    const int64_t heads = dims.batch * dims.heads, nq = dims.nq, nk = dims.nk;
    const int64_t dim = dims.head_dim;
    for (int64_t head = 0; head < heads; ++head) {
        const int64_t b = head / dims.heads;
        for (int64_t i = 0; i < nq; ++i) {
            /* Every allowed key, zero weight or not: its v reaches o (NaN included). */
            const int64_t allowed = attn_model_allowed_keys(mask, key_length, b, i, nq, nk);
            for (int64_t c = 0; c < dim; ++c) {
                float acc = 0.0f;
                for (int64_t j = 0; j < allowed; ++j)
                    acc = fmaf(p[(head * nq + i) * nk + j],
                               fa_load(v, dtype, (head * nk + j) * dim + c), acc);
                o[(head * nq + i) * dim + c] = acc;
            }
        }
    }
}

fa_status attn_model_naive(const void *q, const void *k, const void *v, fa_dtype dtype,
                           naive_attn_dims dims, float scale, fa_mask mask,
                           const int64_t *key_length, float *o, float *lse)
{
    const int64_t count = dims.batch * dims.heads * dims.nq * dims.nk;
    float *scores = malloc((size_t)(count > 0 ? count : 1) * sizeof(float));
    if (scores == NULL)
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "attn_model_naive: no host memory for %lld scores",
                       (long long)count);
    attn_model_scores(q, k, dtype, dims, scale, scores);
    attn_model_softmax(scores, scores, lse, dims, mask, key_length);
    attn_model_pv(scores, v, dtype, dims, mask, key_length, o);
    free(scores);
    return FA_OK;
}

attn_naive_traffic attn_naive_traffic_bytes(naive_attn_dims dims, fa_dtype dtype)
{
    const int64_t heads = dims.batch * dims.heads, nq = dims.nq, nk = dims.nk;
    const int64_t dim = dims.head_dim, in = fa_dtype_size(dtype), f32 = sizeof(float);
    const int64_t matrix = heads * nq * nk * f32; /* one N x N fp32 matrix, all heads */
    const int64_t q_bytes = heads * nq * dim * in, kv_bytes = heads * nk * dim * in;
    const int64_t o_bytes = heads * nq * dim * f32, lse_bytes = heads * nq * f32;
    attn_naive_traffic t;
    t.scores = q_bytes + kv_bytes + matrix;
    t.softmax = 3 * matrix + matrix + lse_bytes;
    t.pv = matrix + kv_bytes + o_bytes;
    t.total = t.scores + t.softmax + t.pv;
    t.minimum = q_bytes + 2 * kv_bytes + o_bytes + lse_bytes;
    return t;
}
