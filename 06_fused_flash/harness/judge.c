/**
 * @file judge.c
 * @brief o and lse of a call against the double reference under the declared
 *        method, on every row or a sample (judge.h).
 */
#include "judge.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fa_attention_ref.h"
#include "flash.h"

fa_status flash_method(const flash_call *call, int version, fa_attn_method *method)
{
    fa_attention_params p = call->params;
    p.variant = (fa_variant)version;
    return fa_attention_method(&p, method);
}

int64_t flash_sample_rows(int64_t nq, int64_t *rows)
{
    int64_t count = 0;
    for (int64_t r = 0; r < nq; ++r)
        if (nq < FLASH_SAMPLE_FROM || r < FLASH_SAMPLE_EDGE || r >= nq - FLASH_SAMPLE_EDGE ||
            r % FLASH_SAMPLE_EVERY == 3)
            rows[count++] = r;
    return count;
}

void flash_gather_o(const fa_attention_params *p, const int64_t *rows, int64_t count, float *out)
{
    const fa_strides *s = &p->o_strides;
    for (int64_t b = 0; b < p->batch; ++b)
        for (int64_t h = 0; h < p->heads_q; ++h)
            for (int64_t r = 0; r < count; ++r) {
                const int64_t row = rows != NULL ? rows[r] : r;
                const int64_t from = b * s->batch + h * s->head + row * s->row;
                float *to = out + ((b * p->heads_q + h) * count + r) * p->head_dim;
                for (int64_t d = 0; d < p->head_dim; ++d)
                    to[d] = fa_load_or_poison(p->o, flash_o_dtype(p), from + d);
            }
}

fa_status flash_gap_bytes(const fa_attention_params *p, int64_t *written)
{
    *written = 0;
    const int64_t bytes = flash_o_bytes(p), element = fa_dtype_size(flash_o_dtype(p));
    if (bytes == flash_lse_count(p) * p->head_dim * element)
        return FA_OK; /* no gap: every byte of the span is an element */
    unsigned char *copy = malloc((size_t)bytes);
    if (copy == NULL)
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "judge: no host memory for %lld bytes of o",
                       (long long)bytes);
    memcpy(copy, p->o, (size_t)bytes);
    const fa_strides *s = &p->o_strides;
    for (int64_t b = 0; b < p->batch; ++b)
        for (int64_t h = 0; h < p->heads_q; ++h)
            for (int64_t r = 0; r < p->nq; ++r)
                fa_poison_host(copy + (b * s->batch + h * s->head + r * s->row) * element,
                               (size_t)(p->head_dim * element));
    for (int64_t i = 0; i < bytes; ++i)
        *written += copy[i] != FA_POISON_BYTE;
    free(copy);
    return FA_OK;
}

/**
 * The problem of @p call restricted to the query rows @p rows: q's rows
 * copied into @p q_rows ([batch][heads_q][count][head_dim] of the dtype).
 */
static fa_attn_problem sampled_problem(const flash_call *call, const int64_t *rows, int64_t count,
                                       void *q_rows)
{
    fa_attn_problem p = call->problem;
    const fa_tensor_view *q = &call->problem.q;
    for (int64_t b = 0; b < p.batch; ++b)
        for (int64_t h = 0; h < p.heads_q; ++h)
            for (int64_t r = 0; r < count; ++r)
                for (int64_t d = 0; d < p.head_dim; ++d)
                    fa_store(q_rows, q->dtype, ((b * p.heads_q + h) * count + r) * p.head_dim + d,
                             (float)fa_view_at(q, b, h, rows[r], d));
    p.nq = count;
    p.q = fa_view_bhnd(q_rows, q->dtype, p.heads_q, count, p.head_dim);
    p.sample_rows = rows; /* the mask reads the call's rows */
    p.sample_nq = call->problem.nq;
    return p;
}

fa_status flash_judge(const flash_call *call, const fa_attn_method *method, const int64_t *rows,
                      int64_t count, flash_verdict *verdict)
{
    const fa_attention_params *p = &call->params;
    *verdict = (flash_verdict){0};
    if (rows == NULL)
        count = p->nq;
    const int64_t judged = p->batch * p->heads_q * count;
    void *q_rows = NULL;
    float *o = malloc((size_t)(judged * p->head_dim + 1) * sizeof(float));
    float *lse = malloc((size_t)(judged + 1) * sizeof(float));
    fa_status status = o && lse ? FA_OK
                                : fa_fail(FA_ERR_OUT_OF_MEMORY, "judge: no host memory for %lld "
                                                                "rows", (long long)judged);
    fa_attn_problem problem = call->problem;
    if (status == FA_OK && rows != NULL) {
        q_rows = malloc((size_t)(judged * p->head_dim + 1) * (size_t)fa_dtype_size(p->dtype));
        status = q_rows ? FA_OK : fa_fail(FA_ERR_OUT_OF_MEMORY, "judge: no host memory for q");
        if (status == FA_OK)
            problem = sampled_problem(call, rows, count, q_rows);
    }
    fa_attn_reference ref = {0};
    if (status == FA_OK)
        status = fa_attention_reference(&problem, method, &ref);
    if (status == FA_OK)
        status = flash_gap_bytes(p, &verdict->gap_bytes);
    if (status == FA_OK) {
        flash_gather_o(p, rows, count, o);
        for (int64_t b = 0; p->lse != NULL && b < p->batch; ++b)
            for (int64_t h = 0; h < p->heads_q; ++h)
                for (int64_t r = 0; r < count; ++r)
                    lse[(b * p->heads_q + h) * count + r] =
                        p->lse[(b * p->heads_q + h) * p->nq + (rows != NULL ? rows[r] : r)];
        verdict->covered = fa_attention_covers(&ref, o, p->lse != NULL ? lse : NULL, &verdict->o,
                                               &verdict->lse) &&
                           verdict->gap_bytes == 0;
    }
    fa_attn_reference_free(&ref);
    free(q_rows);
    free(o);
    free(lse);
    return status;
}

/** Index @p i of a [batch][heads][count][inner] array of sampled rows, in the call's rows. */
static int64_t unsample(int64_t i, const int64_t *rows, int64_t count, int64_t nq, int64_t inner)
{
    if (i < 0)
        return i;
    const int64_t col = i % inner, r = (i / inner) % count, bh = i / inner / count;
    return (bh * nq + rows[r]) * inner + col;
}

/** Moves the coordinates of @p report from the sampled rows to the call's rows. */
static void unsample_report(fa_check_report *report, const int64_t *rows, int64_t count,
                            int64_t nq, int64_t inner)
{
    report->worst_index = unsample(report->worst_index, rows, count, nq, inner);
    report->invalid.index = unsample(report->invalid.index, rows, count, nq, inner);
    for (int m = 0; m < report->mismatches; ++m)
        report->first[m].index = unsample(report->first[m].index, rows, count, nq, inner);
}

bool flash_result_judge(fa_result *result, const char *name, const flash_call *call,
                        const fa_attn_method *method, const int64_t *rows, int64_t count)
{
    flash_verdict v;
    if (!fa_result_status(result, name, flash_judge(call, method, rows, count, &v)))
        return false;
    if (v.covered)
        return true;
    const fa_attention_params *p = &call->params;
    if (v.gap_bytes > 0) {
        fa_result_fail(result, name,
                       "wrote %lld bytes between the elements of o (o_strides {batch %lld, row "
                       "%lld, head %lld} leave gaps there that no output element owns)",
                       (long long)v.gap_bytes, (long long)p->o_strides.batch,
                       (long long)p->o_strides.row, (long long)p->o_strides.head);
        return false;
    }
    const bool o_wrong = v.o.uncovered > 0 || v.o.status != FA_OK;
    fa_check_report *report = o_wrong ? &v.o : &v.lse;
    if (rows != NULL)
        unsample_report(report, rows, count, p->nq, o_wrong ? p->head_dim : 1);
    fa_shape shape = fa_shape_4d(p->batch, p->heads_q, p->nq, o_wrong ? p->head_dim : 1);
    shape.rank = o_wrong ? 4 : 3; /* lse: (batch, head, row) */
    return fa_result_uncovered(result, name, o_wrong ? "o" : "lse", report, &shape);
}

/** |got - want| within @p tolerance relative to 1 + |want|; infinities equal. */
static bool near(double got, double want, double tolerance)
{
    if (isinf(want))
        return got == want;
    return fabs(got - want) <= tolerance * (1.0 + fabs(want));
}

fa_status flash_fixture_verify(flash_fixture *x, const fa_attn_method *method, double tolerance,
                               flash_fixture_verdict *verdict)
{
    const fa_attention_params *p = &x->c.call.params;
    fa_attn_reference ref = {0};
    FA_TRY(fa_attention_reference(&x->c.call.problem, method, &ref));
    const int64_t rows = flash_lse_count(p);
    verdict->differing = 0;
    for (int64_t i = 0; i < rows * p->head_dim; ++i)
        verdict->differing += !near(ref.o[i], x->o[i], tolerance);
    for (int64_t i = 0; i < rows; ++i)
        verdict->differing += !near(ref.lse[i], x->lse[i], tolerance);
    fa_attn_reference_free(&ref);
    const fa_dtype out = flash_o_dtype(p);
    for (int64_t h = 0; h < p->heads_q; ++h)
        for (int64_t r = 0; r < p->nq; ++r) {
            const int64_t i = h * p->nq + r;
            const int64_t at = h * p->o_strides.head + r * p->o_strides.row;
            for (int64_t c = 0; c < p->head_dim; ++c)
                fa_store(p->o, out, at + c, (float)x->o[i * p->head_dim + c]);
            p->lse[i] = (float)x->lse[i];
        }
    return flash_judge(&x->c.call, method, NULL, 0, &verdict->written);
}
