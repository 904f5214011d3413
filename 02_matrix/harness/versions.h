/**
 * @file versions.h
 * @brief How a check walks the versions of a milestone (M7's four matmuls,
 *        M8's two transposes): which versions run, and the verdict while some
 *        are not written yet. Plain C, so the rules are tested without a GPU.
 *
 * The rules, for the learner who writes the versions in order:
 * - `--version V`: version V alone; "not implemented" (with its marker's
 *   message) while its FA_TODO_VERSION line is there.
 * - every version (no --version): each version whose marker is gone runs, in
 *   order, and the first failure ends the check (its detail names the
 *   versions that passed before it). Versions still marked are skipped, not
 *   failed: with versions 1 and 2 written and passing, the milestone passes
 *   and its detail names versions 3 and 4 as not written yet. The milestone
 *   is "not implemented" only while no version is written, and then the
 *   message is version 1's: the one to write first.
 * - the probe (no GPU) follows the same rules: with `--version V`, version
 *   V's marker decides (so an unwritten V is "not implemented" before any
 *   GPU work, and without a GPU); without it, implemented as soon as any
 *   version is.
 */
#ifndef FA_MATRIX_VERSIONS_H
#define FA_MATRIX_VERSIONS_H

#include <stdbool.h>

#include "fa_stage.h"
#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The versions of one milestone, as the check sees them. */
typedef struct milestone_versions {
    int count;                 /**< versions 1..count */
    const char *const *names;  /**< names[v - 1]: "naive", "smem_tiled", ... */
    /**
     * FA_OK when version @p version is written (its marker is gone), else
     * ::FA_ERR_NOT_IMPLEMENTED with the marker's message (fa_last_error()).
     * Touches no GPU.
     */
    fa_status (*written)(int version, void *context);
    /**
     * Runs every case of version @p version that the options select; returns
     * false, with @p result set (FAILED, ERROR), on the first case that fails.
     */
    bool (*run)(int version, void *context, fa_result *result);
} milestone_versions;

/** "v2 smem_tiled": how case names and details name version @p version. */
void versions_label(const milestone_versions *versions, int version, char *label, size_t cap);

/**
 * The probe: with @p version non-zero (--version), that version's status and
 * message; with 0, FA_OK when some version is written, else version 1's
 * status and message.
 */
fa_status versions_probe(const milestone_versions *versions, void *context, int version);

/**
 * The check (the rules above): @p summary says how the cases were judged,
 * for the detail of a pass ("fixtures bit for bit, random within gamma_K").
 */
void versions_check(const milestone_versions *versions, void *context,
                    const fa_run_options *options, const char *summary, fa_result *result);

/**
 * The version a timing measures: options->version when given, else the
 * highest version written; 0 when none is written.
 */
int versions_timed(const milestone_versions *versions, void *context,
                   const fa_run_options *options);

#ifdef __cplusplus
}
#endif

#endif /* FA_MATRIX_VERSIONS_H */
