/**
 * @file runners.h
 * @brief One launch of any stage-04 kernel, of either implementation, on host
 *        data or on device arrays: what the checks, the timings, the
 *        benchmark and the GPU tests share. Built only with CUDA.
 *
 * The host runners put every input in device memory followed by NaN canaries
 * (a kernel that reads past the end of an input turns its output NaN) and
 * every output in poisoned memory followed by poisoned canaries (an element
 * never written reads as unwritten, a write past the end changes a canary):
 * fa_canary_input(), fa_canary_output(), fa_canary_download().
 */
#ifndef ONLINE_RUNNERS_H
#define ONLINE_RUNNERS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "fa_stage.h"
#include "fa_timing.h"
#include "online.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The trace kernel of @p op as the cases name it: "max trace", "correction trace", ... */
const char *online_trace_name(online_trace_op op);

/** Calls the trace launcher @p op of @p impl on device arrays (v is read by the output trace only). */
fa_status online_launch_trace(fa_impl impl, online_trace_op op, const float *x, const float *v,
                              float *trace, int64_t rows, int64_t n, int64_t chunk,
                              cudaStream_t stream);

/** Calls softmax_rows_online of @p impl on device arrays. */
fa_status online_launch_softmax(fa_impl impl, const float *x, float *p, float *lse, int64_t rows,
                                int64_t n, cudaStream_t stream);

/** Calls attn_rows_online of @p impl on a problem of device arrays. */
fa_status online_launch_attention(fa_impl impl, const attn_online_args *args,
                                  cudaStream_t stream);

/**
 * Runs one trace launcher of @p impl on host arrays: uploads x (and v for
 * the output trace; v may be NULL otherwise), launches into a poisoned
 * device trace of rows * online_chunk_count(n, chunk) floats and downloads
 * it to @p trace. *@p overwritten receives how many canary bytes after the
 * trace lost their poison (0 unless the kernel wrote out of bounds).
 * @return the launcher's status, or a CUDA failure.
 */
fa_status online_run_trace(fa_impl impl, online_trace_op op, const float *x, const float *v,
                           int64_t rows, int64_t n, int64_t chunk, float *trace,
                           int64_t *overwritten);

/**
 * Runs softmax_rows_online of @p impl on host arrays: p [rows][n] and, when
 * @p lse is not NULL, lse [rows] (the launcher gets NULL otherwise).
 * *@p overwritten counts the clobbered canary bytes after p and lse.
 */
fa_status online_run_softmax(fa_impl impl, const float *x, int64_t rows, int64_t n, float *p,
                             float *lse, int64_t *overwritten);

/**
 * Runs attn_rows_online of @p impl on a problem whose pointers are host
 * arrays: q, k, v uploaded, o and lse (lse may be NULL) downloaded into
 * @p host->o and @p host->lse. *@p overwritten counts clobbered canary bytes.
 */
fa_status online_run_attention(fa_impl impl, const attn_online_args *host,
                               int64_t *overwritten);

/* ---- device problems for timing -------------------------------------------------------- */

/** A trace problem in device memory (inputs uniform in [-4, 4)). */
typedef struct online_timed_trace {
    fa_impl impl;
    online_trace_op op;
    float *x, *v, *trace;
    int64_t rows, n, chunk;
} online_timed_trace;

/** A softmax problem in device memory (x uniform in [-4, 4), lse written). */
typedef struct online_timed_softmax {
    fa_impl impl;
    float *x, *p, *lse;
    int64_t rows, n;
} online_timed_softmax;

/** An attention problem in device memory (q, k, v uniform in [-4, 4), lse written). */
typedef struct online_timed_attention {
    fa_impl impl;
    float *q, *k, *v, *o, *lse;
    attn_online_args args; /**< points at the arrays above */
} online_timed_attention;

/** Allocates and fills @p t for @p op of @p impl; frees what it allocated on failure. */
fa_status online_timed_trace_alloc(online_timed_trace *t, fa_impl impl, online_trace_op op,
                                   int64_t rows, int64_t n, int64_t chunk, uint64_t seed);
void online_timed_trace_free(online_timed_trace *t);

/** Allocates and fills @p t, rows x n; frees what it allocated on failure. */
fa_status online_timed_softmax_alloc(online_timed_softmax *t, fa_impl impl, int64_t rows,
                                     int64_t n, uint64_t seed);
void online_timed_softmax_free(online_timed_softmax *t);

/**
 * Allocates and fills @p t for the problem @p shape (its pointers are
 * ignored: the arrays are allocated here); frees what it allocated on failure.
 */
fa_status online_timed_attention_alloc(online_timed_attention *t, fa_impl impl,
                                       const attn_online_args *shape, uint64_t seed);
void online_timed_attention_free(online_timed_attention *t);

/** fa_time_gpu() work functions: one launch of the online_timed_* @p context. */
fa_status online_trace_work(void *context, int rep, cudaStream_t stream);
fa_status online_softmax_work(void *context, int rep, cudaStream_t stream);
fa_status online_attention_work(void *context, int rep, cudaStream_t stream);

/** Median milliseconds of @p work on @p context (fa_timing_defaults()). */
fa_status online_median_ms(fa_gpu_work work, void *context, double *milliseconds);

#ifdef __cplusplus
}
#endif

#endif /* ONLINE_RUNNERS_H */
