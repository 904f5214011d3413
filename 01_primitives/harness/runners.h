/**
 * @file runners.h
 * @brief One launch of any stage-01 kernel, of either implementation, on host
 *        data or on device arrays: what the checks, the timings and the
 *        benchmark share. Built only with CUDA.
 */
#ifndef PRIMITIVES_RUNNERS_H
#define PRIMITIVES_RUNNERS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "fa_stage.h"
#include "primitives.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The kernels of the stage, as the checks, timings and benchmark name them. */
typedef enum kernel_kind {
    KERNEL_VECTOR_ADD,
    KERNEL_SCALE_ARRAY,
    KERNEL_EXP,
    KERNEL_ROW_MAX,
    KERNEL_ROW_SUM
} kernel_kind;

/** Everything one launch needs; the device pointers are filled in by the runners. */
typedef struct kernel_launch {
    kernel_kind kind;
    fa_impl impl;
    fa_exp_method method;    /**< KERNEL_EXP */
    float alpha;             /**< KERNEL_SCALE_ARRAY */
    const float *a, *b;      /**< device inputs: b for the vector add only; a is x elsewhere */
    float *out;              /**< device output */
    int64_t n;               /**< elementwise length */
    int64_t rows, cols, ld;  /**< row kernels */
} kernel_launch;

/** The three M3 variants, in the order the checks and the benchmark run them. */
extern const fa_exp_method primitives_exp_methods[3];

/** The launcher name of @p k's kernel: "vector_add", "exp2_prescaled", ... */
const char *kernel_name(const kernel_launch *k);

/** Calls the launcher of @p k's kernel from the reference or the learner's file. */
fa_status kernel_run(const kernel_launch *k, cudaStream_t stream);

/**
 * Runs @p k on host data: uploads a (@p a_count floats) and b (as many, when
 * not NULL) followed by NaN canaries, launches into a poisoned output of
 * @p out_count floats with poisoned canaries, downloads it to @p got and adds
 * to *@p overwritten the canary bytes the kernel wrote. Empty arrays are NULL:
 * the launcher must accept that.
 */
fa_status kernel_run_on_host(kernel_launch k, const float *a, int64_t a_count, const float *b,
                             int64_t out_count, float *got, int64_t *overwritten);

/** Device arrays for timing: a and b of @p count random floats, out of @p count floats. */
typedef struct timing_arrays {
    float *a, *b, *out;
    int64_t count;
} timing_arrays;

/** Allocates and fills them with normal(0, 1) values (never zeros). */
fa_status timing_arrays_alloc(timing_arrays *t, int64_t count, uint64_t seed);
void timing_arrays_free(timing_arrays *t);

/**
 * Points @p k at the arrays of @p t: all of them for elementwise kernels,
 * [count / cols][cols] rows (ld = cols) for the row kernels.
 */
void kernel_aim(kernel_launch *k, const timing_arrays *t, int64_t cols);

/** An fa_time_gpu() work function: launches the kernel_launch @p context. */
fa_status kernel_timed(void *context, int rep, cudaStream_t stream);

/** Bytes a kernel must move at least: every input read once, every output written once. */
double kernel_bytes(const kernel_launch *k);

/** "n = 1048576 fp32" or "128 x 8192 fp32". */
void kernel_shape_label(const kernel_launch *k, char *label, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* PRIMITIVES_RUNNERS_H */
