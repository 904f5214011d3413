/**
 * @file bench.c
 * @brief The stage-05 benchmark (`stage05 --bench`): why tiles (the bytes
 *        three algorithms move, and the tiled trace's speed), how fast tiles
 *        stream through shared memory, and what each block adds.
 */
#include <math.h>
#include <stdio.h>

#include "checks.h"
#include "fa_device.h"
#include "fa_timing.h"
#include "model.h"
#include "runners.h"

enum { MIB = 1 << 20 };

/** The copy ceiling is measured at this size (far beyond L2). */
static const size_t COPY_BYTES = (size_t)256 * MIB;

/** The problem of the IO argument and of the M22 timing: heads 16, N 4096 (--quick 1024), d 64. */
enum { IO_HEADS = 16, IO_N = 4096, IO_QUICK_N = 1024, IO_D = 64 };

/** Query rows per block of stage 04's online attention (one warp per row, 8 warps a block). */
enum { ONLINE_ROWS_PER_BLOCK = 8 };

/** S or P [N][N] passes through device memory in stage 03's naive attention (see below). */
enum { NAIVE_SCORE_PASSES = 6 };

/** The streaming problem: 16 heads of 65536 query rows (--quick 4096), one key tile, d 64. */
enum { STREAM_HEADS = 16, STREAM_NQ = 65536, STREAM_QUICK_NQ = 4096, STREAM_D = 64 };

/** The per-block table: 16 heads, N 1024 (--quick 256), d 64. */
enum { BLOCK_HEADS = 16, BLOCK_N = 1024, BLOCK_QUICK_N = 256, BLOCK_D = 64 };

/** fp32 for version 1 (the widest input it takes), bf16 for version 2. */
static fa_dtype bench_dtype(int version)
{
    return version == 1 ? FA_F32 : FA_BF16;
}

/** Median milliseconds of the reference's trace of @p milestone, version @p version, on @p shape. */
static fa_status time_trace(int milestone, int version, const tile_problem *shape, uint64_t seed,
                            fa_stats *stats)
{
    tile_timing t;
    FA_TRY(tile_timing_alloc(&t, FA_IMPL_REFERENCE, milestone, version, shape, seed));
    const fa_timing_options timing = fa_timing_defaults();
    const fa_status status = fa_time_gpu(tile_timed, &t, &timing, stats);
    tile_timing_free(&t);
    return status;
}

static tile_problem square(int version, int64_t heads, int64_t n, int64_t d)
{
    const tile_problem p = {NULL, NULL, NULL, bench_dtype(version), heads, n, n, d, 1.0f};
    return p;
}

/**
 * (a) The IO argument. Per head, with N queries and keys of d elements of
 * e bytes, every algorithm reads Q, K, V and writes O once at least:
 * 4 N d e. What differs is how often K and V are read again, and whether the
 * N x N scores go through device memory:
 *   naive (stage 03): S written, read three times by the softmax (max, sum,
 *     normalise) and overwritten by P, P read by P V: 6 N^2 e more;
 *   online (stage 04): one block per 8 rows reads all of K and V:
 *     N d e (Q) + N d e (O) + (N / 8) 2 N d e;
 *   tiled (this stage): one block per BR = 64 rows: N d e + N d e + (N / 64) 2 N d e.
 */
static fa_status bench_io(const fa_run_options *options)
{
    const int64_t n = options->quick ? IO_QUICK_N : IO_N, d = IO_D, heads = IO_HEADS;
    const double e = 4.0; /* fp32, as stages 03 and 04 store their tensors */
    const double naive = (double)heads * (4.0 * n * d + NAIVE_SCORE_PASSES * (double)n * n) * e;
    const double kv_reads_online = (double)fa_ceil_div(n, ONLINE_ROWS_PER_BLOCK);
    const double kv_reads_tiled = (double)fa_ceil_div(n, TILE1_BR);
    const double online = (double)heads * (2.0 * n * d + kv_reads_online * 2.0 * n * d) * e;
    const double tiled = (double)heads * (2.0 * n * d + kv_reads_tiled * 2.0 * n * d) * e;
    printf("\n(a) Bytes through device memory for heads %d, N %lld, d %lld, fp32 tensors\n", IO_HEADS,
           (long long)n, (long long)d);
    printf("| algorithm | bytes per head | total MB | / tiled |\n|---|---|---|---|\n");
    printf("| naive, stage 03 (S and P through HBM) | 4 N d e + 6 N^2 e | %.0f | %.1fx |\n",
           naive / 1e6, naive / tiled);
    printf("| online, stage 04 (K, V once per 8 rows) | 2 N d e + (N / 8) 2 N d e | %.0f | %.1fx |\n",
           online / 1e6, online / tiled);
    printf("| tiled, this stage (K, V once per %d rows) | 2 N d e + (N / %d) 2 N d e | %.0f | 1.0x |\n",
           TILE1_BR, TILE1_BR, tiled / 1e6);

    const double flop = 4.0 * (double)n * (double)n * (double)d * (double)heads;
    printf("\nThe M22 traces (every block, the whole tiled loop) at that size: 4 N^2 d heads = %.3g "
           "flop\n", flop);
    printf("| version | dtype | median ms | p10-p90 spread | TFLOP/s | GB/s on the tiled bytes |\n"
           "|---|---|---|---|---|---|\n");
    for (int version = 1; version <= 2; ++version) {
        const tile_problem shape = square(version, heads, n, d);
        fa_stats ms;
        FA_TRY(time_trace(22, version, &shape, options->seed, &ms));
        const double bytes = tiled * (double)fa_dtype_size(shape.dtype) / e;
        printf("| %d | %s | %.4f | %.1f%% | %.2f | %.0f |\n", version, fa_dtype_name(shape.dtype),
               ms.median, 100.0 * ms.spread, flop / (ms.median * 1e-3) / 1e12,
               bytes / (ms.median * 1e-3) / 1e9);
    }
    return FA_OK;
}

/**
 * (b) Tiles streaming through shared memory: the M17 trace loads every tile
 * and copies it back out. With many query rows and one key tile, its time is
 * that of the Q tiles: one block per 64 rows reads them (16-byte loads or
 * cp.async) and writes them (version 1 widened to fp32): a copy through
 * shared memory, judged against the device-to-device copy.
 */
static fa_status bench_streaming(const fa_run_options *options, double copy_gb_per_s)
{
    const int64_t nq = options->quick ? STREAM_QUICK_NQ : STREAM_NQ;
    printf("\n(b) Tile streaming: the M17 traces, %d heads x %lld query rows x %d keys, d %d "
           "(bytes read + written / median time)\n",
           STREAM_HEADS, (long long)nq, TILE2_BC, STREAM_D);
    printf("| version | dtype | MB moved | median ms | GB/s | %% of copy |\n"
           "|---|---|---|---|---|---|\n");
    for (int version = 1; version <= 2; ++version) {
        const tile_problem shape = {NULL, NULL, NULL, bench_dtype(version), STREAM_HEADS, nq,
                                    TILE2_BC, STREAM_D, 1.0f};
        const tile_sizes s = tile_sizes_of(17, version, &shape);
        const double read = (double)(shape.heads * (shape.nq + 2 * shape.nk) * shape.d) *
                            fa_dtype_size(shape.dtype);
        const double written = (double)(s.q_tiles + s.k_tiles + s.v_tiles) * (double)s.tile_bytes;
        fa_stats ms;
        FA_TRY(time_trace(17, version, &shape, options->seed, &ms));
        const double gb_per_s = (read + written) / (ms.median * 1e-3) / 1e9;
        printf("| %d | %s | %.0f | %.4f | %.0f | %.1f%% |\n", version, fa_dtype_name(shape.dtype),
               (read + written) / 1e6, ms.median, gb_per_s, 100.0 * gb_per_s / copy_gb_per_s);
    }
    return FA_OK;
}

/** Bytes the trace of @p milestone writes (its outputs) for @p shape. */
static double written_bytes(int milestone, int version, const tile_problem *shape)
{
    const tile_sizes s = tile_sizes_of(milestone, version, shape);
    return 4.0 * (double)(s.scores + s.max + s.weights + s.correction + s.sum + s.o + s.lse);
}

/**
 * (c) What each block adds: the traces of M18..M22 run the blocks up to
 * their milestone, so the difference of two consecutive traces is roughly
 * what the later block costs. Roughly: these are differences of whole
 * kernels, and each trace writes different outputs (M18 and M20 write the
 * whole N x N scores or weights, the others O(N) or O(N d)), which the
 * table lists beside the times.
 */
static fa_status bench_blocks(const fa_run_options *options)
{
    const int64_t n = options->quick ? BLOCK_QUICK_N : BLOCK_N;
    static const char *const added[] = {"scores (M18)", "row max (M19)", "exp (M20)",
                                        "row sum (M21)", "P V and the end (M22)"};
    printf("\n(c) What each block adds: the traces of M18..M22, %d heads, N %lld, d %d; "
           "differences of whole kernels, and the traces write different outputs\n",
           BLOCK_HEADS, (long long)n, BLOCK_D);
    printf("| version | trace | block added | MB written | median ms | minus the trace before |\n"
           "|---|---|---|---|---|---|\n");
    for (int version = 1; version <= 2; ++version) {
        const tile_problem shape = square(version, BLOCK_HEADS, n, BLOCK_D);
        double before = NAN;
        for (int milestone = 18; milestone <= 22; ++milestone) {
            fa_stats ms;
            FA_TRY(time_trace(milestone, version, &shape, options->seed, &ms));
            printf("| %d %s | M%d | %s | %.1f | %.4f | ", version, fa_dtype_name(shape.dtype),
                   milestone, added[milestone - 18], written_bytes(milestone, version, &shape) / 1e6,
                   ms.median);
            if (isnan(before))
                printf("- |\n");
            else
                printf("%+.4f |\n", ms.median - before);
            before = ms.median;
        }
    }
    printf("M18 and M20 write N x N floats per head; their differences with M19 and M21 mostly "
           "measure those writes, not the blocks. M22 - M21 is the cleanest: P V and the end.\n");
    return FA_OK;
}

fa_status stage05_bench(const fa_run_options *options)
{
    double copy_gb_per_s = 0.0;
    FA_TRY(fa_bench_begin(COPY_BYTES, &copy_gb_per_s));
    const fa_timing_options timing = fa_timing_defaults();
    printf("Times: %d warm-up, %d timed runs, median, L2 flushed%s.\n", timing.warmup,
           timing.repeats, timing.flush_l2 ? "" : " not");
    FA_TRY(bench_io(options));
    FA_TRY(bench_streaming(options, copy_gb_per_s));
    return bench_blocks(options);
}
