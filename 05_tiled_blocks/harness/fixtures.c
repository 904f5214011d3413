/**
 * @file fixtures.c
 * @brief The hand-computed cases of stage 05 (see fixtures.h).
 *
 * Notation: s = q . k (the raw score the blocks compute), m the running max
 * of the raw scores, and with c = scale log2(e) = 1 every weight is
 * p = 2^(s - m), every correction alpha = 2^(m_old - m_new) (0 from the empty
 * state m_old = -inf), l_t = alpha_t l_(t-1) + sum of the tile's weights,
 * o = sum_j p_j v_j / l and lse = scale m + ln l with scale = FA_LN2_F below.
 * BC is the version's keys per tile (32 or 64), BR its query rows per tile
 * (64 for both).
 */
#include "fixtures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fa_adversarial.h"
#include "fa_half.h"

/* Natural logarithms of the sums, to double precision. */
#define LN_15_8 0.6286086594223741
#define LN_3_2 0.4054651081081644
#define LN_69_32 0.7683706017975328
#define LN_21_16 0.27193371548364176
#define LN_7_4 0.5596157879354227
#define LN_3 1.0986122886681098
#define LN_31_16 0.661398482245365

/* ---- fixtures written out as arrays (one head, at most one key tile) --------------------- */

/** A fixture of one head and nk <= 32 keys (one key tile in both versions: alpha = 0). */
typedef struct literal {
    int64_t nq, nk, d;
    const float *q, *k, *v; /* [nq][d], [nk][d], [nk][d] */
    const float *s, *p;     /* [nq][nk] */
    const float *m, *l;     /* [nq] */
    const double *o, *lse;  /* [nq][d], [nq] */
} literal;

/* ---- "4x4 tile": nq = 4, nk = 4, d = 8 ----------------------------------------------------- */
/* Scores s_ij = q_i . k_j:
 * with k_0 = e1, k_1 = e0, k_2 = 2 e0 + 2 e1, k_3 = -e0 + 3 e1 + 2 e7:
 *   row 0, q = e0:             [0, 1, 2, -1]    m = 2
 *   row 1, q = e1:             [1, 0, 2, 3]     m = 3
 *   row 2, q = e0 + e1:        [1, 1, 4, 2]     m = 4
 *   row 3, q = 2 e0 - e1 + e7: [-1, 2, 2, -3]   m = 2 (a tie: keys 1 and 2)
 * (row 3: k_2 gives 4 - 2 = 2, k_3 gives -2 - 3 + 2 = -3.)
 * Weights 2^(s - m) and sums:
 *   row 0: [1/4, 1/2, 1, 1/8]   l = 15/8
 *   row 1: [1/4, 1/8, 1/2, 1]   l = 15/8
 *   row 2: [1/8, 1/8, 1, 1/4]   l = 3/2
 *   row 3: [1/8, 1, 1, 1/32]    l = 69/32
 * v_j = 8 e_j - e_(j+4), so o_i = [8 p_i / l_i, -p_i / l_i] (4 + 4 columns):
 *   row 0: p / l = [2, 4, 8, 1] / 15;   row 1: [2, 1, 4, 8] / 15;
 *   row 2: [1, 1, 8, 2] / 12;           row 3: [4, 32, 32, 1] / 69.
 * lse = FA_LN2_F m + ln l. */
static const float four_q[] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0,  0, 0, 0, 0, 0,
                               1, 1, 0, 0, 0, 0, 0, 0, 2, -1, 0, 0, 0, 0, 0, 1};
static const float four_k[] = {0, 1, 0, 0, 0, 0, 0, 0, 1,  0, 0, 0, 0, 0, 0, 0,
                               2, 2, 0, 0, 0, 0, 0, 0, -1, 3, 0, 0, 0, 0, 0, 2};
static const float four_v[] = {8, 0, 0, 0, -1, 0, 0, 0, 0, 8, 0, 0, 0, -1, 0, 0,
                               0, 0, 8, 0, 0, 0, -1, 0, 0, 0, 0, 8, 0, 0, 0, -1};
static const float four_s[] = {0, 1, 2, -1, 1, 0, 2, 3, 1, 1, 4, 2, -1, 2, 2, -3};
static const float four_p[] = {0.25f,  0.5f,  1, 0.125f, 0.25f,  0.125f, 0.5f, 1,
                               0.125f, 0.125f, 1, 0.25f, 0.125f, 1,      1,    0.03125f};
static const float four_m[] = {2, 3, 4, 2};
static const float four_l[] = {1.875f, 1.875f, 1.5f, 2.15625f};
static const double four_o[] = {
    16.0 / 15, 32.0 / 15, 64.0 / 15, 8.0 / 15, -2.0 / 15, -4.0 / 15, -8.0 / 15, -1.0 / 15,
    16.0 / 15, 8.0 / 15,  32.0 / 15, 64.0 / 15, -2.0 / 15, -1.0 / 15, -4.0 / 15, -8.0 / 15,
    2.0 / 3,   2.0 / 3,   16.0 / 3,  4.0 / 3,  -1.0 / 12, -1.0 / 12, -2.0 / 3,  -1.0 / 6,
    32.0 / 69, 256.0 / 69, 256.0 / 69, 8.0 / 69, -4.0 / 69, -32.0 / 69, -32.0 / 69, -1.0 / 69};
static const double four_lse[] = {
    2 * (double)FA_LN2_F + LN_15_8, 3 * (double)FA_LN2_F + LN_15_8,
    4 * (double)FA_LN2_F + LN_3_2, 2 * (double)FA_LN2_F + LN_69_32,
};
static const literal four = {4, 4, 8, four_q, four_k, four_v, four_s, four_p,
                             four_m, four_l, four_o, four_lse};

/* ---- "d=1" (version 1): nq = 5, nk = 3, d = 1 --------------------------------------------- */
/* q = [-2, -1, 0, 1, 2], k = [0, 1, 2], s_ij = q_i k_j, v = [1, 2, 4]:
 *   row 0: s [0, -2, -4]  m 0  p [1, 1/4, 1/16]  l 21/16  o = (1 + 1/2 + 1/4) 16/21 = 4/3
 *   row 1: s [0, -1, -2]  m 0  p [1, 1/2, 1/4]   l 7/4    o = (1 + 1 + 1) 4/7 = 12/7
 *   row 2: s [0, 0, 0]    m 0  p [1, 1, 1]       l 3      o = 7/3
 *   row 3: s [0, 1, 2]    m 2  p [1/4, 1/2, 1]   l 7/4    o = (1/4 + 1 + 4) 4/7 = 3
 *   row 4: s [0, 2, 4]    m 4  p [1/16, 1/4, 1]  l 21/16  o = (1/16 + 1/2 + 4) 16/21 = 73/21
 * The zero scores are +0: the chain starts at +0 and (-2) 0 + 0 = +0. */
static const float d1_q[] = {-2, -1, 0, 1, 2};
static const float d1_k[] = {0, 1, 2};
static const float d1_v[] = {1, 2, 4};
static const float d1_s[] = {0, -2, -4, 0, -1, -2, 0, 0, 0, 0, 1, 2, 0, 2, 4};
static const float d1_p[] = {1,     0.25f, 0.0625f, 1, 0.5f, 0.25f, 1, 1,
                             1,     0.25f, 0.5f,    1, 0.0625f, 0.25f, 1};
static const float d1_m[] = {0, 0, 0, 2, 4};
static const float d1_l[] = {1.3125f, 1.75f, 3, 1.75f, 1.3125f};
static const double d1_o[] = {4.0 / 3, 12.0 / 7, 7.0 / 3, 3, 73.0 / 21};
static const double d1_lse[] = {LN_21_16, LN_7_4, LN_3, 2 * (double)FA_LN2_F + LN_7_4,
                                4 * (double)FA_LN2_F + LN_21_16};
static const literal d1 = {5, 3, 1, d1_q, d1_k, d1_v, d1_s, d1_p, d1_m, d1_l, d1_o, d1_lse};

/* ---- "nan-row": nq = 3, nk = 5, d = 8, a NaN in q_1 ---------------------------------------- */
/* k_j = [j, 4 - j, 0, ...], v_j = [j, 1, 0, ...].
 *   row 0, q = e0: s [0, 1, 2, 3, 4]  m 4  p [1/16, 1/8, 1/4, 1/2, 1]  l 31/16
 *                  o_0 = (1/8 + 2/4 + 3/2 + 4) 16/31 = 98/31, o_1 = 1
 *   row 1, q = [1, 1, 1, NaN, 0, ...]: every score NaN (NaN * 0 is NaN), so are m (the max
 *                  keeps NaN), alpha, l, o, lse and every weight, those past nk too:
 *                  2^(-inf - NaN) is NaN (the scores past nk stay -inf)
 *   row 2, q = e1: s [4, 3, 2, 1, 0]  m 4  p [1, 1/2, 1/4, 1/8, 1/16]  l 31/16
 *                  o_0 = (1/2 + 2/4 + 3/8 + 4/16) 16/31 = 26/31, o_1 = 1 */
#define NAN_ROW(x) x, x, x, x, x
static const float nan_q[] = {1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, NAN, 0, 0, 0, 0,
                              0, 1, 0, 0, 0, 0, 0, 0};
static const float nan_k[] = {0, 4, 0, 0, 0, 0, 0, 0, 1, 3, 0, 0, 0, 0, 0, 0, 2, 2, 0, 0,
                              0, 0, 0, 0, 3, 1, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0};
static const float nan_v[] = {0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 2, 1, 0, 0,
                              0, 0, 0, 0, 3, 1, 0, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0};
static const float nan_s[] = {0, 1, 2, 3, 4, NAN_ROW(NAN), 4, 3, 2, 1, 0};
static const float nan_p[] = {0.0625f, 0.125f, 0.25f, 0.5f, 1, NAN_ROW(NAN),
                              1,       0.5f,   0.25f, 0.125f, 0.0625f};
static const float nan_m[] = {4, NAN, 4};
static const float nan_l[] = {1.9375f, NAN, 1.9375f};
static const double nan_o[] = {98.0 / 31, 1, 0, 0, 0, 0, 0, 0, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
                               NAN,       26.0 / 31, 1, 0, 0, 0, 0, 0, 0};
static const double nan_lse[] = {4 * (double)FA_LN2_F + LN_31_16, NAN,
                                 4 * (double)FA_LN2_F + LN_31_16};
static const literal nan_row = {3, 5, 8, nan_q, nan_k, nan_v, nan_s, nan_p,
                                nan_m, nan_l, nan_o, nan_lse};

/* ---- "no-keys": nq = 3, nk = 0, d = 8 ------------------------------------------------------ */
/* No key tile at all: M18-M21 write nothing; o = 0 and lse = -inf (the log of an empty sum),
 * never NaN. q_i = (i + 1) e0. */
static const float none_q[] = {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
                               3, 0, 0, 0, 0, 0, 0, 0};
static const double none_o[24] = {0};
static const double none_lse[] = {-INFINITY, -INFINITY, -INFINITY};
static const literal no_keys = {3, 0, 8, none_q, NULL, NULL, NULL, NULL,
                                NULL, NULL, none_o, none_lse};

/* ---- filling ---------------------------------------------------------------------------------- */

/** Keys per tile and key tiles of @p x in version @p version. */
static int64_t keys_per_tile(int version) { return tile_keys(version); }
static int64_t tiles_of(const tile_fixture *x, int version) { return tile_key_tiles(version, x->nk); }

/** Index of key @p j of row @p i of head @p h in scores and weights. */
static int64_t key_at(const tile_fixture *x, int version, int64_t h, int64_t i, int64_t j)
{
    return (h * x->nq + i) * tiles_of(x, version) * keys_per_tile(version) + j;
}

/** Index of tile @p t of row @p i of head @p h in max, alpha and sum. */
static int64_t tile_at(const tile_fixture *x, int version, int64_t h, int64_t i, int64_t t)
{
    return (h * x->nq + i) * tiles_of(x, version) + t;
}

static void fill_literal(const literal *lit, int version, tile_fixture *x)
{
    for (int64_t i = 0; i < lit->nq * lit->d; ++i)
        x->q[i] = lit->q[i];
    for (int64_t i = 0; i < lit->nk * lit->d; ++i) {
        x->k[i] = lit->k[i];
        x->v[i] = lit->v[i];
    }
    for (int64_t i = 0; i < lit->nq; ++i) {
        for (int64_t j = 0; j < lit->nk; ++j) {
            x->scores[key_at(x, version, 0, i, j)] = lit->s[i * lit->nk + j];
            x->weights[key_at(x, version, 0, i, j)] = lit->p[i * lit->nk + j];
        }
        /* a NaN row: every weight, the tail's too (exp2(-inf - NaN) is NaN) */
        if (lit->nk > 0 && isnan(lit->m[i]))
            for (int64_t j = 0; j < tiles_of(x, version) * keys_per_tile(version); ++j)
                x->weights[key_at(x, version, 0, i, j)] = NAN;
        if (lit->nk > 0) { /* one tile: from the empty state, alpha = 2^(-inf) = 0 (NaN for m NaN) */
            x->max[tile_at(x, version, 0, i, 0)] = lit->m[i];
            x->alpha[tile_at(x, version, 0, i, 0)] = isnan(lit->m[i]) ? NAN : 0.0f;
            x->sum[tile_at(x, version, 0, i, 0)] = lit->l[i];
        }
        for (int64_t c = 0; c < lit->d; ++c)
            x->o[i * lit->d + c] = lit->o[i * lit->d + c];
        x->lse[i] = lit->lse[i];
    }
}

static void dims_literal(const literal *lit, tile_fixture *x)
{
    x->heads = 1;
    x->nq = lit->nq;
    x->nk = lit->nk;
    x->d = lit->d;
}

static void four_dims(int version, tile_fixture *x) { (void)version; dims_literal(&four, x); }
static void four_fill(int version, tile_fixture *x) { fill_literal(&four, version, x); }
static void d1_dims(int version, tile_fixture *x) { (void)version; dims_literal(&d1, x); }
static void d1_fill(int version, tile_fixture *x) { fill_literal(&d1, version, x); }
static void nan_dims(int version, tile_fixture *x) { (void)version; dims_literal(&nan_row, x); }
static void nan_fill(int version, tile_fixture *x) { fill_literal(&nan_row, version, x); }
static void none_dims(int version, tile_fixture *x) { (void)version; dims_literal(&no_keys, x); }
static void none_fill(int version, tile_fixture *x) { fill_literal(&no_keys, version, x); }

/* ---- "rise-in-tile-2": nq = 2, nk = BC + 4, d = 8 ----------------------------------------- */
/* k_j = 0 for the BC keys of tile 0, 2 e0 for keys BC .. BC + 3 (tile 1; its other BC - 4
 * columns are past nk). v_j = 1 in every column for tile 0, 4 for tile 1.
 * Row 0, q = e0: scores 0 then 2, so the max rises in tile 1:
 *   m = [0, 2]; tile 0 weights 1, l_0 = BC; alpha_1 = 2^(0 - 2) = 1/4, tile 1 weights 1;
 *   l_1 = BC / 4 + 4; o = (BC / 4 * 1 + 4 * 4) / (BC / 4 + 4) (v1: 24 / 12 = 2, v2: 32 / 20);
 *   lse = 2 FA_LN2_F + ln(BC / 4 + 4).
 * Row 1, q = -e0: scores 0 then -2, the max stays:
 *   m = [0, 0]; alpha_1 = 1; tile 1 weights 1/4; l_1 = BC + 1;
 *   o = (BC + 4 * 1/4 * 4) / (BC + 1); lse = ln(BC + 1). */
static void rise_dims(int version, tile_fixture *x)
{
    x->heads = 1;
    x->nq = 2;
    x->nk = tile_keys(version) + 4;
    x->d = 8;
}

static void rise_fill(int version, tile_fixture *x)
{
    const int64_t bc = tile_keys(version);
    x->q[0] = 1.0f;
    x->q[x->d] = -1.0f;
    for (int64_t j = 0; j < x->nk; ++j) {
        x->k[j * x->d] = j < bc ? 0.0f : 2.0f;
        for (int64_t c = 0; c < x->d; ++c)
            x->v[j * x->d + c] = j < bc ? 1.0f : 4.0f;
    }
    for (int64_t i = 0; i < 2; ++i) {
        const float late = i == 0 ? 2.0f : -2.0f; /* the scores of tile 1 */
        for (int64_t j = 0; j < x->nk; ++j) {
            x->scores[key_at(x, version, 0, i, j)] = j < bc ? 0.0f : late;
            x->weights[key_at(x, version, 0, i, j)] = j < bc || i == 0 ? 1.0f : 0.25f;
        }
        x->max[tile_at(x, version, 0, i, 0)] = 0.0f;
        x->max[tile_at(x, version, 0, i, 1)] = i == 0 ? 2.0f : 0.0f;
        x->alpha[tile_at(x, version, 0, i, 0)] = 0.0f;
        x->alpha[tile_at(x, version, 0, i, 1)] = i == 0 ? 0.25f : 1.0f;
        x->sum[tile_at(x, version, 0, i, 0)] = (float)bc;
        x->sum[tile_at(x, version, 0, i, 1)] = i == 0 ? (float)bc / 4 + 4 : (float)bc + 1;
        const double l = i == 0 ? (double)bc / 4 + 4 : (double)bc + 1;
        for (int64_t c = 0; c < x->d; ++c)
            x->o[i * x->d + c] = i == 0 ? ((double)bc / 4 + 16) / l : ((double)bc + 4) / l;
        x->lse[i] = i == 0 ? 2 * (double)FA_LN2_F + log(l) : log(l);
    }
}

/* ---- "ragged": heads = 2, nq = BR + 1, nk = BC + 1, d = 8 -------------------------------- */
/* Both tile grids stick out: query tile 1 holds one row (BR), key tile 1 one key (BC).
 * q^h_i = [r, 1, 0, ...] with r = (i + h) % 4; k_j = [1, -(j % 4), 0, ...] in both heads;
 * v^h_j = [j % 4, 1 + h, 32 if j == BC else 0, 0, ...].
 * s = r - j % 4 (BC is a multiple of 4, so key BC has j % 4 = 0).
 * Tile 0: m_0 = r (keys with j % 4 = 0), p = 2^-(j % 4),
 *   l_0 = (BC / 4)(1 + 1/2 + 1/4 + 1/8) = 15 BC / 32 (v1: 15, v2: 30).
 * Tile 1: key BC scores r = m, so m_1 = r, alpha_1 = 1, p = 1, the rest past nk;
 *   l_1 = 15 BC / 32 + 1 (v1: 16, v2: 31).
 * o_0 = (BC / 4)(0 + 1/2 + 2/4 + 3/8) / l_1 = (11 BC / 32) / l_1 (v1: 11/16, v2: 22/31),
 * o_1 = 1 + h, o_2 = 32 / l_1 (the lone key of tile 1), o_3.. = 0; lse = FA_LN2_F r + ln l_1. */
static void ragged_dims(int version, tile_fixture *x)
{
    x->heads = 2;
    x->nq = tile_rows(version) + 1;
    x->nk = tile_keys(version) + 1;
    x->d = 8;
}

static void ragged_fill(int version, tile_fixture *x)
{
    const int64_t bc = tile_keys(version);
    const double l0 = 15.0 * (double)bc / 32, l1 = l0 + 1;
    for (int64_t h = 0; h < x->heads; ++h) {
        for (int64_t j = 0; j < x->nk; ++j) {
            float *k = x->k + (h * x->nk + j) * x->d, *v = x->v + (h * x->nk + j) * x->d;
            k[0] = 1.0f;
            k[1] = -(float)(j % 4);
            v[0] = (float)(j % 4);
            v[1] = (float)(1 + h);
            v[2] = j == bc ? 32.0f : 0.0f;
        }
        for (int64_t i = 0; i < x->nq; ++i) {
            const int64_t r = (i + h) % 4;
            x->q[(h * x->nq + i) * x->d] = (float)r;
            x->q[(h * x->nq + i) * x->d + 1] = 1.0f;
            for (int64_t j = 0; j < x->nk; ++j) {
                x->scores[key_at(x, version, h, i, j)] = (float)(r - j % 4);
                x->weights[key_at(x, version, h, i, j)] = ldexpf(1.0f, -(int)(j % 4));
            }
            for (int64_t t = 0; t < 2; ++t) {
                x->max[tile_at(x, version, h, i, t)] = (float)r;
                x->alpha[tile_at(x, version, h, i, t)] = t == 0 ? 0.0f : 1.0f;
                x->sum[tile_at(x, version, h, i, t)] = (float)(t == 0 ? l0 : l1);
            }
            double *o = x->o + (h * x->nq + i) * x->d;
            o[0] = 11.0 * (double)bc / 32 / l1;
            o[1] = (double)(1 + h);
            o[2] = 32.0 / l1;
            x->lse[h * x->nq + i] = (double)FA_LN2_F * (double)r + log(l1);
        }
    }
}

/* ---- the table ------------------------------------------------------------------------------ */

enum { VERSION_1 = 1u, VERSION_2 = 2u, BOTH = VERSION_1 | VERSION_2 };

typedef struct fixture_def {
    const char *name;
    unsigned versions; /* bit v - 1: runs in version v */
    void (*dims)(int version, tile_fixture *x);
    void (*fill)(int version, tile_fixture *x);
} fixture_def;

/* d = 8 serves both versions (version 2 takes multiples of 8); d = 1 only version 1. */
static const fixture_def fixtures[] = {
    {"4x4 tile", BOTH, four_dims, four_fill},
    {"rise-in-tile-2", BOTH, rise_dims, rise_fill},
    {"ragged", BOTH, ragged_dims, ragged_fill},
    {"no-keys", BOTH, none_dims, none_fill},
    {"d=1", VERSION_1, d1_dims, d1_fill},
    {"nan-row", BOTH, nan_dims, nan_fill},
};

const int tile_fixture_count = (int)(sizeof fixtures / sizeof fixtures[0]);

const char *tile_fixture_name(int index)
{
    return fixtures[index].name;
}

bool tile_fixture_runs(int index, int version)
{
    return (fixtures[index].versions & (1u << (version - 1))) != 0;
}

void tile_fixture_free(tile_fixture *x)
{
    free(x->q);
    free(x->k);
    free(x->v);
    free(x->scores);
    free(x->max);
    free(x->weights);
    free(x->alpha);
    free(x->sum);
    free(x->o);
    free(x->lse);
    *x = (tile_fixture){0};
}

/** calloc of at least one element, so that an empty array is still a valid pointer. */
static void *zeroed(int64_t count, size_t size)
{
    return calloc((size_t)(count > 0 ? count : 1), size);
}

fa_status tile_fixture_make(int index, int version, tile_fixture *out)
{
    *out = (tile_fixture){0};
    fixtures[index].dims(version, out);
    const int64_t keys = tiles_of(out, version) * keys_per_tile(version);
    const int64_t rows = out->heads * out->nq;
    out->q = zeroed(rows * out->d, sizeof(float));
    out->k = zeroed(out->heads * out->nk * out->d, sizeof(float));
    out->v = zeroed(out->heads * out->nk * out->d, sizeof(float));
    out->scores = zeroed(rows * keys, sizeof(float));
    out->max = zeroed(rows * tiles_of(out, version), sizeof(float));
    out->weights = zeroed(rows * keys, sizeof(float));
    out->alpha = zeroed(rows * tiles_of(out, version), sizeof(float));
    out->sum = zeroed(rows * tiles_of(out, version), sizeof(float));
    out->o = zeroed(rows * out->d, sizeof(double));
    out->lse = zeroed(rows, sizeof(double));
    if (!out->q || !out->k || !out->v || !out->scores || !out->max || !out->weights ||
        !out->alpha || !out->sum || !out->o || !out->lse) {
        tile_fixture_free(out);
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "stage05: no host memory for fixture '%s'",
                       fixtures[index].name);
    }
    for (int64_t i = 0; i < rows * keys; ++i)
        out->scores[i] = -INFINITY; /* keys past nk; weights past nk stay 0 */
    fixtures[index].fill(version, out);
    return FA_OK;
}

/* ---- the inputs of a case -------------------------------------------------------------------- */

void tile_case_free(tile_case *c)
{
    free(c->q);
    free(c->k);
    free(c->v);
    *c = (tile_case){0};
}

fa_status tile_case_alloc(tile_case *c, fa_dtype dtype, int64_t heads, int64_t nq, int64_t nk,
                          int64_t d)
{
    *c = (tile_case){0};
    const size_t element = (size_t)fa_dtype_size(dtype);
    c->q = calloc((size_t)(heads * nq * d) + 1, element);
    c->k = calloc((size_t)(heads * nk * d) + 1, element);
    c->v = calloc((size_t)(heads * nk * d) + 1, element);
    if (!c->q || !c->k || !c->v) {
        tile_case_free(c);
        return fa_fail(FA_ERR_OUT_OF_MEMORY,
                       "stage05: no host memory for %lld x %lld x %lld x %lld inputs",
                       (long long)heads, (long long)nq, (long long)nk, (long long)d);
    }
    c->problem = (tile_problem){c->q, c->k, c->v, dtype, heads, nq, nk, d,
                                (float)(1.0 / sqrt((double)d))};
    return FA_OK;
}

fa_status tile_fixture_case(const tile_fixture *x, fa_dtype dtype, tile_case *c)
{
    FA_TRY(tile_case_alloc(c, dtype, x->heads, x->nq, x->nk, x->d));
    for (int64_t i = 0; i < x->heads * x->nq * x->d; ++i)
        fa_store(c->q, dtype, i, x->q[i]);
    for (int64_t i = 0; i < x->heads * x->nk * x->d; ++i) {
        fa_store(c->k, dtype, i, x->k[i]);
        fa_store(c->v, dtype, i, x->v[i]);
    }
    c->problem.scale = FA_LN2_F;
    return FA_OK;
}

fa_status tile_random_case(tile_case *c, int version, fa_dtype dtype, int64_t heads, int64_t nq,
                           int64_t nk, int64_t d, double spread, tile_max_pattern pattern,
                           fa_rng *rng)
{
    FA_TRY(tile_case_alloc(c, dtype, heads, nq, nk, d));
    if (d < FA_CASE_MIN_HEAD_DIM || heads == 0) {
        /* s = scale q.k over d dimensions of normal(0, sigma^2): standard deviation
         * scale sqrt(d) sigma^2. */
        const double sigma = sqrt(spread / ((double)c->problem.scale * sqrt((double)d)));
        for (int64_t i = 0; i < heads * nq * d; ++i)
            fa_store(c->q, dtype, i, (float)(sigma * fa_rng_normal(rng)));
        for (int64_t i = 0; i < heads * nk * d; ++i) {
            fa_store(c->k, dtype, i, (float)(sigma * fa_rng_normal(rng)));
            fa_store(c->v, dtype, i, (float)fa_rng_normal(rng));
        }
        return FA_OK;
    }
    const fa_case_shape shape = {.batch = 1, .heads_q = heads, .heads_kv = heads, .nq = nq,
                                 .nk = nk, .head_dim = d, .mask = FA_MASK_NONE, .dtype = dtype};
    fa_attn_case generated;
    const fa_status status = fa_case_create(&generated, &shape);
    if (status != FA_OK) {
        tile_case_free(c);
        return status;
    }
    fa_case_fill_scores(&generated, spread, rng);
    if (pattern == TILE_MAX_RISES_EVERY_TILE)
        fa_case_place_max(&generated, tile_keys(version), FA_MAX_RISES_EVERY_BLOCK, 1.0);
    else if (pattern == TILE_MAX_IN_LAST_TILE)
        fa_case_place_max(&generated, tile_keys(version), FA_MAX_IN_LAST_BLOCK, 4.0);
    fa_case_fill_values(&generated, 0.0, rng);
    /* One batch and no padding rows: the case's buffers are [heads][n][d], a trace's layout. */
    const size_t element = (size_t)fa_dtype_size(dtype);
    memcpy(c->q, generated.q, (size_t)(heads * nq * d) * element);
    memcpy(c->k, generated.k, (size_t)(heads * nk * d) * element);
    memcpy(c->v, generated.v, (size_t)(heads * nk * d) * element);
    fa_case_free(&generated);
    return FA_OK;
}
