/**
 * @file fa_test.h
 * @brief A tiny test reporter whose last line is "N passed, N failed".
 *
 * Usage:
 * @code
 *   fa_tests t = {0};
 *   FA_EXPECT(&t, fa_rng_next(&a) == fa_rng_next(&b), "same seed gives the same stream");
 *   return fa_tests_finish(&t);   // prints "3 passed, 0 failed", returns 0 or 1
 * @endcode
 * A failing expectation prints the expression, file, line and the message, so
 * the log names what broke without a debugger.
 */
#ifndef FA_TEST_H
#define FA_TEST_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Counts of one test program. Zero-initialise it. */
typedef struct fa_tests {
    int passed;
    int failed;
} fa_tests;

/** Records one expectation; prints a line naming @p expr when it is false. */
bool fa_expect(fa_tests *t, bool ok, const char *expr, const char *file, int line,
               const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

/** Records one expectation; the message is printf-style. Returns the condition. */
#define FA_EXPECT(t, cond, ...) fa_expect((t), (cond), #cond, __FILE__, __LINE__, __VA_ARGS__)

/**
 * Prints "N passed, N failed" as the last line; returns 0 when something was
 * checked and nothing failed, else 1: a program that ran no expectation
 * proves nothing and fails.
 */
int fa_tests_finish(const fa_tests *t);

/** Exit code that CTest reads as "skipped" (SKIP_RETURN_CODE). */
enum { FA_EXIT_SKIP = 77, FA_EXIT_USAGE = 2 };

/** One test function: it records its expectations in @p t. */
typedef void (*fa_test_fn)(fa_tests *t);

/** A test program: its CPU tests, and its GPU tests with the gate that decides whether they run. */
typedef struct fa_test_suite {
    const char *program;            /**< "test_stage01", for messages */
    const fa_test_fn *cpu;          /**< run by `program cpu` */
    int cpu_count;
    const fa_test_fn *gpu;          /**< run by `program gpu`; NULL when built without CUDA */
    int gpu_count;
    /** 0 when a GPU is usable, else the exit code (FA_EXIT_SKIP or 1); fa_gpu_gate(). */
    int (*gpu_gate)(const char *program);
} fa_test_suite;

/**
 * The main() of a test program: `prog cpu` runs the CPU tests, `prog gpu`
 * the GPU tests after the gate (77 when no GPU is there, 1 when it is
 * broken, 77 when built without CUDA); anything else prints a usage line and
 * returns FA_EXIT_USAGE. The tests' verdict is fa_tests_finish().
 */
int fa_test_main(int argc, char **argv, const fa_test_suite *suite);

#ifdef __cplusplus
}
#endif

#endif /* FA_TEST_H */
