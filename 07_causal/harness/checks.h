/**
 * @file checks.h
 * @brief Stage 07 as the harness sees it: the check of M25 (the key tiles
 *        and the element mask, run in the reference's version 1 fused
 *        kernel) and the benchmark. Built only with CUDA.
 *
 * M25 runs the sentinel fixtures (cases.h), then stage 06's shape grid with
 * a mask on every case (causal_grid_spec()), then the packed batches
 * (causal_packed_case()), each judged end to end against
 * fa_attention_reference() under the masks' own allowed keys and the bound
 * of the declared method (a packed batch sequence by sequence), with
 * canaries after every buffer. For the reference it then runs the library's
 * versions 2 and 3 on their own grids and packed batches (version 3 where
 * the device runs it); --version picks one.
 */
#ifndef CAUSAL_CHECKS_H
#define CAUSAL_CHECKS_H

#include "fa_stage.h"
#include "fa_status.h"
#include "packed.h"
#include "runners.h"

#ifdef __cplusplus
extern "C" {
#endif

/** M25 and the benchmark, for fa_stage_main(). */
extern const fa_stage_desc stage07;

/** @p impl's M25 launcher: ref_causal_forward() or learner_causal_forward(). */
flash_launcher causal_forward_of(fa_impl impl);

/**
 * Runs version @p version of @p launch on the packed call of @p b
 * (flash_run_on_host(): canaries, the offsets uploaded and checked), then
 * requires every byte of o and lse outside the sequences' elements (rows of
 * no sequence, gaps between rows) to keep its poison, and judges every
 * sequence with a row as a call of its own under the version's declared
 * method: its mask aligned to its own lengths, its rows against its own
 * keys. False, @p result filled, on a failure or an error.
 */
bool causal_packed_result(fa_result *result, const char *name, flash_launcher launch, int version,
                          causal_packed *b);

/**
 * The stage benchmark (`stage07 --bench`, bench.c): causal against
 * non-causal time of versions 1 and 2 on the course's grid, and the time of
 * each kind of key tile. --quick keeps N <= 1024.
 */
fa_status stage07_bench(const fa_run_options *options);

#ifdef __cplusplus
}
#endif

#endif /* CAUSAL_CHECKS_H */
