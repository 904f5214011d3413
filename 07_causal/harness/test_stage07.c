/**
 * @file test_stage07.c
 * @brief Stage 07 tests.
 *
 * `test_stage07 cpu` (no GPU needed): M25's tile classification and a row's
 * keys within a tile against the band's definition, exhaustively over small
 * problems, bands, blocks of rows and tile sizes; the sentinel fixtures'
 * closed forms against the reference, and the judge accepting them; every
 * shape of the masked grid meeting every mask.
 *
 * `test_stage07 gpu` (exit 77 without a usable GPU): M25's reference check
 * (the sentinel fixtures and version 1's masked grid); the library's version
 * 2 on the sentinel fixtures and its own masked grid, each judged end to end
 * with canaries.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cases.h"
#include "fa_attention_ref.h"
#include "fa_index.h"
#include "fa_rng.h"
#include "fa_stage.h"
#include "fa_test.h"
#include "fixtures.h"
#include "flash.h"
#include "judge.h"
#include "key_tiles.cuh"

#if FA_HAVE_CUDA
#include "checks.h"
#include "fa_device.h"
#include "runners.h"
#endif

/* ---- CPU: M25 against the definition --------------------------------------------------------- */

/** The band's definition, written out: row i sees key j of [0, nk) when it lies within the band. */
static bool band_allows(fa_key_window w, int64_t i, int64_t j, int64_t nk)
{
    return j >= 0 && j < nk && (w.left < 0 || j >= i + w.offset - w.left) &&
           (w.right < 0 || j <= i + w.offset + w.right);
}

/** Which of tile @p t's keys rows [r0, r1) see: some (*any) and all of them, every row (*all). */
static void tile_truth(fa_key_window w, int64_t r0, int64_t r1, int64_t nk, int bc, int64_t t,
                       bool *any, bool *all)
{
    *any = false;
    *all = (t + 1) * bc <= nk; /* a tile past nk holds keys no row sees */
    for (int64_t i = r0; i < r1; ++i)
        for (int64_t j = t * bc; j < (t + 1) * bc; ++j) {
            const bool seen = band_allows(w, i, j, nk);
            *any |= seen;
            *all &= seen;
        }
}

/**
 * causal_key_tiles() and causal_row_in_tile() against the definition, for
 * every nq <= 7, nk <= 8, diagonal offset from -nq to nk, left and right
 * extents in {-1, 0, 1, 3}, block of rows and tile size in {1, 2, 3, 5, 8}:
 * the tiles visited are exactly those with a key some row sees, the full
 * ones exactly those every row sees whole; a row's keys in a tile are
 * exactly the offsets [lo, hi).
 */
static void test_key_tiles(fa_tests *t)
{
    static const int64_t EXTENTS[] = {-1, 0, 1, 3};
    static const int TILES[] = {1, 2, 3, 5, 8};
    int64_t wrong = 0, checked = 0;
    char first[160] = "";
    for (int64_t nq = 1; nq <= 7; ++nq)
        for (int64_t nk = 0; nk <= 8; ++nk)
            for (int64_t off = -nq; off <= nk; ++off)
                for (int l = 0; l < FA_COUNT_OF(EXTENTS); ++l)
                    for (int r = 0; r < FA_COUNT_OF(EXTENTS); ++r)
                        for (int b = 0; b < FA_COUNT_OF(TILES); ++b) {
                            const fa_key_window w = {off, EXTENTS[l], EXTENTS[r]};
                            const int bc = TILES[b];
                            const int64_t tiles = fa_ceil_div(nk, bc);
                            for (int64_t r0 = 0; r0 < nq; ++r0)
                                for (int64_t r1 = r0 + 1; r1 <= nq; ++r1) {
                                    const causal_tiles got = causal_key_tiles(w, r0, r1, nk, bc);
                                    for (int64_t k = 0; k < tiles + 1; ++k) {
                                        bool any = false, all = false;
                                        if (k < tiles)
                                            tile_truth(w, r0, r1, nk, bc, k, &any, &all);
                                        const bool visited = k >= got.begin && k < got.end;
                                        const bool full = visited && !causal_tile_masked(got, k);
                                        ++checked;
                                        if (visited != any || full != all) {
                                            if (wrong++ == 0)
                                                snprintf(first, sizeof first,
                                                         "nq %lld nk %lld band (%lld, %lld, %lld) "
                                                         "rows [%lld, %lld) bc %d tile %lld: "
                                                         "visited %d (want %d), full %d (want %d)",
                                                         (long long)nq, (long long)nk, (long long)off,
                                                         (long long)w.left, (long long)w.right,
                                                         (long long)r0, (long long)r1, bc,
                                                         (long long)k, visited, any, full, all);
                                        }
                                    }
                                }
                            for (int64_t i = 0; i < nq; ++i)
                                for (int64_t k = 0; k < tiles; ++k) {
                                    int lo = 0, hi = 0;
                                    causal_row_in_tile(w, i, k * bc, nk, bc, &lo, &hi);
                                    for (int e = 0; e < bc; ++e) {
                                        ++checked;
                                        const bool in = e >= lo && e < hi;
                                        if (in != band_allows(w, i, k * bc + e, nk) && wrong++ == 0)
                                            snprintf(first, sizeof first,
                                                     "row %lld, tile %lld of %d keys, key %d: "
                                                     "[lo, hi) = [%d, %d)",
                                                     (long long)i, (long long)k, bc, e, lo, hi);
                                    }
                                }
                        }
    FA_EXPECT(t, wrong == 0, "%lld of %lld tile or key decisions wrong; first: %s",
              (long long)wrong, (long long)checked, first);
}

/**
 * Every sentinel fixture in every dtype: the closed forms of cases.c are the
 * reference's o and lse, and the judge, under version 1's and version 2's
 * methods, accepts them as a kernel's output. A row that sees its head's
 * sentinel has o_1 near 20, one that does not 0: the fixtures do tell.
 */
static void test_fixtures(fa_tests *t)
{
    static const fa_dtype dtypes[] = {FA_F32, FA_BF16, FA_F16};
    for (int f = 0; f < causal_fixture_count; ++f)
        for (int d = 0; d < FA_COUNT_OF(dtypes); ++d)
            for (int version = 1; version <= 2; ++version) {
                if (version == 2 && dtypes[d] == FA_F32)
                    continue;
                const char *name = causal_fixture_name(f);
                flash_fixture x;
                if (!FA_EXPECT(t, causal_fixture_make(f, dtypes[d], &x) == FA_OK, "%s: %s", name,
                               fa_last_error()))
                    continue;
                const int64_t rows = flash_lse_count(&x.c.call.params), d_out = CAUSAL_FIXTURE_D;
                int64_t sentinel_rows = 0, plain_rows = 0;
                for (int64_t i = 0; i < rows; ++i) {
                    sentinel_rows += x.o[i * d_out + 1] > 19.0;
                    plain_rows += x.o[i * d_out + 1] == 0.0;
                }
                fa_attn_method method;
                flash_fixture_verdict v;
                if (FA_EXPECT(t, flash_method(&x.c.call, version, &method) == FA_OK &&
                                     flash_fixture_verify(&x, &method, 1e-9, &v) == FA_OK,
                              "v%d %s: %s", version, name, fa_last_error()))
                    FA_EXPECT(t, v.differing == 0 && v.written.covered && sentinel_rows > 0 &&
                                     plain_rows > 0 && sentinel_rows + plain_rows == rows,
                              "v%d %s %s: %lld hand values differ from the reference; written as "
                              "a kernel's, covered %d (o worst %.3g); %lld rows see their "
                              "sentinel, %lld do not, of %lld",
                              version, name, fa_dtype_name(dtypes[d]), (long long)v.differing,
                              v.written.covered, v.written.o.worst_ratio, (long long)sentinel_rows,
                              (long long)plain_rows, (long long)rows);
                flash_fixture_free(&x);
            }
}

/**
 * The masked grid of each version puts a mask on every case of stage 06's
 * grid, and every shape meets all six masks of the rotation (a mask with its
 * extents counts as one).
 */
static void test_grid(fa_tests *t)
{
    enum { SHAPES = 16, MASKS = 6 };
    for (int version = 1; version <= 2; ++version) {
        const int count = causal_grid_count(version, false);
        int64_t shape_nq[SHAPES] = {0}, shape_nk[SHAPES] = {0}, seen[SHAPES][MASKS];
        int shapes = 0, masks[SHAPES] = {0};
        for (int i = 0; i < count; ++i) {
            const flash_spec s = causal_grid_spec(version, false, i);
            FA_EXPECT(t, s.mask != FA_MASK_NONE, "v%d case %d has no mask", version, i);
            int si = 0;
            while (si < shapes && !(shape_nq[si] == s.nq && shape_nk[si] == s.nk))
                ++si;
            if (si == SHAPES)
                continue;
            if (si == shapes) {
                shape_nq[si] = s.nq;
                shape_nk[shapes++] = s.nk;
            }
            const int64_t key = (int64_t)s.mask * 10000 + (s.window_left + 1) * 100 + s.window_right + 1;
            int m = 0;
            while (m < masks[si] && seen[si][m] != key)
                ++m;
            if (m == masks[si] && m < MASKS)
                seen[si][masks[si]++] = key;
        }
        int short_of_masks = 0;
        for (int si = 0; si < shapes; ++si)
            short_of_masks += masks[si] != MASKS;
        FA_EXPECT(t, shapes == SHAPES && short_of_masks == 0,
                  "v%d: %d shapes, %d of them miss a mask", version, shapes, short_of_masks);
    }
}

#if FA_HAVE_CUDA

/* ---- GPU ------------------------------------------------------------------------------------- */

static const uint64_t SEED = 20240707;

static void test_reference_checks(fa_tests *t)
{
    const fa_run_options options = {.seed = SEED, .quick = false};
    FA_EXPECT_REFERENCE_CHECKS(t, &stage07, &options);
}

/**
 * The library's version 2 under every mask: the sentinel fixtures in bf16
 * and fp16, and the masked grid of version 2, each through
 * ref_flash_forward(), judged end to end with canaries.
 */
static void test_library_masks(fa_tests *t)
{
    const fa_run_options options = {.seed = SEED};
    fa_result result = {0};
    char name[FA_CASE_NAME];
    static const fa_dtype dtypes[] = {FA_BF16, FA_F16};
    for (int f = 0; f < causal_fixture_count; ++f)
        for (int d = 0; d < FA_COUNT_OF(dtypes); ++d) {
            snprintf(name, sizeof name, "v2 fixture '%s' %s", causal_fixture_name(f),
                     fa_dtype_name(dtypes[d]));
            flash_fixture x;
            const bool ok = fa_result_status(&result, name, causal_fixture_make(f, dtypes[d], &x)) &&
                            flash_result_run(&result, name, ref_flash_forward, 2, &x.c);
            flash_fixture_free(&x);
            FA_EXPECT(t, ok, "%s", result.detail);
        }
    for (int i = 0; i < causal_grid_count(2, false); ++i) {
        const flash_spec s = causal_grid_spec(2, false, i);
        snprintf(name, sizeof name, "v2 grid %d ", i);
        const size_t prefix = strlen(name);
        flash_spec_describe(&s, name + prefix, sizeof name - prefix);
        fa_rng rng;
        fa_rng_seed(&rng, options.seed, (uint64_t)i);
        flash_case c = {0};
        const bool ok =
            fa_result_status(&result, name, flash_case_random(&c, &s, flash_block_n(2, s.head_dim), &rng)) &&
            flash_result_run(&result, name, ref_flash_forward, 2, &c);
        flash_case_free(&c);
        FA_EXPECT(t, ok, "%s", result.detail);
    }
}

#endif /* FA_HAVE_CUDA */

int main(int argc, char **argv)
{
    static const fa_test_fn cpu[] = {test_key_tiles, test_fixtures, test_grid};
#if FA_HAVE_CUDA
    static const fa_test_fn gpu[] = {test_reference_checks, test_library_masks};
    const fa_test_suite suite = {"test_stage07", cpu, FA_COUNT_OF(cpu), gpu, FA_COUNT_OF(gpu),
                                 fa_gpu_gate};
#else
    const fa_test_suite suite = {"test_stage07", cpu, FA_COUNT_OF(cpu), NULL, 0, NULL};
#endif
    return fa_test_main(argc, argv, &suite);
}
