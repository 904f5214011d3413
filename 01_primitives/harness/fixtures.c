/**
 * @file fixtures.c
 * @brief The hand-computable cases of stage 01, with the arithmetic beside them.
 *
 * Lengths are chosen around the kernels' seams: the elementwise kernels move
 * 4 floats per thread and 256 threads per block (1024 floats per block step),
 * then finish the last n mod 4 elements one by one; the row kernels give
 * each of 256 threads every 256th element, and reduce 32 lanes per warp.
 */
#include "fixtures.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "fa_index.h"

/* ---- M1 vector add ----------------------------------------------------------------------- */

static const float add_one_a[] = {1.5f};
static const float add_one_b[] = {2.25f};
static const float add_one_sum[] = {3.75f}; /* 1.5 + 2.25 */

static const float add_five_a[] = {1, 2, 3, 4, 5};
static const float add_five_b[] = {10, 20, 30, 40, 50};
static const float add_five_sum[] = {11, 22, 33, 44, 55};

/* IEEE edges: inf + 1 = inf; inf + (-inf) = NaN; NaN + 1 = NaN; FLT_MAX + FLT_MAX
 * overflows to inf; -0 + -0 = -0 (the sign of zero survives, bit for bit). */
static const float add_ieee_a[] = {INFINITY, INFINITY, NAN, FLT_MAX, -0.0f};
static const float add_ieee_b[] = {1.0f, -INFINITY, 1.0f, FLT_MAX, -0.0f};
static const float add_ieee_sum[] = {INFINITY, NAN, NAN, INFINITY, -0.0f};

/* Pattern (a, b, expected NULL): a[i] = i mod 1000, b[i] = 0.5 - (i mod 3), so
 * a + b = 0.5, 0.5, 0.5, 3.5, 3.5, 3.5, 6.5, ... : multiples of 0.5 below 1000,
 * exact in fp32. */
const elementwise_fixture vector_add_fixtures[] = {
    {"n = 0: nothing to do", 0, 0, NULL, NULL, NULL},
    {"n = 1: 1.5 + 2.25", 1, 0, add_one_a, add_one_b, add_one_sum},
    {"n = 5: small integers (one float4 + a tail of 1)", 5, 0, add_five_a, add_five_b, add_five_sum},
    {"IEEE edges: inf, NaN, overflow, -0", 5, 0, add_ieee_a, add_ieee_b, add_ieee_sum},
    {"pattern, n = 3: the tail alone", 3, 0, NULL, NULL, NULL},
    {"pattern, n = 4: one float4", 4, 0, NULL, NULL, NULL},
    {"pattern, n = 7: one float4 + a tail of 3", 7, 0, NULL, NULL, NULL},
    {"pattern, n = 1023: one block step - 1", 1023, 0, NULL, NULL, NULL},
    {"pattern, n = 1024: one block step", 1024, 0, NULL, NULL, NULL},
    {"pattern, n = 1025: one block step + 1", 1025, 0, NULL, NULL, NULL},
    {"pattern, n = 5122: five block steps + a float4 + a tail of 2", 5122, 0, NULL, NULL, NULL},
};
const int vector_add_fixture_count = FA_COUNT_OF(vector_add_fixtures);

void vector_add_fixture_fill(const elementwise_fixture *f, float *a, float *b, float *expected)
{
    for (int64_t i = 0; i < f->n; ++i) {
        if (f->a != NULL) {
            a[i] = f->a[i];
            b[i] = f->b[i];
            expected[i] = f->expected[i];
            continue;
        }
        const int64_t hundreds = i % 1000, thirds = i % 3;
        a[i] = (float)hundreds;
        b[i] = 0.5f - (float)thirds;
        expected[i] = (float)(hundreds - thirds) + 0.5f;
    }
}

/* ---- M2 scale array ---------------------------------------------------------------------- */

static const float scale_quarter_x[] = {-4, -1, 0, 3, 7};
static const float scale_quarter_out[] = {-1.0f, -0.25f, 0.0f, 0.75f, 1.75f}; /* x / 4 */

/* alpha = -2: 1 -> -2; -0.5 -> 1; 0 -> -0 (the sign flips, bit for bit); inf -> -inf; NaN -> NaN. */
static const float scale_negative_x[] = {1.0f, -0.5f, 0.0f, INFINITY, NAN};
static const float scale_negative_out[] = {-2.0f, 1.0f, -0.0f, -INFINITY, NAN};

/* Pattern: x[i] = (i mod 17) - 8, integers in [-8, 8]; alpha * x[i] is exact for
 * alpha = 3 (integers up to 24) and alpha = 0.5 (halves). */
const elementwise_fixture scale_array_fixtures[] = {
    {"n = 0: nothing to do", 0, 1.0f, NULL, NULL, NULL},
    {"n = 1: 0.25 * 7", 1, 0.25f, scale_quarter_x + 4, NULL, scale_quarter_out + 4},
    {"n = 5: alpha = 0.25 (a power of two: exact)", 5, 0.25f, scale_quarter_x, NULL, scale_quarter_out},
    {"n = 5: alpha = -2 with 0, inf, NaN", 5, -2.0f, scale_negative_x, NULL, scale_negative_out},
    {"pattern, alpha = 3, n = 3: the tail alone", 3, 3.0f, NULL, NULL, NULL},
    {"pattern, alpha = 3, n = 1023", 1023, 3.0f, NULL, NULL, NULL},
    {"pattern, alpha = 0.5, n = 1025", 1025, 0.5f, NULL, NULL, NULL},
    {"pattern, alpha = 3, n = 5122", 5122, 3.0f, NULL, NULL, NULL},
};
const int scale_array_fixture_count = FA_COUNT_OF(scale_array_fixtures);

void scale_array_fixture_fill(const elementwise_fixture *f, float *x, float *expected)
{
    for (int64_t i = 0; i < f->n; ++i) {
        if (f->a != NULL) {
            x[i] = f->a[i];
            expected[i] = f->expected[i];
            continue;
        }
        const float value = (float)(i % 17 - 8);
        x[i] = value;
        expected[i] = f->alpha * value; /* exact, see the pattern above */
    }
}

/* ---- M3 elementwise exp ------------------------------------------------------------------ */

/* exp at a few points, in double to 17 digits. */
static const float exp_points_x[] = {0, 1, -1, 2, -2, 10, -10, 80};
static const double exp_points_expected[] = {
    1.0,                     /* e^0 */
    2.718281828459045,       /* e */
    0.36787944117144233,     /* 1/e */
    7.38905609893065,        /* e^2 */
    0.1353352832366127,      /* e^-2 */
    22026.465794806718,      /* e^10 */
    4.5399929762484854e-05,  /* e^-10 */
    5.54062238439351e+34,    /* e^80: large |x|, where __expf's budget has grown to 95 ulp */
};

/* Edges every variant shares: exp(-inf) = 0; exp(inf) = inf; exp(NaN) = NaN;
 * e^89 = 4.49e38 > FLT_MAX = 3.40e38 overflows to inf; e^-100 = 3.7e-44 is
 * subnormal in fp32 (or flushed to 0 by __expf); e^-110 = 1.7e-48 is below
 * half the smallest subnormal 2^-150 = 7.0e-46, so it rounds to 0. */
static const float exp_edges_x[] = {-INFINITY, INFINITY, NAN, 89.0f, -100.0f, -110.0f};
static const double exp_edges_expected[] = {0.0, INFINITY, NAN, INFINITY, 3.720075976020836e-44, 0.0};

/* Sweep (x, expected NULL): x[i] = -87 + 175 i / (n - 1), evenly over [-87, 88],
 * the inputs whose exp is a normal fp32 number; expected exp(x[i]) in double. */
static const double SWEEP_LOW = -87.0;
static const double SWEEP_WIDTH = 175.0;

const exp_fixture exp_fixtures[] = {
    {"n = 0: nothing to do", 0, NULL, NULL},
    {"n = 1: exp(0) = 1", 1, exp_points_x, exp_points_expected},
    {"exp at 0, +-1, +-2, +-10, 80", 8, exp_points_x, exp_points_expected},
    {"edges: -inf, inf, NaN, overflow, subnormal, underflow", 6, exp_edges_x, exp_edges_expected},
    {"sweep of [-87, 88], n = 3", 3, NULL, NULL},
    {"sweep of [-87, 88], n = 1025", 1025, NULL, NULL},
    {"sweep of [-87, 88], n = 5122", 5122, NULL, NULL},
};
const int exp_fixture_count = FA_COUNT_OF(exp_fixtures);

float exp_sweep_x(int64_t i, int64_t n)
{
    const double step = n > 1 ? SWEEP_WIDTH / (double)(n - 1) : 0.0;
    return (float)(SWEEP_LOW + step * (double)i);
}

void exp_fixture_fill(const exp_fixture *f, float *x, double *expected)
{
    for (int64_t i = 0; i < f->n; ++i) {
        if (f->x != NULL) {
            x[i] = f->x[i];
            expected[i] = f->expected[i];
            continue;
        }
        x[i] = exp_sweep_x(i, f->n);
        expected[i] = exp((double)x[i]);
    }
}

/* ---- M4 row max and M5 row sum ----------------------------------------------------------- */

int64_t row_fixture_x_count(const row_fixture *f)
{
    return f->rows * f->ld;
}

/* Copies a written-out case, or fills the padding of a pattern; returns true for a pattern. */
static bool copy_literal(const row_fixture *f, float *x, float *expected)
{
    const int64_t count = row_fixture_x_count(f);
    if (f->kind == ROW_FIXTURE_LITERAL) {
        for (int64_t i = 0; i < count; ++i)
            x[i] = f->x[i];
        for (int64_t r = 0; r < f->rows; ++r)
            expected[r] = f->expected[r];
        return false;
    }
    for (int64_t i = 0; i < count; ++i)
        x[i] = NAN; /* padding; the pattern overwrites the first cols of each row */
    return true;
}

/* Plants the NaN of ROW_FIXTURE_NAN_LAST; returns true when row r got one. */
static bool plant_nan(const row_fixture *f, float *x, int64_t r)
{
    if (f->kind != ROW_FIXTURE_NAN_LAST || r % 2 == 0 || f->cols == 0)
        return false;
    x[r * f->ld + f->cols - 1] = NAN;
    return true;
}

static const float max_one_x[] = {7};
static const float max_one_expected[] = {7};

static const float max_empty_expected[] = {-INFINITY, -INFINITY}; /* max of nothing: the identity */

static const float max_neg_inf_x[] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
static const float max_neg_inf_expected[] = {-INFINITY};

/* The maximum first, last, tied, and in an all-negative row. */
static const float max_position_x[] = {
    9, 1, 2, 3, 4,
    1, 2, 3, 4, 9,
    5, 9, 9, 1, 2,
    -7, -3, -5, -4, -6,
};
static const float max_position_expected[] = {9, 9, 9, -3};

static const float max_inf_x[] = {
    1, INFINITY, -INFINITY,
    -INFINITY, -2, -INFINITY,
};
static const float max_inf_expected[] = {INFINITY, -2};

/* A NaN makes its own row's max NaN, wherever it sits, and no other row's. */
static const float max_nan_x[] = {
    1, 2, 3,
    4, NAN, 6,
    7, 8, 9,
    NAN, 10, -INFINITY,
};
static const float max_nan_expected[] = {3, NAN, 9, NAN};

/* Pattern: x[r][c] = -((7c + r) mod 50), integers in [-49, 0], except
 * x[r][(13r + 5) mod cols] = 100 + r: the row max is 100 + r. */
const row_fixture row_max_fixtures[] = {
    {"1 x 1", ROW_FIXTURE_LITERAL, 1, 1, 1, max_one_x, max_one_expected},
    {"2 empty rows give -inf", ROW_FIXTURE_LITERAL, 2, 0, 0, NULL, max_empty_expected},
    {"a row of -inf gives -inf", ROW_FIXTURE_LITERAL, 1, 5, 5, max_neg_inf_x, max_neg_inf_expected},
    {"max first, last, tied, all negative", ROW_FIXTURE_LITERAL, 4, 5, 5, max_position_x,
     max_position_expected},
    {"infinities", ROW_FIXTURE_LITERAL, 2, 3, 3, max_inf_x, max_inf_expected},
    {"NaN stays in its row", ROW_FIXTURE_LITERAL, 4, 3, 3, max_nan_x, max_nan_expected},
    {"pattern 3 x 31: one warp - 1", ROW_FIXTURE_PATTERN, 3, 31, 31, NULL, NULL},
    {"pattern 3 x 32: one warp", ROW_FIXTURE_PATTERN, 3, 32, 32, NULL, NULL},
    {"pattern 3 x 33: one warp + 1", ROW_FIXTURE_PATTERN, 3, 33, 33, NULL, NULL},
    {"pattern 2 x 255: one block - 1", ROW_FIXTURE_PATTERN, 2, 255, 255, NULL, NULL},
    {"pattern 2 x 256: one block", ROW_FIXTURE_PATTERN, 2, 256, 256, NULL, NULL},
    {"pattern 2 x 257: one block + 1", ROW_FIXTURE_PATTERN, 2, 257, 257, NULL, NULL},
    {"pattern 2 x 1023", ROW_FIXTURE_PATTERN, 2, 1023, 1023, NULL, NULL},
    {"pattern 2 x 1025", ROW_FIXTURE_PATTERN, 2, 1025, 1025, NULL, NULL},
    {"pattern 3 x 33, ld 40: NaN padding must not be read", ROW_FIXTURE_PATTERN, 3, 33, 40, NULL,
     NULL},
    {"pattern 4 x 1025, NaN in the last column of odd rows", ROW_FIXTURE_NAN_LAST, 4, 1025, 1025,
     NULL, NULL},
};
const int row_max_fixture_count = FA_COUNT_OF(row_max_fixtures);

void row_max_fixture_fill(const row_fixture *f, float *x, float *expected)
{
    if (!copy_literal(f, x, expected))
        return;
    for (int64_t r = 0; r < f->rows; ++r) {
        float *row = x + r * f->ld;
        for (int64_t c = 0; c < f->cols; ++c)
            row[c] = (float)(-((7 * c + r) % 50));
        expected[r] = -INFINITY;
        if (f->cols > 0) {
            row[(13 * r + 5) % f->cols] = (float)(100 + r);
            expected[r] = (float)(100 + r);
        }
        if (plant_nan(f, x, r))
            expected[r] = NAN;
    }
}

static const float sum_one_x[] = {7};
static const float sum_one_expected[] = {7};

static const float sum_empty_expected[] = {0, 0}; /* sum of nothing */

static const float sum_five_x[] = {1, 2, 3, 4, 5};
static const float sum_five_expected[] = {15}; /* 5 * 6 / 2 */

/* 1 - 2 + 3 - 4 = -2; 0.5 + 0.25 + 0.125 + 0.125 = 1 (powers of two: exact). */
static const float sum_signs_x[] = {
    1, -2, 3, -4,
    0.5f, 0.25f, 0.125f, 0.125f,
};
static const float sum_signs_expected[] = {-2, 1};

/* IEEE: 1 + inf + 2 = inf; inf + (-inf) = NaN; a NaN anywhere gives NaN; other rows intact. */
static const float sum_ieee_x[] = {
    1, INFINITY, 2,
    INFINITY, -INFINITY, 1,
    1, NAN, 2,
    1, 2, 3,
};
static const float sum_ieee_expected[] = {INFINITY, NAN, NAN, 6};

/* Pattern: x[r][c] = c + 1 - 2r, so row r sums to cols (cols + 1) / 2 - 2 r cols.
 * Every partial sum is an integer of magnitude below 2^24: exact in any order. */
const row_fixture row_sum_fixtures[] = {
    {"1 x 1", ROW_FIXTURE_LITERAL, 1, 1, 1, sum_one_x, sum_one_expected},
    {"2 empty rows give 0", ROW_FIXTURE_LITERAL, 2, 0, 0, NULL, sum_empty_expected},
    {"1 + 2 + 3 + 4 + 5", ROW_FIXTURE_LITERAL, 1, 5, 5, sum_five_x, sum_five_expected},
    {"signs and powers of two", ROW_FIXTURE_LITERAL, 2, 4, 4, sum_signs_x, sum_signs_expected},
    {"infinities and NaN", ROW_FIXTURE_LITERAL, 4, 3, 3, sum_ieee_x, sum_ieee_expected},
    {"pattern 3 x 31: one warp - 1", ROW_FIXTURE_PATTERN, 3, 31, 31, NULL, NULL},
    {"pattern 3 x 32: one warp", ROW_FIXTURE_PATTERN, 3, 32, 32, NULL, NULL},
    {"pattern 3 x 33: one warp + 1", ROW_FIXTURE_PATTERN, 3, 33, 33, NULL, NULL},
    {"pattern 2 x 255: one block - 1", ROW_FIXTURE_PATTERN, 2, 255, 255, NULL, NULL},
    {"pattern 2 x 256: one block", ROW_FIXTURE_PATTERN, 2, 256, 256, NULL, NULL},
    {"pattern 2 x 257: one block + 1", ROW_FIXTURE_PATTERN, 2, 257, 257, NULL, NULL},
    {"pattern 2 x 1023", ROW_FIXTURE_PATTERN, 2, 1023, 1023, NULL, NULL},
    {"pattern 2 x 1025", ROW_FIXTURE_PATTERN, 2, 1025, 1025, NULL, NULL},
    {"pattern 3 x 4097", ROW_FIXTURE_PATTERN, 3, 4097, 4097, NULL, NULL},
    {"pattern 3 x 33, ld 40: NaN padding must not be read", ROW_FIXTURE_PATTERN, 3, 33, 40, NULL,
     NULL},
    {"pattern 4 x 1025, NaN in the last column of odd rows", ROW_FIXTURE_NAN_LAST, 4, 1025, 1025,
     NULL, NULL},
};
const int row_sum_fixture_count = FA_COUNT_OF(row_sum_fixtures);

void row_sum_fixture_fill(const row_fixture *f, float *x, float *expected)
{
    if (!copy_literal(f, x, expected))
        return;
    for (int64_t r = 0; r < f->rows; ++r) {
        float *row = x + r * f->ld;
        for (int64_t c = 0; c < f->cols; ++c)
            row[c] = (float)(c + 1 - 2 * r);
        expected[r] = (float)(f->cols * (f->cols + 1) / 2 - 2 * r * f->cols);
        if (plant_nan(f, x, r))
            expected[r] = NAN;
    }
}
