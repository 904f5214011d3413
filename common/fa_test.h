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
 *
 * Below the reporter, the helpers every stage's tests share: host arrays that
 * cannot fail (fa_must_alloc()), bit-for-bit comparisons of floats, and the
 * expectations on a launcher's status and message (FA_EXPECT_STATUS,
 * FA_EXPECT_LEARNER_STATUS), on a driver's command line
 * (FA_EXPECT_USAGE_ERROR) and on a stage's reference checks
 * (FA_EXPECT_REFERENCE_CHECKS), which report the caller's file and line.
 */
#ifndef FA_TEST_H
#define FA_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fa_half.h"
#include "fa_stage.h"
#include "fa_status.h"

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

/* ---- helpers of the stage tests ------------------------------------------------------------ */

/**
 * malloc that a test treats as infallible: out of memory, it prints the size
 * and ends the program with exit code 1 (a test cannot go on without its
 * arrays). @p bytes may be 0 (one byte is allocated). Free with free().
 */
void *fa_must_alloc(size_t bytes);

/** fa_must_alloc() of @p n floats. */
float *fa_new_floats(int64_t n);

/** fa_must_alloc() of @p n doubles. */
double *fa_new_doubles(int64_t n);

/**
 * A host array of @p n elements of @p dtype holding @p values, each rounded
 * to @p dtype by fa_store() (to nearest even). Free with free().
 */
void *fa_as_dtype(const float *values, int64_t n, fa_dtype dtype);

/** The same 32 bits: +0 and -0 differ, and so do two NaNs with different payloads. */
bool fa_same_bits(float a, float b);

/**
 * The same bits, or both NaN: the comparison of a GPU result with a model,
 * where NaN payloads differ between CPU and GPU arithmetic.
 */
bool fa_same_float(float a, float b);

/** Index of the first element where @p a and @p b differ (fa_same_float()), or -1. */
int64_t fa_first_difference(const float *a, const float *b, int64_t n);

/**
 * Records that a call returned @p expected: one expectation on the status
 * and, when @p expected is a failure and was returned, one that
 * fa_last_error() names @p needle (NULL: any message). With @p learner, the
 * call is a learner's launcher, which may still be the skeleton: then it
 * returns ::FA_ERR_NOT_IMPLEMENTED (FA_TODO comes before any validation),
 * and the one expectation is that its message says "not implemented".
 * @p file and @p line are the caller's (the macros below pass them); the
 * label naming the call is printf-style. Returns true when all hold.
 */
bool fa_expect_status(fa_tests *t, bool learner, fa_status got, fa_status expected,
                      const char *needle, const char *file, int line, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 8, 9)))
#endif
    ;

/**
 * `FA_EXPECT_STATUS(t, status, FA_ERR_INVALID_SIZE, "n = -1", "ref_vector_add, %s", what)`:
 * fa_expect_status() of a reference launcher or a validator, at the caller's file and line.
 */
#define FA_EXPECT_STATUS(t, got, expected, needle, ...)                                         \
    fa_expect_status((t), false, (got), (expected), (needle), __FILE__, __LINE__, __VA_ARGS__)

/** fa_expect_status() of a learner's launcher, at the caller's file and line. */
#define FA_EXPECT_LEARNER_STATUS(t, got, expected, needle, ...)                                 \
    fa_expect_status((t), true, (got), (expected), (needle), __FILE__, __LINE__, __VA_ARGS__)

/**
 * FA_EXPECT_LEARNER_STATUS when @p learner is true, else FA_EXPECT_STATUS:
 * one call for a loop over the reference's and the learner's launchers.
 */
#define FA_EXPECT_STATUS_OF(t, learner, got, expected, needle, ...)                            \
    fa_expect_status((t), (learner), (got), (expected), (needle), __FILE__, __LINE__,          \
                     __VA_ARGS__)

/**
 * Records that stage @p stage's driver refuses the command line @p words
 * (fa_stage_parse_words(): NULL-terminated, the program's name first) with
 * the usage exit code, FA_EXIT_USAGE, before any GPU work. @p file and
 * @p line are the caller's (FA_EXPECT_USAGE_ERROR passes them).
 */
bool fa_expect_usage_error(fa_tests *t, int stage, const char *const *words, const char *file,
                           int line);

/** fa_expect_usage_error() at the caller's file and line. */
#define FA_EXPECT_USAGE_ERROR(t, stage, words) \
    fa_expect_usage_error((t), (stage), (words), __FILE__, __LINE__)

/**
 * Records that @p stage lists exactly the milestones the course map gives
 * it (fa_milestones.h), and that each passes on the reference kernels with
 * @p options, run as the driver runs it (fa_stage_check(): the probe says it
 * is written, then the check passes; a GPU test). @p file and @p line are the caller's (FA_EXPECT_REFERENCE_CHECKS
 * passes them).
 */
void fa_expect_reference_checks(fa_tests *t, const fa_stage_desc *stage,
                                const fa_run_options *options, const char *file, int line);

/** fa_expect_reference_checks() at the caller's file and line. */
#define FA_EXPECT_REFERENCE_CHECKS(t, stage, options) \
    fa_expect_reference_checks((t), (stage), (options), __FILE__, __LINE__)

#ifdef __cplusplus
}
#endif

#endif /* FA_TEST_H */
