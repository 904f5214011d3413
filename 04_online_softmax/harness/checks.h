/**
 * @file checks.h
 * @brief Stage 04 as the harness sees it: a check per milestone (M13-M16)
 *        and the benchmark. Built only with CUDA.
 *
 * Each check runs the chosen implementation on the hand-computed fixtures of
 * fixtures.h (bit for bit where they are exact, by the bound elsewhere), then
 * on random rows of awkward lengths (1, chunk - 1, chunk, chunk + 1,
 * non-multiples, long rows) in every pattern of ::online_row_pattern, and
 * judges every element against the double reference: the traces and the
 * softmax by reference.h, attention by fa_attention_reference() with the
 * blocked online method (block_n = the chunk). M15 also runs the one-pass
 * softmax, M16 the online attention. Every case has a name the failure line
 * prints and `--case` takes, and seeds its own random stream from (seed,
 * milestone, kernel, case), so it reruns alone with the same inputs.
 *
 * The problem flags replace the sweep by one case of their own: M13-M15 read
 * --rows --n --chunk (a trace case; M15 adds a softmax case of rows x n);
 * M16 reads those (a trace case) and the attention flags with --chunk (an
 * attention case), running the case of each kind whose flags are given.
 */
#ifndef ONLINE_CHECKS_H
#define ONLINE_CHECKS_H

#include "fa_stage.h"
#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** M13..M16 and the benchmark, for fa_stage_main(). */
extern const fa_stage_desc stage04;

/**
 * The stage benchmark (`stage04 --bench`, bench.c): the configuration and the
 * copy bandwidth first; then the one-pass softmax against the three-pass
 * softmax of \ref stage03 on 64 MiB of rows of several lengths, and the online
 * attention against the naive attention of \ref stage03 (when this build
 * links stage 03's kernels; otherwise the stage-03 columns are counted bytes
 * only), each with the bytes it reads and writes counted, the median time
 * measured, and the bandwidth or TFLOP/s they imply.
 */
fa_status stage04_bench(const fa_run_options *options);

#ifdef __cplusplus
}
#endif

#endif /* ONLINE_CHECKS_H */
