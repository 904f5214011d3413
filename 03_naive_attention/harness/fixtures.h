/**
 * @file fixtures.h
 * @brief Hand-computable attention cases of stage 03, with the expected
 *        intermediate and final values of the whole pipeline.
 *
 * Each fixture is one attention problem written out value by value: the
 * inputs q, k, v and, computed by hand (the arithmetic is in fixtures.c
 * beside each case), the scores s (M9), the probabilities p and lse (M10),
 * and the output o (M11 and M12). So one case checks every milestone, and a
 * failure points at the first step that went wrong.
 *
 * Inputs are small integers, exact in fp32, bf16 and fp16, so every fixture
 * runs in all three dtypes with the same expected values. The expected values
 * are exact real numbers written in double (1/3, ln 2 + 1, e^-100 / (1 +
 * 3 e^-100)); test_stage03 checks them against the double reference. Where a
 * fixture is marked exact, s, p and o are fp32 numbers that an fp32 pipeline
 * reaches without rounding (uniform weights over a power of two of keys), and
 * the CPU model must hit them bit for bit.
 */
#ifndef NAIVE_ATTENTION_FIXTURES_H
#define NAIVE_ATTENTION_FIXTURES_H

#include <stdbool.h>
#include <stdint.h>

#include "attention.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One hand-computed attention problem (all arrays row-major, layouts of attention.h). */
typedef struct attn_fixture {
    const char *name;          /**< what it exercises */
    naive_attn_dims dims;      /**< sizes */
    float scale;               /**< 0: the default 1/sqrt(head_dim) */
    fa_mask mask;              /**< causal alignment, or none */
    const int64_t *key_length; /**< [batch] padding lengths, or NULL */
    const float *q;            /**< [batch][heads][nq][head_dim] */
    const float *k;            /**< [batch][heads][nk][head_dim] */
    const float *v;            /**< [batch][heads][nk][head_dim] */
    const double *s;           /**< expected scores [batch][heads][nq][nk] (masked ones too) */
    const double *p;           /**< expected probabilities [batch][heads][nq][nk] */
    const double *lse;         /**< expected log-sum-exp [batch][heads][nq] */
    const double *o;           /**< expected output [batch][heads][nq][head_dim] */
    bool exact;                /**< s, p and o are reached by fp32 arithmetic without rounding */
} attn_fixture;

extern const attn_fixture attn_fixtures[]; /**< the cases, in the order of the stage page */
extern const int attn_fixture_count;       /**< entries of attn_fixtures */

#ifdef __cplusplus
}
#endif

#endif /* NAIVE_ATTENTION_FIXTURES_H */
