/**
 * @file checks.c
 * @brief The GPU checks of M1-M5 and their timings: the stage as its driver
 *        sees it.
 *
 * Every case has a name the failure line prints and `--case` takes, and seeds
 * its own random stream from (seed, milestone, kernel, case), so a case
 * reruns alone with the same inputs. Inputs are followed by NaN canaries
 * (reading past the end makes the output NaN), outputs are poisoned (an
 * element never written is reported as such) and followed by poisoned
 * canaries (a write past the end fails the case).
 */
#include "checks.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fa_device.h"
#include "fa_index.h"
#include "fa_reference.h"
#include "fa_rng.h"
#include "fa_timing.h"
#include "fixtures.h"
#include "model.h"
#include "runners.h"

enum { CASE_NAME_CAP = FA_CASE_NAME };

/* ---- host workspaces ------------------------------------------------------------------------ */

/** Host arrays of the cases of one check, sized for its largest case. */
typedef struct workspace {
    float *a, *b;          /* inputs (row kernels: a is x, padding included) */
    float *expected, *got; /* fixture outputs, kernel outputs */
    double *ref, *bound, *abs_sum;
} workspace;

static void workspace_free(workspace *w)
{
    free(w->a);
    free(w->b);
    free(w->expected);
    free(w->got);
    free(w->ref);
    free(w->bound);
    free(w->abs_sum);
    *w = (workspace){0};
}

/** Allocates inputs of @p inputs floats and outputs of @p outputs elements; false when out of memory. */
static bool workspace_alloc(workspace *w, int64_t inputs, int64_t outputs, fa_result *result)
{
    const size_t in = (size_t)(inputs > 0 ? inputs : 1), out = (size_t)(outputs > 0 ? outputs : 1);
    *w = (workspace){0};
    w->a = malloc(in * sizeof(float));
    w->b = malloc(in * sizeof(float));
    w->expected = malloc(out * sizeof(float));
    w->got = malloc(out * sizeof(float));
    w->ref = malloc(out * sizeof(double));
    w->bound = malloc(out * sizeof(double));
    w->abs_sum = malloc(out * sizeof(double));
    if (w->a && w->b && w->expected && w->got && w->ref && w->bound && w->abs_sum)
        return true;
    workspace_free(w);
    fa_result_status(result, "host workspace",
                     fa_fail(FA_ERR_OUT_OF_MEMORY, "stage01: no host memory for %lld + %lld elements",
                             (long long)inputs, (long long)outputs));
    return false;
}

static void widen(const float *x, double *out, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        out[i] = (double)x[i];
}

/** A 1-D shape whose coordinate reads "(row r)". */
static fa_shape rows_shape(int64_t rows)
{
    fa_shape shape = fa_shape_1d(rows);
    shape.names[0] = "row";
    return shape;
}

/** The random stream of case @p index of kernel @p k in milestone @p milestone. */
static void case_rng(fa_rng *rng, const fa_run_options *options, int milestone,
                     const kernel_launch *k, int index)
{
    const uint64_t kernel = k->kind == KERNEL_EXP ? (uint64_t)k->method : 0;
    fa_rng_seed(rng, options->seed, ((uint64_t)milestone << 32) | (kernel << 16) | (uint64_t)index);
}

/**
 * Runs @p k on host inputs (@p a, and @p b when not NULL, @p in_count floats
 * each) and judges @p out_count outputs against w->ref under @p bound (NULL:
 * exactly). False, with @p result filled, on a failure.
 */
static bool run_and_judge(const kernel_launch *k, const char *case_name, workspace *w,
                          int64_t in_count, int64_t out_count, const double *bound,
                          const fa_shape *shape, fa_result *result)
{
    int64_t overwritten = 0;
    const float *b = k->kind == KERNEL_VECTOR_ADD ? w->b : NULL;
    if (!fa_result_status(result, case_name,
                          kernel_run_on_host(*k, w->a, in_count, b, out_count, w->got,
                                             &overwritten)))
        return false;
    return fa_result_canaries(result, case_name, "out", overwritten) &&
           fa_result_judge(result, case_name, w->got, w->ref, bound, shape);
}

/* ---- M1-M3: elementwise ------------------------------------------------------------------- */

/** Random lengths around the kernels' seams; the large ones need more than one grid-stride step. */
static const int64_t ELEMENTWISE_SIZES[] = {1, 2, 3, 4, 5, 255, 1023, 1024, 1025, 4099};
static const int64_t ELEMENTWISE_LARGE_SIZES[] = {(3 << 20) + 1, (1 << 24) + 7};

/** Length of the --n case when --n is not given (never: a milestone reads it) and of the timing. */
enum { DEFAULT_FLAG_LENGTH = 4099 };

static int elementwise_size_count(const fa_run_options *options)
{
    if (options->problem.given != 0)
        return 1;
    return FA_COUNT_OF(ELEMENTWISE_SIZES) + (options->quick ? 0 : FA_COUNT_OF(ELEMENTWISE_LARGE_SIZES));
}

static int64_t elementwise_size(const fa_run_options *options, int index)
{
    if (options->problem.given != 0)
        return fa_problem_get(&options->problem, FA_PROBLEM_N, DEFAULT_FLAG_LENGTH);
    const int small = FA_COUNT_OF(ELEMENTWISE_SIZES);
    return index < small ? ELEMENTWISE_SIZES[index] : ELEMENTWISE_LARGE_SIZES[index - small];
}

/** Largest length any elementwise case of a check uses. */
static int64_t elementwise_capacity(const fa_run_options *options)
{
    int64_t capacity = 0;
    for (int i = 0; i < elementwise_size_count(options); ++i)
        capacity = elementwise_size(options, i) > capacity ? elementwise_size(options, i) : capacity;
    for (int f = 0; f < vector_add_fixture_count; ++f)
        capacity = vector_add_fixtures[f].n > capacity ? vector_add_fixtures[f].n : capacity;
    for (int f = 0; f < scale_array_fixture_count; ++f)
        capacity = scale_array_fixtures[f].n > capacity ? scale_array_fixtures[f].n : capacity;
    for (int f = 0; f < exp_fixture_count; ++f)
        capacity = exp_fixtures[f].n > capacity ? exp_fixtures[f].n : capacity;
    return capacity;
}

/** Runs an elementwise case of length @p n on w->a (and w->b) and judges it. */
static bool judge_elementwise(const kernel_launch *k, const char *case_name, workspace *w,
                              int64_t n, bool exact, fa_result *result)
{
    kernel_launch sized = *k;
    sized.n = n;
    const fa_shape shape = fa_shape_1d(n);
    return run_and_judge(&sized, case_name, w, n, n, exact ? NULL : w->bound, &shape, result);
}

/** Random inputs of an elementwise case @p index and their reference and bound. */
static void random_elementwise_case(const kernel_launch *k, int index, int64_t n, fa_rng *rng,
                                    workspace *w)
{
    switch (k->kind) {
    case KERNEL_VECTOR_ADD:
        fa_fill(w->a, n, FA_FILL_GAUSSIAN, 1.0, rng);
        fa_fill(w->b, n, index % 2 ? FA_FILL_ADVERSARIAL : FA_FILL_GAUSSIAN, 1.0, rng);
        fa_ref_vector_add(w->a, w->b, w->ref, n);
        break;
    case KERNEL_SCALE_ARRAY:
        fa_fill(w->a, n, index % 2 ? FA_FILL_ADVERSARIAL : FA_FILL_GAUSSIAN, 1.0, rng);
        fa_ref_scale(w->a, (double)k->alpha, w->ref, n);
        break;
    default:
        /* Alternately the whole normal range of exp and the scores softmax sees. */
        if (index % 2)
            fa_fill(w->a, n, FA_FILL_UNIFORM, 87.0, rng);
        else
            fa_fill(w->a, n, FA_FILL_GAUSSIAN, 4.0, rng);
        fa_ref_exp(w->a, w->ref, n);
        break;
    }
    for (int64_t i = 0; i < n; ++i)
        w->bound[i] = k->kind == KERNEL_EXP ? exp_error_bound(k->method, w->a[i], w->ref[i])
                                            : fp32_rounding_bound(w->ref[i]);
}

/**
 * The random cases of one elementwise kernel ("exp_fast random n=1025"), or
 * the one case of the problem flags ("vector_add flags n=77"); false on the
 * first failure.
 */
static bool random_elementwise_cases(const kernel_launch *k, const fa_run_options *options,
                                     int milestone, workspace *w, fa_result *result)
{
    for (int i = 0; i < elementwise_size_count(options); ++i) {
        const int64_t n = elementwise_size(options, i);
        char name[CASE_NAME_CAP];
        snprintf(name, sizeof name, "%s %s n=%lld", kernel_name(k),
                 options->problem.given ? "flags" : "random", (long long)n);
        if (!fa_case_begin(result, options, name))
            continue;
        fa_rng rng;
        case_rng(&rng, options, milestone, k, i);
        random_elementwise_case(k, i, n, &rng, w);
        if (!judge_elementwise(k, name, w, n, false, result))
            return false;
    }
    return true;
}

/** A random scale that rounds (not a power of two), so M2 is judged by its rounding bound. */
static const float RANDOM_SCALE = 1.7f;

/** The fixtures run unless problem flags ask for one case of their own. */
static bool wants_fixtures(const fa_run_options *options)
{
    return options->problem.given == 0;
}

static void check_vector_add(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    const kernel_launch k = {.kind = KERNEL_VECTOR_ADD, .impl = impl};
    workspace w;
    if (!workspace_alloc(&w, elementwise_capacity(options), elementwise_capacity(options), result))
        return;
    for (int f = 0; f < vector_add_fixture_count && wants_fixtures(options); ++f) {
        const elementwise_fixture *fx = &vector_add_fixtures[f];
        char name[CASE_NAME_CAP];
        snprintf(name, sizeof name, "vector_add fixture '%s'", fx->name);
        if (!fa_case_begin(result, options, name))
            continue;
        vector_add_fixture_fill(fx, w.a, w.b, w.expected);
        widen(w.expected, w.ref, fx->n);
        if (!judge_elementwise(&k, name, &w, fx->n, true, result))
            goto done;
    }
    if (!random_elementwise_cases(&k, options, 1, &w, result))
        goto done;
    fa_result_pass(result, "%d cases (fixtures bit for bit, random by the rounding bound)",
                   result->cases);
done:
    workspace_free(&w);
}

static void check_scale_array(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    kernel_launch k = {.kind = KERNEL_SCALE_ARRAY, .impl = impl};
    workspace w;
    if (!workspace_alloc(&w, elementwise_capacity(options), elementwise_capacity(options), result))
        return;
    for (int f = 0; f < scale_array_fixture_count && wants_fixtures(options); ++f) {
        const elementwise_fixture *fx = &scale_array_fixtures[f];
        char name[CASE_NAME_CAP];
        snprintf(name, sizeof name, "scale_array fixture '%s'", fx->name);
        if (!fa_case_begin(result, options, name))
            continue;
        scale_array_fixture_fill(fx, w.a, w.expected);
        widen(w.expected, w.ref, fx->n);
        k.alpha = fx->alpha;
        if (!judge_elementwise(&k, name, &w, fx->n, true, result))
            goto done;
    }
    k.alpha = RANDOM_SCALE;
    if (!random_elementwise_cases(&k, options, 2, &w, result))
        goto done;
    fa_result_pass(result, "%d cases (fixtures bit for bit, random by the rounding bound)",
                   result->cases);
done:
    workspace_free(&w);
}

static void check_exp(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    workspace w;
    if (!workspace_alloc(&w, elementwise_capacity(options), elementwise_capacity(options), result))
        return;
    for (int m = 0; m < FA_COUNT_OF(primitives_exp_methods); ++m) {
        const kernel_launch k = {.kind = KERNEL_EXP, .impl = impl,
                                 .method = primitives_exp_methods[m]};
        for (int f = 0; f < exp_fixture_count && wants_fixtures(options); ++f) {
            const exp_fixture *fx = &exp_fixtures[f];
            char name[CASE_NAME_CAP];
            snprintf(name, sizeof name, "%s fixture '%s'", kernel_name(&k), fx->name);
            if (!fa_case_begin(result, options, name))
                continue;
            exp_fixture_fill(fx, w.a, w.ref);
            for (int64_t i = 0; i < fx->n; ++i)
                w.bound[i] = exp_error_bound(k.method, w.a[i], w.ref[i]);
            if (!judge_elementwise(&k, name, &w, fx->n, false, result))
                goto done;
        }
        if (!random_elementwise_cases(&k, options, 3, &w, result))
            goto done;
    }
    fa_result_pass(result, "%d cases over 3 variants, each within its ulp budget", result->cases);
done:
    workspace_free(&w);
}

/* ---- M4, M5: rows ------------------------------------------------------------------------- */

/** A random row case: shape and stride (the ld - cols padding holds NaN). */
typedef struct row_shape {
    int64_t rows, cols, ld;
} row_shape;

static const row_shape ROW_SHAPES[] = {
    {1, 1, 1},      {3, 31, 31},     {3, 32, 33},     {3, 33, 33},       {2, 255, 255},
    {2, 256, 260},  {2, 257, 257},   {2, 1023, 1023}, {2, 1025, 1031},   {64, 4097, 4100},
    {1000, 100, 100}, {5, 0, 0},
};
/** Long rows (each thread adds thousands of elements) and many rows. */
static const row_shape ROW_LARGE_SHAPES[] = {{2, (1 << 22) + 3, (1 << 22) + 3}, {4096, 1024, 1024}};

/** The shape of the flags' case: --rows and --cols, each defaulting to this. */
enum { DEFAULT_FLAG_ROWS = 64, DEFAULT_FLAG_COLS = 4097 };

static int row_shape_count(const fa_run_options *options)
{
    if (options->problem.given != 0)
        return 1;
    return FA_COUNT_OF(ROW_SHAPES) + (options->quick ? 0 : FA_COUNT_OF(ROW_LARGE_SHAPES));
}

static row_shape row_shape_at(const fa_run_options *options, int index)
{
    if (options->problem.given != 0) {
        const int64_t cols = fa_problem_get(&options->problem, FA_PROBLEM_COLS, DEFAULT_FLAG_COLS);
        return (row_shape){fa_problem_get(&options->problem, FA_PROBLEM_ROWS, DEFAULT_FLAG_ROWS),
                           cols, cols};
    }
    const int small = FA_COUNT_OF(ROW_SHAPES);
    return index < small ? ROW_SHAPES[index] : ROW_LARGE_SHAPES[index - small];
}

/** Largest x (padding included) and output of any row case of a check. */
static void row_capacity(const fa_run_options *options, const row_fixture *fixtures, int count,
                         int64_t *x_capacity, int64_t *out_capacity)
{
    *x_capacity = 0;
    *out_capacity = 0;
    for (int i = 0; i < row_shape_count(options); ++i) {
        const row_shape s = row_shape_at(options, i);
        *x_capacity = s.rows * s.ld > *x_capacity ? s.rows * s.ld : *x_capacity;
        *out_capacity = s.rows > *out_capacity ? s.rows : *out_capacity;
    }
    for (int f = 0; f < count; ++f) {
        const int64_t x_count = row_fixture_x_count(&fixtures[f]);
        *x_capacity = x_count > *x_capacity ? x_count : *x_capacity;
        *out_capacity = fixtures[f].rows > *out_capacity ? fixtures[f].rows : *out_capacity;
    }
}

/** Runs a row case whose x is in w->a and judges it against w->ref (exactly when @p exact). */
static bool judge_rows(const kernel_launch *k, const char *case_name, workspace *w, bool exact,
                       fa_result *result)
{
    const fa_shape shape = rows_shape(k->rows);
    return run_and_judge(k, case_name, w, k->rows * k->ld, k->rows, exact ? NULL : w->bound,
                         &shape, result);
}

/** Every 5th row of a random M4 case holds one NaN; its max must come back NaN. */
enum { NAN_ROW_PERIOD = 5 };

/**
 * Random rows for case @p index: values in the first cols, NaN padding,
 * reference and bound. The reference's status: a failure leaves no reference
 * to judge against.
 */
FA_MUST_CHECK static fa_status random_row_case(const kernel_launch *k, int index, fa_rng *rng,
                                               workspace *w)
{
    const fa_fill_kind kind = index % 2 ? FA_FILL_ADVERSARIAL : FA_FILL_GAUSSIAN;
    for (int64_t r = 0; r < k->rows; ++r) {
        float *row = w->a + r * k->ld;
        fa_fill(row, k->cols, kind, 1.0, rng);
        for (int64_t c = k->cols; c < k->ld; ++c)
            row[c] = NAN;
        if (k->kind == KERNEL_ROW_MAX && r % NAN_ROW_PERIOD == NAN_ROW_PERIOD - 1 && k->cols > 0)
            row[fa_rng_int(rng, 0, k->cols - 1)] = NAN;
    }
    if (k->kind == KERNEL_ROW_MAX) {
        /* max never rounds: the bound is 0, compared by value, so a zero max may have either sign */
        FA_TRY(fa_ref_row_max(w->a, k->rows, k->cols, k->ld, w->ref));
        for (int64_t r = 0; r < k->rows; ++r)
            w->bound[r] = 0.0;
        return FA_OK;
    }
    FA_TRY(fa_ref_row_sum(w->a, k->rows, k->cols, k->ld, w->ref, w->abs_sum));
    for (int64_t r = 0; r < k->rows; ++r)
        w->bound[r] = row_sum_error_bound(k->cols, w->abs_sum[r]);
    return FA_OK;
}

/**
 * The check of M4 (bound 0: max never rounds) or M5 (the tree's gamma_d
 * bound): fixtures bit for bit, then the random shapes ("row_sum random
 * 2x1025 ld 1031"), or the one shape of the flags.
 */
static void check_rows(kernel_kind kind, fa_impl impl, const fa_run_options *options,
                       fa_result *result)
{
    const bool is_max = kind == KERNEL_ROW_MAX;
    const int milestone = is_max ? 4 : 5;
    const row_fixture *fixtures = is_max ? row_max_fixtures : row_sum_fixtures;
    const int fixture_count = wants_fixtures(options) ? (is_max ? row_max_fixture_count
                                                                : row_sum_fixture_count)
                                                      : 0;
    int64_t x_capacity = 0, out_capacity = 0;
    row_capacity(options, fixtures, fixture_count, &x_capacity, &out_capacity);
    workspace w;
    if (!workspace_alloc(&w, x_capacity, out_capacity, result))
        return;

    kernel_launch k = {.kind = kind, .impl = impl};
    for (int f = 0; f < fixture_count; ++f) {
        const row_fixture *fx = &fixtures[f];
        char name[CASE_NAME_CAP];
        snprintf(name, sizeof name, "%s fixture '%s'", kernel_name(&k), fx->name);
        if (!fa_case_begin(result, options, name))
            continue;
        (is_max ? row_max_fixture_fill : row_sum_fixture_fill)(fx, w.a, w.expected);
        widen(w.expected, w.ref, fx->rows);
        k.rows = fx->rows;
        k.cols = fx->cols;
        k.ld = fx->ld;
        if (!judge_rows(&k, name, &w, true, result))
            goto done;
    }

    for (int i = 0; i < row_shape_count(options); ++i) {
        const row_shape s = row_shape_at(options, i);
        char name[CASE_NAME_CAP];
        snprintf(name, sizeof name, "%s %s %lldx%lld ld %lld", kernel_name(&k),
                 options->problem.given ? "flags" : "random", (long long)s.rows,
                 (long long)s.cols, (long long)s.ld);
        if (!fa_case_begin(result, options, name))
            continue;
        k.rows = s.rows;
        k.cols = s.cols;
        k.ld = s.ld;
        fa_rng rng;
        case_rng(&rng, options, milestone, &k, i);
        if (!fa_result_status(result, name, random_row_case(&k, i, &rng, &w)) ||
            !judge_rows(&k, name, &w, false, result))
            goto done;
    }
    fa_result_pass(result, "%d cases (fixtures bit for bit, random %s)", result->cases,
                   is_max ? "exactly" : "by the tree's bound");
done:
    workspace_free(&w);
}

static void check_row_max(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    check_rows(KERNEL_ROW_MAX, impl, options, result);
}

static void check_row_sum(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    check_rows(KERNEL_ROW_SUM, impl, options, result);
}

/* ---- probes: is the implementation written? (no GPU) -------------------------------------- */

/** Launches @p k's kernel on empty arrays: FA_OK, or FA_ERR_NOT_IMPLEMENTED before any CUDA call. */
static fa_status probe_kernel(kernel_kind kind, fa_exp_method method, fa_impl impl)
{
    const kernel_launch k = {.kind = kind, .impl = impl, .method = method, .alpha = 1.0f};
    return kernel_run(&k, 0);
}

static fa_status probe_vector_add(fa_impl impl, const fa_run_options *options)
{
    (void)options; /* one version */
    return probe_kernel(KERNEL_VECTOR_ADD, FA_EXP_EXPF, impl);
}

static fa_status probe_scale_array(fa_impl impl, const fa_run_options *options)
{
    (void)options; /* one version */
    return probe_kernel(KERNEL_SCALE_ARRAY, FA_EXP_EXPF, impl);
}

static fa_status probe_exp(fa_impl impl, const fa_run_options *options)
{
    (void)options; /* one version, whose three launchers must all be written */
    for (int m = 0; m < FA_COUNT_OF(primitives_exp_methods); ++m)
        FA_TRY(probe_kernel(KERNEL_EXP, primitives_exp_methods[m], impl));
    return FA_OK;
}

static fa_status probe_row_max(fa_impl impl, const fa_run_options *options)
{
    (void)options; /* one version */
    return probe_kernel(KERNEL_ROW_MAX, FA_EXP_EXPF, impl);
}

static fa_status probe_row_sum(fa_impl impl, const fa_run_options *options)
{
    (void)options; /* one version */
    return probe_kernel(KERNEL_ROW_SUM, FA_EXP_EXPF, impl);
}

/* ---- timing --------------------------------------------------------------------------------- */

/**
 * Size of the milestones' timings: 64 MiB per array, rows of 8192 (the
 * length attention's softmax sees at N = 8k); --quick (compute-sanitizer
 * runs): 256 KiB. The problem flags replace it.
 */
enum { TIMED_FLOATS = 1 << 24, TIMED_QUICK_FLOATS = 1 << 16, TIMED_ROW_COLS = 8192 };

/** Median time of one kernel on TIMED_FLOATS per array, or on the flags' problem. */
static fa_status time_kernel(kernel_kind kind, fa_impl impl, const fa_run_options *options,
                             double *milliseconds, char *size_label, size_t cap)
{
    FA_TRY(probe_kernel(kind, FA_EXP_EXPF, impl)); /* not implemented: say so before allocating */
    kernel_launch k = {.kind = kind, .impl = impl, .method = FA_EXP_EXPF, .alpha = RANDOM_SCALE};
    const bool rows = kind == KERNEL_ROW_MAX || kind == KERNEL_ROW_SUM;
    int64_t count = options->quick ? TIMED_QUICK_FLOATS : TIMED_FLOATS;
    int64_t cols = TIMED_ROW_COLS;
    if (options->problem.given != 0) {
        const row_shape s = row_shape_at(options, 0);
        count = rows ? s.rows * s.cols : elementwise_size(options, 0);
        cols = s.cols;
    }
    timing_arrays t;
    FA_TRY(timing_arrays_alloc(&t, count, options->seed));
    kernel_aim(&k, &t, cols);
    const fa_timing_options timing = fa_timing_defaults();
    fa_stats stats;
    const fa_status status = fa_time_gpu(kernel_timed, &k, &timing, &stats);
    timing_arrays_free(&t);
    FA_TRY(status);
    *milliseconds = stats.median;
    char shape[64];
    kernel_shape_label(&k, shape, sizeof shape);
    snprintf(size_label, cap, "%s, %s", kernel_name(&k), shape);
    return FA_OK;
}

static fa_status time_vector_add(fa_impl impl, const fa_run_options *options, double *ms,
                                 char *label, size_t cap)
{
    return time_kernel(KERNEL_VECTOR_ADD, impl, options, ms, label, cap);
}

static fa_status time_scale_array(fa_impl impl, const fa_run_options *options, double *ms,
                                  char *label, size_t cap)
{
    return time_kernel(KERNEL_SCALE_ARRAY, impl, options, ms, label, cap);
}

static fa_status time_exp(fa_impl impl, const fa_run_options *options, double *ms, char *label,
                          size_t cap)
{
    return time_kernel(KERNEL_EXP, impl, options, ms, label, cap);
}

static fa_status time_row_max(fa_impl impl, const fa_run_options *options, double *ms,
                              char *label, size_t cap)
{
    return time_kernel(KERNEL_ROW_MAX, impl, options, ms, label, cap);
}

static fa_status time_row_sum(fa_impl impl, const fa_run_options *options, double *ms,
                              char *label, size_t cap)
{
    return time_kernel(KERNEL_ROW_SUM, impl, options, ms, label, cap);
}

static const fa_milestone_check checks[] = {
    {1, probe_vector_add, check_vector_add, time_vector_add, false},
    {2, probe_scale_array, check_scale_array, time_scale_array, false},
    {3, probe_exp, check_exp, time_exp, false},
    {4, probe_row_max, check_row_max, time_row_max, false},
    {5, probe_row_sum, check_row_sum, time_row_sum, false},
};

const fa_stage_desc stage01 = {1, checks, FA_COUNT_OF(checks), stage01_bench};
