/**
 * @file references.c
 * @brief Double references and per-element bounds of M9, M10 and M11, and the
 *        problem description M12 is judged with (see references.h).
 */
#include "references.h"

#include <math.h>
#include <stdlib.h>

#include "fa_reference.h"
#include "fa_softmax_ref.h"

/** Unit roundoff of fp32. */
#define FP32_U 0x1p-24
/**
 * Below the smallest normal fp32 number relative bounds do not hold (results
 * are subnormal, or flushed to zero): each rounding may then be off by this much.
 */
#define SUBNORMAL_FLOOR 0x1p-126

fa_status attn_scores_reference(const void *q, const void *k, fa_dtype dtype,
                                naive_attn_dims dims, float scale, double *s, double *bound)
{
    const int64_t heads = dims.batch * dims.heads, nq = dims.nq, nk = dims.nk;
    const int64_t dim = dims.head_dim, size = fa_dtype_size(dtype);
    const double c = naive_attn_scale(scale, dim);
    for (int64_t head = 0; head < heads; ++head)
        FA_TRY(fa_ref_matmul((const char *)q + head * nq * dim * size,
                             (const char *)k + head * nk * dim * size, dtype, FA_B_TRANSPOSED, nq,
                             nk, dim, s + head * nq * nk, bound + head * nq * nk));
    /* fa_ref_matmul left sum_d |q_d k_d| in bound: turn it into the bound of
     * the FMA chain (gamma_D), scaled by c, plus the rounding of the product by c. */
    const double gamma = fa_gamma((double)dim, FP32_U);
    for (int64_t e = 0; e < heads * nq * nk; ++e) {
        s[e] *= c;
        bound[e] = c * gamma * bound[e] * (1 + FP32_U) + FP32_U * fabs(s[e]) +
                   (double)(dim + 1) * SUBNORMAL_FLOOR;
    }
    return FA_OK;
}

fa_status softmax_rows_reference(const float *s, naive_attn_dims dims, fa_mask mask,
                                 const int64_t *key_length, double *p, double *p_bound,
                                 double *lse, double *lse_bound)
{
    const fa_softmax_method three_pass = {0};
    return fa_softmax_rows_reference(s, dims.batch, dims.heads, dims.nq, dims.nk, mask,
                                     key_length, &three_pass, p, p_bound, lse, lse_bound);
}

fa_status attn_pv_reference(const float *p, const void *v, fa_dtype dtype, naive_attn_dims dims,
                            double *o, double *bound)
{
    const int64_t heads = dims.batch * dims.heads, nq = dims.nq, nk = dims.nk;
    const int64_t dim = dims.head_dim;
    if (nk == 0) {
        for (int64_t e = 0; e < heads * nq * dim; ++e)
            o[e] = bound[e] = 0; /* an empty sum: the kernel must write exact zeros */
        return FA_OK;
    }
    /* fa_ref_matmul takes one dtype for both operands: widen v (exactly) to fp32. */
    const int64_t v_count = heads * nk * dim;
    float *v32 = malloc((size_t)(v_count > 0 ? v_count : 1) * sizeof(float));
    if (v32 == NULL)
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "attn_pv_reference: no host memory for %lld floats",
                       (long long)v_count);
    for (int64_t e = 0; e < v_count; ++e)
        v32[e] = fa_load(v, dtype, e);
    fa_status status = FA_OK;
    for (int64_t head = 0; head < heads && status == FA_OK; ++head)
        status = fa_ref_matmul(p + head * nq * nk, v32 + head * nk * dim, FA_F32, FA_B_ROW_MAJOR,
                               nq, dim, nk, o + head * nq * dim, bound + head * nq * dim);
    free(v32);
    FA_TRY(status);
    const double gamma = fa_gamma((double)nk, FP32_U);
    for (int64_t e = 0; e < heads * nq * dim; ++e)
        bound[e] = gamma * bound[e] + (double)nk * SUBNORMAL_FLOOR;
    return FA_OK;
}

fa_attn_problem naive_attn_problem(const void *q, const void *k, const void *v, fa_dtype dtype,
                                   naive_attn_dims dims, float scale, fa_mask mask,
                                   const int64_t *key_length)
{
    fa_attn_problem problem = {0};
    problem.batch = dims.batch;
    problem.heads_q = dims.heads;
    problem.heads_kv = dims.heads;
    problem.nq = dims.nq;
    problem.nk = dims.nk;
    problem.head_dim = dims.head_dim;
    problem.scale = naive_attn_scale(scale, dims.head_dim);
    problem.mask = mask;
    problem.key_length = key_length;
    problem.q = fa_view_bhnd(q, dtype, dims.heads, dims.nq, dims.head_dim);
    problem.k = fa_view_bhnd(k, dtype, dims.heads, dims.nk, dims.head_dim);
    problem.v = fa_view_bhnd(v, dtype, dims.heads, dims.nk, dims.head_dim);
    return problem;
}

fa_attn_method naive_attn_method(fa_dtype dtype)
{
    fa_attn_method method = {0};
    method.input_dtype = dtype;
    return method;
}
