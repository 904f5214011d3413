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

bool fa_result_status(fa_result *result, const char *case_name, fa_status status)
{
    if (status == FA_OK)
        return true;
    if (status == FA_ERR_NOT_IMPLEMENTED)
        result_printf(result, FA_OUTCOME_NOT_IMPLEMENTED, "%s", fa_last_error());
    else
        result_printf(result, FA_OUTCOME_ERROR, "case '%s': %s: %s", case_name,
                      fa_status_name(status), fa_last_error());
    return false;
}

bool fa_result_judge(fa_result *result, const char *case_name, const float *out,
                     const double *ref, const double *bound, const fa_shape *shape)
{
    fa_check_report report;
    if (fa_check_covers(out, ref, bound, fa_shape_count(shape), &report))
        return true;
    char description[FA_RESULT_DETAIL];
    fa_check_describe(&report, shape, description, sizeof description);
    result_printf(result, FA_OUTCOME_FAILED, "case '%s' %s", case_name, description);
    return false;
}
