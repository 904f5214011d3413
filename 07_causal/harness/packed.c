/**
 * @file packed.c
 * @brief A packed batch made of stage 06 cases (packed.h).
 */
#include "packed.h"

#include <stdlib.h>
#include <string.h>

#include "fa_adversarial.h"
#include "fa_check.h"
#include "flash.h"

/** Bytes of one row (all heads) of a packed tensor of @p heads heads of @p p's dtype. */
static size_t row_bytes(const fa_attention_params *p, int64_t heads, int64_t element_bytes)
{
    return (size_t)(heads * p->head_dim * element_bytes);
}

static fa_status packed_alloc(causal_packed *b, const causal_packed_spec *c, int64_t block_n,
                              fa_rng *rng)
{
    static const double SPREADS[] = {0.3, 1.0, 3.0, 8.0};
    /* v's mean per sequence: a leak from one sequence into another moves o by far. */
    static const double VALUE_OFFSETS[] = {0.0, 8.0, -30.0, 0.0, 100.0, -1.0};
    b->count = c->count;
    b->seqs = calloc((size_t)c->count, sizeof *b->seqs);
    b->cu_q = calloc((size_t)c->count + 1, sizeof(int32_t));
    b->cu_k = calloc((size_t)c->count + 1, sizeof(int32_t));
    if (b->seqs == NULL || b->cu_q == NULL || b->cu_k == NULL)
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "packed case: no host memory for %d sequences",
                       c->count);
    for (int s = 0; s < c->count; ++s) {
        flash_spec one = c->shape;
        one.nq = c->nq[s];
        one.nk = c->nk[s];
        one.scores = (flash_scores)(s % FLASH_SCORE_KINDS);
        one.spread = SPREADS[s % FA_COUNT_OF(SPREADS)];
        FA_TRY(flash_case_random(&b->seqs[s], &one, block_n, rng));
        if (one.head_dim >= FA_CASE_MIN_HEAD_DIM)
            fa_case_fill_values(&b->seqs[s].inputs, VALUE_OFFSETS[s % FA_COUNT_OF(VALUE_OFFSETS)],
                                rng);
        b->cu_q[s + 1] = b->cu_q[s] + (int32_t)one.nq;
        b->cu_k[s + 1] = b->cu_k[s] + (int32_t)one.nk;
    }
    const flash_spec *shape = &c->shape;
    const int64_t nq = b->cu_q[c->count], nk = b->cu_k[c->count];
    fa_attention_params *p = &b->call;
    *p = flash_params(c->count, shape->heads_q, shape->heads_kv, nq, nk, shape->head_dim,
                      shape->dtype);
    p->o_fp32 = shape->o_fp32;
    p->mask = shape->mask;
    p->window_left = shape->window_left;
    p->window_right = shape->window_right;
    p->cu_seqlens_q = b->cu_q;
    p->cu_seqlens_k = b->cu_k;
    for (int s = 0; s < c->count; ++s) {
        p->max_seqlen_q = c->nq[s] > p->max_seqlen_q ? c->nq[s] : p->max_seqlen_q;
        p->max_seqlen_k = c->nk[s] > p->max_seqlen_k ? c->nk[s] : p->max_seqlen_k;
    }
    /* [rows][heads][d]: the plain [1][n][heads][d] layout of one sequence, rows one after another. */
    p->q_strides = p->o_strides = fa_attention_strides_bnhd(nq, shape->heads_q, shape->head_dim);
    p->k_strides = p->v_strides = fa_attention_strides_bnhd(nk, shape->heads_kv, shape->head_dim);
    const int64_t in_bytes = fa_dtype_size(shape->dtype);
    const size_t q_row = row_bytes(p, p->heads_q, in_bytes), k_row = row_bytes(p, p->heads_kv, in_bytes);
    b->q = malloc(q_row * (size_t)nq + 1);
    b->k = malloc(k_row * (size_t)nk + 1);
    b->v = malloc(k_row * (size_t)nk + 1);
    b->o = malloc((size_t)flash_o_bytes(p) + 1);
    if (shape->lse)
        b->lse = malloc((size_t)flash_lse_count(p) * sizeof(float) + 1);
    if (b->q == NULL || b->k == NULL || b->v == NULL || b->o == NULL || (shape->lse && b->lse == NULL))
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "packed case: no host memory for %lld rows and %lld keys",
                       (long long)nq, (long long)nk);
    for (int s = 0; s < c->count; ++s) {
        const fa_attention_params *one = &b->seqs[s].call.params;
        memcpy((char *)b->q + q_row * (size_t)b->cu_q[s], one->q, q_row * (size_t)one->nq);
        memcpy((char *)b->k + k_row * (size_t)b->cu_k[s], one->k, k_row * (size_t)one->nk);
        memcpy((char *)b->v + k_row * (size_t)b->cu_k[s], one->v, k_row * (size_t)one->nk);
    }
    p->q = b->q;
    p->k = b->k;
    p->v = b->v;
    p->o = b->o;
    p->lse = b->lse;
    causal_packed_poison(b);
    return FA_OK;
}

fa_status causal_packed_make(causal_packed *b, const causal_packed_spec *c, int64_t block_n,
                             fa_rng *rng)
{
    *b = (causal_packed){0};
    const fa_status status = packed_alloc(b, c, block_n, rng);
    if (status != FA_OK)
        causal_packed_free(b);
    return status;
}

void causal_packed_scatter(causal_packed *b)
{
    const fa_attention_params *p = &b->call;
    const size_t o_row = row_bytes(p, p->heads_q, fa_dtype_size(flash_o_dtype(p)));
    for (int s = 0; s < b->count; ++s) {
        const flash_case *one = &b->seqs[s];
        const int64_t rows = one->call.params.nq;
        memcpy(one->o, (const char *)b->o + o_row * (size_t)b->cu_q[s], o_row * (size_t)rows);
        if (b->lse != NULL)
            for (int64_t h = 0; h < p->heads_q; ++h)
                memcpy(one->lse + h * rows, b->lse + h * p->nq + b->cu_q[s],
                       (size_t)rows * sizeof(float));
    }
}

void causal_packed_poison(causal_packed *b)
{
    fa_poison_host(b->o, (size_t)flash_o_bytes(&b->call));
    if (b->lse != NULL)
        fa_poison_host(b->lse, (size_t)flash_lse_count(&b->call) * sizeof(float));
}

void causal_packed_free(causal_packed *b)
{
    for (int s = 0; s < b->count && b->seqs != NULL; ++s)
        flash_case_free(&b->seqs[s]);
    free(b->seqs);
    free(b->cu_q);
    free(b->cu_k);
    free(b->q);
    free(b->k);
    free(b->v);
    free(b->o);
    free(b->lse);
    *b = (causal_packed){0};
}
