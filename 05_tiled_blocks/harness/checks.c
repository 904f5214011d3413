/**
 * @file checks.c
 * @brief The GPU checks of M17-M22 (both versions), their probes and
 *        timings: the stage as its driver sees it (checks.h).
 *
 * Every case has a name the failure line prints and `--case` takes
 * ("v1 fixture 'ragged'", "v2 random 4 nq=113 nk=203 d=64 bf16") and seeds
 * its own random stream from (seed, milestone, version, case index), so it
 * reruns alone with the same inputs. Inputs are followed by NaN canaries,
 * outputs are poisoned (an element never written is reported as such) and
 * followed by poisoned canaries (a write past the end fails the case).
 */
#include "checks.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa_attention_ref.h"
#include "fa_check.h"
#include "fa_device.h"
#include "fa_index.h"
#include "fa_rng.h"
#include "fa_timing.h"
#include "fixtures.h"
#include "model.h"
#include "runners.h"

enum { FIRST_MILESTONE = 17, VERSIONS = 2 };

/* ---- the cases ---------------------------------------------------------------------------- */

/** A random problem: its shape; the spread of its scores and where its maxima sit vary by index. */
typedef struct case_spec {
    int64_t heads, nq, nk, d;
    fa_dtype dtype;
} case_spec;

/*
 * Shapes around the tile sizes: BR - 1, BR, BR + 1 query rows (BR = 64 in both versions),
 * BC - 1, BC, BC + 1 keys (BC = 32 or 64), single rows and keys, and ragged sizes whose
 * last tiles are partial in both directions; every head dimension each version takes.
 */
static const case_spec V1_CASES[] = {
    {1, 1, 1, 1, FA_F32},     {2, 63, 31, 37, FA_BF16},  {1, 64, 32, 64, FA_F16},
    {3, 65, 33, 128, FA_F32}, {2, 113, 203, 64, FA_BF16}, {1, 127, 513, 256, FA_F32},
    {2, 1, 97, 37, FA_F16},   {1, 130, 1, 1, FA_BF16},   {1, 64, 64, 128, FA_F16},
};
static const case_spec V1_LARGE_CASES[] = {
    {2, 300, 1000, 128, FA_F16}, {1, 1000, 300, 256, FA_F32}, {4, 513, 2049, 64, FA_BF16},
};
static const case_spec V2_CASES[] = {
    {1, 1, 1, 8, FA_BF16},     {2, 63, 63, 40, FA_F16},    {1, 64, 64, 64, FA_BF16},
    {3, 65, 65, 96, FA_F16},   {2, 113, 203, 64, FA_BF16}, {1, 127, 513, 128, FA_F16},
    {2, 1, 130, 8, FA_BF16},   {1, 130, 1, 40, FA_F16},    {1, 64, 128, 128, FA_BF16},
};
static const case_spec V2_LARGE_CASES[] = {
    {2, 300, 1000, 128, FA_BF16}, {1, 1000, 300, 96, FA_F16}, {4, 513, 2049, 64, FA_BF16},
};

/** Score spreads (standard deviation of the scaled scores) the random cases cycle through. */
static const double SPREADS[] = {0.3, 1.0, 3.0, 8.0};

/** The problem of the flags when a field is not given: a ragged one, both tile grids partial. */
enum { FLAG_HEADS = 2, FLAG_NQ = 100, FLAG_NK = 77, FLAG_D = 64 };

/** The dtype a version runs when none is given: fp32 for version 1, bf16 for version 2. */
static fa_dtype default_dtype(int version)
{
    return version == 1 ? FA_F32 : FA_BF16;
}

static int random_case_count(const fa_run_options *options, int version)
{
    if (options->problem.given != 0)
        return 1;
    const int small = version == 1 ? FA_COUNT_OF(V1_CASES) : FA_COUNT_OF(V2_CASES);
    const int large = version == 1 ? FA_COUNT_OF(V1_LARGE_CASES) : FA_COUNT_OF(V2_LARGE_CASES);
    return small + (options->quick ? 0 : large);
}

static case_spec random_case_spec(const fa_run_options *options, int version, int index)
{
    if (options->problem.given != 0) {
        const fa_problem *p = &options->problem;
        return (case_spec){fa_problem_get(p, FA_PROBLEM_HEADS, FLAG_HEADS),
                           fa_problem_get(p, FA_PROBLEM_NQ, FLAG_NQ),
                           fa_problem_get(p, FA_PROBLEM_NK, FLAG_NK),
                           fa_problem_get(p, FA_PROBLEM_D, FLAG_D),
                           fa_problem_has(p, FA_PROBLEM_DTYPE) ? p->dtype : default_dtype(version)};
    }
    const case_spec *small = version == 1 ? V1_CASES : V2_CASES;
    const case_spec *large = version == 1 ? V1_LARGE_CASES : V2_LARGE_CASES;
    const int small_count = version == 1 ? FA_COUNT_OF(V1_CASES) : FA_COUNT_OF(V2_CASES);
    return index < small_count ? small[index] : large[index - small_count];
}

/** The random stream of case @p index of version @p version of milestone @p milestone. */
static void case_rng(fa_rng *rng, const fa_run_options *options, int milestone, int version,
                     int index)
{
    fa_rng_seed(rng, options->seed,
                ((uint64_t)milestone << 32) | ((uint64_t)version << 16) | (uint64_t)index);
}

/* ---- running a trace, judging an array ---------------------------------------------------- */

/**
 * Runs the trace of @p milestone on the case's inputs into @p out (zeroed
 * first, freed by the caller). False, with @p result filled, when it fails
 * or writes past the end of an output; @p earlier marks a trace the check
 * only builds on, so that its failure is not mistaken for the milestone's.
 */
static bool run_trace(fa_result *result, const char *name, fa_impl impl, int milestone,
                      int version, const tile_problem *p, bool earlier, tile_outputs *out)
{
    *out = (tile_outputs){0};
    const tile_sizes sizes = tile_sizes_of(milestone, version, p);
    if (!fa_result_status(result, name, tile_outputs_alloc(out, &sizes)))
        return false;
    int64_t overwritten = 0;
    if (!fa_result_status(result, name,
                          tile_run_on_host(impl, milestone, version, p, &sizes, out, &overwritten)))
        return false;
    if (overwritten > 0) {
        fa_result_fail(result, name,
                       "the M%d trace%s wrote %lld canary bytes past the end of an output",
                       milestone, earlier ? " this check builds on" : "", (long long)overwritten);
        return false;
    }
    return true;
}

/**
 * An earlier milestone's output the judge builds on must be whole: an
 * unwritten element would be judged as a NaN input. False, naming the first
 * one, otherwise.
 */
static bool written(fa_result *result, const char *name, int milestone, const char *array,
                    const float *x, const fa_shape *shape)
{
    const int64_t count = fa_shape_count(shape);
    for (int64_t i = 0; i < count; ++i)
        if (fa_is_poison(x[i])) {
            char where[128];
            fa_result_fail(result, name,
                           "the M%d trace this check builds on left %s unwritten at %s: make M%d "
                           "pass first",
                           milestone, array, fa_shape_format(shape, i, where, sizeof where),
                           milestone);
            return false;
        }
    return true;
}

/** Judges @p got against @p ref under @p bound (NULL: bit for bit); the detail names @p array. */
static bool judge_array(fa_result *result, const char *name, const char *array, const float *got,
                        const double *ref, const double *bound, const fa_shape *shape)
{
    fa_check_report report;
    return fa_check_covers(got, ref, bound, fa_shape_count(shape), &report) ||
           fa_result_uncovered(result, name, array, &report, shape);
}

/** A reference and a bound of @p count doubles (at least one each). */
typedef struct expected {
    double *ref, *bound;
} expected;

static void expected_free(expected *e)
{
    free(e->ref);
    free(e->bound);
    *e = (expected){0};
}

static bool expected_alloc(expected *e, int64_t count, fa_result *result, const char *name)
{
    const size_t n = (size_t)(count > 0 ? count : 1);
    e->ref = malloc(n * sizeof(double));
    e->bound = malloc(n * sizeof(double));
    if (e->ref && e->bound)
        return true;
    expected_free(e);
    return fa_result_status(result, name,
                            fa_fail(FA_ERR_OUT_OF_MEMORY, "stage05: no host memory for %lld "
                                                          "expected values",
                                    (long long)count));
}

/* ---- one case of each milestone ------------------------------------------------------------ */

/** The widened tile array of the trace: fp32 as written (version 1), or 16-bit values widened. */
static void widen_tiles(int version, fa_dtype dtype, const void *tiles, int64_t count, float *out)
{
    for (int64_t i = 0; i < count; ++i)
        out[i] = fa_load_or_poison(tiles, version == 1 ? FA_F32 : dtype, i);
}

/** M17: one tile array against its input, bit for bit, padding rows 0. */
static bool judge_tiles(fa_result *result, const char *name, int version, const tile_problem *p,
                        const char *array, const void *tiles, const void *input, int64_t rows,
                        int64_t padded_rows)
{
    const fa_shape shape = tile_shape(p->heads, padded_rows, p->d, "col");
    const int64_t count = fa_shape_count(&shape);
    expected e = {0};
    float *got = malloc((size_t)(count > 0 ? count : 1) * sizeof(float));
    bool ok = got != NULL && expected_alloc(&e, count, result, name);
    if (got == NULL)
        fa_result_status(result, name, fa_fail(FA_ERR_OUT_OF_MEMORY, "stage05: no host memory"));
    if (ok) {
        widen_tiles(version, p->dtype, tiles, count, got);
        judge_tile_load(p, input, rows, padded_rows, e.ref);
        ok = judge_array(result, name, array, got, e.ref, NULL, &shape);
    }
    free(got);
    expected_free(&e);
    return ok;
}

static bool case_load(fa_result *result, const char *name, fa_impl impl, int version,
                      const tile_problem *p)
{
    tile_outputs out;
    bool ok = run_trace(result, name, impl, 17, version, p, false, &out);
    const tile_sizes s = tile_sizes_of(17, version, p);
    if (ok && s.q_tiles > 0)
        ok = judge_tiles(result, name, version, p, "q_tiles", out.q_tiles, p->q, p->nq,
                         tile_query_tiles(version, p->nq) * tile_rows(version));
    const int64_t padded_keys = s.key_tiles * tile_keys(version);
    if (ok && s.k_tiles > 0)
        ok = judge_tiles(result, name, version, p, "k_tiles", out.k_tiles, p->k, p->nk, padded_keys) &&
             judge_tiles(result, name, version, p, "v_tiles", out.v_tiles, p->v, p->nk, padded_keys);
    tile_outputs_free(&out);
    return ok;
}

/** The shape of scores and weights ("key"), or of the per-tile arrays ("tile"). */
static fa_shape keys_shape(int version, const tile_problem *p)
{
    return tile_shape(p->heads, p->nq, tile_key_tiles(version, p->nk) * tile_keys(version), "key");
}

static fa_shape tiles_shape(int version, const tile_problem *p)
{
    return tile_shape(p->heads, p->nq, tile_key_tiles(version, p->nk), "tile");
}

/**
 * M18. @p exact (the fixtures: small integers, exact in every accumulation)
 * compares by value with bound 0 instead of the dot-product bound.
 */
static bool case_scores(fa_result *result, const char *name, fa_impl impl, int version,
                        const tile_problem *p, bool exact)
{
    const fa_shape shape = keys_shape(version, p);
    tile_outputs out;
    expected e = {0};
    bool ok = run_trace(result, name, impl, 18, version, p, false, &out) &&
              expected_alloc(&e, fa_shape_count(&shape), result, name);
    if (ok) {
        judge_scores(version, p, e.ref, e.bound);
        if (exact)
            for (int64_t i = 0; i < fa_shape_count(&shape); ++i)
                e.bound[i] = 0.0;
        ok = judge_array(result, name, "scores", out.scores, e.ref, e.bound, &shape);
    }
    expected_free(&e);
    tile_outputs_free(&out);
    return ok;
}

/** M19: the running max of the implementation's own M18 scores, exactly. */
static bool case_max(fa_result *result, const char *name, fa_impl impl, int version,
                     const tile_problem *p)
{
    const fa_shape scores = keys_shape(version, p), maxima = tiles_shape(version, p);
    tile_outputs earlier, out = {0};
    expected e = {0};
    bool ok = run_trace(result, name, impl, 18, version, p, true, &earlier) &&
              written(result, name, 18, "scores", earlier.scores, &scores) &&
              run_trace(result, name, impl, 19, version, p, false, &out) &&
              expected_alloc(&e, fa_shape_count(&maxima), result, name);
    if (ok) {
        judge_running_max(version, p, earlier.scores, e.ref, e.bound);
        ok = judge_array(result, name, "max", out.max, e.ref, e.bound, &maxima);
    }
    expected_free(&e);
    tile_outputs_free(&earlier);
    tile_outputs_free(&out);
    return ok;
}

/** M20: weights and corrections from the implementation's own M18 scores and M19 maxima. */
static bool case_weights(fa_result *result, const char *name, fa_impl impl, int version,
                         const tile_problem *p)
{
    const fa_shape keys = keys_shape(version, p), tiles = tiles_shape(version, p);
    tile_outputs scores, maxima = {0}, out = {0};
    expected w = {0}, a = {0};
    bool ok = run_trace(result, name, impl, 18, version, p, true, &scores) &&
              written(result, name, 18, "scores", scores.scores, &keys) &&
              run_trace(result, name, impl, 19, version, p, true, &maxima) &&
              written(result, name, 19, "max", maxima.max, &tiles) &&
              run_trace(result, name, impl, 20, version, p, false, &out) &&
              expected_alloc(&w, fa_shape_count(&keys), result, name) &&
              expected_alloc(&a, fa_shape_count(&tiles), result, name);
    if (ok) {
        judge_weights(version, p, scores.scores, maxima.max, w.ref, w.bound, a.ref, a.bound);
        ok = judge_array(result, name, "weights", out.weights, w.ref, w.bound, &keys) &&
             judge_array(result, name, "correction", out.correction, a.ref, a.bound, &tiles);
    }
    expected_free(&w);
    expected_free(&a);
    tile_outputs_free(&scores);
    tile_outputs_free(&maxima);
    tile_outputs_free(&out);
    return ok;
}

/** M21: running sums from the implementation's own M20 weights and corrections. */
static bool case_sums(fa_result *result, const char *name, fa_impl impl, int version,
                      const tile_problem *p)
{
    const fa_shape keys = keys_shape(version, p), tiles = tiles_shape(version, p);
    tile_outputs weights, out = {0};
    expected e = {0};
    bool ok = run_trace(result, name, impl, 20, version, p, true, &weights) &&
              written(result, name, 20, "weights", weights.weights, &keys) &&
              written(result, name, 20, "correction", weights.correction, &tiles) &&
              run_trace(result, name, impl, 21, version, p, false, &out) &&
              expected_alloc(&e, fa_shape_count(&tiles), result, name);
    if (ok) {
        judge_sums(version, p, weights.weights, weights.correction, e.ref, e.bound);
        ok = judge_array(result, name, "sum", out.sum, e.ref, e.bound, &tiles);
    }
    expected_free(&e);
    tile_outputs_free(&weights);
    tile_outputs_free(&out);
    return ok;
}

/** M22: o and lse against the double reference under the version's declared method. */
static bool case_output(fa_result *result, const char *name, fa_impl impl, int version,
                        const tile_problem *p)
{
    tile_outputs out;
    if (!run_trace(result, name, impl, 22, version, p, false, &out)) {
        tile_outputs_free(&out);
        return false;
    }
    const fa_attn_problem problem = tile_attn_problem(p);
    const fa_attn_method method = tile_method(version, p->dtype);
    fa_attn_reference ref = {0};
    bool ok = fa_result_status(result, name, fa_attention_reference(&problem, &method, &ref));
    if (ok) {
        fa_check_report o_report, lse_report;
        if (!fa_attention_covers(&ref, out.o, out.lse, &o_report, &lse_report)) {
            const bool o_failed = o_report.uncovered > 0 || o_report.status != FA_OK;
            const fa_shape o_shape = tile_shape(p->heads, p->nq, p->d, "col");
            fa_shape lse_shape = tile_shape(p->heads, p->nq, 1, "col");
            lse_shape.rank = 2;
            ok = fa_result_uncovered(result, name, o_failed ? "o" : "lse",
                                     o_failed ? &o_report : &lse_report,
                                     o_failed ? &o_shape : &lse_shape);
        }
    }
    fa_attn_reference_free(&ref);
    tile_outputs_free(&out);
    return ok;
}

/** One case of milestone @p milestone; false (result filled) on a failure, an error or a TODO. */
static bool run_case(fa_result *result, const char *name, int milestone, fa_impl impl,
                     int version, const tile_problem *p, bool exact)
{
    switch (milestone) {
    case 17: return case_load(result, name, impl, version, p);
    case 18: return case_scores(result, name, impl, version, p, exact);
    case 19: return case_max(result, name, impl, version, p);
    case 20: return case_weights(result, name, impl, version, p);
    case 21: return case_sums(result, name, impl, version, p);
    default: return case_output(result, name, impl, version, p);
    }
}

/* ---- the check of one milestone ---------------------------------------------------------------- */

/**
 * The fixtures (unless problem flags were given) and the random cases of one
 * version; false at the first case that fails, errs or is not implemented.
 */
static bool check_version(int milestone, int version, fa_impl impl, const fa_run_options *options,
                          fa_result *result)
{
    char name[FA_CASE_NAME];
    for (int f = 0; f < tile_fixture_count && options->problem.given == 0; ++f) {
        if (!tile_fixture_runs(f, version))
            continue;
        snprintf(name, sizeof name, "v%d fixture '%s'", version, tile_fixture_name(f));
        if (!fa_case_begin(result, options, name))
            continue;
        tile_fixture x;
        tile_case c = {0};
        bool ok = fa_result_status(result, name, tile_fixture_make(f, version, &x)) &&
                  fa_result_status(result, name, tile_fixture_case(&x, default_dtype(version), &c)) &&
                  run_case(result, name, milestone, impl, version, &c.problem, true);
        tile_case_free(&c);
        tile_fixture_free(&x);
        if (!ok)
            return false;
    }
    for (int i = 0; i < random_case_count(options, version); ++i) {
        const case_spec s = random_case_spec(options, version, i);
        if (options->problem.given != 0)
            snprintf(name, sizeof name, "v%d flags heads=%lld nq=%lld nk=%lld d=%lld %s", version,
                     (long long)s.heads, (long long)s.nq, (long long)s.nk, (long long)s.d,
                     fa_dtype_name(s.dtype));
        else
            snprintf(name, sizeof name, "v%d random %d nq=%lld nk=%lld d=%lld %s", version, i,
                     (long long)s.nq, (long long)s.nk, (long long)s.d, fa_dtype_name(s.dtype));
        if (!fa_case_begin(result, options, name))
            continue;
        fa_rng rng;
        case_rng(&rng, options, milestone, version, i);
        tile_case c = {0};
        const bool ok = fa_result_status(result, name,
                                         tile_random_case(&c, version, s.dtype, s.heads, s.nq, s.nk,
                                                          s.d, SPREADS[i % FA_COUNT_OF(SPREADS)],
                                                          (tile_max_pattern)(i % TILE_MAX_PATTERNS),
                                                          &rng)) &&
                        run_case(result, name, milestone, impl, version, &c.problem, false);
        tile_case_free(&c);
        if (!ok)
            return false;
    }
    return true;
}

/** How each milestone's outputs were judged, for the line of a passing check. */
static const char *const JUDGED[] = {
    "tiles bit for bit, padding rows 0",
    "scores within the dot-product bound, -inf past nk",
    "running max of its own scores, exactly",
    "exp2 of its own arguments within 2.5 ulp, 0 past nk",
    "running sums of its own weights within the gamma_(BC+1) recursion",
    "o and lse within the bound of the declared method",
};

/** What happened to one version of a milestone. */
typedef struct version_outcome {
    int cases;
    bool not_implemented;
    char message[FA_RESULT_DETAIL];
} version_outcome;

/** Appends printf-style text to the string in @p buffer (@p cap bytes), cut at its end. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void append(char *buffer, size_t cap, const char *format, ...)
{
    const size_t used = strlen(buffer);
    if (used + 1 >= cap)
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(buffer + used, cap - used, format, args);
    va_end(args);
}

/**
 * Runs version 1 then version 2 (or the one --version asks for). A failure
 * or an error of either is the verdict. Otherwise a version still marked
 * FA_TODO_VERSION makes the milestone not-implemented, and the detail says
 * what the other version did; with every version run passing, it passes.
 */
static void check_milestone(int milestone, fa_impl impl, const fa_run_options *options,
                            fa_result *result)
{
    version_outcome outcome[VERSIONS + 1] = {{0}};
    for (int version = 1; version <= VERSIONS; ++version) {
        if (options->version != 0 && options->version != version)
            continue;
        const int before = result->cases;
        if (!check_version(milestone, version, impl, options, result)) {
            if (result->outcome != FA_OUTCOME_NOT_IMPLEMENTED)
                return;
            outcome[version].not_implemented = true;
            snprintf(outcome[version].message, sizeof outcome[version].message, "%s",
                     result->detail);
        }
        outcome[version].cases = result->cases - before;
    }

    char passed[FA_RESULT_DETAIL] = "", missing[FA_RESULT_DETAIL] = "";
    for (int version = 1; version <= VERSIONS; ++version) {
        const version_outcome *o = &outcome[version];
        if (o->not_implemented)
            append(missing, sizeof missing, "%s%s", missing[0] ? "; " : "", o->message);
        else if (o->cases > 0)
            append(passed, sizeof passed, "%sversion %d passed (%d cases)", passed[0] ? ", " : "",
                   version, o->cases);
    }
    if (missing[0] != '\0') {
        result->outcome = FA_OUTCOME_NOT_IMPLEMENTED;
        snprintf(result->detail, sizeof result->detail, "%s%s%s", passed, passed[0] ? "; " : "",
                 missing);
        return;
    }
    fa_result_pass(result, "%s: %s", passed, JUDGED[milestone - FIRST_MILESTONE]);
}


/* ---- probes: is the implementation written? (no GPU) ------------------------------------------ */

/**
 * Launches the version asked (--version) or both on an empty problem (no
 * CUDA call). Without --version: FA_OK when at least one version is written
 * (the check then judges it and reports the other); FA_ERR_NOT_IMPLEMENTED
 * with version 1's message when neither is.
 */
static fa_status probe_milestone(int milestone, fa_impl impl, const fa_run_options *options)
{
    const tile_problem empty = {NULL, NULL, NULL, FA_BF16, 0, 0, 0, 64, 1.0f};
    const tile_trace none = {0};
    if (options->version != 0)
        return tile_trace_launch(impl, milestone, options->version, &empty, &none, 0);
    const fa_status first = tile_trace_launch(impl, milestone, 1, &empty, &none, 0);
    if (first == FA_OK)
        return FA_OK;
    char message[FA_RESULT_DETAIL];
    snprintf(message, sizeof message, "%s", fa_last_error());
    const fa_status second = tile_trace_launch(impl, milestone, 2, &empty, &none, 0);
    if (second == FA_OK)
        return FA_OK;
    return fa_fail(first, "%s%s", message,
                   second == FA_ERR_NOT_IMPLEMENTED ? " (version 2 is not implemented either)" : "");
}


/* ---- timing ------------------------------------------------------------------------------------ */

/**
 * The timed problem: 16 heads of 1024 queries and 1024 keys of d 64, or,
 * with problem flags, exactly the problem their case checked.
 */
enum { TIMED_HEADS = 16, TIMED_N = 1024, TIMED_D = 64 };

static tile_problem timed_shape(const fa_run_options *options, int version)
{
    case_spec s = {TIMED_HEADS, TIMED_N, TIMED_N, TIMED_D, default_dtype(version)};
    if (options->problem.given != 0)
        s = random_case_spec(options, version, 0);
    const tile_problem shape = {NULL, NULL, NULL, s.dtype, s.heads, s.nq, s.nk, s.d, 1.0f};
    return shape;
}

/** Median milliseconds of the trace of @p milestone, version @p version, at timed_shape(). */
static fa_status time_version(int milestone, int version, fa_impl impl,
                              const fa_run_options *options, double *milliseconds)
{
    const tile_problem shape = timed_shape(options, version);
    tile_timing t;
    FA_TRY(tile_timing_alloc(&t, impl, milestone, version, &shape, options->seed));
    const fa_timing_options timing = fa_timing_defaults();
    fa_stats stats;
    const fa_status status = fa_time_gpu(tile_timed, &t, &timing, &stats);
    tile_timing_free(&t);
    FA_TRY(status);
    *milliseconds = stats.median;
    return FA_OK;
}

/**
 * The milestone's trace at one size. Both versions run: the time reported
 * (and compared with the reference's) is version 2's, the label adds
 * version 1's; with --version, that version alone.
 */
static fa_status time_milestone(int milestone, fa_impl impl, const fa_run_options *options,
                                double *milliseconds, char *label, size_t cap)
{
    char shape[64];
    if (options->version != 0) {
        FA_TRY(time_version(milestone, options->version, impl, options, milliseconds));
        const tile_problem p = timed_shape(options, options->version);
        tile_shape_label(&p, shape, sizeof shape);
        snprintf(label, cap, "v%d %s", options->version, shape);
        return FA_OK;
    }
    double v1 = 0.0;
    FA_TRY(time_version(milestone, 1, impl, options, &v1));
    FA_TRY(time_version(milestone, 2, impl, options, milliseconds));
    const tile_problem p2 = timed_shape(options, 2), p1 = timed_shape(options, 1);
    tile_shape_label(&p2, shape, sizeof shape);
    snprintf(label, cap, "v2 %s; v1 %s %.3f ms", shape, fa_dtype_name(p1.dtype), v1);
    return FA_OK;
}


/* ---- the stage ----------------------------------------------------------------------------- */

/** The driver's entry points of milestone @p m (fa_milestone_check takes no milestone number). */
#define MILESTONE_ENTRIES(m)                                                              \
    static fa_status probe_##m(fa_impl impl, const fa_run_options *options)              \
    {                                                                                     \
        return probe_milestone(m, impl, options);                                         \
    }                                                                                     \
    static void check_##m(fa_impl impl, const fa_run_options *options, fa_result *result) \
    {                                                                                     \
        check_milestone(m, impl, options, result);                                        \
    }                                                                                     \
    static fa_status time_##m(fa_impl impl, const fa_run_options *options, double *ms,    \
                              char *label, size_t cap)                                    \
    {                                                                                     \
        return time_milestone(m, impl, options, ms, label, cap);                          \
    }
MILESTONE_ENTRIES(17)
MILESTONE_ENTRIES(18)
MILESTONE_ENTRIES(19)
MILESTONE_ENTRIES(20)
MILESTONE_ENTRIES(21)
MILESTONE_ENTRIES(22)
#undef MILESTONE_ENTRIES

static const fa_milestone_check checks[] = {
    {17, probe_17, check_17, time_17, false}, {18, probe_18, check_18, time_18, false},
    {19, probe_19, check_19, time_19, false}, {20, probe_20, check_20, time_20, false},
    {21, probe_21, check_21, time_21, false}, {22, probe_22, check_22, time_22, false},
};

const fa_stage_desc stage05 = {5, checks, FA_COUNT_OF(checks), stage05_bench};
