/**
 * @file fa_stage.c
 * @brief The driver every stage shares: flags, GPU detection, checks, timings.
 *
 * The results it prints are built by fa_result.c, which needs no GPU.
 */
#include "fa_stage.h"

#include <stdio.h>

#include "fa_cli.h"
#include "fa_device.h"
#include "fa_milestones.h"
#include "fa_test.h"

/* ---- the driver ------------------------------------------------------------------------ */

enum { IMPL_REFERENCE, IMPL_LEARNER, IMPL_BOTH };
static const char *const impl_choices[] = {"reference", "learner", "both", NULL};

typedef struct driver_options {
    int impl;
    int64_t milestone;
    int64_t seed;
    bool quick;
    bool bench;
    bool tour;
} driver_options;

typedef struct tally {
    int passed, failed, not_implemented, not_run;
} tally;

static void tally_add(tally *t, fa_outcome outcome)
{
    switch (outcome) {
    case FA_OUTCOME_PASSED: t->passed++; break;
    case FA_OUTCOME_NOT_IMPLEMENTED: t->not_implemented++; break;
    case FA_OUTCOME_NOT_RUN: t->not_run++; break;
    case FA_OUTCOME_FAILED:
    case FA_OUTCOME_ERROR: t->failed++; break;
    }
}

/* Runs one milestone of one implementation; the GPU is touched only when usable. */
static fa_result run_one(const fa_milestone_check *check, fa_impl impl, bool gpu,
                         const fa_run_options *run,
                         double *milliseconds, char *size_label, size_t label_cap)
{
    fa_result result = {FA_OUTCOME_ERROR, ""};
    *milliseconds = -1.0;
    fa_clear_error();
    fa_status probe = check->probe(impl);
    if (probe != FA_OK) {
        fa_result_status(&result, "probe", probe);
        return result;
    }
    if (!gpu) {
        result.outcome = FA_OUTCOME_NOT_RUN;
        snprintf(result.detail, sizeof result.detail, "built, not run: no usable GPU");
        return result;
    }
    check->check(impl, run, &result);
    if (result.outcome == FA_OUTCOME_ERROR) {
        /* A faulting kernel leaves the context unusable: start a fresh one so
         * the remaining milestones still run. */
        cudaDeviceReset();
    } else if (result.outcome == FA_OUTCOME_PASSED && check->time != NULL && !run->quick) {
        if (check->time(impl, run, milliseconds, size_label, label_cap) != FA_OK) {
            *milliseconds = -1.0;
            cudaDeviceReset();
        }
    }
    return result;
}

static void print_line(const fa_milestone_info *info, fa_impl impl, const fa_result *result,
                       double milliseconds, const char *size_label)
{
    const char *word = result->outcome == FA_OUTCOME_FAILED ? "FAILED"
                       : result->outcome == FA_OUTCOME_ERROR ? "ERROR"
                                                              : fa_outcome_name(result->outcome);
    printf("M%-3d %-26s %-9s  %-15s", info->number, info->title, fa_impl_name(impl), word);
    if (milliseconds >= 0.0)
        printf(" %9.4f ms (%s)", milliseconds, size_label);
    printf("  %s\n", result->detail);
    fflush(stdout);
}

static bool contains(const fa_milestone_check *checks, int count, int64_t number)
{
    for (int i = 0; i < count; i++)
        if (checks[i].number == number)
            return true;
    return false;
}

int fa_stage_main(int argc, char **argv, int stage, const fa_milestone_check *checks, int count,
                  fa_stage_bench bench)
{
    driver_options opt = {IMPL_BOTH, 0, 2026, false, false, false};
    const fa_flag flags[] = {
        {"impl", FA_FLAG_CHOICE, &opt.impl, "whose kernels run (both: the learner's where implemented)", 0, 0, impl_choices},
        {"milestone", FA_FLAG_INT, &opt.milestone, "run only milestone N (0: all of the stage)", 0, FA_MILESTONE_COUNT, NULL},
        {"seed", FA_FLAG_INT, &opt.seed, "seed of the random cases", 0, INT64_MAX, NULL},
        {"quick", FA_FLAG_BOOL, &opt.quick, "small cases only (for compute-sanitizer)", 0, 0, NULL},
        {"bench", FA_FLAG_BOOL, &opt.bench, "run the stage's benchmark table instead of the checks", 0, 0, NULL},
        {"tour", FA_FLAG_BOOL, &opt.tour, "print one machine-readable line per learner milestone", 0, 0, NULL},
    };
    char summary[160];
    snprintf(summary, sizeof summary,
             "Stage %02d (%s): checks the reference and the learner's kernels, times them.",
             stage, fa_stage_dir(stage));
    fa_cli_result parsed = fa_cli_parse(argc, argv, flags, (int)(sizeof flags / sizeof flags[0]),
                                        summary);
    if (parsed == FA_CLI_HELP)
        return 0;
    if (parsed != FA_CLI_OK)
        return FA_EXIT_USAGE;
    if (opt.milestone != 0 && !contains(checks, count, opt.milestone)) {
        fprintf(stderr, "%s: --milestone %lld is not in stage %02d (", argv[0],
                (long long)opt.milestone, stage);
        for (int i = 0; i < count; i++)
            fprintf(stderr, "%sM%d", i ? ", " : "", checks[i].number);
        fprintf(stderr, ")\n");
        return FA_EXIT_USAGE;
    }

    char why[256] = "";
    bool gpu = fa_gpu_usable(why, sizeof why);
    char no_gpu_reason[300];
    snprintf(no_gpu_reason, sizeof no_gpu_reason, "no usable GPU (%s)", why);
    fa_run_options run = {(uint64_t)opt.seed, opt.quick};

    if (opt.bench) {
        if (!gpu) {
            printf("stage%02d: benchmark skipped: %s\n", stage, no_gpu_reason);
            return FA_EXIT_SKIP;
        }
        fa_status status = bench(&run);
        if (status != FA_OK) {
            printf("stage%02d: benchmark failed: %s: %s\n", stage, fa_status_name(status),
                   fa_last_error());
            return 1;
        }
        return 0;
    }

    if (opt.tour)
        printf("GPU %s %s\n", gpu ? "yes" : "no", gpu ? "" : why);
    else
        printf("Stage %02d: %s  (seed %lld%s)\n", stage, fa_stage_dir(stage),
               (long long)opt.seed, opt.quick ? ", quick" : "");
    tally totals[2] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    for (int i = 0; i < count; i++) {
        const fa_milestone_check *check = &checks[i];
        if (opt.milestone != 0 && check->number != opt.milestone)
            continue;
        const fa_milestone_info *info = fa_milestone(check->number);
        for (int which = FA_IMPL_REFERENCE; which <= FA_IMPL_LEARNER; which++) {
            fa_impl impl = (fa_impl)which;
            bool wanted = opt.impl == IMPL_BOTH || (opt.impl == IMPL_LEARNER) == (impl == FA_IMPL_LEARNER);
            if (opt.tour)
                wanted = impl == FA_IMPL_LEARNER;
            if (!wanted)
                continue;
            double milliseconds;
            char size_label[64] = "";
            fa_result result = run_one(check, impl, gpu, &run, &milliseconds,
                                       size_label, sizeof size_label);
            tally_add(&totals[impl], result.outcome);
            if (opt.tour)
                printf("M%d %s %s\n", info->number, fa_outcome_name(result.outcome), result.detail);
            else
                print_line(info, impl, &result, milliseconds, size_label);
        }
    }

    /* In the default mode an unstarted learner milestone is progress to come,
     * not a failure; asked for explicitly (--impl learner, the tour), it fails. */
    bool learner_asked = opt.impl == IMPL_LEARNER || opt.tour;
    bool failed = totals[0].failed + totals[1].failed > 0 ||
                  (learner_asked && totals[1].not_implemented > 0);
    bool ran = totals[0].passed + totals[1].passed > 0;
    if (!opt.tour) {
        for (int which = FA_IMPL_REFERENCE; which <= FA_IMPL_LEARNER; which++) {
            const tally *t = &totals[which];
            if (t->passed + t->failed + t->not_implemented + t->not_run == 0)
                continue;
            printf("stage%02d %s: %d passed, %d failed, %d not implemented, %d not run\n", stage,
                   fa_impl_name((fa_impl)which), t->passed, t->failed, t->not_implemented,
                   t->not_run);
        }
        if (!gpu)
            printf("stage%02d: kernels built but not run: %s\n", stage, no_gpu_reason);
    }
    if (failed)
        return 1;
    return (!gpu && !ran) ? FA_EXIT_SKIP : 0;
}
