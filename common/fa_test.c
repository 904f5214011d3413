/** @file fa_test.c @brief The test reporter, and the helpers the stage tests share. */
#include "fa_test.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa_cli.h"
#include "fa_milestones.h"

enum { LABEL_CAP = 256 };

bool fa_expect(fa_tests *t, bool ok, const char *expr, const char *file, int line,
               const char *format, ...)
{
    if (ok) {
        t->passed++;
        return true;
    }
    t->failed++;
    printf("FAIL %s:%d: %s: ", file, line, expr);
    va_list args;
    va_start(args, format);
    vprintf(format, args);
    va_end(args);
    printf("\n");
    fflush(stdout);
    return false;
}

int fa_tests_finish(const fa_tests *t)
{
    if (t->passed + t->failed == 0)
        printf("FAIL: no expectation ran (a test program must check something)\n");
    printf("%d passed, %d failed\n", t->passed, t->failed);
    return t->failed == 0 && t->passed > 0 ? 0 : 1;
}

static int run_tests(const fa_test_fn *tests, int count)
{
    fa_tests t = {0};
    for (int i = 0; i < count; i++)
        tests[i](&t);
    return fa_tests_finish(&t);
}

int fa_test_main(int argc, char **argv, const fa_test_suite *suite)
{
    if (argc == 2 && strcmp(argv[1], "cpu") == 0)
        return run_tests(suite->cpu, suite->cpu_count);
    if (argc == 2 && strcmp(argv[1], "gpu") == 0) {
        if (suite->gpu == NULL || suite->gpu_gate == NULL) {
            printf("%s gpu: skipped, built without CUDA\n", suite->program);
            return FA_EXIT_SKIP;
        }
        char program[256];
        snprintf(program, sizeof program, "%s gpu", suite->program);
        const int gate = suite->gpu_gate(program);
        return gate != 0 ? gate : run_tests(suite->gpu, suite->gpu_count);
    }
    fprintf(stderr, "usage: %s cpu|gpu\n", suite->program);
    return FA_EXIT_USAGE;
}

void *fa_must_alloc(size_t bytes)
{
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (p == NULL) {
        fprintf(stderr, "fa_must_alloc: out of host memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

float *fa_new_floats(int64_t n)
{
    return fa_must_alloc((size_t)n * sizeof(float));
}

double *fa_new_doubles(int64_t n)
{
    return fa_must_alloc((size_t)n * sizeof(double));
}

void *fa_as_dtype(const float *values, int64_t n, fa_dtype dtype)
{
    void *out = fa_must_alloc((size_t)n * (size_t)fa_dtype_size(dtype));
    for (int64_t i = 0; i < n; ++i)
        fa_store(out, dtype, i, values[i]);
    return out;
}

bool fa_same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

bool fa_same_float(float a, float b)
{
    return (isnan(a) && isnan(b)) || fa_same_bits(a, b);
}

int64_t fa_first_difference(const float *a, const float *b, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        if (!fa_same_float(a[i], b[i]))
            return i;
    return -1;
}

bool fa_expect_status(fa_tests *t, bool learner, fa_status got, fa_status expected,
                      const char *needle, const char *file, int line, const char *format, ...)
{
    char label[LABEL_CAP];
    va_list args;
    va_start(args, format);
    vsnprintf(label, sizeof label, format, args);
    va_end(args);
    if (learner && got == FA_ERR_NOT_IMPLEMENTED)
        return fa_expect(t, strstr(fa_last_error(), "not implemented") != NULL,
                         "the skeleton says so", file, line,
                         "%s: not implemented, but the message is \"%s\"", label, fa_last_error());
    if (!fa_expect(t, got == expected, "status == expected", file, line,
                   "%s: got %s, expected %s (\"%s\")", label, fa_status_name(got),
                   fa_status_name(expected), fa_last_error()))
        return false;
    if (expected == FA_OK || needle == NULL)
        return true;
    return fa_expect(t, strstr(fa_last_error(), needle) != NULL, "the message names the needle",
                     file, line, "%s: message \"%s\" lacks \"%s\"", label, fa_last_error(),
                     needle);
}

bool fa_expect_usage_error(fa_tests *t, int stage, const char *const *words, const char *file,
                           int line)
{
    char shown[LABEL_CAP] = "";
    for (int w = 0; words[w] != NULL; w++) {
        const size_t used = strlen(shown);
        snprintf(shown + used, sizeof shown - used, "%s%s", w > 0 ? " " : "", words[w]);
    }
    fa_stage_request request;
    const int exit_code =
        fa_stage_parse_words(words, stage, &request) == FA_CLI_ERROR ? FA_EXIT_USAGE : 0;
    return fa_expect(t, exit_code == FA_EXIT_USAGE, "exit code == FA_EXIT_USAGE", file, line,
                     "%s: exit %d, expected %d", shown, exit_code, FA_EXIT_USAGE);
}

void fa_expect_reference_checks(fa_tests *t, const fa_stage_desc *stage,
                                const fa_run_options *options, const char *file, int line)
{
    int listed = 0;
    for (int number = 1; number <= FA_MILESTONE_COUNT; number++) {
        if (fa_milestone(number)->stage != stage->number)
            continue;
        listed++;
        bool found = false;
        for (int i = 0; i < stage->count; i++)
            found = found || stage->checks[i].number == number;
        fa_expect(t, found, "the stage checks its milestone", file, line,
                  "stage %02d has no check of M%d", stage->number, number);
    }
    fa_expect(t, stage->count == listed, "one check per milestone", file, line,
              "stage %02d has %d checks for its %d milestones", stage->number, stage->count,
              listed);
    for (int i = 0; i < stage->count; i++) {
        const int number = stage->checks[i].number;
        const fa_result result = fa_stage_check(stage, number, FA_IMPL_REFERENCE, options);
        fa_expect(t, result.outcome == FA_OUTCOME_PASSED, "the reference passes", file, line,
                  "M%d reference: %s: %s", number, fa_outcome_name(result.outcome),
                  result.detail);
    }
}
