/**
 * @file fixtures.h
 * @brief Hand-computed cases of stage 04, and the patterns of its random rows.
 *
 * Online softmax cannot be exact in general: exp of a non-zero difference is
 * irrational. The fixtures are therefore of two kinds. Rows whose differences
 * x_j - m are all 0 or -inf (equal entries, masked entries, empty rows) make
 * every weight 1 or 0 and every correction factor 1 or 0: all their
 * expected values except lse are exact in fp32 and compare bit for bit. The
 * worked example of the lesson (and its mirror with the max in the first
 * chunk) involves e^-1, e^-2, e^-3: its expected values are written out to 17
 * digits and judged by the bound. One row holds a NaN: from its chunk on,
 * every expected value of the row is NaN (the course's max keeps NaN), and a
 * NaN is judged by being NaN. The arithmetic is in fixtures.c beside each
 * case.
 */
#ifndef ONLINE_FIXTURES_H
#define ONLINE_FIXTURES_H

#include <stdbool.h>
#include <stdint.h>

#include "fa_attention_ref.h"
#include "fa_rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Sizes of the written-out fixtures. */
enum {
    ONLINE_FIXTURE_MAX_ENTRIES = 8,
    ONLINE_FIXTURE_MAX_CHUNKS = 4,
    ONLINE_ATTN_FIXTURE_MAX_ROWS = 3,
    ONLINE_ATTN_FIXTURE_MAX_KEYS = 4,
    ONLINE_ATTN_FIXTURE_MAX_DIM = 2
};

/** One row with its expected traces (after each chunk) and its softmax. */
typedef struct online_fixture {
    const char *name;                             /**< what it exercises */
    int64_t n;                                    /**< entries, 0 .. ONLINE_FIXTURE_MAX_ENTRIES */
    int64_t chunk;                                /**< entries per chunk of the traces */
    float x[ONLINE_FIXTURE_MAX_ENTRIES];          /**< the row; -inf = masked */
    float v[ONLINE_FIXTURE_MAX_ENTRIES];          /**< M16 values (NaN where masked: never read) */
    double max[ONLINE_FIXTURE_MAX_CHUNKS];        /**< m_t */
    double correction[ONLINE_FIXTURE_MAX_CHUNKS]; /**< alpha_t */
    double sum[ONLINE_FIXTURE_MAX_CHUNKS];        /**< l_t */
    double output[ONLINE_FIXTURE_MAX_CHUNKS];     /**< o_t */
    double p[ONLINE_FIXTURE_MAX_ENTRIES];         /**< softmax of the row */
    double lse;                                   /**< m + ln l (-inf for no allowed entry) */
    bool exact;                                   /**< all but lse exact in fp32: bit for bit */
} online_fixture;

extern const online_fixture online_fixtures[]; /**< the row cases */
extern const int online_fixture_count;         /**< entries of online_fixtures */

/** Entries of one written-out attention tensor. */
enum {
    ONLINE_ATTN_FIXTURE_Q = ONLINE_ATTN_FIXTURE_MAX_ROWS * ONLINE_ATTN_FIXTURE_MAX_DIM,
    ONLINE_ATTN_FIXTURE_KV = ONLINE_ATTN_FIXTURE_MAX_KEYS * ONLINE_ATTN_FIXTURE_MAX_DIM
};

/** One attention problem (batch 1, one head) with its expected output. */
typedef struct online_attn_fixture {
    const char *name;                           /**< what it exercises */
    int64_t nq, nk, head_dim;                   /**< shapes */
    fa_mask mask;                               /**< which keys each row sees */
    int64_t chunk;                              /**< keys per chunk */
    float scale;                                /**< multiplies q.k */
    float q[ONLINE_ATTN_FIXTURE_Q];             /**< [nq][head_dim] */
    float k[ONLINE_ATTN_FIXTURE_KV];            /**< [nk][head_dim] */
    float v[ONLINE_ATTN_FIXTURE_KV];            /**< [nk][head_dim] */
    double o[ONLINE_ATTN_FIXTURE_Q];            /**< [nq][head_dim] */
    double lse[ONLINE_ATTN_FIXTURE_MAX_ROWS];   /**< [nq] */
    bool exact;                                 /**< o exact in fp32: compare bit for bit */
} online_attn_fixture;

extern const online_attn_fixture online_attn_fixtures[]; /**< the attention cases */
extern const int online_attn_fixture_count;              /**< entries of online_attn_fixtures */

/** How a random row is made (the adversarial inputs of \ref numerics). */
typedef enum online_row_pattern {
    ONLINE_ROW_GAUSSIAN, /**< normal(0, spread^2) */
    ONLINE_ROW_RISING,   /**< from -spread up to spread: the max rises in every chunk */
    ONLINE_ROW_FALLING,  /**< decreasing: the max is the first entry and never rises */
    ONLINE_ROW_LATE_MAX, /**< gaussian, the last entry 20 spreads above the rest */
    ONLINE_ROW_MASKED,   /**< gaussian, a quarter -inf, the first and every third chunk all -inf */
    ONLINE_ROW_EXTREME,  /**< a quarter of the entries +-1e4, the rest gaussian */
    ONLINE_ROW_DYADIC,   /**< multiples of 1/64 in [-16, 16]: adding 1024 is exact (shift tests) */
    ONLINE_ROW_PATTERN_COUNT
} online_row_pattern;

/** Lower-case name of @p pattern, e.g. "rising". */
const char *online_row_pattern_name(online_row_pattern pattern);

/**
 * Fills x[0..n) with @p pattern; @p chunk says where the chunks of the
 * masked pattern start (the kernel's chunk: the trace's, or a block's
 * threads * SOFTMAX_ONLINE_CHUNK for the one-pass softmax).
 */
void online_fill_row(float *x, int64_t n, int64_t chunk, online_row_pattern pattern,
                     double spread, fa_rng *rng);

/** The shift of the shift-invariance tests: exact on ::ONLINE_ROW_DYADIC rows. */
#define ONLINE_EXACT_SHIFT 1024.0f

#ifdef __cplusplus
}
#endif

#endif /* ONLINE_FIXTURES_H */
