/**
 * @file fa_emulate.c
 * @brief The fused attention kernel's arithmetic on the CPU, one row at a time.
 *
 * The loop is FlashAttention-2's forward pass for one query row:
 *
 *   for each key block:   x_j = q.k_j               (fp32 FFMA chain or tensor-core sum)
 *                         m_new = max(m, max_j x_j)
 *                         alpha = exp(m - m_new)   (0 on the first block)
 *                         e_j = exp(x_j - m_new),  p_j = round_P(e_j)
 *                         l = alpha l + sum_j (p_j or e_j)
 *                         O = alpha O + sum_j p_j v_j
 *   o = O / l  (or O * rcp(l)),  lse = m + ln l
 *
 * with the scale and log2(e) placed where each exp method puts them. A mutant
 * changes exactly one step.
 */
#include "fa_emulate.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fa_half.h"
#include "fa_math.h"
#include "fa_reference.h"

/* Every float operation below must round once, to float: no wider
 * evaluation, and no a * b + c silently fused (GCC does not fuse in ISO C
 * mode and rejects the pragma; clang fuses unless told not to). Fused
 * multiply-adds are written as fmaf where the kernel has them. */
_Static_assert(FLT_EVAL_METHOD == 0, "the emulation needs float operations evaluated in float");
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define LOG2E 1.44269504088896340736
/* Documented accuracies the adversarial mode spends in full. */
enum { EXP_ULPS = 2, RCP_ULPS = 1, LOG_ULPS = 1 };
#define FAST_EXP_ULP_SLOPE 1.173 /* __expf: 2 + floor(1.173 |x|) ulp */
#define MIN_NORMAL32 0x1p-126f
/* Products a tensor core aligns to one exponent (see fa_bound.c). */
enum { TC_BLOCK = 8 };
/* Significand bits a tensor-core sum keeps after aligning to the largest term. */
enum { TC_SIGNIFICAND_BITS = 24 };

_Static_assert(TC_BLOCK > 0, "a tensor-core step aligns at least one product");
_Static_assert(TC_SIGNIFICAND_BITS == FLT_MANT_DIG, "the aligned frame keeps an fp32 significand");

const char *fa_mutant_description(fa_mutant mutant)
{
    switch (mutant) {
    case FA_MUTANT_NONE: return "correct kernel";
    case FA_MUTANT_NO_RESCALE_O: return "O not rescaled when the max rises";
    case FA_MUTANT_NO_RESCALE_L: return "l not rescaled when the max rises";
    case FA_MUTANT_RESCALE_WRONG_SIGN: return "rescale exp(m_new - m_old)";
    case FA_MUTANT_LOG2E_FORGOTTEN: return "log2(e) forgotten in the exp2 prescale";
    case FA_MUTANT_LOG2E_DOUBLED: return "log2(e) applied twice";
    case FA_MUTANT_SCALE_ONE_OVER_D: return "scale 1/D instead of 1/sqrt(D)";
    case FA_MUTANT_NO_SCALE: return "no scale";
    case FA_MUTANT_CAUSAL_ONE_AHEAD: return "causal mask j <= i + 1";
    case FA_MUTANT_CAUSAL_STRICT: return "causal mask j < i";
    case FA_MUTANT_TAIL_ROUNDED_UP: return "tail block read to ceil(N/B) B";
    case FA_MUTANT_LSE_WITHOUT_MAX: return "lse = ln l (max forgotten)";
    case FA_MUTANT_LSE_LOG2: return "lse in log2 units";
    case FA_MUTANT_NO_NORMALISATION: return "1/l forgotten";
    case FA_MUTANT_MAX_INIT_ZERO: return "running max initialised to 0";
    case FA_MUTANT_NAN_EMPTY_ROW: return "NaN on a row with no allowed key";
    case FA_MUTANT_PV_BF16_ACCUMULATOR: return "P.V accumulated in bf16";
    case FA_MUTANT_COUNT: break;
    }
    return "unknown mutant";
}

/** Where the scale and log2(e) enter the exponent. */
typedef enum exp_path {
    PATH_EXP2_PRESCALED, /* t = x c log2(e) - m c log2(e) in one FFMA, then exp2 */
    PATH_SCALED,         /* s = x c first, then exp(s - m) */
    PATH_UNSCALED        /* exp(c (x - m)) with m the max of the unscaled x */
} exp_path;

typedef struct emulator {
    const fa_attn_problem *p;
    const fa_emulation *e;
    exp_path path;
    float scale;          /* fl(c) */
    float scale_log2;     /* fl(c log2(e)), the prescale of the exp2 path */
    int64_t block;        /* keys per block */
    int64_t key_rows;     /* rows of k and v the kernel may read (past nk for the tail mutant) */
    /* work arrays */
    float *k, *v;         /* [key_rows][D] of the current kv head */
    float *q;             /* [D] */
    float *x, *weight, *p_rounded; /* [block] */
    float *acc;           /* [D] O */
    double *products;     /* [TC_BLOCK] */
} emulator;

/* ---- rounding helpers -------------------------------------------------------------------- */

/** Moves @p x by @p ulps representable floats in @p direction (+1 up, -1 down). */
static float nudge(float x, int ulps, int direction)
{
    for (int k = 0; k < ulps; k++)
        x = nextafterf(x, direction > 0 ? INFINITY : -INFINITY);
    return x;
}

/**
 * exp2(arg) (@p base2) or exp(arg), correctly rounded, then, when @p direction
 * is +-1, pushed @p ulps ulp that way and flushed below 2^-126. exp(0) = 1 and
 * exp(-inf) = 0 exactly, as PTX documents for ex2.approx.
 */
static float budgeted_exp(float arg, bool base2, int ulps, int direction)
{
    if (arg == 0.0f)
        return 1.0f;
    if (arg == -INFINITY)
        return 0.0f;
    float r = (float)(base2 ? exp2((double)arg) : exp((double)arg));
    if (direction == 0)
        return r;
    r = nudge(r, ulps, direction);
    return fabsf(r) < MIN_NORMAL32 ? 0.0f : r;
}

float fa_emulate_expf(float arg, int direction)
{
    return budgeted_exp(arg, false, EXP_ULPS, direction);
}

/**
 * An exp step of the kernel: exp2(arg) on the prescaled path, else exp(arg);
 * the adversary spends the whole budget of the kernel's exp method.
 */
static float emulate_exp(const emulator *em, float arg, int direction)
{
    const bool base2 = em->path == PATH_EXP2_PRESCALED;
    if (!em->e->adversarial)
        return budgeted_exp(arg, base2, 0, 0);
    int ulps = EXP_ULPS;
    if (em->e->method.exp_method == FA_EXP_FAST && !base2)
        ulps += (int)floor(FAST_EXP_ULP_SLOPE * fabsf(arg));
    return budgeted_exp(arg, base2, ulps, direction);
}

/** Truncates @p x to 24 significant bits (round toward zero). */
static double truncate_significand(double x)
{
    if (x == 0.0)
        return 0.0;
    int exponent;
    frexp(x, &exponent);
    const double ulp = ldexp(1.0, exponent - TC_SIGNIFICAND_BITS);
    return trunc(x / ulp) * ulp;
}

/**
 * One tensor-core step: the accumulator and @p n exact products are aligned to
 * the largest of them, each truncated to the 24-bit frame of that largest
 * term, summed exactly, and the sum truncated to 24 bits.
 */
static float tensor_core_step(float acc, const double *products, int n)
{
    double largest = fabs((double)acc);
    for (int t = 0; t < n; t++)
        largest = fa_max_nan_double(largest, fabs(products[t]));
    if (largest == 0.0)
        return acc;
    int exponent;
    frexp(largest, &exponent);
    const double ulp = ldexp(1.0, exponent - TC_SIGNIFICAND_BITS);
    double sum = trunc((double)acc / ulp) * ulp; /* at most 9 multiples of ulp below 2^24 ulp: exact */
    for (int t = 0; t < n; t++)
        sum += trunc(products[t] / ulp) * ulp;
    return (float)truncate_significand(sum);
}

static bool tensor_cores(const emulator *em)
{
    return em->e->method.accumulation == FA_ACCUM_TENSOR_CORE;
}

/* ---- the steps of one row ---------------------------------------------------------------- */

static float dot_product(const emulator *em, const float *k)
{
    const int64_t dim = em->p->head_dim;
    const bool reverse = em->e->reverse_sum_order;
    float acc = 0.0f;
    if (!tensor_cores(em)) {
        for (int64_t step = 0; step < dim; step++) {
            const int64_t d = reverse ? dim - 1 - step : step;
            acc = fmaf(em->q[d], k[d], acc);
        }
        return acc;
    }
    const int64_t groups = (dim + TC_BLOCK - 1) / TC_BLOCK;
    for (int64_t step = 0; step < groups; step++) {
        const int64_t g = reverse ? groups - 1 - step : step;
        int n = 0;
        for (int64_t d = g * TC_BLOCK; d < dim && d < (g + 1) * TC_BLOCK; d++)
            em->products[n++] = (double)em->q[d] * (double)k[d];
        acc = tensor_core_step(acc, em->products, n);
    }
    return acc;
}

/**
 * The kernel's mask: the band of fa_mask.h, as the kernels use it, clipped
 * to the keys the kernel reads (the tail mutant reads past the last one),
 * with the mask mutants as its diagonal moved by one key (a band unbounded
 * on both sides, no mask, does not move).
 */
static bool kernel_allows(const emulator *em, int64_t b, int64_t i, int64_t j)
{
    const fa_attn_problem *p = em->p;
    int64_t limit = p->key_length ? p->key_length[b] : p->nk;
    if (em->e->mutant == FA_MUTANT_TAIL_ROUNDED_UP)
        limit = (limit + em->block - 1) / em->block * em->block;
    fa_key_window band = fa_attn_band(p);
    if (em->e->mutant == FA_MUTANT_CAUSAL_ONE_AHEAD)
        band.offset += 1; /* j <= i + 1: one key too many */
    else if (em->e->mutant == FA_MUTANT_CAUSAL_STRICT)
        band.offset -= 1; /* j < i: the diagonal left out */
    const fa_key_range range = fa_window_key_range(band, fa_attn_row(p, i), limit); /* the keys it reads */
    return j >= range.begin && j < range.end;
}

/** exp of the kernel's difference m_old - m_new, or of x - m, on the kernel's path. */
static float exp_of_difference(const emulator *em, float x, float m, int direction)
{
    switch (em->path) {
    case PATH_EXP2_PRESCALED: {
        /* FlashAttention-2: one FFMA x c log2(e) - fl(m c log2(e)). */
        const float m_scaled = m * em->scale_log2;
        return emulate_exp(em, fmaf(x, em->scale_log2, -m_scaled), direction);
    }
    case PATH_SCALED: return emulate_exp(em, x - m, direction);
    case PATH_UNSCALED: return emulate_exp(em, em->scale * (x - m), direction);
    }
    return NAN;
}

/** The rescale factor when the running max moves from @p m_old to @p m_new. */
static float rescale_factor(const emulator *em, float m_old, float m_new, int direction)
{
    if (m_old == -INFINITY)
        return 0.0f; /* nothing accumulated yet; avoids -inf - -inf */
    float from = m_old, to = m_new;
    if (em->e->mutant == FA_MUTANT_RESCALE_WRONG_SIGN) {
        from = m_new;
        to = m_old;
    }
    if (em->path == PATH_EXP2_PRESCALED) /* FlashAttention-2: exp2((m_old - m_new) c log2(e)) */
        return emulate_exp(em, (from - to) * em->scale_log2, direction);
    return exp_of_difference(em, from, to, direction);
}

static int sign_of(double x) { return x < 0.0 ? -1 : 1; }

/** Accumulates p_j v_j of keys [j0, j1) into em->acc (block-local indices from j0). */
static void accumulate_pv(emulator *em, int64_t j0, int64_t j1)
{
    const int64_t dim = em->p->head_dim, n = j1 - j0;
    const bool reverse = em->e->reverse_sum_order;
    if (em->e->mutant == FA_MUTANT_PV_BF16_ACCUMULATOR || !tensor_cores(em)) {
        const bool bf16 = em->e->mutant == FA_MUTANT_PV_BF16_ACCUMULATOR;
        for (int64_t step = 0; step < n; step++) {
            const int64_t t = reverse ? n - 1 - step : step;
            const float pj = em->p_rounded[t];
            if (pj == 0.0f)
                continue;
            const float *v = em->v + (j0 + t) * dim;
            for (int64_t d = 0; d < dim; d++) {
                const float sum = fmaf(pj, v[d], em->acc[d]);
                em->acc[d] = bf16 ? fa_round_to(FA_BF16, sum) : sum;
            }
        }
        return;
    }
    /* Tensor cores: groups of TC_BLOCK keys, aligned to the key index. */
    const int64_t g0 = j0 / TC_BLOCK, g1 = (j1 - 1) / TC_BLOCK;
    for (int64_t step = 0; step <= g1 - g0; step++) {
        const int64_t g = reverse ? g1 - step : g0 + step;
        const int64_t a = g * TC_BLOCK > j0 ? g * TC_BLOCK : j0;
        const int64_t z = (g + 1) * TC_BLOCK < j1 ? (g + 1) * TC_BLOCK : j1;
        for (int64_t d = 0; d < dim; d++) {
            int count = 0;
            for (int64_t j = a; j < z; j++)
                em->products[count++] = (double)em->p_rounded[j - j0] * (double)em->v[j * dim + d];
            em->acc[d] = tensor_core_step(em->acc[d], em->products, count);
        }
    }
}

static float sum_block(const emulator *em, const float *w, int64_t n)
{
    float s = 0.0f;
    for (int64_t step = 0; step < n; step++)
        s += w[em->e->reverse_sum_order ? n - 1 - step : step];
    return s;
}

/** logf(l), pushed by the adversary. */
static float emulate_log(const emulator *em, float l, bool base2, int direction)
{
    const float r = (float)(base2 ? log2((double)l) : log((double)l));
    return em->e->adversarial ? nudge(r, LOG_ULPS, direction) : r;
}

/** What the kernel writes for lse from its max @p m (kernel units) and sum @p l. */
static float row_lse(const emulator *em, float m, float l, int direction)
{
    const fa_mutant mutant = em->e->mutant;
    if (mutant == FA_MUTANT_LSE_WITHOUT_MAX)
        return emulate_log(em, l, false, direction);
    /* The max in natural units of the scores: m c where m is unscaled. */
    const float m_natural = em->path == PATH_SCALED ? m : m * em->scale;
    if (mutant == FA_MUTANT_LSE_LOG2) {
        const float m_log2 = em->path == PATH_EXP2_PRESCALED ? m * em->scale_log2
                                                             : m_natural * (float)LOG2E;
        return m_log2 + emulate_log(em, l, true, direction);
    }
    return m_natural + emulate_log(em, l, false, direction);
}

static void emulate_row(emulator *em, int64_t b, int64_t h, int64_t i, float *o, float *lse)
{
    const fa_attn_problem *p = em->p;
    const fa_emulation *e = em->e;
    const int64_t dim = p->head_dim, block = em->block;
    const int64_t nblocks = (em->key_rows + block - 1) / block;
    const int64_t row = (b * p->heads_q + h) * p->nq + i;
    const double *target = e->adversarial ? e->adversarial_reference->o + row * dim : NULL;
    const int64_t column = e->adversarial_column;
    const int sign = e->adversarial_sign;

    float m = e->mutant == FA_MUTANT_MAX_INIT_ZERO ? 0.0f : -INFINITY;
    float l = 0.0f;
    for (int64_t d = 0; d < dim; d++)
        em->acc[d] = 0.0f;

    for (int64_t step = 0; step < nblocks; step++) {
        const int64_t t = e->reverse_block_order ? nblocks - 1 - step : step;
        const int64_t j0 = t * block;
        const int64_t j1 = j0 + block < em->key_rows ? j0 + block : em->key_rows;
        float block_max = -INFINITY;
        for (int64_t j = j0; j < j1; j++) {
            float x = -INFINITY;
            if (kernel_allows(em, b, i, j)) {
                x = dot_product(em, em->k + j * dim);
                if (em->path == PATH_SCALED)
                    x *= em->scale;
            }
            em->x[j - j0] = x;
            block_max = fa_max_nan(block_max, x);
        }
        if (block_max == -INFINITY)
            continue; /* a fully masked block changes nothing (a NaN score is no -inf: it stays) */
        const float m_new = fa_max_nan(m, block_max);

        /* The adversary raises weights of keys whose value lies above the
         * target, and the rescale when the earlier blocks' mean does. */
        int alpha_direction = sign;
        if (target && column >= 0 && l > 0.0f)
            alpha_direction = sign * sign_of((double)em->acc[column] / l - target[column]);
        const float alpha = rescale_factor(em, m, m_new, alpha_direction);
        for (int64_t j = j0; j < j1; j++) {
            const int64_t t_local = j - j0;
            int direction = sign;
            if (target && column >= 0)
                direction = sign * sign_of((double)em->v[j * dim + column] - target[column]);
            const float w = em->x[t_local] == -INFINITY
                ? 0.0f : exp_of_difference(em, em->x[t_local], m_new, direction);
            em->weight[t_local] = w;
            em->p_rounded[t_local] = fa_round_to(e->method.p_dtype, w);
        }
        const bool l_rounded = e->method.l_from_rounded_p && e->method.p_dtype != FA_F32;
        const float block_sum = sum_block(em, l_rounded ? em->p_rounded : em->weight, j1 - j0);
        l = (e->mutant == FA_MUTANT_NO_RESCALE_L ? l : alpha * l) + block_sum;
        if (e->mutant != FA_MUTANT_NO_RESCALE_O) {
            for (int64_t d = 0; d < dim; d++) {
                const float scaled = alpha * em->acc[d];
                em->acc[d] = e->mutant == FA_MUTANT_PV_BF16_ACCUMULATOR ? fa_round_to(FA_BF16, scaled) : scaled;
            }
        }
        accumulate_pv(em, j0, j1);
        m = m_new;
    }

    if (l == 0.0f) {
        /* No allowed key (or every weight underflowed): o = 0, lse = -inf. */
        const bool nan_bug = e->mutant == FA_MUTANT_NAN_EMPTY_ROW;
        for (int64_t d = 0; d < dim; d++)
            o[d] = nan_bug ? NAN : 0.0f;
        if (lse)
            *lse = nan_bug ? NAN : -INFINITY;
        return;
    }
    float r = 0.0f;
    if (e->method.normalisation == FA_NORM_RECIPROCAL) {
        r = 1.0f / l;
        if (e->adversarial) {
            const int toward = column >= 0 ? sign * sign_of((double)em->acc[column]) : sign;
            r = nudge(r, RCP_ULPS, toward);
        }
    }
    for (int64_t d = 0; d < dim; d++) {
        float value = em->acc[d];
        if (e->mutant != FA_MUTANT_NO_NORMALISATION)
            value = e->method.normalisation == FA_NORM_RECIPROCAL ? value * r : value / l;
        o[d] = fa_round_to(e->method.output_dtype, value);
    }
    if (lse)
        *lse = row_lse(em, m, l, sign);
}

/* ---- setup ------------------------------------------------------------------------------- */

static fa_status validate(const fa_attn_problem *p, const fa_emulation *e, const float *o)
{
    if (!p || !e || !o)
        return fa_fail(FA_ERR_NULL_POINTER, "emulate attention: %s is NULL", !p ? "problem" : !e ? "emulation" : "o");
    const fa_attn_method *m = &e->method;
    if ((int)e->mutant < 0 || e->mutant >= FA_MUTANT_COUNT)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "emulate attention: mutant = %d", (int)e->mutant);
    if (m->block_n < 0)
        return fa_fail(FA_ERR_INVALID_SIZE, "emulate attention: method.block_n = %lld", (long long)m->block_n);
    if (m->exp_method != FA_EXP_EXPF && m->exp_method != FA_EXP_EXP2_PRESCALED && m->exp_method != FA_EXP_FAST)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "emulate attention: method.exp_method = %d", (int)m->exp_method);
    if (m->accumulation == FA_ACCUM_TENSOR_CORE && (m->input_dtype == FA_F32 || m->p_dtype == FA_F32))
        return fa_fail(FA_ERR_UNSUPPORTED, "emulate attention: tensor cores need bf16 or fp16 inputs and P");
    if (e->mutant == FA_MUTANT_TAIL_ROUNDED_UP && m->block_n == 0)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "emulate attention: the tail mutant needs method.block_n > 0");
    if ((e->mutant == FA_MUTANT_LOG2E_FORGOTTEN || e->mutant == FA_MUTANT_LOG2E_DOUBLED) &&
        (m->exp_method != FA_EXP_EXP2_PRESCALED || e->unscaled_exp))
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "emulate attention: the log2(e) mutants need the exp2 prescaled path");
    if (e->adversarial) {
        if (!e->adversarial_reference || (e->adversarial_sign != 1 && e->adversarial_sign != -1) ||
            e->adversarial_column < -1 || e->adversarial_column >= p->head_dim)
            return fa_fail(FA_ERR_INVALID_ARGUMENT,
                           "emulate attention: adversarial mode needs a reference, sign +-1 (got %d) and a column "
                           "in -1..%lld (got %lld)", e->adversarial_sign, (long long)p->head_dim - 1,
                           (long long)e->adversarial_column);
    }
    if (p->batch < 0 || p->heads_q < 0 || p->heads_kv <= 0 || p->heads_q % p->heads_kv != 0 || p->nq < 0 ||
        p->nk < 0 || p->head_dim < 0)
        return fa_fail(FA_ERR_INVALID_SIZE, "emulate attention: inconsistent shape");
    /* The sizes the reference accepts, and the key rows the kernel may read
     * (past nk up to a whole block for the tail mutant). */
    int64_t rows, elements, key_rows = p->nk, kv_elements;
    FA_TRY(fa_attn_require_sizes("emulate attention", p, &rows, &elements));
    if (e->mutant == FA_MUTANT_TAIL_ROUNDED_UP) {
        const int64_t tail[2] = {fa_ceil_div(p->nk, m->block_n), m->block_n};
        FA_TRY(fa_ref_elements("emulate attention", "key blocks * block_n", tail, 2,
                               (int64_t)sizeof(float), &key_rows));
    }
    const int64_t kv[2] = {key_rows, p->head_dim};
    FA_TRY(fa_ref_elements("emulate attention", "key rows * head_dim", kv, 2, (int64_t)sizeof(float),
                           &kv_elements));
    FA_TRY(fa_view_require_extent("emulate attention", "q", &p->q, p->batch, p->heads_q, p->nq, p->head_dim));
    FA_TRY(fa_view_require_extent("emulate attention", "k", &p->k, p->batch, p->heads_kv, key_rows, p->head_dim));
    return fa_view_require_extent("emulate attention", "v", &p->v, p->batch, p->heads_kv, key_rows,
                                  p->head_dim);
}

static void emulator_free(emulator *em)
{
    free(em->k);
    free(em->v);
    free(em->q);
    free(em->x);
    free(em->weight);
    free(em->p_rounded);
    free(em->acc);
    free(em->products);
}

static double effective_scale(const fa_attn_problem *p, fa_mutant mutant)
{
    if (mutant == FA_MUTANT_SCALE_ONE_OVER_D)
        return 1.0 / (double)p->head_dim;
    if (mutant == FA_MUTANT_NO_SCALE)
        return 1.0;
    return p->scale;
}

static double effective_log2e(fa_mutant mutant)
{
    if (mutant == FA_MUTANT_LOG2E_FORGOTTEN)
        return 1.0;
    if (mutant == FA_MUTANT_LOG2E_DOUBLED)
        return LOG2E * LOG2E;
    return LOG2E;
}

/** K or V rows [0, rows) of one (batch, kv head) as floats. */
static void load_head(const fa_tensor_view *t, int64_t b, int64_t g, int64_t rows, int64_t dim, float *out)
{
    for (int64_t j = 0; j < rows; j++) {
        const int64_t base = b * t->stride_batch + g * t->stride_head + j * t->stride_row;
        for (int64_t d = 0; d < dim; d++)
            out[j * dim + d] = fa_load(t->data, t->dtype, base + d);
    }
}

fa_status fa_emulate_attention(const fa_attn_problem *p, const fa_emulation *e, float *o, float *lse)
{
    FA_TRY(validate(p, e, o));
    const int64_t rows = p->batch * p->heads_q * p->nq, dim = p->head_dim;
    if (rows == 0 || dim == 0)
        return FA_OK; /* as the reference: no outputs for an empty shape */
    const double scale = effective_scale(p, e->mutant);
    emulator em = {
        .p = p,
        .e = e,
        .path = e->unscaled_exp ? PATH_UNSCALED
              : e->method.exp_method == FA_EXP_EXP2_PRESCALED ? PATH_EXP2_PRESCALED : PATH_SCALED,
        .scale = (float)scale,
        .scale_log2 = (float)(scale * effective_log2e(e->mutant)),
        .block = e->method.block_n > 0 ? e->method.block_n : (p->nk > 0 ? p->nk : 1),
    };
    em.key_rows = e->mutant == FA_MUTANT_TAIL_ROUNDED_UP ? (p->nk + em.block - 1) / em.block * em.block : p->nk;
    const size_t kv = (size_t)(em.key_rows * dim) + 1, blk = (size_t)em.block + 1;
    em.k = malloc(kv * sizeof(float));
    em.v = malloc(kv * sizeof(float));
    em.q = malloc((size_t)dim * sizeof(float));
    em.x = malloc(blk * sizeof(float));
    em.weight = malloc(blk * sizeof(float));
    em.p_rounded = malloc(blk * sizeof(float));
    em.acc = malloc((size_t)dim * sizeof(float));
    em.products = malloc(TC_BLOCK * sizeof(double));
    if (!em.k || !em.v || !em.q || !em.x || !em.weight || !em.p_rounded || !em.acc ||
        !em.products) {
        emulator_free(&em);
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "emulate attention: no host memory for nk = %lld", (long long)p->nk);
    }

    const int64_t group = p->heads_q / p->heads_kv;
    for (int64_t b = 0; b < p->batch; b++) {
        for (int64_t g = 0; g < p->heads_kv; g++) {
            load_head(&p->k, b, g, em.key_rows, dim, em.k);
            load_head(&p->v, b, g, em.key_rows, dim, em.v);
            for (int64_t h = g * group; h < (g + 1) * group; h++) {
                for (int64_t i = 0; i < p->nq; i++) {
                    const int64_t row = (b * p->heads_q + h) * p->nq + i;
                    const int64_t base = b * p->q.stride_batch + h * p->q.stride_head + i * p->q.stride_row;
                    for (int64_t d = 0; d < dim; d++)
                        em.q[d] = fa_load(p->q.data, p->q.dtype, base + d);
                    emulate_row(&em, b, h, i, o + row * dim, lse ? lse + row : NULL);
                }
            }
        }
    }
    emulator_free(&em);
    return FA_OK;
}
