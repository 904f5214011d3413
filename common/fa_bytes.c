/** @file fa_bytes.c @brief Alignment, overlap, checked sizes and the argument checks. */
#include "fa_bytes.h"

bool fa_ranges_overlap(const void *p, int64_t p_bytes, const void *q, int64_t q_bytes)
{
    if (p == NULL || q == NULL || p_bytes <= 0 || q_bytes <= 0)
        return false;
    const uintptr_t p0 = (uintptr_t)p, q0 = (uintptr_t)q;
    /* p0 < q0 + q_bytes and q0 < p0 + p_bytes, written without the sums that could wrap. */
    return (p0 >= q0 ? p0 - q0 < (uintptr_t)q_bytes : q0 - p0 < (uintptr_t)p_bytes);
}

int64_t fa_mul_within(int64_t a, int64_t b, int64_t limit)
{
    if (a < 0 || b < 0 || limit < 0)
        return -1;
    if (a != 0 && b > limit / a)
        return -1;
    return a * b;
}

fa_status fa_require_size(const char *op, const char *name, int64_t value)
{
    if (value < 0)
        return fa_fail(FA_ERR_INVALID_SIZE, "%s: %s = %lld, expected %s >= 0", op, name,
                       (long long)value, name);
    return FA_OK;
}

fa_status fa_require_elements(const char *op, const char *what, int64_t count,
                              int64_t element_bytes)
{
    const int64_t most = fa_max_elements(element_bytes);
    if (count < 0 || count > most)
        return fa_fail(FA_ERR_OVERFLOW,
                       "%s: %s = %lld elements of %lld bytes, expected at most %lld (byte "
                       "offsets are 64-bit)",
                       op, what, (long long)count, (long long)element_bytes, (long long)most);
    return FA_OK;
}

fa_status fa_require_array(const char *op, const char *name, const void *p, int64_t count,
                           size_t alignment)
{
    if (p == NULL) {
        if (count == 0)
            return FA_OK;
        return fa_fail(FA_ERR_NULL_POINTER,
                       "%s: %s = NULL with %lld elements to access, expected a device array", op,
                       name, (long long)count);
    }
    if (!fa_is_aligned(p, alignment))
        return fa_fail(FA_ERR_MISALIGNED, "%s: %s = %p is not %zu-byte aligned, expected a "
                                          "multiple of %zu",
                       op, name, p, alignment, alignment);
    return FA_OK;
}

fa_status fa_require_disjoint(const char *op, const char *out_name, const void *out,
                              int64_t out_bytes, const char *in_name, const void *in,
                              int64_t in_bytes)
{
    if (fa_ranges_overlap(out, out_bytes, in, in_bytes))
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "%s: %s = %p (%lld bytes) overlaps %s = %p (%lld bytes), expected "
                       "disjoint arrays",
                       op, out_name, out, (long long)out_bytes, in_name, in, (long long)in_bytes);
    return FA_OK;
}
