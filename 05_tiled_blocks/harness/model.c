/**
 * @file model.c
 * @brief The judges of M17-M22 and the CPU model of version 1 (model.h).
 */
#include "model.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "fa_bound.h"
#include "fa_math.h"
#include "fa_model.h"
#include "fa_reference.h"

/**
 * Relative error of a double reference built from at most a few thousand
 * exact terms (fa_ref_dot()'s compensated sum, libm's exp2): far below every
 * fp32 bound it is added to, and large enough to cover the double roundings.
 */
#define REFERENCE_RELATIVE_ERROR 0x1p-50

/** Smallest positive subnormal fp32: the most one rounding of a subnormal result loses, twice over. */
#define MIN_SUBNORMAL32 0x1p-149

/** Lanes of a level-1 row (tile1_rowsum()): each adds its keys tx and tx + 16, then the butterfly. */
enum { ROW_LANES = TILE1_THREAD_COLS };

/** Threads of a tensor-core quad whose partial sums version 2 adds at the end (tile2_row_sums()). */
enum { QUAD_PARTIALS = 4 };

tile_sizes tile_sizes_of(int milestone, int version, const tile_problem *p)
{
    tile_sizes s = {0};
    s.key_tiles = tile_key_tiles(version, p->nk);
    s.tile_bytes = version == 1 ? (int64_t)sizeof(float) : fa_dtype_size(p->dtype);
    if (p->heads == 0 || p->nq == 0)
        return s; /* the launcher returns before launching: nothing is written */
    const int64_t rows = p->heads * p->nq;
    const int64_t padded_keys = s.key_tiles * tile_keys(version);
    switch (milestone) {
    case 17:
        s.q_tiles = p->heads * tile_query_tiles(version, p->nq) * tile_rows(version) * p->d;
        s.k_tiles = s.v_tiles = p->heads * padded_keys * p->d;
        break;
    case 18: s.scores = rows * padded_keys; break;
    case 19: s.max = rows * s.key_tiles; break;
    case 20:
        s.weights = rows * padded_keys;
        s.correction = rows * s.key_tiles;
        break;
    case 21: s.sum = rows * s.key_tiles; break;
    case 22:
        s.o = rows * p->d;
        s.lse = rows;
        break;
    default: break;
    }
    return s;
}

float tile_exp2_scale(float scale)
{
    return scale * FA_LOG2E_F;
}

float tile_weight_argument(float s, float m_new, float c)
{
    const float max_scaled = fa_max_offset(m_new) * c;
    return fmaf(s, c, -max_scaled);
}

float tile_alpha_argument(float m_old, float m_new, float c)
{
    const float difference = m_old - fa_max_offset(m_new);
    return difference * c;
}

fa_shape tile_shape(int64_t heads, int64_t rows, int64_t cols, const char *col_name)
{
    fa_shape shape = {0};
    shape.rank = 3;
    shape.dims[0] = heads;
    shape.dims[1] = rows;
    shape.dims[2] = cols;
    shape.names[0] = "head";
    shape.names[1] = "row";
    shape.names[2] = col_name;
    return shape;
}

fa_attn_problem tile_attn_problem(const tile_problem *p)
{
    fa_attn_problem a = {0};
    a.batch = 1;
    a.heads_q = a.heads_kv = p->heads;
    a.nq = p->nq;
    a.nk = p->nk;
    a.head_dim = p->d;
    a.scale = (double)p->scale; /* the kernel's fp32 scale, exactly */
    a.mask = FA_MASK_NONE;
    a.key_length = NULL;
    a.q = fa_view_bhnd(p->q, p->dtype, p->heads, p->nq, p->d);
    a.k = fa_view_bhnd(p->k, p->dtype, p->heads, p->nk, p->d);
    a.v = fa_view_bhnd(p->v, p->dtype, p->heads, p->nk, p->d);
    return a;
}

/** Row @p row of head @p head of a [heads][rows][d] host array of p->dtype. */
static const void *row_of(const tile_problem *p, const void *x, int64_t head, int64_t rows,
                          int64_t row)
{
    return (const char *)x + ((head * rows + row) * p->d) * fa_dtype_size(p->dtype);
}

/* ---- judges ----------------------------------------------------------------------------- */

void judge_tile_load(const tile_problem *p, const void *x, int64_t rows, int64_t padded_rows,
                     double *ref)
{
    for (int64_t h = 0; h < p->heads; ++h)
        for (int64_t r = 0; r < padded_rows; ++r)
            for (int64_t c = 0; c < p->d; ++c)
                ref[(h * padded_rows + r) * p->d + c] =
                    r < rows ? (double)fa_load(x, p->dtype, (h * rows + r) * p->d + c) : 0.0;
}

void judge_scores(int version, const tile_problem *p, double *ref, double *bound)
{
    const fa_attn_method method = tile_method(version, p->dtype);
    const int64_t keys = tile_key_tiles(version, p->nk) * tile_keys(version);
    for (int64_t h = 0; h < p->heads; ++h)
        for (int64_t i = 0; i < p->nq; ++i) {
            const void *q = row_of(p, p->q, h, p->nq, i);
            const int64_t at = (h * p->nq + i) * keys;
            for (int64_t j = 0; j < keys; ++j) {
                if (j >= p->nk) {
                    ref[at + j] = -INFINITY;
                    bound[at + j] = 0.0;
                    continue;
                }
                double abs_dot = 0.0, dot_bound = NAN;
                ref[at + j] = fa_ref_dot(q, row_of(p, p->k, h, p->nk, j), p->dtype, p->d, &abs_dot);
                /* No finite bound (a head dimension too large): NaN, which the check refuses. */
                if (fa_bound_dot(&method, p->d, abs_dot, &dot_bound) != FA_OK)
                    dot_bound = NAN;
                bound[at + j] = dot_bound + REFERENCE_RELATIVE_ERROR * abs_dot;
            }
        }
}

/** The running max @p m raised by tile @p t of a row's scores (BC @p bc per tile), NaN kept. */
static float raise_max(float m, const float *row_scores, int bc, int64_t t)
{
    for (int j = 0; j < bc; ++j)
        m = fa_max_nan(m, row_scores[t * bc + j]);
    return m;
}

void model_running_max(int version, const tile_problem *p, const float *scores, float *max)
{
    const int bc = tile_keys(version);
    const int64_t tiles = tile_key_tiles(version, p->nk);
    for (int64_t row = 0; row < p->heads * p->nq; ++row) {
        float m = -INFINITY;
        for (int64_t t = 0; t < tiles; ++t) {
            m = raise_max(m, scores + row * tiles * bc, bc, t);
            max[row * tiles + t] = m;
        }
    }
}

void judge_running_max(int version, const tile_problem *p, const float *scores, double *ref,
                       double *bound)
{
    const int bc = tile_keys(version);
    const int64_t tiles = tile_key_tiles(version, p->nk);
    for (int64_t row = 0; row < p->heads * p->nq; ++row) {
        float m = -INFINITY;
        for (int64_t t = 0; t < tiles; ++t) {
            m = raise_max(m, scores + row * tiles * bc, bc, t);
            ref[row * tiles + t] = (double)m;
            bound[row * tiles + t] = 0.0;
        }
    }
}

/** exp2 of an fp32 argument and its bound: the exp budget relative, 2^-126 for subnormal results. */
static void exp2_judged(float x, double *ref, double *bound)
{
    *ref = exp2((double)x);
    /* exp2(-inf) = 0 exactly (a masked or empty weight), and NaN stays NaN. */
    *bound = isinf(x) || isnan(x)
                 ? 0.0
                 : (FA_BOUND_EXP_BUDGET + REFERENCE_RELATIVE_ERROR) * *ref + FA_BOUND_MIN_NORMAL32;
}

void judge_weights(int version, const tile_problem *p, const float *scores, const float *max,
                   double *weight_ref, double *weight_bound, double *alpha_ref,
                   double *alpha_bound)
{
    const int bc = tile_keys(version);
    const int64_t tiles = tile_key_tiles(version, p->nk);
    const float c = tile_exp2_scale(p->scale);
    for (int64_t row = 0; row < p->heads * p->nq; ++row) {
        float m_old = -INFINITY;
        for (int64_t t = 0; t < tiles; ++t) {
            const float m_new = max[row * tiles + t];
            exp2_judged(tile_alpha_argument(m_old, m_new, c), &alpha_ref[row * tiles + t],
                        &alpha_bound[row * tiles + t]);
            for (int j = 0; j < bc; ++j) {
                const int64_t at = (row * tiles + t) * bc + j;
                /* A key past the end scores -inf whatever the kernel wrote there (M18 judges
                 * that): its weight is exp2(-inf) = 0 exactly, or NaN in a row whose max is NaN. */
                const float s = t * bc + j >= p->nk ? -INFINITY : scores[at];
                exp2_judged(tile_weight_argument(s, m_new, c), &weight_ref[at], &weight_bound[at]);
            }
            m_old = m_new;
        }
    }
}

/*
 * The bound of M21. Given the kernel's own alphas a_t >= 0 and weights
 * p_tj >= 0 (inputs here, judged by M20), the exact running sums are
 *   L_t = a_t L_(t-1) + S_t,  S_t = sum_j p_tj,  L_(-1) = 0.
 *
 * Version 1: every step computes l_t = fl(a_t l_(t-1) + p_t1 + ... + p_tBC),
 * BC + 1 non-negative terms (a_t l_(t-1) enters the FMA exactly), with at
 * most BC + 1 roundings whatever the order of the additions, so
 *   l_t = a_t l_(t-1) + S_t + d_t,  |d_t| <= g (a_t l_(t-1) + S_t),  g = gamma_(BC+1)
 * (a sum of n non-negative terms, in any order, is within gamma_(n-1) of the
 * exact sum: Higham, Accuracy and Stability of Numerical Algorithms, section
 * 4.2; one more rounding covers an a_t l rounded on its own).
 * With e_t = l_t - L_t and l_(t-1) <= L_(t-1) + |e_(t-1)|:
 *   |e_t| <= a_t |e_(t-1)| + g (L_t + a_t |e_(t-1)|),
 * so |e_t| <= B_t with B_(-1) = 0 and
 *   B_t = (1 + g) a_t B_(t-1) + g L_t:
 * each step's error g L_t, carried forward scaled by every later alpha.
 *
 * Version 2: each of the 4 threads of a quad keeps its own partial
 * l^k_t = fl(a_t l^k_(t-1) + its 16 weights), 17 <= BC + 1 terms per step,
 * and the written l_t = fl(sum_k l^k_t). The exact partials add up to L_t
 * (the recursion is linear), so the same recursion bounds sum_k |e^k_t| by
 * B_t, and the final 4-term sum adds gamma_3 (L_t + B_t).
 *
 * Plus: 2^-149 per step for an FMA whose result is subnormal (additions of
 * subnormals are exact), and the error of L_t itself, summed in double from
 * (BC + 2) (t + 1) non-negative terms.
 */
void judge_sums(int version, const tile_problem *p, const float *weights, const float *alpha,
                double *ref, double *bound)
{
    const int bc = tile_keys(version);
    const int64_t tiles = tile_key_tiles(version, p->nk);
    const double g = fa_gamma((double)(bc + 1), FA_BOUND_U32);
    const double g_partials = version == 2 ? fa_gamma(QUAD_PARTIALS - 1, FA_BOUND_U32) : 0.0;
    for (int64_t row = 0; row < p->heads * p->nq; ++row) {
        double exact = 0.0, carried = 0.0;
        for (int64_t t = 0; t < tiles; ++t) {
            const double a = (double)alpha[row * tiles + t];
            double sum = 0.0;
            for (int j = 0; j < bc; ++j)
                sum += (double)weights[(row * tiles + t) * bc + j];
            exact = a * exact + sum;
            carried = (1.0 + g) * a * carried + g * exact + MIN_SUBNORMAL32;
            const double reference_error =
                fa_gamma((double)((bc + 2) * (t + 1)), 0x1p-53) * exact;
            ref[row * tiles + t] = exact;
            bound[row * tiles + t] = carried + g_partials * (exact + carried) + reference_error;
        }
    }
}

/* ---- the CPU model of version 1 ---------------------------------------------------------- */

/** Version 1's score of query @p i and key @p j of head @p h: one fmaf chain, k = 0 .. d - 1. */
static float model1_score(const tile_problem *p, int64_t h, int64_t i, int64_t j)
{
    const int64_t q0 = (h * p->nq + i) * p->d, k0 = (h * p->nk + j) * p->d;
    float s = 0.0f;
    for (int64_t c = 0; c < p->d; ++c)
        s = fmaf(fa_load(p->q, p->dtype, q0 + c), fa_load(p->k, p->dtype, k0 + c), s);
    return s;
}

void model1_scores(const tile_problem *p, float *scores)
{
    const int64_t keys = tile_key_tiles(1, p->nk) * TILE1_BC;
    for (int64_t h = 0; h < p->heads; ++h)
        for (int64_t i = 0; i < p->nq; ++i)
            for (int64_t j = 0; j < keys; ++j)
                scores[(h * p->nq + i) * keys + j] = j < p->nk ? model1_score(p, h, i, j) : -INFINITY;
}

/** The sum of one row's BC weights of a tile as tile1_rowsum() forms it. */
static float model1_tile_sum(const float *p)
{
    float lane[ROW_LANES];
    for (int tx = 0; tx < ROW_LANES; ++tx)
        lane[tx] = p[tx] + p[tx + ROW_LANES];
    return fa_model_lanes_reduce(FA_REDUCE_SUM, lane, ROW_LANES); /* fa_lanes_sum<16>()'s order */
}

_Static_assert(TILE1_BC == 2 * ROW_LANES, "a level-1 row: 16 lanes of 2 keys");

void model1_sums(const tile_problem *p, const float *weights, const float *alpha, float *sum)
{
    const int64_t tiles = tile_key_tiles(1, p->nk);
    for (int64_t row = 0; row < p->heads * p->nq; ++row) {
        float l = 0.0f;
        for (int64_t t = 0; t < tiles; ++t) {
            const float tile_sum = model1_tile_sum(weights + (row * tiles + t) * TILE1_BC);
            l = fmaf(alpha[row * tiles + t], l, tile_sum);
            sum[row * tiles + t] = l;
        }
    }
}

void model_weights(int version, const tile_problem *p, const float *scores, const float *max,
                   float c, float *weights, float *alpha)
{
    const int bc = tile_keys(version);
    const int64_t tiles = tile_key_tiles(version, p->nk);
    for (int64_t row = 0; row < p->heads * p->nq; ++row) {
        float m_old = -INFINITY;
        for (int64_t t = 0; t < tiles; ++t) {
            const float m_new = max[row * tiles + t];
            alpha[row * tiles + t] = exp2f(tile_alpha_argument(m_old, m_new, c));
            for (int j = 0; j < bc; ++j) {
                const int64_t at = (row * tiles + t) * bc + j;
                weights[at] = exp2f(tile_weight_argument(scores[at], m_new, c));
            }
            m_old = m_new;
        }
    }
}

void model1_output(const tile_problem *p, float *o, float *lse)
{
    const int64_t tiles = tile_key_tiles(1, p->nk);
    const float c = tile_exp2_scale(p->scale);
    float s[TILE1_BC], w[TILE1_BC];
    for (int64_t h = 0; h < p->heads; ++h)
        for (int64_t i = 0; i < p->nq; ++i) {
            float *out = o + (h * p->nq + i) * p->d;
            float m = -INFINITY, l = 0.0f;
            for (int64_t col = 0; col < p->d; ++col)
                out[col] = 0.0f;
            for (int64_t t = 0; t < tiles; ++t) {
                float m_new = m;
                for (int j = 0; j < TILE1_BC; ++j) {
                    const int64_t key = t * TILE1_BC + j;
                    s[j] = key < p->nk ? model1_score(p, h, i, key) : -INFINITY;
                    m_new = fa_max_nan(m_new, s[j]);
                }
                const float alpha = exp2f(tile_alpha_argument(m, m_new, c));
                for (int j = 0; j < TILE1_BC; ++j)
                    w[j] = exp2f(tile_weight_argument(s[j], m_new, c));
                l = fmaf(alpha, l, model1_tile_sum(w));
                for (int64_t col = 0; col < p->d; ++col) {
                    float acc = out[col] * alpha;
                    for (int j = 0; j < TILE1_BC; ++j) {
                        const int64_t key = t * TILE1_BC + j;
                        /* rows past nk are zero in the V tile */
                        const float v = key < p->nk
                                            ? fa_load(p->v, p->dtype, (h * p->nk + key) * p->d + col)
                                            : 0.0f;
                        acc = fmaf(w[j], v, acc);
                    }
                    out[col] = acc;
                }
                m = m_new;
            }
            const float inverse = l == 0.0f ? 0.0f : 1.0f / l;
            for (int64_t col = 0; col < p->d; ++col)
                out[col] *= inverse;
            lse[h * p->nq + i] = l == 0.0f ? -INFINITY : fmaf(p->scale, m, logf(l));
        }
}
