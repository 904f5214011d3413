/** @file fa_test.c @brief The test reporter. */
#include "fa_test.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
