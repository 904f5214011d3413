/**
 * @file fixtures.c
 * @brief The hand-computed cases of stage 02, with the arithmetic.
 */
#include "fixtures.h"

#include <stddef.h>

/* ---- M6 dot product ----------------------------------------------------------------------- */

/* 1*4 + 2*5 + 3*6 = 4 + 10 + 18 = 32. */
static const float dot_small_x[] = {1, 2, 3};
static const float dot_small_y[] = {4, 5, 6};

/* One element: 3 * -7 = -21. */
static const float dot_one_x[] = {3};
static const float dot_one_y[] = {-7};

/*
 * Nine powers of two against 2 (two fp32 chunks plus a tail of one; one bf16
 * chunk plus one): 2 * (1 + 0.5 + 0.25 + 0.125 + 2 + 4 + 8 + 16 + 0.0625)
 * = 2 * 31.9375 = 63.875.
 */
static const float dot_powers_x[] = {1, 0.5f, 0.25f, 0.125f, 2, 4, 8, 16, 0.0625f};
static const float dot_powers_y[] = {2, 2, 2, 2, 2, 2, 2, 2, 2};

/* Cancellation with integers (all exact in bf16: at most 8 significant bits):
 * 256*1 + 255*-1 + 7*8 + -56*1 + 5*1 = 256 - 255 + 56 - 56 + 5 = 6. */
static const float dot_cancel_x[] = {256, 255, 7, -56, 5};
static const float dot_cancel_y[] = {1, -1, 8, 1, 1};

const dot_fixture dot_fixtures[] = {
    {"empty (n = 0)", 0, NULL, NULL, 0.0f},
    {"1,2,3 . 4,5,6", 3, dot_small_x, dot_small_y, 32.0f},
    {"one element", 1, dot_one_x, dot_one_y, -21.0f},
    {"powers of two", 9, dot_powers_x, dot_powers_y, 63.875f},
    {"integer cancellation", 5, dot_cancel_x, dot_cancel_y, 6.0f},
};
const int dot_fixture_count = (int)(sizeof dot_fixtures / sizeof dot_fixtures[0]);

/*
 * x_i = (i mod 4) - 1 takes -1, 0, 1, 2 and y_i = 2, so each run of four
 * consecutive elements adds 2 (-1 + 0 + 1 + 2) = 4. n = 1000003 holds 250000
 * whole runs (i < 1000000) worth 1000000, and a tail i = 1000000, 1000001,
 * 1000002 with i mod 4 = 0, 1, 2 worth 2 (-1 + 0 + 1) = 0: the sum is 1000000.
 * Every partial sum of any order is an integer below 2^24, hence exact.
 */
void dot_long_fixture(float *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; ++i) {
        x[i] = (float)(i % 4 - 1);
        y[i] = 2.0f;
    }
}

/* ---- M7 matmul ---------------------------------------------------------------------------- */

/*
 * The worked example, A (2x3) * B (3x2):
 *   | 1 2 3 |   |  7  8 |   | 1*7 + 2*9 + 3*11   1*8 + 2*10 + 3*12 |   |  58  64 |
 *   | 4 5 6 | * |  9 10 | = | 4*7 + 5*9 + 6*11   4*8 + 5*10 + 6*12 | = | 139 154 |
 *               | 11 12 |
 * 7 + 18 + 33 = 58, 8 + 20 + 36 = 64, 28 + 45 + 66 = 139, 32 + 50 + 72 = 154.
 */
static const float mm_small_a[] = {1, 2, 3, 4, 5, 6};
static const float mm_small_b[] = {7, 8, 9, 10, 11, 12};
static const float mm_small_c[] = {58, 64, 139, 154};

/* A (3x3) * I = A. */
static const float mm_right_identity_a[] = {1, -2, 3, 4, 5, -6, -7, 8, 9};
static const float mm_identity3[] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

/* I (2x2) * B (2x4) = B. */
static const float mm_identity2[] = {1, 0, 0, 1};
static const float mm_left_identity_b[] = {3, -1, 4, 1, -5, 9, 2, -6};

/*
 * K = 1 is an outer product: c[i][j] = a_i * b_j with a = (1, 2, 3), b = (4, 5, 6, 7):
 *   row 0: 4 5 6 7;  row 1: 8 10 12 14;  row 2: 12 15 18 21.
 */
static const float mm_outer_a[] = {1, 2, 3};
static const float mm_outer_b[] = {4, 5, 6, 7};
static const float mm_outer_c[] = {4, 5, 6, 7, 8, 10, 12, 14, 12, 15, 18, 21};

/* A 1x4 row times a 4x1 column of powers of two: 0.5*2 + 0.25*4 + 2*0.125 + 8*-1 = 1 + 1 + 0.25 - 8 = -5.75. */
static const float mm_powers_a[] = {0.5f, 0.25f, 2, 8};
static const float mm_powers_b[] = {2, 4, 0.125f, -1};
static const float mm_powers_c[] = {-5.75f};

/* K = 0: the sum over no k is 0, so C (2x3) must be written with zeros. */
static const float mm_zeros_2x3[] = {0, 0, 0, 0, 0, 0};

/* Empty M or N: nothing to write (the checks verify nothing was). B for M = 0 is 2x3; A for N = 0 is 2x2. */
static const float mm_empty_b[] = {1, 2, 3, 4, 5, 6};
static const float mm_empty_a[] = {1, 2, 3, 4};

const matmul_fixture matmul_fixtures[] = {
    {"2x3 * 3x2 worked example", 2, 2, 3, mm_small_a, mm_small_b, mm_small_c},
    {"A * identity", 3, 3, 3, mm_right_identity_a, mm_identity3, mm_right_identity_a},
    {"identity * B", 2, 4, 2, mm_identity2, mm_left_identity_b, mm_left_identity_b},
    {"K = 1 outer product", 3, 4, 1, mm_outer_a, mm_outer_b, mm_outer_c},
    {"1x4 * 4x1 powers of two", 1, 1, 4, mm_powers_a, mm_powers_b, mm_powers_c},
    {"K = 0 gives zeros", 2, 3, 0, NULL, NULL, mm_zeros_2x3},
    {"M = 0", 0, 3, 2, NULL, mm_empty_b, NULL},
    {"N = 0", 2, 0, 2, mm_empty_a, NULL, NULL},
};
const int matmul_fixture_count = (int)(sizeof matmul_fixtures / sizeof matmul_fixtures[0]);

/* ---- M8 transpose ------------------------------------------------------------------------- */

/* | 1 2 3 |^T   | 1 4 |
 * | 4 5 6 |   = | 2 5 |
 *               | 3 6 | */
static const float tr_small_in[] = {1, 2, 3, 4, 5, 6};
static const float tr_small_out[] = {1, 4, 2, 5, 3, 6};

/* A row becomes a column with the same elements in the same order. */
static const float tr_row[] = {-1, 2, -3, 4, -5};

const transpose_fixture transpose_fixtures[] = {
    {"2x3 -> 3x2", 2, 3, tr_small_in, tr_small_out},
    {"1x5 row -> 5x1 column", 1, 5, tr_row, tr_row},
    {"5x1 column -> 1x5 row", 5, 1, tr_row, tr_row},
    {"empty 0x5", 0, 5, NULL, NULL},
};
const int transpose_fixture_count =
    (int)(sizeof transpose_fixtures / sizeof transpose_fixtures[0]);
