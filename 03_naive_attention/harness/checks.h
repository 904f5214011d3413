/**
 * @file checks.h
 * @brief Stage 03 as the harness sees it: a check per milestone (M9-M12)
 *        and the benchmark. Built only with CUDA.
 *
 * Each check runs the hand-computed fixtures (fixtures.h) in fp32, bf16 and
 * fp16, then random cases of awkward sizes (1, tile - 1, tile, tile + 1,
 * non-multiples, long rows), every mask and padding, on the implementation it
 * is given; with problem flags, one random case of that problem instead.
 * Every case has a name (`--case` reruns it alone) and its own random stream.
 * Every output is poisoned before the launch and followed by poisoned canary
 * bytes; every input is followed by NaN canaries (common/fa_device.h). A case
 * passes when the bound covers every element (M9-M11: references.h; M12:
 * fa_attention_reference() under the naive method) and the canaries after
 * the outputs are intact.
 */
#ifndef NAIVE_ATTENTION_CHECKS_H
#define NAIVE_ATTENTION_CHECKS_H

#include "fa_stage.h"
#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** M9..M12 and the benchmark, for fa_stage_main(). */
extern const fa_stage_desc stage03;

/**
 * The stage benchmark (`stage03 --bench`, bench.c): time and device memory
 * of the naive attention (reference kernels) against N = 512, 1024, ... for
 * B = 1, H = 16, D = 128, bf16 inputs, no mask, until the score matrices no
 * longer fit in device memory (that size is reported as skipped, with the
 * bytes it needed). Beside each time: the workspace the launcher predicted
 * and the peak the allocator measured, the time of each of the three
 * kernels, the HBM bytes the pipeline moves (counted, see
 * attn_naive_traffic_bytes()) and the bandwidth and TFLOP/s they imply.
 * With fa_run_options::quick the sweep stops at N = 1024.
 */
fa_status stage03_bench(const fa_run_options *options);

#ifdef __cplusplus
}
#endif

#endif /* NAIVE_ATTENTION_CHECKS_H */
