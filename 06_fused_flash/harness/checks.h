/**
 * @file checks.h
 * @brief Stage 06 as the harness sees it: the check of M23 (the fused
 *        kernel, versions 1 and 2), the check of M24 (the launcher's
 *        validation, host code: it runs without a GPU) and the benchmark.
 *        Built only with CUDA.
 *
 * M23 runs each version on the fixtures of fixtures.h and on the cases of
 * FlashAttention-2's shape grid (flash_grid_spec()), and judges o and lse
 * end to end against fa_attention_reference() under the method the version
 * declares (fa_attention_method() with the variant forced), with canaries
 * after every buffer, poisoned outputs and o's gaps checked untouched. A
 * version still marked FA_TODO_VERSION is reported as not implemented, with
 * the other version's result in the detail. M24 runs the battery of
 * battery.h through the implementation's validation.
 */
#ifndef FLASH_CHECKS_H
#define FLASH_CHECKS_H

#include "fa_stage.h"
#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** M23, M24 and the benchmark, for fa_stage_main(). */
extern const fa_stage_desc stage06;

/**
 * The stage benchmark (`stage06 --bench`, bench.c): the configuration; the
 * TFLOP/s of both versions on the course's grid (B N = 16384 tokens,
 * H D = 2048, N from 512 to 16384; version 1 up to N = 4096); v1 at
 * flash-attention-minimal's shape beside its quoted figure; and the device
 * memory a forward call allocates beyond o and lse (0). --quick keeps
 * N <= 1024.
 */
fa_status stage06_bench(const fa_run_options *options);

#ifdef __cplusplus
}
#endif

#endif /* FLASH_CHECKS_H */
