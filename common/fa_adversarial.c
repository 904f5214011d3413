/**
 * @file fa_adversarial.c
 * @brief Attention inputs that make bugs visible, and metamorphic transformations.
 */
#include "fa_adversarial.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fa_half.h"
#include "fa_reference.h"

/* The control dimensions (see the header). */
static int64_t key_offset_dim(const fa_attn_case *c) { return c->shape.head_dim - 2; }
static int64_t row_bias_dim(const fa_attn_case *c) { return c->shape.head_dim - 1; }

static const fa_tensor_view *view_of(const fa_attn_case *c, fa_case_tensor t)
{
    return t == FA_CASE_Q ? &c->problem.q : t == FA_CASE_K ? &c->problem.k : &c->problem.v;
}

static int64_t element_index(const fa_attn_case *c, fa_case_tensor t, int64_t b, int64_t h, int64_t n, int64_t d)
{
    const fa_tensor_view *v = view_of(c, t);
    return b * v->stride_batch + h * v->stride_head + n * v->stride_row + d;
}

double fa_case_get(const fa_attn_case *c, fa_case_tensor t, int64_t b, int64_t h, int64_t n, int64_t d)
{
    return (double)fa_load(view_of(c, t)->data, c->shape.dtype, element_index(c, t, b, h, n, d));
}

void fa_case_set(fa_attn_case *c, fa_case_tensor t, int64_t b, int64_t h, int64_t n, int64_t d, double x)
{
    void *data = t == FA_CASE_Q ? c->q : t == FA_CASE_K ? c->k : c->v;
    fa_store(data, c->shape.dtype, element_index(c, t, b, h, n, d), (float)x);
}

fa_status fa_case_create(fa_attn_case *c, const fa_case_shape *shape)
{
    if (!c || !shape)
        return fa_fail(FA_ERR_NULL_POINTER, "case create: %s is NULL", !c ? "case" : "shape");
    *c = (fa_attn_case){0};
    const fa_case_shape *s = shape;
    if (s->batch < 0 || s->heads_q < 0 || s->heads_kv <= 0 || s->heads_q % s->heads_kv != 0 || s->nq < 0 ||
        s->nk < 0 || s->pad_rows < 0 || s->head_dim < FA_CASE_MIN_HEAD_DIM)
        return fa_fail(FA_ERR_INVALID_SIZE,
                       "case create: batch %lld, heads %lld/%lld, nq %lld, nk %lld, head_dim %lld, pad_rows %lld "
                       "(heads_q a multiple of heads_kv > 0, head_dim >= %d)",
                       (long long)s->batch, (long long)s->heads_q, (long long)s->heads_kv, (long long)s->nq,
                       (long long)s->nk, (long long)s->head_dim, (long long)s->pad_rows, FA_CASE_MIN_HEAD_DIM);
    if (s->nq > INT64_MAX - s->pad_rows || s->nk > INT64_MAX - s->pad_rows)
        return fa_fail(FA_ERR_OVERFLOW, "case create: nq %lld, nk %lld plus pad_rows %lld overflow",
                       (long long)s->nq, (long long)s->nk, (long long)s->pad_rows);
    const int64_t q_factors[4] = {s->batch, s->heads_q, s->nq + s->pad_rows, s->head_dim};
    const int64_t kv_factors[4] = {s->batch, s->heads_kv, s->nk + s->pad_rows, s->head_dim};
    int64_t q_count, kv_count;
    FA_TRY(fa_ref_elements("case create", "batch * heads_q * (nq + pad_rows) * head_dim", q_factors, 4,
                           fa_dtype_size(s->dtype), &q_count));
    FA_TRY(fa_ref_elements("case create", "batch * heads_kv * (nk + pad_rows) * head_dim", kv_factors,
                           4, fa_dtype_size(s->dtype), &kv_count));
    c->shape = *s;
    c->q_rows = s->nq + s->pad_rows;
    c->kv_rows = s->nk + s->pad_rows;
    const size_t size = (size_t)fa_dtype_size(s->dtype);
    const size_t q_elems = (size_t)q_count + 1, kv_elems = (size_t)kv_count + 1;
    c->q = calloc(q_elems, size);
    c->k = calloc(kv_elems, size);
    c->v = calloc(kv_elems, size);
    if (s->key_padding)
        c->key_length = calloc((size_t)s->batch + 1, sizeof(int64_t));
    if (!c->q || !c->k || !c->v || (s->key_padding && !c->key_length)) {
        fa_case_free(c);
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "case create: no host memory for %zu + 2 x %zu elements", q_elems,
                       kv_elems);
    }
    for (int64_t b = 0; s->key_padding && b < s->batch; b++)
        c->key_length[b] = s->nk;

    fa_tensor_view (*view)(const void *, fa_dtype, int64_t, int64_t, int64_t) =
        s->sequence_major ? fa_view_bnhd : fa_view_bhnd;
    c->problem = (fa_attn_problem){
        .batch = s->batch,
        .heads_q = s->heads_q,
        .heads_kv = s->heads_kv,
        .nq = s->nq,
        .nk = s->nk,
        .head_dim = s->head_dim,
        .scale = 1.0 / sqrt((double)s->head_dim),
        .mask = s->mask,
        .key_length = c->key_length,
        .q = view(c->q, s->dtype, s->heads_q, c->q_rows, s->head_dim),
        .k = view(c->k, s->dtype, s->heads_kv, c->kv_rows, s->head_dim),
        .v = view(c->v, s->dtype, s->heads_kv, c->kv_rows, s->head_dim),
    };
    return FA_OK;
}

void fa_case_free(fa_attn_case *c)
{
    if (!c)
        return;
    free(c->q);
    free(c->k);
    free(c->v);
    free(c->key_length);
    *c = (fa_attn_case){0};
}

void fa_case_fill_scores(fa_attn_case *c, double spread, fa_rng *rng)
{
    /* s = scale sum_d q_d k_d over R random dimensions has standard deviation
     * scale sqrt(R) sigma^2 when q and k are normal(0, sigma^2). */
    const int64_t random_dims = c->shape.head_dim - 2;
    const double sigma = sqrt(spread / (c->problem.scale * sqrt((double)random_dims)));
    for (int64_t b = 0; b < c->shape.batch; b++) {
        for (int64_t h = 0; h < c->shape.heads_q; h++)
            for (int64_t i = 0; i < c->shape.nq; i++)
                for (int64_t d = 0; d < random_dims; d++)
                    fa_case_set(c, FA_CASE_Q, b, h, i, d, sigma * fa_rng_normal(rng));
        for (int64_t g = 0; g < c->shape.heads_kv; g++)
            for (int64_t j = 0; j < c->shape.nk; j++)
                for (int64_t d = 0; d < random_dims; d++)
                    fa_case_set(c, FA_CASE_K, b, g, j, d, sigma * fa_rng_normal(rng));
    }
}

void fa_case_fill_values(fa_attn_case *c, double offset, fa_rng *rng)
{
    for (int64_t b = 0; b < c->shape.batch; b++)
        for (int64_t g = 0; g < c->shape.heads_kv; g++)
            for (int64_t j = 0; j < c->shape.nk; j++)
                for (int64_t d = 0; d < c->shape.head_dim; d++)
                    fa_case_set(c, FA_CASE_V, b, g, j, d, offset + fa_rng_normal(rng));
}

/** q = 1 in the key-offset dimension of every real row, so k there adds to the score. */
static void enable_key_offsets(fa_attn_case *c)
{
    for (int64_t b = 0; b < c->shape.batch; b++)
        for (int64_t h = 0; h < c->shape.heads_q; h++)
            for (int64_t i = 0; i < c->shape.nq; i++)
                fa_case_set(c, FA_CASE_Q, b, h, i, key_offset_dim(c), 1.0);
}

/** Key j of every batch and kv head gets score offset @p score. */
static void set_key_offset(fa_attn_case *c, int64_t b, int64_t j, double score)
{
    for (int64_t g = 0; g < c->shape.heads_kv; g++)
        fa_case_set(c, FA_CASE_K, b, g, j, key_offset_dim(c), score / c->problem.scale);
}

/** Key j of batch b becomes a sentinel: score offset @p score, values +-@p value. */
static void make_sentinel(fa_attn_case *c, int64_t b, int64_t j, double score, double value)
{
    set_key_offset(c, b, j, score);
    for (int64_t g = 0; g < c->shape.heads_kv; g++)
        for (int64_t d = 0; d < c->shape.head_dim; d++)
            fa_case_set(c, FA_CASE_V, b, g, j, d, d % 2 == 0 ? value : -value);
}

void fa_case_set_key_offsets(fa_attn_case *c, const double *offset)
{
    enable_key_offsets(c);
    for (int64_t b = 0; b < c->shape.batch; b++)
        for (int64_t j = 0; j < c->shape.nk; j++)
            set_key_offset(c, b, j, offset[j]);
}

void fa_case_set_row_bias(fa_attn_case *c, double bias)
{
    for (int64_t b = 0; b < c->shape.batch; b++) {
        for (int64_t h = 0; h < c->shape.heads_q; h++)
            for (int64_t i = 0; i < c->shape.nq; i++)
                fa_case_set(c, FA_CASE_Q, b, h, i, row_bias_dim(c), bias / c->problem.scale);
        for (int64_t g = 0; g < c->shape.heads_kv; g++)
            for (int64_t j = 0; j < c->kv_rows; j++)
                fa_case_set(c, FA_CASE_K, b, g, j, row_bias_dim(c), 1.0);
    }
}

void fa_case_place_max(fa_attn_case *c, int64_t block_n, fa_max_position where, double rise)
{
    const int64_t nk = c->shape.nk;
    const int64_t last_block = nk > 0 ? (nk - 1) / block_n : 0;
    enable_key_offsets(c);
    for (int64_t j = 0; j < nk; j++) {
        const int64_t t = j / block_n;
        double offset = 0.0;
        switch (where) {
        case FA_MAX_IN_FIRST_BLOCK: offset = t == 0 ? rise : 0.0; break;
        case FA_MAX_IN_LAST_BLOCK: offset = t == last_block ? rise : 0.0; break;
        case FA_MAX_RISES_EVERY_BLOCK: offset = rise * (double)t; break;
        case FA_MAX_FALLS_EVERY_BLOCK: offset = rise * (double)(last_block - t); break;
        }
        for (int64_t b = 0; b < c->shape.batch; b++)
            set_key_offset(c, b, j, offset);
    }
}

void fa_case_place_causal_sentinels(fa_attn_case *c, double score, double value)
{
    enable_key_offsets(c);
    for (int64_t b = 0; b < c->shape.batch; b++)
        for (int64_t j = FA_SENTINEL_PERIOD; j < c->shape.nk; j += FA_SENTINEL_PERIOD)
            make_sentinel(c, b, j, score, value);
}

void fa_case_place_tail_sentinels(fa_attn_case *c, double score, double value)
{
    if (!c->key_length)
        return;
    enable_key_offsets(c);
    for (int64_t b = 0; b < c->shape.batch; b++)
        for (int64_t j = c->key_length[b]; j < c->shape.nk; j++)
            make_sentinel(c, b, j, score, value);
}

void fa_case_fill_canaries(fa_attn_case *c)
{
    enable_key_offsets(c);
    for (int64_t b = 0; b < c->shape.batch; b++) {
        for (int64_t h = 0; h < c->shape.heads_q; h++)
            for (int64_t i = c->shape.nq; i < c->q_rows; i++)
                for (int64_t d = 0; d < c->shape.head_dim; d++)
                    fa_case_set(c, FA_CASE_Q, b, h, i, d, FA_CANARY_VALUE);
        for (int64_t j = c->shape.nk; j < c->kv_rows; j++) {
            for (int64_t g = 0; g < c->shape.heads_kv; g++)
                for (int64_t d = 0; d < c->shape.head_dim; d++) {
                    fa_case_set(c, FA_CASE_K, b, g, j, d, 0.0);
                    fa_case_set(c, FA_CASE_V, b, g, j, d, FA_CANARY_VALUE);
                }
            set_key_offset(c, b, j, FA_CANARY_SCORE);
        }
    }
}

void fa_case_set_key_length(fa_attn_case *c, int64_t b, int64_t length)
{
    c->key_length[b] = length;
}

double fa_meta_shift_row(fa_attn_case *c, int64_t b, int64_t h, int64_t i, double delta)
{
    const int64_t d = row_bias_dim(c);
    const double before = fa_case_get(c, FA_CASE_Q, b, h, i, d);
    fa_case_set(c, FA_CASE_Q, b, h, i, d, before + delta / c->problem.scale);
    return c->problem.scale * (fa_case_get(c, FA_CASE_Q, b, h, i, d) - before);
}

fa_status fa_meta_permute_keys(fa_attn_case *c, const int64_t *perm)
{
    const int64_t nk = c->shape.nk, dim = c->shape.head_dim;
    double *k = malloc(((size_t)(nk * dim) + 1) * sizeof(double));
    double *v = malloc(((size_t)(nk * dim) + 1) * sizeof(double));
    if (!k || !v) {
        free(k);
        free(v);
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "meta permute: no host memory for %lld keys", (long long)nk);
    }
    for (int64_t b = 0; b < c->shape.batch; b++) {
        for (int64_t g = 0; g < c->shape.heads_kv; g++) {
            for (int64_t j = 0; j < nk; j++)
                for (int64_t d = 0; d < dim; d++) {
                    k[j * dim + d] = fa_case_get(c, FA_CASE_K, b, g, j, d);
                    v[j * dim + d] = fa_case_get(c, FA_CASE_V, b, g, j, d);
                }
            for (int64_t j = 0; j < nk; j++)
                for (int64_t d = 0; d < dim; d++) {
                    fa_case_set(c, FA_CASE_K, b, g, j, d, k[perm[j] * dim + d]);
                    fa_case_set(c, FA_CASE_V, b, g, j, d, v[perm[j] * dim + d]);
                }
        }
    }
    free(k);
    free(v);
    return FA_OK;
}

void fa_meta_scale_values(fa_attn_case *c, double alpha)
{
    for (int64_t b = 0; b < c->shape.batch; b++)
        for (int64_t g = 0; g < c->shape.heads_kv; g++)
            for (int64_t j = 0; j < c->shape.nk; j++)
                for (int64_t d = 0; d < c->shape.head_dim; d++)
                    fa_case_set(c, FA_CASE_V, b, g, j, d, alpha * fa_case_get(c, FA_CASE_V, b, g, j, d));
}

/** Copies batch @p from of @p src into batch @p to of @p dst: nq query rows, nk_src key rows. */
static void copy_batch(const fa_attn_case *src, int64_t from, fa_attn_case *dst, int64_t to)
{
    const fa_case_shape *s = &src->shape;
    for (int64_t h = 0; h < s->heads_q; h++)
        for (int64_t i = 0; i < s->nq; i++)
            for (int64_t d = 0; d < s->head_dim; d++)
                fa_case_set(dst, FA_CASE_Q, to, h, i, d, fa_case_get(src, FA_CASE_Q, from, h, i, d));
    for (int64_t g = 0; g < s->heads_kv; g++)
        for (int64_t j = 0; j < s->nk; j++)
            for (int64_t d = 0; d < s->head_dim; d++) {
                fa_case_set(dst, FA_CASE_K, to, g, j, d, fa_case_get(src, FA_CASE_K, from, g, j, d));
                fa_case_set(dst, FA_CASE_V, to, g, j, d, fa_case_get(src, FA_CASE_V, from, g, j, d));
            }
    dst->key_length[to] = src->key_length ? src->key_length[from] : s->nk;
}

fa_status fa_meta_pack(const fa_attn_case *a, const fa_attn_case *b, fa_attn_case *packed)
{
    if (!a || !b || !packed)
        return fa_fail(FA_ERR_NULL_POINTER, "meta pack: a case is NULL");
    const fa_case_shape *x = &a->shape, *y = &b->shape;
    if (x->heads_q != y->heads_q || x->heads_kv != y->heads_kv || x->nq != y->nq || x->head_dim != y->head_dim ||
        x->dtype != y->dtype || x->mask != y->mask)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "meta pack: the cases differ in heads, nq, head_dim, dtype or mask");
    if (x->mask == FA_MASK_CAUSAL_BOTTOM_RIGHT)
        return fa_fail(FA_ERR_UNSUPPORTED, "meta pack: a bottom-right causal row depends on nk, so padding changes it");
    fa_case_shape shape = *x;
    shape.batch = x->batch + y->batch;
    shape.nk = x->nk > y->nk ? x->nk : y->nk;
    shape.key_padding = true;
    FA_TRY(fa_case_create(packed, &shape));
    packed->problem.scale = a->problem.scale;
    for (int64_t i = 0; i < x->batch; i++)
        copy_batch(a, i, packed, i);
    for (int64_t i = 0; i < y->batch; i++)
        copy_batch(b, i, packed, x->batch + i);
    return FA_OK;
}
