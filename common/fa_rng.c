/**
 * @file fa_rng.c
 * @brief xoshiro256** (Blackman and Vigna) seeded through splitmix64, and the fill patterns.
 */
#include "fa_rng.h"

#include <math.h>

/** splitmix64's increment: the golden ratio as a 64-bit fraction. */
#define SPLITMIX_GAMMA UINT64_C(0x9E3779B97F4A7C15)

/** Mixed into the stream number so that stream 0 does not start splitmix at the bare seed. */
#define STREAM_SALT UINT64_C(0xD1B54A32D192ED03)

/** 2^-53: turns the top 53 bits of a draw into a double in [0, 1). */
#define TWO_POW_MINUS_53 (1.0 / 9007199254740992.0)

/** 2^-24: turns the top 24 bits of a draw into a float in [0, 1). */
#define TWO_POW_MINUS_24 (1.0f / 16777216.0f)

static const double TWO_PI = 6.283185307179586476925286766559;

/* The adversarial mix, in 64ths of the elements (the rest are normal(0, scale^2)). */
enum {
    ADVERSARIAL_BUCKETS = 64,
    ADVERSARIAL_LARGE = 2,  /**< +-1e3 * scale * [1, 2) */
    ADVERSARIAL_TINY = 2,   /**< +-1e-30 * [1, 2): normal in fp32 and bf16, zero in fp16 */
    ADVERSARIAL_ZERO = 4    /**< +0.0 or -0.0 */
};
_Static_assert(ADVERSARIAL_LARGE + ADVERSARIAL_TINY + ADVERSARIAL_ZERO < ADVERSARIAL_BUCKETS,
               "most adversarial elements must stay normal draws");
static const double ADVERSARIAL_LARGE_FACTOR = 1e3;

/** 2^24: the largest magnitude up to which every integer is exact in fp32. */
static const double FLOAT_EXACT_INT_LIMIT = 16777216.0;
static const double ADVERSARIAL_TINY_VALUE = 1e-30;

/** splitmix64's finaliser: a bijection of 64-bit words with good avalanche. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint64_t splitmix64_next(uint64_t *state)
{
    *state += SPLITMIX_GAMMA;
    return mix64(*state);
}

static uint64_t rotate_left(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void fa_rng_seed(fa_rng *rng, uint64_t seed, uint64_t stream)
{
    /* mix64 is a bijection, so two streams of one seed start splitmix at
     * different, unrelated points; splitmix64's outputs are a bijection of its
     * state too, so the four words are never all zero (xoshiro's one bad state). */
    uint64_t state = seed ^ mix64(stream ^ STREAM_SALT);
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64_next(&state);
}

uint64_t fa_rng_next(fa_rng *rng)
{
    uint64_t *s = rng->s;
    const uint64_t result = rotate_left(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotate_left(s[3], 45);
    return result;
}

double fa_rng_uniform(fa_rng *rng)
{
    /* The top bits of xoshiro256** are its best ones. */
    return (double)(fa_rng_next(rng) >> 11) * TWO_POW_MINUS_53;
}

double fa_rng_normal(fa_rng *rng)
{
    /* 1 - u lies in (0, 1], so the logarithm is finite. */
    const double u1 = 1.0 - fa_rng_uniform(rng);
    const double u2 = fa_rng_uniform(rng);
    return sqrt(-2.0 * log(u1)) * cos(TWO_PI * u2);
}

int64_t fa_rng_int(fa_rng *rng, int64_t lo, int64_t hi)
{
    if (hi <= lo) /* a single value (lo > hi breaks the contract and also gives lo) */
        return lo;
    /* Width minus one, computed in unsigned arithmetic so that the full int64
     * range does not overflow. */
    const uint64_t span = (uint64_t)hi - (uint64_t)lo;
    uint64_t offset;
    if (span == UINT64_MAX) {
        offset = fa_rng_next(rng);
    } else {
        /* Rejection: draws below 2^64 mod width would make the low residues
         * more likely, so they are redrawn; fewer than half are rejected. */
        const uint64_t width = span + 1;
        const uint64_t threshold = (0 - width) % width;
        uint64_t draw;
        do {
            draw = fa_rng_next(rng);
        } while (draw < threshold);
        offset = draw % width;
    }
    /* lo + offset <= hi fits int64; the unsigned sum wraps back into range. */
    return (int64_t)((uint64_t)lo + offset);
}

/** Uniform float in [0, 1) on a grid of 2^-24, so that 2u - 1 is exact in fp32. */
static float uniform_float(fa_rng *rng) { return (float)(fa_rng_next(rng) >> 40) * TWO_POW_MINUS_24; }

static double random_sign(fa_rng *rng) { return (fa_rng_next(rng) >> 63) ? -1.0 : 1.0; }

static float adversarial_value(fa_rng *rng, double scale)
{
    const int64_t bucket = fa_rng_int(rng, 0, ADVERSARIAL_BUCKETS - 1);
    if (bucket < ADVERSARIAL_LARGE)
        return (float)(random_sign(rng) * ADVERSARIAL_LARGE_FACTOR * scale *
                       (1.0 + fa_rng_uniform(rng)));
    if (bucket < ADVERSARIAL_LARGE + ADVERSARIAL_TINY)
        return (float)(random_sign(rng) * ADVERSARIAL_TINY_VALUE * (1.0 + fa_rng_uniform(rng)));
    if (bucket < ADVERSARIAL_LARGE + ADVERSARIAL_TINY + ADVERSARIAL_ZERO)
        return (float)(random_sign(rng) * 0.0);
    return (float)(scale * fa_rng_normal(rng));
}

/*
 * FA_FILL_UNIFORM: s * (2u - 1) with s = (float)scale and u on the 2^-24 grid;
 * the largest value s * (1 - 2^-23) rounds below s, so the range is [-s, s).
 * FA_FILL_SMALL_INT: integers in [-k, k], k = floor(scale) clamped to
 * [0, 2^24] so that every value is exact in fp32.
 * FA_FILL_ADVERSARIAL, per element: 2/64 are +-1e3 * scale * [1, 2), 2/64 are
 * +-1e-30 * [1, 2), 4/64 are +0.0 or -0.0, the rest normal(0, scale^2).
 */
void fa_fill(float *x, int64_t n, fa_fill_kind kind, double scale, fa_rng *rng)
{
    const float scale_f = (float)scale;
    const int64_t int_bound = (int64_t)fmin(fmax(floor(scale), 0.0), FLOAT_EXACT_INT_LIMIT);
    for (int64_t i = 0; i < n; i++) {
        switch (kind) {
        case FA_FILL_GAUSSIAN: x[i] = (float)(scale * fa_rng_normal(rng)); break;
        case FA_FILL_UNIFORM: x[i] = scale_f * (2.0f * uniform_float(rng) - 1.0f); break;
        case FA_FILL_SMALL_INT: x[i] = (float)fa_rng_int(rng, -int_bound, int_bound); break;
        case FA_FILL_ADVERSARIAL: x[i] = adversarial_value(rng, scale); break;
        }
    }
}
