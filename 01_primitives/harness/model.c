/**
 * @file model.c
 * @brief The stage-01 kernels replayed on the CPU in fp32, and their error bounds.
 */
#include "model.h"

#include <float.h>
#include <math.h>

#include "fa_math.h"
#include "fa_model.h"
#include "fa_reference.h"

enum {
    ROW_THREADS = PRIMITIVES_ROW_THREADS,
    WARP_THREADS = PRIMITIVES_WARP_THREADS,
    ROW_WARPS = ROW_THREADS / WARP_THREADS
};
_Static_assert(ROW_THREADS % WARP_THREADS == 0, "a row block is made of whole warps");
_Static_assert((ROW_WARPS & (ROW_WARPS - 1)) == 0, "the block level of the tree halves the warps");
_Static_assert((WARP_THREADS & (WARP_THREADS - 1)) == 0, "the warp level of the tree halves the lanes");

/** ln 2, for the error of exp2 when its argument is off (2^d - 1 ~ d ln 2). */
static const double LN2 = 0.693147180559945309417;

/** Unit roundoff of double, the precision of the references. */
static const double DOUBLE_UNIT_ROUNDOFF = 0x1p-53;

/** fp32 results below this may be subnormal or flushed to zero: their bound is absolute. */
static const double EXP_ABSOLUTE_FLOOR = 0x1p-125;

/** The smallest positive fp32 number, 2^-149: the spacing of the subnormals. */
static const double FP32_SMALLEST_SUBNORMAL = 0x1p-149;

/** Relative widening of a half-ulp bound that covers a reference rounded to double (2^-53 / u = 2^-29). */
static const double ROUNDING_REFERENCE_SLACK = 0x1p-28;

/** Largest error of a correctly rounded result in the subnormal range: half of 2^-149. */
static const double FP32_SUBNORMAL_HALF_SPACING = 0x1p-150;

/** Slope of the __expf budget, CUDA C++ Programming Guide: 2 + floor(abs(1.173 * x)) ulp. */
static const double EXP_FAST_SLOPE = 1.173;

/** The CUDA tables' 2 ulp for expf and exp2f, and the base of __expf's budget. */
static const double EXP_TABLE_ULPS = 2.0;

/** The half ulp between the correctly rounded result the tables measure from and exp(x). */
static const double EXP_ROUNDING_ULPS = 0.5;

void model_vector_add(const float *a, const float *b, float *out, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        out[i] = a[i] + b[i];
}

void model_scale_array(const float *x, float alpha, float *out, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        out[i] = alpha * x[i];
}

void model_exp(fa_exp_method method, const float *x, float *out, int64_t n)
{
    for (int64_t i = 0; i < n; ++i) {
        if (method == FA_EXP_EXPF) {
            out[i] = expf(x[i]);
            continue;
        }
        const float t = x[i] * FA_LOG2E_F;
        out[i] = exp2f(t);
    }
}

double exp_relative_budget(fa_exp_method method, float x)
{
    const double u = MODEL_FP32_UNIT_ROUNDOFF;
    const double ulp = 2.0 * u; /* one ulp of y is at most 2u |y| */
    const double ax = fabs((double)x);
    switch (method) {
    case FA_EXP_EXPF:
        return (EXP_TABLE_ULPS + EXP_ROUNDING_ULPS) * ulp;
    case FA_EXP_EXP2_PRESCALED: {
        /* exp2f(t) = exp(x) * 2^(t - x log2 e), t = fl(x c). Its argument is off by
         * |x| |c - log2 e| (the constant) plus at most u |x c| (the product), and
         * 2^d - 1 ~ d ln 2, so each adds its size times ln 2 to the relative error. */
        const double c = (double)FA_LOG2E_F;
        const double constant_error = ax * fabs(c * LN2 - 1.0);
        const double product_error = LN2 * u * ax * c;
        return (EXP_TABLE_ULPS + EXP_ROUNDING_ULPS) * ulp + constant_error + product_error;
    }
    case FA_EXP_FAST:
        return (EXP_TABLE_ULPS + floor(EXP_FAST_SLOPE * ax) + EXP_ROUNDING_ULPS) * ulp;
    }
    return 0.0;
}

double exp_error_bound(fa_exp_method method, float x, double exact)
{
    if (!isfinite(exact))
        return 0.0;
    if (fabs(exact) < EXP_ABSOLUTE_FLOOR)
        return EXP_ABSOLUTE_FLOOR;
    const double rho = exp_relative_budget(method, x);
    return rho * fabs(exact) * (1.0 + 2.0 * rho);
}

double fp32_rounding_bound(double exact)
{
    return MODEL_FP32_UNIT_ROUNDOFF * fabs(exact) * (1.0 + ROUNDING_REFERENCE_SLACK) +
           FP32_SUBNORMAL_HALF_SPACING;
}

double fp32_ulp(double v)
{
    const double a = fabs(v);
    if (!isfinite(a))
        return NAN;
    if (a < FLT_MIN)
        return FP32_SMALLEST_SUBNORMAL;
    int exponent;
    frexp(a, &exponent); /* a = m 2^exponent, 0.5 <= m < 1, so 2^(exponent-1) <= a */
    return ldexp(1.0, exponent - 1 - (FLT_MANT_DIG - 1));
}

/** One row as one block of the M4/M5 kernels reduces it: strided folds, then fa_block_reduce(). */
static float reduce_row(fa_reduce_op op, const float *row, int64_t cols)
{
    const float identity = op == FA_REDUCE_SUM ? 0.0f : -INFINITY;
    float thread_values[ROW_THREADS];
    for (int t = 0; t < ROW_THREADS; ++t) {
        float acc = identity;
        for (int64_t c = t; c < cols; c += ROW_THREADS)
            acc = fa_reduce_combine(op, acc, row[c]);
        thread_values[t] = acc;
    }
    return fa_model_block_reduce(op, thread_values, ROW_THREADS);
}

void model_row_max(const float *x, int64_t rows, int64_t cols, int64_t ld, float *out)
{
    for (int64_t r = 0; r < rows; ++r)
        out[r] = reduce_row(FA_REDUCE_MAX, x + r * ld, cols);
}

void model_row_sum(const float *x, int64_t rows, int64_t cols, int64_t ld, float *out)
{
    for (int64_t r = 0; r < rows; ++r)
        out[r] = reduce_row(FA_REDUCE_SUM, x + r * ld, cols);
}

int64_t row_sum_depth(int64_t cols)
{
    if (cols <= 0)
        return 0;
    int tree_levels = 0; /* log2(ROW_THREADS): 5 levels in a warp, 3 across the 8 warps */
    for (int width = ROW_THREADS; width > 1; width /= 2)
        ++tree_levels;
    const int64_t per_thread = (cols + ROW_THREADS - 1) / ROW_THREADS;
    return (per_thread - 1) + tree_levels;
}

double row_sum_error_bound(int64_t cols, double abs_sum)
{
    const double kernel = fa_gamma((double)row_sum_depth(cols), MODEL_FP32_UNIT_ROUNDOFF);
    const double reference = fa_gamma((double)cols, DOUBLE_UNIT_ROUNDOFF);
    return (kernel + reference) * abs_sum;
}

const double exp_sweep_range_limits[EXP_SWEEP_RANGES] = {1.0, 10.0, 88.0};

void exp_sweep_summarise(fa_exp_method method, const float *x, const float *y, int64_t n,
                         exp_sweep_summary *s)
{
    *s = (exp_sweep_summary){{0.0, 0.0, 0.0}, 0.0, 0.0};
    double worst_ulps = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const double exact = exp((double)x[i]);
        const double err = fabs((double)y[i] - exact);
        const double ulps = err / fp32_ulp(exact);
        for (int r = 0; r < EXP_SWEEP_RANGES; ++r)
            if (fabs((double)x[i]) <= exp_sweep_range_limits[r])
                s->max_ulps[r] = fa_max_nan_double(s->max_ulps[r], ulps);
        if (!isnan(worst_ulps) && !(ulps <= worst_ulps)) { /* larger, or the first NaN */
            worst_ulps = ulps;
            s->worst_x = x[i];
        }
        s->worst_ratio = fa_max_nan_double(s->worst_ratio, err / exp_error_bound(method, x[i], exact));
    }
}

bool exp_sweep_within_bound(const exp_sweep_summary *s)
{
    return s->worst_ratio <= 1.0;
}
