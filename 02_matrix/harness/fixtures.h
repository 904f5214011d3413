/**
 * @file fixtures.h
 * @brief Hand-computable cases of stage 02, exact in fp32 and in bf16.
 *
 * Every value is a small integer or a power of two and every partial sum
 * stays below 2^24, so any summation order (and the tensor cores'
 * truncation) gives the exact answer: the checks compare these bit for bit.
 */
#ifndef FA_MATRIX_FIXTURES_H
#define FA_MATRIX_FIXTURES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** x . y with the answer worked out by hand. */
typedef struct dot_fixture {
    const char *name;
    int64_t n;
    const float *x;  /**< [n] (NULL when n = 0) */
    const float *y;  /**< [n] */
    float expected;
} dot_fixture;

extern const dot_fixture dot_fixtures[];
extern const int dot_fixture_count;

/** Length of the long dot fixture: a whole number of chunks for no dtype. */
enum { DOT_LONG_FIXTURE_N = 1000003 };
/** Its exact value, worked out in fixtures.c. */
#define DOT_LONG_FIXTURE_SUM 1000000.0f

/** Fills the long fixture: x_i = (i mod 4) - 1, y_i = 2 for i < n. */
void dot_long_fixture(float *x, float *y, int64_t n);

/** C = A * B with the answer worked out by hand. */
typedef struct matmul_fixture {
    const char *name;
    int64_t m, n, k;
    const float *a;  /**< [m][k] row-major (NULL when empty) */
    const float *b;  /**< [k][n] row-major, the NN form; checks transpose it for NT */
    const float *c;  /**< [m][n] row-major, exact (NULL when empty) */
} matmul_fixture;

extern const matmul_fixture matmul_fixtures[];
extern const int matmul_fixture_count;

/** out = in^T with the answer written out. */
typedef struct transpose_fixture {
    const char *name;
    int64_t rows, cols;
    const float *in;   /**< [rows][cols] */
    const float *out;  /**< [cols][rows] */
} transpose_fixture;

extern const transpose_fixture transpose_fixtures[];
extern const int transpose_fixture_count;

#ifdef __cplusplus
}
#endif

#endif /* FA_MATRIX_FIXTURES_H */
