/**
 * @file fa_timing.h
 * @brief Timing GPU work with CUDA events, and the ceilings numbers are judged against.
 *
 * fa_time_gpu() warms up, then times each repetition between two events and
 * summarises the samples (median and spread, see fa_stats.h). Before each
 * repetition it can overwrite a buffer twice the size of the L2 cache so that
 * inputs come from device memory, as they do in a real model; the flush runs
 * outside the timed region. Rotating input sets (the @p rep argument) is the
 * alternative for small problems.
 */
#ifndef FA_TIMING_H
#define FA_TIMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "fa_stats.h"
#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The work to time: launches onto @p stream; @p rep counts repetitions (to rotate inputs). */
typedef fa_status (*fa_gpu_work)(void *context, int rep, cudaStream_t stream);

/** How to time. */
typedef struct fa_timing_options {
    int warmup;     /**< untimed runs first (module load, clocks up) */
    int repeats;    /**< timed runs; the median is reported */
    bool flush_l2;  /**< overwrite 2x the L2 size before each timed run */
} fa_timing_options;

/** 5 warm-up runs, 50 repeats, L2 flushed. */
fa_timing_options fa_timing_defaults(void);

/** Times @p work; @p milliseconds receives the statistics of the repeats. */
FA_MUST_CHECK fa_status fa_time_gpu(fa_gpu_work work, void *context,
                                    const fa_timing_options *options, fa_stats *milliseconds);

/**
 * Measures device-to-device copy bandwidth with cudaMemcpyAsync of @p bytes,
 * counting bytes read plus bytes written (the ceiling memory-bound kernels
 * are judged against). Result in GB/s (1e9 bytes per second).
 */
FA_MUST_CHECK fa_status fa_measure_copy_bandwidth(size_t bytes, double *gb_per_s);

/**
 * Prints the configuration every benchmark prints beside its numbers: GPU name,
 * SM count, compute capability, clocks (when readable), memory, CUDA runtime
 * and driver versions, and the commit the binary was built from.
 */
FA_MUST_CHECK fa_status fa_print_configuration(FILE *out);

/**
 * How every stage's benchmark begins: prints the configuration
 * (fa_print_configuration()) on stdout, measures the copy ceiling with
 * @p copy_bytes per copy (fa_measure_copy_bandwidth()) into
 * @p copy_gb_per_s, and prints it in one line, e.g.
 * "Ceiling: device-to-device cudaMemcpyAsync of 256 MiB: 4141 GB/s (bytes read + written)".
 */
FA_MUST_CHECK fa_status fa_bench_begin(size_t copy_bytes, double *copy_gb_per_s);

#ifdef __cplusplus
}
#endif

#endif /* FA_TIMING_H */
