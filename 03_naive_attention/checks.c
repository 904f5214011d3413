/**
 * @file checks.c
 * @brief GPU checks of M9-M12 and the stage 03 benchmark (see checks.h).
 */
#include "checks.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "attention.h"
#include "fa_attention_ref.h"
#include "fa_check.h"
#include "fa_device.h"
#include "fa_rng.h"
#include "fa_timing.h"
#include "fixtures.h"
#include "model.h"
#include "references.h"

/**
 * Poisoned bytes after every device buffer. After an output they must still
 * hold the poison (nothing written past the end); after an input they read as
 * NaN in every dtype (0xFFFF and 0xFFFFFFFF are NaNs), so a kernel that reads
 * past its input gets NaN into its output.
 */
enum { CANARY_BYTES = 256 };
_Static_assert(CANARY_BYTES % sizeof(double) == 0, "canaries keep every buffer aligned");

/** Random cases run with --quick (small enough for compute-sanitizer). */
enum { QUICK_CASES = 4 };

static const fa_dtype DTYPES[] = {FA_F32, FA_BF16, FA_F16};
enum { DTYPE_COUNT = sizeof DTYPES / sizeof DTYPES[0] };

/* ---- allocations of one case, released together ------------------------------------------ */

enum { MAX_TRACKED = 16 };

/** Host and device buffers of one case. Zero-initialise; release() frees them all. */
typedef struct tracker {
    void *host[MAX_TRACKED];
    int host_count;
    void *device[MAX_TRACKED];
    int device_count;
} tracker;

/** malloc that the tracker frees; NULL when out of memory (or out of slots). */
static void *host_buffer(tracker *t, size_t bytes)
{
    if (t->host_count == MAX_TRACKED)
        return NULL;
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (p != NULL)
        t->host[t->host_count++] = p;
    return p;
}

/** A device buffer of @p bytes plus the canary, all poisoned, then @p host (if any) uploaded. */
static fa_status device_buffer(tracker *t, void **p, const void *host, size_t bytes)
{
    *p = NULL;
    if (t->device_count == MAX_TRACKED)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "checks: more than %d device buffers in a case",
                       MAX_TRACKED);
    FA_TRY(fa_device_alloc(p, bytes + CANARY_BYTES));
    t->device[t->device_count++] = *p;
    FA_TRY(fa_device_poison(*p, bytes + CANARY_BYTES));
    if (host != NULL)
        FA_TRY(fa_upload(*p, host, bytes));
    return FA_OK;
}

static void release(tracker *t)
{
    for (int i = 0; i < t->host_count; ++i)
        free(t->host[i]);
    for (int i = 0; i < t->device_count; ++i)
        fa_device_free(t->device[i]);
    memset(t, 0, sizeof *t);
}

/** Records a case that could not even be set up because the host ran out of memory. */
static bool host_out_of_memory(fa_result *result, const char *case_name)
{
    return fa_result_status(result, case_name,
                            fa_fail(FA_ERR_OUT_OF_MEMORY, "checks: out of host memory"));
}

/** FAILED unless the @p CANARY_BYTES at @p tail still hold the poison. */
static bool canary_intact(fa_result *result, const char *case_name, const char *what,
                          const void *tail)
{
    const unsigned char *bytes = tail;
    for (int i = 0; i < CANARY_BYTES; ++i)
        if (bytes[i] != FA_POISON_BYTE) {
            result->outcome = FA_OUTCOME_FAILED;
            snprintf(result->detail, sizeof result->detail,
                     "case '%s': wrote past the end of %s (byte %d after its last element)",
                     case_name, what, i);
            return false;
        }
    return true;
}

/* ---- the implementations ----------------------------------------------------------------- */

typedef fa_status (*scores_launcher)(const void *, const void *, float *, fa_dtype,
                                     naive_attn_dims, float, cudaStream_t);
typedef fa_status (*softmax_launcher)(const float *, float *, float *, naive_attn_dims, fa_mask,
                                      const int64_t *, cudaStream_t);
typedef fa_status (*pv_launcher)(const float *, const void *, float *, fa_dtype,
                                 naive_attn_dims, cudaStream_t);
typedef fa_status (*naive_launcher)(const void *, const void *, const void *, float *, float *,
                                    fa_dtype, naive_attn_dims, float, fa_mask, const int64_t *,
                                    cudaStream_t);

static scores_launcher scores_of(fa_impl impl)
{
    return impl == FA_IMPL_LEARNER ? learner_attn_scores : ref_attn_scores;
}
static softmax_launcher softmax_of(fa_impl impl)
{
    return impl == FA_IMPL_LEARNER ? learner_softmax_rows : ref_softmax_rows;
}
static pv_launcher pv_of(fa_impl impl)
{
    return impl == FA_IMPL_LEARNER ? learner_attn_pv : ref_attn_pv;
}
static naive_launcher naive_of(fa_impl impl)
{
    return impl == FA_IMPL_LEARNER ? learner_attn_naive : ref_attn_naive;
}

/* ---- one case ----------------------------------------------------------------------------- */

/** The host inputs of one case; each milestone reads the fields it needs. */
typedef struct attn_case {
    char name[128];
    naive_attn_dims dims;
    fa_dtype dtype;
    float scale;
    fa_mask mask;
    const int64_t *key_length; /**< host [batch], or NULL */
    const void *q, *k, *v;     /**< dtype */
    const float *s;            /**< M10 input */
    const float *p;            /**< M11 input */
} attn_case;

static int64_t count_q(naive_attn_dims d) { return d.batch * d.heads * d.nq * d.head_dim; }
static int64_t count_kv(naive_attn_dims d) { return d.batch * d.heads * d.nk * d.head_dim; }
static int64_t count_s(naive_attn_dims d) { return d.batch * d.heads * d.nq * d.nk; }
static int64_t count_rows(naive_attn_dims d) { return d.batch * d.heads * d.nq; }

/** Uploads key_length (host [batch]) when the case has one; *device stays NULL otherwise. */
static fa_status upload_key_length(tracker *t, const attn_case *c, void **device)
{
    *device = NULL;
    if (c->key_length == NULL)
        return FA_OK;
    return device_buffer(t, device, c->key_length, (size_t)c->dims.batch * sizeof(int64_t));
}

static bool run_scores(fa_impl impl, const attn_case *c, fa_result *result)
{
    tracker t = {0};
    bool ok = false;
    const naive_attn_dims d = c->dims;
    const size_t in = (size_t)fa_dtype_size(c->dtype), s_bytes = count_s(d) * sizeof(float);
    double *want = host_buffer(&t, count_s(d) * sizeof(double));
    double *bound = host_buffer(&t, count_s(d) * sizeof(double));
    float *got = host_buffer(&t, s_bytes + CANARY_BYTES);
    void *q, *k, *s;
    if (want == NULL || bound == NULL || got == NULL) {
        host_out_of_memory(result, c->name);
        goto done;
    }
    if (!fa_result_status(result, c->name, device_buffer(&t, &q, c->q, count_q(d) * in)) ||
        !fa_result_status(result, c->name, device_buffer(&t, &k, c->k, count_kv(d) * in)) ||
        !fa_result_status(result, c->name, device_buffer(&t, &s, NULL, s_bytes)) ||
        !fa_result_status(result, c->name, scores_of(impl)(q, k, s, c->dtype, d, c->scale, 0)) ||
        !fa_result_status(result, c->name, fa_download(got, s, s_bytes + CANARY_BYTES)))
        goto done;
    attn_scores_reference(c->q, c->k, c->dtype, d, c->scale, want, bound);
    const fa_shape shape = fa_shape_4d(d.batch, d.heads, d.nq, d.nk);
    ok = fa_result_judge(result, c->name, got, want, bound, &shape) &&
         canary_intact(result, c->name, "s", (const char *)got + s_bytes);
done:
    release(&t);
    return ok;
}

static bool run_softmax(fa_impl impl, const attn_case *c, fa_result *result)
{
    tracker t = {0};
    bool ok = false;
    const naive_attn_dims d = c->dims;
    const size_t s_bytes = count_s(d) * sizeof(float), lse_bytes = count_rows(d) * sizeof(float);
    double *want_p = host_buffer(&t, count_s(d) * sizeof(double));
    double *bound_p = host_buffer(&t, count_s(d) * sizeof(double));
    double *want_lse = host_buffer(&t, count_rows(d) * sizeof(double));
    double *bound_lse = host_buffer(&t, count_rows(d) * sizeof(double));
    float *got_p = host_buffer(&t, s_bytes + CANARY_BYTES);
    float *got_lse = host_buffer(&t, lse_bytes + CANARY_BYTES);
    void *s, *p, *lse, *key_length;
    if (!want_p || !bound_p || !want_lse || !bound_lse || !got_p || !got_lse) {
        host_out_of_memory(result, c->name);
        goto done;
    }
    if (!fa_result_status(result, c->name, device_buffer(&t, &s, c->s, s_bytes)) ||
        !fa_result_status(result, c->name, device_buffer(&t, &p, NULL, s_bytes)) ||
        !fa_result_status(result, c->name, device_buffer(&t, &lse, NULL, lse_bytes)) ||
        !fa_result_status(result, c->name, upload_key_length(&t, c, &key_length)) ||
        !fa_result_status(result, c->name,
                          softmax_of(impl)(s, p, lse, d, c->mask, key_length, 0)) ||
        !fa_result_status(result, c->name, fa_download(got_p, p, s_bytes + CANARY_BYTES)) ||
        !fa_result_status(result, c->name, fa_download(got_lse, lse, lse_bytes + CANARY_BYTES)))
        goto done;
    softmax_rows_reference(c->s, d, c->mask, c->key_length, want_p, bound_p, want_lse,
                           bound_lse);
    char lse_name[sizeof c->name + 8];
    snprintf(lse_name, sizeof lse_name, "%s, lse", c->name);
    const fa_shape p_shape = fa_shape_4d(d.batch, d.heads, d.nq, d.nk);
    const fa_shape lse_shape = fa_shape_4d(d.batch, d.heads, d.nq, 1);
    ok = fa_result_judge(result, c->name, got_p, want_p, bound_p, &p_shape) &&
         fa_result_judge(result, lse_name, got_lse, want_lse, bound_lse, &lse_shape) &&
         canary_intact(result, c->name, "p", (const char *)got_p + s_bytes) &&
         canary_intact(result, c->name, "lse", (const char *)got_lse + lse_bytes);
done:
    release(&t);
    return ok;
}

static bool run_pv(fa_impl impl, const attn_case *c, fa_result *result)
{
    tracker t = {0};
    bool ok = false;
    const naive_attn_dims d = c->dims;
    const size_t in = (size_t)fa_dtype_size(c->dtype), o_bytes = count_q(d) * sizeof(float);
    double *want = host_buffer(&t, count_q(d) * sizeof(double));
    double *bound = host_buffer(&t, count_q(d) * sizeof(double));
    float *got = host_buffer(&t, o_bytes + CANARY_BYTES);
    void *p, *v, *o;
    if (want == NULL || bound == NULL || got == NULL) {
        host_out_of_memory(result, c->name);
        goto done;
    }
    if (!fa_result_status(result, c->name,
                          device_buffer(&t, &p, c->p, count_s(d) * sizeof(float))) ||
        !fa_result_status(result, c->name, device_buffer(&t, &v, c->v, count_kv(d) * in)) ||
        !fa_result_status(result, c->name, device_buffer(&t, &o, NULL, o_bytes)) ||
        !fa_result_status(result, c->name, pv_of(impl)(p, v, o, c->dtype, d, 0)) ||
        !fa_result_status(result, c->name, fa_download(got, o, o_bytes + CANARY_BYTES)) ||
        !fa_result_status(result, c->name,
                          attn_pv_reference(c->p, c->v, c->dtype, d, want, bound)))
        goto done;
    const fa_shape shape = fa_shape_4d(d.batch, d.heads, d.nq, d.head_dim);
    ok = fa_result_judge(result, c->name, got, want, bound, &shape) &&
         canary_intact(result, c->name, "o", (const char *)got + o_bytes);
done:
    release(&t);
    return ok;
}

/** FAILED with the first uncovered element of o, or else of lse. */
static void attention_failure(fa_result *result, const attn_case *c,
                              const fa_check_report *o_report,
                              const fa_check_report *lse_report)
{
    const naive_attn_dims d = c->dims;
    const bool o_failed = o_report->uncovered > 0;
    const fa_shape shape = o_failed ? fa_shape_4d(d.batch, d.heads, d.nq, d.head_dim)
                                    : fa_shape_4d(d.batch, d.heads, d.nq, 1);
    char line[FA_RESULT_DETAIL - sizeof c->name - 16]; /* room for the case name around it */
    fa_check_describe(o_failed ? o_report : lse_report, &shape, line, sizeof line);
    result->outcome = FA_OUTCOME_FAILED;
    snprintf(result->detail, sizeof result->detail, "case '%s' %s %s", c->name,
             o_failed ? "o" : "lse", line);
}

static bool run_naive(fa_impl impl, const attn_case *c, fa_result *result)
{
    tracker t = {0};
    fa_attn_reference ref = {0};
    bool ok = false;
    const naive_attn_dims d = c->dims;
    const size_t in = (size_t)fa_dtype_size(c->dtype);
    const size_t o_bytes = count_q(d) * sizeof(float), lse_bytes = count_rows(d) * sizeof(float);
    float *got_o = host_buffer(&t, o_bytes + CANARY_BYTES);
    float *got_lse = host_buffer(&t, lse_bytes + CANARY_BYTES);
    void *q, *k, *v, *o, *lse, *key_length;
    if (got_o == NULL || got_lse == NULL) {
        host_out_of_memory(result, c->name);
        goto done;
    }
    if (!fa_result_status(result, c->name, device_buffer(&t, &q, c->q, count_q(d) * in)) ||
        !fa_result_status(result, c->name, device_buffer(&t, &k, c->k, count_kv(d) * in)) ||
        !fa_result_status(result, c->name, device_buffer(&t, &v, c->v, count_kv(d) * in)) ||
        !fa_result_status(result, c->name, device_buffer(&t, &o, NULL, o_bytes)) ||
        !fa_result_status(result, c->name, device_buffer(&t, &lse, NULL, lse_bytes)) ||
        !fa_result_status(result, c->name, upload_key_length(&t, c, &key_length)) ||
        !fa_result_status(result, c->name,
                          naive_of(impl)(q, k, v, o, lse, c->dtype, d, c->scale, c->mask,
                                         key_length, 0)) ||
        !fa_result_status(result, c->name, fa_download(got_o, o, o_bytes + CANARY_BYTES)) ||
        !fa_result_status(result, c->name, fa_download(got_lse, lse, lse_bytes + CANARY_BYTES)))
        goto done;
    const fa_attn_problem problem =
        naive_attn_problem(c->q, c->k, c->v, c->dtype, d, c->scale, c->mask, c->key_length);
    const fa_attn_method method = naive_attn_method(c->dtype);
    if (!fa_result_status(result, c->name, fa_attention_reference(&problem, &method, &ref)))
        goto done;
    fa_check_report o_report, lse_report;
    if (!fa_attention_covers(&ref, got_o, got_lse, &o_report, &lse_report)) {
        attention_failure(result, c, &o_report, &lse_report);
        goto done;
    }
    ok = canary_intact(result, c->name, "o", (const char *)got_o + o_bytes) &&
         canary_intact(result, c->name, "lse", (const char *)got_lse + lse_bytes);
done:
    fa_attn_reference_free(&ref);
    release(&t);
    return ok;
}

/* ---- fixtures ----------------------------------------------------------------------------- */

typedef bool (*case_runner)(fa_impl, const attn_case *, fa_result *);

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

/** Runs @p run on every fixture in every dtype; returns false at the first failure. */
static bool run_fixtures(fa_impl impl, case_runner run, fa_result *result, int *cases)
{
    for (int f = 0; f < attn_fixture_count; ++f)
        for (int t = 0; t < DTYPE_COUNT; ++t) {
            const attn_fixture *fx = &attn_fixtures[f];
            tracker mem = {0};
            attn_case c = {.dims = fx->dims, .dtype = DTYPES[t], .scale = fx->scale,
                           .mask = fx->mask, .key_length = fx->key_length};
            snprintf(c.name, sizeof c.name, "%s (%s)", fx->name, fa_dtype_name(DTYPES[t]));
            c.q = to_dtype(&mem, fx->q, count_q(fx->dims), DTYPES[t]);
            c.k = to_dtype(&mem, fx->k, count_kv(fx->dims), DTYPES[t]);
            c.v = to_dtype(&mem, fx->v, count_kv(fx->dims), DTYPES[t]);
            c.s = to_float(&mem, fx->s, count_s(fx->dims));
            c.p = to_float(&mem, fx->p, count_s(fx->dims));
            const bool ready = c.q && c.k && c.v && c.s && c.p;
            const bool ok = ready ? run(impl, &c, result) : host_out_of_memory(result, c.name);
            release(&mem);
            if (!ok)
                return false;
            ++*cases;
        }
    return true;
}

/* ---- random cases ------------------------------------------------------------------------- */

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

static const char *mask_name(fa_mask mask)
{
    switch (mask) {
    case FA_MASK_CAUSAL_TOP_LEFT: return "causal top-left";
    case FA_MASK_CAUSAL_BOTTOM_RIGHT: return "causal bottom-right";
    default: return "no mask";
    }
}

/** One random case of any milestone: sizes, dtype, mask, spreads. */
typedef struct random_shape {
    naive_attn_dims dims;
    fa_dtype dtype;
    fa_mask mask;
    bool padded;     /**< with random key lengths */
    double spread;   /**< standard deviation of the scores (NUMERICS.md: 0.3, 1, 3, 8) */
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

enum { SHAPES_PER_MILESTONE = sizeof SCORES_SHAPES / sizeof SCORES_SHAPES[0] };
_Static_assert(sizeof SOFTMAX_SHAPES / sizeof SOFTMAX_SHAPES[0] == SHAPES_PER_MILESTONE &&
               sizeof PV_SHAPES / sizeof PV_SHAPES[0] == SHAPES_PER_MILESTONE &&
               sizeof NAIVE_SHAPES / sizeof NAIVE_SHAPES[0] == SHAPES_PER_MILESTONE,
               "one table length");
_Static_assert((int)QUICK_CASES <= (int)SHAPES_PER_MILESTONE, "quick runs a prefix");

/** Which inputs a milestone reads. */
typedef enum case_inputs {
    INPUTS_QK = 1,     /**< M9 */
    INPUTS_S = 2,      /**< M10 */
    INPUTS_PV = 4,     /**< M11 */
    INPUTS_QKV = 8     /**< M12 */
} case_inputs;

/** Row-stochastic weights with about a quarter exact zeros (as masked keys give). */
static float *random_weights(tracker *t, naive_attn_dims d, fa_rng *rng)
{
    float *p = host_buffer(t, (size_t)count_s(d) * sizeof(float));
    if (p == NULL)
        return NULL;
    for (int64_t row = 0; row < count_rows(d); ++row) {
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
    float *s = host_buffer(t, (size_t)count_s(d) * sizeof(float));
    if (s == NULL)
        return NULL;
    fa_fill(s, count_s(d), FA_FILL_GAUSSIAN, spread, rng);
    for (int64_t row = 0; row < count_rows(d); ++row) {
        const float bias = (float)(64 * fa_rng_uniform(rng) - 32);
        for (int64_t j = 0; j < d.nk; ++j)
            s[row * d.nk + j] += bias;
    }
    return s;
}

/** Builds and runs the random cases of one milestone. */
static bool run_random(fa_impl impl, const fa_run_options *options, int milestone,
                       const random_shape *shapes, case_inputs inputs, case_runner run,
                       fa_result *result, int *cases)
{
    const int count = options->quick ? QUICK_CASES : SHAPES_PER_MILESTONE;
    for (int i = 0; i < count; ++i) {
        const random_shape *sh = &shapes[i];
        const naive_attn_dims d = sh->dims;
        tracker mem = {0};
        fa_rng rng;
        fa_rng_seed(&rng, options->seed, (uint64_t)(milestone * 100 + i));
        attn_case c = {.dims = d, .dtype = sh->dtype, .scale = sh->scale, .mask = sh->mask};
        snprintf(c.name, sizeof c.name,
                 "random %d: B=%lld H=%lld Nq=%lld Nk=%lld D=%lld %s, %s%s, seed %llu", i,
                 (long long)d.batch, (long long)d.heads, (long long)d.nq, (long long)d.nk,
                 (long long)d.head_dim, fa_dtype_name(sh->dtype), mask_name(sh->mask),
                 sh->padded ? " + key padding" : "", (unsigned long long)options->seed);
        /* q and k ~ normal(0, spread): their scaled dot product has about that spread. */
        const double sigma = sqrt(sh->spread);
        bool ready = true;
        if (inputs & (INPUTS_QK | INPUTS_QKV)) {
            c.q = random_tensor(&mem, count_q(d), sh->dtype, sigma, 0, &rng);
            c.k = random_tensor(&mem, count_kv(d), sh->dtype, sigma, 0, &rng);
            ready = ready && c.q && c.k;
        }
        if (inputs & (INPUTS_PV | INPUTS_QKV)) {
            c.v = random_tensor(&mem, count_kv(d), sh->dtype, 1, sh->v_offset, &rng);
            ready = ready && c.v;
        }
        if (inputs & INPUTS_S) {
            c.s = random_scores(&mem, d, sh->spread, &rng);
            ready = ready && c.s;
        }
        if (inputs & INPUTS_PV) {
            c.p = random_weights(&mem, d, &rng);
            ready = ready && c.p;
        }
        if (sh->padded) {
            c.key_length = random_key_length(&mem, d.batch, d.nk, &rng);
            ready = ready && c.key_length;
        }
        const bool ok = ready ? run(impl, &c, result) : host_out_of_memory(result, c.name);
        release(&mem);
        if (!ok)
            return false;
        ++*cases;
    }
    return true;
}

static void check_milestone(fa_impl impl, const fa_run_options *options, int milestone,
                            const random_shape *shapes, case_inputs inputs, case_runner run,
                            fa_result *result)
{
    int fixtures = 0, randoms = 0;
    if (!run_fixtures(impl, run, result, &fixtures) ||
        !run_random(impl, options, milestone, shapes, inputs, run, result, &randoms))
        return;
    fa_result_pass(result, "%d fixture cases (%d fixtures x 3 dtypes), %d random cases",
                   fixtures, attn_fixture_count, randoms);
}

/* ---- M12: a workspace that does not fit --------------------------------------------------- */

/**
 * B = 1, H = 1, Nq = Nk = 2^20, D = 1: 4 MiB per tensor but a 4 TiB score
 * matrix. The launcher must refuse with FA_ERR_OUT_OF_MEMORY and a message
 * with the byte counts, and leave o and lse untouched.
 */
static bool run_refusal(fa_impl impl, fa_result *result)
{
    const char *name = "score matrix larger than the device (Nq = Nk = 2^20)";
    const naive_attn_dims d = {1, 1, 1 << 20, 1 << 20, 1};
    tracker t = {0};
    bool ok = false;
    const size_t bytes = count_q(d) * sizeof(float);
    float *got = host_buffer(&t, 2 * (bytes + CANARY_BYTES));
    void *qkv, *o, *lse;
    if (got == NULL) {
        host_out_of_memory(result, name);
        goto done;
    }
    if (!fa_result_status(result, name, device_buffer(&t, &qkv, NULL, bytes)) ||
        !fa_result_status(result, name, device_buffer(&t, &o, NULL, bytes)) ||
        !fa_result_status(result, name, device_buffer(&t, &lse, NULL, bytes)))
        goto done;
    const fa_status status =
        naive_of(impl)(qkv, qkv, qkv, o, lse, FA_F32, d, 0, FA_MASK_NONE, NULL, 0);
    if (status == FA_ERR_NOT_IMPLEMENTED) {
        fa_result_status(result, name, status);
        goto done;
    }
    if (status != FA_ERR_OUT_OF_MEMORY || strstr(fa_last_error(), "bytes") == NULL) {
        result->outcome = FA_OUTCOME_FAILED;
        snprintf(result->detail, sizeof result->detail,
                 "case '%s': expected FA_ERR_OUT_OF_MEMORY with the bytes needed, got %s (%s)",
                 name, fa_status_name(status), fa_last_error());
        goto done;
    }
    if (!fa_result_status(result, name, fa_download(got, o, bytes)) ||
        !fa_result_status(result, name, fa_download(got + bytes / sizeof(float), lse, bytes)))
        goto done;
    for (size_t i = 0; i < 2 * bytes / sizeof(float); ++i)
        if (!fa_is_poison(got[i])) {
            result->outcome = FA_OUTCOME_FAILED;
            snprintf(result->detail, sizeof result->detail,
                     "case '%s': refused, but wrote element %zu of %s", name,
                     i % (bytes / sizeof(float)), i < bytes / sizeof(float) ? "o" : "lse");
            goto done;
        }
    ok = true;
done:
    release(&t);
    return ok;
}

/* ---- the milestones ----------------------------------------------------------------------- */

/** Sizes of the empty problem the probes pass: nothing to do, so no GPU is touched. */
static const naive_attn_dims EMPTY = {0, 0, 0, 0, 1};

static fa_status probe_scores(fa_impl impl)
{
    return scores_of(impl)(NULL, NULL, NULL, FA_F32, EMPTY, 0, 0);
}
static fa_status probe_softmax(fa_impl impl)
{
    return softmax_of(impl)(NULL, NULL, NULL, EMPTY, FA_MASK_NONE, NULL, 0);
}
static fa_status probe_pv(fa_impl impl)
{
    return pv_of(impl)(NULL, NULL, NULL, FA_F32, EMPTY, 0);
}
static fa_status probe_naive(fa_impl impl)
{
    return naive_of(impl)(NULL, NULL, NULL, NULL, NULL, FA_F32, EMPTY, 0, FA_MASK_NONE, NULL, 0);
}

static void check_scores(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    check_milestone(impl, options, 9, SCORES_SHAPES, INPUTS_QK, run_scores, result);
}
/**
 * M10 alone: a score of -inf acts as a masked key (weight 0), and a row whose
 * allowed scores are all -inf is empty (p = 0, lse = -inf), not 0/0.
 * Row 0: [-inf, -inf, -inf, -inf]; row 1: [-inf, 2, -inf, 2] -> [0, 1/2, 0, 1/2],
 * lse = 2 + ln 2.
 */
static const float NEG_INF_SCORES[] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY,
                                       -INFINITY, 2,         -INFINITY, 2};

static void check_softmax(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    const attn_case neg_inf = {.name = "scores of -inf (a row of only -inf, and -inf among 2s)",
                               .dims = {1, 1, 2, 4, 1},
                               .dtype = FA_F32,
                               .mask = FA_MASK_NONE,
                               .s = NEG_INF_SCORES};
    int fixtures = 0, randoms = 0;
    if (!run_fixtures(impl, run_softmax, result, &fixtures) ||
        !run_softmax(impl, &neg_inf, result) ||
        !run_random(impl, options, 10, SOFTMAX_SHAPES, INPUTS_S, run_softmax, result, &randoms))
        return;
    fa_result_pass(result,
                   "%d fixture cases (%d fixtures x 3 dtypes), the -inf rows, %d random cases",
                   fixtures, attn_fixture_count, randoms);
}
static void check_pv(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    check_milestone(impl, options, 11, PV_SHAPES, INPUTS_PV, run_pv, result);
}
static void check_naive(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    int fixtures = 0, randoms = 0;
    if (!run_fixtures(impl, run_naive, result, &fixtures) ||
        !run_random(impl, options, 12, NAIVE_SHAPES, INPUTS_QKV, run_naive, result, &randoms) ||
        !run_refusal(impl, result))
        return;
    fa_result_pass(result,
                   "%d fixture cases (%d fixtures x 3 dtypes), %d random cases, refusal of a "
                   "workspace larger than the device",
                   fixtures, attn_fixture_count, randoms);
}

/* ---- timing ------------------------------------------------------------------------------- */

/** Device buffers of one attention problem, filled with random bf16 inputs. */
typedef struct timed_problem {
    naive_attn_dims dims;
    void *q, *k, *v;
    float *s, *o, *lse; /**< s: NULL when the score matrix is not wanted */
} timed_problem;

enum { PATTERN_ELEMENTS = 1 << 20 }; /**< random values repeated across large inputs */
static const fa_dtype TIMED_DTYPE = FA_BF16;

static void timed_problem_free(timed_problem *tp)
{
    fa_device_free(tp->q);
    fa_device_free(tp->k);
    fa_device_free(tp->v);
    fa_device_free(tp->s);
    fa_device_free(tp->o);
    fa_device_free(tp->lse);
    memset(tp, 0, sizeof *tp);
}

/** Uploads @p count bf16 elements that repeat a random pattern (inputs must not be zeros). */
static fa_status upload_pattern(void *device, int64_t count, const uint16_t *pattern)
{
    for (int64_t done = 0; done < count; done += PATTERN_ELEMENTS) {
        const int64_t n = count - done < PATTERN_ELEMENTS ? count - done : PATTERN_ELEMENTS;
        FA_TRY(fa_upload((uint16_t *)device + done, pattern, (size_t)n * sizeof(uint16_t)));
    }
    return FA_OK;
}

/** Allocates and fills the inputs and outputs of @p dims (and S when @p with_scores). */
static fa_status timed_problem_alloc(timed_problem *tp, naive_attn_dims dims, bool with_scores,
                                     uint64_t seed)
{
    memset(tp, 0, sizeof *tp);
    tp->dims = dims;
    uint16_t *pattern = malloc(PATTERN_ELEMENTS * sizeof(uint16_t));
    float *values = malloc(PATTERN_ELEMENTS * sizeof(float));
    fa_status status = FA_OK;
    if (pattern == NULL || values == NULL) {
        status = fa_fail(FA_ERR_OUT_OF_MEMORY, "timing: out of host memory");
    } else {
        fa_rng rng;
        fa_rng_seed(&rng, seed, 0);
        fa_fill(values, PATTERN_ELEMENTS, FA_FILL_GAUSSIAN, 1, &rng);
        for (int i = 0; i < PATTERN_ELEMENTS; ++i)
            pattern[i] = fa_float_to_bf16(values[i]);
        const size_t in = sizeof(uint16_t);
        void **inputs[] = {&tp->q, &tp->k, &tp->v};
        const int64_t counts[] = {count_q(dims), count_kv(dims), count_kv(dims)};
        for (int i = 0; i < 3 && status == FA_OK; ++i) {
            status = fa_device_alloc(inputs[i], (size_t)counts[i] * in);
            if (status == FA_OK)
                status = upload_pattern(*inputs[i], counts[i], pattern);
        }
        if (status == FA_OK)
            status = fa_device_alloc((void **)&tp->o, count_q(dims) * sizeof(float));
        if (status == FA_OK)
            status = fa_device_alloc((void **)&tp->lse, count_rows(dims) * sizeof(float));
        if (status == FA_OK && with_scores)
            status = fa_device_alloc((void **)&tp->s, count_s(dims) * sizeof(float));
    }
    free(pattern);
    free(values);
    if (status != FA_OK)
        timed_problem_free(tp);
    return status;
}

/** What one timed repetition runs. */
typedef struct timed_work {
    fa_impl impl;
    int milestone;
    const timed_problem *problem;
} timed_work;

static fa_status run_timed(void *context, int rep, cudaStream_t stream)
{
    (void)rep;
    const timed_work *w = context;
    const timed_problem *tp = w->problem;
    switch (w->milestone) {
    case 9:
        return scores_of(w->impl)(tp->q, tp->k, tp->s, TIMED_DTYPE, tp->dims, 0, stream);
    case 10: /* in place, as M12 runs it */
        return softmax_of(w->impl)(tp->s, tp->s, tp->lse, tp->dims, FA_MASK_NONE, NULL, stream);
    case 11:
        return pv_of(w->impl)(tp->s, tp->v, tp->o, TIMED_DTYPE, tp->dims, stream);
    default:
        return naive_of(w->impl)(tp->q, tp->k, tp->v, tp->o, tp->lse, TIMED_DTYPE, tp->dims, 0,
                                 FA_MASK_NONE, NULL, stream);
    }
}

/** Median milliseconds of @p milestone of @p impl on @p tp. */
static fa_status time_on(fa_impl impl, int milestone, const timed_problem *tp,
                         const fa_timing_options *timing, fa_stats *ms)
{
    timed_work work = {impl, milestone, tp};
    return fa_time_gpu(run_timed, &work, timing, ms);
}

/** B = 1, H = 16, Nq = Nk = N, D = 128: the shape of the benchmark and of PERFORMANCE.md. */
static naive_attn_dims square_problem(int64_t n)
{
    const naive_attn_dims d = {1, 16, n, n, 128};
    return d;
}

static fa_status time_milestone(int milestone, fa_impl impl, const fa_run_options *options,
                                double *milliseconds, char *label, size_t cap)
{
    const int64_t n = options->quick ? 256 : 2048;
    const naive_attn_dims d = square_problem(n);
    timed_problem tp;
    FA_TRY(timed_problem_alloc(&tp, d, milestone != 12, options->seed));
    fa_status status = FA_OK;
    /* M10 and M11 start from the scores (then probabilities) of the reference. */
    if (milestone == 10 || milestone == 11)
        status = ref_attn_scores(tp.q, tp.k, tp.s, TIMED_DTYPE, d, 0, 0);
    if (status == FA_OK && milestone == 11)
        status = ref_softmax_rows(tp.s, tp.s, tp.lse, d, FA_MASK_NONE, NULL, 0);
    fa_stats ms = {0};
    const fa_timing_options timing = fa_timing_defaults();
    if (status == FA_OK)
        status = time_on(impl, milestone, &tp, &timing, &ms);
    timed_problem_free(&tp);
    FA_TRY(status);
    *milliseconds = ms.median;
    snprintf(label, cap, "B=1 H=16 N=%lld D=128 %s", (long long)n, fa_dtype_name(TIMED_DTYPE));
    return FA_OK;
}

static fa_status time_scores(fa_impl impl, const fa_run_options *options, double *ms,
                             char *label, size_t cap)
{
    return time_milestone(9, impl, options, ms, label, cap);
}
static fa_status time_softmax(fa_impl impl, const fa_run_options *options, double *ms,
                              char *label, size_t cap)
{
    return time_milestone(10, impl, options, ms, label, cap);
}
static fa_status time_pv(fa_impl impl, const fa_run_options *options, double *ms, char *label,
                         size_t cap)
{
    return time_milestone(11, impl, options, ms, label, cap);
}
static fa_status time_naive(fa_impl impl, const fa_run_options *options, double *ms,
                            char *label, size_t cap)
{
    return time_milestone(12, impl, options, ms, label, cap);
}

const fa_milestone_check stage03_checks[] = {
    {9, probe_scores, check_scores, time_scores},
    {10, probe_softmax, check_softmax, time_softmax},
    {11, probe_pv, check_pv, time_pv},
    {12, probe_naive, check_naive, time_naive},
};
const int stage03_check_count = (int)(sizeof stage03_checks / sizeof stage03_checks[0]);

/* ---- benchmark ---------------------------------------------------------------------------- */

enum {
    BENCH_FIRST_N = 512,
    BENCH_QUICK_LAST_N = 1024,
    BENCH_LAST_N = 1 << 20,   /**< a bound on the sweep; memory ends it long before */
    BENCH_MIN_REPEATS = 3,
    BENCH_MAX_REPEATS = 50
};
static const size_t BENCH_COPY_BYTES = (size_t)1 << 30;
static const double GIB = 1024.0 * 1024.0 * 1024.0;

/** Fewer repeats for larger N: about 2^30 / N^2, between 3 and 50 (N = 32k takes seconds). */
static fa_timing_options bench_timing(int64_t n)
{
    fa_timing_options timing = fa_timing_defaults();
    const double repeats = (double)(1 << 30) / ((double)n * (double)n);
    timing.repeats = repeats < BENCH_MIN_REPEATS   ? BENCH_MIN_REPEATS
                     : repeats > BENCH_MAX_REPEATS ? BENCH_MAX_REPEATS
                                                   : (int)repeats;
    timing.warmup = timing.repeats < BENCH_MAX_REPEATS ? 1 : timing.warmup;
    return timing;
}

/** The device's stream-ordered memory pool, where ref_attn_naive() takes its workspace. */
static fa_status current_pool(cudaMemPool_t *pool)
{
    int device = 0;
    FA_CUDA_TRY(cudaGetDevice(&device));
    FA_CUDA_TRY(cudaDeviceGetMemPool(pool, device));
    return FA_OK;
}

/** Hands the pool's unused memory back to the device and zeroes its high-water mark. */
static fa_status pool_reset(void)
{
    cudaMemPool_t pool;
    FA_TRY(current_pool(&pool));
    uint64_t zero = 0; /* the attribute is a 64-bit unsigned integer */
    FA_CUDA_TRY(cudaMemPoolTrimTo(pool, 0));
    FA_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
    return FA_OK;
}

/** The most memory the pool has handed out since pool_reset(). */
static fa_status pool_peak(uint64_t *bytes)
{
    cudaMemPool_t pool;
    FA_TRY(current_pool(&pool));
    uint64_t value = 0;
    FA_CUDA_TRY(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &value));
    *bytes = value;
    return FA_OK;
}

/** Times the three kernels on their own through the score matrix tp->s. */
static fa_status time_steps(const timed_problem *tp, const fa_timing_options *timing,
                            double step_ms[3])
{
    FA_TRY(ref_attn_scores(tp->q, tp->k, tp->s, TIMED_DTYPE, tp->dims, 0, 0));
    fa_stats ms;
    for (int m = 9; m <= 11; ++m) {
        FA_TRY(time_on(FA_IMPL_REFERENCE, m, tp, timing, &ms));
        step_ms[m - 9] = ms.median;
    }
    return FA_OK;
}

/** A table cell: @p value with @p format, or "-" when it was not measured (NaN). */
static const char *cell(char *buf, size_t cap, const char *format, double value)
{
    if (isnan(value))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, format, value);
    return buf;
}

#define ROW_FORMAT "%7s | %9s | %9s | %8s | %8s | %8s | %9s | %6s | %9s | %6s | %6s | %7s | %7s\n"

/** One row of the sweep; *stop is set once N no longer fits. */
static fa_status bench_size(int64_t n, const fa_run_options *options, double copy_gbps,
                            bool *stop)
{
    const naive_attn_dims d = square_problem(n);
    size_t workspace = 0;
    FA_TRY(attn_naive_workspace_bytes(d, &workspace));
    timed_problem tp;
    fa_status status = timed_problem_alloc(&tp, d, false, options->seed);
    if (status == FA_ERR_OUT_OF_MEMORY) {
        (void)cudaGetLastError(); /* a failed cudaMalloc is not sticky: clear it */
        printf("%7lld | skipped: the inputs and outputs alone do not fit (%s)\n", (long long)n,
               fa_last_error());
        *stop = true;
        return FA_OK;
    }
    FA_TRY(status);

    const fa_timing_options timing = bench_timing(n);
    fa_stats total = {0};
    uint64_t peak = 0;
    status = pool_reset();
    if (status == FA_OK)
        status = time_on(FA_IMPL_REFERENCE, 12, &tp, &timing, &total);
    if (status == FA_ERR_OUT_OF_MEMORY) {
        printf("%7lld | %9.2f | skipped: %s\n", (long long)n, (double)workspace / GIB,
               fa_last_error());
        timed_problem_free(&tp);
        *stop = true;
        return FA_OK;
    }
    if (status == FA_OK)
        status = pool_peak(&peak);
    if (status == FA_OK)
        status = pool_reset(); /* hand M12's workspace back before the steps take their own */
    /* The steps need their own score matrix; where it does not fit they are not timed. */
    double step_ms[3] = {NAN, NAN, NAN};
    if (status == FA_OK) {
        if (fa_device_alloc((void **)&tp.s, workspace) == FA_OK)
            status = time_steps(&tp, &timing, step_ms);
        else
            (void)cudaGetLastError(); /* a failed cudaMalloc is not sticky: clear it */
    }
    timed_problem_free(&tp);
    FA_TRY(status);

    const attn_naive_traffic traffic = attn_naive_traffic_bytes(d, TIMED_DTYPE);
    const double seconds = total.median * 1e-3;
    const double flops = 4.0 * (double)(d.batch * d.heads) * (double)n * (double)n * d.head_dim;
    const double softmax_gbps = (double)traffic.softmax / (step_ms[1] * 1e-3) / 1e9;
    char c[13][24];
    printf(ROW_FORMAT, cell(c[0], 24, "%.0f", (double)n),
           cell(c[1], 24, "%.2f", (double)workspace / GIB),
           cell(c[2], 24, "%.2f", (double)peak / GIB), cell(c[3], 24, "%.3f", step_ms[0]),
           cell(c[4], 24, "%.3f", step_ms[1]), cell(c[5], 24, "%.3f", step_ms[2]),
           cell(c[6], 24, "%.3f", total.median), cell(c[7], 24, "%.1f%%", 100 * total.spread),
           cell(c[8], 24, "%.2f", (double)traffic.total / 1e9),
           cell(c[9], 24, "%.0f", (double)traffic.total / (double)traffic.minimum),
           cell(c[10], 24, "%.0f", (double)traffic.total / seconds / 1e9),
           cell(c[11], 24, "%.0f%%", 100 * softmax_gbps / copy_gbps),
           cell(c[12], 24, "%.2f", flops / seconds / 1e12));
    fflush(stdout);
    return FA_OK;
}

fa_status stage03_bench(const fa_run_options *options)
{
    FA_TRY(fa_print_configuration(stdout));
    double copy_gbps = 0;
    FA_TRY(fa_measure_copy_bandwidth(BENCH_COPY_BYTES, &copy_gbps));
    printf("\nM12 naive attention, reference kernels: B=1 H=16 D=128, %s inputs, no mask, "
           "scale 1/sqrt(D), seed %llu; device-to-device copy: %.0f GB/s\n",
           fa_dtype_name(TIMED_DTYPE), (unsigned long long)options->seed, copy_gbps);
    printf(ROW_FORMAT, "N", "workspace", "pool peak", "scores", "softmax", "PV", "M12", "spread",
           "counted", "x min", "GB/s", "softmax", "TFLOP/s");
    printf(ROW_FORMAT, "", "GiB", "GiB", "ms", "ms", "ms", "ms", "", "GB", "", "", "of copy", "");
    bool stop = false;
    const int64_t last = options->quick ? BENCH_QUICK_LAST_N : BENCH_LAST_N;
    for (int64_t n = BENCH_FIRST_N; n <= last && !stop; n *= 2)
        FA_TRY(bench_size(n, options, copy_gbps, &stop));
    printf("workspace: attn_naive_workspace_bytes() = B*H*N*N*4, predicted; pool peak: the "
           "high-water mark of the stream-ordered pool over the M12 runs, measured.\n"
           "scores, softmax, PV: each kernel alone (softmax in place; '-' where a separate "
           "score matrix did not fit); M12: the whole launcher, allocation included;\n"
           "medians, spread = (p90 - p10) / median. counted: the bytes the pipeline reads and "
           "writes (S written once and read three times by the softmax, P written and read\n"
           "once; attn_naive_traffic_bytes()); x min: counted over the bytes of reading q, k, "
           "v and writing o, lse once; GB/s: counted / M12 time; softmax of copy: the\n"
           "softmax's counted bytes / its time, over the copy bandwidth; TFLOP/s: "
           "4*B*H*N*N*D / M12 time.\n");
    return FA_OK;
}
