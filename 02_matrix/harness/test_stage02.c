/**
 * @file test_stage02.c
 * @brief Tests of stage 02: `test_stage02 cpu` and `test_stage02 gpu`.
 *
 * cpu: the fixtures against the models (bit for bit), the models against the
 * double reference within their bounds, the tensor-core bound against a
 * kernel that accumulates in bf16 (it must reject it by a wide margin) and
 * against an emulation of real tensor cores (it must accept it), properties,
 * bad input for every launcher (the launchers fail before any CUDA call, so
 * no GPU is needed), every size limit at its boundary, the driver's flags,
 * and the rules by which a check walks the versions of a milestone.
 * gpu: every milestone's reference check, --case and the problem flags,
 * GPU == model bit for bit where the order is fixed, NaN propagation,
 * unwritten-output detection and canaries after every output. Exits 77
 * without a usable GPU.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa_bytes.h"
#include "fa_check.h"
#include "fa_cli.h"
#include "fa_half.h"
#include "fa_index.h"
#include "fa_milestones.h"
#include "fa_reference.h"
#include "fa_rng.h"
#include "fa_stage.h"
#include "fa_status.h"
#include "fa_test.h"
#include "fixtures.h"
#include "matrix.h"
#include "model.h"
#include "versions.h"

#if FA_HAVE_CUDA
#include "checks.h"
#include "fa_device.h"
#include "runners.h"
#endif

enum { TEST_SEED = 2026 };

/** [cols][rows] copy of a [rows][cols] matrix. */
static float *transpose_of(const float *in, int64_t rows, int64_t cols)
{
    float *out = fa_new_floats(rows * cols);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
            out[c * rows + r] = in[r * cols + c];
    return out;
}

static const fa_dtype all_dtypes[] = {FA_F32, FA_BF16, FA_F16};

/* ==== cpu: fixtures against the models ===================================================== */

static void test_dot_fixtures(fa_tests *t)
{
    for (int d = 0; d < 3; ++d) {
        const fa_dtype dtype = all_dtypes[d];
        for (int f = 0; f < dot_fixture_count; ++f) {
            const dot_fixture *fx = &dot_fixtures[f];
            void *x = fa_as_dtype(fx->x, fx->n, dtype), *y = fa_as_dtype(fx->y, fx->n, dtype);
            const float got = model_dot_product(x, y, dtype, fx->n);
            FA_EXPECT(t, fa_same_bits(got, fx->expected),
                      "dot fixture '%s' (%s): model %.9g, want %.9g", fx->name,
                      fa_dtype_name(dtype), got, fx->expected);
            const double ref = fa_ref_dot(x, y, dtype, fx->n, NULL);
            FA_EXPECT(t, ref == fx->expected, "dot fixture '%s' (%s): reference %.17g, want %.9g",
                      fx->name, fa_dtype_name(dtype), ref, fx->expected);
            free(x);
            free(y);
        }
        float *xf = fa_new_floats(DOT_LONG_FIXTURE_N);
        float *yf = fa_new_floats(DOT_LONG_FIXTURE_N);
        dot_long_fixture(xf, yf, DOT_LONG_FIXTURE_N);
        void *x = fa_as_dtype(xf, DOT_LONG_FIXTURE_N, dtype);
        void *y = fa_as_dtype(yf, DOT_LONG_FIXTURE_N, dtype);
        const float got = model_dot_product(x, y, dtype, DOT_LONG_FIXTURE_N);
        FA_EXPECT(t, fa_same_bits(got, DOT_LONG_FIXTURE_SUM), "long dot fixture (%s): model %.9g",
                  fa_dtype_name(dtype), got);
        FA_EXPECT(t, fa_ref_dot(x, y, dtype, DOT_LONG_FIXTURE_N, NULL) == DOT_LONG_FIXTURE_SUM,
                  "long dot fixture (%s): the worked sum", fa_dtype_name(dtype));
        free(xf);
        free(yf);
        free(x);
        free(y);
    }
}

/** Every fixture: the fp32 model and the tensor-core emulation give the expected bits, NN and NT. */
static void test_matmul_fixtures(fa_tests *t)
{
    for (int f = 0; f < matmul_fixture_count; ++f) {
        const matmul_fixture *fx = &matmul_fixtures[f];
        const int64_t m = fx->m, n = fx->n, k = fx->k;
        float *bt = k * n > 0 ? transpose_of(fx->b, k, n) : NULL;
        float *c = fa_new_floats(m * n);
        double *want = fa_new_doubles(m * n);
        for (int l = 0; l < 2; ++l) {
            const fa_b_layout layout = l == 0 ? FA_B_ROW_MAJOR : FA_B_TRANSPOSED;
            const float *b = layout == FA_B_ROW_MAJOR ? fx->b : bt;
            for (int model = 0; model < 2; ++model) {
                if (model == 0)
                    model_matmul_fp32(fx->a, b, layout, m, n, k, c);
                else
                    model_matmul_tensor_core(fx->a, b, layout, m, n, k, c);
                bool exact = true;
                for (int64_t i = 0; i < m * n; ++i)
                    exact = exact && fa_same_bits(c[i], fx->c[i]);
                FA_EXPECT(t, exact, "matmul fixture '%s' %s: the %s model differs", fx->name,
                          l == 0 ? "NN" : "NT", model == 0 ? "fp32" : "tensor-core");
            }
            if (m * n > 0) {
                FA_EXPECT(t, fa_ref_matmul(fx->a, b, FA_F32, layout, m, n, k, want, NULL) == FA_OK,
                          "matmul fixture '%s': the reference: %s", fx->name, fa_last_error());
                bool exact = true;
                for (int64_t i = 0; i < m * n; ++i)
                    exact = exact && want[i] == fx->c[i];
                FA_EXPECT(t, exact, "matmul fixture '%s': the worked answer is the product",
                          fx->name);
            }
        }
        free(bt);
        free(c);
        free(want);
    }
}

static void test_transpose_fixtures(fa_tests *t)
{
    for (int f = 0; f < transpose_fixture_count; ++f) {
        const transpose_fixture *fx = &transpose_fixtures[f];
        const int64_t count = fx->rows * fx->cols;
        double *out = fa_new_doubles(count);
        FA_EXPECT(t, fa_ref_transpose(fx->in, fx->rows, fx->cols, out) == FA_OK,
                  "transpose fixture '%s': the reference: %s", fx->name, fa_last_error());
        bool exact = true;
        for (int64_t i = 0; i < count; ++i)
            exact = exact && out[i] == fx->out[i];
        FA_EXPECT(t, exact, "transpose fixture '%s'", fx->name);
        free(out);
    }
}

/* ==== cpu: models against the reference, and the bounds ==================================== */

static void test_dot_model_within_bound(fa_tests *t)
{
    static const int64_t lengths[] = {1, 5, 9, 1000, 65537, 1048583, 3000017};
    fa_rng rng;
    fa_rng_seed(&rng, TEST_SEED, 1);
    for (int d = 0; d < 3; ++d)
        for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; ++i) {
            const int64_t n = lengths[i];
            const fa_dtype dtype = all_dtypes[d];
            float *xf = fa_new_floats(n), *yf = fa_new_floats(n);
            fa_fill(xf, n, FA_FILL_GAUSSIAN, 1.0, &rng);
            fa_fill(yf, n, FA_FILL_GAUSSIAN, 1.0, &rng);
            void *x = fa_as_dtype(xf, n, dtype), *y = fa_as_dtype(yf, n, dtype);
            double abs_sum = 0.0;
            const double ref = fa_ref_dot(x, y, dtype, n, &abs_sum);
            const float got = model_dot_product(x, y, dtype, n);
            const double bound = model_dot_product_bound(n, dtype, abs_sum);
            FA_EXPECT(t, fabs((double)got - ref) <= bound,
                      "dot model %s n = %lld: err %.3g > bound %.3g", fa_dtype_name(dtype),
                      (long long)n, fabs((double)got - ref), bound);
            FA_EXPECT(t, fa_same_bits(model_dot_product(y, x, dtype, n), got),
                      "dot model %s n = %lld: x . y and y . x differ", fa_dtype_name(dtype),
                      (long long)n);
            free(xf);
            free(yf);
            free(x);
            free(y);
        }
}

/** The depth is the real one: tiny next to n for long vectors, and its parts add up. */
static void test_dot_depth(fa_tests *t)
{
    /* n = 1: one FMA, 8 tree levels in pass 1, one addition and 8 levels in pass 2. */
    FA_EXPECT(t, model_dot_product_depth(1, FA_F32) == 18, "depth(1) = %lld",
              (long long)model_dot_product_depth(1, FA_F32));
    FA_EXPECT(t, model_dot_product_depth(0, FA_F32) == 0, "depth(0)");
    /* 2^26 fp32: 2^24 chunks over 2^18 threads = 64 chunks of 4 per thread, 4 partials each in pass 2. */
    const int64_t n = (int64_t)1 << 26;
    FA_EXPECT(t, model_dot_product_depth(n, FA_F32) == 256 + 8 + 4 + 8, "depth(2^26) = %lld",
              (long long)model_dot_product_depth(n, FA_F32));
    FA_EXPECT(t, model_dot_product_depth(n, FA_BF16) == 256 + 8 + 4 + 8, "bf16 depth(2^26) = %lld",
              (long long)model_dot_product_depth(n, FA_BF16));
    FA_EXPECT(t, dot_product_blocks(1, FA_F32) == 1 && dot_product_blocks(n, FA_F32) == DOT_PRODUCT_MAX_PARTIALS,
              "blocks: 1 for a tail only, capped at %d", DOT_PRODUCT_MAX_PARTIALS);
}

static void test_matmul_fp32_model(fa_tests *t)
{
    const int64_t m = 33, n = 47, k = 129;
    fa_rng rng;
    fa_rng_seed(&rng, TEST_SEED, 2);
    float *a = fa_new_floats(m * k), *b = fa_new_floats(k * n);
    fa_fill(a, m * k, FA_FILL_GAUSSIAN, 1.0, &rng);
    fa_fill(b, k * n, FA_FILL_GAUSSIAN, 1.0, &rng);
    float *bt = transpose_of(b, k, n);
    float *c = fa_new_floats(m * n), *ct = fa_new_floats(m * n);
    double *want = fa_new_doubles(m * n);
    double *abs_c = fa_new_doubles(m * n);
    double *bound = fa_new_doubles(m * n);
    model_matmul_fp32(a, b, FA_B_ROW_MAJOR, m, n, k, c);
    model_matmul_fp32(a, bt, FA_B_TRANSPOSED, m, n, k, ct);
    FA_EXPECT(t, fa_ref_matmul(a, b, FA_F32, FA_B_ROW_MAJOR, m, n, k, want, abs_c) == FA_OK,
              "the matmul reference: %s", fa_last_error());
    for (int64_t i = 0; i < m * n; ++i)
        bound[i] = model_matmul_fp32_bound(k, abs_c[i]);
    fa_check_report report;
    FA_EXPECT(t, fa_check_covers(c, want, bound, m * n, &report),
              "fp32 matmul model within gamma_K: worst err/bound %.3g", report.worst_ratio);
    FA_EXPECT(t, memcmp(c, ct, (size_t)(m * n) * sizeof *c) == 0,
              "NN on B and NT on B^T give the same bits (same order)");
    free(a);
    free(b);
    free(bt);
    free(c);
    free(ct);
    free(want);
    free(abs_c);
    free(bound);
}

/**
 * The tensor-core bound on realistic inputs: attention scores Q K^T with
 * head dimension 64 and 128, and a long K = 1024. The emulation of real
 * tensor cores must pass by a wide margin (err/bound < 0.5), a kernel that
 * accumulates in bf16 must fail by a wide margin (err/bound > 10).
 */
static void test_tensor_core_bound(fa_tests *t)
{
    static const struct {
        int64_t m, n, k;
        fa_b_layout layout;
    } shapes[] = {{64, 64, 64, FA_B_TRANSPOSED}, {64, 64, 128, FA_B_TRANSPOSED},
                  {32, 32, 1024, FA_B_ROW_MAJOR}};
    fa_rng rng;
    fa_rng_seed(&rng, TEST_SEED, 3);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        const int64_t m = shapes[s].m, n = shapes[s].n, k = shapes[s].k;
        float *a = fa_new_floats(m * k), *b = fa_new_floats(k * n);
        fa_fill(a, m * k, FA_FILL_GAUSSIAN, 1.0, &rng);
        fa_fill(b, k * n, FA_FILL_GAUSSIAN, 1.0, &rng);
        for (int64_t i = 0; i < m * k; ++i)
            a[i] = fa_round_to(FA_BF16, a[i]);
        for (int64_t i = 0; i < k * n; ++i)
            b[i] = fa_round_to(FA_BF16, b[i]);
        double *want = fa_new_doubles(m * n);
        double *abs_c = fa_new_doubles(m * n);
        double *bound = fa_new_doubles(m * n);
        float *c = fa_new_floats(m * n);
        FA_EXPECT(t, fa_ref_matmul(a, b, FA_F32, shapes[s].layout, m, n, k, want, abs_c) == FA_OK,
                  "shape %d: the matmul reference: %s", (int)s, fa_last_error());
        for (int64_t i = 0; i < m * n; ++i)
            bound[i] = model_matmul_tensor_core_bound(k, abs_c[i]);
        fa_check_report report;

        model_matmul_tensor_core(a, b, shapes[s].layout, m, n, k, c);
        const bool tc_covered = fa_check_covers(c, want, bound, m * n, &report);
        FA_EXPECT(t, tc_covered && report.worst_ratio < 0.5,
                  "K = %lld: the tensor-core emulation must pass well inside the bound "
                  "(worst err/bound %.3g)", (long long)k, report.worst_ratio);

        model_matmul_fp32(a, b, shapes[s].layout, m, n, k, c);
        FA_EXPECT(t, fa_check_covers(c, want, bound, m * n, &report),
                  "K = %lld: fp32 accumulation is inside the tensor-core bound (worst %.3g)",
                  (long long)k, report.worst_ratio);

        model_matmul_bf16_accumulate(a, b, shapes[s].layout, m, n, k, c);
        const bool bf16_covered = fa_check_covers(c, want, bound, m * n, &report);
        FA_EXPECT(t, !bf16_covered && report.worst_ratio > 10.0,
                  "K = %lld: accumulating in bf16 must fail the bound by > 10x (worst err/bound "
                  "%.3g, %lld of %lld uncovered)", (long long)k, report.worst_ratio,
                  (long long)report.uncovered, (long long)(m * n));
        free(a);
        free(b);
        free(want);
        free(abs_c);
        free(bound);
        free(c);
    }
}

/**
 * (A B)^T = B^T A^T bit for bit: element (j, i) of B^T A^T is the same FMA
 * chain over k as element (i, j) of A B, with the factors of each product
 * swapped (a * b = b * a exactly). A^T is passed as A read "NT".
 */
static void test_matmul_transpose_identity(fa_tests *t)
{
    const int64_t m = 9, n = 13, k = 21;
    fa_rng rng;
    fa_rng_seed(&rng, TEST_SEED, 4);
    float *a = fa_new_floats(m * k), *b = fa_new_floats(k * n);
    fa_fill(a, m * k, FA_FILL_GAUSSIAN, 1.0, &rng);
    fa_fill(b, k * n, FA_FILL_GAUSSIAN, 1.0, &rng);
    float *c = fa_new_floats(m * n), *d = fa_new_floats(m * n);
    float *bt = transpose_of(b, k, n);
    model_matmul_fp32(a, b, FA_B_ROW_MAJOR, m, n, k, c);   /* [m][n] */
    model_matmul_fp32(bt, a, FA_B_TRANSPOSED, n, m, k, d); /* [n][m] = B^T (A^T) */
    float *dt = transpose_of(d, n, m);
    FA_EXPECT(t, memcmp(c, dt, (size_t)(m * n) * sizeof *c) == 0, "(A B)^T = B^T A^T exactly");
    free(a);
    free(b);
    free(c);
    free(d);
    free(bt);
    free(dt);
}

/* ==== cpu: bad input ======================================================================= */

/* Host memory the validators look at but never read; 16-byte aligned so offsets are exact. */
static _Alignas(16) float host_buffer[64];

/** The argument checks of a dot product, through @p call (a validator or a launcher). */
typedef fa_status (*dot_call)(const void *, const void *, fa_dtype, int64_t, float *, float *);

static void dot_bad_inputs(fa_tests *t, const char *who, dot_call call, bool learner)
{
    float *x = host_buffer, *y = host_buffer + 16, *p = host_buffer + 32, *r = host_buffer + 48;
    const struct {
        const char *what;
        const void *x, *y;
        fa_dtype dtype;
        int64_t n;
        float *partials, *result;
        fa_status expected;
        const char *needle;
    } cases[] = {
        {"bad dtype", x, y, (fa_dtype)9, 4, p, r, FA_ERR_INVALID_ARGUMENT, "dtype = 9"},
        {"negative n", x, y, FA_F32, -1, p, r, FA_ERR_INVALID_SIZE, "n = -1"},
        {"NULL x", NULL, y, FA_F32, 4, p, r, FA_ERR_NULL_POINTER, "x = NULL"},
        {"NULL y", x, NULL, FA_BF16, 4, p, r, FA_ERR_NULL_POINTER, "y = NULL"},
        {"NULL partials", x, y, FA_F16, 4, NULL, r, FA_ERR_NULL_POINTER, "partials = NULL"},
        {"NULL result", x, y, FA_F32, 4, p, NULL, FA_ERR_NULL_POINTER, "result = NULL"},
        {"misaligned x", (const char *)x + 4, y, FA_F32, 4, p, r, FA_ERR_MISALIGNED, "x = "},
        {"misaligned y", x, (const char *)y + 8, FA_BF16, 4, p, r, FA_ERR_MISALIGNED, "y = "},
        {"misaligned result", x, y, FA_F32, 4, p, (float *)((char *)r + 2), FA_ERR_MISALIGNED,
         "result = "},
    };
    char label[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        snprintf(label, sizeof label, "%s: %s", who, cases[i].what);
        fa_clear_error();
        const fa_status s = call(cases[i].x, cases[i].y, cases[i].dtype, cases[i].n,
                                 cases[i].partials, cases[i].result);
        FA_EXPECT_STATUS_OF(t, learner, s, cases[i].expected, cases[i].needle, "%s", label);
    }
    snprintf(label, sizeof label, "%s: n = 0 with NULL pointers", who);
    const fa_status empty = call(NULL, NULL, FA_F32, 0, NULL, NULL);
    FA_EXPECT(t, empty == FA_OK || (learner && empty == FA_ERR_NOT_IMPLEMENTED), "%s: %s", label,
              fa_status_name(empty));
}

/** The argument checks of a matmul (a and b as untyped pointers: fp32 or bf16 launchers). */
typedef fa_status (*matmul_call)(const void *, const void *, float *, int64_t, int64_t, int64_t,
                                 fa_b_layout);

static void matmul_bad_inputs(fa_tests *t, const char *who, matmul_call call, bool learner)
{
    const void *a = host_buffer, *b = host_buffer + 16;
    float *c = host_buffer + 32;
    const struct {
        const char *what;
        const void *a, *b;
        float *c;
        int64_t m, n, k;
        fa_b_layout layout;
        fa_status expected;
        const char *needle;
    } cases[] = {
        {"negative m", a, b, c, -1, 2, 2, FA_B_ROW_MAJOR, FA_ERR_INVALID_SIZE, "m = -1"},
        {"negative n", a, b, c, 2, -3, 2, FA_B_ROW_MAJOR, FA_ERR_INVALID_SIZE, "n = -3"},
        {"negative k", a, b, c, 2, 2, -5, FA_B_TRANSPOSED, FA_ERR_INVALID_SIZE, "k = -5"},
        {"bad layout", a, b, c, 2, 2, 2, (fa_b_layout)7, FA_ERR_INVALID_ARGUMENT, "layout = 7"},
        {"too many rows", a, b, c, (int64_t)MATRIX_MAX_ROWS + 1, 2, 2, FA_B_ROW_MAJOR,
         FA_ERR_UNSUPPORTED, "m = "},
        {"n past int32", a, b, c, 2, (int64_t)INT32_MAX + 1, 2, FA_B_ROW_MAJOR, FA_ERR_UNSUPPORTED,
         "n = "},
        {"NULL a", NULL, b, c, 2, 2, 2, FA_B_ROW_MAJOR, FA_ERR_NULL_POINTER, "a = NULL"},
        {"NULL b", a, NULL, c, 2, 2, 2, FA_B_TRANSPOSED, FA_ERR_NULL_POINTER, "b = NULL"},
        {"NULL c", a, b, NULL, 2, 2, 2, FA_B_ROW_MAJOR, FA_ERR_NULL_POINTER, "c = NULL"},
        {"misaligned a", (const char *)a + 1, b, c, 2, 2, 2, FA_B_ROW_MAJOR, FA_ERR_MISALIGNED,
         "a = "},
        {"misaligned b", a, (const char *)b + 1, c, 2, 2, 2, FA_B_ROW_MAJOR, FA_ERR_MISALIGNED,
         "b = "},
        {"misaligned c", a, b, (float *)((char *)c + 2), 2, 2, 2, FA_B_ROW_MAJOR,
         FA_ERR_MISALIGNED, "c = "},
        {"c overlaps a", a, b, (float *)a + 1, 2, 2, 2, FA_B_ROW_MAJOR, FA_ERR_INVALID_ARGUMENT,
         "overlaps a"},
        {"c overlaps b", a, b, (float *)b, 2, 2, 2, FA_B_TRANSPOSED, FA_ERR_INVALID_ARGUMENT,
         "overlaps b"},
    };
    char label[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        snprintf(label, sizeof label, "%s: %s", who, cases[i].what);
        fa_clear_error();
        const fa_status s = call(cases[i].a, cases[i].b, cases[i].c, cases[i].m, cases[i].n,
                                 cases[i].k, cases[i].layout);
        FA_EXPECT_STATUS_OF(t, learner, s, cases[i].expected, cases[i].needle, "%s", label);
    }
    /* m = 0: a (0 x 3) and c (0 x 5) may be NULL; b (3 x 5) still has elements. */
    const fa_status empty = call(NULL, b, NULL, 0, 5, 3, FA_B_ROW_MAJOR);
    FA_EXPECT(t, empty == FA_OK || (learner && empty == FA_ERR_NOT_IMPLEMENTED),
              "%s: m = 0 with NULL a and c: %s", who, fa_status_name(empty));
}

/** The argument checks of a transpose. */
typedef fa_status (*transpose_call)(const float *, float *, int64_t, int64_t);

static void transpose_bad_inputs(fa_tests *t, const char *who, transpose_call call, bool learner)
{
    const float *in = host_buffer;
    float *out = host_buffer + 32;
    const struct {
        const char *what;
        const float *in;
        float *out;
        int64_t rows, cols;
        fa_status expected;
        const char *needle;
    } cases[] = {
        {"negative rows", in, out, -1, 4, FA_ERR_INVALID_SIZE, "rows = -1"},
        {"negative cols", in, out, 4, -2, FA_ERR_INVALID_SIZE, "cols = -2"},
        {"too many rows", in, out, (int64_t)MATRIX_MAX_ROWS + 1, 1, FA_ERR_UNSUPPORTED, "rows = "},
        {"cols past int32", in, out, 1, (int64_t)INT32_MAX + 1, FA_ERR_UNSUPPORTED, "cols = "},
        {"NULL in", NULL, out, 4, 4, FA_ERR_NULL_POINTER, "in = NULL"},
        {"NULL out", in, NULL, 4, 4, FA_ERR_NULL_POINTER, "out = NULL"},
        {"misaligned in", (const float *)((const char *)in + 2), out, 2, 2, FA_ERR_MISALIGNED,
         "in = "},
        {"misaligned out", in, (float *)((char *)out + 1), 2, 2, FA_ERR_MISALIGNED, "out = "},
        {"in place", in, (float *)in, 4, 4, FA_ERR_INVALID_ARGUMENT, "in place"},
        {"overlap", in, (float *)in + 3, 2, 2, FA_ERR_INVALID_ARGUMENT, "overlaps"},
    };
    char label[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        snprintf(label, sizeof label, "%s: %s", who, cases[i].what);
        fa_clear_error();
        const fa_status s = call(cases[i].in, cases[i].out, cases[i].rows, cases[i].cols);
        FA_EXPECT_STATUS_OF(t, learner, s, cases[i].expected, cases[i].needle, "%s", label);
    }
    const fa_status empty = call(NULL, NULL, 0, 7);
    FA_EXPECT(t, empty == FA_OK || (learner && empty == FA_ERR_NOT_IMPLEMENTED),
              "%s: 0 rows with NULL pointers: %s", who, fa_status_name(empty));
}

static fa_status validate_dot(const void *x, const void *y, fa_dtype dtype, int64_t n,
                              float *partials, float *result)
{
    return dot_product_validate(x, y, dtype, n, partials, result);
}

static fa_status validate_matmul_fp32(const void *a, const void *b, float *c, int64_t m,
                                      int64_t n, int64_t k, fa_b_layout layout)
{
    return matmul_validate("matmul", a, b, c, m, n, k, layout, (int)sizeof(float));
}

static fa_status validate_transpose(const float *in, float *out, int64_t rows, int64_t cols)
{
    return transpose_validate("transpose", in, out, rows, cols);
}

#if FA_HAVE_CUDA
/* Adapters from the launchers to the call signatures above (stream 0; every call here fails
 * validation or is empty, so none reaches the GPU). */
static fa_status ref_dot(const void *x, const void *y, fa_dtype d, int64_t n, float *p, float *r)
{
    return ref_dot_product(x, y, d, n, p, r, 0);
}
static fa_status learner_dot(const void *x, const void *y, fa_dtype d, int64_t n, float *p, float *r)
{
    return learner_dot_product(x, y, d, n, p, r, 0);
}
#define MATMUL_ADAPTER(launcher, element)                                                      \
    static fa_status call_##launcher(const void *a, const void *b, float *c, int64_t m,       \
                                     int64_t n, int64_t k, fa_b_layout layout)                \
    {                                                                                         \
        return launcher((const element *)a, (const element *)b, c, m, n, k, layout, 0);       \
    }
MATMUL_ADAPTER(ref_matmul_naive, float)
MATMUL_ADAPTER(ref_matmul_smem_tiled, float)
MATMUL_ADAPTER(ref_matmul_register_blocked, float)
MATMUL_ADAPTER(ref_matmul_mma_bf16, uint16_t)
MATMUL_ADAPTER(learner_matmul_naive, float)
MATMUL_ADAPTER(learner_matmul_smem_tiled, float)
MATMUL_ADAPTER(learner_matmul_register_blocked, float)
MATMUL_ADAPTER(learner_matmul_mma_bf16, uint16_t)
#define TRANSPOSE_ADAPTER(launcher)                                                            \
    static fa_status call_##launcher(const float *in, float *out, int64_t rows, int64_t cols) \
    {                                                                                         \
        return launcher(in, out, rows, cols, 0);                                              \
    }
TRANSPOSE_ADAPTER(ref_transpose_naive)
TRANSPOSE_ADAPTER(ref_transpose_smem_tiled)
TRANSPOSE_ADAPTER(learner_transpose_naive)
TRANSPOSE_ADAPTER(learner_transpose_smem_tiled)
#endif

static void test_bad_inputs(fa_tests *t)
{
    dot_bad_inputs(t, "dot_product_validate", validate_dot, false);
    matmul_bad_inputs(t, "matmul_validate", validate_matmul_fp32, false);
    transpose_bad_inputs(t, "transpose_validate", validate_transpose, false);
#if FA_HAVE_CUDA
    dot_bad_inputs(t, "ref_dot_product", ref_dot, false);
    dot_bad_inputs(t, "learner_dot_product", learner_dot, true);
    const struct {
        const char *name;
        matmul_call call;
        bool learner;
    } matmuls[] = {
        {"ref_matmul_naive", call_ref_matmul_naive, false},
        {"ref_matmul_smem_tiled", call_ref_matmul_smem_tiled, false},
        {"ref_matmul_register_blocked", call_ref_matmul_register_blocked, false},
        {"ref_matmul_mma_bf16", call_ref_matmul_mma_bf16, false},
        {"learner_matmul_naive", call_learner_matmul_naive, true},
        {"learner_matmul_smem_tiled", call_learner_matmul_smem_tiled, true},
        {"learner_matmul_register_blocked", call_learner_matmul_register_blocked, true},
        {"learner_matmul_mma_bf16", call_learner_matmul_mma_bf16, true},
    };
    for (size_t i = 0; i < sizeof matmuls / sizeof matmuls[0]; ++i)
        matmul_bad_inputs(t, matmuls[i].name, matmuls[i].call, matmuls[i].learner);
    transpose_bad_inputs(t, "ref_transpose_naive", call_ref_transpose_naive, false);
    transpose_bad_inputs(t, "ref_transpose_smem_tiled", call_ref_transpose_smem_tiled, false);
    transpose_bad_inputs(t, "learner_transpose_naive", call_learner_transpose_naive, true);
    transpose_bad_inputs(t, "learner_transpose_smem_tiled", call_learner_transpose_smem_tiled, true);
#endif
}

/* ==== cpu: the size limits at their boundary ================================================ */

/** One size at a limit: what the validator (and, refused, every launcher) must answer. */
typedef struct limit_case {
    const char *what;
    int64_t m, n, k; /**< matmul sizes; a transpose reads m as rows and n as cols */
    fa_status expected;
    const char *needle;
} limit_case;

/*
 * Addresses the validators compare but never dereference (their sizes reach
 * 2^62 bytes, more than any host buffer): B low, A and C beyond the largest
 * range B can span (< 2^63 bytes), and 2^58 - 2^56 bytes apart, more than
 * the 2^54 bytes A or C can span within the limits.
 */
static const void *far_b(void)
{
    return (const void *)(uintptr_t)0x100;
}
static const void *far_a(void)
{
    return (const void *)(((uintptr_t)1 << 63) | ((uintptr_t)1 << 56));
}
static float *far_c(void)
{
    return (float *)(((uintptr_t)1 << 63) | ((uintptr_t)1 << 58));
}


/**
 * Every limit of validate.c at its boundary: the largest size accepted
 * (through the validator: a launcher would launch it) and the smallest
 * refused (through the validator and every launcher).
 */
static void test_size_limits(fa_tests *t)
{
    _Static_assert(sizeof(uintptr_t) == 8, "the far addresses need a 64-bit address space");
    char label[128];
    /* M6: n elements must have a byte size that is a 64-bit offset. */
    for (int d = 0; d < 3; ++d) {
        const fa_dtype dtype = all_dtypes[d];
        const int64_t most = fa_max_elements(fa_dtype_size(dtype));
        float *x = host_buffer, *y = host_buffer + 16, *p = host_buffer + 32, *r = host_buffer + 48;
        snprintf(label, sizeof label, "dot_product_validate %s n = %lld (the most)",
                 fa_dtype_name(dtype), (long long)most);
        FA_EXPECT_STATUS(t, dot_product_validate(x, y, dtype, most, p, r), FA_OK, "", "%s", label);
        snprintf(label, sizeof label, "dot_product_validate %s n = %lld (one more)",
                 fa_dtype_name(dtype), (long long)(most + 1));
        fa_clear_error();
        FA_EXPECT_STATUS(t, dot_product_validate(x, y, dtype, most + 1, p, r), FA_ERR_OVERFLOW,
                         "n = ", "%s", label);
#if FA_HAVE_CUDA
        fa_clear_error();
        FA_EXPECT_STATUS(t, ref_dot_product(x, y, dtype, most + 1, p, r, 0), FA_ERR_OVERFLOW,
                         "n = ", "ref_dot_product one past the most");
        fa_clear_error();
        FA_EXPECT_LEARNER_STATUS(t, learner_dot_product(x, y, dtype, most + 1, p, r, 0),
                                 FA_ERR_OVERFLOW, "n = ", "learner_dot_product one past the most");
#endif
    }

    /* M7 (fp32: 4-byte elements). The largest k with n = INT32_MAX whose B fits: */
    const int64_t widest_k = fa_max_elements(sizeof(float)) / INT32_MAX;
    const limit_case matmul[] = {
        {"m at the grid limit", MATRIX_MAX_ROWS, 2, 2, FA_OK, ""},
        {"m one past the grid limit", (int64_t)MATRIX_MAX_ROWS + 1, 2, 2, FA_ERR_UNSUPPORTED,
         "m = "},
        {"n = INT32_MAX", 1, INT32_MAX, 1, FA_OK, ""},
        {"n = INT32_MAX + 1", 1, (int64_t)INT32_MAX + 1, 1, FA_ERR_UNSUPPORTED, "n = "},
        {"k = INT32_MAX", 1, 1, INT32_MAX, FA_OK, ""},
        {"k = INT32_MAX + 1", 1, 1, (int64_t)INT32_MAX + 1, FA_ERR_UNSUPPORTED, "k = "},
        {"k * n bytes at the 64-bit limit", 1, INT32_MAX, widest_k, FA_OK, ""},
        {"k * n bytes one row past it", 1, INT32_MAX, widest_k + 1, FA_ERR_OVERFLOW, "k * n"},
    };
    for (int c = 0; c < FA_COUNT_OF(matmul); ++c) {
        const limit_case *l = &matmul[c];
        snprintf(label, sizeof label, "matmul_validate %s", l->what);
        fa_clear_error();
        FA_EXPECT_STATUS(t,
                         matmul_validate("matmul", far_a(), far_b(), far_c(), l->m, l->n, l->k,
                                         FA_B_ROW_MAJOR, (int)sizeof(float)),
                         l->expected, l->needle, "%s", label);
#if FA_HAVE_CUDA
        typedef fa_status (*fp32_launcher)(const float *, const float *, float *, int64_t,
                                           int64_t, int64_t, fa_b_layout, cudaStream_t);
        static const struct {
            const char *name;
            fp32_launcher launch;
            bool learner;
        } launchers[] = {
            {"ref_matmul_naive", ref_matmul_naive, false},
            {"ref_matmul_smem_tiled", ref_matmul_smem_tiled, false},
            {"ref_matmul_register_blocked", ref_matmul_register_blocked, false},
            {"learner_matmul_naive", learner_matmul_naive, true},
            {"learner_matmul_smem_tiled", learner_matmul_smem_tiled, true},
            {"learner_matmul_register_blocked", learner_matmul_register_blocked, true},
        };
        for (int i = 0; i < FA_COUNT_OF(launchers) && l->expected != FA_OK; ++i) {
            snprintf(label, sizeof label, "%s %s", launchers[i].name, l->what);
            fa_clear_error();
            const fa_status s = launchers[i].launch(far_a(), far_b(), far_c(), l->m, l->n, l->k,
                                                    FA_B_ROW_MAJOR, 0);
            FA_EXPECT_STATUS_OF(t, launchers[i].learner, s, l->expected, l->needle, "%s", label);
        }
#endif
    }
    /* bf16 (version 4): 2-byte elements, so every B the n and k limits allow fits. */
    fa_clear_error();
    FA_EXPECT_STATUS(t,
                     matmul_validate("matmul_mma_bf16", far_a(), far_b(), far_c(), 1, INT32_MAX,
                                     INT32_MAX, FA_B_TRANSPOSED, (int)sizeof(uint16_t)),
                     FA_OK, "", "matmul_validate bf16 k = n = INT32_MAX");

    /* M8: rows and cols; within both limits every byte size fits. */
    const limit_case transpose[] = {
        {"rows at the grid limit", MATRIX_MAX_ROWS, 1, 0, FA_OK, ""},
        {"rows one past the grid limit", (int64_t)MATRIX_MAX_ROWS + 1, 1, 0, FA_ERR_UNSUPPORTED,
         "rows = "},
        {"cols = INT32_MAX", 1, INT32_MAX, 0, FA_OK, ""},
        {"cols = INT32_MAX + 1", 1, (int64_t)INT32_MAX + 1, 0, FA_ERR_UNSUPPORTED, "cols = "},
        {"both at their limits", MATRIX_MAX_ROWS, INT32_MAX, 0, FA_OK, ""},
    };
    for (int c = 0; c < FA_COUNT_OF(transpose); ++c) {
        const limit_case *l = &transpose[c];
        const float *in = far_a();
        snprintf(label, sizeof label, "transpose_validate %s", l->what);
        fa_clear_error();
        FA_EXPECT_STATUS(t, transpose_validate("transpose", in, far_c(), l->m, l->n), l->expected,
                         l->needle, "%s", label);
#if FA_HAVE_CUDA
        if (l->expected == FA_OK)
            continue;
        fa_clear_error();
        FA_EXPECT_STATUS(t, ref_transpose_naive(in, far_c(), l->m, l->n, 0), l->expected,
                         l->needle, "ref_transpose_naive");
        fa_clear_error();
        FA_EXPECT_STATUS(t, ref_transpose_smem_tiled(in, far_c(), l->m, l->n, 0), l->expected,
                         l->needle, "ref_transpose_smem_tiled");
        fa_clear_error();
        FA_EXPECT_LEARNER_STATUS(t, learner_transpose_naive(in, far_c(), l->m, l->n, 0),
                                 l->expected, l->needle, "learner_transpose_naive");
        fa_clear_error();
        FA_EXPECT_LEARNER_STATUS(t, learner_transpose_smem_tiled(in, far_c(), l->m, l->n, 0),
                                 l->expected, l->needle, "learner_transpose_smem_tiled");
#endif
    }
}

/* ==== cpu: the driver's flags =============================================================== */

/**
 * Every bad command line of stage 02's own flags (milestones, versions,
 * problem flags, --case) gets the usage exit code, 2, before any GPU work;
 * the good ones describe their problem. The parser is plain C: this holds in
 * builds without CUDA too.
 */
static void test_driver_flags(fa_tests *t)
{
    static const char *const bad[][8] = {
        {"stage02", "--milestone", "5", NULL},                  /* a milestone of stage 01 */
        {"stage02", "--milestone", "9", NULL},                  /* ... and of stage 03 */
        {"stage02", "--milestone", "6", "--version", "1", NULL}, /* M6 has one version */
        {"stage02", "--milestone", "7", "--version", "5", NULL}, /* M7 has versions 1..4 */
        {"stage02", "--milestone", "8", "--version", "3", NULL}, /* M8 has versions 1..2 */
        {"stage02", "--milestone", "7", "--version", "-1", NULL},
        {"stage02", "--version", "2", NULL},                    /* --version needs --milestone */
        {"stage02", "--nq", "64", NULL},                        /* no stage-02 milestone reads it */
        {"stage02", "--m", "-1", NULL},                         /* sizes are >= 0 */
        {"stage02", "--rows", "3x", NULL},
        {"stage02", "--dtype", "int8", NULL},                   /* fp32, bf16 or fp16 */
        {"stage02", "--milestone", "8", "--m", "5", NULL},      /* M8 reads --rows --cols */
        {"stage02", "--milestone", "6", "--rows", "3", NULL},   /* M6 reads --n --dtype */
        {"stage02", "--milestone", "7", "--dtype", "bf16", NULL}, /* M7 reads --m --n --k */
        {"stage02", "--m", "5", "--rows", "3", NULL},           /* no milestone reads both */
        {"stage02", "--k", "5", "--case", "v1 naive NN random 0 1x1x1", NULL}, /* a case or a problem */
        {"stage02", "--bench", "--m", "5", NULL},
    };
    for (int c = 0; c < FA_COUNT_OF(bad); ++c)
        FA_EXPECT_USAGE_ERROR(t, 2, bad[c]);

    fa_stage_request request;
    static const char *const version[] = {"stage02", "--milestone", "7", "--version", "4", NULL};
    FA_EXPECT(t, fa_stage_parse_words(version, 2, &request) == FA_CLI_OK &&
                     request.milestone == 7 && request.run.version == 4,
              "--milestone 7 --version 4 must select M7's tensor-core version");
    static const char *const matmul[] = {"stage02", "--m", "3", "--n", "5", "--k", "7", NULL};
    FA_EXPECT(t, fa_stage_parse_words(matmul, 2, &request) == FA_CLI_OK &&
                     request.run.problem.given == (FA_PROBLEM_M | FA_PROBLEM_N | FA_PROBLEM_K) &&
                     request.run.problem.m == 3 && request.run.problem.n == 5 &&
                     request.run.problem.k == 7,
              "--m 3 --n 5 --k 7 must describe a 3 x 5 x 7 product");
    static const char *const dot[] = {"stage02", "--n", "77", "--dtype", "bf16", NULL};
    FA_EXPECT(t, fa_stage_parse_words(dot, 2, &request) == FA_CLI_OK &&
                     request.run.problem.given == (FA_PROBLEM_N | FA_PROBLEM_DTYPE) &&
                     request.run.problem.n == 77 && request.run.problem.dtype == FA_BF16,
              "--n 77 --dtype bf16 must describe a bf16 dot product of 77 elements");
    static const char *const rows[] = {"stage02", "--rows", "3", "--cols", "5", NULL};
    FA_EXPECT(t, fa_stage_parse_words(rows, 2, &request) == FA_CLI_OK &&
                     request.run.problem.given == (FA_PROBLEM_ROWS | FA_PROBLEM_COLS) &&
                     request.run.problem.rows == 3 && request.run.problem.cols == 5,
              "--rows 3 --cols 5 must describe a 3 x 5 transpose");
    static const char *const rerun[] = {"stage02", "--milestone", "8", "--version", "2",
                                        "--case", "v2 smem_tiled random 3 31x32", NULL};
    FA_EXPECT(t, fa_stage_parse_words(rerun, 2, &request) == FA_CLI_OK &&
                     request.run.version == 2 && request.run.case_name != NULL &&
                     strcmp(request.run.case_name, "v2 smem_tiled random 3 31x32") == 0,
              "a rerun line (--milestone 8 --version 2 --case ...) must parse");
}

/* ==== cpu: the walk over the versions of a milestone ======================================= */

/** A milestone of four versions for versions_check(): which are written, which fails, what ran. */
typedef struct fake_milestone {
    bool written[4];
    int failing;  /**< the version whose run fails; 0: none */
    int runs[4];  /**< how often each version ran */
} fake_milestone;

static fa_status fake_written(int version, void *context)
{
    const fake_milestone *f = context;
    if (f->written[version - 1])
        return FA_OK;
    return fa_fail(FA_ERR_NOT_IMPLEMENTED,
                   "M99 fake, version %d is not implemented yet: delete its "
                   "FA_TODO_VERSION(99, %d) line",
                   version, version);
}

/** Three cases per version; the failing version fails its first case with a coordinate. */
static bool fake_run(int version, void *context, fa_result *result)
{
    fake_milestone *f = context;
    f->runs[version - 1]++;
    result->cases += 3;
    if (version != f->failing)
        return true;
    char name[32];
    snprintf(name, sizeof name, "v%d case 0", version);
    fa_result_fail(result, name, "at (row 1, col 2): got 3, want 4");
    return false;
}

static const char *const fake_names[4] = {"one", "two", "three", "four"};
static const milestone_versions fake_walk = {4, fake_names, fake_written, fake_run};

/** Runs versions_check() on @p f with --version @p version (0: all); returns the result. */
static fa_result fake_check(fake_milestone *f, int version)
{
    const fa_run_options options = {.seed = TEST_SEED, .version = version};
    fa_result result = {0};
    fa_clear_error();
    versions_check(&fake_walk, f, &options, "fake cases", &result);
    return result;
}

/**
 * The rules of versions.h: a learner with versions 1 and 2 written passes
 * and is told which remain; nothing written is "not implemented" with
 * version 1's message; --version of an unwritten version is "not
 * implemented"; a failure names the versions that passed before it.
 */
static void test_versions_walk(fa_tests *t)
{
    fake_milestone two = {{true, true, false, false}, 0, {0}};
    fa_result r = fake_check(&two, 0);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_PASSED && r.cases == 6,
              "versions 1 and 2 written: passed with their 6 cases (%s: %s)",
              fa_outcome_name(r.outcome), r.detail);
    FA_EXPECT(t, strstr(r.detail, "v1 one, v2 two passed") != NULL &&
                     strstr(r.detail, "not written yet: v3 three, v4 four") != NULL,
              "the detail names what passed and what is still to write: %s", r.detail);
    FA_EXPECT(t, two.runs[0] == 1 && two.runs[1] == 1 && two.runs[2] == 0 && two.runs[3] == 0,
              "only the written versions run (runs %d %d %d %d)", two.runs[0], two.runs[1],
              two.runs[2], two.runs[3]);
    FA_EXPECT(t, versions_probe(&fake_walk, &two, 0) == FA_OK, "the probe: implemented");
    fa_clear_error();
    FA_EXPECT(t, versions_probe(&fake_walk, &two, 3) == FA_ERR_NOT_IMPLEMENTED &&
                     strstr(fa_last_error(), "FA_TODO_VERSION(99, 3)") != NULL,
              "the probe of --version 3, not written: its marker (%s)", fa_last_error());
    FA_EXPECT(t, versions_probe(&fake_walk, &two, 2) == FA_OK,
              "the probe of --version 2, written: implemented");
    const fa_run_options all = {.seed = TEST_SEED};
    FA_EXPECT(t, versions_timed(&fake_walk, &two, &all) == 2,
              "the timing measures the most advanced version written");

    r = fake_check(&two, 3);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_NOT_IMPLEMENTED &&
                     strstr(r.detail, "FA_TODO_VERSION(99, 3)") != NULL && two.runs[2] == 0,
              "--version 3 not written: not implemented, with its marker (%s)", r.detail);
    r = fake_check(&two, 2);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_PASSED && r.cases == 3 && two.runs[0] == 1 &&
                     two.runs[1] == 2,
              "--version 2 runs version 2 alone (%s)", r.detail);
    const fa_run_options fourth = {.seed = TEST_SEED, .version = 4};
    const fa_run_options second = {.seed = TEST_SEED, .version = 2};
    FA_EXPECT(t, versions_timed(&fake_walk, &two, &fourth) == 0 &&
                     versions_timed(&fake_walk, &two, &second) == 2,
              "--version: the timing measures that version, when written");

    fake_milestone none = {{false, false, false, false}, 0, {0}};
    r = fake_check(&none, 0);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_NOT_IMPLEMENTED &&
                     strstr(r.detail, "FA_TODO_VERSION(99, 1)") != NULL,
              "nothing written: not implemented, naming version 1 (%s)", r.detail);
    fa_clear_error();
    FA_EXPECT(t, versions_probe(&fake_walk, &none, 0) == FA_ERR_NOT_IMPLEMENTED &&
                     strstr(fa_last_error(), "version 1 ") != NULL,
              "the probe of nothing written names version 1: %s", fa_last_error());
    FA_EXPECT(t, versions_timed(&fake_walk, &none, &all) == 0, "nothing written: nothing to time");

    fake_milestone failing = {{true, true, true, false}, 2, {0}};
    r = fake_check(&failing, 0);
    static const char failed_after_v1[] = "v1 one passed; case 'v2 case 0' at (row 1, col 2)";
    FA_EXPECT(t, r.outcome == FA_OUTCOME_FAILED &&
                     strncmp(r.detail, failed_after_v1, strlen(failed_after_v1)) == 0 &&
                     strcmp(r.failed_case, "v2 case 0") == 0 && failing.runs[2] == 0,
              "a failure stops the walk and names what passed before it: %s", r.detail);

    fake_milestone skipped = {{false, true, false, false}, 0, {0}};
    r = fake_check(&skipped, 0);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_PASSED &&
                     strstr(r.detail, "not written yet: v1 one, v3 three, v4 four") != NULL,
              "version 2 without version 1 still runs and passes (%s)", r.detail);
    FA_EXPECT(t, versions_probe(&fake_walk, &skipped, 0) == FA_OK,
              "version 2 without version 1: the probe lets the check run");
}

#if FA_HAVE_CUDA
/**
 * `stage02 --impl learner --milestone 7 --version 3` says "not implemented"
 * while version 3 is unwritten, GPU or not: the probes of M7 and M8 ask the
 * version of --version, and return before any CUDA call. Every version of
 * the reference is written; a learner's version is written, or its
 * message names that version's marker, not version 1's.
 */
static void test_version_probes(fa_tests *t)
{
    for (int i = 0; i < stage02.count; ++i) {
        const fa_milestone_check *m = &stage02.checks[i];
        for (int v = 1; v <= fa_milestone(m->number)->versions; ++v) {
            const fa_run_options options = {.seed = TEST_SEED, .version = v};
            fa_clear_error();
            FA_EXPECT_STATUS(t, m->probe(FA_IMPL_REFERENCE, &options), FA_OK, NULL,
                             "M%d reference probe, --version %d", m->number, v);
            char marker[64];
            snprintf(marker, sizeof marker, "FA_TODO_VERSION(%d, %d)", m->number, v);
            fa_clear_error();
            const fa_status learner = m->probe(FA_IMPL_LEARNER, &options);
            FA_EXPECT(t, learner == FA_OK || (learner == FA_ERR_NOT_IMPLEMENTED &&
                                              strstr(fa_last_error(), marker) != NULL),
                      "M%d learner probe, --version %d: %s, \"%s\" (want OK or %s)", m->number,
                      v, fa_status_name(learner), fa_last_error(), marker);
        }
    }
}
#endif

/* ==== gpu ================================================================================== */

#if FA_HAVE_CUDA
/** A device copy of @p count floats (as bf16 when @p bf16) followed by NaN canaries. */
static void *canary_copy(fa_tests *t, const float *host, int64_t count, bool bf16)
{
    void *staged = bf16 ? fa_as_dtype(host, count, FA_BF16) : NULL;
    const size_t element = bf16 ? sizeof(uint16_t) : sizeof(float);
    void *device = NULL;
    const fa_status s = fa_canary_input(&device, bf16 ? staged : (const void *)host,
                                        (size_t)count * element);
    FA_EXPECT(t, s == FA_OK, "upload of %lld elements: %s", (long long)count, fa_last_error());
    free(staged);
    return device;
}

/** A poisoned device output of @p count floats followed by poisoned canaries. */
static float *canary_output(fa_tests *t, int64_t count)
{
    void *device = NULL;
    const fa_status s = fa_canary_output(&device, (size_t)count * sizeof(float));
    FA_EXPECT(t, s == FA_OK, "output of %lld floats: %s", (long long)count, fa_last_error());
    return device;
}

/** Downloads @p count floats; expects the canaries after them intact. Caller frees. */
static float *download_checked(fa_tests *t, const char *label, const float *device, int64_t count)
{
    float *host = fa_new_floats(count);
    int64_t overwritten = 0;
    const fa_status s = fa_canary_download(host, device, (size_t)count * sizeof *host,
                                           &overwritten);
    FA_EXPECT(t, s == FA_OK, "%s: download: %s", label, fa_last_error());
    FA_EXPECT(t, overwritten == 0, "%s: the canary after the output was overwritten (%lld bytes)",
              label, (long long)overwritten);
    return host;
}

static void gpu_milestone_checks(fa_tests *t)
{
    const fa_run_options options = {.seed = TEST_SEED, .quick = false};
    FA_EXPECT_REFERENCE_CHECKS(t, &stage02, &options);
}

/**
 * --case reruns exactly the named case, and the problem flags make one case
 * of their own per version (a problem the launcher refuses reports its
 * error): what a learner reproducing a failure relies on.
 */
static void gpu_case_selection(fa_tests *t)
{
    fa_run_options options = {.seed = TEST_SEED, .version = 1,
                              .case_name = "v1 naive NN random 4 31x33x7"};
    fa_result r = fa_stage_check(&stage02, 7, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_PASSED && r.cases == 1,
              "--version 1 --case must run exactly its case: %s, %d cases", r.detail, r.cases);
    options = (fa_run_options){.seed = TEST_SEED,
                               .case_name = "v3 register_blocked NT fixture 'A * identity'"};
    r = fa_stage_check(&stage02, 7, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_PASSED && r.cases == 1,
              "--case of version 3 must run exactly its case: %s, %d cases", r.detail, r.cases);
    options.case_name = "no such case";
    r = fa_stage_check(&stage02, 8, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, r.cases == 0, "an unknown --case must run nothing (%d cases)", r.cases);
    options.case_name = "bf16 random 8 n=255";
    r = fa_stage_check(&stage02, 6, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_PASSED && r.cases == 1,
              "--case of M6 must run exactly its case: %s, %d cases", r.detail, r.cases);

    options = (fa_run_options){.seed = TEST_SEED};
    options.problem.given = FA_PROBLEM_M | FA_PROBLEM_N | FA_PROBLEM_K;
    options.problem.m = 5;
    options.problem.n = 7;
    options.problem.k = 3;
    r = fa_stage_check(&stage02, 7, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_PASSED && r.cases == MATMUL_VERSIONS,
              "--m 5 --n 7 --k 3 must run one case per version: %s, %d cases", r.detail, r.cases);
    options.version = 2;
    r = fa_stage_check(&stage02, 7, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_PASSED && r.cases == 1,
              "--version 2 --m 5 --n 7 --k 3 must run its one case: %s, %d cases", r.detail,
              r.cases);
    options.problem.given = FA_PROBLEM_M;
    options.problem.m = (int64_t)MATRIX_MAX_ROWS + 1;
    r = fa_stage_check(&stage02, 7, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_ERROR && strstr(r.detail, "m = ") != NULL,
              "a problem the launcher refuses reports its error: %s", r.detail);

    options = (fa_run_options){.seed = TEST_SEED};
    options.problem.given = FA_PROBLEM_N | FA_PROBLEM_DTYPE;
    options.problem.n = 77;
    options.problem.dtype = FA_BF16;
    r = fa_stage_check(&stage02, 6, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_PASSED && r.cases == 1,
              "--n 77 --dtype bf16 must run its one case: %s, %d cases", r.detail, r.cases);

    options = (fa_run_options){.seed = TEST_SEED};
    options.problem.given = FA_PROBLEM_ROWS | FA_PROBLEM_COLS;
    options.problem.rows = 3;
    options.problem.cols = 5;
    r = fa_stage_check(&stage02, 8, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_PASSED && r.cases == 2,
              "--rows 3 --cols 5 must run one case per version: %s, %d cases", r.detail, r.cases);
    options.problem.given = FA_PROBLEM_COLS;
    options.problem.cols = (int64_t)INT32_MAX + 1;
    r = fa_stage_check(&stage02, 8, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_ERROR && strstr(r.detail, "cols = ") != NULL,
              "a transpose the launcher refuses reports its error: %s", r.detail);
}

typedef fa_status (*matmul_fp32_launch)(const float *, const float *, float *, int64_t, int64_t,
                                        int64_t, fa_b_layout, cudaStream_t);

/** Versions 1-3 give exactly the bits of the CPU model (same FMA chain), NN and NT. */
static void gpu_matmul_equals_model(fa_tests *t)
{
    static const struct {
        const char *name;
        matmul_fp32_launch launch;
    } versions[] = {{"matmul_naive", ref_matmul_naive},
                    {"matmul_smem_tiled", ref_matmul_smem_tiled},
                    {"matmul_register_blocked", ref_matmul_register_blocked}};
    const int64_t m = 70, n = 90, k = 110;
    fa_rng rng;
    fa_rng_seed(&rng, TEST_SEED, 10);
    float *a = fa_new_floats(m * k), *b = fa_new_floats(k * n);
    fa_fill(a, m * k, FA_FILL_GAUSSIAN, 1.0, &rng);
    fa_fill(b, k * n, FA_FILL_GAUSSIAN, 1.0, &rng);
    float *model = fa_new_floats(m * n);
    void *a_dev = canary_copy(t, a, m * k, false), *b_dev = canary_copy(t, b, k * n, false);
    for (int l = 0; l < 2; ++l) {
        const fa_b_layout layout = l == 0 ? FA_B_ROW_MAJOR : FA_B_TRANSPOSED;
        model_matmul_fp32(a, b, layout, m, n, k, model);
        for (size_t v = 0; v < sizeof versions / sizeof versions[0]; ++v) {
            float *c = canary_output(t, m * n);
            const fa_status s = versions[v].launch(a_dev, b_dev, c, m, n, k, layout, 0);
            FA_EXPECT(t, s == FA_OK, "%s: %s", versions[v].name, fa_last_error());
            float *got = download_checked(t, versions[v].name, c, m * n);
            FA_EXPECT(t, memcmp(got, model, (size_t)(m * n) * sizeof *got) == 0,
                      "%s %s: the GPU differs from the model's FMA chain", versions[v].name,
                      l == 0 ? "NN" : "NT");
            free(got);
            fa_device_free(c);
        }
    }
    fa_device_free(a_dev);
    fa_device_free(b_dev);
    free(a);
    free(b);
    free(model);
}

/** The dot product gives the model's bits (same partition, same trees). */
static void gpu_dot_equals_model(fa_tests *t)
{
    static const int64_t lengths[] = {1, 1000, 262147, 3000017};
    fa_rng rng;
    fa_rng_seed(&rng, TEST_SEED, 11);
    void *partials = canary_output(t, DOT_PRODUCT_MAX_PARTIALS);
    for (int d = 0; d < 3; ++d)
        for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; ++i) {
            const int64_t n = lengths[i];
            const fa_dtype dtype = all_dtypes[d];
            float *xf = fa_new_floats(n), *yf = fa_new_floats(n);
            fa_fill(xf, n, FA_FILL_GAUSSIAN, 1.0, &rng);
            fa_fill(yf, n, FA_FILL_GAUSSIAN, 1.0, &rng);
            void *x = fa_as_dtype(xf, n, dtype), *y = fa_as_dtype(yf, n, dtype);
            void *x_dev = NULL, *y_dev = NULL;
            const size_t bytes = (size_t)n * (size_t)fa_dtype_size(dtype);
            FA_EXPECT(t, fa_canary_input(&x_dev, x, bytes) == FA_OK &&
                             fa_canary_input(&y_dev, y, bytes) == FA_OK,
                      "upload: %s", fa_last_error());
            float *result = canary_output(t, 1);
            FA_EXPECT(t, ref_dot_product(x_dev, y_dev, dtype, n, partials, result, 0) == FA_OK,
                      "dot: %s", fa_last_error());
            float *got = download_checked(t, "dot_product", result, 1);
            const float want = model_dot_product(x, y, dtype, n);
            FA_EXPECT(t, fa_same_bits(got[0], want), "dot %s n = %lld: GPU %.9g, model %.9g",
                      fa_dtype_name(dtype), (long long)n, got[0], want);
            free(got);
            fa_device_free(result);
            fa_device_free(x_dev);
            fa_device_free(y_dev);
            free(xf);
            free(yf);
            free(x);
            free(y);
        }
    float *tail = download_checked(t, "dot_product partials", partials, DOT_PRODUCT_MAX_PARTIALS);
    free(tail);
    fa_device_free(partials);
}

/** A NaN in A[i][*] makes row i of C NaN and nothing else; a NaN in x makes the dot NaN. */
static void gpu_nan_propagation(fa_tests *t)
{
    const int64_t m = 37, n = 29, k = 45, nan_row = 17, nan_k = 30;
    fa_rng rng;
    fa_rng_seed(&rng, TEST_SEED, 12);
    float *a = fa_new_floats(m * k), *b = fa_new_floats(k * n);
    fa_fill(a, m * k, FA_FILL_GAUSSIAN, 1.0, &rng);
    fa_fill(b, k * n, FA_FILL_GAUSSIAN, 1.0, &rng);
    a[nan_row * k + nan_k] = NAN;
    static const struct {
        const char *name;
        matmul_fp32_launch launch;
    } fp32[] = {{"matmul_naive", ref_matmul_naive},
                {"matmul_smem_tiled", ref_matmul_smem_tiled},
                {"matmul_register_blocked", ref_matmul_register_blocked}};
    for (int v = 0; v < 4; ++v) {
        const bool tensor_core = v == 3;
        const char *name = tensor_core ? "matmul_mma_bf16" : fp32[v].name;
        void *a_dev = canary_copy(t, a, m * k, tensor_core), *b_dev = canary_copy(t, b, k * n, tensor_core);
        float *c = canary_output(t, m * n);
        const fa_status s = tensor_core
                                ? ref_matmul_mma_bf16(a_dev, b_dev, c, m, n, k, FA_B_ROW_MAJOR, 0)
                                : fp32[v].launch(a_dev, b_dev, c, m, n, k, FA_B_ROW_MAJOR, 0);
        FA_EXPECT(t, s == FA_OK, "%s: %s", name, fa_last_error());
        float *got = download_checked(t, name, c, m * n);
        bool right = true;
        for (int64_t i = 0; i < m * n; ++i)
            right = right && (isnan(got[i]) == (i / n == nan_row)) && !fa_is_poison(got[i]);
        FA_EXPECT(t, right, "%s: a NaN in row %lld of A must make exactly that row of C NaN", name,
                  (long long)nan_row);
        free(got);
        fa_device_free(a_dev);
        fa_device_free(b_dev);
        fa_device_free(c);
    }

    float x[5] = {1, 2, NAN, 4, 5}, y[5] = {1, 1, 1, 1, 1};
    void *x_dev = canary_copy(t, x, 5, false), *y_dev = canary_copy(t, y, 5, false);
    float *partials = canary_output(t, DOT_PRODUCT_MAX_PARTIALS), *result = canary_output(t, 1);
    FA_EXPECT(t, ref_dot_product(x_dev, y_dev, FA_F32, 5, partials, result, 0) == FA_OK, "dot: %s",
              fa_last_error());
    float *got = download_checked(t, "dot_product", result, 1);
    FA_EXPECT(t, isnan(got[0]) && !fa_is_poison(got[0]), "a NaN in x makes the dot product NaN");
    free(got);
    fa_device_free(x_dev);
    fa_device_free(y_dev);
    fa_device_free(partials);
    fa_device_free(result);
    free(a);
    free(b);
}

/**
 * Transposes move every element exactly once, NaN included: a NaN at (r, c)
 * lands at (c, r), every other element is finite and written, the canary holds.
 */
static void gpu_transpose_moves_nan(fa_tests *t)
{
    const int64_t rows = 33, cols = 65, nan_r = 32, nan_c = 64;
    float *in = fa_new_floats(rows * cols);
    for (int64_t i = 0; i < rows * cols; ++i)
        in[i] = (float)i;
    in[nan_r * cols + nan_c] = NAN;
    void *in_dev = canary_copy(t, in, rows * cols, false);
    for (int v = 0; v < 2; ++v) {
        float *out = canary_output(t, rows * cols);
        const fa_status s = v == 0 ? ref_transpose_naive(in_dev, out, rows, cols, 0)
                                   : ref_transpose_smem_tiled(in_dev, out, rows, cols, 0);
        FA_EXPECT(t, s == FA_OK, "transpose: %s", fa_last_error());
        float *got = download_checked(t, v == 0 ? "transpose_naive" : "transpose_smem_tiled", out,
                                      rows * cols);
        bool right = true;
        for (int64_t c = 0; c < cols; ++c)
            for (int64_t r = 0; r < rows; ++r) {
                const float g = got[c * rows + r];
                right = right && (r == nan_r && c == nan_c ? isnan(g) && !fa_is_poison(g)
                                                           : g == in[r * cols + c]);
            }
        FA_EXPECT(t, right, "transpose version %d moves every element, NaN to (%lld, %lld)", v + 1,
                  (long long)nan_c, (long long)nan_r);
        free(got);
        fa_device_free(out);
    }
    fa_device_free(in_dev);
    free(in);
}

/** The checker sees an element a kernel forgot: poison one element of a correct output. */
static void gpu_unwritten_detected(fa_tests *t)
{
    const int64_t m = 5, n = 7, k = 3;
    float a[15], b[21];
    for (int i = 0; i < 15; ++i)
        a[i] = (float)(i % 5 - 2);
    for (int i = 0; i < 21; ++i)
        b[i] = (float)(i % 3 - 1);
    void *a_dev = canary_copy(t, a, m * k, false), *b_dev = canary_copy(t, b, k * n, false);
    float *c = canary_output(t, m * n);
    FA_EXPECT(t, ref_matmul_register_blocked(a_dev, b_dev, c, m, n, k, FA_B_ROW_MAJOR, 0) == FA_OK,
              "matmul: %s", fa_last_error());
    float *got = download_checked(t, "matmul_register_blocked", c, m * n);
    double want[35];
    FA_EXPECT(t, fa_ref_matmul(a, b, FA_F32, FA_B_ROW_MAJOR, m, n, k, want, NULL) == FA_OK,
              "the matmul reference: %s", fa_last_error());
    fa_check_report report;
    FA_EXPECT(t, fa_check_covers(got, want, NULL, m * n, &report) && report.unwritten == 0,
              "every element written and exact");
    fa_poison_host(&got[12], sizeof got[12]);
    FA_EXPECT(t, !fa_check_covers(got, want, NULL, m * n, &report) && report.unwritten == 1 &&
                     report.first[0].index == 12,
              "one unwritten element is caught and located (unwritten %lld)",
              (long long)report.unwritten);
    free(got);
    fa_device_free(a_dev);
    fa_device_free(b_dev);
    fa_device_free(c);
}

#endif /* FA_HAVE_CUDA */

int main(int argc, char **argv)
{
    static const fa_test_fn cpu[] = {
        test_dot_fixtures,       test_matmul_fixtures,          test_transpose_fixtures,
        test_dot_model_within_bound, test_dot_depth,            test_matmul_fp32_model,
        test_tensor_core_bound,  test_matmul_transpose_identity, test_bad_inputs,
        test_size_limits,        test_driver_flags,             test_versions_walk,
#if FA_HAVE_CUDA
        test_version_probes,
#endif
    };
#if FA_HAVE_CUDA
    static const fa_test_fn gpu[] = {
        gpu_milestone_checks, gpu_case_selection,     gpu_matmul_equals_model, gpu_dot_equals_model,
        gpu_nan_propagation,  gpu_transpose_moves_nan, gpu_unwritten_detected,
    };
    const fa_test_suite suite = {"test_stage02", cpu, FA_COUNT_OF(cpu), gpu, FA_COUNT_OF(gpu),
                                 fa_gpu_gate};
#else
    const fa_test_suite suite = {"test_stage02", cpu, FA_COUNT_OF(cpu), NULL, 0, NULL};
#endif
    return fa_test_main(argc, argv, &suite);
}
