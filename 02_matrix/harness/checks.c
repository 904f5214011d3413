/**
 * @file checks.c
 * @brief The GPU checks of M6 dot product, M7 matmul and M8 transpose, and
 *        their timings: the stage as its driver sees it.
 *
 * Every case has a name the failure line prints and `--case` takes, and seeds
 * its own random stream from (seed, milestone, kernel, case), so a case
 * reruns alone with the same inputs; the versions of M7 (and of M8) see the
 * same inputs for the same case. Inputs are followed by NaN canaries (a read
 * past the end turns outputs NaN), outputs are poisoned (an element never
 * written is reported as such) and followed by poisoned canaries (a write
 * past the end fails the case): runners.c does the uploads.
 */
#include "checks.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa_check.h"
#include "fa_device.h"
#include "fa_half.h"
#include "fa_index.h"
#include "fa_reference.h"
#include "fa_rng.h"
#include "fa_timing.h"
#include "fixtures.h"
#include "model.h"
#include "runners.h"
#include "versions.h"

enum { CASE_NAME_CAP = FA_CASE_NAME, LABEL_CAP = 64 };

/* ---- shared by the three checks ----------------------------------------------------------- */

/** The random stream of case @p index of @p kernel (a dtype, or 0) in milestone @p milestone. */
static void case_rng(fa_rng *rng, const fa_run_options *options, int milestone, int kernel,
                     int index)
{
    fa_rng_seed(rng, options->seed,
                ((uint64_t)milestone << 32) | ((uint64_t)kernel << 16) | (uint64_t)index);
}

/** malloc of @p bytes (at least 1); when out of memory, NULL and an error of case @p name. */
static void *host_alloc(fa_result *result, const char *name, size_t bytes)
{
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (p == NULL)
        fa_result_status(result, name,
                         fa_fail(FA_ERR_OUT_OF_MEMORY, "stage02: no host memory for %zu bytes",
                                 bytes));
    return p;
}

/**
 * The verdict of one run: its @p status, the canaries after @p output (none
 * overwritten), then @p got against @p want under @p bound (NULL: exactly).
 */
static bool judge(fa_result *result, const char *name, fa_status status, int64_t overwritten,
                  const char *output, const float *got, const double *want, const double *bound,
                  const fa_shape *shape)
{
    return fa_result_status(result, name, status) &&
           fa_result_canaries(result, name, output, overwritten) &&
           (fa_shape_count(shape) == 0 || fa_result_judge(result, name, got, want, bound, shape));
}

/** Host array of @p n elements of @p dtype holding @p values rounded to it (NULL: no memory). */
static void *to_dtype(const float *values, int64_t n, fa_dtype dtype)
{
    void *out = malloc((size_t)(n > 0 ? n : 1) * (size_t)fa_dtype_size(dtype));
    if (out != NULL)
        for (int64_t i = 0; i < n; ++i)
            fa_store(out, dtype, i, values[i]);
    return out;
}

/** [cols][rows] = transpose of [rows][cols] (host, exact); NULL when out of memory. */
static float *transposed(const float *in, int64_t rows, int64_t cols)
{
    float *out = malloc((size_t)(rows * cols > 0 ? rows * cols : 1) * sizeof *out);
    if (out != NULL)
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c)
                out[c * rows + r] = in[r * cols + c];
    return out;
}

/** The fixtures run unless problem flags ask for one case of their own. */
static bool wants_fixtures(const fa_run_options *options)
{
    return options->problem.given == 0;
}

/** Median milliseconds of @p work over @p context, with the default timing options. */
static fa_status median_ms(fa_gpu_work work, void *context, double *milliseconds)
{
    const fa_timing_options timing = fa_timing_defaults();
    fa_stats stats;
    FA_TRY(fa_time_gpu(work, context, &timing, &stats));
    *milliseconds = stats.median;
    return FA_OK;
}

/* ==== M6 dot product ======================================================================= */

static const fa_dtype DOT_DTYPES[] = {FA_F32, FA_BF16, FA_F16};

/** Lengths around every boundary of the partition: chunk, warp, block, full grid, in-flight loop. */
static const int64_t DOT_LENGTHS[] = {1,    2,    3,     4,     5,      7,       8,       9,
                                      255,  256,  257,   1023,  1024,   1025,    2047,    2048,
                                      4099, 65537, 262145, 1048583, 2097169, 4194311, 9000011};
enum {
    DOT_ADVERSARIAL_N = 70001, /**< the last random case: adversarial magnitudes at an awkward length */
    DOT_QUICK_MAX = 100000,    /**< longer random cases are skipped by --quick */
    DOT_FLAG_N = 65537,        /**< n of the flags' case when only --dtype is given */
    DOT_TIMED_N = 1 << 24      /**< the timing: 64 MiB per fp32 vector */
};

/**
 * Runs the dot product of host vectors (of @p dtype) twice and judges the
 * first result against @p want under @p bound (NULL: exactly); the second
 * must have the same bits.
 */
static bool run_dot(fa_impl impl, const char *name, const void *x, const void *y, fa_dtype dtype,
                    int64_t n, double want, const double *bound, fa_result *result)
{
    float results[2] = {0.0f, 0.0f};
    int64_t overwritten = 0;
    const fa_status status = dot_run_on_host(impl, x, y, dtype, n, results, &overwritten);
    const fa_shape shape = fa_shape_1d(1);
    if (!judge(result, name, status, overwritten, "result or partials", results, &want, bound,
               &shape))
        return false;
    if (memcmp(&results[0], &results[1], sizeof results[0]) != 0) {
        fa_result_fail(result, name, "is not deterministic: %.9g, then %.9g from the same inputs",
                       (double)results[0], (double)results[1]);
        return false;
    }
    return true;
}

/**
 * The dot product of @p xf . @p yf rounded to @p dtype: against @p *exact
 * bit for bit when given, else against the double reference within
 * gamma_depth.
 */
static bool dot_case(fa_impl impl, const char *name, const float *xf, const float *yf,
                     fa_dtype dtype, int64_t n, const float *exact, fa_result *result)
{
    void *x = to_dtype(xf, n, dtype), *y = to_dtype(yf, n, dtype);
    bool ok = x != NULL && y != NULL;
    if (!ok) {
        fa_result_status(result, name, fa_fail(FA_ERR_OUT_OF_MEMORY, "stage02: no host memory"));
    } else if (exact != NULL) {
        ok = run_dot(impl, name, x, y, dtype, n, (double)*exact, NULL, result);
    } else {
        double abs_sum = 0.0;
        const double want = fa_ref_dot(x, y, dtype, n, &abs_sum);
        const double bound = model_dot_product_bound(n, dtype, abs_sum);
        ok = run_dot(impl, name, x, y, dtype, n, want, &bound, result);
    }
    free(x);
    free(y);
    return ok;
}

/** The hand-computed fixtures of one dtype ("bf16 fixture 'one element'"), bit for bit. */
static bool dot_fixture_cases(fa_impl impl, fa_dtype dtype, const fa_run_options *options,
                              fa_result *result)
{
    char name[CASE_NAME_CAP];
    for (int f = 0; f < dot_fixture_count; ++f) {
        const dot_fixture *fx = &dot_fixtures[f];
        snprintf(name, sizeof name, "%s fixture '%s'", fa_dtype_name(dtype), fx->name);
        if (!fa_case_begin(result, options, name))
            continue;
        if (!dot_case(impl, name, fx->x, fx->y, dtype, fx->n, &fx->expected, result))
            return false;
    }
    snprintf(name, sizeof name, "%s fixture 'long integer pattern (n = %d)'", fa_dtype_name(dtype),
             DOT_LONG_FIXTURE_N);
    if (!fa_case_begin(result, options, name))
        return true;
    float *x = host_alloc(result, name, DOT_LONG_FIXTURE_N * sizeof(float));
    float *y = x == NULL ? NULL : host_alloc(result, name, DOT_LONG_FIXTURE_N * sizeof(float));
    const float sum = DOT_LONG_FIXTURE_SUM;
    bool ok = y != NULL;
    if (ok) {
        dot_long_fixture(x, y, DOT_LONG_FIXTURE_N);
        ok = dot_case(impl, name, x, y, dtype, DOT_LONG_FIXTURE_N, &sum, result);
    }
    free(x);
    free(y);
    return ok;
}

/**
 * The random cases of one dtype ("fp16 random 9 n=255", the last one
 * "... adversarial n=70001"), or the one case of the problem flags
 * ("bf16 flags n=77"), judged within gamma_depth.
 */
static bool dot_random_cases(fa_impl impl, fa_dtype dtype, const fa_run_options *options,
                             fa_result *result)
{
    const bool flags = options->problem.given != 0;
    const int count = flags ? 1 : FA_COUNT_OF(DOT_LENGTHS) + 1;
    for (int i = 0; i < count; ++i) {
        const bool adversarial = !flags && i == FA_COUNT_OF(DOT_LENGTHS);
        const int64_t n = flags ? fa_problem_get(&options->problem, FA_PROBLEM_N, DOT_FLAG_N)
                          : adversarial ? DOT_ADVERSARIAL_N
                                        : DOT_LENGTHS[i];
        if (!flags && options->quick && n > DOT_QUICK_MAX)
            continue;
        char name[CASE_NAME_CAP];
        if (flags)
            snprintf(name, sizeof name, "%s flags n=%lld", fa_dtype_name(dtype), (long long)n);
        else
            snprintf(name, sizeof name, "%s random %d %sn=%lld", fa_dtype_name(dtype), i,
                     adversarial ? "adversarial " : "", (long long)n);
        if (!fa_case_begin(result, options, name))
            continue;
        if (!fa_result_status(result, name, dot_product_validate_sizes(dtype, n)))
            return false;
        float *x = host_alloc(result, name, (size_t)n * sizeof(float));
        float *y = x == NULL ? NULL : host_alloc(result, name, (size_t)n * sizeof(float));
        bool ok = y != NULL;
        if (ok) {
            fa_rng rng;
            case_rng(&rng, options, 6, (int)dtype, i);
            const fa_fill_kind fill = adversarial ? FA_FILL_ADVERSARIAL : FA_FILL_GAUSSIAN;
            fa_fill(x, n, fill, 1.0, &rng);
            fa_fill(y, n, fill, 1.0, &rng);
            ok = dot_case(impl, name, x, y, dtype, n, NULL, result);
        }
        free(x);
        free(y);
        if (!ok)
            return false;
    }
    return true;
}

static void check_dot(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    for (int d = 0; d < FA_COUNT_OF(DOT_DTYPES); ++d) {
        const fa_dtype dtype = DOT_DTYPES[d];
        if (!wants_fixtures(options) && dtype != options->problem.dtype)
            continue; /* the flags' case has the dtype of --dtype (fp32 by default) */
        if (wants_fixtures(options) && !dot_fixture_cases(impl, dtype, options, result))
            return;
        if (!dot_random_cases(impl, dtype, options, result))
            return;
    }
    fa_result_pass(result,
                   "%d cases (fp32, bf16, fp16; fixtures bit for bit, random within "
                   "gamma_depth; each run twice with identical bits)",
                   result->cases);
}

static fa_status probe_dot(fa_impl impl, const fa_run_options *options)
{
    (void)options; /* one version */
    return dot_launch(impl, NULL, NULL, FA_F32, 0, NULL, NULL, 0);
}

/** Median time of one dot product: fp32 of DOT_TIMED_N, or the flags' problem. */
static fa_status time_dot(fa_impl impl, const fa_run_options *options, double *milliseconds,
                          char *label, size_t cap)
{
    FA_TRY(probe_dot(impl, options)); /* not implemented: say so before allocating */
    const bool flags = options->problem.given != 0;
    const fa_dtype dtype = flags ? options->problem.dtype : FA_F32;
    const int64_t n = flags ? fa_problem_get(&options->problem, FA_PROBLEM_N, DOT_FLAG_N)
                            : DOT_TIMED_N;
    FA_TRY(dot_product_validate_sizes(dtype, n));
    const size_t bytes = (size_t)n * (size_t)fa_dtype_size(dtype);
    void *x = NULL, *y = NULL, *partials = NULL, *out = NULL;
    fa_status status = timing_array(&x, bytes);
    if (status == FA_OK)
        status = timing_array(&y, bytes);
    if (status == FA_OK)
        status = fa_device_alloc(&partials, DOT_PRODUCT_MAX_PARTIALS * sizeof(float));
    if (status == FA_OK)
        status = fa_device_alloc(&out, sizeof(float));
    if (status == FA_OK) {
        dot_timed_run run = {impl, x, y, dtype, n, partials, out};
        status = median_ms(dot_timed, &run, milliseconds);
    }
    if (status == FA_OK)
        snprintf(label, cap, "%s n = %lld", fa_dtype_name(dtype), (long long)n);
    fa_device_free(x);
    fa_device_free(y);
    fa_device_free(partials);
    fa_device_free(out);
    return status;
}

/* ==== M7 matmul ============================================================================ */

/** A random case of M7: sizes, fill, and how it is judged. */
typedef struct matmul_case {
    const char *label;
    int64_t m, n, k;
    fa_fill_kind fill;
    bool exact;      /**< small integers: compared bit for bit */
    bool large;      /**< skipped by --quick */
    int offset;      /**< elements by which a and b are shifted off 16-byte alignment */
} matmul_case;

static const matmul_case MATMUL_CASES[] = {
    {"1x1x1", 1, 1, 1, FA_FILL_GAUSSIAN, false, false, 0},
    {"row 1x37x5", 1, 37, 5, FA_FILL_GAUSSIAN, false, false, 0},
    {"column 37x1x5", 37, 1, 5, FA_FILL_GAUSSIAN, false, false, 0},
    {"K = 1, 3x5x1", 3, 5, 1, FA_FILL_GAUSSIAN, false, false, 0},
    {"31x33x7", 31, 33, 7, FA_FILL_GAUSSIAN, false, false, 0},
    {"32x32x32", 32, 32, 32, FA_FILL_GAUSSIAN, false, false, 0},
    {"33x31x65", 33, 31, 65, FA_FILL_GAUSSIAN, false, false, 0},
    {"127x129x8", 127, 129, 8, FA_FILL_GAUSSIAN, false, false, 0},
    {"128x128x128", 128, 128, 128, FA_FILL_GAUSSIAN, false, false, 0},
    {"129x130x33", 129, 130, 33, FA_FILL_GAUSSIAN, false, false, 0},
    {"64x200x257", 64, 200, 257, FA_FILL_GAUSSIAN, false, false, 0},
    {"257x96x100", 257, 96, 100, FA_FILL_GAUSSIAN, false, false, 0},
    {"200x136x96", 200, 136, 96, FA_FILL_GAUSSIAN, false, false, 0},
    {"255x264x136", 255, 264, 136, FA_FILL_GAUSSIAN, false, false, 0},
    {"pointers off alignment 65x72x64", 65, 72, 64, FA_FILL_GAUSSIAN, false, false, 1},
    {"adversarial 96x80x160", 96, 80, 160, FA_FILL_ADVERSARIAL, false, false, 0},
    {"small integers 67x45x131", 67, 45, 131, FA_FILL_SMALL_INT, true, false, 0},
    {"large 384x320x512", 384, 320, 512, FA_FILL_GAUSSIAN, false, true, 0},
    {"long K 96x80x2000", 96, 80, 2000, FA_FILL_GAUSSIAN, false, true, 0},
};
enum {
    MATMUL_CASE_COUNT = (int)(sizeof MATMUL_CASES / sizeof MATMUL_CASES[0]),
    MATMUL_FLAGS_CASE = MATMUL_CASE_COUNT, /**< the flags' case: its own slot and random stream */
    MATMUL_FLAG_M = 255,                   /**< the flags' sizes a flag leaves out */
    MATMUL_FLAG_N = 264,
    MATMUL_FLAG_K = 136,
    MATMUL_TIMED_SIZE = 2048               /**< the timing: 2048^3, NN */
};

/** Inputs, reference and bound of one case for one kind of version. */
typedef struct matmul_operands {
    bool ready;
    float *a, *b;        /**< fp32 values (bf16-representable in the tensor-core set) */
    uint16_t *a16, *b16; /**< the bf16 bits (tensor-core set only) */
    double *want;        /**< [m][n] */
    double *bound;       /**< [m][n]; NULL: bit for bit (fp32 set of an exact case) */
} matmul_operands;

/** What the versions of M7 share in one check: the implementation, the cases, their operands. */
typedef struct matmul_context {
    fa_impl impl;
    const fa_run_options *options;
    matmul_case flags_case;    /**< the problem flags' case */
    matmul_operands *operands; /**< [case or flags][layout][tensor core], drawn on first use */
} matmul_context;

static void free_operands(matmul_operands *o)
{
    free(o->a);
    free(o->b);
    free(o->a16);
    free(o->b16);
    free(o->want);
    free(o->bound);
    memset(o, 0, sizeof *o);
}

/**
 * Draws the inputs of case @p index from its own stream (the same draws for
 * both layouts and both kinds: B is read as [k][n] for NN, [n][k] for NT),
 * rounds them to bf16 for the tensor cores, and computes the reference and
 * the bound. FA_ERR_OUT_OF_MEMORY, or the reference's error, when they are
 * not all there.
 */
FA_MUST_CHECK static fa_status prepare_operands(matmul_operands *o, const matmul_case *spec,
                                                int index, fa_b_layout layout, bool tensor_core,
                                                const fa_run_options *options)
{
    const int64_t m = spec->m, n = spec->n, k = spec->k;
    o->a = malloc((size_t)(m * k > 0 ? m * k : 1) * sizeof(float));
    o->b = malloc((size_t)(k * n > 0 ? k * n : 1) * sizeof(float));
    o->want = malloc((size_t)(m * n > 0 ? m * n : 1) * sizeof(double));
    double *abs_c = malloc((size_t)(m * n > 0 ? m * n : 1) * sizeof(double));
    bool ok = o->a != NULL && o->b != NULL && o->want != NULL && abs_c != NULL;
    if (ok) {
        fa_rng rng;
        case_rng(&rng, options, 7, 0, index);
        const double scale = spec->fill == FA_FILL_SMALL_INT ? 4.0 : 1.0;
        fa_fill(o->a, m * k, spec->fill, scale, &rng);
        fa_fill(o->b, k * n, spec->fill, scale, &rng);
    }
    if (ok && tensor_core) {
        for (int64_t i = 0; i < m * k; ++i)
            o->a[i] = fa_round_to(FA_BF16, o->a[i]);
        for (int64_t i = 0; i < k * n; ++i)
            o->b[i] = fa_round_to(FA_BF16, o->b[i]);
        o->a16 = to_dtype(o->a, m * k, FA_BF16);
        o->b16 = to_dtype(o->b, k * n, FA_BF16);
        ok = o->a16 != NULL && o->b16 != NULL;
    }
    fa_status reference = FA_OK;
    if (ok)
        reference = fa_ref_matmul(o->a, o->b, FA_F32, layout, m, n, k, o->want, abs_c);
    if (ok && reference == FA_OK && (!spec->exact || tensor_core)) {
        o->bound = malloc((size_t)(m * n > 0 ? m * n : 1) * sizeof(double));
        ok = o->bound != NULL;
        /* An exact case is judged by value on the tensor cores (bound 0): the sign of a sum
         * that is exactly zero is not specified there, and -0 would fail bit for bit. */
        for (int64_t i = 0; ok && i < m * n; ++i)
            o->bound[i] = spec->exact      ? 0.0
                          : tensor_core    ? model_matmul_tensor_core_bound(k, abs_c[i])
                                           : model_matmul_fp32_bound(k, abs_c[i]);
    }
    free(abs_c);
    o->ready = ok && reference == FA_OK;
    if (reference != FA_OK)
        return reference;
    return ok ? FA_OK : fa_fail(FA_ERR_OUT_OF_MEMORY, "stage02: no host memory");
}

/**
 * Points *@p out at the operands of case @p index for @p layout and the
 * version's kind, drawn on first use; prepare_operands()'s error otherwise.
 */
FA_MUST_CHECK static fa_status operands_of(matmul_context *ctx, int index, fa_b_layout layout,
                                           bool tensor_core, const matmul_operands **out)
{
    matmul_operands *o = &ctx->operands[(index * 2 + (int)layout) * 2 + tensor_core];
    *out = o;
    if (o->ready)
        return FA_OK;
    const matmul_case *spec = index == MATMUL_FLAGS_CASE ? &ctx->flags_case : &MATMUL_CASES[index];
    const fa_status status = prepare_operands(o, spec, index, layout, tensor_core, ctx->options);
    if (status != FA_OK) {
        free_operands(o);
        *out = NULL;
    }
    return status;
}

static const char *layout_name(fa_b_layout layout)
{
    return layout == FA_B_ROW_MAJOR ? "NN" : "NT";
}

/** Runs version @p version on host operands and judges C against @p want under @p bound. */
static bool run_matmul(int version, fa_impl impl, const char *name, const void *a, const void *b,
                       int64_t m, int64_t n, int64_t k, fa_b_layout layout, int offset,
                       const double *want, const double *bound, fa_result *result)
{
    const size_t element_size = matmul_version_is_bf16(version) ? sizeof(uint16_t) : sizeof(float);
    float *c = host_alloc(result, name, (size_t)(m * n) * sizeof(float));
    if (c == NULL)
        return false;
    int64_t overwritten = 0;
    const fa_status status = matmul_run_on_host(version, impl, a, b, element_size, m, n, k, layout,
                                                offset, c, &overwritten);
    const fa_shape shape = fa_shape_2d(m, n);
    const bool ok = judge(result, name, status, overwritten, "c", c, want, bound, &shape);
    free(c);
    return ok;
}

/** One fixture in one layout, bit for bit ("v1 naive NT fixture 'K = 1 outer product'"). */
static bool matmul_fixture_case(int version, fa_impl impl, const char *name,
                                const matmul_fixture *fx, fa_b_layout layout, fa_result *result)
{
    const int64_t m = fx->m, n = fx->n, k = fx->k;
    const bool nt = layout == FA_B_TRANSPOSED && k * n > 0;
    float *bt = nt ? transposed(fx->b, k, n) : NULL;
    const float *b = nt ? bt : fx->b;
    double *want = malloc((size_t)(m * n > 0 ? m * n : 1) * sizeof *want);
    const bool bf16 = matmul_version_is_bf16(version);
    bool ok = want != NULL && (b != NULL || k * n == 0);
    void *a16 = NULL, *b16 = NULL;
    if (ok && bf16) {
        a16 = to_dtype(fx->a, m * k, FA_BF16);
        b16 = to_dtype(b, k * n, FA_BF16);
        ok = a16 != NULL && b16 != NULL;
    }
    if (!ok) {
        fa_result_status(result, name, fa_fail(FA_ERR_OUT_OF_MEMORY, "stage02: no host memory"));
    } else {
        for (int64_t i = 0; i < m * n; ++i)
            want[i] = fx->c[i];
        ok = run_matmul(version, impl, name, bf16 ? a16 : (const void *)fx->a,
                        bf16 ? b16 : (const void *)b, m, n, k, layout, 0, want, NULL, result);
    }
    free(bt);
    free(want);
    free(a16);
    free(b16);
    return ok;
}

static fa_status matmul_written(int version, void *context);
static bool matmul_run(int version, void *context, fa_result *result);

/** M7's versions, walked by the rules of versions.h. */
static const milestone_versions matmul_walk = {MATMUL_VERSIONS, matmul_version_names,
                                               matmul_written, matmul_run};

static fa_status matmul_written(int version, void *context)
{
    const matmul_context *ctx = context;
    return matmul_launch(version, ctx->impl, NULL, NULL, NULL, 0, 0, 0, FA_B_ROW_MAJOR, 0);
}

/**
 * Every case of one version: the fixtures in both layouts, then the random
 * cases in both layouts ("v3 register_blocked NT random 14 pointers off
 * alignment 65x72x64"), or the one case of the problem flags, NN
 * ("v2 smem_tiled NN flags 100x30x7").
 */
static bool matmul_run(int version, void *context, fa_result *result)
{
    matmul_context *ctx = context;
    const fa_run_options *options = ctx->options;
    const bool bf16 = matmul_version_is_bf16(version);
    char label[LABEL_CAP], name[CASE_NAME_CAP];
    versions_label(&matmul_walk, version, label, sizeof label);
    for (int f = 0; f < matmul_fixture_count && wants_fixtures(options); ++f)
        for (int l = 0; l < 2; ++l) {
            const fa_b_layout layout = (fa_b_layout)l;
            snprintf(name, sizeof name, "%s %s fixture '%s'", label, layout_name(layout),
                     matmul_fixtures[f].name);
            if (fa_case_begin(result, options, name) &&
                !matmul_fixture_case(version, ctx->impl, name, &matmul_fixtures[f], layout,
                                     result))
                return false;
        }
    const bool flags = !wants_fixtures(options);
    const int first = flags ? MATMUL_FLAGS_CASE : 0;
    const int end = flags ? MATMUL_FLAGS_CASE + 1 : MATMUL_CASE_COUNT;
    for (int i = first; i < end; ++i) {
        const matmul_case *spec = flags ? &ctx->flags_case : &MATMUL_CASES[i];
        if (options->quick && spec->large)
            continue;
        for (int l = 0; l < (flags ? 1 : 2); ++l) {
            const fa_b_layout layout = (fa_b_layout)l;
            if (flags)
                snprintf(name, sizeof name, "%s %s flags %lldx%lldx%lld", label,
                         layout_name(layout), (long long)spec->m, (long long)spec->n,
                         (long long)spec->k);
            else
                snprintf(name, sizeof name, "%s %s random %d %s", label, layout_name(layout), i,
                         spec->label);
            if (!fa_case_begin(result, options, name))
                continue;
            if (!fa_result_status(result, name,
                                  matmul_validate_sizes(matmul_launcher_name(version), spec->m,
                                                        spec->n, spec->k, layout,
                                                        bf16 ? 2 : 4)))
                return false;
            const matmul_operands *o = NULL;
            if (!fa_result_status(result, name, operands_of(ctx, i, layout, bf16, &o)))
                return false;
            if (!run_matmul(version, ctx->impl, name, bf16 ? (const void *)o->a16 : o->a,
                            bf16 ? (const void *)o->b16 : o->b, spec->m, spec->n, spec->k,
                            layout, spec->offset, o->want, o->bound, result))
                return false;
        }
    }
    return true;
}

static void check_matmul(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    enum { SLOTS = (MATMUL_CASE_COUNT + 1) * 2 * 2 };
    matmul_context ctx = {impl, options, {"flags", 0, 0, 0, FA_FILL_GAUSSIAN, false, false, 0},
                          calloc(SLOTS, sizeof(matmul_operands))};
    ctx.flags_case.m = fa_problem_get(&options->problem, FA_PROBLEM_M, MATMUL_FLAG_M);
    ctx.flags_case.n = fa_problem_get(&options->problem, FA_PROBLEM_N, MATMUL_FLAG_N);
    ctx.flags_case.k = fa_problem_get(&options->problem, FA_PROBLEM_K, MATMUL_FLAG_K);
    if (ctx.operands == NULL) {
        fa_result_status(result, "the matmul cases",
                         fa_fail(FA_ERR_OUT_OF_MEMORY, "stage02: no host memory"));
        return;
    }
    versions_check(&matmul_walk, &ctx, options,
                   "NN and NT; fixtures bit for bit, fp32 random within gamma_K, tensor cores "
                   "within gamma_1.25K with u = 2^-23",
                   result);
    for (int s = 0; s < SLOTS; ++s)
        free_operands(&ctx.operands[s]);
    free(ctx.operands);
}

static fa_status probe_matmul(fa_impl impl, const fa_run_options *options)
{
    matmul_context ctx = {.impl = impl};
    return versions_probe(&matmul_walk, &ctx, options->version);
}

/**
 * Median time of one matmul, NN: the version asked (--version) or the most
 * advanced one written, at 2048^3 or at the flags' sizes.
 */
static fa_status time_matmul(fa_impl impl, const fa_run_options *options, double *milliseconds,
                             char *label, size_t cap)
{
    matmul_context ctx = {.impl = impl};
    const int version = versions_timed(&matmul_walk, &ctx, options);
    if (version == 0)
        return versions_probe(&matmul_walk, &ctx, options->version);
    const bool flags = options->problem.given != 0;
    const int64_t m = flags ? fa_problem_get(&options->problem, FA_PROBLEM_M, MATMUL_FLAG_M)
                            : MATMUL_TIMED_SIZE;
    const int64_t n = flags ? fa_problem_get(&options->problem, FA_PROBLEM_N, MATMUL_FLAG_N)
                            : MATMUL_TIMED_SIZE;
    const int64_t k = flags ? fa_problem_get(&options->problem, FA_PROBLEM_K, MATMUL_FLAG_K)
                            : MATMUL_TIMED_SIZE;
    const size_t element = matmul_version_is_bf16(version) ? sizeof(uint16_t) : sizeof(float);
    FA_TRY(matmul_validate_sizes(matmul_launcher_name(version), m, n, k, FA_B_ROW_MAJOR,
                                 (int)element));
    void *a = NULL, *b = NULL, *c = NULL;
    fa_status status = timing_array(&a, (size_t)(m * k) * element);
    if (status == FA_OK)
        status = timing_array(&b, (size_t)(k * n) * element);
    if (status == FA_OK)
        status = fa_device_alloc(&c, (size_t)(m * n) * sizeof(float));
    if (status == FA_OK) {
        matmul_timed_run run = {version, impl, a, b, c, m, n, k, FA_B_ROW_MAJOR};
        status = median_ms(matmul_timed, &run, milliseconds);
    }
    if (status == FA_OK) {
        char version_label[LABEL_CAP];
        versions_label(&matmul_walk, version, version_label, sizeof version_label);
        snprintf(label, cap, "%s %lldx%lldx%lld NN, %.1f TFLOP/s", version_label, (long long)m,
                 (long long)n, (long long)k,
                 2.0 * (double)m * (double)n * (double)k / (*milliseconds * 1e-3) / 1e12);
    }
    fa_device_free(a);
    fa_device_free(b);
    fa_device_free(c);
    return status;
}

/* ==== M8 transpose ========================================================================= */

/** Shapes: 1 x N, N x 1, around the 32 tile, odd, and large. */
static const int64_t TRANSPOSE_SHAPES[][2] = {
    {1, 1},   {1, 1000}, {1000, 1}, {31, 32},    {32, 32},     {33, 65},   {65, 33},
    {64, 96}, {7, 257},  {1, 100003}, {100003, 1}, {1025, 999}, {2049, 1537}, {4096, 4096},
};
enum {
    TRANSPOSE_QUICK_MAX = 200000, /**< shapes with more elements are skipped by --quick */
    TRANSPOSE_FLAG_ROWS = 1025,   /**< the flags' shape a flag leaves out */
    TRANSPOSE_FLAG_COLS = 999,
    TRANSPOSE_TIMED_SIZE = 4096   /**< the timing: 4096 x 4096, 64 MiB */
};

/** What the versions of M8 share in one check. */
typedef struct transpose_context {
    fa_impl impl;
    const fa_run_options *options;
} transpose_context;

/** Runs version @p version on a host matrix and judges the output bit for bit. */
static bool run_transpose(int version, fa_impl impl, const char *name, const float *in,
                          int64_t rows, int64_t cols, const double *want, fa_result *result)
{
    float *out = host_alloc(result, name, (size_t)(rows * cols) * sizeof(float));
    if (out == NULL)
        return false;
    int64_t overwritten = 0;
    const fa_status status =
        transpose_run_on_host(version, impl, in, rows, cols, out, &overwritten);
    const fa_shape shape = fa_shape_2d(cols, rows);
    const bool ok = judge(result, name, status, overwritten, "out", out, want, NULL, &shape);
    free(out);
    return ok;
}

/** The fixture @p fx, bit for bit ("v2 smem_tiled fixture '2x3 -> 3x2'"). */
static bool transpose_fixture_case(int version, fa_impl impl, const char *name,
                                   const transpose_fixture *fx, fa_result *result)
{
    const int64_t count = fx->rows * fx->cols;
    double *want = host_alloc(result, name, (size_t)count * sizeof(double));
    if (want == NULL)
        return false;
    for (int64_t i = 0; i < count; ++i)
        want[i] = fx->out[i];
    const bool ok = run_transpose(version, impl, name, fx->in, fx->rows, fx->cols, want, result);
    free(want);
    return ok;
}

/** A random matrix of case @p index (the same for both versions), against fa_ref_transpose(). */
static bool transpose_random_case(int version, fa_impl impl, const char *name, int index,
                                  int64_t rows, int64_t cols, const fa_run_options *options,
                                  fa_result *result)
{
    float *in = host_alloc(result, name, (size_t)(rows * cols) * sizeof(float));
    double *want =
        in == NULL ? NULL : host_alloc(result, name, (size_t)(rows * cols) * sizeof(double));
    bool ok = want != NULL;
    if (ok) {
        fa_rng rng;
        case_rng(&rng, options, 8, 0, index);
        fa_fill(in, rows * cols, FA_FILL_GAUSSIAN, 1.0, &rng);
        ok = fa_result_status(result, name, fa_ref_transpose(in, rows, cols, want)) &&
             run_transpose(version, impl, name, in, rows, cols, want, result);
    }
    free(in);
    free(want);
    return ok;
}

static fa_status transpose_written(int version, void *context);
static bool transpose_run(int version, void *context, fa_result *result);

/** M8's versions, walked by the rules of versions.h. */
static const milestone_versions transpose_walk = {TRANSPOSE_VERSIONS, transpose_version_names,
                                                  transpose_written, transpose_run};

static fa_status transpose_written(int version, void *context)
{
    const transpose_context *ctx = context;
    return transpose_launch(version, ctx->impl, NULL, NULL, 0, 0, 0);
}

/**
 * Every case of one version: the fixtures, then the random shapes
 * ("v1 naive random 5 33x65"), or the one shape of the problem flags
 * ("v1 naive flags 3x5").
 */
static bool transpose_run(int version, void *context, fa_result *result)
{
    const transpose_context *ctx = context;
    const fa_run_options *options = ctx->options;
    char label[LABEL_CAP], name[CASE_NAME_CAP];
    versions_label(&transpose_walk, version, label, sizeof label);
    for (int f = 0; f < transpose_fixture_count && wants_fixtures(options); ++f) {
        snprintf(name, sizeof name, "%s fixture '%s'", label, transpose_fixtures[f].name);
        if (fa_case_begin(result, options, name) &&
            !transpose_fixture_case(version, ctx->impl, name, &transpose_fixtures[f], result))
            return false;
    }
    const bool flags = !wants_fixtures(options);
    const int count = flags ? 1 : FA_COUNT_OF(TRANSPOSE_SHAPES);
    for (int i = 0; i < count; ++i) {
        const int64_t rows = flags ? fa_problem_get(&options->problem, FA_PROBLEM_ROWS,
                                                    TRANSPOSE_FLAG_ROWS)
                                   : TRANSPOSE_SHAPES[i][0];
        const int64_t cols = flags ? fa_problem_get(&options->problem, FA_PROBLEM_COLS,
                                                    TRANSPOSE_FLAG_COLS)
                                   : TRANSPOSE_SHAPES[i][1];
        if (!flags && options->quick && rows * cols > TRANSPOSE_QUICK_MAX)
            continue;
        if (flags)
            snprintf(name, sizeof name, "%s flags %lldx%lld", label, (long long)rows,
                     (long long)cols);
        else
            snprintf(name, sizeof name, "%s random %d %lldx%lld", label, i, (long long)rows,
                     (long long)cols);
        if (!fa_case_begin(result, options, name))
            continue;
        if (!fa_result_status(result, name,
                              transpose_validate_sizes(transpose_launcher_name(version), rows,
                                                       cols)) ||
            !transpose_random_case(version, ctx->impl, name,
                                   flags ? FA_COUNT_OF(TRANSPOSE_SHAPES) : i, rows, cols, options,
                                   result))
            return false;
    }
    return true;
}

static void check_transpose(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    transpose_context ctx = {impl, options};
    versions_check(&transpose_walk, &ctx, options, "bit for bit", result);
}

static fa_status probe_transpose(fa_impl impl, const fa_run_options *options)
{
    transpose_context ctx = {impl, NULL};
    return versions_probe(&transpose_walk, &ctx, options->version);
}

/**
 * Median time of one transpose: the version asked (--version) or the most
 * advanced one written, at 4096 x 4096 or at the flags' shape.
 */
static fa_status time_transpose(fa_impl impl, const fa_run_options *options, double *milliseconds,
                                char *label, size_t cap)
{
    transpose_context ctx = {impl, options};
    const int version = versions_timed(&transpose_walk, &ctx, options);
    if (version == 0)
        return versions_probe(&transpose_walk, &ctx, options->version);
    const bool flags = options->problem.given != 0;
    const int64_t rows = flags ? fa_problem_get(&options->problem, FA_PROBLEM_ROWS,
                                                TRANSPOSE_FLAG_ROWS)
                               : TRANSPOSE_TIMED_SIZE;
    const int64_t cols = flags ? fa_problem_get(&options->problem, FA_PROBLEM_COLS,
                                                TRANSPOSE_FLAG_COLS)
                               : TRANSPOSE_TIMED_SIZE;
    FA_TRY(transpose_validate_sizes(transpose_launcher_name(version), rows, cols));
    const size_t bytes = (size_t)(rows * cols) * sizeof(float);
    void *in = NULL, *out = NULL;
    fa_status status = timing_array(&in, bytes);
    if (status == FA_OK)
        status = fa_device_alloc(&out, bytes);
    if (status == FA_OK) {
        transpose_timed_run run = {version, impl, in, out, rows, cols};
        status = median_ms(transpose_timed, &run, milliseconds);
    }
    if (status == FA_OK) {
        char version_label[LABEL_CAP];
        versions_label(&transpose_walk, version, version_label, sizeof version_label);
        snprintf(label, cap, "%s %lldx%lld fp32, %.0f GB/s", version_label, (long long)rows,
                 (long long)cols, 2.0 * (double)bytes / (*milliseconds * 1e-3) / 1e9);
    }
    fa_device_free(in);
    fa_device_free(out);
    return status;
}

/* ==== the stage ============================================================================= */

static const fa_milestone_check checks[] = {
    {6, probe_dot, check_dot, time_dot, false},
    {7, probe_matmul, check_matmul, time_matmul, false},
    {8, probe_transpose, check_transpose, time_transpose, false},
};

const fa_stage_desc stage02 = {2, checks, FA_COUNT_OF(checks), stage02_bench};
