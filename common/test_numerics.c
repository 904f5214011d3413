/**
 * @file test_numerics.c
 * @brief The evidence that the attention check is right and can fail
 *        (page "How outputs are judged", docs/numerics.md).
 *
 * 1. The double reference: classic cases with known answers, NaN in q and v
 *    (allowed and masked keys), the bound of a row with no key, metamorphic
 *    relations (shift, permutation, scaling, packing, layout), bad input.
 * 2. The bound covers every correct kernel, including one whose exp, rcp
 *    and log are pushed adversarially to the edge of their documented error.
 * 3. Method ablation: a correct blocked kernel with bf16 P is covered by its
 *    own bound and not by the definition's; dropping bf16 P, the reciprocal
 *    or tensor-core accumulation from the declaration makes it fail on the
 *    input that exposes that method (exp2 is not separable from expf).
 * 4. Mutation suite: each planted bug is rejected by more than 10x on the
 *    input generated to expose it, while the correct kernel and its
 *    equivalent variants are covered everywhere and stay below half the
 *    bound on all but 1% of the elements.
 * 5. The softmax reference (fa_softmax_ref.h): hand-computable rows, masks,
 *    empty and NaN rows, and its bound covering fp32 emulations of the
 *    three-pass and online methods while rejecting planted errors.
 * 6. What the check refuses to judge: a bound element that is not a finite
 *    number >= 0, rows too long (2^23, 2^24 keys) or scores too large for a
 *    finite bound, sizes whose products overflow; and statistics that keep NaN.
 * 7. Every term of the bounds carries weight: without the merge rises the
 *    softmax bound no longer covers an adversarial kernel; the rescale term
 *    rho of the attention bound is shown dominated, and why.
 *
 *   test_numerics                  run everything, last line "N passed, N failed"
 *   test_numerics --tables FILE    also write the ablation and mutation tables
 *                                  (markdown, for the docs page) to FILE
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa_adversarial.h"
#include "fa_attention_ref.h"
#include "fa_bound.h"
#include "fa_bytes.h"
#include "fa_emulate.h"
#include "fa_math.h"
#include "fa_reference.h"
#include "fa_softmax_ref.h"
#include "fa_test.h"

/* Fixed seed: the docs tables must not change from one build to the next. */
#define SEED 20240611u
/* Verdict thresholds. A correct kernel cannot promise err/bound
 * <= 0.5 on every element: the P-rounding and output-rounding terms are single
 * roundings that a kernel attains (two keys, the second's bf16 weight 0.97 u_P
 * off, gives 0.89). So an equivalent kernel must be covered everywhere and
 * stay below half the bound on all but EQUIVALENT_MAX_FRACTION of elements. */
#define MUTANT_MIN_RATIO 10.0
#define EQUIVALENT_HALF 0.5
#define EQUIVALENT_MAX_FRACTION 0.01
/* Metamorphic relations hold exactly; the double reference's own error is
 * below 3 * 2^-29 of the fp32 naive bound (fa_bound.c), so two references
 * must agree within this fraction of their bounds. */
#define METAMORPHIC_TOLERANCE 0x1p-26

/* Shapes of the generated inputs. */
enum {
    BLOCK_N = 64,           /* the declared key block of the emulated kernels */
    HEAD_DIM = 32,
    ROWS = 130,             /* two full blocks and a tail of 2 */
    PAD_ROWS = BLOCK_N,     /* enough for a kernel that reads its tail block in full */
    LONG_KEYS = 512,        /* long rows, where a bf16 accumulator stagnates */
    TC_PROBE_HEAD_DIM = 64
};
_Static_assert(PAD_ROWS >= BLOCK_N - 1, "the tail mutant reads up to BLOCK_N - 1 rows past nk");
_Static_assert(ROWS % BLOCK_N != 0, "random inputs end in a partial block");

/* Designed scores of the generated inputs. */
#define SENTINEL_SCORE 8.0      /* dominates a row of spread-1 scores */
#define SENTINEL_VALUE 20.0
#define MAX_RISE 4.0            /* score step of a raised block */
#define ROW_BIAS_HIGH 1000.0    /* lse far above its bound (catches lse without the max) */
#define ROW_BIAS_LOW (-200.0)   /* exp(s - 0) underflows: catches a max initialised to 0 */
#define V_OFFSET 1000.0         /* makes the P-rounding and accumulator terms dominate */

/* ---- the methods ------------------------------------------------------------------------- */

/** FlashAttention-2's methods: the mutation suite's correct kernel. */
static const fa_attn_method FA2_METHOD = {
    .input_dtype = FA_BF16, .accumulation = FA_ACCUM_TENSOR_CORE, .block_n = BLOCK_N,
    .p_dtype = FA_BF16, .l_from_rounded_p = false, .exp_method = FA_EXP_EXP2_PRESCALED,
    .normalisation = FA_NORM_RECIPROCAL, .output_dtype = FA_F32,
};

/*
 * The ablation's kernel sums l from the rounded P. With FlashAttention-2's
 * choice, U_P = u_P sum p|v| (2^-8 relative) dwarfs the O(u) terms of the
 * reciprocal and of tensor-core truncation, so no input could show that
 * leaving them out of the declaration matters.
 */
static const fa_attn_method ABLATION_METHOD = {
    .input_dtype = FA_BF16, .accumulation = FA_ACCUM_TENSOR_CORE, .block_n = BLOCK_N,
    .p_dtype = FA_BF16, .l_from_rounded_p = true, .exp_method = FA_EXP_EXP2_PRESCALED,
    .normalisation = FA_NORM_RECIPROCAL, .output_dtype = FA_F32,
};

/** Further correct kernels whose bound the adversary attacks. */
static const fa_attn_method OTHER_METHODS[] = {
    /* the definition: fp32 everywhere, one block, expf, division */
    {.input_dtype = FA_F32},
    /* fp16 on CUDA cores, __expf, small blocks, fp16 output */
    {.input_dtype = FA_F16, .block_n = 32, .p_dtype = FA_F16, .exp_method = FA_EXP_FAST,
     .output_dtype = FA_F16},
    /* bf16 in, fp32 P, exp2, reciprocal, bf16 output */
    {.input_dtype = FA_BF16, .block_n = 16, .exp_method = FA_EXP_EXP2_PRESCALED,
     .normalisation = FA_NORM_RECIPROCAL, .output_dtype = FA_BF16},
};
static const char *const OTHER_METHOD_NAMES[] = {
    "fp32, naive, expf, division",
    "fp16, FFMA, B = 32, fp16 P, __expf, fp16 output",
    "bf16, FFMA, B = 16, fp32 P, exp2, rcp, bf16 output",
};
enum { OTHER_METHOD_COUNT = sizeof OTHER_METHODS / sizeof OTHER_METHODS[0] };
_Static_assert(sizeof OTHER_METHOD_NAMES / sizeof OTHER_METHOD_NAMES[0] == OTHER_METHOD_COUNT, "one name per method");

/* ---- the inputs -------------------------------------------------------------------------- */

typedef enum input_id {
    IN_SPREAD_0_3,
    IN_SPREAD_1,
    IN_SPREAD_3,
    IN_SPREAD_8,
    IN_ONE_KEY,
    IN_BLOCK_MINUS_1,
    IN_BLOCK,
    IN_BLOCK_PLUS_1,
    IN_MAX_FIRST,
    IN_MAX_LAST,
    IN_MAX_RISING,
    IN_BIAS_HIGH,
    IN_BIAS_LOW,
    IN_CAUSAL_SENTINELS,
    IN_BOTTOM_RIGHT_SENTINELS,
    IN_TAIL_SENTINELS,
    IN_TAIL_CANARIES,
    IN_EMPTY_ROWS,
    IN_V_OFFSET,
    IN_FEW_KEYS,
    IN_CONSTANT_V_CAUSAL,
    IN_TC_TRUNCATION,
    IN_COUNT
} input_id;

static const char *const INPUT_NAMES[IN_COUNT] = {
    [IN_SPREAD_0_3] = "random, score spread 0.3",
    [IN_SPREAD_1] = "random, score spread 1",
    [IN_SPREAD_3] = "random, score spread 3",
    [IN_SPREAD_8] = "random, score spread 8",
    [IN_ONE_KEY] = "N = 1",
    [IN_BLOCK_MINUS_1] = "N = B - 1",
    [IN_BLOCK] = "N = B",
    [IN_BLOCK_PLUS_1] = "N = B + 1",
    [IN_MAX_FIRST] = "max in the first block",
    [IN_MAX_LAST] = "max rising in the last block",
    [IN_MAX_RISING] = "max rising in every block",
    [IN_BIAS_HIGH] = "row bias +1000",
    [IN_BIAS_LOW] = "row bias -200",
    [IN_CAUSAL_SENTINELS] = "sentinels at the causal boundary",
    [IN_BOTTOM_RIGHT_SENTINELS] = "sentinels, bottom-right causal",
    [IN_TAIL_SENTINELS] = "sentinels past key_length",
    [IN_TAIL_CANARIES] = "canaries past N",
    [IN_EMPTY_ROWS] = "rows with no allowed key",
    [IN_V_OFFSET] = "V offset by +1000, N = 512",
    [IN_FEW_KEYS] = "8 keys, centred V",
    [IN_CONSTANT_V_CAUSAL] = "causal, V = 1 + 2^-7",
    [IN_TC_TRUNCATION] = "tensor-core truncation probe",
};

/** The shape most inputs start from: GQA (2 query heads on 1 kv head), a partial last block. */
static fa_case_shape default_shape(fa_dtype dtype)
{
    return (fa_case_shape){.batch = 1, .heads_q = 2, .heads_kv = 1, .nq = ROWS, .nk = ROWS,
                           .head_dim = HEAD_DIM, .mask = FA_MASK_NONE, .dtype = dtype, .pad_rows = PAD_ROWS};
}

/**
 * Two keys whose q.k differ only in 63 products just below one ulp of the
 * first product: exact fp32 sums keep them (s differs by 0.12), a truncating
 * tensor core drops them all (s equal), so o moves by 0.06 where the fp32
 * dot-product term allows about 0.04.
 */
static void build_tensor_core_probe(fa_attn_case *c)
{
    const double large = 256.0; /* q_0 k_0 = 2^16 sets the alignment frame */
    const double below_ulp = 1.9921875 * ldexp(1.0, 16 - 24); /* 0.996 of ulp(2^16) */
    fa_case_set(c, FA_CASE_Q, 0, 0, 0, 0, large);
    for (int64_t j = 0; j < 2; j++) {
        fa_case_set(c, FA_CASE_K, 0, 0, j, 0, large);
        for (int64_t d = 1; d < c->shape.head_dim; d++) {
            fa_case_set(c, FA_CASE_Q, 0, 0, 0, d, 1.0);
            fa_case_set(c, FA_CASE_K, 0, 0, j, d, j == 0 ? below_ulp : -below_ulp);
        }
        for (int64_t d = 0; d < c->shape.head_dim; d++)
            fa_case_set(c, FA_CASE_V, 0, 0, j, d, j == 0 ? 1.0 : -1.0);
    }
}

/** Builds input @p id in @p dtype into @p c (created here; free with fa_case_free()). */
static fa_status build_input(input_id id, fa_dtype dtype, fa_attn_case *c)
{
    fa_rng rng;
    fa_rng_seed(&rng, SEED, (uint64_t)id);
    fa_case_shape shape = default_shape(dtype);
    double spread = 1.0, v_offset = 0.0;
    switch (id) {
    case IN_SPREAD_0_3: spread = 0.3; shape.sequence_major = true; break;
    case IN_SPREAD_3: spread = 3.0; break;
    case IN_SPREAD_8: spread = 8.0; shape.heads_kv = 2; break;
    case IN_ONE_KEY: shape.nk = 1; break;
    case IN_BLOCK_MINUS_1: shape.nk = BLOCK_N - 1; break;
    case IN_BLOCK: shape.nk = BLOCK_N; break;
    case IN_BLOCK_PLUS_1: shape.nk = BLOCK_N + 1; break;
    case IN_CAUSAL_SENTINELS: shape.mask = FA_MASK_CAUSAL_TOP_LEFT; break;
    case IN_BOTTOM_RIGHT_SENTINELS: shape.mask = FA_MASK_CAUSAL_BOTTOM_RIGHT; shape.nq = 70; break;
    case IN_TAIL_SENTINELS: shape.batch = 2; shape.key_padding = true; break;
    case IN_EMPTY_ROWS:
        shape.batch = 2; shape.key_padding = true; shape.mask = FA_MASK_CAUSAL_BOTTOM_RIGHT;
        shape.nq = 100; shape.nk = 70;
        break;
    case IN_V_OFFSET: shape.heads_q = 1; shape.nq = 64; shape.nk = LONG_KEYS; spread = 0.3; v_offset = V_OFFSET; break;
    case IN_FEW_KEYS: shape.heads_q = shape.heads_kv = 1; shape.nq = 64; shape.nk = 8; shape.head_dim = 16; spread = 0.3; break;
    case IN_CONSTANT_V_CAUSAL: shape.heads_q = 1; shape.nq = shape.nk = 16; shape.mask = FA_MASK_CAUSAL_TOP_LEFT; break;
    case IN_TC_TRUNCATION: shape.heads_q = 1; shape.nq = 1; shape.nk = 2; shape.head_dim = TC_PROBE_HEAD_DIM; break;
    default: break;
    }
    FA_TRY(fa_case_create(c, &shape));
    if (id == IN_TC_TRUNCATION) {
        build_tensor_core_probe(c);
        return FA_OK;
    }
    fa_case_fill_scores(c, spread, &rng);
    fa_case_fill_values(c, v_offset, &rng);
    fa_case_fill_canaries(c);
    switch (id) {
    case IN_MAX_FIRST: fa_case_place_max(c, BLOCK_N, FA_MAX_IN_FIRST_BLOCK, MAX_RISE); break;
    case IN_MAX_LAST: fa_case_place_max(c, BLOCK_N, FA_MAX_IN_LAST_BLOCK, MAX_RISE); break;
    case IN_MAX_RISING: fa_case_place_max(c, BLOCK_N, FA_MAX_RISES_EVERY_BLOCK, MAX_RISE); break;
    case IN_BIAS_HIGH: fa_case_set_row_bias(c, ROW_BIAS_HIGH); break;
    case IN_BIAS_LOW: fa_case_set_row_bias(c, ROW_BIAS_LOW); break;
    case IN_CAUSAL_SENTINELS:
    case IN_BOTTOM_RIGHT_SENTINELS: fa_case_place_causal_sentinels(c, SENTINEL_SCORE, SENTINEL_VALUE); break;
    case IN_TAIL_SENTINELS:
        fa_case_set_key_length(c, 0, ROWS - 37);
        fa_case_place_tail_sentinels(c, SENTINEL_SCORE, SENTINEL_VALUE);
        break;
    case IN_EMPTY_ROWS: fa_case_set_key_length(c, 1, 0); break;
    case IN_CONSTANT_V_CAUSAL:
        /* o = v for every row whatever the weights; row 0 has one key, so l = 1
         * and only the normalisation can err: 1 + 2^-7 sits just above a power
         * of two, where one ulp of rcp is 2u. */
        for (int64_t j = 0; j < shape.nk; j++)
            for (int64_t d = 0; d < shape.head_dim; d++)
                fa_case_set(c, FA_CASE_V, 0, 0, j, d, 1.0 + 0x1p-7);
        break;
    default: break;
    }
    return FA_OK;
}

/* ---- running a kernel against a declared method ------------------------------------------ */

/** The worst err/bound of one emulation, over o and lse. */
typedef struct verdict {
    double ratio;          /* max of the o and lse ratios */
    double o_ratio, lse_ratio;
    int64_t nonfinite;
    int64_t elements;      /* o and lse elements judged */
    int64_t above_half;    /* of them, with err > EQUIVALENT_HALF * bound */
} verdict;

/*
 * The statistics of this program keep NaN, as the check's do: a NaN ratio
 * (an element the check refused to judge, a NaN output in a hand-made
 * comparison) is larger than any number and smaller than any number, so it
 * can neither hide behind a finite worst nor pass a "<= 1" or "> 10".
 */
static double min_nan(double a, double b) { return -fa_max_nan_double(-a, -b); }

/** True when @p ratio replaces @p worst as the worst so far (a NaN does, once). */
static bool worse(double ratio, double worst) { return isnan(ratio) ? !isnan(worst) : ratio > worst; }

static void verdict_merge(verdict *into, const verdict *v)
{
    into->ratio = fa_max_nan_double(into->ratio, v->ratio);
    into->o_ratio = fa_max_nan_double(into->o_ratio, v->o_ratio);
    into->lse_ratio = fa_max_nan_double(into->lse_ratio, v->lse_ratio);
    into->nonfinite += v->nonfinite;
    into->elements += v->elements;
    into->above_half += v->above_half;
}

static double fraction_above_half(const verdict *v)
{
    return v->elements > 0 ? (double)v->above_half / (double)v->elements : 0.0;
}

/** Elements of out[0..n) whose error exceeds half their (positive) bound. */
static int64_t count_above_half(const float *out, const double *ref, const double *bound, int64_t n)
{
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++)
        if (isfinite(ref[i]) && fabs((double)out[i] - ref[i]) > EQUIVALENT_HALF * bound[i])
            count++;
    return count;
}

static int64_t row_count(const fa_attn_reference *r) { return r->batch * r->heads * r->rows; }

/** One input with the reference of the kernel's own method (the adversary's target). */
typedef struct prepared_input {
    fa_attn_case c;
    fa_attn_reference kernel_ref;
    float *o, *lse;
} prepared_input;

static fa_status prepare(input_id id, const fa_attn_method *kernel, prepared_input *in)
{
    *in = (prepared_input){0};
    FA_TRY(build_input(id, kernel->input_dtype, &in->c));
    FA_TRY(fa_attention_reference(&in->c.problem, kernel, &in->kernel_ref));
    const int64_t rows = in->c.problem.batch * in->c.problem.heads_q * in->c.problem.nq;
    in->o = malloc(((size_t)(rows * in->c.problem.head_dim) + 1) * sizeof(float));
    in->lse = malloc(((size_t)rows + 1) * sizeof(float));
    if (!in->o || !in->lse)
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "test: no memory for outputs");
    return FA_OK;
}

static void release(prepared_input *in)
{
    fa_case_free(&in->c);
    fa_attn_reference_free(&in->kernel_ref);
    free(in->o);
    free(in->lse);
}

/** Runs emulation @p e on @p in and judges it against @p ref. */
static verdict judge(prepared_input *in, const fa_emulation *e, const fa_attn_reference *ref)
{
    fa_emulation run = *e;
    run.adversarial_reference = &in->kernel_ref;
    verdict v = {.ratio = INFINITY, .o_ratio = INFINITY, .lse_ratio = INFINITY};
    if (fa_emulate_attention(&in->c.problem, &run, in->o, in->lse) != FA_OK) {
        printf("emulation failed: %s\n", fa_last_error());
        return v;
    }
    fa_check_report o_report, lse_report;
    fa_attention_covers(ref, in->o, in->lse, &o_report, &lse_report);
    v.o_ratio = o_report.worst_ratio;
    v.lse_ratio = lse_report.worst_ratio;
    v.ratio = fa_max_nan_double(v.o_ratio, v.lse_ratio);
    v.nonfinite = o_report.nonfinite + lse_report.nonfinite;
    const int64_t rows = row_count(ref);
    v.elements = rows * (ref->dim + 1);
    v.above_half = count_above_half(in->o, ref->o, ref->o_bound, rows * ref->dim) +
                   count_above_half(in->lse, ref->lse, ref->lse_bound, rows);
    return v;
}

/** Adversarial runs: both signs, aimed at column 0 of o and at lse. */
static verdict judge_adversarial(prepared_input *in, const fa_attn_method *kernel, const fa_attn_reference *ref)
{
    verdict worst = {0};
    for (int sign = -1; sign <= 1; sign += 2) {
        for (int64_t column = -1; column <= 0; column++) {
            const fa_emulation e = {.method = *kernel, .adversarial = true, .adversarial_sign = sign,
                                    .adversarial_column = column};
            const verdict v = judge(in, &e, ref);
            verdict_merge(&worst, &v);
        }
    }
    return worst;
}

/* ---- tables ------------------------------------------------------------------------------ */

enum { TABLE_ROWS = 48, TABLE_TEXT = 160 };

typedef struct table {
    int rows;
    char line[TABLE_ROWS][TABLE_TEXT];
} table;

static const char *format_ratio(double r, char *buf, size_t cap)
{
    if (isinf(r))
        snprintf(buf, cap, "inf");
    else if (r >= 100.0)
        snprintf(buf, cap, "%.3g", r);
    else
        snprintf(buf, cap, "%.2f", r);
    return buf;
}

static void table_add(table *t, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void table_add(table *t, const char *format, ...)
{
    if (t->rows >= TABLE_ROWS)
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(t->line[t->rows++], TABLE_TEXT, format, args);
    va_end(args);
}

/* ---- 1. the reference -------------------------------------------------------------------- */

/** Elementwise |a - b| <= METAMORPHIC_TOLERANCE (bound_a + bound_b); infinities must match. */
static bool agree(const double *a, const double *bound_a, const double *b, const double *bound_b, int64_t n,
                  double scale_b)
{
    for (int64_t i = 0; i < n; i++) {
        const double want = scale_b * b[i];
        if (isinf(a[i]) || isinf(want)) {
            if (a[i] != want)
                return false;
            continue;
        }
        if (fabs(a[i] - want) > METAMORPHIC_TOLERANCE * (bound_a[i] + fabs(scale_b) * bound_b[i]))
            return false;
    }
    return true;
}

static const fa_attn_method DEFINITION = {0};

/** The ladder's step 2: cases whose answer is known from the definition. */
static void test_reference_classics(fa_tests *t)
{
    /* Uniform logits under a causal mask: row i is the mean of v_0..v_i and lse = ln(i + 1). */
    fa_case_shape shape = {.batch = 1, .heads_q = 1, .heads_kv = 1, .nq = 9, .nk = 9, .head_dim = 4,
                           .mask = FA_MASK_CAUSAL_TOP_LEFT, .dtype = FA_F32};
    fa_attn_case c;
    fa_attn_reference r;
    FA_EXPECT(t, fa_case_create(&c, &shape) == FA_OK, "%s", fa_last_error());
    for (int64_t j = 0; j < 9; j++)
        for (int64_t d = 0; d < 4; d++)
            fa_case_set(&c, FA_CASE_V, 0, 0, j, d, (double)(j * 4 + d)); /* small integers: exact means */
    FA_EXPECT(t, fa_attention_reference(&c.problem, &DEFINITION, &r) == FA_OK, "%s", fa_last_error());
    bool uniform_ok = true;
    for (int64_t i = 0; i < 9; i++) {
        for (int64_t d = 0; d < 4; d++) /* mean of (4j + d) for j <= i = 2i + d */
            uniform_ok &= fabs(r.o[i * 4 + d] - (double)(2 * i + d)) <= METAMORPHIC_TOLERANCE * r.o_bound[i * 4 + d];
        uniform_ok &= fabs(r.lse[i] - log((double)(i + 1))) <= METAMORPHIC_TOLERANCE * r.lse_bound[i];
    }
    FA_EXPECT(t, uniform_ok, "uniform logits: o = mean of the allowed values, lse = ln(keys)");
    fa_attn_reference_free(&r);

    /* One dominant score: key 5 is 60 above every other, so o = v_5 (the others weigh e^-60). */
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 1000);
    c.problem.mask = FA_MASK_NONE;
    double offsets[9] = {0};
    offsets[5] = 60.0;
    fa_case_set_key_offsets(&c, offsets);
    FA_EXPECT(t, fa_attention_reference(&c.problem, &DEFINITION, &r) == FA_OK, "%s", fa_last_error());
    bool dominant_ok = true;
    for (int64_t i = 0; i < 9; i++)
        for (int64_t d = 0; d < 4; d++)
            dominant_ok &= fabs(r.o[i * 4 + d] - (double)(20 + d)) < 1e-20 * 9.0 * 40.0;
    FA_EXPECT(t, dominant_ok, "one dominant score: o = v of that key");
    fa_attn_reference_free(&r);

    /* The same dominant key masked: rows i < 5 must not see it at all, in the
     * max or in the sum, so changing it leaves them bit for bit unchanged. */
    c.problem.mask = FA_MASK_CAUSAL_TOP_LEFT;
    fa_attn_reference before, after;
    FA_EXPECT(t, fa_attention_reference(&c.problem, &DEFINITION, &before) == FA_OK, "%s", fa_last_error());
    offsets[5] = 300.0;
    fa_case_set_key_offsets(&c, offsets);
    for (int64_t d = 0; d < 4; d++)
        fa_case_set(&c, FA_CASE_V, 0, 0, 5, d, 1e6);
    FA_EXPECT(t, fa_attention_reference(&c.problem, &DEFINITION, &after) == FA_OK, "%s", fa_last_error());
    FA_EXPECT(t, memcmp(before.o, after.o, 5 * 4 * sizeof(double)) == 0 && memcmp(before.lse, after.lse, 5 * sizeof(double)) == 0,
              "a masked dominant key changes nothing in the rows that may not see it");
    FA_EXPECT(t, after.o[5 * 4] > 1e5, "the row on its diagonal does see it (o = %g)", after.o[5 * 4]);
    fa_attn_reference_free(&before);
    fa_attn_reference_free(&after);
    fa_case_free(&c);

    /* Distinct values per batch and head, read through GQA and strides: each
     * query head must equal a one-head problem viewing the same slices. */
    fa_case_shape gqa = {.batch = 2, .heads_q = 4, .heads_kv = 2, .nq = 11, .nk = 13, .head_dim = 8,
                         .mask = FA_MASK_CAUSAL_BOTTOM_RIGHT, .dtype = FA_BF16, .sequence_major = true,
                         .pad_rows = 3};
    FA_EXPECT(t, fa_case_create(&c, &gqa) == FA_OK, "%s", fa_last_error());
    fa_case_fill_scores(&c, 2.0, &rng);
    fa_case_fill_values(&c, 0.0, &rng);
    FA_EXPECT(t, fa_attention_reference(&c.problem, &FA2_METHOD, &r) == FA_OK, "%s", fa_last_error());
    bool heads_ok = true;
    for (int64_t b = 0; b < 2; b++) {
        for (int64_t h = 0; h < 4; h++) {
            const int64_t g = h / 2;
            fa_attn_problem one = c.problem;
            one.batch = one.heads_q = one.heads_kv = 1;
            one.q.data = (const uint16_t *)c.q + b * c.problem.q.stride_batch + h * c.problem.q.stride_head;
            one.k.data = (const uint16_t *)c.k + b * c.problem.k.stride_batch + g * c.problem.k.stride_head;
            one.v.data = (const uint16_t *)c.v + b * c.problem.v.stride_batch + g * c.problem.v.stride_head;
            fa_attn_reference single;
            heads_ok &= fa_attention_reference(&one, &FA2_METHOD, &single) == FA_OK;
            const int64_t row0 = (b * 4 + h) * 11;
            heads_ok &= memcmp(single.o, r.o + row0 * 8, 11 * 8 * sizeof(double)) == 0 &&
                        memcmp(single.o_bound, r.o_bound + row0 * 8, 11 * 8 * sizeof(double)) == 0 &&
                        memcmp(single.lse, r.lse + row0, 11 * sizeof(double)) == 0;
            fa_attn_reference_free(&single);
        }
    }
    FA_EXPECT(t, heads_ok, "every (batch, head) equals a one-head problem on its own slices (GQA, [B][N][H][D])");
    fa_attn_reference_free(&r);
    fa_case_free(&c);

    /* Rows with no allowed key: o = 0, lse = -inf, and a bound of exactly 0. */
    prepared_input empty;
    FA_EXPECT(t, prepare(IN_EMPTY_ROWS, &FA2_METHOD, &empty) == FA_OK, "%s", fa_last_error());
    const fa_attn_reference *e = &empty.kernel_ref;
    bool empty_ok = true;
    int64_t empty_rows = 0;
    for (int64_t row = 0; row < row_count(e); row++) {
        const int64_t b = row / (e->heads * e->rows), i = row % e->rows;
        const bool has_key = b == 0 && i >= e->rows - empty.c.shape.nk;
        if (has_key) {
            empty_ok &= isfinite(e->lse[row]) && e->lse_bound[row] > 0.0 && e->o_bound[row * e->dim] > 0.0;
            continue;
        }
        empty_rows++;
        empty_ok &= e->lse[row] == -INFINITY && e->lse_bound[row] == 0.0;
        for (int64_t d = 0; d < e->dim; d++)
            empty_ok &= e->o[row * e->dim + d] == 0.0 && e->o_bound[row * e->dim + d] == 0.0;
    }
    FA_EXPECT(t, empty_ok && empty_rows == 2 * 100 + 30 * 2,
              "rows with no allowed key: o = 0, lse = -inf, bound 0 (%lld such rows)", (long long)empty_rows);
    release(&empty);
}

/** The ladder's step 4: relations that hold exactly, checked on the reference. */
/* A NaN in one query makes exactly that row NaN (o and lse); its neighbours stay finite. */
static void test_reference_nan_row(fa_tests *t)
{
    fa_case_shape shape = {.batch = 1, .heads_q = 1, .heads_kv = 1, .nq = 5, .nk = 7, .head_dim = 4,
                           .mask = FA_MASK_NONE, .dtype = FA_F32};
    fa_attn_case c;
    fa_attn_reference r;
    FA_EXPECT(t, fa_case_create(&c, &shape) == FA_OK, "%s", fa_last_error());
    fa_case_set(&c, FA_CASE_Q, 0, 0, 2, 1, NAN);
    FA_EXPECT(t, fa_attention_reference(&c.problem, &DEFINITION, &r) == FA_OK, "%s", fa_last_error());
    bool nan_row = isnan(r.lse[2]), finite_rows = true;
    for (int64_t i = 0; i < 5; i++) {
        for (int64_t d = 0; d < 4; d++) {
            if (i == 2)
                nan_row &= isnan(r.o[i * 4 + d]);
            else
                finite_rows &= isfinite(r.o[i * 4 + d]);
        }
        if (i != 2)
            finite_rows &= isfinite(r.lse[i]);
    }
    FA_EXPECT(t, nan_row && finite_rows, "NaN in q[row 2] gives a NaN row 2 and finite rows elsewhere");
    fa_attn_reference_free(&r);
    fa_case_free(&c);
}

/*
 * NaN in v (the rule of fa_attention_ref.h): an allowed key's v row reaches o
 * whatever its weight, a masked key's never does. Scale 1, q_i = (1, 0) on
 * every row (zeros after the first dimension of q, k), causal top-left,
 * 4 keys, key_length = 3:
 *   key 0: k_0 = 0,      s = 0,    v = (1, 2, 0)
 *   key 1: k_0 = -gap,   s = -gap, v = (NaN, 5, 0): weight e^-gap, below
 *          fp32's range for gap 200 and 0 in double for gap 800
 *   key 2: k_0 = 0,      s = 0,    v = (3, 4, 0)
 *   key 3: k_0 = 300,    s = 300,  v = (NaN, NaN, NaN): padding, dominant if used.
 * Asserted: row 0 (key 0 only) finite; rows 1..3 (keys 0..2) have column 0
 * NaN (v's NaN column) and columns 1, 2 finite (v finite there, so row 3's
 * finite columns prove the padding key stayed out); lse finite on every row.
 */
static void test_reference_nan_value(fa_tests *t)
{
    const double gaps[] = {200.0, 800.0};
    for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++) {
        fa_case_shape shape = {.batch = 1, .heads_q = 1, .heads_kv = 1, .nq = 4, .nk = 4, .head_dim = 3,
                               .mask = FA_MASK_CAUSAL_TOP_LEFT, .dtype = FA_F32, .key_padding = true};
        fa_attn_case c;
        fa_attn_reference r;
        FA_EXPECT(t, fa_case_create(&c, &shape) == FA_OK, "%s", fa_last_error());
        c.problem.scale = 1.0;
        c.key_length[0] = 3;
        const double k_first[4] = {0.0, -gaps[g], 0.0, 300.0};
        const double v_rows[4][3] = {{1.0, 2.0, 0.0}, {NAN, 5.0, 0.0}, {3.0, 4.0, 0.0}, {NAN, NAN, NAN}};
        for (int64_t n = 0; n < 4; n++) {
            for (int64_t d = 0; d < 3; d++) {
                fa_case_set(&c, FA_CASE_Q, 0, 0, n, d, d == 0 ? 1.0 : 0.0);
                fa_case_set(&c, FA_CASE_K, 0, 0, n, d, d == 0 ? k_first[n] : 0.0);
                fa_case_set(&c, FA_CASE_V, 0, 0, n, d, v_rows[n][d]);
            }
        }
        FA_EXPECT(t, fa_attention_reference(&c.problem, &DEFINITION, &r) == FA_OK, "%s", fa_last_error());
        bool ok = isfinite(r.o[0]) && isfinite(r.o[1]) && isfinite(r.o[2]);
        for (int64_t i = 1; i < 4; i++)
            ok &= isnan(r.o[i * 3]) && isfinite(r.o[i * 3 + 1]) && isfinite(r.o[i * 3 + 2]);
        for (int64_t i = 0; i < 4; i++)
            ok &= isfinite(r.lse[i]);
        FA_EXPECT(t, ok,
                  "gap %g: NaN in v of an allowed key of weight e^-%g makes column 0 of rows 1..3 NaN; "
                  "the padding key's NaN reaches no row", gaps[g], gaps[g]);
        fa_attn_reference_free(&r);
        fa_case_free(&c);
    }
}

/* keys = 0 with block_n = 0: no block size to replay; the bound is all zeros. */
static void test_bound_no_keys(fa_tests *t)
{
    const fa_bound_row_input row = {.keys = 0, .scale = 1.0, .head_dim = 4, .max = 0.0, .sum = 1.0};
    double weight[1] = {0.0}, scratch[FA_BOUND_SCRATCH_PER_KEY] = {0.0};
    fa_bound_row_terms terms = {.diff_weight = weight, .abs_weight = weight, .o_weight = -1.0,
                                .o_floor = -1.0, .lse_bound = -1.0, .rises = -1};
    const fa_status status = fa_bound_row(&DEFINITION, &row, scratch, &terms);
    FA_EXPECT(t, status == FA_OK && terms.o_weight == 0.0 && terms.o_floor == 0.0 && terms.lse_bound == 0.0 &&
                     terms.rises == 0,
              "no keys, block_n = 0: zero terms (o_weight %g, o_floor %g, lse_bound %g, rises %lld)",
              terms.o_weight, terms.o_floor, terms.lse_bound, (long long)terms.rises);
}

static void test_reference_metamorphic(fa_tests *t)
{
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 2000);
    fa_case_shape shape = default_shape(FA_F32);
    shape.nq = 40;
    fa_attn_case c;
    fa_attn_reference base, moved;
    FA_EXPECT(t, fa_case_create(&c, &shape) == FA_OK, "%s", fa_last_error());
    fa_case_fill_scores(&c, 3.0, &rng);
    fa_case_fill_values(&c, 0.5, &rng);
    fa_case_set_row_bias(&c, 0.0);
    FA_EXPECT(t, fa_attention_reference(&c.problem, &DEFINITION, &base) == FA_OK, "%s", fa_last_error());
    const int64_t rows = row_count(&base), dim = base.dim;

    /* Shift every logit of each row by its own constant: o stays, lse moves by it. */
    double *shift = malloc((size_t)rows * sizeof(double));
    for (int64_t h = 0; h < shape.heads_q; h++)
        for (int64_t i = 0; i < shape.nq; i++)
            shift[h * shape.nq + i] = fa_meta_shift_row(&c, 0, h, i, 37.0 * (double)(i % 5) - 70.0);
    FA_EXPECT(t, fa_attention_reference(&c.problem, &DEFINITION, &moved) == FA_OK, "%s", fa_last_error());
    bool lse_ok = true;
    for (int64_t r = 0; r < rows; r++)
        lse_ok &= fabs(moved.lse[r] - base.lse[r] - shift[r]) <=
                  METAMORPHIC_TOLERANCE * (moved.lse_bound[r] + base.lse_bound[r]) + 0x1p-52 * fabs(shift[r]);
    FA_EXPECT(t, agree(moved.o, moved.o_bound, base.o, base.o_bound, rows * dim, 1.0) && lse_ok,
              "shifting the logits of a row keeps o and moves lse by the shift");
    free(shift);
    fa_attn_reference_free(&moved);
    for (int64_t h = 0; h < shape.heads_q; h++)
        for (int64_t i = 0; i < shape.nq; i++)
            fa_case_set(&c, FA_CASE_Q, 0, h, i, HEAD_DIM - 1, 0.0);

    /* Permute keys and values together (no mask): nothing changes. */
    int64_t perm[ROWS];
    for (int64_t j = 0; j < ROWS; j++)
        perm[j] = (j * 7 + 3) % ROWS; /* 7 is coprime with 130: a permutation */
    FA_EXPECT(t, fa_meta_permute_keys(&c, perm) == FA_OK, "%s", fa_last_error());
    FA_EXPECT(t, fa_attention_reference(&c.problem, &DEFINITION, &moved) == FA_OK, "%s", fa_last_error());
    FA_EXPECT(t, agree(moved.o, moved.o_bound, base.o, base.o_bound, rows * dim, 1.0) &&
                 agree(moved.lse, moved.lse_bound, base.lse, base.lse_bound, rows, 1.0),
              "permuting keys and values consistently changes nothing");
    fa_attn_reference_free(&moved);

    /* Scale V by 8: o scales by 8, lse stays. */
    fa_meta_scale_values(&c, 8.0);
    FA_EXPECT(t, fa_attention_reference(&c.problem, &DEFINITION, &moved) == FA_OK, "%s", fa_last_error());
    FA_EXPECT(t, agree(moved.o, moved.o_bound, base.o, base.o_bound, rows * dim, 8.0) &&
                 agree(moved.lse, moved.lse_bound, base.lse, base.lse_bound, rows, 1.0),
              "scaling V by 8 scales o by 8");
    fa_attn_reference_free(&moved);
    fa_attn_reference_free(&base);
    fa_case_free(&c);

    /* Pack two sequences of different lengths into one padded batch. */
    fa_attn_case a, b, packed;
    fa_attn_reference ra, rb, rp;
    shape.mask = FA_MASK_CAUSAL_TOP_LEFT;
    shape.nq = 60;
    shape.nk = 100;
    FA_EXPECT(t, fa_case_create(&a, &shape) == FA_OK, "%s", fa_last_error());
    shape.nk = 70;
    FA_EXPECT(t, fa_case_create(&b, &shape) == FA_OK, "%s", fa_last_error());
    fa_case_fill_scores(&a, 1.0, &rng);
    fa_case_fill_values(&a, 0.0, &rng);
    fa_case_fill_scores(&b, 1.0, &rng);
    fa_case_fill_values(&b, 0.0, &rng);
    FA_EXPECT(t, fa_meta_pack(&a, &b, &packed) == FA_OK, "%s", fa_last_error());
    FA_EXPECT(t, fa_attention_reference(&a.problem, &DEFINITION, &ra) == FA_OK &&
                 fa_attention_reference(&b.problem, &DEFINITION, &rb) == FA_OK &&
                 fa_attention_reference(&packed.problem, &DEFINITION, &rp) == FA_OK, "%s", fa_last_error());
    const int64_t half = row_count(&ra);
    FA_EXPECT(t, agree(rp.o, rp.o_bound, ra.o, ra.o_bound, half * dim, 1.0) &&
                 agree(rp.o + half * dim, rp.o_bound + half * dim, rb.o, rb.o_bound, half * dim, 1.0) &&
                 agree(rp.lse, rp.lse_bound, ra.lse, ra.lse_bound, half, 1.0) &&
                 agree(rp.lse + half, rp.lse_bound + half, rb.lse, rb.lse_bound, half, 1.0),
              "packing two sequences into a padded batch gives the rows of each run alone");
    fa_attn_reference_free(&ra);
    fa_attn_reference_free(&rb);
    fa_attn_reference_free(&rp);
    fa_case_free(&a);
    fa_case_free(&b);
    fa_case_free(&packed);
}

/** Every argument error names the argument; the verdict counts what is wrong. */
static void test_bad_input(fa_tests *t)
{
    fa_attn_case c;
    fa_case_shape shape = default_shape(FA_BF16);
    shape.nq = shape.nk = 4;
    shape.key_padding = true;
    FA_EXPECT(t, fa_case_create(&c, &shape) == FA_OK, "%s", fa_last_error());
    fa_attn_reference r;
    fa_attn_problem p = c.problem;
    fa_attn_method m = FA2_METHOD;

    FA_EXPECT(t, fa_attention_reference(NULL, &m, &r) == FA_ERR_NULL_POINTER && strstr(fa_last_error(), "problem"),
              "NULL problem: %s", fa_last_error());
    p.heads_kv = 3;
    FA_EXPECT(t, fa_attention_reference(&p, &m, &r) == FA_ERR_INVALID_SIZE && strstr(fa_last_error(), "heads_kv"),
              "heads_q not a multiple of heads_kv: %s", fa_last_error());
    p = c.problem;
    p.nk = -1;
    FA_EXPECT(t, fa_attention_reference(&p, &m, &r) == FA_ERR_INVALID_SIZE && strstr(fa_last_error(), "nk -1"),
              "negative nk: %s", fa_last_error());
    p = c.problem;
    p.scale = NAN;
    FA_EXPECT(t, fa_attention_reference(&p, &m, &r) == FA_ERR_INVALID_ARGUMENT && strstr(fa_last_error(), "scale"),
              "NaN scale: %s", fa_last_error());
    p = c.problem;
    p.k.data = NULL;
    FA_EXPECT(t, fa_attention_reference(&p, &m, &r) == FA_ERR_NULL_POINTER && strstr(fa_last_error(), "k.data"),
              "NULL k: %s", fa_last_error());
    p = c.problem;
    c.key_length[0] = 5;
    FA_EXPECT(t, fa_attention_reference(&p, &m, &r) == FA_ERR_INVALID_SIZE && strstr(fa_last_error(), "key_length[0]"),
              "key_length past nk: %s", fa_last_error());
    c.key_length[0] = 3;
    p.mask = FA_MASK_CAUSAL_BOTTOM_RIGHT;
    FA_EXPECT(t, fa_attention_reference(&p, &m, &r) == FA_ERR_UNSUPPORTED && strstr(fa_last_error(), "bottom-right"),
              "a partial key_length with bottom-right causal: %s", fa_last_error());
    c.key_length[0] = 4;
    p = c.problem;
    m.input_dtype = FA_F32;
    FA_EXPECT(t, fa_attention_reference(&p, &m, &r) == FA_ERR_UNSUPPORTED && strstr(fa_last_error(), "tf32"),
              "tensor cores with fp32 inputs: %s", fa_last_error());
    m = FA2_METHOD;
    m.block_n = -2;
    FA_EXPECT(t, fa_attention_reference(&p, &m, &r) == FA_ERR_INVALID_SIZE && strstr(fa_last_error(), "block_n"),
              "negative block: %s", fa_last_error());
    m = FA2_METHOD;
    p.batch = 0;
    FA_EXPECT(t, fa_attention_reference(&p, &m, &r) == FA_OK && r.o == NULL && r.lse == NULL,
              "zero batch: an empty, valid reference");
    p.batch = c.problem.batch;

    float o[2 * 4 * HEAD_DIM], lse[2 * 4];
    fa_emulation e = {.method = m, .adversarial = true, .adversarial_sign = 1};
    FA_EXPECT(t, fa_emulate_attention(&p, &e, o, lse) == FA_ERR_INVALID_ARGUMENT && strstr(fa_last_error(), "reference"),
              "adversarial emulation needs the reference to steer by: %s", fa_last_error());
    e = (fa_emulation){.method = m, .mutant = FA_MUTANT_LOG2E_DOUBLED};
    e.method.exp_method = FA_EXP_EXPF;
    FA_EXPECT(t, fa_emulate_attention(&p, &e, o, lse) == FA_ERR_INVALID_ARGUMENT && strstr(fa_last_error(), "log2(e)"),
              "a log2(e) mutant needs the exp2 path: %s", fa_last_error());

    /* The verdict: a NaN is non-finite, a poisoned element unwritten, both uncovered. */
    FA_EXPECT(t, fa_attention_reference(&p, &m, &r) == FA_OK, "%s", fa_last_error());
    e = (fa_emulation){.method = m};
    FA_EXPECT(t, fa_emulate_attention(&p, &e, o, lse) == FA_OK, "%s", fa_last_error());
    fa_check_report ro, rl;
    FA_EXPECT(t, fa_attention_covers(&r, o, lse, &ro, &rl), "the correct kernel is covered (worst %g)", ro.worst_ratio);
    o[3] = NAN;
    fa_poison_host(&o[7], sizeof o[7]);
    lse[1] = INFINITY;
    FA_EXPECT(t, !fa_attention_covers(&r, o, lse, &ro, &rl) && ro.nonfinite == 1 && ro.unwritten == 1 &&
                 ro.uncovered == 2 && rl.uncovered == 1,
              "NaN, poison and inf are caught (o: %lld non-finite, %lld unwritten; lse: %lld uncovered)",
              (long long)ro.nonfinite, (long long)ro.unwritten, (long long)rl.uncovered);
    fa_attn_reference_free(&r);
    fa_case_free(&c);
}

/* ---- 2. the bound covers correct kernels, even adversarially rounded ---------------------- */

/** Worst ratio of a correct kernel of @p method over every input, rounded to nearest and adversarially. */
static void test_coverage(fa_tests *t, const fa_attn_method *method, const char *name, table *tables)
{
    verdict nearest = {0}, adversarial = {0};
    input_id worst_input = IN_SPREAD_0_3;
    for (int id = 0; id < IN_COUNT; id++) {
        prepared_input in;
        if (!FA_EXPECT(t, prepare((input_id)id, method, &in) == FA_OK, "%s: %s", INPUT_NAMES[id], fa_last_error())) {
            release(&in);
            continue;
        }
        const fa_emulation e = {.method = *method};
        const verdict v = judge(&in, &e, &in.kernel_ref);
        const verdict a = judge_adversarial(&in, method, &in.kernel_ref);
        FA_EXPECT(t, v.ratio <= 1.0 && a.ratio <= 1.0, "%s on '%s': err/bound %g (nearest), %g (adversarial)",
                  name, INPUT_NAMES[id], v.ratio, a.ratio);
        if (worse(fa_max_nan_double(v.ratio, a.ratio), fa_max_nan_double(nearest.ratio, adversarial.ratio)))
            worst_input = (input_id)id;
        verdict_merge(&nearest, &v);
        verdict_merge(&adversarial, &a);
        release(&in);
    }
    char x[32], y[32];
    table_add(tables, "| %s | %s | %s | %s |", name, format_ratio(nearest.ratio, x, sizeof x),
              format_ratio(adversarial.ratio, y, sizeof y), INPUT_NAMES[worst_input]);
}

/* ---- 3. method ablation ------------------------------------------------------------------ */

/** A declaration of the ablation: must it fail, and on which input. */
typedef struct ablation_row {
    const char *declared;
    fa_attn_method method;
    input_id exposing;      /* where leaving the method out must fail; IN_COUNT: nowhere */
    bool must_fail;         /* false: it must cover the kernel on every input */
} ablation_row;

static void test_ablation(fa_tests *t, table *tables)
{
    const fa_attn_method full = ABLATION_METHOD;
    fa_attn_method no_p = full, no_rcp = full, no_exp2 = full, no_tc = full;
    no_p.p_dtype = FA_F32;                  /* fp32 P cannot feed tensor cores: */
    no_p.accumulation = FA_ACCUM_FP32;      /* the declaration loses both */
    no_rcp.normalisation = FA_NORM_DIVIDE;
    no_exp2.exp_method = FA_EXP_EXPF;
    no_tc.accumulation = FA_ACCUM_FP32;
    const ablation_row rows[] = {
        {"every method the kernel uses", full, IN_COUNT, false},
        {"none (the definition)", DEFINITION, IN_SPREAD_1, true},
        {"all but bf16 P", no_p, IN_FEW_KEYS, true},
        {"all but the reciprocal", no_rcp, IN_CONSTANT_V_CAUSAL, true},
        {"all but tensor-core accumulation", no_tc, IN_TC_TRUNCATION, true},
        {"all but exp2 (expf declared)", no_exp2, IN_COUNT, false},
    };
    const input_id inputs[] = {IN_SPREAD_1, IN_SPREAD_8, IN_MAX_RISING, IN_BIAS_HIGH, IN_V_OFFSET,
                               IN_FEW_KEYS, IN_CONSTANT_V_CAUSAL, IN_TC_TRUNCATION};
    enum { ROW_COUNT = sizeof rows / sizeof rows[0], INPUT_COUNT = sizeof inputs / sizeof inputs[0] };
    verdict worst[ROW_COUNT] = {{0}};
    input_id worst_at[ROW_COUNT];
    double exposed[ROW_COUNT] = {0};
    for (int r = 0; r < ROW_COUNT; r++)
        worst_at[r] = inputs[0];

    for (int k = 0; k < INPUT_COUNT; k++) {
        prepared_input in;
        if (!FA_EXPECT(t, prepare(inputs[k], &full, &in) == FA_OK, "%s", fa_last_error())) {
            release(&in);
            continue;
        }
        for (int r = 0; r < ROW_COUNT; r++) {
            fa_attn_reference declared;
            if (!FA_EXPECT(t, fa_attention_reference(&in.c.problem, &rows[r].method, &declared) == FA_OK, "%s",
                           fa_last_error()))
                continue;
            const fa_emulation e = {.method = full};
            verdict v = judge(&in, &e, &declared);
            const verdict a = judge_adversarial(&in, &full, &declared);
            verdict_merge(&v, &a);
            if (worse(v.ratio, worst[r].ratio))
                worst_at[r] = inputs[k];
            verdict_merge(&worst[r], &v);
            if (inputs[k] == rows[r].exposing)
                exposed[r] = v.ratio;
            fa_attn_reference_free(&declared);
        }
        release(&in);
    }
    for (int r = 0; r < ROW_COUNT; r++) {
        char x[32], y[32];
        if (rows[r].must_fail)
            FA_EXPECT(t, exposed[r] > 1.0, "declaring %s must fail on '%s' (err/bound %g)", rows[r].declared,
                      INPUT_NAMES[rows[r].exposing], exposed[r]);
        else
            FA_EXPECT(t, worst[r].ratio <= 1.0, "declaring %s must cover the kernel (worst %g on '%s')",
                      rows[r].declared, worst[r].ratio, INPUT_NAMES[worst_at[r]]);
        const bool fails = !(worst[r].ratio <= 1.0);
        table_add(tables, "| %s | %s | %s | %s | %s |", rows[r].declared,
                  format_ratio(worst[r].o_ratio, x, sizeof x), format_ratio(worst[r].lse_ratio, y, sizeof y),
                  INPUT_NAMES[worst_at[r]], fails ? "rejected" : "covered");
    }
}

/* ---- 4. mutation suite ------------------------------------------------------------------- */

/** The generated input on which each mutant shows. */
static const input_id MUTANT_INPUT[FA_MUTANT_COUNT] = {
    [FA_MUTANT_NO_RESCALE_O] = IN_MAX_RISING,
    [FA_MUTANT_NO_RESCALE_L] = IN_MAX_RISING,
    [FA_MUTANT_RESCALE_WRONG_SIGN] = IN_MAX_RISING,
    [FA_MUTANT_LOG2E_FORGOTTEN] = IN_SPREAD_3,
    [FA_MUTANT_LOG2E_DOUBLED] = IN_SPREAD_3,
    [FA_MUTANT_SCALE_ONE_OVER_D] = IN_SPREAD_3,
    [FA_MUTANT_NO_SCALE] = IN_SPREAD_3,
    [FA_MUTANT_CAUSAL_ONE_AHEAD] = IN_CAUSAL_SENTINELS,
    [FA_MUTANT_CAUSAL_STRICT] = IN_BOTTOM_RIGHT_SENTINELS,
    [FA_MUTANT_TAIL_ROUNDED_UP] = IN_TAIL_SENTINELS,
    [FA_MUTANT_LSE_WITHOUT_MAX] = IN_BIAS_HIGH,
    [FA_MUTANT_LSE_LOG2] = IN_BIAS_HIGH,
    [FA_MUTANT_NO_NORMALISATION] = IN_SPREAD_1,
    [FA_MUTANT_MAX_INIT_ZERO] = IN_BIAS_LOW,
    [FA_MUTANT_NAN_EMPTY_ROW] = IN_EMPTY_ROWS,
    [FA_MUTANT_PV_BF16_ACCUMULATOR] = IN_V_OFFSET,
};

/** An equivalent kernel: it rounds differently but computes the same function. */
typedef struct variant {
    const char *name;
    fa_emulation emulation;
    fa_attn_method declared;
} variant;

static bool is_exposing_input(input_id id)
{
    for (int m = FA_MUTANT_NONE + 1; m < FA_MUTANT_COUNT; m++)
        if (MUTANT_INPUT[m] == id)
            return true;
    return false;
}

static void test_mutation_suite(fa_tests *t, table *variant_rows, table *mutant_rows)
{
    prepared_input inputs[IN_COUNT];
    bool ready[IN_COUNT];
    for (int id = 0; id < IN_COUNT; id++)
        ready[id] = FA_EXPECT(t, prepare((input_id)id, &FA2_METHOD, &inputs[id]) == FA_OK, "%s: %s",
                              INPUT_NAMES[id], fa_last_error());

    /* The correct kernel and its equivalent variants: covered on every input,
     * and below half the bound almost everywhere on the exposing inputs. */
    variant variants[] = {
        {"correct kernel", {.method = FA2_METHOD}, FA2_METHOD},
        {"correct kernel, adversarial rounding", {.method = FA2_METHOD, .adversarial = true}, FA2_METHOD},
        {"block size 32", {.method = FA2_METHOD}, FA2_METHOD},
        {"block size 128", {.method = FA2_METHOD}, FA2_METHOD},
        {"blocks visited last to first", {.method = FA2_METHOD, .reverse_block_order = true}, FA2_METHOD},
        {"sums accumulated last to first", {.method = FA2_METHOD, .reverse_sum_order = true}, FA2_METHOD},
        {"division instead of reciprocal", {.method = FA2_METHOD}, FA2_METHOD},
        {"expf of unscaled differences", {.method = FA2_METHOD, .unscaled_exp = true}, FA2_METHOD},
        {"l from the rounded P (declared)", {.method = FA2_METHOD}, FA2_METHOD},
    };
    variants[2].emulation.method.block_n = 32;
    variants[3].emulation.method.block_n = 128;
    variants[6].emulation.method.normalisation = FA_NORM_DIVIDE;
    variants[7].emulation.method.exp_method = FA_EXP_EXPF;
    variants[8].emulation.method.l_from_rounded_p = true;
    variants[8].declared.l_from_rounded_p = true;
    enum { VARIANT_COUNT = sizeof variants / sizeof variants[0] };

    for (int k = 0; k < VARIANT_COUNT; k++) {
        const variant *var = &variants[k];
        verdict on_exposing = {0}, on_all = {0};
        input_id worst_input = IN_SPREAD_0_3;
        for (int id = 0; id < IN_COUNT; id++) {
            if (!ready[id])
                continue;
            fa_attn_reference declared_ref;
            const fa_attn_reference *ref = &inputs[id].kernel_ref;
            const bool own_declaration = memcmp(&var->declared, &FA2_METHOD, sizeof FA2_METHOD) != 0;
            if (own_declaration) {
                if (fa_attention_reference(&inputs[id].c.problem, &var->declared, &declared_ref) != FA_OK)
                    continue;
                ref = &declared_ref;
            }
            const verdict v = var->emulation.adversarial ? judge_adversarial(&inputs[id], &var->emulation.method, ref)
                                                         : judge(&inputs[id], &var->emulation, ref);
            if (own_declaration)
                fa_attn_reference_free(&declared_ref);
            if (worse(v.ratio, on_all.ratio))
                worst_input = (input_id)id;
            verdict_merge(&on_all, &v);
            if (is_exposing_input((input_id)id))
                verdict_merge(&on_exposing, &v);
        }
        const double fraction = fraction_above_half(&on_exposing);
        FA_EXPECT(t, fraction <= EQUIVALENT_MAX_FRACTION,
                  "%s: %.2f%% of the elements of the exposing inputs above half the bound (limit %g%%)", var->name,
                  100.0 * fraction, 100.0 * EQUIVALENT_MAX_FRACTION);
        FA_EXPECT(t, on_all.ratio <= 1.0, "%s: err/bound %g on '%s'", var->name, on_all.ratio,
                  INPUT_NAMES[worst_input]);
        char x[32], y[32];
        const bool passes = on_all.ratio <= 1.0 && fraction <= EQUIVALENT_MAX_FRACTION;
        table_add(variant_rows, "| %s | %s | %.2f%% | %s (%s) | %s |", var->name,
                  format_ratio(on_exposing.ratio, x, sizeof x), 100.0 * fraction,
                  format_ratio(on_all.ratio, y, sizeof y), INPUT_NAMES[worst_input],
                  passes ? "passes" : "FAILS");
    }

    /* Each mutant: rejected by more than 10x where its input exposes it. */
    for (int m = FA_MUTANT_NONE + 1; m < FA_MUTANT_COUNT; m++) {
        const input_id id = MUTANT_INPUT[m];
        if (!ready[id] || !ready[IN_SPREAD_1])
            continue;
        const fa_emulation e = {.method = FA2_METHOD, .mutant = (fa_mutant)m};
        const verdict exposed = judge(&inputs[id], &e, &inputs[id].kernel_ref);
        const verdict plain = judge(&inputs[IN_SPREAD_1], &e, &inputs[IN_SPREAD_1].kernel_ref);
        FA_EXPECT(t, exposed.ratio > MUTANT_MIN_RATIO, "mutant '%s' on '%s': err/bound %g, needs > %g",
                  fa_mutant_description((fa_mutant)m), INPUT_NAMES[id], exposed.ratio, MUTANT_MIN_RATIO);
        char x[32], y[32];
        table_add(mutant_rows, "| %s | %s | %s%s | %s | %s |", fa_mutant_description((fa_mutant)m), INPUT_NAMES[id],
                  format_ratio(exposed.ratio, x, sizeof x), exposed.nonfinite > 0 ? " (non-finite)" : "",
                  format_ratio(plain.ratio, y, sizeof y),
                  exposed.ratio > MUTANT_MIN_RATIO ? "rejected" : "NOT rejected");
    }
    /* The tail mutant also reads the canaries past N when there is no key_length. */
    if (ready[IN_TAIL_CANARIES]) {
        const fa_emulation e = {.method = FA2_METHOD, .mutant = FA_MUTANT_TAIL_ROUNDED_UP};
        const verdict v = judge(&inputs[IN_TAIL_CANARIES], &e, &inputs[IN_TAIL_CANARIES].kernel_ref);
        FA_EXPECT(t, v.ratio > MUTANT_MIN_RATIO, "tail mutant on the canaries: err/bound %g", v.ratio);
    }
    for (int id = 0; id < IN_COUNT; id++)
        release(&inputs[id]);
}

/* ---- tables file and main ---------------------------------------------------------------- */

static void write_table(FILE *f, const char *header, const table *t)
{
    fprintf(f, "%s", header);
    for (int r = 0; r < t->rows; r++)
        fprintf(f, "%s\n", t->line[r]);
    fprintf(f, "\n");
}

static int write_tables(const char *path, const table *coverage, const table *ablation, const table *variants,
                        const table *mutants)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "test_numerics: cannot write %s\n", path);
        return FA_EXIT_USAGE;
    }
    /* Bold lead-ins rather than markdown headings: Doxygen drops section
     * commands inside \include{doc}. */
    fprintf(f, "<!-- Written by test_numerics --tables; do not edit. -->\n\n");
    write_table(f,
                "**The bound covers correct kernels.** "
                "Worst err/bound over every generated input, rounded to nearest and adversarially "
                "(exp, rcp and log pushed to the edge of their documented error, both directions, "
                "aimed at o and at lse).\n\n"
                "| Kernel's methods | nearest | adversarial | worst input |\n|---|---|---|---|\n",
                coverage);
    write_table(f,
                "**Method ablation.** "
                "The kernel: online softmax over blocks of 64 keys, bf16 inputs, tensor-core "
                "accumulation, P rounded to bf16 with l summed from the rounded P, exp2 with log2(e) "
                "folded into the scale, reciprocal normalisation; rounded to nearest and adversarially. "
                "The checker is told a subset of those methods.\n\n"
                "| Methods declared to the checker | worst err/bound o | lse | at input | verdict |\n"
                "|---|---|---|---|---|\n",
                ablation);
    write_table(f,
                "**Correct and equivalent kernels.** "
                "FlashAttention-2's methods (blocks of 64, bf16, tensor cores, bf16 P with l from the "
                "unrounded P, exp2 prescaled, reciprocal) judged by that declaration. Required: covered "
                "(err/bound <= 1) on every input, and at most 1% of the elements of the exposing inputs "
                "above half the bound.\n\n"
                "| Kernel | worst err/bound, exposing inputs | elements above 0.5 | worst on every input | verdict |\n"
                "|---|---|---|---|---|\n",
                variants);
    write_table(f,
                "**Mutants.** "
                "The same kernel with one bug. Required: err/bound above 10 on the input that exposes "
                "it. The last column shows the same mutant on a plain random input: some bugs only "
                "show on a generated one.\n\n"
                "| Mutant | exposing input | err/bound there | on random spread 1 | verdict |\n"
                "|---|---|---|---|---|\n",
                mutants);
    fclose(f);
    return 0;
}

/* ---- the softmax reference (fa_softmax_ref.h) ------------------------------------------------ */

/** One row of the softmax fixtures, with every output of the reference. */
typedef struct softmax_row {
    double p[8], p_bound[8], lse, lse_bound;
} softmax_row;

static softmax_row softmax_of(fa_tests *t, const float *x, int64_t n,
                              const fa_softmax_keys *keys)
{
    const fa_softmax_method three_pass = {0};
    softmax_row r;
    FA_EXPECT(t,
              fa_softmax_row_reference(x, n, keys, &three_pass, r.p, r.p_bound, &r.lse,
                                       &r.lse_bound) == FA_OK,
              "softmax reference of %lld entries: %s", (long long)n, fa_last_error());
    return r;
}

/* Hand-computable rows: x = [0, ln 3] gives e = [1, 3], l = 4, p = [1/4, 3/4],
 * lse = ln 4 (up to the fp32 rounding of ln 3: |dp| <= 3/16 * 2^-24). A masked
 * dominant entry is excluded before the max; rows with nothing to attend to
 * are exact zeros with lse = -inf; a visible NaN poisons the row. */
static void test_softmax_reference_classics(fa_tests *t)
{
    const float ln3 = (float)log(3.0);
    const double tolerance = 0x1p-26;
    const float pair[2] = {0.0f, ln3};
    softmax_row r = softmax_of(t, pair, 2, NULL);
    FA_EXPECT(t, fabs(r.p[0] - 0.25) <= tolerance && fabs(r.p[1] - 0.75) <= tolerance &&
                     fabs(r.lse - log(4.0)) <= tolerance,
              "[0, ln 3]: p = [%.9g, %.9g], lse = %.9g, want [1/4, 3/4], ln 4", r.p[0], r.p[1], r.lse);
    FA_EXPECT(t, r.p_bound[0] > 0 && r.p_bound[0] < 1e-5 && r.lse_bound > 0 && r.lse_bound < 1e-5,
              "[0, ln 3]: bounds %g, %g are a few fp32 ulps", r.p_bound[0], r.lse_bound);

    /* A dominant 100 the row may not see: by padding, then by the causal mask
     * (row 1 of 3, top-left, sees keys 0 and 1). */
    const float dominant[3] = {0.0f, ln3, 100.0f};
    const fa_softmax_keys padded = {FA_MASK_NONE, 0, 1, 2};
    const fa_softmax_keys causal = {FA_MASK_CAUSAL_TOP_LEFT, 1, 3, 3};
    const fa_softmax_keys *masked[2] = {&padded, &causal};
    for (int k = 0; k < 2; k++) {
        r = softmax_of(t, dominant, 3, masked[k]);
        FA_EXPECT(t, fabs(r.p[0] - 0.25) <= tolerance && fabs(r.p[1] - 0.75) <= tolerance &&
                         r.p[2] == 0.0 && r.p_bound[2] == 0.0 && fabs(r.lse - log(4.0)) <= tolerance,
                  "%s: the masked 100 is excluded before the max: p = [%g, %g, %g], lse = %g",
                  k == 0 ? "padding" : "causal", r.p[0], r.p[1], r.p[2], r.lse);
    }

    /* Nothing to attend to: no entry, all padding, all -inf. */
    const float minus_inf[3] = {-INFINITY, -INFINITY, -INFINITY};
    const fa_softmax_keys nothing = {FA_MASK_NONE, 0, 1, 0};
    const softmax_row empty[3] = {softmax_of(t, NULL, 0, NULL),
                                  softmax_of(t, dominant, 3, &nothing),
                                  softmax_of(t, minus_inf, 3, NULL)};
    for (int k = 0; k < 3; k++) {
        bool zeros = true;
        for (int64_t j = 0; j < (k == 0 ? 0 : 3); j++)
            zeros &= empty[k].p[j] == 0.0 && empty[k].p_bound[j] == 0.0;
        FA_EXPECT(t, zeros && empty[k].lse == -INFINITY && empty[k].lse_bound == 0.0,
                  "empty row %d: p = 0 and lse = -inf exactly (lse = %g)", k, empty[k].lse);
    }

    /* A visible NaN poisons the row; a NaN behind the mask does not. */
    const float with_nan[3] = {0.0f, ln3, NAN};
    r = softmax_of(t, with_nan, 3, NULL);
    FA_EXPECT(t, isnan(r.p[0]) && isnan(r.p[1]) && isnan(r.p[2]) && isnan(r.lse) &&
                     r.p_bound[0] == 0.0 && r.lse_bound == 0.0,
              "a NaN entry gives a NaN row");
    r = softmax_of(t, with_nan, 3, &padded);
    FA_EXPECT(t, fabs(r.p[1] - 0.75) <= tolerance && r.p[2] == 0.0,
              "a NaN behind the padding leaves the row finite: p = [%g, %g, %g]", r.p[0], r.p[1],
              r.p[2]);
}

/** The fp32 state of an online softmax: running max, sum, and output against one value column. */
typedef struct softmax_state {
    float max, sum, output;
} softmax_state;

/** expf, rounded to nearest (@p direction 0) or pushed 2 ulp by the adversary (+-1). */
static float softmax_exp(float arg, int direction)
{
    return direction == 0 ? expf(arg) : fa_emulate_expf(arg, direction);
}

/** Merges @p b into @p a; @p rescale false plants the missing-rescale bug. */
static softmax_state softmax_merge(softmax_state a, softmax_state b, bool rescale, int direction)
{
    const float max = fa_max_nan(a.max, b.max);
    const float scale_a = rescale ? softmax_exp(a.max - fa_max_offset(max), direction) : 1.0f;
    const float scale_b = rescale ? softmax_exp(b.max - fa_max_offset(max), direction) : 1.0f;
    const softmax_state merged = {max, a.sum * scale_a + b.sum * scale_b,
                                  a.output * scale_a + b.output * scale_b};
    return merged;
}

/**
 * The fp32 state of a kernel of @p m folding row x [n] (every entry visible)
 * and values v [n] (or NULL): the three-pass max and sum, or lanes folding
 * chunks then merged along the masks. @p rescale false forgets the correction
 * factor of the sums; @p direction pushes every expf (see softmax_exp()).
 */
static softmax_state softmax_fold(const float *x, const float *v, int64_t n, const fa_softmax_method *m,
                                  bool rescale, int direction)
{
    softmax_state total = {-INFINITY, 0.0f, 0.0f};
    if (m->chunk == 0) {
        for (int64_t j = 0; j < n; j++)
            total.max = fa_max_nan(total.max, x[j]);
        for (int64_t j = 0; j < n; j++) {
            const float weight = softmax_exp(x[j] - total.max, direction);
            total.sum += weight;
            total.output += v != NULL ? weight * v[j] : 0.0f;
        }
        return total;
    }
    softmax_state lanes[FA_SOFTMAX_MAX_LANES];
    const int64_t stride = (int64_t)m->lanes * m->chunk;
    for (int lane = 0; lane < m->lanes; lane++) {
        softmax_state state = {-INFINITY, 0.0f, 0.0f};
        for (int64_t base = lane; base < n; base += stride) {
            softmax_state update = {-INFINITY, 0.0f, 0.0f};
            for (int64_t i = 0; i < m->chunk && base + i * m->lanes < n; i++)
                update.max = fa_max_nan(update.max, x[base + i * m->lanes]);
            for (int64_t i = 0; i < m->chunk && base + i * m->lanes < n; i++) {
                const int64_t j = base + i * m->lanes;
                const float weight = softmax_exp(x[j] - fa_max_offset(update.max), direction);
                update.sum += weight;
                update.output += v != NULL ? weight * v[j] : 0.0f;
            }
            state = softmax_merge(state, update, rescale, direction);
        }
        lanes[lane] = state;
    }
    for (int level = 0; level < m->merge_levels; level++) {
        softmax_state merged[FA_SOFTMAX_MAX_LANES];
        for (int lane = 0; lane < m->lanes; lane++)
            merged[lane] = softmax_merge(lanes[lane], lanes[lane ^ m->merge_masks[level]], rescale,
                                         direction);
        memcpy(lanes, merged, sizeof(softmax_state) * (size_t)m->lanes);
    }
    return lanes[0];
}

/** softmax_fold() rounded to nearest, then p = expf(x - m) / l and lse = m + logf(l). */
static void softmax_emulate(const float *x, int64_t n, const fa_softmax_method *m, bool rescale,
                            float *p, float *lse)
{
    const softmax_state total = softmax_fold(x, NULL, n, m, rescale, 0);
    for (int64_t j = 0; j < n; j++)
        p[j] = expf(x[j] - total.max) / total.sum;
    *lse = total.max + logf(total.sum);
}

/** Largest |got - want| / bound over a row and its lse. */
static double softmax_worst_ratio(const float *p, float lse, const double *want,
                                  const double *bound, double want_lse, double lse_bound, int64_t n)
{
    double worst = fabs((double)lse - want_lse) / lse_bound;
    for (int64_t j = 0; j < n; j++)
        worst = fa_max_nan_double(worst, fabs((double)p[j] - want[j]) / bound[j]);
    return worst;
}

/* The bound covers fp32 emulations of the three-pass and online methods (one
 * lane in chunks, and lanes merged by a butterfly) on rows whose max rises late,
 * and rejects a planted error by more than 10x: one weight off by 2^-6 (the
 * three-pass bound of 3001 terms is about gamma_3001 ~ 2^-12), the lse without
 * its max, and an online sum whose correction factor is missing. */
static void test_softmax_reference_bound(fa_tests *t)
{
    enum { SOFTMAX_MAX_N = 3001 };
    static float x[SOFTMAX_MAX_N], p[SOFTMAX_MAX_N];
    static double want[SOFTMAX_MAX_N], bound[SOFTMAX_MAX_N];
    const int64_t lengths[] = {1, 2, 7, 64, 65, 1000, SOFTMAX_MAX_N};
    const int butterfly[2] = {2, 1};
    const fa_softmax_method methods[] = {{0, 0, 0, NULL}, {4, 1, 0, NULL}, {64, 1, 0, NULL},
                                         {4, 4, 2, butterfly}};
    const char *names[] = {"three-pass", "online C = 4", "online C = 64",
                           "online C = 4, 4 lanes, butterfly"};
    fa_rng rng;
    fa_rng_seed(&rng, 2024, 7);
    for (size_t k = 0; k < sizeof(methods) / sizeof(methods[0]); k++) {
        double covered = 0.0, planted = INFINITY, no_max = INFINITY, no_rescale = INFINITY;
        for (size_t c = 0; c < sizeof(lengths) / sizeof(lengths[0]); c++) {
            const int64_t n = lengths[c];
            /* Spread 8 around a bias of 20, with a ramp so the max rises late. */
            for (int64_t j = 0; j < n; j++)
                x[j] = (float)(20.0 + 8.0 * fa_rng_normal(&rng) + 16.0 * (double)j / (double)n);
            double lse, lse_bound;
            FA_EXPECT(t,
                      fa_softmax_row_reference(x, n, NULL, &methods[k], want, bound, &lse,
                                               &lse_bound) == FA_OK,
                      "%s, n = %lld: the softmax reference: %s", names[k], (long long)n,
                      fa_last_error());
            float got_lse;
            softmax_emulate(x, n, &methods[k], true, p, &got_lse);
            covered = fa_max_nan_double(covered, softmax_worst_ratio(p, got_lse, want, bound, lse, lse_bound, n));

            /* The planted error goes on the largest weight, where it is not a rounding. */
            int64_t top = 0;
            for (int64_t j = 1; j < n; j++)
                top = want[j] > want[top] ? j : top;
            const float kept = p[top];
            p[top] = kept * (1.0f + 0x1p-6f);
            planted = min_nan(planted, fabs((double)p[top] - want[top]) / bound[top]);
            p[top] = kept;
            float max = x[0];
            for (int64_t j = 1; j < n; j++)
                max = fa_max_nan(max, x[j]);
            no_max = min_nan(no_max, fabs((double)(got_lse - max) - lse) / lse_bound);
            if (methods[k].chunk > 0 && (double)n > (double)methods[k].chunk * methods[k].lanes) {
                softmax_emulate(x, n, &methods[k], false, p, &got_lse);
                no_rescale = min_nan(no_rescale, softmax_worst_ratio(p, got_lse, want, bound, lse,
                                                                  lse_bound, n));
            }
        }
        FA_EXPECT(t, covered <= 1.0, "%s: the bound covers the fp32 emulation (err/bound %.3g)",
                  names[k], covered);
        FA_EXPECT(t, planted > 10.0, "%s: a weight off by 2^-6 is rejected (err/bound %.3g)",
                  names[k], planted);
        FA_EXPECT(t, no_max > 10.0, "%s: lse without its max is rejected (err/bound %.3g)",
                  names[k], no_max);
        FA_EXPECT(t, methods[k].chunk == 0 || no_rescale > 10.0,
                  "%s: a sum without its correction factor is rejected (err/bound %.3g)", names[k],
                  no_rescale);
    }
}

/* The state reference (m, l, o before the division): a hand row with a
 * masked entry (0, 0, -inf, 0 with values 1, 2, 3, 4: m = 0, l = 3, o = 7,
 * exact in fp32), then an fp32 one-lane online fold (chunk 1) on rising rows
 * covered, and the same fold without its correction factor rejected. */
static void test_softmax_state_reference(fa_tests *t)
{
    const float hand_x[4] = {0.0f, 0.0f, -INFINITY, 0.0f}, hand_v[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    const fa_softmax_method one_lane = {1, 1, 0, NULL};
    fa_softmax_state_ref ref;
    FA_EXPECT(t, fa_softmax_state_reference(hand_x, hand_v, 4, NULL, &one_lane, &ref) == FA_OK,
              "hand state: the state reference: %s", fa_last_error());
    FA_EXPECT(t, ref.max == 0.0 && ref.sum == 3.0 && ref.output == 7.0,
              "hand state: m %g l %g o %g, want 0 3 7", ref.max, ref.sum, ref.output);
    FA_EXPECT(t, ref.sum_bound > 0.0 && ref.sum_bound < 3.0 * 0x1p-18 && ref.output_bound > 0.0 &&
                     ref.output_bound < 7.0 * 0x1p-18,
              "hand state: bounds %g, %g of a few roundings", ref.sum_bound, ref.output_bound);

    enum { STATE_N = 500 };
    static float x[STATE_N], v[STATE_N];
    fa_rng rng;
    fa_rng_seed(&rng, 2024, 11);
    double covered = 0.0, no_rescale = INFINITY;
    for (int row = 0; row < 4; row++) {
        for (int64_t j = 0; j < STATE_N; j++) {
            x[j] = (float)(4.0 * fa_rng_normal(&rng) + 24.0 * (double)j / STATE_N);
            v[j] = (float)fa_rng_normal(&rng);
        }
        FA_EXPECT(t, fa_softmax_state_reference(x, v, STATE_N, NULL, &one_lane, &ref) == FA_OK,
                  "rising row %d: the state reference: %s", row, fa_last_error());
        for (int rescale = 1; rescale >= 0; rescale--) {
            float m = -INFINITY, l = 0.0f, o = 0.0f;
            for (int64_t j = 0; j < STATE_N; j++) {
                const float max = fa_max_nan(m, x[j]);
                const float alpha = rescale ? expf(m - max) : 1.0f;
                const float weight = expf(x[j] - max);
                l = fmaf(alpha, l, weight);
                o = fmaf(alpha, o, weight * v[j]);
                m = max;
            }
            const double ratio = fa_max_nan_double(fabs((double)l - ref.sum) / ref.sum_bound,
                                      fabs((double)o - ref.output) / ref.output_bound);
            if (rescale)
                covered = fa_max_nan_double(covered, (double)m == ref.max ? ratio : INFINITY);
            else
                no_rescale = min_nan(no_rescale, ratio);
        }
    }
    FA_EXPECT(t, covered <= 1.0, "state: the bound covers the fp32 online fold (err/bound %.3g)",
              covered);
    FA_EXPECT(t, no_rescale > 10.0,
              "state: a fold without its correction factor is rejected (err/bound %.3g)",
              no_rescale);
}


/* ---- 6. what the check refuses to judge -------------------------------------------------- */

/*
 * A bound element that is inf covers any output, a NaN one none, a negative
 * one is no bound either: where the reference is finite the check refuses to
 * judge. Not covered, status FA_ERR_INVALID_ARGUMENT with a message, the
 * element's err/bound NaN, and worst_ratio NaN even when a larger finite ratio
 * follows (fa_max_nan_double()). Where the reference is NaN the comparison is
 * exact and the bound is not read.
 */
static void test_check_refuses_non_bounds(fa_tests *t)
{
    const double ref[2] = {0.0, 1.0};
    const float out[2] = {1e30f, 1.0f};
    const double non_bounds[3] = {INFINITY, NAN, -1.0};
    const fa_shape shape = fa_shape_1d(2);
    fa_check_report report;
    for (int k = 0; k < 3; k++) {
        const double bound[2] = {non_bounds[k], 0.5};
        fa_clear_error();
        const bool covered = fa_check_covers(out, ref, bound, 2, &report);
        char line[256];
        fa_check_describe(&report, &shape, line, sizeof line);
        FA_EXPECT(t, !covered && report.status == FA_ERR_INVALID_ARGUMENT && report.invalid_bounds == 1 &&
                         report.invalid.index == 0 && report.uncovered == 1 && isnan(report.worst_ratio) &&
                         report.worst_index == 0 &&
                         strstr(fa_last_error(), "a bound is a finite number >= 0") != NULL &&
                         strstr(line, "not judged: the bound at (i 0)") != NULL,
                  "bound %g: covered %d, status %s, worst err/bound %g at %lld; %s; %s", non_bounds[k],
                  (int)covered, fa_status_name(report.status), report.worst_ratio,
                  (long long)report.worst_index, fa_last_error(), line);
    }
    /* A NaN ratio replaces a finite worst, and stays the worst when a ratio of 100 follows. */
    const float first[2] = {0.25f, 1.0f}, later[2] = {0.0f, 101.0f};
    const double first_bound[2] = {0.5, NAN}, later_bound[2] = {NAN, 1.0};
    fa_check_covers(first, ref, first_bound, 2, &report);
    FA_EXPECT(t, isnan(report.worst_ratio) && report.worst_index == 1,
              "a NaN err/bound after 0.5 is the worst (worst %g at %lld)", report.worst_ratio,
              (long long)report.worst_index);
    fa_check_covers(later, ref, later_bound, 2, &report);
    FA_EXPECT(t, isnan(report.worst_ratio) && report.worst_index == 0 && report.uncovered == 2,
              "a NaN err/bound is not replaced by a later 100 (worst %g at %lld)", report.worst_ratio,
              (long long)report.worst_index);
    const double nan_ref = NAN, nan_bound = NAN;
    const float nan_out = NAN;
    const bool covered = fa_check_covers(&nan_out, &nan_ref, &nan_bound, 1, &report);
    FA_EXPECT(t, covered && report.status == FA_OK,
              "a NaN reference is compared exactly, its bound not read (covered %d, status %s)",
              (int)covered, fa_status_name(report.status));
}

/*
 * The statistics of the checks keep NaN: the worst ratio of a softmax row with
 * a NaN weight is NaN and fails "<= 1"; a verdict merged with a NaN ratio
 * stays NaN; the smallest of ratios that hold a NaN is NaN and fails "> 10";
 * a NaN is the worst once, then stays. fmax and fmin would drop each NaN.
 */
static void test_statistics_keep_nan(fa_tests *t)
{
    const float p[2] = {0.5f, NAN};
    const double want[2] = {0.5, 0.5}, bound[2] = {1e-6, 1e-6};
    const double worst = softmax_worst_ratio(p, 0.0f, want, bound, 0.0, 1e-6, 2);
    FA_EXPECT(t, isnan(worst) && !(worst <= 1.0), "a NaN weight: worst err/bound %g, must not pass <= 1",
              worst);
    verdict into = {.ratio = 0.5, .o_ratio = 0.5, .lse_ratio = 0.5};
    const verdict with_nan = {.ratio = NAN, .o_ratio = NAN, .lse_ratio = 0.25};
    const verdict finite = {.ratio = 7.0, .o_ratio = 7.0, .lse_ratio = 0.25};
    verdict_merge(&into, &with_nan);
    verdict_merge(&into, &finite);
    FA_EXPECT(t, isnan(into.ratio) && isnan(into.o_ratio) && into.lse_ratio == 0.5,
              "verdict_merge keeps a NaN ratio (ratio %g, o %g, lse %g)", into.ratio, into.o_ratio,
              into.lse_ratio);
    const double smallest = min_nan(min_nan(20.0, NAN), 30.0);
    FA_EXPECT(t, isnan(smallest) && !(smallest > MUTANT_MIN_RATIO) && min_nan(20.0, 30.0) == 20.0,
              "the smallest of 20, NaN, 30 is NaN (got %g)", smallest);
    FA_EXPECT(t, worse(NAN, 1.0) && !worse(2.0, NAN) && !worse(NAN, NAN) && worse(2.0, 1.0),
              "a NaN ratio is the worst once, then stays");
}

/*
 * The emulation's maxima keep NaN as the kernels' do. Causal row 64 sees keys
 * 0..64; with blocks of 64, key 64 is the only allowed key of block 1. A NaN
 * in k_64 makes the row NaN in the reference; a block max taken with fmaxf
 * would be -inf, the block skipped as fully masked, and the "correct" kernel
 * would give a finite row the check rejects.
 */
static void test_emulation_keeps_nan_max(fa_tests *t)
{
    enum { NAN_ROWS = 70, NAN_DIM = 4, NAN_KEY = 64 };
    const fa_case_shape shape = {.batch = 1, .heads_q = 1, .heads_kv = 1, .nq = NAN_ROWS, .nk = NAN_ROWS,
                                 .head_dim = NAN_DIM, .mask = FA_MASK_CAUSAL_TOP_LEFT, .dtype = FA_F32};
    fa_attn_case c;
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 3000);
    if (!FA_EXPECT(t, fa_case_create(&c, &shape) == FA_OK, "%s", fa_last_error()))
        return;
    fa_case_fill_scores(&c, 1.0, &rng);
    fa_case_fill_values(&c, 0.0, &rng);
    fa_case_set(&c, FA_CASE_K, 0, 0, NAN_KEY, 0, NAN);
    const fa_attn_method m = {.block_n = NAN_KEY};
    fa_attn_reference r;
    float o[NAN_ROWS * NAN_DIM], lse[NAN_ROWS];
    const fa_emulation e = {.method = m};
    if (FA_EXPECT(t, fa_attention_reference(&c.problem, &m, &r) == FA_OK &&
                         fa_emulate_attention(&c.problem, &e, o, lse) == FA_OK,
                  "%s", fa_last_error())) {
        fa_check_report ro, rl;
        const bool covered = fa_attention_covers(&r, o, lse, &ro, &rl);
        FA_EXPECT(t, covered && isnan(o[NAN_KEY * NAN_DIM]) && isfinite(o[(NAN_KEY - 1) * NAN_DIM]),
                  "a NaN key alone in its block poisons row %d: o = %g, want %g (%lld uncovered)", NAN_KEY,
                  (double)o[NAN_KEY * NAN_DIM], r.o[NAN_KEY * NAN_DIM], (long long)ro.uncovered);
        fa_attn_reference_free(&r);
    }
    fa_case_free(&c);
}

/** A one-row problem of @p nk keys, D = 1, scale 1, fp32: s_j = q k_j, reading k and v. */
static fa_attn_problem one_row_problem(const float *q, const float *k, const float *v, int64_t nk)
{
    return (fa_attn_problem){.batch = 1, .heads_q = 1, .heads_kv = 1, .nq = 1, .nk = nk, .head_dim = 1,
                             .scale = 1.0, .mask = FA_MASK_NONE, .q = fa_view_bhnd(q, FA_F32, 1, 1, 1),
                             .k = fa_view_bhnd(k, FA_F32, 1, nk, 1), .v = fa_view_bhnd(v, FA_F32, 1, nk, 1)};
}

/*
 * An attention bound that is not finite is refused, never handed to the check.
 * The definition (fp32 P, one block) has gamma_(N-1) for l and gamma_(N+1)
 * for P.V: 2^23 keys is the longest row accepted (gamma_l < 1), 2^23 + 1 the
 * shortest refused (n u = 1/2: 1 - gamma_l, which divides the bound, is 0),
 * and at 2^24 keys gamma_(N+1) itself is infinite. A real problem of 2^24
 * keys (k of 64 MiB, v the same array) is refused before anything is
 * allocated; a row whose scores reach 2^25 (u |s| = 2, so a weight's relative
 * error expm1(eta) exceeds 1) is refused with its coordinate; a described row
 * with a NaN max or a +inf score is an invalid argument.
 */
static void test_bound_refuses_long_rows(fa_tests *t)
{
    const int64_t half = (int64_t)1 << 23, full = (int64_t)1 << 24;
    FA_EXPECT(t, fa_bound_row_supported(&DEFINITION, half, HEAD_DIM) == FA_OK, "2^23 keys: %s",
              fa_last_error());
    fa_status status = fa_bound_row_supported(&DEFINITION, half + 1, HEAD_DIM);
    FA_EXPECT(t, status == FA_ERR_UNSUPPORTED && strstr(fa_last_error(), "n*u >= 1/2) for l") != NULL,
              "2^23 + 1 keys: %s: %s", fa_status_name(status), fa_last_error());
    status = fa_bound_row_supported(&DEFINITION, full, HEAD_DIM);
    FA_EXPECT(t, status == FA_ERR_UNSUPPORTED &&
                     strstr(fa_last_error(), "gamma_n with n*u >= 1 for P.V (n = 16777217") != NULL,
              "2^24 keys: %s: %s", fa_status_name(status), fa_last_error());
    status = fa_bound_row_supported(&FA2_METHOD, full, HEAD_DIM);
    FA_EXPECT(t, status == FA_ERR_UNSUPPORTED, "FlashAttention-2's methods, 2^24 keys: %s",
              fa_last_error());
    status = fa_bound_row_supported(&DEFINITION, 1, full);
    FA_EXPECT(t, status == FA_ERR_UNSUPPORTED && strstr(fa_last_error(), "q.k dot product") != NULL,
              "head_dim 2^24: %s", fa_last_error());

    float *k = calloc((size_t)full, sizeof(float));
    const float q = 1.0f;
    if (FA_EXPECT(t, k != NULL, "no memory for 2^24 keys")) {
        const int64_t lengths[2] = {half + 1, full};
        for (int c = 0; c < 2; c++) {
            const fa_attn_problem p = one_row_problem(&q, k, k, lengths[c]);
            fa_attn_reference r;
            status = fa_attention_reference(&p, &DEFINITION, &r);
            FA_EXPECT(t, status == FA_ERR_UNSUPPORTED && r.o == NULL && r.o_bound == NULL &&
                             strstr(fa_last_error(), "gamma_n") != NULL,
                      "a row of %lld keys: %s: %s", (long long)lengths[c], fa_status_name(status),
                      fa_last_error());
            fa_attn_reference_free(&r);
        }
        free(k);
    }

    const float big_q = 0x1p13f, big_k = 0x1p12f, one = 1.0f;
    const fa_attn_problem big = one_row_problem(&big_q, &big_k, &one, 1);
    fa_attn_reference r;
    status = fa_attention_reference(&big, &DEFINITION, &r);
    FA_EXPECT(t, status == FA_ERR_UNSUPPORTED && r.o == NULL &&
                     strstr(fa_last_error(), "(batch 0, head 0, row 0)") != NULL &&
                     strstr(fa_last_error(), "H = expm1(eta_j)") != NULL,
              "a score of 2^25: %s: %s", fa_status_name(status), fa_last_error());

    const double score[2] = {0.0, INFINITY}, abs_dot[2] = {0.0, 1.0};
    double weights[2], scratch[2 * FA_BOUND_SCRATCH_PER_KEY];
    fa_bound_row_terms terms = {.diff_weight = weights, .abs_weight = weights};
    const fa_bound_row_input nan_max = {.keys = 1, .score = score, .abs_dot = abs_dot, .scale = 1.0,
                                        .head_dim = 1, .max = NAN, .sum = 1.0};
    const fa_bound_row_input inf_score = {.keys = 2, .score = score, .abs_dot = abs_dot, .scale = 1.0,
                                          .head_dim = 1, .max = 0.0, .sum = 1.0};
    FA_EXPECT(t, fa_bound_row(&DEFINITION, &nan_max, scratch, &terms) == FA_ERR_INVALID_ARGUMENT &&
                     fa_bound_row(&DEFINITION, &inf_score, scratch, &terms) == FA_ERR_INVALID_ARGUMENT &&
                     strstr(fa_last_error(), "key 1") != NULL,
              "a row with a NaN max or a +inf score has no bound: %s", fa_last_error());
}

/*
 * The softmax bound's gamma_G needs G u < 1. A row of 2^24 + 1 zeros (64 MiB,
 * l = 2^24 + 1 exactly): the three-pass state (G = the terms) is refused with
 * its exact value and NaN bounds, which the check then refuses to judge even
 * for l = 0; the same row folded in chunks of 64 (G = 63 + updates) has a
 * finite bound that covers the float nearest l. The three-pass row reference
 * at its boundary: 2^24 - 1 visible entries have a finite bound, 2^24 none.
 */
static void test_softmax_refuses_long_rows(fa_tests *t)
{
    const int64_t full = (int64_t)1 << 24, n = full + 1;
    float *x = calloc((size_t)n, sizeof(float));
    double *p = malloc((size_t)full * sizeof(double)), *p_bound = malloc((size_t)full * sizeof(double));
    if (!FA_EXPECT(t, x != NULL && p != NULL && p_bound != NULL, "no memory for a row of 2^24 + 1")) {
        free(x), free(p), free(p_bound);
        return;
    }
    const fa_softmax_method three_pass = {0}, chunks = {64, 1, 0, NULL};
    fa_softmax_state_ref ref;
    fa_status status = fa_softmax_state_reference(x, NULL, n, NULL, &three_pass, &ref);
    FA_EXPECT(t, status == FA_ERR_UNSUPPORTED && ref.sum == (double)n && isnan(ref.sum_bound) &&
                     strstr(fa_last_error(), "gamma_n with n*u >= 1") != NULL,
              "three passes over 2^24 + 1 entries: %s (l %.17g, bound %g): %s", fa_status_name(status),
              ref.sum, ref.sum_bound, fa_last_error());
    const float wrong = 0.0f, nearest = (float)n;
    fa_check_report report;
    const bool covered = fa_check_covers(&wrong, &ref.sum, &ref.sum_bound, 1, &report);
    FA_EXPECT(t, !covered && report.status == FA_ERR_INVALID_ARGUMENT,
              "l = 0 against a NaN bound: not judged (covered %d)", (int)covered);
    status = fa_softmax_state_reference(x, NULL, n, NULL, &chunks, &ref);
    FA_EXPECT(t, status == FA_OK && isfinite(ref.sum_bound) &&
                     fa_check_covers(&nearest, &ref.sum, &ref.sum_bound, 1, NULL),
              "chunks of 64 over 2^24 + 1 entries: %s, l %.17g within %g", fa_status_name(status), ref.sum,
              ref.sum_bound);

    fa_softmax_keys keys = {FA_MASK_NONE, 0, 1, full - 1};
    double lse, lse_bound;
    status = fa_softmax_row_reference(x, full, &keys, &three_pass, p, p_bound, &lse, &lse_bound);
    FA_EXPECT(t, status == FA_OK && isfinite(p_bound[0]) && isfinite(lse_bound) && p_bound[full - 1] == 0.0,
              "2^24 - 1 visible entries: %s, bounds %g, %g", fa_status_name(status), p_bound[0], lse_bound);
    keys.length = full;
    status = fa_softmax_row_reference(x, full, &keys, &three_pass, p, p_bound, &lse, &lse_bound);
    FA_EXPECT(t, status == FA_ERR_UNSUPPORTED && p[0] == 0x1p-24 && isnan(p_bound[0]) &&
                     isnan(p_bound[full - 1]) && isnan(lse_bound) && lse == 24.0 * log(2.0),
              "2^24 visible entries: %s, p %g, bounds %g, %g", fa_status_name(status), p[0], p_bound[0],
              lse_bound);
    status = fa_softmax_rows_reference(x, 1, 1, 1, full, FA_MASK_NONE, NULL, &three_pass, p, p_bound,
                                       NULL, NULL);
    FA_EXPECT(t, status == FA_ERR_UNSUPPORTED, "the rows reference returns the refusal: %s",
              fa_status_name(status));
    free(x), free(p), free(p_bound);
}

/*
 * Every reference checks its own size products. At the limit of 2^60 - 1
 * doubles (fa_max_elements(8)): the largest output accepted reaches malloc
 * (FA_ERR_OUT_OF_MEMORY), one more is FA_ERR_OVERFLOW naming the product.
 * Before the checks, 2^32 x 2^32 rows wrapped to an empty reference that
 * "covered" anything. Where a function writes caller arrays, the refused size
 * is tested (nothing written), and the accepted one where nothing is read.
 */
static void test_size_overflow(fa_tests *t)
{
    const int64_t doubles = fa_max_elements((int64_t)sizeof(double));
    const int64_t floats = fa_max_elements((int64_t)sizeof(float));
    int64_t count;
    const int64_t at_limit[2] = {(int64_t)1 << 30, ((int64_t)1 << 30) - 1}, past[2] = {(int64_t)1 << 30,
                                                                                        (int64_t)1 << 30};
    FA_EXPECT(t, fa_ref_elements("t", "n", &doubles, 1, 8, &count) == FA_OK && count == doubles &&
                     fa_ref_elements("t", "a * b", at_limit, 2, 8, &count) == FA_OK &&
                     fa_ref_elements("t", "a * b", past, 2, 8, &count) == FA_ERR_OVERFLOW &&
                     strstr(fa_last_error(), "a * b = 1073741824 x 1073741824 elements of 8 bytes") != NULL,
              "fa_ref_elements at 2^60 - 1 and 2^60 doubles: %s", fa_last_error());

    const float zero = 0.0f;
    fa_attn_problem p = one_row_problem(&zero, &zero, &zero, 1);
    fa_attn_reference r;
    p.nq = doubles;
    p.q = fa_view_bhnd(&zero, FA_F32, 1, p.nq, 1);
    fa_status status = fa_attention_reference(&p, &DEFINITION, &r);
    FA_EXPECT(t, status == FA_ERR_OUT_OF_MEMORY, "attention reference, 2^60 - 1 outputs: %s: %s",
              fa_status_name(status), fa_last_error());
    p.nq = doubles + 1;
    p.q = fa_view_bhnd(&zero, FA_F32, 1, p.nq, 1);
    status = fa_attention_reference(&p, &DEFINITION, &r);
    FA_EXPECT(t, status == FA_ERR_OVERFLOW && strstr(fa_last_error(), "batch * heads_q * nq =") != NULL,
              "attention reference, 2^60 rows: %s: %s", fa_status_name(status), fa_last_error());
    p.nq = p.head_dim = (int64_t)1 << 30; /* 2^30 rows of 2^30 columns */
    p.q = fa_view_bhnd(&zero, FA_F32, 1, p.nq, p.head_dim);
    status = fa_attention_reference(&p, &DEFINITION, &r);
    FA_EXPECT(t, status == FA_ERR_OVERFLOW &&
                     strstr(fa_last_error(), "batch * heads_q * nq * head_dim") != NULL,
              "attention reference, 2^60 outputs: %s: %s", fa_status_name(status), fa_last_error());
    p = one_row_problem(&zero, &zero, &zero, 1);
    p.batch = p.heads_q = (int64_t)1 << 32;
    p.heads_kv = 1;
    status = fa_attention_reference(&p, &DEFINITION, &r);
    FA_EXPECT(t, status == FA_ERR_OVERFLOW && r.o == NULL &&
                     strstr(fa_last_error(), "batch * heads_q * nq =") != NULL,
              "attention reference, 2^32 x 2^32 rows: %s: %s", fa_status_name(status), fa_last_error());

    fa_tensor_view view = fa_view_bhnd(&zero, FA_F32, 1, 1, 1);
    view.stride_batch = floats - 1;
    const fa_status last_ok = fa_view_require_extent("t", "q", &view, 2, 1, 1, 1);
    view.stride_batch = floats;
    status = fa_view_require_extent("t", "q", &view, 2, 1, 1, 1);
    FA_EXPECT(t, last_ok == FA_OK && status == FA_ERR_OVERFLOW && strstr(fa_last_error(), "q of [2][1][1][1]"),
              "a view whose last element is 2^61 - 2, then 2^61 - 1 floats: %s: %s",
              fa_status_name(last_ok), fa_last_error());

    /* The emulation accepts what the reference accepts: Nk 6 doubles of scratch bind first. */
    const int64_t nk_most = doubles / FA_BOUND_SCRATCH_PER_KEY;
    float o[1], lse[1];
    const fa_emulation e = {.method = DEFINITION};
    p = one_row_problem(&zero, &zero, &zero, nk_most);
    status = fa_emulate_attention(&p, &e, o, lse);
    FA_EXPECT(t, status == FA_ERR_OUT_OF_MEMORY, "emulation, Nk = %lld: %s: %s", (long long)nk_most,
              fa_status_name(status), fa_last_error());
    p = one_row_problem(&zero, &zero, &zero, nk_most + 1);
    status = fa_emulate_attention(&p, &e, o, lse);
    FA_EXPECT(t, status == FA_ERR_OVERFLOW && strstr(fa_last_error(), "nk * FA_BOUND_SCRATCH_PER_KEY") != NULL,
              "emulation, Nk = %lld: %s: %s", (long long)nk_most + 1, fa_status_name(status),
              fa_last_error());

    /* A case of 3 B fp32 elements: B = (2^61 - 1) / 3 is the largest accepted. */
    fa_case_shape shape = {.batch = floats / 3, .heads_q = 1, .heads_kv = 1, .nq = 1, .nk = 1,
                           .head_dim = FA_CASE_MIN_HEAD_DIM, .dtype = FA_F32};
    fa_attn_case c;
    status = fa_case_create(&c, &shape);
    FA_EXPECT(t, status == FA_ERR_OUT_OF_MEMORY, "case of batch %lld: %s: %s", (long long)shape.batch,
              fa_status_name(status), fa_last_error());
    shape.batch++;
    status = fa_case_create(&c, &shape);
    FA_EXPECT(t, status == FA_ERR_OVERFLOW && c.q == NULL, "case of batch %lld: %s: %s",
              (long long)shape.batch, fa_status_name(status), fa_last_error());
    fa_case_free(&c);

    double out[2] = {1.0, 1.0};
    const float in[1] = {0.0f};
    status = fa_ref_matmul(in, in, FA_F32, FA_B_ROW_MAJOR, past[0], past[1], 1, out, NULL);
    FA_EXPECT(t, status == FA_ERR_OVERFLOW && out[0] == 1.0 && strstr(fa_last_error(), "m * n") != NULL,
              "matmul of 2^30 x 2^30 outputs: %s: %s", fa_status_name(status), fa_last_error());
    status = fa_ref_transpose(in, past[0], past[1], out);
    FA_EXPECT(t, status == FA_ERR_OVERFLOW && out[0] == 1.0, "transpose of 2^60: %s: %s",
              fa_status_name(status), fa_last_error());
    const fa_status row_ok = fa_ref_row_max(in, 2, 0, floats, out);
    const bool written = out[0] == -INFINITY && out[1] == -INFINITY;
    status = fa_ref_row_max(in, 2, 0, floats + 1, out);
    FA_EXPECT(t, row_ok == FA_OK && written && status == FA_ERR_OVERFLOW,
              "row max with ld 2^61 - 1, then 2^61 (rows 2, cols 0): %s, %s: %s", fa_status_name(row_ok),
              fa_status_name(status), fa_last_error());
    const fa_softmax_method three_pass = {0};
    out[0] = out[1] = 1.0;
    status = fa_softmax_rows_reference(in, past[0], past[1], 1, 1, FA_MASK_NONE, NULL, &three_pass, out, out,
                                       NULL, NULL);
    FA_EXPECT(t, status == FA_ERR_OVERFLOW && strstr(fa_last_error(), "batch * heads * rows =") != NULL,
              "softmax, 2^60 rows: %s: %s", fa_status_name(status), fa_last_error());
    status = fa_softmax_rows_reference(in, past[0], past[1] / 2, 1, 2, FA_MASK_NONE, NULL, &three_pass, out,
                                       out, NULL, NULL);
    FA_EXPECT(t, status == FA_ERR_OVERFLOW && strstr(fa_last_error(), "batch * heads * rows * n") != NULL &&
                     out[0] == 1.0,
              "softmax, 2^59 rows of 2: %s: %s", fa_status_name(status), fa_last_error());
}

/* ---- 7. every term of the bounds carries weight, or the test says why not ----------------- */

/*
 * The merge-rise term of the softmax bound carries weight. 1024 lanes of one
 * entry, merged by a butterfly over 10 levels (masks 1, 2, ..., 512). Lane 0
 * holds x = 0 with v = 1; lane 2^l holds the max of the group lane 0 meets at
 * level l, a little below (l + 1) ln 2; every other entry is -inf. Lane 0's
 * group is the lower one at every level, so its term is rescaled 10 times by
 * factors just above 1/2, where a 2-ulp push is 4u, and v makes o that term
 * alone. Each rise is picked among 256 values below ln 2 so that the rounding
 * of the factor and of the product go the adversary's way too (with the
 * emulation's own expf, so the input follows the libm it runs on). The kernel
 * with every expf pushed down (fa_emulate_expf()) is covered by the full
 * bound of o, and not by the bound without the merge rises: that keeps
 * u |x - m|, one expf and gamma_(2L+2) against the 10 rescales it realises.
 */
static void test_merge_rise_term_carries_weight(fa_tests *t)
{
    enum { MERGE_LEVELS = 10, MERGE_LANES = 1 << MERGE_LEVELS, RISE_CANDIDATES = 256 };
    _Static_assert((int)MERGE_LANES <= (int)FA_SOFTMAX_MAX_LANES, "one entry per lane");
    static float x[MERGE_LANES], v[MERGE_LANES];
    int masks[MERGE_LEVELS];
    for (int lane = 0; lane < MERGE_LANES; lane++) {
        x[lane] = lane == 0 ? 0.0f : -INFINITY;
        v[lane] = lane == 0 ? 1.0f : 0.0f;
    }
    float previous = 0.0f, o = 1.0f;
    for (int level = 0; level < MERGE_LEVELS; level++) {
        masks[level] = 1 << level;
        float best = previous;
        double best_relative = INFINITY;
        for (int c = 0; c < RISE_CANDIDATES; c++) {
            const float candidate = (float)((double)previous + 0.6931 - c * 0x1p-12);
            const double relative = (double)(o * fa_emulate_expf(previous - candidate, -1)) / exp(-(double)candidate);
            if (relative < best_relative) {
                best_relative = relative;
                best = candidate;
            }
        }
        o *= fa_emulate_expf(previous - best, -1);
        x[1 << level] = best;
        previous = best;
    }
    const fa_softmax_method butterfly = {1, MERGE_LANES, MERGE_LEVELS, masks};
    const softmax_state kernel = softmax_fold(x, v, MERGE_LANES, &butterfly, true, -1);
    fa_softmax_state_ref with, without;
    const fa_status status = fa_softmax_state_reference(x, v, MERGE_LANES, NULL, &butterfly, &with);
    const fa_status status_without = fa_softmax_state_reference_without(
        x, v, MERGE_LANES, NULL, &butterfly, FA_BOUND_TERM_MERGE_RISES, &without);
    if (!FA_EXPECT(t, status == FA_OK && status_without == FA_OK, "%s", fa_last_error()))
        return;
    const double err = fabs((double)kernel.output - with.output);
    const double ratio = err / with.output_bound, ratio_without = err / without.output_bound;
    FA_EXPECT(t, ratio <= 1.0 && fabs((double)kernel.sum - with.sum) <= with.sum_bound,
              "10 merge rises: the full bound covers the adversarial kernel (o err/bound %.3f)", ratio);
    FA_EXPECT(t, ratio_without > 1.0,
              "10 merge rises: without the merge-rise term the adversarial kernel is uncovered "
              "(o err/bound %.3f, err %.1f u)", ratio_without, err / with.output / FA_BOUND_U32);
}

/*
 * The rescale term rho_tau of the attention bound cannot carry weight against
 * the emulated kernels, and this test shows that fact. The input gives it the
 * most weight an input can: one row, D = 1, one key per block, so every block
 * is a rise (R = N - 1); s_j = j 0.6931, so every rescale factor is just above
 * 1/2, where the adversary's 2-ulp push is 4u; v_0 = 1 and 0 elsewhere, so o
 * is key 0's weight, rescaled at every rise. rho is most of the bound here
 * (the bound without it is under half). Yet the adversarial kernel (both
 * signs, o and lse, both block orders; expf, exp2 and __expf) stays well
 * inside the bound without rho: it realises about 4u per rise, while each
 * rise still costs 4u in gamma_l and gamma_pv (the new block's key added to
 * l and to P.V, the rescale multiplies of l and O) and 3u |s| of score and
 * argument rounding for the keys far from zero. The rest of rho, 4u |jump| +
 * u (|m_tau| + |m_tau-1|), is never realised: exp(m_old - m_new) telescopes
 * the roundings of the maxima (docs/numerics.md).
 */
static void test_rescale_term_dominated(fa_tests *t)
{
    enum { MOST_RISES = 60 };
    const int rises[2] = {20, MOST_RISES};
    const fa_exp_method exps[3] = {FA_EXP_EXPF, FA_EXP_EXP2_PRESCALED, FA_EXP_FAST};
    float k[MOST_RISES + 1], v[MOST_RISES + 1], o, lse;
    const float q = 1.0f;
    for (int j = 0; j <= MOST_RISES; j++) {
        k[j] = (float)(0.6931 * j);
        v[j] = j == 0 ? 1.0f : 0.0f;
    }
    for (int r = 0; r < 2; r++) {
        for (int x = 0; x < 3; x++) {
            const fa_attn_method m = {.input_dtype = FA_F32, .block_n = 1, .exp_method = exps[x]};
            const fa_attn_problem p = one_row_problem(&q, k, v, rises[r] + 1);
            fa_attn_reference with, without;
            if (!FA_EXPECT(t, fa_attention_reference(&p, &m, &with) == FA_OK &&
                                  fa_attention_reference_without(&p, &m, FA_BOUND_TERM_RESCALE, &without) == FA_OK,
                           "%s", fa_last_error()))
                continue;
            double worst = 0.0, worst_without = 0.0;
            for (int sign = -1; sign <= 1; sign += 2) {
                for (int column = -1; column <= 0; column++) {
                    for (int reverse = 0; reverse <= 1; reverse++) {
                        const fa_emulation e = {.method = m, .reverse_block_order = reverse, .adversarial = true,
                                                .adversarial_sign = sign, .adversarial_column = column,
                                                .adversarial_reference = &with};
                        if (!FA_EXPECT(t, fa_emulate_attention(&p, &e, &o, &lse) == FA_OK, "%s", fa_last_error()))
                            continue;
                        const double err_o = fabs((double)o - with.o[0]), err_lse = fabs((double)lse - with.lse[0]);
                        worst = fa_max_nan_double(worst, fa_max_nan_double(err_o / with.o_bound[0],
                                                                           err_lse / with.lse_bound[0]));
                        worst_without = fa_max_nan_double(
                            worst_without, fa_max_nan_double(err_o / without.o_bound[0], err_lse / without.lse_bound[0]));
                    }
                }
            }
            const double share = without.o_bound[0] / with.o_bound[0];
            FA_EXPECT(t, worst <= 1.0 && worst_without <= 0.75 && share < 0.5,
                      "%d rises, exp method %d: err/bound %.3f with rho, %.3f without (<= 0.75); the bound "
                      "without rho is %.2f of the full one (< 0.5)",
                      rises[r], (int)exps[x], worst, worst_without, share);
            fa_attn_reference_free(&with);
            fa_attn_reference_free(&without);
        }
    }
}

/*
 * The flushed-weight term carries weight. One row, two keys in blocks of one:
 * key 0 scores 0 with v = 0, key 1 scores -88.5 with v = 1e30. Visited
 * forward, key 1's weight exp(-88.5) = 3.7e-39 is below 2^-126 in its
 * block's units, and the adversarial emulation, pushing o down, flushes it
 * (as ex2.approx.ftz does): o = 0, where o = 1e30 exp(-88.5) = 3.7e-9. The
 * weight's relative error cannot cover a weight that vanished; the term
 * 2^-126 |v - o| / l does.
 */
static void test_flushed_weight_term_carries_weight(fa_tests *t)
{
    const float q = 1.0f, k[2] = {0.0f, -88.5f}, v[2] = {0.0f, 1e30f};
    const fa_attn_method m = {.input_dtype = FA_F32, .block_n = 1, .exp_method = FA_EXP_EXP2_PRESCALED};
    const fa_attn_problem p = one_row_problem(&q, k, v, 2);
    fa_attn_reference with, without;
    if (!FA_EXPECT(t, fa_attention_reference(&p, &m, &with) == FA_OK &&
                          fa_attention_reference_without(&p, &m, FA_BOUND_TERM_FLUSHED, &without) == FA_OK,
                   "%s", fa_last_error()))
        return;
    float o, lse;
    const fa_emulation e = {.method = m, .adversarial = true, .adversarial_sign = -1,
                            .adversarial_column = 0, .adversarial_reference = &with};
    if (FA_EXPECT(t, fa_emulate_attention(&p, &e, &o, &lse) == FA_OK, "%s", fa_last_error())) {
        const double err = fabs((double)o - with.o[0]);
        FA_EXPECT(t, o == 0.0f && err <= with.o_bound[0] && err > without.o_bound[0],
                  "a flushed weight: o = %g (exact %g), err/bound %.3g with the term, %.3g without",
                  (double)o, with.o[0], err / with.o_bound[0], err / without.o_bound[0]);
    }
    fa_attn_reference_free(&with);
    fa_attn_reference_free(&without);
}

/* The masks drawn, row by row ('x': allowed), for the hand fixtures below. */
typedef struct mask_fixture {
    const char *name;
    int64_t nq, nk;
    fa_mask mask;
    int64_t left, right;   /* FA_MASK_WINDOW's extents */
    const char *rows[6];
} mask_fixture;

static const mask_fixture MASK_FIXTURES[] = {
    /* 4 x 6: bottom-right diagonal j = i + 2. */
    {"4x6 none", 4, 6, FA_MASK_NONE, 0, 0, {"xxxxxx", "xxxxxx", "xxxxxx", "xxxxxx"}},
    {"4x6 causal top-left", 4, 6, FA_MASK_CAUSAL_TOP_LEFT, 0, 0, {"x.....", "xx....", "xxx...", "xxxx.."}},
    {"4x6 causal bottom-right", 4, 6, FA_MASK_CAUSAL_BOTTOM_RIGHT, 0, 0,
     {"xxx...", "xxxx..", "xxxxx.", "xxxxxx"}},
    {"4x6 window (1, 0)", 4, 6, FA_MASK_WINDOW, 1, 0, {".xx...", "..xx..", "...xx.", "....xx"}},
    {"4x6 window (0, 1)", 4, 6, FA_MASK_WINDOW, 0, 1, {"..xx..", "...xx.", "....xx", ".....x"}},
    {"4x6 window (-1, 0) = causal bottom-right", 4, 6, FA_MASK_WINDOW, -1, 0,
     {"xxx...", "xxxx..", "xxxxx.", "xxxxxx"}},
    /* 6 x 4: bottom-right diagonal j = i - 2, so its first rows see nothing. */
    {"6x4 causal top-left", 6, 4, FA_MASK_CAUSAL_TOP_LEFT, 0, 0,
     {"x...", "xx..", "xxx.", "xxxx", "xxxx", "xxxx"}},
    {"6x4 causal bottom-right", 6, 4, FA_MASK_CAUSAL_BOTTOM_RIGHT, 0, 0,
     {"....", "....", "x...", "xx..", "xxx.", "xxxx"}},
    {"6x4 window (1, 0)", 6, 4, FA_MASK_WINDOW, 1, 0, {"....", "....", "x...", "xx..", ".xx.", "..xx"}},
    {"6x4 window (0, 1)", 6, 4, FA_MASK_WINDOW, 0, 1, {"....", "x...", "xx..", ".xx.", "..xx", "...x"}},
};

/*
 * Every mask, drawn: the reference's fa_attn_allows() (the band of fa_mask.h)
 * must allow exactly the drawn keys, and its longest row must be the longest
 * drawn one. Then the reference itself on each drawing, D = 1, every score 0
 * but a sentinel key with score 30 and v = 20 wherever a row does not see
 * it: o must be the mean of the drawn keys' v (v_j = j + 1), lse = ln of
 * their count, and a row that sees no key o = 0, lse = -inf.
 */
static void test_mask_fixtures(fa_tests *t)
{
    for (int f = 0; f < FA_COUNT_OF(MASK_FIXTURES); f++) {
        const mask_fixture *x = &MASK_FIXTURES[f];
        float q[6], k[6], v[6];
        fa_attn_problem p = {.batch = 1, .heads_q = 1, .heads_kv = 1, .nq = x->nq, .nk = x->nk, .head_dim = 1,
                             .scale = 1.0, .mask = x->mask, .q = fa_view_bhnd(q, FA_F32, 1, x->nq, 1),
                             .k = fa_view_bhnd(k, FA_F32, 1, x->nk, 1), .v = fa_view_bhnd(v, FA_F32, 1, x->nk, 1),
                             .window_left = x->left, .window_right = x->right};
        int wrong = 0;
        int64_t longest = 0;
        for (int64_t i = 0; i < x->nq; i++) {
            int64_t first = -1, last = -1;
            for (int64_t j = 0; j < x->nk; j++) {
                const bool drawn = x->rows[i][j] == 'x';
                wrong += fa_attn_allows(&p, 0, i, j) != drawn;
                if (drawn) {
                    first = first < 0 ? j : first;
                    last = j;
                }
            }
            longest = first >= 0 && last - first + 1 > longest ? last - first + 1 : longest;
        }
        FA_EXPECT(t, wrong == 0 && fa_attn_longest_row(&p) == longest,
                  "%s: %d keys differ from the drawing; longest row %lld, drawn %lld", x->name, wrong,
                  (long long)fa_attn_longest_row(&p), (long long)longest);

        /* The sentinel: a key some row does not see, or none when every key is seen by all. */
        int64_t sentinel = -1;
        for (int64_t j = 0; j < x->nk && sentinel < 0; j++)
            for (int64_t i = 0; i < x->nq; i++)
                if (x->rows[i][j] != 'x')
                    sentinel = j;
        for (int64_t i = 0; i < x->nq; i++)
            q[i] = 1.0f;
        for (int64_t j = 0; j < x->nk; j++) {
            k[j] = j == sentinel ? 30.0f : 0.0f;
            v[j] = j == sentinel ? 20.0f : (float)(j + 1);
        }
        fa_attn_reference r;
        if (!FA_EXPECT(t, fa_attention_reference(&p, &DEFINITION, &r) == FA_OK, "%s: %s", x->name,
                       fa_last_error()))
            continue;
        int bad = 0;
        for (int64_t i = 0; i < x->nq; i++) {
            double sum = 0.0, count = 0.0, top = -INFINITY;
            for (int64_t j = 0; j < x->nk; j++)
                if (x->rows[i][j] == 'x')
                    top = fmax(top, (double)k[j]);
            for (int64_t j = 0; j < x->nk; j++)
                if (x->rows[i][j] == 'x' && k[j] == top) {
                    sum += v[j];
                    count += 1.0;
                }
            const double o = count > 0.0 ? sum / count : 0.0;
            const double lse = count > 0.0 ? top + log(count) : -INFINITY;
            bad += !(fabs(r.o[i] - o) <= 1e-12 * fabs(o)) && !(o == 0.0 && r.o[i] == 0.0);
            bad += !(r.lse[i] == lse || fabs(r.lse[i] - lse) <= 1e-12 * fabs(lse));
        }
        FA_EXPECT(t, bad == 0, "%s: %d outputs of the reference differ from the drawing's (sentinel key %lld)",
                  x->name, bad, (long long)sentinel);
        fa_attn_reference_free(&r);
    }
}

/* fa_attn_longest_row() against every row counted, for every band up to 9 x 9. */
static void test_longest_row(fa_tests *t)
{
    static const int64_t sides[] = {-1, 0, 1, 3};
    int wrong = 0;
    for (int64_t nq = 1; nq <= 9; nq++)
        for (int64_t nk = 0; nk <= 9; nk++)
            for (int m = 0; m < 4; m++)
                for (int a = 0; a < 4; a++)
                    for (int b = 0; b < 4; b++) {
                        const fa_attn_problem p = {.batch = 1, .nq = nq, .nk = nk, .mask = (fa_mask)m,
                                                   .window_left = sides[a], .window_right = sides[b]};
                        int64_t longest = 0;
                        for (int64_t i = 0; i < nq; i++) {
                            const fa_key_range range = fa_window_key_range(fa_attn_band(&p), i, nk);
                            longest = range.end - range.begin > longest ? range.end - range.begin : longest;
                        }
                        wrong += fa_attn_longest_row(&p) != longest;
                    }
    FA_EXPECT(t, wrong == 0, "%d bands whose longest row is not the longest counted", wrong);
}

/*
 * A sample of a masked call's rows is judged as the whole: the reference of
 * the rows {0, 4, 8} of a 9 x 6 call (q's rows copied, sample_rows telling
 * their places) gives those rows' o, lse and bounds of the whole call
 * exactly, under every mask; without sample_rows the sample of 3 rows would
 * align its masks to nq = 3 and differ. A sample row outside the call is
 * refused.
 */
static void test_sampled_rows(fa_tests *t)
{
    enum { NQ = 9, NK = 6, D = 4, COUNT = 3 };
    static const int64_t rows[COUNT] = {0, 4, 8};
    float q[NQ * D], k[NK * D], v[NK * D], q_rows[COUNT * D];
    fa_rng rng;
    fa_rng_seed(&rng, 77, 0);
    for (int i = 0; i < NQ * D; i++)
        q[i] = (float)fa_rng_normal(&rng);
    for (int i = 0; i < NK * D; i++) {
        k[i] = (float)fa_rng_normal(&rng);
        v[i] = (float)fa_rng_normal(&rng);
    }
    for (int r = 0; r < COUNT; r++)
        for (int d = 0; d < D; d++)
            q_rows[r * D + d] = q[rows[r] * D + d];
    const fa_attn_method m = FA2_METHOD;
    for (int mask = FA_MASK_CAUSAL_TOP_LEFT; mask <= FA_MASK_WINDOW; mask++) {
        fa_attn_problem whole = {.batch = 1, .heads_q = 1, .heads_kv = 1, .nq = NQ, .nk = NK,
                                 .head_dim = D, .scale = 0.5, .mask = (fa_mask)mask,
                                 .q = fa_view_bhnd(q, FA_F32, 1, NQ, D),
                                 .k = fa_view_bhnd(k, FA_F32, 1, NK, D),
                                 .v = fa_view_bhnd(v, FA_F32, 1, NK, D),
                                 .window_left = 1, .window_right = 1};
        fa_attn_problem sample = whole;
        sample.nq = COUNT;
        sample.q = fa_view_bhnd(q_rows, FA_F32, 1, COUNT, D);
        sample.sample_rows = rows;
        sample.sample_nq = NQ;
        fa_attn_reference a = {0}, b = {0};
        if (FA_EXPECT(t, fa_attention_reference(&whole, &m, &a) == FA_OK &&
                             fa_attention_reference(&sample, &m, &b) == FA_OK,
                      "mask %d: %s", mask, fa_last_error())) {
            int differ = 0;
            for (int r = 0; r < COUNT; r++) {
                for (int d = 0; d < D; d++)
                    differ += a.o[rows[r] * D + d] != b.o[r * D + d] ||
                              a.o_bound[rows[r] * D + d] != b.o_bound[r * D + d];
                differ += !(a.lse[rows[r]] == b.lse[r] || (isnan(a.lse[rows[r]]) && isnan(b.lse[r])));
            }
            FA_EXPECT(t, differ == 0, "mask %d: %d values of the sampled rows differ from the whole's",
                      mask, differ);
        }
        fa_attn_reference_free(&a);
        fa_attn_reference_free(&b);
    }
    const int64_t outside[COUNT] = {0, 4, 9};
    fa_attn_problem bad = {.batch = 1, .heads_q = 1, .heads_kv = 1, .nq = COUNT, .nk = NK, .head_dim = D,
                           .scale = 0.5, .q = fa_view_bhnd(q_rows, FA_F32, 1, COUNT, D),
                           .k = fa_view_bhnd(k, FA_F32, 1, NK, D), .v = fa_view_bhnd(v, FA_F32, 1, NK, D),
                           .sample_rows = outside, .sample_nq = NQ};
    fa_attn_reference c = {0};
    FA_EXPECT(t, fa_attention_reference(&bad, &m, &c) == FA_ERR_INVALID_SIZE &&
                     strstr(fa_last_error(), "sample_rows[2] = 9") != NULL,
              "a sample row past the call: %s", fa_last_error());
    fa_attn_reference_free(&c);
}

int main(int argc, char **argv)
{
    const char *tables_path = NULL;
    if (argc == 3 && strcmp(argv[1], "--tables") == 0) {
        tables_path = argv[2];
    } else if (argc != 1) {
        fprintf(stderr, "usage: %s [--tables FILE]\n", argv[0]);
        return FA_EXIT_USAGE;
    }
    fa_tests t = {0};
    static table coverage, ablation, variants, mutants;

    test_reference_classics(&t);
    test_reference_nan_row(&t);
    test_reference_nan_value(&t);
    test_bound_no_keys(&t);
    test_mask_fixtures(&t);
    test_longest_row(&t);
    test_sampled_rows(&t);
    test_reference_metamorphic(&t);
    test_bad_input(&t);
    test_softmax_reference_classics(&t);
    test_softmax_reference_bound(&t);
    test_softmax_state_reference(&t);
    test_check_refuses_non_bounds(&t);
    test_statistics_keep_nan(&t);
    test_emulation_keeps_nan_max(&t);
    test_bound_refuses_long_rows(&t);
    test_softmax_refuses_long_rows(&t);
    test_size_overflow(&t);
    test_merge_rise_term_carries_weight(&t);
    test_rescale_term_dominated(&t);
    test_flushed_weight_term_carries_weight(&t);
    test_coverage(&t, &FA2_METHOD, "FlashAttention-2 (bf16, tensor cores, B = 64, bf16 P, exp2, rcp)", &coverage);
    test_coverage(&t, &ABLATION_METHOD, "same, l from the rounded P", &coverage);
    for (int k = 0; k < OTHER_METHOD_COUNT; k++)
        test_coverage(&t, &OTHER_METHODS[k], OTHER_METHOD_NAMES[k], &coverage);
    test_ablation(&t, &ablation);
    test_mutation_suite(&t, &variants, &mutants);

    if (tables_path && write_tables(tables_path, &coverage, &ablation, &variants, &mutants) != 0)
        return FA_EXIT_USAGE;
    return fa_tests_finish(&t);
}
