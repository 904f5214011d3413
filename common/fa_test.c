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
    printf("%d passed, %d failed\n", t->passed, t->failed);
    return t->failed == 0 ? 0 : 1;
}

int fa_test_main(int argc, char **argv, int (*run_cpu)(void), int (*run_gpu)(void))
{
    if (argc == 2 && strcmp(argv[1], "cpu") == 0)
        return run_cpu();
    if (argc == 2 && strcmp(argv[1], "gpu") == 0) {
        if (run_gpu != NULL)
            return run_gpu();
        printf("%s gpu: skipped, built without CUDA\n", argv[0]);
        return FA_EXIT_SKIP;
    }
    fprintf(stderr, "usage: %s cpu|gpu\n", argc > 0 ? argv[0] : "test");
    return FA_EXIT_USAGE;
}
