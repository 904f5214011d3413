/**
 * @file packed.c
 * @brief A packed batch made of stage 06 cases (packed.h).
 */
#include "packed.h"

#include <stdlib.h>
#include <string.h>

#include "fa_adversarial.h"
#include "fa_check.h"
#include "fa_rng.h"
#include "flash.h"

/*
 * With row_gaps, each packed tensor's rows end in a gap of its own (q, k, v,
 * o), so a kernel that reads one tensor through another's strides is
 * caught; multiples of 8 elements keep version 2's rows on 16 bytes. With
 * outside_rows, rows of no sequence lie before the first and after the last.
 */
static const int64_t ROW_GAPS[4] = {8, 16, 24, 8};
enum { LEAD_ROWS = 2, TAIL_ROWS = 3 };

/** Copies @p rows x @p heads rows of @p d elements of @p bytes from one tensor's strides to another's. */
static void copy_rows(void *to, const fa_strides *to_strides, const void *from,
                      const fa_strides *from_strides, int64_t rows, int64_t heads, int64_t d,
                      int64_t bytes)
{
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t h = 0; h < heads; ++h)
            memcpy((char *)to + (r * to_strides->row + h * to_strides->head) * bytes,
                   (const char *)from + (r * from_strides->row + h * from_strides->head) * bytes,
                   (size_t)(d * bytes));
}

/**
 * A packed tensor of @p rows rows of @p heads heads at @p strides: its span,
 * allocated and poisoned (rows of no sequence and gaps keep the poison, so a
 * kernel that reads them shows it).
 */
static void *alloc_span(const fa_strides *strides, int64_t rows, int64_t heads, int64_t d,
                        int64_t bytes)
{
    const size_t span = (size_t)(flash_span(strides, 1, rows, heads, d) * bytes);
    void *data = malloc(span + 1);
    if (data != NULL)
        fa_poison_host(data, span);
    return data;
}

/** The sequences: random cases of their lengths, patterns, spreads and means; their offsets. */
static fa_status make_sequences(causal_packed *b, const causal_packed_spec *c, int version,
                                fa_rng *rng)
{
    static const double SPREADS[] = {0.3, 1.0, 3.0, 8.0};
    /* v's mean per sequence: a leak from one sequence into another moves o by far. */
    static const double VALUE_OFFSETS[] = {0.0, 8.0, -30.0, 0.0, 100.0, -1.0};
    const int64_t lead = c->outside_rows ? LEAD_ROWS : 0;
    b->count = c->count;
    b->seqs = calloc((size_t)c->count, sizeof *b->seqs);
    b->cu_q = calloc((size_t)c->count + 1, sizeof(int32_t));
    b->cu_k = calloc((size_t)c->count + 1, sizeof(int32_t));
    if (b->seqs == NULL || b->cu_q == NULL || b->cu_k == NULL)
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "packed case: no host memory for %d sequences",
                       c->count);
    b->cu_q[0] = b->cu_k[0] = (int32_t)lead;
    for (int s = 0; s < c->count; ++s) {
        flash_spec one = c->shape;
        one.nq = c->nq[s];
        one.nk = c->nk[s];
        one.scores = (flash_scores)(s % FLASH_SCORE_KINDS);
        one.spread = SPREADS[s % FA_COUNT_OF(SPREADS)];
        FA_TRY(flash_case_random(&b->seqs[s], &one, version, rng));
        if (one.head_dim >= FA_CASE_MIN_HEAD_DIM)
            fa_case_fill_values(&b->seqs[s].inputs, VALUE_OFFSETS[s % FA_COUNT_OF(VALUE_OFFSETS)],
                                rng);
        b->cu_q[s + 1] = b->cu_q[s] + (int32_t)one.nq;
        b->cu_k[s + 1] = b->cu_k[s] + (int32_t)one.nk;
    }
    return FA_OK;
}

static fa_status packed_alloc(causal_packed *b, const causal_packed_spec *c, int version,
                              fa_rng *rng)
{
    FA_TRY(make_sequences(b, c, version, rng));
    const flash_spec *shape = &c->shape;
    const int64_t tail = c->outside_rows ? TAIL_ROWS : 0;
    const int64_t nq = b->cu_q[c->count] + tail, nk = b->cu_k[c->count] + tail;
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
    /* [rows][heads][d], a gap after each row's heads with row_gaps; the batch stride unused. */
    fa_strides *strides[4] = {&p->q_strides, &p->k_strides, &p->v_strides, &p->o_strides};
    const int64_t heads[4] = {p->heads_q, p->heads_kv, p->heads_kv, p->heads_q};
    for (int t = 0; t < 4; ++t)
        *strides[t] = (fa_strides){0, heads[t] * p->head_dim + (c->row_gaps ? ROW_GAPS[t] : 0),
                                   p->head_dim};
    const int64_t in_bytes = fa_dtype_size(shape->dtype), out_bytes = fa_dtype_size(flash_o_dtype(p));
    b->q = alloc_span(&p->q_strides, nq, p->heads_q, p->head_dim, in_bytes);
    b->k = alloc_span(&p->k_strides, nk, p->heads_kv, p->head_dim, in_bytes);
    b->v = alloc_span(&p->v_strides, nk, p->heads_kv, p->head_dim, in_bytes);
    b->o = alloc_span(&p->o_strides, nq, p->heads_q, p->head_dim, out_bytes);
    if (shape->lse)
        b->lse = malloc((size_t)flash_lse_count(p) * sizeof(float) + 1);
    if (b->q == NULL || b->k == NULL || b->v == NULL || b->o == NULL || (shape->lse && b->lse == NULL))
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "packed case: no host memory for %lld rows and %lld keys",
                       (long long)nq, (long long)nk);
    for (int s = 0; s < c->count; ++s) {
        const fa_attention_params *one = &b->seqs[s].call.params;
        copy_rows((char *)b->q + b->cu_q[s] * p->q_strides.row * in_bytes, &p->q_strides, one->q,
                  &one->q_strides, one->nq, p->heads_q, p->head_dim, in_bytes);
        copy_rows((char *)b->k + b->cu_k[s] * p->k_strides.row * in_bytes, &p->k_strides, one->k,
                  &one->k_strides, one->nk, p->heads_kv, p->head_dim, in_bytes);
        copy_rows((char *)b->v + b->cu_k[s] * p->v_strides.row * in_bytes, &p->v_strides, one->v,
                  &one->v_strides, one->nk, p->heads_kv, p->head_dim, in_bytes);
    }
    p->q = b->q;
    p->k = b->k;
    p->v = b->v;
    p->o = b->o;
    p->lse = b->lse;
    causal_packed_poison(b);
    return FA_OK;
}

fa_status causal_packed_make(causal_packed *b, int version, int index, uint64_t seed,
                             uint64_t stream)
{
    *b = (causal_packed){.spec = causal_packed_case(version, index)};
    fa_rng rng;
    fa_rng_seed(&rng, seed, stream);
    const fa_status status = packed_alloc(b, &b->spec, version, &rng);
    if (status != FA_OK)
        causal_packed_free(b);
    return status;
}

void causal_packed_scatter(causal_packed *b)
{
    const fa_attention_params *p = &b->call;
    const int64_t bytes = fa_dtype_size(flash_o_dtype(p));
    for (int s = 0; s < b->count; ++s) {
        const flash_case *one = &b->seqs[s];
        const int64_t rows = one->call.params.nq;
        copy_rows(one->o, &one->call.params.o_strides,
                  (const char *)b->o + b->cu_q[s] * p->o_strides.row * bytes, &p->o_strides, rows,
                  p->heads_q, p->head_dim, bytes);
        if (b->lse != NULL)
            for (int64_t h = 0; h < p->heads_q; ++h)
                memcpy(one->lse + h * rows, b->lse + h * p->nq + b->cu_q[s],
                       (size_t)rows * sizeof(float));
    }
}

int64_t causal_packed_outside_written(const causal_packed *b)
{
    const fa_attention_params *p = &b->call;
    const int64_t bytes = fa_dtype_size(flash_o_dtype(p)), span = flash_o_bytes(p);
    const int64_t first = b->cu_q[0], last = b->cu_q[b->count];
    unsigned char *copy = malloc((size_t)span + 1);
    if (copy == NULL)
        return -1;
    memcpy(copy, b->o, (size_t)span);
    for (int64_t r = first; r < last; ++r) /* the sequences' elements: poisoned in the copy */
        for (int64_t h = 0; h < p->heads_q; ++h)
            fa_poison_host(copy + (r * p->o_strides.row + h * p->o_strides.head) * bytes,
                           (size_t)(p->head_dim * bytes));
    int64_t written = 0;
    for (int64_t i = 0; i < span; ++i)
        written += copy[i] != FA_POISON_BYTE;
    free(copy);
    for (int64_t h = 0; h < p->heads_q && b->lse != NULL; ++h)
        for (int64_t r = 0; r < p->nq; ++r)
            if (r < first || r >= last) {
                const unsigned char *x = (const unsigned char *)(b->lse + h * p->nq + r);
                for (size_t i = 0; i < sizeof(float); ++i)
                    written += x[i] != FA_POISON_BYTE;
            }
    return written;
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
