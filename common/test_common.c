/**
 * @file test_common.c
 * @brief Unit tests of the CPU half of common/: RNG, bf16/fp16, references,
 *        the covers check, statistics and the command-line parser.
 *
 * Every expectation compares against a value worked out independently (a
 * published sequence, a bit pattern derived by hand, an exact rational sum, a
 * slower oracle), so each one fails when the code under test is wrong.
 */
#define _POSIX_C_SOURCE 200809L /* dup, dup2, fileno: capturing stdout and stderr */

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fa_bytes.h"
#include "fa_check.h"
#include "fa_cli.h"
#include "fa_mask.h"
#include "fa_math.h"
#include "fa_milestones.h"
#include "fa_problem.h"
#include "fa_half.h"
#include "fa_reference.h"
#include "fa_rng.h"
#include "fa_stage.h"
#include "fa_stats.h"
#include "fa_test.h"

static float from_bits(uint32_t b)
{
    float x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static uint32_t to_bits(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* ---- RNG ------------------------------------------------------------------------------ */

static void test_rng_reference_sequence(fa_tests *t)
{
    /* xoshiro256** from the state {1, 2, 3, 4}: the authors' reference output. */
    static const uint64_t expected[] = {UINT64_C(11520), UINT64_C(0), UINT64_C(1509978240),
                                        UINT64_C(1215971899390074240),
                                        UINT64_C(1216172134540287360)};
    fa_rng rng = {{1, 2, 3, 4}};
    int wrong = 0;
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        wrong += fa_rng_next(&rng) != expected[i];
    FA_EXPECT(t, wrong == 0, "%d of 5 outputs differ from the published xoshiro256** sequence", wrong);
}

static void test_rng_determinism(fa_tests *t)
{
    fa_rng a, b;
    fa_rng_seed(&a, 42, 7);
    fa_rng_seed(&b, 42, 7);
    int differ = 0;
    for (int i = 0; i < 1000; i++)
        differ += fa_rng_next(&a) != fa_rng_next(&b);
    FA_EXPECT(t, differ == 0, "seed 42 stream 7 twice: %d of 1000 draws differ", differ);

    fa_rng c;
    fa_rng_seed(&c, 42, 7);
    fa_rng_next(&c);
    fa_rng_seed(&c, 42, 7); /* reseeding restarts the sequence */
    fa_rng_seed(&a, 42, 7);
    FA_EXPECT(t, fa_rng_next(&a) == fa_rng_next(&c), "reseeding must restart the sequence");
}

/** Pearson correlation of the uniforms of two generators over @p n draws. */
static double uniform_correlation(fa_rng *a, fa_rng *b, int n)
{
    double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
    for (int i = 0; i < n; i++) {
        const double x = fa_rng_uniform(a), y = fa_rng_uniform(b);
        sa += x, sb += y, saa += x * x, sbb += y * y, sab += x * y;
    }
    const double cov = sab / n - (sa / n) * (sb / n);
    return cov / sqrt((saa / n - (sa / n) * (sa / n)) * (sbb / n - (sb / n) * (sb / n)));
}

static void test_rng_streams(fa_tests *t)
{
    enum { DRAWS = 20000 };
    const uint64_t pairs[][4] = {{1, 0, 1, 1}, {1, 0, 2, 0}, {0, 0, 0, 1}, {5, 3, 3, 5}};
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        fa_rng a, b;
        fa_rng_seed(&a, pairs[p][0], pairs[p][1]);
        fa_rng_seed(&b, pairs[p][2], pairs[p][3]);
        /* A seeding that walks one splitmix sequence would hand neighbouring
         * streams overlapping state words: shifted copies of one stream. */
        int shared = 0;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                shared += a.s[i] == b.s[j];
        FA_EXPECT(t, shared == 0, "two streams share %d state words", shared);
        int equal = 0;
        for (int i = 0; i < 1000; i++)
            equal += fa_rng_next(&a) == fa_rng_next(&b);
        FA_EXPECT(t, equal == 0, "(seed %" PRIu64 ", stream %" PRIu64 ") vs (%" PRIu64 ", %" PRIu64
                  "): %d equal draws", pairs[p][0], pairs[p][1], pairs[p][2], pairs[p][3], equal);
        /* Independent uniforms: the correlation is ~N(0, 1/n); 5 sigma. */
        const double r = uniform_correlation(&a, &b, DRAWS);
        FA_EXPECT(t, fabs(r) < 5.0 / sqrt(DRAWS), "streams correlate: r = %g", r);
    }
}

static void test_rng_uniform_and_normal(fa_tests *t)
{
    enum { DRAWS = 200000 };
    fa_rng rng;
    fa_rng_seed(&rng, 2024, 0);
    double sum = 0;
    int outside = 0;
    for (int i = 0; i < DRAWS; i++) {
        const double u = fa_rng_uniform(&rng);
        outside += !(u >= 0.0 && u < 1.0);
        sum += u;
    }
    FA_EXPECT(t, outside == 0, "%d uniforms outside [0, 1)", outside);
    /* mean of n uniforms: 0.5 +- sqrt(1/12/n); 5 sigma */
    const double mean = sum / DRAWS;
    FA_EXPECT(t, fabs(mean - 0.5) < 5.0 * sqrt(1.0 / 12.0 / DRAWS), "uniform mean %g", mean);

    double s1 = 0, s2 = 0;
    for (int i = 0; i < DRAWS; i++) {
        const double z = fa_rng_normal(&rng);
        s1 += z;
        s2 += z * z;
    }
    const double nmean = s1 / DRAWS, variance = s2 / DRAWS - nmean * nmean;
    /* mean: sd 1/sqrt(n); variance: sd sqrt(2/n); 5 sigma each */
    FA_EXPECT(t, fabs(nmean) < 5.0 / sqrt(DRAWS), "normal mean %g", nmean);
    FA_EXPECT(t, fabs(variance - 1.0) < 5.0 * sqrt(2.0 / DRAWS), "normal variance %g", variance);
}

static void test_rng_int(fa_tests *t)
{
    fa_rng rng;
    fa_rng_seed(&rng, 9, 1);
    int counts[7] = {0}, outside = 0;
    enum { DRAWS = 70000 };
    for (int i = 0; i < DRAWS; i++) {
        const int64_t v = fa_rng_int(&rng, -3, 3);
        if (v < -3 || v > 3)
            outside++;
        else
            counts[v + 3]++;
    }
    FA_EXPECT(t, outside == 0, "%d draws outside [-3, 3]", outside);
    int skewed = 0; /* each count ~ 10000 +- 93; 6 sigma */
    for (int v = 0; v < 7; v++)
        skewed += abs(counts[v] - DRAWS / 7) > 6 * 93;
    FA_EXPECT(t, skewed == 0, "%d of the 7 values are far from 1/7 of the draws", skewed);
    FA_EXPECT(t, fa_rng_int(&rng, 5, 5) == 5, "a one-value range returns it");

    int negative = 0, positive = 0;
    for (int i = 0; i < 64; i++) {
        const int64_t v = fa_rng_int(&rng, INT64_MIN, INT64_MAX);
        negative += v < 0;
        positive += v > 0;
    }
    FA_EXPECT(t, negative > 0 && positive > 0, "full int64 range: %d negative, %d positive", negative,
              positive);
    int extreme_outside = 0;
    for (int i = 0; i < 1000; i++) {
        const int64_t v = fa_rng_int(&rng, INT64_MAX - 2, INT64_MAX);
        extreme_outside += v < INT64_MAX - 2;
    }
    FA_EXPECT(t, extreme_outside == 0, "range at INT64_MAX: %d draws outside", extreme_outside);
}

static void test_fill(fa_tests *t)
{
    enum { N = 8192 };
    static float x[N];
    fa_rng rng;

    fa_rng_seed(&rng, 3, 0);
    fa_fill(x, N, FA_FILL_SMALL_INT, 8.0, &rng);
    int bad = 0, seen_8 = 0;
    for (int i = 0; i < N; i++) {
        bad += !(x[i] == floorf(x[i]) && fabsf(x[i]) <= 8.0f);
        seen_8 += x[i] == -8.0f || x[i] == 8.0f;
    }
    FA_EXPECT(t, bad == 0 && seen_8 > 0, "small ints: %d outside the integers of [-8, 8], %d at +-8",
              bad, seen_8);

    fa_fill(x, N, FA_FILL_UNIFORM, 3.0, &rng);
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += !(x[i] >= -3.0f && x[i] < 3.0f);
    FA_EXPECT(t, bad == 0, "uniform: %d outside [-3, 3)", bad);

    fa_fill(x, N, FA_FILL_GAUSSIAN, 2.0, &rng);
    double s1 = 0, s2 = 0;
    for (int i = 0; i < N; i++)
        s1 += x[i], s2 += (double)x[i] * x[i];
    const double sd = sqrt(s2 / N - (s1 / N) * (s1 / N));
    FA_EXPECT(t, fabs(sd - 2.0) < 5.0 * 2.0 * sqrt(0.5 / N), "gaussian scale 2: sd %g", sd);

    fa_fill(x, N, FA_FILL_ADVERSARIAL, 1.0, &rng);
    int large = 0, tiny = 0, zeros = 0, negative_zero = 0, negative = 0;
    for (int i = 0; i < N; i++) {
        large += fabsf(x[i]) >= 1e3f;
        tiny += x[i] != 0.0f && fabsf(x[i]) < 1e-29f;
        zeros += x[i] == 0.0f;
        negative_zero += x[i] == 0.0f && signbit(x[i]);
        negative += x[i] < 0.0f;
    }
    FA_EXPECT(t, large > 0 && tiny > 0 && zeros > 0 && negative_zero > 0 && negative > N / 4,
              "adversarial mix: %d large, %d tiny, %d zeros (%d negative), %d negative", large,
              tiny, zeros, negative_zero, negative);

    float again[16];
    fa_rng a, b;
    fa_rng_seed(&a, 77, 4);
    fa_rng_seed(&b, 77, 4);
    fa_fill(x, 16, FA_FILL_GAUSSIAN, 1.0, &a);
    fa_fill(again, 16, FA_FILL_GAUSSIAN, 1.0, &b);
    FA_EXPECT(t, memcmp(x, again, sizeof again) == 0, "fills from one seed must be identical");
}

/* ---- bf16 / fp16 ---------------------------------------------------------------------- */

/** Expects @p converter(x bits) == want, naming the case. */
#define EXPECT_CONVERT(t, converter, input_bits, want, what)                                \
    do {                                                                                   \
        const uint16_t got_ = converter(from_bits(input_bits));                            \
        FA_EXPECT(t, got_ == (want), "%s: 0x%08" PRIx32 " -> 0x%04x, want 0x%04x", what,   \
                  (uint32_t)(input_bits), got_, (unsigned)(want));                        \
    } while (0)

static void test_bf16_rounding(fa_tests *t)
{
    EXPECT_CONVERT(t, fa_float_to_bf16, 0x3F800000u, 0x3F80, "1.0");
    /* 1 + 2^-8 is halfway between 0x3F80 (even) and 0x3F81: stays even. */
    EXPECT_CONVERT(t, fa_float_to_bf16, 0x3F808000u, 0x3F80, "tie below an even mantissa");
    /* halfway between 0x3F81 (odd) and 0x3F82: up to the even one */
    EXPECT_CONVERT(t, fa_float_to_bf16, 0x3F818000u, 0x3F82, "tie above an odd mantissa");
    EXPECT_CONVERT(t, fa_float_to_bf16, 0xBF818000u, 0xBF82, "negative tie");
    EXPECT_CONVERT(t, fa_float_to_bf16, 0x3F808001u, 0x3F81, "just above a tie");
    EXPECT_CONVERT(t, fa_float_to_bf16, 0x3F807FFFu, 0x3F80, "just below a tie");
    EXPECT_CONVERT(t, fa_float_to_bf16, 0x3F818001u, 0x3F82, "just above an odd tie");
    EXPECT_CONVERT(t, fa_float_to_bf16, 0x3F817FFFu, 0x3F81, "just below an odd tie");
    EXPECT_CONVERT(t, fa_float_to_bf16, 0x3FFF8000u, 0x4000, "a tie that carries into the exponent");
    EXPECT_CONVERT(t, fa_float_to_bf16, 0x00018000u, 0x0002, "subnormal odd tie");
    EXPECT_CONVERT(t, fa_float_to_bf16, 0x00008000u, 0x0000, "half the smallest subnormal");
    EXPECT_CONVERT(t, fa_float_to_bf16, 0x00000000u, 0x0000, "+0");
    EXPECT_CONVERT(t, fa_float_to_bf16, 0x80000000u, 0x8000, "-0");
    EXPECT_CONVERT(t, fa_float_to_bf16, 0x7F800000u, 0x7F80, "+inf");
    EXPECT_CONVERT(t, fa_float_to_bf16, 0xFF800000u, 0xFF80, "-inf");
    /* bf16 max 0x7F7F = 3.3895e38; the midpoint to 2^128 is 0x7F7F8000 = 3.3961e38. */
    EXPECT_CONVERT(t, fa_float_to_bf16, 0x7F7F7FFFu, 0x7F7F, "just below the overflow threshold");
    EXPECT_CONVERT(t, fa_float_to_bf16, 0x7F7F8000u, 0x7F80, "the overflow threshold ties to inf");
    EXPECT_CONVERT(t, fa_float_to_bf16, to_bits(FLT_MAX), 0x7F80, "FLT_MAX");
    EXPECT_CONVERT(t, fa_float_to_bf16, to_bits(-FLT_MAX), 0xFF80, "-FLT_MAX");

    const uint32_t nans[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FBFFFFFu};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
        const uint16_t h = fa_float_to_bf16(from_bits(nans[i]));
        const bool quiet_nan = (h & 0x7F80) == 0x7F80 && (h & 0x0040);
        const bool same_sign = (h >> 15) == (nans[i] >> 31);
        FA_EXPECT(t, quiet_nan && same_sign, "NaN 0x%08" PRIx32 " -> 0x%04x: want a quiet NaN, same sign",
                  nans[i], h);
    }
}

static void test_fp16_rounding(fa_tests *t)
{
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(1.0f), 0x3C00, "1.0");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(-2.0f), 0xC000, "-2.0");
    /* 1 + 2^-11 is halfway between 0x3C00 (even) and 0x3C01. */
    EXPECT_CONVERT(t, fa_float_to_fp16, 0x3F801000u, 0x3C00, "tie below an even mantissa");
    /* 1 + 3 * 2^-11 is halfway between 0x3C01 (odd) and 0x3C02. */
    EXPECT_CONVERT(t, fa_float_to_fp16, 0x3F803000u, 0x3C02, "tie above an odd mantissa");
    EXPECT_CONVERT(t, fa_float_to_fp16, 0x3F801001u, 0x3C01, "just above a tie");
    EXPECT_CONVERT(t, fa_float_to_fp16, 0x3F800FFFu, 0x3C00, "just below a tie");
    EXPECT_CONVERT(t, fa_float_to_fp16, 0x3F802FFFu, 0x3C01, "just below an odd tie");

    /* Subnormals: value = m * 2^-24. */
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(ldexpf(1.0f, -24)), 0x0001, "smallest subnormal 2^-24");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(ldexpf(1.0f, -25)), 0x0000, "2^-25 ties to zero");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(-ldexpf(1.0f, -25)), 0x8000, "-2^-25 ties to -0");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(ldexpf(1.0f, -25)) + 1, 0x0001, "just above 2^-25");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(ldexpf(1.0f, -26)), 0x0000, "2^-26 underflows");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(ldexpf(3.0f, -25)), 0x0002, "1.5 units: tie to 2");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(ldexpf(5.0f, -25)), 0x0002, "2.5 units: tie to 2");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(ldexpf(1023.0f, -24)), 0x03FF, "largest subnormal");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(ldexpf(2045.0f, -25)), 0x03FE,
                   "1022.5 units: tie down to the even subnormal");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(ldexpf(2047.0f, -25)), 0x0400,
                   "1023.5 units: tie up into the smallest normal");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(ldexpf(2047.0f, -25)) - 1, 0x03FF,
                   "just below 1023.5 units");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(ldexpf(1.0f, -14)), 0x0400, "smallest normal 2^-14");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(FLT_MIN), 0x0000, "FLT_MIN underflows");
    EXPECT_CONVERT(t, fa_float_to_fp16, 0x00000001u, 0x0000, "an fp32 subnormal underflows");
    FA_EXPECT(t, fa_fp16_to_float(0x0001) == ldexpf(1.0f, -24), "0x0001 widens to 2^-24");
    FA_EXPECT(t, fa_fp16_to_float(0x83FF) == -ldexpf(1023.0f, -24), "0x83FF widens to -1023 * 2^-24");

    EXPECT_CONVERT(t, fa_float_to_fp16, 0x00000000u, 0x0000, "+0");
    EXPECT_CONVERT(t, fa_float_to_fp16, 0x80000000u, 0x8000, "-0");
    EXPECT_CONVERT(t, fa_float_to_fp16, 0x7F800000u, 0x7C00, "+inf");
    EXPECT_CONVERT(t, fa_float_to_fp16, 0xFF800000u, 0xFC00, "-inf");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(65504.0f), 0x7BFF, "fp16 max 65504");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(65519.99f), 0x7BFF, "65519.99 stays finite");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(65520.0f), 0x7C00, "65520 ties to inf");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(-65520.0f), 0xFC00, "-65520 ties to -inf");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(1e6f), 0x7C00, "1e6 overflows");
    EXPECT_CONVERT(t, fa_float_to_fp16, to_bits(FLT_MAX), 0x7C00, "FLT_MAX overflows");

    const uint32_t nans[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
        const uint16_t h = fa_float_to_fp16(from_bits(nans[i]));
        const bool quiet_nan = (h & 0x7C00) == 0x7C00 && (h & 0x0200);
        const bool same_sign = (h >> 15) == (nans[i] >> 31);
        FA_EXPECT(t, quiet_nan && same_sign, "NaN 0x%08" PRIx32 " -> 0x%04x: want a quiet NaN, same sign",
                  nans[i], h);
    }
}

/** Every 16-bit pattern widens and narrows back to itself (NaN: to a NaN of the same sign). */
static void test_round_trips(fa_tests *t)
{
    int bf16_bad = 0, fp16_bad = 0;
    for (uint32_t bits = 0; bits <= 0xFFFF; bits++) {
        const uint16_t h = (uint16_t)bits;
        const float b = fa_bf16_to_float(h), f = fa_fp16_to_float(h);
        const uint16_t b_back = fa_float_to_bf16(b), f_back = fa_float_to_fp16(f);
        if (isnan(b))
            bf16_bad += !((b_back & 0x7F80) == 0x7F80 && (b_back & 0x7F) && (b_back >> 15) == (h >> 15));
        else
            bf16_bad += b_back != h;
        if (isnan(f))
            fp16_bad += !((f_back & 0x7C00) == 0x7C00 && (f_back & 0x3FF) && (f_back >> 15) == (h >> 15));
        else
            fp16_bad += f_back != h;
    }
    FA_EXPECT(t, bf16_bad == 0, "%d bf16 patterns do not round-trip", bf16_bad);
    FA_EXPECT(t, fp16_bad == 0, "%d fp16 patterns do not round-trip", fp16_bad);
}

/**
 * Oracle: rounds |x| to @p precision significand bits with minimum exponent
 * @p min_exponent by scaling and rint() (round to nearest even in the default
 * mode); values past @p max_finite become inf.
 */
static double oracle_round(double x, int precision, int min_exponent, double max_finite)
{
    int exponent;
    frexp(x, &exponent); /* x = f * 2^exponent, f in [0.5, 1) */
    const int e = (exponent - 1 < min_exponent ? min_exponent : exponent - 1);
    const double quantum = ldexp(1.0, e - precision + 1);
    const double rounded = rint(x / quantum) * quantum;
    return fabs(rounded) > max_finite ? copysign(INFINITY, x) : rounded;
}

/** Random fp32 patterns (and the neighbourhoods of 16-bit ties) against the oracle. */
static void test_rounding_oracle(fa_tests *t)
{
    enum { DRAWS = 1 << 20 };
    fa_rng rng;
    fa_rng_seed(&rng, 16, 0);
    int bf16_bad = 0, fp16_bad = 0;
    uint32_t first_bf16 = 0, first_fp16 = 0;
    for (int i = 0; i < DRAWS; i++) {
        uint32_t bits = (uint32_t)fa_rng_next(&rng);
        if (i % 2) /* half of the draws sit within a few ulps of a 16-bit tie */
            bits = (bits & 0xFFFF0000u) | 0x8000u | 0x1000u * (i % 4 == 1);
        bits += (uint32_t)fa_rng_int(&rng, -2, 2);
        const float x = from_bits(bits);
        if (!isfinite(x))
            continue;
        const double want_bf16 = oracle_round(x, 8, -126, 0x1.FEp127);
        const double want_fp16 = oracle_round(x, 11, -14, 65504.0);
        if ((double)fa_bf16_to_float(fa_float_to_bf16(x)) != want_bf16 && bf16_bad++ == 0)
            first_bf16 = bits;
        if ((double)fa_fp16_to_float(fa_float_to_fp16(x)) != want_fp16 && fp16_bad++ == 0)
            first_fp16 = bits;
    }
    FA_EXPECT(t, bf16_bad == 0, "%d bf16 conversions disagree with the oracle (first 0x%08" PRIx32 ")",
              bf16_bad, first_bf16);
    FA_EXPECT(t, fp16_bad == 0, "%d fp16 conversions disagree with the oracle (first 0x%08" PRIx32 ")",
              fp16_bad, first_fp16);
}

static void test_dtype_helpers(fa_tests *t)
{
    FA_EXPECT(t, fa_dtype_size(FA_F32) == 4 && fa_dtype_size(FA_BF16) == 2 && fa_dtype_size(FA_F16) == 2,
              "dtype sizes");
    FA_EXPECT(t, !strcmp(fa_dtype_name(FA_F32), "fp32") && !strcmp(fa_dtype_name(FA_BF16), "bf16") &&
                     !strcmp(fa_dtype_name(FA_F16), "fp16"),
              "dtype names");
    FA_EXPECT(t, fa_dtype_unit_roundoff(FA_F32) == ldexp(1, -24) &&
                     fa_dtype_unit_roundoff(FA_BF16) == ldexp(1, -8) &&
                     fa_dtype_unit_roundoff(FA_F16) == ldexp(1, -11),
              "unit roundoffs 2^-24, 2^-8, 2^-11");
    /* 1/3 rounded: bf16 keeps 8 significand bits, fp16 11. */
    const float third = 1.0f / 3.0f;
    FA_EXPECT(t, fa_round_to(FA_F32, third) == third, "fp32 rounding is the identity");
    FA_EXPECT(t, fa_round_to(FA_BF16, third) == 0x1.56p-2f, "1/3 in bf16 = %a", fa_round_to(FA_BF16, third));
    FA_EXPECT(t, fa_round_to(FA_F16, third) == 0x1.554p-2f, "1/3 in fp16 = %a", fa_round_to(FA_F16, third));

    uint16_t halves[3];
    float floats[3];
    fa_store(halves, FA_F16, 2, 0.1f);
    fa_store(floats, FA_F32, 1, 0.1f);
    FA_EXPECT(t, halves[2] == fa_float_to_fp16(0.1f) && fa_load(halves, FA_F16, 2) == fa_round_to(FA_F16, 0.1f),
              "fp16 store/load at index 2");
    FA_EXPECT(t, fa_load(floats, FA_F32, 1) == 0.1f, "fp32 store/load at index 1");
    fa_store(halves, FA_BF16, 0, -1.5f);
    FA_EXPECT(t, halves[0] == 0xBFC0 && fa_load(halves, FA_BF16, 0) == -1.5f, "bf16 store/load of -1.5");
}

/* ---- references ----------------------------------------------------------------------- */

static double ksum_of(const double *x, int n)
{
    fa_ksum s = {0};
    for (int i = 0; i < n; i++)
        fa_ksum_add(&s, x[i]);
    return fa_ksum_value(&s);
}

static void test_compensated_sums(fa_tests *t)
{
    /* 1 + N copies of d = 1e-16: each is below half an ulp of 1, so plain
     * summation stays at 1; the exact sum is 1 + N d. */
    enum { N = 1000000 };
    const double d = 1e-16;
    fa_ksum s = {0};
    double plain = 1.0;
    fa_ksum_add(&s, 1.0);
    for (int i = 0; i < N; i++) {
        fa_ksum_add(&s, d);
        plain += d;
    }
    const double want = 1.0 + N * d;
    FA_EXPECT(t, plain == 1.0, "the case must defeat plain summation (plain = %.17g)", plain);
    FA_EXPECT(t, fabs(fa_ksum_value(&s) - want) <= 2 * DBL_EPSILON, "1 + 1e6 * 1e-16 = %.17g, want %.17g",
              fa_ksum_value(&s), want);

    FA_EXPECT(t, ksum_of((const double[]){1e16, 1.0, -1e16}, 3) == 1.0, "1e16 + 1 - 1e16 = 1");
    FA_EXPECT(t, ksum_of((const double[]){1.0, 1e100, 1.0, -1e100}, 4) == 2.0,
              "1 + 1e100 + 1 - 1e100 = 2 (Kahan's method gives 0; Neumaier's gives 2)");

    /* Alternating: +-1e20 interleaved with 1, 1e20 - 1e20 cancelling in pairs: the sum is the count of ones. */
    fa_ksum alternating = {0};
    for (int i = 0; i < 1000; i++) {
        fa_ksum_add(&alternating, (i % 2 ? -1e20 : 1e20));
        fa_ksum_add(&alternating, 1.0);
    }
    FA_EXPECT(t, fa_ksum_value(&alternating) == 1000.0, "alternating +-1e20 and 1: %.17g, want 1000",
              fa_ksum_value(&alternating));

    /* sum_{k<60} (-1/2)^k = (2/3)(1 - 2^-60), every term exact. */
    fa_ksum geometric = {0};
    for (int k = 0; k < 60; k++)
        fa_ksum_add(&geometric, ldexp(k % 2 ? -1.0 : 1.0, -k));
    const double geometric_want = 2.0 / 3.0 * (1.0 - ldexp(1.0, -60));
    FA_EXPECT(t, fabs(fa_ksum_value(&geometric) - geometric_want) <= DBL_EPSILON * 0.5,
              "alternating geometric series %.17g, want %.17g", fa_ksum_value(&geometric), geometric_want);

    fa_ksum infinite = {0};
    fa_ksum_add(&infinite, 1.0);
    fa_ksum_add(&infinite, INFINITY);
    fa_ksum_add(&infinite, 2.0);
    FA_EXPECT(t, fa_ksum_value(&infinite) == INFINITY, "1 + inf + 2 = inf, not NaN");
}

static void test_reductions(fa_tests *t)
{
    /* Rows of a [3][4] view with ld 5 (the fifth column is padding and must be ignored). */
    const float x[] = {
        16777216.0f, 1.0f, -16777216.0f, 0.5f, 1e30f,  /* sum 1.5, |x| sum 2^25 + 1.5 */
        -INFINITY, -INFINITY, -INFINITY, -INFINITY, 9.0f,
        1.0f, NAN, 3.0f, 2.0f, 0.0f,
    };
    double max[3], sum[3], abs_sum[3];
    FA_EXPECT(t, fa_ref_row_max(x, 3, 4, 5, max) == FA_OK, "row max: %s", fa_last_error());
    FA_EXPECT(t, max[0] == 16777216.0, "row max %g", max[0]);
    FA_EXPECT(t, max[1] == -INFINITY, "all -inf row: max %g", max[1]);
    FA_EXPECT(t, isnan(max[2]), "row with NaN: max %g", max[2]);
    double empty = 0.0;
    FA_EXPECT(t, fa_ref_row_max(x, 1, 0, 5, &empty) == FA_OK, "empty row max: %s",
              fa_last_error());
    FA_EXPECT(t, empty == -INFINITY, "empty row: max %g", empty);

    FA_EXPECT(t, fa_ref_row_sum(x, 1, 4, 5, sum, abs_sum) == FA_OK, "row sum: %s",
              fa_last_error());
    FA_EXPECT(t, sum[0] == 1.5 && abs_sum[0] == 33554433.5, "row sum %.17g, |x| sum %.17g", sum[0],
              abs_sum[0]);

    const float a[] = {1, 2, 3}, b[] = {4, -5, 6};
    double abs_dot = 0;
    FA_EXPECT(t, fa_ref_dot(a, b, FA_F32, 3, &abs_dot) == 12.0 && abs_dot == 32.0,
              "dot 4 - 10 + 18 = 12, |.| 32");
    uint16_t ah[3], bh[3];
    for (int i = 0; i < 3; i++) {
        ah[i] = fa_float_to_bf16(a[i]);
        bh[i] = fa_float_to_bf16(b[i]);
    }
    FA_EXPECT(t, fa_ref_dot(ah, bh, FA_BF16, 3, NULL) == 12.0, "bf16 dot = 12");

    /* A = [[1, 2], [3, 4]] (2x2), B = [[5, 6, 7], [8, 9, 10]] (2x3):
     * C = [[21, 24, 27], [47, 54, 61]]. */
    const float am[] = {1, 2, 3, 4}, bnn[] = {5, 6, 7, 8, 9, 10}, bnt[] = {5, 8, 6, 9, 7, 10};
    const double want[] = {21, 24, 27, 47, 54, 61};
    double c[6], abs_c[6];
    FA_EXPECT(t, fa_ref_matmul(am, bnn, FA_F32, FA_B_ROW_MAJOR, 2, 3, 2, c, abs_c) == FA_OK,
              "matmul NN: %s", fa_last_error());
    FA_EXPECT(t, memcmp(c, want, sizeof want) == 0 && memcmp(abs_c, want, sizeof want) == 0,
              "matmul NN");
    FA_EXPECT(t, fa_ref_matmul(am, bnt, FA_F32, FA_B_TRANSPOSED, 2, 3, 2, c, NULL) == FA_OK,
              "matmul NT: %s", fa_last_error());
    FA_EXPECT(t, memcmp(c, want, sizeof want) == 0, "matmul NT");

    double tr[6];
    FA_EXPECT(t, fa_ref_transpose(bnn, 2, 3, tr) == FA_OK, "transpose: %s", fa_last_error());
    FA_EXPECT(t, tr[0] == 5 && tr[1] == 8 && tr[2] == 6 && tr[3] == 9 && tr[4] == 7 && tr[5] == 10,
              "transpose of a 2x3");

    const double u = ldexp(1.0, -24);
    FA_EXPECT(t, fa_gamma(1, u) == u / (1 - u), "gamma_1");
    FA_EXPECT(t, fa_gamma(1 << 24, u) == INFINITY && fa_gamma(1e9, u) == INFINITY, "gamma with n u >= 1");
}

/* ---- the covers check ----------------------------------------------------------------- */

static void test_check_planted_error(fa_tests *t)
{
    enum { B = 2, H = 3, R = 4, C = 5, N = B * H * R * C };
    float out[N];
    double ref[N], bound[N];
    for (int i = 0; i < N; i++) {
        ref[i] = 0.25 * i;
        out[i] = (float)ref[i] + 1e-4f;
        bound[i] = 1e-3;
    }
    const fa_shape shape = fa_shape_4d(B, H, R, C);
    fa_check_report report;
    FA_EXPECT(t, fa_check_covers(out, ref, bound, N, &report) && report.uncovered == 0,
              "errors of 1e-4 under a bound of 1e-3 are covered");
    FA_EXPECT(t, report.worst_ratio > 0.05 && report.worst_ratio < 0.2, "worst ratio %g", report.worst_ratio);

    const int64_t planted = ((1 * H + 2) * R + 3) * C + 1; /* (batch 1, head 2, row 3, col 1) */
    out[planted] += 0.5f;
    FA_EXPECT(t, !fa_check_covers(out, ref, bound, N, &report), "a planted error is found");
    FA_EXPECT(t, report.uncovered == 1 && report.mismatches == 1 && report.first[0].index == planted &&
                     report.worst_index == planted,
              "uncovered %" PRId64 ", first at %" PRId64 ", worst at %" PRId64, report.uncovered,
              report.first[0].index, report.worst_index);
    char line[256];
    fa_check_describe(&report, &shape, line, sizeof line);
    FA_EXPECT(t, strstr(line, "at (batch 1, head 2, row 3, col 1): got") != NULL, "describe: %s", line);
    FA_EXPECT(t, strstr(line, "1 of 120 uncovered, 0 non-finite, 0 unwritten") != NULL, "describe: %s", line);

    char buf[64];
    const fa_shape matrix = fa_shape_2d(4, 8);
    FA_EXPECT(t, !strcmp(fa_shape_format(&matrix, 31, buf, sizeof buf), "(row 3, col 7)"), "%s", buf);
    const fa_shape vector = fa_shape_1d(10);
    FA_EXPECT(t, !strcmp(fa_shape_format(&vector, 9, buf, sizeof buf), "(i 9)"), "%s", buf);
    FA_EXPECT(t, !strcmp(fa_shape_format(&vector, 10, buf, sizeof buf), "(index 10)"), "%s", buf);
    FA_EXPECT(t, fa_shape_count(&shape) == N, "4-D count");

    FILE *printed = tmpfile();
    if (FA_EXPECT(t, printed != NULL, "tmpfile")) {
        fa_check_print(printed, "scores", &report, &shape);
        char text[1024] = {0};
        rewind(printed);
        const size_t length = fread(text, 1, sizeof text - 1, printed);
        fclose(printed);
        FA_EXPECT(t, length > 0 && strstr(text, "scores") && strstr(text, "(batch 1, head 2, row 3, col 1)"),
                  "print: %s", text);
    }
}

static void test_check_nonfinite_and_unwritten(fa_tests *t)
{
    enum { N = 64 };
    float out[N];
    double ref[N], bound[N];
    for (int i = 0; i < N; i++) {
        ref[i] = i;
        out[i] = (float)i;
        bound[i] = 0.5;
    }
    out[3] = NAN;
    out[7] = INFINITY;
    fa_poison_host(&out[10], 3 * sizeof(float));
    FA_EXPECT(t, fa_is_poison(out[11]) && !fa_is_poison(NAN) && !fa_is_poison(0.0f), "poison pattern");

    fa_check_report report;
    FA_EXPECT(t, !fa_check_covers(out, ref, bound, N, &report), "NaN, inf and unwritten are not covered");
    FA_EXPECT(t, report.nonfinite == 2 && report.unwritten == 3 && report.uncovered == 5,
              "non-finite %" PRId64 " (want 2), unwritten %" PRId64 " (want 3), uncovered %" PRId64
              " (want 5)", report.nonfinite, report.unwritten, report.uncovered);
    FA_EXPECT(t, report.mismatches == FA_CHECK_MAX_MISMATCHES && report.first[0].index == 3 &&
                     report.first[1].index == 7 && report.first[2].index == 10 && report.first[3].index == 11,
              "first mismatches in index order");
    FA_EXPECT(t, report.worst_ratio == INFINITY, "a non-finite output has ratio inf");

    /* Only the unwritten elements left: the line says so instead of "got". */
    out[3] = 3.0f;
    out[7] = 7.0f;
    fa_check_covers(out, ref, bound, N, &report);
    char line[256];
    const fa_shape shape = fa_shape_2d(8, 8);
    fa_check_describe(&report, &shape, line, sizeof line);
    FA_EXPECT(t, strstr(line, "at (row 1, col 2): unwritten") && strstr(line, "3 unwritten"), "%s", line);

    /* A zero bound exceeded gives ratio +inf. */
    const float one = 1.0f;
    const double two = 2.0, zero = 0.0;
    fa_check_covers(&one, &two, &zero, 1, &report);
    FA_EXPECT(t, report.worst_ratio == INFINITY && report.worst_index == 0, "zero bound exceeded: %g",
              report.worst_ratio);
    fa_check_covers(&one, &two, NULL, 0, &report);
    FA_EXPECT(t, report.count == 0 && report.worst_index == -1, "empty comparison");
}

static void test_check_exact_and_special(fa_tests *t)
{
    fa_check_report report;
    const float zero = 0.0f, negative_zero = -0.0f, tenth = 0.1f;
    const double ref_zero = 0.0, ref_tenth = 0.1;
    FA_EXPECT(t, fa_check_covers(&zero, &ref_zero, NULL, 1, &report), "exact: 0 == 0");
    FA_EXPECT(t, !fa_check_covers(&negative_zero, &ref_zero, NULL, 1, &report),
              "exact: -0 differs from 0 bit for bit");
    FA_EXPECT(t, fa_check_covers(&tenth, &ref_tenth, NULL, 1, &report), "exact: (float)0.1 matches 0.1");
    const float next = nextafterf(0.1f, 1.0f);
    FA_EXPECT(t, !fa_check_covers(&next, &ref_tenth, NULL, 1, &report), "exact: one ulp off fails");

    const double nan_ref = NAN, inf_ref = INFINITY, wide = 1e30;
    const float nan_out = NAN, inf_out = INFINITY, minus_inf_out = -INFINITY, finite = 1.0f;
    FA_EXPECT(t, fa_check_covers(&nan_out, &nan_ref, &wide, 1, NULL), "NaN reference covered by NaN");
    FA_EXPECT(t, fa_check_covers(&nan_out, &nan_ref, NULL, 1, NULL), "exact: NaN reference covered by NaN");
    FA_EXPECT(t, !fa_check_covers(&finite, &nan_ref, &wide, 1, &report) && report.nonfinite == 0,
              "NaN reference not covered by a number, however wide the bound");
    FA_EXPECT(t, fa_check_covers(&inf_out, &inf_ref, &wide, 1, NULL), "inf covered by the same inf");
    FA_EXPECT(t, !fa_check_covers(&minus_inf_out, &inf_ref, &wide, 1, NULL), "-inf does not cover inf");
    FA_EXPECT(t, !fa_check_covers(&finite, &inf_ref, &wide, 1, NULL), "a number does not cover inf");
    FA_EXPECT(t, !fa_check_covers(&inf_out, &ref_tenth, &wide, 1, &report) && report.nonfinite == 1,
              "inf where the reference is finite is non-finite and uncovered");
    float poison;
    fa_poison_host(&poison, sizeof poison);
    FA_EXPECT(t, !fa_check_covers(&poison, &nan_ref, &wide, 1, &report) && report.unwritten == 1,
              "poison never covers, not even a NaN reference");
}

/* ---- statistics ----------------------------------------------------------------------- */

static void test_stats(fa_tests *t)
{
    double odd[] = {5, 1, 3};
    fa_stats s = fa_stats_compute(odd, 3);
    FA_EXPECT(t, s.count == 3 && s.median == 3 && s.min == 1 && s.max == 5, "odd count: median %g", s.median);
    FA_EXPECT(t, odd[0] == 1 && odd[2] == 5, "samples sorted in place");

    double even[] = {4, 1, 3, 2};
    s = fa_stats_compute(even, 4);
    FA_EXPECT(t, s.median == 2.5, "even count: median %g, want 2.5", s.median);

    /* 0..10: rank 0.1 * 10 = 1 and 0.9 * 10 = 9 fall on order statistics. */
    double eleven[11];
    for (int i = 0; i < 11; i++)
        eleven[i] = 10 - i;
    s = fa_stats_compute(eleven, 11);
    FA_EXPECT(t, s.p10 == 1 && s.p90 == 9 && s.median == 5 && s.spread == 8.0 / 5.0,
              "0..10: p10 %g p90 %g spread %g", s.p10, s.p90, s.spread);

    /* 1..10: ranks 0.9 and 8.1 interpolate: p10 = 1.9, p90 = 9.1. */
    double ten[10];
    for (int i = 0; i < 10; i++)
        ten[i] = i + 1;
    s = fa_stats_compute(ten, 10);
    FA_EXPECT(t, fabs(s.p10 - 1.9) < 1e-12 && fabs(s.p90 - 9.1) < 1e-12 && s.median == 5.5,
              "1..10: p10 %.17g p90 %.17g median %g", s.p10, s.p90, s.median);

    double one[] = {2.5};
    s = fa_stats_compute(one, 1);
    FA_EXPECT(t, s.median == 2.5 && s.p10 == 2.5 && s.p90 == 2.5 && s.spread == 0, "one sample");
}

/* ---- command line --------------------------------------------------------------------- */

/** stdout and stderr while a call's output goes to files instead. */
typedef struct capture {
    FILE *files[2];  /* stdout's, stderr's */
    int saved[2];    /* the descriptors to restore */
} capture;

static void capture_begin(capture *c)
{
    fflush(stdout);
    fflush(stderr);
    c->files[0] = tmpfile();
    c->files[1] = tmpfile();
    if (!c->files[0] || !c->files[1]) {
        perror("test_common: tmpfile");
        exit(EXIT_FAILURE);
    }
    c->saved[0] = dup(STDOUT_FILENO);
    c->saved[1] = dup(STDERR_FILENO);
    dup2(fileno(c->files[0]), STDOUT_FILENO);
    dup2(fileno(c->files[1]), STDERR_FILENO);
}

/** Restores stdout and stderr; @p out_text and @p err_text receive what was written to them. */
static void capture_end(capture *c, char *out_text, char *err_text, size_t cap)
{
    fflush(stdout);
    fflush(stderr);
    dup2(c->saved[0], STDOUT_FILENO);
    dup2(c->saved[1], STDERR_FILENO);
    close(c->saved[0]);
    close(c->saved[1]);
    char *texts[2] = {out_text, err_text};
    for (int i = 0; i < 2; i++) {
        rewind(c->files[i]);
        texts[i][fread(texts[i], 1, cap - 1, c->files[i])] = '\0';
        fclose(c->files[i]);
    }
}

/** Runs fa_cli_parse() with stdout and stderr captured; returns the result, fills @p err and @p out. */
static fa_cli_result parse_captured(int argc, char **argv, const fa_flag *flags, int count,
                                    char *out_text, char *err_text, size_t cap)
{
    capture c;
    capture_begin(&c);
    const fa_cli_result result = fa_cli_parse(argc, argv, flags, count, "A test program.");
    capture_end(&c, out_text, err_text, cap);
    return result;
}

typedef struct cli_values {
    bool quick;
    int64_t seed;
    int64_t offset;
    double scale;
    int impl;
    const char *label;
} cli_values;

enum { CLI_FLAG_COUNT = 6, CLI_TEXT = 4096 };

static void make_flags(fa_flag flags[CLI_FLAG_COUNT], cli_values *v)
{
    static const char *const impls[] = {"reference", "learner", "both", NULL};
    *v = (cli_values){false, 1, 0, 1.0, 2, "none"};
    flags[0] = (fa_flag){"quick", FA_FLAG_BOOL, &v->quick, "small cases only", 0, 0, NULL};
    flags[1] = (fa_flag){"seed", FA_FLAG_INT, &v->seed, "seed of the random cases", 0, 1000, NULL};
    flags[2] = (fa_flag){"scale", FA_FLAG_DOUBLE, &v->scale, "input scale", 0, 0, NULL};
    flags[3] = (fa_flag){"impl", FA_FLAG_CHOICE, &v->impl, "whose kernels run", 0, 0, impls};
    flags[4] = (fa_flag){"label", FA_FLAG_STRING, &v->label, "a name", 0, 0, NULL};
    flags[5] = (fa_flag){"offset", FA_FLAG_INT, &v->offset, "any int64", INT64_MIN, INT64_MAX, NULL};
}

static void test_cli_accepts(fa_tests *t)
{
    fa_flag flags[CLI_FLAG_COUNT];
    cli_values v;
    make_flags(flags, &v);
    static char out[CLI_TEXT], err[CLI_TEXT];
    char *argv[] = {"prog", "--impl", "learner", "--seed=17", "--quick", "--scale", "-0.5e1",
                    "--label=a=b", NULL};
    const fa_cli_result r = parse_captured(8, argv, flags, CLI_FLAG_COUNT, out, err, sizeof out);
    FA_EXPECT(t, r == FA_CLI_OK && err[0] == '\0', "good command line: result %d, stderr '%s'", r, err);
    FA_EXPECT(t, v.impl == 1 && v.seed == 17 && v.quick && v.scale == -5.0 && !strcmp(v.label, "a=b"),
              "values: impl %d seed %" PRId64 " quick %d scale %g label %s", v.impl, v.seed, v.quick,
              v.scale, v.label);

    make_flags(flags, &v);
    char *bounds[] = {"prog", "--seed", "1000", "--seed=0", "--offset", "-9223372036854775808", NULL};
    FA_EXPECT(t, parse_captured(6, bounds, flags, CLI_FLAG_COUNT, out, err, sizeof out) == FA_CLI_OK &&
                     v.seed == 0 && v.offset == INT64_MIN,
              "range ends are accepted and the last value wins (seed %" PRId64 ", offset %" PRId64 ")",
              v.seed, v.offset);

    char *help[] = {"prog", "--help", NULL};
    FA_EXPECT(t, parse_captured(2, help, flags, CLI_FLAG_COUNT, out, err, sizeof out) == FA_CLI_HELP,
              "--help");
    FA_EXPECT(t, strstr(out, "usage: prog") && strstr(out, "--impl reference|learner|both") &&
                     strstr(out, "[0, 1000]") && err[0] == '\0',
              "--help prints the usage to stdout: '%s'", out);
    char *short_help[] = {"prog", "-h", NULL};
    FA_EXPECT(t, parse_captured(2, short_help, flags, CLI_FLAG_COUNT, out, err, sizeof out) == FA_CLI_HELP,
              "-h");
}

static void test_cli_rejects(fa_tests *t)
{
    /* Each bad line, and a word its message must contain. */
    static const struct {
        const char *args[3];
        const char *mention;
    } cases[] = {
        {{"--bogus", NULL}, "--bogus"},
        {{"--bogus=1", NULL}, "--bogus"},
        {{"-x", NULL}, "-x"},
        {{"stray", NULL}, "stray"},
        {{"--seed", NULL}, "missing value for --seed"},
        {{"--seed", "--quick"}, "missing value for --seed"},
        {{"--seed", "12x"}, "12x"},
        {{"--seed", ""}, "--seed"},
        {{"--seed", " 5"}, "--seed"},
        {{"--seed", "1001"}, "out of range"},
        {{"--seed", "-1"}, "out of range"},
        {{"--seed", "99999999999999999999"}, "out of range"},
        {{"--offset", "9223372036854775808"}, "out of range"},
        {{"--offset", "-9223372036854775809"}, "out of range"},
        {{"--scale", "nan"}, "--scale"},
        {{"--scale", "inf"}, "--scale"},
        {{"--scale", "1e999"}, "--scale"},
        {{"--scale", "1.5.2"}, "1.5.2"},
        {{"--impl", "gpu"}, "gpu"},
        {{"--quick=yes", NULL}, "--quick"},
    };
    fa_flag flags[CLI_FLAG_COUNT];
    cli_values v;
    static char out[CLI_TEXT], err[CLI_TEXT];
    FA_EXPECT(t, (int)FA_CLI_ERROR == (int)FA_EXIT_USAGE, "a bad command line exits with the usage code 2");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        make_flags(flags, &v);
        char *argv[4] = {"prog", (char *)cases[c].args[0], (char *)cases[c].args[1], NULL};
        const int argc = cases[c].args[1] ? 3 : 2;
        const fa_cli_result r = parse_captured(argc, argv, flags, CLI_FLAG_COUNT, out, err, sizeof out);
        FA_EXPECT(t, r == FA_CLI_ERROR && strncmp(err, "prog: ", 6) == 0 && strstr(err, cases[c].mention) &&
                         strstr(err, "usage: prog") && out[0] == '\0',
                  "'%s %s': result %d, stderr '%s'", cases[c].args[0],
                  cases[c].args[1] ? cases[c].args[1] : "", r, err);
    }
    make_flags(flags, &v);
    char *argv[] = {"prog", "--impl", "gpu", NULL};
    parse_captured(3, argv, flags, CLI_FLAG_COUNT, out, err, sizeof out);
    FA_EXPECT(t, strstr(err, "reference|learner|both") != NULL, "an unknown choice lists the choices: %s", err);
    FA_EXPECT(t, v.impl == 2, "a rejected value leaves the default (impl %d)", v.impl);
}

/*
 * The harness's verdicts, without a GPU: what a learner sees when a kernel is
 * wrong (the case and the coordinate), unwritten or not started, in the words
 * the tour reads.
 */
static void test_harness_verdicts(fa_tests *t)
{
    enum { B = 2, H = 3, R = 4, C = 5, N = B * H * R * C };
    float out[N];
    double ref[N], bound[N];
    for (int i = 0; i < N; i++) {
        ref[i] = 0.25 * i;
        out[i] = (float)ref[i];
        bound[i] = 1e-6;
    }
    const fa_shape shape = fa_shape_4d(B, H, R, C);
    fa_result r = {FA_OUTCOME_ERROR, "", 0, ""};
    FA_EXPECT(t, fa_result_judge(&r, "planted", out, ref, bound, &shape) && r.outcome == FA_OUTCOME_ERROR,
              "a covered output passes and leaves the result alone");

    /* A planted bug at (batch 1, head 2, row 3, col 4), the last element. */
    out[N - 1] += 1.0f;
    bool judged = fa_result_judge(&r, "planted", out, ref, bound, &shape);
    FA_EXPECT(t, !judged && r.outcome == FA_OUTCOME_FAILED, "a wrong element fails the case");
    FA_EXPECT(t, strstr(r.detail, "case 'planted'") && strstr(r.detail, "(batch 1, head 2, row 3, col 4)"),
              "the failure names the case and the coordinate: %s", r.detail);
    FA_EXPECT(t, strcmp(fa_outcome_name(r.outcome), "failed") == 0, "the tour reads 'failed'");

    /* An element the kernel never wrote. */
    out[N - 1] = (float)ref[N - 1];
    fa_poison_host(&out[7], sizeof out[7]);
    judged = fa_result_judge(&r, "unwritten", out, ref, bound, &shape);
    FA_EXPECT(t, !judged && strstr(r.detail, "unwritten") && strstr(r.detail, "(batch 0, head 0, row 1, col 2)"),
              "an unwritten element is reported as such, with its coordinate: %s", r.detail);

    /* A launcher that still starts with FA_TODO, and one that fails. */
    fa_status todo = fa_fail(FA_ERR_NOT_IMPLEMENTED, "M1 vector add is not implemented yet");
    FA_EXPECT(t, !fa_result_status(&r, "n = 1", todo) && r.outcome == FA_OUTCOME_NOT_IMPLEMENTED &&
                     strcmp(fa_outcome_name(r.outcome), "not-implemented") == 0,
              "FA_ERR_NOT_IMPLEMENTED reads as not implemented");
    fa_status bad = fa_fail(FA_ERR_MISALIGNED, "vector_add: a is not 16-byte aligned");
    FA_EXPECT(t, !fa_result_status(&r, "n = 1", bad) && r.outcome == FA_OUTCOME_ERROR &&
                     strstr(r.detail, "FA_ERR_MISALIGNED") && strstr(r.detail, "16-byte"),
              "any other status is an error that carries its message: %s", r.detail);
    FA_EXPECT(t, fa_result_status(&r, "n = 1", FA_OK), "FA_OK lets the check go on");

    /* A bound that cannot judge is an error of the check, never a pass or a plain failure. */
    out[7] = (float)ref[7];
    bound[3] = INFINITY;
    r = (fa_result){FA_OUTCOME_PASSED, "", 0, ""};
    FA_EXPECT(t, !fa_result_judge(&r, "no bound", out, ref, bound, &shape) &&
                     r.outcome == FA_OUTCOME_ERROR && strstr(r.detail, "no bound"),
              "an infinite bound element is an ERROR: %s %s", fa_outcome_name(r.outcome),
              r.detail);

    /* A named output: the same verdicts, the name before the coordinate. */
    fa_check_report report;
    out[7] += 1.0f;
    bound[3] = 1e-6;
    FA_EXPECT(t, !fa_check_covers(out, ref, bound, N, &report), "the planted element is uncovered");
    r = (fa_result){FA_OUTCOME_PASSED, "", 0, ""};
    FA_EXPECT(t, !fa_result_uncovered(&r, "named", "lse", &report, &shape) &&
                     r.outcome == FA_OUTCOME_FAILED &&
                     strstr(r.detail, "case 'named' lse at (batch 0, head 0, row 1, col 2)"),
              "an uncovered named output fails with its name and coordinate: %s", r.detail);
    bound[3] = NAN;
    FA_EXPECT(t, !fa_check_covers(out, ref, bound, N, &report) && report.status != FA_OK,
              "a NaN bound makes the check unusable");
    r = (fa_result){FA_OUTCOME_PASSED, "", 0, ""};
    FA_EXPECT(t, !fa_result_uncovered(&r, "named", "lse", &report, &shape) &&
                     r.outcome == FA_OUTCOME_ERROR,
              "a named output with no usable bound is an ERROR: %s %s", fa_outcome_name(r.outcome),
              r.detail);

    /* Canaries: none overwritten goes on, any byte fails and says where. */
    r = (fa_result){FA_OUTCOME_PASSED, "", 0, ""};
    FA_EXPECT(t, fa_result_canaries(&r, "c", "o", 0) && r.outcome == FA_OUTCOME_PASSED,
              "intact canaries leave the result alone");
    FA_EXPECT(t, !fa_result_canaries(&r, "c", "o", 3) && r.outcome == FA_OUTCOME_FAILED &&
                     strstr(r.detail, "case 'c' wrote 3 canary bytes past the end of o"),
              "overwritten canaries fail the case: %s", r.detail);
}

/* ---- the harness's plumbing ------------------------------------------------------------- */

/** A case is named: --case runs only it, a failure remembers it for the rerun line. */
static void test_cases_and_failures(fa_tests *t)
{
    fa_run_options all = {.seed = 1};
    fa_run_options one = {.seed = 1, .case_name = "random 3"};
    fa_result r = {FA_OUTCOME_ERROR, "", 0, ""};
    int ran = 0;
    const char *names[] = {"fixture a", "random 3", "random 30"};
    for (int i = 0; i < 3; i++)
        ran += fa_case_begin(&r, &one, names[i]);
    FA_EXPECT(t, ran == 1 && r.cases == 1, "--case runs exactly its case (%d ran)", ran);
    r = (fa_result){FA_OUTCOME_ERROR, "", 0, ""};
    for (int i = 0; i < 3; i++)
        fa_case_begin(&r, &all, names[i]);
    FA_EXPECT(t, r.cases == 3, "without --case every case runs (%d)", r.cases);
    fa_result_fail(&r, "random 30", "wrote %d canary bytes", 4);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_FAILED && strcmp(r.failed_case, "random 30") == 0 &&
                     strstr(r.detail, "case 'random 30' wrote 4 canary bytes"),
              "a failure names its case for the rerun line: %s / %s", r.failed_case, r.detail);
}

/** fa_detail_append(): no separator first, one between parts, nothing for an empty part, cut at cap. */
static void test_detail_append(fa_tests *t)
{
    char detail[16] = "";
    fa_detail_append(detail, sizeof detail, ", ", "v1 ok");
    fa_detail_append(detail, sizeof detail, ", ", "");
    fa_detail_append(detail, sizeof detail, ", ", "v2 ok");
    FA_EXPECT(t, strcmp(detail, "v1 ok, v2 ok") == 0, "parts joined: \"%s\"", detail);
    fa_detail_append(detail, sizeof detail, "; ", "v3 not run");
    FA_EXPECT(t, strcmp(detail, "v1 ok, v2 ok; v") == 0, "cut at 15 characters: \"%s\"", detail);
}

/** The rerun line pastes into a shell as printed, quotes in the case name included. */
static void test_rerun_line(fa_tests *t)
{
    fa_result r = {FA_OUTCOME_FAILED, "", 1, "vector_add fixture 'n = 1'"};
    fa_run_options run = {.seed = 7, .quick = true};
    char line[FA_RESULT_DETAIL];
    FA_EXPECT(t, fa_result_rerun(line, sizeof line, "stage01", 1, FA_IMPL_LEARNER, &r, &run) &&
                     strcmp(line, "stage01 --impl learner --milestone 1 --case 'vector_add "
                                  "fixture '\\''n = 1'\\''' --seed 7 --quick") == 0,
              "%s", line);
    run.version = 2;
    run.quick = false;
    FA_EXPECT(t, fa_result_rerun(line, sizeof line, "stage02", 7, FA_IMPL_REFERENCE, &r, &run) &&
                     strstr(line, "--milestone 7 --version 2 --case") != NULL,
              "%s", line);
    run.problem.given = FA_PROBLEM_N;
    FA_EXPECT(t, !fa_result_rerun(line, sizeof line, "stage01", 1, FA_IMPL_LEARNER, &r, &run),
              "a run of problem flags reruns as it was: no --case line");
}

/** The reporter fails a program that checked nothing. */
static void test_reporter_needs_an_expectation(fa_tests *t)
{
    const fa_tests empty = {0, 0}, passing = {3, 0}, failing = {3, 1};
    FA_EXPECT(t, fa_tests_finish(&empty) == 1, "zero expectations must fail");
    FA_EXPECT(t, fa_tests_finish(&passing) == 0, "3 passed, 0 failed passes");
    FA_EXPECT(t, fa_tests_finish(&failing) == 1, "a failed expectation fails");
}

/** The helpers of the stage tests: float comparisons, dtype arrays, status expectations. */
static void test_stage_test_helpers(fa_tests *t)
{
    const float nan_a = from_bits(UINT32_C(0x7FC00001)), nan_b = from_bits(UINT32_C(0x7FC00002));
    FA_EXPECT(t, fa_same_float(nan_a, nan_b) && !fa_same_bits(nan_a, nan_b) &&
                     fa_same_bits(nan_a, nan_a),
              "two NaNs are the same float but not the same bits");
    FA_EXPECT(t, !fa_same_float(0.0f, -0.0f) && !fa_same_bits(0.0f, -0.0f) &&
                     !fa_same_float(1.0f, nan_a) && fa_same_float(1.5f, 1.5f),
              "+0 and -0 differ, a number is not NaN");
    const float a[] = {1.0f, nan_a, 3.0f, 4.0f}, b[] = {1.0f, nan_b, 3.0f, 5.0f};
    FA_EXPECT(t, fa_first_difference(a, b, 4) == 3 && fa_first_difference(a, b, 3) == -1 &&
                     fa_first_difference(a, b, 0) == -1,
              "first difference: %lld", (long long)fa_first_difference(a, b, 4));

    const float values[] = {1.0f + 0x1p-8f, -2.5f}; /* the first is a bf16 tie: rounds to even */
    uint16_t *bf16 = fa_as_dtype(values, 2, FA_BF16);
    float *f32 = fa_as_dtype(values, 2, FA_F32);
    FA_EXPECT(t, bf16[0] == UINT16_C(0x3F80) && bf16[1] == UINT16_C(0xC020) &&
                     fa_same_bits(f32[0], values[0]) && fa_same_bits(f32[1], values[1]),
              "fa_as_dtype: bf16 0x%04x 0x%04x", bf16[0], bf16[1]);
    free(bf16);
    free(f32);
    double *d = fa_new_doubles(0); /* an empty array is still a valid pointer to free */
    FA_EXPECT(t, d != NULL, "fa_new_doubles(0)");
    free(d);

    /* Expectations on a reporter of their own: counts, and the FAIL line at the caller's line. */
    fa_tests inner = {0};
    char out[CLI_TEXT], err[CLI_TEXT], where[64];
    capture c;
    capture_begin(&c);
    fa_fail(FA_ERR_INVALID_SIZE, "n = -1, expected >= 0");
    FA_EXPECT_STATUS(&inner, FA_ERR_INVALID_SIZE, FA_ERR_INVALID_SIZE, "n = -1", "right"); /* 2 */
    FA_EXPECT_STATUS(&inner, FA_OK, FA_OK, "not looked at", "fine");                      /* 1 */
    const int wrong_line = __LINE__ + 1;
    FA_EXPECT_STATUS(&inner, FA_ERR_INVALID_SIZE, FA_ERR_INVALID_SIZE, "m = ", "wrong %s", "word");
    fa_fail(FA_ERR_NOT_IMPLEMENTED, "M1 is not implemented yet");
    FA_EXPECT_LEARNER_STATUS(&inner, FA_ERR_NOT_IMPLEMENTED, FA_ERR_NULL_POINTER, "x", "skeleton");
    FA_EXPECT_STATUS_OF(&inner, true, FA_ERR_NOT_IMPLEMENTED, FA_ERR_NULL_POINTER, "x", "learner");
    FA_EXPECT_STATUS_OF(&inner, false, FA_ERR_NOT_IMPLEMENTED, FA_ERR_NULL_POINTER, "x", "ref");
    capture_end(&c, out, err, sizeof out);
    snprintf(where, sizeof where, "test_common.c:%d: ", wrong_line);
    FA_EXPECT(t, inner.passed == 6 && inner.failed == 2,
              "status expectations: %d passed, %d failed, want 6 and 2", inner.passed,
              inner.failed);
    FA_EXPECT(t, strstr(out, where) != NULL && strstr(out, "wrong word: message") != NULL,
              "a failing status expectation names its caller's line (%s): %s", where, out);
    FA_EXPECT(t, strstr(out, "ref: got FA_ERR_NOT_IMPLEMENTED") != NULL,
              "a reference may not answer \"not implemented\": %s", out);
}

/* A fake stage 01 of four milestones for the stage-level helpers: M3 is not
 * written, M4 fails, M5 has no check. Plain C: no GPU is involved. */
static fa_status fake_written(fa_impl impl, const fa_run_options *options)
{
    (void)impl;
    (void)options;
    return FA_OK;
}

static fa_status fake_unwritten(fa_impl impl, const fa_run_options *options)
{
    (void)impl;
    (void)options;
    return fa_fail(FA_ERR_NOT_IMPLEMENTED, "M3 fake is not implemented yet");
}

static void fake_passes(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    (void)impl;
    (void)options;
    result->cases += 2;
    fa_result_pass(result, "%d fake cases", result->cases);
}

static void fake_fails(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    (void)impl;
    (void)options;
    result->cases += 1;
    fa_result_fail(result, "fake 0", "at (row 1, col 2): got 3, want 4");
}

static const fa_milestone_check fake_checks[] = {
    {1, fake_written, fake_passes, NULL, false},
    {2, fake_written, fake_passes, NULL, false},
    {3, fake_unwritten, fake_passes, NULL, false},
    {4, fake_written, fake_fails, NULL, false},
};
static const fa_stage_desc fake_stage = {1, fake_checks, 4, NULL};

/** A milestone as the driver runs it, a command line the driver refuses, a stage's checks. */
static void test_stage_helpers(fa_tests *t)
{
    const fa_run_options options = {.seed = 1};
    fa_result r = fa_stage_check(&fake_stage, 2, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_PASSED && r.cases == 2, "M2: %s", r.detail);
    r = fa_stage_check(&fake_stage, 3, FA_IMPL_LEARNER, &options);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_NOT_IMPLEMENTED && r.cases == 0 &&
                     strstr(r.detail, "M3 fake is not implemented") != NULL,
              "an unwritten milestone is not checked: %s", r.detail);
    r = fa_stage_check(&fake_stage, 4, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_FAILED && strcmp(r.failed_case, "fake 0") == 0,
              "M4: %s", r.detail);
    r = fa_stage_check(&fake_stage, 6, FA_IMPL_REFERENCE, &options);
    FA_EXPECT(t, r.outcome == FA_OUTCOME_ERROR && strstr(r.detail, "M6 is not a milestone") != NULL,
              "M6: %s", r.detail);

    fa_stage_request request;
    static const char *const rerun[] = {"stage02", "--milestone", "7", "--case",
                                        "v1 naive NN random 0 1x1x1", NULL};
    FA_EXPECT(t, fa_stage_parse_words(rerun, 2, &request) == FA_CLI_OK &&
                     request.milestone == 7 && request.run.case_name == rerun[4],
              "a command line as words, a case name with spaces among them");

    fa_tests inner = {0};
    char out[CLI_TEXT], err[CLI_TEXT], where[64];
    static const char *const refused[] = {"stage02", "--milestone", "5", NULL};
    static const char *const accepted[] = {"stage02", "--milestone", "7", NULL};
    capture c;
    capture_begin(&c);
    FA_EXPECT_USAGE_ERROR(&inner, 2, refused);
    const int accepted_line = __LINE__ + 1;
    FA_EXPECT_USAGE_ERROR(&inner, 2, accepted);
    capture_end(&c, out, err, sizeof out);
    snprintf(where, sizeof where, "test_common.c:%d: ", accepted_line);
    FA_EXPECT(t, inner.passed == 1 && inner.failed == 1 && strstr(out, where) != NULL &&
                     strstr(out, "stage02 --milestone 7: exit 0, expected 2") != NULL,
              "usage errors: %d passed, %d failed: %s", inner.passed, inner.failed, out);

    /* Coverage: M1..M4 found, M5 missing, 4 checks for 5; M3 is not written, M4 fails. */
    inner = (fa_tests){0};
    capture_begin(&c);
    const int checks_line = __LINE__ + 1;
    FA_EXPECT_REFERENCE_CHECKS(&inner, &fake_stage, &options);
    capture_end(&c, out, err, sizeof out);
    snprintf(where, sizeof where, "test_common.c:%d: ", checks_line);
    FA_EXPECT(t, inner.passed == 6 && inner.failed == 4, "reference checks: %d passed, %d failed",
              inner.passed, inner.failed);
    FA_EXPECT(t, strstr(out, where) != NULL && strstr(out, "no check of M5") != NULL &&
                     strstr(out, "M3 reference: not-implemented") != NULL &&
                     strstr(out, "M4 reference: failed") != NULL,
              "each failure is named, at the caller's line: %s", out);
}

/** The one max of the course keeps NaN, orders +0 above -0 and matches max.NaN.f32 bit for bit. */
static void test_max_nan(fa_tests *t)
{
    const float nan = from_bits(UINT32_C(0x7FC00001)); /* a NaN with a payload */
    FA_EXPECT(t, to_bits(fa_max_nan(nan, 1.0f)) == UINT32_C(0x7FFFFFFF) &&
                     to_bits(fa_max_nan(1.0f, nan)) == UINT32_C(0x7FFFFFFF) &&
                     to_bits(fa_max_nan(-INFINITY, nan)) == UINT32_C(0x7FFFFFFF),
              "a NaN on either side gives the canonical NaN");
    FA_EXPECT(t, to_bits(fa_max_nan(-0.0f, 0.0f)) == 0 && to_bits(fa_max_nan(0.0f, -0.0f)) == 0,
              "max(-0, +0) = +0 in both orders");
    FA_EXPECT(t, fa_max_nan(-INFINITY, -INFINITY) == -INFINITY && fa_max_nan(2.0f, 3.0f) == 3.0f &&
                     fa_max_nan(-1.0f, -INFINITY) == -1.0f,
              "ordinary values: the larger one");
    FA_EXPECT(t, fmaxf(1.0f, NAN) == 1.0f, "fmaxf drops NaN: the pitfall fa_max_nan avoids");
    FA_EXPECT(t, isnan(fa_max_nan_double(0.5, NAN)) && isnan(fa_max_nan_double(NAN, 0.5)) &&
                     fa_max_nan_double(0.5, 2.0) == 2.0,
              "the double statistics keep NaN too");
}

/** The allowed keys of every mask, at its edges. */
static void test_key_ranges(fa_tests *t)
{
    /* nq = 3, nk = 5: top-left row i sees j <= i; bottom-right sees j <= i + 2. */
    FA_EXPECT(t, fa_mask_key_range(FA_MASK_NONE, 1, 3, 5).end == 5, "no mask: every key");
    FA_EXPECT(t, fa_mask_key_range(FA_MASK_CAUSAL_TOP_LEFT, 0, 3, 5).end == 1 &&
                     fa_mask_key_range(FA_MASK_CAUSAL_TOP_LEFT, 2, 3, 5).end == 3,
              "top-left: row i sees keys 0..i");
    FA_EXPECT(t, fa_mask_key_range(FA_MASK_CAUSAL_BOTTOM_RIGHT, 0, 3, 5).end == 3 &&
                     fa_mask_key_range(FA_MASK_CAUSAL_BOTTOM_RIGHT, 2, 3, 5).end == 5,
              "bottom-right: the last row sees every key");
    /* nq = 5, nk = 3: bottom-right rows 0, 1 see nothing; top-left clips at nk. */
    const fa_key_range empty = fa_mask_key_range(FA_MASK_CAUSAL_BOTTOM_RIGHT, 1, 5, 3);
    FA_EXPECT(t, empty.end <= empty.begin, "bottom-right with nq > nk: row 1 has no key");
    FA_EXPECT(t, fa_mask_key_range(FA_MASK_CAUSAL_BOTTOM_RIGHT, 2, 5, 3).end == 1 &&
                     fa_mask_key_range(FA_MASK_CAUSAL_TOP_LEFT, 4, 5, 3).end == 3,
              "bottom-right row 2 sees key 0; top-left row 4 is clipped to nk");
    FA_EXPECT(t, fa_mask_allows(FA_MASK_CAUSAL_TOP_LEFT, 2, 2, 3, 5) &&
                     !fa_mask_allows(FA_MASK_CAUSAL_TOP_LEFT, 2, 3, 3, 5),
              "fa_mask_allows follows the range: j = i in, j = i + 1 out");
}

/** Key j is in row i's band, straight from the definition of fa_key_window. */
static bool band_allows(fa_key_window w, int64_t i, int64_t j, int64_t nk)
{
    return j >= 0 && j < nk && (w.left < 0 || j >= i + w.offset - w.left) &&
           (w.right < 0 || j <= i + w.offset + w.right);
}

/** True when [begin, end) is exactly the keys for which @p allowed[j] holds (empty: none). */
static bool range_is_exactly(fa_key_range range, const bool *allowed, int64_t nk)
{
    for (int64_t j = 0; j < nk; ++j)
        if (allowed[j] != (j >= range.begin && j < range.end))
            return false;
    return true;
}

enum { WINDOW_MAX_N = 9 };

/**
 * The bands of every mask and of sliding windows, and the tile keys of every
 * block of rows, against the definition, key by key: all nq, nk up to 9,
 * diagonals above, on and below the main one, bounded and unbounded sides.
 * The tile keys must be exact, not merely safe: a key range wider than its
 * rows' keys would load tiles a kernel should skip.
 */
static void test_key_windows(fa_tests *t)
{
    static const int64_t sides[] = {-1, 0, 1, 3};
    int failures = 0;
    char first[160] = "";
    for (int64_t nq = 1; nq <= WINDOW_MAX_N; ++nq)
        for (int64_t nk = 0; nk <= WINDOW_MAX_N; ++nk)
            for (int64_t offset = -4; offset <= 4; ++offset)
                for (int a = 0; a < 4; ++a)
                    for (int b = 0; b < 4; ++b) {
                        const fa_key_window w = {offset, sides[a], sides[b]};
                        for (int64_t r0 = 0; r0 < nq; ++r0)
                            for (int64_t r1 = r0 + 1; r1 <= nq; ++r1) {
                                bool any[WINDOW_MAX_N] = {false}, all[WINDOW_MAX_N];
                                bool rows_ok = true;
                                for (int64_t j = 0; j < nk; ++j)
                                    all[j] = true;
                                for (int64_t i = r0; i < r1; ++i) {
                                    bool row[WINDOW_MAX_N];
                                    for (int64_t j = 0; j < nk; ++j) {
                                        row[j] = band_allows(w, i, j, nk);
                                        any[j] = any[j] || row[j];
                                        all[j] = all[j] && row[j];
                                    }
                                    rows_ok = rows_ok &&
                                              range_is_exactly(fa_window_key_range(w, i, nk), row, nk);
                                }
                                const fa_tile_keys keys = fa_window_tile_keys(w, r0, r1, nk);
                                if (rows_ok && range_is_exactly(keys.any, any, nk) &&
                                    range_is_exactly(keys.all, all, nk))
                                    continue;
                                if (failures++ == 0)
                                    snprintf(first, sizeof first,
                                             "nq %lld nk %lld band (%lld, %lld, %lld) rows [%lld, %lld)",
                                             (long long)nq, (long long)nk, (long long)offset,
                                             (long long)w.left, (long long)w.right, (long long)r0,
                                             (long long)r1);
                            }
                    }
    FA_EXPECT(t, failures == 0, "%d blocks of rows whose ranges or tile keys are not exact, the first: %s",
              failures, first);

    /* The masks as bands: nq = 3, nk = 5. */
    const fa_key_window bottom_right = fa_mask_window(FA_MASK_CAUSAL_BOTTOM_RIGHT, 3, 5);
    FA_EXPECT(t, bottom_right.offset == 2 && bottom_right.left < 0 && bottom_right.right == 0,
              "bottom-right causal is the band (-1, 0) about diagonal i + nk - nq");
    /* Rows 0..3 of a causal top-left 8 x 8 problem and key tiles of 4: keys 0..3 are seen
     * by some row (row 3 sees 0..3) and key 0 by all of them; keys 4..7 by none. */
    const fa_tile_keys top =
        fa_window_tile_keys(fa_mask_window(FA_MASK_CAUSAL_TOP_LEFT, 8, 8), 0, 4, 8);
    FA_EXPECT(t, top.any.begin == 0 && top.any.end == 4 && top.all.begin == 0 && top.all.end == 1,
              "causal 8 x 8, rows 0..3: any keys [%lld, %lld), all [%lld, %lld)",
              (long long)top.any.begin, (long long)top.any.end, (long long)top.all.begin,
              (long long)top.all.end);
    /* A window's extents of nq + nk and more, up to INT64_MAX, are unbounded: every row of
     * 100 x 100 sees every key (i + offset + right + 1 would overflow otherwise). */
    int wrong = 0;
    static const int64_t HUGE_EXTENTS[] = {200, INT64_MAX - 1, INT64_MAX};
    for (int e = 0; e < FA_COUNT_OF(HUGE_EXTENTS); ++e)
        for (int64_t i = 0; i < 100; ++i) {
            const int64_t x = HUGE_EXTENTS[e];
            const fa_key_range both = fa_window_key_range(fa_sliding_window(x, x, 100, 100), i, 100);
            const fa_key_range left = fa_window_key_range(fa_sliding_window(x, 0, 100, 100), i, 100);
            const fa_key_range right = fa_window_key_range(fa_sliding_window(0, x, 100, 100), i, 100);
            wrong += both.begin != 0 || both.end != 100 || left.begin != 0 || left.end != i + 1 ||
                     right.begin != i || right.end != 100;
        }
    FA_EXPECT(t, wrong == 0, "%d rows of windows with huge extents are not the unbounded ones", wrong);
}

/** Overlap, checked products and the argument checks, at their boundaries. */
static void test_bytes(fa_tests *t)
{
    char buffer[64] = {0};
    FA_EXPECT(t, fa_ranges_overlap(buffer, 16, buffer + 15, 16) &&
                     !fa_ranges_overlap(buffer, 16, buffer + 16, 16) &&
                     fa_ranges_overlap(buffer + 15, 16, buffer, 16) &&
                     !fa_ranges_overlap(buffer + 16, 16, buffer, 16),
              "ranges sharing one byte overlap, adjacent ones do not, in both orders");
    FA_EXPECT(t, !fa_ranges_overlap(NULL, 16, buffer, 16) && !fa_ranges_overlap(buffer, 0, buffer, 16),
              "NULL and empty ranges overlap nothing");
    const void *top = (const void *)(UINTPTR_MAX - 7);
    FA_EXPECT(t, !fa_ranges_overlap(top, 8, buffer, 16), "a range at the top of memory does not wrap");
    FA_EXPECT(t, fa_is_aligned(buffer + 0, 1) && fa_is_aligned(NULL, 16), "alignment of NULL and bytes");

    FA_EXPECT(t, fa_mul_within(3, 5, 15) == 15 && fa_mul_within(3, 5, 14) == -1,
              "the product at the limit passes, one over is refused");
    FA_EXPECT(t, fa_mul_within(INT64_MAX, 2, INT64_MAX) == -1 && fa_mul_within(0, INT64_MAX, 0) == 0,
              "no overflow on the way; zero times anything is zero");
    const int64_t most = INT64_MAX / 4;
    FA_EXPECT(t, fa_require_elements("op", "n", most, 4) == FA_OK,
              "the largest count whose bytes fit passes");
    FA_EXPECT(t, fa_require_elements("op", "n", most + 1, 4) == FA_ERR_OVERFLOW &&
                     strstr(fa_last_error(), "op: n = ") != NULL,
              "one more is refused, naming it: %s", fa_last_error());
    FA_EXPECT(t, fa_require_size("op", "rows", 0) == FA_OK &&
                     fa_require_size("op", "rows", -1) == FA_ERR_INVALID_SIZE,
              "sizes: 0 passes, -1 is refused");
    FA_EXPECT(t, fa_require_array("op", "x", NULL, 0, 16) == FA_OK &&
                     fa_require_array("op", "x", NULL, 1, 16) == FA_ERR_NULL_POINTER &&
                     fa_require_array("op", "x", (const void *)(uintptr_t)32, 1, 16) == FA_OK &&
                     fa_require_array("op", "x", (const void *)(uintptr_t)36, 1, 16) == FA_ERR_MISALIGNED,
              "arrays: NULL only when empty, aligned wherever given");
    FA_EXPECT(t, fa_require_disjoint("op", "out", buffer, 8, "x", buffer + 7, 8) == FA_ERR_INVALID_ARGUMENT &&
                     fa_require_disjoint("op", "out", buffer, 8, "x", buffer + 8, 8) == FA_OK,
              "an output sharing a byte with an input is refused");
}

/** Every stage's driver flags: the course map decides what each stage accepts. */
static void test_stage_flags(fa_tests *t)
{
    for (int stage = 1; stage <= FA_STAGE_COUNT; stage++) {
        fa_stage_request request;
        char *other[] = {"driver", "--milestone", stage == 1 ? "25" : "1", NULL};
        FA_EXPECT(t, fa_stage_parse(3, other, stage, &request) == FA_CLI_ERROR,
                  "stage %d refuses a milestone of another stage", stage);
        char *plain[] = {"driver", "--impl", "learner", "--seed", "7", NULL};
        FA_EXPECT(t, fa_stage_parse(5, plain, stage, &request) == FA_CLI_OK &&
                         request.impl == FA_STAGE_IMPL_LEARNER && request.run.seed == 7 &&
                         request.run.problem.given == 0,
                  "stage %d takes --impl and --seed", stage);
    }
    fa_stage_request request;
    char *attention[] = {"stage03", "--nq", "100", "--nk", "37", "--d", "64", "--mask", "causal", NULL};
    FA_EXPECT(t, fa_stage_parse(9, attention, 3, &request) == FA_CLI_OK &&
                     request.run.problem.nq == 100 && request.run.problem.nk == 37 &&
                     request.run.problem.d == 64 &&
                     request.run.problem.mask == FA_MASK_CAUSAL_TOP_LEFT &&
                     fa_problem_get(&request.run.problem, FA_PROBLEM_BATCH, 5) == 5,
              "stage 03 reads an attention problem; a flag not given keeps the default");
    char *version[] = {"stage02", "--milestone", "7", "--version", "4", NULL};
    FA_EXPECT(t, fa_stage_parse(5, version, 2, &request) == FA_CLI_OK && request.run.version == 4,
              "M7 has four versions");
    char *too_far[] = {"stage02", "--milestone", "7", "--version", "5", NULL};
    FA_EXPECT(t, fa_stage_parse(5, too_far, 2, &request) == FA_CLI_ERROR, "M7 has no version 5");
    char *window[] = {"stage07", "--mask", "window", "--window-left", "17", "--nq", "30", NULL};
    FA_EXPECT(t, fa_stage_parse(7, window, 7, &request) == FA_CLI_OK &&
                     request.run.problem.mask == FA_MASK_WINDOW &&
                     request.run.problem.window_left == 17 && request.run.problem.window_right == -1,
              "stage 07 reads a window; the side not given is unbounded");
    char *unbounded[] = {"stage07", "--mask", "window", "--window-right", "-1", NULL};
    FA_EXPECT(t, fa_stage_parse(5, unbounded, 7, &request) == FA_CLI_OK &&
                     fa_problem_has(&request.run.problem, FA_PROBLEM_WINDOW_RIGHT) &&
                     request.run.problem.window_right == -1,
              "an extent of -1 is given, not a missing flag");
    char *no_window[] = {"stage07", "--window-left", "3", NULL};
    FA_EXPECT(t, fa_stage_parse(3, no_window, 7, &request) == FA_CLI_ERROR,
              "an extent without --mask window is refused");
    char *below[] = {"stage07", "--mask", "window", "--window-left", "-2", NULL};
    FA_EXPECT(t, fa_stage_parse(5, below, 7, &request) == FA_CLI_ERROR, "an extent is at least -1");
    char *no_windows_here[] = {"stage03", "--mask", "window", NULL};
    FA_EXPECT(t, fa_stage_parse(3, no_windows_here, 3, &request) == FA_CLI_ERROR,
              "stage 03 offers no window");
    char *zero_d[] = {"stage03", "--d", "0", NULL};
    FA_EXPECT(t, fa_stage_parse(3, zero_d, 3, &request) == FA_CLI_ERROR, "--d is at least 1");
}

/** The message of a milestone still marked FA_TODO names it and where to write it. */
static void test_todo_message(fa_tests *t)
{
    FA_EXPECT(t, fa_todo_fail(13, 0, "learner/online.cu") == FA_ERR_NOT_IMPLEMENTED &&
                     strstr(fa_last_error(), "M13 running max is not implemented yet") &&
                     strstr(fa_last_error(), "learner/online.cu") &&
                     strstr(fa_last_error(), "FA_TODO(13)"),
              "%s", fa_last_error());
    FA_EXPECT(t, fa_todo_return_fail(24, "learner/validate.c") == FA_ERR_NOT_IMPLEMENTED &&
                     strstr(fa_last_error(), "M24 flash attention launcher is not implemented") &&
                     strstr(fa_last_error(), "FA_TODO_RETURN(24)"),
              "%s", fa_last_error());
    FA_EXPECT(t, fa_todo_fail(7, 3, "learner/matmul_3.cu") == FA_ERR_NOT_IMPLEMENTED &&
                     strstr(fa_last_error(), "M7 matmul, version 3") &&
                     strstr(fa_last_error(), "FA_TODO_VERSION(7, 3)"),
              "%s", fa_last_error());
}

int main(void)
{
    fa_tests t = {0};
    test_rng_reference_sequence(&t);
    test_rng_determinism(&t);
    test_rng_streams(&t);
    test_rng_uniform_and_normal(&t);
    test_rng_int(&t);
    test_fill(&t);
    test_bf16_rounding(&t);
    test_fp16_rounding(&t);
    test_round_trips(&t);
    test_rounding_oracle(&t);
    test_dtype_helpers(&t);
    test_compensated_sums(&t);
    test_reductions(&t);
    test_check_planted_error(&t);
    test_check_nonfinite_and_unwritten(&t);
    test_check_exact_and_special(&t);
    test_stats(&t);
    test_cli_accepts(&t);
    test_cli_rejects(&t);
    test_harness_verdicts(&t);
    test_cases_and_failures(&t);
    test_detail_append(&t);
    test_reporter_needs_an_expectation(&t);
    test_rerun_line(&t);
    test_max_nan(&t);
    test_key_ranges(&t);
    test_key_windows(&t);
    test_bytes(&t);
    test_stage_flags(&t);
    test_todo_message(&t);
    test_stage_test_helpers(&t);
    test_stage_helpers(&t);
    return fa_tests_finish(&t);
}
