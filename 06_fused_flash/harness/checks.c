/**
 * @file checks.c
 * @brief The checks of M23 (both versions) and M24, their probes and the
 *        timing of M23: the stage as its driver sees it (checks.h).
 *
 * Every case of M23 has a name the failure line prints and `--case` takes
 * ("v1 fixture '2-tile'", "v2 grid 17 nq=128 nk=217 d=96 fp16 bnhd mqa")
 * and seeds its own random stream from (seed, milestone, version, case
 * index), so it reruns alone with the same inputs. With problem flags, one
 * case per version of that problem ("v1 flags ..."), no fixtures.
 */
#include "checks.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "battery.h"
#include "fa_index.h"
#include "fa_rng.h"
#include "fixtures.h"
#include "runners.h"

/* Versions 1 and 2 have learner slots; version 3 (sm_90a) is the library's alone. */
enum { M23 = 23, LEARNER_VERSIONS = 2, HOPPER = 3, VERSIONS = 3 };

/** Version 3 asked of the learner: it has no slot (the graduate chapter is read, not written). */
static fa_status no_learner_slot(void)
{
    return fa_fail(FA_ERR_UNSUPPORTED, "version 3 has no learner slot: it is read, not written "
                                       "(flash_3_hopper.cuh); run --impl reference");
}

/** What runs version @p version of @p impl: stage 06's launcher, or the library's for version 3. */
static flash_launcher launcher_of(fa_impl impl, int version)
{
    return version == HOPPER ? flash_library_forward : flash_forward_of(impl);
}

/* ---- the cases of M23 ---------------------------------------------------------------------- */

/**
 * The problem of the flags when a field is not given: GQA, ragged in both
 * directions (neither 100 nor 77 is a multiple of a tile). heads_kv
 * defaults to --heads when only that is given (MHA).
 */
enum { FLAG_BATCH = 2, FLAG_HEADS = 4, FLAG_HEADS_KV = 2, FLAG_NQ = 100, FLAG_NK = 77, FLAG_D = 64 };

/** The dtype a version runs when none is given: fp32 for version 1, bf16 for version 2. */
static fa_dtype default_dtype(int version)
{
    return version == 1 ? FA_F32 : FA_BF16;
}

static flash_spec flags_spec(const fa_run_options *options, int version)
{
    const fa_problem *p = &options->problem;
    const int64_t heads = fa_problem_get(p, FA_PROBLEM_HEADS, FLAG_HEADS);
    const int64_t heads_kv = fa_problem_get(
        p, FA_PROBLEM_HEADS_KV, fa_problem_has(p, FA_PROBLEM_HEADS) ? heads : FLAG_HEADS_KV);
    const flash_spec s = {
        .batch = fa_problem_get(p, FA_PROBLEM_BATCH, FLAG_BATCH),
        .heads_q = heads,
        .heads_kv = heads_kv,
        .nq = fa_problem_get(p, FA_PROBLEM_NQ, FLAG_NQ),
        .nk = fa_problem_get(p, FA_PROBLEM_NK, FLAG_NK),
        .head_dim = fa_problem_get(p, FA_PROBLEM_D, FLAG_D),
        .dtype = fa_problem_has(p, FA_PROBLEM_DTYPE) ? p->dtype : default_dtype(version),
        .layout = FLASH_BNHD,
        .lse = true,
        .scores = FLASH_SCORES_SPREAD,
        .spread = 1.0,
    };
    return s;
}

static int case_count(const fa_run_options *options, int version)
{
    return options->problem.given != 0 ? 1 : flash_grid_count(version, options->quick);
}

static flash_spec case_spec(const fa_run_options *options, int version, int index)
{
    return options->problem.given != 0 ? flags_spec(options, version)
                                        : flash_grid_spec(version, options->quick, index);
}

/** The random stream of case @p index of version @p version of M23. */
static void case_rng(fa_rng *rng, const fa_run_options *options, int version, int index)
{
    fa_rng_seed(rng, options->seed,
                ((uint64_t)M23 << 32) | ((uint64_t)version << 16) | (uint64_t)index);
}

/**
 * The fixtures (unless problem flags were given) and the cases of one
 * version; false at the first case that fails, errs or is not implemented.
 */
static bool check_version(int version, fa_impl impl, const fa_run_options *options,
                          fa_result *result)
{
    char name[FA_CASE_NAME];
    for (int f = 0; f < flash_fixture_count && options->problem.given == 0; ++f) {
        if (version == HOPPER && strcmp(flash_fixture_name(f), "no-keys") == 0)
            continue; /* version 3 needs a key */
        snprintf(name, sizeof name, "v%d fixture '%s'", version, flash_fixture_name(f));
        if (!fa_case_begin(result, options, name))
            continue;
        flash_fixture x;
        const bool ok =
            fa_result_status(result, name,
                             flash_fixture_make(f, flash_block_n(version, 8), default_dtype(version),
                                                &x)) &&
            flash_result_run(result, name, launcher_of(impl, version), version, &x.c);
        flash_fixture_free(&x);
        if (!ok)
            return false;
    }
    for (int i = 0; i < case_count(options, version); ++i) {
        const flash_spec s = case_spec(options, version, i);
        if (options->problem.given != 0)
            snprintf(name, sizeof name, "v%d flags batch=%lld heads=%lld/%lld ", version,
                     (long long)s.batch, (long long)s.heads_q, (long long)s.heads_kv);
        else
            snprintf(name, sizeof name, "v%d grid %d ", version, i);
        const size_t prefix = strlen(name);
        flash_spec_describe(&s, name + prefix, sizeof name - prefix);
        if (!fa_case_begin(result, options, name))
            continue;
        if (!fa_result_status(result, name, flash_spec_refusal(&s, version)))
            return false;
        fa_rng rng;
        case_rng(&rng, options, version, i);
        flash_case c = {0};
        const bool ok =
            fa_result_status(result, name,
                             flash_case_random(&c, &s, version, &rng)) &&
            flash_result_run(result, name, launcher_of(impl, version), version, &c);
        flash_case_free(&c);
        if (!ok)
            return false;
    }
    return true;
}

/**
 * Versions 1, 2 and 3 (or the one --version asks for). A failure or an error
 * of any is the verdict; otherwise a version still marked FA_TODO_VERSION
 * makes M23 not implemented, the detail saying what the others did; with
 * every version run passing, it passes. Version 3 runs for the reference on
 * a device of compute capability 9.0; elsewhere the reference names it as
 * not run, and with --version 3 the reason is the error.
 */
static void check_23(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    char passed[FA_RESULT_DETAIL] = "", missing[FA_RESULT_DETAIL] = "";
    for (int version = 1; version <= VERSIONS; ++version) {
        if (options->version != 0 && options->version != version)
            continue;
        if (version == HOPPER) {
            const fa_status runs = impl == FA_IMPL_LEARNER ? no_learner_slot() : flash3_device_check();
            if (runs != FA_OK) {
                if (options->version == HOPPER) {
                    fa_result_status(result, "v3", runs);
                    return;
                }
                if (impl == FA_IMPL_REFERENCE) { /* the learner has no version 3 to name */
                    char line[FA_RESULT_DETAIL];
                    snprintf(line, sizeof line, "version 3 not run (%s)", fa_last_error());
                    fa_detail_append(passed, sizeof passed, ", ", line);
                }
                continue;
            }
        }
        const int before = result->cases;
        if (check_version(version, impl, options, result)) {
            if (result->cases == before)
                continue; /* --case named a case of the other version */
            char line[64];
            snprintf(line, sizeof line, "version %d passed (%d cases)", version,
                     result->cases - before);
            fa_detail_append(passed, sizeof passed, ", ", line);
        } else if (result->outcome == FA_OUTCOME_NOT_IMPLEMENTED) {
            fa_detail_append(missing, sizeof missing, "; ", result->detail);
        } else {
            return;
        }
    }
    if (missing[0] != '\0') {
        result->outcome = FA_OUTCOME_NOT_IMPLEMENTED;
        result->detail[0] = '\0';
        fa_detail_append(result->detail, sizeof result->detail, "", passed);
        fa_detail_append(result->detail, sizeof result->detail, "; ", missing);
        return;
    }
    fa_result_pass(result, "%s: o and lse end to end within the bound of the declared method",
                   passed);
}

/* ---- probes (no GPU) ------------------------------------------------------------------------ */

/**
 * Launches the version asked (--version; version 3: whether the learner
 * asked for it) or each learner version on an empty call (no CUDA call). Without
 * --version: FA_OK when at least one version is written (the check judges
 * it and reports the other); the first version's FA_ERR_NOT_IMPLEMENTED
 * when neither is.
 */
static fa_status probe_23(fa_impl impl, const fa_run_options *options)
{
    const fa_attention_params empty = {.dtype = FA_BF16, .heads_kv = 1, .head_dim = 64};
    if (options->version == HOPPER) /* the device is the check's to ask */
        return impl == FA_IMPL_LEARNER ? no_learner_slot() : FA_OK;
    if (options->version != 0)
        return flash_forward_of(impl)(options->version, &empty, 0);
    fa_status first = FA_OK;
    char message[FA_RESULT_DETAIL] = "";
    for (int version = 1; version <= LEARNER_VERSIONS; ++version) {
        const fa_status status = flash_forward_of(impl)(version, &empty, 0);
        if (status == FA_OK)
            return FA_OK;
        if (version == 1) {
            first = status;
            snprintf(message, sizeof message, "%s", fa_last_error());
        }
    }
    return fa_fail(first, "%s (version 2 is not implemented either)", message);
}

/** M24 on a valid call of no work: FA_OK, or FA_ERR_NOT_IMPLEMENTED from the skeleton. */
static fa_status probe_24(fa_impl impl, const fa_run_options *options)
{
    (void)options;
    const fa_attention_params empty = {.dtype = FA_BF16, .heads_kv = 1, .head_dim = 64};
    fa_variant chosen;
    return flash_validate(impl, &empty, &chosen);
}

static void check_24(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    flash_battery_check(impl == FA_IMPL_LEARNER ? learner_attention_validate
                                                : ref_attention_validate,
                        options, result);
}

/* ---- timing ------------------------------------------------------------------------------------ */

/** The timed problem: batch 16, 16 heads of 1024 queries and keys, d 64, or the flags' problem. */
enum { TIMED_BATCH = 16, TIMED_HEADS = 16, TIMED_N = 1024, TIMED_D = 64 };

static flash_shape timed_shape(const fa_run_options *options, int version)
{
    if (options->problem.given == 0) {
        const flash_shape s = {TIMED_BATCH, TIMED_HEADS, TIMED_HEADS, TIMED_N, TIMED_N, TIMED_D,
                               default_dtype(version), FA_MASK_NONE, 0, 0};
        return s;
    }
    const flash_spec f = flags_spec(options, version);
    const flash_shape s = {f.batch, f.heads_q, f.heads_kv, f.nq, f.nk, f.head_dim, f.dtype,
                           FA_MASK_NONE, 0, 0};
    return s;
}

/** Median milliseconds of version @p version of @p impl at timed_shape(). */
static fa_status time_version(int version, fa_impl impl, const fa_run_options *options,
                              double *milliseconds)
{
    const flash_shape shape = timed_shape(options, version);
    fa_stats stats;
    FA_TRY(flash_time_shape(launcher_of(impl, version), version, &shape, options->seed, &stats));
    *milliseconds = stats.median;
    return FA_OK;
}

/**
 * M23 at one size: version 2 is the time reported (and compared with the
 * reference's), the label adds version 1's (fp32); with --version, that
 * version alone.
 */
static fa_status time_23(fa_impl impl, const fa_run_options *options, double *milliseconds,
                         char *label, size_t cap)
{
    char shape[64];
    const int shown = options->version != 0 ? options->version : 2;
    FA_TRY(time_version(shown, impl, options, milliseconds));
    const flash_shape s = timed_shape(options, shown);
    flash_shape_label(&s, shape, sizeof shape);
    if (options->version != 0) {
        snprintf(label, cap, "v%d %s", shown, shape);
        return FA_OK;
    }
    double v1 = 0.0;
    FA_TRY(time_version(1, impl, options, &v1));
    snprintf(label, cap, "v2 %s; v1 %s %.3f ms", shape, fa_dtype_name(timed_shape(options, 1).dtype),
             v1);
    return FA_OK;
}

/* ---- the stage ----------------------------------------------------------------------------- */

static const fa_milestone_check checks[] = {
    {23, probe_23, check_23, time_23, false},
    {24, probe_24, check_24, NULL, true},
};

const fa_stage_desc stage06 = {6, checks, FA_COUNT_OF(checks), stage06_bench};
