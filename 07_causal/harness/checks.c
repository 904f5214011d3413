/**
 * @file checks.c
 * @brief The check of M25, its probe and its timing: the stage as its driver
 *        sees it (checks.h).
 *
 * Cases are named as the failure line prints them and `--case` takes them
 * ("fixture 'sentinels 6x4 causal-br' bf16", "grid 17 nq=128 nk=217 d=96
 * fp16 bnhd mqa causal-br"; the library's versions' with "v2 " or "v3 " in
 * front), each with its own random stream from (seed, milestone, version,
 * case index). With problem flags (--mask among them), one case of that
 * problem: version 1's, or the version --version asks for.
 */
#include "checks.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cases.h"
#include "causal.h"
#include "fa_index.h"
#include "fa_rng.h"
#include "judge.h"

/* Version 1 runs the learner's key tiles (the slot); versions 2 and 3 take the same masks in
 * the library, read rather than written: the reference runs them, where the device does. */
enum { M25 = 25, VERSION = 1, VERSIONS = 3 };

flash_launcher causal_forward_of(fa_impl impl)
{
    return impl == FA_IMPL_LEARNER ? learner_causal_forward : ref_causal_forward;
}

/** What runs version @p version of @p impl: the stage's launcher, or the library's for 2 and 3. */
static flash_launcher launcher_of(fa_impl impl, int version)
{
    return version == VERSION ? causal_forward_of(impl) : flash_library_forward;
}

/** Version @p version asked of the learner: only version 1 has a slot here. */
static fa_status no_learner_slot(int version)
{
    return fa_fail(FA_ERR_UNSUPPORTED, "version %d takes the masks in the library: it has no "
                                       "learner slot in stage 07; run --impl reference", version);
}

/** Whether version @p version of @p impl runs here: FA_OK, or why not (the error set). */
static fa_status version_runs(fa_impl impl, int version)
{
    if (version == VERSION)
        return FA_OK;
    if (impl == FA_IMPL_LEARNER)
        return no_learner_slot(version);
    return version == 3 ? flash3_device_check() : FA_OK;
}

/** The random stream of case @p index of version @p version (version 1's as they always were). */
static uint64_t case_stream(int version, uint64_t index)
{
    return ((uint64_t)M25 << 32) | ((uint64_t)(version - VERSION) << 24) | index;
}

/** "v2 ", "v3 ": the prefix of the library's versions' case names (version 1's have none). */
static const char *case_prefix(int version)
{
    static const char *const prefixes[] = {"", "", "v2 ", "v3 "};
    return prefixes[version];
}

/** The problem of the flags when one is not given: GQA, ragged, causal bottom-right. */
enum { FLAG_BATCH = 2, FLAG_HEADS = 4, FLAG_HEADS_KV = 2, FLAG_NQ = 100, FLAG_NK = 177, FLAG_D = 64 };

static flash_spec flags_spec(const fa_run_options *options, int version)
{
    const fa_problem *p = &options->problem;
    const int64_t heads = fa_problem_get(p, FA_PROBLEM_HEADS, FLAG_HEADS);
    const flash_spec s = {
        .batch = fa_problem_get(p, FA_PROBLEM_BATCH, FLAG_BATCH),
        .heads_q = heads,
        .heads_kv = fa_problem_get(p, FA_PROBLEM_HEADS_KV,
                                   fa_problem_has(p, FA_PROBLEM_HEADS) ? heads : FLAG_HEADS_KV),
        .nq = fa_problem_get(p, FA_PROBLEM_NQ, FLAG_NQ),
        .nk = fa_problem_get(p, FA_PROBLEM_NK, FLAG_NK),
        .head_dim = fa_problem_get(p, FA_PROBLEM_D, FLAG_D),
        .dtype = fa_problem_has(p, FA_PROBLEM_DTYPE) ? p->dtype
                 : version == VERSION                  ? FA_F32
                                                       : FA_BF16,
        .layout = FLASH_BNHD,
        .lse = true,
        .scores = FLASH_SCORES_SPREAD,
        .spread = 1.0,
        .mask = fa_problem_has(p, FA_PROBLEM_MASK) ? p->mask : FA_MASK_CAUSAL_BOTTOM_RIGHT,
        .window_left = p->window_left,
        .window_right = p->window_right,
    };
    return s;
}

/** Runs one case of version @p version of @p impl and judges it; false when it did not pass. */
static bool run(fa_result *result, const char *name, fa_impl impl, int version, flash_case *c)
{
    return flash_result_run(result, name, launcher_of(impl, version), version, c);
}

bool causal_packed_result(fa_result *result, const char *name, flash_launcher launch, int version,
                          causal_packed *b)
{
    const flash_sizes sizes = flash_sizes_of(&b->call);
    int64_t overwritten = 0;
    causal_packed_poison(b);
    if (!fa_result_status(result, name,
                          flash_run_on_host(launch, version, &b->call, &sizes, &overwritten)) ||
        !fa_result_canaries(result, name, "o or lse", overwritten))
        return false;
    const int64_t outside = causal_packed_outside_written(b);
    if (outside != 0) {
        if (outside < 0)
            return fa_result_status(result, name,
                                    fa_fail(FA_ERR_OUT_OF_MEMORY, "packed case: no host memory"));
        fa_result_fail(result, name,
                       "%lld bytes of o and lse outside every sequence (rows of none, gaps "
                       "between rows) were written",
                       (long long)outside);
        return false;
    }
    causal_packed_scatter(b);
    /* The packed call's method judges every sequence: it is the kernel that ran (a sequence
     * alone, one without keys say, may be a call version 3 refuses). */
    fa_attention_params as_run = b->call;
    as_run.variant = (fa_variant)version;
    fa_attn_method method;
    if (!fa_result_status(result, name, fa_attention_method(&as_run, &method)))
        return false;
    for (int s = 0; s < b->count; ++s) {
        const flash_call *one = &b->seqs[s].call;
        if (one->params.nq == 0)
            continue;
        char seq_name[FA_CASE_NAME];
        snprintf(seq_name, sizeof seq_name, "%s, sequence %d (%lld x %lld)", name, s,
                 (long long)one->params.nq, (long long)one->params.nk);
        if (!flash_result_judge(result, seq_name, one, &method, NULL, one->params.nq))
            return false;
    }
    return true;
}

/** Packed case @p index of version @p version, run by @p launch and judged; false when it did not pass. */
static bool packed_run(fa_result *result, const fa_run_options *options, flash_launcher launch,
                       int version, int index)
{
    const causal_packed_spec spec = causal_packed_case(version, index);
    char name[FA_CASE_NAME];
    const size_t prefix = (size_t)snprintf(name, sizeof name, "%s", case_prefix(version));
    causal_packed_describe(&spec, index, name + prefix, sizeof name - prefix);
    if (!fa_case_begin(result, options, name))
        return true;
    causal_packed b;
    const bool ok =
        fa_result_status(result, name,
                         causal_packed_make(&b, version, index, options->seed,
                                            case_stream(version, (1u << 20) | (uint64_t)index))) &&
        causal_packed_result(result, name, launch, version, &b);
    causal_packed_free(&b);
    return ok;
}

/**
 * One version's cases: version 1's fixtures in fp32 and bf16 (version 2 runs
 * them in stage 07's test; version 3 takes neither fp32 nor their head
 * dimensions), then the version's masked grid and packed batches, or the
 * flags' case; false at the first case that fails, errs or is not
 * implemented.
 */
static bool check_version(int version, fa_impl impl, const fa_run_options *options,
                          fa_result *result)
{
    char name[FA_CASE_NAME];
    static const fa_dtype FIXTURE_DTYPES[] = {FA_F32, FA_BF16};
    for (int f = 0; f < causal_fixture_count && options->problem.given == 0 && version == VERSION;
         ++f)
        for (int t = 0; t < FA_COUNT_OF(FIXTURE_DTYPES); ++t) {
            snprintf(name, sizeof name, "fixture '%s' %s", causal_fixture_name(f),
                     fa_dtype_name(FIXTURE_DTYPES[t]));
            if (!fa_case_begin(result, options, name))
                continue;
            flash_fixture x;
            const bool ok =
                fa_result_status(result, name, causal_fixture_make(f, FIXTURE_DTYPES[t], &x)) &&
                run(result, name, impl, version, &x.c);
            flash_fixture_free(&x);
            if (!ok)
                return false;
        }
    const int count = options->problem.given != 0 ? 1 : causal_grid_count(version, options->quick);
    for (int i = 0; i < count; ++i) {
        const flash_spec s = options->problem.given != 0
                                 ? flags_spec(options, version)
                                 : causal_grid_spec(version, options->quick, i);
        if (options->problem.given != 0)
            snprintf(name, sizeof name, "%sflags batch=%lld heads=%lld/%lld ", case_prefix(version),
                     (long long)s.batch, (long long)s.heads_q, (long long)s.heads_kv);
        else
            snprintf(name, sizeof name, "%sgrid %d ", case_prefix(version), i);
        const size_t prefix = strlen(name);
        flash_spec_describe(&s, name + prefix, sizeof name - prefix);
        if (!fa_case_begin(result, options, name))
            continue;
        if (!fa_result_status(result, name, flash_spec_refusal(&s, version)))
            return false;
        fa_rng rng;
        fa_rng_seed(&rng, options->seed, case_stream(version, (uint64_t)i));
        flash_case c = {0};
        const bool ok =
            fa_result_status(result, name,
                             flash_case_random(&c, &s, version, &rng)) &&
            run(result, name, impl, version, &c);
        flash_case_free(&c);
        if (!ok)
            return false;
    }
    for (int i = 0; i < causal_packed_count(version) && options->problem.given == 0; ++i)
        if (!packed_run(result, options, launcher_of(impl, version), version, i))
            return false;
    return true;
}

/**
 * Version 1, then the library's versions 2 and 3 for the reference (or the
 * one --version asks for; with problem flags, version 1 unless --version
 * asks for another): a failure or an error of any is the verdict. Version 3
 * runs on a device of compute capability 9.0; elsewhere the reference names
 * it as not run, and with --version 3 the reason is the error.
 */
static void check_25(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    char passed[FA_RESULT_DETAIL] = "";
    for (int version = VERSION; version <= VERSIONS; ++version) {
        if (options->version != 0 && options->version != version)
            continue;
        /* The learner's M25 is version 1, and so is a problem of the flags (fp32 unless
         * --dtype says otherwise), unless --version asks for another. */
        if ((impl == FA_IMPL_LEARNER || options->problem.given != 0) && options->version == 0 &&
            version != VERSION)
            continue;
        const fa_status runs = version_runs(impl, version);
        if (runs != FA_OK) {
            if (options->version == version) {
                char name[8];
                snprintf(name, sizeof name, "v%d", version);
                fa_result_status(result, name, runs);
                return;
            }
            char line[FA_RESULT_DETAIL];
            snprintf(line, sizeof line, "version %d not run (%s)", version, fa_last_error());
            fa_detail_append(passed, sizeof passed, ", ", line);
            continue;
        }
        const int before = result->cases;
        if (!check_version(version, impl, options, result))
            return;
        if (result->cases == before)
            continue; /* --case named a case of another version */
        char line[64];
        snprintf(line, sizeof line, "version %d passed (%d cases)", version, result->cases - before);
        fa_detail_append(passed, sizeof passed, ", ", line);
    }
    fa_result_pass(result, "%s: o and lse end to end within the bound, every mask, plain and "
                           "packed batches", passed);
}

/**
 * M25 on an empty call (no CUDA call): FA_OK, or FA_ERR_NOT_IMPLEMENTED from
 * the skeleton; for --version 2 or 3, whether @p impl has that version (the
 * device is the check's to ask).
 */
static fa_status probe_25(fa_impl impl, const fa_run_options *options)
{
    if (options->version > VERSION)
        return impl == FA_IMPL_LEARNER ? no_learner_slot(options->version) : FA_OK;
    const fa_attention_params empty = {.dtype = FA_BF16, .heads_kv = 1, .head_dim = 64,
                                       .mask = FA_MASK_CAUSAL_BOTTOM_RIGHT};
    return causal_forward_of(impl)(VERSION, &empty, 0);
}

/**
 * The timed problem: batch 16, 16 heads of 1024 queries and keys, d 64,
 * causal bottom-right; in fp32 for version 1 (the course's kernel), in bf16
 * for the library's versions 2 and 3, which take no fp32 inputs.
 */
enum { TIMED_BATCH = 16, TIMED_HEADS = 16, TIMED_N = 1024, TIMED_D = 64 };

/** Times the version --version names (version 1 without it) on the timed problem or the flags'. */
static fa_status time_25(fa_impl impl, const fa_run_options *options, double *milliseconds,
                         char *label, size_t cap)
{
    const int version = options->version != 0 ? options->version : VERSION;
    FA_TRY(version_runs(impl, version));
    flash_spec f = flags_spec(options, version);
    if (options->problem.given == 0)
        f = (flash_spec){.batch = TIMED_BATCH, .heads_q = TIMED_HEADS, .heads_kv = TIMED_HEADS,
                         .nq = TIMED_N, .nk = TIMED_N, .head_dim = TIMED_D,
                         .dtype = version == VERSION ? FA_F32 : FA_BF16,
                         .mask = FA_MASK_CAUSAL_BOTTOM_RIGHT};
    const flash_shape shape = {f.batch,    f.heads_q, f.heads_kv,    f.nq,          f.nk,
                               f.head_dim, f.dtype,   f.mask,        f.window_left, f.window_right};
    fa_stats stats;
    FA_TRY(flash_time_shape(launcher_of(impl, version), version, &shape, options->seed, &stats));
    *milliseconds = stats.median;
    char text[96];
    flash_shape_label(&shape, text, sizeof text);
    snprintf(label, cap, "v%d %s", version, text);
    return FA_OK;
}

static const fa_milestone_check checks[] = {
    {25, probe_25, check_25, time_25, false},
};

const fa_stage_desc stage07 = {7, checks, FA_COUNT_OF(checks), stage07_bench};
