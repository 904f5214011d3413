/**
 * @file checks.h
 * @brief Stage 02's milestones as the harness sees them, and its benchmark.
 */
#ifndef FA_MATRIX_CHECKS_H
#define FA_MATRIX_CHECKS_H

#include "fa_stage.h"

#ifdef __cplusplus
extern "C" {
#endif

/** M6 dot product, M7 matmul (four versions), M8 transpose (two versions), in order. */
extern const fa_milestone_check stage02_checks[];
/** Number of entries of stage02_checks. */
extern const int stage02_check_count;

/**
 * The benchmark table: GFLOP/s and percent of cuBLAS for every matmul version
 * at 1024^3, 2048^3 and 4096^3 (SGEMM for fp32, GemmEx bf16 -> fp32 for the
 * tensor-core version), and the dot product and transposes in GB/s and
 * percent of the measured copy bandwidth. Prints the configuration first.
 */
fa_status stage02_bench(const fa_run_options *options);

#ifdef __cplusplus
}
#endif

#endif /* FA_MATRIX_CHECKS_H */
