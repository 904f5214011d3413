/**
 * @file fa_stage.c
 * @brief The driver every stage shares: GPU detection, checks, timings, summary.
 *
 * Its flags are parsed by fa_stage_flags.c and its results built by
 * fa_result.c, both plain C and tested without a GPU.
 */
#include "fa_stage.h"

#include <stdio.h>

#include "fa_cli.h"
#include "fa_device.h"
#include "fa_milestones.h"
#include "fa_test.h"

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

/** A timing of one milestone: milliseconds (< 0: none) and the size it was taken at. */
typedef struct timing {
    double milliseconds;
    char size[64];
} timing;

/* Runs one milestone of one implementation; the GPU is touched only when usable. */
static fa_result run_one(const fa_milestone_check *check, fa_impl impl, bool gpu,
                         const fa_run_options *run, timing *time)
{
    fa_result result = {FA_OUTCOME_ERROR, "", 0, ""};
    time->milliseconds = -1.0;
    time->size[0] = '\0';
    fa_clear_error();
    fa_status probe = check->probe(impl, run);
    if (probe != FA_OK) {
        fa_result_status(&result, "probe", probe);
        return result;
    }
    if (!gpu && !check->cpu_only) {
        result.outcome = FA_OUTCOME_NOT_RUN;
        snprintf(result.detail, sizeof result.detail, "built, not run: no usable GPU");
        return result;
    }
    check->check(impl, run, &result);
    if (run->case_name != NULL && result.cases == 0 &&
        result.outcome != FA_OUTCOME_NOT_IMPLEMENTED) {
        result.outcome = FA_OUTCOME_ERROR;
        snprintf(result.detail, sizeof result.detail,
                 "no case named '%s' in M%d with these flags (seed %llu%s)", run->case_name,
                 check->number, (unsigned long long)run->seed, run->quick ? ", --quick" : "");
    }
    if (result.outcome == FA_OUTCOME_ERROR) {
        /* A faulting kernel leaves the context unusable: start a fresh one so
         * the remaining milestones still run. */
        cudaDeviceReset();
    } else if (result.outcome == FA_OUTCOME_PASSED && check->time != NULL && gpu && !run->quick &&
               run->case_name == NULL) {
        if (check->time(impl, run, &time->milliseconds, time->size, sizeof time->size) != FA_OK) {
            time->milliseconds = -1.0;
            cudaDeviceReset();
        }
    }
    return result;
}

static void print_line(const fa_milestone_info *info, fa_impl impl, const fa_result *result,
                       const timing *time, const timing *reference_time)
{
    const char *word = result->outcome == FA_OUTCOME_FAILED ? "FAILED"
                       : result->outcome == FA_OUTCOME_ERROR ? "ERROR"
                                                              : fa_outcome_name(result->outcome);
    printf("M%-3d %-26s %-9s  %-15s", info->number, info->title, fa_impl_name(impl), word);
    if (time->milliseconds >= 0.0) {
        printf(" %9.4f ms (%s)", time->milliseconds, time->size);
        if (impl == FA_IMPL_LEARNER && reference_time->milliseconds > 0.0)
            printf(" = %.2fx the reference", time->milliseconds / reference_time->milliseconds);
    }
    printf("  %s\n", result->detail);
    fflush(stdout);
}

int fa_stage_main(int argc, char **argv, const fa_stage_desc *stage)
{
    fa_stage_request request;
    const int parsed = fa_stage_parse(argc, argv, stage->number, &request);
    if (parsed == FA_CLI_HELP)
        return 0;
    if (parsed != FA_CLI_OK)
        return FA_EXIT_USAGE;
    const fa_run_options *run = &request.run;

    char why[256] = "";
    const fa_gpu_state state = fa_gpu_state_of(why, sizeof why);
    if (state == FA_GPU_BROKEN) {
        printf("stage%02d: the GPU cannot be used: %s\n", stage->number, why);
        return 1;
    }
    const bool gpu = state == FA_GPU_USABLE;

    if (request.bench) {
        if (!gpu) {
            printf("stage%02d: benchmark skipped: no usable GPU (%s)\n", stage->number, why);
            return FA_EXIT_SKIP;
        }
        fa_status status = stage->bench(run);
        if (status != FA_OK) {
            printf("stage%02d: benchmark failed: %s: %s\n", stage->number, fa_status_name(status),
                   fa_last_error());
            return 1;
        }
        return 0;
    }

    if (request.tour)
        printf("GPU %s %s\n", gpu ? "yes" : "no", gpu ? "" : why);
    else
        printf("Stage %02d: %s  (seed %llu%s)\n", stage->number, fa_stage_dir(stage->number),
               (unsigned long long)run->seed, run->quick ? ", quick" : "");
    tally totals[2] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    for (int i = 0; i < stage->count; i++) {
        const fa_milestone_check *check = &stage->checks[i];
        if (request.milestone != 0 && check->number != request.milestone)
            continue;
        if (!fa_milestone_reads(check->number, run->problem.given))
            continue; /* the problem flags describe another milestone's problem */
        const fa_milestone_info *info = fa_milestone(check->number);
        timing times[2];
        times[FA_IMPL_REFERENCE].milliseconds = -1.0;
        for (int which = FA_IMPL_REFERENCE; which <= FA_IMPL_LEARNER; which++) {
            const fa_impl impl = (fa_impl)which;
            bool wanted = request.impl == FA_STAGE_IMPL_BOTH ||
                          (request.impl == FA_STAGE_IMPL_LEARNER) == (impl == FA_IMPL_LEARNER);
            if (request.tour)
                wanted = impl == FA_IMPL_LEARNER;
            if (!wanted)
                continue;
            const fa_result result = run_one(check, impl, gpu, run, &times[which]);
            tally_add(&totals[impl], result.outcome);
            if (request.tour) {
                printf("M%d %s %s\n", info->number, fa_outcome_name(result.outcome), result.detail);
            } else {
                print_line(info, impl, &result, &times[which], &times[FA_IMPL_REFERENCE]);
                char rerun[FA_RESULT_DETAIL];
                if (fa_result_rerun(rerun, sizeof rerun, argv[0], info->number, impl, &result, run))
                    printf("     rerun: %s\n", rerun);
            }
        }
    }

    /* In the default mode an unstarted learner milestone is progress to come,
     * not a failure; asked for explicitly (--impl learner, the tour), it fails. */
    const bool learner_asked = request.impl == FA_STAGE_IMPL_LEARNER || request.tour;
    const bool failed = totals[0].failed + totals[1].failed > 0 ||
                        (learner_asked && totals[1].not_implemented > 0);
    const bool ran = totals[0].passed + totals[1].passed > 0;
    if (!request.tour) {
        for (int which = FA_IMPL_REFERENCE; which <= FA_IMPL_LEARNER; which++) {
            const tally *t = &totals[which];
            if (t->passed + t->failed + t->not_implemented + t->not_run == 0)
                continue;
            printf("stage%02d %s: %d passed, %d failed, %d not implemented, %d not run\n",
                   stage->number, fa_impl_name((fa_impl)which), t->passed, t->failed,
                   t->not_implemented, t->not_run);
        }
        if (!gpu)
            printf("stage%02d: kernels built but not run: no usable GPU (%s)\n", stage->number,
                   why);
    }
    if (failed)
        return 1;
    return (!gpu && !ran) ? FA_EXIT_SKIP : 0;
}
