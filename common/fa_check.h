/**
 * @file fa_check.h
 * @brief Compare an output with its reference under a per-element bound.
 *
 * The verdict is "the bound covers the output": |out - ref| <= bound for every
 * element. The report says how far from that the output is (max and mean
 * absolute and relative error, the worst err/bound ratio and where it is), how
 * many elements are non-finite where the reference is finite, and how many
 * were never written (still hold the poison pattern the harness filled the
 * buffer with). Coordinates are printed with the names of the shape's axes,
 * e.g. (batch 0, head 3, row 17, col 5).
 *
 * A bound that is not a finite number >= 0 where the reference is finite
 * (inf, NaN, negative: a gamma_n with n u >= 1, a NaN term) would cover any
 * output or none; the check refuses to judge it: the verdict is "not
 * covered" and the report's status an error. The statistics keep NaN
 * (fa_max_nan_double()): a NaN ratio or error is never hidden by a finite
 * "worst".
 */
#ifndef FA_CHECK_H
#define FA_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fa_half.h"
#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Every output buffer is filled with this byte before a kernel runs. 0xFFFFFFFF
 * is a NaN that CUDA arithmetic never produces (its canonical NaN is
 * 0x7FFFFFFF), so an element with these bits was not written by the kernel.
 * The same holds for 0xFFFF in bf16 and fp16.
 */
#define FA_POISON_BYTE 0xFF

/** True when @p x has the poison bit pattern. */
bool fa_is_poison(float x);

/** Fills @p bytes bytes at @p p with ::FA_POISON_BYTE. */
void fa_poison_host(void *p, size_t bytes);

/**
 * Element @p i of @p data (of @p dtype) as a float, as fa_load() reads it,
 * except that a bf16 or fp16 element with the poison bits (never written)
 * becomes the fp32 poison: widened, a 16-bit output keeps its "unwritten".
 */
float fa_load_or_poison(const void *data, fa_dtype dtype, int64_t i);

enum { FA_SHAPE_MAX_RANK = 4, FA_CHECK_MAX_MISMATCHES = 4 };

/** Row-major shape of a compared buffer, with axis names for messages. */
typedef struct fa_shape {
    int rank;
    int64_t dims[FA_SHAPE_MAX_RANK];
    const char *names[FA_SHAPE_MAX_RANK];
} fa_shape;

fa_shape fa_shape_1d(int64_t n);                          /**< names: "i" */
fa_shape fa_shape_2d(int64_t rows, int64_t cols);         /**< names: "row", "col" */
fa_shape fa_shape_4d(int64_t batch, int64_t heads, int64_t rows, int64_t cols); /**< batch, head, row, col */

/** Total number of elements of @p shape. */
int64_t fa_shape_count(const fa_shape *shape);

/** Writes the coordinate of flat index @p index, e.g. "(row 3, col 7)"; returns @p buf. */
const char *fa_shape_format(const fa_shape *shape, int64_t index, char *buf, size_t cap);

/** One element that the bound does not cover. */
typedef struct fa_mismatch {
    int64_t index;
    float got;
    double want;
    double bound;
} fa_mismatch;

/** What a comparison found. */
typedef struct fa_check_report {
    /**
     * FA_OK, or FA_ERR_INVALID_ARGUMENT when some bound element is not a
     * finite number >= 0 where the reference is finite: the check refused to
     * judge (fa_last_error() says where), and the verdict is "not covered".
     */
    fa_status status;
    int64_t invalid_bounds; /**< elements whose bound is not a bound (counted in uncovered too) */
    fa_mismatch invalid;    /**< the first of them; index -1 when there is none */
    int64_t count;          /**< elements compared */
    int64_t uncovered;      /**< elements not shown covered: |out - ref| > bound, non-finite, unwritten, no bound */
    int64_t nonfinite;      /**< NaN or Inf in the output where the reference is finite */
    int64_t unwritten;      /**< elements still holding the poison pattern */
    double max_abs_err;     /**< over finite pairs */
    double mean_abs_err;    /**< over finite pairs */
    double max_rel_err;     /**< |out - ref| / |ref| over finite pairs with ref != 0 */
    double worst_ratio;     /**< max |out - ref| / bound (+inf when a zero bound is exceeded, NaN without a bound) */
    int64_t worst_index;    /**< where worst_ratio occurs, -1 when count is 0 */
    int mismatches;         /**< how many of first[] are filled */
    fa_mismatch first[FA_CHECK_MAX_MISMATCHES]; /**< the first uncovered elements, in index order */
} fa_check_report;

/**
 * Judges out[0..n) against ref[0..n) with the per-element @p bound (NULL means
 * an exact comparison: bound 0, and the output must equal (float)ref bit for
 * bit). A NaN reference is covered only by a NaN output; an infinite reference
 * only by the same infinity (the bound is not read there). Returns true when
 * every element is covered; false, with report->status
 * FA_ERR_INVALID_ARGUMENT and a message, when a bound element is NaN,
 * infinite or negative where the reference is finite.
 */
bool fa_check_covers(const float *out, const double *ref, const double *bound, int64_t n,
                     fa_check_report *report);

/**
 * One line for a failing report: the first uncovered coordinate with got,
 * want and bound, then the counts and the worst err/bound (how far the worst
 * element is outside its bound). Used as a milestone's failure detail.
 */
const char *fa_check_describe(const fa_check_report *report, const fa_shape *shape,
                              char *buf, size_t cap);

/** The full report: errors, worst ratio and its coordinate, counts, first mismatches. */
void fa_check_print(FILE *out, const char *label, const fa_check_report *report,
                    const fa_shape *shape);

#ifdef __cplusplus
}
#endif

#endif /* FA_CHECK_H */
