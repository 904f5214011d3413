/**
 * @file checks.h
 * @brief Stage 04 as the harness sees it: a check per milestone (M13-M16),
 *        the benchmark, and the device runners the GPU tests share. Built
 *        only with CUDA.
 *
 * Each check runs the chosen implementation on the hand-computed fixtures of
 * fixtures.h (bit for bit where they are exact, by the bound elsewhere), then
 * on random rows of awkward lengths (1, chunk - 1, chunk, chunk + 1,
 * non-multiples, long rows) in every pattern of ::online_row_pattern, and
 * judges every element against the double reference: the traces and the
 * softmax by reference.h, attention by fa_attention_reference() with the
 * blocked online method (block_n = the chunk). M15 also runs the one-pass
 * softmax, M16 the online attention. Every output is poisoned before the
 * launch and followed by poisoned canaries; every input is followed by NaN
 * canaries. The first failing case and coordinate become the detail line.
 */
#ifndef ONLINE_CHECKS_H
#define ONLINE_CHECKS_H

#include <stdint.h>

#include "fa_stage.h"
#include "fa_status.h"
#include "online.h"

#ifdef __cplusplus
extern "C" {
#endif

/** M13..M16, in order, for fa_stage_main(). */
extern const fa_milestone_check stage04_checks[];

/** Number of entries of ::stage04_checks (4). */
extern const int stage04_check_count;

/**
 * The stage benchmark (`stage04 --bench`): the configuration and the copy
 * bandwidth first; then the one-pass softmax against the three-pass softmax
 * of \ref stage03 on 64 MiB of rows of several lengths, and the online
 * attention against the naive attention of \ref stage03 (when this build
 * links stage 03's kernels; otherwise the three-pass columns are counted
 * bytes only), each with the bytes it reads and writes counted, the median
 * time measured, and the bandwidth or TFLOP/s they imply.
 */
fa_status stage04_bench(const fa_run_options *options);

/** Which trace a runner launches. */
typedef enum online_trace_op {
    ONLINE_TRACE_MAX = 0,    /**< M13: ref_online_max_trace */
    ONLINE_TRACE_CORRECTION, /**< M14: ref_online_correction_trace */
    ONLINE_TRACE_SUM,        /**< M15: ref_online_sum_trace */
    ONLINE_TRACE_OUTPUT      /**< M16: ref_online_output_trace */
} online_trace_op;

/** Poisoned floats after every device output, NaN floats after every device input. */
enum { ONLINE_CANARY_FLOATS = 64 };

/**
 * Runs one trace launcher of @p impl on host arrays: uploads x (and v for
 * the output trace; v may be NULL otherwise), launches into a poisoned
 * device trace of rows * online_chunk_count(n, chunk) floats and downloads
 * it to @p trace. @p overwritten receives how many of the canaries after the
 * trace no longer hold the poison (0 unless the kernel wrote out of bounds).
 * @return the launcher's status, or a CUDA failure.
 */
fa_status online_run_trace(fa_impl impl, online_trace_op op, const float *x, const float *v,
                           int64_t rows, int64_t n, int64_t chunk, float *trace,
                           int64_t *overwritten);

/**
 * Runs softmax_rows_online of @p impl on host arrays: p [rows][n] and, when
 * @p lse is not NULL, lse [rows] (the launcher gets NULL otherwise). Outputs
 * poisoned first; @p overwritten counts clobbered canaries after p and lse.
 */
fa_status online_run_softmax(fa_impl impl, const float *x, int64_t rows, int64_t n, float *p,
                             float *lse, int64_t *overwritten);

/**
 * Runs attn_rows_online of @p impl on a problem whose pointers are host
 * arrays: q, k, v uploaded, o and lse (lse may be NULL) downloaded into
 * @p host->o and @p host->lse. @p overwritten counts clobbered canaries.
 */
fa_status online_run_attention(fa_impl impl, const attn_online_args *host,
                               int64_t *overwritten);

#ifdef __cplusplus
}
#endif

#endif /* ONLINE_CHECKS_H */
