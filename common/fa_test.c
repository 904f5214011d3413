/** @file fa_test.c @brief The test reporter. */
#include "fa_test.h"

#include <stdarg.h>
#include <stdio.h>

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
