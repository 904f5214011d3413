/**
 * @file bench.c
 * @brief The stage-06 benchmark (`stage06 --bench`): the fused kernels'
 *        TFLOP/s on the course's grid, version 1 beside the figure quoted
 *        for flash-attention-minimal, and the device memory a forward call
 *        takes beyond its outputs. The tables are markdown on stdout.
 */
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "checks.h"
#include "fa_device.h"
#include "fa_index.h"
#include "fa_timing.h"
#include "runners.h"

enum { MIB = 1 << 20 };

/** The copy ceiling is measured at this size (far beyond L2). */
static const size_t COPY_BYTES = (size_t)256 * MIB;

/**
 * The course's grid: B N = 16384 tokens and H D = 2048 (the model width) at
 * every N, so that every point does the same work per token; D 64 with 32
 * heads and D 128 with 16 heads.
 */
enum { TOKENS = 16384, WIDTH = 2048 };
static const int64_t GRID_N[] = {512, 1024, 2048, 4096, 8192, 16384};
static const int64_t GRID_D[] = {64, 128};

/** --quick keeps N <= QUICK_MAX_N. */
enum { QUICK_MAX_N = 1024 };

/**
 * Version 1 is timed up to V1_MAX_N: a point is 5 warm-up and 50 timed runs,
 * and one call of version 1 at N = 16384 (2.2e12 flop) takes a large part of
 * a second on CUDA cores, so its two largest points would take minutes each.
 */
enum { V1_MAX_N = 4096 };

/** The columns of the table: a version and a dtype. */
static const struct {
    int version;
    fa_dtype dtype;
} COLUMNS[] = {{2, FA_BF16}, {2, FA_F16}, {1, FA_F32}, {1, FA_BF16}};

/**
 * flash-attention-minimal (github.com/tspeterkim/flash-attention-minimal):
 * its fp32 forward at B 16, H 32, N 1024, D 64, as the figure was quoted to
 * this course for this GPU family. Not measured here.
 */
static const double MINIMAL_TFLOPS = 0.44;
static const flash_shape MINIMAL_SHAPE = {16, 32, 32, 1024, 1024, 64, FA_F32, FA_MASK_NONE, 0, 0};

/** The call whose device memory is measured: B 1, H 16, N 16384, D 128, bf16. */
static const flash_shape MEMORY_SHAPE = {1, 16, 16, TOKENS, TOKENS, 128, FA_BF16, FA_MASK_NONE, 0, 0};

static double tflops(const flash_shape *shape, double milliseconds)
{
    return flash_flop(shape) / (milliseconds * 1e-3) / 1e12;
}

/** (a) TFLOP/s of both versions over the grid. */
static fa_status bench_grid(const fa_run_options *options)
{
    printf("\n## (a) Forward TFLOP/s on the course's grid: B N = %d tokens, H D = %d\n\n", TOKENS,
           WIDTH);
    printf("TFLOP/s = 4 B H N^2 D flop / median time (S = Q K^T and O = P V; the exp and the "
           "rescales are not counted). o in the input dtype, lse written, [B,N,H,D] tensors.\n\n");
    printf("| D | H | N | B |");
    for (int c = 0; c < FA_COUNT_OF(COLUMNS); ++c)
        printf(" v%d %s TFLOP/s (ms) |", COLUMNS[c].version, fa_dtype_name(COLUMNS[c].dtype));
    printf("\n|---|---|---|---|");
    for (int c = 0; c < FA_COUNT_OF(COLUMNS); ++c)
        printf("---|");
    printf("\n");
    for (int d = 0; d < FA_COUNT_OF(GRID_D); ++d)
        for (int i = 0; i < FA_COUNT_OF(GRID_N); ++i) {
            const int64_t n = GRID_N[i], head_dim = GRID_D[d], heads = WIDTH / head_dim;
            if (options->quick && n > QUICK_MAX_N)
                continue;
            printf("| %lld | %lld | %lld | %lld |", (long long)head_dim, (long long)heads,
                   (long long)n, (long long)(TOKENS / n));
            for (int c = 0; c < FA_COUNT_OF(COLUMNS); ++c) {
                if (COLUMNS[c].version == 1 && n > V1_MAX_N) {
                    printf(" not timed (v1 stops at N = %d) |", V1_MAX_N);
                    continue;
                }
                const flash_shape shape = {TOKENS / n, heads, heads, n, n, head_dim,
                                           COLUMNS[c].dtype, FA_MASK_NONE, 0, 0};
                fa_stats ms;
                FA_TRY(flash_time_shape(ref_flash_forward, COLUMNS[c].version, &shape, options->seed, &ms));
                printf(" %.1f (%.3f) |", tflops(&shape, ms.median), ms.median);
                fflush(stdout);
            }
            printf("\n");
        }
    printf("\nVersion 1 is not timed above N = %d: each point is %d warm-up and %d timed calls, "
           "and a call of version 1 there takes a large part of a second.\n",
           V1_MAX_N, fa_timing_defaults().warmup, fa_timing_defaults().repeats);
    return FA_OK;
}

/** (b) Version 1 at flash-attention-minimal's shape, beside its quoted figure. */
static fa_status bench_minimal(const fa_run_options *options)
{
    fa_stats ms;
    FA_TRY(flash_time_shape(ref_flash_forward, 1, &MINIMAL_SHAPE, options->seed, &ms));
    const double ours = tflops(&MINIMAL_SHAPE, ms.median);
    char label[64];
    flash_shape_label(&MINIMAL_SHAPE, label, sizeof label);
    printf("\n## (b) Version 1 against flash-attention-minimal\n\n");
    printf("| kernel | shape | median ms | TFLOP/s |\n|---|---|---|---|\n");
    printf("| v1 (this stage, measured) | %s | %.3f | %.3f |\n", label, ms.median, ours);
    printf("| flash-attention-minimal (quoted, not measured here) | %s | - | %.2f |\n", label,
           MINIMAL_TFLOPS);
    printf("\nv1 = %.1fx the quoted %.2f TFLOP/s of flash-attention-minimal: the ratio is against "
           "that quoted figure for this GPU family, not against a run of it on this machine.\n",
           ours / MINIMAL_TFLOPS, MINIMAL_TFLOPS);
    return FA_OK;
}

/** Free device memory once the device is idle. */
static fa_status free_when_idle(size_t *free_bytes)
{
    size_t total = 0;
    FA_CUDA_TRY(cudaDeviceSynchronize());
    FA_CUDA_TRY(cudaMemGetInfo(free_bytes, &total));
    return FA_OK;
}

/**
 * Device memory a forward call takes beyond o and lse: free memory
 * (cudaMemGetInfo) before and after one fa_attention_forward() call, once
 * the kernel has been loaded and its shared memory set by a first call.
 */
static fa_status forward_extra_bytes(int version, const flash_shape *shape, uint64_t seed,
                                     int64_t *extra)
{
    flash_timing t;
    FA_TRY(flash_timing_alloc(&t, ref_flash_forward, version, shape, seed));
    size_t before = 0, after = 0;
    fa_status status = fa_attention_forward(&t.params, 0);
    if (status == FA_OK)
        status = free_when_idle(&before);
    if (status == FA_OK)
        status = fa_attention_forward(&t.params, 0);
    if (status == FA_OK)
        status = free_when_idle(&after);
    flash_timing_free(&t);
    *extra = (int64_t)before - (int64_t)after;
    return status;
}

/** (c) The extra device memory of a forward call at N = 16384: it must be 0. */
static fa_status bench_memory(const fa_run_options *options)
{
    char label[64];
    flash_shape_label(&MEMORY_SHAPE, label, sizeof label);
    const double outputs = (double)(MEMORY_SHAPE.batch * MEMORY_SHAPE.nq * MEMORY_SHAPE.heads_q) *
                           ((double)MEMORY_SHAPE.head_dim * fa_dtype_size(MEMORY_SHAPE.dtype) + 4.0);
    printf("\n## (c) Device memory of one forward call beyond o and lse\n\n");
    printf("cudaMemGetInfo before and after a second fa_attention_forward() call (the first loads "
           "the kernel); o and lse (%.1f MiB) are the caller's.\n\n",
           outputs / MIB);
    printf("| version | shape | extra bytes | verdict |\n|---|---|---|---|\n");
    int64_t worst = 0;
    for (int version = 2; version >= 1; --version) {
        int64_t extra = 0;
        FA_TRY(forward_extra_bytes(version, &MEMORY_SHAPE, options->seed, &extra));
        printf("| v%d | %s | %lld | %s |\n", version, label, (long long)extra,
               extra == 0 ? "0, as it must be" : "NOT 0");
        if (extra != 0)
            worst = extra;
    }
    if (worst != 0)
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "stage06 bench: a forward call of %s took %lld bytes of device memory "
                       "beyond o and lse (it must allocate nothing)",
                       label, (long long)worst);
    return FA_OK;
}

fa_status stage06_bench(const fa_run_options *options)
{
    double copy_gb_per_s = 0.0;
    FA_TRY(fa_bench_begin(COPY_BYTES, &copy_gb_per_s));
    const fa_timing_options timing = fa_timing_defaults();
    printf("Times: CUDA events, %d warm-up and %d timed runs per point, the median, L2 flushed "
           "before each run%s; the reference kernels.\n",
           timing.warmup, timing.repeats, timing.flush_l2 ? "" : " (not)");
    FA_TRY(bench_grid(options));
    FA_TRY(bench_minimal(options));
    return bench_memory(options);
}
