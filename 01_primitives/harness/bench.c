/**
 * @file bench.c
 * @brief The stage-01 benchmark (`stage01 --bench`): effective bandwidth of
 *        every reference kernel against the measured copy ceiling, and the
 *        measured accuracy of the three exp variants.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "checks.h"
#include "fa_device.h"
#include "fa_index.h"
#include "fa_timing.h"
#include "fixtures.h"
#include "model.h"
#include "runners.h"

enum { MIB = 1 << 20 };

/** The course's target for the memory-bound kernels: this share of the measured copy bandwidth. */
static const double BANDWIDTH_TARGET = 0.85;

/** The copy ceiling is measured at this size (>= 256 MiB, far beyond L2). */
static const size_t COPY_BYTES = (size_t)256 * MIB;

/** Bytes per array of the bandwidth table: 256 MiB and 1 GiB (--quick: 16 MiB). */
static const int64_t BENCH_ARRAY_MIB[] = {256, 1024};
static const int64_t BENCH_QUICK_ARRAY_MIB = 16;

/** Row length of the row kernels in the table: long rows, as attention's softmax sees at N = 8k. */
enum { BENCH_ROW_COLS = 8192 };

/** A scale that rounds, as the M2 check uses. */
static const float BENCH_SCALE = 1.7f;

static fa_status bench_bandwidth(const fa_run_options *options, double copy_gb_per_s)
{
    const kernel_launch kernels[] = {
        {.kind = KERNEL_VECTOR_ADD},
        {.kind = KERNEL_SCALE_ARRAY, .alpha = BENCH_SCALE},
        {.kind = KERNEL_EXP, .method = FA_EXP_EXPF},
        {.kind = KERNEL_EXP, .method = FA_EXP_EXP2_PRESCALED},
        {.kind = KERNEL_EXP, .method = FA_EXP_FAST},
        {.kind = KERNEL_ROW_MAX},
        {.kind = KERNEL_ROW_SUM},
    };
    const fa_timing_options timing = fa_timing_defaults();
    printf("\nEffective bandwidth of the reference kernels (bytes read + written / median time; "
           "%d warm-up, %d timed runs, L2 flushed%s)\n",
           timing.warmup, timing.repeats, timing.flush_l2 ? "" : " not");
    printf("| kernel | MiB per array | shape | MB moved | median ms | p10-p90 spread | GB/s | "
           "%% of copy | target %.0f%% |\n",
           100.0 * BANDWIDTH_TARGET);
    printf("|---|---|---|---|---|---|---|---|---|\n");

    const int sizes = options->quick ? 1 : FA_COUNT_OF(BENCH_ARRAY_MIB);
    for (int s = 0; s < sizes; ++s) {
        const int64_t mib = options->quick ? BENCH_QUICK_ARRAY_MIB : BENCH_ARRAY_MIB[s];
        timing_arrays t;
        FA_TRY(timing_arrays_alloc(&t, mib * MIB / (int64_t)sizeof(float), options->seed));
        fa_status status = FA_OK;
        for (int i = 0; i < FA_COUNT_OF(kernels) && status == FA_OK; ++i) {
            kernel_launch k = kernels[i];
            k.impl = FA_IMPL_REFERENCE;
            kernel_aim(&k, &t, BENCH_ROW_COLS);
            fa_stats ms;
            status = fa_time_gpu(kernel_timed, &k, &timing, &ms);
            if (status != FA_OK)
                break;
            const double gb_per_s = kernel_bytes(&k) / (ms.median * 1e-3) / 1e9;
            const double share = gb_per_s / copy_gb_per_s;
            char shape[64];
            kernel_shape_label(&k, shape, sizeof shape);
            printf("| %s | %lld | %s | %.0f | %.4f | %.1f%% | %.0f | %.1f%% | %s |\n",
                   kernel_name(&k), (long long)mib, shape, kernel_bytes(&k) / 1e6, ms.median,
                   100.0 * ms.spread, gb_per_s, 100.0 * share,
                   share >= BANDWIDTH_TARGET ? "met" : "MISSED");
        }
        timing_arrays_free(&t);
        FA_TRY(status);
    }
    return FA_OK;
}

/** Samples of the exp accuracy sweep: every ~1e-5 of [-87, 88] (--quick: 65536). */
enum { ULP_SAMPLES = 1 << 24, ULP_QUICK_SAMPLES = 1 << 16 };

static fa_status bench_exp_accuracy(const fa_run_options *options)
{
    static const char *const code[] = {"expf(x)", "exp2f(x * log2e)", "__expf(x)"};
    static const char *const budget[] = {"2", "2 of exp2f + argument rounding",
                                         "2 + floor(1.173 |x|)"};
    const int64_t n = options->quick ? ULP_QUICK_SAMPLES : ULP_SAMPLES;
    float *x = malloc((size_t)n * sizeof(float)), *y = malloc((size_t)n * sizeof(float));
    if (x == NULL || y == NULL) {
        free(x);
        free(y);
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "stage01: no host memory for %lld exp samples",
                       (long long)n);
    }
    for (int64_t i = 0; i < n; ++i)
        x[i] = exp_sweep_x(i, n);
    fa_status status = FA_OK;

    printf("\nexp accuracy: %lld points evenly over [-87, 88]; error against exp(x) in double, in "
           "ulps of exp(x)\n",
           (long long)n);
    printf("| launcher | code | max ulp, |x| <= 1 | |x| <= 10 | all x | worst at x | CUDA table "
           "(ulp) | max error / bound |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (int m = 0; m < FA_COUNT_OF(primitives_exp_methods) && status == FA_OK; ++m) {
        const kernel_launch k = {.kind = KERNEL_EXP, .impl = FA_IMPL_REFERENCE,
                                 .method = primitives_exp_methods[m], .n = n};
        int64_t overwritten = 0;
        status = kernel_run_on_host(k, x, n, NULL, n, y, &overwritten);
        if (status != FA_OK)
            break;
        exp_sweep_summary s;
        exp_sweep_summarise(k.method, x, y, n, &s);
        const bool within = exp_sweep_within_bound(&s);
        printf("| %s | `%s` | %.2f | %.2f | %.2f | %.4f | %s | %.3f%s |\n", kernel_name(&k),
               code[m], s.max_ulps[0], s.max_ulps[1], s.max_ulps[2], s.worst_x, budget[m],
               s.worst_ratio, within ? "" : " EXCEEDS THE BOUND");
        if (!within || overwritten != 0)
            status = fa_fail(FA_ERR_INVALID_ARGUMENT,
                             "stage01: %s leaves its error bound (worst error / bound %g, %lld "
                             "canary bytes written)",
                             kernel_name(&k), s.worst_ratio, (long long)overwritten);
    }
    printf("Ulps here are measured from exp(x) itself, so a correctly rounded result is up to "
           "0.5 ulp off; the bound adds that half ulp to each table entry.\n");
    free(x);
    free(y);
    return status;
}

fa_status stage01_bench(const fa_run_options *options)
{
    double copy_gb_per_s = 0.0;
    FA_TRY(fa_bench_begin(COPY_BYTES, &copy_gb_per_s));
    FA_TRY(bench_bandwidth(options, copy_gb_per_s));
    return bench_exp_accuracy(options);
}
