/**
 * @file fa_bytes.h
 * @brief Bytes of arguments, checked once for every launcher: alignment,
 *        overlap, sizes that must not overflow, and the argument checks built
 *        on them (plain C, no CUDA: bad input is tested without a GPU).
 *
 * Every check returns FA_OK or a status with a message that names the
 * operation, the argument, its value and what was expected:
 * "row_max: x = 0x...2 is not 4-byte aligned, expected a multiple of 4".
 * Nothing here dereferences a pointer.
 */
#ifndef FA_BYTES_H
#define FA_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** True when @p ptr is a multiple of @p alignment bytes (NULL is). */
static inline bool fa_is_aligned(const void *ptr, size_t alignment)
{
    return (uintptr_t)ptr % alignment == 0;
}

/**
 * True when the byte ranges [p, p + p_bytes) and [q, q + q_bytes) share a
 * byte. A NULL pointer or an empty range never overlaps anything.
 */
bool fa_ranges_overlap(const void *p, int64_t p_bytes, const void *q, int64_t q_bytes);

/** a * b for a, b >= 0 when the product is at most @p limit, else -1 (no overflow on the way). */
int64_t fa_mul_within(int64_t a, int64_t b, int64_t limit);

/** The largest element count of @p element_bytes bytes whose byte size is a 64-bit offset. */
static inline int64_t fa_max_elements(int64_t element_bytes)
{
    return INT64_MAX / element_bytes;
}

/** @p value >= 0, else ::FA_ERR_INVALID_SIZE. */
FA_MUST_CHECK fa_status fa_require_size(const char *op, const char *name, int64_t value);

/**
 * @p count elements of @p element_bytes bytes have a byte size that fits a
 * signed 64-bit offset, else ::FA_ERR_OVERFLOW naming @p what (e.g.
 * "rows * cols") and the largest count accepted.
 */
FA_MUST_CHECK fa_status fa_require_elements(const char *op, const char *what, int64_t count,
                                            int64_t element_bytes);

/**
 * An array of @p count elements: not NULL when @p count > 0
 * (::FA_ERR_NULL_POINTER), and a multiple of @p alignment bytes wherever it
 * is given (::FA_ERR_MISALIGNED). An empty array may be NULL.
 */
FA_MUST_CHECK fa_status fa_require_array(const char *op, const char *name, const void *p,
                                         int64_t count, size_t alignment);

/**
 * Output @p out (@p out_bytes) shares no byte with @p in (@p in_bytes), else
 * ::FA_ERR_INVALID_ARGUMENT: a kernel could read what another thread already
 * overwrote.
 */
FA_MUST_CHECK fa_status fa_require_disjoint(const char *op, const char *out_name, const void *out,
                                            int64_t out_bytes, const char *in_name, const void *in,
                                            int64_t in_bytes);

#ifdef __cplusplus
}
#endif

#endif /* FA_BYTES_H */
