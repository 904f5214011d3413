/**
 * @file fixtures.c
 * @brief The stage-04 cases by hand, and the random row patterns.
 *
 * Notation: chunks are separated by |, e^-1 = 0.36787944117144233,
 * e^-2 = 0.1353352832366127, e^-3 = 0.049787068367863944. After chunk t:
 * m_t the running max, alpha_t = exp(m_(t-1) - m_t) (0 from the empty state,
 * m_(-1) = -inf), l_t = alpha_t l_(t-1) + sum of the chunk's exp(x - m_t),
 * o_t the same with each weight times its value.
 */
#include "fixtures.h"

#include <math.h>

#include "fa_math.h"

#define NEG_INF (-INFINITY)

const online_fixture online_fixtures[] = {
    /* The worked example of the lesson: x = [1, 2 | 4, 3], v = [0, 1 | 2, 3].
     * Chunk 0: m_0 = 2, alpha_0 = 0, weights e^(1-2) = e^-1 and e^0 = 1:
     *   l_0 = 1 + e^-1 = 1.3678794411714423, o_0 = 0 e^-1 + 1 * 1 = 1.
     * Chunk 1: the max rises to m_1 = 4, alpha_1 = e^(2-4) = e^-2, weights
     *   e^0 = 1 and e^(3-4) = e^-1:
     *   l_1 = e^-2 l_0 + (1 + e^-1) = (1 + e^-1)(1 + e^-2) = 1.5530017927759192,
     *   o_1 = e^-2 o_0 + (2 * 1 + 3 e^-1) = 2 + 3 e^-1 + e^-2 = 3.23897360675094.
     * Check with the definition: l = e^-3 + e^-2 + e^0 + e^-1 against m = 4. The
     * softmax is [e^-3, e^-2, 1, e^-1] / l_1 and lse = 4 + ln l_1. */
    {"worked example [1, 2 | 4, 3]", 4, 2, {1, 2, 4, 3}, {0, 1, 2, 3},
     {2, 4}, {0, 0.1353352832366127}, {1.3678794411714423, 1.5530017927759192},
     {1, 3.23897360675094},
     {0.03205860328008498, 0.08714431874203256, 0.6439142598879722, 0.2368828180899101},
     4.440189698561196, false},
    /* The same entries with the max in the first chunk: x = [4, 3 | 1, 2],
     * v = [2, 3 | 0, 1]. m = [4, 4], no rise: alpha_1 = e^0 = 1 exactly.
     * l_0 = 1 + e^-1, l_1 = l_0 + e^-3 + e^-2 = 1.5530017927759188 (the same l
     * as above, summed in another order); o_0 = 2 + 3 e^-1 = 3.103638323514327,
     * o_1 = o_0 + 0 e^-3 + 1 e^-2 = 3.23897360675094. */
    {"max in the first chunk [4, 3 | 1, 2]", 4, 2, {4, 3, 1, 2}, {2, 3, 0, 1},
     {4, 4}, {0, 1}, {1.3678794411714423, 1.5530017927759188},
     {3.103638323514327, 3.23897360675094},
     {0.6439142598879722, 0.2368828180899101, 0.03205860328008498, 0.08714431874203256},
     4.440189698561196, false},
    /* A masked chunk between two allowed ones: x = [5, 5 | -inf, -inf | 5, 5].
     * m = [5, 5, 5]; alpha = [0, 1, 1]; the masked chunk adds weights
     * e^(-inf - 5) = 0: l = [2, 2, 4]; o = [1 + 2, 3 + 0, 3 + 3 + 4] = [3, 3, 10]
     * (the NaN values of the masked entries are never read). p = 1/4 on the
     * allowed entries, 0 on the masked; lse = 5 + ln 4 = 6.386294361119891. */
    {"masked chunk in the middle", 6, 2, {5, 5, NEG_INF, NEG_INF, 5, 5}, {1, 2, NAN, NAN, 3, 4},
     {5, 5, 5}, {0, 1, 1}, {2, 2, 4}, {3, 3, 10},
     {0.25, 0.25, 0, 0, 0.25, 0.25}, 6.386294361119891, true},
    /* The first chunk all masked: x = [-inf, -inf | 3, 3]. After chunk 0 the
     * state is still empty: m_0 = -inf, and without the guard the weights
     * would be exp(-inf - (-inf)) = NaN; with it they are exp(-inf - 0) = 0,
     * so l_0 = 0, o_0 = 0, alpha_0 = 0. Chunk 1: m_1 = 3, alpha_1 =
     * exp(-inf - 3) = 0, l_1 = 0 * 0 + 2 = 2, o_1 = 1 + 2 = 3.
     * p = [0, 0, 1/2, 1/2], lse = 3 + ln 2 = 3.6931471805599454. */
    {"masked first chunk", 4, 2, {NEG_INF, NEG_INF, 3, 3}, {NAN, NAN, 1, 2},
     {NEG_INF, 3}, {0, 0}, {0, 2}, {0, 3},
     {0, 0, 0.5, 0.5}, 3.6931471805599454, true},
    /* No allowed entry: every chunk masked. The state stays empty (m = -inf,
     * l = 0, o = 0, alpha = 0), the row ends with p = 0 (0 / 0 is not
     * computed) and lse = -inf. */
    {"no allowed entry", 4, 2, {NEG_INF, NEG_INF, NEG_INF, NEG_INF}, {NAN, NAN, NAN, NAN},
     {NEG_INF, NEG_INF}, {0, 0}, {0, 0}, {0, 0},
     {0, 0, 0, 0}, NEG_INF, true},
    /* Equal entries, chunks of 3 over 8 (the last chunk short):
     * x = [1/2, 1/2, 1/2 | 1/2, 1/2, 1/2 | 1/2, 1/2], v = [1 .. 8].
     * m = 1/2 throughout, alpha = [0, 1, 1], every weight 1: l = [3, 6, 8],
     * o = [1+2+3, 6+4+5+6, 21+7+8] = [6, 21, 36]; p = 1/8 each,
     * lse = 1/2 + ln 8 = 2.5794415416798357. */
    {"equal entries, short last chunk", 8, 3, {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f},
     {1, 2, 3, 4, 5, 6, 7, 8},
     {0.5, 0.5, 0.5}, {0, 1, 1}, {3, 6, 8}, {6, 21, 36},
     {0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125}, 2.5794415416798357, true},
    /* One entry, chunk longer than the row: x = [7], v = [-3]. m = 7,
     * alpha = 0, l = e^0 = 1, o = -3; p = 1; lse = 7 + ln 1 = 7 exactly. */
    {"one entry", 1, 4, {7}, {-3}, {7}, {0}, {1}, {-3}, {1}, 7, true},
    /* A NaN entry: x = [1, 2 | NaN, 3 | 4, 5], v = [1 .. 6]. Chunk 0 is the
     * worked example's first chunk: m_0 = 2, alpha_0 = 0, l_0 = e^-1 + 1 =
     * 1.3678794411714423, o_0 = 1 e^-1 + 2 = 2.3678794411714423. Chunk 1 holds
     * the NaN: the max keeps it (fa_max_nan, where fmaxf would give 3), so
     * m_1 = NaN, alpha_1 = exp(2 - NaN) = NaN and every weight exp(x - NaN) is
     * NaN: l, o stay NaN to the end, and so do every p and lse. The other
     * entries cannot hide it. */
    {"a NaN entry", 6, 2, {1, 2, NAN, 3, 4, 5}, {1, 2, 3, 4, 5, 6},
     {2, NAN, NAN}, {0, NAN, NAN}, {1.3678794411714423, NAN, NAN},
     {2.3678794411714423, NAN, NAN},
     {NAN, NAN, NAN, NAN, NAN, NAN}, NAN, false},
    /* An empty row (n = 0): no chunk, no probability; lse = -inf. */
    {"empty row", 0, 2, {0}, {0}, {0}, {0}, {0}, {0}, {0}, NEG_INF, true},
};
const int online_fixture_count = (int)(sizeof online_fixtures / sizeof online_fixtures[0]);

const online_attn_fixture online_attn_fixtures[] = {
    /* The worked example as attention: q = [1, 0], k_j = [x_j, 0] with
     * x = [1, 2 | 4, 3], so s_j = x_j exactly; v_j = [j, 1]. o = p . v:
     * column 0 = sum_j j p_j = (e^-2 + 2 + 3 e^-1) / l_1 = 2.085621292787707,
     * column 1 = sum_j p_j = 1; lse = 4 + ln l_1 = 4.440189698561196. */
    {"worked example as attention", 1, 4, 2, FA_MASK_NONE, 2, 1.0f,
     {1, 0}, {1, 0, 2, 0, 4, 0, 3, 0}, {0, 1, 1, 1, 2, 1, 3, 1},
     {2.085621292787707, 1.0}, {4.440189698561196}, false},
    /* Uniform scores: q = 0 makes every s_j = 0, every weight 1, every
     * correction 1. Chunk 0: l = 2, o = [1+3, 2+4]; chunk 1: l = 4,
     * o = [4+5+7, 6+6+8] = [16, 20]; o / l = [4, 5], the mean of the values.
     * lse = 0 + ln 4 = 1.3862943611198906. */
    {"uniform scores", 1, 4, 2, FA_MASK_NONE, 2, 1.0f,
     {0, 0}, {1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 3, 4, 5, 6, 7, 8},
     {4, 5}, {1.3862943611198906}, true},
    /* Bottom-right causal with nq = 3 > nk = 2: row i sees keys j <= i - 1.
     * Every score is q . k = 1 * 2 = 2. Row 0 sees no key: o = 0, lse = -inf.
     * Row 1 sees key 0: o = v_0 = [1, -2], lse = 2 + ln 1 = 2. Row 2 sees
     * both: one key per chunk, l = 1 then 1 * 1 + 1 = 2, o = ([1, -2] +
     * [3, 4]) / 2 = [2, 1], lse = 2 + ln 2 = 2.6931471805599454. */
    {"causal bottom-right, a row with no key", 3, 2, 2, FA_MASK_CAUSAL_BOTTOM_RIGHT, 1, 1.0f,
     {1, 0, 1, 0, 1, 0}, {2, 0, 2, 0}, {1, -2, 3, 4},
     {0, 0, 1, -2, 2, 1}, {NEG_INF, 2, 2.6931471805599454}, true},
    /* A masked dominant key: causal top-left, s = [0, 50]. Row 0 must not see
     * key 1: o = v_0 = 3, lse = 0. Row 1 sees it: p = [e^-50, 1] / (1 + e^-50),
     * o = (3 e^-50 - 7) / (1 + e^-50) = -7 + 10 e^-50 / (1 + e^-50), -7.0 in
     * double; lse = 50 + ln(1 + e^-50) = 50.0 in double. */
    {"masked dominant key", 2, 2, 1, FA_MASK_CAUSAL_TOP_LEFT, 2, 1.0f,
     {1, 1}, {0, 50}, {3, -7},
     {3, -7}, {0, 50}, false},
};
const int online_attn_fixture_count =
    (int)(sizeof online_attn_fixtures / sizeof online_attn_fixtures[0]);

/* ---- random rows --------------------------------------------------------------------------- */

/** The extreme entries: far beyond any sum's range, but exact differences of nothing. */
static const double EXTREME_SCORE = 1e4;
/** How far above the rest the late maximum sits, in spreads. */
static const double LATE_MAX_SPREADS = 20.0;
/** Dyadic entries are k / DYADIC_DENOMINATOR with |k| <= DYADIC_RANGE. */
static const int64_t DYADIC_DENOMINATOR = 64;
static const int64_t DYADIC_RANGE = 1024;

const char *online_row_pattern_name(online_row_pattern pattern)
{
    switch (pattern) {
    case ONLINE_ROW_GAUSSIAN: return "gaussian";
    case ONLINE_ROW_RISING: return "rising";
    case ONLINE_ROW_FALLING: return "falling";
    case ONLINE_ROW_LATE_MAX: return "late max";
    case ONLINE_ROW_MASKED: return "masked";
    case ONLINE_ROW_EXTREME: return "extreme";
    case ONLINE_ROW_DYADIC: return "dyadic";
    case ONLINE_ROW_PATTERN_COUNT: break;
    }
    return "unknown";
}

void online_fill_row(float *x, int64_t n, int64_t chunk, online_row_pattern pattern,
                     double spread, fa_rng *rng)
{
    for (int64_t j = 0; j < n; ++j) {
        const double normal = spread * fa_rng_normal(rng);
        const double position = n > 1 ? (double)j / (double)(n - 1) : 0.0;
        switch (pattern) {
        case ONLINE_ROW_RISING: x[j] = (float)(spread * (2.0 * position - 1.0)); break;
        case ONLINE_ROW_FALLING: x[j] = (float)(spread * (1.0 - 2.0 * position)); break;
        case ONLINE_ROW_MASKED: {
            const int64_t chunk_index = j / chunk;
            const bool masked_chunk = chunk_index % 3 == 0;
            x[j] = masked_chunk || fa_rng_uniform(rng) < 0.25 ? -INFINITY : (float)normal;
            break;
        }
        case ONLINE_ROW_EXTREME: {
            const double pick = fa_rng_uniform(rng);
            x[j] = pick < 0.125 ? (float)EXTREME_SCORE
                   : pick < 0.25 ? (float)-EXTREME_SCORE
                                 : (float)normal;
            break;
        }
        case ONLINE_ROW_DYADIC:
            x[j] = (float)((double)fa_rng_int(rng, -DYADIC_RANGE, DYADIC_RANGE) /
                           (double)DYADIC_DENOMINATOR);
            break;
        case ONLINE_ROW_GAUSSIAN:
        case ONLINE_ROW_LATE_MAX:
        case ONLINE_ROW_PATTERN_COUNT: x[j] = (float)normal; break;
        }
    }
    if (pattern == ONLINE_ROW_LATE_MAX && n > 0) {
        float max = x[0];
        for (int64_t j = 1; j < n; ++j)
            max = fa_max_nan(max, x[j]);
        x[n - 1] = (float)(max + LATE_MAX_SPREADS * spread);
    }
}
