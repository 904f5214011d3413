/**
 * @file fixtures.h
 * @brief Hand-computed cases of stage 05: small integer inputs whose scores,
 *        maxima, weights, sums, outputs and lse are written out (fixtures.c
 *        shows the arithmetic in comments).
 *
 * Every fixture uses the scale FA_LN2_F = fp32(ln 2), for which
 * c = scale * log2(e) rounds to exactly 1.0f: the blocks' weights
 * exp2(s c - m c) are then exact powers of two of integer score gaps, and
 * the sums small dyadic numbers, so every intermediate value is exact in
 * fp32 (and the integer inputs exact in bf16 and fp16). Some fixtures depend
 * on the version's tile sizes (nq = BR + 1, nk = BC + 4, ...); each says
 * which versions it runs in.
 *
 * The random inputs of the checks and tests are made here too
 * (tile_random_case()), so that both draw the same case from the same stream.
 */
#ifndef TILES_FIXTURES_H
#define TILES_FIXTURES_H

#include <stdbool.h>
#include <stdint.h>

#include "fa_math.h"
#include "fa_rng.h"
#include "fa_status.h"
#include "tiles.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A fixture made for one version: inputs and hand values, in the trace's layouts. */
typedef struct tile_fixture {
    int64_t heads, nq, nk, d;
    float *q, *k, *v;       /**< [heads][nq or nk][d] small integers (or NaN): exact in every dtype */
    float *scores;          /**< [heads][nq][T BC]: q . k, -inf past nk */
    float *max;             /**< [heads][nq][T]: the running max after each tile */
    float *weights;         /**< [heads][nq][T BC]: 2^(s - m), 0 past nk */
    float *alpha;           /**< [heads][nq][T]: 2^(m_old - m_new), 0 for tile 0 */
    float *sum;             /**< [heads][nq][T]: the running sum */
    double *o;              /**< [heads][nq][d] */
    double *lse;            /**< [heads][nq]: scale m + ln l */
} tile_fixture;

/** How many fixtures there are (indices 0 .. count - 1). */
extern const int tile_fixture_count;

/** Its name, as case names print it: "4x4 tile", "rise-in-tile-2", ... */
const char *tile_fixture_name(int index);

/** True when fixture @p index runs in version @p version (1 or 2). */
bool tile_fixture_runs(int index, int version);

/** Allocates and fills fixture @p index for version @p version (FA_ERR_OUT_OF_MEMORY, or FA_OK). */
fa_status tile_fixture_make(int index, int version, tile_fixture *out);

/** Frees the arrays of @p x and zeroes it. */
void tile_fixture_free(tile_fixture *x);

/* ---- the inputs of a case ---------------------------------------------------------------- */

/** A host problem and the arrays it points to. */
typedef struct tile_case {
    tile_problem problem; /**< q, k, v point to the arrays below */
    void *q, *k, *v;      /**< [heads][nq or nk][d] of problem.dtype */
} tile_case;

/** Zero-filled inputs of the given shape, scale 1 / sqrt(d) rounded to fp32 (FA_ERR_OUT_OF_MEMORY). */
fa_status tile_case_alloc(tile_case *c, fa_dtype dtype, int64_t heads, int64_t nq, int64_t nk,
                          int64_t d);

/** Frees the arrays of @p c and zeroes it (safe on a zeroed case). */
void tile_case_free(tile_case *c);

/** The inputs of fixture @p x stored in @p dtype (exact), with the fixtures' scale. */
fa_status tile_fixture_case(const tile_fixture *x, fa_dtype dtype, tile_case *c);

/** Where the maxima of a random case sit. */
typedef enum tile_max_pattern {
    TILE_MAX_ANYWHERE = 0,     /**< plain random scores */
    TILE_MAX_RISES_EVERY_TILE, /**< every key tile raises the max by 1: alpha < 1 at every step */
    TILE_MAX_IN_LAST_TILE,     /**< one late rise of 4 */
    TILE_MAX_PATTERNS
} tile_max_pattern;

/**
 * Random inputs of one problem whose scaled scores have standard deviation
 * about @p spread, maxima placed by @p pattern per key tile of @p version
 * (through the generators of fa_adversarial.h, which need
 * d >= FA_CASE_MIN_HEAD_DIM for their control dimensions; for smaller d,
 * plain normal q and k and any pattern is ignored), v normal(0, 1).
 */
fa_status tile_random_case(tile_case *c, int version, fa_dtype dtype, int64_t heads, int64_t nq,
                           int64_t nk, int64_t d, double spread, tile_max_pattern pattern,
                           fa_rng *rng);

#ifdef __cplusplus
}
#endif

#endif /* TILES_FIXTURES_H */
