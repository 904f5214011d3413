/**
 * @file fa_softmax_ref.c
 * @brief Row softmax in double and the bound of a declared fp32 method
 *        (the derivation is in fa_softmax_ref.h).
 */
#include "fa_softmax_ref.h"

#include <math.h>
#include <stddef.h>

#include "fa_math.h"
#include "fa_reference.h"

/** Unit roundoff of double, for the reference's own error. */
#define DOUBLE_UNIT_ROUNDOFF 0x1p-53

double fa_softmax_exp_error(double difference)
{
    return FA_BOUND_U32 * fabs(difference) + FA_BOUND_EXP_BUDGET;
}

double fa_softmax_widened(double budget) { return budget * (1.0 + 2.0 * budget); }

fa_softmax_keys fa_softmax_all_keys(int64_t n)
{
    const fa_softmax_keys keys = {FA_MASK_NONE, 0, 1, n};
    return keys;
}

bool fa_softmax_allows(const fa_softmax_keys *keys, int64_t n, int64_t j)
{
    return j < keys->length && fa_mask_allows(keys->mask, keys->row, j, keys->rows, n);
}

/** The row as the kernel's arithmetic sees it: x_j where visible, -inf elsewhere. */
typedef struct row_view {
    const float *x;
    const float *v; /**< the values, or NULL when only l is wanted */
    int64_t n;
    const fa_softmax_keys *keys;
} row_view;

static double entry(const row_view *row, int64_t j)
{
    return j < row->n && fa_softmax_allows(row->keys, row->n, j) ? (double)row->x[j] : -INFINITY;
}

/** Sums of a row's terms against its max m, for the relative error of l and o. */
typedef struct row_terms {
    double max;             /**< m */
    fa_ksum sum;            /**< l = sum e_j */
    fa_ksum sum_eta;        /**< sum e_j eta_j */
    double eta_max;         /**< max eta_j */
    int64_t count;          /**< terms (visible finite entries) */
    fa_ksum output;         /**< o = sum e_j v_j (with values) */
    fa_ksum abs_output;     /**< sum e_j |v_j| */
    fa_ksum abs_output_eta; /**< sum e_j |v_j| eta_j */
    fa_ksum abs_values;     /**< sum |v_j|, for the floors of flushed weights */
} row_terms;

/** Adds entry @p j of @p row, rescaled @p rises times after its weight was formed. */
static void add_term(row_terms *terms, const row_view *row, int64_t j, int rises)
{
    const double x = entry(row, j);
    if (x == -INFINITY)
        return; /* weight exactly 0: adding it is exact */
    const double weight = exp(x - terms->max);
    const double eta = fa_softmax_exp_error(x - terms->max) + rises * FA_BOUND_EXP_BUDGET;
    fa_ksum_add(&terms->sum, weight);
    fa_ksum_add(&terms->sum_eta, weight * eta);
    terms->eta_max = fa_max_nan_double(terms->eta_max, eta);
    terms->count++;
    if (row->v != NULL) {
        const double value = (double)row->v[j];
        fa_ksum_add(&terms->output, weight * value);
        fa_ksum_add(&terms->abs_output, weight * fabs(value));
        fa_ksum_add(&terms->abs_output_eta, weight * fabs(value) * eta);
        fa_ksum_add(&terms->abs_values, fabs(value));
    }
}

/** Largest entry of the update of lane stride @p lanes that starts at @p base. */
static double update_max(const row_view *row, int64_t base, int lanes, int64_t chunk)
{
    double max = -INFINITY;
    for (int64_t i = 0; i < chunk; ++i)
        max = fa_max_nan_double(max, entry(row, base + i * lanes));
    return max;
}

/**
 * Replays an online method on the exact maxima: how often each lane's running
 * max rises over the row (@p lane_rises), and at how many merge levels each
 * lane's group, holding a term, meets a partner with a higher max and is
 * rescaled (@p merge_rises).
 */
static void count_rises(const row_view *row, const fa_softmax_method *m, int *lane_rises,
                        int *merge_rises)
{
    double group_max[FA_SOFTMAX_MAX_LANES], merged[FA_SOFTMAX_MAX_LANES];
    const int64_t stride = (int64_t)m->lanes * m->chunk;
    for (int t = 0; t < m->lanes; ++t) {
        double running = -INFINITY;
        lane_rises[t] = 0;
        merge_rises[t] = 0;
        for (int64_t base = t; base < row->n; base += stride) {
            const double chunk_max = update_max(row, base, m->lanes, m->chunk);
            lane_rises[t] += running != -INFINITY && chunk_max > running;
            running = fa_max_nan_double(running, chunk_max);
        }
        group_max[t] = running;
    }
    for (int level = 0; level < m->merge_levels; ++level) {
        for (int t = 0; t < m->lanes; ++t) {
            const double partner = group_max[t ^ m->merge_masks[level]];
            merge_rises[t] += group_max[t] != -INFINITY && partner > group_max[t];
            merged[t] = fa_max_nan_double(group_max[t], partner);
        }
        for (int t = 0; t < m->lanes; ++t)
            group_max[t] = merged[t];
    }
}

/**
 * Sums the terms in the method's order, giving each its k_j: for an online
 * method the rises of its lane after its own update plus its lane's merge
 * rises (left out when @p omitted names them, for the self-check); none for
 * three passes. Returns G, the most roundings on a term's path.
 */
static int64_t sum_terms(const row_view *row, const fa_softmax_method *m, fa_bound_term omitted,
                         row_terms *terms)
{
    if (m->chunk == 0) {
        for (int64_t j = 0; j < row->n; ++j)
            add_term(terms, row, j, 0);
        return terms->count;
    }
    int lane_rises[FA_SOFTMAX_MAX_LANES], merge_rises[FA_SOFTMAX_MAX_LANES];
    count_rises(row, m, lane_rises, merge_rises);
    const int64_t stride = (int64_t)m->lanes * m->chunk;
    for (int t = 0; t < m->lanes; ++t) {
        double running = -INFINITY;
        int rises_so_far = 0;
        for (int64_t base = t; base < row->n; base += stride) {
            const double chunk_max = update_max(row, base, m->lanes, m->chunk);
            rises_so_far += running != -INFINITY && chunk_max > running;
            running = fa_max_nan_double(running, chunk_max);
            const int merge = omitted == FA_BOUND_TERM_MERGE_RISES ? 0 : merge_rises[t];
            const int rises = lane_rises[t] - rises_so_far + merge;
            for (int64_t i = 0; i < m->chunk; ++i)
                add_term(terms, row, base + i * m->lanes, rises);
        }
    }
    /* A lane's first update adds chunk terms (chunk - 1 roundings), every
     * update is one fused rounding, every merge level two (product, sum). */
    const int64_t updates = (row->n + stride - 1) / stride;
    return m->chunk - 1 + updates + 2 * (int64_t)m->merge_levels;
}

/** Fills the visible entries with @p p_value and the rest with 0, all bounds 0. */
static void fill_exact(const row_view *row, double p_value, double lse_value, double *p,
                       double *p_bound, double *lse, double *lse_bound)
{
    for (int64_t j = 0; j < row->n; ++j) {
        p[j] = fa_softmax_allows(row->keys, row->n, j) ? p_value : 0.0;
        p_bound[j] = 0.0;
    }
    if (lse != NULL)
        *lse = lse_value;
    if (lse_bound != NULL)
        *lse_bound = 0.0;
}

/** The reference's own error: libm exp, compensated sums, one division. */
static double own_error(int64_t n) { return fa_gamma((double)n + 4.0, DOUBLE_UNIT_ROUNDOFF); }

/**
 * The largest visible entry of @p row, or NaN when a visible entry is NaN or
 * +inf (the kernel's row is then NaN); -inf when none is visible and finite.
 */
static double row_max(const row_view *row)
{
    double max = -INFINITY;
    for (int64_t j = 0; j < row->n; ++j) {
        if (!fa_softmax_allows(row->keys, row->n, j))
            continue;
        if (isnan(row->x[j]) || row->x[j] == INFINITY)
            return NAN;
        max = fa_max_nan_double(max, (double)row->x[j]);
    }
    return max;
}

/**
 * gamma_G of the sum of the row's terms, G = @p roundings on the longest path:
 * finite only while G u < 1, else the row has no bound (FA_ERR_UNSUPPORTED).
 */
static fa_status sum_gamma(const row_view *row, int64_t roundings, double *gamma)
{
    *gamma = fa_gamma((double)roundings, FA_BOUND_U32);
    if (isinf(*gamma))
        return fa_fail(FA_ERR_UNSUPPORTED,
                       "softmax bound: gamma_n with n*u >= 1 (n = %lld roundings on a term's path, "
                       "u = 2^-24) for a row of %lld entries: no finite fp32 bound; rows of 2^24 keys "
                       "must be judged per block (an online method's chunks and merges keep n small)",
                       (long long)roundings, (long long)row->n);
    return FA_OK;
}

/** lambda, l's relative error, for @p terms summed with at most @p roundings per path. */
static fa_status sum_relative_error(const row_view *row, const row_terms *terms, int64_t roundings,
                                    double own, double *lambda)
{
    const double l = fa_ksum_value(&terms->sum);
    double gamma;
    FA_TRY(sum_gamma(row, roundings, &gamma));
    *lambda = (1.0 + 2.0 * (terms->eta_max + gamma)) * (fa_ksum_value(&terms->sum_eta) + gamma * l) /
                  l +
              2.0 * (double)terms->count * FA_BOUND_MIN_NORMAL32 / l + own;
    return FA_OK;
}

fa_status fa_softmax_row_reference(const float *x, int64_t n, const fa_softmax_keys *keys,
                                   const fa_softmax_method *method, double *p, double *p_bound,
                                   double *lse, double *lse_bound)
{
    const fa_softmax_keys all = fa_softmax_all_keys(n);
    const row_view row = {x, NULL, n, keys != NULL ? keys : &all};
    const double max = row_max(&row);
    if (isnan(max)) {
        fill_exact(&row, NAN, NAN, p, p_bound, lse, lse_bound);
        return FA_OK;
    }
    if (max == -INFINITY) {
        fill_exact(&row, 0.0, -INFINITY, p, p_bound, lse, lse_bound);
        return FA_OK;
    }

    row_terms terms = {.max = max};
    const int64_t roundings = sum_terms(&row, method, FA_BOUND_TERM_NONE, &terms);
    const double l = fa_ksum_value(&terms.sum);
    const double own = own_error(n);
    /* A row refused by its bound keeps its exact weights, and lambda NaN makes
     * every bound of a visible entry NaN: the check never judges them. */
    double lambda = NAN;
    const fa_status status = sum_relative_error(&row, &terms, roundings, own, &lambda);

    /* p_j = expf(x_j - m) / l with the final m: its own weight, the division
     * and l's error. */
    for (int64_t j = 0; j < n; ++j) {
        const double value = entry(&row, j);
        if (value == -INFINITY) {
            p[j] = 0.0;
            p_bound[j] = 0.0;
            continue;
        }
        p[j] = exp(value - max) / l;
        const double budget =
            fa_softmax_exp_error(value - max) + FA_BOUND_U32 + lambda + own;
        p_bound[j] = fa_softmax_widened(budget) * p[j] + 2.0 * FA_BOUND_MIN_NORMAL32;
    }

    /* lse = m + logf(l): ln(l (1 + d)) = ln l + d to first order, logf's own
     * budget relative to ln l, and the rounding of the addition. */
    const double log_l = log(l);
    if (lse != NULL)
        *lse = max + log_l;
    if (lse_bound != NULL) {
        const double budget = lambda + FA_BOUND_EXP_BUDGET + FA_BOUND_U32;
        *lse_bound = (1.0 + 2.0 * budget) * (lambda + FA_BOUND_EXP_BUDGET * fabs(log_l) +
                                             FA_BOUND_U32 * fabs(max + log_l)) +
                     own * (fabs(max) + fabs(log_l));
    }
    return status;
}

fa_status fa_softmax_state_reference(const float *x, const float *v, int64_t n,
                                     const fa_softmax_keys *keys, const fa_softmax_method *method,
                                     fa_softmax_state_ref *state)
{
    return fa_softmax_state_reference_without(x, v, n, keys, method, FA_BOUND_TERM_NONE, state);
}

fa_status fa_softmax_state_reference_without(const float *x, const float *v, int64_t n,
                                             const fa_softmax_keys *keys,
                                             const fa_softmax_method *method,
                                             fa_bound_term omitted, fa_softmax_state_ref *state)
{
    const fa_softmax_keys all = fa_softmax_all_keys(n);
    const row_view row = {x, v, n, keys != NULL ? keys : &all};
    const double max = row_max(&row);
    const fa_softmax_state_ref poisoned = {NAN, NAN, 0.0, NAN, 0.0};
    const fa_softmax_state_ref empty = {-INFINITY, 0.0, 0.0, 0.0, 0.0};
    if (omitted != FA_BOUND_TERM_NONE && omitted != FA_BOUND_TERM_MERGE_RISES)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "softmax bound: omitted = %d is not a term of this bound",
                       (int)omitted);
    if (isnan(max) || max == -INFINITY) {
        *state = isnan(max) ? poisoned : empty;
        return FA_OK;
    }

    row_terms terms = {.max = max};
    const int64_t roundings = sum_terms(&row, method, omitted, &terms);
    const double own = own_error(n);
    state->max = max;
    state->sum = fa_ksum_value(&terms.sum);
    state->output = fa_ksum_value(&terms.output);
    /* A refused row keeps its exact state and gets NaN bounds: never judged. */
    state->sum_bound = state->output_bound = NAN;
    double lambda, gamma;
    FA_TRY(sum_relative_error(&row, &terms, roundings, own, &lambda));
    /* o: each product e_j v_j (or its FMA) rounds once more than l's terms. */
    FA_TRY(sum_gamma(&row, roundings + 1, &gamma));
    state->sum_bound = lambda * state->sum;
    const double abs_output = fa_ksum_value(&terms.abs_output);
    state->output_bound =
        (1.0 + 2.0 * (terms.eta_max + gamma)) *
            (fa_ksum_value(&terms.abs_output_eta) + gamma * abs_output) +
        2.0 * fa_ksum_value(&terms.abs_values) * FA_BOUND_MIN_NORMAL32 + own * abs_output;
    return FA_OK;
}

fa_status fa_softmax_rows_reference(const float *x, int64_t batch, int64_t heads, int64_t rows,
                                    int64_t n, fa_mask mask, const int64_t *key_length,
                                    const fa_softmax_method *method, double *p, double *p_bound,
                                    double *lse, double *lse_bound)
{
    static const char op[] = "softmax rows reference";
    const int64_t row_factors[3] = {batch, heads, rows};
    const int64_t entry_factors[4] = {batch, heads, rows, n};
    int64_t total, entries;
    FA_TRY(fa_ref_elements(op, "batch * heads * rows", row_factors, 3, (int64_t)sizeof(double),
                           &total));
    FA_TRY(fa_ref_elements(op, "batch * heads * rows * n", entry_factors, 4,
                           (int64_t)sizeof(double), &entries));
    /* Every row is written, a refused one with NaN bounds; the first refusal is returned. */
    fa_status first = FA_OK;
    for (int64_t r = 0; r < total; ++r) {
        const int64_t b = r / (heads * rows);
        const fa_softmax_keys keys = {mask, r % rows, rows, key_length != NULL ? key_length[b] : n};
        const fa_status status = fa_softmax_row_reference(
            x + r * n, n, &keys, method, p + r * n, p_bound + r * n, lse != NULL ? lse + r : NULL,
            lse_bound != NULL ? lse_bound + r : NULL);
        first = first != FA_OK ? first : status;
    }
    return first;
}
