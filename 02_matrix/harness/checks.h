/**
 * @file checks.h
 * @brief Stage 02 as the harness sees it: a check per milestone (M6 dot
 *        product, M7 matmul with four versions, M8 transpose with two) and
 *        the benchmark. Built only with CUDA.
 *
 * Each check runs the hand-computed fixtures of fixtures.h (compared bit for
 * bit), then random cases of awkward sizes against the double reference
 * under the bound of the kernel's algorithm (model.h), or, with problem
 * flags, one random case of that problem. Milestones with versions walk them
 * by the rules of versions.h.
 */
#ifndef FA_MATRIX_CHECKS_H
#define FA_MATRIX_CHECKS_H

#include "fa_stage.h"
#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** M6, M7, M8 and the benchmark, for fa_stage_main(). */
extern const fa_stage_desc stage02;

/**
 * The stage benchmark (`stage02 --bench`, bench.c): the configuration, the
 * copy bandwidth, the dot product and the transposes in GB/s against it, and
 * every matmul version in TFLOP/s against cuBLAS (SGEMM for fp32, GemmEx
 * bf16 -> fp32 for the tensor-core version) at 1024^3, 2048^3 and 4096^3,
 * NN and NT, all measured in the same run on the reference kernels.
 */
fa_status stage02_bench(const fa_run_options *options);

#ifdef __cplusplus
}
#endif

#endif /* FA_MATRIX_CHECKS_H */
