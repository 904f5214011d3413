/**
 * @file test_stage04.c
 * @brief Stage 04 tests.
 *
 * `test_stage04 cpu` (no GPU needed): the fixtures against the CPU model (bit
 * for bit where exact) and the hand arithmetic against the double reference;
 * the invariant l_t = sum_(j <= t) exp(x_j - m_t) of the lesson against a
 * direct sum; the model against the double reference within the bounds; the
 * properties (chunk-size invariance, merge commutativity, associativity and
 * identity, shift invariance, extreme scores, maxima that rise late or never);
 * classic mistakes the bounds must reject; the NaN rule (a NaN entry makes
 * the running max, and with it the row, NaN); bad input for every launcher,
 * at the edges of every overflow check; every driver flag.
 *
 * `test_stage04 gpu` (exit 77 without a usable GPU): every milestone's check
 * on the reference kernels; `--case` and the problem flags; the running max
 * bit for bit and the correction factor within two exp budgets of the model;
 * nothing written past an output and every output written; NaN reaching
 * exactly the affected rows; the properties again on the kernels; the checker
 * rejecting a wrong element.
 */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa_attention_ref.h"
#include "fa_check.h"
#include "fa_cli.h"
#include "fa_index.h"
#include "fa_math.h"
#include "fa_problem.h"
#include "fa_reference.h"
#include "fa_rng.h"
#include "fa_softmax_ref.h"
#include "fa_stage.h"
#include "fa_status.h"
#include "fa_test.h"
#include "fixtures.h"
#include "model.h"
#include "online.h"
#include "reference.h"
#include "traffic.h"

#if FA_HAVE_CUDA
#include "checks.h"
#include "fa_device.h"
#include "runners.h"
#endif

static const uint64_t SEED = 20240604;

/** Relative agreement expected between two double computations of one exact value. */
static const double DOUBLE_AGREEMENT = 1e-12;

/** A mistake must be rejected by this margin: err / bound above it. */
static const double MUTATION_MARGIN = 10.0;

/** Two doubles that compute one exact value: equal infinities or NaNs, or close. */
static bool agree(double a, double b)
{
    if (!isfinite(a) || !isfinite(b))
        return (isnan(a) && isnan(b)) || a == b;
    return fabs(a - b) <= DOUBLE_AGREEMENT * fa_max_nan_double(1.0, fabs(b));
}

/** fa_check_covers() with a report; prints the worst coordinate when it fails. */
static bool covered(const char *label, const float *got, const double *want, const double *bound,
                    int64_t n, fa_check_report *report)
{
    fa_check_report local;
    fa_check_report *r = report ? report : &local;
    const bool ok = fa_check_covers(got, want, bound, n, r);
    if (!ok) {
        fa_shape shape = fa_shape_1d(n);
        fa_check_print(stdout, label, r, &shape);
    }
    return ok;
}

/** Fills x [rows][n] with one row per pattern (row r has pattern r mod count). */
static void fill_pattern_rows(float *x, int64_t rows, int64_t n, int64_t chunk, double spread,
                              fa_rng *rng)
{
    for (int64_t r = 0; r < rows; ++r)
        online_fill_row(x + r * n, n, chunk, (online_row_pattern)(r % ONLINE_ROW_PATTERN_COUNT),
                        spread, rng);
}

static void fill_normal(float *x, int64_t n, double spread, fa_rng *rng)
{
    for (int64_t i = 0; i < n; ++i)
        x[i] = (float)(spread * fa_rng_normal(rng));
}

/* ---- traces of one row, model and reference --------------------------------------------- */

/** A row's four traces from the model, and their references and bounds. */
typedef struct row_traces {
    int64_t chunks;
    float *max, *correction, *sum, *output; /* model */
    double *ref_max, *ref_correction, *ref_sum, *ref_output; /* reference */
    double *correction_bound, *sum_bound, *output_bound;
} row_traces;

static row_traces traces_new(int64_t n, int64_t chunk)
{
    row_traces t;
    t.chunks = online_chunk_count(n, chunk);
    t.max = fa_new_floats(t.chunks);
    t.correction = fa_new_floats(t.chunks);
    t.sum = fa_new_floats(t.chunks);
    t.output = fa_new_floats(t.chunks);
    t.ref_max = fa_new_doubles(t.chunks);
    t.ref_correction = fa_new_doubles(t.chunks);
    t.ref_sum = fa_new_doubles(t.chunks);
    t.ref_output = fa_new_doubles(t.chunks);
    t.correction_bound = fa_new_doubles(t.chunks);
    t.sum_bound = fa_new_doubles(t.chunks);
    t.output_bound = fa_new_doubles(t.chunks);
    return t;
}

static void traces_free(row_traces *t)
{
    free(t->max);
    free(t->correction);
    free(t->sum);
    free(t->output);
    free(t->ref_max);
    free(t->ref_correction);
    free(t->ref_sum);
    free(t->ref_output);
    free(t->correction_bound);
    free(t->sum_bound);
    free(t->output_bound);
}

/** Model (with @p mistake) and reference traces of one row. */
static void traces_compute(row_traces *t, const float *x, const float *v, int64_t n, int64_t chunk,
                           online_mistake mistake)
{
    online_model_trace_row(x, v, n, chunk, mistake, t->max, t->correction, t->sum, t->output);
    const online_trace_ref ref = {t->ref_max,   t->ref_correction, t->correction_bound, t->ref_sum,
                                  t->sum_bound, t->ref_output,     t->output_bound};
    online_ref_trace_row(x, v, n, chunk, &ref);
}

/** Largest err/bound of the four traces (+inf when one is not covered by a zero bound). */
static double traces_worst_ratio(const row_traces *t, bool *all_covered)
{
    fa_check_report r[4];
    const bool max_ok = fa_check_covers(t->max, t->ref_max, NULL, t->chunks, &r[0]);
    const bool correction_ok = fa_check_covers(t->correction, t->ref_correction,
                                               t->correction_bound, t->chunks, &r[1]);
    const bool sum_ok = fa_check_covers(t->sum, t->ref_sum, t->sum_bound, t->chunks, &r[2]);
    const bool output_ok =
        fa_check_covers(t->output, t->ref_output, t->output_bound, t->chunks, &r[3]);
    *all_covered = max_ok && correction_ok && sum_ok && output_ok;
    double worst = 0.0;
    for (int i = 0; i < 4; ++i) {
        if (r[i].uncovered > 0 && !(r[i].worst_ratio > 0.0))
            return INFINITY; /* a NaN or an infinity where the reference is finite */
        worst = fa_max_nan_double(worst, r[i].worst_ratio);
    }
    return worst;
}

/** A written-out attention fixture as a problem writing into @p o and @p lse (may be NULL). */
static attn_online_args fixture_args(const online_attn_fixture *fx, float *o, float *lse)
{
    const attn_online_args a = {.q = fx->q,
                                .k = fx->k,
                                .v = fx->v,
                                .o = o,
                                .lse = lse,
                                .batch = 1,
                                .heads_q = 1,
                                .heads_kv = 1,
                                .nq = fx->nq,
                                .nk = fx->nk,
                                .head_dim = fx->head_dim,
                                .scale = fx->scale,
                                .mask = fx->mask,
                                .chunk = fx->chunk};
    return a;
}

/* ---- CPU: fixtures -------------------------------------------------------------------------- */

static void test_fixtures_against_model(fa_tests *t)
{
    for (int f = 0; f < online_fixture_count; ++f) {
        const online_fixture *fx = &online_fixtures[f];
        row_traces tr = traces_new(fx->n, fx->chunk);
        traces_compute(&tr, fx->x, fx->v, fx->n, fx->chunk, ONLINE_NO_MISTAKE);
        const int64_t T = tr.chunks;
        FA_EXPECT(t, covered(fx->name, tr.max, fx->max, NULL, T, NULL),
                  "fixture '%s': model running max differs from the written one", fx->name);
        FA_EXPECT(t,
                  covered(fx->name, tr.correction, fx->correction,
                          fx->exact ? NULL : tr.correction_bound, T, NULL),
                  "fixture '%s': model correction factors", fx->name);
        FA_EXPECT(t, covered(fx->name, tr.sum, fx->sum, fx->exact ? NULL : tr.sum_bound, T, NULL),
                  "fixture '%s': model running sums", fx->name);
        FA_EXPECT(
            t,
            covered(fx->name, tr.output, fx->output, fx->exact ? NULL : tr.output_bound, T, NULL),
            "fixture '%s': model outputs", fx->name);
        traces_free(&tr);

        float p[ONLINE_FIXTURE_MAX_ENTRIES], lse;
        double ref_p[ONLINE_FIXTURE_MAX_ENTRIES], p_bound[ONLINE_FIXTURE_MAX_ENTRIES];
        double ref_lse, lse_bound;
        online_model_softmax_rows(fx->x, p, &lse, 1, fx->n);
        FA_EXPECT(t,
                  online_ref_softmax_rows(fx->x, 1, fx->n, ref_p, p_bound, &ref_lse, &lse_bound) ==
                      FA_OK,
                  "fixture '%s': the softmax reference: %s", fx->name, fa_last_error());
        FA_EXPECT(t, covered(fx->name, p, fx->p, fx->exact ? NULL : p_bound, fx->n, NULL),
                  "fixture '%s': model softmax", fx->name);
        FA_EXPECT(t, covered(fx->name, &lse, &fx->lse, &lse_bound, 1, NULL),
                  "fixture '%s': model lse %.9g, want %.17g", fx->name, (double)lse, fx->lse);
    }
}

/** The written-out numbers of the fixtures against the double reference: the hand arithmetic. */
static void test_fixture_arithmetic(fa_tests *t)
{
    for (int f = 0; f < online_fixture_count; ++f) {
        const online_fixture *fx = &online_fixtures[f];
        row_traces tr = traces_new(fx->n, fx->chunk);
        traces_compute(&tr, fx->x, fx->v, fx->n, fx->chunk, ONLINE_NO_MISTAKE);
        for (int64_t c = 0; c < tr.chunks; ++c) {
            FA_EXPECT(
                t,
                agree(fx->max[c], tr.ref_max[c]) &&
                    agree(fx->correction[c], tr.ref_correction[c]) &&
                    agree(fx->sum[c], tr.ref_sum[c]) && agree(fx->output[c], tr.ref_output[c]),
                "fixture '%s', chunk %lld: written (m %.17g, alpha %.17g, l %.17g, o %.17g) "
                "vs reference (%.17g, %.17g, %.17g, %.17g)",
                fx->name, (long long)c, fx->max[c], fx->correction[c], fx->sum[c], fx->output[c],
                tr.ref_max[c], tr.ref_correction[c], tr.ref_sum[c], tr.ref_output[c]);
        }
        traces_free(&tr);
        double p[ONLINE_FIXTURE_MAX_ENTRIES], bound[ONLINE_FIXTURE_MAX_ENTRIES], lse, lse_bound;
        FA_EXPECT(t, online_ref_softmax_rows(fx->x, 1, fx->n, p, bound, &lse, &lse_bound) == FA_OK,
                  "fixture '%s': the softmax reference: %s", fx->name, fa_last_error());
        bool ok = agree(fx->lse, lse);
        for (int64_t j = 0; j < fx->n; ++j)
            ok = ok && agree(fx->p[j], p[j]);
        FA_EXPECT(t, ok,
                  "fixture '%s': written softmax or lse (%.17g) differs from the reference "
                  "(%.17g)",
                  fx->name, fx->lse, lse);
    }

    for (int f = 0; f < online_attn_fixture_count; ++f) {
        const online_attn_fixture *fx = &online_attn_fixtures[f];
        const attn_online_args args = fixture_args(fx, NULL, NULL);
        const fa_attn_problem problem = online_attn_problem(&args);
        fa_attn_method method = {0};
        method.block_n = fx->chunk;
        fa_attn_reference ref;
        if (!FA_EXPECT(t, fa_attention_reference(&problem, &method, &ref) == FA_OK,
                       "attention fixture '%s': reference failed: %s", fx->name, fa_last_error()))
            continue;
        bool ok = true;
        for (int64_t i = 0; i < fx->nq; ++i) {
            ok = ok && agree(fx->lse[i], ref.lse[i]);
            for (int64_t d = 0; d < fx->head_dim; ++d)
                ok = ok && agree(fx->o[i * fx->head_dim + d], ref.o[i * fx->head_dim + d]);
        }
        FA_EXPECT(t, ok, "attention fixture '%s': written o or lse differs from the reference",
                  fx->name);
        fa_attn_reference_free(&ref);
    }
}

/**
 * Judges o and lse of @p a (host outputs) by the blocked online bound of
 * @p chunk; @p o_exact (may be NULL) replaces the reference's o with written
 * values compared bit for bit. Returns the worst err/bound through @p worst.
 */
static bool attention_covered(const char *label, const attn_online_args *a, int64_t chunk,
                              const double *o_want, const double *lse_want, double *worst)
{
    const fa_attn_problem problem = online_attn_problem(a);
    const fa_attn_method method = online_attn_method(chunk);
    fa_attn_reference ref;
    if (fa_attention_reference(&problem, &method, &ref) != FA_OK) {
        printf("%s: reference failed: %s\n", label, fa_last_error());
        return false;
    }
    const int64_t rows = a->batch * a->heads_q * a->nq;
    fa_check_report o_report, lse_report;
    const bool o_ok = covered(label, a->o, o_want ? o_want : ref.o, o_want ? NULL : ref.o_bound,
                              rows * a->head_dim, &o_report);
    const bool lse_ok = covered(label, a->lse, lse_want ? lse_want : ref.lse, ref.lse_bound, rows,
                                &lse_report);
    if (worst != NULL)
        *worst = fa_max_nan_double(o_report.worst_ratio, lse_report.worst_ratio);
    fa_attn_reference_free(&ref);
    return o_ok && lse_ok;
}

static void test_attention_fixtures_against_model(fa_tests *t)
{
    for (int f = 0; f < online_attn_fixture_count; ++f) {
        const online_attn_fixture *fx = &online_attn_fixtures[f];
        float o[ONLINE_ATTN_FIXTURE_Q], lse[ONLINE_ATTN_FIXTURE_MAX_ROWS];
        const attn_online_args args = fixture_args(fx, o, lse);
        online_model_attn_rows(&args);
        FA_EXPECT(
            t,
            attention_covered(fx->name, &args, fx->chunk, fx->exact ? fx->o : NULL, fx->lse, NULL),
            "attention fixture '%s': model not covered", fx->name);
        if (!fx->exact)
            FA_EXPECT(t, attention_covered(fx->name, &args, fx->chunk, NULL, NULL, NULL),
                      "attention fixture '%s': model not covered by the reference", fx->name);
    }
}

/* ---- CPU: the invariant --------------------------------------------------------------------- */

/**
 * The invariant of the lesson, checked against its definition: after chunk
 * t, l_t = sum over the entries j seen of exp(x_j - m_t) and o_t the same with
 * v_j, computed directly (compensated) for every t, against the reference's
 * online recurrence.
 */
static void test_invariant(fa_tests *t)
{
    static const int64_t chunks[] = {1, 4, 16};
    const int64_t n = 300, rows = ONLINE_ROW_PATTERN_COUNT;
    float *x = fa_new_floats(rows * n), *v = fa_new_floats(rows * n);
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 1);
    int failures = 0;
    for (int k = 0; k < FA_COUNT_OF(chunks); ++k) {
        fill_pattern_rows(x, rows, n, chunks[k], 3.0, &rng);
        fill_normal(v, rows * n, 1.0, &rng);
        for (int64_t r = 0; r < rows; ++r) {
            row_traces tr = traces_new(n, chunks[k]);
            traces_compute(&tr, x + r * n, v + r * n, n, chunks[k], ONLINE_NO_MISTAKE);
            for (int64_t c = 0; c < tr.chunks; ++c) {
                const int64_t end = (c + 1) * chunks[k] < n ? (c + 1) * chunks[k] : n;
                double m = -INFINITY;
                for (int64_t j = 0; j < end; ++j)
                    m = fa_max_nan_double(m, x[r * n + j]);
                fa_ksum l = {0}, o = {0};
                for (int64_t j = 0; j < end && m != -INFINITY; ++j) {
                    const double e = exp((double)x[r * n + j] - m);
                    fa_ksum_add(&l, e);
                    if (x[r * n + j] != -INFINITY)
                        fa_ksum_add(&o, e * v[r * n + j]);
                }
                failures += !(agree(m, tr.ref_max[c]) && agree(fa_ksum_value(&l), tr.ref_sum[c]) &&
                              fabs(fa_ksum_value(&o) - tr.ref_output[c]) <=
                                  DOUBLE_AGREEMENT * fa_max_nan_double(1.0, fa_ksum_value(&l)));
            }
            traces_free(&tr);
        }
    }
    FA_EXPECT(t, failures == 0,
              "%d chunks where the online recurrence differs from "
              "sum_j exp(x_j - m_t)",
              failures);
    free(x);
    free(v);
}

/* ---- CPU: the model within the bounds ------------------------------------------------------- */

static void test_model_traces_within_bound(fa_tests *t)
{
    static const int64_t chunks[] = {1, 3, 16, 64};
    const int64_t rows = ONLINE_ROW_PATTERN_COUNT;
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 2);
    for (int k = 0; k < FA_COUNT_OF(chunks); ++k) {
        const int64_t c = chunks[k];
        const int64_t lengths[] = {1, c > 1 ? c - 1 : 2, c, c + 1, 5 * c + 3, 2000};
        for (int l = 0; l < FA_COUNT_OF(lengths); ++l) {
            const int64_t n = lengths[l];
            float *x = fa_new_floats(rows * n), *v = fa_new_floats(rows * n);
            fill_pattern_rows(x, rows, n, c, (double)(1 + l), &rng);
            fill_normal(v, rows * n, 1.0, &rng);
            for (int64_t r = 0; r < rows; ++r) {
                row_traces tr = traces_new(n, c);
                traces_compute(&tr, x + r * n, v + r * n, n, c, ONLINE_NO_MISTAKE);
                bool all;
                const double worst = traces_worst_ratio(&tr, &all);
                FA_EXPECT(t, all,
                          "traces, chunk %lld, n %lld, %s row: not covered (worst err/bound %g)",
                          (long long)c, (long long)n,
                          online_row_pattern_name((online_row_pattern)r), worst);
                traces_free(&tr);
            }
            free(x);
            free(v);
        }
    }
}

/**
 * Softmax of rows of every pattern by the model, judged by the bound of its
 * geometry; false, with the reference's error recorded in @p t, when the
 * reference fails.
 */
static bool softmax_geometry_covered(fa_tests *t, const float *x, int64_t n, int threads,
                                     int chunk, float *p, double *ref_p, double *p_bound,
                                     double *worst)
{
    float lse;
    double ref_lse, lse_bound;
    online_model_softmax_row(x, n, threads, chunk, p, &lse);
    if (!FA_EXPECT(t,
                   online_ref_softmax_row(x, n, threads, chunk, ref_p, p_bound, &ref_lse,
                                          &lse_bound) == FA_OK,
                   "softmax reference, n %lld, %d threads x %d: %s", (long long)n, threads, chunk,
                   fa_last_error())) {
        if (worst != NULL)
            *worst = NAN;
        return false;
    }
    fa_check_report pr, lr;
    const bool p_ok = fa_check_covers(p, ref_p, p_bound, n, &pr);
    const bool lse_ok = fa_check_covers(&lse, &ref_lse, &lse_bound, 1, &lr);
    if (worst != NULL)
        *worst = fa_max_nan_double(pr.worst_ratio, lr.worst_ratio);
    return p_ok && lse_ok;
}

static void test_model_softmax_within_bound(fa_tests *t)
{
    static const int64_t lengths[] = {1, 2, 33, 1000, 1025, 5000, 70001};
    const int64_t rows = ONLINE_ROW_PATTERN_COUNT;
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 3);
    for (int l = 0; l < FA_COUNT_OF(lengths); ++l) {
        const int64_t n = lengths[l];
        const int threads = softmax_rows_online_threads(n);
        float *x = fa_new_floats(rows * n), *p = fa_new_floats(n);
        double *ref = fa_new_doubles(n), *bound = fa_new_doubles(n);
        fill_pattern_rows(x, rows, n, (int64_t)threads * SOFTMAX_ONLINE_CHUNK, 3.0, &rng);
        for (int64_t r = 0; r < rows; ++r) {
            double worst = 0.0;
            FA_EXPECT(t,
                      softmax_geometry_covered(t, x + r * n, n, threads, SOFTMAX_ONLINE_CHUNK, p,
                                               ref, bound, &worst),
                      "softmax model, n %lld, %s row: not covered (worst err/bound %g)",
                      (long long)n, online_row_pattern_name((online_row_pattern)r), worst);
        }
        free(x);
        free(p);
        free(ref);
        free(bound);
    }
}

/** One attention problem of host arrays (owned here), with random inputs. */
typedef struct attn_problem_host {
    float *q, *k, *v, *o, *lse;
    attn_online_args args;
} attn_problem_host;

static attn_problem_host attn_problem_new(int64_t batch, int64_t heads_q, int64_t heads_kv,
                                          int64_t nq, int64_t nk, int64_t dim, fa_mask mask,
                                          int64_t chunk, double spread, fa_rng *rng)
{
    attn_problem_host h;
    const int64_t rows = batch * heads_q * nq, kv = batch * heads_kv * nk * dim;
    h.q = fa_new_floats(rows * dim);
    h.k = fa_new_floats(kv);
    h.v = fa_new_floats(kv);
    h.o = fa_new_floats(rows * dim);
    h.lse = fa_new_floats(rows);
    fill_normal(h.q, rows * dim, spread, rng);
    fill_normal(h.k, kv, 1.0, rng);
    fill_normal(h.v, kv, 1.0, rng);
    const attn_online_args a = {.q = h.q,
                                .k = h.k,
                                .v = h.v,
                                .o = h.o,
                                .lse = h.lse,
                                .batch = batch,
                                .heads_q = heads_q,
                                .heads_kv = heads_kv,
                                .nq = nq,
                                .nk = nk,
                                .head_dim = dim,
                                .scale = (float)(1.0 / sqrt((double)dim)),
                                .mask = mask,
                                .chunk = chunk};
    h.args = a;
    return h;
}

static void attn_problem_free(attn_problem_host *h)
{
    free(h->q);
    free(h->k);
    free(h->v);
    free(h->o);
    free(h->lse);
}

/** Shapes of the attention model tests: B, Hq, Hkv, Nq, Nk, D, mask, chunk. */
static const struct {
    int64_t batch, heads_q, heads_kv, nq, nk, dim;
    fa_mask mask;
    int64_t chunk;
} ATTN_SHAPES[] = {
    {1, 1, 1, 1, 1, 1, FA_MASK_NONE, 1},
    {1, 2, 1, 5, 31, 16, FA_MASK_NONE, 32},
    {2, 2, 2, 9, 33, 32, FA_MASK_CAUSAL_TOP_LEFT, 32},
    {1, 1, 1, 40, 23, 100, FA_MASK_CAUSAL_BOTTOM_RIGHT, 7},
    {1, 2, 2, 4, 200, 256, FA_MASK_NONE, 64},
};

static void test_model_attention_within_bound(fa_tests *t)
{
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 4);
    for (int s = 0; s < FA_COUNT_OF(ATTN_SHAPES); ++s) {
        attn_problem_host h =
            attn_problem_new(ATTN_SHAPES[s].batch, ATTN_SHAPES[s].heads_q, ATTN_SHAPES[s].heads_kv,
                             ATTN_SHAPES[s].nq, ATTN_SHAPES[s].nk, ATTN_SHAPES[s].dim,
                             ATTN_SHAPES[s].mask, ATTN_SHAPES[s].chunk, 3.0, &rng);
        online_model_attn_rows(&h.args);
        double worst = 0.0;
        FA_EXPECT(t,
                  attention_covered("attention model", &h.args, h.args.chunk, NULL, NULL, &worst),
                  "attention model, shape %d: not covered (worst err/bound %g)", s, worst);
        attn_problem_free(&h);
    }
}

/* ---- CPU: properties ------------------------------------------------------------------------ */

/** |a - b| <= bound_a + bound_b element by element (both are within their bound of one truth). */
static bool within_both(const float *a, const double *bound_a, const float *b,
                        const double *bound_b, int64_t n, int64_t *where)
{
    for (int64_t i = 0; i < n; ++i) {
        const bool both_nan = isnan(a[i]) && isnan(b[i]);
        if (!both_nan && !(a[i] == b[i] || fabs((double)a[i] - b[i]) <= bound_a[i] + bound_b[i])) {
            *where = i;
            return false;
        }
    }
    return true;
}

/** The last l and o of a row for several chunk sizes agree within their bounds. */
static void test_chunk_invariance_traces(fa_tests *t)
{
    static const int64_t chunks[] = {1, 5, 16, 64, 1000};
    const int64_t n = 1000, rows = ONLINE_ROW_PATTERN_COUNT;
    float *x = fa_new_floats(rows * n), *v = fa_new_floats(rows * n);
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 5);
    fill_pattern_rows(x, rows, n, 16, 3.0, &rng);
    fill_normal(v, rows * n, 1.0, &rng);
    for (int64_t r = 0; r < rows; ++r) {
        float last[FA_COUNT_OF(chunks)][2];
        double bound[FA_COUNT_OF(chunks)][2];
        for (int k = 0; k < FA_COUNT_OF(chunks); ++k) {
            row_traces tr = traces_new(n, chunks[k]);
            traces_compute(&tr, x + r * n, v + r * n, n, chunks[k], ONLINE_NO_MISTAKE);
            last[k][0] = tr.sum[tr.chunks - 1];
            last[k][1] = tr.output[tr.chunks - 1];
            bound[k][0] = tr.sum_bound[tr.chunks - 1];
            bound[k][1] = tr.output_bound[tr.chunks - 1];
            traces_free(&tr);
        }
        for (int k = 1; k < FA_COUNT_OF(chunks); ++k) {
            int64_t where = -1;
            FA_EXPECT(t, within_both(last[0], bound[0], last[k], bound[k], 2, &where),
                      "%s row: chunk 1 gives (l, o) = (%.9g, %.9g), chunk %lld (%.9g, %.9g), "
                      "beyond their bounds",
                      online_row_pattern_name((online_row_pattern)r), (double)last[0][0],
                      (double)last[0][1], (long long)chunks[k], (double)last[k][0],
                      (double)last[k][1]);
        }
    }
    free(x);
    free(v);
}

/** Other geometries of the one-pass softmax (chunks, merge trees) agree within their bounds. */
static void test_geometry_invariance_softmax(fa_tests *t)
{
    static const int geometries[][2] = {{1, 1}, {1, 7}, {32, 4}, {256, 4}, {1024, 1}, {8, 16}};
    const int64_t n = 3001, rows = ONLINE_ROW_PATTERN_COUNT;
    float *x = fa_new_floats(rows * n);
    float *p[FA_COUNT_OF(geometries)];
    double *bound[FA_COUNT_OF(geometries)], *ref = fa_new_doubles(n);
    for (int g = 0; g < FA_COUNT_OF(geometries); ++g) {
        p[g] = fa_new_floats(n);
        bound[g] = fa_new_doubles(n);
    }
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 6);
    fill_pattern_rows(x, rows, n, 1024, 3.0, &rng);
    for (int64_t r = 0; r < rows; ++r) {
        for (int g = 0; g < FA_COUNT_OF(geometries); ++g)
            FA_EXPECT(t,
                      softmax_geometry_covered(t, x + r * n, n, geometries[g][0],
                                               geometries[g][1], p[g], ref, bound[g], NULL),
                      "%s row, %d threads x %d: not covered",
                      online_row_pattern_name((online_row_pattern)r), geometries[g][0],
                      geometries[g][1]);
        for (int g = 1; g < FA_COUNT_OF(geometries); ++g) {
            int64_t where = -1;
            FA_EXPECT(t, within_both(p[0], bound[0], p[g], bound[g], n, &where),
                      "%s row: geometries 1x1 and %dx%d differ beyond their bounds at %lld",
                      online_row_pattern_name((online_row_pattern)r), geometries[g][0],
                      geometries[g][1], (long long)where);
        }
    }
    for (int g = 0; g < FA_COUNT_OF(geometries); ++g) {
        free(p[g]);
        free(bound[g]);
    }
    free(ref);
    free(x);
}

static void test_chunk_invariance_attention(fa_tests *t)
{
    static const int64_t chunks[] = {1, 7, 32, 64};
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 7);
    attn_problem_host h =
        attn_problem_new(1, 2, 1, 12, 150, 48, FA_MASK_CAUSAL_BOTTOM_RIGHT, 1, 3.0, &rng);
    const int64_t count = h.args.batch * h.args.heads_q * h.args.nq * h.args.head_dim;
    float *o[FA_COUNT_OF(chunks)];
    for (int k = 0; k < FA_COUNT_OF(chunks); ++k) {
        o[k] = fa_new_floats(count);
        h.args.chunk = chunks[k];
        online_model_attn_rows(&h.args);
        memcpy(o[k], h.o, sizeof(float) * (size_t)count);
        FA_EXPECT(
            t,
            attention_covered("attention chunk invariance", &h.args, chunks[k], NULL, NULL, NULL),
            "attention model with chunk %lld not covered", (long long)chunks[k]);
    }
    /* Every chunk's output is within its own bound of the one exact o, so
     * two of them differ by at most the sum of the bounds. */
    const fa_attn_problem problem = online_attn_problem(&h.args);
    for (int k = 1; k < FA_COUNT_OF(chunks); ++k) {
        const fa_attn_method m0 = online_attn_method(chunks[0]);
        const fa_attn_method mk = online_attn_method(chunks[k]);
        fa_attn_reference r0, rk;
        if (fa_attention_reference(&problem, &m0, &r0) != FA_OK ||
            fa_attention_reference(&problem, &mk, &rk) != FA_OK) {
            FA_EXPECT(t, false, "attention reference failed: %s", fa_last_error());
            break;
        }
        int64_t where = -1;
        FA_EXPECT(t, within_both(o[0], r0.o_bound, o[k], rk.o_bound, count, &where),
                  "attention: chunks 1 and %lld differ beyond their bounds at %lld",
                  (long long)chunks[k], (long long)where);
        fa_attn_reference_free(&r0);
        fa_attn_reference_free(&rk);
    }
    for (int k = 0; k < FA_COUNT_OF(chunks); ++k)
        free(o[k]);
    attn_problem_free(&h);
}

/** The final (m, l, o) of a segment of a row, folded by the trace model. */
typedef struct segment_state {
    online_model_state state;
    float out;
} segment_state;

static segment_state segment_of(const float *x, const float *v, int64_t n, int64_t chunk)
{
    row_traces tr = traces_new(n, chunk);
    online_model_trace_row(x, v, n, chunk, ONLINE_NO_MISTAKE, tr.max, NULL, tr.sum, tr.output);
    segment_state s = {{tr.max[tr.chunks - 1], tr.sum[tr.chunks - 1]}, tr.output[tr.chunks - 1]};
    traces_free(&tr);
    return s;
}

static segment_state merge_segments(segment_state a, segment_state b)
{
    float alpha_a, alpha_b;
    segment_state merged;
    merged.state = online_model_merge(a.state, b.state, &alpha_a, &alpha_b);
    merged.out = online_model_merge_output(a.out, alpha_a, b.out, alpha_b);
    return merged;
}

/** Merging without the correction factors: the classic mistake a merge bound must reject. */
static segment_state merge_segments_unscaled(segment_state a, segment_state b)
{
    const segment_state merged = {{fa_max_nan(a.state.max, b.state.max), a.state.sum + b.state.sum},
                                  a.out + b.out};
    return merged;
}

/**
 * Segments merged by a butterfly of MERGE_LANES lanes (a power of two: three
 * segments and an empty lane), so that fa_softmax_state_reference() states
 * each merge order as an online method: level 1 merges lanes 0-1 and 2-3,
 * level 2 the two pairs.
 */
enum { MERGE_LANES = 4, MERGE_LEVELS = 2 };
static const int MERGE_MASKS[MERGE_LEVELS] = {1, 2};
_Static_assert(MERGE_LANES == 1 << MERGE_LEVELS, "a butterfly over 2^L lanes has L levels");

/**
 * Lays segments of x and v [3][segment] out as the method's lanes: lane t
 * folds segment order[t] (-1: none, all -inf), its entry q sitting at
 * t + MERGE_LANES q of lane_x and lane_v [MERGE_LANES segment].
 */
static void segments_as_lanes(const float *x, const float *v, int64_t segment,
                              const int order[MERGE_LANES], float *lane_x, float *lane_v)
{
    for (int lane = 0; lane < MERGE_LANES; ++lane) {
        for (int64_t q = 0; q < segment; ++q) {
            const int64_t at = lane + MERGE_LANES * q, from = order[lane] * segment + q;
            lane_x[at] = order[lane] < 0 ? -INFINITY : x[from];
            lane_v[at] = order[lane] < 0 ? 0.0f : v[from];
        }
    }
}

/**
 * Merge: commutative bit for bit, the empty state is the identity; three
 * merge orders each within the bound of the softmax reference for its own
 * tree, and a merge without correction factors rejected.
 */
static void test_merge_properties(fa_tests *t)
{
    const int64_t segment = 40, chunk = 8, n = 3 * segment;
    const int64_t rows = ONLINE_ROW_PATTERN_COUNT;
    float *x = fa_new_floats(rows * n), *v = fa_new_floats(rows * n);
    float *lane_x = fa_new_floats(MERGE_LANES * segment);
    float *lane_v = fa_new_floats(MERGE_LANES * segment);
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 8);
    fill_pattern_rows(x, rows, n, chunk, 3.0, &rng);
    fill_normal(v, rows * n, 1.0, &rng);
    const segment_state empty = {online_model_state_empty(), 0.0f};
    /* Lane layouts of the orders: (a b) c, a (b c) as (b c) a, (c a) b. */
    static const int ORDERS[3][MERGE_LANES] = {{0, 1, 2, -1}, {1, 2, 0, -1}, {2, 0, 1, -1}};
    const fa_softmax_method tree = {chunk, MERGE_LANES, MERGE_LEVELS, MERGE_MASKS};
    for (int64_t r = 0; r < rows; ++r) {
        const char *name = online_row_pattern_name((online_row_pattern)r);
        const float *xr = x + r * n, *vr = v + r * n;
        const segment_state a = segment_of(xr, vr, segment, chunk);
        const segment_state b = segment_of(xr + segment, vr + segment, segment, chunk);
        const segment_state c = segment_of(xr + 2 * segment, vr + 2 * segment, segment, chunk);

        const segment_state ab = merge_segments(a, b), ba = merge_segments(b, a);
        FA_EXPECT(t,
                  fa_same_float(ab.state.max, ba.state.max) &&
                      fa_same_float(ab.state.sum, ba.state.sum) && fa_same_float(ab.out, ba.out),
                  "%s row: merge(a, b) and merge(b, a) differ", name);
        const segment_state ae = merge_segments(a, empty), ea = merge_segments(empty, a);
        FA_EXPECT(t,
                  fa_same_float(ae.state.max, a.state.max) &&
                      fa_same_float(ae.state.sum, a.state.sum) && fa_same_float(ae.out, a.out) &&
                      fa_same_float(ea.state.sum, a.state.sum),
                  "%s row: merging the empty state changed a", name);

        const segment_state orders[3] = {merge_segments(ab, c),
                                         merge_segments(a, merge_segments(b, c)),
                                         merge_segments(merge_segments(c, a), b)};
        fa_softmax_state_ref ref;
        for (int k = 0; k < 3; ++k) {
            segments_as_lanes(xr, vr, segment, ORDERS[k], lane_x, lane_v);
            FA_EXPECT(t,
                      fa_softmax_state_reference(lane_x, lane_v, MERGE_LANES * segment, NULL,
                                                 &tree, &ref) == FA_OK,
                      "%s row, merge order %d: the state reference: %s", name, k, fa_last_error());
            FA_EXPECT(t, orders[k].state.max == ref.max,
                      "%s row: merge order %d gives max %.9g, want %.9g", name, k,
                      (double)orders[k].state.max, ref.max);
            FA_EXPECT(t,
                      fabs(orders[k].state.sum - ref.sum) <= ref.sum_bound &&
                          fabs(orders[k].out - ref.output) <= ref.output_bound,
                      "%s row, merge order %d: l %.9g (want %.17g +- %.3g), o %.9g (want %.17g "
                      "+- %.3g)",
                      name, k, (double)orders[k].state.sum, ref.sum, ref.sum_bound,
                      (double)orders[k].out, ref.output, ref.output_bound);
        }
        /* Without correction factors only segments whose maxima differ go wrong;
         * ref is the last order's, (c a) b, merged the same way here. */
        if (a.state.max != b.state.max || b.state.max != c.state.max) {
            const segment_state wrong =
                merge_segments_unscaled(merge_segments_unscaled(c, a), b);
            const double ratio = fa_max_nan_double(fabs(wrong.state.sum - ref.sum) / ref.sum_bound,
                                      fabs(wrong.out - ref.output) / ref.output_bound);
            FA_EXPECT(t, ratio > MUTATION_MARGIN,
                      "%s row: a merge without correction factors must be rejected (err/bound "
                      "%.3g)",
                      name, ratio);
        }
    }
    free(lane_x);
    free(lane_v);
    free(x);
    free(v);
}

/** Adding 1024 to every entry of a dyadic row is exact: every weight, sum and p is unchanged. */
static void test_shift_invariance(fa_tests *t)
{
    const int64_t n = 777, chunk = 16;
    float *x = fa_new_floats(n), *shifted = fa_new_floats(n), *v = fa_new_floats(n);
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 9);
    online_fill_row(x, n, chunk, ONLINE_ROW_DYADIC, 1.0, &rng);
    fill_normal(v, n, 1.0, &rng);
    for (int64_t j = 0; j < n; ++j)
        shifted[j] = x[j] + ONLINE_EXACT_SHIFT;
    row_traces a = traces_new(n, chunk), b = traces_new(n, chunk);
    traces_compute(&a, x, v, n, chunk, ONLINE_NO_MISTAKE);
    traces_compute(&b, shifted, v, n, chunk, ONLINE_NO_MISTAKE);
    bool max_shifted = true;
    for (int64_t c = 0; c < a.chunks; ++c)
        max_shifted = max_shifted && b.max[c] == a.max[c] + ONLINE_EXACT_SHIFT;
    FA_EXPECT(t, max_shifted, "shifted row: the running max did not shift by exactly %g",
              (double)ONLINE_EXACT_SHIFT);
    FA_EXPECT(t,
              fa_first_difference(a.correction, b.correction, a.chunks) < 0 &&
                  fa_first_difference(a.sum, b.sum, a.chunks) < 0 &&
                  fa_first_difference(a.output, b.output, a.chunks) < 0,
              "shifted row: alpha, l or o changed");
    traces_free(&a);
    traces_free(&b);

    float *p = fa_new_floats(n), *p_shifted = fa_new_floats(n), lse, lse_shifted;
    online_model_softmax_rows(x, p, &lse, 1, n);
    online_model_softmax_rows(shifted, p_shifted, &lse_shifted, 1, n);
    FA_EXPECT(t, fa_first_difference(p, p_shifted, n) < 0, "shifted row: p changed at %lld",
              (long long)fa_first_difference(p, p_shifted, n));
    double *rp = fa_new_doubles(n), *bp = fa_new_doubles(n);
    double ref_lse, lse_bound, ref_lse_s, lse_bound_s;
    FA_EXPECT(t, online_ref_softmax_rows(x, 1, n, rp, bp, &ref_lse, &lse_bound) == FA_OK,
              "shifted row: the softmax reference of the row: %s", fa_last_error());
    FA_EXPECT(t, online_ref_softmax_rows(shifted, 1, n, rp, bp, &ref_lse_s, &lse_bound_s) == FA_OK,
              "shifted row: the softmax reference of the shifted row: %s", fa_last_error());
    FA_EXPECT(t,
              fabs(((double)lse_shifted - ONLINE_EXACT_SHIFT) - (double)lse) <=
                  lse_bound + lse_bound_s,
              "shifted row: lse %.9g - %g vs %.9g beyond the bounds", (double)lse_shifted,
              (double)ONLINE_EXACT_SHIFT, (double)lse);
    free(rp);
    free(bp);
    free(p);
    free(p_shifted);
    free(x);
    free(shifted);
    free(v);
}

/** Where the max sits decides alpha: exactly 1 without a rise, below 1 with one. */
static void test_maxima_first_and_last(fa_tests *t)
{
    const int64_t n = 100, chunk = 10;
    float x[100], v[100];
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 10);
    fill_normal(v, n, 1.0, &rng);

    online_fill_row(x, n, chunk, ONLINE_ROW_FALLING, 3.0, &rng);
    row_traces tr = traces_new(n, chunk);
    traces_compute(&tr, x, v, n, chunk, ONLINE_NO_MISTAKE);
    bool ones = true;
    for (int64_t c = 1; c < tr.chunks; ++c)
        ones = ones && tr.correction[c] == 1.0f && tr.max[c] == x[0];
    FA_EXPECT(t, ones && tr.correction[0] == 0.0f,
              "falling row: alpha must be 0 then exactly 1 (the max never rises)");
    traces_free(&tr);

    online_fill_row(x, n, chunk, ONLINE_ROW_RISING, 3.0, &rng);
    tr = traces_new(n, chunk);
    traces_compute(&tr, x, v, n, chunk, ONLINE_NO_MISTAKE);
    bool below = true;
    for (int64_t c = 1; c < tr.chunks; ++c)
        below = below && tr.correction[c] < 1.0f && tr.correction[c] > 0.0f;
    bool all;
    traces_worst_ratio(&tr, &all);
    FA_EXPECT(t, below && all,
              "rising row: alpha must be in (0, 1) at every chunk, traces covered");
    traces_free(&tr);

    online_fill_row(x, n, chunk, ONLINE_ROW_LATE_MAX, 3.0, &rng);
    tr = traces_new(n, chunk);
    traces_compute(&tr, x, v, n, chunk, ONLINE_NO_MISTAKE);
    traces_worst_ratio(&tr, &all);
    FA_EXPECT(t, tr.correction[tr.chunks - 1] < 1e-20f && all,
              "late max 60 above the rest: the last alpha %.3g must nearly erase l, traces covered",
              (double)tr.correction[tr.chunks - 1]);
    traces_free(&tr);
}

/** +-1e4 entries: no NaN, no infinity, within the bound (the model never subtracts across them). */
static void test_extreme_scores(fa_tests *t)
{
    const int64_t n = 4000, chunk = 16;
    float *x = fa_new_floats(n), *v = fa_new_floats(n), *p = fa_new_floats(n);
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 11);
    online_fill_row(x, n, chunk, ONLINE_ROW_EXTREME, 1.0, &rng);
    fill_normal(v, n, 1.0, &rng);
    row_traces tr = traces_new(n, chunk);
    traces_compute(&tr, x, v, n, chunk, ONLINE_NO_MISTAKE);
    bool all, finite = true;
    traces_worst_ratio(&tr, &all);
    for (int64_t c = 0; c < tr.chunks; ++c)
        finite = finite && isfinite(tr.sum[c]) && isfinite(tr.output[c]);
    FA_EXPECT(t, all && finite, "extreme row: traces must stay finite and covered");
    traces_free(&tr);
    float lse;
    online_model_softmax_rows(x, p, &lse, 1, n);
    for (int64_t j = 0; j < n; ++j)
        finite = finite && isfinite(p[j]);
    FA_EXPECT(t, finite && fabs(lse - 1e4f) < 10.0f, "extreme row: p finite, lse near 1e4 (%g)",
              (double)lse);
    free(x);
    free(v);
    free(p);
}

/**
 * The benchmark's counted bytes on a shape small enough to count by hand:
 * softmax 3 rows x 5: 15 entries x 12 B + 3 lse x 4 B = 192 (one pass),
 * 15 x 16 + 12 = 252 (three passes); attention 2 heads, n = 3, dim = 4:
 * Q, K, V, O 4 x 3 x 4 floats + 3 lse = 51 floats = 204 B per head, 408 in
 * all (online); naive adds 6 x 3 x 3 floats = 216 B per head: 840.
 */
static void test_counted_bytes(fa_tests *t)
{
    FA_EXPECT(t, online_softmax_bytes(3, 5) == 192, "one-pass softmax bytes %lld, want 192",
              (long long)online_softmax_bytes(3, 5));
    FA_EXPECT(t, three_pass_softmax_bytes(3, 5) == 252, "three-pass softmax bytes %lld, want 252",
              (long long)three_pass_softmax_bytes(3, 5));
    FA_EXPECT(t, online_attn_bytes(2, 3, 4) == 408, "online attention bytes %lld, want 408",
              (long long)online_attn_bytes(2, 3, 4));
    FA_EXPECT(t, naive_attn_bytes(2, 3, 4) == 840, "naive attention bytes %lld, want 840",
              (long long)naive_attn_bytes(2, 3, 4));
}

/**
 * The course's NaN rule on the model: a NaN entry makes the running max NaN
 * from its chunk on (fa_max_nan(); `fmaxf` would drop it), and with it alpha,
 * l and o; the chunks before it are untouched, the reference agrees, and the
 * softmax of its row is NaN everywhere. A merge with a NaN state is NaN in
 * both orders.
 */
static void test_nan_rule(fa_tests *t)
{
    const int64_t n = 40, chunk = 8, nan_at = 19; /* in chunk 2 */
    float x[40], v[40], p[40], lse;
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 13);
    fill_normal(x, n, 2.0, &rng);
    fill_normal(v, n, 1.0, &rng);
    row_traces clean = traces_new(n, chunk), dirty = traces_new(n, chunk);
    traces_compute(&clean, x, v, n, chunk, ONLINE_NO_MISTAKE);
    x[nan_at] = NAN;
    traces_compute(&dirty, x, v, n, chunk, ONLINE_NO_MISTAKE);
    bool model_ok = true, reference_ok = true;
    for (int64_t c = 0; c < dirty.chunks; ++c) {
        if (c < nan_at / chunk) {
            model_ok = model_ok && fa_same_float(dirty.max[c], clean.max[c]) &&
                       fa_same_float(dirty.correction[c], clean.correction[c]) &&
                       fa_same_float(dirty.sum[c], clean.sum[c]) &&
                       fa_same_float(dirty.output[c], clean.output[c]);
        } else {
            model_ok = model_ok && isnan(dirty.max[c]) && isnan(dirty.correction[c]) &&
                       isnan(dirty.sum[c]) && isnan(dirty.output[c]);
            reference_ok = reference_ok && isnan(dirty.ref_max[c]) &&
                           isnan(dirty.ref_correction[c]) && isnan(dirty.ref_sum[c]) &&
                           isnan(dirty.ref_output[c]);
        }
    }
    bool all_covered;
    traces_worst_ratio(&dirty, &all_covered);
    FA_EXPECT(t, model_ok, "model: a NaN must make m, alpha, l and o NaN from its chunk on, and "
                           "leave the chunks before it unchanged");
    FA_EXPECT(t, reference_ok && all_covered,
              "reference: NaN from the chunk of the NaN on, and the model covered by it");
    traces_free(&clean);
    traces_free(&dirty);

    online_model_softmax_rows(x, p, &lse, 1, n);
    bool all_nan = isnan(lse);
    for (int64_t j = 0; j < n; ++j)
        all_nan = all_nan && isnan(p[j]);
    FA_EXPECT(t, all_nan, "model softmax: a row with a NaN must be NaN everywhere, lse too");

    FA_EXPECT(t,
              isnan(online_model_running_max(-INFINITY, NAN)) &&
                  isnan(online_model_running_max(NAN, 3.0f)) &&
                  online_model_running_max(-INFINITY, 3.0f) == 3.0f,
              "the running max keeps NaN on either side");
    const online_model_state finite = {1.0f, 2.0f}, broken = {NAN, 1.0f};
    float alpha_a, alpha_b;
    const online_model_state ab = online_model_merge(finite, broken, &alpha_a, &alpha_b);
    const online_model_state ba = online_model_merge(broken, finite, &alpha_a, &alpha_b);
    FA_EXPECT(t, isnan(ab.max) && isnan(ab.sum) && isnan(ba.max) && isnan(ba.sum),
              "a merge with a NaN state must be NaN in both orders");
}

/* ---- CPU: the bounds reject real mistakes --------------------------------------------------- */

/**
 * Each classic mistake, replayed by the model on rows that expose it, must
 * leave some trace outside its bound by a wide margin; the correct replay
 * must stay well inside.
 */
static void test_mistakes_rejected(fa_tests *t)
{
    const int64_t n = 40, chunk = 4;
    enum { ROWS = 4 };
    float x[ROWS][40], v[40];
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 12);
    fill_normal(v, n, 1.0, &rng);
    online_fill_row(x[0], n, chunk, ONLINE_ROW_RISING, 3.0, &rng); /* a rise at every chunk */
    online_fill_row(x[1], n, chunk, ONLINE_ROW_MASKED, 3.0, &rng); /* first chunk masked */
    online_fill_row(x[2], n, chunk, ONLINE_ROW_EXTREME, 1.0, &rng); /* +-1e4 */
    for (int64_t j = 0; j < n; ++j)
        x[3][j] = x[0][j] - 30.0f; /* all negative */

    for (int mistake = ONLINE_NO_MISTAKE; mistake < ONLINE_MISTAKE_COUNT; ++mistake) {
        double worst = 0.0;
        bool all_covered = true;
        for (int r = 0; r < ROWS; ++r) {
            row_traces tr = traces_new(n, chunk);
            traces_compute(&tr, x[r], v, n, chunk, (online_mistake)mistake);
            bool row_covered;
            worst = fa_max_nan_double(worst, traces_worst_ratio(&tr, &row_covered));
            all_covered = all_covered && row_covered;
            traces_free(&tr);
        }
        if (mistake == ONLINE_NO_MISTAKE)
            FA_EXPECT(t, all_covered && worst < 0.5,
                      "the correct replay must be well inside the bounds (worst err/bound %g)",
                      worst);
        else
            FA_EXPECT(t, !all_covered && worst > MUTATION_MARGIN,
                      "mistake '%s' must be rejected by a wide margin (worst err/bound %g)",
                      online_mistake_name((online_mistake)mistake), worst);
    }
}

/* ---- CPU: bad input for every launcher ------------------------------------------------------ */


/** Host memory standing in for device arrays: validation never dereferences. */
static float BUFFER[256];
static float OTHER[256];
#define MISALIGNED ((const float *)((const char *)OTHER + 2))

/**
 * The address @p bytes past an aligned base that no array of this program
 * occupies: arrays of any size, up to the largest a launcher accepts (2^63
 * bytes), can be described for the validation, which compares addresses and
 * never dereferences them. Never passed to a launcher that would accept it.
 */
static float *fake_array(uint64_t bytes)
{
    static const uint64_t FAKE_BASE = UINT64_C(1) << 20;
    return (float *)(uintptr_t)(FAKE_BASE + bytes);
}

/** Largest float count the launchers accept: its byte size still fits a signed 64-bit offset. */
static const int64_t MAX_FLOATS = INT64_MAX / (int64_t)sizeof(float);

typedef struct trace_bad_case {
    const char *what;
    const float *x, *v, *trace;
    int64_t rows, n, chunk;
    fa_status expected;
    const char *needle;
} trace_bad_case;

typedef fa_status (*trace_validator)(const float *, const float *, const float *, int64_t, int64_t,
                                     int64_t);

static fa_status validate_max(const float *x, const float *v, const float *trace, int64_t rows,
                              int64_t n, int64_t chunk)
{
    (void)v;
    return online_max_trace_validate(x, trace, rows, n, chunk);
}
static fa_status validate_correction(const float *x, const float *v, const float *trace,
                                     int64_t rows, int64_t n, int64_t chunk)
{
    (void)v;
    return online_correction_trace_validate(x, trace, rows, n, chunk);
}
static fa_status validate_sum(const float *x, const float *v, const float *trace, int64_t rows,
                              int64_t n, int64_t chunk)
{
    (void)v;
    return online_sum_trace_validate(x, trace, rows, n, chunk);
}
static fa_status validate_output(const float *x, const float *v, const float *trace, int64_t rows,
                                 int64_t n, int64_t chunk)
{
    return online_output_trace_validate(x, v, trace, rows, n, chunk);
}

static const trace_validator TRACE_VALIDATORS[] = {validate_max, validate_correction,
                                                   validate_sum, validate_output};
static const char *const TRACE_VALIDATOR_NAMES[] = {
    "online_max_trace_validate", "online_correction_trace_validate", "online_sum_trace_validate",
    "online_output_trace_validate"};

/** Expects @p k from the four trace validators, and from the launchers when it is refused. */
static void expect_trace_case(fa_tests *t, const trace_bad_case *k)
{
    for (int f = 0; f < FA_COUNT_OF(TRACE_VALIDATORS); ++f) {
        fa_clear_error();
        FA_EXPECT_STATUS(t, TRACE_VALIDATORS[f](k->x, k->v, k->trace, k->rows, k->n, k->chunk),
                         k->expected, k->needle, "%s, %s", TRACE_VALIDATOR_NAMES[f], k->what);
    }
#if FA_HAVE_CUDA
    /* An accepted call with elements would launch: only the empty ones go on. */
    if (k->expected == FA_OK && k->rows != 0 && k->n != 0)
        return;
    float *trace = (float *)k->trace; /* never written: refused, or no element */
    for (int op = ONLINE_TRACE_MAX; op <= ONLINE_TRACE_OUTPUT; ++op) {
        fa_clear_error();
        FA_EXPECT_STATUS(t,
                         online_launch_trace(FA_IMPL_REFERENCE, (online_trace_op)op, k->x, k->v,
                                             trace, k->rows, k->n, k->chunk, 0),
                         k->expected, k->needle, "%s, %s", online_trace_name((online_trace_op)op),
                         k->what);
        fa_clear_error();
        FA_EXPECT_LEARNER_STATUS(t,
                                 online_launch_trace(FA_IMPL_LEARNER, (online_trace_op)op, k->x,
                                                     k->v, trace, k->rows, k->n, k->chunk, 0),
                                 k->expected, k->needle, "%s, %s",
                                 online_trace_name((online_trace_op)op), k->what);
    }
#endif
}

static void test_trace_bad_input(fa_tests *t)
{
    const int64_t huge = INT64_MAX / 2;
    const trace_bad_case cases[] = {
        {"rows < 0", BUFFER, OTHER, OTHER, -1, 4, 2, FA_ERR_INVALID_SIZE, "rows = -1"},
        {"n < 0", BUFFER, OTHER, OTHER, 1, -3, 2, FA_ERR_INVALID_SIZE, "n = -3"},
        {"chunk = 0", BUFFER, OTHER, OTHER, 1, 4, 0, FA_ERR_INVALID_SIZE, "chunk = 0"},
        {"chunk = 0 even without work", NULL, NULL, NULL, 0, 0, 0, FA_ERR_INVALID_SIZE, "chunk"},
        {"x NULL", NULL, OTHER, OTHER, 2, 4, 2, FA_ERR_NULL_POINTER, "x = NULL"},
        {"trace NULL", BUFFER, OTHER + 64, NULL, 2, 4, 2, FA_ERR_NULL_POINTER, "trace = NULL"},
        {"x misaligned", MISALIGNED, OTHER + 64, OTHER + 128, 2, 4, 2, FA_ERR_MISALIGNED, "x = "},
        {"trace misaligned", BUFFER, OTHER + 64, MISALIGNED, 2, 4, 2, FA_ERR_MISALIGNED,
         "trace = "},
        {"trace overlaps x", BUFFER, OTHER, BUFFER + 3, 2, 4, 2, FA_ERR_INVALID_ARGUMENT,
         "overlaps x"},
        {"rows * n overflows", BUFFER, OTHER, OTHER + 64, huge, 4, 2, FA_ERR_OVERFLOW, "rows * n"},
        {"no rows: NULL is fine", NULL, NULL, NULL, 0, 4, 2, FA_OK, ""},
        {"empty rows: NULL is fine", NULL, NULL, NULL, 3, 0, 2, FA_OK, ""},
        /* The overflow checks at their edges: the largest call each accepts and the
         * smallest it refuses (arrays described by address only). */
        {"rows * n at the largest float count", fake_array(4096), fake_array(4096), fake_array(0),
         1, MAX_FLOATS, MAX_FLOATS, FA_OK, ""},
        {"rows * n one float beyond", fake_array(4096), fake_array(4096), fake_array(0), 1,
         MAX_FLOATS + 1, MAX_FLOATS, FA_ERR_OVERFLOW, "rows * n"},
        {"rows filling the grid", fake_array(UINT64_C(1) << 42), fake_array(UINT64_C(1) << 42),
         fake_array(0), FA_MAX_GRID_X * ONLINE_TRACE_THREADS, 1, 1, FA_OK, ""},
        {"one row more than the grid holds", fake_array(UINT64_C(1) << 42),
         fake_array(UINT64_C(1) << 42), fake_array(0), FA_MAX_GRID_X * ONLINE_TRACE_THREADS + 1,
         1, 1, FA_ERR_OVERFLOW, "one thread per row"},
    };
    for (int c = 0; c < FA_COUNT_OF(cases); ++c)
        expect_trace_case(t, &cases[c]);

    /* The values of the output trace are checked like x. */
    FA_EXPECT_STATUS(t, online_output_trace_validate(BUFFER, NULL, OTHER, 2, 4, 2),
                     FA_ERR_NULL_POINTER, "v = NULL", "online_output_trace_validate, v NULL");
    FA_EXPECT_STATUS(t, online_output_trace_validate(BUFFER, MISALIGNED, OTHER + 64, 2, 4, 2),
                     FA_ERR_MISALIGNED, "v = ", "online_output_trace_validate, v misaligned");
    FA_EXPECT_STATUS(t, online_output_trace_validate(BUFFER, OTHER, OTHER + 7, 2, 4, 2),
                     FA_ERR_INVALID_ARGUMENT, "overlaps v",
                     "online_output_trace_validate, trace overlaps v");
}

typedef struct softmax_bad_case {
    const char *what;
    const float *x, *p, *lse;
    int64_t rows, n;
    fa_status expected;
    const char *needle;
} softmax_bad_case;

static void test_softmax_bad_input(fa_tests *t)
{
    const uint64_t half = UINT64_C(1) << 62; /* 2^63 bytes apart: past the largest x */
    const softmax_bad_case cases[] = {
        {"rows < 0", BUFFER, OTHER, NULL, -2, 4, FA_ERR_INVALID_SIZE, "rows = -2"},
        {"n < 0", BUFFER, OTHER, NULL, 2, -1, FA_ERR_INVALID_SIZE, "n = -1"},
        {"rows above the grid", BUFFER, OTHER, NULL, FA_MAX_GRID_X + 1, 1, FA_ERR_UNSUPPORTED,
         "rows = 2147483648"},
        {"rows * n overflows", BUFFER, OTHER, NULL, 1 << 30, INT64_MAX / 4, FA_ERR_OVERFLOW,
         "rows * n"},
        {"x NULL", NULL, OTHER, NULL, 2, 4, FA_ERR_NULL_POINTER, "x = NULL"},
        {"p NULL", BUFFER, NULL, NULL, 2, 4, FA_ERR_NULL_POINTER, "p = NULL"},
        {"x misaligned", MISALIGNED, BUFFER, NULL, 2, 4, FA_ERR_MISALIGNED, "x = "},
        {"p misaligned", BUFFER, MISALIGNED, NULL, 2, 4, FA_ERR_MISALIGNED, "p = "},
        {"lse misaligned", BUFFER, OTHER, MISALIGNED + 64, 2, 4, FA_ERR_MISALIGNED, "lse"},
        {"p overlaps x", BUFFER, BUFFER + 5, NULL, 2, 4, FA_ERR_INVALID_ARGUMENT, "overlaps x"},
        {"lse overlaps x", BUFFER, OTHER, BUFFER + 7, 2, 4, FA_ERR_INVALID_ARGUMENT, "overlaps x"},
        {"lse overlaps p", BUFFER, OTHER, OTHER + 7, 2, 4, FA_ERR_INVALID_ARGUMENT, "overlaps p"},
        {"no rows: NULL is fine", NULL, NULL, NULL, 0, 4, FA_OK, ""},
        {"empty rows with lse: x, p NULL", NULL, NULL, OTHER, 3, 0, FA_OK, ""},
        /* The edges: the largest grid and float count accepted, the smallest refused. */
        {"rows filling the grid", fake_array(0), fake_array(UINT64_C(1) << 34), NULL,
         FA_MAX_GRID_X, 1, FA_OK, ""},
        {"rows * n at the largest float count", fake_array(0), fake_array(2 * half), NULL, 1,
         MAX_FLOATS, FA_OK, ""},
        {"rows * n one float beyond", fake_array(0), fake_array(2 * half), NULL, 1, MAX_FLOATS + 1,
         FA_ERR_OVERFLOW, "rows * n"},
    };
    for (int c = 0; c < FA_COUNT_OF(cases); ++c) {
        const softmax_bad_case *k = &cases[c];
        fa_clear_error();
        FA_EXPECT_STATUS(t, softmax_rows_online_validate(k->x, k->p, k->lse, k->rows, k->n),
                         k->expected, k->needle, "softmax_rows_online_validate, %s", k->what);
#if FA_HAVE_CUDA
        if (k->expected == FA_OK)
            continue; /* an allowed call would launch: the GPU tests run those */
        fa_clear_error();
        FA_EXPECT_STATUS(t,
                         ref_softmax_rows_online(k->x, (float *)k->p, (float *)k->lse, k->rows,
                                                 k->n, 0),
                         k->expected, k->needle, "ref_softmax_rows_online, %s", k->what);
        fa_clear_error();
        FA_EXPECT_LEARNER_STATUS(t,
                                 learner_softmax_rows_online(k->x, (float *)k->p, (float *)k->lse,
                                                             k->rows, k->n, 0),
                                 k->expected, k->needle, "learner_softmax_rows_online, %s",
                                 k->what);
#endif
    }
}

/** A valid small problem over the host buffers, edited into one bad field per case. */
static attn_online_args valid_args(void)
{
    const attn_online_args a = {.q = BUFFER,
                                .k = BUFFER + 64,
                                .v = BUFFER + 128,
                                .o = OTHER,
                                .lse = OTHER + 128,
                                .batch = 1,
                                .heads_q = 2,
                                .heads_kv = 1,
                                .nq = 4,
                                .nk = 4,
                                .head_dim = 8,
                                .scale = 0.25f,
                                .mask = FA_MASK_NONE,
                                .chunk = 4};
    return a;
}

/**
 * One head of one query and one key, every tensor described by address only,
 * ready to be stretched to an edge: q at 0, o at 4 KiB, lse at 8 KiB, k = v
 * (inputs may share memory) at 1 MiB.
 */
static attn_online_args edge_args(void)
{
    const attn_online_args a = {.q = fake_array(0),
                                .k = fake_array(UINT64_C(1) << 20),
                                .v = fake_array(UINT64_C(1) << 20),
                                .o = fake_array(4096),
                                .lse = fake_array(8192),
                                .batch = 1,
                                .heads_q = 1,
                                .heads_kv = 1,
                                .nq = 1,
                                .nk = 1,
                                .head_dim = 1,
                                .scale = 1.0f,
                                .mask = FA_MASK_NONE,
                                .chunk = 1};
    return a;
}

static void expect_attention_status(fa_tests *t, const char *what, const attn_online_args *a,
                                    fa_status expected, const char *needle)
{
    fa_clear_error();
    FA_EXPECT_STATUS(t, attn_rows_online_validate(a), expected, needle,
                     "attn_rows_online_validate, %s", what);
#if FA_HAVE_CUDA
    if (expected == FA_OK)
        return;
    fa_clear_error();
    FA_EXPECT_STATUS(t, ref_attn_rows_online(a, 0), expected, needle, "ref_attn_rows_online, %s",
                     what);
    fa_clear_error();
    FA_EXPECT_LEARNER_STATUS(t, learner_attn_rows_online(a, 0), expected, needle,
                             "learner_attn_rows_online, %s", what);
#endif
}

static void test_attention_bad_input(fa_tests *t)
{
    expect_attention_status(t, "args NULL", NULL, FA_ERR_NULL_POINTER, "args = NULL");
    attn_online_args a = valid_args();
    expect_attention_status(t, "valid", &a, FA_OK, "");
    a.batch = -1;
    expect_attention_status(t, "batch < 0", &a, FA_ERR_INVALID_SIZE, "batch = -1");
    a = valid_args();
    a.nk = -5;
    expect_attention_status(t, "nk < 0", &a, FA_ERR_INVALID_SIZE, "nk = -5");
    a = valid_args();
    a.heads_kv = 0;
    expect_attention_status(t, "heads_kv = 0", &a, FA_ERR_INVALID_SIZE, "heads_kv = 0");
    a = valid_args();
    a.heads_q = 3;
    a.heads_kv = 2;
    expect_attention_status(t, "heads_q not a multiple", &a, FA_ERR_INVALID_SIZE, "heads_q = 3");
    a = valid_args();
    a.head_dim = 0;
    expect_attention_status(t, "head_dim = 0", &a, FA_ERR_UNSUPPORTED, "head_dim = 0");
    a.head_dim = 257;
    expect_attention_status(t, "head_dim = 257", &a, FA_ERR_UNSUPPORTED, "1 .. 256");
    a = valid_args();
    a.chunk = 0;
    expect_attention_status(t, "chunk = 0", &a, FA_ERR_INVALID_SIZE, "chunk = 0");
    a.chunk = 65;
    expect_attention_status(t, "chunk = 65", &a, FA_ERR_UNSUPPORTED, "1 .. 64");
    a = valid_args();
    a.scale = NAN;
    expect_attention_status(t, "scale NaN", &a, FA_ERR_INVALID_ARGUMENT, "scale");
    a.scale = INFINITY;
    expect_attention_status(t, "scale +inf", &a, FA_ERR_INVALID_ARGUMENT, "scale = inf");
    a.scale = -INFINITY;
    expect_attention_status(t, "scale -inf", &a, FA_ERR_INVALID_ARGUMENT, "scale = -inf");
    a = valid_args();
    a.mask = (fa_mask)7;
    expect_attention_status(t, "mask 7", &a, FA_ERR_INVALID_ARGUMENT, "mask = 7");
    a = valid_args();
    a.q = NULL;
    expect_attention_status(t, "q NULL", &a, FA_ERR_NULL_POINTER, "q = NULL");
    a = valid_args();
    a.k = NULL;
    expect_attention_status(t, "k NULL", &a, FA_ERR_NULL_POINTER, "k = NULL");
    a = valid_args();
    a.v = NULL;
    expect_attention_status(t, "v NULL", &a, FA_ERR_NULL_POINTER, "v = NULL");
    a = valid_args();
    a.o = NULL;
    expect_attention_status(t, "o NULL", &a, FA_ERR_NULL_POINTER, "o = NULL");
    a = valid_args();
    a.v = MISALIGNED;
    expect_attention_status(t, "v misaligned", &a, FA_ERR_MISALIGNED, "v = ");
    a = valid_args();
    a.o = BUFFER + 70;
    expect_attention_status(t, "o overlaps k", &a, FA_ERR_INVALID_ARGUMENT, "overlaps k");
    a.o = BUFFER + 10;
    expect_attention_status(t, "o overlaps q", &a, FA_ERR_INVALID_ARGUMENT, "overlaps q");
    a.o = BUFFER + 140;
    expect_attention_status(t, "o overlaps v", &a, FA_ERR_INVALID_ARGUMENT, "overlaps v");
    a = valid_args();
    a.lse = OTHER + 3;
    expect_attention_status(t, "lse overlaps o", &a, FA_ERR_INVALID_ARGUMENT, "overlaps o");
    a.lse = BUFFER + 2;
    expect_attention_status(t, "lse overlaps q", &a, FA_ERR_INVALID_ARGUMENT, "overlaps q");
    a.lse = BUFFER + 66;
    expect_attention_status(t, "lse overlaps k", &a, FA_ERR_INVALID_ARGUMENT, "overlaps k");
    a.lse = BUFFER + 130;
    expect_attention_status(t, "lse overlaps v", &a, FA_ERR_INVALID_ARGUMENT, "overlaps v");
    a = valid_args();
    a.nq = INT64_MAX / 4;
    expect_attention_status(t, "q overflows", &a, FA_ERR_OVERFLOW, "batch * heads_q * nq");
    a = valid_args();
    a.heads_q = 1;
    a.nq = FA_MAX_GRID_X * ATTN_ONLINE_WARPS + 1; /* one block more than the grid holds */
    a.head_dim = 1;
    expect_attention_status(t, "grid one block too large", &a, FA_ERR_OVERFLOW, "blocks");
    a = valid_args();
    a.nq = 0;
    a.q = a.k = a.v = NULL;
    a.o = a.lse = NULL;
    expect_attention_status(t, "no rows: NULL is fine", &a, FA_OK, "");
#if FA_HAVE_CUDA
    FA_EXPECT_STATUS(t, ref_attn_rows_online(&a, 0), FA_OK, "",
                     "ref_attn_rows_online, no rows: returns before the GPU");
#endif

    /* The overflow checks at their edges: the largest problem each accepts, the
     * smallest it refuses. */
    a = edge_args();
    a.nq = FA_MAX_GRID_X * ATTN_ONLINE_WARPS; /* q and o: 2^36 bytes each */
    a.o = fake_array(UINT64_C(1) << 37);
    a.lse = fake_array(UINT64_C(1) << 38);
    expect_attention_status(t, "rows filling the grid", &a, FA_OK, "");
    a = edge_args();
    a.nk = MAX_FLOATS; /* k and v: 2^63 - 4 bytes */
    expect_attention_status(t, "k, v at the largest float count", &a, FA_OK, "");
    a.nk = MAX_FLOATS + 1;
    expect_attention_status(t, "k, v one float beyond", &a, FA_ERR_OVERFLOW,
                            "batch * heads_kv * nk * head_dim");
    a = edge_args();
    a.nq = MAX_FLOATS; /* q's count passes; the grid is what refuses it */
    expect_attention_status(t, "q at the largest float count", &a, FA_ERR_OVERFLOW, "blocks");
    a.nq = MAX_FLOATS + 1;
    expect_attention_status(t, "q one float beyond", &a, FA_ERR_OVERFLOW,
                            "batch * heads_q * nq * head_dim");
}

/**
 * Every bad command line gets the usage exit code, 2, before any GPU work,
 * and the problem flags describe exactly the problem given: the parser is
 * plain C, so this holds in builds without CUDA too.
 */
static void test_driver_flags(fa_tests *t)
{
    enum { MOST_ARGS = 8 };
    static const char *const bad[][MOST_ARGS] = {
        {"stage04", "--milestone", "12"},                  /* a milestone of stage 03 */
        {"stage04", "--milestone", "17"},                  /* a milestone of stage 05 */
        {"stage04", "--milestone", "99"},                  /* no such milestone */
        {"stage04", "--version", "1"},                     /* --version needs --milestone */
        {"stage04", "--milestone", "13", "--version", "1"}, /* M13 has one version */
        {"stage04", "--chunk", "0"},                       /* chunks are >= 1 */
        {"stage04", "--rows", "-1"},                       /* sizes are >= 0 */
        {"stage04", "--n", "many"},
        {"stage04", "--d", "0"},                           /* head dimensions are >= 1 */
        {"stage04", "--cols", "5"},                        /* no stage-04 milestone reads it */
        {"stage04", "--dtype", "bf16"},                    /* stage 04 is fp32 only */
        {"stage04", "--milestone", "13", "--nq", "5"},     /* M13 reads --rows --n --chunk */
        {"stage04", "--milestone", "15", "--d", "64"},
        {"stage04", "--mask", "diagonal"},                 /* not a mask */
        {"stage04", "--n", "7", "--case", "max trace random 0 n=1 chunk=1"}, /* a case or a problem */
        {"stage04", "--bench", "--n", "7"},                /* the benchmark takes no problem */
        {"stage04", "--impl", "both", "--no-such-flag"},
    };
    for (int c = 0; c < FA_COUNT_OF(bad); ++c)
        FA_EXPECT_USAGE_ERROR(t, 4, bad[c]);

    fa_stage_request request;
    char *help[] = {"stage04", "--help", NULL};
    FA_EXPECT(t, fa_stage_parse(2, help, 4, &request) == FA_CLI_HELP,
              "stage04 --help must print the usage and exit 0");
    char *trace[] = {"stage04", "--rows", "3", "--n", "5", "--chunk", "2", NULL};
    FA_EXPECT(t, fa_stage_parse(7, trace, 4, &request) == FA_CLI_OK &&
                     request.run.problem.given ==
                         (FA_PROBLEM_ROWS | FA_PROBLEM_N | FA_PROBLEM_CHUNK) &&
                     request.run.problem.rows == 3 && request.run.problem.n == 5 &&
                     request.run.problem.chunk == 2,
              "--rows 3 --n 5 --chunk 2 must describe 3 rows of 5 in chunks of 2");
    char *attention[] = {"stage04", "--milestone", "16", "--heads", "4", "--heads-kv", "2",
                         "--nq", "33", "--nk", "70", "--d", "48", "--mask", "causal",
                         "--chunk", "8", NULL};
    FA_EXPECT(t, fa_stage_parse(17, attention, 4, &request) == FA_CLI_OK &&
                     request.milestone == 16 && request.run.problem.heads == 4 &&
                     request.run.problem.heads_kv == 2 && request.run.problem.nq == 33 &&
                     request.run.problem.nk == 70 && request.run.problem.d == 48 &&
                     request.run.problem.mask == FA_MASK_CAUSAL_TOP_LEFT &&
                     request.run.problem.chunk == 8,
              "M16 must read the attention flags with --chunk");
    char *both[] = {"stage04", "--milestone", "16", "--rows", "3", "--nq", "5", NULL};
    FA_EXPECT(t, fa_stage_parse(7, both, 4, &request) == FA_CLI_OK,
              "M16 reads the trace flags and the attention flags together");
    char *rerun[] = {"stage04", "--impl", "learner", "--milestone", "14", "--case",
                     "correction trace random 7 n=3 chunk=3", "--seed", "5", NULL};
    FA_EXPECT(t, fa_stage_parse(9, rerun, 4, &request) == FA_CLI_OK &&
                     request.impl == FA_STAGE_IMPL_LEARNER && request.milestone == 14 &&
                     request.run.case_name != NULL &&
                     strcmp(request.run.case_name, "correction trace random 7 n=3 chunk=3") == 0 &&
                     request.run.seed == 5,
              "a rerun line must parse back into its case and seed");
}

#if FA_HAVE_CUDA
/* ---- GPU ------------------------------------------------------------------------------------ */

static void test_reference_checks(fa_tests *t)
{
    const fa_run_options options = {.seed = SEED, .quick = false};
    FA_EXPECT_REFERENCE_CHECKS(t, &stage04, &options);
}

/** A check that passed with exactly @p cases cases. */
static void expect_cases(fa_tests *t, const char *what, const fa_result *result, int cases)
{
    FA_EXPECT(t, result->outcome == FA_OUTCOME_PASSED && result->cases == cases,
              "%s: %s, %d cases (expected passed, %d): %s", what, fa_outcome_name(result->outcome),
              result->cases, cases, result->detail);
}

/**
 * --case reruns exactly the named case, and the problem flags make cases of
 * their own: one trace case for --rows --n --chunk (M15 adds its softmax
 * case), one attention case for the attention flags of M16; a problem the
 * launcher refuses reports the launcher's error. What a learner reproducing a
 * failure relies on.
 */
static void test_case_selection(fa_tests *t)
{
    fa_run_options options = {.seed = SEED, .case_name = "correction trace random 7 n=3 chunk=3"};
    fa_result result = fa_stage_check(&stage04, 14, FA_IMPL_REFERENCE, &options);
    expect_cases(t, "--case 'correction trace random 7 n=3 chunk=3'", &result, 1);
    options.case_name = "max trace fixture \"a NaN entry\"";
    result = fa_stage_check(&stage04, 13, FA_IMPL_REFERENCE, &options);
    expect_cases(t, "--case of the NaN fixture", &result, 1);
    options.case_name = "attn_rows_online fixture \"uniform scores\"";
    result = fa_stage_check(&stage04, 16, FA_IMPL_REFERENCE, &options);
    expect_cases(t, "--case of an attention fixture", &result, 1);
    options.case_name = "no such case";
    result = fa_stage_check(&stage04, 13, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, result.cases == 0, "an unknown --case must run nothing (%d cases)", result.cases);

    options.case_name = NULL;
    options.problem = (fa_problem){.given = FA_PROBLEM_ROWS | FA_PROBLEM_N | FA_PROBLEM_CHUNK,
                                   .rows = 5, .n = 77, .chunk = 4};
    result = fa_stage_check(&stage04, 13, FA_IMPL_REFERENCE, &options);
    expect_cases(t, "M13 --rows 5 --n 77 --chunk 4", &result, 1);
    result = fa_stage_check(&stage04, 15, FA_IMPL_REFERENCE, &options);
    expect_cases(t, "M15 --rows 5 --n 77 --chunk 4 (a sum trace and a softmax case)", &result, 2);
    result = fa_stage_check(&stage04, 16, FA_IMPL_REFERENCE, &options);
    expect_cases(t, "M16 --rows 5 --n 77 --chunk 4 (an output trace case)", &result, 1);

    options.problem = (fa_problem){.given = FA_PROBLEM_NQ | FA_PROBLEM_NK | FA_PROBLEM_D |
                                            FA_PROBLEM_MASK | FA_PROBLEM_CHUNK,
                                   .nq = 37, .nk = 91, .d = 40, .chunk = 16,
                                   .mask = FA_MASK_CAUSAL_BOTTOM_RIGHT};
    result = fa_stage_check(&stage04, 16, FA_IMPL_REFERENCE, &options);
    expect_cases(t, "M16 --nq 37 --nk 91 --d 40 --mask causal-bottom-right --chunk 16", &result, 1);
    options.problem.given |= FA_PROBLEM_ROWS;
    options.problem.rows = 3;
    result = fa_stage_check(&stage04, 16, FA_IMPL_REFERENCE, &options);
    expect_cases(t, "M16 with trace and attention flags (one case of each)", &result, 2);

    options.problem = (fa_problem){.given = FA_PROBLEM_HEADS | FA_PROBLEM_HEADS_KV,
                                   .heads = 3, .heads_kv = 2};
    result = fa_stage_check(&stage04, 16, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, result.outcome == FA_OUTCOME_ERROR && strstr(result.detail, "heads_q = 3") != NULL,
              "--heads 3 --heads-kv 2 must report the launcher's refusal: %s: %s",
              fa_outcome_name(result.outcome), result.detail);
    options.problem = (fa_problem){.given = FA_PROBLEM_NQ | FA_PROBLEM_CHUNK, .nq = 9, .chunk = 65};
    result = fa_stage_check(&stage04, 16, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, result.outcome == FA_OUTCOME_ERROR && strstr(result.detail, "chunk = 65") != NULL,
              "attention with --chunk 65 must report the launcher's refusal: %s: %s",
              fa_outcome_name(result.outcome), result.detail);
}

/** True when the status is FA_OK; records a failure naming @p what otherwise. */
static bool ran(fa_tests *t, const char *what, fa_status status, int64_t overwritten)
{
    return FA_EXPECT(t, status == FA_OK, "%s: %s: %s", what, fa_status_name(status),
                     fa_last_error()) &&
           FA_EXPECT(t, overwritten == 0, "%s: %lld canaries overwritten", what,
                     (long long)overwritten);
}

/** The GPU's running max equals the model's bit for bit; its alphas are within two exp budgets. */
static void test_traces_match_model(fa_tests *t)
{
    static const int64_t chunks[] = {1, 16};
    const int64_t n = 2000, rows = ONLINE_ROW_PATTERN_COUNT;
    float *x = fa_new_floats(rows * n);
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 20);
    for (int k = 0; k < FA_COUNT_OF(chunks); ++k) {
        fill_pattern_rows(x, rows, n, chunks[k], 3.0, &rng);
        const int64_t T = online_chunk_count(n, chunks[k]);
        float *gpu_max = fa_new_floats(rows * T), *gpu_alpha = fa_new_floats(rows * T);
        float *model_max = fa_new_floats(rows * T), *model_alpha = fa_new_floats(rows * T);
        int64_t overwritten = 0;
        if (!ran(t, "max trace",
                 online_run_trace(FA_IMPL_REFERENCE, ONLINE_TRACE_MAX, x, NULL, rows, n, chunks[k],
                                  gpu_max, &overwritten),
                 overwritten) ||
            !ran(t, "correction trace",
                 online_run_trace(FA_IMPL_REFERENCE, ONLINE_TRACE_CORRECTION, x, NULL, rows, n,
                                  chunks[k], gpu_alpha, &overwritten),
                 overwritten))
            break;
        int64_t alpha_outside = 0;
        for (int64_t r = 0; r < rows; ++r) {
            online_model_trace_row(x + r * n, NULL, n, chunks[k], ONLINE_NO_MISTAKE,
                                   model_max + r * T, model_alpha + r * T, NULL, NULL);
            for (int64_t c = 0; c < T; ++c) {
                /* Both exponentiate the same fp32 argument: each is within its
                 * budget of exp of it, so of each other within two. */
                const float old_max = c > 0 ? model_max[r * T + c - 1] : -INFINITY;
                const float argument = old_max - fa_max_offset(model_max[r * T + c]);
                const double exact = exp((double)argument);
                const double budget =
                    2.0 * FA_BOUND_EXP_BUDGET * exact + FA_BOUND_MIN_NORMAL32;
                alpha_outside +=
                    !(fabs((double)gpu_alpha[r * T + c] - model_alpha[r * T + c]) <= budget);
            }
        }
        FA_EXPECT(t, fa_first_difference(gpu_max, model_max, rows * T) < 0,
                  "chunk %lld: GPU running max differs from the model at %lld",
                  (long long)chunks[k],
                  (long long)fa_first_difference(gpu_max, model_max, rows * T));
        FA_EXPECT(t, alpha_outside == 0,
                  "chunk %lld: %lld correction factors beyond two exp budgets",
                  (long long)chunks[k], (long long)alpha_outside);
        free(gpu_max);
        free(gpu_alpha);
        free(model_max);
        free(model_alpha);
    }
    free(x);
}

/** Count of poison values among n floats. */
static int64_t poisoned(const float *x, int64_t n)
{
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i)
        count += fa_is_poison(x[i]);
    return count;
}

/** Every output element written, nothing past the end: each launcher on a ragged case. */
static void test_outputs_written_exactly(fa_tests *t)
{
    const int64_t rows = 5, n = 1037, chunk = 7, T = online_chunk_count(n, chunk);
    float *x = fa_new_floats(rows * n), *v = fa_new_floats(rows * n);
    float *out = fa_new_floats(rows * n);
    float lse[5];
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 21);
    fill_pattern_rows(x, rows, n, chunk, 1.0, &rng);
    fill_normal(v, rows * n, 1.0, &rng);
    static const online_trace_op ops[] = {ONLINE_TRACE_MAX, ONLINE_TRACE_CORRECTION,
                                          ONLINE_TRACE_SUM, ONLINE_TRACE_OUTPUT};
    for (int o = 0; o < FA_COUNT_OF(ops); ++o) {
        int64_t overwritten = 0;
        if (ran(t, "trace",
                online_run_trace(FA_IMPL_REFERENCE, ops[o], x, v, rows, n, chunk, out,
                                 &overwritten),
                overwritten))
            FA_EXPECT(t, poisoned(out, rows * T) == 0, "trace %d: %lld elements not written", o,
                      (long long)poisoned(out, rows * T));
    }
    int64_t overwritten = 0;
    if (ran(t, "softmax", online_run_softmax(FA_IMPL_REFERENCE, x, rows, n, out, lse, &overwritten),
            overwritten))
        FA_EXPECT(t, poisoned(out, rows * n) + poisoned(lse, rows) == 0,
                  "softmax: elements not written");

    attn_problem_host h =
        attn_problem_new(2, 2, 1, 13, 45, 70, FA_MASK_CAUSAL_BOTTOM_RIGHT, 9, 1.0, &rng);
    if (ran(t, "attention", online_run_attention(FA_IMPL_REFERENCE, &h.args, &overwritten),
            overwritten))
        FA_EXPECT(t, poisoned(h.o, 2 * 2 * 13 * 70) + poisoned(h.lse, 2 * 2 * 13) == 0,
                  "attention: elements not written");
    attn_problem_free(&h);
    free(x);
    free(v);
    free(out);
}

/** A NaN entry makes exactly its row NaN; the other rows stay bit for bit. */
static void test_nan_propagation(fa_tests *t)
{
    const int64_t rows = 4, n = 777, chunk = 16, T = online_chunk_count(n, chunk);
    const int64_t nan_row = 2, nan_at = 100;
    float *x = fa_new_floats(rows * n), *clean_p = fa_new_floats(rows * n);
    float *p = fa_new_floats(rows * n);
    float clean_lse[4], lse[4];
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 22);
    fill_normal(x, rows * n, 2.0, &rng);
    int64_t overwritten = 0;
    bool ok =
        ran(t, "softmax",
            online_run_softmax(FA_IMPL_REFERENCE, x, rows, n, clean_p, clean_lse, &overwritten),
            overwritten);
    x[nan_row * n + nan_at] = NAN;
    ok = ok &&
         ran(t, "softmax", online_run_softmax(FA_IMPL_REFERENCE, x, rows, n, p, lse, &overwritten),
             overwritten);
    if (ok) {
        bool rows_ok = true;
        for (int64_t r = 0; r < rows; ++r) {
            for (int64_t j = 0; j < n; ++j)
                rows_ok = rows_ok &&
                          (r == nan_row ? isnan(p[r * n + j])
                                        : fa_same_float(p[r * n + j], clean_p[r * n + j]));
            rows_ok = rows_ok &&
                      (r == nan_row ? isnan(lse[r]) : fa_same_float(lse[r], clean_lse[r]));
        }
        FA_EXPECT(t, rows_ok, "softmax: NaN must fill row %lld and only it", (long long)nan_row);
    }

    /* Traces: the max keeps the NaN (fa_max_nan), and so does l, from its chunk on;
     * the chunks before it and the other rows are untouched. */
    float *clean_sum = fa_new_floats(rows * T), *sum = fa_new_floats(rows * T),
          *max = fa_new_floats(rows * T);
    x[nan_row * n + nan_at] = 0.5f;
    ok = ran(t, "sum trace",
             online_run_trace(FA_IMPL_REFERENCE, ONLINE_TRACE_SUM, x, NULL, rows, n, chunk,
                              clean_sum, &overwritten),
             overwritten);
    x[nan_row * n + nan_at] = NAN;
    ok = ok && ran(t, "sum trace",
                   online_run_trace(FA_IMPL_REFERENCE, ONLINE_TRACE_SUM, x, NULL, rows, n, chunk,
                                    sum, &overwritten),
                   overwritten);
    ok = ok && ran(t, "max trace",
                   online_run_trace(FA_IMPL_REFERENCE, ONLINE_TRACE_MAX, x, NULL, rows, n, chunk,
                                    max, &overwritten),
                   overwritten);
    if (ok) {
        bool traces_ok = true;
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < T; ++c) {
                const bool poisoned_chunk = r == nan_row && c >= nan_at / chunk;
                traces_ok = traces_ok &&
                            (poisoned_chunk
                                 ? isnan(sum[r * T + c])
                                 : fa_same_float(sum[r * T + c], clean_sum[r * T + c])) &&
                            (bool)isnan(max[r * T + c]) == poisoned_chunk;
            }
        FA_EXPECT(t, traces_ok,
                  "traces: NaN must reach the max and l from its chunk on, and nothing else");
    }

    /* Attention, causal: a NaN in key 5 of head 0 reaches the rows that see it. */
    attn_problem_host h =
        attn_problem_new(1, 2, 2, 20, 20, 16, FA_MASK_CAUSAL_TOP_LEFT, 8, 1.0, &rng);
    const int64_t count = 2 * 20 * 16;
    float *clean_o = fa_new_floats(count);
    ok = ran(t, "attention", online_run_attention(FA_IMPL_REFERENCE, &h.args, &overwritten),
             overwritten);
    memcpy(clean_o, h.o, sizeof(float) * (size_t)count);
    h.k[5 * 16 + 3] = NAN;
    ok = ok && ran(t, "attention", online_run_attention(FA_IMPL_REFERENCE, &h.args, &overwritten),
                   overwritten);
    if (ok) {
        bool attn_ok = true;
        for (int64_t head = 0; head < 2; ++head)
            for (int64_t i = 0; i < 20; ++i)
                for (int64_t d = 0; d < 16; ++d) {
                    const int64_t e = (head * 20 + i) * 16 + d;
                    attn_ok = attn_ok && (head == 0 && i >= 5 ? isnan(h.o[e])
                                                              : fa_same_float(h.o[e], clean_o[e]));
                }
        FA_EXPECT(t, attn_ok, "attention: NaN in key 5 must reach rows >= 5 of head 0 only");
    }
    attn_problem_free(&h);
    free(clean_o);
    free(clean_sum);
    free(sum);
    free(max);
    free(x);
    free(clean_p);
    free(p);
}

/**
 * Merge associativity on the kernel: a row of 100 entries runs on 32 threads;
 * the same row followed by 900 masked entries runs on 256 threads, with other
 * chunks and another merge tree. The masked tail must get p = 0 exactly, and
 * the rest must agree within the two bounds.
 */
static void test_gpu_merge_trees(fa_tests *t, fa_rng *rng)
{
    const int64_t n = 100, padded = 1000;
    float x[1000], p_short[100], p_long[1000], lse_short, lse_long;
    double ref_short[100], bound_short[100], ref_long[1000], bound_long[1000];
    double ref_lse[2], lse_bound[2];
    online_fill_row(x, n, 128, ONLINE_ROW_RISING, 3.0, rng);
    for (int64_t j = n; j < padded; ++j)
        x[j] = -INFINITY;
    int64_t overwritten = 0;
    if (!ran(t, "softmax",
             online_run_softmax(FA_IMPL_REFERENCE, x, 1, n, p_short, &lse_short, &overwritten),
             overwritten) ||
        !ran(t, "softmax",
             online_run_softmax(FA_IMPL_REFERENCE, x, 1, padded, p_long, &lse_long, &overwritten),
             overwritten))
        return;
    FA_EXPECT(t,
              online_ref_softmax_rows(x, 1, n, ref_short, bound_short, &ref_lse[0],
                                      &lse_bound[0]) == FA_OK,
              "the softmax reference of %lld entries: %s", (long long)n, fa_last_error());
    FA_EXPECT(t,
              online_ref_softmax_rows(x, 1, padded, ref_long, bound_long, &ref_lse[1],
                                      &lse_bound[1]) == FA_OK,
              "the softmax reference of %lld entries: %s", (long long)padded, fa_last_error());
    int64_t where = -1;
    bool tail_zero = true;
    for (int64_t j = n; j < padded; ++j)
        tail_zero = tail_zero && p_long[j] == 0.0f;
    FA_EXPECT(t, softmax_rows_online_threads(n) != softmax_rows_online_threads(padded),
              "the two rows must run on different thread counts");
    FA_EXPECT(t,
              tail_zero && within_both(p_short, bound_short, p_long, bound_long, n, &where) &&
                  fabs((double)lse_short - lse_long) <= lse_bound[0] + lse_bound[1],
              "GPU softmax: 32 and 256 threads disagree beyond their bounds (entry %lld)",
              (long long)where);
}

/** Chunk-size invariance, shift invariance and merge-order independence on the kernels. */
static void test_gpu_properties(fa_tests *t)
{
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 23);
    int64_t overwritten = 0;

    /* Attention with chunks 1, 7, 32, 64: each within its bound, so within the sum of two. */
    static const int64_t chunks[] = {1, 7, 32, 64};
    attn_problem_host h =
        attn_problem_new(1, 2, 1, 33, 300, 64, FA_MASK_CAUSAL_TOP_LEFT, 1, 3.0, &rng);
    const int64_t count = 2 * 33 * 64;
    float *first = fa_new_floats(count);
    double *first_bound = fa_new_doubles(count);
    const fa_attn_problem problem = online_attn_problem(&h.args);
    for (int k = 0; k < FA_COUNT_OF(chunks); ++k) {
        h.args.chunk = chunks[k];
        if (!ran(t, "attention", online_run_attention(FA_IMPL_REFERENCE, &h.args, &overwritten),
                 overwritten))
            break;
        const fa_attn_method method = online_attn_method(chunks[k]);
        fa_attn_reference ref;
        if (!FA_EXPECT(t, fa_attention_reference(&problem, &method, &ref) == FA_OK, "reference: %s",
                       fa_last_error()))
            break;
        if (k == 0) {
            memcpy(first, h.o, sizeof(float) * (size_t)count);
            memcpy(first_bound, ref.o_bound, sizeof(double) * (size_t)count);
        } else {
            int64_t where = -1;
            FA_EXPECT(t, within_both(first, first_bound, h.o, ref.o_bound, count, &where),
                      "GPU attention: chunks 1 and %lld differ beyond their bounds at %lld",
                      (long long)chunks[k], (long long)where);
        }
        fa_attn_reference_free(&ref);
    }
    free(first);
    free(first_bound);
    attn_problem_free(&h);

    /* Softmax of a dyadic row and of the row + 1024: p bit for bit. */
    const int64_t n = 5000;
    float *x = fa_new_floats(2 * n), *p = fa_new_floats(2 * n), lse[2];
    online_fill_row(x, n, 1024, ONLINE_ROW_DYADIC, 1.0, &rng);
    for (int64_t j = 0; j < n; ++j)
        x[n + j] = x[j] + ONLINE_EXACT_SHIFT;
    if (ran(t, "softmax", online_run_softmax(FA_IMPL_REFERENCE, x, 2, n, p, lse, &overwritten),
            overwritten))
        FA_EXPECT(t, fa_first_difference(p, p + n, n) < 0,
                  "GPU softmax: shifting by %g changed p at %lld", (double)ONLINE_EXACT_SHIFT,
                  (long long)fa_first_difference(p, p + n, n));

    /* The row reversed: other threads, other merge tree; p reversed within both bounds. */
    online_fill_row(x, n, 1024, ONLINE_ROW_LATE_MAX, 3.0, &rng);
    for (int64_t j = 0; j < n; ++j)
        x[n + j] = x[n - 1 - j];
    double *ref = fa_new_doubles(2 * n), *bound = fa_new_doubles(2 * n), ref_lse[2], lse_bound[2];
    if (ran(t, "softmax", online_run_softmax(FA_IMPL_REFERENCE, x, 2, n, p, lse, &overwritten),
            overwritten)) {
        FA_EXPECT(t, online_ref_softmax_rows(x, 2, n, ref, bound, ref_lse, lse_bound) == FA_OK,
                  "the softmax reference of the row and its reverse: %s", fa_last_error());
        int64_t bad = -1;
        for (int64_t j = 0; j < n && bad < 0; ++j)
            if (!(fabs((double)p[j] - p[2 * n - 1 - j]) <= bound[j] + bound[2 * n - 1 - j]))
                bad = j;
        FA_EXPECT(t, bad < 0 && fabs((double)lse[0] - lse[1]) <= lse_bound[0] + lse_bound[1],
                  "GPU softmax: reversing the row changed p beyond the bounds (entry %lld)",
                  (long long)bad);
    }
    free(ref);
    free(bound);
    free(x);
    free(p);
    test_gpu_merge_trees(t, &rng);
}

/** The checker must reject an element moved outside its bound, and report an unwritten one. */
static void test_checker_catches_errors(fa_tests *t)
{
    const int64_t n = 1000;
    float *x = fa_new_floats(n), *p = fa_new_floats(n), lse;
    double *ref = fa_new_doubles(n), *bound = fa_new_doubles(n), ref_lse, lse_bound;
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 24);
    online_fill_row(x, n, 1024, ONLINE_ROW_GAUSSIAN, 3.0, &rng);
    int64_t overwritten = 0;
    if (ran(t, "softmax", online_run_softmax(FA_IMPL_REFERENCE, x, 1, n, p, &lse, &overwritten),
            overwritten)) {
        FA_EXPECT(t, online_ref_softmax_rows(x, 1, n, ref, bound, &ref_lse, &lse_bound) == FA_OK,
                  "the softmax reference: %s", fa_last_error());
        fa_check_report report;
        FA_EXPECT(t, fa_check_covers(p, ref, bound, n, &report), "GPU softmax not covered");
        p[123] = (float)(ref[123] + 10.0 * bound[123] + 1e-30);
        FA_EXPECT(t, !fa_check_covers(p, ref, bound, n, &report) && report.first[0].index == 123,
                  "a p moved by 10 bounds must be reported at 123");
        fa_poison_host(&p[7], sizeof(float));
        FA_EXPECT(t, !fa_check_covers(p, ref, bound, n, &report) && report.unwritten == 1,
                  "a poisoned p must be reported unwritten");
    }
    free(x);
    free(p);
    free(ref);
    free(bound);
}

#endif /* FA_HAVE_CUDA */

int main(int argc, char **argv)
{
    static const fa_test_fn cpu[] = {
        test_fixtures_against_model,
        test_fixture_arithmetic,
        test_attention_fixtures_against_model,
        test_invariant,
        test_model_traces_within_bound,
        test_model_softmax_within_bound,
        test_model_attention_within_bound,
        test_chunk_invariance_traces,
        test_geometry_invariance_softmax,
        test_chunk_invariance_attention,
        test_merge_properties,
        test_shift_invariance,
        test_maxima_first_and_last,
        test_extreme_scores,
        test_nan_rule,
        test_mistakes_rejected,
        test_trace_bad_input,
        test_softmax_bad_input,
        test_attention_bad_input,
        test_counted_bytes,
        test_driver_flags,
    };
#if FA_HAVE_CUDA
    static const fa_test_fn gpu[] = {
        test_reference_checks, test_case_selection,  test_traces_match_model,
        test_outputs_written_exactly, test_nan_propagation, test_gpu_properties,
        test_checker_catches_errors,
    };
    const fa_test_suite suite = {"test_stage04", cpu, FA_COUNT_OF(cpu), gpu, FA_COUNT_OF(gpu),
                                 fa_gpu_gate};
#else
    const fa_test_suite suite = {"test_stage04", cpu, FA_COUNT_OF(cpu), NULL, 0, NULL};
#endif
    return fa_test_main(argc, argv, &suite);
}
