/**
 * @file checks.c
 * @brief The GPU checks of M9-M12 and their timings: the stage as its driver
 *        sees it (see checks.h).
 *
 * Every case has a name the failure line prints and `--case` takes, and seeds
 * its own random stream from (seed, milestone, case), so a case reruns alone
 * with the same inputs.
 */
#include "checks.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "fa_attention_ref.h"
#include "fa_check.h"
#include "fa_device.h"
#include "fa_index.h"
#include "fa_problem.h"
#include "fa_rng.h"
#include "fa_timing.h"
#include "fixtures.h"
#include "model.h"
#include "references.h"
#include "runners.h"

/** Random cases run with --quick (small enough for compute-sanitizer). */
enum { QUICK_CASES = 4 };

static const fa_dtype DTYPES[] = {FA_F32, FA_BF16, FA_F16};

/* ---- host buffers of one case, released together ------------------------------------------ */

enum { MAX_TRACKED = 16 };

/** Host buffers of one case. Zero-initialise; release() frees them all. */
typedef struct tracker {
    void *host[MAX_TRACKED];
    int count;
} tracker;

/** malloc that the tracker frees; NULL when out of memory (or out of slots). */
static void *host_buffer(tracker *t, size_t bytes)
{
    if (t->count == MAX_TRACKED)
        return NULL;
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (p != NULL)
        t->host[t->count++] = p;
    return p;
}

static void release(tracker *t)
{
    for (int i = 0; i < t->count; ++i)
        free(t->host[i]);
    memset(t, 0, sizeof *t);
}

/** Records a case that could not even be set up because the host ran out of memory. */
static bool host_out_of_memory(fa_result *result, const char *case_name)
{
    return fa_result_status(result, case_name,
                            fa_fail(FA_ERR_OUT_OF_MEMORY, "checks: out of host memory"));
}

/* ---- one case ----------------------------------------------------------------------------- */

/** The host inputs of one case; each milestone reads the fields it needs. */
typedef struct attn_case {
    char name[FA_CASE_NAME];
    naive_attn_dims dims;
    fa_dtype dtype;
    float scale;
    fa_mask mask;
    const int64_t *key_length; /**< host [batch], or NULL */
    const void *q, *k, *v;     /**< dtype */
    const float *s;            /**< M10 input */
    const float *p;            /**< M11 input */
} attn_case;

/** Bytes of key_length (host [batch]) when the case has one. */
static size_t key_length_bytes(const attn_case *c)
{
    return c->key_length != NULL ? (size_t)c->dims.batch * sizeof(int64_t) : 0;
}

static bool run_scores(fa_impl impl, const attn_case *c, fa_result *result)
{
    tracker t = {0};
    bool ok = false;
    const naive_attn_dims d = c->dims;
    const size_t in = (size_t)fa_dtype_size(c->dtype);
    const size_t s_bytes = (size_t)attn_count_s(d) * sizeof(float);
    double *want = host_buffer(&t, (size_t)attn_count_s(d) * sizeof(double));
    double *bound = host_buffer(&t, (size_t)attn_count_s(d) * sizeof(double));
    float *got = host_buffer(&t, s_bytes);
    void *q = NULL, *k = NULL, *s = NULL;
    int64_t overwritten = 0;
    if (want == NULL || bound == NULL || got == NULL) {
        host_out_of_memory(result, c->name);
        goto done;
    }
    if (!fa_result_status(result, c->name,
                          fa_canary_input(&q, c->q, (size_t)attn_count_q(d) * in)) ||
        !fa_result_status(result, c->name,
                          fa_canary_input(&k, c->k, (size_t)attn_count_kv(d) * in)) ||
        !fa_result_status(result, c->name, fa_canary_output(&s, s_bytes)) ||
        !fa_result_status(result, c->name,
                          naive_scores_of(impl)(q, k, s, c->dtype, d, c->scale, 0)) ||
        !fa_result_status(result, c->name, fa_canary_download(got, s, s_bytes, &overwritten)) ||
        !fa_result_status(result, c->name,
                          attn_scores_reference(c->q, c->k, c->dtype, d, c->scale, want, bound)))
        goto done;
    const fa_shape shape = fa_shape_4d(d.batch, d.heads, d.nq, d.nk);
    ok = fa_result_judge(result, c->name, got, want, bound, &shape) &&
         fa_result_canaries(result, c->name, "s", overwritten);
done:
    fa_device_free(q);
    fa_device_free(k);
    fa_device_free(s);
    release(&t);
    return ok;
}

static bool run_softmax(fa_impl impl, const attn_case *c, fa_result *result)
{
    tracker t = {0};
    bool ok = false;
    const naive_attn_dims d = c->dims;
    const int64_t count = attn_count_s(d), rows = attn_count_rows(d);
    const size_t s_bytes = (size_t)count * sizeof(float), lse_bytes = (size_t)rows * sizeof(float);
    double *want_p = host_buffer(&t, (size_t)count * sizeof(double));
    double *bound_p = host_buffer(&t, (size_t)count * sizeof(double));
    double *want_lse = host_buffer(&t, (size_t)rows * sizeof(double));
    double *bound_lse = host_buffer(&t, (size_t)rows * sizeof(double));
    float *got_p = host_buffer(&t, s_bytes);
    float *got_lse = host_buffer(&t, lse_bytes);
    void *s = NULL, *p = NULL, *lse = NULL, *key_length = NULL;
    int64_t p_overwritten = 0, lse_overwritten = 0;
    if (!want_p || !bound_p || !want_lse || !bound_lse || !got_p || !got_lse) {
        host_out_of_memory(result, c->name);
        goto done;
    }
    if (!fa_result_status(result, c->name, fa_canary_input(&s, c->s, s_bytes)) ||
        !fa_result_status(result, c->name,
                          fa_canary_input(&key_length, c->key_length, key_length_bytes(c))) ||
        !fa_result_status(result, c->name, fa_canary_output(&p, s_bytes)) ||
        !fa_result_status(result, c->name, fa_canary_output(&lse, lse_bytes)) ||
        !fa_result_status(result, c->name,
                          naive_softmax_of(impl)(s, p, lse, d, c->mask, key_length, 0)) ||
        !fa_result_status(result, c->name,
                          fa_canary_download(got_p, p, s_bytes, &p_overwritten)) ||
        !fa_result_status(result, c->name,
                          fa_canary_download(got_lse, lse, lse_bytes, &lse_overwritten)) ||
        !fa_result_status(result, c->name,
                          softmax_rows_reference(c->s, d, c->mask, c->key_length, want_p, bound_p,
                                                 want_lse, bound_lse)))
        goto done;
    const fa_shape p_shape = fa_shape_4d(d.batch, d.heads, d.nq, d.nk);
    const fa_shape lse_shape = fa_shape_4d(d.batch, d.heads, d.nq, 1);
    fa_check_report report;
    if (!fa_check_covers(got_p, want_p, bound_p, count, &report)) {
        fa_result_uncovered(result, c->name, "p", &report, &p_shape);
        goto done;
    }
    if (!fa_check_covers(got_lse, want_lse, bound_lse, rows, &report)) {
        fa_result_uncovered(result, c->name, "lse", &report, &lse_shape);
        goto done;
    }
    ok = fa_result_canaries(result, c->name, "p", p_overwritten) &&
         fa_result_canaries(result, c->name, "lse", lse_overwritten);
done:
    fa_device_free(s);
    fa_device_free(key_length);
    fa_device_free(p);
    fa_device_free(lse);
    release(&t);
    return ok;
}

static bool run_pv(fa_impl impl, const attn_case *c, fa_result *result)
{
    tracker t = {0};
    bool ok = false;
    const naive_attn_dims d = c->dims;
    const size_t in = (size_t)fa_dtype_size(c->dtype);
    const size_t o_bytes = (size_t)attn_count_q(d) * sizeof(float);
    double *want = host_buffer(&t, (size_t)attn_count_q(d) * sizeof(double));
    double *bound = host_buffer(&t, (size_t)attn_count_q(d) * sizeof(double));
    float *got = host_buffer(&t, o_bytes);
    void *p = NULL, *v = NULL, *o = NULL;
    int64_t overwritten = 0;
    if (want == NULL || bound == NULL || got == NULL) {
        host_out_of_memory(result, c->name);
        goto done;
    }
    if (!fa_result_status(result, c->name,
                          fa_canary_input(&p, c->p, (size_t)attn_count_s(d) * sizeof(float))) ||
        !fa_result_status(result, c->name,
                          fa_canary_input(&v, c->v, (size_t)attn_count_kv(d) * in)) ||
        !fa_result_status(result, c->name, fa_canary_output(&o, o_bytes)) ||
        !fa_result_status(result, c->name, naive_pv_of(impl)(p, v, o, c->dtype, d, 0)) ||
        !fa_result_status(result, c->name, fa_canary_download(got, o, o_bytes, &overwritten)) ||
        !fa_result_status(result, c->name,
                          attn_pv_reference(c->p, c->v, c->dtype, d, want, bound)))
        goto done;
    const fa_shape shape = fa_shape_4d(d.batch, d.heads, d.nq, d.head_dim);
    ok = fa_result_judge(result, c->name, got, want, bound, &shape) &&
         fa_result_canaries(result, c->name, "o", overwritten);
done:
    fa_device_free(p);
    fa_device_free(v);
    fa_device_free(o);
    release(&t);
    return ok;
}

static bool run_naive(fa_impl impl, const attn_case *c, fa_result *result)
{
    tracker t = {0};
    fa_attn_reference ref = {0};
    bool ok = false;
    const naive_attn_dims d = c->dims;
    const size_t in = (size_t)fa_dtype_size(c->dtype);
    const size_t o_bytes = (size_t)attn_count_q(d) * sizeof(float);
    const size_t lse_bytes = (size_t)attn_count_rows(d) * sizeof(float);
    float *got_o = host_buffer(&t, o_bytes);
    float *got_lse = host_buffer(&t, lse_bytes);
    void *q = NULL, *k = NULL, *v = NULL, *key_length = NULL, *o = NULL, *lse = NULL;
    int64_t o_overwritten = 0, lse_overwritten = 0;
    if (got_o == NULL || got_lse == NULL) {
        host_out_of_memory(result, c->name);
        goto done;
    }
    if (!fa_result_status(result, c->name,
                          fa_canary_input(&q, c->q, (size_t)attn_count_q(d) * in)) ||
        !fa_result_status(result, c->name,
                          fa_canary_input(&k, c->k, (size_t)attn_count_kv(d) * in)) ||
        !fa_result_status(result, c->name,
                          fa_canary_input(&v, c->v, (size_t)attn_count_kv(d) * in)) ||
        !fa_result_status(result, c->name,
                          fa_canary_input(&key_length, c->key_length, key_length_bytes(c))) ||
        !fa_result_status(result, c->name, fa_canary_output(&o, o_bytes)) ||
        !fa_result_status(result, c->name, fa_canary_output(&lse, lse_bytes)) ||
        !fa_result_status(result, c->name,
                          naive_attention_of(impl)(q, k, v, o, lse, c->dtype, d, c->scale,
                                                   c->mask, key_length, 0)) ||
        !fa_result_status(result, c->name,
                          fa_canary_download(got_o, o, o_bytes, &o_overwritten)) ||
        !fa_result_status(result, c->name,
                          fa_canary_download(got_lse, lse, lse_bytes, &lse_overwritten)))
        goto done;
    const fa_attn_problem problem =
        naive_attn_problem(c->q, c->k, c->v, c->dtype, d, c->scale, c->mask, c->key_length);
    const fa_attn_method method = naive_attn_method(c->dtype);
    if (!fa_result_status(result, c->name, fa_attention_reference(&problem, &method, &ref)))
        goto done;
    fa_check_report o_report, lse_report;
    if (!fa_attention_covers(&ref, got_o, got_lse, &o_report, &lse_report)) {
        const bool o_failed = o_report.uncovered > 0 || o_report.status != FA_OK;
        const fa_shape shape = o_failed ? fa_shape_4d(d.batch, d.heads, d.nq, d.head_dim)
                                        : fa_shape_4d(d.batch, d.heads, d.nq, 1);
        fa_result_uncovered(result, c->name, o_failed ? "o" : "lse",
                            o_failed ? &o_report : &lse_report, &shape);
        goto done;
    }
    ok = fa_result_canaries(result, c->name, "o", o_overwritten) &&
         fa_result_canaries(result, c->name, "lse", lse_overwritten);
done:
    fa_attn_reference_free(&ref);
    fa_device_free(q);
    fa_device_free(k);
    fa_device_free(v);
    fa_device_free(key_length);
    fa_device_free(o);
    fa_device_free(lse);
    release(&t);
    return ok;
}

/* ---- fixtures ----------------------------------------------------------------------------- */

typedef bool (*case_runner)(fa_impl, const attn_case *, fa_result *);

/** The fixtures run unless problem flags ask for one case of their own. */
static bool wants_fixtures(const fa_run_options *options)
{
    return options->problem.given == 0;
}

/** Converts @p n floats to a host array of @p dtype (exact for the fixtures' values). */
static void *to_dtype(tracker *t, const float *x, int64_t n, fa_dtype dtype)
{
    void *out = host_buffer(t, (size_t)n * (size_t)fa_dtype_size(dtype));
    if (out != NULL)
        for (int64_t i = 0; i < n; ++i)
            fa_store(out, dtype, i, x[i]);
    return out;
}

/** The expected values of a fixture, rounded to fp32 to serve as the next step's input. */
static float *to_float(tracker *t, const double *x, int64_t n)
{
    float *out = host_buffer(t, (size_t)n * sizeof(float));
    if (out != NULL)
        for (int64_t i = 0; i < n; ++i)
            out[i] = (float)x[i];
    return out;
}

/**
 * Runs @p run on every fixture in every dtype ("fixture uniform logits
 * (bf16)"); returns false at the first failure. Adds the cases run to *@p cases.
 */
static bool run_fixtures(fa_impl impl, const fa_run_options *options, case_runner run,
                         fa_result *result, int *cases)
{
    for (int f = 0; f < attn_fixture_count && wants_fixtures(options); ++f)
        for (int t = 0; t < FA_COUNT_OF(DTYPES); ++t) {
            const attn_fixture *fx = &attn_fixtures[f];
            attn_case c = {.dims = fx->dims, .dtype = DTYPES[t], .scale = fx->scale,
                           .mask = fx->mask, .key_length = fx->key_length};
            snprintf(c.name, sizeof c.name, "fixture %s (%s)", fx->name,
                     fa_dtype_name(DTYPES[t]));
            if (!fa_case_begin(result, options, c.name))
                continue;
            tracker mem = {0};
            c.q = to_dtype(&mem, fx->q, attn_count_q(fx->dims), DTYPES[t]);
            c.k = to_dtype(&mem, fx->k, attn_count_kv(fx->dims), DTYPES[t]);
            c.v = to_dtype(&mem, fx->v, attn_count_kv(fx->dims), DTYPES[t]);
            c.s = to_float(&mem, fx->s, attn_count_s(fx->dims));
            c.p = to_float(&mem, fx->p, attn_count_s(fx->dims));
            const bool ready = c.q && c.k && c.v && c.s && c.p;
            const bool ok = ready ? run(impl, &c, result) : host_out_of_memory(result, c.name);
            release(&mem);
            if (!ok)
                return false;
            ++*cases;
        }
    return true;
}

/* ---- random cases, and the case of the problem flags -------------------------------------- */

/** A host array of n values of @p dtype: normal(offset, sigma^2), rounded to the dtype. */
static void *random_tensor(tracker *t, int64_t n, fa_dtype dtype, double sigma, double offset,
                           fa_rng *rng)
{
    float *x = host_buffer(t, (size_t)n * sizeof(float));
    void *out = host_buffer(t, (size_t)n * (size_t)fa_dtype_size(dtype));
    if (x == NULL || out == NULL)
        return NULL;
    fa_fill(x, n, FA_FILL_GAUSSIAN, sigma, rng);
    for (int64_t i = 0; i < n; ++i)
        fa_store(out, dtype, i, x[i] + (float)offset);
    return out;
}

/**
 * Padding lengths for each batch drawn from {0, 1, nk / 2, nk}: rows with
 * no key, with one key, with half of them and with all (the reference takes
 * lengths in 0 .. nk; the kernels' clamping of others is tested on the CPU).
 */
static int64_t *random_key_length(tracker *t, int64_t batch, int64_t nk, fa_rng *rng)
{
    int64_t *length = host_buffer(t, (size_t)batch * sizeof(int64_t));
    if (length == NULL)
        return NULL;
    const int64_t choices[] = {0, nk > 0 ? 1 : 0, nk / 2, nk};
    for (int64_t b = 0; b < batch; ++b)
        length[b] = choices[fa_rng_int(rng, 0, 3)];
    return length;
}

/** One random case of any milestone: sizes, dtype, mask, spreads. */
typedef struct random_shape {
    naive_attn_dims dims;
    fa_dtype dtype;
    fa_mask mask;
    bool padded;     /**< with random key lengths */
    double spread;   /**< standard deviation of the scores (0.3, 1, 3 or 8, as in \ref numerics) */
    float scale;     /**< 0: the default */
    double v_offset; /**< added to v: large offsets test the cancellation term of the bound */
} random_shape;

/* Tiles are 32 wide and the softmax has 256 threads: sizes straddle both. The last
 * case of each has no key at all (nk = 0): o must still be written (zeros), lse = -inf. */
static const random_shape SCORES_SHAPES[] = {
    {{1, 1, 1, 1, 1}, FA_F32, FA_MASK_NONE, false, 1, 0, 0},
    {{1, 1, 31, 33, 7}, FA_BF16, FA_MASK_NONE, false, 3, 0, 0},
    {{1, 1, 32, 32, 32}, FA_F16, FA_MASK_NONE, false, 0.3, 0, 0},
    {{2, 3, 33, 65, 64}, FA_F32, FA_MASK_NONE, false, 8, 0.125f, 0},
    {{1, 2, 100, 37, 128}, FA_BF16, FA_MASK_NONE, false, 1, 0, 0},
    {{1, 1, 257, 129, 256}, FA_F16, FA_MASK_NONE, false, 3, 0, 0},
    {{1, 1, 1, 300, 96}, FA_F32, FA_MASK_NONE, false, 8, 0, 0},
    {{1, 1, 300, 1, 40}, FA_BF16, FA_MASK_NONE, false, 1, 0, 0},
    {{1, 2, 5, 0, 8}, FA_F16, FA_MASK_NONE, false, 1, 0, 0},
};

static const random_shape SOFTMAX_SHAPES[] = {
    {{1, 1, 1, 1, 1}, FA_F32, FA_MASK_NONE, false, 1, 0, 0},
    {{1, 1, 3, 255, 1}, FA_F32, FA_MASK_CAUSAL_TOP_LEFT, false, 3, 0, 0},
    {{1, 2, 4, 256, 1}, FA_F32, FA_MASK_CAUSAL_TOP_LEFT, true, 8, 0, 0},
    {{2, 1, 5, 257, 1}, FA_F32, FA_MASK_NONE, true, 0.3, 0, 0},
    {{1, 1, 40, 33, 1}, FA_F32, FA_MASK_CAUSAL_BOTTOM_RIGHT, false, 1, 0, 0},
    {{2, 2, 17, 1000, 1}, FA_F32, FA_MASK_CAUSAL_TOP_LEFT, true, 3, 0, 0},
    {{1, 1, 3, 3000, 1}, FA_F32, FA_MASK_NONE, false, 8, 0, 0},
    {{1, 1, 2, 70001, 1}, FA_F32, FA_MASK_CAUSAL_BOTTOM_RIGHT, false, 1, 0, 0},
    {{1, 2, 3, 0, 1}, FA_F32, FA_MASK_CAUSAL_TOP_LEFT, false, 1, 0, 0},
};

static const random_shape PV_SHAPES[] = {
    {{1, 1, 1, 1, 1}, FA_F32, FA_MASK_NONE, false, 1, 0, 0},
    {{1, 1, 31, 33, 7}, FA_BF16, FA_MASK_NONE, false, 1, 0, 0},
    {{1, 1, 32, 32, 32}, FA_F16, FA_MASK_NONE, false, 1, 0, 1000},
    {{2, 3, 33, 65, 64}, FA_F32, FA_MASK_NONE, false, 1, 0, 0},
    {{1, 2, 100, 37, 128}, FA_BF16, FA_MASK_NONE, false, 1, 0, 0},
    {{1, 1, 129, 257, 256}, FA_F16, FA_MASK_NONE, false, 1, 0, 0},
    {{1, 1, 1, 300, 96}, FA_F32, FA_MASK_NONE, false, 1, 0, 1000},
    {{1, 1, 300, 1, 40}, FA_BF16, FA_MASK_NONE, false, 1, 0, 0},
    {{1, 1, 5, 0, 16}, FA_F32, FA_MASK_NONE, false, 1, 0, 0},
};

static const random_shape NAIVE_SHAPES[] = {
    {{1, 1, 1, 1, 1}, FA_F32, FA_MASK_NONE, false, 1, 0, 0},
    {{1, 1, 1, 77, 64}, FA_BF16, FA_MASK_CAUSAL_BOTTOM_RIGHT, false, 3, 0, 0},
    {{2, 3, 33, 31, 16}, FA_F16, FA_MASK_CAUSAL_TOP_LEFT, false, 8, 0, 0},
    {{1, 2, 64, 64, 128}, FA_F32, FA_MASK_CAUSAL_TOP_LEFT, true, 1, 0, 0},
    {{2, 1, 100, 37, 40}, FA_BF16, FA_MASK_NONE, true, 0.3, 0.25f, 0},
    {{1, 1, 37, 100, 256}, FA_F16, FA_MASK_CAUSAL_TOP_LEFT, false, 3, 0, 1000},
    {{1, 4, 129, 257, 64}, FA_BF16, FA_MASK_CAUSAL_BOTTOM_RIGHT, false, 8, 0, 0},
    {{1, 1, 300, 300, 32}, FA_F32, FA_MASK_NONE, false, 1, 0, 0},
    {{2, 1, 3, 0, 32}, FA_BF16, FA_MASK_CAUSAL_TOP_LEFT, true, 1, 0, 0},
};

enum { SHAPES_PER_MILESTONE = FA_COUNT_OF(SCORES_SHAPES) };
_Static_assert(FA_COUNT_OF(SOFTMAX_SHAPES) == SHAPES_PER_MILESTONE &&
                   FA_COUNT_OF(PV_SHAPES) == SHAPES_PER_MILESTONE &&
                   FA_COUNT_OF(NAIVE_SHAPES) == SHAPES_PER_MILESTONE,
               "one table length");
_Static_assert((int)QUICK_CASES <= (int)SHAPES_PER_MILESTONE, "quick runs a prefix");

/**
 * The case of the problem flags: each field a flag leaves out takes this
 * value (sizes off the tiles, a spread of 3, no padding: no flag sets one).
 */
static const random_shape FLAGS_DEFAULT = {{1, 2, 113, 203, 64}, FA_F32, FA_MASK_NONE,
                                           false, 3, 0, 0};

/** The random stream of the flags' case: past every index of the tables. */
enum { FLAGS_CASE_INDEX = SHAPES_PER_MILESTONE };

static random_shape flags_shape(const fa_problem *p)
{
    random_shape sh = FLAGS_DEFAULT;
    sh.dims.batch = fa_problem_get(p, FA_PROBLEM_BATCH, sh.dims.batch);
    sh.dims.heads = fa_problem_get(p, FA_PROBLEM_HEADS, sh.dims.heads);
    sh.dims.nq = fa_problem_get(p, FA_PROBLEM_NQ, sh.dims.nq);
    sh.dims.nk = fa_problem_get(p, FA_PROBLEM_NK, sh.dims.nk);
    sh.dims.head_dim = fa_problem_get(p, FA_PROBLEM_D, sh.dims.head_dim);
    sh.dtype = (fa_dtype)fa_problem_get(p, FA_PROBLEM_DTYPE, sh.dtype);
    sh.mask = (fa_mask)fa_problem_get(p, FA_PROBLEM_MASK, sh.mask);
    return sh;
}

/** Which inputs a milestone reads. */
typedef enum case_inputs {
    INPUTS_QK = 1,     /**< M9 */
    INPUTS_S = 2,      /**< M10 */
    INPUTS_PV = 4,     /**< M11 */
    INPUTS_QKV = 8     /**< M12 */
} case_inputs;

/** A milestone as its random cases see it. */
typedef struct milestone_cases {
    int number;                  /**< 9..12: seeds the cases' streams */
    const char *launcher;        /**< names the launcher in a refusal of the flags' sizes */
    bool reads_head_dim;         /**< M10 does not */
    const random_shape *shapes;  /**< SHAPES_PER_MILESTONE of them */
    case_inputs inputs;
    case_runner run;
} milestone_cases;

/** "random 3 B=2 H=3 Nq=33 Nk=65 D=64 fp32 none", or "flags ..." for the problem flags. */
static void shape_name(char *name, size_t cap, const char *kind, const random_shape *sh)
{
    const naive_attn_dims d = sh->dims;
    snprintf(name, cap, "%s B=%lld H=%lld Nq=%lld Nk=%lld D=%lld %s %s%s", kind,
             (long long)d.batch, (long long)d.heads, (long long)d.nq, (long long)d.nk,
             (long long)d.head_dim, fa_dtype_name(sh->dtype), fa_mask_flag_name(sh->mask),
             sh->padded ? " padded" : "");
}

/** Row-stochastic weights with about a quarter exact zeros (as masked keys give). */
static float *random_weights(tracker *t, naive_attn_dims d, fa_rng *rng)
{
    float *p = host_buffer(t, (size_t)attn_count_s(d) * sizeof(float));
    if (p == NULL)
        return NULL;
    for (int64_t row = 0; row < attn_count_rows(d); ++row) {
        float *w = p + row * d.nk;
        float sum = 0.0f;
        for (int64_t j = 0; j < d.nk; ++j) {
            w[j] = fa_rng_uniform(rng) < 0.25 ? 0.0f : (float)fa_rng_uniform(rng);
            sum += w[j];
        }
        for (int64_t j = 0; j < d.nk; ++j)
            w[j] = sum > 0.0f ? w[j] / sum : 0.0f;
    }
    return p;
}

/**
 * Scores with the shape's spread, plus a bias per row drawn from [-32, 32)
 * so that the maximum sits far from 0 (an lse that forgets the max is then
 * far outside the bound).
 */
static float *random_scores(tracker *t, naive_attn_dims d, double spread, fa_rng *rng)
{
    float *s = host_buffer(t, (size_t)attn_count_s(d) * sizeof(float));
    if (s == NULL)
        return NULL;
    fa_fill(s, attn_count_s(d), FA_FILL_GAUSSIAN, spread, rng);
    for (int64_t row = 0; row < attn_count_rows(d); ++row) {
        const float bias = (float)(64 * fa_rng_uniform(rng) - 32);
        for (int64_t j = 0; j < d.nk; ++j)
            s[row * d.nk + j] += bias;
    }
    return s;
}

/** Builds the inputs of shape @p sh from its own stream @p index and runs the case. */
static bool run_shape(fa_impl impl, const fa_run_options *options, const milestone_cases *m,
                      const random_shape *sh, int index, const char *name, fa_result *result)
{
    const naive_attn_dims d = sh->dims;
    tracker mem = {0};
    fa_rng rng;
    fa_rng_seed(&rng, options->seed, ((uint64_t)m->number << 32) | (uint64_t)index);
    attn_case c = {.dims = d, .dtype = sh->dtype, .scale = sh->scale, .mask = sh->mask};
    snprintf(c.name, sizeof c.name, "%s", name);
    /* q and k ~ normal(0, spread): their scaled dot product has about that spread. */
    const double sigma = sqrt(sh->spread);
    bool ready = true;
    if (m->inputs & (INPUTS_QK | INPUTS_QKV)) {
        c.q = random_tensor(&mem, attn_count_q(d), sh->dtype, sigma, 0, &rng);
        c.k = random_tensor(&mem, attn_count_kv(d), sh->dtype, sigma, 0, &rng);
        ready = ready && c.q && c.k;
    }
    if (m->inputs & (INPUTS_PV | INPUTS_QKV)) {
        c.v = random_tensor(&mem, attn_count_kv(d), sh->dtype, 1, sh->v_offset, &rng);
        ready = ready && c.v;
    }
    if (m->inputs & INPUTS_S) {
        c.s = random_scores(&mem, d, sh->spread, &rng);
        ready = ready && c.s;
    }
    if (m->inputs & INPUTS_PV) {
        c.p = random_weights(&mem, d, &rng);
        ready = ready && c.p;
    }
    if (sh->padded) {
        c.key_length = random_key_length(&mem, d.batch, d.nk, &rng);
        ready = ready && c.key_length;
    }
    const bool ok = ready ? m->run(impl, &c, result) : host_out_of_memory(result, c.name);
    release(&mem);
    return ok;
}

/**
 * The random cases of a milestone ("random 3 ..."), or the one case of the
 * problem flags ("flags ..."), whose sizes the launcher's own size checks
 * judge before anything is allocated. Adds the cases run to *@p cases.
 */
static bool run_random(fa_impl impl, const fa_run_options *options, const milestone_cases *m,
                       fa_result *result, int *cases)
{
    char name[FA_CASE_NAME];
    if (!wants_fixtures(options)) {
        const random_shape sh = flags_shape(&options->problem);
        shape_name(name, sizeof name, "flags", &sh);
        if (!fa_case_begin(result, options, name))
            return true;
        if (!fa_result_status(result, name,
                              naive_attn_dims_validate(m->launcher, sh.dims, m->reads_head_dim)) ||
            !run_shape(impl, options, m, &sh, FLAGS_CASE_INDEX, name, result))
            return false;
        ++*cases;
        return true;
    }
    const int count = options->quick ? QUICK_CASES : SHAPES_PER_MILESTONE;
    for (int i = 0; i < count; ++i) {
        char kind[32];
        snprintf(kind, sizeof kind, "random %d", i);
        shape_name(name, sizeof name, kind, &m->shapes[i]);
        if (!fa_case_begin(result, options, name))
            continue;
        if (!run_shape(impl, options, m, &m->shapes[i], i, name, result))
            return false;
        ++*cases;
    }
    return true;
}

/* ---- M10: scores of -inf ------------------------------------------------------------------- */

/**
 * M10 alone: a score of -inf acts as a masked key (weight 0), and a row whose
 * allowed scores are all -inf is empty (p = 0, lse = -inf), not 0/0.
 * Row 0: [-inf, -inf, -inf, -inf]; row 1: [-inf, 2, -inf, 2] -> [0, 1/2, 0, 1/2],
 * lse = 2 + ln 2.
 */
static const float NEG_INF_SCORES[] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY,
                                       -INFINITY, 2,         -INFINITY, 2};

static bool run_neg_inf(fa_impl impl, const fa_run_options *options, fa_result *result,
                        int *cases)
{
    const attn_case neg_inf = {.name = "fixture scores of -inf",
                               .dims = {1, 1, 2, 4, 1},
                               .dtype = FA_F32,
                               .mask = FA_MASK_NONE,
                               .s = NEG_INF_SCORES};
    if (!wants_fixtures(options) || !fa_case_begin(result, options, neg_inf.name))
        return true;
    if (!run_softmax(impl, &neg_inf, result))
        return false;
    ++*cases;
    return true;
}

/* ---- M12: a workspace that does not fit --------------------------------------------------- */

/**
 * B = 1, H = 1, Nq = Nk = 2^20, D = 1: 4 MiB per tensor but a 4 TiB score
 * matrix. The launcher must refuse with FA_ERR_OUT_OF_MEMORY and a message
 * with the byte counts, and leave o and lse untouched.
 */
static bool run_refusal(fa_impl impl, const fa_run_options *options, fa_result *result,
                        int *cases)
{
    const char *name = "workspace larger than the device Nq=Nk=2^20";
    if (!wants_fixtures(options) || !fa_case_begin(result, options, name))
        return true;
    const naive_attn_dims d = {1, 1, 1 << 20, 1 << 20, 1};
    const int64_t count = attn_count_q(d);
    const size_t bytes = (size_t)count * sizeof(float);
    tracker t = {0};
    bool ok = false;
    float *zeros = host_buffer(&t, bytes), *got_o = host_buffer(&t, bytes);
    float *got_lse = host_buffer(&t, bytes);
    void *qkv = NULL, *o = NULL, *lse = NULL;
    int64_t overwritten = 0;
    if (zeros == NULL || got_o == NULL || got_lse == NULL) {
        host_out_of_memory(result, name);
        goto done;
    }
    memset(zeros, 0, bytes);
    if (!fa_result_status(result, name, fa_canary_input(&qkv, zeros, bytes)) ||
        !fa_result_status(result, name, fa_canary_output(&o, bytes)) ||
        !fa_result_status(result, name, fa_canary_output(&lse, bytes)))
        goto done;
    const fa_status status =
        naive_attention_of(impl)(qkv, qkv, qkv, o, lse, FA_F32, d, 0, FA_MASK_NONE, NULL, 0);
    if (status == FA_ERR_NOT_IMPLEMENTED) {
        fa_result_status(result, name, status);
        goto done;
    }
    if (status != FA_ERR_OUT_OF_MEMORY || strstr(fa_last_error(), "bytes") == NULL) {
        fa_result_fail(result, name,
                       "expected FA_ERR_OUT_OF_MEMORY with the bytes needed, got %s (%s)",
                       fa_status_name(status), fa_last_error());
        goto done;
    }
    if (!fa_result_status(result, name, fa_canary_download(got_o, o, bytes, &overwritten)) ||
        !fa_result_status(result, name, fa_canary_download(got_lse, lse, bytes, &overwritten)))
        goto done;
    for (int64_t i = 0; i < 2 * count; ++i) {
        const float value = i < count ? got_o[i] : got_lse[i - count];
        if (!fa_is_poison(value)) {
            fa_result_fail(result, name, "refused, but wrote element %lld of %s",
                           (long long)(i % count), i < count ? "o" : "lse");
            goto done;
        }
    }
    ok = fa_result_canaries(result, name, "o or lse", overwritten);
    if (ok)
        ++*cases;
done:
    fa_device_free(qkv);
    fa_device_free(o);
    fa_device_free(lse);
    release(&t);
    return ok;
}

/* ---- the milestones ----------------------------------------------------------------------- */

static const milestone_cases SCORES = {9, "attn_scores", true, SCORES_SHAPES, INPUTS_QK,
                                       run_scores};
static const milestone_cases SOFTMAX = {10, "softmax_rows", false, SOFTMAX_SHAPES, INPUTS_S,
                                        run_softmax};
static const milestone_cases PV = {11, "attn_pv", true, PV_SHAPES, INPUTS_PV, run_pv};
static const milestone_cases NAIVE = {12, "attn_naive", true, NAIVE_SHAPES, INPUTS_QKV,
                                      run_naive};

/** Fixtures and random cases of @p m; @p extra (may be NULL) runs its own cases last. */
static void check_milestone(fa_impl impl, const fa_run_options *options,
                            const milestone_cases *m, fa_result *result,
                            bool (*extra)(fa_impl, const fa_run_options *, fa_result *, int *),
                            const char *extra_label)
{
    int fixtures = 0, randoms = 0, extras = 0;
    if (!run_fixtures(impl, options, m->run, result, &fixtures) ||
        (extra != NULL && !extra(impl, options, result, &extras)) ||
        !run_random(impl, options, m, result, &randoms))
        return;
    if (!wants_fixtures(options))
        fa_result_pass(result, "%d case of the problem flags", randoms);
    else
        fa_result_pass(result, "%d fixture cases (%d fixtures x 3 dtypes), %d random cases%s%s",
                       fixtures, attn_fixture_count, randoms, extras > 0 ? ", " : "",
                       extras > 0 ? extra_label : "");
}

static void check_scores(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    check_milestone(impl, options, &SCORES, result, NULL, NULL);
}

static void check_softmax(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    check_milestone(impl, options, &SOFTMAX, result, run_neg_inf, "the -inf rows");
}

static void check_pv(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    check_milestone(impl, options, &PV, result, NULL, NULL);
}

static void check_naive(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    check_milestone(impl, options, &NAIVE, result, run_refusal,
                    "refusal of a workspace larger than the device");
}

/* ---- probes: is the implementation written? (no GPU) -------------------------------------- */

/** Sizes of the empty problem the probes pass: nothing to do, so no GPU is touched. */
static const naive_attn_dims EMPTY = {0, 0, 0, 0, 1};

static fa_status probe_scores(fa_impl impl, const fa_run_options *options)
{
    (void)options; /* one version */
    return naive_scores_of(impl)(NULL, NULL, NULL, FA_F32, EMPTY, 0, 0);
}

static fa_status probe_softmax(fa_impl impl, const fa_run_options *options)
{
    (void)options; /* one version */
    return naive_softmax_of(impl)(NULL, NULL, NULL, EMPTY, FA_MASK_NONE, NULL, 0);
}

static fa_status probe_pv(fa_impl impl, const fa_run_options *options)
{
    (void)options; /* one version */
    return naive_pv_of(impl)(NULL, NULL, NULL, FA_F32, EMPTY, 0);
}

static fa_status probe_naive(fa_impl impl, const fa_run_options *options)
{
    (void)options; /* one version */
    return naive_attention_of(impl)(NULL, NULL, NULL, NULL, NULL, FA_F32, EMPTY, 0, FA_MASK_NONE,
                                    NULL, 0);
}

/* ---- timing ------------------------------------------------------------------------------- */

/** The timings' problem: B = 1, H = 16, N = 2048 (--quick: 256), D = 128, bf16, no mask. */
enum { TIMED_N = 2048, TIMED_QUICK_N = 256 };
static const fa_dtype TIMED_DTYPE = FA_BF16;

/**
 * Median milliseconds of milestone @p milestone on the timings' problem, or
 * on the problem of the flags' case. M10 and M11 start from the reference's
 * scores (then probabilities).
 */
static fa_status time_milestone(int milestone,
                                fa_status (*probe)(fa_impl, const fa_run_options *), fa_impl impl,
                                const fa_run_options *options, double *milliseconds,
                                char *label, size_t cap)
{
    FA_TRY(probe(impl, options)); /* not implemented: say so before allocating */
    naive_attn_dims d = naive_timed_square_dims(options->quick ? TIMED_QUICK_N : TIMED_N);
    fa_dtype dtype = TIMED_DTYPE;
    fa_mask mask = FA_MASK_NONE;
    if (!wants_fixtures(options)) {
        const random_shape sh = flags_shape(&options->problem);
        d = sh.dims;
        dtype = sh.dtype;
        mask = sh.mask;
    }
    FA_TRY(naive_attn_dims_validate("timing", d, true));
    naive_timed_problem tp;
    FA_TRY(naive_timed_alloc(&tp, d, dtype, mask, milestone != 12, options->seed));
    fa_status status = FA_OK;
    if (milestone == 10 || milestone == 11)
        status = ref_attn_scores(tp.q, tp.k, tp.s, dtype, d, 0, 0);
    if (status == FA_OK && milestone == 11)
        status = ref_softmax_rows(tp.s, tp.s, tp.lse, d, mask, NULL, 0);
    fa_stats ms = {0};
    const fa_timing_options timing = fa_timing_defaults();
    if (status == FA_OK)
        status = naive_timed_run(impl, milestone, &tp, &timing, &ms);
    naive_timed_free(&tp);
    FA_TRY(status);
    *milliseconds = ms.median;
    snprintf(label, cap, "B=%lld H=%lld Nq=%lld Nk=%lld D=%lld %s", (long long)d.batch,
             (long long)d.heads, (long long)d.nq, (long long)d.nk, (long long)d.head_dim,
             fa_dtype_name(dtype));
    return FA_OK;
}

static fa_status time_scores(fa_impl impl, const fa_run_options *options, double *ms,
                             char *label, size_t cap)
{
    return time_milestone(9, probe_scores, impl, options, ms, label, cap);
}

static fa_status time_softmax(fa_impl impl, const fa_run_options *options, double *ms,
                              char *label, size_t cap)
{
    return time_milestone(10, probe_softmax, impl, options, ms, label, cap);
}

static fa_status time_pv(fa_impl impl, const fa_run_options *options, double *ms, char *label,
                         size_t cap)
{
    return time_milestone(11, probe_pv, impl, options, ms, label, cap);
}

static fa_status time_naive(fa_impl impl, const fa_run_options *options, double *ms,
                            char *label, size_t cap)
{
    return time_milestone(12, probe_naive, impl, options, ms, label, cap);
}

static const fa_milestone_check checks[] = {
    {9, probe_scores, check_scores, time_scores, false},
    {10, probe_softmax, check_softmax, time_softmax, false},
    {11, probe_pv, check_pv, time_pv, false},
    {12, probe_naive, check_naive, time_naive, false},
};

const fa_stage_desc stage03 = {3, checks, FA_COUNT_OF(checks), stage03_bench};
