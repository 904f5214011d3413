/**
 * @file reference.c
 * @brief Double references and bounds of the stage-04 traces and softmax rows
 *        (the derivation is in reference.h and on the stage page).
 */
#include "reference.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "fa_reference.h"
#include "model.h"
#include "online.h"

/** Unit roundoff of double, for the references' own error. */
static const double DOUBLE_UNIT_ROUNDOFF = 0x1p-53;

/** The max subtracted inside exp, with the kernels' -inf guard, in double. */
static double max_offset(double max) { return max == -INFINITY ? 0.0 : max; }

/** budget * (1 + 2 budget): a first-order relative budget made rigorous. */
static double widened(double budget) { return budget * (1.0 + 2.0 * budget); }

/* ---- traces -------------------------------------------------------------------------------- */

/** The terms of a trace so far, against the current max. */
typedef struct trace_terms {
    double sum; /**< l = sum e_j */
    double sum_eta; /**< sum e_j eta_j */
    double out; /**< o = sum e_j v_j */
    double abs_out; /**< sum e_j |v_j| */
    double abs_out_eta; /**< sum e_j |v_j| eta_j */
    double eta_max; /**< max eta_j */
    double abs_values; /**< sum |v_j| over the allowed entries (the floors of o) */
    int64_t allowed; /**< allowed entries seen */
} trace_terms;

/**
 * The max rose by @p delta > 0: every term is multiplied by exp(-delta), and
 * its eta grows by the correction factor's budget u delta + eps_exp.
 */
static void trace_terms_rescale(trace_terms *t, double delta)
{
    const double factor = exp(-delta);
    const double rho = ONLINE_UNIT_ROUNDOFF * delta + ONLINE_EXP_BUDGET;
    t->sum_eta = factor * (t->sum_eta + t->sum * rho);
    t->abs_out_eta = factor * (t->abs_out_eta + t->abs_out * rho);
    t->sum *= factor;
    t->out *= factor;
    t->abs_out *= factor;
    t->eta_max += rho;
}

void online_ref_trace_row(const float *x, const float *v, int64_t n, int64_t chunk,
                          const online_trace_ref *ref)
{
    trace_terms terms = {0};
    double max = -INFINITY;
    const int64_t chunks = online_chunk_count(n, chunk);
    for (int64_t t = 0; t < chunks; ++t) {
        const int64_t start = t * chunk;
        const int64_t end = start + chunk < n ? start + chunk : n;

        double max_new = max;
        for (int64_t j = start; j < end; ++j)
            max_new = fmax(max_new, (double)x[j]); /* fmax ignores NaN, as fmaxf */

        double alpha = 0.0, alpha_bound = 0.0;
        if (max != -INFINITY) {
            const double argument = max - max_offset(max_new);
            alpha = exp(argument);
            if (isfinite(alpha))
                alpha_bound =
                    widened(ONLINE_UNIT_ROUNDOFF * fabs(argument) + ONLINE_EXP_BUDGET) * alpha +
                    ONLINE_SUBNORMAL_FLOOR;
            if (max_new > max)
                trace_terms_rescale(&terms, max_new - max);
        }

        for (int64_t j = start; j < end; ++j) {
            if (x[j] == -INFINITY)
                continue; /* masked: weight exactly 0, value never read */
            const double weight = exp((double)x[j] - max_offset(max_new));
            const double eta =
                ONLINE_UNIT_ROUNDOFF * fabs((double)x[j] - max_new) + ONLINE_EXP_BUDGET;
            terms.sum += weight;
            terms.sum_eta += weight * eta;
            terms.eta_max = fmax(terms.eta_max, eta);
            terms.allowed++;
            if (v != NULL) {
                terms.out += weight * (double)v[j];
                terms.abs_out += weight * fabs((double)v[j]);
                terms.abs_out_eta += weight * fabs((double)v[j]) * eta;
                terms.abs_values += fabs((double)v[j]);
            }
        }
        max = max_new;

        /* One rounding per addition inside the chunk (the first term's path is
         * the longest: chunk - 1 additions, one more for the product of the
         * output's first FMA), then one fused update per chunk so far. */
        const double roundings = (double)(chunk + t + 1);
        const double gamma = fa_gamma(roundings, ONLINE_UNIT_ROUNDOFF);
        const double second_order = 1.0 + 2.0 * (terms.eta_max + gamma);
        const double own =
            fa_gamma(4.0 * (double)(t + 1) + (double)terms.allowed, DOUBLE_UNIT_ROUNDOFF);
        const double sum_bound = second_order * (terms.sum_eta + gamma * terms.sum) +
                                 2.0 * (double)terms.allowed * ONLINE_SUBNORMAL_FLOOR +
                                 own * terms.sum;
        const double out_bound = second_order * (terms.abs_out_eta + gamma * terms.abs_out) +
                                 2.0 * terms.abs_values * ONLINE_SUBNORMAL_FLOOR +
                                 own * terms.abs_out;

        if (ref->max != NULL)
            ref->max[t] = max;
        if (ref->correction != NULL)
            ref->correction[t] = alpha;
        if (ref->correction_bound != NULL)
            ref->correction_bound[t] = alpha_bound;
        if (ref->sum != NULL)
            ref->sum[t] = terms.sum;
        if (ref->sum_bound != NULL)
            ref->sum_bound[t] = isfinite(terms.sum) ? sum_bound : 0.0;
        if (ref->output != NULL)
            ref->output[t] = terms.out;
        if (ref->output_bound != NULL)
            ref->output_bound[t] = isfinite(terms.out) ? out_bound : 0.0;
    }
}

/* ---- softmax rows -------------------------------------------------------------------------- */

/** The largest entry of thread @p t's update at @p base (threads apart, at most chunk of them). */
static double update_max(const float *x, int64_t n, int64_t base, int threads, int chunk)
{
    double max = -INFINITY;
    for (int i = 0; i < chunk && base + (int64_t)i * threads < n; ++i)
        max = fmax(max, (double)x[base + (int64_t)i * threads]);
    return max;
}

/**
 * Replays the geometry (threads, chunk) on the exact maxima: how often each
 * thread's running max rises over the whole row (@p thread_rises), and at how
 * many merges each thread's group, holding an allowed entry, meets a partner
 * with a higher max and is rescaled (@p tree_rises).
 */
static void count_rises(const float *x, int64_t n, int threads, int chunk, int *thread_rises,
                        int *tree_rises)
{
    double group_max[ONLINE_MODEL_MAX_THREADS];
    const int64_t stride = (int64_t)threads * chunk;
    for (int t = 0; t < threads; ++t) {
        double running = -INFINITY;
        thread_rises[t] = 0;
        tree_rises[t] = 0;
        for (int64_t base = t; base < n; base += stride) {
            const double chunk_max = update_max(x, n, base, threads, chunk);
            thread_rises[t] += running != -INFINITY && chunk_max > running;
            running = fmax(running, chunk_max);
        }
        group_max[t] = running;
    }

    int masks[ONLINE_MODEL_MAX_LEVELS];
    const int levels = online_merge_masks(threads, masks);
    for (int level = 0; level < levels; ++level) {
        double merged[ONLINE_MODEL_MAX_THREADS];
        for (int t = 0; t < threads; ++t) {
            const double partner = group_max[t ^ masks[level]];
            tree_rises[t] += group_max[t] != -INFINITY && partner > group_max[t];
            merged[t] = fmax(group_max[t], partner);
        }
        for (int t = 0; t < threads; ++t)
            group_max[t] = merged[t];
    }
}

/** Sums of a softmax row's terms against its max m, for the bound of l. */
typedef struct row_terms {
    fa_ksum sum; /**< l = sum e_j */
    fa_ksum sum_eta; /**< sum e_j eta_j */
    double eta_max; /**< max eta_j */
    int64_t allowed; /**< entries that are not -inf */
} row_terms;

/**
 * Walks the row as the geometry does, giving each entry its k_j: the rises
 * of its thread after its own update, plus its thread's merge rises.
 */
static row_terms sum_terms(const float *x, int64_t n, double max, int threads, int chunk)
{
    int thread_rises[ONLINE_MODEL_MAX_THREADS], tree_rises[ONLINE_MODEL_MAX_THREADS];
    count_rises(x, n, threads, chunk, thread_rises, tree_rises);
    row_terms terms = {{0.0, 0.0}, {0.0, 0.0}, 0.0, 0};
    const int64_t stride = (int64_t)threads * chunk;
    for (int t = 0; t < threads; ++t) {
        double running = -INFINITY;
        int rises_so_far = 0;
        for (int64_t base = t; base < n; base += stride) {
            const double chunk_max = update_max(x, n, base, threads, chunk);
            rises_so_far += running != -INFINITY && chunk_max > running;
            running = fmax(running, chunk_max);
            const int rises = thread_rises[t] - rises_so_far + tree_rises[t];
            for (int i = 0; i < chunk && base + (int64_t)i * threads < n; ++i) {
                const double entry = x[base + (int64_t)i * threads];
                if (entry == -INFINITY)
                    continue;
                const double weight = exp(entry - max);
                const double eta =
                    ONLINE_UNIT_ROUNDOFF * (max - entry) + (1.0 + rises) * ONLINE_EXP_BUDGET;
                fa_ksum_add(&terms.sum, weight);
                fa_ksum_add(&terms.sum_eta, weight * eta);
                terms.eta_max = fmax(terms.eta_max, eta);
                terms.allowed++;
            }
        }
    }
    return terms;
}

/** Fills a row's outputs with one value and a zero bound (the rows whose answer is exact). */
static void fill_exact(int64_t n, double p_value, double lse_value, double *p, double *p_bound,
                       double *lse, double *lse_bound)
{
    for (int64_t j = 0; j < n; ++j) {
        p[j] = p_value;
        p_bound[j] = 0.0;
    }
    if (lse != NULL)
        *lse = lse_value;
    if (lse_bound != NULL)
        *lse_bound = 0.0;
}

void online_ref_softmax_row(const float *x, int64_t n, int threads, int chunk, double *p,
                            double *p_bound, double *lse, double *lse_bound)
{
    double max = -INFINITY;
    bool poisoned = false; /* a NaN or +inf entry: the kernel's row is NaN */
    for (int64_t j = 0; j < n; ++j) {
        poisoned = poisoned || isnan(x[j]) || x[j] == INFINITY;
        max = fmax(max, (double)x[j]);
    }
    if (poisoned) {
        fill_exact(n, NAN, NAN, p, p_bound, lse, lse_bound);
        return;
    }
    if (max == -INFINITY) {
        fill_exact(n, 0.0, -INFINITY, p, p_bound, lse, lse_bound);
        return;
    }

    row_terms terms = sum_terms(x, n, max, threads, chunk);
    const double l = fa_ksum_value(&terms.sum);
    int masks[ONLINE_MODEL_MAX_LEVELS];
    const int levels = online_merge_masks(threads, masks);
    /* A thread's first update adds chunk terms (chunk - 1 roundings), every
     * update is one fused rounding, every merge level two (product, sum). */
    const int64_t updates = online_chunk_count(n, (int64_t)threads * chunk);
    const double gamma =
        fa_gamma((double)(chunk - 1) + (double)updates + 2.0 * levels, ONLINE_UNIT_ROUNDOFF);
    const double own = fa_gamma((double)n + 4.0, DOUBLE_UNIT_ROUNDOFF);
    const double sum_relative =
        (1.0 + 2.0 * (terms.eta_max + gamma)) * (fa_ksum_value(&terms.sum_eta) + gamma * l) / l +
        2.0 * (double)terms.allowed * ONLINE_SUBNORMAL_FLOOR / l + own;

    /* p_j = expf(x_j - m) / l: its own weight, the division, and l's error. */
    for (int64_t j = 0; j < n; ++j) {
        if (x[j] == -INFINITY) {
            p[j] = 0.0;
            p_bound[j] = 0.0;
            continue;
        }
        p[j] = exp((double)x[j] - max) / l;
        const double budget = ONLINE_UNIT_ROUNDOFF * (max - x[j]) + ONLINE_EXP_BUDGET +
                              ONLINE_UNIT_ROUNDOFF + sum_relative + own;
        p_bound[j] = widened(budget) * p[j] + 2.0 * ONLINE_SUBNORMAL_FLOOR;
    }

    /* lse = m + logf(l): ln(l (1 + d)) = ln l + d to first order, logf's own
     * budget relative to ln l, and the rounding of the addition. */
    const double log_l = log(l);
    if (lse != NULL)
        *lse = max + log_l;
    if (lse_bound != NULL) {
        const double budget = sum_relative + ONLINE_EXP_BUDGET + ONLINE_UNIT_ROUNDOFF;
        *lse_bound = (1.0 + 2.0 * budget) * (sum_relative + ONLINE_EXP_BUDGET * fabs(log_l) +
                                             ONLINE_UNIT_ROUNDOFF * fabs(max + log_l)) +
                     own * (fabs(max) + fabs(log_l));
    }
}

void online_ref_softmax_rows(const float *x, int64_t rows, int64_t n, double *p, double *p_bound,
                             double *lse, double *lse_bound)
{
    const int threads = softmax_rows_online_threads(n);
    for (int64_t r = 0; r < rows; ++r)
        online_ref_softmax_row(x + r * n, n, threads, SOFTMAX_ONLINE_CHUNK, p + r * n,
                               p_bound + r * n, lse != NULL ? lse + r : NULL,
                               lse_bound != NULL ? lse_bound + r : NULL);
}
