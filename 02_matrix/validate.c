/**
 * @file validate.c
 * @brief Argument checks of the stage 02 launchers (plain C, run before any CUDA call).
 *
 * Checks run in a fixed order (sizes, enums, limits, NULL, alignment,
 * overlap) so that a call with several faults always reports the first one,
 * and tests can name the status they expect.
 */
#include <stddef.h>
#include <stdint.h>

#include "matrix.h"

/** Alignment of x and y for the 16-byte loads of the dot product. */
enum { DOT_VECTOR_ALIGNMENT = DOT_PRODUCT_CHUNK_BYTES };

static int is_aligned(const void *p, uintptr_t alignment)
{
    return (uintptr_t)p % alignment == 0;
}

/** True when byte ranges [p, p + p_bytes) and [q, q + q_bytes) share a byte. */
static int ranges_overlap(const void *p, uint64_t p_bytes, const void *q, uint64_t q_bytes)
{
    if (p == NULL || q == NULL || p_bytes == 0 || q_bytes == 0)
        return 0;
    const uintptr_t p0 = (uintptr_t)p, q0 = (uintptr_t)q;
    return p0 < q0 + q_bytes && q0 < p0 + p_bytes;
}

fa_status dot_product_validate(const void *x, const void *y, fa_dtype dtype, int64_t n,
                               const float *partials, const float *result)
{
    if (dtype != FA_F32 && dtype != FA_BF16 && dtype != FA_F16)
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "dot_product: dtype = %d, expected FA_F32, FA_BF16 or FA_F16", (int)dtype);
    if (n < 0)
        return fa_fail(FA_ERR_INVALID_SIZE, "dot_product: n = %lld, expected n >= 0",
                       (long long)n);
    if (n == 0)
        return FA_OK;
    if (x == NULL)
        return fa_fail(FA_ERR_NULL_POINTER, "dot_product: x = NULL with n = %lld", (long long)n);
    if (y == NULL)
        return fa_fail(FA_ERR_NULL_POINTER, "dot_product: y = NULL with n = %lld", (long long)n);
    if (partials == NULL)
        return fa_fail(FA_ERR_NULL_POINTER,
                       "dot_product: partials = NULL, expected a device buffer of %d floats",
                       DOT_PRODUCT_MAX_PARTIALS);
    if (result == NULL)
        return fa_fail(FA_ERR_NULL_POINTER, "dot_product: result = NULL with n = %lld",
                       (long long)n);
    if (!is_aligned(x, DOT_VECTOR_ALIGNMENT))
        return fa_fail(FA_ERR_MISALIGNED,
                       "dot_product: x = %p, expected a %d-byte aligned address (16-byte loads)",
                       x, DOT_VECTOR_ALIGNMENT);
    if (!is_aligned(y, DOT_VECTOR_ALIGNMENT))
        return fa_fail(FA_ERR_MISALIGNED,
                       "dot_product: y = %p, expected a %d-byte aligned address (16-byte loads)",
                       y, DOT_VECTOR_ALIGNMENT);
    if (!is_aligned(partials, sizeof(float)))
        return fa_fail(FA_ERR_MISALIGNED, "dot_product: partials = %p, expected 4-byte alignment",
                       (const void *)partials);
    if (!is_aligned(result, sizeof(float)))
        return fa_fail(FA_ERR_MISALIGNED, "dot_product: result = %p, expected 4-byte alignment",
                       (const void *)result);
    return FA_OK;
}

fa_status matmul_validate(const char *op, const void *a, const void *b, const float *c,
                          int64_t m, int64_t n, int64_t k, fa_b_layout layout,
                          int element_size)
{
    if (m < 0)
        return fa_fail(FA_ERR_INVALID_SIZE, "%s: m = %lld, expected m >= 0", op, (long long)m);
    if (n < 0)
        return fa_fail(FA_ERR_INVALID_SIZE, "%s: n = %lld, expected n >= 0", op, (long long)n);
    if (k < 0)
        return fa_fail(FA_ERR_INVALID_SIZE, "%s: k = %lld, expected k >= 0", op, (long long)k);
    if (layout != FA_B_ROW_MAJOR && layout != FA_B_TRANSPOSED)
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "%s: layout = %d, expected FA_B_ROW_MAJOR or FA_B_TRANSPOSED", op,
                       (int)layout);
    if (m > MATRIX_MAX_ROWS)
        return fa_fail(FA_ERR_UNSUPPORTED, "%s: m = %lld, at most %d rows (grid y limit)", op,
                       (long long)m, MATRIX_MAX_ROWS);
    if (n > INT32_MAX)
        return fa_fail(FA_ERR_UNSUPPORTED, "%s: n = %lld, at most %d columns", op,
                       (long long)n, INT32_MAX);
    if (k > INT32_MAX)
        return fa_fail(FA_ERR_UNSUPPORTED, "%s: k = %lld, at most %d", op, (long long)k,
                       INT32_MAX);
    if (a == NULL && m > 0 && k > 0)
        return fa_fail(FA_ERR_NULL_POINTER, "%s: a = NULL with m = %lld, k = %lld", op,
                       (long long)m, (long long)k);
    if (b == NULL && k > 0 && n > 0)
        return fa_fail(FA_ERR_NULL_POINTER, "%s: b = NULL with k = %lld, n = %lld", op,
                       (long long)k, (long long)n);
    if (c == NULL && m > 0 && n > 0)
        return fa_fail(FA_ERR_NULL_POINTER, "%s: c = NULL with m = %lld, n = %lld", op,
                       (long long)m, (long long)n);
    if (!is_aligned(a, (uintptr_t)element_size))
        return fa_fail(FA_ERR_MISALIGNED, "%s: a = %p, expected %d-byte alignment", op, a,
                       element_size);
    if (!is_aligned(b, (uintptr_t)element_size))
        return fa_fail(FA_ERR_MISALIGNED, "%s: b = %p, expected %d-byte alignment", op, b,
                       element_size);
    if (!is_aligned(c, sizeof(float)))
        return fa_fail(FA_ERR_MISALIGNED, "%s: c = %p, expected 4-byte alignment", op,
                       (const void *)c);
    /* Sizes are now bounded (m < 2^21, n and k < 2^31): the byte counts fit in 64 bits. */
    const uint64_t c_bytes = (uint64_t)m * (uint64_t)n * sizeof(float);
    if (ranges_overlap(c, c_bytes, a, (uint64_t)m * (uint64_t)k * (uint64_t)element_size))
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "%s: c = %p overlaps a = %p", op,
                       (const void *)c, a);
    if (ranges_overlap(c, c_bytes, b, (uint64_t)k * (uint64_t)n * (uint64_t)element_size))
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "%s: c = %p overlaps b = %p", op,
                       (const void *)c, b);
    return FA_OK;
}

fa_status transpose_validate(const char *op, const float *in, const float *out, int64_t rows,
                             int64_t cols)
{
    if (rows < 0)
        return fa_fail(FA_ERR_INVALID_SIZE, "%s: rows = %lld, expected rows >= 0", op,
                       (long long)rows);
    if (cols < 0)
        return fa_fail(FA_ERR_INVALID_SIZE, "%s: cols = %lld, expected cols >= 0", op,
                       (long long)cols);
    if (rows > MATRIX_MAX_ROWS)
        return fa_fail(FA_ERR_UNSUPPORTED, "%s: rows = %lld, at most %d (grid y limit)", op,
                       (long long)rows, MATRIX_MAX_ROWS);
    if (cols > INT32_MAX)
        return fa_fail(FA_ERR_UNSUPPORTED, "%s: cols = %lld, at most %d", op, (long long)cols,
                       INT32_MAX);
    if (rows == 0 || cols == 0)
        return FA_OK;
    if (in == NULL)
        return fa_fail(FA_ERR_NULL_POINTER, "%s: in = NULL with rows = %lld, cols = %lld", op,
                       (long long)rows, (long long)cols);
    if (out == NULL)
        return fa_fail(FA_ERR_NULL_POINTER, "%s: out = NULL with rows = %lld, cols = %lld", op,
                       (long long)rows, (long long)cols);
    if (!is_aligned(in, sizeof(float)))
        return fa_fail(FA_ERR_MISALIGNED, "%s: in = %p, expected 4-byte alignment", op,
                       (const void *)in);
    if (!is_aligned(out, sizeof(float)))
        return fa_fail(FA_ERR_MISALIGNED, "%s: out = %p, expected 4-byte alignment", op,
                       (const void *)out);
    const uint64_t bytes = (uint64_t)rows * (uint64_t)cols * sizeof(float);
    if (ranges_overlap(in, bytes, out, bytes))
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "%s: out = %p overlaps in = %p, a transpose cannot run in place", op,
                       (const void *)out, (const void *)in);
    return FA_OK;
}
