/**
 * @file fa_result.c
 * @brief Outcomes of a milestone check and the one-line details the harness prints.
 *
 * Plain C with no CUDA, so the verdicts and their wording (the first failing
 * case and coordinate) are tested on machines without a GPU.
 */
#include "fa_stage.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *fa_impl_name(fa_impl impl)
{
    return impl == FA_IMPL_LEARNER ? "learner" : "reference";
}

const char *fa_outcome_name(fa_outcome outcome)
{
    switch (outcome) {
    case FA_OUTCOME_PASSED: return "passed";
    case FA_OUTCOME_FAILED: return "failed";
    case FA_OUTCOME_NOT_IMPLEMENTED: return "not-implemented";
    case FA_OUTCOME_NOT_RUN: return "not-run";
    case FA_OUTCOME_ERROR: return "error";
    }
    return "error";
}

static void result_set(fa_result *result, fa_outcome outcome, const char *format, va_list args)
{
    result->outcome = outcome;
    vsnprintf(result->detail, sizeof result->detail, format, args);
}

void fa_detail_append(char *buffer, size_t cap, const char *separator, const char *text)
{
    if (text[0] == '\0')
        return;
    size_t used = strlen(buffer);
    const char *parts[2] = {used > 0 ? separator : "", text};
    for (int i = 0; i < 2; ++i)
        for (const char *c = parts[i]; *c != '\0' && used + 1 < cap; ++c)
            buffer[used++] = *c;
    buffer[used] = '\0';
}

void fa_result_pass(fa_result *result, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    result_set(result, FA_OUTCOME_PASSED, format, args);
    va_end(args);
}

static void result_printf(fa_result *result, fa_outcome outcome, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    result_set(result, outcome, format, args);
    va_end(args);
}

bool fa_case_begin(fa_result *result, const fa_run_options *options, const char *name)
{
    if (options->case_name != NULL && strcmp(options->case_name, name) != 0)
        return false;
    result->cases++;
    return true;
}

/** Remembers the case a failure names, for the driver's rerun line. */
static void name_case(fa_result *result, const char *case_name)
{
    snprintf(result->failed_case, sizeof result->failed_case, "%s", case_name);
}

void fa_result_fail(fa_result *result, const char *case_name, const char *format, ...)
{
    char reason[FA_RESULT_DETAIL];
    va_list args;
    va_start(args, format);
    vsnprintf(reason, sizeof reason, format, args);
    va_end(args);
    result_printf(result, FA_OUTCOME_FAILED, "case '%s' %s", case_name, reason);
    name_case(result, case_name);
}

bool fa_result_status(fa_result *result, const char *case_name, fa_status status)
{
    if (status == FA_OK)
        return true;
    if (status == FA_ERR_NOT_IMPLEMENTED) {
        result_printf(result, FA_OUTCOME_NOT_IMPLEMENTED, "%s", fa_last_error());
        return false;
    }
    result_printf(result, FA_OUTCOME_ERROR, "case '%s': %s: %s", case_name,
                  fa_status_name(status), fa_last_error());
    name_case(result, case_name);
    return false;
}

bool fa_result_uncovered(fa_result *result, const char *case_name, const char *what,
                         const fa_check_report *report, const fa_shape *shape)
{
    if (report->status != FA_OK) /* no bound to judge by: an error of the check, never a verdict */
        return fa_result_status(result, case_name, report->status);
    char description[FA_RESULT_DETAIL];
    fa_check_describe(report, shape, description, sizeof description);
    fa_result_fail(result, case_name, "%s%s%s", what != NULL ? what : "", what != NULL ? " " : "",
                   description);
    return false;
}

bool fa_result_canaries(fa_result *result, const char *case_name, const char *output,
                        int64_t overwritten)
{
    if (overwritten == 0)
        return true;
    fa_result_fail(result, case_name, "wrote %lld canary bytes past the end of %s",
                   (long long)overwritten, output);
    return false;
}

bool fa_result_judge(fa_result *result, const char *case_name, const float *out,
                     const double *ref, const double *bound, const fa_shape *shape)
{
    fa_check_report report;
    return fa_check_covers(out, ref, bound, fa_shape_count(shape), &report) ||
           fa_result_uncovered(result, case_name, NULL, &report, shape);
}

bool fa_result_rerun(char *buf, size_t cap, const char *program, int milestone, fa_impl impl,
                     const fa_result *result, const fa_run_options *run)
{
    if (cap == 0 || result->failed_case[0] == '\0' || run->problem.given != 0)
        return false;
    size_t used = (size_t)snprintf(buf, cap, "%s --impl %s --milestone %d", program,
                                   fa_impl_name(impl), milestone);
    if (run->version != 0 && used < cap)
        used += (size_t)snprintf(buf + used, cap - used, " --version %d", run->version);
    /* The name in single quotes for the shell, each ' in it written '\'' so it pastes as is. */
    if (used < cap)
        used += (size_t)snprintf(buf + used, cap - used, " --case '");
    for (const char *c = result->failed_case; *c != '\0' && used < cap; ++c)
        used += *c == '\'' ? (size_t)snprintf(buf + used, cap - used, "'\\''")
                           : (size_t)snprintf(buf + used, cap - used, "%c", *c);
    if (used < cap)
        snprintf(buf + used, cap - used, "' --seed %llu%s", (unsigned long long)run->seed,
                 run->quick ? " --quick" : "");
    return true;
}

fa_result fa_stage_check(const fa_stage_desc *stage, int number, fa_impl impl,
                         const fa_run_options *options)
{
    fa_result result = {FA_OUTCOME_ERROR, "", 0, ""};
    snprintf(result.detail, sizeof result.detail, "M%d is not a milestone of stage %02d", number,
             stage->number);
    for (int i = 0; i < stage->count; i++) {
        const fa_milestone_check *check = &stage->checks[i];
        if (check->number != number)
            continue;
        result = (fa_result){FA_OUTCOME_PASSED, "", 0, ""};
        fa_clear_error();
        if (fa_result_status(&result, "probe", check->probe(impl, options)))
            check->check(impl, options, &result);
    }
    return result;
}
