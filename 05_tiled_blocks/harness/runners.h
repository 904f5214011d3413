/**
 * @file runners.h
 * @brief One trace of stage 05, of either implementation, on host data (with
 *        canaries) or on device arrays for timing: what the checks, the tests
 *        and the benchmark share. Built only with CUDA.
 */
#ifndef TILES_RUNNERS_H
#define TILES_RUNNERS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "fa_stage.h"
#include "model.h"
#include "tiles.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Host copies of what one trace wrote, each array of the count a ::tile_sizes gives. */
typedef struct tile_outputs {
    void *q_tiles, *k_tiles, *v_tiles; /**< tile_sizes::tile_bytes per element */
    float *scores, *max, *weights, *correction, *sum, *o, *lse;
} tile_outputs;

/** Allocates every array of @p sizes (at least one element each); FA_ERR_OUT_OF_MEMORY. */
fa_status tile_outputs_alloc(tile_outputs *out, const tile_sizes *sizes);

/** Frees the arrays of @p out and zeroes it. */
void tile_outputs_free(tile_outputs *out);

/** Calls ref_tile_trace() or learner_tile_trace(). */
fa_status tile_trace_launch(fa_impl impl, int milestone, int version, const tile_problem *problem,
                            const tile_trace *trace, cudaStream_t stream);

/**
 * Runs milestone @p milestone of version @p version of @p impl on @p host
 * (a problem whose q, k, v are host arrays): uploads the inputs followed by
 * NaN canaries (fa_canary_input()), launches into poisoned outputs of the
 * counts in @p sizes followed by poisoned canaries (every array the
 * milestone writes, even empty ones), downloads them into @p out and adds to
 * *@p overwritten the canary bytes the trace wrote. @p sizes is normally
 * tile_sizes_of(); a test may shrink an array to see the canaries catch it.
 */
fa_status tile_run_on_host(fa_impl impl, int milestone, int version, const tile_problem *host,
                           const tile_sizes *sizes, tile_outputs *out, int64_t *overwritten);

/** Device arrays of one problem for timing a trace (tile_timed()). */
typedef struct tile_timing {
    fa_impl impl;
    int milestone, version;
    tile_problem problem; /**< device inputs of normal(0, 1) values, scale 1 / sqrt(d) */
    tile_trace trace;     /**< device outputs of the milestone */
} tile_timing;

/**
 * Allocates the inputs of @p shape (its dtype, heads, nq, nk, d; its
 * pointers and scale are ignored) filled from @p seed, and the outputs of
 * milestone @p milestone, version @p version.
 */
fa_status tile_timing_alloc(tile_timing *t, fa_impl impl, int milestone, int version,
                            const tile_problem *shape, uint64_t seed);
void tile_timing_free(tile_timing *t);

/** An fa_time_gpu() work function: one trace of the tile_timing @p context. */
fa_status tile_timed(void *context, int rep, cudaStream_t stream);

/** "16 x 1024 x 1024 d64 bf16": heads x nq x nk, head dimension, dtype. */
void tile_shape_label(const tile_problem *p, char *label, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* TILES_RUNNERS_H */
