/**
 * @file bench.c
 * @brief The stage-07 benchmark (`stage07 --bench`): causal against
 *        non-causal time of the library's kernels on the course's grid, the
 *        key tiles of a causal block drawn, the cost of each kind of
 *        tile fitted from masks of different shapes, and a packed batch
 *        against the padded one. Markdown on stdout.
 */
#include <math.h>
#include <stdio.h>

#include "checks.h"
#include "fa_device.h"
#include "fa_index.h"
#include "fa_rng.h"
#include "fa_timing.h"
#include "flash.h"
#include "key_tiles.cuh"

/** The course's grid (stage 06's bench): B N = 16384 tokens and H D = 2048. */
enum { TOKENS = 16384, WIDTH = 2048 };
static const int64_t GRID_N[] = {512, 1024, 2048, 4096, 8192, 16384};
static const int64_t GRID_D[] = {64, 128};

/** --quick keeps N <= QUICK_MAX_N; version 1 is timed up to V1_MAX_N (stage 06's bench says why). */
enum { QUICK_MAX_N = 1024, V1_MAX_N = 4096 };

/** (a) Causal against non-causal on the grid, bf16, both versions. */
static fa_status bench_causal(const fa_run_options *options)
{
    printf("\n## (a) Causal against non-causal: B N = %d tokens, H D = %d, bf16, nq = nk = N\n\n",
           TOKENS, WIDTH);
    printf("Time of the causal call over the non-causal one (the tiles alone: (N + BR) / 2N for "
           "query tiles of BR rows, about 0.5). TFLOP/s of the causal call count the products it must do, "
           "2 B H N^2 D (half the non-causal's).\n\n");
    printf("| D | N | B | H | v2 none ms | v2 causal ms | v2 causal / none | v2 causal TFLOP/s "
           "| v1 none ms | v1 causal ms | v1 causal / none |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int d = 0; d < FA_COUNT_OF(GRID_D); ++d)
        for (int i = 0; i < FA_COUNT_OF(GRID_N); ++i) {
            const int64_t n = GRID_N[i], head_dim = GRID_D[d], heads = WIDTH / head_dim;
            if (options->quick && n > QUICK_MAX_N)
                continue;
            flash_shape shape = {TOKENS / n, heads, heads, n, n, head_dim, FA_BF16, FA_MASK_NONE, 0, 0};
            double ms[2][2] = {{0}}; /* [version - 1][causal] */
            for (int version = 2; version >= 1; --version)
                for (int causal = 0; causal < 2; ++causal) {
                    if (version == 1 && n > V1_MAX_N)
                        continue;
                    shape.mask = causal ? FA_MASK_CAUSAL_BOTTOM_RIGHT : FA_MASK_NONE;
                    fa_stats stats;
                    FA_TRY(flash_time_shape(ref_flash_forward, version, &shape, options->seed, &stats));
                    ms[version - 1][causal] = stats.median;
                }
            shape.mask = FA_MASK_NONE;
            const double causal_tflops = flash_flop(&shape) / 2.0 / (ms[1][1] * 1e-3) / 1e12;
            printf("| %lld | %lld | %lld | %lld | %.3f | %.3f | %.3f | %.1f |", (long long)head_dim,
                   (long long)n, (long long)(TOKENS / n), (long long)heads, ms[1][0], ms[1][1],
                   ms[1][1] / ms[1][0], causal_tflops);
            if (n > V1_MAX_N)
                printf(" - | - | - |\n");
            else
                printf(" %.3f | %.3f | %.3f |\n", ms[0][0], ms[0][1], ms[0][1] / ms[0][0]);
            fflush(stdout);
        }
    return FA_OK;
}

/** How many blocks, full, masked and skipped key tiles a call of @p nq x @p nk under @p band has. */
typedef struct tile_counts {
    double blocks, full, masked, skipped;
} tile_counts;

static tile_counts count_tiles(fa_key_window band, int64_t nq, int64_t nk, int br, int bc)
{
    tile_counts c = {0};
    const int64_t key_tiles = fa_ceil_div(nk, bc);
    for (int64_t row0 = 0; row0 < nq; row0 += br) {
        const causal_tiles t = causal_key_tiles(band, row0, row0 + fa_tile_rows(nq, row0, br), nk, bc);
        const int64_t full = t.full_end > t.full_begin ? t.full_end - t.full_begin : 0;
        c.blocks += 1;
        c.full += (double)full;
        c.masked += (double)(t.end - t.begin - full);
        c.skipped += (double)(key_tiles - (t.end - t.begin));
    }
    return c;
}

/** (b) The key tiles of a causal call, drawn: one row of characters per query tile. */
static void draw_tiles(fa_key_window band, int64_t nq, int64_t nk, int br, int bc)
{
    printf("```\n");
    for (int64_t row0 = 0; row0 < nq; row0 += br) {
        const causal_tiles t = causal_key_tiles(band, row0, row0 + fa_tile_rows(nq, row0, br), nk, bc);
        printf("rows %4lld-%-4lld ", (long long)row0, (long long)(row0 + fa_tile_rows(nq, row0, br) - 1));
        for (int64_t k = 0; k < fa_ceil_div(nk, bc); ++k)
            putchar(k < t.begin || k >= t.end ? '.' : causal_tile_masked(t, k) ? 'm' : 'F');
        putchar('\n');
    }
    printf("```\n");
}

/** Solves the 3 x 3 system @p a x = @p b by Cramer's rule; false when singular. */
static bool solve3(const double a[3][3], const double b[3], double x[3])
{
    const double det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                       a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                       a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
    if (fabs(det) < 1e-12)
        return false;
    for (int col = 0; col < 3; ++col) {
        double m[3][3];
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c)
                m[r][c] = c == col ? b[r] : a[r][c];
        x[col] = (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                  m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                  m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])) / det;
    }
    return true;
}

/**
 * (c) What each kind of key tile costs, version 2 at D 64, bf16, N = 4096:
 * the time of masks that mix blocks, full tiles and masked tiles in
 * different proportions, fitted (least squares) by
 * t = a blocks + b full tiles + c masked tiles. Skipped tiles cost nothing:
 * they are never loaded.
 */
static fa_status bench_tile_kinds(const fa_run_options *options)
{
    const int64_t n = options->quick ? 1024 : 4096, d = 64, heads = WIDTH / d;
    const int br = flash2_br(64), bc = flash2_bc(64);
    static const struct {
        const char *name;
        fa_mask mask;
        int64_t left, right;
    } MASKS[] = {
        {"none", FA_MASK_NONE, 0, 0},         {"causal", FA_MASK_CAUSAL_BOTTOM_RIGHT, 0, 0},
        {"window (0, 0)", FA_MASK_WINDOW, 0, 0}, {"window (1000, 0)", FA_MASK_WINDOW, 1000, 0},
        {"window (100, 100)", FA_MASK_WINDOW, 100, 100},
    };
    printf("\n## (b) The key tiles of a causal call\n\n");
    printf("Version 2 at D 64 (query tiles of %d rows, key tiles of %d keys), nq = nk = 1024, "
           "causal: F full (no mask), m masked element by element, . skipped (never loaded).\n\n",
           br, bc);
    draw_tiles(fa_mask_window(FA_MASK_CAUSAL_BOTTOM_RIGHT, 1024, 1024), 1024, 1024, br, bc);

    printf("\n## (c) The cost of each kind of tile\n\n");
    printf("Version 2, D %lld, bf16, B %lld, H %lld, nq = nk = %lld, under masks of different "
           "shapes; the times fitted by least squares as t = a blocks + b full + c masked "
           "(per query tile of every head and batch).\n\n",
           (long long)d, (long long)(TOKENS / n), (long long)heads, (long long)n);
    printf("| mask | blocks | full tiles | masked tiles | skipped tiles | ms | fitted ms |\n");
    printf("|---|---|---|---|---|---|---|\n");
    double ata[3][3] = {{0}}, atb[3] = {0}, rows[FA_COUNT_OF(MASKS)][3], ms[FA_COUNT_OF(MASKS)];
    tile_counts counts[FA_COUNT_OF(MASKS)];
    const double per_head = (double)(TOKENS / n) * (double)heads;
    for (int m = 0; m < FA_COUNT_OF(MASKS); ++m) {
        const fa_key_window band = fa_mask_band(MASKS[m].mask, MASKS[m].left, MASKS[m].right, n, n);
        counts[m] = count_tiles(band, n, n, br, bc);
        const flash_shape shape = {TOKENS / n, heads, heads, n, n, d, FA_BF16, MASKS[m].mask,
                                   MASKS[m].left, MASKS[m].right};
        fa_stats stats;
        FA_TRY(flash_time_shape(ref_flash_forward, 2, &shape, options->seed, &stats));
        ms[m] = stats.median;
        const double x[3] = {counts[m].blocks * per_head, counts[m].full * per_head,
                             counts[m].masked * per_head};
        for (int r = 0; r < 3; ++r) {
            rows[m][r] = x[r];
            atb[r] += x[r] * ms[m];
            for (int c = 0; c < 3; ++c)
                ata[r][c] += x[r] * x[c];
        }
    }
    double cost[3] = {0};
    const bool solved = solve3(ata, atb, cost);
    for (int m = 0; m < FA_COUNT_OF(MASKS); ++m) {
        const double fitted = rows[m][0] * cost[0] + rows[m][1] * cost[1] + rows[m][2] * cost[2];
        printf("| %s | %.0f | %.0f | %.0f | %.0f | %.3f | %.3f |\n", MASKS[m].name,
               counts[m].blocks * per_head, counts[m].full * per_head, counts[m].masked * per_head,
               counts[m].skipped * per_head, ms[m], fitted);
    }
    if (!solved)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "stage07 bench: the fit of the tile costs is singular");
    printf("\nFitted: %.3g us per block (Q load, epilogue), %.3g us per full tile, %.3g us per "
           "masked tile (summed over the GPU's concurrent blocks: a cost in GPU time, not one "
           "block's latency). A masked tile costs %.2fx a full one; the causal call skips "
           "%.0f tiles, which masked would have cost %.3f ms.\n",
           cost[0] * 1e3, cost[1] * 1e3, cost[2] * 1e3, cost[2] / cost[1],
           counts[1].skipped * per_head, counts[1].skipped * per_head * cost[2]);
    return FA_OK;
}

/** The packed batch of (d): lengths drawn uniformly from PACKED_MIN..PACKED_MAX up to TOKENS. */
enum { PACKED_MIN = 128, PACKED_MAX = 4096, PACKED_D = 128, PACKED_MAX_SEQUENCES = TOKENS / PACKED_MIN };

/**
 * The time of version 2 on the packed call of @p count sequences at @p offsets under @p mask,
 * through fa_attention_forward(): the tensors of one sequence of all TOKENS rows
 * (flash_timing_alloc()), read as the packed batch.
 */
static fa_status time_packed(const int32_t *offsets, int count, int64_t longest, fa_mask mask,
                             uint64_t seed, fa_stats *stats)
{
    const int64_t heads = WIDTH / PACKED_D;
    const flash_shape all_rows = {1, heads, heads, TOKENS, TOKENS, PACKED_D, FA_BF16, mask, 0, 0};
    flash_timing t;
    FA_TRY(flash_timing_alloc(&t, flash_library_forward, 2, &all_rows, seed));
    void *device_offsets = NULL;
    const size_t bytes = (size_t)(count + 1) * sizeof(int32_t);
    fa_status status = fa_device_alloc(&device_offsets, bytes);
    if (status == FA_OK && cudaMemcpy(device_offsets, offsets, bytes, cudaMemcpyHostToDevice) !=
                               cudaSuccess)
        status = fa_fail(FA_ERR_CUDA, "packed bench: cudaMemcpy of the offsets");
    if (status == FA_OK) {
        t.params.batch = count;
        t.params.cu_seqlens_q = t.params.cu_seqlens_k = device_offsets;
        t.params.max_seqlen_q = t.params.max_seqlen_k = longest;
        const fa_timing_options timing = fa_timing_defaults();
        status = fa_time_gpu(flash_timed, &t, &timing, stats);
    }
    fa_device_free(device_offsets);
    flash_timing_free(&t);
    return status;
}

/**
 * (d) A packed batch against the padded batch of the same sequences:
 * lengths drawn from PACKED_MIN..PACKED_MAX until TOKENS tokens, version 2,
 * D 128, bf16; padded, every sequence is computed at the longest length.
 */
static fa_status bench_packed(const fa_run_options *options)
{
    fa_rng rng;
    fa_rng_seed(&rng, options->seed, 7);
    int32_t offsets[PACKED_MAX_SEQUENCES + 1] = {0};
    int count = 0;
    int64_t longest = 0;
    double pairs = 0.0; /* query-key pairs of the sequences, without a mask */
    while (offsets[count] < TOKENS) {
        int64_t n = PACKED_MIN + (int64_t)(fa_rng_uniform(&rng) * (PACKED_MAX - PACKED_MIN + 1));
        n = n < TOKENS - offsets[count] ? n : TOKENS - offsets[count];
        offsets[count + 1] = offsets[count] + (int32_t)n;
        ++count;
        longest = n > longest ? n : longest;
        pairs += (double)n * (double)n;
    }
    const int64_t heads = WIDTH / PACKED_D;
    printf("\n## (d) A packed batch against the padded batch\n\n");
    printf("%d sequences of %d..%d tokens (drawn uniformly, the last cut to fit), %d in all, the "
           "longest %lld; H %lld, "
           "D %d, bf16, version 2. Packed: fa_attention_forward() with cu_seqlens (its time "
           "includes reading the offsets back, one synchronisation). Padded: the plain batch of "
           "%d sequences of %lld, what a caller without packed batches runs. TFLOP/s count the "
           "sequences' own products.\n\n",
           count, PACKED_MIN, PACKED_MAX, TOKENS, (long long)longest, (long long)heads, PACKED_D,
           count, (long long)longest);
    printf("| mask | packed ms | packed TFLOP/s | padded ms | padded TFLOP/s | padded / packed |\n");
    printf("|---|---|---|---|---|---|\n");
    for (int causal = 0; causal < 2; ++causal) {
        const fa_mask mask = causal ? FA_MASK_CAUSAL_BOTTOM_RIGHT : FA_MASK_NONE;
        fa_stats packed, padded;
        FA_TRY(time_packed(offsets, count, longest, mask, options->seed, &packed));
        const flash_shape shape = {count, heads, heads, longest, longest, PACKED_D, FA_BF16,
                                   mask, 0, 0};
        FA_TRY(flash_time_shape(ref_flash_forward, 2, &shape, options->seed, &padded));
        const double flop = 4.0 * (double)heads * pairs * PACKED_D / (causal ? 2.0 : 1.0);
        printf("| %s | %.3f | %.1f | %.3f | %.1f | %.2f |\n", causal ? "causal" : "none",
               packed.median, flop / (packed.median * 1e-3) / 1e12, padded.median,
               flop / (padded.median * 1e-3) / 1e12, padded.median / packed.median);
        fflush(stdout);
    }
    return FA_OK;
}

fa_status stage07_bench(const fa_run_options *options)
{
    double copy_gb_per_s = 0.0;
    FA_TRY(fa_bench_begin((size_t)256 << 20, &copy_gb_per_s));
    const fa_timing_options timing = fa_timing_defaults();
    printf("Times: CUDA events, %d warm-up and %d timed runs per point, the median, L2 flushed "
           "before each run%s; the library's kernels (fa_attention_forward()'s).\n",
           timing.warmup, timing.repeats, timing.flush_l2 ? "" : " (not)");
    FA_TRY(bench_causal(options));
    FA_TRY(bench_tile_kinds(options));
    return bench_packed(options);
}
