/**
 * @file fa_bound.c
 * @brief The bound of one attention row under a declared method (docs/numerics.md).
 *
 * Notation of the derivation (docs/numerics.md): s_j exact scores, m their
 * maximum, p_j = exp(s_j - m) / l, m_t(j) the running maximum when key j's
 * block is exponentiated, eta_j a bound on the error of key j's exponent, so
 * the kernel's weight is p_j (1 + h_j) with |h_j| <= expm1(eta_j).
 */
#include "fa_bound.h"

#include <math.h>
#include <stdbool.h>

#include "fa_half.h"
#include "fa_index.h"
#include "fa_math.h"
#include "fa_reference.h"

/* Unit roundoffs (fp32: FA_BOUND_U32). A truncating sum loses up to one ulp
 * per step, twice u. Flush-to-zero replaces a result below
 * FA_BOUND_MIN_NORMAL32 by 0. */
#define U_TRUNCATE 0x1p-23
#define U64 0x1p-53
/* __expf: 2 + floor(1.173 |x|) ulp (CUDA Math API), from the rounded value. */
#define FAST_EXP_ULP_BASE 2.5
#define FAST_EXP_ULP_SLOPE 1.173
/* rcp.approx.f32 is within 1 ulp; with the half ulp from the rounded value and
 * the multiply by it, 1.5 * 2u + u = 4u. A division is correctly rounded: u. */
#define RCP_NORM_BUDGET (4.0 * FA_BOUND_U32)
#define DIV_NORM_BUDGET FA_BOUND_U32
/* logf / log2f are within 1 ulp (2u |ln l|); twice that covers a log2 then a
 * multiply by ln 2. */
#define LOG_BUDGET (4.0 * FA_BOUND_U32)
/* The lse a kernel writes is m_k + ln l where its weights were shifted by m_w:
 * both roundings of m (m c and m c log2 e) and of the scale constants differ
 * by at most 4u |m|; the final sum and a ln 2 conversion add 2u |lse|. */
#define LSE_SHIFT_BUDGET (4.0 * FA_BOUND_U32)
#define LSE_SUM_BUDGET (2.0 * FA_BOUND_U32)
/* Products the tensor core aligns to one exponent before truncating them
 * (Fasi, Higham, Mikaitis, Pranesh 2021 measured 4 to 16; 8 is safe because
 * each hardware block costs at most its terms plus two roundings). */
enum { TC_ALIGN_BLOCK = 8 };
/* A weight whose largest possible value in its block's units is below 2^-124
 * is judged by its size rather than by a relative error: flushed, subnormal
 * or exact, it moves o by at most 2^-123 |v - o| (l >= 1). */
#define TINY_WEIGHT 0x1p-123
#define LN_TINY_WEIGHT (-124.0 * 0.69314718055994530942)
#define LN_MIN_NORMAL32 (-126.0 * 0.69314718055994530942)
/* Second-order slack for the double reference's own error. */
#define REFERENCE_SLACK 1.01

_Static_assert(TC_ALIGN_BLOCK > 0, "the tensor-core block holds at least one product");

/** Budget of one exp evaluation at argument @p arg (natural units). */
static double exp_budget(fa_exp_method method, double arg)
{
    if (method == FA_EXP_FAST)
        return (FAST_EXP_ULP_BASE + floor(FAST_EXP_ULP_SLOPE * fabs(arg))) * 2.0 * FA_BOUND_U32;
    return FA_BOUND_EXP_BUDGET;
}

/* Roundings of a truncating tensor-core sum of @p terms non-zero products
 * spread over @p blocks hardware blocks: each block truncates its terms but
 * the largest, plus the accumulator, plus one normalisation, so terms + 2
 * per block bounds it (K (1 + 2/b) for b = 8). One product added to a
 * zero accumulator is exact. */
static double tensor_core_roundings(int64_t terms, int64_t blocks)
{
    return terms <= 1 ? 0.0 : (double)terms + 2.0 * (double)blocks;
}

/*
 * gamma_n of @p n roundings of unit roundoff @p u in the sum @p what: it must
 * be finite (n u < 1), and below 1 (n u < 1/2) where @p below_one, since
 * 1 - gamma then divides the bound. Otherwise there is no finite bound, and
 * the message says so and what to do instead (@p remedy).
 */
static fa_status sum_gamma(const char *what, double n, double u, bool below_one, const char *remedy,
                           double *gamma)
{
    *gamma = fa_gamma(n, u);
    if (isinf(*gamma))
        return fa_fail(FA_ERR_UNSUPPORTED,
                       "attention bound: gamma_n with n*u >= 1 for %s (n = %.0f roundings, u = 2^%d): "
                       "no finite fp32 bound; %s",
                       what, n, ilogb(u), remedy);
    if (below_one && *gamma >= 1.0)
        return fa_fail(FA_ERR_UNSUPPORTED,
                       "attention bound: gamma_n >= 1 (n*u >= 1/2) for %s (n = %.0f roundings, "
                       "u = 2^%d): l's error may reach l, and 1 - gamma_n divides the bound, so it "
                       "is not finite; %s",
                       what, n, ilogb(u), remedy);
    return FA_OK;
}

/* What a row too long for its sums' gamma must do instead. */
static const char LONG_ROW_REMEDY[] = "rows of 2^23 keys or more must be judged per block";

/**
 * gamma of the q.k dot product: |fl(q.k) - q.k| <= gamma sum_d |q_d k_d| plus
 * 2^-126 per flushed product or partial sum (dot_error()).
 */
static fa_status dot_gamma(const fa_attn_method *m, int64_t head_dim, double *gamma)
{
    static const char remedy[] = "the head dimension is too large to judge";
    if (m->accumulation == FA_ACCUM_TENSOR_CORE)
        return sum_gamma("the q.k dot product",
                         tensor_core_roundings(head_dim, fa_ceil_div(head_dim, TC_ALIGN_BLOCK)),
                         U_TRUNCATE, false, remedy, gamma);
    /* A chain of D FFMAs rounds at most D times; one more covers a kernel
     * that multiplies q by the scale before the dot product. */
    return sum_gamma("the q.k dot product", (double)(head_dim + 1), FA_BOUND_U32, false, remedy,
                     gamma);
}

/** Bound on |fl(q.k) - q.k| (unscaled) for a dot product with sum |q_d k_d| = @p abs_dot. */
static double dot_error(double gamma, int64_t head_dim, double abs_dot)
{
    /* Flushed products or partial sums lose less than 2^-126 each. */
    return gamma * abs_dot + (double)head_dim * FA_BOUND_MIN_NORMAL32;
}

fa_status fa_bound_dot(const fa_attn_method *m, int64_t head_dim, double abs_dot, double *bound)
{
    double gamma = 0.0;
    FA_TRY(dot_gamma(m, head_dim, &gamma));
    *bound = dot_error(gamma, head_dim, abs_dot);
    return FA_OK;
}

/*
 * gamma of l and of P.V for a row of @p allowed keys whose allowed keys span
 * @p span positions, with @p rises rescales: l takes N - 1 fp32 additions and
 * R rescale multiplies, whatever the order; P.V the same chain for the
 * products p_j v_jc, plus the R rescales of O.
 */
static fa_status sum_gammas(const fa_attn_method *m, int64_t allowed, int64_t span, int64_t rises,
                            double *gamma_l, double *gamma_pv)
{
    const bool rounded_p = m->p_dtype != FA_F32;
    if (m->accumulation == FA_ACCUM_TENSOR_CORE) {
        const int64_t span_blocks = fa_ceil_div(span, TC_ALIGN_BLOCK) + 1;
        FA_TRY(sum_gamma("P.V", tensor_core_roundings(allowed, span_blocks) + (double)rises,
                         U_TRUNCATE, false, LONG_ROW_REMEDY, gamma_pv));
    } else {
        /* Products of a 16-bit P and 16-bit V are exact in fp32 (at most 22
         * bits), leaving N - 1 additions. An fp32 P rounds each product, and
         * may have been divided by l before P.V (softmax, then P.V): N + 1. */
        const bool exact_products = rounded_p && m->input_dtype != FA_F32;
        FA_TRY(sum_gamma("P.V", (double)(exact_products ? allowed - 1 + rises : allowed + 1 + rises),
                         FA_BOUND_U32, false, LONG_ROW_REMEDY, gamma_pv));
    }
    return sum_gamma("l", (double)(allowed - 1 + rises), FA_BOUND_U32, true, LONG_ROW_REMEDY, gamma_l);
}

fa_status fa_bound_row_supported(const fa_attn_method *method, int64_t keys, int64_t head_dim)
{
    double gamma_dot, gamma_l, gamma_pv;
    FA_TRY(dot_gamma(method, head_dim, &gamma_dot));
    if (keys <= 0)
        return FA_OK;
    /* The most a row of that many positions can have: every key allowed, a
     * rise in every block after the first. */
    const int64_t rises = method->block_n > 0 ? fa_ceil_div(keys, method->block_n) - 1 : 0;
    return sum_gammas(method, keys, keys, rises, &gamma_l, &gamma_pv);
}

/** Running maxima of one block order; scratch blocks[2 * nblocks]. */
typedef struct block_replay {
    double *running_max; /* [nblocks] m_t after block t, NAN for a block with no allowed key */
    double *later_rho;   /* [nblocks] rho of the rescales that follow block t in this order */
} block_replay;

/*
 * Replays the kernel's block loop in double: running maxima m_t, and the cost
 * rho_tau of every rescale. A block counts as a rise when its maximum could
 * exceed the running one once both carry their score errors, because a
 * kernel whose rounded maximum rises rescales even where the exact one ties.
 * Merges eta_j into eta[] (the larger of the orders) and the running max of
 * each key's block into mt_min[] / mt_max[]; returns the number of rises.
 */
static int64_t replay_order(const fa_attn_method *m, const fa_bound_row_input *in,
                            const double *score_err, bool reverse, block_replay *r,
                            double *eta, double *mt_min, double *mt_max)
{
    const int64_t n = in->keys;
    const int64_t block = m->block_n > 0 ? m->block_n : n;
    const int64_t nblocks = fa_ceil_div(n, block);
    const bool exp2_prescaled = m->exp_method == FA_EXP_EXP2_PRESCALED;
    int64_t rises = 0;

    double prev = -INFINITY, prev_tol = 0.0;
    for (int64_t step = 0; step < nblocks; step++) {
        const int64_t t = reverse ? nblocks - 1 - step : step;
        const int64_t end = (t + 1) * block < n ? (t + 1) * block : n;
        double bm = -INFINITY, btol = 0.0;
        for (int64_t j = t * block; j < end; j++) {
            if (in->score[j] > bm) {
                bm = in->score[j];
                btol = score_err[j] + 2.0 * FA_BOUND_U32 * fabs(in->score[j]);
            }
        }
        r->later_rho[t] = 0.0;
        if (bm == -INFINITY) {
            r->running_max[t] = NAN;
            continue;
        }
        const double mt = bm > prev ? bm : prev;
        if (prev > -INFINITY && bm + btol >= prev - prev_tol) {
            const double jump = mt - prev;
            r->later_rho[t] = 4.0 * FA_BOUND_U32 * jump + FA_BOUND_U32 * (fabs(mt) + fabs(prev)) +
                              exp_budget(m->exp_method, jump);
            rises++;
        }
        r->running_max[t] = mt;
        if (bm > prev) {
            prev = bm;
            prev_tol = btol;
        }
    }
    /* Turn each block's own rescale cost into the sum over the blocks after it. */
    double after = 0.0;
    for (int64_t step = nblocks - 1; step >= 0; step--) {
        const int64_t t = reverse ? nblocks - 1 - step : step;
        const double own = r->later_rho[t];
        r->later_rho[t] = after;
        after += own;
    }
    for (int64_t j = 0; j < n; j++) {
        const double s = in->score[j];
        if (s == -INFINITY)
            continue;
        const int64_t t = j / block;
        const double mt = r->running_max[t];
        const double gap = fabs(s - mt);
        /* exp2 with log2(e) folded into one FFMA: the FFMA, the rounded
         * constant and the subtraction cost 3u |s - m_t|, the rounded m_t c
         * log2(e) u |m_t|. expf on scaled scores: u |s| for the scaling. */
        const double argument = exp2_prescaled ? 3.0 * FA_BOUND_U32 * gap + FA_BOUND_U32 * fabs(mt)
                                               : FA_BOUND_U32 * fabs(s) + 3.0 * FA_BOUND_U32 * gap;
        const double rescales = in->omitted == FA_BOUND_TERM_RESCALE ? 0.0 : r->later_rho[t];
        const double e = score_err[j] + argument + exp_budget(m->exp_method, gap) + rescales;
        eta[j] = fa_max_nan_double(eta[j], e);
        if (mt < mt_min[j])
            mt_min[j] = mt;
        if (mt > mt_max[j])
            mt_max[j] = mt;
    }
    return rises;
}

/* Smallest normal value and half the subnormal spacing of a 16-bit dtype. */
static double min_normal(fa_dtype d) { return d == FA_F16 ? 0x1p-14 : 0x1p-126; }
static double subnormal_half_spacing(fa_dtype d) { return d == FA_F16 ? 0x1p-25 : 0x1p-134; }

/** The description of fa_bound_row_input, checked: a broken row would give a NaN bound. */
static fa_status validate_row(const fa_bound_row_input *in)
{
    if (in->keys < 0 || in->head_dim < 0)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "attention bound: keys = %lld, head_dim = %lld, expected >= 0",
                       (long long)in->keys, (long long)in->head_dim);
    if (!isfinite(in->scale) || !isfinite(in->max) || !isfinite(in->sum) || !(in->sum >= 1.0))
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "attention bound: scale %g, max %g, sum %g: expected finite numbers and sum >= 1",
                       in->scale, in->max, in->sum);
    if (in->omitted != FA_BOUND_TERM_NONE && in->omitted != FA_BOUND_TERM_RESCALE &&
        in->omitted != FA_BOUND_TERM_FLUSHED)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "attention bound: omitted = %d is not a term of this bound",
                       (int)in->omitted);
    return FA_OK;
}

fa_status fa_bound_row(const fa_attn_method *method, const fa_bound_row_input *in,
                       double *scratch, fa_bound_row_terms *out)
{
    FA_TRY(validate_row(in));
    const int64_t n = in->keys;
    double *score_err = scratch;
    double *eta = scratch + n;
    double *mt_min = scratch + 2 * n;
    double *mt_max = scratch + 3 * n;
    block_replay replay = {scratch + 4 * n, scratch + 5 * n};
    const double c = fabs(in->scale);
    double gamma_dot;
    FA_TRY(dot_gamma(method, in->head_dim, &gamma_dot));

    int64_t allowed = 0, first = -1, last = -1;
    for (int64_t j = 0; j < n; j++) {
        out->diff_weight[j] = 0.0;
        out->abs_weight[j] = 0.0;
        if (in->score[j] == -INFINITY)
            continue;
        if (!(in->score[j] < INFINITY) || !(in->abs_dot[j] >= 0.0) || isinf(in->abs_dot[j]))
            return fa_fail(FA_ERR_INVALID_ARGUMENT,
                           "attention bound: key %lld has score %g and A_j %g, expected a score below "
                           "+inf (a NaN row has no bound) and a finite A_j >= 0",
                           (long long)j, in->score[j], in->abs_dot[j]);
        allowed++;
        if (first < 0)
            first = j;
        last = j;
        score_err[j] = c * dot_error(gamma_dot, in->head_dim, in->abs_dot[j]);
        eta[j] = 0.0;
        mt_min[j] = INFINITY;
        mt_max[j] = -INFINITY;
    }
    if (allowed == 0) {
        /* Nothing to bound (and with keys = 0 and block_n = 0 no block size to
         * replay): zero terms. The reference stops before calling here. */
        out->o_weight = out->o_floor = out->lse_bound = 0.0;
        out->rises = 0;
        return FA_OK;
    }
    const int64_t rises_forward = replay_order(method, in, score_err, false, &replay, eta, mt_min, mt_max);
    const int64_t rises_reverse = replay_order(method, in, score_err, true, &replay, eta, mt_min, mt_max);
    const int64_t rises = rises_forward > rises_reverse ? rises_forward : rises_reverse;

    const bool rounded_p = method->p_dtype != FA_F32;
    const bool l_from_rounded = rounded_p && method->l_from_rounded_p;
    const double u_p = rounded_p ? fa_dtype_unit_roundoff(method->p_dtype) : 0.0;
    const double u_out = method->output_dtype == FA_F32 ? 0.0 : fa_dtype_unit_roundoff(method->output_dtype);
    const double eps_norm = method->normalisation == FA_NORM_RECIPROCAL ? RCP_NORM_BUDGET : DIV_NORM_BUDGET;
    double gamma_l, gamma_pv;
    FA_TRY(sum_gammas(method, allowed, last - first + 1, rises, &gamma_l, &gamma_pv));

    /* First-order weights, and H = max_j h_j for the second-order factor. */
    double max_h = 0.0, sum_ph = 0.0, sum_tiny = 0.0, sum_subnormal = 0.0, sum_flushed = 0.0;
    int64_t max_h_key = first;
    for (int64_t j = 0; j < n; j++) {
        const double s = in->score[j];
        if (s == -INFINITY)
            continue;
        if (s - mt_min[j] + eta[j] < LN_TINY_WEIGHT) {
            out->diff_weight[j] = TINY_WEIGHT;
            out->abs_weight[j] = TINY_WEIGHT * gamma_pv;
            sum_tiny += TINY_WEIGHT;
            continue;
        }
        const double p = exp(s - in->max) / in->sum;
        const double h = expm1(eta[j]);
        if (h > max_h)
            max_h_key = j;
        max_h = fa_max_nan_double(max_h, h);
        /* A weight that may fall below the P dtype's normal range is rounded
         * with an absolute error of half its subnormal spacing, in block
         * units, so at most that over l in normalised units. */
        double subnormal = 0.0;
        if (rounded_p && s - mt_max[j] + eta[j] < log(min_normal(method->p_dtype)))
            subnormal = subnormal_half_spacing(method->p_dtype) / in->sum;
        const double p_rounding = u_p * p + subnormal;
        /* A weight that may fall below 2^-126 in the block order where the
         * running max at its block is largest may be flushed to 0 (exp2 as
         * ex2.approx.ftz, or FTZ arithmetic) before it reaches l and P V:
         * less than 2^-126 in block units, so 2^-126 / l in normalised units,
         * moving o toward v - o as a tiny weight does. Its relative error h
         * cannot say that: h bounds the rounding of a weight computed, not
         * one dropped. */
        double flushed = 0.0;
        if (in->omitted != FA_BOUND_TERM_FLUSHED && s - mt_max[j] + eta[j] < LN_MIN_NORMAL32)
            flushed = FA_BOUND_MIN_NORMAL32 / in->sum;
        out->diff_weight[j] = p * h + flushed + (l_from_rounded ? p_rounding : 0.0);
        out->abs_weight[j] = (l_from_rounded ? 0.0 : p_rounding) + gamma_pv * p;
        sum_ph += p * h;
        sum_subnormal += subnormal;
        sum_flushed += flushed;
    }

    /* Exact second order: o_hat = (1 + d_norm)(1 + d_out) N_hat / D_hat with
     * |N_hat - o D_hat| <= (1 + H)(1 + u_P) * first-order sum and
     * D_hat >= (1 - H)(1 - u_P)(1 - gamma_l). gamma_l < 1 (sum_gammas()) and
     * u_P < 1, so only H can leave D_hat without a positive lower bound. */
    if (!(max_h < 1.0))
        return fa_fail(FA_ERR_UNSUPPORTED,
                       "attention bound: a weight's relative error H = expm1(eta_j) = %g >= 1 at key "
                       "%lld (score %g): the bound's second-order factor is not finite; scores this "
                       "large (u |s| near 1) have no fp32 bound",
                       max_h, (long long)max_h_key, in->score[max_h_key]);
    const double denominator = (1.0 - max_h) * (1.0 - u_p) * (1.0 - gamma_l);
    const double factor =
        (1.0 + eps_norm) * (1.0 + u_out) * (1.0 + max_h) * (1.0 + u_p) / denominator;
    for (int64_t j = 0; j < n; j++) {
        if (out->diff_weight[j] != 0.0)
            out->diff_weight[j] *= factor;
        if (out->abs_weight[j] != 0.0)
            out->abs_weight[j] *= factor;
    }
    /* Flush to zero: each flushed product, partial sum or weight loses less
     * than 2^-126 (l >= 1 keeps that in normalised units; factor 2 for l_hat). */
    const double ftz_l = 2.0 * FA_BOUND_MIN_NORMAL32 * (double)(allowed + rises + 2);
    const double ftz_pv = 2.0 * FA_BOUND_MIN_NORMAL32 * (double)(2 * allowed + rises + 2);
    double out_floor = FA_BOUND_MIN_NORMAL32;
    if (method->output_dtype != FA_F32 && subnormal_half_spacing(method->output_dtype) > out_floor)
        out_floor = subnormal_half_spacing(method->output_dtype);
    out->o_weight = (gamma_l > 0.0 ? factor * gamma_l : 0.0) + eps_norm + u_out + eps_norm * u_out + ftz_l;
    out->o_floor = ftz_pv + out_floor;
    out->rises = rises;

    /* lse = m + ln l: ln of l_hat / l, with l_hat / l within 1 +- X. */
    const double x = sum_ph + sum_tiny + sum_flushed + gamma_l + ftz_l +
                     (l_from_rounded ? u_p + sum_subnormal : 0.0);
    if (!(x < 1.0))
        return fa_fail(FA_ERR_UNSUPPORTED,
                       "attention bound: l's relative error X = %g >= 1: ln(l_hat / l) has no finite "
                       "bound, so the lse of this row is not judged", x);
    const double lse = in->max + log(in->sum);
    out->lse_bound = x / (1.0 - x) + LOG_BUDGET * fabs(log(in->sum)) +
                     LSE_SHIFT_BUDGET * fabs(in->max) + LSE_SUM_BUDGET * fabs(lse);
    return FA_OK;
}

void fa_bound_row_add_reference_error(const fa_bound_row_input *in, fa_bound_row_terms *out)
{
    /* The reference: double dot products (gamma_D), the scale multiply, the
     * subtraction of m, libm exp (< 1 ulp), products e_j v_jc, Neumaier sums
     * (within 3 u |sum| of the exact sum for any length this code meets) and
     * one division. */
    const double c = fabs(in->scale);
    const double gamma_d = fa_gamma((double)in->head_dim, U64);
    double sum_ph = 0.0;
    for (int64_t j = 0; j < in->keys; j++) {
        const double s = in->score[j];
        if (s == -INFINITY)
            continue;
        const double p = exp(s - in->max) / in->sum;
        const double eta = c * gamma_d * in->abs_dot[j] + 2.0 * U64 * fabs(s) +
                           U64 * fabs(s - in->max) + 2.0 * U64;
        out->diff_weight[j] += REFERENCE_SLACK * p * eta;
        out->abs_weight[j] += 4.0 * U64 * p;
        sum_ph += p * eta;
    }
    const double lse = in->max + log(in->sum);
    out->o_weight += 5.0 * U64;
    out->lse_bound += REFERENCE_SLACK * sum_ph + 4.0 * U64 + 2.0 * U64 * fabs(log(in->sum)) +
                      2.0 * U64 * fabs(lse);
}
