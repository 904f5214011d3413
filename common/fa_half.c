/**
 * @file fa_half.c
 * @brief bf16 and fp16 conversions by integer manipulation of the fp32 bits.
 *
 * Round to nearest even on bit patterns: to drop the low k bits of a magnitude,
 * add (2^(k-1) - 1) plus the lowest kept bit, then truncate. Below the halfway
 * point the sum never carries into the kept bits; above it, it always does; at
 * exactly halfway it carries only when the kept part is odd, which rounds the
 * tie to the even neighbour. A carry out of the mantissa increments the
 * exponent, which is also correct (up to the next binade, or to infinity).
 */
#include "fa_half.h"

#include <math.h>
#include <string.h>

enum {
    F32_SIGN = 0x80000000u,
    F32_ABS_MASK = 0x7FFFFFFFu,
    F32_INF = 0x7F800000u,
    F32_MANTISSA_BITS = 23,
    F32_EXPONENT_BIAS = 127,

    BF16_DROPPED_BITS = 16,      /* bf16 is the top half of an fp32 */
    BF16_QUIET_BIT = 0x0040u,

    F16_SIGN = 0x8000u,
    F16_INF = 0x7C00u,
    F16_MANTISSA_BITS = 10,
    F16_MANTISSA_MASK = 0x03FFu,
    F16_QUIET_BIT = 0x0200u,
    F16_EXPONENT_MAX = 0x1F,
    F16_EXPONENT_BIAS = 15,
    F16_DROPPED_BITS = F32_MANTISSA_BITS - F16_MANTISSA_BITS,
    /* 2^-24: the fp16 subnormal quantum (its exponent is 1 - bias - 10). */
    F16_SUBNORMAL_EXPONENT = 1 - F16_EXPONENT_BIAS - F16_MANTISSA_BITS
};
_Static_assert(F16_DROPPED_BITS == 13, "fp16 keeps 10 of fp32's 23 mantissa bits");
_Static_assert(F16_SUBNORMAL_EXPONENT == -24, "smallest fp16 subnormal is 2^-24");

/* fp32 patterns of the fp16 thresholds. */
static const uint32_t F32_BITS_OF_65520 = 0x477FF000u;    /* 65504 + half an ulp: ties to inf */
static const uint32_t F32_BITS_OF_2_POW_M14 = 0x38800000u; /* smallest fp16 normal */

static uint32_t float_bits(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static float bits_float(uint32_t b)
{
    float x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/** Shifts @p magnitude right by @p shift (1..31 bits) with round to nearest even. */
static uint32_t shift_right_rne(uint32_t magnitude, int shift)
{
    const uint32_t kept_lsb = (magnitude >> shift) & 1u;
    const uint32_t half_minus_one = (1u << (shift - 1)) - 1u;
    return (uint32_t)(((uint64_t)magnitude + half_minus_one + kept_lsb) >> shift);
}

int fa_dtype_size(fa_dtype dtype)
{
    switch (dtype) {
    case FA_F32: return 4;
    case FA_BF16: return 2;
    case FA_F16: return 2;
    }
    return 0;
}

const char *fa_dtype_name(fa_dtype dtype)
{
    switch (dtype) {
    case FA_F32: return "fp32";
    case FA_BF16: return "bf16";
    case FA_F16: return "fp16";
    }
    return "invalid dtype";
}

double fa_dtype_unit_roundoff(fa_dtype dtype)
{
    /* Half the distance from 1 to the next number: 2^-p for p significand bits. */
    switch (dtype) {
    case FA_F32: return ldexp(1.0, -24);
    case FA_BF16: return ldexp(1.0, -8);
    case FA_F16: return ldexp(1.0, -11);
    }
    return NAN;
}

uint16_t fa_float_to_bf16(float x)
{
    const uint32_t b = float_bits(x);
    if ((b & F32_ABS_MASK) > F32_INF) /* NaN: keep sign and top payload, force quiet */
        return (uint16_t)((b >> BF16_DROPPED_BITS) | BF16_QUIET_BIT);
    /* Rounding the magnitude carries at most into the infinity pattern
     * (FLT_MAX becomes 0x7F80), never into the sign. */
    const uint16_t sign = (uint16_t)((b & F32_SIGN) >> BF16_DROPPED_BITS);
    return (uint16_t)(sign | shift_right_rne(b & F32_ABS_MASK, BF16_DROPPED_BITS));
}

float fa_bf16_to_float(uint16_t bits) { return bits_float((uint32_t)bits << BF16_DROPPED_BITS); }

uint16_t fa_float_to_fp16(float x)
{
    const uint32_t b = float_bits(x);
    const uint16_t sign = (uint16_t)((b >> 16) & F16_SIGN);
    const uint32_t a = b & F32_ABS_MASK;

    if (a > F32_INF) /* NaN: keep sign and top payload, force quiet */
        return (uint16_t)(sign | F16_INF | F16_QUIET_BIT | ((a >> F16_DROPPED_BITS) & F16_MANTISSA_MASK));
    if (a >= F32_BITS_OF_65520) /* includes +-inf */
        return (uint16_t)(sign | F16_INF);

    if (a >= F32_BITS_OF_2_POW_M14) {
        /* Normal: rebias the exponent (subtract (127 - 15) << 23) and round off
         * 13 mantissa bits; a carry may reach 0x7C00 only from >= 65520, handled above. */
        const uint32_t rebias = (uint32_t)(F32_EXPONENT_BIAS - F16_EXPONENT_BIAS) << F32_MANTISSA_BITS;
        return (uint16_t)(sign | shift_right_rne(a - rebias, F16_DROPPED_BITS));
    }

    /* Subnormal or zero: the result is round(|x| / 2^-24) in units of 2^-24.
     * |x| = significand * 2^(e - 127 - 23) with the implicit bit restored, so
     * the count of 2^-24 units is significand >> (126 - e). A carry to 0x400
     * is exactly the smallest normal, 2^-14. */
    const int biased_exponent = (int)(a >> F32_MANTISSA_BITS);
    const int shift = (F32_EXPONENT_BIAS - 1) - biased_exponent;
    const int max_shift = F32_MANTISSA_BITS + 1; /* beyond it |x| < 2^-25 rounds to zero */
    if (shift > max_shift) /* also fp32 zeros and subnormals */
        return sign;
    const uint32_t significand = (a & ((1u << F32_MANTISSA_BITS) - 1u)) | (1u << F32_MANTISSA_BITS);
    return (uint16_t)(sign | shift_right_rne(significand, shift));
}

float fa_fp16_to_float(uint16_t bits)
{
    const uint32_t sign = (uint32_t)(bits & F16_SIGN) << 16;
    const int exponent = (bits >> F16_MANTISSA_BITS) & F16_EXPONENT_MAX;
    const uint32_t mantissa = bits & F16_MANTISSA_MASK;

    if (exponent == F16_EXPONENT_MAX) /* inf or NaN, payload kept */
        return bits_float(sign | F32_INF | (mantissa << F16_DROPPED_BITS));
    if (exponent == 0) {
        /* Zero or subnormal: mantissa * 2^-24, exact in fp32 (at most 10 bits). */
        return bits_float(sign | float_bits(ldexpf((float)mantissa, F16_SUBNORMAL_EXPONENT)));
    }
    const uint32_t f32_exponent = (uint32_t)(exponent - F16_EXPONENT_BIAS + F32_EXPONENT_BIAS);
    return bits_float(sign | (f32_exponent << F32_MANTISSA_BITS) | (mantissa << F16_DROPPED_BITS));
}

float fa_round_to(fa_dtype dtype, float x)
{
    switch (dtype) {
    case FA_F32: return x;
    case FA_BF16: return fa_bf16_to_float(fa_float_to_bf16(x));
    case FA_F16: return fa_fp16_to_float(fa_float_to_fp16(x));
    }
    return NAN;
}

float fa_load(const void *data, fa_dtype dtype, int64_t i)
{
    switch (dtype) {
    case FA_F32: return ((const float *)data)[i];
    case FA_BF16: return fa_bf16_to_float(((const uint16_t *)data)[i]);
    case FA_F16: return fa_fp16_to_float(((const uint16_t *)data)[i]);
    }
    return NAN;
}

void fa_store(void *data, fa_dtype dtype, int64_t i, float x)
{
    switch (dtype) {
    case FA_F32: ((float *)data)[i] = x; break;
    case FA_BF16: ((uint16_t *)data)[i] = fa_float_to_bf16(x); break;
    case FA_F16: ((uint16_t *)data)[i] = fa_float_to_fp16(x); break;
    }
}
