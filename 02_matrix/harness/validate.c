/**
 * @file validate.c
 * @brief Argument checks of the stage 02 launchers (plain C, run before any CUDA call).
 *
 * The launchers of both the reference and the learner call these first, so a
 * bad argument gets the same status and message from both, and the checks are
 * tested on machines without a GPU. Checks run in a fixed order (sizes,
 * enums, limits, NULL and alignment of each array, overlap) so that a call
 * with several faults always reports the first one, and tests can name the
 * status they expect. Nothing here dereferences a pointer.
 */
#include "matrix.h"

#include <stddef.h>
#include <stdint.h>

#include "fa_bytes.h"

enum { FLOAT_BYTES = sizeof(float) };

/* Within the size limits, A ([m][k]), C ([m][n]) and a transpose's [rows][cols]
 * always have byte sizes that fit a signed 64-bit offset; only B ([k][n], both
 * up to INT32_MAX) can exceed it, and is checked. */
static_assert((int64_t)MATRIX_MAX_ROWS * INT32_MAX <= INT64_MAX / FLOAT_BYTES,
              "m * n, m * k and rows * cols fit 64-bit byte offsets within the limits");

/** @p value <= @p most, else ::FA_ERR_UNSUPPORTED naming the limit and @p why it is there. */
static fa_status require_at_most(const char *op, const char *name, int64_t value, int64_t most,
                                 const char *why)
{
    if (value > most)
        return fa_fail(FA_ERR_UNSUPPORTED, "%s: %s = %lld, at most %lld (%s)", op, name,
                       (long long)value, (long long)most, why);
    return FA_OK;
}

fa_status dot_product_validate_sizes(fa_dtype dtype, int64_t n)
{
    if (dtype != FA_F32 && dtype != FA_BF16 && dtype != FA_F16)
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "dot_product: dtype = %d, expected FA_F32, FA_BF16 or FA_F16", (int)dtype);
    FA_TRY(fa_require_size("dot_product", "n", n));
    return fa_require_elements("dot_product", "n", n, fa_dtype_size(dtype));
}

fa_status dot_product_validate(const void *x, const void *y, fa_dtype dtype, int64_t n,
                               const float *partials, const float *result)
{
    FA_TRY(dot_product_validate_sizes(dtype, n));
    if (n == 0)
        return FA_OK;
    FA_TRY(fa_require_array("dot_product", "x", x, n, DOT_PRODUCT_CHUNK_BYTES));
    FA_TRY(fa_require_array("dot_product", "y", y, n, DOT_PRODUCT_CHUNK_BYTES));
    FA_TRY(fa_require_array("dot_product", "partials", partials, DOT_PRODUCT_MAX_PARTIALS,
                            FLOAT_BYTES));
    return fa_require_array("dot_product", "result", result, 1, FLOAT_BYTES);
}

fa_status matmul_validate_sizes(const char *op, int64_t m, int64_t n, int64_t k,
                                fa_b_layout layout, int element_size)
{
    FA_TRY(fa_require_size(op, "m", m));
    FA_TRY(fa_require_size(op, "n", n));
    FA_TRY(fa_require_size(op, "k", k));
    if (layout != FA_B_ROW_MAJOR && layout != FA_B_TRANSPOSED)
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "%s: layout = %d, expected FA_B_ROW_MAJOR or FA_B_TRANSPOSED", op,
                       (int)layout);
    FA_TRY(require_at_most(op, "m", m, MATRIX_MAX_ROWS,
                           "the grid's y dimension holds its row tiles"));
    FA_TRY(require_at_most(op, "n", n, INT32_MAX, "32-bit block arithmetic of the grid"));
    FA_TRY(require_at_most(op, "k", k, INT32_MAX, "32-bit k-tile counts"));
    const int64_t b_elements = fa_mul_within(k, n, fa_max_elements(element_size));
    if (b_elements < 0)
        return fa_fail(FA_ERR_OVERFLOW,
                       "%s: k * n = %lld * %lld elements of %d bytes, more than %lld (byte "
                       "offsets are 64-bit)",
                       op, (long long)k, (long long)n, element_size,
                       (long long)fa_max_elements(element_size));
    return FA_OK;
}

fa_status matmul_validate(const char *op, const void *a, const void *b, const float *c,
                          int64_t m, int64_t n, int64_t k, fa_b_layout layout,
                          int element_size)
{
    FA_TRY(matmul_validate_sizes(op, m, n, k, layout, element_size));
    FA_TRY(fa_require_array(op, "a", a, m * k, (size_t)element_size));
    FA_TRY(fa_require_array(op, "b", b, k * n, (size_t)element_size));
    FA_TRY(fa_require_array(op, "c", c, m * n, FLOAT_BYTES));
    const int64_t c_bytes = m * n * FLOAT_BYTES;
    FA_TRY(fa_require_disjoint(op, "c", c, c_bytes, "a", a, m * k * element_size));
    return fa_require_disjoint(op, "c", c, c_bytes, "b", b, k * n * element_size);
}

fa_status transpose_validate_sizes(const char *op, int64_t rows, int64_t cols)
{
    FA_TRY(fa_require_size(op, "rows", rows));
    FA_TRY(fa_require_size(op, "cols", cols));
    FA_TRY(require_at_most(op, "rows", rows, MATRIX_MAX_ROWS,
                           "the grid's y dimension holds its row tiles"));
    return require_at_most(op, "cols", cols, INT32_MAX, "row lengths of at most 32 bits");
}

fa_status transpose_validate(const char *op, const float *in, const float *out, int64_t rows,
                             int64_t cols)
{
    FA_TRY(transpose_validate_sizes(op, rows, cols));
    if (rows == 0 || cols == 0)
        return FA_OK;
    FA_TRY(fa_require_array(op, "in", in, rows * cols, FLOAT_BYTES));
    FA_TRY(fa_require_array(op, "out", out, rows * cols, FLOAT_BYTES));
    const int64_t bytes = rows * cols * FLOAT_BYTES;
    if (fa_ranges_overlap(in, bytes, out, bytes))
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "%s: out = %p overlaps in = %p, a transpose cannot run in place", op,
                       (const void *)out, (const void *)in);
    return FA_OK;
}
