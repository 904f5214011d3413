/**
 * @file fixtures.h
 * @brief Hand-computable cases of stage 01, with their expected outputs.
 *
 * Each fixture is either written out value by value, or a pattern whose every
 * element and every expected output follows from a formula you can check by
 * hand (the formula is in fixtures.c beside the pattern). Inputs are small
 * integers, halves and powers of two, so every elementwise result and every
 * partial sum of a row is exact in fp32: the expected values hold whatever
 * order a correct kernel adds in, and compare bit for bit (M3 excepted: exp
 * is not exact, so its fixtures carry exp(x) in double and are judged by the
 * bound of each variant).
 */
#ifndef PRIMITIVES_FIXTURES_H
#define PRIMITIVES_FIXTURES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** An M1 or M2 case. */
typedef struct elementwise_fixture {
    const char *name;          /**< what it exercises */
    int64_t n;                 /**< length */
    float alpha;               /**< M2: the scale (unused by M1) */
    const float *a;            /**< written-out first input (M2: x), or NULL: the pattern */
    const float *b;            /**< written-out second input (M1 only) */
    const float *expected;     /**< written-out output, or NULL with the pattern */
} elementwise_fixture;

extern const elementwise_fixture vector_add_fixtures[]; /**< M1 cases */
extern const int vector_add_fixture_count;              /**< entries of vector_add_fixtures */
extern const elementwise_fixture scale_array_fixtures[]; /**< M2 cases */
extern const int scale_array_fixture_count;              /**< entries of scale_array_fixtures */

/** Writes the n inputs and expected outputs of M1 case @p f. */
void vector_add_fixture_fill(const elementwise_fixture *f, float *a, float *b, float *expected);

/** Writes the n inputs and expected outputs of M2 case @p f (its scale is f->alpha). */
void scale_array_fixture_fill(const elementwise_fixture *f, float *x, float *expected);

/** An M3 case: inputs and exp of each in double (or the fp32 result where it overflows). */
typedef struct exp_fixture {
    const char *name;          /**< what it exercises */
    int64_t n;                 /**< length */
    const float *x;            /**< written-out inputs, or NULL: the sweep of [-87, 88] */
    const double *expected;    /**< written-out exp(x), or NULL with the sweep */
} exp_fixture;

extern const exp_fixture exp_fixtures[]; /**< M3 cases */
extern const int exp_fixture_count;      /**< entries of exp_fixtures */

/** The @p i-th of @p n points evenly spread over [-87, 88], the inputs whose exp is a normal float. */
float exp_sweep_x(int64_t i, int64_t n);

/** Writes the n inputs of M3 case @p f and their expected exp in double. */
void exp_fixture_fill(const exp_fixture *f, float *x, double *expected);

/** How the rows of an M4 or M5 case are made. */
typedef enum row_fixture_kind {
    ROW_FIXTURE_LITERAL,   /**< x and expected written out */
    ROW_FIXTURE_PATTERN,   /**< the op's pattern (see fixtures.c) */
    ROW_FIXTURE_NAN_LAST   /**< the pattern with a NaN in the last column of every odd row */
} row_fixture_kind;

/**
 * An M4 or M5 case: x is [rows][ld]; the ld - cols padding elements of each
 * row hold NaN, so a kernel that reads past a row's end gets a NaN result.
 */
typedef struct row_fixture {
    const char *name;          /**< what it exercises */
    row_fixture_kind kind;     /**< how x is made */
    int64_t rows;              /**< number of rows */
    int64_t cols;              /**< elements reduced per row */
    int64_t ld;                /**< row stride in elements, >= cols */
    const float *x;            /**< ROW_FIXTURE_LITERAL: [rows][ld] */
    const float *expected;     /**< ROW_FIXTURE_LITERAL: [rows] */
} row_fixture;

extern const row_fixture row_max_fixtures[]; /**< M4 cases */
extern const int row_max_fixture_count;      /**< entries of row_max_fixtures */
extern const row_fixture row_sum_fixtures[]; /**< M5 cases */
extern const int row_sum_fixture_count;      /**< entries of row_sum_fixtures */

/** Elements of x of case @p f, padding included: rows * ld. */
int64_t row_fixture_x_count(const row_fixture *f);

/** Writes x ([rows][ld]) and the expected row maxima ([rows]) of M4 case @p f. */
void row_max_fixture_fill(const row_fixture *f, float *x, float *expected);

/** Writes x ([rows][ld]) and the expected row sums ([rows]) of M5 case @p f. */
void row_sum_fixture_fill(const row_fixture *f, float *x, float *expected);

#ifdef __cplusplus
}
#endif

#endif /* PRIMITIVES_FIXTURES_H */
