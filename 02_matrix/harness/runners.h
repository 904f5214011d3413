/**
 * @file runners.h
 * @brief One launch of any stage-02 kernel, of either implementation and any
 *        version, on host data (through canaries) or on device arrays: what
 *        the checks, the timings, the benchmark and the tests share. Built
 *        only with CUDA.
 */
#ifndef FA_MATRIX_RUNNERS_H
#define FA_MATRIX_RUNNERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "fa_stage.h"
#include "matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    MATMUL_VERSIONS = 4,   /**< M7: naive, smem_tiled, register_blocked, mma_bf16 */
    TRANSPOSE_VERSIONS = 2 /**< M8: naive, smem_tiled */
};

/** The short names of M7's versions ("naive", ...), names[v - 1]. */
extern const char *const matmul_version_names[MATMUL_VERSIONS];
/** The short names of M8's versions. */
extern const char *const transpose_version_names[TRANSPOSE_VERSIONS];

/** The launcher name of M7 version @p version: "matmul_naive", ..., "matmul_mma_bf16". */
const char *matmul_launcher_name(int version);
/** The launcher name of M8 version @p version: "transpose_naive", "transpose_smem_tiled". */
const char *transpose_launcher_name(int version);

/** True for the version whose inputs are bf16 (4, the tensor cores); the others read fp32. */
bool matmul_version_is_bf16(int version);

/** Calls ref_dot_product() or learner_dot_product(). */
fa_status dot_launch(fa_impl impl, const void *x, const void *y, fa_dtype dtype, int64_t n,
                     float *partials, float *result, cudaStream_t stream);

/**
 * Calls the launcher of M7 version @p version (1..4) of @p impl; @p a and @p b
 * are fp32 or, for version 4, bf16 device arrays.
 */
fa_status matmul_launch(int version, fa_impl impl, const void *a, const void *b, float *c,
                        int64_t m, int64_t n, int64_t k, fa_b_layout layout,
                        cudaStream_t stream);

/** Calls the launcher of M8 version @p version (1..2) of @p impl. */
fa_status transpose_launch(int version, fa_impl impl, const float *in, float *out, int64_t rows,
                           int64_t cols, cudaStream_t stream);

/**
 * The dot product of host vectors x and y (@p n elements of @p dtype): uploads
 * them followed by NaN canaries, launches twice into the same poisoned output
 * (a poisoned partials buffer as workspace), and returns both results in
 * @p results; adds to *@p overwritten the canary bytes after result and
 * partials the kernels wrote. Empty vectors are NULL.
 */
fa_status dot_run_on_host(fa_impl impl, const void *x, const void *y, fa_dtype dtype, int64_t n,
                          float results[2], int64_t *overwritten);

/**
 * C = A * B of M7 version @p version on host operands of @p element_size
 * bytes (4, or 2 for version 4): uploads a ([m][k]) and b ([k][n] or [n][k])
 * @p offset elements past a 16-byte boundary (so a nonzero offset takes the
 * unaligned paths), followed by NaN canaries, launches into a poisoned
 * [m][n] output, downloads it to @p c and adds the canary bytes written
 * after it to *@p overwritten.
 */
fa_status matmul_run_on_host(int version, fa_impl impl, const void *a, const void *b,
                             size_t element_size, int64_t m, int64_t n, int64_t k,
                             fa_b_layout layout, int offset, float *c, int64_t *overwritten);

/** out = in^T of M8 version @p version on a host [rows][cols] matrix, through canaries as above. */
fa_status transpose_run_on_host(int version, fa_impl impl, const float *in, int64_t rows,
                                int64_t cols, float *out, int64_t *overwritten);

/**
 * A device array of @p bytes for timing, every byte 0x3C: about 0.0115 in
 * fp32 and bf16, 1.06 in fp16; never zero (zeros can time faster), and sums
 * of them stay finite.
 */
fa_status timing_array(void **device, size_t bytes);

/** What a timed matmul runs (an fa_gpu_work context). */
typedef struct matmul_timed_run {
    int version;
    fa_impl impl;
    const void *a, *b;
    float *c;
    int64_t m, n, k;
    fa_b_layout layout;
} matmul_timed_run;

/** fa_gpu_work of a matmul_timed_run. */
fa_status matmul_timed(void *context, int rep, cudaStream_t stream);

/** What a timed transpose runs. */
typedef struct transpose_timed_run {
    int version;
    fa_impl impl;
    const float *in;
    float *out;
    int64_t rows, cols;
} transpose_timed_run;

/** fa_gpu_work of a transpose_timed_run. */
fa_status transpose_timed(void *context, int rep, cudaStream_t stream);

/** What a timed dot product runs. */
typedef struct dot_timed_run {
    fa_impl impl;
    const void *x, *y;
    fa_dtype dtype;
    int64_t n;
    float *partials, *result;
} dot_timed_run;

/** fa_gpu_work of a dot_timed_run. */
fa_status dot_timed(void *context, int rep, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* FA_MATRIX_RUNNERS_H */
