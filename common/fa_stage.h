/**
 * @file fa_stage.h
 * @brief The learner harness: one driver main shared by every stage.
 *
 * A stage describes each milestone by three functions: a probe (does this
 * implementation exist yet? answered without a GPU), a check (fixtures and
 * random cases against the double reference, on the GPU) and an optional
 * timing. fa_stage_main() parses the driver's flags, runs the reference and
 * the learner's kernels, prints one line per milestone and implementation, and
 * returns the exit code:
 *   0 every milestone run passed; 1 something failed or is not implemented;
 *   2 bad command line; 77 nothing could run (no usable GPU) and nothing failed.
 *
 * Flags: --impl reference|learner|both (default: both, the learner only where
 * its probe says it is implemented), --milestone N, --seed S, --quick (small
 * cases only and no timing, for compute-sanitizer), --bench (the stage's benchmark table),
 * --tour (machine-readable lines for the tour: "M<n> <outcome> <detail>").
 */
#ifndef FA_STAGE_H
#define FA_STAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fa_check.h"
#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Whose kernels run: the provided solution or the learner's file. */
typedef enum fa_impl {
    FA_IMPL_REFERENCE = 0,
    FA_IMPL_LEARNER = 1
} fa_impl;

/** "reference" or "learner". */
const char *fa_impl_name(fa_impl impl);

/** What happened to one milestone of one implementation. */
typedef enum fa_outcome {
    FA_OUTCOME_PASSED = 0,
    FA_OUTCOME_FAILED,           /**< an output was not covered by its bound */
    FA_OUTCOME_NOT_IMPLEMENTED,  /**< the launcher still starts with FA_TODO */
    FA_OUTCOME_NOT_RUN,          /**< built, but no usable GPU */
    FA_OUTCOME_ERROR             /**< a launcher or CUDA call failed */
} fa_outcome;

/** The word the tour reads: "passed", "failed", "not-implemented", "not-run", "error". */
const char *fa_outcome_name(fa_outcome outcome);

enum { FA_RESULT_DETAIL = 512 };

/** Outcome and a one-line detail (first failing case and coordinate, or the error). */
typedef struct fa_result {
    fa_outcome outcome;
    char detail[FA_RESULT_DETAIL];
} fa_result;

/** Options every check receives. */
typedef struct fa_run_options {
    uint64_t seed;   /**< seeds every random case (printed, so a failure reproduces) */
    bool quick;      /**< small cases only: for compute-sanitizer runs */
} fa_run_options;

/** A milestone as a stage exposes it to the harness. */
typedef struct fa_milestone_check {
    int number;  /**< M number; the title comes from fa_milestones.h */
    /** Calls the implementation on an empty problem: FA_OK, or FA_ERR_NOT_IMPLEMENTED. No GPU needed. */
    fa_status (*probe)(fa_impl impl);
    /** Runs every fixture and random case; fills @p result (passed, failed, error...). */
    void (*check)(fa_impl impl, const fa_run_options *options, fa_result *result);
    /** Optional: median milliseconds of one representative size (NULL: not timed). */
    fa_status (*time)(fa_impl impl, const fa_run_options *options, double *milliseconds,
                      char *size_label, size_t cap);
} fa_milestone_check;

/** A stage's benchmark: prints its table (configuration first). */
typedef fa_status (*fa_stage_bench)(const fa_run_options *options);

/** The whole driver: flags, GPU detection, checks, timings, summary; returns the exit code. */
int fa_stage_main(int argc, char **argv, int stage, const fa_milestone_check *checks, int count,
                  fa_stage_bench bench);

/* ---- helpers for writing a check ------------------------------------------------------- */

/** Sets @p result to PASSED with a printf-style detail ("9 fixtures, 12 random cases"). */
void fa_result_pass(fa_result *result, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/**
 * Records a launcher's non-OK @p status for case @p case_name: NOT_IMPLEMENTED
 * for FA_ERR_NOT_IMPLEMENTED, ERROR with fa_last_error() otherwise. Returns
 * false when @p status is not FA_OK (so a check reads
 * `if (!fa_result_status(r, name, launch(...))) return;`).
 */
bool fa_result_status(fa_result *result, const char *case_name, fa_status status);

/**
 * Judges one case with fa_check_covers(); on failure sets FAILED with
 * "case '<name>' <first uncovered coordinate, got, want, bound, counts>" and
 * returns false.
 */
bool fa_result_judge(fa_result *result, const char *case_name, const float *out,
                     const double *ref, const double *bound, const fa_shape *shape);

#ifdef __cplusplus
}
#endif

#endif /* FA_STAGE_H */
