/**
 * @file bench.c
 * @brief The stage-04 benchmark (`stage04 --bench`): the one-pass softmax
 *        against stage 03's three passes, and online attention against
 *        stage 03's naive attention, with counted bytes and measured times.
 *
 * Stage 03's kernels run beside the online ones when this build links them
 * (ONLINE_BENCH_WITH_STAGE03, set by CMakeLists.txt when stage 03 is built):
 * on the same device arrays, in the same run. Without them the stage-03
 * columns show the counted bytes only.
 */
#include <math.h>
#include <stdio.h>

#include "checks.h"
#include "fa_device.h"
#include "fa_index.h"
#include "fa_mask.h"
#include "fa_timing.h"
#include "runners.h"
#include "traffic.h"

#if ONLINE_BENCH_WITH_STAGE03
#include "attention.h"
#endif

enum { MIB = 1 << 20 };

/** The copy ceiling is measured at this size (far beyond L2). */
static const size_t COPY_BYTES = (size_t)256 * MIB;

/* ---- softmax ------------------------------------------------------------------------------ */

/** Softmax shapes of the benchmark, rows x n: 64 MiB of x each, short rows to one row per SM. */
static const int64_t BENCH_SOFTMAX_SHAPES[][2] = {
    {65536, 256}, {16384, 1024}, {4096, 4096}, {1024, 16384}, {132, 131072}};
static const int64_t BENCH_QUICK_SOFTMAX_SHAPE[2] = {1024, 1024};

#if ONLINE_BENCH_WITH_STAGE03
/** Stage 03's three-pass softmax on the arrays of the online_timed_softmax @p context. */
static fa_status three_pass_softmax_work(void *context, int rep, cudaStream_t stream)
{
    (void)rep;
    const online_timed_softmax *t = context;
    const naive_attn_dims dims = {1, 1, t->rows, t->n, 1};
    return ref_softmax_rows(t->x, t->p, t->lse, dims, FA_MASK_NONE, NULL, stream);
}
#endif

/** Median ms of the three-pass softmax on @p t, or -1 when stage 03 is not linked. */
static fa_status time_three_pass_softmax(online_timed_softmax *t, double *milliseconds)
{
    *milliseconds = -1.0;
#if ONLINE_BENCH_WITH_STAGE03
    return online_median_ms(three_pass_softmax_work, t, milliseconds);
#else
    (void)t;
    return FA_OK;
#endif
}

static fa_status bench_softmax(const fa_run_options *options, double copy_gb_per_s)
{
    printf("\nOne-pass softmax (softmax_rows_online) against three passes (stage 03's "
           "ref_softmax_rows), fp32, lse written.\n"
           "Bytes are counted: one pass reads x twice and writes p (%d B per entry), three passes "
           "read x three times (%d B).\n"
           "Time is measured (median, L2 flushed before each run); GB/s = counted bytes / time.\n",
           ONLINE_SOFTMAX_BYTES_PER_ENTRY, THREE_PASS_SOFTMAX_BYTES_PER_ENTRY);
    printf("%8s %8s | %10s %10s %8s %7s | %10s %10s %8s | %7s\n", "rows", "n", "1-pass MB", "ms",
           "GB/s", "% copy", "3-pass MB", "ms", "GB/s", "speedup");
    const int shapes = options->quick ? 1 : FA_COUNT_OF(BENCH_SOFTMAX_SHAPES);
    for (int s = 0; s < shapes; ++s) {
        const int64_t *shape = options->quick ? BENCH_QUICK_SOFTMAX_SHAPE : BENCH_SOFTMAX_SHAPES[s];
        const int64_t rows = shape[0], n = shape[1];
        const double one_bytes = (double)online_softmax_bytes(rows, n);
        const double three_bytes = (double)three_pass_softmax_bytes(rows, n);
        online_timed_softmax t;
        double one_ms = 0.0, three_ms = -1.0;
        FA_TRY(online_timed_softmax_alloc(&t, FA_IMPL_REFERENCE, rows, n, options->seed));
        fa_status status = online_median_ms(online_softmax_work, &t, &one_ms);
        if (status == FA_OK)
            status = time_three_pass_softmax(&t, &three_ms);
        online_timed_softmax_free(&t);
        FA_TRY(status);
        const double one_gbps = one_bytes / (one_ms * 1e-3) / 1e9;
        printf("%8lld %8lld | %10.1f %10.4f %8.1f %6.1f%% | %10.1f ", (long long)rows, (long long)n,
               one_bytes / 1e6, one_ms, one_gbps, 100.0 * one_gbps / copy_gb_per_s,
               three_bytes / 1e6);
        if (three_ms > 0.0)
            printf("%10.4f %8.1f | %6.2fx\n", three_ms, three_bytes / (three_ms * 1e-3) / 1e9,
                   three_ms / one_ms);
        else
            printf("%10s %8s | %7s\n", "-", "-", "-");
    }
    return FA_OK;
}

/* ---- attention ---------------------------------------------------------------------------- */

/** Attention shapes of the benchmark: B, H, N (= Nq = Nk), D, mask, chunk. */
typedef struct attn_bench_shape {
    int64_t batch, heads, n, dim;
    fa_mask mask;
    int64_t chunk;
} attn_bench_shape;

static const attn_bench_shape BENCH_ATTN_SHAPES[] = {
    {1, 16, 1024, 64, FA_MASK_NONE, 32}, {1, 16, 1024, 64, FA_MASK_NONE, 64},
    {1, 16, 2048, 64, FA_MASK_NONE, 64}, {1, 16, 1024, 128, FA_MASK_CAUSAL_TOP_LEFT, 64},
    {4, 16, 512, 64, FA_MASK_NONE, 32},
};
static const attn_bench_shape BENCH_QUICK_ATTN_SHAPE = {1, 4, 256, 64, FA_MASK_NONE, 32};

#if ONLINE_BENCH_WITH_STAGE03
/** Stage 03's naive attention on the arrays of the online_timed_attention @p context. */
static fa_status naive_attention_work(void *context, int rep, cudaStream_t stream)
{
    (void)rep;
    const online_timed_attention *t = context;
    const attn_online_args *a = &t->args;
    const naive_attn_dims dims = {a->batch, a->heads_q, a->nq, a->nk, a->head_dim};
    return ref_attn_naive(a->q, a->k, a->v, a->o, a->lse, FA_F32, dims, a->scale, a->mask, NULL,
                          stream);
}
#endif

/** Median ms of the naive attention on @p t, or -1 when stage 03 is not linked. */
static fa_status time_naive_attention(online_timed_attention *t, double *milliseconds)
{
    *milliseconds = -1.0;
#if ONLINE_BENCH_WITH_STAGE03
    return online_median_ms(naive_attention_work, t, milliseconds);
#else
    (void)t;
    return FA_OK;
#endif
}

static fa_status bench_attention(const fa_run_options *options)
{
    printf("\nOnline attention (attn_rows_online, one query row per warp) against the naive "
           "attention of stage 03 (S and P in device memory), fp32.\n"
           "Bytes are counted, each kernel's inputs read once and outputs written once: online = "
           "Q + K + V + O + lse; naive adds S written,\nread three times and overwritten by P, "
           "and P read again (6 N^2 floats per head). TFLOP/s = 4 B H N^2 D (halved when causal) "
           "/ time.\n");
    printf("%3s %3s %6s %4s %7s %5s | %9s %10s %8s | %9s %10s %8s | %7s\n", "B", "H", "N", "D",
           "mask", "chunk", "online MB", "ms", "TFLOP/s", "naive MB", "ms", "TFLOP/s", "speedup");
    const int shapes = options->quick ? 1 : FA_COUNT_OF(BENCH_ATTN_SHAPES);
    for (int s = 0; s < shapes; ++s) {
        const attn_bench_shape *b =
            options->quick ? &BENCH_QUICK_ATTN_SHAPE : &BENCH_ATTN_SHAPES[s];
        const int64_t heads = b->batch * b->heads;
        const double online_bytes = (double)online_attn_bytes(heads, b->n, b->dim);
        const double naive_bytes = (double)naive_attn_bytes(heads, b->n, b->dim);
        const double n = (double)b->n, d = (double)b->dim;
        const double causal_share = b->mask == FA_MASK_NONE ? 1.0 : 0.5;
        const double flops = 4.0 * (double)heads * n * n * d * causal_share;
        const attn_online_args shape = {.batch = b->batch,
                                        .heads_q = b->heads,
                                        .heads_kv = b->heads,
                                        .nq = b->n,
                                        .nk = b->n,
                                        .head_dim = b->dim,
                                        .scale = (float)(1.0 / sqrt(d)),
                                        .mask = b->mask,
                                        .chunk = b->chunk};
        online_timed_attention t;
        double online_ms = 0.0, naive_ms = -1.0;
        FA_TRY(online_timed_attention_alloc(&t, FA_IMPL_REFERENCE, &shape, options->seed));
        fa_status status = online_median_ms(online_attention_work, &t, &online_ms);
        if (status == FA_OK)
            status = time_naive_attention(&t, &naive_ms);
        online_timed_attention_free(&t);
        FA_TRY(status);
        printf("%3lld %3lld %6lld %4lld %7s %5lld | %9.1f %10.4f %8.3f | %9.1f ",
               (long long)b->batch, (long long)b->heads, (long long)b->n, (long long)b->dim,
               b->mask == FA_MASK_NONE ? "none" : "causal", (long long)b->chunk, online_bytes / 1e6,
               online_ms, flops / (online_ms * 1e-3) / 1e12, naive_bytes / 1e6);
        if (naive_ms > 0.0)
            printf("%10.4f %8.3f | %6.2fx\n", naive_ms, flops / (naive_ms * 1e-3) / 1e12,
                   naive_ms / online_ms);
        else
            printf("%10s %8s | %7s\n", "-", "-", "-");
    }
    return FA_OK;
}

fa_status stage04_bench(const fa_run_options *options)
{
    double copy_gb_per_s = 0.0;
    FA_TRY(fa_bench_begin(COPY_BYTES, &copy_gb_per_s));
#if !ONLINE_BENCH_WITH_STAGE03
    printf("This build does not link stage 03's kernels: the three-pass and naive columns show "
           "counted bytes only.\n");
#endif
    FA_TRY(bench_softmax(options, copy_gb_per_s));
    return bench_attention(options);
}
