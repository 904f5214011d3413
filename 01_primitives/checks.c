/**
 * @file checks.c
 * @brief The GPU checks of M1-M5, their timings, and the stage-01 benchmark.
 */
#include "checks.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fa_device.h"
#include "fa_reference.h"
#include "fa_rng.h"
#include "fa_timing.h"
#include "fixtures.h"
#include "model.h"
#include "primitives.h"

#define COUNT_OF(array) ((int)(sizeof(array) / sizeof((array)[0])))

enum { CASE_NAME_CAP = 192, MIB = 1 << 20 };

/* ---- one launch, whichever kernel and implementation -------------------------------------- */

/** The kernels of the stage, as the checks, timings and benchmark name them. */
typedef enum kernel_kind {
    KERNEL_VECTOR_ADD,
    KERNEL_SCALE_ARRAY,
    KERNEL_EXP,
    KERNEL_ROW_MAX,
    KERNEL_ROW_SUM
} kernel_kind;

/** Everything one launch needs; the device pointers are filled in by the runners. */
typedef struct kernel_launch {
    kernel_kind kind;
    fa_impl impl;
    fa_exp_method method;    /* KERNEL_EXP */
    float alpha;             /* KERNEL_SCALE_ARRAY */
    const float *a, *b;      /* device inputs: b for the vector add only; a is x elsewhere */
    float *out;              /* device output */
    int64_t n;               /* elementwise length */
    int64_t rows, cols, ld;  /* row kernels */
} kernel_launch;

static const char *kernel_name(const kernel_launch *k)
{
    switch (k->kind) {
    case KERNEL_VECTOR_ADD: return "vector_add";
    case KERNEL_SCALE_ARRAY: return "scale_array";
    case KERNEL_EXP: return exp_launcher_name(k->method);
    case KERNEL_ROW_MAX: return "row_max";
    case KERNEL_ROW_SUM: return "row_sum";
    }
    return "unknown";
}

static bool is_row_kernel(const kernel_launch *k)
{
    return k->kind == KERNEL_ROW_MAX || k->kind == KERNEL_ROW_SUM;
}

/** Calls the launcher of @p k's kernel from the reference or the learner's file. */
static fa_status launch(const kernel_launch *k, cudaStream_t stream)
{
    const bool learner = k->impl == FA_IMPL_LEARNER;
    switch (k->kind) {
    case KERNEL_VECTOR_ADD:
        return (learner ? learner_vector_add : ref_vector_add)(k->a, k->b, k->out, k->n, stream);
    case KERNEL_SCALE_ARRAY:
        return (learner ? learner_scale_array : ref_scale_array)(k->a, k->alpha, k->out, k->n, stream);
    case KERNEL_EXP:
        switch (k->method) {
        case FA_EXP_EXPF:
            return (learner ? learner_exp_accurate : ref_exp_accurate)(k->a, k->out, k->n, stream);
        case FA_EXP_EXP2_PRESCALED:
            return (learner ? learner_exp2_prescaled : ref_exp2_prescaled)(k->a, k->out, k->n, stream);
        case FA_EXP_FAST:
            return (learner ? learner_exp_fast : ref_exp_fast)(k->a, k->out, k->n, stream);
        }
        return exp_validate(k->method, k->a, k->out, k->n);
    case KERNEL_ROW_MAX:
        return (learner ? learner_row_max : ref_row_max)(k->a, k->rows, k->cols, k->ld, k->out, stream);
    case KERNEL_ROW_SUM:
        return (learner ? learner_row_sum : ref_row_sum)(k->a, k->rows, k->cols, k->ld, k->out, stream);
    }
    return fa_fail(FA_ERR_INVALID_ARGUMENT, "stage01: unknown kernel %d", (int)k->kind);
}

/** Device copy of @p count host floats (NULL for none). */
static fa_status upload_floats(float **device, const float *host, int64_t count)
{
    void *ptr = NULL;
    *device = NULL;
    if (count == 0)
        return FA_OK;
    FA_TRY(fa_device_copy_of(&ptr, host, (size_t)count * sizeof(float)));
    *device = ptr;
    return FA_OK;
}

/** Poisoned device array of @p count floats (NULL for none). */
static fa_status poisoned_floats(float **device, int64_t count)
{
    void *ptr = NULL;
    *device = NULL;
    if (count == 0)
        return FA_OK;
    FA_TRY(fa_device_alloc(&ptr, (size_t)count * sizeof(float)));
    *device = ptr;
    return fa_device_poison(ptr, (size_t)count * sizeof(float));
}

/**
 * Uploads the inputs of @p k (a: @p a_count floats, b: as many when given),
 * launches into a poisoned output of @p out_count floats and downloads it to
 * @p got. Empty arrays stay NULL: the launcher must accept that.
 */
static fa_status run_on_device(kernel_launch k, const float *a, int64_t a_count, const float *b,
                               int64_t out_count, float *got)
{
    float *d_a = NULL, *d_b = NULL, *d_out = NULL;
    fa_status status = upload_floats(&d_a, a, a_count);
    if (status == FA_OK && b != NULL)
        status = upload_floats(&d_b, b, a_count);
    if (status == FA_OK)
        status = poisoned_floats(&d_out, out_count);
    if (status == FA_OK) {
        k.a = d_a;
        k.b = d_b;
        k.out = d_out;
        status = launch(&k, 0);
    }
    if (status == FA_OK && out_count > 0)
        status = fa_download(got, d_out, (size_t)out_count * sizeof(float));
    fa_device_free(d_a);
    fa_device_free(d_b);
    fa_device_free(d_out);
    return status;
}

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

/* ---- M1-M3: elementwise ------------------------------------------------------------------- */

/** Random lengths around the kernels' seams; the large ones need more than one grid-stride step. */
static const int64_t ELEMENTWISE_SIZES[] = {1, 2, 3, 4, 5, 255, 1023, 1024, 1025, 4099};
static const int64_t ELEMENTWISE_LARGE_SIZES[] = {(3 << 20) + 1, (1 << 24) + 7};

static int elementwise_size_count(const fa_run_options *options)
{
    return COUNT_OF(ELEMENTWISE_SIZES) + (options->quick ? 0 : COUNT_OF(ELEMENTWISE_LARGE_SIZES));
}

static int64_t elementwise_size(int index)
{
    const int small = COUNT_OF(ELEMENTWISE_SIZES);
    return index < small ? ELEMENTWISE_SIZES[index] : ELEMENTWISE_LARGE_SIZES[index - small];
}

/** Largest length any elementwise case of a check uses. */
static int64_t elementwise_capacity(const fa_run_options *options)
{
    int64_t capacity = 0;
    for (int i = 0; i < elementwise_size_count(options); ++i)
        capacity = elementwise_size(i) > capacity ? elementwise_size(i) : capacity;
    for (int f = 0; f < vector_add_fixture_count; ++f)
        capacity = vector_add_fixtures[f].n > capacity ? vector_add_fixtures[f].n : capacity;
    for (int f = 0; f < scale_array_fixture_count; ++f)
        capacity = scale_array_fixtures[f].n > capacity ? scale_array_fixtures[f].n : capacity;
    for (int f = 0; f < exp_fixture_count; ++f)
        capacity = exp_fixtures[f].n > capacity ? exp_fixtures[f].n : capacity;
    return capacity;
}

/**
 * Runs an elementwise case whose inputs are in w->a (and w->b for the vector
 * add) and judges it against w->ref under w->bound (exactly when
 * @p exact). Returns false, with @p result filled, on the first failure.
 */
static bool judge_elementwise(const kernel_launch *k, const char *case_name, workspace *w,
                              int64_t n, bool exact, fa_result *result)
{
    const float *b = k->kind == KERNEL_VECTOR_ADD ? w->b : NULL;
    kernel_launch sized = *k;
    sized.n = n;
    if (!fa_result_status(result, case_name, run_on_device(sized, w->a, n, b, n, w->got)))
        return false;
    const fa_shape shape = fa_shape_1d(n);
    return fa_result_judge(result, case_name, w->got, w->ref, exact ? NULL : w->bound, &shape);
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

/** The random cases of one elementwise kernel; false on the first failure. */
static bool random_elementwise_cases(const kernel_launch *k, const fa_run_options *options,
                                     int milestone, workspace *w, int *cases, fa_result *result)
{
    fa_rng rng;
    fa_rng_seed(&rng, options->seed, (uint64_t)milestone);
    for (int i = 0; i < elementwise_size_count(options); ++i) {
        const int64_t n = elementwise_size(i);
        char name[CASE_NAME_CAP];
        snprintf(name, sizeof name, "%s random n = %lld (seed %llu)", kernel_name(k), (long long)n,
                 (unsigned long long)options->seed);
        random_elementwise_case(k, i, n, &rng, w);
        if (!judge_elementwise(k, name, w, n, false, result))
            return false;
        ++*cases;
    }
    return true;
}

/** A random scale that rounds (not a power of two), so M2 is judged by its rounding bound. */
static const float RANDOM_SCALE = 1.7f;

static void check_vector_add(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    const kernel_launch k = {.kind = KERNEL_VECTOR_ADD, .impl = impl};
    workspace w;
    if (!workspace_alloc(&w, elementwise_capacity(options), elementwise_capacity(options), result))
        return;
    int cases = 0;
    for (int f = 0; f < vector_add_fixture_count; ++f) {
        const elementwise_fixture *fx = &vector_add_fixtures[f];
        char name[CASE_NAME_CAP];
        snprintf(name, sizeof name, "vector_add fixture '%s'", fx->name);
        vector_add_fixture_fill(fx, w.a, w.b, w.expected);
        widen(w.expected, w.ref, fx->n);
        if (!judge_elementwise(&k, name, &w, fx->n, true, result))
            goto done;
    }
    if (!random_elementwise_cases(&k, options, 1, &w, &cases, result))
        goto done;
    fa_result_pass(result, "%d fixtures, %d random cases", vector_add_fixture_count, cases);
done:
    workspace_free(&w);
}

static void check_scale_array(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    kernel_launch k = {.kind = KERNEL_SCALE_ARRAY, .impl = impl};
    workspace w;
    if (!workspace_alloc(&w, elementwise_capacity(options), elementwise_capacity(options), result))
        return;
    int cases = 0;
    for (int f = 0; f < scale_array_fixture_count; ++f) {
        const elementwise_fixture *fx = &scale_array_fixtures[f];
        char name[CASE_NAME_CAP];
        snprintf(name, sizeof name, "scale_array fixture '%s'", fx->name);
        scale_array_fixture_fill(fx, w.a, w.expected);
        widen(w.expected, w.ref, fx->n);
        k.alpha = fx->alpha;
        if (!judge_elementwise(&k, name, &w, fx->n, true, result))
            goto done;
    }
    k.alpha = RANDOM_SCALE;
    if (!random_elementwise_cases(&k, options, 2, &w, &cases, result))
        goto done;
    fa_result_pass(result, "%d fixtures, %d random cases", scale_array_fixture_count, cases);
done:
    workspace_free(&w);
}

static const fa_exp_method EXP_METHODS[] = {FA_EXP_EXPF, FA_EXP_EXP2_PRESCALED, FA_EXP_FAST};

static void check_exp(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    workspace w;
    if (!workspace_alloc(&w, elementwise_capacity(options), elementwise_capacity(options), result))
        return;
    int cases = 0;
    for (int m = 0; m < COUNT_OF(EXP_METHODS); ++m) {
        const kernel_launch k = {.kind = KERNEL_EXP, .impl = impl, .method = EXP_METHODS[m]};
        for (int f = 0; f < exp_fixture_count; ++f) {
            const exp_fixture *fx = &exp_fixtures[f];
            char name[CASE_NAME_CAP];
            snprintf(name, sizeof name, "%s fixture '%s'", kernel_name(&k), fx->name);
            exp_fixture_fill(fx, w.a, w.ref);
            for (int64_t i = 0; i < fx->n; ++i)
                w.bound[i] = exp_error_bound(k.method, w.a[i], w.ref[i]);
            if (!judge_elementwise(&k, name, &w, fx->n, false, result))
                goto done;
        }
        if (!random_elementwise_cases(&k, options, 3, &w, &cases, result))
            goto done;
    }
    fa_result_pass(result, "3 variants x (%d fixtures + %d random cases), each within its ulp budget",
                   exp_fixture_count, cases / COUNT_OF(EXP_METHODS));
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

static int row_shape_count(const fa_run_options *options)
{
    return COUNT_OF(ROW_SHAPES) + (options->quick ? 0 : COUNT_OF(ROW_LARGE_SHAPES));
}

static row_shape row_shape_at(int index)
{
    const int small = COUNT_OF(ROW_SHAPES);
    return index < small ? ROW_SHAPES[index] : ROW_LARGE_SHAPES[index - small];
}

/** Largest x (padding included) and output of any row case of a check. */
static void row_capacity(const fa_run_options *options, const row_fixture *fixtures, int count,
                         int64_t *x_capacity, int64_t *out_capacity)
{
    *x_capacity = 0;
    *out_capacity = 0;
    for (int i = 0; i < row_shape_count(options); ++i) {
        const row_shape s = row_shape_at(i);
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
    if (!fa_result_status(result, case_name,
                          run_on_device(*k, w->a, k->rows * k->ld, NULL, k->rows, w->got)))
        return false;
    const fa_shape shape = rows_shape(k->rows);
    return fa_result_judge(result, case_name, w->got, w->ref, exact ? NULL : w->bound, &shape);
}

/** Every 5th row of a random M4 case holds one NaN; its max must come back NaN. */
enum { NAN_ROW_PERIOD = 5 };

/** Random rows for case @p index: values in the first cols, NaN padding, reference and bound. */
static void random_row_case(const kernel_launch *k, int index, fa_rng *rng, workspace *w)
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
        fa_ref_row_max(w->a, k->rows, k->cols, k->ld, w->ref);
        for (int64_t r = 0; r < k->rows; ++r)
            w->bound[r] = 0.0;
        return;
    }
    fa_ref_row_sum(w->a, k->rows, k->cols, k->ld, w->ref, w->abs_sum);
    for (int64_t r = 0; r < k->rows; ++r)
        w->bound[r] = row_sum_error_bound(k->cols, w->abs_sum[r]);
}

/**
 * The check of M4 (bound 0: max never rounds) or M5 (the tree's gamma_d
 * bound): fixtures bit for bit, then the random shapes.
 */
static void check_rows(kernel_kind kind, fa_impl impl, const fa_run_options *options,
                       fa_result *result)
{
    const bool is_max = kind == KERNEL_ROW_MAX;
    const row_fixture *fixtures = is_max ? row_max_fixtures : row_sum_fixtures;
    const int fixture_count = is_max ? row_max_fixture_count : row_sum_fixture_count;
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
        (is_max ? row_max_fixture_fill : row_sum_fixture_fill)(fx, w.a, w.expected);
        widen(w.expected, w.ref, fx->rows);
        k.rows = fx->rows;
        k.cols = fx->cols;
        k.ld = fx->ld;
        if (!judge_rows(&k, name, &w, true, result))
            goto done;
    }

    fa_rng rng;
    fa_rng_seed(&rng, options->seed, is_max ? 4 : 5);
    int cases = 0;
    for (int i = 0; i < row_shape_count(options); ++i) {
        const row_shape s = row_shape_at(i);
        char name[CASE_NAME_CAP];
        snprintf(name, sizeof name, "%s random %lld x %lld, ld %lld (seed %llu)", kernel_name(&k),
                 (long long)s.rows, (long long)s.cols, (long long)s.ld,
                 (unsigned long long)options->seed);
        k.rows = s.rows;
        k.cols = s.cols;
        k.ld = s.ld;
        random_row_case(&k, i, &rng, &w);
        if (!judge_rows(&k, name, &w, false, result))
            goto done;
        ++cases;
    }
    fa_result_pass(result, "%d fixtures, %d random cases", fixture_count, cases);
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
    return launch(&k, 0);
}

static fa_status probe_vector_add(fa_impl impl)
{
    return probe_kernel(KERNEL_VECTOR_ADD, FA_EXP_EXPF, impl);
}

static fa_status probe_scale_array(fa_impl impl)
{
    return probe_kernel(KERNEL_SCALE_ARRAY, FA_EXP_EXPF, impl);
}

static fa_status probe_exp(fa_impl impl)
{
    for (int m = 0; m < COUNT_OF(EXP_METHODS); ++m)
        FA_TRY(probe_kernel(KERNEL_EXP, EXP_METHODS[m], impl));
    return FA_OK;
}

static fa_status probe_row_max(fa_impl impl)
{
    return probe_kernel(KERNEL_ROW_MAX, FA_EXP_EXPF, impl);
}

static fa_status probe_row_sum(fa_impl impl)
{
    return probe_kernel(KERNEL_ROW_SUM, FA_EXP_EXPF, impl);
}

/* ---- timing --------------------------------------------------------------------------------- */

/** Host chunk of random inputs, uploaded repeatedly to fill large device arrays quickly. */
enum { FILL_CHUNK_FLOATS = 1 << 20 };

/** Fills @p count device floats with normal(0, 1) values (never zeros: see PERFORMANCE.md). */
static fa_status fill_device_normal(float *device, int64_t count, uint64_t seed)
{
    float *chunk = malloc(FILL_CHUNK_FLOATS * sizeof(float));
    if (chunk == NULL)
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "stage01: no host memory for a fill chunk");
    fa_rng rng;
    fa_rng_seed(&rng, seed, 0);
    fa_fill(chunk, FILL_CHUNK_FLOATS, FA_FILL_GAUSSIAN, 1.0, &rng);
    fa_status status = FA_OK;
    for (int64_t done = 0; done < count && status == FA_OK; done += FILL_CHUNK_FLOATS) {
        const int64_t part = count - done < FILL_CHUNK_FLOATS ? count - done : FILL_CHUNK_FLOATS;
        status = fa_upload(device + done, chunk, (size_t)part * sizeof(float));
    }
    free(chunk);
    return status;
}

static fa_status timed_launch(void *context, int rep, cudaStream_t stream)
{
    (void)rep; /* inputs far larger than L2, flushed between repetitions: no rotation needed */
    return launch((const kernel_launch *)context, stream);
}

/** Device arrays for timing: a and b of @p count random floats, out of @p count floats. */
typedef struct timing_arrays {
    float *a, *b, *out;
    int64_t count;
} timing_arrays;

static void timing_arrays_free(timing_arrays *t)
{
    fa_device_free(t->a);
    fa_device_free(t->b);
    fa_device_free(t->out);
    *t = (timing_arrays){0};
}

static fa_status timing_arrays_alloc(timing_arrays *t, int64_t count, uint64_t seed)
{
    *t = (timing_arrays){.count = count};
    fa_status status = poisoned_floats(&t->a, count);
    if (status == FA_OK)
        status = poisoned_floats(&t->b, count);
    if (status == FA_OK)
        status = poisoned_floats(&t->out, count);
    if (status == FA_OK)
        status = fill_device_normal(t->a, count, seed);
    if (status == FA_OK)
        status = fill_device_normal(t->b, count, seed + 1);
    if (status != FA_OK)
        timing_arrays_free(t);
    return status;
}

/** Row length of the row kernels' timings: long rows, as attention's softmax sees at N = 8k. */
enum { TIMED_ROW_COLS = 8192 };

/** Points @p k at the arrays of @p t: all of them for elementwise kernels, [count / 8192][8192] rows otherwise. */
static void aim(kernel_launch *k, const timing_arrays *t)
{
    k->a = t->a;
    k->b = t->b;
    k->out = t->out;
    k->n = t->count;
    k->cols = TIMED_ROW_COLS;
    k->ld = TIMED_ROW_COLS;
    k->rows = t->count / TIMED_ROW_COLS;
}

/** Bytes a kernel must move at least: every input read once, every output written once. */
static double bytes_moved(const kernel_launch *k)
{
    const double f = (double)sizeof(float);
    switch (k->kind) {
    case KERNEL_VECTOR_ADD: return 3.0 * f * (double)k->n;
    case KERNEL_SCALE_ARRAY:
    case KERNEL_EXP: return 2.0 * f * (double)k->n;
    case KERNEL_ROW_MAX:
    case KERNEL_ROW_SUM: return f * (double)(k->rows * k->cols + k->rows);
    }
    return 0.0;
}

static void shape_label(const kernel_launch *k, char *label, size_t cap)
{
    if (is_row_kernel(k))
        snprintf(label, cap, "%lld x %lld fp32", (long long)k->rows, (long long)k->cols);
    else
        snprintf(label, cap, "n = %lld fp32", (long long)k->n);
}

/** Size of the milestones' timings: 64 MiB per array; --quick (compute-sanitizer runs): 256 KiB. */
enum { TIMED_FLOATS = 1 << 24, TIMED_QUICK_FLOATS = 1 << 16 };

/** Median time of one kernel on TIMED_FLOATS per array. */
static fa_status time_kernel(kernel_kind kind, fa_impl impl, const fa_run_options *options,
                             double *milliseconds, char *size_label, size_t cap)
{
    FA_TRY(probe_kernel(kind, FA_EXP_EXPF, impl)); /* not implemented: say so before allocating */
    kernel_launch k = {.kind = kind, .impl = impl, .method = FA_EXP_EXPF, .alpha = RANDOM_SCALE};
    const int64_t count = options->quick ? TIMED_QUICK_FLOATS : TIMED_FLOATS;
    timing_arrays t;
    FA_TRY(timing_arrays_alloc(&t, count, options->seed));
    aim(&k, &t);
    const fa_timing_options timing = fa_timing_defaults();
    fa_stats stats;
    const fa_status status = fa_time_gpu(timed_launch, &k, &timing, &stats);
    timing_arrays_free(&t);
    FA_TRY(status);
    *milliseconds = stats.median;
    char shape[64];
    shape_label(&k, shape, sizeof shape);
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

const fa_milestone_check stage01_checks[] = {
    {1, probe_vector_add, check_vector_add, time_vector_add},
    {2, probe_scale_array, check_scale_array, time_scale_array},
    {3, probe_exp, check_exp, time_exp},
    {4, probe_row_max, check_row_max, time_row_max},
    {5, probe_row_sum, check_row_sum, time_row_sum},
};
const int stage01_check_count = COUNT_OF(stage01_checks);

/* ---- the benchmark ------------------------------------------------------------------------ */

/** PERFORMANCE.md: memory-bound kernels should reach this share of the measured copy bandwidth. */
static const double BANDWIDTH_TARGET = 0.85;

/** The copy ceiling is measured at this size (>= 256 MiB, far beyond L2). */
static const size_t COPY_BYTES = (size_t)256 * MIB;

/** Bytes per array of the bandwidth table: 256 MiB and 1 GiB (--quick: 16 MiB). */
static const int64_t BENCH_ARRAY_MIB[] = {256, 1024};
static const int64_t BENCH_QUICK_ARRAY_MIB = 16;

static fa_status bench_bandwidth(const fa_run_options *options, double copy_gb_per_s)
{
    const kernel_launch kernels[] = {
        {.kind = KERNEL_VECTOR_ADD},
        {.kind = KERNEL_SCALE_ARRAY, .alpha = RANDOM_SCALE},
        {.kind = KERNEL_EXP, .method = FA_EXP_EXPF},
        {.kind = KERNEL_EXP, .method = FA_EXP_EXP2_PRESCALED},
        {.kind = KERNEL_EXP, .method = FA_EXP_FAST},
        {.kind = KERNEL_ROW_MAX},
        {.kind = KERNEL_ROW_SUM},
    };
    const fa_timing_options timing = fa_timing_defaults();
    printf("\nEffective bandwidth of the reference kernels (bytes read + written / median time; "
           "%d warm-up, %d timed runs, L2 flushed%s)\n",
           timing.warmup, timing.repeats, timing.flush_l2 ? "" : " not");
    printf("| kernel | MiB per array | shape | MB moved | median ms | p10-p90 spread | GB/s | "
           "%% of copy | target %.0f%% |\n",
           100.0 * BANDWIDTH_TARGET);
    printf("|---|---|---|---|---|---|---|---|---|\n");

    const int sizes = options->quick ? 1 : COUNT_OF(BENCH_ARRAY_MIB);
    for (int s = 0; s < sizes; ++s) {
        const int64_t mib = options->quick ? BENCH_QUICK_ARRAY_MIB : BENCH_ARRAY_MIB[s];
        timing_arrays t;
        FA_TRY(timing_arrays_alloc(&t, mib * MIB / (int64_t)sizeof(float), options->seed));
        fa_status status = FA_OK;
        for (int i = 0; i < COUNT_OF(kernels) && status == FA_OK; ++i) {
            kernel_launch k = kernels[i];
            k.impl = FA_IMPL_REFERENCE;
            aim(&k, &t);
            fa_stats ms;
            status = fa_time_gpu(timed_launch, &k, &timing, &ms);
            if (status != FA_OK)
                break;
            const double gb_per_s = bytes_moved(&k) / (ms.median * 1e-3) / 1e9;
            const double share = gb_per_s / copy_gb_per_s;
            char shape[64];
            shape_label(&k, shape, sizeof shape);
            printf("| %s | %lld | %s | %.0f | %.4f | %.1f%% | %.0f | %.1f%% | %s |\n", kernel_name(&k),
                   (long long)mib, shape, bytes_moved(&k) / 1e6, ms.median, 100.0 * ms.spread,
                   gb_per_s, 100.0 * share, share >= BANDWIDTH_TARGET ? "met" : "MISSED");
        }
        timing_arrays_free(&t);
        FA_TRY(status);
    }
    return FA_OK;
}

/** Samples of the exp accuracy sweep: every ~1e-5 of [-87, 88] (--quick: 65536). */
enum { ULP_SAMPLES = 1 << 24, ULP_QUICK_SAMPLES = 1 << 16 };

/** Where the sweep reports separately: small arguments, softmax-like ones, all. */
static const double ULP_RANGES[] = {1.0, 10.0, 88.0};

/** Worst error of one variant over the sweep, per range of |x|. */
typedef struct ulp_summary {
    double max_ulps[3];   /* per ULP_RANGES entry */
    double worst_x;       /* where the largest ulp error of the whole sweep occurs */
    double worst_ratio;   /* max |y - exp x| / bound: above 1 the check's bound is wrong */
} ulp_summary;

static void summarise_ulps(fa_exp_method method, const float *x, const float *y, int64_t n,
                           ulp_summary *s)
{
    *s = (ulp_summary){0};
    for (int64_t i = 0; i < n; ++i) {
        const double exact = exp((double)x[i]);
        const double err = fabs((double)y[i] - exact);
        const double ulps = err / fp32_ulp(exact);
        for (int r = 0; r < COUNT_OF(ULP_RANGES); ++r)
            if (fabs((double)x[i]) <= ULP_RANGES[r] && ulps > s->max_ulps[r]) {
                s->max_ulps[r] = ulps;
                if (r == COUNT_OF(ULP_RANGES) - 1)
                    s->worst_x = x[i];
            }
        const double ratio = err / exp_error_bound(method, x[i], exact);
        s->worst_ratio = ratio > s->worst_ratio ? ratio : s->worst_ratio;
    }
}

static fa_status bench_exp_accuracy(const fa_run_options *options)
{
    static const char *const code[] = {"expf(x)", "exp2f(x * log2e)", "__expf(x)"};
    static const char *const budget[] = {"2", "2 of exp2f + argument rounding",
                                         "2 + floor(1.173 |x|)"};
    const int64_t n = options->quick ? ULP_QUICK_SAMPLES : ULP_SAMPLES;
    float *x = malloc((size_t)n * sizeof(float)), *y = malloc((size_t)n * sizeof(float));
    if (x == NULL || y == NULL) {
        free(x);
        free(y);
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "stage01: no host memory for %lld exp samples",
                       (long long)n);
    }
    for (int64_t i = 0; i < n; ++i)
        x[i] = exp_sweep_x(i, n);
    fa_status status = FA_OK;

    printf("\nexp accuracy: %lld points evenly over [-87, 88]; error against exp(x) in double, in "
           "ulps of exp(x)\n",
           (long long)n);
    printf("| launcher | code | max ulp, |x| <= 1 | |x| <= 10 | all x | worst at x | CUDA table "
           "(ulp) | max error / bound |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (int m = 0; m < COUNT_OF(EXP_METHODS) && status == FA_OK; ++m) {
        const kernel_launch k = {.kind = KERNEL_EXP, .impl = FA_IMPL_REFERENCE, .method = EXP_METHODS[m], .n = n};
        status = run_on_device(k, x, n, NULL, n, y);
        if (status != FA_OK)
            break;
        ulp_summary s;
        summarise_ulps(k.method, x, y, n, &s);
        printf("| %s | `%s` | %.2f | %.2f | %.2f | %.4f | %s | %.3f%s |\n", kernel_name(&k), code[m],
               s.max_ulps[0], s.max_ulps[1], s.max_ulps[2], s.worst_x, budget[m], s.worst_ratio,
               s.worst_ratio > 1.0 ? " EXCEEDS THE BOUND" : "");
    }
    printf("Ulps here are measured from exp(x) itself, so a correctly rounded result is up to "
           "0.5 ulp off; the bound adds that half ulp to each table entry.\n");
    free(x);
    free(y);
    return status;
}

fa_status stage01_bench(const fa_run_options *options)
{
    FA_TRY(fa_print_configuration(stdout));
    double copy_gb_per_s = 0.0;
    FA_TRY(fa_measure_copy_bandwidth(COPY_BYTES, &copy_gb_per_s));
    printf("\nCeiling: device-to-device cudaMemcpyAsync of %zu MiB: %.0f GB/s (bytes read + "
           "written)\n",
           COPY_BYTES / MIB, copy_gb_per_s);
    FA_TRY(bench_bandwidth(options, copy_gb_per_s));
    return bench_exp_accuracy(options);
}
