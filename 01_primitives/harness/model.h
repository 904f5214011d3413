/**
 * @file model.h
 * @brief CPU model of the stage-01 kernels, in their arithmetic order, and the
 *        error bounds the checks judge them by.
 *
 * The elementwise ops are single IEEE operations, so the model of M1 and M2
 * equals the GPU bit for bit. M4 and M5 replay the kernels' reduction tree
 * exactly (per-thread strided slices, then pairwise levels), so the row max
 * and, for finite rows, the row sum also match bit for bit. M3 cannot: the
 * host has no `__expf`, and the two libraries' `expf` differ in the last
 * ulps; its model evaluates the same formulas with the host library and is
 * judged, like the GPU, by the bound.
 */
#ifndef PRIMITIVES_MODEL_H
#define PRIMITIVES_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "primitives.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Unit roundoff of fp32, u = 2^-24: a correctly rounded result is within u |x| of x. */
#define MODEL_FP32_UNIT_ROUNDOFF 0x1p-24

/** out[i] = a[i] + b[i] in fp32 (the M1 kernel's one addition). */
void model_vector_add(const float *a, const float *b, float *out, int64_t n);

/** out[i] = alpha * x[i] in fp32 (the M2 kernel's one multiplication). */
void model_scale_array(const float *x, float alpha, float *out, int64_t n);

/**
 * out[i] = exp(x[i]) by the formula of @p method, with the host's libm:
 * `expf(x)` for ::FA_EXP_EXPF, and `exp2f(x * FA_LOG2E_F)` (the same
 * fp32 product as the kernel) for ::FA_EXP_EXP2_PRESCALED and ::FA_EXP_FAST,
 * because `__expf` is that product followed by the hardware's 2^t.
 */
void model_exp(fa_exp_method method, const float *x, float *out, int64_t n);

/**
 * Relative error budget rho(x) of @p method against exp(x) (first order;
 * \ref stage01 derives each):
 * - ::FA_EXP_EXPF: 2 ulp from the correctly rounded result plus the half ulp
 *   of that rounding, one ulp being at most 2u |y|: 5u;
 * - ::FA_EXP_EXP2_PRESCALED: 5u for exp2f, plus the error of its argument
 *   t = fl(x c), c = FA_LOG2E_F: |x| |c ln 2 - 1| for the rounding of the
 *   constant and ln 2 u |x c| for the rounding of the product;
 * - ::FA_EXP_FAST: (2 + floor(|1.173 x|) + 0.5) * 2u.
 * An unknown method gets 0.
 */
double exp_relative_budget(fa_exp_method method, float x);

/**
 * Bound on |y - exp(x)| for the fp32 result y of @p method at @p x, where
 * @p exact = exp(x) in double: rho |exact| (1 + 2 rho), rho from
 * exp_relative_budget() (the factor covers the second-order terms). Below
 * 2^-125 the bound is absolute, 2^-125, because results there may be
 * subnormal, or flushed to zero under `-ftz=true`. For finite x <= 88.72
 * (larger x overflows to +inf); a NaN or infinite
 * @p exact gets 0 (the output must then be the same NaN or infinity).
 */
double exp_error_bound(fa_exp_method method, float x, double exact);

/**
 * Bound on |RN(v) - exact| for one correctly rounded fp32 operation whose
 * exact result is @p exact: u |exact| (half an ulp), widened by 2^-28 of
 * itself to cover a double-precision reference that rounded too, plus
 * 2^-150 for results in the subnormal range.
 */
double fp32_rounding_bound(double exact);

/**
 * The spacing of fp32 numbers at the real number @p v: 2^(e - 23) for
 * 2^e <= |v| < 2^(e+1) in the normal range, 2^-149 below it. The unit of the
 * ulp errors the driver prints.
 */
double fp32_ulp(double v);

/** The M4 kernel's row max, same tree, same result bit for bit. */
void model_row_max(const float *x, int64_t rows, int64_t cols, int64_t ld, float *out);

/** The M5 kernel's row sum, same tree, same result bit for bit (finite rows). */
void model_row_sum(const float *x, int64_t rows, int64_t cols, int64_t ld, float *out);

/**
 * Depth of the M5 tree: the most roundings any element of a row of @p cols
 * goes through. A thread adds its k = ceil(cols / 256) elements in order
 * (0 + x is exact, then k - 1 roundings), then log2(256) = 8 pairwise levels
 * follow (5 inside a warp, 3 across the 8 warps). 0 for an empty row.
 */
int64_t row_sum_depth(int64_t cols);

/**
 * Bound on |out - sum| for an M5 row of @p cols elements with sum |x| =
 * @p abs_sum: gamma_d(u) abs_sum, d = row_sum_depth(cols) (Higham: each
 * element is multiplied by at most d factors (1 + delta), |delta| <= u), plus
 * gamma_cols(2^-53) abs_sum for the double reference's own rounding, whatever
 * order it summed in.
 */
double row_sum_error_bound(int64_t cols, double abs_sum);

/** Where the exp accuracy sweep reports separately: |x| <= 1, <= 10, and every x. */
enum { EXP_SWEEP_RANGES = 3 };

/** Worst error of one exp variant over a sweep, per range of |x|. */
typedef struct exp_sweep_summary {
    double max_ulps[EXP_SWEEP_RANGES]; /**< largest error in ulps of exp(x), per range */
    double worst_x;                    /**< where the largest ulp error of the whole sweep is */
    double worst_ratio;                /**< max |y - exp x| / bound: above 1 the bound is wrong */
} exp_sweep_summary;

/** The bounds of the ranges of ::exp_sweep_summary: 1, 10, 88. */
extern const double exp_sweep_range_limits[EXP_SWEEP_RANGES];

/**
 * Summarises the results @p y of variant @p method at the points @p x
 * against exp in double. A NaN anywhere (a result, or a bound that is not a
 * number) makes the maxima NaN, never a smaller finite value: the sweep then
 * fails, as it must.
 */
void exp_sweep_summarise(fa_exp_method method, const float *x, const float *y, int64_t n,
                         exp_sweep_summary *s);

/** True when every result was within its bound: worst_ratio <= 1 (false for NaN). */
bool exp_sweep_within_bound(const exp_sweep_summary *s);

#ifdef __cplusplus
}
#endif

#endif /* PRIMITIVES_MODEL_H */
