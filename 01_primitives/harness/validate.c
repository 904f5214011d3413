/**
 * @file validate.c
 * @brief Argument checks of every stage-01 launcher (plain C, no CUDA).
 *
 * The launchers of both the reference and the learner call these first, so a
 * bad argument gets the same status and message from both, and the checks are
 * tested on machines without a GPU. Nothing here dereferences a pointer.
 */
#include "primitives.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fa_bytes.h"

enum { FLOAT_BYTES = sizeof(float) };

/** Checks one array of an elementwise op: present, 16-byte aligned. Requires n > 0. */
static fa_status check_vector_array(const char *op, const char *name, const float *p, int64_t n)
{
    if (p == NULL)
        return fa_fail(FA_ERR_NULL_POINTER, "%s: %s = NULL with n = %lld, expected a device array",
                       op, name, (long long)n);
    if (!fa_is_aligned(p, PRIMITIVES_VECTOR_BYTES))
        return fa_fail(FA_ERR_MISALIGNED,
                       "%s: %s = %p is not %d-byte aligned, expected an address the float4 loads "
                       "can use (cudaMalloc memory offset by a multiple of 4 floats)",
                       op, name, (const void *)p, PRIMITIVES_VECTOR_BYTES);
    return FA_OK;
}

/**
 * The checks every elementwise op shares: n, the output, up to two inputs
 * (@p in1 may be NULL with @p in1_name NULL for unary ops), and the rule that
 * the output is either an input itself or disjoint from it.
 */
static fa_status check_elementwise(const char *op, const char *in0_name, const float *in0,
                                   const char *in1_name, const float *in1, const float *out,
                                   int64_t n)
{
    FA_TRY(fa_require_size(op, "n", n));
    if (n == 0)
        return FA_OK;
    FA_TRY(fa_require_elements(op, "n", n, FLOAT_BYTES));

    const char *names[2] = {in0_name, in1_name};
    const float *inputs[2] = {in0, in1};
    const int input_count = in1_name == NULL ? 1 : 2;
    for (int k = 0; k < input_count; ++k)
        FA_TRY(check_vector_array(op, names[k], inputs[k], n));
    FA_TRY(check_vector_array(op, "out", out, n));

    const int64_t bytes = n * FLOAT_BYTES;
    for (int k = 0; k < input_count; ++k)
        if (out != inputs[k] && fa_ranges_overlap(out, bytes, inputs[k], bytes))
            return fa_fail(FA_ERR_INVALID_ARGUMENT,
                           "%s: out = %p overlaps %s = %p over n = %lld floats, expected out to "
                           "be %s itself (in place) or a disjoint array",
                           op, (const void *)out, names[k], (const void *)inputs[k], (long long)n,
                           names[k]);
    return FA_OK;
}

fa_status vector_add_validate(const float *a, const float *b, const float *out, int64_t n)
{
    return check_elementwise("vector_add", "a", a, "b", b, out, n);
}

fa_status scale_array_validate(const float *x, float alpha, const float *out, int64_t n)
{
    FA_TRY(check_elementwise("scale_array", "x", x, NULL, NULL, out, n));
    if (!isfinite(alpha))
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "scale_array: alpha = %g, expected a finite scale",
                       (double)alpha);
    return FA_OK;
}

const char *exp_launcher_name(fa_exp_method method)
{
    switch (method) {
    case FA_EXP_EXPF: return "exp_accurate";
    case FA_EXP_EXP2_PRESCALED: return "exp2_prescaled";
    case FA_EXP_FAST: return "exp_fast";
    }
    return "exp_unknown";
}

fa_status exp_validate(fa_exp_method method, const float *x, const float *out, int64_t n)
{
    if (method != FA_EXP_EXPF && method != FA_EXP_EXP2_PRESCALED && method != FA_EXP_FAST)
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "exp: method = %d, expected FA_EXP_EXPF (%d), FA_EXP_EXP2_PRESCALED (%d) or "
                       "FA_EXP_FAST (%d)",
                       (int)method, (int)FA_EXP_EXPF, (int)FA_EXP_EXP2_PRESCALED, (int)FA_EXP_FAST);
    return check_elementwise(exp_launcher_name(method), "x", x, NULL, NULL, out, n);
}

/** The checks of the row reductions (M4, M5), which share one contract. */
static fa_status check_rows(const char *op, const float *x, int64_t rows, int64_t cols, int64_t ld,
                            const float *out)
{
    FA_TRY(fa_require_size(op, "rows", rows));
    FA_TRY(fa_require_size(op, "cols", cols));
    if (ld < cols)
        return fa_fail(FA_ERR_BAD_STRIDE, "%s: ld = %lld with cols = %lld, expected ld >= cols",
                       op, (long long)ld, (long long)cols);
    if (rows == 0)
        return FA_OK;
    if (rows > FA_MAX_GRID_X)
        return fa_fail(FA_ERR_UNSUPPORTED,
                       "%s: rows = %lld, expected at most %lld (one block per row, gridDim.x limit)",
                       op, (long long)rows, (long long)FA_MAX_GRID_X);
    /* x spans (rows - 1) * ld + cols floats; test without computing it, which could overflow. */
    const int64_t max_floats = fa_max_elements(FLOAT_BYTES);
    if (ld > 0 && rows - 1 > (max_floats - cols) / ld)
        return fa_fail(FA_ERR_OVERFLOW,
                       "%s: rows = %lld, ld = %lld, cols = %lld span more than %lld floats "
                       "(byte offsets are 64-bit)",
                       op, (long long)rows, (long long)ld, (long long)cols, (long long)max_floats);
    FA_TRY(fa_require_array(op, "out", out, rows, FLOAT_BYTES));
    if (cols == 0)
        return FA_OK;
    FA_TRY(fa_require_array(op, "x", x, rows * cols, FLOAT_BYTES));
    const int64_t x_bytes = ((rows - 1) * ld + cols) * FLOAT_BYTES;
    return fa_require_disjoint(op, "out", out, rows * FLOAT_BYTES, "x", x, x_bytes);
}

fa_status row_max_validate(const float *x, int64_t rows, int64_t cols, int64_t ld, const float *out)
{
    return check_rows("row_max", x, rows, cols, ld, out);
}

fa_status row_sum_validate(const float *x, int64_t rows, int64_t cols, int64_t ld, const float *out)
{
    return check_rows("row_sum", x, rows, cols, ld, out);
}
