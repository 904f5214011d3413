/**
 * @file fa_rng.h
 * @brief Seeded random numbers and fill patterns, with no hidden global state.
 *
 * The generator is xoshiro256** seeded through splitmix64 from (seed, stream):
 * one ::fa_rng is passed explicitly to every function that draws, so a test
 * reproduces exactly from its printed seed, and two streams of one seed are
 * independent (q, k and v each get their own stream).
 */
#ifndef FA_RNG_H
#define FA_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Generator state. Initialise with fa_rng_seed(). */
typedef struct fa_rng {
    uint64_t s[4];
} fa_rng;

/** Seeds @p rng from a seed and a stream number (streams of one seed are independent). */
void fa_rng_seed(fa_rng *rng, uint64_t seed, uint64_t stream);

/** Next 64 random bits. */
uint64_t fa_rng_next(fa_rng *rng);

/** Uniform double in [0, 1) with 53 random bits. */
double fa_rng_uniform(fa_rng *rng);

/** Standard normal double (Box-Muller; the spare value is not cached, so state stays in s[]). */
double fa_rng_normal(fa_rng *rng);

/** Uniform integer in [lo, hi] (inclusive). Requires lo <= hi. */
int64_t fa_rng_int(fa_rng *rng, int64_t lo, int64_t hi);

/** What fa_fill() writes. */
typedef enum fa_fill_kind {
    FA_FILL_GAUSSIAN,      /**< normal(0, scale^2) */
    FA_FILL_UNIFORM,       /**< uniform in [-scale, scale) */
    FA_FILL_SMALL_INT,     /**< integers in [-scale, scale], exact in every dtype for scale <= 8 */
    FA_FILL_ADVERSARIAL    /**< mixed magnitudes: mostly normal, some 1e3*scale, some tiny, some exact zeros */
} fa_fill_kind;

/** Fills x[0..n) with values of @p kind; @p scale sets the spread (see ::fa_fill_kind). */
void fa_fill(float *x, int64_t n, fa_fill_kind kind, double scale, fa_rng *rng);

#ifdef __cplusplus
}
#endif

#endif /* FA_RNG_H */
