/**
 * @file reference.c
 * @brief Double references and bounds of the stage-04 traces, and the methods
 *        the softmax and attention kernels declare to the course's references.
 */
#include "reference.h"

#include <math.h>
#include <stddef.h>

#include "fa_math.h"
#include "fa_reference.h"
#include "fa_softmax_ref.h"
#include "model.h"
#include "online.h"

/** Unit roundoff of double, for the references' own error. */
static const double DOUBLE_UNIT_ROUNDOFF = 0x1p-53;

/** The max subtracted inside exp, with the kernels' -inf guard, in double. */
static double max_offset(double max) { return max == -INFINITY ? 0.0 : max; }

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
    const double rho = fa_softmax_exp_error(delta);
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
            max_new = fa_max_nan_double(max_new, (double)x[j]); /* NaN kept, as fa_max_nan() */

        /* A NaN max makes alpha NaN even from the empty state: exp(-inf - NaN). */
        double alpha = isnan(max_new) ? max_new : 0.0, alpha_bound = 0.0;
        if (max != -INFINITY && !isnan(max_new)) {
            const double argument = max - max_offset(max_new);
            alpha = exp(argument);
            if (isfinite(alpha))
                alpha_bound =
                    fa_softmax_widened(fa_softmax_exp_error(argument)) * alpha +
                    FA_BOUND_MIN_NORMAL32;
            if (max_new > max)
                trace_terms_rescale(&terms, max_new - max);
        }

        for (int64_t j = start; j < end; ++j) {
            if (x[j] == -INFINITY)
                continue; /* masked: weight exactly 0, value never read */
            const double weight = exp((double)x[j] - max_offset(max_new));
            const double eta = fa_softmax_exp_error((double)x[j] - max_new);
            terms.sum += weight;
            terms.sum_eta += weight * eta;
            terms.eta_max = fa_max_nan_double(terms.eta_max, eta);
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
        const double gamma = fa_gamma(roundings, FA_BOUND_U32);
        const double second_order = 1.0 + 2.0 * (terms.eta_max + gamma);
        const double own =
            fa_gamma(4.0 * (double)(t + 1) + (double)terms.allowed, DOUBLE_UNIT_ROUNDOFF);
        const double sum_bound = second_order * (terms.sum_eta + gamma * terms.sum) +
                                 2.0 * (double)terms.allowed * FA_BOUND_MIN_NORMAL32 +
                                 own * terms.sum;
        const double out_bound = second_order * (terms.abs_out_eta + gamma * terms.abs_out) +
                                 2.0 * terms.abs_values * FA_BOUND_MIN_NORMAL32 +
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

/* ---- attention ---------------------------------------------------------------------------- */

fa_attn_problem online_attn_problem(const attn_online_args *args)
{
    const fa_attn_problem p = {
        .batch = args->batch,
        .heads_q = args->heads_q,
        .heads_kv = args->heads_kv,
        .nq = args->nq,
        .nk = args->nk,
        .head_dim = args->head_dim,
        .scale = args->scale,
        .mask = args->mask,
        .key_length = NULL,
        .q = fa_view_bhnd(args->q, FA_F32, args->heads_q, args->nq, args->head_dim),
        .k = fa_view_bhnd(args->k, FA_F32, args->heads_kv, args->nk, args->head_dim),
        .v = fa_view_bhnd(args->v, FA_F32, args->heads_kv, args->nk, args->head_dim),
    };
    return p;
}

fa_attn_method online_attn_method(int64_t chunk)
{
    fa_attn_method m = {0};
    m.input_dtype = FA_F32;
    m.accumulation = FA_ACCUM_FP32;
    m.block_n = chunk;
    m.p_dtype = FA_F32;
    m.exp_method = FA_EXP_EXPF;
    m.normalisation = FA_NORM_DIVIDE;
    m.output_dtype = FA_F32;
    return m;
}

/* ---- softmax rows -------------------------------------------------------------------------- */

fa_status online_ref_softmax_row(const float *x, int64_t n, int threads, int chunk, double *p,
                                 double *p_bound, double *lse, double *lse_bound)
{
    int masks[ONLINE_MODEL_MAX_LEVELS];
    const fa_softmax_method geometry = {chunk, threads, online_merge_masks(threads, masks), masks};
    return fa_softmax_row_reference(x, n, NULL, &geometry, p, p_bound, lse, lse_bound);
}

fa_status online_ref_softmax_rows(const float *x, int64_t rows, int64_t n, double *p,
                                  double *p_bound, double *lse, double *lse_bound)
{
    const int threads = softmax_rows_online_threads(n);
    for (int64_t r = 0; r < rows; ++r)
        FA_TRY(online_ref_softmax_row(x + r * n, n, threads, SOFTMAX_ONLINE_CHUNK, p + r * n,
                                      p_bound + r * n, lse != NULL ? lse + r : NULL,
                                      lse_bound != NULL ? lse_bound + r : NULL));
    return FA_OK;
}
