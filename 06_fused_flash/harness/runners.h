/**
 * @file runners.h
 * @brief One forward call of stage 06, of either implementation, on host
 *        tensors (with canaries) or on device tensors for timing; and M24's
 *        validation of either implementation: what the checks, the tests
 *        and the benchmark share. Built only with CUDA.
 */
#ifndef FLASH_RUNNERS_H
#define FLASH_RUNNERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "fa_stage.h"
#include "fa_stats.h"
#include "fixtures.h"
#include "flash.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A forward launcher: version @p version of one implementation on the
 * device call @p p, validated beforehand for that version. Stage 06's are
 * ref_flash_forward() and learner_flash_forward(); stage 07 runs its M25
 * through the same runners.
 */
typedef fa_status (*flash_launcher)(int version, const fa_attention_params *p, cudaStream_t stream);

/** @p impl's M23: ref_flash_forward() or learner_flash_forward(). */
flash_launcher flash_forward_of(fa_impl impl);

/**
 * The library's fa_attention_forward() as a launcher, the variant forced to
 * version @p version: what a caller gets, packed batches included (their
 * offsets read back and checked).
 */
fa_status flash_library_forward(int version, const fa_attention_params *p, cudaStream_t stream);

/** The library's versions the current device runs: 1 to 3 on compute capability 9.0, else 1 and 2. */
int flash_library_versions(void);

/** @p impl's M24: ref_attention_validate() or learner_attention_validate(). */
fa_status flash_validate(fa_impl impl, const fa_attention_params *p, fa_variant *chosen);

/** What the device copies of a call's outputs hold: normally all of o's span and of lse. */
typedef struct flash_sizes {
    int64_t o_bytes;   /**< flash_o_bytes() */
    int64_t lse_count; /**< flash_lse_count() when the call has lse, else 0 */
} flash_sizes;

/** The sizes of the outputs of @p host. */
flash_sizes flash_sizes_of(const fa_attention_params *host);

/**
 * Runs version @p version of @p launch on @p host, a call on host memory
 * (fixtures.h): uploads the spans of q, k and v followed by NaN canaries
 * (fa_canary_input()), makes o and lse poisoned device buffers of @p sizes
 * followed by poisoned canaries (fa_canary_output()), validates the device
 * call with the variant forced to @p version (the reference's validation,
 * fa_attention_supported(): M23 is judged apart from M24; a call the version
 * cannot run returns the launcher's refusal; a packed call's offsets are
 * uploaded too and their contents checked), launches, and downloads o into
 * host->o and lse into host->lse, adding to *@p overwritten the canary bytes
 * the kernel wrote. @p sizes is normally flash_sizes_of(host); a test may
 * shrink an output to see the canaries catch the last element.
 */
fa_status flash_run_on_host(flash_launcher launch, int version, const fa_attention_params *host,
                            const flash_sizes *sizes, int64_t *overwritten);

/**
 * Runs version @p version of @p launch on @p c (flash_run_on_host()) and
 * judges o and lse under the version's declared method, every row (or, from
 * FLASH_SAMPLE_FROM query rows on, the sample of flash_sample_rows()), and
 * the canaries. False, @p result filled, on a failure, an error or a
 * version not implemented.
 */
bool flash_result_run(fa_result *result, const char *name, flash_launcher launch, int version,
                      flash_case *c);

/** The shape of a timed call: contiguous [B,N,H,D] tensors, o in the input dtype, lse written. */
typedef struct flash_shape {
    int64_t batch, heads_q, heads_kv, nq, nk, head_dim;
    fa_dtype dtype;
    fa_mask mask;                      /**< none but in stage 07 */
    int64_t window_left, window_right; /**< FA_MASK_WINDOW's extents */
} flash_shape;

/** 4 B Hq nq nk D: the flops of S = Q K^T and O = P V (two multiply-adds per product). */
double flash_flop(const flash_shape *s);

/** "16 x 16 x 1024 x 1024 d64 bf16": batch x heads x nq x nk, head dimension, dtype (and a mask, a window with its extents). */
void flash_shape_label(const flash_shape *s, char *label, size_t cap);

/** A call on device tensors, for timing (flash_timed()). */
typedef struct flash_timing {
    flash_launcher launch;
    int version;
    fa_attention_params params; /**< device q, k, v of normal(0, 1) values; o, lse; variant = version */
} flash_timing;

/**
 * Allocates the tensors of @p shape, fills q, k and v from @p seed
 * (fa_device_fill_normal()) and validates the call for version @p version
 * (its refusal is returned, nothing left allocated).
 */
fa_status flash_timing_alloc(flash_timing *t, flash_launcher launch, int version,
                             const flash_shape *shape, uint64_t seed);
void flash_timing_free(flash_timing *t);

/** An fa_time_gpu() work function: one forward call of the flash_timing @p context. */
fa_status flash_timed(void *context, int rep, cudaStream_t stream);

/**
 * The times (fa_time_gpu() with fa_timing_defaults()) of version @p version
 * of @p launch on @p shape: flash_timing_alloc(), timed, freed.
 */
fa_status flash_time_shape(flash_launcher launch, int version, const flash_shape *shape,
                           uint64_t seed, fa_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* FLASH_RUNNERS_H */
