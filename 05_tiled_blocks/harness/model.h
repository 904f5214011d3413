/**
 * @file model.h
 * @brief The judges of stage 05's six blocks, and a CPU model of version 1's
 *        arithmetic where it can be replayed bit for bit (plain C, no CUDA).
 *
 * **Each block is judged on its own.** A trace of milestone M runs the blocks
 * of M17..M (tiles.h), so a naive check of M20 would also judge M18 and M19.
 * Instead each judge takes what the earlier blocks of the *same*
 * implementation produced on the same inputs (their own traces: the blocks
 * are deterministic, so the M20 trace recomputes exactly the scores and
 * maxima that the M18 and M19 traces wrote) and asks only whether block M did
 * its own step right:
 *
 * - M17, judge_tile_load(): the inputs widened, rows past the end 0; bit for bit.
 * - M18, judge_scores(): q.k in double (fa_ref_dot()), -inf past nk; within
 *   fa_bound_dot() of the declared accumulation.
 * - M19, judge_running_max(): the running max of the implementation's own
 *   M18 scores; exact (max never rounds), NaN kept.
 * - M20, judge_weights(): exp2 of the kernel's own argument, formed in fp32
 *   from its own scores and maxima; within FA_BOUND_EXP_BUDGET relative plus
 *   2^-126; tails exactly 0 (NaN in a NaN row).
 * - M21, judge_sums(): l_t = alpha_t l_(t-1) + sum_j p_tj in double from its
 *   own weights and alphas; within a recursive gamma_(BC+1) bound.
 * - M22, fa_attention_reference() of tile_attn_problem() under tile_method();
 *   fa_attention_covers(), end to end.
 *
 * Why this isolates M20 (the same reasoning holds for M19 and M21): the
 * argument x = fl(s c - fl(m c)) (one FFMA) of every weight is recomputed in C
 * with exactly the roundings of tile1_exp() / tile2_exp(), from the s and m the
 * implementation's M18 and M19 produced. Whatever error those carry was
 * judged by their own milestones; here it is an input, so the only freedom
 * left to M20 is the exp2 itself, held to its documented 2 ulp (plus the half
 * ulp of the correctly rounded value) or 2^-126 for results that may be
 * subnormal. A wrong block misses that by orders of magnitude: log2(e)
 * forgotten turns 2^(x) into 2^(x / 1.44), the scale applied twice scales x
 * by 1/sqrt(d), a wrong max shifts x by a score gap; each changes a weight by
 * a factor, not by an ulp (test_stage05 plants them and requires err/bound >
 * 10). The chained judges need the earlier traces to have written every
 * element (checks.c verifies that first and names the earlier milestone).
 *
 * Arrays: scores and weights are [heads][nq][T BC], the per-tile values
 * (max, correction, sum) [heads][nq][T], o [heads][nq][d], lse [heads][nq],
 * with T = tile_key_tiles() and BC = tile_keys() of the version. The host
 * problems are ::tile_problem structs whose q, k, v point to host arrays.
 */
#ifndef TILES_MODEL_H
#define TILES_MODEL_H

#include <stdint.h>

#include "fa_attention_ref.h"
#include "fa_check.h"
#include "fa_math.h"
#include "tiles.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Elements of every array one trace writes (0 for the arrays its milestone does not write). */
typedef struct tile_sizes {
    int64_t key_tiles;    /**< T */
    int64_t tile_bytes;   /**< bytes of a q/k/v_tiles element: 4 (version 1 widens), else the dtype's */
    int64_t q_tiles, k_tiles, v_tiles; /**< M17 */
    int64_t scores;       /**< M18 */
    int64_t max;          /**< M19 */
    int64_t weights, correction; /**< M20 */
    int64_t sum;          /**< M21 */
    int64_t o, lse;       /**< M22 */
} tile_sizes;

/**
 * The arrays milestone @p milestone of version @p version writes for
 * problem @p p (sizes >= 0). A problem without query rows or heads writes
 * nothing (the launcher returns before launching): every count is 0.
 */
tile_sizes tile_sizes_of(int milestone, int version, const tile_problem *p);

/** c = scale log2(e), rounded to fp32 as the trace kernels form it. */
float tile_exp2_scale(float scale);

/** The argument of a weight, fmaf(s, c, -(offset(m_new) c)): one FFMA, as tile1_exp() forms it. */
float tile_weight_argument(float s, float m_new, float c);

/** The argument of alpha, (m_old - offset(m_new)) c, rounded twice as tile1_exp() rounds it. */
float tile_alpha_argument(float m_old, float m_new, float c);

/** A rank-3 shape [heads][rows][cols] whose coordinates read "(head h, row i, <col_name> j)". */
fa_shape tile_shape(int64_t heads, int64_t rows, int64_t cols, const char *col_name);

/** Host view of @p p (contiguous [heads][n][d], one batch) for fa_attention_reference(). */
fa_attn_problem tile_attn_problem(const tile_problem *p);

/* ---- the judges: the expected value (ref) and its bound per element ------------------- */

/**
 * M17: the tile array copied from input @p x ([heads][rows][d] of p->dtype):
 * ref[h][r][c] = x[h][r][c] widened exactly for r < @p rows, and +0 for the
 * padding rows up to @p padded_rows. Compared bit for bit (bound NULL):
 * version 1 stores the widened fp32, version 2 the 16-bit input itself,
 * which widens to the same float.
 */
void judge_tile_load(const tile_problem *p, const void *x, int64_t rows, int64_t padded_rows,
                     double *ref);

/**
 * M18: raw scores [heads][nq][T BC]: q_i . k_j in double for j < nk, with
 * bound fa_bound_dot(tile_method(version, dtype), d, sum |q k|) plus the
 * reference's own error; -inf with bound 0 (exact) for j >= nk.
 */
void judge_scores(int version, const tile_problem *p, double *ref, double *bound);

/**
 * M19: ref[h][i][t] = the max, NaN kept (fa_max_nan()), of @p scores (the
 * implementation's own M18 output) over keys 0 .. (t + 1) BC - 1; bound 0
 * (compared by value, so a zero max may have either sign).
 */
void judge_running_max(int version, const tile_problem *p, const float *scores, double *ref,
                       double *bound);

/**
 * M20: from the implementation's own @p scores (M18) and @p max (M19),
 * weight [heads][nq][T BC] = exp2(tile_weight_argument()) and alpha
 * [heads][nq][T] = exp2(tile_alpha_argument()) with m_old = -inf before
 * tile 0, each within FA_BOUND_EXP_BUDGET relative plus 2^-126 absolute;
 * weights of keys j >= nk exactly 0 (those of a score of -inf: NaN in a
 * row whose max is NaN, as every weight of such a row).
 */
void judge_weights(int version, const tile_problem *p, const float *scores, const float *max,
                   double *weight_ref, double *weight_bound, double *alpha_ref,
                   double *alpha_bound);

/**
 * M21: from the implementation's own M20 @p weights and @p alpha, the
 * running sums L_t = alpha_t L_(t-1) + sum_j p_tj (L_(-1) = 0) in double,
 * with a rigorous bound on any fp32 evaluation that sums BC + 1 terms per
 * step in any order, and (version 2) adds per-thread partial sums at the end
 * (model.c derives it).
 */
void judge_sums(int version, const tile_problem *p, const float *weights, const float *alpha,
                double *ref, double *bound);

/* ---- the CPU model of version 1 -------------------------------------------------------- */

/**
 * Version 1's scores, bit for bit: each q_i . k_j one fmaf chain over the
 * head dimension in order 0 .. d - 1 from +0, on the inputs widened to fp32;
 * -inf for keys j >= nk. [heads][nq][T BC].
 */
void model1_scores(const tile_problem *p, float *scores);

/** The running max after each tile (fa_max_nan(), the order does not matter): [heads][nq][T]. */
void model_running_max(int version, const tile_problem *p, const float *scores, float *max);

/**
 * Version 1's running sums given its weights and alphas, bit for bit: per
 * tile, lane tx adds p_tx + p_(tx + 16), the 16 lanes of a row sum by the xor
 * butterfly of fa_lanes_sum() (offsets 8, 4, 2, 1), and
 * l = fmaf(alpha, l, tile sum). [heads][nq][T].
 */
void model1_sums(const tile_problem *p, const float *weights, const float *alpha, float *sum);

/**
 * Weights and alphas as tile1_exp() / tile2_exp() form them, with factor
 * @p c (the blocks' own is tile_exp2_scale(scale); a test passes a wrong one
 * to plant a mistake) and the host's exp2f: the arguments are the kernel's,
 * the exp2 is not, so judged by judge_weights(), not bit for bit.
 */
void model_weights(int version, const tile_problem *p, const float *scores, const float *max,
                   float c, float *weights, float *alpha);

/**
 * Version 1 end to end on the CPU: the blocks in the order of the trace
 * kernel (scores, max, weights, l, O = alpha O + P V by fmaf in key order,
 * o / l by a reciprocal, lse = fmaf(scale, m, logf(l))) with the host's
 * exp2f and logf; o [heads][nq][d], lse [heads][nq]. Judged by
 * fa_attention_covers() under tile_method(1, dtype).
 */
void model1_output(const tile_problem *p, float *o, float *lse);

#ifdef __cplusplus
}
#endif

#endif /* TILES_MODEL_H */
