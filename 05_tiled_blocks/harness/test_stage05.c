/**
 * @file test_stage05.c
 * @brief Stage 05 tests.
 *
 * `test_stage05 cpu` (no GPU needed): the fixtures' hand arithmetic against
 * the judges and the version-1 model; the model against the double
 * reference within the judges' bounds; the M20 and M21 judges rejecting
 * planted mistakes by a wide margin; every bad argument of the traces with
 * its exact status; the driver's flags; the swizzle of every row width
 * stage 06 compiles, a permutation with conflict-free ldmatrix reads and
 * cp.async writes.
 *
 * `test_stage05 gpu` (exit 77 without a usable GPU): every milestone's check
 * on the reference blocks, both versions; the reference bit for bit against
 * the version-1 model where it is exact; --case and the problem flags;
 * canaries catching a write past the end; a NaN query row reaching exactly
 * that row's outputs.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa_attention_ref.h"
#include "fa_bound.h"
#include "fa_check.h"
#include "fa_cli.h"
#include "fa_index.h"
#include "fa_rng.h"
#include "fa_stage.h"
#include "fa_status.h"
#include "fa_test.h"
#include "fixtures.h"
#include "model.h"
#include "tiles.h"

#if FA_HAVE_CUDA
#include "checks.h"
#include "fa_device.h"
#include "runners.h"
#endif

static const uint64_t SEED = 20240605;

/** Index of the first element where @p got != (double)@p want by value (NaN equals NaN), or -1. */
static int64_t first_value_difference(const double *got, const float *want, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        if (!(got[i] == (double)want[i] || (isnan(got[i]) && isnan(want[i]))))
            return i;
    return -1;
}

/** Element counts of one problem's arrays in version @p version. */
typedef struct counts {
    int64_t keys;  /* scores, weights: heads nq T BC */
    int64_t tiles; /* max, alpha, sum: heads nq T */
    int64_t rows;  /* heads nq */
} counts;

static counts counts_of(int version, const tile_problem *p)
{
    const int64_t t = tile_key_tiles(version, p->nk);
    return (counts){p->heads * p->nq * t * tile_keys(version), p->heads * p->nq * t,
                    p->heads * p->nq};
}

/** The judges' expected values and bounds of one problem, for every milestone. */
typedef struct judged {
    double *scores, *scores_bound, *max, *max_bound, *weights, *weights_bound;
    double *alpha, *alpha_bound, *sum, *sum_bound;
} judged;

static judged judged_alloc(const counts *n)
{
    judged j;
    j.scores = fa_new_doubles(n->keys);
    j.scores_bound = fa_new_doubles(n->keys);
    j.max = fa_new_doubles(n->tiles);
    j.max_bound = fa_new_doubles(n->tiles);
    j.weights = fa_new_doubles(n->keys);
    j.weights_bound = fa_new_doubles(n->keys);
    j.alpha = fa_new_doubles(n->tiles);
    j.alpha_bound = fa_new_doubles(n->tiles);
    j.sum = fa_new_doubles(n->tiles);
    j.sum_bound = fa_new_doubles(n->tiles);
    return j;
}

static void judged_free(judged *j)
{
    free(j->scores);
    free(j->scores_bound);
    free(j->max);
    free(j->max_bound);
    free(j->weights);
    free(j->weights_bound);
    free(j->alpha);
    free(j->alpha_bound);
    free(j->sum);
    free(j->sum_bound);
}

/* ---- CPU: the fixtures' hand arithmetic ------------------------------------------------------ */

/** |got - want| within @p tolerance (relative to 1 + |want|), or both NaN, or equal infinities. */
static bool near(double got, double want, double tolerance)
{
    if (isnan(want) || isinf(want))
        return isnan(want) ? isnan(got) : got == want;
    return fabs(got - want) <= tolerance * (1.0 + fabs(want));
}

/**
 * Every hand value of every fixture is what the judges expect from the hand
 * values before it (so the judges are the hand arithmetic), what the
 * version-1 model computes (bit for bit), and, for o and lse, what the double
 * reference computes. The reference uses the fp32 scale fp32(ln 2), not ln 2
 * itself: its weights differ from the hand powers of two by about 1e-8.
 */
static void test_fixtures(fa_tests *t)
{
    FA_EXPECT(t, tile_exp2_scale(FA_LN2_F) == 1.0f,
              "fp32(ln 2) * fp32(log2 e) must round to 1 exactly, got %a",
              (double)tile_exp2_scale(FA_LN2_F));
    for (int f = 0; f < tile_fixture_count; ++f)
        for (int version = 1; version <= 2; ++version) {
            if (!tile_fixture_runs(f, version))
                continue;
            const char *name = tile_fixture_name(f);
            tile_fixture x;
            tile_case c = {0};
            /* the dtypes the checks run the fixtures in: fp32 (version 1), bf16 (version 2) */
            if (!FA_EXPECT(t, tile_fixture_make(f, version, &x) == FA_OK &&
                                  tile_fixture_case(&x, version == 1 ? FA_F32 : FA_BF16, &c) == FA_OK,
                           "fixture '%s': %s", name, fa_last_error()))
                continue;
            const tile_problem *p = &c.problem;
            const counts n = counts_of(version, p);
            judged j = judged_alloc(&n);
            judge_scores(version, p, j.scores, j.scores_bound);
            judge_running_max(version, p, x.scores, j.max, j.max_bound);
            judge_weights(version, p, x.scores, x.max, j.weights, j.weights_bound, j.alpha,
                          j.alpha_bound);
            judge_sums(version, p, x.weights, x.alpha, j.sum, j.sum_bound);
            const struct {
                const char *what;
                const double *judge;
                const float *hand;
                int64_t count;
            } stages[] = {
                {"scores", j.scores, x.scores, n.keys},    {"max", j.max, x.max, n.tiles},
                {"weights", j.weights, x.weights, n.keys}, {"alpha", j.alpha, x.alpha, n.tiles},
                {"sum", j.sum, x.sum, n.tiles},
            };
            for (int s = 0; s < FA_COUNT_OF(stages); ++s) {
                const int64_t at = first_value_difference(stages[s].judge, stages[s].hand,
                                                          stages[s].count);
                FA_EXPECT(t, at < 0, "v%d fixture '%s' %s [%lld]: judge %.17g, hand %.9g", version,
                          name, stages[s].what, (long long)at, at < 0 ? 0.0 : stages[s].judge[at],
                          at < 0 ? 0.0 : (double)stages[s].hand[at]);
            }

            const int64_t most = n.keys > n.tiles ? n.keys : n.tiles;
            float *model = fa_new_floats(most);
            if (version == 1) {
                model1_scores(p, model);
                const int64_t at = fa_first_difference(model, x.scores, n.keys);
                FA_EXPECT(t, at < 0, "fixture '%s': model1_scores differs at %lld", name,
                          (long long)at);
                model1_sums(p, x.weights, x.alpha, model);
                const int64_t sum_at = fa_first_difference(model, x.sum, n.tiles);
                FA_EXPECT(t, sum_at < 0, "fixture '%s': model1_sums differs at %lld", name,
                          (long long)sum_at);
            }
            model_running_max(version, p, x.scores, model);
            const int64_t max_at = fa_first_difference(model, x.max, n.tiles);
            FA_EXPECT(t, max_at < 0, "v%d fixture '%s': model_running_max differs at %lld", version,
                      name, (long long)max_at);
            free(model);

            const fa_attn_problem problem = tile_attn_problem(p);
            const fa_attn_method method = tile_method(version, p->dtype);
            fa_attn_reference ref = {0};
            if (FA_EXPECT(t, fa_attention_reference(&problem, &method, &ref) == FA_OK,
                          "fixture '%s' reference: %s", name, fa_last_error())) {
                for (int64_t i = 0; i < n.rows * p->d; ++i)
                    if (!FA_EXPECT(t, near(ref.o[i], x.o[i], 1e-6),
                                   "v%d fixture '%s' o[%lld]: reference %.17g, hand %.17g",
                                   version, name, (long long)i, ref.o[i], x.o[i]))
                        break;
                for (int64_t i = 0; i < n.rows; ++i)
                    FA_EXPECT(t, near(ref.lse[i], x.lse[i], 1e-6),
                              "v%d fixture '%s' lse[%lld]: reference %.17g, hand %.17g", version,
                              name, (long long)i, ref.lse[i], x.lse[i]);
            }
            fa_attn_reference_free(&ref);
            judged_free(&j);
            tile_case_free(&c);
            tile_fixture_free(&x);
        }
}

/* ---- CPU: the model against the double reference --------------------------------------------- */

/** Problems of the model tests: awkward sizes, every dtype, maxima that rise. */
static const struct {
    int64_t heads, nq, nk, d;
    fa_dtype dtype;
    double spread;
    tile_max_pattern pattern;
} MODEL_CASES[] = {
    {1, 1, 1, 1, FA_F32, 1.0, TILE_MAX_ANYWHERE},
    {2, 65, 33, 37, FA_BF16, 3.0, TILE_MAX_RISES_EVERY_TILE},
    {1, 70, 150, 64, FA_F32, 8.0, TILE_MAX_IN_LAST_TILE},
    {3, 5, 100, 2, FA_F16, 0.3, TILE_MAX_ANYWHERE},
    {1, 9, 300, 256, FA_F32, 1.0, TILE_MAX_RISES_EVERY_TILE},
    {1, 4, 0, 8, FA_F32, 1.0, TILE_MAX_ANYWHERE},
};

/** Covered by a judge; on failure the message names the array and the report. */
static bool covers(fa_tests *t, const char *label, const float *got, const double *ref,
                   const double *bound, int64_t count)
{
    fa_check_report report;
    const bool ok = fa_check_covers(got, ref, bound, count, &report);
    char description[FA_RESULT_DETAIL];
    const fa_shape shape = fa_shape_1d(count);
    return FA_EXPECT(t, ok, "%s: %s", label,
                     fa_check_describe(&report, &shape, description, sizeof description));
}

/**
 * The version-1 model, step by step, inside the judges' bounds (each step
 * fed the model's own earlier steps, as the checks feed a kernel's), and end
 * to end inside the bound of tile_method(1, dtype).
 */
static void test_model_vs_reference(fa_tests *t)
{
    for (int m = 0; m < FA_COUNT_OF(MODEL_CASES); ++m) {
        fa_rng rng;
        fa_rng_seed(&rng, SEED, (uint64_t)m);
        tile_case c;
        const fa_status made = tile_random_case(
            &c, 1, MODEL_CASES[m].dtype, MODEL_CASES[m].heads, MODEL_CASES[m].nq, MODEL_CASES[m].nk,
            MODEL_CASES[m].d, MODEL_CASES[m].spread, MODEL_CASES[m].pattern, &rng);
        if (!FA_EXPECT(t, made == FA_OK,
                       "model case %d: %s", m, fa_last_error()))
            continue;
        const tile_problem *p = &c.problem;
        const counts n = counts_of(1, p);
        judged j = judged_alloc(&n);
        float *scores = fa_new_floats(n.keys);
        float *weights = fa_new_floats(n.keys);
        float *max = fa_new_floats(n.tiles);
        float *alpha = fa_new_floats(n.tiles);
        float *sum = fa_new_floats(n.tiles);
        float *o = fa_new_floats(n.rows * p->d);
        float *lse = fa_new_floats(n.rows);
        char label[96];

        model1_scores(p, scores);
        judge_scores(1, p, j.scores, j.scores_bound);
        snprintf(label, sizeof label, "model case %d scores", m);
        covers(t, label, scores, j.scores, j.scores_bound, n.keys);
        model_running_max(1, p, scores, max);
        judge_running_max(1, p, scores, j.max, j.max_bound);
        snprintf(label, sizeof label, "model case %d max", m);
        covers(t, label, max, j.max, j.max_bound, n.tiles);
        model_weights(1, p, scores, max, tile_exp2_scale(p->scale), weights, alpha);
        judge_weights(1, p, scores, max, j.weights, j.weights_bound, j.alpha, j.alpha_bound);
        snprintf(label, sizeof label, "model case %d weights", m);
        covers(t, label, weights, j.weights, j.weights_bound, n.keys);
        snprintf(label, sizeof label, "model case %d alpha", m);
        covers(t, label, alpha, j.alpha, j.alpha_bound, n.tiles);
        model1_sums(p, weights, alpha, sum);
        judge_sums(1, p, weights, alpha, j.sum, j.sum_bound);
        snprintf(label, sizeof label, "model case %d sum", m);
        covers(t, label, sum, j.sum, j.sum_bound, n.tiles);

        model1_output(p, o, lse);
        const fa_attn_problem problem = tile_attn_problem(p);
        const fa_attn_method method = tile_method(1, p->dtype);
        fa_attn_reference ref = {0};
        fa_check_report o_report, lse_report;
        FA_EXPECT(t, fa_attention_reference(&problem, &method, &ref) == FA_OK &&
                         fa_attention_covers(&ref, o, lse, &o_report, &lse_report),
                  "model case %d: model1_output not covered (o worst err/bound %.3g, lse %.3g) %s",
                  m, o_report.worst_ratio, lse_report.worst_ratio, fa_last_error());
        fa_attn_reference_free(&ref);
        judged_free(&j);
        free(scores);
        free(weights);
        free(max);
        free(alpha);
        free(sum);
        free(o);
        free(lse);
        tile_case_free(&c);
    }
}

/* ---- CPU: the judges reject planted mistakes ------------------------------------------------- */

/** The margin a planted mistake must miss its bound by. */
static const double REJECT_MARGIN = 10.0;

/** Judged: covered when @p correct, else uncovered with the worst err/bound above the margin. */
static void expect_verdict(fa_tests *t, int version, const char *what, bool correct,
                           const float *got, const double *ref, const double *bound, int64_t count)
{
    fa_check_report report;
    const bool covered = fa_check_covers(got, ref, bound, count, &report);
    if (correct)
        FA_EXPECT(t, covered, "v%d %s must pass: worst err/bound %.3g, %lld uncovered", version,
                  what, report.worst_ratio, (long long)report.uncovered);
    else
        FA_EXPECT(t, !covered && !(report.worst_ratio <= REJECT_MARGIN),
                  "v%d %s must fail by more than %gx: covered %d, worst err/bound %.3g", version,
                  what, REJECT_MARGIN, covered, report.worst_ratio);
}

/** l_t = a_t l_(t-1) + (the tile's weights added in key order), in fp32; @p rescale false drops a_t. */
static void sums_in_order(int version, const tile_problem *p, const float *weights,
                          const float *alpha, bool rescale, float *sum)
{
    const int bc = tile_keys(version);
    const int64_t tiles = tile_key_tiles(version, p->nk);
    for (int64_t row = 0; row < p->heads * p->nq; ++row) {
        float l = 0.0f;
        for (int64_t t = 0; t < tiles; ++t) {
            float s = 0.0f;
            for (int j = 0; j < bc; ++j)
                s += weights[(row * tiles + t) * bc + j];
            l = rescale ? fmaf(alpha[row * tiles + t], l, s) : l + s;
            sum[row * tiles + t] = l;
        }
    }
}

/**
 * The M20 and M21 judges accept a correct block and reject, by more than
 * 10x, the mistakes a learner makes: log2(e) forgotten, the scale applied
 * twice, alpha inverted, a tail weight that is not 0, alpha not applied to l.
 * The scores fed in are any fixed scores (here the reference's, rounded).
 */
static void test_judges_reject_mistakes(fa_tests *t)
{
    for (int version = 1; version <= 2; ++version) {
        fa_rng rng;
        fa_rng_seed(&rng, SEED, 100 + (uint64_t)version);
        tile_case c;
        /* nk = 150: 5 or 3 key tiles, the last one partial (a tail to check) */
        if (!FA_EXPECT(t, tile_random_case(&c, version, FA_BF16, 2, 70, 150, 64, 1.0,
                                           TILE_MAX_RISES_EVERY_TILE, &rng) == FA_OK,
                       "judges case: %s", fa_last_error()))
            continue;
        const tile_problem *p = &c.problem;
        const counts n = counts_of(version, p);
        judged j = judged_alloc(&n);
        float *scores = fa_new_floats(n.keys);
        float *max = fa_new_floats(n.tiles);
        float *weights = fa_new_floats(n.keys);
        float *alpha = fa_new_floats(n.tiles);
        float *sum = fa_new_floats(n.tiles);
        judge_scores(version, p, j.scores, j.scores_bound);
        for (int64_t i = 0; i < n.keys; ++i)
            scores[i] = (float)j.scores[i];
        model_running_max(version, p, scores, max);
        judge_weights(version, p, scores, max, j.weights, j.weights_bound, j.alpha, j.alpha_bound);

        const float c_right = tile_exp2_scale(p->scale);
        model_weights(version, p, scores, max, c_right, weights, alpha);
        expect_verdict(t, version, "weights", true, weights, j.weights, j.weights_bound, n.keys);
        expect_verdict(t, version, "alpha", true, alpha, j.alpha, j.alpha_bound, n.tiles);
        judge_sums(version, p, weights, alpha, j.sum, j.sum_bound);
        sums_in_order(version, p, weights, alpha, true, sum);
        expect_verdict(t, version, "sums in key order", true, sum, j.sum, j.sum_bound, n.tiles);
        if (version == 1) {
            model1_sums(p, weights, alpha, sum);
            expect_verdict(t, version, "sums by the butterfly", true, sum, j.sum, j.sum_bound,
                           n.tiles);
        }

        sums_in_order(version, p, weights, alpha, false, sum);
        expect_verdict(t, version, "sums with alpha not applied", false, sum, j.sum, j.sum_bound,
                       n.tiles);
        for (int64_t i = 0; i < n.tiles; ++i)
            alpha[i] = alpha[i] > 0.0f ? 1.0f / alpha[i] : alpha[i];
        expect_verdict(t, version, "alpha inverted, exp2((m_new - m_old) c)", false, alpha,
                       j.alpha, j.alpha_bound, n.tiles);
        model_weights(version, p, scores, max, p->scale, weights, alpha);
        expect_verdict(t, version, "weights with log2(e) forgotten", false, weights, j.weights,
                       j.weights_bound, n.keys);
        model_weights(version, p, scores, max, tile_exp2_scale(p->scale * p->scale), weights, alpha);
        expect_verdict(t, version, "weights with the scale applied twice", false, weights,
                       j.weights, j.weights_bound, n.keys);
        model_weights(version, p, scores, max, c_right, weights, alpha);
        const int64_t tail = n.keys - 1; /* row heads nq - 1, the last column: past nk */
        weights[tail] = exp2f(tile_weight_argument(0.0f, max[n.tiles - 1], c_right));
        expect_verdict(t, version, "a tail weight of score 0 instead of -inf", false, weights,
                       j.weights, j.weights_bound, n.keys);

        judged_free(&j);
        free(scores);
        free(max);
        free(weights);
        free(alpha);
        free(sum);
        tile_case_free(&c);
    }
}

/* ---- CPU: the swizzle ------------------------------------------------------------------------ */

/** The 16-byte slot of a 128-byte line (a group of 4 banks) that element @p offset of a tile lies in. */
static int bank_slot(int offset)
{
    return offset / TILE2_CHUNK % 8;
}

/** Shared-memory passes of 8 accesses of 16 bytes: the most of them in one slot. */
static int passes_of(const int offsets[8])
{
    int in_slot[8] = {0}, most = 0;
    for (int i = 0; i < 8; ++i) {
        const int n = ++in_slot[bank_slot(offsets[i])];
        most = n > most ? n : most;
    }
    return most;
}

/*
 * Every row width stage 06 compiles (d_pad = 32 .. 256): tile2_offset() moves
 * whole chunks within their row, and each access of the blocks takes one
 * pass. An ldmatrix phase reads 8 rows from a multiple of 8 at one logical
 * chunk (Q, K, and V's transposed reads alike). A quarter-warp of
 * tile2_load_async() writes the chunks of 8 consecutive threads, thread i
 * copying chunk i % (d_pad / 8) of row i / (d_pad / 8) plus the pass's rows.
 */
static void test_swizzle(fa_tests *t)
{
    enum { ROWS = 128, THREADS = TILE2_THREADS };
    for (int d_pad = 32; d_pad <= 256; d_pad += 32) {
        const int chunks = d_pad / TILE2_CHUNK;
        bool permutes = true;
        for (int row = 0; row < ROWS; ++row) {
            bool seen[256] = {false};
            for (int col = 0; col < d_pad; ++col) {
                const int at = tile2_offset(row, col, d_pad) - row * d_pad;
                if (at < 0 || at >= d_pad || seen[at] || at % TILE2_CHUNK != col % TILE2_CHUNK)
                    permutes = false;
                else
                    seen[at] = true;
            }
        }
        FA_EXPECT(t, permutes, "d_pad %d: tile2_offset() must permute each row's elements, chunks whole",
                  d_pad);

        /* tile2_lane_address() as the blocks call it: a lane's row r0 < 16 and half h, chunk
         * 2 pair + h of the row rows below (a multiple of 16), from its address of chunk
         * 2 (pair mod P) + h of row r0. */
        const int pairs = tile2_swizzle_pairs(d_pad);
        int mismatched = 0;
        for (int r0 = 0; r0 < 16; ++r0)
            for (int half = 0; half < 2; ++half)
                for (int pair = 0; pair < d_pad / 16; ++pair)
                    for (int rows = 0; r0 + rows < ROWS; rows += 16)
                        mismatched +=
                            tile2_offset(r0 + rows, (2 * pair + half) * TILE2_CHUNK, d_pad) !=
                            tile2_offset(r0, (2 * (pair % pairs) + half) * TILE2_CHUNK, d_pad) +
                                tile2_pair_step(pair, rows, d_pad);
        FA_EXPECT(t, mismatched == 0, "d_pad %d: %d ldmatrix addresses are not a lane's address plus "
                  "tile2_pair_step()", d_pad, mismatched);

        /* tile2_chunk_step() as version 2's O staging (flash2_stage_o()) adds it: any
         * element of chunk c, rows (a multiple of 8) below row r, from the same element of
         * chunk c mod G of row r. */
        const int group_elements = tile2_swizzle_group(d_pad) * TILE2_CHUNK;
        int moved = 0;
        for (int r = 0; r < 16; ++r)
            for (int col = 0; col < d_pad; ++col)
                for (int rows = 0; r + rows < ROWS; rows += 8)
                    moved += tile2_offset(r + rows, col, d_pad) !=
                             tile2_offset(r, col % group_elements, d_pad) +
                                 tile2_chunk_step(col / TILE2_CHUNK, rows, d_pad);
        FA_EXPECT(t, moved == 0, "d_pad %d: %d elements are not their row's offset in the swizzle "
                  "group plus tile2_chunk_step()", d_pad, moved);

        int ldmatrix = 0;
        for (int row0 = 0; row0 < ROWS; row0 += 8)
            for (int chunk = 0; chunk < chunks; ++chunk) {
                int offsets[8];
                for (int i = 0; i < 8; ++i)
                    offsets[i] = tile2_offset(row0 + i, chunk * TILE2_CHUNK, d_pad);
                const int n = passes_of(offsets);
                ldmatrix = n > ldmatrix ? n : ldmatrix;
            }
        FA_EXPECT(t, ldmatrix == 1, "d_pad %d: an ldmatrix phase takes %d passes, expected 1", d_pad,
                  ldmatrix);

        const int rows_per_pass = THREADS / chunks, active = rows_per_pass * chunks;
        int copy = 0;
        for (int pass_row0 = 0; pass_row0 < ROWS; pass_row0 += rows_per_pass)
            for (int first = 0; first + 8 <= active; first += 8) {
                int offsets[8];
                for (int i = 0; i < 8; ++i) {
                    const int thread = first + i;
                    offsets[i] = tile2_offset(pass_row0 + thread / chunks,
                                              thread % chunks * TILE2_CHUNK, d_pad);
                }
                const int n = passes_of(offsets);
                copy = n > copy ? n : copy;
            }
        FA_EXPECT(t, copy == 1, "d_pad %d: a quarter-warp of cp.async writes takes %d passes, expected 1",
                  d_pad, copy);
    }
}

/* ---- CPU: bad input -------------------------------------------------------------------------- */

/** Stand-in for device memory: validation compares addresses and never dereferences them. */
static _Alignas(16) unsigned char arena[1 << 17];

/** A pointer @p bytes into the arena (possibly misaligned; never dereferenced). */
static void *arena_at(size_t bytes)
{
    return arena + bytes;
}

/** Addresses for arrays of terabytes (never dereferenced): 4 KiB, 1 MiB, 2^50 and 2^62. */
static const uintptr_t LOW = (uintptr_t)1 << 12, MIDDLE = (uintptr_t)1 << 20,
                       HIGH = (uintptr_t)1 << 50, HIGHEST = (uintptr_t)1 << 62;

static void *address(uintptr_t a)
{
    return (void *)a;
}

/** A valid problem of 2 heads x 3 x 5 x 8 bf16 in the arena (q at 0, k at 256, v at 512). */
static tile_problem arena_problem(void)
{
    const tile_problem p = {arena_at(0), arena_at(256), arena_at(512), FA_BF16, 2, 3, 5, 8, 0.5f};
    return p;
}

/** Every output of every milestone, disjoint from each other and from the inputs. */
static tile_trace arena_trace(void)
{
    tile_trace tr = {0};
    tr.q_tiles = arena_at(1024);
    tr.k_tiles = arena_at(1024 + 8192);
    tr.v_tiles = arena_at(1024 + 16384);
    tr.scores = arena_at(1024 + 24576);
    tr.max = arena_at(1024 + 32768);
    tr.weights = arena_at(1024 + 40960);
    tr.correction = arena_at(1024 + 49152);
    tr.sum = arena_at(1024 + 57344);
    tr.o = arena_at(1024 + 65536);
    tr.lse = arena_at(1024 + 73728);
    return tr;
}

/** One bad (or edge) call of tile_trace_validate(). */
typedef struct bad_case {
    const char *what;
    int milestone, version;
    tile_problem problem;
    tile_trace trace;
    fa_status expected;
    const char *needle;
} bad_case;

static void expect_validate(fa_tests *t, const bad_case *b)
{
    fa_clear_error();
    FA_EXPECT_STATUS(t, tile_trace_validate(b->milestone, b->version, &b->problem, &b->trace),
                     b->expected, b->needle, "tile_trace_validate, %s", b->what);
#if FA_HAVE_CUDA
    /* The launchers validate before any CUDA call, so bad input fails without a GPU; a valid
     * problem would launch on these fake addresses unless it is empty. */
    if (b->expected == FA_OK && b->problem.heads * b->problem.nq != 0)
        return;
    fa_clear_error();
    FA_EXPECT_STATUS(t, ref_tile_trace(b->milestone, b->version, &b->problem, &b->trace, 0),
                     b->expected, b->needle, "ref_tile_trace, %s", b->what);
    fa_clear_error();
    FA_EXPECT_LEARNER_STATUS(t,
                             learner_tile_trace(b->milestone, b->version, &b->problem, &b->trace, 0),
                             b->expected, b->needle, "learner_tile_trace, %s", b->what);
#endif
}

static void test_bad_input(fa_tests *t)
{
    const tile_problem ok = arena_problem();
    const tile_trace all = arena_trace();
    fa_clear_error();
    FA_EXPECT_STATUS(t, tile_trace_validate(18, 1, NULL, &all), FA_ERR_NULL_POINTER, "problem = ",
                     "tile_trace_validate, NULL problem");
    fa_clear_error();
    FA_EXPECT_STATUS(t, tile_trace_validate(18, 1, &ok, NULL), FA_ERR_NULL_POINTER, "trace = ",
                     "tile_trace_validate, NULL trace");
#if FA_HAVE_CUDA
    fa_clear_error();
    FA_EXPECT_STATUS(t, ref_tile_trace(18, 1, NULL, &all, 0), FA_ERR_NULL_POINTER, "problem = ",
                     "ref_tile_trace, NULL problem");
#endif

    tile_problem p;
    bad_case cases[64];
    int count = 0;
#define BAD(what_, m_, v_, edit_, expected_, needle_)                                          \
    do {                                                                                       \
        p = ok;                                                                                \
        tile_trace tr = all;                                                                   \
        (void)tr;                                                                              \
        edit_;                                                                                 \
        cases[count++] = (bad_case){what_, m_, v_, p, tr, expected_, needle_};                 \
    } while (0)
    BAD("a valid problem", 22, 2, (void)0, FA_OK, "");
    BAD("milestone 16", 16, 1, (void)0, FA_ERR_INVALID_ARGUMENT, "milestone = 16");
    BAD("milestone 23", 23, 1, (void)0, FA_ERR_INVALID_ARGUMENT, "milestone = 23");
    BAD("version 0", 18, 0, (void)0, FA_ERR_INVALID_ARGUMENT, "version = 0");
    BAD("version 3", 18, 3, (void)0, FA_ERR_INVALID_ARGUMENT, "version = 3");
    BAD("fp32 in version 2", 18, 2, p.dtype = FA_F32, FA_ERR_INVALID_ARGUMENT, "bf16 or fp16");
    BAD("d = 0 (v1)", 18, 1, p.d = 0, FA_ERR_UNSUPPORTED, "d = 0");
    BAD("d = 257 (v1)", 18, 1, p.d = 257, FA_ERR_UNSUPPORTED, "d = 257");
    BAD("d = 7 (v2)", 18, 2, p.d = 7, FA_ERR_UNSUPPORTED, "d = 7");
    BAD("d = 136 (v2)", 18, 2, p.d = 136, FA_ERR_UNSUPPORTED, "d = 136");
    BAD("d = 12 (v2)", 18, 2, p.d = 12, FA_ERR_UNSUPPORTED, "d = 12");
    BAD("d = 256 (v1)", 18, 1, p.d = 256, FA_OK, "");
    BAD("d = 1 (v1)", 18, 1, p.d = 1, FA_OK, "");
    BAD("scale 0", 18, 1, p.scale = 0.0f, FA_ERR_INVALID_ARGUMENT, "scale = 0");
    BAD("scale -1", 18, 1, p.scale = -1.0f, FA_ERR_INVALID_ARGUMENT, "scale = -1");
    BAD("scale NaN", 18, 1, p.scale = NAN, FA_ERR_INVALID_ARGUMENT, "scale = nan");
    BAD("scale inf", 18, 1, p.scale = INFINITY, FA_ERR_INVALID_ARGUMENT, "scale = inf");
    BAD("heads < 0", 18, 1, p.heads = -1, FA_ERR_INVALID_SIZE, "heads = -1");
    BAD("nq < 0", 18, 1, p.nq = -1, FA_ERR_INVALID_SIZE, "nq = -1");
    BAD("nk < 0", 18, 1, p.nk = -2, FA_ERR_INVALID_SIZE, "nk = -2");
    BAD("heads 65535", 19, 1,
        (p.heads = 65535, p.q = p.k = p.v = address(LOW), tr.max = address(HIGH)), FA_OK, "");
    BAD("heads 65536", 19, 1,
        (p.heads = 65536, p.q = p.k = p.v = address(LOW), tr.max = address(HIGH)),
        FA_ERR_OVERFLOW, "heads = 65536");
    BAD("heads 0 with NULL arrays", 22, 1, (p.heads = 0, p.q = p.k = p.v = NULL, tr = (tile_trace){0}),
        FA_OK, "");
    BAD("nq 0 with NULL arrays", 20, 2, (p.nq = 0, p.q = p.k = p.v = NULL, tr = (tile_trace){0}),
        FA_OK, "");
    BAD("nk 0 with k and v NULL", 22, 2, (p.nk = 0, p.k = p.v = NULL), FA_OK, "");
    BAD("q NULL", 18, 1, p.q = NULL, FA_ERR_NULL_POINTER, "q = NULL");
    BAD("k NULL", 18, 2, p.k = NULL, FA_ERR_NULL_POINTER, "k = NULL");
    BAD("v NULL", 22, 1, p.v = NULL, FA_ERR_NULL_POINTER, "v = NULL");
    BAD("q_tiles NULL (M17)", 17, 1, tr.q_tiles = NULL, FA_ERR_NULL_POINTER, "q_tiles = NULL");
    BAD("v_tiles NULL (M17)", 17, 2, tr.v_tiles = NULL, FA_ERR_NULL_POINTER, "v_tiles = NULL");
    BAD("scores NULL (M18)", 18, 1, tr.scores = NULL, FA_ERR_NULL_POINTER, "scores = NULL");
    BAD("max NULL (M19)", 19, 2, tr.max = NULL, FA_ERR_NULL_POINTER, "max = NULL");
    BAD("weights NULL (M20)", 20, 1, tr.weights = NULL, FA_ERR_NULL_POINTER, "weights = NULL");
    BAD("correction NULL (M20)", 20, 2, tr.correction = NULL, FA_ERR_NULL_POINTER,
        "correction = NULL");
    BAD("sum NULL (M21)", 21, 1, tr.sum = NULL, FA_ERR_NULL_POINTER, "sum = NULL");
    BAD("o NULL (M22)", 22, 2, tr.o = NULL, FA_ERR_NULL_POINTER, "o = NULL");
    BAD("lse NULL (M22: optional)", 22, 1, tr.lse = NULL, FA_OK, "");
    BAD("scores NULL where M19 does not write it", 19, 1, tr.scores = NULL, FA_OK, "");
    BAD("q not 16-byte aligned (v2)", 18, 2, p.q = arena_at(8), FA_ERR_MISALIGNED, "q = ");
    BAD("v not 16-byte aligned (v2)", 22, 2, p.v = arena_at(512 + 2), FA_ERR_MISALIGNED, "v = ");
    BAD("k 8-byte aligned bf16 (v1 takes it)", 18, 1, p.k = arena_at(256 + 8), FA_OK, "");
    BAD("k not 4-byte aligned fp32 (v1)", 18, 1, (p.dtype = FA_F32, p.k = arena_at(256 + 2)),
        FA_ERR_MISALIGNED, "k = ");
    BAD("scores not 4-byte aligned", 18, 1, tr.scores = arena_at(1024 + 24576 + 2),
        FA_ERR_MISALIGNED, "scores = ");
    BAD("weights overlapping correction", 20, 1, tr.correction = tr.weights + 4,
        FA_ERR_INVALID_ARGUMENT, "overlaps");
    BAD("k_tiles overlapping q_tiles", 17, 2, tr.k_tiles = (char *)tr.q_tiles + 32,
        FA_ERR_INVALID_ARGUMENT, "overlaps");
    BAD("o overlapping q", 22, 1, tr.o = arena_at(64), FA_ERR_INVALID_ARGUMENT, "overlaps");
    /* The grid: ceil(nq / 64) query tiles in x (at most 2^31 - 1), with d = 1 (v1) so that no
     * array overflows first. Such arrays span terabytes: they sit at addresses far apart. */
    BAD("the most query tiles", 19, 1,
        (p.heads = 1, p.d = 1, p.nq = FA_MAX_GRID_X * TILE1_BR, p.q = p.k = p.v = address(LOW),
         tr.max = address(HIGH)),
        FA_OK, "");
    BAD("one query tile too many", 19, 1,
        (p.heads = 1, p.d = 1, p.nq = FA_MAX_GRID_X * TILE1_BR + 1, p.q = p.k = p.v = address(LOW),
         tr.max = address(HIGH)),
        FA_ERR_OVERFLOW, "query tiles");
    /* Byte sizes: k of nk fp32 elements (heads 1, d 1) fits a 64-bit byte offset up to
     * INT64_MAX / 4 elements; k and v start at 2^62, the maxima (2^58 bytes) below them. */
    BAD("the largest k", 19, 1,
        (p.dtype = FA_F32, p.heads = 1, p.d = 1, p.nq = 1, p.nk = INT64_MAX / 4,
         p.q = address(LOW), p.k = p.v = address(HIGHEST), tr.max = address(MIDDLE)),
        FA_OK, "");
    BAD("one key too many", 19, 1,
        (p.dtype = FA_F32, p.heads = 1, p.d = 1, p.nq = 1, p.nk = INT64_MAX / 4 + 1,
         p.q = address(LOW), p.k = p.v = address(HIGHEST), tr.max = address(MIDDLE)),
        FA_ERR_OVERFLOW, "k would hold more than");
#undef BAD
    for (int c = 0; c < count; ++c)
        expect_validate(t, &cases[c]);
}

/**
 * Every bad command line gets the usage exit code, 2, before any GPU work:
 * the parser is plain C, so this holds in builds without CUDA too.
 */
static void test_driver_flags(fa_tests *t)
{
    static const char *const bad[][6] = {
        {"stage05", "--milestone", "17", "--version", "3"}, /* M17 has versions 1 and 2 */
        {"stage05", "--version", "1"},                      /* --version needs --milestone */
        {"stage05", "--mask", "causal"},                    /* no stage-05 milestone reads it */
        {"stage05", "--milestone", "16"},                   /* a milestone of stage 04 */
        {"stage05", "--milestone", "23"},                   /* a milestone of stage 06 */
        {"stage05", "--nq", "-1"},                          /* sizes are >= 0 */
        {"stage05", "--d", "0"},                            /* d >= 1 */
        {"stage05", "--dtype", "fp64"},
        {"stage05", "--batch", "2"},                        /* heads flatten the batch here */
        {"stage05", "--nq", "5", "--case", "v1 fixture 'ragged'"}, /* a case or a problem */
        {"stage05", "--bench", "--nq", "64"},
    };
    for (int c = 0; c < FA_COUNT_OF(bad); ++c)
        FA_EXPECT_USAGE_ERROR(t, 5, bad[c]);
    fa_stage_request request;
    static const char *const help[] = {"stage05", "--help", NULL};
    FA_EXPECT(t, fa_stage_parse_words(help, 5, &request) == FA_CLI_HELP,
              "stage05 --help must print the usage and exit 0");
    static const char *const problem[] = {"stage05", "--heads", "2", "--nq", "100", NULL};
    FA_EXPECT(t, fa_stage_parse_words(problem, 5, &request) == FA_CLI_OK &&
                     request.run.problem.given == (FA_PROBLEM_HEADS | FA_PROBLEM_NQ) &&
                     request.run.problem.heads == 2 && request.run.problem.nq == 100,
              "--heads 2 --nq 100 must describe a problem of 2 heads and 100 query rows");
    static const char *const every[] = {"stage05", "--milestone", "20", "--version", "2", "--nk",
                                        "77", "--d", "40", "--dtype", "fp16", NULL};
    FA_EXPECT(t, fa_stage_parse_words(every, 5, &request) == FA_CLI_OK && request.milestone == 20 &&
                     request.run.version == 2 && request.run.problem.nk == 77 &&
                     request.run.problem.d == 40 && request.run.problem.dtype == FA_F16,
              "--milestone 20 --version 2 --nk 77 --d 40 --dtype fp16 must parse");
    static const char *const rerun[] = {"stage05", "--milestone", "19", "--case",
                                        "v2 random 4 nq=113 nk=203 d=64 bf16", "--seed", "7", NULL};
    FA_EXPECT(t, fa_stage_parse_words(rerun, 5, &request) == FA_CLI_OK &&
                     strcmp(request.run.case_name, "v2 random 4 nq=113 nk=203 d=64 bf16") == 0 &&
                     request.run.seed == 7,
              "a rerun line must parse");
}

/* ---- GPU ---------------------------------------------------------------------------------- */

#if FA_HAVE_CUDA

static void test_reference_checks(fa_tests *t)
{
    const fa_run_options options = {.seed = SEED, .quick = false};
    FA_EXPECT_REFERENCE_CHECKS(t, &stage05, &options);
}

/** One trace of the reference on host inputs; false (expectation recorded) on an error. */
static bool reference_trace(fa_tests *t, int milestone, int version, const tile_problem *p,
                            tile_outputs *out)
{
    const tile_sizes sizes = tile_sizes_of(milestone, version, p);
    int64_t overwritten = 0;
    fa_status status = tile_outputs_alloc(out, &sizes);
    if (status == FA_OK)
        status = tile_run_on_host(FA_IMPL_REFERENCE, milestone, version, p, &sizes, out, &overwritten);
    return FA_EXPECT(t, status == FA_OK && overwritten == 0, "M%d v%d trace: %s (%lld canary bytes)",
                     milestone, version, fa_last_error(), (long long)overwritten);
}

/**
 * Version 1 replays the model's arithmetic: its scores, maxima, and sums
 * (given its own weights) agree bit for bit with model1_scores(),
 * model_running_max() and model1_sums().
 */
static void test_reference_matches_model(fa_tests *t)
{
    static const struct {
        int64_t heads, nq, nk, d;
        fa_dtype dtype;
    } shapes[] = {{1, 1, 1, 1, FA_F16},  {2, 65, 33, 37, FA_F32}, {1, 113, 203, 64, FA_BF16},
                  {1, 70, 97, 256, FA_F32}, {2, 64, 64, 128, FA_F16}};
    for (int s = 0; s < FA_COUNT_OF(shapes); ++s) {
        fa_rng rng;
        fa_rng_seed(&rng, SEED, 200 + (uint64_t)s);
        tile_case c;
        if (!FA_EXPECT(t, tile_random_case(&c, 1, shapes[s].dtype, shapes[s].heads, shapes[s].nq,
                                           shapes[s].nk, shapes[s].d, 3.0,
                                           TILE_MAX_RISES_EVERY_TILE, &rng) == FA_OK,
                       "model shape %d: %s", s, fa_last_error()))
            continue;
        const tile_problem *p = &c.problem;
        const counts n = counts_of(1, p);
        float *model = fa_new_floats(n.keys);
        float *model_max = fa_new_floats(n.tiles);
        tile_outputs scores = {0}, max = {0}, weights = {0}, sum = {0};
        if (reference_trace(t, 18, 1, p, &scores)) {
            model1_scores(p, model);
            const int64_t at = fa_first_difference(scores.scores, model, n.keys);
            FA_EXPECT(t, at < 0, "shape %d scores: GPU %a != model %a at %lld", s,
                      at < 0 ? 0.0 : (double)scores.scores[at], at < 0 ? 0.0 : (double)model[at],
                      (long long)at);
            model_running_max(1, p, model, model_max);
        }
        if (reference_trace(t, 19, 1, p, &max)) {
            const int64_t at = fa_first_difference(max.max, model_max, n.tiles);
            FA_EXPECT(t, at < 0, "shape %d max: GPU %a != model %a at %lld", s,
                      at < 0 ? 0.0 : (double)max.max[at], at < 0 ? 0.0 : (double)model_max[at],
                      (long long)at);
        }
        if (reference_trace(t, 20, 1, p, &weights) && reference_trace(t, 21, 1, p, &sum)) {
            model1_sums(p, weights.weights, weights.correction, model);
            const int64_t at = fa_first_difference(sum.sum, model, n.tiles);
            FA_EXPECT(t, at < 0, "shape %d sums: GPU %a != model %a at %lld", s,
                      at < 0 ? 0.0 : (double)sum.sum[at], at < 0 ? 0.0 : (double)model[at],
                      (long long)at);
        }
        tile_outputs_free(&scores);
        tile_outputs_free(&max);
        tile_outputs_free(&weights);
        tile_outputs_free(&sum);
        free(model);
        free(model_max);
        tile_case_free(&c);
    }
}

/**
 * --case reruns exactly the named case, and the problem flags make one case
 * per version of their own; a problem the launcher refuses reports its error.
 */
static void test_case_selection(fa_tests *t)
{
    const fa_milestone_check *m18 = &stage05.checks[1], *m21 = &stage05.checks[4];
    static const char *const names[] = {"v1 fixture 'ragged'", "v2 fixture 'rise-in-tile-2'",
                                        "v2 random 4 nq=113 nk=203 d=64 bf16",
                                        "v1 random 5 nq=127 nk=513 d=256 fp32"};
    for (int i = 0; i < FA_COUNT_OF(names); ++i) {
        fa_run_options options = {.seed = SEED, .case_name = names[i]};
        fa_result result = {0};
        m21->check(FA_IMPL_REFERENCE, &options, &result);
        FA_EXPECT(t, result.outcome == FA_OUTCOME_PASSED && result.cases == 1,
                  "--case \"%s\" must run exactly its case: %s, %d cases", names[i], result.detail,
                  result.cases);
    }
    fa_run_options options = {.seed = SEED, .case_name = "no such case"};
    fa_result result = {0};
    m18->check(FA_IMPL_REFERENCE, &options, &result);
    FA_EXPECT(t, result.cases == 0, "an unknown --case must run nothing (%d cases)", result.cases);

    options = (fa_run_options){.seed = SEED};
    options.problem.given = FA_PROBLEM_HEADS | FA_PROBLEM_NQ;
    options.problem.heads = 2;
    options.problem.nq = 100;
    result = (fa_result){0};
    m21->check(FA_IMPL_REFERENCE, &options, &result);
    FA_EXPECT(t, result.outcome == FA_OUTCOME_PASSED && result.cases == 2,
              "--heads 2 --nq 100 must run one case per version: %s, %d cases", result.detail,
              result.cases);
    options.version = 2;
    result = (fa_result){0};
    m21->check(FA_IMPL_REFERENCE, &options, &result);
    FA_EXPECT(t, result.outcome == FA_OUTCOME_PASSED && result.cases == 1,
              "--version 2 --heads 2 --nq 100 must run one case: %s, %d cases", result.detail,
              result.cases);
    options.problem.given |= FA_PROBLEM_DTYPE;
    options.problem.dtype = FA_F32;
    result = (fa_result){0};
    m18->check(FA_IMPL_REFERENCE, &options, &result);
    FA_EXPECT(t, result.outcome == FA_OUTCOME_ERROR && strstr(result.detail, "bf16 or fp16") != NULL,
              "--version 2 --dtype fp32 must report the launcher's refusal: %s: %s",
              fa_outcome_name(result.outcome), result.detail);
}

/**
 * An output one element short of what the trace writes: the canaries after
 * it catch the write past the end (the runner's allocation is the test's to
 * shrink; the kernels are untouched). At the right size nothing is left
 * unwritten and no canary changes.
 */
static void test_canaries(fa_tests *t)
{
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 300);
    for (int version = 1; version <= 2; ++version) {
        tile_case c;
        if (!FA_EXPECT(t, tile_random_case(&c, version, FA_BF16, 2, 65, 70, 64, 1.0,
                                           TILE_MAX_ANYWHERE, &rng) == FA_OK,
                       "canary case: %s", fa_last_error()))
            continue;
        for (int milestone = 17; milestone <= 22; ++milestone) {
            tile_sizes sizes = tile_sizes_of(milestone, version, &c.problem);
            tile_outputs out = {0};
            int64_t overwritten = 0;
            fa_status status = tile_outputs_alloc(&out, &sizes);
            if (status == FA_OK)
                status = tile_run_on_host(FA_IMPL_REFERENCE, milestone, version, &c.problem, &sizes,
                                          &out, &overwritten);
            int64_t unwritten = 0;
            const float *arrays[] = {out.scores, out.max,   out.weights, out.correction,
                                     out.sum,    out.o,     out.lse};
            const int64_t lengths[] = {sizes.scores, sizes.max, sizes.weights, sizes.correction,
                                       sizes.sum, sizes.o, sizes.lse};
            for (int a = 0; a < FA_COUNT_OF(arrays) && status == FA_OK; ++a)
                for (int64_t i = 0; i < lengths[a]; ++i)
                    unwritten += fa_is_poison(arrays[a][i]);
            FA_EXPECT(t, status == FA_OK && overwritten == 0 && unwritten == 0,
                      "M%d v%d at the right size: %lld canary bytes, %lld unwritten (%s)", milestone,
                      version, (long long)overwritten, (long long)unwritten, fa_last_error());
            tile_outputs_free(&out);

            /* One element short: the last one lands in the canaries. */
            int64_t *shrunk = milestone == 17 ? &sizes.v_tiles
                              : milestone == 18 ? &sizes.scores
                              : milestone == 19 ? &sizes.max
                              : milestone == 20 ? &sizes.correction
                              : milestone == 21 ? &sizes.sum
                                                : &sizes.o;
            *shrunk -= 1;
            overwritten = 0;
            status = tile_outputs_alloc(&out, &sizes);
            if (status == FA_OK)
                status = tile_run_on_host(FA_IMPL_REFERENCE, milestone, version, &c.problem, &sizes,
                                          &out, &overwritten);
            FA_EXPECT(t, status == FA_OK && overwritten > 0,
                      "M%d v%d one element short: the canaries must catch the write (%lld bytes, %s)",
                      milestone, version, (long long)overwritten, fa_last_error());
            tile_outputs_free(&out);
        }
        tile_case_free(&c);
    }
}

/** A NaN in one query row makes exactly that row's o and lse NaN (M22, both versions). */
static void test_nan_row(fa_tests *t)
{
    enum { HEADS = 2, NQ = 70, NK = 100, D = 64, BAD_HEAD = 1, BAD_ROW = 66 };
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 400);
    for (int version = 1; version <= 2; ++version) {
        tile_case c;
        if (!FA_EXPECT(t, tile_random_case(&c, version, FA_BF16, HEADS, NQ, NK, D, 1.0,
                                           TILE_MAX_ANYWHERE, &rng) == FA_OK,
                       "NaN case: %s", fa_last_error()))
            continue;
        fa_store(c.q, FA_BF16, ((int64_t)BAD_HEAD * NQ + BAD_ROW) * D + 5, NAN);
        tile_outputs out = {0};
        if (reference_trace(t, 22, version, &c.problem, &out)) {
            int64_t wrong = 0;
            for (int64_t row = 0; row < HEADS * NQ; ++row) {
                const bool bad = row == (int64_t)BAD_HEAD * NQ + BAD_ROW;
                for (int64_t col = 0; col < D; ++col)
                    wrong += (bool)isnan(out.o[row * D + col]) != bad;
                wrong += (bool)isnan(out.lse[row]) != bad;
            }
            FA_EXPECT(t, wrong == 0, "v%d: %lld outputs with the wrong NaN-ness", version,
                      (long long)wrong);
        }
        tile_outputs_free(&out);
        tile_case_free(&c);
    }
}

#endif /* FA_HAVE_CUDA */

int main(int argc, char **argv)
{
    static const fa_test_fn cpu[] = {
        test_fixtures,  test_model_vs_reference, test_judges_reject_mistakes,
        test_bad_input, test_driver_flags,       test_swizzle,
    };
#if FA_HAVE_CUDA
    static const fa_test_fn gpu[] = {
        test_reference_checks, test_reference_matches_model, test_case_selection,
        test_canaries,         test_nan_row,
    };
    const fa_test_suite suite = {"test_stage05", cpu, FA_COUNT_OF(cpu), gpu, FA_COUNT_OF(gpu),
                                 fa_gpu_gate};
#else
    const fa_test_suite suite = {"test_stage05", cpu, FA_COUNT_OF(cpu), NULL, 0, NULL};
#endif
    return fa_test_main(argc, argv, &suite);
}
