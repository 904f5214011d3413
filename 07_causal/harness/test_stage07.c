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
 * `test_stage07 cpu` also checks a packed batch's offsets as the library
 * reads them back, and every packed case as made.
 *
 * `test_stage07 gpu` (exit 77 without a usable GPU): M25's reference check
 * (the sentinel fixtures, version 1's masked grid and its packed batches,
 * then the library's versions 2 and 3 on their masked grids and packed
 * batches, version 3 where the device runs it); the library's version 2 on
 * the sentinel fixtures, judged end to end with canaries; the library's
 * packed batches (every version the device runs) judged sequence by
 * sequence and bit for bit against each sequence run alone; leakage between
 * sequences; bad offsets refused.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "fa_attention_ref.h"
#include "fa_check.h"
#include "fa_index.h"
#include "fa_rng.h"
#include "fa_stage.h"
#include "fa_test.h"
#include "fixtures.h"
#include "flash.h"
#include "judge.h"
#include "key_tiles.cuh"
#include "packed.h"

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

enum { GRID_MASKS = 6 }; /* the masks of the masked grid (cases.h) */

/** Adds the mask of @p s to the *@p count distinct masks in @p seen (room for GRID_MASKS). */
static void note_mask(int64_t seen[GRID_MASKS], int *count, const flash_spec *s)
{
    const int64_t key = (int64_t)s->mask * 10000 + (s->window_left + 1) * 100 + s->window_right + 1;
    int m = 0;
    while (m < *count && seen[m] != key)
        ++m;
    if (m == *count && m < GRID_MASKS)
        seen[(*count)++] = key;
}

/**
 * The masked grid of each version puts a mask on every case of stage 06's
 * grid; every shape of versions 1 and 2, and each head dim of version 3,
 * meets all six masks of the rotation (a mask with its extents counts as
 * one).
 */
static void test_grid(fa_tests *t)
{
    enum { SHAPES = 16 };
    for (int version = 1; version <= 2; ++version) {
        const int count = causal_grid_count(version, false);
        int64_t shape_nq[SHAPES] = {0}, shape_nk[SHAPES] = {0}, seen[SHAPES][GRID_MASKS];
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
            note_mask(seen[si], &masks[si], &s);
        }
        int short_of_masks = 0;
        for (int si = 0; si < shapes; ++si)
            short_of_masks += masks[si] != GRID_MASKS;
        FA_EXPECT(t, shapes == SHAPES && short_of_masks == 0,
                  "v%d: %d shapes, %d of them miss a mask", version, shapes, short_of_masks);
    }
    /* Version 3: each of its grid's head dims meets every mask. */
    const int64_t *dims;
    const int dim_count = flash_grid_head_dims(3, &dims);
    for (int k = 0; k < dim_count; ++k) {
        int64_t seen[GRID_MASKS];
        int masks = 0;
        for (int i = 0; i < causal_grid_count(3, false); ++i) {
            const flash_spec s = causal_grid_spec(3, false, i);
            if (s.head_dim == dims[k])
                note_mask(seen, &masks, &s);
        }
        FA_EXPECT(t, masks == GRID_MASKS, "v3 d %lld meets %d of the %d masks",
                  (long long)dims[k], masks, (int)GRID_MASKS);
    }
}

/** A packed call of 3 sequences over @p cu_q and @p cu_k (host), nq 10, nk 12, longest 5 and 6. */
static fa_attention_params offsets_call(const int32_t *cu_q, const int32_t *cu_k)
{
    fa_attention_params p = flash_params(3, 2, 2, 10, 12, 8, FA_BF16);
    p.cu_seqlens_q = cu_q;
    p.cu_seqlens_k = cu_k;
    p.max_seqlen_q = 5;
    p.max_seqlen_k = 6;
    return p;
}

/**
 * flash_check_packed_offsets(), the contents fa_attention_forward() reads
 * back: good offsets pass (a first offset above 0 and a last below nq
 * included); decreasing ones, a negative start, an end past nq or nk and a
 * sequence longer than max_seqlen are refused, each naming the offset.
 */
static void test_packed_offsets(fa_tests *t)
{
    static const int32_t GOOD_Q[] = {0, 5, 5, 10}, GOOD_K[] = {0, 6, 6, 12};
    static const struct {
        const char *name;
        int32_t q[4], k[4];
        const char *needle; /* "" when the offsets are good */
    } cases[] = {
        {"good", {0, 5, 5, 10}, {0, 6, 6, 12}, ""},
        {"good, sequences after a gap and before the end", {2, 4, 7, 9}, {1, 7, 7, 8}, ""},
        {"empty sequences only", {0, 0, 0, 0}, {3, 3, 3, 3}, ""},
        {"cu_seqlens_q decreasing", {0, 5, 4, 9}, {0, 6, 6, 12}, "cu_seqlens_q[2] = 4 < cu_seqlens_q[1] = 5"},
        {"cu_seqlens_k decreasing", {0, 5, 5, 10}, {0, 6, 7, 6}, "cu_seqlens_k[3] = 6 < cu_seqlens_k[2] = 7"},
        {"cu_seqlens_q[0] negative", {-1, 2, 3, 4}, {0, 6, 6, 12}, "cu_seqlens_q[0] = -1"},
        {"cu_seqlens_q past nq", {0, 5, 6, 11}, {0, 6, 6, 12}, "cu_seqlens_q[3] = 11 is past"},
        {"cu_seqlens_k past nk", {0, 5, 5, 10}, {0, 6, 8, 13}, "cu_seqlens_k[3] = 13 is past"},
        {"a sequence longer than max_seqlen_q", {0, 6, 6, 10}, {0, 6, 6, 12}, "more than max_seqlen_q = 5"},
        {"a sequence longer than max_seqlen_k", {0, 5, 5, 10}, {0, 1, 8, 12}, "more than max_seqlen_k = 6"},
    };
    for (int i = 0; i < FA_COUNT_OF(cases); ++i) {
        const fa_attention_params p = offsets_call(cases[i].q, cases[i].k);
        fa_clear_error();
        const fa_status status = flash_check_packed_offsets(&p, cases[i].q, cases[i].k);
        if (cases[i].needle[0] == '\0')
            FA_EXPECT(t, status == FA_OK, "%s: %s (%s)", cases[i].name, fa_status_name(status),
                      fa_last_error());
        else
            FA_EXPECT(t, status == FA_ERR_INVALID_ARGUMENT && strstr(fa_last_error(), cases[i].needle),
                      "%s: %s (\"%s\"), expected FA_ERR_INVALID_ARGUMENT naming \"%s\"",
                      cases[i].name, fa_status_name(status), fa_last_error(), cases[i].needle);
    }
    const fa_attention_params good = offsets_call(GOOD_Q, GOOD_K);
    FA_EXPECT(t, flash_check_packed_offsets(&good, GOOD_Q, GOOD_K) == FA_OK, "%s", fa_last_error());
}

/**
 * Rows of @p rows x @p heads of the inputs of @p p that differ between the
 * packed tensor @p packed from row @p first and a sequence's own @p one.
 */
static int64_t rows_differing(const void *packed, const fa_strides *packed_strides, int64_t first,
                              const void *one, const fa_strides *one_strides, int64_t rows,
                              int64_t heads, const fa_attention_params *p)
{
    const int64_t bytes = fa_dtype_size(p->dtype);
    int64_t differing = 0;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t h = 0; h < heads; ++h)
            differing +=
                memcmp((const char *)packed +
                           ((first + r) * packed_strides->row + h * packed_strides->head) * bytes,
                       (const char *)one + (r * one_strides->row + h * one_strides->head) * bytes,
                       (size_t)(p->head_dim * bytes)) != 0;
    return differing;
}

/** @p mask's bit in a set of causal masks: 1 top-left, 2 bottom-right, 0 for any other mask. */
static int causal_bit(fa_mask mask)
{
    return mask == FA_MASK_CAUSAL_TOP_LEFT ? 1 : mask == FA_MASK_CAUSAL_BOTTOM_RIGHT ? 2 : 0;
}

/**
 * Whether, of @p nq rows whose first @p keyless see no key, the rows the
 * judge samples of a dense call (flash_sample_rows(); a packed sequence's
 * are all judged, a superset) include keyless ones of each of the three
 * consumers of the first query tile.
 */
static bool keyless_in_every_consumer(int64_t nq, int64_t keyless)
{
    enum { CONSUMERS = 3 };
    int64_t *rows = malloc((size_t)nq * sizeof *rows);
    if (rows == NULL) {
        fprintf(stderr, "test_stage07: no host memory for %lld rows\n", (long long)nq);
        return false;
    }
    const int64_t count = flash_sample_rows(nq, rows);
    int consumers = 0; /* a bit each */
    for (int64_t i = 0; i < count; ++i)
        if (rows[i] < keyless && rows[i] < CONSUMERS * FLASH3_BOX_ROWS)
            consumers |= 1 << (rows[i] / FLASH3_BOX_ROWS);
    free(rows);
    return consumers == (1 << CONSUMERS) - 1;
}

/**
 * Version 3's own cases, the grid's last two (with and without quick) and
 * the last two packed ones: each under a causal mask, both masks among
 * each pair, and run by its kernel with three consumers (flash3_consumers()
 * of the rows its grid covers); under bottom-right, every consumer has
 * judged rows that see no key.
 */
static void test_three_consumer_cases(fa_tests *t)
{
    for (int quick = 0; quick <= 1; ++quick) {
        const int first = flash_grid_count(3, quick);
        int masks = 0;
        for (int i = first; i < causal_grid_count(3, quick); ++i) {
            const flash_spec s = causal_grid_spec(3, quick, i);
            const int consumers = flash3_consumers((int)s.head_dim, s.mask, s.nq);
            masks |= causal_bit(s.mask);
            FA_EXPECT(t, causal_bit(s.mask) != 0 && consumers == 3,
                      "v3 grid case %d (quick %d): mask %d, %d consumers", i, quick, (int)s.mask, consumers);
            if (s.mask == FA_MASK_CAUSAL_BOTTOM_RIGHT)
                FA_EXPECT(t, keyless_in_every_consumer(s.nq, s.nq - s.nk),
                          "v3 grid case %d (quick %d): %lld keyless rows of %lld miss a consumer", i, quick,
                          (long long)(s.nq - s.nk), (long long)s.nq);
        }
        FA_EXPECT(t, causal_grid_count(3, quick) == first + 2 && masks == 3,
                  "v3's grid (quick %d) has %d cases of its own, masks %d", quick,
                  causal_grid_count(3, quick) - first, masks);
    }
    /* Version 1 has only the packed cases every version has. */
    int own = 0, masks = 0;
    for (int i = causal_packed_count(1); i < causal_packed_count(3); ++i, ++own) {
        causal_packed b;
        if (!FA_EXPECT(t, causal_packed_make(&b, 3, i, 7, (uint64_t)i) == FA_OK, "v3 packed %d: %s", i,
                       fa_last_error()))
            continue;
        const int consumers = flash3_consumers((int)b.call.head_dim, b.call.mask, flash_grid_rows(&b.call));
        masks |= causal_bit(b.call.mask);
        FA_EXPECT(t, causal_bit(b.call.mask) != 0 && consumers == 3, "v3 packed %d: mask %d, %d consumers", i,
                  (int)b.call.mask, consumers);
        if (b.call.mask == FA_MASK_CAUSAL_BOTTOM_RIGHT) {
            int longest = 0;
            for (int j = 1; j < b.spec.count; ++j)
                longest = b.spec.nq[j] > b.spec.nq[longest] ? j : longest;
            const int64_t nq = b.spec.nq[longest], keyless = nq - b.spec.nk[longest];
            FA_EXPECT(t, keyless_in_every_consumer(nq, keyless),
                      "v3 packed %d: %lld keyless rows of %lld miss a consumer", i, (long long)keyless,
                      (long long)nq);
        }
        causal_packed_free(&b);
    }
    FA_EXPECT(t, own == 2 && masks == 3, "v3 has %d packed cases of its own, masks %d", own, masks);
}

/**
 * Every packed case of each version: made, its packed call valid
 * (fa_attention_supported(), flash_check_packed_offsets()), its sequences
 * the lengths of the case, each sequence's rows, keys and values those of
 * its own call, and among the lengths an empty sequence, rows with no key,
 * and the key tile's size, one less and one more.
 */
static void test_packed_cases(fa_tests *t)
{
    for (int version = 1; version <= 3; ++version)
        for (int i = 0; i < causal_packed_count(version); ++i) {
            const causal_packed_spec spec = causal_packed_case(version, i);
            char name[FA_CASE_NAME];
            causal_packed_describe(&spec, i, name, sizeof name);
            causal_packed b;
            const int64_t bc = flash_block_n(version, spec.shape.head_dim);
            if (!FA_EXPECT(t, causal_packed_make(&b, version, i, 7, (uint64_t)i) == FA_OK,
                           "v%d %s: %s", version, name, fa_last_error()))
                continue;
            const fa_attention_params *p = &b.call;
            fa_variant chosen = FA_VARIANT_AUTO;
            FA_EXPECT(t, fa_attention_supported(p, &chosen) == FA_OK &&
                             flash_check_packed_offsets(p, b.cu_q, b.cu_k) == FA_OK,
                      "v%d %s: %s", version, name, fa_last_error());
            int64_t differing = 0;
            bool empty = false, keyless = false, tile[3] = {false, false, false};
            for (int s = 0; s < b.count; ++s) {
                const fa_attention_params *one = &b.seqs[s].call.params;
                differing += b.cu_q[s + 1] - b.cu_q[s] != spec.nq[s] ||
                             b.cu_k[s + 1] - b.cu_k[s] != spec.nk[s];
                differing += rows_differing(p->q, &p->q_strides, b.cu_q[s], one->q, &one->q_strides,
                                            one->nq, p->heads_q, p);
                differing += rows_differing(p->k, &p->k_strides, b.cu_k[s], one->k, &one->k_strides,
                                            one->nk, p->heads_kv, p);
                differing += rows_differing(p->v, &p->v_strides, b.cu_k[s], one->v, &one->v_strides,
                                            one->nk, p->heads_kv, p);
                empty |= one->nq == 0;
                keyless |= one->nq > 0 && one->nk == 0;
                for (int e = 0; e < 3; ++e)
                    tile[e] |= one->nk == bc - 1 + e;
            }
            FA_EXPECT(t, differing == 0 && empty && (i % 2 == 0 || keyless) && tile[0] && tile[1] &&
                             tile[2],
                      "v%d %s: %lld sequences differ from their calls; empty %d, keyless %d, "
                      "Bc - 1, Bc, Bc + 1 keys %d %d %d",
                      version, name, (long long)differing, empty, keyless, tile[0], tile[1], tile[2]);
            causal_packed_free(&b);
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
 * Whether version 3 runs on this device; where it does not, the reason must
 * be the compute capability, not another error.
 */
static bool hopper_here(fa_tests *t)
{
    if (flash3_device_check() == FA_OK)
        return true;
    FA_EXPECT(t, strstr(fa_last_error(), "compute capability") != NULL,
              "v3 refused for more than the device: %s", fa_last_error());
    return false;
}

/**
 * M25's timing runs the version --version names, labelled with it and its
 * dtype (version 1 without --version, in fp32), and each version 2 or 3
 * where it runs here; the learner's versions 2 and 3 have no slot to time.
 */
static void test_timing_versions(fa_tests *t)
{
    const fa_milestone_check *m25 = &stage07.checks[0];
    const bool hopper = hopper_here(t);
    for (int version = 0; version <= 3; ++version) {
        if (version == 3 && !hopper)
            continue;
        const fa_run_options options = {.seed = SEED, .version = version};
        double ms = 0.0;
        char label[FA_CASE_NAME] = "", expected[8];
        snprintf(expected, sizeof expected, "v%d ", version == 0 ? 1 : version);
        const fa_status status = m25->time(FA_IMPL_REFERENCE, &options, &ms, label, sizeof label);
        FA_EXPECT(t, status == FA_OK && ms > 0.0 && strncmp(label, expected, strlen(expected)) == 0 &&
                         strstr(label, version <= 1 ? " fp32" : " bf16") != NULL,
                  "M25 timed with --version %d: %s, %.4f ms, '%s'", version, fa_status_name(status),
                  ms, label);
    }
    for (int version = 2; version <= 3; ++version) {
        const fa_run_options options = {.seed = SEED, .version = version};
        double ms = 0.0;
        char label[FA_CASE_NAME] = "";
        FA_EXPECT(t, m25->time(FA_IMPL_LEARNER, &options, &ms, label, sizeof label) ==
                             FA_ERR_UNSUPPORTED &&
                         strstr(fa_last_error(), "no learner slot") != NULL,
                  "the learner's version %d timed: %s", version, fa_last_error());
    }
}

/**
 * Version 3's masked grid and packed batches in three blocks, each walking
 * several work items (query tiles of different key ranges, Q and the ring
 * reused across them), where the device is one version 3 runs on.
 */
static void test_hopper_walk(fa_tests *t)
{
    if (!hopper_here(t))
        return;
    const fa_run_options only_v3 = {.seed = SEED, .version = 3};
    flash3_limit_blocks(3);
    const fa_result r = fa_stage_check(&stage07, 25, FA_IMPL_REFERENCE, &only_v3);
    flash3_limit_blocks(0);
    const int cases = causal_grid_count(3, false) + causal_packed_count(3);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_PASSED && r.cases == cases,
              "v3's M25 check in three blocks: %s: %s (%d cases, want %d)", fa_outcome_name(r.outcome),
              r.detail, r.cases, cases);
}

/**
 * The library's version 2 on the sentinel fixtures, in bf16 and fp16, through
 * ref_flash_forward(), judged end to end with canaries (M25's reference
 * check runs its masked grid).
 */
static void test_library_masks(fa_tests *t)
{
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
}

/** Bytes that differ between @p a and @p b. */
static int64_t bytes_differing(const void *a, const void *b, size_t bytes)
{
    int64_t n = 0;
    for (size_t i = 0; i < bytes; ++i)
        n += ((const unsigned char *)a)[i] != ((const unsigned char *)b)[i];
    return n;
}

/**
 * Sequence by sequence, the outputs of the packed call in @p b (scattered)
 * against those of the sequence run alone as a plain call of batch 1:
 * the bytes of o and lse that differ (the same arithmetic on the same rows
 * and keys, whatever the height of the query tiles, which for version 3
 * can differ: three consumers in a batch whose longest sequence has their
 * rows, two for a shorter sequence alone; none should; a sequence without
 * keys is exact zeros and -inf in every kernel).
 */
static int64_t packed_against_alone(causal_packed *b, int version, fa_status *status)
{
    int64_t differing = 0;
    for (int s = 0; s < b->count && *status == FA_OK; ++s) {
        flash_case *one = &b->seqs[s];
        const fa_attention_params *p = &one->call.params;
        if (p->nq == 0)
            continue;
        const flash_sizes sizes = flash_sizes_of(p);
        void *packed_o = malloc((size_t)sizes.o_bytes);
        float *packed_lse = malloc((size_t)sizes.lse_count * sizeof(float) + 1);
        if (packed_o == NULL || packed_lse == NULL) {
            *status = fa_fail(FA_ERR_OUT_OF_MEMORY, "packed test: no host memory");
        } else {
            memcpy(packed_o, one->o, (size_t)sizes.o_bytes);
            if (one->lse != NULL)
                memcpy(packed_lse, one->lse, (size_t)sizes.lse_count * sizeof(float));
            int64_t overwritten = 0;
            /* Version 3 takes no call without keys; alone, such a sequence is v2's zeros and -inf. */
            const int alone = version == 3 && p->nk == 0 ? 2 : version;
            *status = flash_run_on_host(flash_library_forward, alone, p, &sizes, &overwritten);
            differing += overwritten + bytes_differing(packed_o, one->o, (size_t)sizes.o_bytes);
            if (one->lse != NULL)
                differing += bytes_differing(packed_lse, one->lse,
                                             (size_t)sizes.lse_count * sizeof(float));
        }
        free(packed_o);
        free(packed_lse);
    }
    return differing;
}

/**
 * The library's packed batches, each version the device runs, through
 * fa_attention_forward() (offsets read back and checked): every packed case
 * judged sequence by sequence, and each sequence's o and lse bit for bit
 * those of the sequence run alone.
 */
static void test_library_packed(fa_tests *t)
{
    fa_result result = {0};
    for (int version = 1; version <= flash_library_versions(); ++version)
        for (int i = 0; i < causal_packed_count(version); ++i) {
            const causal_packed_spec spec = causal_packed_case(version, i);
            char name[FA_CASE_NAME];
            const size_t prefix = (size_t)snprintf(name, sizeof name, "v%d ", version);
            causal_packed_describe(&spec, i, name + prefix, sizeof name - prefix);
            causal_packed b;
            fa_status status = causal_packed_make(&b, version, i, SEED, (uint64_t)(version * 100 + i));
            const bool judged = fa_result_status(&result, name, status) &&
                                causal_packed_result(&result, name, flash_library_forward, version, &b);
            FA_EXPECT(t, judged, "%s", result.detail);
            if (judged) {
                const int64_t differing = packed_against_alone(&b, version, &status);
                FA_EXPECT(t, status == FA_OK && differing == 0,
                          "%s: %lld bytes of o and lse differ from the sequences run alone (%s)",
                          name, (long long)differing, status == FA_OK ? "" : fa_last_error());
            }
            causal_packed_free(&b);
        }
}

/**
 * Runs the packed call of @p b, changes sequence @p changed's keys (sign
 * flipped) and values (+1, or +inf with @p infinite), runs it again, and
 * counts the bytes of o and lse that moved in the other sequences' rows
 * (*@p others) and in its own (*@p own), with the canary bytes written
 * (*@p overwritten).
 */
static fa_status leak_count(causal_packed *b, int version, int changed, bool infinite,
                            int64_t *others, int64_t *own, int64_t *overwritten)
{
    fa_attention_params *p = &b->call;
    const size_t o_bytes = (size_t)flash_o_bytes(p), lse_bytes = (size_t)flash_lse_count(p) * 4;
    const flash_sizes sizes = flash_sizes_of(p);
    unsigned char *before_o = malloc(o_bytes + 1);
    float *before_lse = malloc(lse_bytes + 1);
    fa_status status = before_o == NULL || before_lse == NULL
                           ? fa_fail(FA_ERR_OUT_OF_MEMORY, "leakage test: no host memory")
                           : flash_run_on_host(flash_library_forward, version, p, &sizes, overwritten);
    if (status == FA_OK) {
        memcpy(before_o, b->o, o_bytes);
        if (b->lse != NULL)
            memcpy(before_lse, b->lse, lse_bytes);
        for (int64_t r = b->cu_k[changed]; r < b->cu_k[changed + 1]; ++r)
            for (int64_t h = 0; h < p->heads_kv; ++h)
                for (int64_t i = 0; i < p->head_dim; ++i) {
                    const int64_t k_at = r * p->k_strides.row + h * p->k_strides.head + i;
                    const int64_t v_at = r * p->v_strides.row + h * p->v_strides.head + i;
                    fa_store(b->k, p->dtype, k_at, -fa_load(b->k, p->dtype, k_at));
                    fa_store(b->v, p->dtype, v_at,
                             infinite ? INFINITY : fa_load(b->v, p->dtype, v_at) + 1.0f);
                }
        causal_packed_poison(b);
        status = flash_run_on_host(flash_library_forward, version, p, &sizes, overwritten);
    }
    const int64_t bytes = fa_dtype_size(flash_o_dtype(p));
    for (int64_t r = 0; r < p->nq && status == FA_OK; ++r) {
        const bool mine = r >= b->cu_q[changed] && r < b->cu_q[changed + 1];
        int64_t n = 0;
        for (int64_t h = 0; h < p->heads_q; ++h) {
            const size_t at = (size_t)((r * p->o_strides.row + h * p->o_strides.head) * bytes);
            n += bytes_differing(before_o + at, (const unsigned char *)b->o + at,
                                 (size_t)(p->head_dim * bytes));
            if (b->lse != NULL)
                n += memcmp(&before_lse[h * p->nq + r], &b->lse[h * p->nq + r], 4) != 0;
        }
        *(mine ? own : others) += n;
    }
    free(before_o);
    free(before_lse);
    return status;
}

/**
 * Leakage: in a packed batch, the keys and values of one sequence are
 * changed and the batch run again. Not one byte of the other sequences' o
 * and lse may move; that sequence's must (the test can see a change). Each
 * version the device runs, under no mask (with gaps after every row) and
 * under causal bottom-right (with rows outside every sequence), the
 * sequence changed a middle one and then the one of most keys, its values
 * moved by 1 and then made infinite (a kernel that lets P's zeros multiply
 * another sequence's values shows NaN).
 */
static void test_packed_leakage(fa_tests *t)
{
    for (int version = 1; version <= flash_library_versions(); ++version)
        for (int pair = 0; pair < 2; ++pair)
            for (int pick = 0; pick < 4; ++pick) {
                const int index = 4 * pair + 1; /* rows and keys of their own: none, causal-br */
                const bool infinite = pick >= 2;
                causal_packed b;
                if (!FA_EXPECT(t, causal_packed_make(&b, version, index, SEED,
                                                     (uint64_t)(1000 + version * 10 + pair)) == FA_OK,
                               "%s", fa_last_error()))
                    continue;
                int changed = CAUSAL_PACKED_SEQUENCES / 2;
                for (int s = 0; s < b.count && pick % 2 == 1; ++s)
                    changed = b.spec.nk[s] > b.spec.nk[changed] ? s : changed;
                int64_t others = 0, own = 0, overwritten = 0;
                const fa_status status =
                    leak_count(&b, version, changed, infinite, &others, &own, &overwritten);
                FA_EXPECT(t, status == FA_OK && overwritten == 0 && others == 0 && own > 0,
                          "v%d packed %d, sequence %d's keys changed (values %s): %lld bytes of "
                          "the other sequences' outputs moved (want 0), %lld of its own (want > "
                          "0), %lld canary bytes written (%s)",
                          version, index, changed, infinite ? "infinite" : "+1", (long long)others,
                          (long long)own, (long long)overwritten,
                          status == FA_OK ? "" : fa_last_error());
                causal_packed_free(&b);
            }
}

/**
 * fa_attention_forward() on device offsets it must refuse (decreasing, past
 * nq, a sequence longer than max_seqlen_k): FA_ERR_INVALID_ARGUMENT with the
 * offset named; and on sequences all empty (max_seqlen_q = 0): FA_OK, a
 * no-op. Either way o is left as it was (nothing launched).
 */
static void test_packed_refusals(fa_tests *t)
{
    static const struct {
        int32_t q[3], k[3];
        int64_t max_q;
        const char *needle; /* "": accepted */
    } cases[] = {
        {{0, 3, 2}, {0, 4, 8}, 6, "cu_seqlens_q[2] = 2 < cu_seqlens_q[1] = 3"},
        {{0, 3, 7}, {0, 4, 8}, 6, "cu_seqlens_q[2] = 7 is past the tensors' nq = 6"},
        {{0, 3, 6}, {0, 1, 8}, 6, "sequence 1 has 7 keys"},
        {{2, 2, 2}, {0, 4, 8}, 0, ""},
    };
    fa_attention_params p = flash_params(2, 2, 2, 6, 8, 16, FA_BF16);
    p.max_seqlen_k = 4;
    const size_t q_bytes = (size_t)(6 * 2 * 16 * 2), k_bytes = (size_t)(8 * 2 * 16 * 2);
    void *q = NULL, *k = NULL, *v = NULL, *o = NULL, *cu = NULL;
    fa_status status = fa_device_alloc(&q, q_bytes);
    if (status == FA_OK)
        status = fa_device_alloc(&k, k_bytes);
    if (status == FA_OK)
        status = fa_device_alloc(&v, k_bytes);
    if (status == FA_OK)
        status = fa_device_alloc(&o, q_bytes);
    if (status == FA_OK)
        status = fa_device_alloc(&cu, 6 * sizeof(int32_t));
    for (int i = 0; i < FA_COUNT_OF(cases) && status == FA_OK; ++i) {
        int32_t offsets[6];
        memcpy(offsets, cases[i].q, sizeof cases[i].q);
        memcpy(offsets + 3, cases[i].k, sizeof cases[i].k);
        unsigned char *after = malloc(q_bytes);
        status = after == NULL ? FA_ERR_OUT_OF_MEMORY : fa_device_poison(o, q_bytes);
        if (status == FA_OK && cudaMemcpy(cu, offsets, sizeof offsets, cudaMemcpyHostToDevice) !=
                                   cudaSuccess)
            status = fa_fail(FA_ERR_CUDA, "refusal test: cudaMemcpy of the offsets");
        if (status == FA_OK) {
            p.q = q;
            p.k = k;
            p.v = v;
            p.o = o;
            p.cu_seqlens_q = cu;
            p.cu_seqlens_k = (const int32_t *)cu + 3;
            p.max_seqlen_q = cases[i].max_q;
            fa_clear_error();
            const fa_status got = fa_attention_forward(&p, 0);
            if (cases[i].needle[0] == '\0')
                FA_EXPECT(t, got == FA_OK, "offsets %d: %s (\"%s\"), expected FA_OK (no sequence "
                                           "has a row)", i, fa_status_name(got), fa_last_error());
            else
                FA_EXPECT(t, got == FA_ERR_INVALID_ARGUMENT && strstr(fa_last_error(), cases[i].needle),
                          "offsets %d: %s (\"%s\"), expected FA_ERR_INVALID_ARGUMENT naming \"%s\"",
                          i, fa_status_name(got), fa_last_error(), cases[i].needle);
            int64_t unwritten = 0;
            if (cudaMemcpy(after, o, q_bytes, cudaMemcpyDeviceToHost) == cudaSuccess)
                for (size_t e = 0; e + 4 <= q_bytes; e += 4) {
                    float x;
                    memcpy(&x, after + e, 4);
                    unwritten += fa_is_poison(x);
                }
            FA_EXPECT(t, unwritten == (int64_t)(q_bytes / 4), "offsets %d: o was written", i);
        }
        free(after);
    }
    FA_EXPECT(t, status == FA_OK, "refusal test: %s", fa_last_error());
    fa_device_free(q);
    fa_device_free(k);
    fa_device_free(v);
    fa_device_free(o);
    fa_device_free(cu);
}

#endif /* FA_HAVE_CUDA */

int main(int argc, char **argv)
{
    static const fa_test_fn cpu[] = {test_key_tiles,      test_fixtures,     test_grid,
                                     test_packed_offsets, test_packed_cases, test_three_consumer_cases};
#if FA_HAVE_CUDA
    static const fa_test_fn gpu[] = {test_reference_checks, test_hopper_walk,    test_timing_versions,
                                     test_library_masks,    test_library_packed, test_packed_leakage,
                                     test_packed_refusals};
    const fa_test_suite suite = {"test_stage07", cpu, FA_COUNT_OF(cpu), gpu, FA_COUNT_OF(gpu),
                                 fa_gpu_gate};
#else
    const fa_test_suite suite = {"test_stage07", cpu, FA_COUNT_OF(cpu), NULL, 0, NULL};
#endif
    return fa_test_main(argc, argv, &suite);
}
