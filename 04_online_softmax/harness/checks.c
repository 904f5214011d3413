/**
 * @file checks.c
 * @brief The GPU checks of M13-M16, their timings, and the stage-04 benchmark.
 */
#include "checks.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa_attention_ref.h"
#include "fa_check.h"
#include "fa_device.h"
#include "fa_rng.h"
#include "fa_timing.h"
#include "fixtures.h"
#include "reference.h"
#include "traffic.h"

#if ONLINE_BENCH_WITH_STAGE03
#include "attention.h"
#endif

#define COUNT_OF(array) ((int)(sizeof(array) / sizeof((array)[0])))

enum { CASE_NAME_CAP = 200, MIB = 1 << 20 };

/* ---- device runners ------------------------------------------------------------------------ */

/**
 * Device copy of @p count host floats followed by ONLINE_CANARY_FLOATS NaNs
 * (the poison pattern is a NaN): a kernel that reads past the end of an input
 * turns its output NaN. NULL for an empty input, which the launchers accept.
 */
static fa_status upload_input(float **device, const float *host, int64_t count)
{
    void *ptr = NULL;
    *device = NULL;
    if (count == 0 || host == NULL)
        return FA_OK;
    const size_t bytes = (size_t)(count + ONLINE_CANARY_FLOATS) * sizeof(float);
    FA_TRY(fa_device_alloc(&ptr, bytes));
    *device = ptr;
    FA_TRY(fa_device_poison(ptr, bytes));
    return fa_upload(ptr, host, (size_t)count * sizeof(float));
}

/** A device output of @p count floats plus canaries, all poisoned (allocated even when empty). */
static fa_status poisoned_output(float **device, int64_t count)
{
    void *ptr = NULL;
    const size_t bytes = (size_t)(count + ONLINE_CANARY_FLOATS) * sizeof(float);
    *device = NULL;
    FA_TRY(fa_device_alloc(&ptr, bytes));
    *device = ptr;
    return fa_device_poison(ptr, bytes);
}

/** Downloads @p count floats and counts the canaries after them that lost the poison. */
static fa_status download_output(float *host, const float *device, int64_t count,
                                 int64_t *overwritten)
{
    float canaries[ONLINE_CANARY_FLOATS];
    if (count > 0)
        FA_TRY(fa_download(host, device, (size_t)count * sizeof(float)));
    FA_TRY(fa_download(canaries, device + count, sizeof canaries));
    for (int i = 0; i < ONLINE_CANARY_FLOATS; ++i)
        *overwritten += !fa_is_poison(canaries[i]);
    return FA_OK;
}

static fa_status launch_trace(fa_impl impl, online_trace_op op, const float *x, const float *v,
                              float *trace, int64_t rows, int64_t n, int64_t chunk)
{
    const bool learner = impl == FA_IMPL_LEARNER;
    switch (op) {
    case ONLINE_TRACE_MAX:
        return (learner ? learner_online_max_trace : ref_online_max_trace)(x, trace, rows, n, chunk,
                                                                           0);
    case ONLINE_TRACE_CORRECTION:
        return (learner ? learner_online_correction_trace
                        : ref_online_correction_trace)(x, trace, rows, n, chunk, 0);
    case ONLINE_TRACE_SUM:
        return (learner ? learner_online_sum_trace : ref_online_sum_trace)(x, trace, rows, n, chunk,
                                                                           0);
    case ONLINE_TRACE_OUTPUT:
        return (learner ? learner_online_output_trace : ref_online_output_trace)(x, v, trace, rows,
                                                                                 n, chunk, 0);
    }
    return fa_fail(FA_ERR_INVALID_ARGUMENT, "stage04: unknown trace %d", (int)op);
}

fa_status online_run_trace(fa_impl impl, online_trace_op op, const float *x, const float *v,
                           int64_t rows, int64_t n, int64_t chunk, float *trace,
                           int64_t *overwritten)
{
    *overwritten = 0;
    const int64_t count = rows * n;
    const int64_t trace_count = chunk >= 1 ? rows * online_chunk_count(n, chunk) : 0;
    float *d_x = NULL, *d_v = NULL, *d_trace = NULL;
    fa_status status = upload_input(&d_x, x, count);
    if (status == FA_OK && op == ONLINE_TRACE_OUTPUT)
        status = upload_input(&d_v, v, count);
    if (status == FA_OK)
        status = poisoned_output(&d_trace, trace_count);
    if (status == FA_OK)
        status = launch_trace(impl, op, d_x, d_v, d_trace, rows, n, chunk);
    if (status == FA_OK)
        status = download_output(trace, d_trace, trace_count, overwritten);
    fa_device_free(d_x);
    fa_device_free(d_v);
    fa_device_free(d_trace);
    return status;
}

fa_status online_run_softmax(fa_impl impl, const float *x, int64_t rows, int64_t n, float *p,
                             float *lse, int64_t *overwritten)
{
    *overwritten = 0;
    const int64_t count = rows * n;
    float *d_x = NULL, *d_p = NULL, *d_lse = NULL;
    fa_status status = upload_input(&d_x, x, count);
    if (status == FA_OK)
        status = poisoned_output(&d_p, count);
    if (status == FA_OK && lse != NULL)
        status = poisoned_output(&d_lse, rows);
    if (status == FA_OK)
        status = (impl == FA_IMPL_LEARNER ? learner_softmax_rows_online
                                          : ref_softmax_rows_online)(d_x, d_p, d_lse, rows, n, 0);
    if (status == FA_OK)
        status = download_output(p, d_p, count, overwritten);
    if (status == FA_OK && lse != NULL)
        status = download_output(lse, d_lse, rows, overwritten);
    fa_device_free(d_x);
    fa_device_free(d_p);
    fa_device_free(d_lse);
    return status;
}

fa_status online_run_attention(fa_impl impl, const attn_online_args *host, int64_t *overwritten)
{
    *overwritten = 0;
    const int64_t rows = host->batch * host->heads_q * host->nq;
    const int64_t q_count = rows * host->head_dim;
    const int64_t kv_count = host->batch * host->heads_kv * host->nk * host->head_dim;
    attn_online_args device = *host;
    float *d_q = NULL, *d_k = NULL, *d_v = NULL, *d_o = NULL, *d_lse = NULL;
    fa_status status = upload_input(&d_q, host->q, q_count);
    if (status == FA_OK)
        status = upload_input(&d_k, host->k, kv_count);
    if (status == FA_OK)
        status = upload_input(&d_v, host->v, kv_count);
    if (status == FA_OK)
        status = poisoned_output(&d_o, q_count);
    if (status == FA_OK && host->lse != NULL)
        status = poisoned_output(&d_lse, rows);
    if (status == FA_OK) {
        device.q = d_q;
        device.k = d_k;
        device.v = d_v;
        device.o = d_o;
        device.lse = d_lse;
        status =
            (impl == FA_IMPL_LEARNER ? learner_attn_rows_online : ref_attn_rows_online)(&device, 0);
    }
    if (status == FA_OK)
        status = download_output(host->o, d_o, q_count, overwritten);
    if (status == FA_OK && host->lse != NULL)
        status = download_output(host->lse, d_lse, rows, overwritten);
    fa_device_free(d_q);
    fa_device_free(d_k);
    fa_device_free(d_v);
    fa_device_free(d_o);
    fa_device_free(d_lse);
    return status;
}

/* ---- helpers of the checks ----------------------------------------------------------------- */

/** malloc of @p count elements of @p size (at least one), recorded as an error when it fails. */
static void *host_alloc(int64_t count, size_t size, fa_result *result)
{
    void *p = malloc((size_t)(count > 0 ? count : 1) * size);
    if (p == NULL)
        fa_result_status(result, "host memory",
                         fa_fail(FA_ERR_OUT_OF_MEMORY, "stage04: no host memory for %lld elements",
                                 (long long)count));
    return p;
}

/** A failing canary check: the kernel wrote past the end of an output. */
static bool judge_canaries(fa_result *result, const char *case_name, int64_t overwritten)
{
    if (overwritten == 0)
        return true;
    result->outcome = FA_OUTCOME_FAILED;
    snprintf(
        result->detail, sizeof result->detail,
        "case '%s': %lld canary floats after an output were overwritten (a write past its end)",
        case_name, (long long)overwritten);
    return false;
}

/** Shape [rows][cols] with named axes, for failure coordinates. */
static fa_shape named_2d(int64_t rows, int64_t cols, const char *row_name, const char *col_name)
{
    fa_shape shape = fa_shape_2d(rows, cols);
    shape.names[0] = row_name;
    shape.names[1] = col_name;
    return shape;
}

/** Shape [batch][heads][rows] of an lse. */
static fa_shape lse_shape(int64_t batch, int64_t heads, int64_t rows)
{
    fa_shape shape = fa_shape_4d(batch, heads, rows, 1);
    shape.rank = 3;
    return shape;
}

/** Gaussian values (the v of the output trace, the q, k, v of attention). */
static void fill_normal(float *x, int64_t n, double spread, fa_rng *rng)
{
    for (int64_t i = 0; i < n; ++i)
        x[i] = (float)(spread * fa_rng_normal(rng));
}

/** Score spreads of NUMERICS.md, cycled through the random cases. */
static const double SPREADS[] = {0.3, 1.0, 3.0, 8.0};

/** Generator streams of the random cases: one range per kind, the case index within it. */
enum { TRACE_STREAMS = 0, SOFTMAX_STREAMS = 1000, ATTENTION_STREAMS = 2000 };

/* ---- M13-M16: the traces ------------------------------------------------------------------- */

static const char *trace_name(online_trace_op op)
{
    switch (op) {
    case ONLINE_TRACE_MAX: return "max trace";
    case ONLINE_TRACE_CORRECTION: return "correction trace";
    case ONLINE_TRACE_SUM: return "sum trace";
    case ONLINE_TRACE_OUTPUT: return "output trace";
    }
    return "trace";
}

/** Chunk sizes of the random trace cases, and the row lengths tried with each. */
static const int64_t TRACE_CHUNKS[] = {1, 3, 16, 64};
enum { TRACE_LENGTHS_PER_CHUNK = 5 };
static const int64_t TRACE_LONG_LENGTH = 20011;

static int64_t trace_length(int64_t chunk, int which)
{
    const int64_t lengths[TRACE_LENGTHS_PER_CHUNK] = {1, chunk - 1, chunk, chunk + 1,
                                                      5 * chunk + 3};
    return lengths[which] > 0 ? lengths[which] : 2;
}

/** The expected trace of fixture @p f for @p op (its written-out values). */
static const double *fixture_trace(const online_fixture *f, online_trace_op op)
{
    switch (op) {
    case ONLINE_TRACE_MAX: return f->max;
    case ONLINE_TRACE_CORRECTION: return f->correction;
    case ONLINE_TRACE_SUM: return f->sum;
    case ONLINE_TRACE_OUTPUT: return f->output;
    }
    return f->max;
}

/** Host arrays of one trace case: rows x n inputs, rows x chunks expectations. */
typedef struct trace_case {
    float *x, *v, *got;
    double *want, *bound;
} trace_case;

static void trace_case_free(trace_case *c)
{
    free(c->x);
    free(c->v);
    free(c->got);
    free(c->want);
    free(c->bound);
    *c = (trace_case){0};
}

static bool trace_case_alloc(trace_case *c, int64_t count, int64_t trace_count, fa_result *result)
{
    *c = (trace_case){0};
    const bool ok = (c->x = host_alloc(count, sizeof(float), result)) != NULL &&
                    (c->v = host_alloc(count, sizeof(float), result)) != NULL &&
                    (c->got = host_alloc(trace_count, sizeof(float), result)) != NULL &&
                    (c->want = host_alloc(trace_count, sizeof(double), result)) != NULL &&
                    (c->bound = host_alloc(trace_count, sizeof(double), result)) != NULL;
    if (!ok)
        trace_case_free(c);
    return ok;
}

/**
 * The reference of @p op for every row of @p c into c->want and c->bound
 * (NULL bound means exact: the max trace).
 */
static const double *trace_reference(online_trace_op op, trace_case *c, int64_t rows, int64_t n,
                                     int64_t chunk)
{
    const int64_t chunks = online_chunk_count(n, chunk);
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t o = r * chunks;
        double *want = c->want + o, *bound = c->bound + o;
        online_trace_ref ref = {0};
        switch (op) {
        case ONLINE_TRACE_MAX: ref.max = want; break;
        case ONLINE_TRACE_CORRECTION:
            ref.correction = want;
            ref.correction_bound = bound;
            break;
        case ONLINE_TRACE_SUM:
            ref.sum = want;
            ref.sum_bound = bound;
            break;
        case ONLINE_TRACE_OUTPUT:
            ref.output = want;
            ref.output_bound = bound;
            break;
        }
        online_ref_trace_row(c->x + r * n, c->v + r * n, n, chunk, &ref);
    }
    return op == ONLINE_TRACE_MAX ? NULL : c->bound;
}

/** Runs and judges one trace case whose inputs are in @p c. */
static bool run_trace_case(online_trace_op op, fa_impl impl, const char *name, trace_case *c,
                           int64_t rows, int64_t n, int64_t chunk, const double *want,
                           const double *bound, fa_result *result)
{
    int64_t overwritten = 0;
    if (!fa_result_status(
            result, name,
            online_run_trace(impl, op, c->x, c->v, rows, n, chunk, c->got, &overwritten)))
        return false;
    const fa_shape shape = named_2d(rows, online_chunk_count(n, chunk), "row", "chunk");
    return judge_canaries(result, name, overwritten) &&
           fa_result_judge(result, name, c->got, want, bound, &shape);
}

/** The fixtures of fixtures.h on one trace: bit for bit where exact, else by the bound. */
static bool trace_fixtures(online_trace_op op, fa_impl impl, fa_result *result, int *cases)
{
    for (int f = 0; f < online_fixture_count; ++f) {
        const online_fixture *fx = &online_fixtures[f];
        const int64_t chunks = online_chunk_count(fx->n, fx->chunk);
        char name[CASE_NAME_CAP];
        snprintf(name, sizeof name, "%s, fixture '%s'", trace_name(op), fx->name);
        trace_case c;
        if (!trace_case_alloc(&c, fx->n, chunks, result))
            return false;
        memcpy(c.x, fx->x, sizeof fx->x[0] * (size_t)fx->n);
        memcpy(c.v, fx->v, sizeof fx->v[0] * (size_t)fx->n);
        const double *bound = trace_reference(op, &c, 1, fx->n, fx->chunk);
        const bool exact = op == ONLINE_TRACE_MAX || fx->exact;
        const bool ok = run_trace_case(op, impl, name, &c, 1, fx->n, fx->chunk,
                                       fixture_trace(fx, op), exact ? NULL : bound, result);
        trace_case_free(&c);
        if (!ok)
            return false;
        ++*cases;
    }
    return true;
}

/** One random case: a row of every pattern, length @p n, chunks of @p chunk. */
static bool trace_random_case(online_trace_op op, fa_impl impl, const fa_run_options *options,
                              int index, int64_t n, int64_t chunk, fa_result *result)
{
    const int64_t rows = ONLINE_ROW_PATTERN_COUNT;
    const double spread = SPREADS[index % COUNT_OF(SPREADS)];
    char name[CASE_NAME_CAP];
    snprintf(name, sizeof name,
             "%s, n = %lld, chunk = %lld, spread %g (row r has pattern r: gaussian, rising, "
             "falling, late max, masked, extreme, dyadic), seed %llu",
             trace_name(op), (long long)n, (long long)chunk, spread,
             (unsigned long long)options->seed);
    trace_case c;
    if (!trace_case_alloc(&c, rows * n, rows * online_chunk_count(n, chunk), result))
        return false;
    fa_rng rng;
    fa_rng_seed(&rng, options->seed, TRACE_STREAMS + (uint64_t)index);
    for (int64_t r = 0; r < rows; ++r)
        online_fill_row(c.x + r * n, n, chunk, (online_row_pattern)r, spread, &rng);
    fill_normal(c.v, rows * n, 1.0, &rng);
    const double *bound = trace_reference(op, &c, rows, n, chunk);
    const bool ok = run_trace_case(op, impl, name, &c, rows, n, chunk, c.want, bound, result);
    trace_case_free(&c);
    return ok;
}

/** Fixtures, then every chunk size with every length, then one long row set. */
static bool check_trace(online_trace_op op, fa_impl impl, const fa_run_options *options,
                        fa_result *result, int *cases)
{
    if (!trace_fixtures(op, impl, result, cases))
        return false;
    int index = 0;
    for (int k = 0; k < COUNT_OF(TRACE_CHUNKS); ++k) {
        for (int which = 0; which < TRACE_LENGTHS_PER_CHUNK; ++which, ++index, ++*cases) {
            const int64_t n = trace_length(TRACE_CHUNKS[k], which);
            if (!trace_random_case(op, impl, options, index, n, TRACE_CHUNKS[k], result))
                return false;
        }
    }
    if (!options->quick) {
        if (!trace_random_case(op, impl, options, index, TRACE_LONG_LENGTH, 16, result))
            return false;
        ++*cases;
    }
    return true;
}

/* ---- M15: one-pass softmax ----------------------------------------------------------------- */

/** Row lengths of the random softmax cases: around one warp, one block chunk, and long rows. */
static const int64_t SOFTMAX_LENGTHS[] = {1, 2, 31, 32, 33, 127, 128, 129, 1023, 1024, 1025, 4099};
static const int64_t SOFTMAX_LONG_LENGTHS[] = {65537, 1000003};

/** Host arrays of one softmax case. */
typedef struct softmax_case {
    float *x, *p, *lse;
    double *p_want, *p_bound, *lse_want, *lse_bound;
} softmax_case;

static void softmax_case_free(softmax_case *c)
{
    free(c->x);
    free(c->p);
    free(c->lse);
    free(c->p_want);
    free(c->p_bound);
    free(c->lse_want);
    free(c->lse_bound);
    *c = (softmax_case){0};
}

static bool softmax_case_alloc(softmax_case *c, int64_t rows, int64_t n, fa_result *result)
{
    *c = (softmax_case){0};
    const bool ok = (c->x = host_alloc(rows * n, sizeof(float), result)) != NULL &&
                    (c->p = host_alloc(rows * n, sizeof(float), result)) != NULL &&
                    (c->lse = host_alloc(rows, sizeof(float), result)) != NULL &&
                    (c->p_want = host_alloc(rows * n, sizeof(double), result)) != NULL &&
                    (c->p_bound = host_alloc(rows * n, sizeof(double), result)) != NULL &&
                    (c->lse_want = host_alloc(rows, sizeof(double), result)) != NULL &&
                    (c->lse_bound = host_alloc(rows, sizeof(double), result)) != NULL;
    if (!ok)
        softmax_case_free(c);
    return ok;
}

/** Runs the case in @p c and judges p (against @p p_want, NULL bound = exact) and lse. */
static bool run_softmax_case(fa_impl impl, const char *name, softmax_case *c, int64_t rows,
                             int64_t n, const double *p_want, const double *p_bound,
                             fa_result *result)
{
    int64_t overwritten = 0;
    if (!fa_result_status(result, name,
                          online_run_softmax(impl, c->x, rows, n, c->p, c->lse, &overwritten)))
        return false;
    const fa_shape p_shape = named_2d(rows, n, "row", "col");
    fa_shape l_shape = fa_shape_1d(rows);
    l_shape.names[0] = "row";
    char lse_name[CASE_NAME_CAP + 8];
    snprintf(lse_name, sizeof lse_name, "%s, lse", name);
    return judge_canaries(result, name, overwritten) &&
           fa_result_judge(result, name, c->p, p_want, p_bound, &p_shape) &&
           fa_result_judge(result, lse_name, c->lse, c->lse_want, c->lse_bound, &l_shape);
}

static bool softmax_fixtures(fa_impl impl, fa_result *result, int *cases)
{
    for (int f = 0; f < online_fixture_count; ++f) {
        const online_fixture *fx = &online_fixtures[f];
        char name[CASE_NAME_CAP];
        snprintf(name, sizeof name, "softmax_rows_online, fixture '%s'", fx->name);
        softmax_case c;
        if (!softmax_case_alloc(&c, 1, fx->n, result))
            return false;
        memcpy(c.x, fx->x, sizeof fx->x[0] * (size_t)fx->n);
        online_ref_softmax_rows(c.x, 1, fx->n, c.p_want, c.p_bound, c.lse_want, c.lse_bound);
        c.lse_want[0] = fx->lse; /* the written-out value, judged by the reference's bound */
        const bool ok =
            run_softmax_case(impl, name, &c, 1, fx->n, fx->p, fx->exact ? NULL : c.p_bound, result);
        softmax_case_free(&c);
        if (!ok)
            return false;
        ++*cases;
    }
    return true;
}

static bool softmax_random_case(fa_impl impl, const fa_run_options *options, int index, int64_t n,
                                fa_result *result)
{
    const int64_t rows = ONLINE_ROW_PATTERN_COUNT;
    const int64_t block_chunk = (int64_t)softmax_rows_online_threads(n) * SOFTMAX_ONLINE_CHUNK;
    const double spread = SPREADS[index % COUNT_OF(SPREADS)];
    char name[CASE_NAME_CAP];
    snprintf(name, sizeof name,
             "softmax_rows_online, n = %lld, spread %g (row r has pattern r: gaussian, rising, "
             "falling, late max, masked, extreme, dyadic), seed %llu",
             (long long)n, spread, (unsigned long long)options->seed);
    softmax_case c;
    if (!softmax_case_alloc(&c, rows, n, result))
        return false;
    fa_rng rng;
    fa_rng_seed(&rng, options->seed, SOFTMAX_STREAMS + (uint64_t)index);
    for (int64_t r = 0; r < rows; ++r)
        online_fill_row(c.x + r * n, n, block_chunk, (online_row_pattern)r, spread, &rng);
    online_ref_softmax_rows(c.x, rows, n, c.p_want, c.p_bound, c.lse_want, c.lse_bound);
    const bool ok = run_softmax_case(impl, name, &c, rows, n, c.p_want, c.p_bound, result);
    softmax_case_free(&c);
    return ok;
}

/** Fixtures, empty rows (n = 0: lse = -inf only), then every length. */
static bool check_softmax(fa_impl impl, const fa_run_options *options, fa_result *result,
                          int *cases)
{
    if (!softmax_fixtures(impl, result, cases))
        return false;
    int index = 0;
    for (int k = 0; k < COUNT_OF(SOFTMAX_LENGTHS); ++k, ++index, ++*cases)
        if (!softmax_random_case(impl, options, index, SOFTMAX_LENGTHS[k], result))
            return false;
    for (int k = 0; !options->quick && k < COUNT_OF(SOFTMAX_LONG_LENGTHS); ++k, ++index, ++*cases)
        if (!softmax_random_case(impl, options, index, SOFTMAX_LONG_LENGTHS[k], result))
            return false;
    return true;
}

/* ---- M16: online attention ----------------------------------------------------------------- */

/** How the keys of a random attention case are made. */
typedef enum key_pattern {
    KEYS_GAUSSIAN, /**< q, k gaussian: scores of the case's spread */
    KEYS_RISING, /**< scores rise with the key index: the max rises in every chunk */
    KEYS_FALLING /**< scores fall: the max is in the first chunk */
} key_pattern;

/** One random attention problem. */
typedef struct attn_case {
    int64_t batch, heads_q, heads_kv, nq, nk, head_dim;
    fa_mask mask;
    int64_t chunk;
    double spread;
    key_pattern keys;
} attn_case;

static const attn_case ATTN_CASES[] = {
    {1, 1, 1, 1, 1, 1, FA_MASK_NONE, 1, 1.0, KEYS_GAUSSIAN},
    {1, 2, 1, 5, 31, 16, FA_MASK_NONE, 32, 1.0, KEYS_GAUSSIAN},
    {2, 2, 2, 9, 32, 32, FA_MASK_CAUSAL_TOP_LEFT, 32, 3.0, KEYS_GAUSSIAN},
    {1, 4, 2, 33, 33, 64, FA_MASK_CAUSAL_BOTTOM_RIGHT, 32, 3.0, KEYS_RISING},
    {1, 1, 1, 40, 23, 100, FA_MASK_CAUSAL_BOTTOM_RIGHT, 7, 8.0, KEYS_GAUSSIAN},
    {1, 3, 1, 17, 130, 128, FA_MASK_CAUSAL_TOP_LEFT, 64, 1.0, KEYS_FALLING},
    {1, 2, 2, 8, 200, 256, FA_MASK_NONE, 64, 0.3, KEYS_GAUSSIAN},
    {1, 1, 1, 3, 77, 5, FA_MASK_NONE, 1, 8.0, KEYS_RISING},
    {1, 2, 1, 6, 96, 33, FA_MASK_NONE, 48, 3.0, KEYS_FALLING},
};
static const attn_case ATTN_LONG_CASES[] = {
    {2, 4, 4, 130, 1000, 64, FA_MASK_NONE, 64, 1.0, KEYS_GAUSSIAN},
    {1, 2, 1, 129, 2051, 128, FA_MASK_CAUSAL_BOTTOM_RIGHT, 48, 3.0, KEYS_RISING},
};

/** The double-reference view of a host problem (contiguous [B][H][N][D]). */
static fa_attn_problem reference_problem(const attn_online_args *a)
{
    fa_attn_problem p = {0};
    p.batch = a->batch;
    p.heads_q = a->heads_q;
    p.heads_kv = a->heads_kv;
    p.nq = a->nq;
    p.nk = a->nk;
    p.head_dim = a->head_dim;
    p.scale = a->scale;
    p.mask = a->mask;
    p.q = fa_view_bhnd(a->q, FA_F32, a->heads_q, a->nq, a->head_dim);
    p.k = fa_view_bhnd(a->k, FA_F32, a->heads_kv, a->nk, a->head_dim);
    p.v = fa_view_bhnd(a->v, FA_F32, a->heads_kv, a->nk, a->head_dim);
    return p;
}

/** Host arrays of one attention problem, and the problem that points at them. */
typedef struct attn_host {
    float *q, *k, *v, *o, *lse;
    attn_online_args args;
} attn_host;

static void attn_host_free(attn_host *h)
{
    free(h->q);
    free(h->k);
    free(h->v);
    free(h->o);
    free(h->lse);
    *h = (attn_host){0};
}

static bool attn_host_alloc(attn_host *h, const attn_case *shape, float scale, fa_result *result)
{
    *h = (attn_host){0};
    attn_online_args *a = &h->args;
    a->batch = shape->batch;
    a->heads_q = shape->heads_q;
    a->heads_kv = shape->heads_kv;
    a->nq = shape->nq;
    a->nk = shape->nk;
    a->head_dim = shape->head_dim;
    a->scale = scale;
    a->mask = shape->mask;
    a->chunk = shape->chunk;
    const int64_t rows = a->batch * a->heads_q * a->nq;
    const int64_t kv = a->batch * a->heads_kv * a->nk * a->head_dim;
    const bool ok = (h->q = host_alloc(rows * a->head_dim, sizeof(float), result)) != NULL &&
                    (h->k = host_alloc(kv, sizeof(float), result)) != NULL &&
                    (h->v = host_alloc(kv, sizeof(float), result)) != NULL &&
                    (h->o = host_alloc(rows * a->head_dim, sizeof(float), result)) != NULL &&
                    (h->lse = host_alloc(rows, sizeof(float), result)) != NULL;
    if (!ok) {
        attn_host_free(h);
        return false;
    }
    a->q = h->q;
    a->k = h->k;
    a->v = h->v;
    a->o = h->o;
    a->lse = h->lse;
    return true;
}

/** Runs @p h; judges o and lse against the wanted values (NULL: the reference) by the bound. */
static bool run_attention_case(fa_impl impl, const char *name, attn_host *h, const double *o_want,
                               const double *lse_want, bool exact, fa_result *result)
{
    int64_t overwritten = 0;
    if (!fa_result_status(result, name, online_run_attention(impl, &h->args, &overwritten)))
        return false;
    if (!judge_canaries(result, name, overwritten))
        return false;
    const fa_attn_problem problem = reference_problem(&h->args);
    const fa_attn_method method = online_attn_method(h->args.chunk);
    fa_attn_reference ref;
    if (!fa_result_status(result, name, fa_attention_reference(&problem, &method, &ref)))
        return false;
    const attn_online_args *a = &h->args;
    const fa_shape o_shape = fa_shape_4d(a->batch, a->heads_q, a->nq, a->head_dim);
    const fa_shape l_shape = lse_shape(a->batch, a->heads_q, a->nq);
    char lse_name[CASE_NAME_CAP + 8];
    snprintf(lse_name, sizeof lse_name, "%s, lse", name);
    const bool ok = fa_result_judge(result, name, a->o, o_want ? o_want : ref.o,
                                    exact ? NULL : ref.o_bound, &o_shape) &&
                    fa_result_judge(result, lse_name, a->lse, lse_want ? lse_want : ref.lse,
                                    ref.lse_bound, &l_shape);
    fa_attn_reference_free(&ref);
    return ok;
}

static bool attention_fixtures(fa_impl impl, fa_result *result, int *cases)
{
    for (int f = 0; f < online_attn_fixture_count; ++f) {
        const online_attn_fixture *fx = &online_attn_fixtures[f];
        const attn_case shape = {1,        1,         1,   fx->nq,       fx->nk, fx->head_dim,
                                 fx->mask, fx->chunk, 1.0, KEYS_GAUSSIAN};
        char name[CASE_NAME_CAP];
        snprintf(name, sizeof name, "attn_rows_online, fixture '%s'", fx->name);
        attn_host h;
        if (!attn_host_alloc(&h, &shape, fx->scale, result))
            return false;
        memcpy(h.q, fx->q, sizeof(float) * (size_t)(fx->nq * fx->head_dim));
        memcpy(h.k, fx->k, sizeof(float) * (size_t)(fx->nk * fx->head_dim));
        memcpy(h.v, fx->v, sizeof(float) * (size_t)(fx->nk * fx->head_dim));
        const bool ok = run_attention_case(impl, name, &h, fx->o, fx->lse, fx->exact, result);
        attn_host_free(&h);
        if (!ok)
            return false;
        ++*cases;
    }
    return true;
}

/**
 * Rising or falling scores: column 0 of q is 1 and column 0 of key j carries
 * a ramp over the keys (the other columns stay gaussian but small), so
 * s_j = scale q . k_j follows the ramp.
 */
static void apply_key_pattern(attn_host *h, key_pattern keys, double spread)
{
    if (keys == KEYS_GAUSSIAN)
        return;
    const attn_online_args *a = &h->args;
    float *q = h->q, *k = h->k;
    const int64_t dim = a->head_dim, rows = a->batch * a->heads_q * a->nq;
    const int64_t key_rows = a->batch * a->heads_kv * a->nk;
    const double ramp = spread / (double)a->scale;
    for (int64_t r = 0; r < rows * dim; ++r)
        q[r] = r % dim == 0 ? 1.0f : 0.01f * q[r];
    for (int64_t r = 0; r < key_rows; ++r) {
        const int64_t j = r % a->nk;
        const double position = a->nk > 1 ? (double)j / (double)(a->nk - 1) : 0.0;
        const double signed_position =
            keys == KEYS_RISING ? 2.0 * position - 1.0 : 1.0 - 2.0 * position;
        k[r * dim] = (float)(ramp * signed_position);
    }
}

static bool attention_random_case(fa_impl impl, const fa_run_options *options, int index,
                                  const attn_case *shape, fa_result *result)
{
    static const char *const mask_names[] = {"none", "causal top-left", "causal bottom-right"};
    static const char *const key_names[] = {"gaussian", "rising", "falling"};
    char name[CASE_NAME_CAP];
    snprintf(name, sizeof name,
             "attn_rows_online, B %lld Hq %lld Hkv %lld Nq %lld Nk %lld D %lld, mask %s, "
             "chunk %lld, spread %g, %s keys, seed %llu",
             (long long)shape->batch, (long long)shape->heads_q, (long long)shape->heads_kv,
             (long long)shape->nq, (long long)shape->nk, (long long)shape->head_dim,
             mask_names[shape->mask], (long long)shape->chunk, shape->spread,
             key_names[shape->keys], (unsigned long long)options->seed);
    attn_host h;
    const float scale = (float)(1.0 / sqrt((double)shape->head_dim));
    if (!attn_host_alloc(&h, shape, scale, result))
        return false;
    fa_rng rng;
    fa_rng_seed(&rng, options->seed, ATTENTION_STREAMS + (uint64_t)index);
    const attn_online_args *a = &h.args;
    const int64_t q_count = a->batch * a->heads_q * a->nq * a->head_dim;
    const int64_t kv_count = a->batch * a->heads_kv * a->nk * a->head_dim;
    fill_normal(h.q, q_count, shape->spread, &rng);
    fill_normal(h.k, kv_count, 1.0, &rng);
    fill_normal(h.v, kv_count, 1.0, &rng);
    apply_key_pattern(&h, shape->keys, shape->spread);
    const bool ok = run_attention_case(impl, name, &h, NULL, NULL, false, result);
    attn_host_free(&h);
    return ok;
}

static bool check_attention(fa_impl impl, const fa_run_options *options, fa_result *result,
                            int *cases)
{
    if (!attention_fixtures(impl, result, cases))
        return false;
    int index = 0;
    for (int k = 0; k < COUNT_OF(ATTN_CASES); ++k, ++index, ++*cases)
        if (!attention_random_case(impl, options, index, &ATTN_CASES[k], result))
            return false;
    for (int k = 0; !options->quick && k < COUNT_OF(ATTN_LONG_CASES); ++k, ++index, ++*cases)
        if (!attention_random_case(impl, options, index, &ATTN_LONG_CASES[k], result))
            return false;
    return true;
}

/* ---- the milestones ------------------------------------------------------------------------ */

static void check_m13(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    int cases = 0;
    if (check_trace(ONLINE_TRACE_MAX, impl, options, result, &cases))
        fa_result_pass(result, "%d cases, running max bit for bit", cases);
}

static void check_m14(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    int cases = 0;
    if (check_trace(ONLINE_TRACE_CORRECTION, impl, options, result, &cases))
        fa_result_pass(result, "%d cases within the bound", cases);
}

static void check_m15(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    int traces = 0, rows = 0;
    if (check_trace(ONLINE_TRACE_SUM, impl, options, result, &traces) &&
        check_softmax(impl, options, result, &rows))
        fa_result_pass(result, "%d running-sum cases, %d one-pass softmax cases", traces, rows);
}

static void check_m16(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    int traces = 0, problems = 0;
    if (check_trace(ONLINE_TRACE_OUTPUT, impl, options, result, &traces) &&
        check_attention(impl, options, result, &problems))
        fa_result_pass(result, "%d output-trace cases, %d online attention problems", traces,
                       problems);
}

/* An empty problem: no GPU work, so the answer says only whether the launcher is written. */
static fa_status probe_trace(online_trace_op op, fa_impl impl)
{
    return launch_trace(impl, op, NULL, NULL, NULL, 0, 0, 1);
}
static fa_status probe_m13(fa_impl impl) { return probe_trace(ONLINE_TRACE_MAX, impl); }
static fa_status probe_m14(fa_impl impl) { return probe_trace(ONLINE_TRACE_CORRECTION, impl); }
static fa_status probe_m15(fa_impl impl) { return probe_trace(ONLINE_TRACE_SUM, impl); }
static fa_status probe_m16(fa_impl impl) { return probe_trace(ONLINE_TRACE_OUTPUT, impl); }

/* ---- timings ------------------------------------------------------------------------------- */

/** Uniform random device floats in [-4, 4) from a seed (the timed inputs). */
static fa_status random_device_floats(float **device, int64_t count, uint64_t seed)
{
    float *host = malloc((size_t)count * sizeof(float));
    if (host == NULL)
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "stage04: no host memory for %lld floats",
                       (long long)count);
    fa_rng rng;
    fa_rng_seed(&rng, seed, 0);
    fa_fill(host, count, FA_FILL_UNIFORM, 4.0, &rng);
    void *ptr = NULL;
    fa_status status = fa_device_copy_of(&ptr, host, (size_t)count * sizeof(float));
    free(host);
    *device = ptr;
    return status;
}

/** Device buffers and sizes of a timed softmax. */
typedef struct softmax_timing {
    fa_impl impl;
    float *x, *p, *lse;
    int64_t rows, n;
    bool three_pass; /* stage 03's ref_softmax_rows instead */
} softmax_timing;

static fa_status softmax_work(void *context, int rep, cudaStream_t stream)
{
    (void)rep;
    const softmax_timing *t = context;
#if ONLINE_BENCH_WITH_STAGE03
    if (t->three_pass) {
        const naive_attn_dims dims = {1, 1, t->rows, t->n, 1};
        return ref_softmax_rows(t->x, t->p, t->lse, dims, FA_MASK_NONE, NULL, stream);
    }
#endif
    return (t->impl == FA_IMPL_LEARNER ? learner_softmax_rows_online : ref_softmax_rows_online)(
        t->x, t->p, t->lse, t->rows, t->n, stream);
}

static void softmax_timing_free(softmax_timing *t)
{
    fa_device_free(t->x);
    fa_device_free(t->p);
    fa_device_free(t->lse);
}

static fa_status softmax_timing_alloc(softmax_timing *t, int64_t rows, int64_t n, uint64_t seed)
{
    void *p = NULL, *lse = NULL;
    t->rows = rows;
    t->n = n;
    FA_TRY(random_device_floats(&t->x, rows * n, seed));
    FA_TRY(fa_device_alloc(&p, (size_t)(rows * n) * sizeof(float)));
    t->p = p;
    FA_TRY(fa_device_alloc(&lse, (size_t)rows * sizeof(float)));
    t->lse = lse;
    return FA_OK;
}

/** Median milliseconds of the timed softmax (allocated by the caller). */
static fa_status time_softmax_work(softmax_timing *t, double *milliseconds)
{
    const fa_timing_options timing = fa_timing_defaults();
    fa_stats stats;
    FA_TRY(fa_time_gpu(softmax_work, t, &timing, &stats));
    *milliseconds = stats.median;
    return FA_OK;
}

static const int64_t TIMED_SOFTMAX_ROWS = 4096, TIMED_SOFTMAX_LENGTH = 4096;

static fa_status time_m15(fa_impl impl, const fa_run_options *options, double *milliseconds,
                          char *label, size_t cap)
{
    softmax_timing t = {impl, NULL, NULL, NULL, 0, 0, false};
    fa_status status =
        softmax_timing_alloc(&t, TIMED_SOFTMAX_ROWS, TIMED_SOFTMAX_LENGTH, options->seed);
    if (status == FA_OK)
        status = time_softmax_work(&t, milliseconds);
    softmax_timing_free(&t);
    snprintf(label, cap, "softmax %lld x %lld", (long long)TIMED_SOFTMAX_ROWS,
             (long long)TIMED_SOFTMAX_LENGTH);
    return status;
}

/** Device buffers of a timed attention, and the problem that points at them. */
typedef struct attn_timing {
    fa_impl impl;
    bool naive; /* stage 03's ref_attn_naive instead */
    float *q, *k, *v, *o, *lse;
    attn_online_args args;
} attn_timing;

static fa_status attn_work(void *context, int rep, cudaStream_t stream)
{
    (void)rep;
    const attn_timing *t = context;
#if ONLINE_BENCH_WITH_STAGE03
    if (t->naive) {
        const attn_online_args *a = &t->args;
        const naive_attn_dims dims = {a->batch, a->heads_q, a->nq, a->nk, a->head_dim};
        return ref_attn_naive(a->q, a->k, a->v, a->o, a->lse, FA_F32, dims, a->scale, a->mask, NULL,
                              stream);
    }
#endif
    return (t->impl == FA_IMPL_LEARNER ? learner_attn_rows_online : ref_attn_rows_online)(&t->args,
                                                                                          stream);
}

static void attn_timing_free(attn_timing *t)
{
    fa_device_free(t->q);
    fa_device_free(t->k);
    fa_device_free(t->v);
    fa_device_free(t->o);
    fa_device_free(t->lse);
}

/** Allocates a problem of heads_kv = heads_q with random q, k, v. */
static fa_status attn_timing_alloc(attn_timing *t, int64_t batch, int64_t heads, int64_t n,
                                   int64_t dim, fa_mask mask, int64_t chunk, uint64_t seed)
{
    attn_online_args *a = &t->args;
    *a = (attn_online_args){.batch = batch,
                            .heads_q = heads,
                            .heads_kv = heads,
                            .nq = n,
                            .nk = n,
                            .head_dim = dim,
                            .scale = (float)(1.0 / sqrt((double)dim)),
                            .mask = mask,
                            .chunk = chunk};
    const int64_t count = batch * heads * n * dim;
    void *o = NULL, *lse = NULL;
    FA_TRY(random_device_floats(&t->q, count, seed));
    FA_TRY(random_device_floats(&t->k, count, seed + 1));
    FA_TRY(random_device_floats(&t->v, count, seed + 2));
    FA_TRY(fa_device_alloc(&o, (size_t)count * sizeof(float)));
    t->o = o;
    FA_TRY(fa_device_alloc(&lse, (size_t)(batch * heads * n) * sizeof(float)));
    t->lse = lse;
    a->q = t->q;
    a->k = t->k;
    a->v = t->v;
    a->o = t->o;
    a->lse = t->lse;
    return FA_OK;
}

static fa_status time_attn_work(attn_timing *t, double *milliseconds)
{
    const fa_timing_options timing = fa_timing_defaults();
    fa_stats stats;
    FA_TRY(fa_time_gpu(attn_work, t, &timing, &stats));
    *milliseconds = stats.median;
    return FA_OK;
}

enum {
    TIMED_ATTN_HEADS = 16,
    TIMED_ATTN_LENGTH = 1024,
    TIMED_ATTN_DIM = 64,
    TIMED_ATTN_CHUNK = 32
};

static fa_status time_m16(fa_impl impl, const fa_run_options *options, double *milliseconds,
                          char *label, size_t cap)
{
    attn_timing t = {impl, false, NULL, NULL, NULL, NULL, NULL, {0}};
    fa_status status = attn_timing_alloc(&t, 1, TIMED_ATTN_HEADS, TIMED_ATTN_LENGTH, TIMED_ATTN_DIM,
                                         FA_MASK_NONE, TIMED_ATTN_CHUNK, options->seed);
    if (status == FA_OK)
        status = time_attn_work(&t, milliseconds);
    attn_timing_free(&t);
    snprintf(label, cap, "attention B 1 H %d N %d D %d", TIMED_ATTN_HEADS, TIMED_ATTN_LENGTH,
             TIMED_ATTN_DIM);
    return status;
}

const fa_milestone_check stage04_checks[] = {
    {13, probe_m13, check_m13, NULL},
    {14, probe_m14, check_m14, NULL},
    {15, probe_m15, check_m15, time_m15},
    {16, probe_m16, check_m16, time_m16},
};
const int stage04_check_count = COUNT_OF(stage04_checks);

/* ---- the benchmark ------------------------------------------------------------------------- */

/** Softmax shapes of the benchmark, rows x n: 64 MiB of x each, short rows to one row per SM. */
static const int64_t BENCH_SOFTMAX_SHAPES[][2] = {
    {65536, 256}, {16384, 1024}, {4096, 4096}, {1024, 16384}, {132, 131072}};
static const int64_t BENCH_QUICK_SOFTMAX_SHAPE[2] = {1024, 1024};

static fa_status bench_softmax(const fa_run_options *options, double copy_gb_per_s)
{
    printf("\nOne-pass softmax (softmax_rows_online) against three passes (stage 03's "
           "ref_softmax_rows), fp32, lse written.\n"
           "Bytes are counted: one pass reads x twice and writes p (%d B per entry), three passes "
           "read x three times (%d B).\n"
           "Time is measured (median, L2 flushed before each run); GB/s = counted bytes / time.\n",
           ONLINE_SOFTMAX_BYTES_PER_ENTRY, THREE_PASS_SOFTMAX_BYTES_PER_ENTRY);
    printf("%8s %8s | %10s %10s %8s %7s | %10s %10s %8s | %7s\n", "rows", "n", "1-pass MB", "ms",
           "GB/s", "% copy", "3-pass MB", "ms", "GB/s", "speedup");
    const int shapes = options->quick ? 1 : COUNT_OF(BENCH_SOFTMAX_SHAPES);
    for (int s = 0; s < shapes; ++s) {
        const int64_t rows =
            options->quick ? BENCH_QUICK_SOFTMAX_SHAPE[0] : BENCH_SOFTMAX_SHAPES[s][0];
        const int64_t n =
            options->quick ? BENCH_QUICK_SOFTMAX_SHAPE[1] : BENCH_SOFTMAX_SHAPES[s][1];
        const double one_bytes = (double)online_softmax_bytes(rows, n);
        const double three_bytes = (double)three_pass_softmax_bytes(rows, n);
        softmax_timing t = {FA_IMPL_REFERENCE, NULL, NULL, NULL, 0, 0, false};
        double one_ms = 0.0, three_ms = -1.0;
        fa_status status = softmax_timing_alloc(&t, rows, n, options->seed);
        if (status == FA_OK)
            status = time_softmax_work(&t, &one_ms);
#if ONLINE_BENCH_WITH_STAGE03
        t.three_pass = true;
        if (status == FA_OK)
            status = time_softmax_work(&t, &three_ms);
#endif
        softmax_timing_free(&t);
        FA_TRY(status);
        const double one_gbps = one_bytes / (one_ms * 1e-3) / 1e9;
        printf("%8lld %8lld | %10.1f %10.4f %8.1f %6.1f%% | %10.1f ", (long long)rows, (long long)n,
               one_bytes / 1e6, one_ms, one_gbps, 100.0 * one_gbps / copy_gb_per_s,
               three_bytes / 1e6);
        if (three_ms > 0.0)
            printf("%10.4f %8.1f | %6.2fx\n", three_ms, three_bytes / (three_ms * 1e-3) / 1e9,
                   three_ms / one_ms);
        else
            printf("%10s %8s | %7s\n", "-", "-", "-");
    }
    return FA_OK;
}

/** Attention shapes of the benchmark: B, H, N (= Nq = Nk), D, causal, chunk. */
typedef struct attn_bench_shape {
    int64_t batch, heads, n, dim;
    fa_mask mask;
    int64_t chunk;
} attn_bench_shape;

static const attn_bench_shape BENCH_ATTN_SHAPES[] = {
    {1, 16, 1024, 64, FA_MASK_NONE, 32}, {1, 16, 1024, 64, FA_MASK_NONE, 64},
    {1, 16, 2048, 64, FA_MASK_NONE, 64}, {1, 16, 1024, 128, FA_MASK_CAUSAL_TOP_LEFT, 64},
    {4, 16, 512, 64, FA_MASK_NONE, 32},
};
static const attn_bench_shape BENCH_QUICK_ATTN_SHAPE = {1, 4, 256, 64, FA_MASK_NONE, 32};

static fa_status bench_attention(const fa_run_options *options)
{
    printf("\nOnline attention (attn_rows_online, one query row per warp) against the naive "
           "attention of stage 03 (S and P in device memory), fp32.\n"
           "Bytes are counted, each kernel's inputs read once and outputs written once: online = "
           "Q + K + V + O + lse; naive adds S written,\nread three times and overwritten by P, "
           "and P read again (6 N^2 floats per head). TFLOP/s = 4 B H N^2 D (halved when causal) "
           "/ time.\n");
    printf("%3s %3s %6s %4s %7s %5s | %9s %10s %8s | %9s %10s %8s | %7s\n", "B", "H", "N", "D",
           "mask", "chunk", "online MB", "ms", "TFLOP/s", "naive MB", "ms", "TFLOP/s", "speedup");
    const int shapes = options->quick ? 1 : COUNT_OF(BENCH_ATTN_SHAPES);
    for (int s = 0; s < shapes; ++s) {
        const attn_bench_shape *b =
            options->quick ? &BENCH_QUICK_ATTN_SHAPE : &BENCH_ATTN_SHAPES[s];
        const int64_t heads = b->batch * b->heads;
        const double online_bytes = (double)online_attn_bytes(heads, b->n, b->dim);
        const double naive_bytes = (double)naive_attn_bytes(heads, b->n, b->dim);
        const double n = (double)b->n, d = (double)b->dim;
        const double causal_share = b->mask == FA_MASK_NONE ? 1.0 : 0.5;
        const double flops = 4.0 * (double)heads * n * n * d * causal_share;
        attn_timing t = {FA_IMPL_REFERENCE, false, NULL, NULL, NULL, NULL, NULL, {0}};
        double online_ms = 0.0, naive_ms = -1.0;
        fa_status status = attn_timing_alloc(&t, b->batch, b->heads, b->n, b->dim, b->mask,
                                             b->chunk, options->seed);
        if (status == FA_OK)
            status = time_attn_work(&t, &online_ms);
#if ONLINE_BENCH_WITH_STAGE03
        t.naive = true;
        if (status == FA_OK)
            status = time_attn_work(&t, &naive_ms);
#endif
        attn_timing_free(&t);
        FA_TRY(status);
        printf("%3lld %3lld %6lld %4lld %7s %5lld | %9.1f %10.4f %8.3f | %9.1f ",
               (long long)b->batch, (long long)b->heads, (long long)b->n, (long long)b->dim,
               b->mask == FA_MASK_NONE ? "none" : "causal", (long long)b->chunk, online_bytes / 1e6,
               online_ms, flops / (online_ms * 1e-3) / 1e12, naive_bytes / 1e6);
        if (naive_ms > 0.0)
            printf("%10.4f %8.3f | %6.2fx\n", naive_ms, flops / (naive_ms * 1e-3) / 1e12,
                   naive_ms / online_ms);
        else
            printf("%10s %8s | %7s\n", "-", "-", "-");
    }
    return FA_OK;
}

static const size_t COPY_BYTES = (size_t)256 * MIB;

fa_status stage04_bench(const fa_run_options *options)
{
    FA_TRY(fa_print_configuration(stdout));
    double copy_gb_per_s = 0.0;
    FA_TRY(fa_measure_copy_bandwidth(COPY_BYTES, &copy_gb_per_s));
    printf("Copy bandwidth (256 MiB device to device, read + write): %.1f GB/s\n", copy_gb_per_s);
#if !ONLINE_BENCH_WITH_STAGE03
    printf("This build does not link stage 03's kernels: the three-pass columns show counted "
           "bytes only.\n");
#endif
    FA_TRY(bench_softmax(options, copy_gb_per_s));
    return bench_attention(options);
}
