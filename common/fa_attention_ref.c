/**
 * @file fa_attention_ref.c
 * @brief Attention in double precision with the per-element bound of a method.
 *
 * One query row at a time: the scores and A_j in double, the maximum, the
 * weights, l and o with Neumaier sums (rows of many thousand keys stay exact to
 * a few double ulps), then the row's bound weights (fa_bound.c) and one pass
 * over v for the bound of every column. K and V of a head are widened to
 * double once and shared by the query heads of its group (GQA).
 */
#include "fa_attention_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa_bound.h"
#include "fa_bytes.h"
#include "fa_math.h"
#include "fa_reference.h"

fa_tensor_view fa_view_bhnd(const void *data, fa_dtype dtype, int64_t heads, int64_t rows,
                            int64_t dim)
{
    return (fa_tensor_view){data, dtype, heads * rows * dim, rows * dim, dim};
}

fa_tensor_view fa_view_bnhd(const void *data, fa_dtype dtype, int64_t heads, int64_t rows,
                            int64_t dim)
{
    return (fa_tensor_view){data, dtype, rows * heads * dim, dim, heads * dim};
}

static int64_t view_offset(const fa_tensor_view *t, int64_t b, int64_t h, int64_t n)
{
    return b * t->stride_batch + h * t->stride_head + n * t->stride_row;
}

double fa_view_at(const fa_tensor_view *t, int64_t b, int64_t h, int64_t n, int64_t d)
{
    return (double)fa_load(t->data, t->dtype, view_offset(t, b, h, n) + d);
}

fa_status fa_require_mask(const char *op, fa_mask mask, fa_mask most)
{
    static const char *const names[] = {"FA_MASK_NONE", "FA_MASK_CAUSAL_TOP_LEFT",
                                        "FA_MASK_CAUSAL_BOTTOM_RIGHT", "FA_MASK_WINDOW"};
    if ((int)mask < 0 || (int)mask >= FA_COUNT_OF(names))
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "%s: mask = %d, expected FA_MASK_NONE, "
                       "FA_MASK_CAUSAL_TOP_LEFT, FA_MASK_CAUSAL_BOTTOM_RIGHT or FA_MASK_WINDOW",
                       op, (int)mask);
    if (mask <= most)
        return FA_OK;
    char supported[128] = "";
    for (int m = 0; m <= (int)most; ++m)
        snprintf(supported + strlen(supported), sizeof supported - strlen(supported), "%s%s",
                 m > 0 ? ", " : "", names[m]);
    return fa_fail(FA_ERR_UNSUPPORTED, "%s: mask = %d (%s), supported: %s", op, (int)mask, names[mask],
                   supported);
}

fa_status fa_require_window(const char *op, fa_mask mask, int64_t left, int64_t right)
{
    if (mask == FA_MASK_WINDOW && (left < -1 || right < -1))
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "%s: window_left = %lld, window_right = %lld, expected each >= 0, or -1 "
                       "for a side without bound",
                       op, (long long)left, (long long)right);
    return FA_OK;
}

fa_key_window fa_attn_band(const fa_attn_problem *p)
{
    return fa_mask_band(p->mask, p->window_left, p->window_right,
                        p->sample_rows != NULL ? p->sample_nq : p->nq, p->nk);
}

bool fa_attn_allows(const fa_attn_problem *p, int64_t b, int64_t i, int64_t j)
{
    if (p->key_length && j >= p->key_length[b])
        return false;
    const fa_key_range range = fa_window_key_range(fa_attn_band(p), fa_attn_row(p, i), p->nk);
    return j >= range.begin && j < range.end;
}

static bool valid_dtype(fa_dtype d) { return d == FA_F32 || d == FA_BF16 || d == FA_F16; }

fa_status fa_view_require_extent(const char *op, const char *name, const fa_tensor_view *t,
                                 int64_t batch, int64_t heads, int64_t rows, int64_t dim)
{
    if (t->stride_batch < 0 || t->stride_head < 0 || t->stride_row < 0)
        return fa_fail(FA_ERR_BAD_STRIDE, "%s: %s strides (%lld, %lld, %lld) must be >= 0", op, name,
                       (long long)t->stride_batch, (long long)t->stride_head, (long long)t->stride_row);
    if (batch <= 0 || heads <= 0 || rows <= 0 || dim <= 0)
        return FA_OK;
    /* The last element read: (B-1) s_b + (H-1) s_h + (N-1) s_n + D - 1, each
     * term and each partial sum within the elements a byte offset can reach. */
    const int64_t most = fa_max_elements(fa_dtype_size(t->dtype));
    const int64_t terms[4] = {fa_mul_within(batch - 1, t->stride_batch, most),
                              fa_mul_within(heads - 1, t->stride_head, most),
                              fa_mul_within(rows - 1, t->stride_row, most), dim - 1};
    int64_t last = 0;
    for (int i = 0; i < 4; i++) {
        if (terms[i] < 0 || terms[i] >= most - last)
            return fa_fail(FA_ERR_OVERFLOW,
                           "%s: %s of [%lld][%lld][%lld][%lld] with strides (%lld, %lld, %lld) reaches "
                           "past element %lld, the most a 64-bit byte offset of %s reaches",
                           op, name, (long long)batch, (long long)heads, (long long)rows,
                           (long long)dim, (long long)t->stride_batch, (long long)t->stride_head,
                           (long long)t->stride_row, (long long)most - 1, fa_dtype_name(t->dtype));
        last += terms[i];
    }
    return FA_OK;
}

static fa_status validate_view(const fa_tensor_view *t, const char *name, bool used, int64_t batch,
                               int64_t heads, int64_t rows, int64_t dim)
{
    if (!valid_dtype(t->dtype))
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "attention reference: %s.dtype = %d, expected fp32, bf16 or fp16",
                       name, (int)t->dtype);
    if (!used)
        return FA_OK;
    if (!t->data)
        return fa_fail(FA_ERR_NULL_POINTER, "attention reference: %s.data is NULL with a non-empty shape", name);
    return fa_view_require_extent("attention reference", name, t, batch, heads, rows, dim);
}

fa_status fa_attn_require_sizes(const char *op, const fa_attn_problem *p, int64_t *rows,
                                int64_t *elements)
{
    const int64_t row_factors[3] = {p->batch, p->heads_q, p->nq};
    const int64_t output_factors[4] = {p->batch, p->heads_q, p->nq, p->head_dim};
    FA_TRY(fa_ref_elements(op, "batch * heads_q * nq", row_factors, 3, (int64_t)sizeof(double), rows));
    FA_TRY(fa_ref_elements(op, "batch * heads_q * nq * head_dim", output_factors, 4,
                           (int64_t)sizeof(double), elements));
    /* One kv head widened to double, and the bound's scratch of every key. */
    const int64_t kv_factors[2] = {p->nk, p->head_dim};
    const int64_t scratch_factors[2] = {p->nk, FA_BOUND_SCRATCH_PER_KEY};
    int64_t count;
    FA_TRY(fa_ref_elements(op, "nk * head_dim", kv_factors, 2, (int64_t)sizeof(double), &count));
    return fa_ref_elements(op, "nk * FA_BOUND_SCRATCH_PER_KEY", scratch_factors, 2,
                           (int64_t)sizeof(double), &count);
}

/**
 * The most keys one row of @p p spans, first to last allowed (key_length
 * cuts a prefix mask only). A row's range [lo(i), hi(i)) has both ends
 * nondecreasing and piecewise linear in i, each end bending only where it is
 * clipped at key 0 or key nk: its length rises, stays, then falls, so the
 * longest row is the first, the last, or one at a bend.
 */
int64_t fa_attn_longest_row(const fa_attn_problem *p)
{
    /* A sample's rows are some of its call's: the call's longest row bounds theirs. */
    const int64_t nq = p->sample_rows != NULL ? p->sample_nq : p->nq;
    if (p->nq == 0 || nq == 0)
        return 0;
    const fa_key_window w = fa_attn_band(p);
    const int64_t bends[] = {0, nq - 1, w.left - w.offset, p->nk + w.left - w.offset,
                             -w.offset - w.right - 1, p->nk - w.offset - w.right - 1};
    int64_t longest = 0;
    for (int64_t b = 0; b < (p->key_length ? p->batch : 1); b++) {
        const int64_t limit = p->key_length ? p->key_length[b] : p->nk;
        for (int c = 0; c < FA_COUNT_OF(bends); c++) {
            const int64_t i = bends[c] < 0 ? 0 : (bends[c] >= nq ? nq - 1 : bends[c]);
            const fa_key_range range = fa_window_key_range(w, i, p->nk);
            const int64_t end = range.end < limit ? range.end : limit;
            longest = end - range.begin > longest ? end - range.begin : longest;
        }
    }
    return longest;
}

static fa_status validate(const fa_attn_problem *p, const fa_attn_method *m)
{
    if (p->batch < 0 || p->heads_q < 0 || p->heads_kv < 0 || p->nq < 0 || p->nk < 0 || p->head_dim < 0)
        return fa_fail(FA_ERR_INVALID_SIZE,
                       "attention reference: sizes (batch %lld, heads_q %lld, heads_kv %lld, nq %lld, nk %lld, "
                       "head_dim %lld) must be >= 0",
                       (long long)p->batch, (long long)p->heads_q, (long long)p->heads_kv, (long long)p->nq,
                       (long long)p->nk, (long long)p->head_dim);
    if (p->heads_q > 0 && (p->heads_kv == 0 || p->heads_q % p->heads_kv != 0))
        return fa_fail(FA_ERR_INVALID_SIZE,
                       "attention reference: heads_q = %lld is not a multiple of heads_kv = %lld",
                       (long long)p->heads_q, (long long)p->heads_kv);
    if (!isfinite(p->scale))
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "attention reference: scale = %g, expected a finite number",
                       p->scale);
    FA_TRY(fa_require_mask("attention reference", p->mask, FA_MASK_WINDOW));
    FA_TRY(fa_require_window("attention reference", p->mask, p->window_left, p->window_right));
    for (int64_t r = 0; p->sample_rows != NULL && r < p->nq; r++)
        if (p->sample_rows[r] < 0 || p->sample_rows[r] >= p->sample_nq)
            return fa_fail(FA_ERR_INVALID_SIZE,
                           "attention reference: sample_rows[%lld] = %lld, expected 0..%lld (a row of "
                           "the sampled call of sample_nq = %lld rows)",
                           (long long)r, (long long)p->sample_rows[r], (long long)p->sample_nq - 1,
                           (long long)p->sample_nq);
    int64_t rows, elements;
    FA_TRY(fa_attn_require_sizes("attention reference", p, &rows, &elements));
    const bool rows_used = p->batch > 0 && p->heads_q > 0 && p->nq > 0 && p->head_dim > 0;
    const bool keys_used = rows_used && p->nk > 0;
    FA_TRY(validate_view(&p->q, "q", rows_used, p->batch, p->heads_q, p->nq, p->head_dim));
    FA_TRY(validate_view(&p->k, "k", keys_used, p->batch, p->heads_kv, p->nk, p->head_dim));
    FA_TRY(validate_view(&p->v, "v", keys_used, p->batch, p->heads_kv, p->nk, p->head_dim));
    if (p->key_length) {
        for (int64_t b = 0; b < p->batch; b++) {
            const int64_t length = p->key_length[b];
            if (length < 0 || length > p->nk)
                return fa_fail(FA_ERR_INVALID_SIZE, "attention reference: key_length[%lld] = %lld, expected 0..%lld",
                               (long long)b, (long long)length, (long long)p->nk);
            /* Bottom-right alignment here is to nk, not to the sequence's own
             * length as FlashAttention's varlen kernels align it; the two
             * differ only for a partial length, which is refused rather than
             * given a reference no kernel of the course computes. */
            if ((p->mask == FA_MASK_CAUSAL_BOTTOM_RIGHT || p->mask == FA_MASK_WINDOW) && length > 0 &&
                length < p->nk)
                return fa_fail(FA_ERR_UNSUPPORTED, "attention reference: key_length[%lld] = %lld of nk = %lld with a "
                               "mask aligned bottom-right (alignment to each sequence's own length is not modelled)",
                               (long long)b, (long long)length, (long long)p->nk);
        }
    }
    if (!valid_dtype(m->input_dtype) || !valid_dtype(m->p_dtype) || !valid_dtype(m->output_dtype))
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "attention reference: method dtypes (input %d, p %d, output %d) "
                       "must be fa_dtype values", (int)m->input_dtype, (int)m->p_dtype, (int)m->output_dtype);
    if (m->accumulation != FA_ACCUM_FP32 && m->accumulation != FA_ACCUM_TENSOR_CORE)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "attention reference: method.accumulation = %d", (int)m->accumulation);
    if (m->exp_method != FA_EXP_EXPF && m->exp_method != FA_EXP_EXP2_PRESCALED && m->exp_method != FA_EXP_FAST)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "attention reference: method.exp_method = %d", (int)m->exp_method);
    if (m->normalisation != FA_NORM_DIVIDE && m->normalisation != FA_NORM_RECIPROCAL)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "attention reference: method.normalisation = %d",
                       (int)m->normalisation);
    if (m->block_n < 0)
        return fa_fail(FA_ERR_INVALID_SIZE, "attention reference: method.block_n = %lld, expected >= 0",
                       (long long)m->block_n);
    /* Tensor cores read 16-bit operands: fp32 inputs would be rounded to tf32
     * first, an error this bound does not model. */
    if (m->accumulation == FA_ACCUM_TENSOR_CORE && (m->input_dtype == FA_F32 || m->p_dtype == FA_F32))
        return fa_fail(FA_ERR_UNSUPPORTED, "attention reference: tensor-core accumulation needs bf16 or fp16 "
                       "inputs and P (input %s, P %s); tf32 rounding is not modelled",
                       fa_dtype_name(m->input_dtype), fa_dtype_name(m->p_dtype));
    /* Rows too long for a finite bound are refused before anything is allocated. */
    return rows_used ? fa_bound_row_supported(m, fa_attn_longest_row(p), p->head_dim) : FA_OK;
}

/** Room for the reason a row was refused, kept while the row's coordinate is added. */
enum { FA_ROW_REASON = 512 };

/** K or V of one (batch, kv head) widened to double: [nk][head_dim]. */
static void widen_head(const fa_tensor_view *t, int64_t b, int64_t g, int64_t nk, int64_t dim, double *out)
{
    for (int64_t j = 0; j < nk; j++) {
        const int64_t base = view_offset(t, b, g, j);
        for (int64_t d = 0; d < dim; d++)
            out[j * dim + d] = (double)fa_load(t->data, t->dtype, base + d);
    }
}

/** Per-call work arrays, sized by nk and head_dim. */
typedef struct row_workspace {
    double *k, *v;               /* [nk][D] of the current kv head */
    double *q;                   /* [D] */
    double *score, *abs_dot;     /* [nk] */
    double *diff_weight, *abs_weight;
    double *bound_scratch;       /* [FA_BOUND_SCRATCH_PER_KEY * nk] */
    fa_ksum *o_sum;              /* [D] */
} row_workspace;

static void workspace_free(row_workspace *w)
{
    free(w->k);
    free(w->v);
    free(w->q);
    free(w->score);
    free(w->abs_dot);
    free(w->diff_weight);
    free(w->abs_weight);
    free(w->bound_scratch);
    free(w->o_sum);
}

static fa_status workspace_alloc(row_workspace *w, int64_t nk, int64_t dim)
{
    const size_t keys = (size_t)nk + 1, kv = (size_t)(nk * dim) + 1, d = (size_t)dim + 1;
    *w = (row_workspace){
        .k = malloc(kv * sizeof(double)),
        .v = malloc(kv * sizeof(double)),
        .q = malloc(d * sizeof(double)),
        .score = malloc(keys * sizeof(double)),
        .abs_dot = malloc(keys * sizeof(double)),
        .diff_weight = malloc(keys * sizeof(double)),
        .abs_weight = malloc(keys * sizeof(double)),
        .bound_scratch = malloc(keys * FA_BOUND_SCRATCH_PER_KEY * sizeof(double)),
        .o_sum = malloc(d * sizeof(fa_ksum)),
    };
    if (!w->k || !w->v || !w->q || !w->score || !w->abs_dot || !w->diff_weight || !w->abs_weight ||
        !w->bound_scratch || !w->o_sum) {
        workspace_free(w);
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "attention reference: no host memory for nk = %lld, head_dim = %lld",
                       (long long)nk, (long long)dim);
    }
    return FA_OK;
}

/*
 * One query row: o[D], *lse, o_bound[D], *lse_bound. A row with no allowed
 * key gets o = 0, lse = -inf and zero bounds: a kernel must produce exactly
 * that. A NaN or +inf among the allowed scores (from a NaN or an infinity in
 * q or k) makes the whole row NaN, as it does in every kernel: it reaches l
 * (exp(inf - inf) is NaN), and l divides every column. Every allowed key's
 * row of v is multiplied by its weight, even a weight that is 0 (a -inf
 * score, or one that underflows), so a NaN or Inf there reaches o as it does
 * in a kernel that sums the allowed keys; a masked key's row of v is never
 * read. Where o is not finite the comparison is exact and its bound 0.
 * Returns the bound's refusal (fa_bound_row()) for a row it cannot bound.
 */
static fa_status reference_row(const fa_attn_problem *p, const fa_attn_method *m, fa_bound_term omitted,
                               int64_t b, int64_t i, row_workspace *w, double *o, double *lse,
                               double *o_bound, double *lse_bound)
{
    const int64_t nk = p->nk, dim = p->head_dim;
    double max = -INFINITY;
    bool nan_score = false;
    for (int64_t j = 0; j < nk; j++) {
        w->score[j] = -INFINITY;
        w->abs_dot[j] = 0.0;
        if (!fa_attn_allows(p, b, i, j))
            continue;
        const double *k = w->k + j * dim;
        double dot = 0.0, abs_dot = 0.0;
        for (int64_t d = 0; d < dim; d++) {
            dot += w->q[d] * k[d]; /* the product of two floats is exact in double */
            abs_dot += fabs(w->q[d] * k[d]);
        }
        w->score[j] = p->scale * dot;
        w->abs_dot[j] = abs_dot;
        nan_score |= isnan(w->score[j]) || w->score[j] == INFINITY;
        max = fa_max_nan_double(max, w->score[j]);
    }
    if (nan_score) {
        for (int64_t d = 0; d < dim; d++) {
            o[d] = NAN;
            o_bound[d] = 0.0;
        }
        *lse = NAN;
        *lse_bound = 0.0;
        return FA_OK;
    }
    if (max == -INFINITY) {
        /* Every allowed score is -inf (or there is none): every weight is 0,
         * and 0 * v is 0 unless v is NaN or Inf. */
        for (int64_t d = 0; d < dim; d++)
            o[d] = o_bound[d] = 0.0;
        for (int64_t j = 0; j < nk; j++) {
            if (!fa_attn_allows(p, b, i, j))
                continue;
            for (int64_t d = 0; d < dim; d++)
                o[d] += 0.0 * w->v[j * dim + d];
        }
        *lse = -INFINITY;
        *lse_bound = 0.0;
        return FA_OK;
    }

    fa_ksum l = {0.0, 0.0};
    for (int64_t d = 0; d < dim; d++)
        w->o_sum[d] = (fa_ksum){0.0, 0.0};
    for (int64_t j = 0; j < nk; j++) {
        if (!fa_attn_allows(p, b, i, j))
            continue;
        /* No shortcut for a weight of 0: its v row must still reach o. */
        const double e = exp(w->score[j] - max);
        fa_ksum_add(&l, e);
        const double *v = w->v + j * dim;
        for (int64_t d = 0; d < dim; d++)
            fa_ksum_add(&w->o_sum[d], e * v[d]);
    }
    const double sum = fa_ksum_value(&l);
    for (int64_t d = 0; d < dim; d++)
        o[d] = fa_ksum_value(&w->o_sum[d]) / sum;
    *lse = max + log(sum);

    const fa_bound_row_input row = {nk, w->score, w->abs_dot, p->scale, dim, max, sum, omitted};
    fa_bound_row_terms terms = {.diff_weight = w->diff_weight, .abs_weight = w->abs_weight};
    FA_TRY(fa_bound_row(m, &row, w->bound_scratch, &terms));
    fa_bound_row_add_reference_error(&row, &terms);
    for (int64_t d = 0; d < dim; d++)
        o_bound[d] = terms.o_weight * fabs(o[d]) + terms.o_floor;
    for (int64_t j = 0; j < nk; j++) {
        const double dw = terms.diff_weight[j], aw = terms.abs_weight[j];
        if (dw == 0.0 && aw == 0.0)
            continue;
        const double *v = w->v + j * dim;
        for (int64_t d = 0; d < dim; d++)
            o_bound[d] += dw * fabs(v[d] - o[d]) + aw * fabs(v[d]);
    }
    for (int64_t d = 0; d < dim; d++) /* a NaN or Inf in v: compared exactly */
        o_bound[d] = isfinite(o[d]) ? o_bound[d] : 0.0;
    *lse_bound = terms.lse_bound;
    return FA_OK;
}

fa_status fa_attention_reference(const fa_attn_problem *p, const fa_attn_method *m,
                                 fa_attn_reference *out)
{
    return fa_attention_reference_without(p, m, FA_BOUND_TERM_NONE, out);
}

fa_status fa_attention_reference_without(const fa_attn_problem *p, const fa_attn_method *m,
                                         fa_bound_term omitted, fa_attn_reference *out)
{
    if (!p || !m || !out)
        return fa_fail(FA_ERR_NULL_POINTER, "attention reference: %s is NULL",
                       !p ? "problem" : !m ? "method" : "out");
    *out = (fa_attn_reference){0};
    FA_TRY(validate(p, m));
    const int64_t rows = p->batch * p->heads_q * p->nq; /* within their limits: validate() */
    const int64_t elements = rows * p->head_dim;
    out->batch = p->batch;
    out->heads = p->heads_q;
    out->rows = p->nq;
    out->dim = p->head_dim;
    if (elements == 0)
        return FA_OK;

    out->o = malloc((size_t)elements * sizeof(double));
    out->o_bound = malloc((size_t)elements * sizeof(double));
    out->lse = malloc((size_t)rows * sizeof(double));
    out->lse_bound = malloc((size_t)rows * sizeof(double));
    row_workspace w;
    if (!out->o || !out->o_bound || !out->lse || !out->lse_bound) {
        fa_attn_reference_free(out);
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "attention reference: no host memory for %lld outputs",
                       (long long)elements);
    }
    const fa_status status = workspace_alloc(&w, p->nk, p->head_dim);
    if (status != FA_OK) {
        fa_attn_reference_free(out);
        return status;
    }

    const int64_t group = p->heads_q / p->heads_kv;
    fa_status row_status = FA_OK;
    for (int64_t b = 0; b < p->batch && row_status == FA_OK; b++) {
        for (int64_t g = 0; g < p->heads_kv && row_status == FA_OK; g++) {
            widen_head(&p->k, b, g, p->nk, p->head_dim, w.k);
            widen_head(&p->v, b, g, p->nk, p->head_dim, w.v);
            for (int64_t h = g * group; h < (g + 1) * group && row_status == FA_OK; h++) {
                for (int64_t i = 0; i < p->nq && row_status == FA_OK; i++) {
                    const int64_t row = (b * p->heads_q + h) * p->nq + i;
                    const int64_t base = view_offset(&p->q, b, h, i);
                    for (int64_t d = 0; d < p->head_dim; d++)
                        w.q[d] = (double)fa_load(p->q.data, p->q.dtype, base + d);
                    row_status = reference_row(p, m, omitted, b, i, &w, out->o + row * p->head_dim,
                                               out->lse + row, out->o_bound + row * p->head_dim,
                                               out->lse_bound + row);
                    if (row_status != FA_OK) {
                        char why[FA_ROW_REASON];
                        snprintf(why, sizeof why, "%s", fa_last_error());
                        fa_fail(row_status, "attention reference: (batch %lld, head %lld, row %lld): %s",
                                (long long)b, (long long)h, (long long)i, why);
                    }
                }
            }
        }
    }
    workspace_free(&w);
    if (row_status != FA_OK)
        fa_attn_reference_free(out); /* no bound, no reference: nothing to judge with */
    return row_status;
}

void fa_attn_reference_free(fa_attn_reference *r)
{
    if (!r)
        return;
    free(r->o);
    free(r->o_bound);
    free(r->lse);
    free(r->lse_bound);
    *r = (fa_attn_reference){0};
}

bool fa_attention_covers(const fa_attn_reference *ref, const float *o, const float *lse,
                         fa_check_report *o_report, fa_check_report *lse_report)
{
    const int64_t rows = ref->batch * ref->heads * ref->rows;
    bool covered = fa_check_covers(o, ref->o, ref->o_bound, rows * ref->dim, o_report);
    if (lse)
        covered = fa_check_covers(lse, ref->lse, ref->lse_bound, rows, lse_report) && covered;
    else if (lse_report)
        fa_check_covers(NULL, NULL, NULL, 0, lse_report);
    return covered;
}
