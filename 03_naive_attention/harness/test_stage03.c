/**
 * @file test_stage03.c
 * @brief Stage 03 tests.
 *
 * `test_stage03 cpu` (no GPU needed): the fixtures' hand values against the
 * double references; the CPU model against the fixtures (bit for bit where
 * exact) and against the references within the bound on random problems;
 * properties (the prefix of allowed keys, shift and permutation invariance,
 * scaling of v, NaN scores, the workspace and traffic counts); mutations the
 * bound must reject; bad input for every launcher and validation function,
 * overlaps of key_length with the outputs and the size checks at their
 * boundary included; and every driver flag of the stage (fa_stage_parse()).
 *
 * `test_stage03 gpu` (exit 77 without a usable GPU): every milestone check
 * on the reference kernels, `--case` and the problem flags, bit-for-bit
 * agreement of the scores and PV kernels with the model, the in-place
 * softmax, detection of unwritten outputs, NaN propagation to exactly the
 * affected rows, and padding keys full of NaN that must not leak.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "fa_attention_ref.h"
#include "fa_bytes.h"
#include "fa_check.h"
#include "fa_cli.h"
#include "fa_half.h"
#include "fa_index.h"
#include "fa_math.h"
#include "fa_rng.h"
#include "fa_stage.h"
#include "fa_status.h"
#include "fa_test.h"
#include "fixtures.h"
#include "model.h"
#include "references.h"

#if FA_HAVE_CUDA
#include "checks.h"
#include "fa_device.h"
#endif

static const fa_dtype DTYPES[] = {FA_F32, FA_BF16, FA_F16};
enum { DTYPE_COUNT = FA_COUNT_OF(DTYPES) };
static const uint64_t SEED = 20240603;

/**
 * Two double computations of the same exact value (a hand-written constant
 * and the double reference) agree to a few double ulps; this relative margin
 * is far below any fp32 bound, so it cannot hide a wrong hand value.
 */
static const double HAND_AGREEMENT = 1e-12;

/** A mutation must miss its bound by at least this factor (\ref numerics). */
static const double MUTATION_MARGIN = 10;

/** True when a and b are the same double to HAND_AGREEMENT (infinities and zeros exactly). */
static bool agree(double a, double b)
{
    if (isinf(a) || isinf(b) || a == 0 || b == 0)
        return a == b;
    return fabs(a - b) <= HAND_AGREEMENT * fa_max_nan_double(fabs(a), fabs(b));
}

/** Index of the first element where @p got and @p want disagree, or -1. */
static int64_t first_disagreement(const double *got, const double *want, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        if (!agree(got[i], want[i]))
            return i;
    return -1;
}

/* ==== problems ============================================================================== */

/** The host inputs of one attention problem. */
typedef struct host_problem {
    naive_attn_dims dims;
    fa_dtype dtype;
    float scale;
    fa_mask mask;
    int64_t *key_length; /**< [batch] or NULL */
    void *q, *k, *v;
} host_problem;

/** q, k ~ normal(0, spread) (scores of about that spread), v ~ normal(0, 1), in @p dtype. */
static host_problem random_problem(naive_attn_dims d, fa_dtype dtype, fa_mask mask, bool padded,
                                   double spread, uint64_t stream)
{
    fa_rng rng;
    fa_rng_seed(&rng, SEED, stream);
    host_problem p = {d, dtype, 0.0f, mask, NULL, NULL, NULL, NULL};
    const int64_t counts[] = {attn_count_q(d), attn_count_kv(d), attn_count_kv(d)};
    const double sigmas[] = {sqrt(spread), sqrt(spread), 1};
    void **tensors[] = {&p.q, &p.k, &p.v};
    for (int i = 0; i < 3; ++i) {
        float *x = fa_new_floats(counts[i]);
        fa_fill(x, counts[i], FA_FILL_GAUSSIAN, sigmas[i], &rng);
        *tensors[i] = fa_as_dtype(x, counts[i], dtype);
        free(x);
    }
    if (padded) {
        p.key_length = fa_must_alloc((size_t)d.batch * sizeof(int64_t));
        const int64_t choices[] = {0, d.nk > 0 ? 1 : 0, d.nk / 2, d.nk};
        for (int64_t b = 0; b < d.batch; ++b)
            p.key_length[b] = choices[fa_rng_int(&rng, 0, 3)];
    }
    return p;
}

static void free_problem(host_problem *p)
{
    free(p->q);
    free(p->k);
    free(p->v);
    free(p->key_length);
    memset(p, 0, sizeof *p);
}

/**
 * Judges @p o and @p lse against the attention reference of @p p under the
 * naive method; *worst receives the larger worst err/bound ratio of the two.
 */
static bool attention_covered(const host_problem *p, const float *o, const float *lse,
                              fa_check_report *o_report, fa_check_report *lse_report)
{
    const fa_attn_problem problem =
        naive_attn_problem(p->q, p->k, p->v, p->dtype, p->dims, p->scale, p->mask, p->key_length);
    const fa_attn_method method = naive_attn_method(p->dtype);
    fa_attn_reference ref = {0};
    if (fa_attention_reference(&problem, &method, &ref) != FA_OK) {
        printf("fa_attention_reference failed: %s\n", fa_last_error());
        return false;
    }
    const bool covered = fa_attention_covers(&ref, o, lse, o_report, lse_report);
    fa_attn_reference_free(&ref);
    return covered;
}

/* ==== fixtures ============================================================================== */

/** The fixtures' inputs are small integers: exact in bf16 and fp16 too. */
static void test_fixture_inputs_exact(fa_tests *t)
{
    for (int f = 0; f < attn_fixture_count; ++f) {
        const attn_fixture *fx = &attn_fixtures[f];
        const float *tensors[] = {fx->q, fx->k, fx->v};
        const int64_t counts[] = {attn_count_q(fx->dims), attn_count_kv(fx->dims),
                                  attn_count_kv(fx->dims)};
        bool exact = true;
        for (int i = 0; i < 3; ++i)
            for (int64_t e = 0; e < counts[i]; ++e)
                for (int d = 0; d < DTYPE_COUNT; ++d)
                    exact = exact && fa_round_to(DTYPES[d], tensors[i][e]) == tensors[i][e];
        FA_EXPECT(t, exact, "fixture '%s': an input is not exact in bf16 or fp16", fx->name);
    }
}

/** Every hand-written value equals the double reference computed from the inputs. */
static void test_fixtures_against_references(fa_tests *t)
{
    for (int f = 0; f < attn_fixture_count; ++f) {
        const attn_fixture *fx = &attn_fixtures[f];
        const naive_attn_dims d = fx->dims;
        double *s = fa_new_doubles(attn_count_s(d)), *s_bound = fa_new_doubles(attn_count_s(d));
        double *p = fa_new_doubles(attn_count_s(d)), *p_bound = fa_new_doubles(attn_count_s(d));
        double *lse = fa_new_doubles(attn_count_rows(d));
        double *lse_bound = fa_new_doubles(attn_count_rows(d));
        float *s_in = fa_new_floats(attn_count_s(d));

        FA_EXPECT(t, attn_scores_reference(fx->q, fx->k, FA_F32, d, fx->scale, s, s_bound) == FA_OK,
                  "fixture '%s': the scores reference: %s", fx->name, fa_last_error());
        int64_t at = first_disagreement(s, fx->s, attn_count_s(d));
        FA_EXPECT(t, at < 0, "fixture '%s': hand score %lld is %.17g, the reference %.17g",
                  fx->name, (long long)at, at < 0 ? 0 : fx->s[at], at < 0 ? 0 : s[at]);

        for (int64_t e = 0; e < attn_count_s(d); ++e)
            s_in[e] = (float)fx->s[e];
        FA_EXPECT(t, softmax_rows_reference(s_in, d, fx->mask, fx->key_length, p, p_bound, lse,
                                            lse_bound) == FA_OK,
                  "fixture '%s': the softmax reference: %s", fx->name, fa_last_error());
        at = first_disagreement(p, fx->p, attn_count_s(d));
        FA_EXPECT(t, at < 0, "fixture '%s': hand p %lld is %.17g, the reference %.17g", fx->name,
                  (long long)at, at < 0 ? 0 : fx->p[at], at < 0 ? 0 : p[at]);
        at = first_disagreement(lse, fx->lse, attn_count_rows(d));
        FA_EXPECT(t, at < 0, "fixture '%s': hand lse %lld is %.17g, the softmax reference %.17g",
                  fx->name, (long long)at, at < 0 ? 0 : fx->lse[at], at < 0 ? 0 : lse[at]);

        const fa_attn_problem problem = naive_attn_problem(fx->q, fx->k, fx->v, FA_F32, d,
                                                           fx->scale, fx->mask, fx->key_length);
        const fa_attn_method method = naive_attn_method(FA_F32);
        fa_attn_reference ref = {0};
        if (FA_EXPECT(t, fa_attention_reference(&problem, &method, &ref) == FA_OK,
                      "fixture '%s': %s", fx->name, fa_last_error())) {
            at = first_disagreement(ref.o, fx->o, attn_count_q(d));
            FA_EXPECT(t, at < 0, "fixture '%s': hand o %lld is %.17g, the reference %.17g",
                      fx->name, (long long)at, at < 0 ? 0 : fx->o[at], at < 0 ? 0 : ref.o[at]);
            at = first_disagreement(ref.lse, fx->lse, attn_count_rows(d));
            FA_EXPECT(t, at < 0, "fixture '%s': hand lse %lld is %.17g, the reference %.17g",
                      fx->name, (long long)at, at < 0 ? 0 : fx->lse[at],
                      at < 0 ? 0 : ref.lse[at]);
        }
        fa_attn_reference_free(&ref);
        free(s), free(s_bound), free(p), free(p_bound), free(lse), free(lse_bound), free(s_in);
    }
}

/**
 * The fp32 model on every fixture: exact fixtures bit for bit; every fixture
 * within the bound of each step and of the whole attention.
 */
static void test_model_on_fixtures(fa_tests *t)
{
    for (int f = 0; f < attn_fixture_count; ++f) {
        const attn_fixture *fx = &attn_fixtures[f];
        const naive_attn_dims d = fx->dims;
        float *s = fa_new_floats(attn_count_s(d)), *p = fa_new_floats(attn_count_s(d));
        float *lse = fa_new_floats(attn_count_rows(d));
        float *o = fa_new_floats(attn_count_q(d)), *p_in = fa_new_floats(attn_count_s(d));
        double *want = fa_new_doubles(attn_count_s(d)), *bound = fa_new_doubles(attn_count_s(d));
        double *want_lse = fa_new_doubles(attn_count_rows(d));
        double *bound_lse = fa_new_doubles(attn_count_rows(d));
        double *want_o = fa_new_doubles(attn_count_q(d));
        double *bound_o = fa_new_doubles(attn_count_q(d));
        fa_check_report r;

        attn_model_scores(fx->q, fx->k, FA_F32, d, fx->scale, s);
        FA_EXPECT(t, attn_scores_reference(fx->q, fx->k, FA_F32, d, fx->scale, want, bound) ==
                         FA_OK,
                  "fixture '%s': the scores reference: %s", fx->name, fa_last_error());
        FA_EXPECT(t, fa_check_covers(s, want, bound, attn_count_s(d), &r),
                  "fixture '%s': model scores outside the bound (worst ratio %g)", fx->name,
                  r.worst_ratio);

        attn_model_softmax(s, p, lse, d, fx->mask, fx->key_length);
        FA_EXPECT(t, softmax_rows_reference(s, d, fx->mask, fx->key_length, want, bound, want_lse,
                                            bound_lse) == FA_OK,
                  "fixture '%s': the softmax reference: %s", fx->name, fa_last_error());
        FA_EXPECT(t, fa_check_covers(p, want, bound, attn_count_s(d), &r),
                  "fixture '%s': model p outside the bound (worst ratio %g)", fx->name,
                  r.worst_ratio);
        FA_EXPECT(t, fa_check_covers(lse, want_lse, bound_lse, attn_count_rows(d), &r),
                  "fixture '%s': model lse outside the bound (worst ratio %g)", fx->name,
                  r.worst_ratio);

        for (int64_t e = 0; e < attn_count_s(d); ++e)
            p_in[e] = (float)fx->p[e];
        attn_model_pv(p_in, fx->v, FA_F32, d, FA_MASK_NONE, NULL, o);
        FA_EXPECT(t, attn_pv_reference(p_in, fx->v, FA_F32, d, want_o, bound_o) == FA_OK, "%s",
                  fa_last_error());
        FA_EXPECT(t, fa_check_covers(o, want_o, bound_o, attn_count_q(d), &r),
                  "fixture '%s': model PV outside the bound (worst ratio %g)", fx->name,
                  r.worst_ratio);

        if (fx->exact) {
            /* Bound NULL: equal to the float of the hand value, bit for bit. */
            FA_EXPECT(t, fa_check_covers(s, fx->s, NULL, attn_count_s(d), &r),
                      "fixture '%s': model scores not exact", fx->name);
            FA_EXPECT(t, fa_check_covers(p, fx->p, NULL, attn_count_s(d), &r),
                      "fixture '%s': model p not exact", fx->name);
            FA_EXPECT(t, fa_check_covers(o, fx->o, NULL, attn_count_q(d), &r),
                      "fixture '%s': model o not exact", fx->name);
        }

        host_problem hp = {d, FA_F32, fx->scale, fx->mask, NULL,
                           fa_as_dtype(fx->q, attn_count_q(d), FA_F32),
                           fa_as_dtype(fx->k, attn_count_kv(d), FA_F32),
                           fa_as_dtype(fx->v, attn_count_kv(d), FA_F32)};
        if (fx->key_length != NULL) {
            hp.key_length = fa_must_alloc((size_t)d.batch * sizeof(int64_t));
            memcpy(hp.key_length, fx->key_length, (size_t)d.batch * sizeof(int64_t));
        }
        FA_EXPECT(t, attn_model_naive(fx->q, fx->k, fx->v, FA_F32, d, fx->scale, fx->mask,
                                      fx->key_length, o, lse) == FA_OK, "%s", fa_last_error());
        fa_check_report ro, rl;
        FA_EXPECT(t, attention_covered(&hp, o, lse, &ro, &rl),
                  "fixture '%s': model attention outside the bound (worst ratios o %g, lse %g)",
                  fx->name, ro.worst_ratio, rl.worst_ratio);
        free(s), free(p), free(lse), free(o), free(p_in), free(want), free(bound);
        free(want_lse), free(bound_lse), free(want_o), free(bound_o);
        free_problem(&hp);
    }
}

/* ==== the model against the references on random problems =================================== */

typedef struct random_case {
    naive_attn_dims dims;
    fa_mask mask;
    bool padded;
    double spread;
} random_case;

static const random_case RANDOM_CASES[] = {
    {{1, 1, 1, 1, 1}, FA_MASK_NONE, false, 1},
    {{2, 3, 17, 33, 16}, FA_MASK_CAUSAL_TOP_LEFT, false, 3},
    {{1, 2, 40, 65, 64}, FA_MASK_CAUSAL_TOP_LEFT, true, 8},
    {{1, 1, 70, 300, 128}, FA_MASK_NONE, true, 0.3},
    {{2, 1, 33, 31, 256}, FA_MASK_CAUSAL_BOTTOM_RIGHT, false, 1},
    {{1, 1, 3, 3000, 32}, FA_MASK_CAUSAL_TOP_LEFT, true, 8},
    {{2, 1, 4, 0, 8}, FA_MASK_CAUSAL_TOP_LEFT, true, 1}, /* no key at all */
};
enum { RANDOM_CASE_COUNT = sizeof RANDOM_CASES / sizeof RANDOM_CASES[0] };

static void test_model_random(fa_tests *t)
{
    for (int i = 0; i < RANDOM_CASE_COUNT; ++i)
        for (int di = 0; di < DTYPE_COUNT; ++di) {
            const random_case *rc = &RANDOM_CASES[i];
            const naive_attn_dims d = rc->dims;
            host_problem hp =
                random_problem(d, DTYPES[di], rc->mask, rc->padded, rc->spread, (uint64_t)i);
            float *s = fa_new_floats(attn_count_s(d)), *p = fa_new_floats(attn_count_s(d));
            float *lse = fa_new_floats(attn_count_rows(d));
            float *o = fa_new_floats(attn_count_q(d));
            double *want = fa_new_doubles(attn_count_s(d));
            double *bound = fa_new_doubles(attn_count_s(d));
            double *want_lse = fa_new_doubles(attn_count_rows(d));
            double *bound_lse = fa_new_doubles(attn_count_rows(d));
            double *want_o = fa_new_doubles(attn_count_q(d));
            double *bound_o = fa_new_doubles(attn_count_q(d));
            fa_check_report r, r2;
            const char *dt = fa_dtype_name(hp.dtype);

            attn_model_scores(hp.q, hp.k, hp.dtype, d, hp.scale, s);
            FA_EXPECT(t, attn_scores_reference(hp.q, hp.k, hp.dtype, d, hp.scale, want, bound) ==
                             FA_OK,
                      "random %d %s: the scores reference: %s", i, dt, fa_last_error());
            FA_EXPECT(t, fa_check_covers(s, want, bound, attn_count_s(d), &r),
                      "random %d %s: scores worst ratio %g", i, dt, r.worst_ratio);

            attn_model_softmax(s, p, lse, d, hp.mask, hp.key_length);
            FA_EXPECT(t, softmax_rows_reference(s, d, hp.mask, hp.key_length, want, bound, want_lse,
                                                bound_lse) == FA_OK,
                      "random %d %s: the softmax reference: %s", i, dt, fa_last_error());
            FA_EXPECT(t, fa_check_covers(p, want, bound, attn_count_s(d), &r),
                      "random %d %s: softmax p worst ratio %g", i, dt, r.worst_ratio);
            FA_EXPECT(t, fa_check_covers(lse, want_lse, bound_lse, attn_count_rows(d), &r),
                      "random %d %s: softmax lse worst ratio %g", i, dt, r.worst_ratio);

            attn_model_pv(p, hp.v, hp.dtype, d, FA_MASK_NONE, NULL, o);
            FA_EXPECT(t, attn_pv_reference(p, hp.v, hp.dtype, d, want_o, bound_o) == FA_OK, "%s",
                      fa_last_error());
            FA_EXPECT(t, fa_check_covers(o, want_o, bound_o, attn_count_q(d), &r),
                      "random %d %s: PV worst ratio %g", i, dt, r.worst_ratio);

            FA_EXPECT(t, attention_covered(&hp, o, lse, &r, &r2),
                      "random %d %s: attention worst ratios o %g, lse %g", i, dt, r.worst_ratio,
                      r2.worst_ratio);
            free(s), free(p), free(lse), free(o), free(want), free(bound), free(want_lse);
            free(bound_lse), free(want_o), free(bound_o);
            free_problem(&hp);
        }
}

/* ==== properties ============================================================================ */

/** The kernels' prefix count equals the number of keys fa_mask_allows and the padding allow. */
static void test_allowed_keys_prefix(fa_tests *t)
{
    const fa_mask masks[] = {FA_MASK_NONE, FA_MASK_CAUSAL_TOP_LEFT, FA_MASK_CAUSAL_BOTTOM_RIGHT};
    int mismatches = 0;
    for (int m = 0; m < 3; ++m)
        for (int64_t nq = 0; nq <= 6; ++nq)
            for (int64_t nk = 0; nk <= 6; ++nk) {
                const int64_t lengths[] = {-1, 0, 2, nk, nk + 3, INT64_MAX};
                for (int l = 0; l < 7; ++l) {
                    const int64_t *length = l < 6 ? &lengths[l] : NULL;
                    for (int64_t i = 0; i < nq; ++i) {
                        int64_t count = 0, prefix = 0;
                        for (int64_t j = 0; j < nk; ++j) {
                            const bool allowed = fa_mask_allows(masks[m], i, j, nq, nk) &&
                                                 (length == NULL || j < *length);
                            count += allowed;
                            if (allowed && prefix == j)
                                ++prefix;
                        }
                        const int64_t got =
                            attn_model_allowed_keys(masks[m], length, 0, i, nq, nk);
                        mismatches += (got != count || count != prefix);
                    }
                }
            }
    FA_EXPECT(t, mismatches == 0,
              "%d rows where the allowed keys are not the prefix of the counted length",
              mismatches);
}

/**
 * Softmax is shift invariant: the model on s + 16 is judged against the
 * reference of s (scores are multiples of 1/64, so s + 16 is exact).
 */
static void test_softmax_shift_invariance(fa_tests *t)
{
    const naive_attn_dims d = {1, 2, 5, 300, 1};
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 100);
    float *s = fa_new_floats(attn_count_s(d)), *shifted = fa_new_floats(attn_count_s(d));
    float *p = fa_new_floats(attn_count_s(d));
    double *want = fa_new_doubles(attn_count_s(d)), *bound = fa_new_doubles(attn_count_s(d));
    double *unused = fa_new_doubles(attn_count_s(d)), *lse = fa_new_doubles(attn_count_rows(d));
    double *lse_bound = fa_new_doubles(attn_count_rows(d));
    for (int64_t e = 0; e < attn_count_s(d); ++e) {
        s[e] = (float)fa_rng_int(&rng, -512, 512) / 64;
        shifted[e] = s[e] + 16;
    }
    FA_EXPECT(t, softmax_rows_reference(s, d, FA_MASK_CAUSAL_BOTTOM_RIGHT, NULL, want, unused, lse,
                                        lse_bound) == FA_OK,
              "the softmax reference of s: %s", fa_last_error());
    /* The bound of the shifted input: its |s_j| and |s_j - m| are the kernel's. */
    FA_EXPECT(t, softmax_rows_reference(shifted, d, FA_MASK_CAUSAL_BOTTOM_RIGHT, NULL, unused,
                                        bound, lse, lse_bound) == FA_OK,
              "the softmax reference of s + 16: %s", fa_last_error());
    attn_model_softmax(shifted, p, NULL, d, FA_MASK_CAUSAL_BOTTOM_RIGHT, NULL);
    fa_check_report r;
    FA_EXPECT(t, fa_check_covers(p, want, bound, attn_count_s(d), &r),
              "softmax(s + 16) differs from softmax(s) beyond the bound (worst ratio %g)",
              r.worst_ratio);
    free(s), free(shifted), free(p), free(want), free(bound), free(unused), free(lse);
    free(lse_bound);
}

/**
 * A score of -inf has weight exactly 0, and a row whose scores are all -inf
 * is empty: p = 0 and lse = -inf, where exp(s - m) / l would be 0 / 0.
 */
static void test_softmax_neg_inf(fa_tests *t)
{
    const naive_attn_dims d = {1, 1, 2, 4, 1};
    const float s[] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, 2, -INFINITY, 2};
    const double want_p[] = {0, 0, 0, 0, 0, 0.5, 0, 0.5};
    float p[8], lse[2];
    double ref_p[8], p_bound[8], ref_lse[2], lse_bound[2];
    attn_model_softmax(s, p, lse, d, FA_MASK_NONE, NULL);
    FA_EXPECT(t, softmax_rows_reference(s, d, FA_MASK_NONE, NULL, ref_p, p_bound, ref_lse,
                                        lse_bound) == FA_OK,
              "-inf scores: the softmax reference: %s", fa_last_error());
    fa_check_report r;
    FA_EXPECT(t, fa_check_covers(p, want_p, NULL, 8, &r),
              "-inf scores: p is not [0 0 0 0 | 0 .5 0 .5]");
    FA_EXPECT(t, first_disagreement(ref_p, want_p, 8) < 0, "-inf scores: the reference p");
    FA_EXPECT(t, lse[0] == -INFINITY && ref_lse[0] == -INFINITY && lse_bound[0] == 0,
              "a row of only -inf: lse %g, reference %g", (double)lse[0], ref_lse[0]);
    FA_EXPECT(t, fa_check_covers(lse + 1, ref_lse + 1, lse_bound + 1, 1, &r) &&
                     agree(ref_lse[1], 2 + 0.6931471805599453),
              "-inf among 2s: lse %g, reference %.17g", (double)lse[1], ref_lse[1]);
}

/**
 * Without a causal mask, permuting the keys and values together changes
 * nothing: the model on the permuted problem is judged against the
 * reference of the original.
 */
static void test_attention_permutation_invariance(fa_tests *t)
{
    const naive_attn_dims d = {1, 1, 9, 37, 24};
    host_problem hp = random_problem(d, FA_BF16, FA_MASK_NONE, false, 3, 101);
    host_problem perm = random_problem(d, FA_BF16, FA_MASK_NONE, false, 3, 101);
    const size_t row_bytes = (size_t)d.head_dim * (size_t)fa_dtype_size(hp.dtype);
    for (int64_t j = 0; j < d.nk; ++j) {
        const int64_t from = (j * 11 + 5) % d.nk; /* 11 is coprime to 37: a permutation */
        memcpy((char *)perm.k + j * row_bytes, (const char *)hp.k + from * row_bytes, row_bytes);
        memcpy((char *)perm.v + j * row_bytes, (const char *)hp.v + from * row_bytes, row_bytes);
    }
    float *o = fa_new_floats(attn_count_q(d)), *lse = fa_new_floats(attn_count_rows(d));
    FA_EXPECT(t, attn_model_naive(perm.q, perm.k, perm.v, perm.dtype, d, 0, FA_MASK_NONE, NULL,
                                  o, lse) == FA_OK, "%s", fa_last_error());
    fa_check_report ro, rl;
    FA_EXPECT(t, attention_covered(&hp, o, lse, &ro, &rl),
              "permuted keys change the output beyond the bound (worst ratios %g, %g)",
              ro.worst_ratio, rl.worst_ratio);
    free(o), free(lse);
    free_problem(&hp);
    free_problem(&perm);
}

/** Doubling v doubles o exactly: a power of two commutes with every rounding. */
static void test_pv_scales_with_v(fa_tests *t)
{
    const naive_attn_dims d = {2, 1, 7, 45, 33};
    host_problem hp = random_problem(d, FA_F32, FA_MASK_NONE, false, 1, 102);
    float *s = fa_new_floats(attn_count_s(d)), *o = fa_new_floats(attn_count_q(d));
    float *o2 = fa_new_floats(attn_count_q(d));
    float *v2 = fa_new_floats(attn_count_kv(d));
    for (int64_t e = 0; e < attn_count_kv(d); ++e)
        v2[e] = 2 * ((const float *)hp.v)[e];
    attn_model_scores(hp.q, hp.k, FA_F32, d, 0, s);
    attn_model_softmax(s, s, NULL, d, FA_MASK_NONE, NULL);
    attn_model_pv(s, hp.v, FA_F32, d, FA_MASK_NONE, NULL, o);
    attn_model_pv(s, v2, FA_F32, d, FA_MASK_NONE, NULL, o2);
    int64_t wrong = 0;
    for (int64_t e = 0; e < attn_count_q(d); ++e)
        wrong += o2[e] != 2 * o[e];
    FA_EXPECT(t, wrong == 0, "%lld elements of o(2v) differ from 2 o(v)", (long long)wrong);
    free(s), free(o), free(o2), free(v2);
    free_problem(&hp);
}

/*
 * NaN in v (the rule of fa_attention_ref.h). Scale 1, causal top-left,
 * key_length = 3, head_dim 4, q_i = (1, 0, 0, 0) on every row, keys in dim 0:
 *   key 0: k = 0,    s = 0,    v = (1, 2, 3, 4)
 *   key 1: k = -200, s = -200, v = (NaN, 5, 6, 7): weight e^-200, 0 in fp32
 *   key 2: k = 0,    s = 0,    v = (3, 4, 5, 6)
 *   key 3: k = 300,  s = 300,  v = NaN in every column: padding, dominant if used.
 * Expected: row 0 (key 0 only; key 1 is after the causal limit) finite;
 * rows 1..3 (keys 0..2) NaN in column 0 exactly, where v_1 is NaN, and finite
 * in columns 1..3, so row 3 also proves the padding key stayed out; lse
 * finite on every row.
 */
enum { NAN_V_ROWS = 4, NAN_V_DIM = 4, NAN_V_NAN_KEY = 1 };
static const naive_attn_dims NAN_V_DIMS = {1, 1, NAN_V_ROWS, NAN_V_ROWS, NAN_V_DIM};

static host_problem nan_v_problem(void)
{
    const float key_first[NAN_V_ROWS] = {0, -200, 0, 300};
    const float v_rows[NAN_V_ROWS][NAN_V_DIM] = {
        {1, 2, 3, 4}, {NAN, 5, 6, 7}, {3, 4, 5, 6}, {NAN, NAN, NAN, NAN}};
    host_problem hp = random_problem(NAN_V_DIMS, FA_F32, FA_MASK_CAUSAL_TOP_LEFT, true, 1, 110);
    hp.scale = 1.0f;
    hp.key_length[0] = 3;
    float *q = hp.q, *k = hp.k, *v = hp.v;
    for (int n = 0; n < NAN_V_ROWS; ++n)
        for (int c = 0; c < NAN_V_DIM; ++c) {
            q[n * NAN_V_DIM + c] = c == 0 ? 1.0f : 0.0f;
            k[n * NAN_V_DIM + c] = c == 0 ? key_first[n] : 0.0f;
            v[n * NAN_V_DIM + c] = v_rows[n][c];
        }
    return hp;
}

/** Elements of o and lse (widened to double) that break the expectation above. */
static int64_t nan_v_wrong(const double *o, const double *lse)
{
    int64_t wrong = 0;
    for (int i = 0; i < NAN_V_ROWS; ++i) {
        for (int c = 0; c < NAN_V_DIM; ++c) {
            const bool want_nan = i >= NAN_V_NAN_KEY && c == 0;
            wrong += want_nan ? !isnan(o[i * NAN_V_DIM + c]) : !isfinite(o[i * NAN_V_DIM + c]);
        }
        wrong += !isfinite(lse[i]);
    }
    return wrong;
}

static void test_nan_v_reference(fa_tests *t)
{
    host_problem hp = nan_v_problem();
    const fa_attn_problem problem = naive_attn_problem(hp.q, hp.k, hp.v, hp.dtype, hp.dims,
                                                       hp.scale, hp.mask, hp.key_length);
    const fa_attn_method method = naive_attn_method(hp.dtype);
    fa_attn_reference ref;
    if (FA_EXPECT(t, fa_attention_reference(&problem, &method, &ref) == FA_OK, "%s",
                  fa_last_error())) {
        const int64_t wrong = nan_v_wrong(ref.o, ref.lse);
        FA_EXPECT(t, wrong == 0,
                  "reference: NaN in v of an allowed key of weight e^-200 must make column 0 of "
                  "rows 1..3 NaN, the NaN padding key nothing: %lld elements wrong",
                  (long long)wrong);
        fa_attn_reference_free(&ref);
    }
    free_problem(&hp);
}

static void test_counts(fa_tests *t)
{
    size_t bytes = 0;
    FA_EXPECT(t, attn_naive_workspace_bytes((naive_attn_dims){1, 16, 4096, 4096, 128}, &bytes) ==
                         FA_OK && bytes == ((size_t)1 << 30),
              "16 heads at N = 4096 need exactly 1 GiB, got %zu", bytes);
    FA_EXPECT(t, attn_naive_workspace_bytes((naive_attn_dims){2, 3, 5, 7, 0}, &bytes) == FA_OK &&
                     bytes == 2 * 3 * 5 * 7 * sizeof(float),
              "workspace of 2x3x5x7: %zu", bytes);
    FA_EXPECT(t, attn_naive_workspace_bytes((naive_attn_dims){1, 1, 5, -1, 8}, &bytes) ==
                         FA_ERR_INVALID_SIZE && strstr(fa_last_error(), "nk") != NULL,
              "negative nk: %s", fa_last_error());
    FA_EXPECT(t, attn_naive_workspace_bytes((naive_attn_dims){1 << 20, 1 << 20, 1 << 20, 1 << 20,
                                                              8}, &bytes) == FA_ERR_OVERFLOW,
              "2^80 scores overflow: %s", fa_last_error());
    FA_EXPECT(t, attn_naive_workspace_bytes((naive_attn_dims){1, 1, 1, 1, 1}, NULL) ==
                     FA_ERR_NULL_POINTER, "NULL bytes");

    /* bf16, B = H = 1, nq = 2, nk = 3, D = 4: S = 24 B, q = 16 B, k = v = 24 B, o = 32 B,
     * lse = 8 B. scores 16 + 24 + 24 = 64; softmax 4 * 24 + 8 = 104; PV 24 + 24 + 32 = 80. */
    const attn_naive_traffic tr = attn_naive_traffic_bytes((naive_attn_dims){1, 1, 2, 3, 4},
                                                           FA_BF16);
    FA_EXPECT(t, tr.scores == 64 && tr.softmax == 104 && tr.pv == 80 && tr.total == 248 &&
                     tr.minimum == 104,
              "traffic %lld %lld %lld %lld %lld", (long long)tr.scores, (long long)tr.softmax,
              (long long)tr.pv, (long long)tr.total, (long long)tr.minimum);

    FA_EXPECT(t, naive_attn_scale(0, 4) == 0.5f && naive_attn_scale(0, 128) ==
                     (float)(1 / sqrt(128.0)) && naive_attn_scale(0.3f, 128) == 0.3f,
              "naive_attn_scale: 0 selects 1/sqrt(head_dim), anything else is kept");
}

/* ==== mutations: the bound must reject real bugs ============================================ */

/** Expects @p covered to be false with a worst ratio past MUTATION_MARGIN. */
static void expect_rejected(fa_tests *t, const char *mutation, bool covered,
                            const fa_check_report *a, const fa_check_report *b)
{
    const double worst = fa_max_nan_double(a->worst_ratio, b != NULL ? b->worst_ratio : 0);
    const int64_t nonfinite = a->nonfinite + (b != NULL ? b->nonfinite : 0);
    FA_EXPECT(t, !covered && (worst > MUTATION_MARGIN || nonfinite > 0),
              "mutation '%s' was not rejected (worst ratio %g)", mutation, worst);
}

static void test_mutations(fa_tests *t)
{
    const naive_attn_dims d = {2, 2, 24, 40, 64};
    host_problem hp = random_problem(d, FA_F32, FA_MASK_CAUSAL_TOP_LEFT, true, 3, 103);
    hp.key_length[0] = d.nk / 2; /* padding that really masks keys, in one batch */
    hp.key_length[1] = d.nk;
    float *o = fa_new_floats(attn_count_q(d)), *lse = fa_new_floats(attn_count_rows(d));
    float *s = fa_new_floats(attn_count_s(d));
    double *want = fa_new_doubles(attn_count_s(d)), *bound = fa_new_doubles(attn_count_s(d));
    fa_check_report ro, rl;

    /* The correct model passes: the mutations below are judged by the same judge. */
    attn_model_naive(hp.q, hp.k, hp.v, hp.dtype, d, 0, hp.mask, hp.key_length, o, lse);
    FA_EXPECT(t, attention_covered(&hp, o, lse, &ro, &rl), "the unmutated model is rejected");

    attn_model_naive(hp.q, hp.k, hp.v, hp.dtype, d, 1.0f / (float)d.head_dim, hp.mask,
                     hp.key_length, o, lse);
    expect_rejected(t, "scale 1/D instead of 1/sqrt(D)", attention_covered(&hp, o, lse, &ro, &rl),
                    &ro, &rl);

    attn_model_naive(hp.q, hp.k, hp.v, hp.dtype, d, 0, FA_MASK_CAUSAL_BOTTOM_RIGHT, hp.key_length,
                     o, lse);
    expect_rejected(t, "bottom-right instead of top-left alignment",
                    attention_covered(&hp, o, lse, &ro, &rl), &ro, &rl);

    attn_model_naive(hp.q, hp.k, hp.v, hp.dtype, d, 0, FA_MASK_NONE, hp.key_length, o, lse);
    expect_rejected(t, "causal mask ignored", attention_covered(&hp, o, lse, &ro, &rl), &ro,
                    &rl);

    attn_model_naive(hp.q, hp.k, hp.v, hp.dtype, d, 0, hp.mask, NULL, o, lse);
    expect_rejected(t, "key padding ignored", attention_covered(&hp, o, lse, &ro, &rl), &ro,
                    &rl);

    attn_model_naive(hp.q, hp.k, hp.v, hp.dtype, d, 0, hp.mask, hp.key_length, o, lse);
    for (int64_t r = 0; r < attn_count_rows(d); ++r)
        lse[r] = lse[r] / 0.6931471805599453f;
    expect_rejected(t, "lse in log2 units", attention_covered(&hp, o, lse, &ro, &rl), &rl, NULL);

    /* A row with no allowed key reported as NaN instead of o = 0, lse = -inf: with
     * Nq > Nk and the bottom-right alignment, row 0 sees no key (j <= 0 + 20 - 24). */
    host_problem tall = random_problem((naive_attn_dims){2, 2, 24, 20, 64}, FA_F32,
                                       FA_MASK_CAUSAL_BOTTOM_RIGHT, false, 3, 104);
    attn_model_naive(tall.q, tall.k, tall.v, tall.dtype, tall.dims, 0, tall.mask, NULL, o, lse);
    FA_EXPECT(t, attention_covered(&tall, o, lse, &ro, &rl), "the unmutated model is rejected");
    for (int64_t c = 0; c < tall.dims.head_dim; ++c)
        o[c] = NAN;
    lse[0] = NAN;
    expect_rejected(t, "NaN on a row with no allowed key",
                    attention_covered(&tall, o, lse, &ro, &rl), &ro, &rl);
    free_problem(&tall);

    /* M9: the scale forgotten. */
    attn_model_scores(hp.q, hp.k, hp.dtype, d, 1.0f, s);
    FA_EXPECT(t, attn_scores_reference(hp.q, hp.k, hp.dtype, d, 0, want, bound) == FA_OK,
              "the scores reference: %s", fa_last_error());
    expect_rejected(t, "scores without the scale",
                    fa_check_covers(s, want, bound, attn_count_s(d), &ro), &ro, NULL);

    /* M10: the row sum taken over masked keys too (here: the padding ignored by the sum). */
    attn_model_scores(hp.q, hp.k, hp.dtype, d, 0, s);
    float *p = fa_new_floats(attn_count_s(d));
    double *lse_want = fa_new_doubles(attn_count_rows(d));
    double *lse_bound = fa_new_doubles(attn_count_rows(d));
    FA_EXPECT(t, softmax_rows_reference(s, d, FA_MASK_NONE, hp.key_length, want, bound, lse_want,
                                        lse_bound) == FA_OK,
              "the softmax reference with padding: %s", fa_last_error());
    attn_model_softmax(s, p, NULL, d, FA_MASK_NONE, NULL);
    expect_rejected(t, "softmax over the padding keys",
                    fa_check_covers(p, want, bound, attn_count_s(d), &ro), &ro, NULL);
    free(p), free(lse_want), free(lse_bound);

    free(o), free(lse), free(s), free(want), free(bound);
    free_problem(&hp);
}

/* ==== bad input ============================================================================= */

/*
 * Stand-ins for device pointers: validation reads only their values (NULL,
 * alignment, overlap), and a launcher that fails validation touches nothing,
 * so host arrays serve on a machine without a GPU. Each is large enough for
 * the tensors of BAD_DIMS, so distinct arrays never overlap.
 */
enum { FAKE_FLOATS = 1024 };
static _Alignas(16) float fake_q[FAKE_FLOATS], fake_k[FAKE_FLOATS], fake_v[FAKE_FLOATS];
static _Alignas(16) float fake_s[FAKE_FLOATS], fake_p[FAKE_FLOATS], fake_o[FAKE_FLOATS];
static _Alignas(16) float fake_lse[FAKE_FLOATS];
static _Alignas(16) int64_t fake_key_length[8];
static const naive_attn_dims BAD_DIMS = {2, 3, 4, 5, 8};

/** The same address moved by @p bytes: misaligned for anything wider. */
static void *shifted(const void *p, int bytes) { return (char *)p + bytes; }

/** Which function a bad call goes to. */
typedef enum callee { CALL_VALIDATE, CALL_REF, CALL_LEARNER, CALLEE_COUNT } callee;
/** What a call's label starts with: validation is named by the op alone. */
static const char *const CALLEE_PREFIXES[] = {"", "ref_", "learner_"};

typedef struct scores_call {
    const char *what;
    const void *q, *k;
    float *s;
    fa_dtype dtype;
    naive_attn_dims dims;
    float scale;
    fa_status expected;
    const char *word;
} scores_call;

static fa_status call_scores(callee who, const scores_call *c)
{
    switch (who) {
#if FA_HAVE_CUDA
    case CALL_REF: return ref_attn_scores(c->q, c->k, c->s, c->dtype, c->dims, c->scale, 0);
    case CALL_LEARNER:
        return learner_attn_scores(c->q, c->k, c->s, c->dtype, c->dims, c->scale, 0);
#endif
    default: return attn_scores_validate(c->q, c->k, c->s, c->dtype, c->dims, c->scale);
    }
}

/** A copy of @p d with one size changed. */
static naive_attn_dims with(naive_attn_dims d, int which, int64_t value)
{
    int64_t *sizes[] = {&d.batch, &d.heads, &d.nq, &d.nk, &d.head_dim};
    *sizes[which] = value;
    return d;
}

enum { DIM_BATCH, DIM_HEADS, DIM_NQ, DIM_NK, DIM_HEAD_DIM };

#if FA_HAVE_CUDA
enum { CALLEES = CALLEE_COUNT };
#else
enum { CALLEES = 1 }; /* without CUDA only the validation functions exist */
#endif

static void test_bad_scores(fa_tests *t)
{
    const naive_attn_dims d = BAD_DIMS;
    const scores_call calls[] = {
        {"q NULL", NULL, fake_k, fake_s, FA_F32, d, 0, FA_ERR_NULL_POINTER, "q"},
        {"k NULL", fake_q, NULL, fake_s, FA_F32, d, 0, FA_ERR_NULL_POINTER, "k"},
        {"s NULL", fake_q, fake_k, NULL, FA_F32, d, 0, FA_ERR_NULL_POINTER, "s"},
        {"batch < 0", fake_q, fake_k, fake_s, FA_F32, with(d, DIM_BATCH, -1), 0,
         FA_ERR_INVALID_SIZE, "batch"},
        {"heads < 0", fake_q, fake_k, fake_s, FA_F32, with(d, DIM_HEADS, -2), 0,
         FA_ERR_INVALID_SIZE, "heads"},
        {"nq < 0", fake_q, fake_k, fake_s, FA_F32, with(d, DIM_NQ, -1), 0, FA_ERR_INVALID_SIZE,
         "nq"},
        {"nk < 0", fake_q, fake_k, fake_s, FA_F32, with(d, DIM_NK, -1), 0, FA_ERR_INVALID_SIZE,
         "nk"},
        {"head_dim 0", fake_q, fake_k, fake_s, FA_F32, with(d, DIM_HEAD_DIM, 0), 0,
         FA_ERR_UNSUPPORTED, "head_dim"},
        {"head_dim 257", fake_q, fake_k, fake_s, FA_F32, with(d, DIM_HEAD_DIM, 257), 0,
         FA_ERR_UNSUPPORTED, "1 .. 256"},
        {"sizes overflow", fake_q, fake_k, fake_s, FA_F32,
         with(with(d, DIM_BATCH, INT64_MAX / 4), DIM_NK, 1 << 20), 0, FA_ERR_OVERFLOW,
         "overflow"},
        {"dtype 7", fake_q, fake_k, fake_s, (fa_dtype)7, d, 0, FA_ERR_INVALID_ARGUMENT, "dtype"},
        {"scale NaN", fake_q, fake_k, fake_s, FA_F32, d, NAN, FA_ERR_INVALID_ARGUMENT, "scale"},
        {"scale inf", fake_q, fake_k, fake_s, FA_F32, d, INFINITY, FA_ERR_INVALID_ARGUMENT,
         "scale"},
        {"q misaligned (fp32)", shifted(fake_q, 2), fake_k, fake_s, FA_F32, d, 0,
         FA_ERR_MISALIGNED, "q"},
        {"k misaligned (bf16)", fake_q, shifted(fake_k, 1), fake_s, FA_BF16, d, 0,
         FA_ERR_MISALIGNED, "k"},
        {"s misaligned", fake_q, fake_k, shifted(fake_s, 2), FA_F32, d, 0, FA_ERR_MISALIGNED,
         "s"},
        {"s overlaps q", fake_q, fake_k, fake_q + 4, FA_F32, d, 0, FA_ERR_INVALID_ARGUMENT,
         "overlaps q"},
        {"s overlaps k", fake_q, fake_k, fake_k, FA_BF16, d, 0, FA_ERR_INVALID_ARGUMENT,
         "overlaps k"},
        {"empty (batch 0), all NULL", NULL, NULL, NULL, FA_F32, with(d, DIM_BATCH, 0), 0, FA_OK,
         ""},
        {"empty (nk 0), q and k NULL", NULL, NULL, fake_s, FA_F16, with(d, DIM_NK, 0), 0, FA_OK,
         ""},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; ++i)
        for (int who = 0; who < CALLEES; ++who) {
            fa_clear_error();
            const fa_status got = call_scores((callee)who, &calls[i]);
            FA_EXPECT_STATUS_OF(t, who == CALL_LEARNER, got, calls[i].expected, calls[i].word,
                                "%sattn_scores, %s", CALLEE_PREFIXES[who], calls[i].what);
        }
}

typedef struct softmax_call {
    const char *what;
    const float *s;
    float *p, *lse;
    naive_attn_dims dims;
    fa_mask mask;
    const int64_t *key_length;
    fa_status expected;
    const char *word;
} softmax_call;

static fa_status call_softmax(callee who, const softmax_call *c)
{
    switch (who) {
#if FA_HAVE_CUDA
    case CALL_REF:
        return ref_softmax_rows(c->s, c->p, c->lse, c->dims, c->mask, c->key_length, 0);
    case CALL_LEARNER:
        return learner_softmax_rows(c->s, c->p, c->lse, c->dims, c->mask, c->key_length, 0);
#endif
    default: return softmax_rows_validate(c->s, c->p, c->lse, c->dims, c->mask, c->key_length);
    }
}

static void test_bad_softmax(fa_tests *t)
{
    const naive_attn_dims d = BAD_DIMS;
    const fa_mask none = FA_MASK_NONE;
    const softmax_call calls[] = {
        {"s NULL", NULL, fake_p, fake_lse, d, none, NULL, FA_ERR_NULL_POINTER, "s"},
        {"p NULL", fake_s, NULL, fake_lse, d, none, NULL, FA_ERR_NULL_POINTER, "p"},
        {"batch < 0", fake_s, fake_p, fake_lse, with(d, DIM_BATCH, -1), none, NULL,
         FA_ERR_INVALID_SIZE, "batch"},
        {"heads < 0", fake_s, fake_p, fake_lse, with(d, DIM_HEADS, -1), none, NULL,
         FA_ERR_INVALID_SIZE, "heads"},
        {"nq < 0", fake_s, fake_p, fake_lse, with(d, DIM_NQ, -3), none, NULL,
         FA_ERR_INVALID_SIZE, "nq"},
        {"nk < 0", fake_s, fake_p, fake_lse, with(d, DIM_NK, -1), none, NULL,
         FA_ERR_INVALID_SIZE, "nk"},
        {"sizes overflow", fake_s, fake_p, fake_lse,
         with(with(d, DIM_NQ, INT64_MAX / 2), DIM_NK, 1 << 10), none, NULL, FA_ERR_OVERFLOW,
         "overflow"},
        {"mask 9", fake_s, fake_p, fake_lse, d, (fa_mask)9, NULL, FA_ERR_INVALID_ARGUMENT,
         "mask"},
        {"bottom-right with key_length", fake_s, fake_p, fake_lse, d,
         FA_MASK_CAUSAL_BOTTOM_RIGHT, fake_key_length, FA_ERR_UNSUPPORTED, "key_length[b]"},
        {"s misaligned", shifted(fake_s, 2), fake_p, fake_lse, d, none, NULL, FA_ERR_MISALIGNED,
         "s"},
        {"p misaligned", fake_s, shifted(fake_p, 1), fake_lse, d, none, NULL, FA_ERR_MISALIGNED,
         "p"},
        {"lse misaligned", fake_s, fake_p, shifted(fake_lse, 2), d, none, NULL,
         FA_ERR_MISALIGNED, "lse"},
        {"key_length misaligned", fake_s, fake_p, fake_lse, d, none, shifted(fake_key_length, 4),
         FA_ERR_MISALIGNED, "key_length"},
        {"p overlaps s (not in place)", fake_s, fake_s + 1, fake_lse, d, none, NULL,
         FA_ERR_INVALID_ARGUMENT, "overlaps s"},
        {"lse overlaps p", fake_s, fake_p, fake_p + 8, d, none, NULL, FA_ERR_INVALID_ARGUMENT,
         "lse"},
        {"key_length overlaps p", fake_s, fake_p, fake_lse, d, none, (const int64_t *)(fake_p + 8),
         FA_ERR_INVALID_ARGUMENT, "key_length"},
        {"key_length overlaps lse", fake_s, fake_p, fake_lse, d, FA_MASK_CAUSAL_TOP_LEFT,
         (const int64_t *)fake_lse, FA_ERR_INVALID_ARGUMENT, "key_length"},
        {"empty (nq 0), all NULL", NULL, NULL, NULL, with(d, DIM_NQ, 0), none, NULL, FA_OK, ""},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; ++i)
        for (int who = 0; who < CALLEES; ++who) {
            fa_clear_error();
            const fa_status got = call_softmax((callee)who, &calls[i]);
            FA_EXPECT_STATUS_OF(t, who == CALL_LEARNER, got, calls[i].expected, calls[i].word,
                                "%ssoftmax_rows, %s", CALLEE_PREFIXES[who], calls[i].what);
        }
    /* Valid calls are checked through validation only: a launcher would launch. */
    FA_EXPECT(t, softmax_rows_validate(fake_s, fake_s, fake_lse, d, none, NULL) == FA_OK,
              "in place (p == s) is accepted: %s", fa_last_error());
    FA_EXPECT(t, softmax_rows_validate(NULL, NULL, fake_lse, with(d, DIM_NK, 0),
                                       FA_MASK_CAUSAL_TOP_LEFT, fake_key_length) == FA_OK,
              "nk = 0 with s and p NULL (lse is still written): %s", fa_last_error());
}

typedef struct pv_call {
    const char *what;
    const float *p;
    const void *v;
    float *o;
    fa_dtype dtype;
    naive_attn_dims dims;
    fa_status expected;
    const char *word;
} pv_call;

static fa_status call_pv(callee who, const pv_call *c)
{
    switch (who) {
#if FA_HAVE_CUDA
    case CALL_REF: return ref_attn_pv(c->p, c->v, c->o, c->dtype, c->dims, 0);
    case CALL_LEARNER: return learner_attn_pv(c->p, c->v, c->o, c->dtype, c->dims, 0);
#endif
    default: return attn_pv_validate(c->p, c->v, c->o, c->dtype, c->dims);
    }
}

static void test_bad_pv(fa_tests *t)
{
    const naive_attn_dims d = BAD_DIMS;
    const pv_call calls[] = {
        {"p NULL", NULL, fake_v, fake_o, FA_F32, d, FA_ERR_NULL_POINTER, "p"},
        {"v NULL", fake_p, NULL, fake_o, FA_F32, d, FA_ERR_NULL_POINTER, "v"},
        {"o NULL", fake_p, fake_v, NULL, FA_F32, d, FA_ERR_NULL_POINTER, "o"},
        {"batch < 0", fake_p, fake_v, fake_o, FA_F32, with(d, DIM_BATCH, -1),
         FA_ERR_INVALID_SIZE, "batch"},
        {"nk < 0", fake_p, fake_v, fake_o, FA_F32, with(d, DIM_NK, -1), FA_ERR_INVALID_SIZE,
         "nk"},
        {"head_dim 0", fake_p, fake_v, fake_o, FA_F32, with(d, DIM_HEAD_DIM, 0),
         FA_ERR_UNSUPPORTED, "head_dim"},
        {"head_dim 1000", fake_p, fake_v, fake_o, FA_BF16, with(d, DIM_HEAD_DIM, 1000),
         FA_ERR_UNSUPPORTED, "1 .. 256"},
        {"sizes overflow", fake_p, fake_v, fake_o, FA_F32, with(d, DIM_HEADS, INT64_MAX / 8),
         FA_ERR_OVERFLOW, "overflow"},
        {"dtype -1", fake_p, fake_v, fake_o, (fa_dtype)-1, d, FA_ERR_INVALID_ARGUMENT, "dtype"},
        {"p misaligned", shifted(fake_p, 2), fake_v, fake_o, FA_F32, d, FA_ERR_MISALIGNED, "p"},
        {"v misaligned (fp16)", fake_p, shifted(fake_v, 1), fake_o, FA_F16, d,
         FA_ERR_MISALIGNED, "v"},
        {"o misaligned", fake_p, fake_v, shifted(fake_o, 2), FA_F32, d, FA_ERR_MISALIGNED, "o"},
        {"o overlaps p", fake_p, fake_v, fake_p + 64, FA_F32, d, FA_ERR_INVALID_ARGUMENT,
         "overlaps p"},
        {"o overlaps v", fake_p, fake_v, fake_v, FA_F32, d, FA_ERR_INVALID_ARGUMENT,
         "overlaps v"},
        {"empty (heads 0), all NULL", NULL, NULL, NULL, FA_BF16, with(d, DIM_HEADS, 0), FA_OK,
         ""},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; ++i)
        for (int who = 0; who < CALLEES; ++who) {
            fa_clear_error();
            const fa_status got = call_pv((callee)who, &calls[i]);
            FA_EXPECT_STATUS_OF(t, who == CALL_LEARNER, got, calls[i].expected, calls[i].word,
                                "%sattn_pv, %s", CALLEE_PREFIXES[who], calls[i].what);
        }
    FA_EXPECT(t, attn_pv_validate(NULL, NULL, fake_o, FA_F32, with(d, DIM_NK, 0)) == FA_OK,
              "nk = 0 with p and v NULL (o is still written, with zeros): %s", fa_last_error());
}

typedef struct naive_call {
    const char *what;
    const void *q, *k, *v;
    float *o, *lse;
    fa_dtype dtype;
    naive_attn_dims dims;
    float scale;
    fa_mask mask;
    const int64_t *key_length;
    fa_status expected;
    const char *word;
} naive_call;

static fa_status call_naive(callee who, const naive_call *c)
{
    switch (who) {
#if FA_HAVE_CUDA
    case CALL_REF:
        return ref_attn_naive(c->q, c->k, c->v, c->o, c->lse, c->dtype, c->dims, c->scale,
                              c->mask, c->key_length, 0);
    case CALL_LEARNER:
        return learner_attn_naive(c->q, c->k, c->v, c->o, c->lse, c->dtype, c->dims, c->scale,
                                  c->mask, c->key_length, 0);
#endif
    default:
        return attn_naive_validate(c->q, c->k, c->v, c->o, c->lse, c->dtype, c->dims, c->scale,
                                   c->mask, c->key_length);
    }
}

static void test_bad_naive(fa_tests *t)
{
    const naive_attn_dims d = BAD_DIMS;
    const fa_mask tl = FA_MASK_CAUSAL_TOP_LEFT;
    float *q = fake_q, *k = fake_k, *v = fake_v, *o = fake_o, *lse = fake_lse;
    const naive_call calls[] = {
        {"q NULL", NULL, k, v, o, lse, FA_F32, d, 0, tl, NULL, FA_ERR_NULL_POINTER, "q"},
        {"k NULL", q, NULL, v, o, lse, FA_F32, d, 0, tl, NULL, FA_ERR_NULL_POINTER, "k"},
        {"v NULL", q, k, NULL, o, lse, FA_F32, d, 0, tl, NULL, FA_ERR_NULL_POINTER, "v"},
        {"o NULL", q, k, v, NULL, lse, FA_F32, d, 0, tl, NULL, FA_ERR_NULL_POINTER, "o"},
        {"batch < 0", q, k, v, o, lse, FA_F32, with(d, DIM_BATCH, -1), 0, tl, NULL,
         FA_ERR_INVALID_SIZE, "batch"},
        {"heads < 0", q, k, v, o, lse, FA_F32, with(d, DIM_HEADS, -1), 0, tl, NULL,
         FA_ERR_INVALID_SIZE, "heads"},
        {"nq < 0", q, k, v, o, lse, FA_F32, with(d, DIM_NQ, -1), 0, tl, NULL,
         FA_ERR_INVALID_SIZE, "nq"},
        {"nk < 0", q, k, v, o, lse, FA_F32, with(d, DIM_NK, -1), 0, tl, NULL,
         FA_ERR_INVALID_SIZE, "nk"},
        {"head_dim 512", q, k, v, o, lse, FA_F32, with(d, DIM_HEAD_DIM, 512), 0, tl, NULL,
         FA_ERR_UNSUPPORTED, "1 .. 256"},
        {"sizes overflow", q, k, v, o, lse, FA_F32,
         with(with(d, DIM_NQ, 1 << 30), DIM_NK, (int64_t)1 << 40), 0, tl, NULL, FA_ERR_OVERFLOW,
         "overflow"},
        {"dtype 3", q, k, v, o, lse, (fa_dtype)3, d, 0, tl, NULL, FA_ERR_INVALID_ARGUMENT,
         "dtype"},
        {"scale -inf", q, k, v, o, lse, FA_F32, d, -INFINITY, tl, NULL,
         FA_ERR_INVALID_ARGUMENT, "scale"},
        {"mask 9", q, k, v, o, lse, FA_F32, d, 0, (fa_mask)9, NULL, FA_ERR_INVALID_ARGUMENT,
         "mask"},
        {"mask window", q, k, v, o, lse, FA_F32, d, 0, FA_MASK_WINDOW, NULL, FA_ERR_UNSUPPORTED,
         "mask = 3"},
        {"bottom-right with key_length", q, k, v, o, lse, FA_F32, d, 0,
         FA_MASK_CAUSAL_BOTTOM_RIGHT, fake_key_length, FA_ERR_UNSUPPORTED, "key_length[b]"},
        {"q misaligned (bf16)", shifted(q, 1), k, v, o, lse, FA_BF16, d, 0, tl, NULL,
         FA_ERR_MISALIGNED, "q"},
        {"v misaligned (fp32)", q, k, shifted(v, 2), o, lse, FA_F32, d, 0, tl, NULL,
         FA_ERR_MISALIGNED, "v"},
        {"o misaligned", q, k, v, shifted(o, 2), lse, FA_F32, d, 0, tl, NULL, FA_ERR_MISALIGNED,
         "o"},
        {"lse misaligned", q, k, v, o, shifted(lse, 1), FA_F32, d, 0, tl, NULL,
         FA_ERR_MISALIGNED, "lse"},
        {"key_length misaligned", q, k, v, o, lse, FA_F32, d, 0, tl, shifted(fake_key_length, 2),
         FA_ERR_MISALIGNED, "key_length"},
        {"o overlaps q", q, k, v, q + 16, lse, FA_F32, d, 0, tl, NULL, FA_ERR_INVALID_ARGUMENT,
         "overlaps q"},
        {"lse overlaps v", q, k, v, o, v, FA_F32, d, 0, tl, NULL, FA_ERR_INVALID_ARGUMENT,
         "overlaps v"},
        {"lse overlaps o", q, k, v, o, o + 4, FA_F32, d, 0, tl, NULL, FA_ERR_INVALID_ARGUMENT,
         "overlaps o"},
        {"key_length overlaps o", q, k, v, o, lse, FA_F32, d, 0, tl, (const int64_t *)(o + 16),
         FA_ERR_INVALID_ARGUMENT, "key_length"},
        {"key_length overlaps lse", q, k, v, o, lse, FA_F32, d, 0, FA_MASK_NONE,
         (const int64_t *)lse, FA_ERR_INVALID_ARGUMENT, "key_length"},
        {"empty (nq 0), all NULL", NULL, NULL, NULL, NULL, NULL, FA_F16, with(d, DIM_NQ, 0), 0,
         tl, NULL, FA_OK, ""},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; ++i)
        for (int who = 0; who < CALLEES; ++who) {
            fa_clear_error();
            const fa_status got = call_naive((callee)who, &calls[i]);
            FA_EXPECT_STATUS_OF(t, who == CALL_LEARNER, got, calls[i].expected, calls[i].word,
                                "%sattn_naive, %s", CALLEE_PREFIXES[who], calls[i].what);
        }
}

/* ==== the sizes at the edge of 64-bit byte offsets ========================================== */

/**
 * Every size check at its boundary: the largest size accepted passes the
 * check, one more is refused with ::FA_ERR_OVERFLOW. A tensor may hold
 * fa_max_elements(4) = 2^63 / 4 - 1 elements (a prime: only one size can reach
 * it alone); key_length, batch * 8 bytes, is checked on its own because batch
 * may be huge when another size is 0. Where the validation of a launcher also
 * checks the pointers (which no real address space can satisfy at these
 * sizes), the boundary is that it does not refuse for overflow.
 */
static void test_overflow_boundaries(fa_tests *t)
{
    const int64_t most = fa_max_elements(4);
    const int64_t most_batch = fa_max_elements(8);
    size_t bytes = 0;

    /* s and p: batch * heads * nq * nk, alone and split over the four sizes. */
    FA_EXPECT(t, attn_naive_workspace_bytes((naive_attn_dims){1, 1, 1, most, 1}, &bytes) == FA_OK &&
                     bytes == (size_t)most * sizeof(float),
              "%lld scores fit 64-bit byte offsets: %s", (long long)most, fa_last_error());
    FA_EXPECT(t, attn_naive_workspace_bytes((naive_attn_dims){1, 1, 1, most + 1, 1}, &bytes) ==
                     FA_ERR_OVERFLOW && strstr(fa_last_error(), "overflow") != NULL,
              "%lld scores do not: %s", (long long)(most + 1), fa_last_error());
    const int64_t split = ((int64_t)1 << 21) - 1; /* 2^40 (2^21 - 1) = 2^61 - 2^40 <= most */
    FA_EXPECT(t, attn_naive_workspace_bytes((naive_attn_dims){1 << 10, 1 << 10, 1 << 20, split, 1},
                                            &bytes) == FA_OK,
              "2^61 - 2^40 scores over four sizes fit: %s", fa_last_error());
    FA_EXPECT(t, attn_naive_workspace_bytes((naive_attn_dims){1 << 10, 1 << 10, 1 << 20, split + 1,
                                                              1}, &bytes) == FA_ERR_OVERFLOW,
              "2^61 scores over four sizes do not: %s", fa_last_error());
    FA_EXPECT(t, softmax_rows_validate(fake_s, fake_s, NULL, (naive_attn_dims){1, 1, 1, most, 1},
                                       FA_MASK_NONE, NULL) == FA_OK,
              "softmax in place over %lld scores is accepted: %s", (long long)most,
              fa_last_error());
    FA_EXPECT(t, softmax_rows_validate(fake_s, fake_s, NULL,
                                       (naive_attn_dims){1, 1, 1, most + 1, 1}, FA_MASK_NONE,
                                       NULL) == FA_ERR_OVERFLOW,
              "softmax over %lld scores is refused: %s", (long long)(most + 1), fa_last_error());

    /* lse: batch * heads * nq, which overflows alone when nk = 0 empties s. */
    FA_EXPECT(t, softmax_rows_validate(NULL, NULL, NULL, (naive_attn_dims){1, 1, most, 0, 1},
                                       FA_MASK_NONE, NULL) == FA_OK,
              "%lld rows with no key are accepted: %s", (long long)most, fa_last_error());
    FA_EXPECT(t, softmax_rows_validate(NULL, NULL, NULL, (naive_attn_dims){1, 1, most + 1, 0, 1},
                                       FA_MASK_NONE, NULL) == FA_ERR_OVERFLOW,
              "%lld rows are refused: %s", (long long)(most + 1), fa_last_error());

    /* q and o: batch * heads * nq * head_dim; k and v: batch * heads * nk * head_dim. With
     * D = 2, nq (or nk) = most / 2 = 2^60 - 1 fits and 2^60 does not, while s still fits. */
    const int64_t half = most / 2;
    const naive_attn_dims q_edge = {1, 1, half, 1, 2}, q_over = {1, 1, half + 1, 1, 2};
    const naive_attn_dims kv_edge = {1, 1, 1, half, 2}, kv_over = {1, 1, 1, half + 1, 2};
    FA_EXPECT(t, naive_attn_dims_validate("attn_scores", q_edge, true) == FA_OK &&
                     naive_attn_dims_validate("attn_scores", kv_edge, true) == FA_OK,
              "q and k of %lld elements fit: %s", (long long)(2 * half), fa_last_error());
    FA_EXPECT(t, naive_attn_dims_validate("attn_scores", q_over, true) == FA_ERR_OVERFLOW &&
                     naive_attn_dims_validate("attn_scores", kv_over, true) == FA_ERR_OVERFLOW,
              "q or k of %lld elements do not: %s", (long long)(2 * half + 2), fa_last_error());
    FA_EXPECT(t, naive_attn_dims_validate("softmax_rows", q_over, false) == FA_OK,
              "the softmax reads no head dimension: %s", fa_last_error());
    FA_EXPECT(t, attn_scores_validate(fake_q, fake_k, fake_s, FA_F32, q_edge, 0) !=
                         FA_ERR_OVERFLOW &&
                     attn_pv_validate(fake_p, fake_v, fake_o, FA_F32, kv_edge) != FA_ERR_OVERFLOW &&
                     attn_naive_validate(fake_q, fake_k, fake_v, fake_o, NULL, FA_F32, q_edge, 0,
                                         FA_MASK_NONE, NULL) != FA_ERR_OVERFLOW,
              "the launchers' validations accept the largest q and k: %s", fa_last_error());
    FA_EXPECT(t, attn_scores_validate(fake_q, fake_k, fake_s, FA_F32, q_over, 0) ==
                         FA_ERR_OVERFLOW &&
                     attn_pv_validate(fake_p, fake_v, fake_o, FA_F32, kv_over) == FA_ERR_OVERFLOW &&
                     attn_naive_validate(fake_q, fake_k, fake_v, fake_o, NULL, FA_F32, kv_over,
                                         0, FA_MASK_NONE, NULL) == FA_ERR_OVERFLOW,
              "and refuse one element more: %s", fa_last_error());

    /* key_length: batch * 8 bytes, with every tensor empty (nq = nk = 0). */
    const naive_attn_dims length_edge = {most_batch, 1, 0, 0, 8};
    const naive_attn_dims length_over = {most_batch + 1, 1, 0, 0, 8};
    FA_EXPECT(t, softmax_rows_validate(NULL, NULL, NULL, length_edge, FA_MASK_CAUSAL_TOP_LEFT,
                                       fake_key_length) == FA_OK &&
                     attn_naive_validate(NULL, NULL, NULL, NULL, NULL, FA_F32, length_edge, 0,
                                         FA_MASK_NONE, fake_key_length) == FA_OK,
              "key_length of %lld entries is accepted: %s", (long long)most_batch,
              fa_last_error());
    FA_EXPECT(t, softmax_rows_validate(NULL, NULL, NULL, length_over, FA_MASK_CAUSAL_TOP_LEFT,
                                       fake_key_length) == FA_ERR_OVERFLOW &&
                     strstr(fa_last_error(), "key_length") != NULL,
              "softmax: key_length of %lld entries is refused: %s", (long long)(most_batch + 1),
              fa_last_error());
    FA_EXPECT(t, attn_naive_validate(NULL, NULL, NULL, NULL, NULL, FA_F32, length_over, 0,
                                     FA_MASK_NONE, fake_key_length) == FA_ERR_OVERFLOW &&
                     strstr(fa_last_error(), "key_length") != NULL,
              "attention: key_length of %lld entries is refused: %s",
              (long long)(most_batch + 1), fa_last_error());
}

/* ==== the driver's flags ===================================================================== */

/**
 * Every bad command line of the stage-03 driver gets the usage exit code, 2,
 * before any GPU work (the parser is plain C: this holds without CUDA too);
 * the problem flags of the attention milestones describe their problem.
 */
static void test_driver_flags(fa_tests *t)
{
    static const char *const bad[][8] = {
        {"stage03", "--milestone", "8"},                      /* a milestone of stage 02 */
        {"stage03", "--milestone", "13"},                     /* and of stage 04 */
        {"stage03", "--milestone", "nine"},
        {"stage03", "--version", "1"},                        /* --version needs --milestone */
        {"stage03", "--milestone", "9", "--version", "1"},    /* M9 has one version */
        {"stage03", "--rows", "4"},                           /* no stage-03 milestone reads it */
        {"stage03", "--heads-kv", "2"},                       /* stage 03 has one kind of head */
        {"stage03", "--nq", "-1"},                            /* sizes are >= 0 */
        {"stage03", "--d", "0"},                              /* a head dimension is >= 1 */
        {"stage03", "--mask", "diagonal"},
        {"stage03", "--dtype", "fp64"},
        {"stage03", "--nq", "113", "--case", "fixture"},      /* a case or a problem, not both */
        {"stage03", "--milestone", "9", "--mask", "causal"},  /* the scores take no mask */
        {"stage03", "--milestone", "10", "--d", "64"},        /* the softmax no head dimension */
        {"stage03", "--milestone", "10", "--dtype", "bf16"},  /* nor a dtype: its scores are fp32 */
        {"stage03", "--milestone", "11", "--mask", "causal"}, /* P.V takes no mask */
        {"stage03", "--bench", "--nq", "64"},                 /* the benchmark has its own sizes */
        {"stage03", "--no-such-flag"},
    };
    for (int c = 0; c < FA_COUNT_OF(bad); ++c)
        FA_EXPECT_USAGE_ERROR(t, 3, bad[c]);
    fa_stage_request request;
    static const char *const help[] = {"stage03", "--help", NULL};
    FA_EXPECT(t, fa_stage_parse_words(help, 3, &request) == FA_CLI_HELP,
              "stage03 --help must print the usage and exit 0");

    const unsigned given = FA_PROBLEM_NQ | FA_PROBLEM_NK | FA_PROBLEM_D | FA_PROBLEM_MASK;
    static const char *const attention[] = {"stage03", "--nq", "113", "--nk", "203",
                                            "--d", "64", "--mask", "causal", NULL};
    FA_EXPECT(t, fa_stage_parse_words(attention, 3, &request) == FA_CLI_OK &&
                     request.run.problem.given == given && request.run.problem.nq == 113 &&
                     request.run.problem.nk == 203 && request.run.problem.d == 64 &&
                     request.run.problem.mask == FA_MASK_CAUSAL_TOP_LEFT,
              "--nq 113 --nk 203 --d 64 --mask causal describes one attention problem");
    FA_EXPECT(t, fa_milestone_reads(12, given) && !fa_milestone_reads(9, given) &&
                     !fa_milestone_reads(10, given) && !fa_milestone_reads(11, given),
              "that problem is M12's: M9 and M11 take no mask, M10 no head dimension");
    static const char *const softmax[] = {"stage03", "--milestone", "10", "--batch", "2",
                                          "--heads", "3", "--nq", "5", "--nk", "300",
                                          "--mask", "causal-bottom-right", NULL};
    FA_EXPECT(t, fa_stage_parse_words(softmax, 3, &request) == FA_CLI_OK &&
                     request.run.problem.batch == 2 && request.run.problem.heads == 3 &&
                     request.run.problem.mask == FA_MASK_CAUSAL_BOTTOM_RIGHT,
              "M10 reads the batch, heads, rows, keys and mask");
    static const char *const scores[] = {"stage03", "--milestone", "9", "--dtype", "bf16",
                                         "--d", "256", NULL};
    FA_EXPECT(t, fa_stage_parse_words(scores, 3, &request) == FA_CLI_OK &&
                     request.run.problem.dtype == FA_BF16 && request.run.problem.d == 256,
              "M9 reads the dtype and the head dimension");
    char *rerun[] = {"stage03", "--milestone", "12", "--case",
                     "random 3 B=1 H=2 Nq=64 Nk=64 D=128 fp32 causal padded", NULL};
    FA_EXPECT(t, fa_stage_parse(5, rerun, 3, &request) == FA_CLI_OK &&
                     strcmp(request.run.case_name, rerun[4]) == 0 &&
                     request.run.problem.given == 0,
              "--case takes a case name as a failure prints it");
}

/* ==== NaN in the scores ===================================================================== */

/**
 * The course's one NaN policy (fa_math.h): a NaN among a row's allowed
 * scores makes its max NaN (fa_max_nan(); fmaxf would drop it), so every
 * allowed p and the lse of that row are NaN and its masked p still 0; a NaN
 * in a masked score (here padding) is never read. The model and the softmax
 * reference agree on every element.
 */
static void test_softmax_nan_score(fa_tests *t)
{
    const naive_attn_dims d = {1, 1, 3, 4, 1};
    const int64_t length[] = {3};
    const float s[] = {1, NAN, 2, 0,    /* row 0: NaN on an allowed key */
                       1, 3,   2, NAN,  /* row 1: NaN on the padding key */
                       0, 1,   2, 3};   /* row 2: finite */
    float p[12], lse[3], clean_p[12], clean_lse[3];
    double ref_p[12], p_bound[12], ref_lse[3], lse_bound[3];
    attn_model_softmax(s, p, lse, d, FA_MASK_NONE, length);
    FA_EXPECT(t, isnan(p[0]) && isnan(p[1]) && isnan(p[2]) && p[3] == 0.0f && isnan(lse[0]),
              "a NaN allowed score: p %g %g %g %g, lse %g (want NaN NaN NaN 0, NaN)",
              (double)p[0], (double)p[1], (double)p[2], (double)p[3], (double)lse[0]);
    float clean[12];
    memcpy(clean, s, sizeof clean);
    clean[7] = -1000; /* another value where the padding is: nothing may change */
    attn_model_softmax(clean, clean_p, clean_lse, d, FA_MASK_NONE, length);
    FA_EXPECT(t, memcmp(p + 4, clean_p + 4, 8 * sizeof(float)) == 0 &&
                     memcmp(lse + 1, clean_lse + 1, 2 * sizeof(float)) == 0 && isfinite(lse[1]),
              "a NaN padding score is never read");
    FA_EXPECT(t, softmax_rows_reference(s, d, FA_MASK_NONE, length, ref_p, p_bound, ref_lse,
                                        lse_bound) == FA_OK,
              "the softmax reference, NaN row included: %s", fa_last_error());
    fa_check_report r;
    FA_EXPECT(t, fa_check_covers(p, ref_p, p_bound, 12, &r),
              "model p against the reference, NaN row included (worst ratio %g)", r.worst_ratio);
    FA_EXPECT(t, fa_check_covers(lse, ref_lse, lse_bound, 3, &r),
              "model lse against the reference, NaN row included (worst ratio %g)", r.worst_ratio);
}

/* ==== GPU =================================================================================== */

#if FA_HAVE_CUDA

/** Every milestone check passes on the reference kernels, and there is one for M9..M12. */
static void test_reference_checks(fa_tests *t)
{
    const fa_run_options options = {.seed = SEED, .quick = false};
    FA_EXPECT(t, stage03.number == 3 && stage03.count == 4, "stage03 holds M9..M12 (%d checks)",
              stage03.count);
    FA_EXPECT_REFERENCE_CHECKS(t, &stage03, &options);
}

/**
 * --case reruns exactly the named case (a fixture, a random case), an unknown
 * name runs nothing, and the problem flags make one case of their own: what a
 * learner reproducing a failure relies on. A problem the launcher refuses
 * reports the launcher's error.
 */
static void test_case_selection(fa_tests *t)
{
    fa_run_options options = {.seed = SEED, .case_name = "fixture uniform logits (bf16)"};
    fa_result result = fa_stage_check(&stage03, 9, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, result.outcome == FA_OUTCOME_PASSED && result.cases == 1,
              "--case must run exactly its fixture: %s, %d cases", result.detail, result.cases);
    options.case_name = "random 1 B=1 H=1 Nq=31 Nk=33 D=7 bf16 none";
    result = fa_stage_check(&stage03, 9, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, result.outcome == FA_OUTCOME_PASSED && result.cases == 1,
              "--case must run exactly its random case: %s, %d cases", result.detail,
              result.cases);
    options.case_name = "workspace larger than the device Nq=Nk=2^20";
    result = fa_stage_check(&stage03, 12, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, result.outcome == FA_OUTCOME_PASSED && result.cases == 1,
              "--case must run the refusal alone: %s, %d cases", result.detail, result.cases);
    options.case_name = "no such case";
    result = fa_stage_check(&stage03, 10, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, result.cases == 0, "an unknown --case must run nothing (%d cases)",
              result.cases);

    options.case_name = NULL;
    options.problem.given = FA_PROBLEM_NQ | FA_PROBLEM_NK | FA_PROBLEM_D | FA_PROBLEM_MASK;
    options.problem.nq = 113;
    options.problem.nk = 203;
    options.problem.d = 64;
    options.problem.mask = FA_MASK_CAUSAL_TOP_LEFT;
    result = fa_stage_check(&stage03, 12, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, result.outcome == FA_OUTCOME_PASSED && result.cases == 1,
              "--nq 113 --nk 203 --d 64 --mask causal must run its one case: %s, %d cases",
              result.detail, result.cases);
    options.problem.given = FA_PROBLEM_NQ | FA_PROBLEM_NK | FA_PROBLEM_MASK;
    options.problem.mask = FA_MASK_CAUSAL_BOTTOM_RIGHT;
    result = fa_stage_check(&stage03, 10, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, result.outcome == FA_OUTCOME_PASSED && result.cases == 1,
              "M10 --nq 113 --nk 203 --mask causal-bottom-right: %s, %d cases", result.detail,
              result.cases);
    options.case_name = "flags B=1 H=2 Nq=113 Nk=203 D=64 fp32 causal-bottom-right";
    options.problem.given = FA_PROBLEM_NQ | FA_PROBLEM_NK | FA_PROBLEM_MASK;
    result = fa_stage_check(&stage03, 10, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, result.outcome == FA_OUTCOME_PASSED && result.cases == 1,
              "the flags' case is named as a failure would print it: %s, %d cases",
              result.detail, result.cases);
    options.case_name = NULL;
    options.problem.given = FA_PROBLEM_D;
    options.problem.d = 300;
    result = fa_stage_check(&stage03, 9, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, result.outcome == FA_OUTCOME_ERROR && strstr(result.detail, "1 .. 256") != NULL,
              "--d 300 reports the launcher's refusal: %s", result.detail);
}

/** Device copies of a host problem's inputs (and key lengths). */
typedef struct device_problem {
    void *q, *k, *v, *key_length;
} device_problem;

static fa_status upload_problem(const host_problem *hp, device_problem *dp)
{
    const size_t in = (size_t)fa_dtype_size(hp->dtype);
    memset(dp, 0, sizeof *dp);
    FA_TRY(fa_device_copy_of(&dp->q, hp->q, attn_count_q(hp->dims) * in));
    FA_TRY(fa_device_copy_of(&dp->k, hp->k, attn_count_kv(hp->dims) * in));
    FA_TRY(fa_device_copy_of(&dp->v, hp->v, attn_count_kv(hp->dims) * in));
    if (hp->key_length != NULL)
        FA_TRY(fa_device_copy_of(&dp->key_length, hp->key_length,
                                 (size_t)hp->dims.batch * sizeof(int64_t)));
    return FA_OK;
}

static void free_device_problem(device_problem *dp)
{
    fa_device_free(dp->q);
    fa_device_free(dp->k);
    fa_device_free(dp->v);
    fa_device_free(dp->key_length);
    memset(dp, 0, sizeof *dp);
}

/** Index of the first element whose bits differ, or -1. */
static int64_t first_bit_difference(const float *a, const float *b, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        if (!fa_same_bits(a[i], b[i]))
            return i;
    return -1;
}

/**
 * The scores and PV kernels are FMA chains in the model's order: bit for bit
 * equal to it. The softmax in place equals the softmax out of place.
 */
static void test_bitwise_and_in_place(fa_tests *t)
{
    const naive_attn_dims d = {2, 2, 45, 70, 72};
    const fa_dtype dtypes[] = {FA_F32, FA_BF16};
    for (int di = 0; di < 2; ++di) {
        host_problem hp = random_problem(d, dtypes[di], FA_MASK_CAUSAL_TOP_LEFT, true, 3,
                                         200 + di);
        const char *dt = fa_dtype_name(hp.dtype);
        const size_t s_bytes = attn_count_s(d) * sizeof(float);
        const size_t o_bytes = attn_count_q(d) * sizeof(float);
        const size_t lse_bytes = attn_count_rows(d) * sizeof(float);
        float *want_s = fa_new_floats(attn_count_s(d)), *want_o = fa_new_floats(attn_count_q(d));
        float *got_s = fa_new_floats(attn_count_s(d)), *got_p = fa_new_floats(attn_count_s(d));
        float *got_o = fa_new_floats(attn_count_q(d)), *got_lse = fa_new_floats(attn_count_rows(d));
        float *got_lse2 = fa_new_floats(attn_count_rows(d));
        device_problem dp;
        void *s = NULL, *s2 = NULL, *p = NULL, *o = NULL, *lse = NULL, *lse2 = NULL;
        fa_status status = upload_problem(&hp, &dp);
        void **buffers[] = {&s, &s2, &p, &o, &lse, &lse2};
        const size_t sizes[] = {s_bytes, s_bytes, s_bytes, o_bytes, lse_bytes, lse_bytes};
        for (int b = 0; b < 6 && status == FA_OK; ++b)
            status = fa_device_alloc(buffers[b], sizes[b]);
        if (status == FA_OK)
            status = ref_attn_scores(dp.q, dp.k, s, hp.dtype, d, 0, 0);
        if (status == FA_OK)
            status = fa_download(got_s, s, s_bytes);
        if (status == FA_OK)
            status = fa_upload(s2, got_s, s_bytes);
        if (status == FA_OK)
            status = ref_softmax_rows(s, p, lse, d, hp.mask, dp.key_length, 0);
        if (status == FA_OK)
            status = ref_softmax_rows(s2, s2, lse2, d, hp.mask, dp.key_length, 0);
        if (status == FA_OK)
            status = ref_attn_pv(p, dp.v, o, hp.dtype, d, 0);
        if (FA_EXPECT(t, status == FA_OK, "%s: %s", dt, fa_last_error())) {
            FA_EXPECT(t,
                      fa_download(got_p, p, s_bytes) == FA_OK &&
                          fa_download(got_lse, lse, lse_bytes) == FA_OK &&
                          fa_download(got_o, o, o_bytes) == FA_OK,
                      "%s: downloading p, lse and o: %s", dt, fa_last_error());
            attn_model_scores(hp.q, hp.k, hp.dtype, d, 0, want_s);
            int64_t at = first_bit_difference(got_s, want_s, attn_count_s(d));
            FA_EXPECT(t, at < 0, "%s: GPU score %lld differs from the model", dt, (long long)at);
            attn_model_pv(got_p, hp.v, hp.dtype, d, FA_MASK_NONE, NULL, want_o);
            at = first_bit_difference(got_o, want_o, attn_count_q(d));
            FA_EXPECT(t, at < 0, "%s: GPU PV %lld differs from the model", dt, (long long)at);
            FA_EXPECT(t,
                      fa_download(got_s, s2, s_bytes) == FA_OK &&
                          fa_download(got_lse2, lse2, lse_bytes) == FA_OK,
                      "%s: downloading the in-place softmax: %s", dt, fa_last_error());
            at = first_bit_difference(got_s, got_p, attn_count_s(d));
            FA_EXPECT(t, at < 0, "%s: in-place softmax element %lld differs", dt, (long long)at);
            at = first_bit_difference(got_lse2, got_lse, attn_count_rows(d));
            FA_EXPECT(t, at < 0, "%s: in-place lse %lld differs", dt, (long long)at);
        }
        for (int b = 0; b < 6; ++b)
            fa_device_free(*buffers[b]);
        free_device_problem(&dp);
        free(want_s), free(want_o), free(got_s), free(got_p), free(got_o), free(got_lse);
        free(got_lse2);
        free_problem(&hp);
    }
}

/** A kernel that skips the last query row leaves poison there, and the judge sees it. */
static void test_unwritten_detected(fa_tests *t)
{
    const naive_attn_dims d = {1, 1, 33, 40, 16};
    host_problem hp = random_problem(d, FA_F32, FA_MASK_NONE, false, 1, 210);
    device_problem dp;
    void *s = NULL;
    float *got = fa_new_floats(attn_count_s(d));
    double *want = fa_new_doubles(attn_count_s(d)), *bound = fa_new_doubles(attn_count_s(d));
    naive_attn_dims short_dims = d;
    short_dims.nq = d.nq - 1;
    fa_status status = upload_problem(&hp, &dp);
    if (status == FA_OK)
        status = fa_device_alloc(&s, attn_count_s(d) * sizeof(float));
    if (status == FA_OK)
        status = fa_device_poison(s, attn_count_s(d) * sizeof(float));
    if (status == FA_OK)
        status = ref_attn_scores(dp.q, dp.k, s, FA_F32, short_dims, 0, 0);
    if (status == FA_OK)
        status = fa_download(got, s, attn_count_s(d) * sizeof(float));
    if (FA_EXPECT(t, status == FA_OK, "%s", fa_last_error())) {
        FA_EXPECT(t, attn_scores_reference(hp.q, hp.k, FA_F32, d, 0, want, bound) == FA_OK,
                  "the scores reference: %s", fa_last_error());
        fa_check_report r;
        const bool covered = fa_check_covers(got, want, bound, attn_count_s(d), &r);
        FA_EXPECT(t, !covered && r.unwritten == d.nk,
                  "a missing last row: covered %d, %lld unwritten (expected %lld)", covered,
                  (long long)r.unwritten, (long long)d.nk);
    }
    fa_device_free(s);
    free_device_problem(&dp);
    free(got), free(want), free(bound);
    free_problem(&hp);
}

/** Runs ref_attn_naive on @p hp (inputs possibly edited) into host o and lse. */
static fa_status naive_on_gpu(const host_problem *hp, float *o, float *lse)
{
    device_problem dp;
    void *d_o = NULL, *d_lse = NULL;
    const size_t o_bytes = attn_count_q(hp->dims) * sizeof(float);
    const size_t lse_bytes = attn_count_rows(hp->dims) * sizeof(float);
    fa_status status = upload_problem(hp, &dp);
    if (status == FA_OK)
        status = fa_device_alloc(&d_o, o_bytes);
    if (status == FA_OK)
        status = fa_device_alloc(&d_lse, lse_bytes);
    if (status == FA_OK)
        status = ref_attn_naive(dp.q, dp.k, dp.v, d_o, d_lse, hp->dtype, hp->dims, hp->scale,
                                hp->mask, dp.key_length, 0);
    if (status == FA_OK)
        status = fa_download(o, d_o, o_bytes);
    if (status == FA_OK)
        status = fa_download(lse, d_lse, lse_bytes);
    fa_device_free(d_o);
    fa_device_free(d_lse);
    free_device_problem(&dp);
    return status;
}

/** Sets row @p row of a [rows][dim] fp32 tensor to @p value. */
static void fill_row(void *x, int64_t row, int64_t dim, float value)
{
    for (int64_t c = 0; c < dim; ++c)
        ((float *)x)[row * dim + c] = value;
}

/** How many elements of row @p row ([rows][dim]) are NaN. */
static int64_t nan_count(const float *x, int64_t row, int64_t dim)
{
    int64_t n = 0;
    for (int64_t c = 0; c < dim; ++c)
        n += isnan(x[row * dim + c]);
    return n;
}

/**
 * NaN propagates to exactly the rows it should: a NaN query row to its own
 * row; a NaN key row to the rows that may see that key (causal top-left:
 * rows i >= j), not to the others.
 */
static void test_nan_propagation(fa_tests *t)
{
    const naive_attn_dims d = {1, 1, 16, 16, 32};
    const int64_t nan_query = 3, nan_key = 5;
    float *o = fa_new_floats(attn_count_q(d)), *lse = fa_new_floats(attn_count_rows(d));

    host_problem hp = random_problem(d, FA_F32, FA_MASK_CAUSAL_TOP_LEFT, false, 1, 220);
    fill_row(hp.q, nan_query, d.head_dim, NAN);
    if (FA_EXPECT(t, naive_on_gpu(&hp, o, lse) == FA_OK, "%s", fa_last_error())) {
        int64_t wrong = 0;
        for (int64_t i = 0; i < d.nq; ++i) {
            const bool poisoned = i == nan_query;
            wrong += nan_count(o, i, d.head_dim) != (poisoned ? d.head_dim : 0);
            wrong += isnan(lse[i]) != poisoned;
        }
        FA_EXPECT(t, wrong == 0, "a NaN in query row %lld: %lld rows wrong", (long long)nan_query,
                  (long long)wrong);
    }
    free_problem(&hp);

    hp = random_problem(d, FA_F32, FA_MASK_CAUSAL_TOP_LEFT, false, 1, 221);
    fill_row(hp.k, nan_key, d.head_dim, NAN);
    if (FA_EXPECT(t, naive_on_gpu(&hp, o, lse) == FA_OK, "%s", fa_last_error())) {
        int64_t wrong = 0;
        for (int64_t i = 0; i < d.nq; ++i) {
            const bool poisoned = i >= nan_key;
            wrong += nan_count(o, i, d.head_dim) != (poisoned ? d.head_dim : 0);
            wrong += isnan(lse[i]) != poisoned;
        }
        FA_EXPECT(t, wrong == 0, "a NaN in key row %lld: %lld rows wrong", (long long)nan_key,
                  (long long)wrong);
    }
    free_problem(&hp);
    free(o), free(lse);
}

/** NaN in the padding rows of k and v changes nothing: padding keys are never used. */
static void test_padding_never_used(fa_tests *t)
{
    const naive_attn_dims d = {2, 1, 8, 16, 32};
    const int64_t length[] = {10, 16};
    float *o = fa_new_floats(attn_count_q(d)), *lse = fa_new_floats(attn_count_rows(d));
    float *o_nan = fa_new_floats(attn_count_q(d)), *lse_nan = fa_new_floats(attn_count_rows(d));
    host_problem hp = random_problem(d, FA_F32, FA_MASK_NONE, true, 1, 230);
    memcpy(hp.key_length, length, sizeof length);
    for (int64_t j = length[0]; j < d.nk; ++j) {
        fill_row(hp.k, j, d.head_dim, 0); /* batch 0's padding rows */
        fill_row(hp.v, j, d.head_dim, 0);
    }
    fa_status status = naive_on_gpu(&hp, o, lse);
    for (int64_t j = length[0]; j < d.nk; ++j) {
        fill_row(hp.k, j, d.head_dim, NAN);
        fill_row(hp.v, j, d.head_dim, NAN);
    }
    if (status == FA_OK)
        status = naive_on_gpu(&hp, o_nan, lse_nan);
    if (FA_EXPECT(t, status == FA_OK, "%s", fa_last_error())) {
        int64_t nans = 0;
        for (int64_t e = 0; e < attn_count_q(d); ++e)
            nans += isnan(o_nan[e]);
        FA_EXPECT(t, nans == 0 && first_bit_difference(o, o_nan, attn_count_q(d)) < 0 &&
                         first_bit_difference(lse, lse_nan, attn_count_rows(d)) < 0,
                  "NaN padding rows leaked: %lld NaN outputs", (long long)nans);
    }
    free(o), free(lse), free(o_nan), free(lse_nan);
    free_problem(&hp);
}

/** The NaN-in-v case on the GPU: the same NaN elements as the reference, no other. */
static void test_nan_v_gpu(fa_tests *t)
{
    host_problem hp = nan_v_problem();
    float o[NAN_V_ROWS * NAN_V_DIM], lse[NAN_V_ROWS];
    if (FA_EXPECT(t, naive_on_gpu(&hp, o, lse) == FA_OK, "%s", fa_last_error())) {
        double o_wide[NAN_V_ROWS * NAN_V_DIM], lse_wide[NAN_V_ROWS];
        for (int e = 0; e < NAN_V_ROWS * NAN_V_DIM; ++e)
            o_wide[e] = o[e];
        for (int i = 0; i < NAN_V_ROWS; ++i)
            lse_wide[i] = lse[i];
        const int64_t wrong = nan_v_wrong(o_wide, lse_wide);
        FA_EXPECT(t, wrong == 0,
                  "attn_naive: NaN in v of an allowed key whose fp32 weight is 0 must make "
                  "column 0 of rows 1..3 NaN, the NaN padding key nothing: %lld elements wrong",
                  (long long)wrong);
    }
    free_problem(&hp);
}

#endif /* FA_HAVE_CUDA */

int main(int argc, char **argv)
{
    static const fa_test_fn cpu[] = {
        test_fixture_inputs_exact,
        test_fixtures_against_references,
        test_model_on_fixtures,
        test_model_random,
        test_allowed_keys_prefix,
        test_softmax_shift_invariance,
        test_softmax_neg_inf,
        test_softmax_nan_score,
        test_attention_permutation_invariance,
        test_pv_scales_with_v,
        test_nan_v_reference,
        test_counts,
        test_mutations,
        test_bad_scores,
        test_bad_softmax,
        test_bad_pv,
        test_bad_naive,
        test_overflow_boundaries,
        test_driver_flags,
    };
#if FA_HAVE_CUDA
    static const fa_test_fn gpu[] = {
        test_reference_checks,   test_case_selection,    test_bitwise_and_in_place,
        test_unwritten_detected, test_nan_propagation,   test_padding_never_used,
        test_nan_v_gpu,
    };
    const fa_test_suite suite = {"test_stage03", cpu, FA_COUNT_OF(cpu), gpu, FA_COUNT_OF(gpu),
                                 fa_gpu_gate};
#else
    const fa_test_suite suite = {"test_stage03", cpu, FA_COUNT_OF(cpu), NULL, 0, NULL};
#endif
    return fa_test_main(argc, argv, &suite);
}
