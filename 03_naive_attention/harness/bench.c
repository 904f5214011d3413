/**
 * @file bench.c
 * @brief The stage-03 benchmark (`stage03 --bench`): time, memory and counted
 *        traffic of the naive attention (reference kernels) as N doubles,
 *        until the N x N score matrices no longer fit (see checks.h).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "attention.h"
#include "checks.h"
#include "fa_device.h"
#include "fa_timing.h"
#include "model.h"
#include "runners.h"

/** The benchmark's inputs: bf16, as a model in inference would pass them. */
static const fa_dtype BENCH_DTYPE = FA_BF16;

enum {
    BENCH_FIRST_N = 512,
    BENCH_QUICK_LAST_N = 1024,
    BENCH_LAST_N = 1 << 20,   /**< a bound on the sweep; memory ends it long before */
    BENCH_MIN_REPEATS = 3,
    BENCH_MAX_REPEATS = 50
};
static const size_t BENCH_COPY_BYTES = (size_t)1 << 30;
static const double GIB = 1024.0 * 1024.0 * 1024.0;

/** Fewer repeats for larger N: about 2^30 / N^2, between 3 and 50 (N = 32k takes seconds). */
static fa_timing_options bench_timing(int64_t n)
{
    fa_timing_options timing = fa_timing_defaults();
    const double repeats = (double)(1 << 30) / ((double)n * (double)n);
    timing.repeats = repeats < BENCH_MIN_REPEATS   ? BENCH_MIN_REPEATS
                     : repeats > BENCH_MAX_REPEATS ? BENCH_MAX_REPEATS
                                                   : (int)repeats;
    timing.warmup = timing.repeats < BENCH_MAX_REPEATS ? 1 : timing.warmup;
    return timing;
}

/** The device's stream-ordered memory pool, where ref_attn_naive() takes its workspace. */
static fa_status current_pool(cudaMemPool_t *pool)
{
    int device = 0;
    FA_CUDA_TRY(cudaGetDevice(&device));
    FA_CUDA_TRY(cudaDeviceGetMemPool(pool, device));
    return FA_OK;
}

/** Hands the pool's unused memory back to the device and zeroes its high-water mark. */
static fa_status pool_reset(void)
{
    cudaMemPool_t pool;
    FA_TRY(current_pool(&pool));
    uint64_t zero = 0; /* the attribute is a 64-bit unsigned integer */
    FA_CUDA_TRY(cudaMemPoolTrimTo(pool, 0));
    FA_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
    return FA_OK;
}

/** The most memory the pool has handed out since pool_reset(). */
static fa_status pool_peak(uint64_t *bytes)
{
    cudaMemPool_t pool;
    FA_TRY(current_pool(&pool));
    uint64_t value = 0;
    FA_CUDA_TRY(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &value));
    *bytes = value;
    return FA_OK;
}

/** Times the three kernels on their own through the score matrix tp->s. */
static fa_status time_steps(const naive_timed_problem *tp, const fa_timing_options *timing,
                            double step_ms[3])
{
    FA_TRY(ref_attn_scores(tp->q, tp->k, tp->s, tp->dtype, tp->dims, 0, 0));
    fa_stats ms;
    for (int m = 9; m <= 11; ++m) {
        FA_TRY(naive_timed_run(FA_IMPL_REFERENCE, m, tp, timing, &ms));
        step_ms[m - 9] = ms.median;
    }
    return FA_OK;
}

/** A table cell: @p value with @p format, or "-" when it was not measured (NaN). */
static const char *cell(char *buf, size_t cap, const char *format, double value)
{
    if (isnan(value))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, format, value);
    return buf;
}

#define ROW_FORMAT "%7s | %9s | %9s | %8s | %8s | %8s | %9s | %6s | %9s | %6s | %6s | %7s | %7s\n"

/** One row of the sweep; *stop is set once N no longer fits. */
static fa_status bench_size(int64_t n, const fa_run_options *options, double copy_gbps,
                            bool *stop)
{
    const naive_attn_dims d = naive_timed_square_dims(n);
    size_t workspace = 0;
    FA_TRY(attn_naive_workspace_bytes(d, &workspace));
    naive_timed_problem tp;
    fa_status status =
        naive_timed_alloc(&tp, d, BENCH_DTYPE, FA_MASK_NONE, false, options->seed);
    if (status == FA_ERR_OUT_OF_MEMORY) {
        printf("%7lld | skipped: the inputs and outputs alone do not fit (%s)\n", (long long)n,
               fa_last_error());
        *stop = true;
        return FA_OK;
    }
    FA_TRY(status);

    const fa_timing_options timing = bench_timing(n);
    fa_stats total = {0};
    uint64_t peak = 0;
    status = pool_reset();
    if (status == FA_OK)
        status = naive_timed_run(FA_IMPL_REFERENCE, 12, &tp, &timing, &total);
    if (status == FA_ERR_OUT_OF_MEMORY) {
        printf("%7lld | %9.2f | skipped: %s\n", (long long)n, (double)workspace / GIB,
               fa_last_error());
        naive_timed_free(&tp);
        *stop = true;
        return FA_OK;
    }
    if (status == FA_OK)
        status = pool_peak(&peak);
    if (status == FA_OK)
        status = pool_reset(); /* hand M12's workspace back before the steps take their own */
    /* The steps need their own score matrix; where it does not fit they are not timed. */
    double step_ms[3] = {NAN, NAN, NAN};
    if (status == FA_OK && fa_device_alloc((void **)&tp.s, workspace) == FA_OK)
        status = time_steps(&tp, &timing, step_ms);
    naive_timed_free(&tp);
    FA_TRY(status);

    const attn_naive_traffic traffic = attn_naive_traffic_bytes(d, BENCH_DTYPE);
    const double seconds = total.median * 1e-3;
    const double flops = 4.0 * (double)(d.batch * d.heads) * (double)n * (double)n * d.head_dim;
    const double softmax_gbps = (double)traffic.softmax / (step_ms[1] * 1e-3) / 1e9;
    char c[13][24];
    printf(ROW_FORMAT, cell(c[0], 24, "%.0f", (double)n),
           cell(c[1], 24, "%.2f", (double)workspace / GIB),
           cell(c[2], 24, "%.2f", (double)peak / GIB), cell(c[3], 24, "%.3f", step_ms[0]),
           cell(c[4], 24, "%.3f", step_ms[1]), cell(c[5], 24, "%.3f", step_ms[2]),
           cell(c[6], 24, "%.3f", total.median), cell(c[7], 24, "%.1f%%", 100 * total.spread),
           cell(c[8], 24, "%.2f", (double)traffic.total / 1e9),
           cell(c[9], 24, "%.0f", (double)traffic.total / (double)traffic.minimum),
           cell(c[10], 24, "%.0f", (double)traffic.total / seconds / 1e9),
           cell(c[11], 24, "%.0f%%", 100 * softmax_gbps / copy_gbps),
           cell(c[12], 24, "%.2f", flops / seconds / 1e12));
    fflush(stdout);
    return FA_OK;
}

fa_status stage03_bench(const fa_run_options *options)
{
    double copy_gbps = 0;
    FA_TRY(fa_bench_begin(BENCH_COPY_BYTES, &copy_gbps));
    printf("\nM12 naive attention, reference kernels: B=1 H=16 D=128, %s inputs, no mask, "
           "scale 1/sqrt(D), seed %llu\n",
           fa_dtype_name(BENCH_DTYPE), (unsigned long long)options->seed);
    printf(ROW_FORMAT, "N", "workspace", "pool peak", "scores", "softmax", "PV", "M12", "spread",
           "counted", "x min", "GB/s", "softmax", "TFLOP/s");
    printf(ROW_FORMAT, "", "GiB", "GiB", "ms", "ms", "ms", "ms", "", "GB", "", "", "of copy", "");
    bool stop = false;
    const int64_t last = options->quick ? BENCH_QUICK_LAST_N : BENCH_LAST_N;
    for (int64_t n = BENCH_FIRST_N; n <= last && !stop; n *= 2)
        FA_TRY(bench_size(n, options, copy_gbps, &stop));
    printf("workspace: attn_naive_workspace_bytes() = B*H*N*N*4, predicted; pool peak: the "
           "high-water mark of the stream-ordered pool over the M12 runs, measured.\n"
           "scores, softmax, PV: each kernel alone (softmax in place; '-' where a separate "
           "score matrix did not fit); M12: the whole launcher, allocation included;\n"
           "medians, spread = (p90 - p10) / median. counted: the bytes the pipeline reads and "
           "writes (S written once and read three times by the softmax, P written and read\n"
           "once; attn_naive_traffic_bytes()); x min: counted over the bytes of reading q, k, "
           "v and writing o, lse once; GB/s: counted / M12 time; softmax of copy: the\n"
           "softmax's counted bytes / its time, over the copy bandwidth; TFLOP/s: "
           "4*B*H*N*N*D / M12 time.\n");
    return FA_OK;
}
