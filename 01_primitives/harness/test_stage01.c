/**
 * @file test_stage01.c
 * @brief Stage 01 tests.
 *
 * `test_stage01 cpu` (no GPU needed): the fixtures against the CPU model, bit
 * for bit; the model against the double reference within the bounds; what
 * the bounds must reject; bad input for every launcher, and every driver
 * flag.
 *
 * `test_stage01 gpu` (exit 77 without a usable GPU): every milestone's check
 * on the reference kernels; the row kernels bit for bit against the model;
 * nothing written past the end of an output; NaN reaching exactly the
 * affected outputs; the checker rejecting an unwritten or a wrong element.
 */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa_cli.h"
#include "fa_index.h"
#include "fa_math.h"
#include "fa_reference.h"
#include "fa_rng.h"
#include "fa_stage.h"
#include "fa_status.h"
#include "fa_test.h"
#include "fixtures.h"
#include "model.h"
#include "primitives.h"

#if FA_HAVE_CUDA
#include "checks.h"
#include "fa_check.h"
#include "fa_device.h"
#endif

static const uint64_t SEED = 20240601;

/** True when |got - exact| <= bound, with NaN and infinities required to match exactly. */
static bool within(float got, double exact, double bound)
{
    if (isnan(exact) || isinf(exact))
        return isnan(exact) ? isnan(got) : (double)got == exact;
    return fabs((double)got - exact) <= bound;
}

/* ---- CPU: fixtures against the model ------------------------------------------------------ */

static void test_elementwise_fixtures(fa_tests *t)
{
    for (int f = 0; f < vector_add_fixture_count; ++f) {
        const elementwise_fixture *fx = &vector_add_fixtures[f];
        float *a = fa_new_floats(fx->n);
        float *b = fa_new_floats(fx->n);
        float *expected = fa_new_floats(fx->n);
        float *model = fa_new_floats(fx->n);
        vector_add_fixture_fill(fx, a, b, expected);
        model_vector_add(a, b, model, fx->n);
        const int64_t at = fa_first_difference(model, expected, fx->n);
        FA_EXPECT(t, at < 0, "vector_add fixture '%s': model %a != expected %a at i = %lld", fx->name,
                  at < 0 ? 0.0 : (double)model[at], at < 0 ? 0.0 : (double)expected[at], (long long)at);
        free(a);
        free(b);
        free(expected);
        free(model);
    }
    for (int f = 0; f < scale_array_fixture_count; ++f) {
        const elementwise_fixture *fx = &scale_array_fixtures[f];
        float *x = fa_new_floats(fx->n);
        float *expected = fa_new_floats(fx->n);
        float *model = fa_new_floats(fx->n);
        scale_array_fixture_fill(fx, x, expected);
        model_scale_array(x, fx->alpha, model, fx->n);
        const int64_t at = fa_first_difference(model, expected, fx->n);
        FA_EXPECT(t, at < 0, "scale_array fixture '%s': model != expected at i = %lld", fx->name,
                  (long long)at);
        free(x);
        free(expected);
        free(model);
    }
}

static const fa_exp_method EXP_METHODS[] = {FA_EXP_EXPF, FA_EXP_EXP2_PRESCALED, FA_EXP_FAST};

static void test_exp_fixtures(fa_tests *t)
{
    for (int f = 0; f < exp_fixture_count; ++f) {
        const exp_fixture *fx = &exp_fixtures[f];
        float *x = fa_new_floats(fx->n);
        float *model = fa_new_floats(fx->n);
        double *expected = fa_new_doubles(fx->n);
        exp_fixture_fill(fx, x, expected);
        for (int i = 0; i < fx->n; ++i) /* the written-out values are exp(x) to double precision */
            if (!isinf(expected[i]) && isfinite(x[i]) && fabs(expected[i]) >= 0x1p-125)
                FA_EXPECT(t, fabs(expected[i] - exp((double)x[i])) <= 0x1p-50 * expected[i],
                          "exp fixture '%s': expected[%d] = %.17g, exp(%g) = %.17g", fx->name, i,
                          expected[i], (double)x[i], exp((double)x[i]));
        for (int m = 0; m < FA_COUNT_OF(EXP_METHODS); ++m) {
            model_exp(EXP_METHODS[m], x, model, fx->n);
            for (int64_t i = 0; i < fx->n; ++i) {
                const double bound = exp_error_bound(EXP_METHODS[m], x[i], expected[i]);
                if (!FA_EXPECT(t, within(model[i], expected[i], bound),
                               "%s fixture '%s': x = %g, model %.9g, expected %.17g, bound %.3g",
                               exp_launcher_name(EXP_METHODS[m]), fx->name, (double)x[i],
                               (double)model[i], expected[i], bound))
                    break;
            }
        }
        free(x);
        free(model);
        free(expected);
    }
}

static void test_row_fixtures(fa_tests *t)
{
    const struct {
        const char *op;
        const row_fixture *fixtures;
        const int *count;
        void (*fill)(const row_fixture *, float *, float *);
        void (*model)(const float *, int64_t, int64_t, int64_t, float *);
    } ops[] = {
        {"row_max", row_max_fixtures, &row_max_fixture_count, row_max_fixture_fill, model_row_max},
        {"row_sum", row_sum_fixtures, &row_sum_fixture_count, row_sum_fixture_fill, model_row_sum},
    };
    for (int o = 0; o < FA_COUNT_OF(ops); ++o)
        for (int f = 0; f < *ops[o].count; ++f) {
            const row_fixture *fx = &ops[o].fixtures[f];
            float *x = fa_new_floats(row_fixture_x_count(fx));
            float *expected = fa_new_floats(fx->rows);
            float *model = fa_new_floats(fx->rows);
            ops[o].fill(fx, x, expected);
            ops[o].model(x, fx->rows, fx->cols, fx->ld, model);
            const int64_t at = fa_first_difference(model, expected, fx->rows);
            FA_EXPECT(t, at < 0, "%s fixture '%s': model %g != expected %g at row %lld", ops[o].op,
                      fx->name, at < 0 ? 0.0 : (double)model[at],
                      at < 0 ? 0.0 : (double)expected[at], (long long)at);
            free(x);
            free(expected);
            free(model);
        }
}

/* ---- CPU: the model against the double reference, and the bounds -------------------------- */

static void test_elementwise_model_vs_reference(fa_tests *t)
{
    enum { N = 100003 };
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 1);
    float *a = fa_new_floats(N), *b = fa_new_floats(N);
    float *out = fa_new_floats(N);
    double *ref = fa_new_doubles(N);
    fa_fill(a, N, FA_FILL_GAUSSIAN, 1.0, &rng);
    fa_fill(b, N, FA_FILL_ADVERSARIAL, 1.0, &rng);

    model_vector_add(a, b, out, N);
    fa_ref_vector_add(a, b, ref, N);
    int64_t bad = -1;
    for (int64_t i = 0; i < N && bad < 0; ++i)
        if (!within(out[i], ref[i], fp32_rounding_bound(ref[i])))
            bad = i;
    FA_EXPECT(t, bad < 0, "vector_add model outside half an ulp at i = %lld", (long long)bad);

    const float alpha = 1.7f;
    model_scale_array(b, alpha, out, N);
    fa_ref_scale(b, (double)alpha, ref, N);
    bad = -1;
    for (int64_t i = 0; i < N && bad < 0; ++i)
        if (!within(out[i], ref[i], fp32_rounding_bound(ref[i])))
            bad = i;
    FA_EXPECT(t, bad < 0, "scale_array model outside half an ulp at i = %lld", (long long)bad);

    /* The bound of one rounding is tight: a result two ulps from the rounded one must fail it. */
    const double exact = (double)a[0] + (double)b[0];
    const float two_ulps_off = nextafterf(nextafterf((float)exact, INFINITY), INFINITY);
    FA_EXPECT(t, !within(two_ulps_off, exact, fp32_rounding_bound(exact)),
              "a result two ulps off passes the half-ulp bound");

    for (int m = 0; m < FA_COUNT_OF(EXP_METHODS); ++m) {
        for (int64_t i = 0; i < N; ++i)
            a[i] = exp_sweep_x(i, N);
        model_exp(EXP_METHODS[m], a, out, N);
        fa_ref_exp(a, ref, N);
        double worst = 0.0;
        for (int64_t i = 0; i < N; ++i) {
            const double ratio = fabs((double)out[i] - ref[i]) / exp_error_bound(EXP_METHODS[m], a[i], ref[i]);
            worst = fa_max_nan_double(worst, ratio);
        }
        FA_EXPECT(t, worst <= 1.0, "%s model over [-87, 88]: error / bound = %.3f",
                  exp_launcher_name(EXP_METHODS[m]), worst);
    }
    free(a);
    free(b);
    free(out);
    free(ref);
}

/**
 * The argument term of the prescaled bound is not decoration: at large |x|
 * the rounding of x * log2(e) alone exceeds expf's 2.5 ulp, so the bound of
 * expf must reject exp2f(x * log2 e) there while its own bound accepts it.
 */
static void test_exp2_bound_needs_argument_term(fa_tests *t)
{
    enum { N = 100000 };
    float *x = fa_new_floats(N), *y = fa_new_floats(N);
    for (int i = 0; i < N; ++i)
        x[i] = (float)(80.0 + 8.0 * i / (N - 1));
    model_exp(FA_EXP_EXP2_PRESCALED, x, y, N);
    double with_term = 0.0, without_term = 0.0;
    for (int i = 0; i < N; ++i) {
        const double exact = exp((double)x[i]), err = fabs((double)y[i] - exact);
        const double ratio = err / exp_error_bound(FA_EXP_EXP2_PRESCALED, x[i], exact);
        const double ratio_expf = err / exp_error_bound(FA_EXP_EXPF, x[i], exact);
        with_term = ratio > with_term ? ratio : with_term;
        without_term = ratio_expf > without_term ? ratio_expf : without_term;
    }
    FA_EXPECT(t, with_term <= 1.0, "exp2f(x log2 e) on [80, 88]: error / its bound = %.3f", with_term);
    FA_EXPECT(t, without_term > 4.0,
              "exp2f(x log2 e) on [80, 88] should exceed expf's bound several times, error / bound = %.3f",
              without_term);
    /* The relative budget grows like |x| for the prescaled and fast variants, not for expf. */
    FA_EXPECT(t, exp_relative_budget(FA_EXP_EXPF, 88.0f) == exp_relative_budget(FA_EXP_EXPF, 0.0f),
              "expf's budget must not depend on x");
    FA_EXPECT(t, exp_relative_budget(FA_EXP_EXP2_PRESCALED, 88.0f) >
                     10.0 * exp_relative_budget(FA_EXP_EXP2_PRESCALED, 0.0f),
              "the prescaled budget must grow with |x|");
    FA_EXPECT(t, exp_relative_budget(FA_EXP_FAST, 88.0f) ==
                     (2.0 + floor(1.173 * 88.0) + 0.5) * 0x1p-23,
              "__expf's budget at 88 must be (2 + 103 + 0.5) ulp");
    free(x);
    free(y);
}

static void test_fp32_ulp(fa_tests *t)
{
    FA_EXPECT(t, fp32_ulp(1.0) == 0x1p-23, "ulp(1) = 2^-23, got %a", fp32_ulp(1.0));
    FA_EXPECT(t, fp32_ulp(1.999) == 0x1p-23, "ulp(1.999) = 2^-23, got %a", fp32_ulp(1.999));
    FA_EXPECT(t, fp32_ulp(0.75) == 0x1p-24, "ulp(0.75) = 2^-24, got %a", fp32_ulp(0.75));
    FA_EXPECT(t, fp32_ulp(-4.0) == 0x1p-21, "ulp(-4) = 2^-21, got %a", fp32_ulp(-4.0));
    FA_EXPECT(t, fp32_ulp(1e-40) == 0x1p-149, "subnormal spacing 2^-149, got %a", fp32_ulp(1e-40));
}

/** Shapes where the model of the row kernels is compared with the double reference. */
static const struct {
    int64_t rows, cols, ld;
} MODEL_ROW_SHAPES[] = {{4, 1, 1}, {4, 33, 40}, {4, 257, 257}, {3, 4097, 4099}, {2, 100000, 100000}};

static void test_rows_model_vs_reference(fa_tests *t)
{
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 4);
    for (int s = 0; s < FA_COUNT_OF(MODEL_ROW_SHAPES); ++s) {
        const int64_t rows = MODEL_ROW_SHAPES[s].rows, cols = MODEL_ROW_SHAPES[s].cols,
                      ld = MODEL_ROW_SHAPES[s].ld;
        float *x = fa_new_floats(rows * ld);
        float *out = fa_new_floats(rows);
        double *ref = fa_new_doubles(rows);
        double *abs_sum = fa_new_doubles(rows);
        for (int64_t r = 0; r < rows; ++r) {
            fa_fill(x + r * ld, cols, r % 2 ? FA_FILL_ADVERSARIAL : FA_FILL_GAUSSIAN, 1.0, &rng);
            for (int64_t c = cols; c < ld; ++c)
                x[r * ld + c] = NAN;
        }
        model_row_max(x, rows, cols, ld, out);
        FA_EXPECT(t, fa_ref_row_max(x, rows, cols, ld, ref) == FA_OK,
                  "row_max reference %lld x %lld: %s", (long long)rows, (long long)cols,
                  fa_last_error());
        for (int64_t r = 0; r < rows; ++r)
            FA_EXPECT(t, (double)out[r] == ref[r], "row_max model %lld x %lld row %lld: %g != %g",
                      (long long)rows, (long long)cols, (long long)r, (double)out[r], ref[r]);
        model_row_sum(x, rows, cols, ld, out);
        FA_EXPECT(t, fa_ref_row_sum(x, rows, cols, ld, ref, abs_sum) == FA_OK,
                  "row_sum reference %lld x %lld: %s", (long long)rows, (long long)cols,
                  fa_last_error());
        for (int64_t r = 0; r < rows; ++r)
            FA_EXPECT(t, within(out[r], ref[r], row_sum_error_bound(cols, abs_sum[r])),
                      "row_sum model %lld x %lld row %lld: %.9g vs %.17g, bound %.3g",
                      (long long)rows, (long long)cols, (long long)r, (double)out[r], ref[r],
                      row_sum_error_bound(cols, abs_sum[r]));
        free(x);
        free(out);
        free(ref);
        free(abs_sum);
    }
}

static void test_reduction_tree(fa_tests *t)
{
    FA_EXPECT(t, row_sum_depth(0) == 0, "depth(0) = %lld", (long long)row_sum_depth(0));
    FA_EXPECT(t, row_sum_depth(1) == 8, "depth(1) = %lld", (long long)row_sum_depth(1));
    FA_EXPECT(t, row_sum_depth(256) == 8, "depth(256) = %lld", (long long)row_sum_depth(256));
    FA_EXPECT(t, row_sum_depth(257) == 9, "depth(257) = %lld", (long long)row_sum_depth(257));
    FA_EXPECT(t, row_sum_depth(1 << 20) == 4096 - 1 + 8, "depth(2^20) = %lld",
              (long long)row_sum_depth(1 << 20));

    /* Order matters in fp32: added in sequence, (2^24 + 1) - 2^24 = 0 because 2^24 + 1 rounds
     * to 2^24; the tree pairs thread 0's 2^24 with thread 2's -2^24 first and keeps the 1. */
    const float cancel[] = {0x1p24f, 1.0f, -0x1p24f};
    float tree_sum = 0.0f;
    model_row_sum(cancel, 1, 3, 3, &tree_sum);
    const float sequential = (cancel[0] + cancel[1]) + cancel[2];
    FA_EXPECT(t, tree_sum == 1.0f && sequential == 0.0f, "tree %g (want 1), sequential %g (want 0)",
              (double)tree_sum, (double)sequential);

    /* The bound is the tree's: a row of 2^24 followed by ones loses ~4095 in the tree (the ones of
     * thread 0), within gamma_d sum|x|; a sequential sum loses every one and must fail it widely. */
    enum { COLS = 1 << 20 };
    float *row = fa_new_floats(COLS);
    row[0] = 0x1p24f;
    for (int c = 1; c < COLS; ++c)
        row[c] = 1.0f;
    const double exact = 0x1p24 + (COLS - 1), abs_sum = exact;
    const double bound = row_sum_error_bound(COLS, abs_sum);
    float tree = 0.0f, serial = 0.0f;
    model_row_sum(row, 1, COLS, COLS, &tree);
    for (int c = 0; c < COLS; ++c)
        serial += row[c];
    FA_EXPECT(t, fabs((double)tree - exact) <= bound, "tree error %g > bound %g",
              fabs((double)tree - exact), bound);
    FA_EXPECT(t, fabs((double)serial - exact) > 10.0 * bound,
              "sequential error %g should exceed the tree's bound %g by 10x",
              fabs((double)serial - exact), bound);
    free(row);

    /* max keeps NaN where fmaxf drops it; a permuted row has the same max. */
    FA_EXPECT(t, isnan(fa_max_nan(1.0f, NAN)) && isnan(fa_max_nan(NAN, 1.0f)),
              "fa_max_nan must return NaN when either side is NaN");
    FA_EXPECT(t, fmaxf(1.0f, NAN) == 1.0f, "fmaxf drops NaN (the pitfall the kernel avoids)");
    float values[777], shuffled[777], max_a = 0.0f, max_b = 0.0f;
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 5);
    fa_fill(values, 777, FA_FILL_GAUSSIAN, 1.0, &rng);
    memcpy(shuffled, values, sizeof values);
    for (int i = 776; i > 0; --i) {
        const int j = (int)fa_rng_int(&rng, 0, i);
        const float tmp = shuffled[i];
        shuffled[i] = shuffled[j];
        shuffled[j] = tmp;
    }
    model_row_max(values, 1, 777, 777, &max_a);
    model_row_max(shuffled, 1, 777, 777, &max_b);
    FA_EXPECT(t, max_a == max_b, "max of a permuted row changed: %g vs %g", (double)max_a, (double)max_b);
}

/* ---- CPU: bad input for every launcher ---------------------------------------------------- */

/** Stand-in for device memory: validation compares addresses and never dereferences them. */
static _Alignas(16) float arena[64];

/** A pointer @p bytes past the start of the arena (possibly misaligned; never dereferenced). */
static float *arena_at(size_t bytes)
{
    return (float *)((uintptr_t)arena + bytes);
}


/** One bad (or edge) call of an elementwise launcher. */
typedef struct elementwise_case {
    const char *what;
    float *in0, *out; /* in0: a of the vector add, x of the others (b stays valid) */
    int64_t n;
    float alpha;
    fa_status expected;
    const char *needle; /* what the message must name */
} elementwise_case;

/** How many bytes past the arena start each pointer of the cases sits. */
enum { A_OFFSET = 0, B_OFFSET = 64, OUT_OFFSET = 128, MISALIGN = 4, SPAN = 8 };

static void test_elementwise_bad_input(fa_tests *t)
{
    float *a = arena_at(A_OFFSET), *b = arena_at(B_OFFSET), *out = arena_at(OUT_OFFSET);
    const elementwise_case cases[] = {
        {"n = 0 with NULL arrays", NULL, NULL, 0, 1.0f, FA_OK, ""},
        {"n < 0", a, out, -1, 1.0f, FA_ERR_INVALID_SIZE, "n = -1"},
        {"input NULL", NULL, out, SPAN, 1.0f, FA_ERR_NULL_POINTER, "= NULL"},
        {"out NULL", a, NULL, SPAN, 1.0f, FA_ERR_NULL_POINTER, "out = NULL"},
        {"input misaligned", arena_at(A_OFFSET + MISALIGN), out, SPAN, 1.0f, FA_ERR_MISALIGNED,
         "not 16-byte aligned"},
        {"out misaligned", a, arena_at(OUT_OFFSET + MISALIGN), SPAN, 1.0f, FA_ERR_MISALIGNED,
         "out = "},
        {"n overflows 64-bit byte offsets", a, out, INT64_MAX / 2, 1.0f, FA_ERR_OVERFLOW, "n = "},
        {"out overlaps an input partially", a, arena_at(A_OFFSET + 16), SPAN, 1.0f,
         FA_ERR_INVALID_ARGUMENT, "overlaps"},
    };
    for (int c = 0; c < FA_COUNT_OF(cases); ++c) {
        const elementwise_case *k = &cases[c];
        fa_clear_error();
        FA_EXPECT_STATUS(t, vector_add_validate(k->in0, b, k->out, k->n), k->expected, k->needle,
                         "vector_add_validate, %s", k->what);
        fa_clear_error();
        FA_EXPECT_STATUS(t, scale_array_validate(k->in0, k->alpha, k->out, k->n), k->expected,
                         k->needle, "scale_array_validate, %s", k->what);
        for (int m = 0; m < FA_COUNT_OF(EXP_METHODS); ++m) {
            fa_clear_error();
            FA_EXPECT_STATUS(t, exp_validate(EXP_METHODS[m], k->in0, k->out, k->n), k->expected,
                             k->needle, "exp_validate, %s", k->what);
        }
#if FA_HAVE_CUDA
        /* Bad input fails before any CUDA call, so the launchers run without a GPU. */
        typedef fa_status (*unary)(const float *, float *, int64_t, cudaStream_t);
        const unary refs[] = {ref_exp_accurate, ref_exp2_prescaled, ref_exp_fast};
        const unary learners[] = {learner_exp_accurate, learner_exp2_prescaled, learner_exp_fast};
        fa_clear_error();
        FA_EXPECT_STATUS(t, ref_vector_add(k->in0, b, k->out, k->n, 0), k->expected, k->needle,
                         "ref_vector_add, %s", k->what);
        fa_clear_error();
        FA_EXPECT_LEARNER_STATUS(t, learner_vector_add(k->in0, b, k->out, k->n, 0), k->expected,
                                 k->needle, "learner_vector_add, %s", k->what);
        fa_clear_error();
        FA_EXPECT_STATUS(t, ref_scale_array(k->in0, k->alpha, k->out, k->n, 0), k->expected,
                         k->needle, "ref_scale_array, %s", k->what);
        fa_clear_error();
        FA_EXPECT_LEARNER_STATUS(t, learner_scale_array(k->in0, k->alpha, k->out, k->n, 0),
                                 k->expected, k->needle, "learner_scale_array, %s", k->what);
        for (int m = 0; m < FA_COUNT_OF(refs); ++m) {
            fa_clear_error();
            FA_EXPECT_STATUS(t, refs[m](k->in0, k->out, k->n, 0), k->expected, k->needle, "%s, %s",
                             exp_launcher_name(EXP_METHODS[m]), k->what);
            fa_clear_error();
            FA_EXPECT_LEARNER_STATUS(t, learners[m](k->in0, k->out, k->n, 0), k->expected,
                                     k->needle, "%s, %s", exp_launcher_name(EXP_METHODS[m]),
                                     k->what);
        }
#endif
    }

    /* Arguments only the vector add has, or only the scale, or only exp (validation suffices:
     * the launchers call these very functions first, as the cases above show). */
    fa_clear_error();
    FA_EXPECT_STATUS(t, vector_add_validate(a, NULL, out, SPAN), FA_ERR_NULL_POINTER, "b = NULL",
                     "vector_add_validate, b NULL");
    fa_clear_error();
    FA_EXPECT_STATUS(t, vector_add_validate(a, arena_at(B_OFFSET + MISALIGN), out, SPAN),
                     FA_ERR_MISALIGNED, "b = ", "vector_add_validate, b misaligned");
    fa_clear_error();
    FA_EXPECT_STATUS(t, vector_add_validate(a, b, arena_at(B_OFFSET + 16), SPAN),
                     FA_ERR_INVALID_ARGUMENT, "overlaps b", "vector_add_validate, out overlaps b");
    fa_clear_error();
    FA_EXPECT_STATUS(t, vector_add_validate(a, b, a, SPAN), FA_OK, "",
                     "vector_add_validate, in place (out == a)");
    fa_clear_error();
    FA_EXPECT_STATUS(t, scale_array_validate(a, NAN, out, SPAN), FA_ERR_INVALID_ARGUMENT,
                     "alpha = nan", "scale_array_validate, alpha NaN");
    fa_clear_error();
    FA_EXPECT_STATUS(t, scale_array_validate(NULL, INFINITY, NULL, 0), FA_ERR_INVALID_ARGUMENT,
                     "alpha = inf", "scale_array_validate, alpha inf, even for n = 0");
    fa_clear_error();
    FA_EXPECT_STATUS(t, exp_validate((fa_exp_method)7, a, out, SPAN), FA_ERR_INVALID_ARGUMENT,
                     "method = 7", "exp_validate, unknown method");
#if FA_HAVE_CUDA
    fa_clear_error();
    FA_EXPECT_STATUS(t, ref_scale_array(a, NAN, out, SPAN, 0), FA_ERR_INVALID_ARGUMENT,
                     "alpha = nan", "ref_scale_array, alpha NaN");
    fa_clear_error();
    FA_EXPECT_STATUS(t, ref_vector_add(a, arena_at(B_OFFSET + MISALIGN), out, SPAN, 0),
                     FA_ERR_MISALIGNED, "b = ", "ref_vector_add, b misaligned");
#endif
}

/** One bad (or edge) call of a row launcher. */
typedef struct row_case {
    const char *what;
    float *x;
    int64_t rows, cols, ld;
    float *out;
    fa_status expected;
    const char *needle;
} row_case;

static void test_row_bad_input(fa_tests *t)
{
    float *x = arena_at(0), *out = arena_at(OUT_OFFSET);
    const row_case cases[] = {
        {"rows = 0 with NULL arrays", NULL, 0, 5, 5, NULL, FA_OK, ""},
        {"rows < 0", x, -1, 4, 4, out, FA_ERR_INVALID_SIZE, "rows = -1"},
        {"cols < 0", x, 2, -3, 4, out, FA_ERR_INVALID_SIZE, "cols = -3"},
        {"ld < cols", x, 2, 4, 3, out, FA_ERR_BAD_STRIDE, "ld = 3"},
        {"rows above the grid limit", x, (int64_t)INT32_MAX + 1, 1, 1, out, FA_ERR_UNSUPPORTED,
         "rows = 2147483648"},
        {"extent overflows 64-bit byte offsets", x, 1 << 30, 1, (int64_t)1 << 40, out,
         FA_ERR_OVERFLOW, "ld = 1099511627776"},
        {"out NULL", x, 2, 4, 4, NULL, FA_ERR_NULL_POINTER, "out = NULL"},
        {"x NULL", NULL, 2, 4, 4, out, FA_ERR_NULL_POINTER, "x = NULL"},
        {"x misaligned", arena_at(2), 2, 4, 4, out, FA_ERR_MISALIGNED, "x = "},
        {"out misaligned", x, 2, 4, 4, arena_at(OUT_OFFSET + 1), FA_ERR_MISALIGNED, "out = "},
        {"out overlaps x", x, 2, 4, 4, arena_at(12), FA_ERR_INVALID_ARGUMENT, "overlaps x"},
    };
    typedef fa_status (*validator)(const float *, int64_t, int64_t, int64_t, const float *);
    const validator validators[] = {row_max_validate, row_sum_validate};
    const char *const names[] = {"row_max", "row_sum"};
    for (int c = 0; c < FA_COUNT_OF(cases); ++c) {
        const row_case *k = &cases[c];
        for (int v = 0; v < FA_COUNT_OF(validators); ++v) {
            fa_clear_error();
            const fa_status got = validators[v](k->x, k->rows, k->cols, k->ld, k->out);
            FA_EXPECT_STATUS(t, got, k->expected, k->needle, "%s, %s", names[v], k->what);
            if (k->expected != FA_OK)
                FA_EXPECT(t, strstr(fa_last_error(), names[v]) != NULL,
                          "%s: message \"%s\" does not name the op", names[v], fa_last_error());
        }
#if FA_HAVE_CUDA
        typedef fa_status (*row_launcher)(const float *, int64_t, int64_t, int64_t, float *, cudaStream_t);
        const row_launcher refs[] = {ref_row_max, ref_row_sum};
        const row_launcher learners[] = {learner_row_max, learner_row_sum};
        for (int v = 0; v < FA_COUNT_OF(refs); ++v) {
            fa_clear_error();
            FA_EXPECT_STATUS(t, refs[v](k->x, k->rows, k->cols, k->ld, k->out, 0), k->expected,
                             k->needle, "%s, %s", names[v], k->what);
            fa_clear_error();
            FA_EXPECT_LEARNER_STATUS(t, learners[v](k->x, k->rows, k->cols, k->ld, k->out, 0),
                                     k->expected, k->needle, "%s, %s", names[v], k->what);
        }
#endif
    }
    /* Edges that are valid: empty rows with x NULL, and ld = cols = 0. */
    fa_clear_error();
    FA_EXPECT_STATUS(t, row_max_validate(NULL, 3, 0, 0, out), FA_OK, "",
                     "row_max_validate, cols = 0 with x NULL");
}

/**
 * Every bad command line gets the usage exit code, 2, before any GPU work:
 * the parser is plain C, so this holds in builds without CUDA too.
 */
static void test_driver_flags(fa_tests *t)
{
    static const char *const bad[][6] = {
        {"stage01", "--impl", "nonsense"},
        {"stage01", "--impl"},
        {"stage01", "--milestone", "three"},
        {"stage01", "--milestone", "26"},
        {"stage01", "--milestone", "6"},                       /* a milestone of another stage */
        {"stage01", "--seed", "12x"},
        {"stage01", "--seed", "-1"},
        {"stage01", "--no-such-flag"},
        {"stage01", "--version", "2"},                         /* --version needs --milestone */
        {"stage01", "--milestone", "1", "--version", "1"},     /* M1 has one version */
        {"stage01", "--nq", "64"},                             /* no stage-01 milestone reads it */
        {"stage01", "--n", "-1"},                              /* sizes are >= 0 */
        {"stage01", "--n", "77", "--case", "vector_add random n=1"}, /* a case or a problem */
        {"stage01", "--milestone", "4", "--n", "77"},          /* M4 reads --rows --cols */
    };
    for (int c = 0; c < FA_COUNT_OF(bad); ++c)
        FA_EXPECT_USAGE_ERROR(t, 1, bad[c]);
    char *help[] = {"stage01", "--help", NULL};
    fa_stage_request request;
    FA_EXPECT(t, fa_stage_parse(2, help, 1, &request) == FA_CLI_HELP,
              "stage01 --help must print the usage and exit 0");
    char *rows[] = {"stage01", "--rows", "3", "--cols", "5", NULL};
    FA_EXPECT(t, fa_stage_parse(5, rows, 1, &request) == FA_CLI_OK &&
                     request.run.problem.given == (FA_PROBLEM_ROWS | FA_PROBLEM_COLS) &&
                     request.run.problem.rows == 3 && request.run.problem.cols == 5,
              "--rows 3 --cols 5 must describe a 3 x 5 problem");
}

/** The exp sweep keeps a NaN: a NaN result fails it, however small the other errors. */
static void test_exp_sweep_keeps_nan(fa_tests *t)
{
    enum { N = 1001 };
    float x[N], y[N];
    for (int i = 0; i < N; ++i) {
        x[i] = exp_sweep_x(i, N);
        y[i] = (float)exp((double)x[i]);
    }
    exp_sweep_summary s;
    exp_sweep_summarise(FA_EXP_EXPF, x, y, N, &s);
    FA_EXPECT(t, exp_sweep_within_bound(&s), "correctly rounded exp must be within the bound (%g)",
              s.worst_ratio);
    y[500] = NAN;
    exp_sweep_summarise(FA_EXP_EXPF, x, y, N, &s);
    FA_EXPECT(t, !exp_sweep_within_bound(&s) && isnan(s.worst_ratio) && isnan(s.max_ulps[2]),
              "a NaN result must make the sweep fail (worst ratio %g, max ulps %g)",
              s.worst_ratio, s.max_ulps[2]);
    FA_EXPECT(t, s.worst_x == x[500], "the sweep must name where the NaN is: %g, expected %g",
              s.worst_x, (double)x[500]);
}

/* ---- GPU ------------------------------------------------------------------------------------ */

#if FA_HAVE_CUDA
/** Poisoned elements after every output: a kernel that writes past n changes them. */
enum { CANARY = 64 };

/** Device array of @p count floats, uploaded from @p host or, when NULL, poisoned. */
static fa_status device_array(float **device, const float *host, int64_t count)
{
    void *ptr = NULL;
    *device = NULL;
    const size_t bytes = (size_t)count * sizeof(float);
    FA_TRY(fa_device_alloc(&ptr, bytes));
    *device = ptr;
    return host ? fa_upload(ptr, host, bytes) : fa_device_poison(ptr, bytes);
}

static void test_reference_checks(fa_tests *t)
{
    const fa_run_options options = {.seed = SEED, .quick = false};
    FA_EXPECT_REFERENCE_CHECKS(t, &stage01, &options);
}

/** The row kernels replay the model's tree: their results agree bit for bit. */
static void test_rows_match_model(fa_tests *t)
{
    static const struct {
        int64_t rows, cols, ld;
    } shapes[] = {{7, 1, 1}, {5, 31, 37}, {5, 1025, 1025}, {3, (1 << 18) + 5, (1 << 18) + 5}};
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 6);
    for (int s = 0; s < FA_COUNT_OF(shapes); ++s) {
        const int64_t rows = shapes[s].rows, cols = shapes[s].cols, ld = shapes[s].ld;
        float *x = fa_new_floats(rows * ld);
        float *model = fa_new_floats(rows);
        float *got = fa_new_floats(rows);
        fa_fill(x, rows * ld, FA_FILL_ADVERSARIAL, 1.0, &rng);
        float *d_x = NULL, *d_out = NULL;
        fa_status status = device_array(&d_x, x, rows * ld);
        if (status == FA_OK)
            status = device_array(&d_out, NULL, rows);
        for (int op = 0; op < 2 && status == FA_OK; ++op) {
            (op ? model_row_sum : model_row_max)(x, rows, cols, ld, model);
            status = (op ? ref_row_sum : ref_row_max)(d_x, rows, cols, ld, d_out, 0);
            if (status == FA_OK)
                status = fa_download(got, d_out, (size_t)rows * sizeof(float));
            const int64_t at = status == FA_OK ? fa_first_difference(got, model, rows) : -1;
            FA_EXPECT(t, at < 0, "%s %lld x %lld: GPU %a != model %a at row %lld",
                      op ? "row_sum" : "row_max", (long long)rows, (long long)cols,
                      at < 0 ? 0.0 : (double)got[at], at < 0 ? 0.0 : (double)model[at], (long long)at);
        }
        FA_EXPECT(t, status == FA_OK, "rows vs model %lld x %lld: %s", (long long)rows,
                  (long long)cols, fa_last_error());
        fa_device_free(d_x);
        fa_device_free(d_out);
        free(x);
        free(model);
        free(got);
    }
}

/** Launches every kernel on n elements (rows) into an output with CANARY poisoned floats after it. */
static void test_canaries(fa_tests *t)
{
    enum { N = 1027, ROWS = 37, COLS = 27 }; /* the rows read ROWS * COLS = 999 <= N inputs */
    float host[N];
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 7);
    fa_fill(host, N, FA_FILL_GAUSSIAN, 1.0, &rng);
    float *d_in = NULL, *d_out = NULL;
    fa_status status = device_array(&d_in, host, N);
    if (status == FA_OK)
        status = device_array(&d_out, NULL, N + CANARY);
    const char *names[] = {"vector_add", "scale_array", "exp_accurate", "exp2_prescaled",
                           "exp_fast", "row_max", "row_sum"};
    for (int k = 0; k < FA_COUNT_OF(names) && status == FA_OK; ++k) {
        int64_t written = N;
        status = fa_device_poison(d_out, (N + CANARY) * sizeof(float));
        if (status != FA_OK)
            break;
        switch (k) {
        case 0: status = ref_vector_add(d_in, d_in, d_out, N, 0); break;
        case 1: status = ref_scale_array(d_in, 3.0f, d_out, N, 0); break;
        case 2: status = ref_exp_accurate(d_in, d_out, N, 0); break;
        case 3: status = ref_exp2_prescaled(d_in, d_out, N, 0); break;
        case 4: status = ref_exp_fast(d_in, d_out, N, 0); break;
        case 5:
            status = ref_row_max(d_in, ROWS, COLS, COLS, d_out, 0);
            written = ROWS;
            break;
        default:
            status = ref_row_sum(d_in, ROWS, COLS, COLS, d_out, 0);
            written = ROWS;
            break;
        }
        float got[N + CANARY];
        if (status == FA_OK)
            status = fa_download(got, d_out, sizeof got);
        int64_t unwritten = 0, overwritten = 0;
        for (int64_t i = 0; i < N + CANARY && status == FA_OK; ++i) {
            if (i < written && fa_is_poison(got[i]))
                ++unwritten;
            if (i >= written && !fa_is_poison(got[i]))
                ++overwritten;
        }
        FA_EXPECT(t, status == FA_OK && unwritten == 0 && overwritten == 0,
                  "%s: %lld outputs unwritten, %lld floats written past the end (%s)", names[k],
                  (long long)unwritten, (long long)overwritten, fa_last_error());
    }
    FA_EXPECT(t, status == FA_OK, "canaries: %s", fa_last_error());
    fa_device_free(d_in);
    fa_device_free(d_out);
}

/** A NaN reaches exactly the outputs that depend on it. */
static void test_nan_propagation(fa_tests *t)
{
    enum { ROWS = 4, COLS = 1025 };
    static float x[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; ++i)
        x[i] = (float)(i % 13);
    x[1 * COLS + COLS - 1] = NAN; /* last column of row 1: the thread that reads it is the last */
    x[3 * COLS + 0] = NAN;        /* first column of row 3 */
    float *d_x = NULL, *d_out = NULL;
    fa_status status = device_array(&d_x, x, ROWS * COLS);
    if (status == FA_OK)
        status = device_array(&d_out, NULL, ROWS * COLS);
    float got[ROWS * COLS];
    for (int op = 0; op < 2 && status == FA_OK; ++op) {
        status = (op ? ref_row_sum : ref_row_max)(d_x, ROWS, COLS, COLS, d_out, 0);
        if (status == FA_OK)
            status = fa_download(got, d_out, ROWS * sizeof(float));
        for (int r = 0; r < ROWS && status == FA_OK; ++r)
            FA_EXPECT(t, (bool)isnan(got[r]) == (r == 1 || r == 3), "%s row %d: %g",
                      op ? "row_sum" : "row_max", r, (double)got[r]);
    }
    if (status == FA_OK)
        status = ref_exp_fast(d_x, d_out, ROWS * COLS, 0);
    if (status == FA_OK)
        status = fa_download(got, d_out, sizeof got);
    int64_t wrong = 0;
    for (int i = 0; i < ROWS * COLS && status == FA_OK; ++i)
        wrong += (bool)isnan(got[i]) != (bool)isnan(x[i]);
    FA_EXPECT(t, status == FA_OK && wrong == 0, "exp_fast: %lld outputs with the wrong NaN-ness (%s)",
              (long long)wrong, fa_last_error());
    fa_device_free(d_x);
    fa_device_free(d_out);
}

/** The checker is able to fail: it flags an element left unwritten and an element changed. */
static void test_checker_catches_errors(fa_tests *t)
{
    enum { N = 1029 };
    float a[N], b[N], got[N];
    double ref[N];
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 8);
    fa_fill(a, N, FA_FILL_GAUSSIAN, 1.0, &rng);
    fa_fill(b, N, FA_FILL_GAUSSIAN, 1.0, &rng);
    fa_ref_vector_add(a, b, ref, N);
    float *d_a = NULL, *d_b = NULL, *d_out = NULL;
    fa_status status = device_array(&d_a, a, N);
    if (status == FA_OK)
        status = device_array(&d_b, b, N);
    if (status == FA_OK)
        status = device_array(&d_out, NULL, N);
    if (status == FA_OK) /* one element short: the last output keeps its poison */
        status = ref_vector_add(d_a, d_b, d_out, N - 1, 0);
    if (status == FA_OK)
        status = fa_download(got, d_out, sizeof got);
    FA_EXPECT(t, status == FA_OK, "checker test launch: %s", fa_last_error());
    if (status == FA_OK) {
        const fa_shape shape = fa_shape_1d(N);
        fa_result result = {0};
        FA_EXPECT(t, !fa_result_judge(&result, "short launch", got, ref, NULL, &shape),
                  "an unwritten last element must fail the check");
        FA_EXPECT(t, strstr(result.detail, "1028") != NULL, "the detail must name i = 1028: %s",
                  result.detail);
        got[N - 1] = (float)ref[N - 1];
        got[517] = nextafterf(got[517], INFINITY);
        result = (fa_result){0};
        FA_EXPECT(t, !fa_result_judge(&result, "one ulp off", got, ref, NULL, &shape),
                  "an element one ulp off must fail an exact check");
        FA_EXPECT(t, strstr(result.detail, "517") != NULL, "the detail must name i = 517: %s",
                  result.detail);
    }
    fa_device_free(d_a);
    fa_device_free(d_b);
    fa_device_free(d_out);
}

/**
 * --case reruns exactly the named case, and the problem flags make one case
 * of their own: what a learner reproducing a failure relies on.
 */
static void test_case_selection(fa_tests *t)
{
    const fa_milestone_check *m1 = &stage01.checks[0];
    fa_run_options options = {.seed = SEED, .case_name = "vector_add random n=1025"};
    fa_result result = {0};
    m1->check(FA_IMPL_REFERENCE, &options, &result);
    FA_EXPECT(t, result.outcome == FA_OUTCOME_PASSED && result.cases == 1,
              "--case must run exactly its case: %s, %d cases", result.detail, result.cases);
    options.case_name = "no such case";
    result = (fa_result){0};
    m1->check(FA_IMPL_REFERENCE, &options, &result);
    FA_EXPECT(t, result.cases == 0, "an unknown --case must run nothing (%d cases)", result.cases);
    options.case_name = NULL;
    options.problem.given = FA_PROBLEM_N;
    options.problem.n = 77;
    result = (fa_result){0};
    m1->check(FA_IMPL_REFERENCE, &options, &result);
    FA_EXPECT(t, result.outcome == FA_OUTCOME_PASSED && result.cases == 1,
              "--n 77 must run its one case: %s, %d cases", result.detail, result.cases);
}

#endif /* FA_HAVE_CUDA */

int main(int argc, char **argv)
{
    static const fa_test_fn cpu[] = {
        test_elementwise_fixtures,        test_exp_fixtures,        test_row_fixtures,
        test_elementwise_model_vs_reference, test_exp2_bound_needs_argument_term,
        test_fp32_ulp,                    test_rows_model_vs_reference, test_reduction_tree,
        test_elementwise_bad_input,       test_row_bad_input,       test_driver_flags,
        test_exp_sweep_keeps_nan,
    };
#if FA_HAVE_CUDA
    static const fa_test_fn gpu[] = {
        test_reference_checks, test_case_selection, test_rows_match_model,
        test_canaries,         test_nan_propagation, test_checker_catches_errors,
    };
    const fa_test_suite suite = {"test_stage01", cpu, FA_COUNT_OF(cpu), gpu, FA_COUNT_OF(gpu),
                                 fa_gpu_gate};
#else
    const fa_test_suite suite = {"test_stage01", cpu, FA_COUNT_OF(cpu), NULL, 0, NULL};
#endif
    return fa_test_main(argc, argv, &suite);
}
