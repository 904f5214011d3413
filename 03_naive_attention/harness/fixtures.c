/**
 * @file fixtures.c
 * @brief The hand-computed cases of stage 03 (see fixtures.h).
 *
 * All cases use head_dim = 4, so the default scale is 1/sqrt(4) = 0.5,
 * exact; one case passes an explicit scale instead. Scores are
 * s_ij = scale * q_i . k_j; a row's probabilities are exp(s_j - m) / l over
 * its allowed keys; o_i = sum_j p_ij v_j; lse_i = m + ln l.
 */
#include "fixtures.h"

#include <math.h>
#include <stddef.h>

/* Natural logarithms, to double precision. */
#define LN2 0.6931471805599453
#define LN3 1.0986122886681098
#define LN4 1.3862943611198906
#define LN5 1.6094379124341003

/* ---- uniform logits: every allowed score equal, so o is the mean of the v rows --------- */
/* k rows all [1,1,1,1]: row 0 scores 0.5 * 2 = 1, row 1 scores 0.5 * -2 = -1; p = 1/4.
 * o = mean of v rows = [(1+3-1+1)/4, (0+2+4+2)/4, (2+0+2+0)/4, (-1+1+3+5)/4] = [1, 2, 1, 2].
 * lse = s + ln 4. */
static const float uniform_q[] = {2, 0, 0, 0, 0, 0, -2, 0};
static const float uniform_k[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
static const float uniform_v[] = {1, 0, 2, -1, 3, 2, 0, 1, -1, 4, 2, 3, 1, 2, 0, 5};
static const double uniform_s[] = {1, 1, 1, 1, -1, -1, -1, -1};
static const double uniform_p[] = {0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25};
static const double uniform_lse[] = {1 + LN4, -1 + LN4};
static const double uniform_o[] = {1, 2, 1, 2, 1, 2, 1, 2};

/* ---- one dominant score: exp(100) overflows fp32, so only a max-shifted softmax works -- */
/* q = [1,0,0,0]; k_3 = [200,0,0,0] scores 0.5 * 200 = 100, the others 0.
 * p_j = e^-100 / (1 + 3 e^-100) = 3.720075976020836e-44 for j < 3 (subnormal in fp32),
 * p_3 = 1 / (1 + 3 e^-100) = 1 to double precision; o = v_3 + 9 p_0 = [1, 2, 3, 4];
 * lse = 100 + ln(1 + 3 e^-100) = 100. */
#define E100 3.720075976020836e-44
static const float dominant_q[] = {1, 0, 0, 0};
static const float dominant_k[] = {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 200, 0, 0, 0};
static const float dominant_v[] = {5, 5, 5, 5, -3, -3, -3, -3, 7, 7, 7, 7, 1, 2, 3, 4};
static const double dominant_s[] = {0, 0, 0, 100};
static const double dominant_p[] = {E100, E100, E100, 1};
static const double dominant_lse[] = {100};
static const double dominant_o[] = {1, 2, 3, 4};

/* ---- masked dominant score (padding): the mask applies before the max and the sum ------ */
/* key_length = 4 masks key 4, whose score 0.5 * 250 = 125 dominates. Keys 0..3 score 0.5,
 * p = 1/4 each, o = mean of v_0..v_3 = [(1+3+5+7)/4, 2, (3+1-1-3)/4, -(1+3+5+7)/4]
 * = [4, 2, 0, -4]; lse = 0.5 + ln 4. A max taken over key 4 too makes every exp(0.5 - 125)
 * underflow to 0 (0/0 = NaN); a sum over key 4 makes o close to v_4 = 1000. */
static const int64_t masked_padding_length[] = {4};
static const float masked_padding_q[] = {1, 0, 0, 0};
static const float masked_padding_k[] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0,
                                         250, 0, 0, 0};
static const float masked_padding_v[] = {1, 2, 3, -1, 3, 2, 1, -3, 5, 2, -1, -5, 7, 2, -3, -7,
                                         1000, 1000, 1000, 1000};
static const double masked_padding_s[] = {0.5, 0.5, 0.5, 0.5, 125};
static const double masked_padding_p[] = {0.25, 0.25, 0.25, 0.25, 0};
static const double masked_padding_lse[] = {0.5 + LN4};
static const double masked_padding_o[] = {4, 2, 0, -4};

/* ---- masked dominant score (causal, top-left) ------------------------------------------ */
/* Scores: key 0 0.5 * 2 = 1, key 1 0.5 * 250 = 125, for both rows.
 * Row 0 sees key 0 only: p = [1, 0], o = v_0, lse = 1.
 * Row 1 sees both: p = [e^-124 / (1 + e^-124), 1 / (1 + e^-124)] = [1.40e-54, 1],
 * o = v_1 to double precision, lse = 125 + ln(1 + e^-124) = 125. */
#define E124 1.4043787324419038e-54
static const float masked_causal_q[] = {1, 0, 0, 0, 1, 0, 0, 0};
static const float masked_causal_k[] = {2, 0, 0, 0, 250, 0, 0, 0};
static const float masked_causal_v[] = {1, 2, 3, 4, -8, -4, -2, -1};
static const double masked_causal_s[] = {1, 125, 1, 125};
static const double masked_causal_p[] = {1, 0, E124, 1};
static const double masked_causal_lse[] = {1, 125};
static const double masked_causal_o[] = {1, 2, 3, 4, -8, -4, -2, -1};

/* ---- distinct values per batch and head (catches broadcasting) ------------------------- */
/* Scale 0.25 (explicit). Head t = b * 2 + h, t = 0..3: q rows [t+1,0,0,0] and [0,t+1,0,0];
 * both k rows [4(t+1), 4(t+1), 0, 0]; every score 0.25 (t+1) 4(t+1) = (t+1)^2, so s depends
 * on the q and the k of its own head. v rows [2t, 0, 1, 4t] and [0, 2t, 1, 2].
 * Batch 0 (key_length 2): p = 1/2, o = [t, t, 1, 2t+1], lse = (t+1)^2 + ln 2.
 * Batch 1 (key_length 1): p = [1, 0], o = v_0 = [2t, 0, 1, 4t], lse = (t+1)^2. */
static const int64_t distinct_length[] = {2, 1};
static const float distinct_q[] = {1, 0, 0, 0, 0, 1, 0, 0,  /* t = 0 */
                                   2, 0, 0, 0, 0, 2, 0, 0,  /* t = 1 */
                                   3, 0, 0, 0, 0, 3, 0, 0,  /* t = 2 */
                                   4, 0, 0, 0, 0, 4, 0, 0}; /* t = 3 */
static const float distinct_k[] = {4,  4,  0, 0, 4,  4,  0, 0, 8,  8,  0, 0, 8,  8,  0, 0,
                                   12, 12, 0, 0, 12, 12, 0, 0, 16, 16, 0, 0, 16, 16, 0, 0};
static const float distinct_v[] = {0, 0, 1, 0,  0, 0, 1, 2, 2, 0, 1, 4,  0, 2, 1, 2,
                                   4, 0, 1, 8,  0, 4, 1, 2, 6, 0, 1, 12, 0, 6, 1, 2};
static const double distinct_s[] = {1, 1, 1, 1, 4, 4, 4, 4, 9, 9, 9, 9, 16, 16, 16, 16};
static const double distinct_p[] = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
                                    1,   0,   1,   0,   1,   0,   1,   0};
static const double distinct_lse[] = {1 + LN2, 1 + LN2, 4 + LN2, 4 + LN2, 9, 9, 16, 16};
static const double distinct_o[] = {0, 0, 1, 1,  0, 0, 1, 1,  1, 1, 1, 3,  1, 1, 1, 3,
                                    4, 0, 1, 8,  4, 0, 1, 8,  6, 0, 1, 12, 6, 0, 1, 12};

/* ---- Nq = 1 (a decoding step), both causal alignments ---------------------------------- */
/* q = [2,0,0,0], k_j = [2j+1,0,0,0]: scores 0.5 * 2 (2j+1) = [1, 3, 5, 7].
 * v_j = [4j+1, 4j+2, 4j+3, 4j+4]. */
static const float decode_q[] = {2, 0, 0, 0};
static const float decode_k[] = {1, 0, 0, 0, 3, 0, 0, 0, 5, 0, 0, 0, 7, 0, 0, 0};
static const float decode_v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static const double decode_s[] = {1, 3, 5, 7};
/* Top-left: row 0 sees key 0 only (j <= 0): p = [1, 0, 0, 0], o = v_0, lse = 1. A decoder
 * that used this alignment would ignore its whole context. */
static const double decode_top_left_p[] = {1, 0, 0, 0};
static const double decode_top_left_lse[] = {1};
static const double decode_top_left_o[] = {1, 2, 3, 4};
/* Bottom-right: j <= 0 + 4 - 1, every key. Z = 1 + e^-2 + e^-4 + e^-6 = 1.156134...,
 * p_j = e^(s_j - 7) / Z, lse = 7 + ln Z, o_c = c + 1 + 4 (p_1 + 2 p_2 + 3 p_3). */
static const double decode_bottom_right_p[] = {0.002144008783584634, 0.015842201178506925,
                                               0.11705891323853292, 0.8649548767993755};
static const double decode_bottom_right_lse[] = {7.145077938960783};
static const double decode_bottom_right_o[] = {12.379298632214796, 13.379298632214796,
                                               14.379298632214796, 15.379298632214796};

/* ---- Nk = 1: the one key takes all the weight ------------------------------------------ */
/* k = [2,2,2,2]: scores 0.5 * [2, 4, -8] = [1, 2, -4]; p = 1; o = v_0; lse = s. */
static const float single_key_q[] = {1, 0, 0, 0, 0, 2, 0, 0, 0, 0, -4, 0};
static const float single_key_k[] = {2, 2, 2, 2};
static const float single_key_v[] = {3, -1, 4, -1};
static const double single_key_s[] = {1, 2, -4};
static const double single_key_p[] = {1, 1, 1};
static const double single_key_lse[] = {1, 2, -4};
static const double single_key_o[] = {3, -1, 4, -1, 3, -1, 4, -1, 3, -1, 4, -1};

/* ---- a row with no allowed key: o = 0 and lse = -inf, never NaN ------------------------- */
/* Both batches score 0.5 * 2 = 1 everywhere. Batch 0 (key_length 2): p = 1/2,
 * o = (v_0 + v_1) / 2 = [1, 2, 4, 0], lse = 1 + ln 2. Batch 1 (key_length 0): no key,
 * p = 0, o = 0, lse = -inf; its v rows (9s) must not appear anywhere. */
static const int64_t no_key_length[] = {2, 0};
static const float no_key_q[] = {2, 0, 0, 0, 0, 2, 0, 0, 2, 0, 0, 0, 0, 2, 0, 0};
static const float no_key_k[] = {1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0};
static const float no_key_v[] = {2, 4, 6, 8, 0, 0, 2, -8, 9, 9, 9, 9, 9, 9, 9, 9};
static const double no_key_s[] = {1, 1, 1, 1, 1, 1, 1, 1};
static const double no_key_p[] = {0.5, 0.5, 0.5, 0.5, 0, 0, 0, 0};
static const double no_key_lse[] = {1 + LN2, 1 + LN2, -INFINITY, -INFINITY};
static const double no_key_o[] = {1, 2, 4, 0, 1, 2, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0};

/* ---- Nq != Nk under both causal alignments (the drawings of the stage page) ------------ */
/* q_i = [2i,0,0,0], every k_j = [1,0,0,0]: row i scores 0.5 * 2i = i for every key, so a
 * row's weights are uniform over its c_i allowed keys: p = 1/c_i. With
 * v_j = [2j+1, 2, 3-2j, -(2j+1)], the mean of the first c rows is [c, 2, 4-c, -c]
 * (1 + 3 + ... + (2c-1) = c^2), so o_i spells out c_i; lse_i = i + ln c_i. */
static const float causal_q5[] = {0, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 6, 0, 0, 0, 8, 0, 0, 0};
static const float causal_k5[] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
static const float causal_v5[] = {1, 2, 3, -1, 3, 2, 1, -3, 5, 2, -1, -5, 7, 2, -3, -7,
                                  9, 2, -5, -9};
#define THIRD (1.0 / 3.0)
#define FIFTH (1.0 / 5.0)

/* 3 x 5 (nq = 3 rows, nk = 5 keys): the first 3 q rows, all 5 k and v rows. */
static const double causal_3x5_s[] = {0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2};
/* Top-left, j <= i: c = 1, 2, 3. */
static const double causal_3x5_top_left_p[] = {1,     0,     0,     0, 0, 0.5, 0.5, 0, 0, 0,
                                               THIRD, THIRD, THIRD, 0, 0};
static const double causal_3x5_top_left_lse[] = {0, 1 + LN2, 2 + LN3};
static const double causal_3x5_top_left_o[] = {1, 2, 3, -1, 2, 2, 2, -2, 3, 2, 1, -3};
/* Bottom-right, j <= i + 2: c = 3, 4, 5. */
static const double causal_3x5_bottom_right_p[] = {THIRD, THIRD, THIRD, 0,     0,
                                                   0.25,  0.25,  0.25,  0.25,  0,
                                                   FIFTH, FIFTH, FIFTH, FIFTH, FIFTH};
static const double causal_3x5_bottom_right_lse[] = {LN3, 1 + LN4, 2 + LN5};
static const double causal_3x5_bottom_right_o[] = {3, 2, 1, -3, 4, 2, 0, -4, 5, 2, -1, -5};

/* 5 x 3 (nq = 5 rows, nk = 3 keys): all 5 q rows, the first 3 k and v rows. */
static const double causal_5x3_s[] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4};
/* Top-left, j <= i: c = 1, 2, 3, 3, 3. */
static const double causal_5x3_top_left_p[] = {1,     0,     0,     0.5,   0.5,
                                               0,     THIRD, THIRD, THIRD, THIRD,
                                               THIRD, THIRD, THIRD, THIRD, THIRD};
static const double causal_5x3_top_left_lse[] = {0, 1 + LN2, 2 + LN3, 3 + LN3, 4 + LN3};
static const double causal_5x3_top_left_o[] = {1, 2, 3, -1, 2, 2, 2, -2, 3, 2,
                                               1, -3, 3, 2, 1, -3, 3, 2, 1, -3};
/* Bottom-right, j <= i - 2: c = 0, 0, 1, 2, 3. Rows 0 and 1 see no key at all. */
static const double causal_5x3_bottom_right_p[] = {0,   0,   0, 0,     0,     0,    1, 0,
                                                    0,   0.5, 0.5, 0, THIRD, THIRD, THIRD};
static const double causal_5x3_bottom_right_lse[] = {-INFINITY, -INFINITY, 2, 3 + LN2,
                                                     4 + LN3};
static const double causal_5x3_bottom_right_o[] = {0, 0, 0, 0,  0, 0, 0, 0,  1, 2,
                                                   3, -1, 2, 2, 2, -2, 3, 2, 1, -3};

/** dims of a single-head problem with head_dim 4. */
#define ONE_HEAD(nq_, nk_) {1, 1, (nq_), (nk_), 4}

const attn_fixture attn_fixtures[] = {
    {"uniform logits", ONE_HEAD(2, 4), 0, FA_MASK_NONE, NULL, uniform_q, uniform_k, uniform_v,
     uniform_s, uniform_p, uniform_lse, uniform_o, true},
    {"one dominant score", ONE_HEAD(1, 4), 0, FA_MASK_NONE, NULL, dominant_q, dominant_k,
     dominant_v, dominant_s, dominant_p, dominant_lse, dominant_o, false},
    {"masked dominant score (key padding)", ONE_HEAD(1, 5), 0, FA_MASK_NONE,
     masked_padding_length, masked_padding_q, masked_padding_k, masked_padding_v,
     masked_padding_s, masked_padding_p, masked_padding_lse, masked_padding_o, true},
    {"masked dominant score (causal top-left)", ONE_HEAD(2, 2), 0, FA_MASK_CAUSAL_TOP_LEFT,
     NULL, masked_causal_q, masked_causal_k, masked_causal_v, masked_causal_s, masked_causal_p,
     masked_causal_lse, masked_causal_o, false},
    {"distinct values per batch and head", {2, 2, 2, 2, 4}, 0.25f, FA_MASK_NONE,
     distinct_length, distinct_q, distinct_k, distinct_v, distinct_s, distinct_p, distinct_lse,
     distinct_o, true},
    {"Nq = 1, causal top-left", ONE_HEAD(1, 4), 0, FA_MASK_CAUSAL_TOP_LEFT, NULL, decode_q,
     decode_k, decode_v, decode_s, decode_top_left_p, decode_top_left_lse, decode_top_left_o,
     true},
    {"Nq = 1, causal bottom-right", ONE_HEAD(1, 4), 0, FA_MASK_CAUSAL_BOTTOM_RIGHT, NULL,
     decode_q, decode_k, decode_v, decode_s, decode_bottom_right_p, decode_bottom_right_lse,
     decode_bottom_right_o, false},
    {"Nk = 1", ONE_HEAD(3, 1), 0, FA_MASK_NONE, NULL, single_key_q, single_key_k, single_key_v,
     single_key_s, single_key_p, single_key_lse, single_key_o, true},
    {"a row with no allowed key", {2, 1, 2, 2, 4}, 0, FA_MASK_NONE, no_key_length, no_key_q,
     no_key_k, no_key_v, no_key_s, no_key_p, no_key_lse, no_key_o, true},
    {"Nq < Nk (3 x 5), causal top-left", ONE_HEAD(3, 5), 0, FA_MASK_CAUSAL_TOP_LEFT, NULL,
     causal_q5, causal_k5, causal_v5, causal_3x5_s, causal_3x5_top_left_p,
     causal_3x5_top_left_lse, causal_3x5_top_left_o, false},
    {"Nq < Nk (3 x 5), causal bottom-right", ONE_HEAD(3, 5), 0, FA_MASK_CAUSAL_BOTTOM_RIGHT,
     NULL, causal_q5, causal_k5, causal_v5, causal_3x5_s, causal_3x5_bottom_right_p,
     causal_3x5_bottom_right_lse, causal_3x5_bottom_right_o, false},
    {"Nq > Nk (5 x 3), causal top-left", ONE_HEAD(5, 3), 0, FA_MASK_CAUSAL_TOP_LEFT, NULL,
     causal_q5, causal_k5, causal_v5, causal_5x3_s, causal_5x3_top_left_p,
     causal_5x3_top_left_lse, causal_5x3_top_left_o, false},
    {"Nq > Nk (5 x 3), causal bottom-right", ONE_HEAD(5, 3), 0, FA_MASK_CAUSAL_BOTTOM_RIGHT,
     NULL, causal_q5, causal_k5, causal_v5, causal_5x3_s, causal_5x3_bottom_right_p,
     causal_5x3_bottom_right_lse, causal_5x3_bottom_right_o, false},
};

const int attn_fixture_count = (int)(sizeof attn_fixtures / sizeof attn_fixtures[0]);
