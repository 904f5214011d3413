/**
 * @file fa_stage.h
 * @brief The learner harness: one driver main shared by every stage.
 *
 * A stage describes each milestone by three functions: a probe (does this
 * implementation exist yet? answered without a GPU), a check (fixtures and
 * random cases against the double reference, on the GPU) and an optional
 * timing. fa_stage_main() parses the driver's flags, runs the reference and
 * the learner's kernels, prints one line per milestone and implementation
 * (the learner's time beside the reference's, with the ratio), and returns
 * the exit code:
 *   0 every milestone run passed; 1 something failed or is not implemented;
 *   2 bad command line; 77 nothing could run (no usable GPU) and nothing failed.
 *
 * Flags (fa_stage_parse()):
 * - `--impl reference|learner|both` (default both: the learner only where its
 *   probe says it is implemented), `--milestone N`, `--version N` (one
 *   version of a milestone that has several);
 * - `--case NAME` reruns the one fixture or random case a failure named (with
 *   the same `--seed`, and `--quick` if the failing run had it: the driver
 *   prints the whole command after a failure);
 * - the problem flags the stage's milestones read (fa_problem.h): with any of
 *   them, one random case of that problem instead of the whole sweep;
 * - `--seed S`, `--quick` (small cases only and no timing, for
 *   compute-sanitizer), `--bench` (the stage's benchmark table), `--tour`
 *   (machine-readable lines for the tour: "M<n> <outcome> <detail>").
 */
#ifndef FA_STAGE_H
#define FA_STAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fa_check.h"
#include "fa_problem.h"
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
    FA_OUTCOME_NOT_IMPLEMENTED,  /**< the learner's file still holds its FA_TODO marker */
    FA_OUTCOME_NOT_RUN,          /**< built, but no usable GPU */
    FA_OUTCOME_ERROR             /**< a launcher or CUDA call failed */
} fa_outcome;

/** The word the tour reads: "passed", "failed", "not-implemented", "not-run", "error". */
const char *fa_outcome_name(fa_outcome outcome);

enum { FA_RESULT_DETAIL = 512, FA_CASE_NAME = 128 };

/** Outcome and a one-line detail (first failing case and coordinate, or the error). */
typedef struct fa_result {
    fa_outcome outcome;
    char detail[FA_RESULT_DETAIL];
    int cases;                       /**< cases fa_case_begin() let run */
    char failed_case[FA_CASE_NAME];  /**< the case named by a failure or error, "" otherwise */
} fa_result;

/** Options every check receives. */
typedef struct fa_run_options {
    uint64_t seed;          /**< seeds every random case (printed, so a failure reproduces) */
    bool quick;             /**< small cases only: for compute-sanitizer runs */
    int version;            /**< the one version to run of a milestone with several; 0: all */
    const char *case_name;  /**< the one case to run (--case); NULL: all */
    fa_problem problem;     /**< the problem flags; problem.given == 0 when none */
} fa_run_options;

/** A milestone as a stage exposes it to the harness. */
typedef struct fa_milestone_check {
    int number;  /**< M number; title, versions and problem flags come from fa_milestones.h */
    /**
     * Calls the implementation on an empty problem: FA_OK, or
     * FA_ERR_NOT_IMPLEMENTED. No GPU needed. @p options are the run's: a
     * milestone with several versions probes options->version when it is
     * non-zero, so `--version 3` of an unwritten version 3 says so.
     */
    fa_status (*probe)(fa_impl impl, const fa_run_options *options);
    /** Runs every fixture and random case; fills @p result (passed, failed, error...). */
    void (*check)(fa_impl impl, const fa_run_options *options, fa_result *result);
    /**
     * Optional: median milliseconds of one representative size, or of the
     * problem flags' size when given (NULL: not timed).
     */
    fa_status (*time)(fa_impl impl, const fa_run_options *options, double *milliseconds,
                      char *size_label, size_t cap);
    /** The check runs host code only (validation, dispatch): it runs without a GPU too. */
    bool cpu_only;
} fa_milestone_check;

/** A stage's benchmark: prints its table (configuration first). */
typedef fa_status (*fa_stage_bench)(const fa_run_options *options);

/** A stage as its driver sees it. */
typedef struct fa_stage_desc {
    int number;                         /**< 1..7 */
    const fa_milestone_check *checks;   /**< its milestones, in order */
    int count;
    fa_stage_bench bench;
} fa_stage_desc;

/** What the driver's flags asked for (fa_stage_parse()). */
typedef struct fa_stage_request {
    int impl;        /**< FA_STAGE_IMPL_REFERENCE, _LEARNER or _BOTH */
    int milestone;   /**< 0: every milestone of the stage */
    bool bench;
    bool tour;
    fa_run_options run;
} fa_stage_request;

enum { FA_STAGE_IMPL_REFERENCE = 0, FA_STAGE_IMPL_LEARNER = 1, FA_STAGE_IMPL_BOTH = 2 };

/**
 * Parses a driver's command line for stage @p stage (plain C: tested without
 * a GPU). Rejects, with a message and the usage on stderr, anything the
 * stage cannot run: a milestone of another stage, --version on a milestone
 * with one version (or out of its range), a problem flag that no selected
 * milestone reads, --case together with problem flags.
 * @return FA_CLI_OK, FA_CLI_HELP (usage printed; exit 0) or FA_CLI_ERROR
 *         (exit FA_EXIT_USAGE = 2). The strings of @p request point into argv.
 */
int fa_stage_parse(int argc, char **argv, int stage, fa_stage_request *request);

/**
 * fa_stage_parse() of a command line given as its words, NULL-terminated,
 * the program's name first: `{"stage02", "--milestone", "7", NULL}`. The
 * strings of @p request point into @p words.
 */
int fa_stage_parse_words(const char *const *words, int stage, fa_stage_request *request);

/** True when milestone @p number reads every problem flag in @p given. */
bool fa_milestone_reads(int number, unsigned given);

/** The whole driver: flags, GPU detection, checks, timings, summary; returns the exit code. */
int fa_stage_main(int argc, char **argv, const fa_stage_desc *stage);

/**
 * Milestone @p number of @p stage as the driver runs it, without GPU
 * detection or timing: its probe, then, when the probe says it is written,
 * its check with @p options. ERROR when @p stage has no milestone @p number.
 * For tests; the check needs a usable GPU.
 */
fa_result fa_stage_check(const fa_stage_desc *stage, int number, fa_impl impl,
                         const fa_run_options *options);

/* ---- helpers for writing a check ------------------------------------------------------- */

/**
 * Every case of a check starts here: returns true when the case named
 * @p name should run (no --case, or --case names it) and counts it. Names are
 * unique within a milestone and stable for a given seed and --quick, e.g.
 * "fixture masked-row" or "random 3".
 */
bool fa_case_begin(fa_result *result, const fa_run_options *options, const char *name);

/**
 * Appends @p text to the string in @p buffer (@p cap bytes, truncated there),
 * after @p separator unless the buffer is empty; an empty @p text adds
 * nothing. For details built of parts ("version 1 passed (40 cases), version
 * 3 not run (...)").
 */
void fa_detail_append(char *buffer, size_t cap, const char *separator, const char *text);

/** Sets @p result to PASSED with a printf-style detail ("9 fixtures, 12 random cases"). */
void fa_result_pass(fa_result *result, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/**
 * Sets @p result to FAILED for case @p case_name with a printf-style reason
 * (for verdicts that are not a bound check: canaries overwritten, a wrong
 * count). The detail reads "case '<name>' <reason>".
 */
void fa_result_fail(fa_result *result, const char *case_name, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
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
 * Records a check that did not cover, from its @p report over @p shape: an
 * ERROR when the check had no bound to judge by (report->status, with its
 * message), else FAILED with "case '<name>' [<what> ]<first uncovered
 * coordinate, got, want, bound, counts>" (@p what NULL: no prefix). Returns false.
 */
bool fa_result_uncovered(fa_result *result, const char *case_name, const char *what,
                         const fa_check_report *report, const fa_shape *shape);

/**
 * FAILED with "case '<name>' wrote N canary bytes past the end of <output>"
 * when a kernel wrote @p overwritten bytes past its output; true when none.
 */
bool fa_result_canaries(fa_result *result, const char *case_name, const char *output,
                        int64_t overwritten);

/**
 * Judges one case with fa_check_covers(); on failure sets FAILED with
 * "case '<name>' <first uncovered coordinate, got, want, bound, counts>" and
 * returns false. A bound that cannot judge (NaN, infinite or negative where
 * the reference is finite) is an ERROR of the check, with its message.
 */
bool fa_result_judge(fa_result *result, const char *case_name, const float *out,
                     const double *ref, const double *bound, const fa_shape *shape);

/**
 * Writes into @p buf the command that reruns the case a failure of milestone
 * @p milestone named: "<program> --impl learner --milestone 4 --case '<name>'
 * --seed 2026 [--quick]", the name quoted for a POSIX shell (a ' in it is
 * written '\''). Returns false, writing nothing, when there is no case to
 * rerun (no failed case, or a run of problem flags, which reruns as it was).
 */
bool fa_result_rerun(char *buf, size_t cap, const char *program, int milestone, fa_impl impl,
                     const fa_result *result, const fa_run_options *run);

#ifdef __cplusplus
}
#endif

#endif /* FA_STAGE_H */
