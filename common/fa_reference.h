/**
 * @file fa_reference.h
 * @brief Double-precision references for the operators of stages 01 and 02.
 *
 * Each reference reads the same inputs the kernel reads (fp32, or bf16/fp16
 * bit patterns widened exactly to float) and computes in double. Sums use
 * Neumaier's compensated summation, so a reference of a long reduction is
 * accurate to a few double ulps whatever the length, and its own error stays
 * negligible next to the fp32 bound it is compared with. Functions that feed a
 * bound also return sum |terms|, the quantity the gamma_n bound multiplies.
 * The attention references live in fa_attention_ref.h.
 *
 * A reference whose sizes multiply (rows and a leading dimension, M N K)
 * checks that every offset it forms fits a 64-bit byte offset and returns
 * FA_ERR_OVERFLOW, writing nothing, when one does not (fa_ref_elements()).
 */
#ifndef FA_REFERENCE_H
#define FA_REFERENCE_H

#include <stdint.h>

#include "fa_half.h"
#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * *@p product = the product of @p count sizes @p factors (each >= 0) when
 * that many elements of @p element_bytes bytes have a byte size that fits a
 * signed 64-bit offset (fa_max_elements()), computed without overflow on the
 * way (fa_mul_within()). Else FA_ERR_OVERFLOW with a message naming @p op,
 * @p what (e.g. "batch * heads * rows * n"), the factors and the largest count
 * accepted; a negative factor is FA_ERR_INVALID_SIZE.
 */
FA_MUST_CHECK fa_status fa_ref_elements(const char *op, const char *what, const int64_t *factors,
                                        int count, int64_t element_bytes, int64_t *product);

/** A compensated (Neumaier) running sum. Zero-initialise it. */
typedef struct fa_ksum {
    double sum;
    double compensation;
} fa_ksum;

/** Adds @p x to @p s, carrying the low-order bits lost by the addition. */
void fa_ksum_add(fa_ksum *s, double x);

/** The compensated value of @p s. */
double fa_ksum_value(const fa_ksum *s);

/** out[i] = a[i] + b[i]. */
void fa_ref_vector_add(const float *a, const float *b, double *out, int64_t n);

/** out[i] = alpha * x[i]. */
void fa_ref_scale(const float *x, double alpha, double *out, int64_t n);

/** out[i] = exp(x[i]) in double (overflows to +inf past ~709, never for float inputs). */
void fa_ref_exp(const float *x, double *out, int64_t n);

/**
 * Maximum of each row of x: [rows][cols] with row stride @p ld (elements).
 * A row of length 0 or of all -inf gives -inf; a row holding a NaN gives NaN.
 * FA_ERR_OVERFLOW when the last element, (rows - 1) ld + cols - 1, or rows
 * doubles do not fit a 64-bit byte offset; FA_ERR_INVALID_SIZE for a
 * negative size.
 */
FA_MUST_CHECK fa_status fa_ref_row_max(const float *x, int64_t rows, int64_t cols, int64_t ld,
                                       double *out);

/**
 * Compensated sum of each row; @p abs_sum (may be NULL) receives sum |x| per
 * row, the factor of the gamma_n error bound of a floating-point sum. The
 * sizes are checked as in fa_ref_row_max().
 */
FA_MUST_CHECK fa_status fa_ref_row_sum(const float *x, int64_t rows, int64_t cols, int64_t ld,
                                       double *out, double *abs_sum);

/**
 * Dot product of x and y (both of @p dtype); returns the compensated sum and
 * stores sum |x_i y_i| in *abs_sum when it is not NULL.
 */
double fa_ref_dot(const void *x, const void *y, fa_dtype dtype, int64_t n, double *abs_sum);

/** How B is stored in C = A * B. */
typedef enum fa_b_layout {
    FA_B_ROW_MAJOR = 0, /**< B is [K][N] row-major ("NN") */
    FA_B_TRANSPOSED = 1 /**< B is [N][K] row-major, i.e. C = A * B^T ("NT", as in Q K^T) */
} fa_b_layout;

/**
 * C[M][N] = A[M][K] * B, A row-major, B as @p layout, all of @p dtype; C and
 * @p abs_c (sum_k |a_ik b_kj|, may be NULL) are [M][N] row-major doubles.
 * FA_ERR_OVERFLOW when M K or K N elements of @p dtype, or M N doubles, do
 * not fit a 64-bit byte offset.
 */
FA_MUST_CHECK fa_status fa_ref_matmul(const void *a, const void *b, fa_dtype dtype,
                                      fa_b_layout layout, int64_t m, int64_t n, int64_t k,
                                      double *c, double *abs_c);

/** out[c][r] = in[r][c]; in is [rows][cols] row-major. FA_ERR_OVERFLOW as fa_ref_elements(). */
FA_MUST_CHECK fa_status fa_ref_transpose(const float *in, int64_t rows, int64_t cols, double *out);

/** gamma_n = n u / (1 - n u) (Higham); +inf when n u >= 1. */
double fa_gamma(double n, double u);

#ifdef __cplusplus
}
#endif

#endif /* FA_REFERENCE_H */
