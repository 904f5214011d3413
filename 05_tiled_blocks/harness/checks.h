/**
 * @file checks.h
 * @brief Stage 05 as the harness sees it: a check per milestone (M17-M22),
 *        each over both versions of the blocks, and the benchmark. Built
 *        only with CUDA.
 *
 * Each check runs the milestone's trace (tiles.h) of the chosen
 * implementation on the fixtures of fixtures.h and on random problems around
 * the version's tile sizes, and judges what the milestone's block wrote with
 * the judges of model.h: M17 bit for bit, M18 by the dot-product bound, M19
 * to M21 against the implementation's own earlier blocks (each block judged
 * on its own), M22 end to end against the double reference.
 *
 * Versions: a check runs version 1 then version 2 (or only --version N).
 * The first failing case of either is the verdict. A version whose
 * FA_TODO_VERSION marker is still there is "not implemented": the milestone
 * then reports not-implemented, with the other version's result in the
 * detail ("version 1 passed (14 cases); version 2: ... not implemented
 * yet ..."), so a learner who wrote only version 1 sees it judged and knows
 * what is left. A milestone passes when every version run passed.
 */
#ifndef TILES_CHECKS_H
#define TILES_CHECKS_H

#include "fa_stage.h"
#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** M17..M22 and the benchmark, for fa_stage_main(). */
extern const fa_stage_desc stage05;

/**
 * The stage benchmark (`stage05 --bench`, bench.c): the configuration; the
 * bytes naive, online and tiled attention move for one problem (heads 16,
 * N 4096, d 64) and the measured time and TFLOP/s of the M22 traces there;
 * the tile-streaming bandwidth of the M17 traces against the copy ceiling;
 * and what each block adds to the trace of the one before (M18..M22).
 * --quick shrinks every size.
 */
fa_status stage05_bench(const fa_run_options *options);

#ifdef __cplusplus
}
#endif

#endif /* TILES_CHECKS_H */
