/**
 * @file cases.c
 * @brief Stage 07's masked grid and sentinel fixtures (cases.h).
 */
#include "cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa_adversarial.h"
#include "fa_index.h"
#include "fa_mask.h"
#include "fa_stage.h"
#include "flash.h"

/** The masks of the grid, in rotation. */
static const struct {
    fa_mask mask;
    int64_t left, right;
} CAUSAL_MASKS[] = {
    {FA_MASK_CAUSAL_TOP_LEFT, 0, 0}, {FA_MASK_CAUSAL_BOTTOM_RIGHT, 0, 0}, {FA_MASK_WINDOW, 17, 0},
    {FA_MASK_WINDOW, 5, 40},         {FA_MASK_WINDOW, 0, 0},              {FA_MASK_WINDOW, -1, 3},
};

/**
 * Rows that see no key at the start of version 3's bottom-right cases of
 * three consumers, dense and packed: all of the first query tile's first
 * and second consumer's rows and some of the third's, among them rows the
 * judge reads of each (a dense call's sample, flash_sample_rows(); a packed
 * sequence's every row).
 */
enum { THREE_KEYLESS = 140 };

/**
 * Version 3's dense cases past stage 06's grid: causal masks over more than
 * FLASH3_CAUSAL_THREE_ROWS rows at d = 64, which its kernel runs with three
 * consumers (flash3_consumers()); rows and keys are no multiples of the
 * tiles, and the bottom-right case's first THREE_KEYLESS rows see no key.
 * Kept with quick too, which is what compute-sanitizer runs.
 */
static const flash_spec V3_THREE_CONSUMERS[] = {
    {.batch = 1, .heads_q = 4, .heads_kv = 2, .nq = FLASH3_CAUSAL_THREE_ROWS + 52,
     .nk = FLASH3_CAUSAL_THREE_ROWS + 29, .head_dim = 64, .dtype = FA_BF16, .layout = FLASH_BNHD,
     .lse = true, .scores = FLASH_SCORES_RISING, .spread = 3.0, .mask = FA_MASK_CAUSAL_TOP_LEFT},
    {.batch = 2, .heads_q = 2, .heads_kv = 1, .nq = FLASH3_CAUSAL_THREE_ROWS + 29,
     .nk = FLASH3_CAUSAL_THREE_ROWS + 29 - THREE_KEYLESS, .head_dim = 64, .dtype = FA_F16,
     .layout = FLASH_BHND, .padded = true, .lse = true, .scores = FLASH_SCORES_LATE_MAX, .spread = 1.0,
     .mask = FA_MASK_CAUSAL_BOTTOM_RIGHT},
};

int causal_grid_count(int version, bool quick)
{
    return flash_grid_count(version, quick) + (version == 3 ? FA_COUNT_OF(V3_THREE_CONSUMERS) : 0);
}

flash_spec causal_grid_spec(int version, bool quick, int index)
{
    const int grid = flash_grid_count(version, quick);
    if (version == 3 && index >= grid)
        return V3_THREE_CONSUMERS[index - grid];
    flash_spec s = flash_grid_spec(version, quick, index);
    /* Version 3 by head dims (its rows of 64 to 256 and their key tiles): index / dims + index %
     * dims moves each dim through every mask, as a shape's dims move through them. */
    const int64_t *dim_list;
    const int dims = flash_grid_head_dims(version, &dim_list);
    const int m = (version == 3 ? index / dims + index % dims : index) % FA_COUNT_OF(CAUSAL_MASKS);
    s.mask = CAUSAL_MASKS[m].mask;
    s.window_left = CAUSAL_MASKS[m].left;
    s.window_right = CAUSAL_MASKS[m].right;
    return s;
}

/** Packed cases of every version: no mask and the six of the grid, each with two kinds of sequences. */
enum { PACKED_COMMON = 2 * (1 + FA_COUNT_OF(CAUSAL_MASKS)) };
/** Version 3's packed cases past PACKED_COMMON: one under each causal mask. */
enum { PACKED_THREE_CASES = 2 };

int causal_packed_count(int version)
{
    return PACKED_COMMON + (version == 3 ? PACKED_THREE_CASES : 0);
}

/**
 * The longest sequence of version 3's packed cases past PACKED_COMMON: its
 * kernel runs three consumers. Under bottom-right it has THREE_KEYLESS keys
 * fewer than rows, so that as many of its first rows see none.
 */
enum { PACKED_THREE_ROWS = FLASH3_CAUSAL_THREE_ROWS + 5 };

causal_packed_spec causal_packed_case(int version, int index)
{
    static const fa_dtype V1_DTYPES[] = {FA_F32, FA_BF16, FA_F16}, V2_DTYPES[] = {FA_BF16, FA_F16};
    static const int64_t V1_D[] = {64, 40, 128}, V2_D[] = {64, 96, 128};
    /* Version 3's rows of 256, 64, 192, 128, 128: D = 256 meets no mask, causal-br and a window,
     * D = 192 causal-tl and two windows (their key tiles are 64). */
    static const int64_t V3_D[] = {256, 40, 136, 96, 128};
    static const int64_t HEADS_KV[] = {4, 2, 1}; /* of 4 query heads: MHA, GQA, MQA */
    const int pair = index / 2;
    causal_packed_spec c = {.count = CAUSAL_PACKED_SEQUENCES};
    flash_spec *s = &c.shape;
    s->batch = 1;
    s->head_dim = version == 1   ? V1_D[index % 3]
                  : version == 2 ? V2_D[index % 3]
                                 : V3_D[index % FA_COUNT_OF(V3_D)];
    s->dtype = version == 1 ? V1_DTYPES[index % 3] : V2_DTYPES[pair % 2];
    s->heads_q = 4;
    s->heads_kv = HEADS_KV[(index + pair) % 3];
    s->layout = FLASH_BNHD;
    s->o_fp32 = version != 3 && index % 4 == 3; /* v3 writes o in the input dtype */
    s->lse = index % 5 != 4;
    s->spread = 1.0;
    if (pair > 0 && index < PACKED_COMMON) {
        s->mask = CAUSAL_MASKS[pair - 1].mask;
        s->window_left = CAUSAL_MASKS[pair - 1].left;
        s->window_right = CAUSAL_MASKS[pair - 1].right;
    }
    /* Version 3's last two: both causal masks at d = 64 with a sequence of PACKED_THREE_ROWS. */
    const bool three = version == 3 && index >= PACKED_COMMON;
    if (three) {
        s->head_dim = 64;
        s->dtype = V2_DTYPES[index % 2];
        s->mask = index % 2 == 0 ? FA_MASK_CAUSAL_TOP_LEFT : FA_MASK_CAUSAL_BOTTOM_RIGHT;
    }
    const int64_t bc = flash_block_n(version, s->head_dim);
    /* The query tile of version 3's kernel for these sequences: the common cases' are all
     * shorter than FLASH3_CAUSAL_THREE_ROWS (the longest: 3 tiles of at most 192 rows, and 5). */
    _Static_assert(3 * 3 * FLASH3_BOX_ROWS + 5 < FLASH3_CAUSAL_THREE_ROWS,
                   "the common packed cases run version 3 with two consumers under a mask");
    const int64_t br = version == 1   ? TILE1_BR
                       : version == 2 ? flash2_br(tile2_row_elements((int)s->head_dim))
                                      : flash3_br(flash3_consumers((int)s->head_dim, s->mask,
                                                                   three ? PACKED_THREE_ROWS : 0));
    const int64_t same[CAUSAL_PACKED_SEQUENCES] = {0, 1, bc - 1, bc, bc + 1, 3 * br + 5};
    const int64_t rows[CAUSAL_PACKED_SEQUENCES] = {1, br - 1, 0, br + 1, 2 * br + 3, 7};
    const int64_t keys[CAUSAL_PACKED_SEQUENCES] = {bc + 1, 0, bc, 1, bc - 1, 5 * bc + 2};
    for (int i = 0; i < CAUSAL_PACKED_SEQUENCES; ++i) {
        c.nq[i] = index % 2 == 0 ? same[i] : rows[i];
        c.nk[i] = index % 2 == 0 ? same[i] : keys[i];
    }
    if (three) { /* the long sequence in place of (1, 1), same[1], or (Br + 1, 1), rows[3] */
        const int at = index % 2 == 0 ? 1 : 3;
        c.nq[at] = PACKED_THREE_ROWS;
        c.nk[at] = index % 2 == 0 ? PACKED_THREE_ROWS : PACKED_THREE_ROWS - THREE_KEYLESS;
    }
    c.row_gaps = index % 3 == 1;
    c.outside_rows = index % 3 == 2;
    return c;
}

const char *causal_packed_describe(const causal_packed_spec *s, int index, char *buf, size_t cap)
{
    char shape[FA_CASE_NAME];
    flash_spec_describe(&s->shape, shape, sizeof shape);
    /* The shape's own nq and nk are not the sequences': name from " d=" on. */
    const char *from_d = strstr(shape, " d=");
    snprintf(buf, cap, "packed %d (%d sequences)%s%s", index, s->count, from_d ? from_d : shape,
             s->row_gaps ? " row-gaps" : s->outside_rows ? " outside-rows" : "");
    return buf;
}

/*
 * The sentinel fixtures. The small ones are the drawings of docs/numerics.md
 * (4 x 6: the bottom-right diagonal is j = i + 2; 6 x 4: j = i - 2, so the
 * first rows of a bottom-right mask see nothing); the larger ones span
 * several tiles of version 1 (64 x 32), so that they have skipped, full and
 * masked tiles.
 */
static const struct {
    const char *name;
    int64_t nq, nk;
    fa_mask mask;
    int64_t left, right;
} FIXTURES[] = {
    {"sentinels 4x6 causal-tl", 4, 6, FA_MASK_CAUSAL_TOP_LEFT, 0, 0},
    {"sentinels 4x6 causal-br", 4, 6, FA_MASK_CAUSAL_BOTTOM_RIGHT, 0, 0},
    {"sentinels 4x6 window=1,0", 4, 6, FA_MASK_WINDOW, 1, 0},
    {"sentinels 4x6 window=0,1", 4, 6, FA_MASK_WINDOW, 0, 1},
    {"sentinels 6x4 causal-tl", 6, 4, FA_MASK_CAUSAL_TOP_LEFT, 0, 0},
    {"sentinels 6x4 causal-br", 6, 4, FA_MASK_CAUSAL_BOTTOM_RIGHT, 0, 0},
    {"sentinels 6x4 window=1,0", 6, 4, FA_MASK_WINDOW, 1, 0},
    {"sentinels 6x4 window=0,1", 6, 4, FA_MASK_WINDOW, 0, 1},
    {"sentinels 130x100 causal-tl", 130, 100, FA_MASK_CAUSAL_TOP_LEFT, 0, 0},
    {"sentinels 130x100 causal-br", 130, 100, FA_MASK_CAUSAL_BOTTOM_RIGHT, 0, 0},
    {"sentinels 70x120 causal-br", 70, 120, FA_MASK_CAUSAL_BOTTOM_RIGHT, 0, 0},
    {"sentinels 70x120 window=40,8", 70, 120, FA_MASK_WINDOW, 40, 8},
};

const int causal_fixture_count = FA_COUNT_OF(FIXTURES);

const char *causal_fixture_name(int index)
{
    return index >= 0 && index < causal_fixture_count ? FIXTURES[index].name : "?";
}

/**
 * o (CAUSAL_FIXTURE_D columns) and lse of a row that sees keys [b, e) in the head
 * whose sentinel is key @p h. Every key but the sentinel weighs 1 (score 0,
 * the max subtracted: the max is the sentinel's 30 when the row sees it);
 * the sentinel weighs E = e^30. The sum of v_j = j + 1 over [b, e) is
 * (e (e + 1) - b (b + 1)) / 2.
 */
static void fixture_row(int64_t b, int64_t e, int64_t h, double *o, double *lse)
{
    for (int c = 0; c < CAUSAL_FIXTURE_D; ++c)
        o[c] = 0.0;
    const int64_t n = e - b;
    if (n <= 0) {
        *lse = -INFINITY;
        return;
    }
    const double sum = (double)(e * (e + 1) - b * (b + 1)) / 2.0;
    if (h < b || h >= e) {
        o[0] = sum / (double)n;
        *lse = log((double)n);
        return;
    }
    /* Relative to the sentinel's weight: it weighs 1 and every other key w = e^-30. */
    const double w = exp(-CAUSAL_SENTINEL_SCORE), total = 1.0 + w * (double)(n - 1);
    o[0] = ((double)(h + 1) + w * (sum - (double)(h + 1))) / total;
    o[1] = CAUSAL_SENTINEL_VALUE / total;
    *lse = CAUSAL_SENTINEL_SCORE + log1p(w * (double)(n - 1));
}

static fa_status fixture(int index, fa_dtype dtype, flash_fixture *x)
{
    if (index < 0 || index >= causal_fixture_count)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "stage 07: no fixture %d (0 .. %d)", index,
                       causal_fixture_count - 1);
    const int64_t nq = FIXTURES[index].nq, nk = FIXTURES[index].nk;
    const flash_spec s = {1, nk, nk, nq, nk, CAUSAL_FIXTURE_D, dtype, FLASH_BNHD, false, false, true, 1.0f,
                          FLASH_SCORES_SPREAD, 1.0, FIXTURES[index].mask, FIXTURES[index].left,
                          FIXTURES[index].right};
    FA_TRY(flash_case_alloc(&x->c, &s));
    x->o = calloc((size_t)(nk * nq * CAUSAL_FIXTURE_D), sizeof(double));
    x->lse = calloc((size_t)(nk * nq), sizeof(double));
    if (x->o == NULL || x->lse == NULL)
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "stage 07: no host memory for a fixture");
    fa_attn_case *in = &x->c.inputs;
    const fa_key_window band = fa_mask_band(s.mask, s.window_left, s.window_right, nq, nk);
    for (int64_t h = 0; h < nk; ++h) {
        for (int64_t j = 0; j < nk; ++j) {
            fa_case_set(in, FA_CASE_V, 0, h, j, 0, (double)(j + 1));
            if (j == h) {
                fa_case_set(in, FA_CASE_K, 0, h, j, 0, CAUSAL_SENTINEL_SCORE);
                fa_case_set(in, FA_CASE_V, 0, h, j, 1, CAUSAL_SENTINEL_VALUE);
            }
        }
        for (int64_t i = 0; i < nq; ++i) {
            fa_case_set(in, FA_CASE_Q, 0, h, i, 0, 1.0);
            const fa_key_range keys = fa_window_key_range(band, i, nk);
            fixture_row(keys.begin, keys.end, h, x->o + (h * nq + i) * CAUSAL_FIXTURE_D,
                        x->lse + h * nq + i);
        }
    }
    return FA_OK;
}

fa_status causal_fixture_make(int index, fa_dtype dtype, flash_fixture *x)
{
    *x = (flash_fixture){0};
    const fa_status status = fixture(index, dtype, x);
    if (status != FA_OK)
        flash_fixture_free(x);
    return status;
}
