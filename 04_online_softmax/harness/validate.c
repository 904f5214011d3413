/**
 * @file validate.c
 * @brief Argument checks of every stage-04 launcher (plain C, no CUDA).
 *
 * The launchers of both the reference and the learner call these first, so a
 * bad argument gets the same status and message from both, and the checks are
 * tested on machines without a GPU. Nothing here dereferences a pointer.
 */
#include "online.h"
#include "fa_index.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { FLOAT_BYTES = sizeof(float) };

/** Largest element count whose byte size fits a signed 64-bit offset. */
static const int64_t MAX_FLOATS = INT64_MAX / FLOAT_BYTES;

/** a * b for a, b >= 0, or -1 when the product exceeds @p limit. */
static int64_t product_within(int64_t a, int64_t b, int64_t limit)
{
    if (a != 0 && b > limit / a)
        return -1;
    return a * b;
}

/** True when [p, p + p_floats) and [q, q + q_floats) share a byte (NULL or empty never does). */
static bool ranges_overlap(const float *p, int64_t p_floats, const float *q, int64_t q_floats)
{
    if (p == NULL || q == NULL || p_floats <= 0 || q_floats <= 0)
        return false;
    const uintptr_t p0 = (uintptr_t)p, q0 = (uintptr_t)q;
    return p0 < q0 + (uintptr_t)q_floats * FLOAT_BYTES &&
           q0 < p0 + (uintptr_t)p_floats * FLOAT_BYTES;
}

/**
 * One array of @p count floats: present when count > 0, and aligned as a
 * float wherever it is given (an optional array may be NULL).
 */
static fa_status check_array(const char *op, const char *name, const float *p, int64_t count,
                             bool optional)
{
    if (p == NULL) {
        if (optional || count == 0)
            return FA_OK;
        return fa_fail(FA_ERR_NULL_POINTER,
                       "%s: %s = NULL with %lld elements to access, expected a device array", op,
                       name, (long long)count);
    }
    if ((uintptr_t)p % FLOAT_BYTES != 0)
        return fa_fail(FA_ERR_MISALIGNED,
                       "%s: %s = %p is not %d-byte aligned, expected a float array", op, name,
                       (const void *)p, (int)FLOAT_BYTES);
    return FA_OK;
}

/** An output that must not share memory with an input (or another output). */
static fa_status check_disjoint(const char *op, const char *out_name, const float *out,
                                int64_t out_count, const char *in_name, const float *in,
                                int64_t in_count)
{
    if (ranges_overlap(out, out_count, in, in_count))
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "%s: %s = %p overlaps %s = %p, expected disjoint arrays", op, out_name,
                       (const void *)out, in_name, (const void *)in);
    return FA_OK;
}

static fa_status check_size(const char *op, const char *name, int64_t value)
{
    if (value < 0)
        return fa_fail(FA_ERR_INVALID_SIZE, "%s: %s = %lld, expected %s >= 0", op, name,
                       (long long)value, name);
    return FA_OK;
}

/** The checks of the four trace launchers; @p v is checked only for the output trace. */
static fa_status check_trace(const char *op, const float *x, bool with_values, const float *v,
                             const float *trace, int64_t rows, int64_t n, int64_t chunk)
{
    FA_TRY(check_size(op, "rows", rows));
    FA_TRY(check_size(op, "n", n));
    if (chunk < 1)
        return fa_fail(FA_ERR_INVALID_SIZE, "%s: chunk = %lld, expected chunk >= 1", op,
                       (long long)chunk);
    if (rows == 0 || n == 0)
        return FA_OK;
    const int64_t count = product_within(rows, n, MAX_FLOATS);
    if (count < 0)
        return fa_fail(
            FA_ERR_OVERFLOW,
            "%s: rows * n = %lld * %lld floats, expected at most %lld (64-bit byte offsets)", op,
            (long long)rows, (long long)n, (long long)MAX_FLOATS);
    if (fa_ceil_div(rows, ONLINE_TRACE_THREADS) > FA_MAX_GRID_X)
        return fa_fail(
            FA_ERR_OVERFLOW,
            "%s: rows = %lld, expected at most %lld (one thread per row, 2^31 - 1 blocks)", op,
            (long long)rows, (long long)(FA_MAX_GRID_X * ONLINE_TRACE_THREADS));
    const int64_t trace_count = rows * online_chunk_count(n, chunk);

    FA_TRY(check_array(op, "x", x, count, false));
    if (with_values)
        FA_TRY(check_array(op, "v", v, count, false));
    FA_TRY(check_array(op, "trace", trace, trace_count, false));
    FA_TRY(check_disjoint(op, "trace", trace, trace_count, "x", x, count));
    if (with_values)
        FA_TRY(check_disjoint(op, "trace", trace, trace_count, "v", v, count));
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
    FA_TRY(check_size(op, "rows", rows));
    FA_TRY(check_size(op, "n", n));
    if (rows > FA_MAX_GRID_X)
        return fa_fail(FA_ERR_UNSUPPORTED,
                       "%s: rows = %lld, expected at most %lld (one block per row)", op,
                       (long long)rows, (long long)FA_MAX_GRID_X);
    const int64_t count = product_within(rows, n, MAX_FLOATS);
    if (count < 0)
        return fa_fail(
            FA_ERR_OVERFLOW,
            "%s: rows * n = %lld * %lld floats, expected at most %lld (64-bit byte offsets)", op,
            (long long)rows, (long long)n, (long long)MAX_FLOATS);
    if (rows == 0)
        return FA_OK;

    FA_TRY(check_array(op, "x", x, count, false));
    FA_TRY(check_array(op, "p", p, count, false));
    FA_TRY(check_array(op, "lse", lse, rows, true));
    FA_TRY(check_disjoint(op, "p", p, count, "x", x, count));
    FA_TRY(check_disjoint(op, "lse", lse, rows, "x", x, count));
    FA_TRY(check_disjoint(op, "lse", lse, rows, "p", p, count));
    return FA_OK;
}

fa_status attn_rows_online_validate(const attn_online_args *args)
{
    const char *op = "attn_rows_online";
    if (args == NULL)
        return fa_fail(FA_ERR_NULL_POINTER, "%s: args = NULL, expected a problem description", op);
    FA_TRY(check_size(op, "batch", args->batch));
    FA_TRY(check_size(op, "heads_q", args->heads_q));
    FA_TRY(check_size(op, "heads_kv", args->heads_kv));
    FA_TRY(check_size(op, "nq", args->nq));
    FA_TRY(check_size(op, "nk", args->nk));
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
    if (args->mask != FA_MASK_NONE && args->mask != FA_MASK_CAUSAL_TOP_LEFT &&
        args->mask != FA_MASK_CAUSAL_BOTTOM_RIGHT)
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "%s: mask = %d, expected FA_MASK_NONE, FA_MASK_CAUSAL_TOP_LEFT or "
                       "FA_MASK_CAUSAL_BOTTOM_RIGHT",
                       op, (int)args->mask);

    const int64_t heads = product_within(args->batch, args->heads_q, MAX_FLOATS);
    const int64_t rows = heads < 0 ? -1 : product_within(heads, args->nq, MAX_FLOATS);
    const int64_t q_count = rows < 0 ? -1 : product_within(rows, args->head_dim, MAX_FLOATS);
    const int64_t kv_heads = product_within(args->batch, args->heads_kv, MAX_FLOATS);
    const int64_t keys = kv_heads < 0 ? -1 : product_within(kv_heads, args->nk, MAX_FLOATS);
    const int64_t kv_count = keys < 0 ? -1 : product_within(keys, args->head_dim, MAX_FLOATS);
    if (q_count < 0)
        return fa_fail(FA_ERR_OVERFLOW,
                       "%s: batch * heads_q * nq * head_dim = %lld * %lld * %lld * %lld floats, "
                       "expected at most %lld (64-bit byte offsets)",
                       op, (long long)args->batch, (long long)args->heads_q, (long long)args->nq,
                       (long long)args->head_dim, (long long)MAX_FLOATS);
    if (kv_count < 0)
        return fa_fail(FA_ERR_OVERFLOW,
                       "%s: batch * heads_kv * nk * head_dim = %lld * %lld * %lld * %lld floats, "
                       "expected at most %lld (64-bit byte offsets)",
                       op, (long long)args->batch, (long long)args->heads_kv, (long long)args->nk,
                       (long long)args->head_dim, (long long)MAX_FLOATS);
    const int64_t blocks =
        product_within(heads, fa_ceil_div(args->nq, ATTN_ONLINE_WARPS), FA_MAX_GRID_X);
    if (blocks < 0)
        return fa_fail(FA_ERR_OVERFLOW,
                       "%s: batch * heads_q * ceil(nq / %d) = %lld * %lld * %lld blocks, expected "
                       "at most %lld",
                       op, ATTN_ONLINE_WARPS, (long long)args->batch, (long long)args->heads_q,
                       (long long)fa_ceil_div(args->nq, ATTN_ONLINE_WARPS),
                       (long long)FA_MAX_GRID_X);
    if (rows == 0)
        return FA_OK;

    FA_TRY(check_array(op, "q", args->q, q_count, false));
    FA_TRY(check_array(op, "k", args->k, kv_count, false));
    FA_TRY(check_array(op, "v", args->v, kv_count, false));
    FA_TRY(check_array(op, "o", args->o, q_count, false));
    FA_TRY(check_array(op, "lse", args->lse, rows, true));
    const char *input_names[3] = {"q", "k", "v"};
    const float *inputs[3] = {args->q, args->k, args->v};
    const int64_t input_counts[3] = {q_count, kv_count, kv_count};
    for (int i = 0; i < 3; ++i) {
        FA_TRY(
            check_disjoint(op, "o", args->o, q_count, input_names[i], inputs[i], input_counts[i]));
        FA_TRY(
            check_disjoint(op, "lse", args->lse, rows, input_names[i], inputs[i], input_counts[i]));
    }
    FA_TRY(check_disjoint(op, "lse", args->lse, rows, "o", args->o, q_count));
    return FA_OK;
}
