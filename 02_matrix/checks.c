/**
 * @file checks.c
 * @brief The GPU checks of M6 dot product, M7 matmul and M8 transpose.
 *
 * Each check runs the hand-computed fixtures (compared bit for bit), then
 * random cases of awkward sizes (1, tile - 1, tile, tile + 1, non-multiples,
 * misaligned pointers, large) against the double reference under the bound
 * of the kernel's algorithm. Every output buffer is poisoned before the
 * launch (an element the kernel forgot keeps the poison and fails), followed
 * by poisoned canary bytes that must survive (a write past the end fails),
 * and every input is followed by canary NaNs (a read past the end turns an
 * output into NaN).
 */
#include "checks.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa_check.h"
#include "fa_device.h"
#include "fa_half.h"
#include "fa_reference.h"
#include "fa_rng.h"
#include "fa_timing.h"
#include "fixtures.h"
#include "matrix.h"
#include "model.h"

/** Poisoned bytes after every device buffer (inputs: read as NaN; outputs: must stay poison). */
enum { CANARY_BYTES = 256 };
/** Name buffer of one case. */
enum { CASE_NAME = 96 };

/* ---- device buffers with canaries --------------------------------------------------------- */

/**
 * Allocates @p offset + @p bytes + CANARY_BYTES of poison and uploads @p host
 * (@p bytes) at byte @p offset; *data receives the address of the data.
 * Offsets that are not multiples of 16 exercise the unaligned paths.
 */
static fa_status device_input(void **base, void **data, const void *host, size_t bytes,
                              size_t offset)
{
    const size_t total = offset + bytes + CANARY_BYTES;
    FA_TRY(fa_device_alloc(base, total));
    *data = (char *)*base + offset;
    fa_status status = fa_device_poison(*base, total);
    if (status == FA_OK && bytes > 0)
        status = fa_upload(*data, host, bytes);
    if (status != FA_OK) {
        fa_device_free(*base);
        *base = *data = NULL;
    }
    return status;
}

/** Allocates @p bytes + CANARY_BYTES of device memory, all poison. */
static fa_status device_output(void **data, size_t bytes)
{
    FA_TRY(fa_device_alloc(data, bytes + CANARY_BYTES));
    const fa_status status = fa_device_poison(*data, bytes + CANARY_BYTES);
    if (status != FA_OK) {
        fa_device_free(*data);
        *data = NULL;
    }
    return status;
}

/** *intact = the CANARY_BYTES after the first @p bytes of @p data still hold poison. */
static fa_status canary_intact(const void *data, size_t bytes, bool *intact)
{
    unsigned char tail[CANARY_BYTES];
    FA_TRY(fa_download(tail, (const char *)data + bytes, sizeof tail));
    *intact = true;
    for (size_t i = 0; i < sizeof tail; ++i)
        if (tail[i] != FA_POISON_BYTE)
            *intact = false;
    return FA_OK;
}

/** Marks @p result failed with a printf-style detail. Returns false. */
static bool fail_case(fa_result *result, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static bool fail_case(fa_result *result, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    result->outcome = FA_OUTCOME_FAILED;
    vsnprintf(result->detail, sizeof result->detail, format, args);
    va_end(args);
    return false;
}

/** Puts "<passed> passed; " before the detail of @p result (cut at the end if too long). */
static void prefix_detail(fa_result *result, const char *passed)
{
    char detail[FA_RESULT_DETAIL];
    const int written = snprintf(detail, sizeof detail, "%s passed; ", passed);
    if (written < 0 || (size_t)written >= sizeof detail)
        return;
    const size_t room = sizeof detail - 1 - (size_t)written;
    size_t rest = strlen(result->detail);
    rest = rest < room ? rest : room;
    memcpy(detail + written, result->detail, rest);
    detail[(size_t)written + rest] = '\0';
    memcpy(result->detail, detail, sizeof detail);
}

/** Downloads @p count floats and the canary after them; judges both. */
static bool judge_output(fa_result *result, const char *name, const float *device, int64_t count,
                         const double *want, const double *bound, const fa_shape *shape)
{
    float *got = malloc((size_t)(count > 0 ? count : 1) * sizeof *got);
    bool intact = false;
    fa_status status = got == NULL ? fa_fail(FA_ERR_OUT_OF_MEMORY, "host copy of %s", name)
                                   : fa_download(got, device, (size_t)count * sizeof *got);
    if (status == FA_OK)
        status = canary_intact(device, (size_t)count * sizeof *got, &intact);
    bool ok = fa_result_status(result, name, status);
    if (ok && count > 0)
        ok = fa_result_judge(result, name, got, want, bound, shape);
    if (ok && !intact)
        ok = fail_case(result, "case '%s': the kernel wrote past the end of its output", name);
    free(got);
    return ok;
}

/** Host array of @p n elements of @p dtype holding @p values rounded to it. */
static void *to_dtype(const float *values, int64_t n, fa_dtype dtype)
{
    void *out = malloc((size_t)(n > 0 ? n : 1) * (size_t)fa_dtype_size(dtype));
    if (out != NULL)
        for (int64_t i = 0; i < n; ++i)
            fa_store(out, dtype, i, values[i]);
    return out;
}

/** Rounds every value to @p dtype in place (so fp32 and narrow copies hold the same numbers). */
static void round_all(float *values, int64_t n, fa_dtype dtype)
{
    for (int64_t i = 0; i < n; ++i)
        values[i] = fa_round_to(dtype, values[i]);
}

/** [cols][rows] = transpose of [rows][cols] (host, exact). */
static float *transposed(const float *in, int64_t rows, int64_t cols)
{
    float *out = malloc((size_t)(rows * cols > 0 ? rows * cols : 1) * sizeof *out);
    if (out != NULL)
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c)
                out[c * rows + r] = in[r * cols + c];
    return out;
}

/* ==== M6 dot product ======================================================================= */

typedef fa_status (*dot_launcher)(const void *, const void *, fa_dtype, int64_t, float *, float *,
                                  cudaStream_t);
static const dot_launcher dot_launchers[] = {ref_dot_product, learner_dot_product};

static const fa_dtype dot_dtypes[] = {FA_F32, FA_BF16, FA_F16};
enum { DOT_DTYPES = (int)(sizeof dot_dtypes / sizeof dot_dtypes[0]) };

/** Lengths around every boundary of the partition: chunk, warp, block, full grid, in-flight loop. */
static const int64_t dot_lengths[] = {1,    2,    3,     4,     5,      7,      8,       9,
                                      255,  256,  257,   1023,  1024,   1025,   2047,    2048,
                                      4099, 65537, 262145, 1048583, 2097169, 4194311, 9000011};
/** Lengths above this are skipped by --quick. */
enum { DOT_QUICK_MAX = 100000 };

/**
 * Runs the dot product twice on device copies of x and y (host arrays of
 * @p dtype) and judges the first result; the second must have the same bits.
 */
static bool run_dot(fa_result *result, fa_impl impl, const char *name, const void *x,
                    const void *y, fa_dtype dtype, int64_t n, double want, const double *bound)
{
    const size_t bytes = (size_t)n * (size_t)fa_dtype_size(dtype);
    void *x_base = NULL, *y_base = NULL, *x_dev = NULL, *y_dev = NULL;
    void *partials = NULL, *out = NULL;
    float first = 0.0f, second = 0.0f;
    fa_status status = device_input(&x_base, &x_dev, x, bytes, 0);
    if (status == FA_OK)
        status = device_input(&y_base, &y_dev, y, bytes, 0);
    if (status == FA_OK)
        status = device_output(&partials, DOT_PRODUCT_MAX_PARTIALS * sizeof(float));
    if (status == FA_OK)
        status = device_output(&out, sizeof(float));
    bool ok = fa_result_status(result, name, status);
    if (ok)
        ok = fa_result_status(result, name,
                              dot_launchers[impl](x_dev, y_dev, dtype, n, partials, out, 0));
    const fa_shape shape = fa_shape_1d(1);
    if (ok)
        ok = judge_output(result, name, out, 1, &want, bound, &shape);
    if (ok)
        ok = fa_result_status(result, name, fa_download(&first, out, sizeof first));
    if (ok)
        ok = fa_result_status(result, name,
                              dot_launchers[impl](x_dev, y_dev, dtype, n, partials, out, 0));
    if (ok)
        ok = fa_result_status(result, name, fa_download(&second, out, sizeof second));
    if (ok && memcmp(&first, &second, sizeof first) != 0)
        ok = fail_case(result, "case '%s': not deterministic, %.9g then %.9g from the same inputs",
                       name, first, second);
    fa_device_free(x_base);
    fa_device_free(y_base);
    fa_device_free(partials);
    fa_device_free(out);
    return ok;
}

static fa_status probe_dot(fa_impl impl)
{
    return dot_launchers[impl](NULL, NULL, FA_F32, 0, NULL, NULL, 0);
}

/** Fixtures (bitwise) of one dtype. */
static bool dot_fixtures_pass(fa_result *result, fa_impl impl, fa_dtype dtype, int *cases)
{
    char name[CASE_NAME];
    for (int f = 0; f < dot_fixture_count; ++f) {
        const dot_fixture *fx = &dot_fixtures[f];
        snprintf(name, sizeof name, "%s %s", fa_dtype_name(dtype), fx->name);
        void *x = to_dtype(fx->x, fx->n, dtype), *y = to_dtype(fx->y, fx->n, dtype);
        bool ok = x != NULL && y != NULL;
        if (!ok)
            fail_case(result, "case '%s': out of host memory", name);
        if (ok)
            ok = run_dot(result, impl, name, x, y, dtype, fx->n, fx->expected, NULL);
        free(x);
        free(y);
        if (!ok)
            return false;
        ++*cases;
    }
    float *xf = malloc(DOT_LONG_FIXTURE_N * sizeof *xf), *yf = malloc(DOT_LONG_FIXTURE_N * sizeof *yf);
    void *x = NULL, *y = NULL;
    bool ok = xf != NULL && yf != NULL;
    if (ok) {
        dot_long_fixture(xf, yf, DOT_LONG_FIXTURE_N);
        x = to_dtype(xf, DOT_LONG_FIXTURE_N, dtype);
        y = to_dtype(yf, DOT_LONG_FIXTURE_N, dtype);
        ok = x != NULL && y != NULL;
    }
    snprintf(name, sizeof name, "%s long integer pattern (n = %d)", fa_dtype_name(dtype),
             DOT_LONG_FIXTURE_N);
    if (!ok)
        fail_case(result, "case '%s': out of host memory", name);
    else
        ok = run_dot(result, impl, name, x, y, dtype, DOT_LONG_FIXTURE_N, DOT_LONG_FIXTURE_SUM,
                     NULL);
    free(xf);
    free(yf);
    free(x);
    free(y);
    *cases += ok;
    return ok;
}

/** Random gaussian (and one adversarial) vectors of one dtype, judged by gamma_depth. */
static bool dot_random_pass(fa_result *result, fa_impl impl, fa_dtype dtype,
                            const fa_run_options *options, int *cases)
{
    fa_rng rng;
    fa_rng_seed(&rng, options->seed, 600 + (uint64_t)dtype);
    char name[CASE_NAME];
    const int count = (int)(sizeof dot_lengths / sizeof dot_lengths[0]);
    for (int c = 0; c <= count; ++c) {
        /* The extra last case: adversarial magnitudes at an awkward length. */
        const bool adversarial = c == count;
        const int64_t n = adversarial ? 70001 : dot_lengths[c];
        if (options->quick && n > DOT_QUICK_MAX)
            continue;
        snprintf(name, sizeof name, "%s %s n = %lld", fa_dtype_name(dtype),
                 adversarial ? "adversarial" : "gaussian", (long long)n);
        float *xf = malloc((size_t)n * sizeof *xf), *yf = malloc((size_t)n * sizeof *yf);
        void *x = NULL, *y = NULL;
        bool ok = xf != NULL && yf != NULL;
        if (ok) {
            fa_fill(xf, n, adversarial ? FA_FILL_ADVERSARIAL : FA_FILL_GAUSSIAN, 1.0, &rng);
            fa_fill(yf, n, adversarial ? FA_FILL_ADVERSARIAL : FA_FILL_GAUSSIAN, 1.0, &rng);
            x = to_dtype(xf, n, dtype);
            y = to_dtype(yf, n, dtype);
            ok = x != NULL && y != NULL;
        }
        if (!ok) {
            fail_case(result, "case '%s': out of host memory", name);
        } else {
            double abs_sum = 0.0;
            const double want = fa_ref_dot(x, y, dtype, n, &abs_sum);
            const double bound = model_dot_product_bound(n, dtype, abs_sum);
            ok = run_dot(result, impl, name, x, y, dtype, n, want, &bound);
        }
        free(xf);
        free(yf);
        free(x);
        free(y);
        if (!ok)
            return false;
        ++*cases;
    }
    return true;
}

static void check_dot(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    int cases = 0;
    for (int d = 0; d < DOT_DTYPES; ++d) {
        if (!dot_fixtures_pass(result, impl, dot_dtypes[d], &cases))
            return;
        if (!dot_random_pass(result, impl, dot_dtypes[d], options, &cases))
            return;
    }
    fa_result_pass(result, "%d cases (fp32, bf16, fp16; fixtures bitwise, random within "
                           "gamma_depth, each run twice with identical bits)", cases);
}

/** Context of a timed dot product. */
typedef struct dot_timing {
    dot_launcher launch;
    const void *x, *y;
    int64_t n;
    float *partials, *out;
} dot_timing;

static fa_status dot_work(void *context, int rep, cudaStream_t stream)
{
    (void)rep;
    const dot_timing *t = context;
    return t->launch(t->x, t->y, FA_F32, t->n, t->partials, t->out, stream);
}

/** Elements of the timed dot product: 64 MiB per fp32 vector (--quick: 256 KiB). */
enum { DOT_TIMED_N = 1 << 24, DOT_TIMED_N_QUICK = 1 << 16 };

static fa_status time_dot(fa_impl impl, const fa_run_options *options, double *milliseconds,
                          char *label, size_t cap)
{
    const int64_t n = options->quick ? DOT_TIMED_N_QUICK : DOT_TIMED_N;
    const size_t bytes = (size_t)n * sizeof(float);
    void *x = NULL, *y = NULL, *partials = NULL, *out = NULL;
    fa_status status = fa_device_alloc(&x, bytes);
    if (status == FA_OK)
        status = fa_device_alloc(&y, bytes);
    if (status == FA_OK)
        status = fa_device_alloc(&partials, DOT_PRODUCT_MAX_PARTIALS * sizeof(float));
    if (status == FA_OK)
        status = fa_device_alloc(&out, sizeof(float));
    /* 0x3C3C3C3C is about 0.0115 as fp32: not zeros, and the sum stays finite. */
    if (status == FA_OK)
        status = cudaMemset(x, 0x3C, bytes) == cudaSuccess && cudaMemset(y, 0x3C, bytes) == cudaSuccess
                     ? FA_OK
                     : fa_fail(FA_ERR_CUDA, "cudaMemset of the dot product inputs failed");
    if (status == FA_OK) {
        dot_timing t = {dot_launchers[impl], x, y, n, partials, out};
        const fa_timing_options timing = fa_timing_defaults();
        fa_stats stats;
        status = fa_time_gpu(dot_work, &t, &timing, &stats);
        if (status == FA_OK) {
            *milliseconds = stats.median;
            snprintf(label, cap, "fp32 n = %lld", (long long)n);
        }
    }
    fa_device_free(x);
    fa_device_free(y);
    fa_device_free(partials);
    fa_device_free(out);
    return status;
}

/* ==== M7 matmul ============================================================================ */

typedef fa_status (*matmul_fp32_launcher)(const float *, const float *, float *, int64_t, int64_t,
                                          int64_t, fa_b_layout, cudaStream_t);
typedef fa_status (*matmul_bf16_launcher)(const uint16_t *, const uint16_t *, float *, int64_t,
                                          int64_t, int64_t, fa_b_layout, cudaStream_t);

/** One version of M7: fp32 launchers, or (tensor cores) bf16 launchers; indexed by fa_impl. */
typedef struct matmul_version {
    const char *name;
    matmul_fp32_launcher fp32[2];
    matmul_bf16_launcher bf16[2];
} matmul_version;

static const matmul_version matmul_versions[] = {
    {"matmul_naive", {ref_matmul_naive, learner_matmul_naive}, {NULL, NULL}},
    {"matmul_smem_tiled", {ref_matmul_smem_tiled, learner_matmul_smem_tiled}, {NULL, NULL}},
    {"matmul_register_blocked",
     {ref_matmul_register_blocked, learner_matmul_register_blocked},
     {NULL, NULL}},
    {"matmul_mma_bf16", {NULL, NULL}, {ref_matmul_mma_bf16, learner_matmul_mma_bf16}},
};
enum { MATMUL_VERSIONS = (int)(sizeof matmul_versions / sizeof matmul_versions[0]) };

static bool is_tensor_core(const matmul_version *v)
{
    return v->bf16[0] != NULL;
}

/** Launches version @p v; a and b are fp32 or bf16 device arrays as the version reads. */
static fa_status launch_matmul(const matmul_version *v, fa_impl impl, const void *a,
                               const void *b, float *c, int64_t m, int64_t n, int64_t k,
                               fa_b_layout layout, cudaStream_t stream)
{
    if (is_tensor_core(v))
        return v->bf16[impl](a, b, c, m, n, k, layout, stream);
    return v->fp32[impl](a, b, c, m, n, k, layout, stream);
}

/** A random case: sizes, fill, and how it is judged. */
typedef struct matmul_case {
    const char *label;
    int64_t m, n, k;
    fa_fill_kind fill;
    bool exact;      /**< small integers: compared bit for bit */
    bool large;      /**< skipped by --quick */
    int offset;      /**< elements by which a and b are shifted off 16-byte alignment */
} matmul_case;

static const matmul_case matmul_cases[] = {
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
enum { MATMUL_CASES = (int)(sizeof matmul_cases / sizeof matmul_cases[0]) };

/** Inputs, reference and bound of one case for one kind of version. */
typedef struct matmul_operands {
    float *a, *b;       /**< fp32 values (bf16-representable in the tensor-core set) */
    uint16_t *a16, *b16; /**< the bf16 bits (tensor-core set only) */
    double *want;       /**< [m][n] */
    double *bound;      /**< [m][n]; NULL (bitwise) or zeros (tensor cores) when exact */
} matmul_operands;

/** A case prepared for one layout: operands for the fp32 versions and for the tensor cores. */
typedef struct matmul_prepared {
    const matmul_case *spec;
    fa_b_layout layout;
    matmul_operands fp32, tensor_core;
} matmul_prepared;

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

/** Fills operands: @p values_a / @p values_b rounded to bf16 when @p tensor_core. */
static bool prepare_operands(matmul_operands *o, const matmul_case *spec, fa_b_layout layout,
                             const float *values_a, const float *values_b, bool tensor_core)
{
    const int64_t m = spec->m, n = spec->n, k = spec->k;
    o->a = malloc((size_t)(m * k) * sizeof(float));
    o->b = malloc((size_t)(k * n) * sizeof(float));
    o->want = malloc((size_t)(m * n) * sizeof(double));
    double *abs_c = malloc((size_t)(m * n) * sizeof(double));
    if (o->a == NULL || o->b == NULL || o->want == NULL || abs_c == NULL) {
        free(abs_c);
        return false;
    }
    memcpy(o->a, values_a, (size_t)(m * k) * sizeof(float));
    memcpy(o->b, values_b, (size_t)(k * n) * sizeof(float));
    if (tensor_core) {
        round_all(o->a, m * k, FA_BF16);
        round_all(o->b, k * n, FA_BF16);
        o->a16 = to_dtype(o->a, m * k, FA_BF16);
        o->b16 = to_dtype(o->b, k * n, FA_BF16);
        if (o->a16 == NULL || o->b16 == NULL) {
            free(abs_c);
            return false;
        }
    }
    fa_ref_matmul(o->a, o->b, FA_F32, layout, m, n, k, o->want, abs_c);
    if (spec->exact && tensor_core) {
        /* Exact, but judged by value: the sign of a sum that is exactly zero is not
         * specified for the tensor cores, and -0 would fail a bitwise comparison. */
        o->bound = calloc((size_t)(m * n), sizeof(double));
        if (o->bound == NULL) {
            free(abs_c);
            return false;
        }
    } else if (!spec->exact) {
        o->bound = malloc((size_t)(m * n) * sizeof(double));
        if (o->bound == NULL) {
            free(abs_c);
            return false;
        }
        for (int64_t i = 0; i < m * n; ++i)
            o->bound[i] = tensor_core ? model_matmul_tensor_core_bound(k, abs_c[i])
                                      : model_matmul_fp32_bound(k, abs_c[i]);
    }
    free(abs_c);
    return true;
}

/** Draws the inputs of every case (seeded), for both layouts. Returns the count or -1. */
static int prepare_matmul_cases(matmul_prepared *out, const fa_run_options *options)
{
    fa_rng rng;
    fa_rng_seed(&rng, options->seed, 700);
    int count = 0;
    for (int c = 0; c < MATMUL_CASES; ++c) {
        const matmul_case *spec = &matmul_cases[c];
        if (options->quick && spec->large)
            continue;
        const int64_t m = spec->m, n = spec->n, k = spec->k;
        const double scale = spec->fill == FA_FILL_SMALL_INT ? 4.0 : 1.0;
        float *a = malloc((size_t)(m * k) * sizeof *a), *b = malloc((size_t)(k * n) * sizeof *b);
        if (a == NULL || b == NULL) {
            free(a);
            free(b);
            return -1;
        }
        fa_fill(a, m * k, spec->fill, scale, &rng);
        fa_fill(b, k * n, spec->fill, scale, &rng); /* read as [k][n] (NN) or [n][k] (NT) */
        for (int l = 0; l < 2; ++l) {
            matmul_prepared *p = &out[count++];
            memset(p, 0, sizeof *p);
            p->spec = spec;
            p->layout = l == 0 ? FA_B_ROW_MAJOR : FA_B_TRANSPOSED;
            if (!prepare_operands(&p->fp32, spec, p->layout, a, b, false) ||
                !prepare_operands(&p->tensor_core, spec, p->layout, a, b, true)) {
                free(a);
                free(b);
                return -1;
            }
        }
        free(a);
        free(b);
    }
    return count;
}

/** Uploads, launches, downloads and judges one product. */
static bool run_matmul(fa_result *result, const matmul_version *v, fa_impl impl,
                       const char *name, const void *a, const void *b, size_t element_size,
                       int64_t m, int64_t n, int64_t k, fa_b_layout layout, int offset,
                       const double *want, const double *bound)
{
    void *a_base = NULL, *b_base = NULL, *a_dev = NULL, *b_dev = NULL, *c_dev = NULL;
    const size_t shift = (size_t)offset * element_size;
    fa_status status =
        device_input(&a_base, &a_dev, a, (size_t)(m * k) * element_size, shift);
    if (status == FA_OK)
        status = device_input(&b_base, &b_dev, b, (size_t)(k * n) * element_size, shift);
    if (status == FA_OK)
        status = device_output(&c_dev, (size_t)(m * n) * sizeof(float));
    bool ok = fa_result_status(result, name, status);
    if (ok)
        ok = fa_result_status(result, name,
                              launch_matmul(v, impl, a_dev, b_dev, c_dev, m, n, k, layout, 0));
    const fa_shape shape = fa_shape_2d(m, n);
    if (ok)
        ok = judge_output(result, name, c_dev, m * n, want, bound, &shape);
    fa_device_free(a_base);
    fa_device_free(b_base);
    fa_device_free(c_dev);
    return ok;
}

static const char *layout_name(fa_b_layout layout)
{
    return layout == FA_B_ROW_MAJOR ? "NN" : "NT";
}

/** The fixtures of one version, NN and NT, bit for bit. */
static bool matmul_fixtures_pass(fa_result *result, const matmul_version *v, fa_impl impl,
                                 int *cases)
{
    char name[CASE_NAME];
    for (int f = 0; f < matmul_fixture_count; ++f) {
        const matmul_fixture *fx = &matmul_fixtures[f];
        const int64_t m = fx->m, n = fx->n, k = fx->k;
        for (int l = 0; l < 2; ++l) {
            const fa_b_layout layout = l == 0 ? FA_B_ROW_MAJOR : FA_B_TRANSPOSED;
            snprintf(name, sizeof name, "%s %s %s", v->name, layout_name(layout), fx->name);
            float *bt = NULL; /* B^T for NT */
            const float *b = fx->b;
            if (layout == FA_B_TRANSPOSED && k * n > 0)
                b = bt = transposed(fx->b, k, n);
            double *want = malloc((size_t)(m * n > 0 ? m * n : 1) * sizeof *want);
            void *a16 = NULL, *b16 = NULL;
            bool ok = want != NULL && (b != NULL || k * n == 0);
            if (ok && is_tensor_core(v)) {
                a16 = to_dtype(fx->a, m * k, FA_BF16);
                b16 = to_dtype(b, k * n, FA_BF16);
                ok = a16 != NULL && b16 != NULL;
            }
            if (!ok)
                fail_case(result, "case '%s': out of host memory", name);
            if (ok) {
                for (int64_t i = 0; i < m * n; ++i)
                    want[i] = fx->c[i];
                ok = is_tensor_core(v)
                         ? run_matmul(result, v, impl, name, a16, b16, sizeof(uint16_t), m, n, k,
                                      layout, 0, want, NULL)
                         : run_matmul(result, v, impl, name, fx->a, b, sizeof(float), m, n, k,
                                      layout, 0, want, NULL);
            }
            free(bt);
            free(want);
            free(a16);
            free(b16);
            if (!ok)
                return false;
            ++*cases;
        }
    }
    return true;
}

/** The random cases of one version. */
static bool matmul_random_pass(fa_result *result, const matmul_version *v, fa_impl impl,
                               const matmul_prepared *prepared, int count, int *cases)
{
    char name[CASE_NAME];
    for (int p = 0; p < count; ++p) {
        const matmul_prepared *c = &prepared[p];
        const matmul_case *s = c->spec;
        snprintf(name, sizeof name, "%s %s %s", v->name, layout_name(c->layout), s->label);
        const bool ok =
            is_tensor_core(v)
                ? run_matmul(result, v, impl, name, c->tensor_core.a16, c->tensor_core.b16,
                             sizeof(uint16_t), s->m, s->n, s->k, c->layout, s->offset,
                             c->tensor_core.want, c->tensor_core.bound)
                : run_matmul(result, v, impl, name, c->fp32.a, c->fp32.b, sizeof(float), s->m,
                             s->n, s->k, c->layout, s->offset, c->fp32.want, c->fp32.bound);
        if (!ok)
            return false;
        ++*cases;
    }
    return true;
}

static fa_status probe_matmul(fa_impl impl)
{
    return matmul_versions[0].fp32[impl](NULL, NULL, NULL, 0, 0, 0, FA_B_ROW_MAJOR, 0);
}

/**
 * Versions in order; the first that is not implemented or fails ends the
 * check, and the detail names the versions that passed before it.
 */
static void check_matmul(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    matmul_prepared *prepared = calloc(2 * MATMUL_CASES, sizeof *prepared);
    const int count = prepared == NULL ? -1 : prepare_matmul_cases(prepared, options);
    if (count < 0) {
        fa_result_status(result, "preparing the matmul cases",
                         fa_fail(FA_ERR_OUT_OF_MEMORY, "host memory for the matmul cases"));
    } else {
        int cases = 0, passed = 0;
        char done[FA_RESULT_DETAIL / 2] = "";
        for (; passed < MATMUL_VERSIONS; ++passed) {
            const matmul_version *v = &matmul_versions[passed];
            if (!matmul_fixtures_pass(result, v, impl, &cases) ||
                !matmul_random_pass(result, v, impl, prepared, count, &cases))
                break;
            const size_t used = strlen(done);
            snprintf(done + used, sizeof done - used, "%s%s", used > 0 ? ", " : "", v->name);
        }
        if (passed == MATMUL_VERSIONS) {
            fa_result_pass(result, "%d cases over 4 versions, NN and NT (fixtures bitwise; fp32 "
                                   "within gamma_K, tensor cores within gamma_1.25K, u = 2^-23)",
                           cases);
        } else if (passed > 0) {
            prefix_detail(result, done);
        }
    }
    if (prepared != NULL)
        for (int p = 0; p < 2 * MATMUL_CASES; ++p) {
            free_operands(&prepared[p].fp32);
            free_operands(&prepared[p].tensor_core);
        }
    free(prepared);
}

/** Context of a timed matmul. */
typedef struct matmul_timing {
    const matmul_version *version;
    fa_impl impl;
    const void *a, *b;
    float *c;
    int64_t size;
} matmul_timing;

static fa_status matmul_work(void *context, int rep, cudaStream_t stream)
{
    (void)rep;
    const matmul_timing *t = context;
    return launch_matmul(t->version, t->impl, t->a, t->b, t->c, t->size, t->size, t->size,
                         FA_B_ROW_MAJOR, stream);
}

/** Size of the timed square matmul (--quick, for the sanitizers: 256). */
enum { MATMUL_TIMED_SIZE = 2048, MATMUL_TIMED_SIZE_QUICK = 256 };

/** Times the most advanced version this implementation has (tensor cores first). */
static fa_status time_matmul(fa_impl impl, const fa_run_options *options, double *milliseconds,
                             char *label, size_t cap)
{
    int best = MATMUL_VERSIONS - 1;
    for (; best > 0; --best) {
        const matmul_version *v = &matmul_versions[best];
        if (launch_matmul(v, impl, NULL, NULL, NULL, 0, 0, 0, FA_B_ROW_MAJOR, 0) == FA_OK)
            break;
    }
    const matmul_version *v = &matmul_versions[best];
    const int64_t s = options->quick ? MATMUL_TIMED_SIZE_QUICK : MATMUL_TIMED_SIZE;
    const size_t in_bytes = (size_t)(s * s) * (is_tensor_core(v) ? sizeof(uint16_t) : sizeof(float));
    void *a = NULL, *b = NULL, *c = NULL;
    fa_status status = fa_device_alloc(&a, in_bytes);
    if (status == FA_OK)
        status = fa_device_alloc(&b, in_bytes);
    if (status == FA_OK)
        status = fa_device_alloc(&c, (size_t)(s * s) * sizeof(float));
    /* 0x3C3C... is about 0.0115 in fp32 and 0.0115 in bf16: not zeros, finite sums. */
    if (status == FA_OK)
        status = cudaMemset(a, 0x3C, in_bytes) == cudaSuccess && cudaMemset(b, 0x3C, in_bytes) == cudaSuccess
                     ? FA_OK
                     : fa_fail(FA_ERR_CUDA, "cudaMemset of the matmul inputs failed");
    if (status == FA_OK) {
        matmul_timing t = {v, impl, a, b, c, s};
        const fa_timing_options timing = fa_timing_defaults();
        fa_stats stats;
        status = fa_time_gpu(matmul_work, &t, &timing, &stats);
        if (status == FA_OK) {
            *milliseconds = stats.median;
            snprintf(label, cap, "%s %lld^3 NN, %.1f TFLOP/s", v->name, (long long)s,
                     2.0 * (double)s * (double)s * (double)s / (stats.median * 1e-3) / 1e12);
        }
    }
    fa_device_free(a);
    fa_device_free(b);
    fa_device_free(c);
    return status;
}

/* ==== M8 transpose ========================================================================= */

typedef fa_status (*transpose_launcher)(const float *, float *, int64_t, int64_t, cudaStream_t);

/** The two versions of M8, indexed by fa_impl. */
typedef struct transpose_version {
    const char *name;
    transpose_launcher launch[2];
} transpose_version;

static const transpose_version transpose_versions[] = {
    {"transpose_naive", {ref_transpose_naive, learner_transpose_naive}},
    {"transpose_smem_tiled", {ref_transpose_smem_tiled, learner_transpose_smem_tiled}},
};
enum { TRANSPOSE_VERSIONS = (int)(sizeof transpose_versions / sizeof transpose_versions[0]) };

/** Shapes: 1 x N, N x 1, around the 32 tile, odd, and large. */
static const int64_t transpose_shapes[][2] = {
    {1, 1},   {1, 1000}, {1000, 1}, {31, 32},    {32, 32},     {33, 65},   {65, 33},
    {64, 96}, {7, 257},  {1, 100003}, {100003, 1}, {1025, 999}, {2049, 1537}, {4096, 4096},
};
/** Shapes with more elements than this are skipped by --quick. */
enum { TRANSPOSE_QUICK_MAX = 200000 };

static bool run_transpose(fa_result *result, const transpose_version *v, fa_impl impl,
                          const char *name, const float *in, int64_t rows, int64_t cols,
                          const double *want)
{
    void *in_base = NULL, *in_dev = NULL, *out = NULL;
    fa_status status = device_input(&in_base, &in_dev, in, (size_t)(rows * cols) * sizeof(float), 0);
    if (status == FA_OK)
        status = device_output(&out, (size_t)(rows * cols) * sizeof(float));
    bool ok = fa_result_status(result, name, status);
    if (ok)
        ok = fa_result_status(result, name, v->launch[impl](in_dev, out, rows, cols, 0));
    const fa_shape shape = fa_shape_2d(cols, rows);
    if (ok)
        ok = judge_output(result, name, out, rows * cols, want, NULL, &shape);
    fa_device_free(in_base);
    fa_device_free(out);
    return ok;
}

static fa_status probe_transpose(fa_impl impl)
{
    return transpose_versions[0].launch[impl](NULL, NULL, 0, 0, 0);
}

static bool transpose_version_pass(fa_result *result, const transpose_version *v, fa_impl impl,
                                   const fa_run_options *options, int *cases)
{
    char name[CASE_NAME];
    for (int f = 0; f < transpose_fixture_count; ++f) {
        const transpose_fixture *fx = &transpose_fixtures[f];
        const int64_t count = fx->rows * fx->cols;
        double *want = malloc((size_t)(count > 0 ? count : 1) * sizeof *want);
        snprintf(name, sizeof name, "%s %s", v->name, fx->name);
        bool ok = want != NULL;
        if (!ok)
            fail_case(result, "case '%s': out of host memory", name);
        if (ok) {
            for (int64_t i = 0; i < count; ++i)
                want[i] = fx->out[i];
            ok = run_transpose(result, v, impl, name, fx->in, fx->rows, fx->cols, want);
        }
        free(want);
        if (!ok)
            return false;
        ++*cases;
    }
    fa_rng rng;
    fa_rng_seed(&rng, options->seed, 800);
    const int shapes = (int)(sizeof transpose_shapes / sizeof transpose_shapes[0]);
    for (int s = 0; s < shapes; ++s) {
        const int64_t rows = transpose_shapes[s][0], cols = transpose_shapes[s][1];
        if (options->quick && rows * cols > TRANSPOSE_QUICK_MAX)
            continue;
        snprintf(name, sizeof name, "%s %lldx%lld", v->name, (long long)rows, (long long)cols);
        float *in = malloc((size_t)(rows * cols) * sizeof *in);
        double *want = malloc((size_t)(rows * cols) * sizeof *want);
        bool ok = in != NULL && want != NULL;
        if (!ok) {
            fail_case(result, "case '%s': out of host memory", name);
        } else {
            fa_fill(in, rows * cols, FA_FILL_GAUSSIAN, 1.0, &rng);
            fa_ref_transpose(in, rows, cols, want);
            ok = run_transpose(result, v, impl, name, in, rows, cols, want);
        }
        free(in);
        free(want);
        if (!ok)
            return false;
        ++*cases;
    }
    return true;
}

static void check_transpose(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    int cases = 0;
    for (int v = 0; v < TRANSPOSE_VERSIONS; ++v) {
        if (!transpose_version_pass(result, &transpose_versions[v], impl, options, &cases)) {
            if (v > 0)
                prefix_detail(result, transpose_versions[0].name);
            return;
        }
    }
    fa_result_pass(result, "%d cases over 2 versions (bit for bit)", cases);
}

/** Context of a timed transpose. */
typedef struct transpose_timing {
    transpose_launcher launch;
    const float *in;
    float *out;
    int64_t size;
} transpose_timing;

static fa_status transpose_work(void *context, int rep, cudaStream_t stream)
{
    (void)rep;
    const transpose_timing *t = context;
    return t->launch(t->in, t->out, t->size, t->size, stream);
}

/** Side of the timed square transpose: 64 MiB (--quick: 256 KiB). */
enum { TRANSPOSE_TIMED_SIZE = 4096, TRANSPOSE_TIMED_SIZE_QUICK = 256 };

static fa_status time_transpose(fa_impl impl, const fa_run_options *options, double *milliseconds,
                                char *label, size_t cap)
{
    const int64_t s = options->quick ? TRANSPOSE_TIMED_SIZE_QUICK : TRANSPOSE_TIMED_SIZE;
    const size_t bytes = (size_t)(s * s) * sizeof(float);
    const transpose_version *v = &transpose_versions[1];
    if (v->launch[impl](NULL, NULL, 0, 0, 0) != FA_OK)
        v = &transpose_versions[0];
    void *in = NULL, *out = NULL;
    fa_status status = fa_device_alloc(&in, bytes);
    if (status == FA_OK)
        status = fa_device_alloc(&out, bytes);
    if (status == FA_OK)
        status = cudaMemset(in, 0x3C, bytes) == cudaSuccess
                     ? FA_OK
                     : fa_fail(FA_ERR_CUDA, "cudaMemset of the transpose input failed");
    if (status == FA_OK) {
        transpose_timing t = {v->launch[impl], in, out, s};
        const fa_timing_options timing = fa_timing_defaults();
        fa_stats stats;
        status = fa_time_gpu(transpose_work, &t, &timing, &stats);
        if (status == FA_OK) {
            *milliseconds = stats.median;
            snprintf(label, cap, "%s %lldx%lld fp32, %.0f GB/s", v->name, (long long)s,
                     (long long)s, 2.0 * (double)bytes / (stats.median * 1e-3) / 1e9);
        }
    }
    fa_device_free(in);
    fa_device_free(out);
    return status;
}

/* ==== the table the harness reads ========================================================== */

const fa_milestone_check stage02_checks[] = {
    {6, probe_dot, check_dot, time_dot},
    {7, probe_matmul, check_matmul, time_matmul},
    {8, probe_transpose, check_transpose, time_transpose},
};
const int stage02_check_count = (int)(sizeof stage02_checks / sizeof stage02_checks[0]);
