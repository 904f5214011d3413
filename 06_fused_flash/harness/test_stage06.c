/**
 * @file test_stage06.c
 * @brief Stage 06 tests.
 *
 * `test_stage06 cpu` (no GPU needed): every call of M24's battery through
 * the reference's validation and fa_attention_supported() (and, with CUDA,
 * the learner's and fa_attention_forward()) with its exact status, field
 * and kernel, the 64-bit boundaries among them; the battery failing
 * validators that are wrong; the methods fa_attention_method() declares;
 * the strides helpers, the scale, the variant names; the fixtures' hand
 * arithmetic against the reference; the rotation of the shape grid; the
 * judge accepting the reference's own output and rejecting planted
 * mistakes; the driver's flags.
 *
 * `test_stage06 gpu` (exit 77 without a usable GPU): the reference checks;
 * the method ablation on version 2's output; canaries; a NaN in q, k or v
 * reaching exactly the outputs the definition says; a call of more than
 * 2^31 elements in q (64-bit offsets); --case and the problem flags.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "battery.h"
#include "fa_attention_ref.h"
#include "fa_check.h"
#include "fa_cli.h"
#include "fa_index.h"
#include "fa_rng.h"
#include "fa_stage.h"
#include "fa_status.h"
#include "fa_test.h"
#include "fixtures.h"
#include "flash.h"
#include "judge.h"

#if FA_HAVE_CUDA
#include "checks.h"
#include "fa_device.h"
#include "runners.h"
#endif

static const uint64_t SEED = 20240606;

/* ---- CPU: M24's battery ---------------------------------------------------------------------- */

/** fa_attention_forward() with a validator's signature: it validates before any CUDA call. */
#if FA_HAVE_CUDA
static fa_status forward_on_default_stream(const fa_attention_params *p, fa_variant *chosen)
{
    (void)chosen;
    return fa_attention_forward(p, 0);
}
#endif

/**
 * fa_attention_supported() answering as M24 does: FA_VARIANT_AUTO's version
 * 3, where the device runs it, counts as the version 2 M24 chooses
 * (test_auto_choice() tests that choice).
 */
static fa_status supported_as_m24(const fa_attention_params *p, fa_variant *chosen)
{
    const fa_status status = fa_attention_supported(p, chosen);
    if (status == FA_OK && p != NULL && p->variant == FA_VARIANT_AUTO && chosen != NULL &&
        *chosen == FA_VARIANT_HOPPER) {
        fa_attention_params by_name = *p;
        by_name.variant = FA_VARIANT_HOPPER; /* AUTO takes v3 only where it is accepted by name */
        *chosen = fa_attention_supported(&by_name, NULL) == FA_OK ? FA_VARIANT_TENSOR_CORES
                                                                : FA_VARIANT_HOPPER;
    }
    return status;
}

/**
 * Every call of the battery gets its exact status, names its field and, when
 * accepted, chooses the expected kernel: from the reference's validation, and
 * from fa_attention_supported() (the library's entry point, the same
 * function, with version 3 for version 2 where AUTO takes it). With CUDA, the learner's validation too (or its skeleton's "not
 * implemented"), and fa_attention_forward() on every call that does no work
 * (refused, or empty): the library validates before it touches the GPU.
 */
static void test_battery(fa_tests *t)
{
    flash_battery_case cases[FLASH_BATTERY_MAX];
    const int count = flash_battery(cases);
    FA_EXPECT(t, count >= 90 && count < FLASH_BATTERY_MAX, "the battery holds %d calls", count);
    static const struct {
        const char *name;
        flash_validator validate;
    } validators[] = {{"ref_attention_validate", ref_attention_validate},
                      {"fa_attention_supported", supported_as_m24}};
    for (int c = 0; c < count; ++c) {
        for (int v = 0; v < FA_COUNT_OF(validators); ++v) {
            fa_status status;
            char why[FA_RESULT_DETAIL];
            const bool ok =
                flash_battery_call(validators[v].validate, &cases[c], &status, why, sizeof why);
            FA_EXPECT(t, ok, "%s, %s: %s", validators[v].name, cases[c].name, why);
        }
#if FA_HAVE_CUDA
        fa_status status;
        char why[FA_RESULT_DETAIL];
        const bool learner_ok =
            flash_battery_call(learner_attention_validate, &cases[c], &status, why, sizeof why);
        if (status == FA_ERR_NOT_IMPLEMENTED)
            FA_EXPECT(t, strstr(fa_last_error(), "not implemented") != NULL,
                      "learner_attention_validate, %s: \"%s\"", cases[c].name, fa_last_error());
        else
            FA_EXPECT(t, learner_ok, "learner_attention_validate, %s: %s", cases[c].name, why);
        const fa_attention_params *p = &cases[c].params;
        const bool no_work = cases[c].expected != FA_OK || flash_call_empty(p);
        if (no_work) {
            flash_battery_case forward = cases[c];
            forward.chosen = FA_VARIANT_AUTO; /* fa_attention_forward() reports no kernel */
            FA_EXPECT(t, flash_battery_call(forward_on_default_stream, &forward, &status, why,
                                            sizeof why),
                      "fa_attention_forward, %s: %s", cases[c].name, why);
        }
#endif
    }
}

/** The case of the battery named @p name, or NULL. */
static const flash_battery_case *battery_case(const flash_battery_case *cases, int count,
                                              const char *name)
{
    for (int c = 0; c < count; ++c)
        if (strcmp(cases[c].name, name) == 0)
            return &cases[c];
    return NULL;
}

/**
 * The 64-bit boundaries of the battery are boundaries: each refused call is
 * its accepted neighbour with one element more (a row stride one larger, or
 * one query row more), and the accepted one's last element sits exactly at
 * the largest offset whose end (one past it, in bytes) fits a signed 64-bit
 * integer.
 */
static void test_overflow_boundaries(fa_tests *t)
{
    flash_battery_case cases[FLASH_BATTERY_MAX];
    const int count = flash_battery(cases);
    static const struct {
        const char *accepted, *refused;
        int which; /* 0: q's row stride, 1: k's row stride, 2: nq */
    } pairs[] = {
        {"q's last element at offset INT64_MAX / 2 - 1 (the largest; an odd stride: v1)",
         "q's last element at INT64_MAX / 2: its end is past 64 bits", 0},
        {"fp32 k's last element at offset INT64_MAX / 4 - 1 (the largest)",
         "fp32 k's last element at INT64_MAX / 4: its end is past 64 bits", 1},
        {"lse of 2^15 x 2^15 x (2^31 - 1) floats (the largest nq)",
         "lse of 2^15 x 2^15 x 2^31 floats", 2},
    };
    for (int i = 0; i < FA_COUNT_OF(pairs); ++i) {
        const flash_battery_case *a = battery_case(cases, count, pairs[i].accepted);
        const flash_battery_case *r = battery_case(cases, count, pairs[i].refused);
        if (!FA_EXPECT(t, a != NULL && r != NULL, "boundary pair %d is in the battery", i))
            continue;
        FA_EXPECT(t, a->expected == FA_OK && r->expected == FA_ERR_OVERFLOW,
                  "%s: accepted, its neighbour refused with FA_ERR_OVERFLOW", pairs[i].accepted);
        const fa_attention_params *pa = &a->params, *pr = &r->params;
        if (pairs[i].which == 2) {
            FA_EXPECT(t, pr->nq == pa->nq + 1 && pa->batch * pa->heads_q * pa->nq <= INT64_MAX / 4 &&
                             pr->batch * pr->heads_q * pr->nq > INT64_MAX / 4,
                      "lse: %lld x %lld x %lld floats fit, one row more does not",
                      (long long)pa->batch, (long long)pa->heads_q, (long long)pa->nq);
            continue;
        }
        const fa_strides *sa = pairs[i].which == 0 ? &pa->q_strides : &pa->k_strides;
        const fa_strides *sr = pairs[i].which == 0 ? &pr->q_strides : &pr->k_strides;
        const int64_t element = fa_dtype_size(pa->dtype);
        const int64_t last = sa->row + pa->head_dim - 1; /* 2 rows: row 1's last element */
        FA_EXPECT(t, sr->row == sa->row + 1 && last == INT64_MAX / element - 1,
                  "%s: last element at %lld, expected %lld, refused stride %lld = %lld + 1",
                  pairs[i].accepted, (long long)last, (long long)(INT64_MAX / element - 1),
                  (long long)sr->row, (long long)sa->row);
    }
}

/** Validators that are wrong in one way each, and the reference's, for test_battery_catches(). */
static fa_status accept_everything(const fa_attention_params *p, fa_variant *chosen)
{
    (void)ref_attention_validate(p, chosen); /* the reference's choice where it accepts */
    return FA_OK;
}

static fa_status always_v1(const fa_attention_params *p, fa_variant *chosen)
{
    const fa_status status = ref_attention_validate(p, chosen);
    *chosen = FA_VARIANT_CUDA_CORES;
    return status;
}

static fa_status silent_refusals(const fa_attention_params *p, fa_variant *chosen)
{
    const fa_status status = ref_attention_validate(p, chosen);
    return status == FA_OK ? FA_OK : fa_fail(status, "fa_attention: bad call");
}

static fa_status no_stride_checks(const fa_attention_params *p, fa_variant *chosen)
{
    if (p == NULL)
        return ref_attention_validate(p, chosen);
    fa_attention_params q = *p;
    q.o_strides = fa_attention_strides_bnhd(q.nq, q.heads_q, q.head_dim);
    q.q_strides = fa_attention_strides_bnhd(q.nq, q.heads_q, q.head_dim);
    return ref_attention_validate(&q, chosen);
}

/**
 * M24's check passes the reference, and fails validators that accept every
 * call, always choose v1, refuse without naming the field, or ignore the
 * strides; --case runs one call of the battery alone.
 */
static void test_battery_catches(fa_tests *t)
{
    const fa_run_options options = {.seed = SEED};
    fa_result result = {0};
    flash_battery_check(ref_attention_validate, &options, &result);
    FA_EXPECT(t, result.outcome == FA_OUTCOME_PASSED && result.cases >= 90,
              "the reference passes M24's battery: %s (%d cases)", result.detail, result.cases);
    static const struct {
        const char *what, *first_failure;
        flash_validator validate;
    } wrong[] = {
        {"accepts everything", "validate 'params NULL'", accept_everything},
        {"always chooses v1", "validate 'valid bf16 d 64 [B,N,H,D]'", always_v1},
        {"does not name the field", "validate 'params NULL'", silent_refusals},
        {"ignores q's and o's strides", "validate 'q_strides.row -1'", no_stride_checks},
    };
    for (int w = 0; w < FA_COUNT_OF(wrong); ++w) {
        result = (fa_result){0};
        flash_battery_check(wrong[w].validate, &options, &result);
        FA_EXPECT(t, result.outcome == FA_OUTCOME_FAILED &&
                         strcmp(result.failed_case, wrong[w].first_failure) == 0,
                  "a validator that %s must fail M24 at %s: %s: %s", wrong[w].what,
                  wrong[w].first_failure, fa_outcome_name(result.outcome), result.detail);
    }
    const fa_run_options one = {.seed = SEED, .case_name = "validate 'scale NaN'"};
    result = (fa_result){0};
    flash_battery_check(ref_attention_validate, &one, &result);
    FA_EXPECT(t, result.outcome == FA_OUTCOME_PASSED && result.cases == 1,
              "--case runs one call of the battery: %s, %d cases", result.detail, result.cases);
}

/* ---- CPU: the library's host API ---------------------------------------------------------- */

/** A valid call of fake addresses (never dereferenced) in [B,N,H,D]. */
static fa_attention_params fake_call(fa_dtype dtype, int64_t head_dim)
{
    fa_attention_params p = {0};
    p.q = (const void *)((uintptr_t)1 << 36);
    p.k = (const void *)((uintptr_t)2 << 36);
    p.v = (const void *)((uintptr_t)3 << 36);
    p.o = (void *)((uintptr_t)4 << 36);
    p.lse = (float *)((uintptr_t)5 << 36);
    p.dtype = dtype;
    p.batch = 2;
    p.heads_q = 4;
    p.heads_kv = 2;
    p.nq = 33;
    p.nk = 70;
    p.head_dim = head_dim;
    p.q_strides = p.o_strides = fa_attention_strides_bnhd(p.nq, p.heads_q, head_dim);
    p.k_strides = p.v_strides = fa_attention_strides_bnhd(p.nk, p.heads_kv, head_dim);
    return p;
}

/**
 * fa_attention_method() declares what each kernel computes: v1 fp32 FMA on
 * CUDA cores, P kept fp32, key tiles of TILE1_BC; v2 tensor cores, P rounded
 * to the input dtype before P V (l from the unrounded P), key tiles of
 * flash2_bc() by head dimension (128 up to d_pad 64, else 64); both exp2
 * with the scale folded in and a reciprocal; o in its dtype. The AUTO cases
 * are ones version 3 refuses, so that they hold on every device (v3's
 * method: test_hopper()).
 */
static void test_methods(fa_tests *t)
{
    static const struct {
        fa_dtype dtype;
        int64_t head_dim;
        bool o_fp32;
        fa_variant variant;
        bool tensor_cores;
        int64_t block_n;
    } cases[] = {
        {FA_BF16, 64, false, FA_VARIANT_TENSOR_CORES, true, 128},
        {FA_BF16, 64, true, FA_VARIANT_AUTO, true, 128},
        {FA_F16, 128, false, FA_VARIANT_TENSOR_CORES, true, 64},
        {FA_BF16, 256, true, FA_VARIANT_AUTO, true, 64},
        {FA_F16, 40, true, FA_VARIANT_AUTO, true, 128},
        {FA_BF16, 8, false, FA_VARIANT_TENSOR_CORES, true, 128},
        {FA_BF16, 144, true, FA_VARIANT_AUTO, true, 64},
        {FA_BF16, 136, false, FA_VARIANT_TENSOR_CORES, true, 64},
        {FA_F32, 64, false, FA_VARIANT_AUTO, false, TILE1_BC},
        {FA_F32, 256, true, FA_VARIANT_CUDA_CORES, false, TILE1_BC},
        {FA_BF16, 64, false, FA_VARIANT_CUDA_CORES, false, TILE1_BC},
        {FA_F16, 59, true, FA_VARIANT_AUTO, false, TILE1_BC},
    };
    for (int c = 0; c < FA_COUNT_OF(cases); ++c) {
        fa_attention_params p = fake_call(cases[c].dtype, cases[c].head_dim);
        p.o_fp32 = cases[c].o_fp32;
        p.variant = cases[c].variant;
        fa_attn_method m;
        if (!FA_EXPECT(t, fa_attention_method(&p, &m) == FA_OK, "method %d: %s", c, fa_last_error()))
            continue;
        const bool tc = cases[c].tensor_cores;
        FA_EXPECT(t, m.input_dtype == cases[c].dtype &&
                         m.accumulation == (tc ? FA_ACCUM_TENSOR_CORE : FA_ACCUM_FP32) &&
                         m.block_n == cases[c].block_n &&
                         m.p_dtype == (tc ? cases[c].dtype : FA_F32) && !m.l_from_rounded_p &&
                         m.exp_method == FA_EXP_EXP2_PRESCALED &&
                         m.normalisation == FA_NORM_RECIPROCAL &&
                         m.output_dtype == (cases[c].o_fp32 ? FA_F32 : cases[c].dtype),
                  "method %d (%s d %lld, %s): accumulation %d, block_n %lld, P %s, output %s", c,
                  fa_dtype_name(cases[c].dtype), (long long)cases[c].head_dim,
                  fa_attention_variant_name(cases[c].variant), (int)m.accumulation,
                  (long long)m.block_n, fa_dtype_name(m.p_dtype), fa_dtype_name(m.output_dtype));
    }
    fa_attention_params bad = fake_call(FA_BF16, 64);
    bad.scale = NAN;
    fa_attn_method m;
    FA_EXPECT_STATUS(t, fa_attention_method(&bad, &m), FA_ERR_INVALID_ARGUMENT, "scale",
                     "fa_attention_method of a NaN scale");
    bad = fake_call(FA_F32, 64);
    bad.variant = FA_VARIANT_TENSOR_CORES;
    FA_EXPECT_STATUS(t, fa_attention_method(&bad, &m), FA_ERR_UNSUPPORTED, "dtype fp32",
                     "fa_attention_method of v2 on fp32");
}

/** The strides helpers address element (b, n, h, d) where fa_view_bnhd() / fa_view_bhnd() do. */
static void test_strides(fa_tests *t)
{
    enum { B = 2, N = 5, H = 3, D = 8 };
    const fa_strides bnhd = fa_attention_strides_bnhd(N, H, D);
    const fa_strides bhnd = fa_attention_strides_bhnd(N, H, D);
    FA_EXPECT(t, bnhd.batch == N * H * D && bnhd.row == H * D && bnhd.head == D,
              "bnhd strides {%lld, %lld, %lld}", (long long)bnhd.batch, (long long)bnhd.row,
              (long long)bnhd.head);
    FA_EXPECT(t, bhnd.batch == H * N * D && bhnd.row == D && bhnd.head == N * D,
              "bhnd strides {%lld, %lld, %lld}", (long long)bhnd.batch, (long long)bhnd.row,
              (long long)bhnd.head);
    const fa_tensor_view vn = fa_view_bnhd(NULL, FA_F32, H, N, D);
    const fa_tensor_view vh = fa_view_bhnd(NULL, FA_F32, H, N, D);
    int64_t wrong = 0;
    for (int64_t b = 0; b < B; ++b)
        for (int64_t n = 0; n < N; ++n)
            for (int64_t h = 0; h < H; ++h) {
                wrong += b * bnhd.batch + n * bnhd.row + h * bnhd.head !=
                         b * vn.stride_batch + n * vn.stride_row + h * vn.stride_head;
                wrong += b * bhnd.batch + n * bhnd.row + h * bhnd.head !=
                         b * vh.stride_batch + n * vh.stride_row + h * vh.stride_head;
            }
    FA_EXPECT(t, wrong == 0, "%lld rows addressed differently from the reference's views",
              (long long)wrong);
}

/** scale 0 (or -0) means 1 / sqrt(head_dim) in fp32; any other scale is kept as given. */
static void test_scale(fa_tests *t)
{
    fa_attention_params p = fake_call(FA_BF16, 64);
    FA_EXPECT(t, fa_attention_scale(&p) == 0.125f, "d 64: %a", (double)fa_attention_scale(&p));
    p.head_dim = 2;
    FA_EXPECT(t, fa_attention_scale(&p) == 1.0f / sqrtf(2.0f), "d 2: %a",
              (double)fa_attention_scale(&p));
    p.head_dim = 40;
    p.scale = -0.0f;
    FA_EXPECT(t, fa_attention_scale(&p) == 1.0f / sqrtf(40.0f), "scale -0, d 40: %a",
              (double)fa_attention_scale(&p));
    p.scale = 0.3f;
    FA_EXPECT(t, fa_attention_scale(&p) == 0.3f, "scale 0.3: %a", (double)fa_attention_scale(&p));
}

static void test_variant_names(fa_tests *t)
{
    FA_EXPECT(t, strcmp(fa_attention_variant_name(FA_VARIANT_AUTO), "auto") == 0, "auto");
    FA_EXPECT(t, strcmp(fa_attention_variant_name(FA_VARIANT_CUDA_CORES), "v1 CUDA cores") == 0,
              "v1: %s", fa_attention_variant_name(FA_VARIANT_CUDA_CORES));
    FA_EXPECT(t, strcmp(fa_attention_variant_name(FA_VARIANT_TENSOR_CORES), "v2 tensor cores") == 0,
              "v2: %s", fa_attention_variant_name(FA_VARIANT_TENSOR_CORES));
    FA_EXPECT(t, strcmp(fa_attention_variant_name(FA_VARIANT_HOPPER), "v3 Hopper") == 0, "v3: %s",
              fa_attention_variant_name(FA_VARIANT_HOPPER));
    FA_EXPECT(t, strcmp(fa_attention_variant_name((fa_variant)7), "unknown") == 0, "7: %s",
              fa_attention_variant_name((fa_variant)7));
}

/** One call asked of version 3, refused with @p status naming @p needle. */
static void expect_hopper_refusal(fa_tests *t, fa_attention_params p, fa_status status,
                                  const char *needle, const char *what)
{
    p.variant = FA_VARIANT_HOPPER;
    FA_EXPECT_STATUS(t, fa_attention_supported(&p, NULL), status, needle, "%s", what);
}

/**
 * Version 3 asked for a call it cannot take: refused, naming why, wherever
 * the test runs (every reason but the device is the call's own). An empty
 * call is a no-op it accepts.
 */
static void test_hopper_refusals(fa_tests *t)
{
    const fa_status UNSUPPORTED = FA_ERR_UNSUPPORTED;
    fa_attention_params p = fake_call(FA_BF16, 60);
    expect_hopper_refusal(t, p, UNSUPPORTED, "v3 Hopper needs what v2 needs: fa_attention: "
                          "variant v2 tensor cores cannot run this call: head_dim = 60", "d 60");
    p = fake_call(FA_BF16, 264);
    expect_hopper_refusal(t, p, UNSUPPORTED, "head_dim = 264, expected 1..256", "d 264");
    p = fake_call(FA_BF16, 64);
    p.o_fp32 = true;
    expect_hopper_refusal(t, p, UNSUPPORTED, "o_fp32 (v3 writes o in the input dtype)", "fp32 o");
    p = fake_call(FA_BF16, 64);
    p.nk = 0;
    expect_hopper_refusal(t, p, UNSUPPORTED, "nq = 33, nk = 0 (v3 takes 1 to", "no key");
    p = fake_call(FA_BF16, 64);
    p.k_strides.head = 0;
    expect_hopper_refusal(t, p, UNSUPPORTED, "k_strides.head = 0 (v3's tensor maps", "a stride 0");
    p = fake_call(FA_F32, 64);
    expect_hopper_refusal(t, p, UNSUPPORTED, "v3 Hopper needs what v2 needs: fa_attention: "
                          "variant v2 tensor cores cannot run this call: dtype fp32", "fp32");
    p = fake_call(FA_BF16, 64);
    p.o = (char *)p.o + 2;
    expect_hopper_refusal(t, p, FA_ERR_MISALIGNED, "o is not 16-byte aligned", "o misaligned");
    p = fake_call(FA_BF16, 64);
    p.variant = (fa_variant)4;
    FA_EXPECT_STATUS(t, fa_attention_supported(&p, NULL), FA_ERR_INVALID_ARGUMENT,
                     "FA_VARIANT_TENSOR_CORES or FA_VARIANT_HOPPER", "variant 4");
    p = fake_call(FA_BF16, 64);
    p.o_fp32 = true;
    p.nq = 0;
    p.variant = FA_VARIANT_HOPPER;
    fa_variant chosen = FA_VARIANT_AUTO;
    FA_EXPECT(t, fa_attention_supported(&p, &chosen) == FA_OK && chosen == FA_VARIANT_HOPPER,
              "an empty call asked of v3 (fp32 o) is a no-op: %s", fa_last_error());
}

/**
 * FA_VARIANT_AUTO takes version 3 for a call it runs where the device runs
 * it (asked by name, it is accepted), from head dim FLASH3_AUTO_MIN_D up,
 * else version 2; a call version 3 refuses, or one of a smaller head dim,
 * goes to version 2 everywhere.
 */
static void test_auto_choice(fa_tests *t)
{
    fa_attention_params p = fake_call(FA_BF16, 128);
    p.variant = FA_VARIANT_HOPPER;
    const bool v3_here = fa_attention_supported(&p, NULL) == FA_OK;
    const fa_variant expected = v3_here ? FA_VARIANT_HOPPER : FA_VARIANT_TENSOR_CORES;
    fa_variant chosen = FA_VARIANT_AUTO;
    p.variant = FA_VARIANT_AUTO;
    FA_EXPECT(t, fa_attention_supported(&p, &chosen) == FA_OK && chosen == expected &&
                     fa_last_error()[0] == '\0',
              "auto, d 128 (v3 %s here): chose %s, expected %s; error \"%s\"",
              v3_here ? "runs" : "does not run", fa_attention_variant_name(chosen),
              fa_attention_variant_name(expected), fa_last_error());
    p.o_fp32 = true;
    FA_EXPECT(t, fa_attention_supported(&p, &chosen) == FA_OK && chosen == FA_VARIANT_TENSOR_CORES,
              "auto, fp32 o (v3 refuses it): chose %s", fa_attention_variant_name(chosen));
    static const int64_t V3_DIMS[] = {FLASH3_AUTO_MIN_D, 96, 136, 256};
    for (int i = 0; i < FA_COUNT_OF(V3_DIMS); ++i) {
        p = fake_call(FA_BF16, V3_DIMS[i]);
        FA_EXPECT(t, fa_attention_supported(&p, &chosen) == FA_OK && chosen == expected,
                  "auto, d %lld: chose %s, expected %s", (long long)V3_DIMS[i],
                  fa_attention_variant_name(chosen), fa_attention_variant_name(expected));
    }
    p = fake_call(FA_BF16, FLASH3_AUTO_MIN_D - 8);
    FA_EXPECT(t, fa_attention_supported(&p, &chosen) == FA_OK && chosen == FA_VARIANT_TENSOR_CORES,
              "auto, d %d (below FLASH3_AUTO_MIN_D): chose %s", FLASH3_AUTO_MIN_D - 8,
              fa_attention_variant_name(chosen));
    p.variant = FA_VARIANT_HOPPER;
    FA_EXPECT(t, (fa_attention_supported(&p, NULL) == FA_OK) == v3_here,
              "v3 by name, d %d, accepted as at d 128: %s", FLASH3_AUTO_MIN_D - 8, fa_last_error());
}

/* ---- CPU: fixtures and the judge ------------------------------------------------------------- */

/**
 * Writes what a correct kernel would: the reference of @p call under
 * @p method, rounded to o's dtype, into o's span through its strides, and
 * into lse.
 */
static fa_status write_reference(const flash_call *call, const fa_attn_method *method)
{
    const fa_attention_params *p = &call->params;
    fa_attn_reference ref = {0};
    FA_TRY(fa_attention_reference(&call->problem, method, &ref));
    const fa_dtype out = flash_o_dtype(p);
    for (int64_t b = 0; b < p->batch; ++b)
        for (int64_t h = 0; h < p->heads_q; ++h)
            for (int64_t r = 0; r < p->nq; ++r) {
                const int64_t row = (b * p->heads_q + h) * p->nq + r;
                const int64_t at =
                    b * p->o_strides.batch + h * p->o_strides.head + r * p->o_strides.row;
                for (int64_t d = 0; d < p->head_dim; ++d)
                    fa_store(p->o, out, at + d, (float)ref.o[row * p->head_dim + d]);
                if (p->lse != NULL)
                    p->lse[row] = (float)ref.lse[row];
            }
    fa_attn_reference_free(&ref);
    return FA_OK;
}

/**
 * c = fp32(ln 2) fp32(log2 e) is 1 exactly; the hand values of every fixture
 * are the reference's (which uses fp32(ln 2), not ln 2: its weights differ
 * from the hand powers of two by about 1e-8), in both versions' tile sizes
 * and every dtype; and the judge accepts them as a kernel's output.
 */
static void test_fixtures(fa_tests *t)
{
    volatile float scale = FA_LN2_F, log2e = FA_LOG2E_F;
    FA_EXPECT(t, scale * log2e == 1.0f, "fp32(ln 2) * FA_LOG2E_F must round to 1, got %a",
              (double)(scale * log2e));
    static const fa_dtype dtypes[] = {FA_F32, FA_BF16, FA_F16};
    for (int f = 0; f < flash_fixture_count; ++f)
        for (int version = 1; version <= 2; ++version)
            for (int d = 0; d < FA_COUNT_OF(dtypes); ++d) {
                if (version == 2 && dtypes[d] == FA_F32)
                    continue;
                const char *name = flash_fixture_name(f);
                flash_fixture x;
                const fa_status made = flash_fixture_make(f, flash_block_n(version, 8), dtypes[d], &x);
                if (!FA_EXPECT(t, made == FA_OK, "fixture '%s': %s", name, fa_last_error()))
                    continue;
                fa_attn_method method;
                flash_fixture_verdict v;
                if (FA_EXPECT(t, flash_method(&x.c.call, version, &method) == FA_OK &&
                                     flash_fixture_verify(&x, &method, 1e-6, &v) == FA_OK,
                              "v%d fixture '%s' %s: %s", version, name, fa_dtype_name(dtypes[d]),
                              fa_last_error()))
                    FA_EXPECT(t, v.differing == 0 && v.written.covered,
                              "v%d fixture '%s' %s: %lld hand values differ from the reference; "
                              "written as a kernel's, covered %d (o worst %.3g, lse worst %.3g)",
                              version, name, fa_dtype_name(dtypes[d]), (long long)v.differing,
                              v.written.covered, v.written.o.worst_ratio, v.written.lse.worst_ratio);
                flash_fixture_free(&x);
            }
}

/** Row 0's largest score (head 0) among keys [key0, key0 + n) of @p c. */
static double tile_max_score(const fa_attn_case *c, int64_t key0, int64_t n)
{
    double best = -INFINITY;
    for (int64_t j = key0; j < key0 + n && j < c->shape.nk; ++j) {
        double dot = 0.0;
        for (int64_t d = 0; d < c->shape.head_dim; ++d)
            dot += fa_case_get(c, FA_CASE_Q, 0, 0, 0, d) * fa_case_get(c, FA_CASE_K, 0, 0, j, d);
        best = fmax(best, c->problem.scale * dot);
    }
    return best;
}

/**
 * The late-max and rising patterns of flash_case_random() act in the order
 * a version walks its key tiles (flash_keys_from_last()): walked so, the max
 * of row 0 rises at every tile of a rising case, and a late-max case holds
 * it in the tile walked last. Placed by key index only, version 2, which
 * walks from the last, would see no rise at all.
 */
static void test_walk_patterns(fa_tests *t)
{
    for (int version = 1; version <= 2; ++version)
        for (flash_scores kind = FLASH_SCORES_LATE_MAX; kind <= FLASH_SCORES_RISING; ++kind) {
            /* A partial last tile; spread 0.1, far below the patterns' steps of 1 and 4. */
            const flash_spec s = {1, 1, 1, 4, 391, 64, FA_BF16, FLASH_BNHD, false, false, true,
                                  0.0f, kind, 0.1, FA_MASK_NONE, 0, 0};
            fa_rng rng;
            fa_rng_seed(&rng, SEED, 60 + (uint64_t)(version * 2 + kind));
            flash_case c;
            if (!FA_EXPECT(t, flash_case_random(&c, &s, version, &rng) == FA_OK, "walk case: %s",
                           fa_last_error()))
                continue;
            const int64_t bc = flash_block_n(version, s.head_dim), tiles = fa_ceil_div(s.nk, bc);
            int64_t rises = 0, late = -1;
            double running = -INFINITY, best = -INFINITY;
            for (int64_t step = 0; step < tiles; ++step) {
                const int64_t tile = flash_keys_from_last(version) ? tiles - 1 - step : step;
                const double m = tile_max_score(&c.inputs, tile * bc, bc);
                rises += step > 0 && m > running;
                running = fmax(running, m);
                if (m > best) {
                    best = m;
                    late = step;
                }
            }
            if (kind == FLASH_SCORES_RISING)
                FA_EXPECT(t, rises == tiles - 1, "v%d rising case: the max rises at %lld of %lld tiles",
                          version, (long long)rises, (long long)(tiles - 1));
            else
                FA_EXPECT(t, late == tiles - 1, "v%d late-max case: the max in walk step %lld of %lld",
                          version, (long long)late, (long long)tiles);
            flash_case_free(&c);
        }
}

/**
 * flash_spec_refusal(): every case of the grids of versions 1 and 2 passes
 * it, so a check never refuses one of its own, and it refuses what no
 * version takes: a head dimension of 257, a window with a side below -1,
 * query heads that are not a multiple of the key heads.
 */
static void test_spec_refusal(fa_tests *t)
{
    for (int version = 1; version <= 2; ++version)
        for (int i = 0; i < flash_grid_count(version, false); ++i) {
            const flash_spec s = flash_grid_spec(version, false, i);
            FA_EXPECT(t, flash_spec_refusal(&s, version) == FA_OK, "v%d grid %d refused: %s",
                      version, i, fa_last_error());
        }
    const flash_spec v1 = flash_grid_spec(1, false, 0);
    flash_spec d257 = v1, window = v1, heads = v1;
    d257.head_dim = 257;
    window.mask = FA_MASK_WINDOW;
    window.window_left = -2;
    heads.heads_q = 3;
    heads.heads_kv = 2;
    for (int version = 1; version <= 2; ++version) {
        FA_EXPECT(t, flash_spec_refusal(&d257, version) != FA_OK, "v%d took d = 257", version);
        FA_EXPECT(t, flash_spec_refusal(&window, version) != FA_OK,
                  "v%d took a window side of -2", version);
        FA_EXPECT(t, flash_spec_refusal(&heads, version) != FA_OK, "v%d took 3 query heads over 2",
                  version);
    }
}

/**
 * Version 3's work items: every query tile of a batch entry and head exactly
 * once, and under a causal mask (square, as many keys per tile as rows) every
 * item of two tiles sees q_tiles + 1 key tiles, the middle one of an odd
 * count half as many: the balance a persistent grid relies on. And its grid's
 * size.
 */
static void test_v3_items(fa_tests *t)
{
    enum { MOST_TILES = 9 };
    for (int q_tiles = 1; q_tiles <= MOST_TILES; ++q_tiles) {
        int seen[MOST_TILES] = {0};
        for (int pair = 0; pair < flash3_pairs(q_tiles); ++pair) {
            int keys = 0, tiles = 0;
            for (int end = 0; end < 2; ++end) {
                const int tile = flash3_item_tile(q_tiles, pair, end);
                if (tile < 0)
                    continue;
                FA_EXPECT(t, tile < q_tiles, "%d tiles: item %d names tile %d", q_tiles, pair, tile);
                if (tile < q_tiles)
                    ++seen[tile];
                keys += tile + 1;
                ++tiles;
            }
            FA_EXPECT(t, tiles == 2 ? keys == q_tiles + 1 : tiles == 1 && 2 * keys == q_tiles + 1,
                      "%d tiles: item %d has %d tiles seeing %d key tiles", q_tiles, pair, tiles,
                      keys);
        }
        for (int tile = 0; tile < q_tiles; ++tile)
            FA_EXPECT(t, seen[tile] == 1, "%d tiles: tile %d in %d items", q_tiles, tile, seen[tile]);
    }
    FA_EXPECT(t, flash3_items(3, 5, 7) == 3 * 5 * 4, "3 x 5 heads of 7 tiles: %lld items",
              (long long)flash3_items(3, 5, 7));
    /* The grid: a block per SM, the tests' limit below that, never more blocks than items, and
     * where the tile count is odd a count prime to the pairs. */
    static const struct {
        int64_t items;
        int q_tiles, sms, limit;
        int64_t blocks;
    } grids[] = {{1000, 4, 132, 0, 132}, {100, 4, 132, 0, 100},   {1000, 4, 132, 3, 3},
                 {2, 4, 132, 3, 2},      {1000, 4, 132, 500, 132}, {1000, 4, 132, -1, 132},
                 {1000, 3, 132, 0, 131}, {1000, 11, 132, 0, 131},  {1000, 9, 132, 0, 132},
                 {1000, 3, 132, 3, 3},   {1000, 5, 132, 3, 2},     {100, 3, 132, 0, 100}};
    for (int i = 0; i < FA_COUNT_OF(grids); ++i) {
        const int64_t blocks = flash3_grid_blocks(grids[i].items, grids[i].q_tiles, grids[i].sms,
                                                  grids[i].limit);
        FA_EXPECT(t, blocks == grids[i].blocks,
                  "%lld items of %d tiles a head on %d SMs, limit %d: %lld blocks, want %lld",
                  (long long)grids[i].items, grids[i].q_tiles, grids[i].sms, grids[i].limit,
                  (long long)blocks, (long long)grids[i].blocks);
    }
    /* Dealt round robin, the items give every block about as many query tiles: within one item
     * of two tiles and one of one, whatever the count of tiles a head. */
    for (int q_tiles = 1; q_tiles <= 44; ++q_tiles) {
        enum { SMS = 132 };
        const int64_t items = flash3_items(8, 16, q_tiles);
        const int64_t blocks = flash3_grid_blocks(items, q_tiles, SMS, 0);
        int64_t tiles[SMS] = {0};
        for (int64_t item = 0; item < items; ++item) {
            const int pair = (int)(item % flash3_pairs(q_tiles));
            tiles[item % blocks] += flash3_item_tile(q_tiles, pair, 1) < 0 ? 1 : 2;
        }
        int64_t least = tiles[0], most = tiles[0];
        for (int64_t b = 1; b < blocks; ++b) {
            least = tiles[b] < least ? tiles[b] : least;
            most = tiles[b] > most ? tiles[b] : most;
        }
        FA_EXPECT(t, most - least <= 3,
                  "%d tiles a head, 128 heads, %lld blocks: %lld to %lld tiles a block", q_tiles,
                  (long long)blocks, (long long)least, (long long)most);
    }
}

/**
 * Version 3's consumers: three at D = 64 (d up to 64) without a mask, and
 * under a causal mask from FLASH3_CAUSAL_THREE_ROWS query rows on; two below
 * that, under a window whatever the rows, and from D = 128 (d from 72).
 */
static void test_v3_consumers(fa_tests *t)
{
    enum { EDGE = FLASH3_CAUSAL_THREE_ROWS };
    static const struct {
        int d;
        fa_mask mask;
        int64_t rows;
        int consumers;
    } cases[] = {{64, FA_MASK_NONE, 1, 3},
                 {64, FA_MASK_NONE, 1 << 20, 3},
                 {8, FA_MASK_NONE, 1, 3},
                 {32, FA_MASK_CAUSAL_TOP_LEFT, EDGE, 3},
                 {40, FA_MASK_CAUSAL_BOTTOM_RIGHT, EDGE - 1, 2},
                 {72, FA_MASK_NONE, 1, 2},
                 {96, FA_MASK_CAUSAL_TOP_LEFT, 1 << 20, 2},
                 {64, FA_MASK_CAUSAL_TOP_LEFT, EDGE - 1, 2},
                 {64, FA_MASK_CAUSAL_TOP_LEFT, EDGE, 3},
                 {64, FA_MASK_CAUSAL_BOTTOM_RIGHT, EDGE - 1, 2},
                 {64, FA_MASK_CAUSAL_BOTTOM_RIGHT, EDGE, 3},
                 {64, FA_MASK_WINDOW, 1 << 20, 2},
                 {128, FA_MASK_NONE, 1 << 20, 2},
                 {128, FA_MASK_CAUSAL_TOP_LEFT, 1 << 20, 2},
                 {136, FA_MASK_NONE, 1 << 20, 2},
                 {256, FA_MASK_CAUSAL_BOTTOM_RIGHT, 1 << 20, 2}};
    for (int i = 0; i < FA_COUNT_OF(cases); ++i) {
        const int consumers = flash3_consumers(cases[i].d, cases[i].mask, cases[i].rows);
        FA_EXPECT(t, consumers == cases[i].consumers, "d = %d, mask %d, %lld rows: %d consumers, want %d",
                  cases[i].d, (int)cases[i].mask, (long long)cases[i].rows, consumers,
                  cases[i].consumers);
    }
}

/**
 * Version 3's tiles for each row width D: keys of 128 up to D = 128, then 64,
 * as the method declares them for every d of D; two Q buffers up to D = 192,
 * then one; K/V rings of at least two stages; all of it within a block's
 * shared memory.
 */
static void test_v3_tiles(fa_tests *t)
{
    static const struct {
        int d_pad, consumers, bc, q_buffers, stages;
    } cases[] = {{64, 3, 128, 2, 5}, {64, 2, 128, 2, 6}, {128, 2, 128, 2, 2},
                 {192, 2, 64, 2, 2}, {256, 2, 64, 1, 2}};
    for (int i = 0; i < FA_COUNT_OF(cases); ++i) {
        const int d = cases[i].d_pad, c = cases[i].consumers;
        const size_t bytes = flash3_shared_bytes(d, c);
        FA_EXPECT(t, flash3_bc(d) == cases[i].bc && flash3_q_buffers(d, c) == cases[i].q_buffers &&
                         flash3_stages(d, c) == cases[i].stages && bytes <= FLASH3_SHARED_LIMIT,
                  "D = %d, %d consumers: keys %d, %d Q buffers, %d stages, %zu bytes", d, c,
                  flash3_bc(d), flash3_q_buffers(d, c), flash3_stages(d, c), bytes);
        /* The method declares the keys of the rows d is padded to, from the narrowest d of D. */
        FA_EXPECT(t, flash_block_n(3, d) == cases[i].bc && flash_block_n(3, d - 56) == cases[i].bc,
                  "D = %d: block_n %lld, at d = %d %lld", d, (long long)flash_block_n(3, d), d - 56,
                  (long long)flash_block_n(3, d - 56));
    }
}

/**
 * The grid of each version: every (shape, head dimension) pair once in the
 * full run; every shape and every head dimension meets both layouts; every
 * head dimension every dtype of the version; every kind of heads, o dtype
 * (version 3: the input's alone), lse or not, padding, score pattern and an
 * explicit scale appear; names are unique. --quick is a small subset of the
 * small shapes.
 */
static void test_grid(fa_tests *t)
{
    for (int version = 1; version <= 3; ++version) {
        const int count = flash_grid_count(version, false);
        const int dims = version == 1 ? 11 : 8;
        FA_EXPECT(t, count == 16 * dims, "v%d: %d grid cases, expected %d", version, count,
                  16 * dims);
        bool seen_pair[16][11] = {{false}};
        unsigned shape_layouts[16] = {0}, dim_layouts[11] = {0}, dim_dtypes[11] = {0};
        unsigned heads = 0, o32 = 0, lse = 0, padded = 0, scores = 0;
        int explicit_scale = 0;
        int64_t shapes_nq[16] = {0}, shapes_nk[16] = {0}, dims_d[11] = {0};
        int shapes = 0, dim_count = 0;
        for (int i = 0; i < count; ++i) {
            const flash_spec s = flash_grid_spec(version, false, i);
            int si = 0, di = 0;
            while (si < shapes && !(shapes_nq[si] == s.nq && shapes_nk[si] == s.nk))
                ++si;
            if (si == shapes && shapes < 16) {
                shapes_nq[shapes] = s.nq;
                shapes_nk[shapes++] = s.nk;
            }
            while (di < dim_count && dims_d[di] != s.head_dim)
                ++di;
            if (di == dim_count && dim_count < 11)
                dims_d[dim_count++] = s.head_dim;
            if (si >= 16 || di >= 11)
                continue;
            FA_EXPECT(t, !seen_pair[si][di], "v%d: pair nq %lld nk %lld d %lld twice", version,
                      (long long)s.nq, (long long)s.nk, (long long)s.head_dim);
            seen_pair[si][di] = true;
            shape_layouts[si] |= 1u << s.layout;
            dim_layouts[di] |= 1u << s.layout;
            dim_dtypes[di] |= 1u << s.dtype;
            heads |= 1u << (s.heads_q == s.heads_kv ? 0 : s.heads_kv == 1 ? 1 : 2);
            o32 |= 1u << s.o_fp32;
            lse |= 1u << s.lse;
            padded |= 1u << s.padded;
            scores |= 1u << s.scores;
            explicit_scale += s.scale != 0.0f;
            FA_EXPECT(t, version == 1 || s.head_dim % 8 == 0, "v%d d %lld", version,
                      (long long)s.head_dim);
        }
        FA_EXPECT(t, shapes == 16 && dim_count == dims, "v%d: %d shapes, %d head dimensions",
                  version, shapes, dim_count);
        int missing = 0;
        for (int si = 0; si < shapes; ++si)
            missing += shape_layouts[si] != 3u;
        for (int di = 0; di < dim_count; ++di)
            missing += dim_layouts[di] != 3u || dim_dtypes[di] != (version == 1 ? 7u : 6u);
        FA_EXPECT(t, missing == 0, "v%d: %d shapes or head dimensions miss a layout or a dtype",
                  version, missing);
        FA_EXPECT(t, heads == 7u && o32 == (version == 3 ? 1u : 3u) && lse == 3u && padded == 3u &&
                         scores == (1u << FLASH_SCORE_KINDS) - 1 && explicit_scale > 0,
                  "v%d: heads %x, o fp32 %x, lse %x, padded %x, scores %x, explicit scales %d",
                  version, heads, o32, lse, padded, scores, explicit_scale);

        const int quick = flash_grid_count(version, true);
        FA_EXPECT(t, quick >= 10 && quick <= count / 4, "v%d: %d quick cases", version, quick);
        int big = 0;
        for (int i = 0; i < quick; ++i) {
            const flash_spec s = flash_grid_spec(version, true, i);
            big += s.nq * s.nk > FLASH_QUICK_MAX_PAIRS;
        }
        FA_EXPECT(t, big == 0, "v%d: %d quick cases of a large shape", version, big);
    }
}

/** Judges @p call's current outputs; true when covered (@p verdict filled). */
static bool judged(const flash_call *call, const fa_attn_method *m, const int64_t *rows,
                   int64_t count, flash_verdict *verdict)
{
    return flash_judge(call, m, rows, count, verdict) == FA_OK && verdict->covered;
}

/**
 * On the CPU, the judge accepts the reference's own output (rounded to o's
 * dtype, written through o's strides) for cases of every storage, and
 * rejects planted mistakes, naming where: an element far off, an element
 * never written, a byte written into a gap of o, an lse off; and on a
 * sampled call, the coordinate is the call's row.
 */
static void test_judge(fa_tests *t)
{
    static const struct {
        int version;
        flash_spec spec;
    } cases[] = {
        {2, {2, 4, 2, 70, 45, 40, FA_BF16, FLASH_BHND, true, false, true, 0.0f,
             FLASH_SCORES_ROW_BIAS, 1.0, FA_MASK_NONE, 0, 0}},
        {2, {1, 3, 1, 33, 130, 64, FA_F16, FLASH_BNHD, false, true, false, 0.0f,
             FLASH_SCORES_LATE_MAX, 3.0, FA_MASK_NONE, 0, 0}},
        {1, {2, 2, 2, 20, 10, 2, FA_F32, FLASH_BNHD, false, false, true, 0.3f,
             FLASH_SCORES_SPREAD, 1.0, FA_MASK_NONE, 0, 0}},
        {1, {1, 2, 1, 65, 70, 59, FA_BF16, FLASH_BHND, true, true, true, 0.0f,
             FLASH_SCORES_RISING, 8.0, FA_MASK_NONE, 0, 0}},
    };
    for (int c = 0; c < FA_COUNT_OF(cases); ++c) {
        const flash_spec *s = &cases[c].spec;
        const int version = cases[c].version;
        fa_rng rng;
        fa_rng_seed(&rng, SEED, 10 + (uint64_t)c);
        flash_case fc;
        fa_attn_method m;
        if (!FA_EXPECT(t, flash_case_random(&fc, s, version, &rng) == FA_OK &&
                              flash_method(&fc.call, version, &m) == FA_OK &&
                              write_reference(&fc.call, &m) == FA_OK,
                       "judge case %d: %s", c, fa_last_error()))
            continue;
        fa_attention_params *p = &fc.call.params;
        flash_verdict v;
        FA_EXPECT(t, judged(&fc.call, &m, NULL, 0, &v), "judge case %d: the reference's own output "
                  "is not covered (o worst %.3g, lse worst %.3g, %lld gap bytes)", c,
                  v.o.worst_ratio, v.lse.worst_ratio, (long long)v.gap_bytes);
        const fa_dtype out = flash_o_dtype(p);
        /* Element (batch last, head last, row nq - 1, col 1) far off. */
        const int64_t at = (p->batch - 1) * p->o_strides.batch + (p->heads_q - 1) * p->o_strides.head +
                           (p->nq - 1) * p->o_strides.row + (p->head_dim > 1 ? 1 : 0);
        const float kept = fa_load(p->o, out, at);
        fa_store(p->o, out, at, kept + 4.0f);
        fa_result result = {0};
        char where[96];
        snprintf(where, sizeof where, "o at (batch %lld, head %lld, row %lld, col %d)",
                 (long long)p->batch - 1, (long long)p->heads_q - 1, (long long)p->nq - 1,
                 p->head_dim > 1 ? 1 : 0);
        FA_EXPECT(t, !flash_result_judge(&result, "x", &fc.call, &m, NULL, 0) &&
                         strstr(result.detail, where) != NULL,
                  "judge case %d: an element 4 off must fail at %s: %s", c, where, result.detail);
        fa_store(p->o, out, at, kept);
        /* The same element never written. */
        if (out == FA_F32)
            fa_poison_host((float *)p->o + at, sizeof(float));
        else
            fa_poison_host((uint16_t *)p->o + at, sizeof(uint16_t));
        FA_EXPECT(t, !judged(&fc.call, &m, NULL, 0, &v) && v.o.unwritten == 1,
                  "judge case %d: an unwritten element must be reported (%lld unwritten)", c,
                  (long long)v.o.unwritten);
        fa_store(p->o, out, at, kept);
        if (s->padded) {
            /* A byte in the gap after the first row. */
            unsigned char *gap = (unsigned char *)p->o + p->head_dim * fa_dtype_size(flash_o_dtype(p)) *
                                                             (s->layout == FLASH_BNHD ? p->heads_q : 1);
            *gap = 0;
            result = (fa_result){0};
            FA_EXPECT(t, !flash_result_judge(&result, "x", &fc.call, &m, NULL, 0) &&
                             strstr(result.detail, "between the elements of o") != NULL,
                      "judge case %d: a byte written into a gap of o must fail: %s", c,
                      result.detail);
            *gap = FA_POISON_BYTE;
        }
        if (p->lse != NULL) {
            p->lse[0] += 0.5f;
            result = (fa_result){0};
            FA_EXPECT(t, !flash_result_judge(&result, "x", &fc.call, &m, NULL, 0) &&
                             strstr(result.detail, "lse at (batch 0, head 0, row 0)") != NULL,
                      "judge case %d: lse 0.5 off must fail at its row: %s", c, result.detail);
            p->lse[0] -= 0.5f;
        }
        FA_EXPECT(t, judged(&fc.call, &m, NULL, 0, &v), "judge case %d: restored, covered again", c);
        flash_case_free(&fc);
    }

    /* A sampled call: rows 0..63, 1036..1099 and 3 mod 16 of 1100 rows; a mistake in row 1050
     * (in the sample) is reported at row 1050, one in row 500 (not in it) is not seen. */
    const flash_spec s = {1, 2, 1, 1100, 20, 8, FA_BF16, FLASH_BNHD, false, false, true, 0.0f,
                          FLASH_SCORES_SPREAD, 1.0, FA_MASK_NONE, 0, 0};
    int64_t rows[1100];
    const int64_t count = flash_sample_rows(s.nq, rows);
    FA_EXPECT(t, count == 64 + 64 + 61 && rows[0] == 0 && rows[64] == 67 &&
                     rows[count - 1] == 1099,
              "sample of 1100 rows: %lld rows", (long long)count);
    flash_case fc;
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 20);
    fa_attn_method m;
    if (FA_EXPECT(t, flash_case_random(&fc, &s, 2, &rng) == FA_OK &&
                         flash_method(&fc.call, 2, &m) == FA_OK && write_reference(&fc.call, &m) == FA_OK,
                  "sampled case: %s", fa_last_error())) {
        fa_attention_params *p = &fc.call.params;
        flash_verdict v;
        FA_EXPECT(t, judged(&fc.call, &m, rows, count, &v), "sampled: the reference is covered");
        const int64_t unseen = 500 * p->o_strides.row + p->o_strides.head + 2;
        fa_store(p->o, FA_BF16, unseen, fa_load(p->o, FA_BF16, unseen) + 4.0f);
        FA_EXPECT(t, judged(&fc.call, &m, rows, count, &v), "sampled: row 500 is not in the sample");
        const int64_t seen = 1050 * p->o_strides.row + p->o_strides.head + 2;
        fa_store(p->o, FA_BF16, seen, fa_load(p->o, FA_BF16, seen) + 4.0f);
        fa_result result = {0};
        FA_EXPECT(t, !flash_result_judge(&result, "x", &fc.call, &m, rows, count) &&
                         strstr(result.detail, "o at (batch 0, head 1, row 1050, col 2)") != NULL,
                  "sampled: a mistake in row 1050 is reported there: %s", result.detail);
        flash_case_free(&fc);
    }
}

/* ---- CPU: the driver's flags ------------------------------------------------------------------ */

/**
 * Every bad command line gets the usage exit code, 2, before any GPU work:
 * the parser is plain C, so this holds in builds without CUDA too.
 */
static void test_driver_flags(fa_tests *t)
{
    static const char *const bad[][8] = {
        {"stage06", "--milestone", "23", "--version", "4"},   /* M23 has versions 1 to 3 */
        {"stage06", "--milestone", "24", "--version", "1"},   /* M24 has one version */
        {"stage06", "--version", "1"},                        /* --version needs --milestone */
        {"stage06", "--mask", "causal"},                      /* the masks are stage 07's */
        {"stage06", "--milestone", "22"},                     /* a milestone of stage 05 */
        {"stage06", "--milestone", "25"},                     /* a milestone of stage 07 */
        {"stage06", "--heads-kv", "0"},                       /* heads_kv >= 1 */
        {"stage06", "--d", "0"},                              /* d >= 1 */
        {"stage06", "--nq", "-1"},                            /* sizes are >= 0 */
        {"stage06", "--dtype", "fp64"},
        {"stage06", "--chunk", "4"},                          /* no stage-06 milestone reads it */
        {"stage06", "--rows", "4"},
        {"stage06", "--milestone", "24", "--nq", "5"},        /* M24 reads no problem flags */
        {"stage06", "--nq", "5", "--case", "v1 fixture '2-tile'"}, /* a case or a problem */
        {"stage06", "--bench", "--nq", "64"},
        {"stage06", "--tour", "--d", "64"},
    };
    for (int c = 0; c < FA_COUNT_OF(bad); ++c)
        FA_EXPECT_USAGE_ERROR(t, 6, bad[c]);
    fa_stage_request request;
    static const char *const help[] = {"stage06", "--help", NULL};
    FA_EXPECT(t, fa_stage_parse_words(help, 6, &request) == FA_CLI_HELP,
              "stage06 --help must print the usage and exit 0");
    static const char *const every[] = {"stage06", "--milestone", "23", "--version", "2",
                                        "--batch", "2", "--heads", "8", "--heads-kv", "2",
                                        "--nq", "100", "--nk", "77", "--d", "40", "--dtype",
                                        "fp16", NULL};
    const fa_problem *p = &request.run.problem;
    FA_EXPECT(t, fa_stage_parse_words(every, 6, &request) == FA_CLI_OK && request.milestone == 23 &&
                     request.run.version == 2 && p->batch == 2 && p->heads == 8 &&
                     p->heads_kv == 2 && p->nq == 100 && p->nk == 77 && p->d == 40 &&
                     p->dtype == FA_F16,
              "every problem flag of M23 must parse");
    static const char *const problem[] = {"stage06", "--nq", "100", NULL};
    FA_EXPECT(t, fa_stage_parse_words(problem, 6, &request) == FA_CLI_OK &&
                     request.run.problem.given == FA_PROBLEM_NQ,
              "--nq 100 alone describes M23's problem");
    static const char *const rerun[] = {"stage06", "--milestone", "23", "--case",
                                        "v2 grid 17 nq=128 nk=217 d=96 fp16 bnhd mqa",
                                        "--seed", "7", NULL};
    FA_EXPECT(t, fa_stage_parse_words(rerun, 6, &request) == FA_CLI_OK &&
                     strcmp(request.run.case_name, "v2 grid 17 nq=128 nk=217 d=96 fp16 bnhd mqa") == 0 &&
                     request.run.seed == 7,
              "a rerun line must parse");
}

/* ---- GPU ------------------------------------------------------------------------------------ */

#if FA_HAVE_CUDA

static void test_reference_checks(fa_tests *t)
{
    const fa_run_options options = {.seed = SEED, .quick = false};
    FA_EXPECT_REFERENCE_CHECKS(t, &stage06, &options);
}

/** Runs version @p version of the reference on @p c (poisoned again first); false on an error. */
static bool reference_run(fa_tests *t, int version, flash_case *c, const char *what)
{
    flash_case_poison(c);
    const flash_sizes sizes = flash_sizes_of(&c->call.params);
    int64_t overwritten = 0;
    const fa_status status =
        flash_run_on_host(ref_flash_forward, version, &c->call.params, &sizes, &overwritten);
    return FA_EXPECT(t, status == FA_OK && overwritten == 0, "v%d %s: %s (%lld canary bytes)",
                     version, what, fa_last_error(), (long long)overwritten);
}

/**
 * The method is what makes a verdict: version 2's output, judged by its
 * declared method (tensor cores, P rounded to bf16), is covered; judged as
 * if it ran on CUDA cores with P in fp32 (version 1's accumulation and P:
 * the tensor cores and the bf16 P dropped), it is not. The input that makes
 * the ablation bite: v = 1000 + normal(0, 1) (fa_case_fill_values() with
 * offset 1000) over 64 keys of spread 1, o in fp32 (a bf16 o would round
 * 1000 by 2). Rounding P to bf16 moves sum_j P_j v_j / l by about
 * 1000 x 2^-9 / sqrt(64 / e), 0.2, while the fp32-P bound allows about
 * 1000 x 64 x 2^-24 plus o's own terms, 0.01. Dropping the bf16 P alone
 * is no method the reference models (tensor cores read 16-bit P: an fp32 P
 * would be tf32), and dropping the tensor cores alone cannot bite: where P
 * is rounded, its u_P sum_j P_j |v_j| term is about 2^15 / nk times the
 * accumulation terms that tell the two apart.
 */
static void test_method_ablation(fa_tests *t)
{
    const flash_spec s = {1, 2, 2, 128, 64, 64, FA_BF16, FLASH_BNHD, false, true, true, 0.0f,
                          FLASH_SCORES_SPREAD, 1.0, FA_MASK_NONE, 0, 0};
    fa_rng rng;
    fa_rng_seed(&rng, SEED, 30);
    flash_case c;
    fa_attn_method declared;
    if (!FA_EXPECT(t, flash_case_random(&c, &s, 2, &rng) == FA_OK &&
                          flash_method(&c.call, 2, &declared) == FA_OK,
                   "ablation case: %s", fa_last_error()))
        return;
    fa_case_fill_values(&c.inputs, 1000.0, &rng);
    if (reference_run(t, 2, &c, "ablation case")) {
        flash_verdict v;
        FA_EXPECT(t, judged(&c.call, &declared, NULL, 0, &v),
                  "v2 judged by its declared method must be covered (o worst %.3g)",
                  v.o.worst_ratio);
        fa_attn_method cuda_cores = declared;
        cuda_cores.accumulation = FA_ACCUM_FP32;
        cuda_cores.p_dtype = FA_F32;
        FA_EXPECT(t, flash_judge(&c.call, &cuda_cores, NULL, 0, &v) == FA_OK && !v.covered &&
                         v.o.uncovered > 0,
                  "v2 judged as fp32 FMA with P in fp32 (tensor cores and bf16 P dropped) must "
                  "fail: %s, o worst %.3g, %lld uncovered",
                  fa_last_error(), v.o.worst_ratio, (long long)v.o.uncovered);
        fa_attn_method fp32_p = declared;
        fp32_p.p_dtype = FA_F32;
        FA_EXPECT_STATUS(t, flash_judge(&c.call, &fp32_p, NULL, 0, &v), FA_ERR_UNSUPPORTED, "tf32",
                         "tensor cores with an fp32 P: no method the reference models");
    }
    flash_case_free(&c);
}

/**
 * Version 3, where the device runs it (compute capability 9.0; elsewhere it
 * must be refused for the device and nothing else): the library's choice and
 * method, and the driver's M23 check of version 3 alone, the '2-tile'
 * fixture and its own grid (flash_grid_spec(3, ...)) through
 * fa_attention_forward() with canaries, judged by the method v3 declares
 * (key tiles of flash3_bc()). The learner has no version 3: asked for it,
 * the driver says so.
 */
static void test_hopper(fa_tests *t)
{
    const fa_run_options only_v3 = {.seed = SEED, .version = 3};
    const fa_result learner = fa_stage_check(&stage06, 23, FA_IMPL_LEARNER, &only_v3);
    FA_EXPECT(t, learner.outcome == FA_OUTCOME_ERROR && strstr(learner.detail, "no learner slot"),
              "the learner's version 3: %s: %s", fa_outcome_name(learner.outcome), learner.detail);
    fa_attention_params probe = fake_call(FA_F16, 128);
    probe.variant = FA_VARIANT_HOPPER;
    fa_variant chosen = FA_VARIANT_AUTO;
    if (fa_attention_supported(&probe, &chosen) != FA_OK) {
        FA_EXPECT(t, strstr(fa_last_error(), "compute capability") != NULL,
                  "v3 refused for more than the device: %s", fa_last_error());
        return;
    }
    fa_attn_method m;
    FA_EXPECT(t, chosen == FA_VARIANT_HOPPER && fa_attention_method(&probe, &m) == FA_OK &&
                     m.accumulation == FA_ACCUM_TENSOR_CORE && m.block_n == 128 &&
                     m.p_dtype == FA_F16 && !m.l_from_rounded_p,
              "v3's method: chose %s, block_n %lld, P %s", fa_attention_variant_name(chosen),
              (long long)m.block_n, fa_dtype_name(m.p_dtype));
    probe = fake_call(FA_F16, 256);
    probe.variant = FA_VARIANT_HOPPER;
    FA_EXPECT(t, fa_attention_method(&probe, &m) == FA_OK && m.block_n == 64,
              "v3's method at d 256: block_n %lld (%s)", (long long)m.block_n, fa_last_error());
    const fa_result r = fa_stage_check(&stage06, 23, FA_IMPL_REFERENCE, &only_v3);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_PASSED && r.cases == flash_grid_count(3, false) + 1 &&
                     r.cases == 129,
              "v3's M23 check: %s: %s (%d cases: '2-tile' and the grid's %d, 16 shapes x 8 dims)",
              fa_outcome_name(r.outcome), r.detail, r.cases, flash_grid_count(3, false));
    /* Three blocks: each walks several work items of most cases, Q and the ring reused across
     * them (with a block per SM, the grid's small cases give most blocks one item). */
    flash3_limit_blocks(3);
    const fa_result walked = fa_stage_check(&stage06, 23, FA_IMPL_REFERENCE, &only_v3);
    flash3_limit_blocks(0);
    FA_EXPECT(t, walked.outcome == FA_OUTCOME_PASSED && walked.cases == r.cases,
              "v3's M23 check in three blocks: %s: %s (%d cases)", fa_outcome_name(walked.outcome),
              walked.detail, walked.cases);
}

/** Poisoned elements of o (through its strides) and of lse after a run of @p c. */
static int64_t unwritten(const flash_case *c)
{
    const fa_attention_params *p = &c->call.params;
    const int64_t rows = flash_lse_count(p);
    float *o = fa_new_floats(rows * p->head_dim);
    flash_gather_o(p, NULL, p->nq, o);
    int64_t count = 0;
    for (int64_t i = 0; i < rows * p->head_dim; ++i)
        count += fa_is_poison(o[i]);
    for (int64_t i = 0; p->lse != NULL && i < rows; ++i)
        count += fa_is_poison(p->lse[i]);
    free(o);
    return count;
}

/**
 * At the right sizes nothing is left unwritten and no canary changes; with
 * o or lse one element short (the runner's buffers are the test's to
 * shrink; the kernels are untouched), the canaries catch the last write.
 */
static void test_canaries(fa_tests *t)
{
    const flash_spec s = {2, 4, 2, 70, 100, 64, FA_BF16, FLASH_BNHD, false, false, true, 0.0f,
                          FLASH_SCORES_SPREAD, 1.0, FA_MASK_NONE, 0, 0};
    for (int version = 1; version <= 2; ++version) {
        fa_rng rng;
        fa_rng_seed(&rng, SEED, 40 + (uint64_t)version);
        flash_case c;
        if (!FA_EXPECT(t, flash_case_random(&c, &s, version, &rng) == FA_OK,
                       "canary case: %s", fa_last_error()))
            continue;
        const fa_attention_params *p = &c.call.params;
        if (reference_run(t, version, &c, "canaries at the right size"))
            FA_EXPECT(t, unwritten(&c) == 0, "v%d: %lld outputs unwritten", version,
                      (long long)unwritten(&c));
        for (int shrunk = 0; shrunk < 2; ++shrunk) {
            flash_sizes sizes = flash_sizes_of(p);
            if (shrunk == 0)
                sizes.o_bytes -= fa_dtype_size(flash_o_dtype(p));
            else
                sizes.lse_count -= 1;
            int64_t overwritten = 0;
            flash_case_poison(&c);
            const fa_status status =
                flash_run_on_host(ref_flash_forward, version, p, &sizes, &overwritten);
            FA_EXPECT(t, status == FA_OK && overwritten > 0,
                      "v%d, %s one element short: the canaries must catch the write (%lld "
                      "bytes, %s)",
                      version, shrunk == 0 ? "o" : "lse", (long long)overwritten, fa_last_error());
        }
        flash_case_free(&c);
    }
}

/** Which outputs a NaN in one input reaches (the definition, fa_attention_ref.h). */
typedef enum nan_input { NAN_Q_ROW = 0, NAN_K_KEY, NAN_V_KEY } nan_input;

/**
 * A NaN in one query row reaches exactly that row (o and lse); in one key of
 * k, every row of the query heads reading that key/value head in that batch
 * (o and lse); in one key of v, column c of o on those same rows and nothing
 * else (lse stays finite): every allowed key's row of v reaches o, whatever
 * its weight. Everything else is finite. GQA, both versions.
 */
static void test_nan_propagation(fa_tests *t)
{
    enum { B = 2, HQ = 4, HKV = 2, NQ = 70, NK = 100, D = 64 };
    const flash_spec s = {B, HQ, HKV, NQ, NK, D, FA_BF16, FLASH_BNHD, false, false, true, 0.0f,
                          FLASH_SCORES_SPREAD, 1.0, FA_MASK_NONE, 0, 0};
    static const char *const names[] = {"q row", "k key", "v key"};
    /* q: (batch 1, head 3, row 66, dim 5); k: (batch 0, kv head 1, key 37, dim 9);
     * v: (batch 1, kv head 0, key 80, column 11). */
    for (int version = 1; version <= 2; ++version)
        for (int which = NAN_Q_ROW; which <= NAN_V_KEY; ++which) {
            fa_rng rng;
            fa_rng_seed(&rng, SEED, 50 + (uint64_t)(version * 3 + which));
            flash_case c;
            if (!FA_EXPECT(t, flash_case_random(&c, &s, version, &rng) == FA_OK,
                           "NaN case: %s", fa_last_error()))
                continue;
            if (which == NAN_Q_ROW)
                fa_case_set(&c.inputs, FA_CASE_Q, 1, 3, 66, 5, NAN);
            else if (which == NAN_K_KEY)
                fa_case_set(&c.inputs, FA_CASE_K, 0, 1, 37, 9, NAN);
            else
                fa_case_set(&c.inputs, FA_CASE_V, 1, 0, 80, 11, NAN);
            if (reference_run(t, version, &c, names[which])) {
                const fa_attention_params *p = &c.call.params;
                float *o = fa_new_floats(B * HQ * NQ * D);
                flash_gather_o(p, NULL, NQ, o);
                int64_t wrong = 0;
                for (int64_t b = 0; b < B; ++b)
                    for (int64_t h = 0; h < HQ; ++h)
                        for (int64_t i = 0; i < NQ; ++i) {
                            const int64_t row = (b * HQ + h) * NQ + i;
                            const int64_t group = h / (HQ / HKV);
                            const bool whole = which == NAN_Q_ROW ? b == 1 && h == 3 && i == 66
                                               : which == NAN_K_KEY ? b == 0 && group == 1
                                                                    : false;
                            const bool column = which == NAN_V_KEY && b == 1 && group == 0;
                            for (int64_t d = 0; d < D; ++d)
                                wrong += (bool)isnan(o[row * D + d]) != (whole || (column && d == 11));
                            wrong += (bool)isnan(p->lse[row]) != whole;
                        }
                fa_attn_method m;
                flash_verdict v;
                FA_EXPECT(t, wrong == 0, "v%d NaN in one %s: %lld outputs with the wrong NaN-ness",
                          version, names[which], (long long)wrong);
                FA_EXPECT(t, flash_method(&c.call, version, &m) == FA_OK &&
                                 judged(&c.call, &m, NULL, 0, &v),
                          "v%d NaN in one %s: the reference must cover the output (%lld "
                          "uncovered)", version, names[which], (long long)v.o.uncovered);
                free(o);
            }
            flash_case_free(&c);
        }
}

/**
 * A call of more than 2^31 elements in q: batch 1, 16 heads, 2^20 + 64
 * query rows of 128 bf16 (4 GiB; q and o elements past 2^31 need 64-bit
 * offsets), 256 keys. Version 1 in [B,N,H,D] (rows past 2^20 are past
 * 2^31 elements), version 2 in [B,H,N,D] (heads 8 and up are). Every element
 * of o is written, no canary changes, and sampled rows at the edges of the
 * 2^31 boundary are judged by the reference (the whole would take the CPU
 * hours). q repeats 509 random rows (filling 2^31 values one by one would
 * take minutes).
 */
static void test_large_offsets(fa_tests *t)
{
    enum { HEADS = 16, D = 128, NK = 256, TABLE_ROWS = 509 };
    const int64_t nq = ((int64_t)1 << 20) + 64;
    static const int64_t rows[] = {0, 1, 63, 64, (int64_t)1 << 19, ((int64_t)1 << 20) - 1,
                                   (int64_t)1 << 20, ((int64_t)1 << 20) + 1,
                                   ((int64_t)1 << 20) + 63};
    for (int version = 1; version <= 2; ++version) {
        const flash_layout layout = version == 1 ? FLASH_BNHD : FLASH_BHND;
        /* k, v and the table of q rows from a small case; q and o made here. */
        const flash_spec small = {1, HEADS, HEADS, TABLE_ROWS, NK, D, FA_BF16, layout, false,
                                  false, true, 0.0f, FLASH_SCORES_SPREAD, 1.0, FA_MASK_NONE, 0, 0};
        fa_rng rng;
        fa_rng_seed(&rng, SEED, 60 + (uint64_t)version);
        flash_case c;
        if (!FA_EXPECT(t, flash_case_random(&c, &small, flash_block_n(version, D), &rng) == FA_OK,
                       "large case: %s", fa_last_error()))
            continue;
        const int64_t elements = nq * HEADS * D;
        uint16_t *q = malloc((size_t)elements * sizeof(uint16_t));
        uint16_t *o = malloc((size_t)elements * sizeof(uint16_t));
        float *lse = malloc((size_t)(HEADS * nq) * sizeof(float));
        if (!FA_EXPECT(t, q && o && lse, "no host memory for 2 x %lld bf16", (long long)elements)) {
            free(q), free(o), free(lse);
            flash_case_free(&c);
            continue;
        }
        flash_call call = c.call;
        fa_attention_params *p = &call.params;
        p->nq = nq;
        p->q_strides = p->o_strides = layout == FLASH_BNHD ? fa_attention_strides_bnhd(nq, HEADS, D)
                                                           : fa_attention_strides_bhnd(nq, HEADS, D);
        for (int64_t n = 0; n < nq; ++n)
            for (int64_t h = 0; h < HEADS; ++h)
                memcpy(q + n * p->q_strides.row + h * p->q_strides.head,
                       (const uint16_t *)c.call.params.q +
                           ((n * HEADS + h) % TABLE_ROWS) * c.call.params.q_strides.row,
                       D * sizeof(uint16_t));
        p->q = q;
        p->o = o;
        p->lse = lse;
        call.problem.nq = nq;
        call.problem.q = (layout == FLASH_BNHD ? fa_view_bnhd : fa_view_bhnd)(q, FA_BF16, HEADS, nq, D);
        fa_poison_host(o, (size_t)elements * sizeof(uint16_t));
        fa_poison_host(lse, (size_t)(HEADS * nq) * sizeof(float));
        FA_EXPECT(t, elements > ((int64_t)1 << 31), "q holds %lld elements", (long long)elements);
        const flash_sizes sizes = flash_sizes_of(p);
        int64_t overwritten = 0;
        const fa_status status = flash_run_on_host(ref_flash_forward, version, p, &sizes, &overwritten);
        if (FA_EXPECT(t, status == FA_OK && overwritten == 0,
                      "v%d on 2^31 + %lld elements: %s (%lld canary bytes)", version,
                      (long long)(elements - ((int64_t)1 << 31)), fa_last_error(),
                      (long long)overwritten)) {
            int64_t left = 0;
            for (int64_t i = 0; i < elements; ++i)
                left += o[i] == 0xFFFF;
            for (int64_t i = 0; i < HEADS * nq; ++i)
                left += fa_is_poison(lse[i]);
            FA_EXPECT(t, left == 0, "v%d: %lld outputs past 2^31 elements unwritten", version,
                      (long long)left);
            fa_attn_method m;
            fa_result result = {0};
            FA_EXPECT(t, flash_method(&call, version, &m) == FA_OK &&
                             flash_result_judge(&result, "large", &call, &m, rows, FA_COUNT_OF(rows)),
                      "v%d: sampled rows around 2^31 elements: %s %s", version, result.detail,
                      fa_last_error());
        }
        free(q);
        free(o);
        free(lse);
        flash_case_free(&c);
    }
}

/**
 * --case reruns exactly the named case; the problem flags make one case per
 * version of their own (head dimensions 1 and 40 included), and a problem the
 * launcher refuses reports the launcher's error.
 */
static void test_case_selection(fa_tests *t)
{
    const fa_milestone_check *m23 = &stage06.checks[0];
    char names[4][FA_CASE_NAME];
    snprintf(names[0], sizeof names[0], "v1 fixture '2-tile'");
    snprintf(names[1], sizeof names[1], "v2 fixture 'no-keys'");
    for (int i = 0; i < 2; ++i) {
        const int version = i + 1, index = i == 0 ? 37 : 17;
        const flash_spec s = flash_grid_spec(version, false, index);
        snprintf(names[2 + i], sizeof names[2 + i], "v%d grid %d ", version, index);
        const size_t used = strlen(names[2 + i]);
        flash_spec_describe(&s, names[2 + i] + used, sizeof names[2 + i] - used);
    }
    for (int i = 0; i < 4; ++i) {
        const fa_run_options options = {.seed = SEED, .case_name = names[i]};
        fa_result result = {0};
        m23->check(FA_IMPL_REFERENCE, &options, &result);
        FA_EXPECT(t, result.outcome == FA_OUTCOME_PASSED && result.cases == 1,
                  "--case \"%s\" must run exactly its case: %s, %d cases", names[i],
                  result.detail, result.cases);
    }
    fa_run_options options = {.seed = SEED, .case_name = "no such case"};
    fa_result result = {0};
    m23->check(FA_IMPL_REFERENCE, &options, &result);
    FA_EXPECT(t, result.cases == 0, "an unknown --case must run nothing (%d cases)", result.cases);

    const int versions_here = flash_library_versions();
    const struct {
        int version;
        unsigned given;
        int64_t heads, heads_kv, d;
        fa_dtype dtype;
        fa_outcome outcome;
        int cases;
        const char *needle;
    } flags[] = {
        {0, FA_PROBLEM_HEADS | FA_PROBLEM_NQ, 2, 0, 0, FA_F32, FA_OUTCOME_PASSED, versions_here, ""},
        {2, FA_PROBLEM_HEADS | FA_PROBLEM_NQ, 2, 0, 0, FA_F32, FA_OUTCOME_PASSED, 1, ""},
        {2, FA_PROBLEM_D, 0, 0, 40, FA_F32, FA_OUTCOME_PASSED, 1, ""},
        {1, FA_PROBLEM_D, 0, 0, 1, FA_F32, FA_OUTCOME_PASSED, 1, ""},
        {2, FA_PROBLEM_DTYPE, 0, 0, 0, FA_F32, FA_OUTCOME_ERROR, 1, "dtype fp32"},
        {1, FA_PROBLEM_HEADS | FA_PROBLEM_HEADS_KV, 3, 2, 0, FA_F32, FA_OUTCOME_ERROR, 1,
         "heads_q = 3 is not a multiple of heads_kv = 2"},
    };
    for (int f = 0; f < FA_COUNT_OF(flags); ++f) {
        options = (fa_run_options){.seed = SEED, .version = flags[f].version};
        options.problem.given = flags[f].given;
        options.problem.heads = flags[f].heads;
        options.problem.heads_kv = flags[f].heads_kv;
        options.problem.nq = 100;
        options.problem.d = flags[f].d;
        options.problem.dtype = flags[f].dtype;
        result = (fa_result){0};
        m23->check(FA_IMPL_REFERENCE, &options, &result);
        FA_EXPECT(t, result.outcome == flags[f].outcome && result.cases == flags[f].cases &&
                         strstr(result.detail, flags[f].needle) != NULL,
                  "flags %d (--version %d): %s: %s, %d cases", f, flags[f].version,
                  fa_outcome_name(result.outcome), result.detail, result.cases);
    }
}

#endif /* FA_HAVE_CUDA */

int main(int argc, char **argv)
{
    static const fa_test_fn cpu[] = {
        test_battery,  test_overflow_boundaries, test_battery_catches, test_methods,
        test_strides,  test_scale,               test_variant_names,   test_hopper_refusals,
        test_auto_choice, test_fixtures,         test_grid,            test_judge,
        test_driver_flags, test_spec_refusal,    test_v3_items,        test_v3_consumers,
        test_walk_patterns, test_v3_tiles,
    };
#if FA_HAVE_CUDA
    static const fa_test_fn gpu[] = {
        test_reference_checks, test_method_ablation, test_canaries,
        test_nan_propagation,  test_large_offsets,   test_case_selection,   test_hopper,
    };
    const fa_test_suite suite = {"test_stage06", cpu, FA_COUNT_OF(cpu), gpu, FA_COUNT_OF(gpu),
                                 fa_gpu_gate};
#else
    const fa_test_suite suite = {"test_stage06", cpu, FA_COUNT_OF(cpu), NULL, 0, NULL};
#endif
    return fa_test_main(argc, argv, &suite);
}
