/**
 * @file validate.c
 * @brief Argument checks of every stage-04 launcher (plain C, no CUDA).
 *
 * The launchers of both the reference and the learner call these first, so a
 * bad argument gets the same status and message from both, and the checks are
 * tested on machines without a GPU. Nothing here dereferences a pointer.
 */
#include "online.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fa_attention_ref.h"
#include "fa_bytes.h"
#include "fa_index.h"

enum { FLOAT_BYTES = sizeof(float) };

/** Largest float count whose byte size fits a signed 64-bit offset. */
static int64_t max_floats(void)
{
    return fa_max_elements(FLOAT_BYTES);
}

/** rows * n floats (rows, n >= 0) in *@p count, or ::FA_ERR_OVERFLOW past 64-bit byte offsets. */
static fa_status require_row_floats(const char *op, int64_t rows, int64_t n, int64_t *count)
{
    *count = fa_mul_within(rows, n, max_floats());
    if (*count < 0)
        return fa_fail(
            FA_ERR_OVERFLOW,
            "%s: rows * n = %lld * %lld floats, expected at most %lld (64-bit byte offsets)", op,
            (long long)rows, (long long)n, (long long)max_floats());
    return FA_OK;
}

/** The checks of the four trace launchers; @p v is checked only for the output trace. */
static fa_status check_trace(const char *op, const float *x, bool with_values, const float *v,
                             const float *trace, int64_t rows, int64_t n, int64_t chunk)
{
    FA_TRY(fa_require_size(op, "rows", rows));
    FA_TRY(fa_require_size(op, "n", n));
    if (chunk < 1)
        return fa_fail(FA_ERR_INVALID_SIZE, "%s: chunk = %lld, expected chunk >= 1", op,
                       (long long)chunk);
    if (rows == 0 || n == 0)
        return FA_OK;
    int64_t count = 0;
    FA_TRY(require_row_floats(op, rows, n, &count));
    if (fa_ceil_div(rows, ONLINE_TRACE_THREADS) > FA_MAX_GRID_X)
        return fa_fail(
            FA_ERR_OVERFLOW,
            "%s: rows = %lld, expected at most %lld (one thread per row, 2^31 - 1 blocks)", op,
            (long long)rows, (long long)(FA_MAX_GRID_X * ONLINE_TRACE_THREADS));
    const int64_t trace_count = rows * online_chunk_count(n, chunk); /* <= count */

    FA_TRY(fa_require_array(op, "x", x, count, FLOAT_BYTES));
    if (with_values)
        FA_TRY(fa_require_array(op, "v", v, count, FLOAT_BYTES));
    FA_TRY(fa_require_array(op, "trace", trace, trace_count, FLOAT_BYTES));
    FA_TRY(fa_require_disjoint(op, "trace", trace, trace_count * FLOAT_BYTES, "x", x,
                               count * FLOAT_BYTES));
    if (with_values)
        FA_TRY(fa_require_disjoint(op, "trace", trace, trace_count * FLOAT_BYTES, "v", v,
                                   count * FLOAT_BYTES));
    return FA_OK;
}

fa_status online_max_trace_validate(const float *x, const float *max_trace, int64_t rows, int64_t n,
                                    int64_t chunk)
{
    return check_trace("online_max_trace", x, false, NULL, max_trace, rows, n, chunk);
}

fa_status online_correction_trace_validate(const float *x, const float *correction_trace,
                                           int64_t rows, int64_t n, int64_t chunk)
{
    return check_trace("online_correction_trace", x, false, NULL, correction_trace, rows, n, chunk);
}

fa_status online_sum_trace_validate(const float *x, const float *sum_trace, int64_t rows, int64_t n,
                                    int64_t chunk)
{
    return check_trace("online_sum_trace", x, false, NULL, sum_trace, rows, n, chunk);
}

fa_status online_output_trace_validate(const float *x, const float *v, const float *output_trace,
                                       int64_t rows, int64_t n, int64_t chunk)
{
    return check_trace("online_output_trace", x, true, v, output_trace, rows, n, chunk);
}

fa_status softmax_rows_online_validate(const float *x, const float *p, const float *lse,
                                       int64_t rows, int64_t n)
{
    const char *op = "softmax_rows_online";
    FA_TRY(fa_require_size(op, "rows", rows));
    FA_TRY(fa_require_size(op, "n", n));
    if (rows > FA_MAX_GRID_X)
        return fa_fail(FA_ERR_UNSUPPORTED,
                       "%s: rows = %lld, expected at most %lld (one block per row)", op,
                       (long long)rows, (long long)FA_MAX_GRID_X);
    int64_t count = 0;
    FA_TRY(require_row_floats(op, rows, n, &count));
    if (rows == 0)
        return FA_OK;

    const int64_t lse_count = lse != NULL ? rows : 0; /* optional */
    FA_TRY(fa_require_array(op, "x", x, count, FLOAT_BYTES));
    FA_TRY(fa_require_array(op, "p", p, count, FLOAT_BYTES));
    FA_TRY(fa_require_array(op, "lse", lse, lse_count, FLOAT_BYTES));
    FA_TRY(fa_require_disjoint(op, "p", p, count * FLOAT_BYTES, "x", x, count * FLOAT_BYTES));
    FA_TRY(fa_require_disjoint(op, "lse", lse, lse_count * FLOAT_BYTES, "x", x,
                               count * FLOAT_BYTES));
    FA_TRY(fa_require_disjoint(op, "lse", lse, lse_count * FLOAT_BYTES, "p", p,
                               count * FLOAT_BYTES));
    return FA_OK;
}

/** An element count of the attention problem: a * b * c * d, or -1 beyond max_floats(). */
static int64_t product4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    const int64_t ab = fa_mul_within(a, b, max_floats());
    const int64_t abc = ab < 0 ? -1 : fa_mul_within(ab, c, max_floats());
    return abc < 0 ? -1 : fa_mul_within(abc, d, max_floats());
}

fa_status attn_rows_online_validate(const attn_online_args *args)
{
    const char *op = "attn_rows_online";
    if (args == NULL)
        return fa_fail(FA_ERR_NULL_POINTER, "%s: args = NULL, expected a problem description", op);
    FA_TRY(fa_require_size(op, "batch", args->batch));
    FA_TRY(fa_require_size(op, "heads_q", args->heads_q));
    FA_TRY(fa_require_size(op, "heads_kv", args->heads_kv));
    FA_TRY(fa_require_size(op, "nq", args->nq));
    FA_TRY(fa_require_size(op, "nk", args->nk));
    if (args->heads_q > 0 && args->heads_kv < 1)
        return fa_fail(FA_ERR_INVALID_SIZE, "%s: heads_kv = %lld, expected heads_kv >= 1", op,
                       (long long)args->heads_kv);
    if (args->heads_q > 0 && args->heads_q % args->heads_kv != 0)
        return fa_fail(FA_ERR_INVALID_SIZE,
                       "%s: heads_q = %lld, expected a multiple of heads_kv = %lld", op,
                       (long long)args->heads_q, (long long)args->heads_kv);
    if (args->head_dim < 1 || args->head_dim > ATTN_ONLINE_MAX_HEAD_DIM)
        return fa_fail(FA_ERR_UNSUPPORTED, "%s: head_dim = %lld, supported: 1 .. %d", op,
                       (long long)args->head_dim, ATTN_ONLINE_MAX_HEAD_DIM);
    if (args->chunk < 1)
        return fa_fail(FA_ERR_INVALID_SIZE, "%s: chunk = %lld, expected chunk >= 1", op,
                       (long long)args->chunk);
    if (args->chunk > ATTN_ONLINE_MAX_CHUNK)
        return fa_fail(FA_ERR_UNSUPPORTED, "%s: chunk = %lld, supported: 1 .. %d", op,
                       (long long)args->chunk, ATTN_ONLINE_MAX_CHUNK);
    if (!isfinite(args->scale))
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "%s: scale = %g, expected a finite number", op,
                       (double)args->scale);
    FA_TRY(fa_require_mask(op, args->mask, FA_MASK_CAUSAL_BOTTOM_RIGHT)); /* windows: stage 07 */

    const int64_t q_count = product4(args->batch, args->heads_q, args->nq, args->head_dim);
    const int64_t kv_count = product4(args->batch, args->heads_kv, args->nk, args->head_dim);
    if (q_count < 0)
        return fa_fail(FA_ERR_OVERFLOW,
                       "%s: batch * heads_q * nq * head_dim = %lld * %lld * %lld * %lld floats, "
                       "expected at most %lld (64-bit byte offsets)",
                       op, (long long)args->batch, (long long)args->heads_q, (long long)args->nq,
                       (long long)args->head_dim, (long long)max_floats());
    if (kv_count < 0)
        return fa_fail(FA_ERR_OVERFLOW,
                       "%s: batch * heads_kv * nk * head_dim = %lld * %lld * %lld * %lld floats, "
                       "expected at most %lld (64-bit byte offsets)",
                       op, (long long)args->batch, (long long)args->heads_kv, (long long)args->nk,
                       (long long)args->head_dim, (long long)max_floats());
    /* q_count fits, so batch * heads_q and the row count do too. */
    const int64_t heads = args->batch * args->heads_q;
    const int64_t rows = heads * args->nq;
    const int64_t blocks =
        fa_mul_within(heads, fa_ceil_div(args->nq, ATTN_ONLINE_WARPS), FA_MAX_GRID_X);
    if (blocks < 0)
        return fa_fail(FA_ERR_OVERFLOW,
                       "%s: batch * heads_q * ceil(nq / %d) = %lld * %lld * %lld blocks, expected "
                       "at most %lld",
                       op, ATTN_ONLINE_WARPS, (long long)args->batch, (long long)args->heads_q,
                       (long long)fa_ceil_div(args->nq, ATTN_ONLINE_WARPS),
                       (long long)FA_MAX_GRID_X);
    if (rows == 0)
        return FA_OK;

    const int64_t lse_count = args->lse != NULL ? rows : 0; /* optional */
    FA_TRY(fa_require_array(op, "q", args->q, q_count, FLOAT_BYTES));
    FA_TRY(fa_require_array(op, "k", args->k, kv_count, FLOAT_BYTES));
    FA_TRY(fa_require_array(op, "v", args->v, kv_count, FLOAT_BYTES));
    FA_TRY(fa_require_array(op, "o", args->o, q_count, FLOAT_BYTES));
    FA_TRY(fa_require_array(op, "lse", args->lse, lse_count, FLOAT_BYTES));
    const char *input_names[3] = {"q", "k", "v"};
    const float *inputs[3] = {args->q, args->k, args->v};
    const int64_t input_bytes[3] = {q_count * FLOAT_BYTES, kv_count * FLOAT_BYTES,
                                    kv_count * FLOAT_BYTES};
    for (int i = 0; i < 3; ++i) {
        FA_TRY(fa_require_disjoint(op, "o", args->o, q_count * FLOAT_BYTES, input_names[i],
                                   inputs[i], input_bytes[i]));
        FA_TRY(fa_require_disjoint(op, "lse", args->lse, lse_count * FLOAT_BYTES, input_names[i],
                                   inputs[i], input_bytes[i]));
    }
    FA_TRY(fa_require_disjoint(op, "lse", args->lse, lse_count * FLOAT_BYTES, "o", args->o,
                               q_count * FLOAT_BYTES));
    return FA_OK;
}
