/**
 * @file fa_reference.c
 * @brief Double-precision references with Neumaier-compensated sums.
 *
 * Inputs are widened exactly to double; a product of two widened fp32 values
 * is exact in double (24 + 24 <= 53 significand bits), so the only rounding
 * left is in the sums, which the compensation keeps to a few double ulps.
 */
#include "fa_reference.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "fa_bytes.h"

fa_status fa_ref_elements(const char *op, const char *what, const int64_t *factors, int count,
                          int64_t element_bytes, int64_t *product)
{
    const int64_t most = fa_max_elements(element_bytes);
    char written[160] = "";
    size_t used = 0;
    for (int i = 0; i < count && used < sizeof written; i++) {
        FA_TRY(fa_require_size(op, what, factors[i]));
        const int n = snprintf(written + used, sizeof written - used, "%s%lld", i > 0 ? " x " : "",
                               (long long)factors[i]);
        used += n > 0 ? (size_t)n : 0;
    }
    int64_t total = 1;
    for (int i = 0; i < count; i++) {
        total = fa_mul_within(total, factors[i], most);
        if (total < 0)
            return fa_fail(FA_ERR_OVERFLOW,
                           "%s: %s = %s elements of %lld bytes, expected at most %lld (byte offsets "
                           "are 64-bit)",
                           op, what, written, (long long)element_bytes, (long long)most);
    }
    *product = total;
    return FA_OK;
}

/*
 * Rows of x [rows][cols] with row stride ld: the last element read is
 * (rows - 1) ld + cols - 1, and rows doubles are written.
 */
static fa_status require_rows(const char *op, int64_t rows, int64_t cols, int64_t ld)
{
    FA_TRY(fa_require_size(op, "cols", cols));
    FA_TRY(fa_require_size(op, "ld", ld));
    int64_t out_elements, before_last;
    FA_TRY(fa_ref_elements(op, "rows", &rows, 1, (int64_t)sizeof(double), &out_elements));
    if (rows == 0)
        return FA_OK;
    const int64_t factors[2] = {rows - 1, ld};
    FA_TRY(fa_ref_elements(op, "(rows - 1) * ld", factors, 2, (int64_t)sizeof(float), &before_last));
    if (cols > fa_max_elements((int64_t)sizeof(float)) - before_last)
        return fa_fail(FA_ERR_OVERFLOW,
                       "%s: (rows - 1) * ld + cols = %lld + %lld elements of 4 bytes, expected at "
                       "most %lld (byte offsets are 64-bit)",
                       op, (long long)before_last, (long long)cols,
                       (long long)fa_max_elements((int64_t)sizeof(float)));
    return FA_OK;
}

void fa_ksum_add(fa_ksum *s, double x)
{
    const double t = s->sum + x;
    if (!isfinite(t)) {
        /* An infinity or NaN decides the value; compensating would turn
         * inf - inf into a NaN that hides a legitimate infinite sum. */
        s->sum = t;
        return;
    }
    /* The larger operand keeps its bits in t; recover what the smaller lost. */
    if (fabs(s->sum) >= fabs(x))
        s->compensation += (s->sum - t) + x;
    else
        s->compensation += (x - t) + s->sum;
    s->sum = t;
}

double fa_ksum_value(const fa_ksum *s) { return s->sum + s->compensation; }

void fa_ref_vector_add(const float *a, const float *b, double *out, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = (double)a[i] + (double)b[i];
}

void fa_ref_scale(const float *x, double alpha, double *out, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = alpha * (double)x[i];
}

void fa_ref_exp(const float *x, double *out, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = exp((double)x[i]);
}

fa_status fa_ref_row_max(const float *x, int64_t rows, int64_t cols, int64_t ld, double *out)
{
    FA_TRY(require_rows("row max reference", rows, cols, ld));
    for (int64_t r = 0; r < rows; r++) {
        const float *row = x + r * ld;
        double m = -INFINITY;
        for (int64_t c = 0; c < cols; c++) {
            if (isnan(row[c])) { /* fmax would drop it; a max kernel must not */
                m = NAN;
                break;
            }
            if (row[c] > m)
                m = row[c];
        }
        out[r] = m;
    }
    return FA_OK;
}

fa_status fa_ref_row_sum(const float *x, int64_t rows, int64_t cols, int64_t ld, double *out,
                         double *abs_sum)
{
    FA_TRY(require_rows("row sum reference", rows, cols, ld));
    for (int64_t r = 0; r < rows; r++) {
        const float *row = x + r * ld;
        fa_ksum sum = {0}, magnitude = {0};
        for (int64_t c = 0; c < cols; c++) {
            fa_ksum_add(&sum, row[c]);
            fa_ksum_add(&magnitude, fabs((double)row[c]));
        }
        out[r] = fa_ksum_value(&sum);
        if (abs_sum)
            abs_sum[r] = fa_ksum_value(&magnitude);
    }
    return FA_OK;
}

/**
 * sum_i a[a_offset + i a_stride] * b[b_offset + i b_stride] over i < n, with
 * sum |products| in *abs_sum (may be NULL).
 */
static double strided_dot(const void *a, int64_t a_offset, int64_t a_stride, const void *b,
                          int64_t b_offset, int64_t b_stride, fa_dtype dtype, int64_t n,
                          double *abs_sum)
{
    fa_ksum sum = {0}, magnitude = {0};
    for (int64_t i = 0; i < n; i++) {
        const double product = (double)fa_load(a, dtype, a_offset + i * a_stride) *
                               (double)fa_load(b, dtype, b_offset + i * b_stride);
        fa_ksum_add(&sum, product);
        fa_ksum_add(&magnitude, fabs(product));
    }
    if (abs_sum)
        *abs_sum = fa_ksum_value(&magnitude);
    return fa_ksum_value(&sum);
}

double fa_ref_dot(const void *x, const void *y, fa_dtype dtype, int64_t n, double *abs_sum)
{
    return strided_dot(x, 0, 1, y, 0, 1, dtype, n, abs_sum);
}

fa_status fa_ref_matmul(const void *a, const void *b, fa_dtype dtype, fa_b_layout layout,
                        int64_t m, int64_t n, int64_t k, double *c, double *abs_c)
{
    static const char op[] = "matmul reference";
    const int64_t mk[2] = {m, k}, kn[2] = {k, n}, mn[2] = {m, n};
    int64_t count;
    FA_TRY(fa_ref_elements(op, "m * k", mk, 2, fa_dtype_size(dtype), &count));
    FA_TRY(fa_ref_elements(op, "k * n", kn, 2, fa_dtype_size(dtype), &count));
    FA_TRY(fa_ref_elements(op, "m * n", mn, 2, (int64_t)sizeof(double), &count));
    /* Column j of B: B[p][j] at p * n + j (NN), or B[j][p] at j * k + p (NT). */
    const int64_t b_stride = layout == FA_B_TRANSPOSED ? 1 : n;
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) {
            const int64_t b_offset = layout == FA_B_TRANSPOSED ? j * k : j;
            c[i * n + j] = strided_dot(a, i * k, 1, b, b_offset, b_stride, dtype, k,
                                       abs_c ? &abs_c[i * n + j] : NULL);
        }
    }
    return FA_OK;
}

fa_status fa_ref_transpose(const float *in, int64_t rows, int64_t cols, double *out)
{
    const int64_t shape[2] = {rows, cols};
    int64_t count;
    FA_TRY(fa_ref_elements("transpose reference", "rows * cols", shape, 2, (int64_t)sizeof(double),
                           &count));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            out[c * rows + r] = in[r * cols + c];
    return FA_OK;
}

double fa_gamma(double n, double u)
{
    const double nu = n * u;
    if (nu >= 1.0)
        return INFINITY;
    return nu / (1.0 - nu);
}
